"""The spreadsheets of the tenth held-out question set: generated with fixed seeds, written as users keep them.

`python data/eval/holdout10_generate.py` writes the seven files under data/eval/files/ (h10_*).
data/eval/holdout10_expected.py reads them back from disk and computes every expected value; its
`--check` mode also fails when a file on disk no longer matches this generator.

The domains are new to the evaluation sets: a noodle chain's branches by month, a music school's
pupils and a school sports day (three .xlsx workbooks with MERGED two-row headers, made with
openpyxl: a group cell such as "Fees (£)" or 成绩 merged across its leaf columns, a column without a
group merged down over both rows), a housing estate's property fees, a car wash, a dog kennel and a
second-hand phone buyer. Messy touches as people leave them: a 合计 row, a TOTAL row and a row of
class averages (平均) at the bottom, blank rows, dates typed three ways, units in brackets, 是/否,
Y/N and Yes/No columns, blank cells.
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The writers are shared with the other held-out sets (eval_files.py).
import eval_files

REPO = Path(__file__).resolve().parents[2]
FILES = "data/eval/files"  # relative to the repository root, as task files are

NOODLES = f"{FILES}/h10_noodle_shop_branches.xlsx"
MUSIC = f"{FILES}/h10_music_school_pupils.xlsx"
SPORTS = f"{FILES}/h10_sports_day_results.xlsx"
FEES = f"{FILES}/h10_estate_property_fees.csv"
CARWASH = f"{FILES}/h10_car_wash_visits.csv"
KENNEL = f"{FILES}/h10_dog_kennel_stays.xlsx"
PHONES = f"{FILES}/h10_phone_buyback.csv"

# A merged-header sheet: each leaf column's group (the merged cell above it), None for a column
# that stands alone (its name merged down over both header rows).
Groups = dict[str, str | None]


# --- noodle chain (zh, merged) ---------------------------------------------------------------------
NOODLE_BRANCHES = {  # branch: (dine-in a month, delivery a month, new customers, returning customers)
    "人民路店": (86000, 31000, 420, 1650),
    "火车站店": (118000, 22000, 980, 1200),
    "大学城店": (64000, 52000, 610, 1480),
    "开发区店": (52000, 18000, 300, 900),
    "老街店": (73000, 26000, 350, 1900),
}
NOODLE_GROUPS: Groups = {
    "门店": None,
    "月份": None,
    "堂食（元）": "营业收入",
    "外卖（元）": "营业收入",
    "新客（人）": "客流",
    "回头客（人）": "客流",
    "当月有无促销": None,
    "差评（条）": None,
}


def noodles() -> pd.DataFrame:
    """Five branches over 2024, one row a branch a month, and the 合计 row the owner keeps at the
    bottom. Promotions bring new customers; summer and the Spring Festival month are busier."""
    rng = np.random.default_rng(1001)
    season = [1.25, 1.05, 0.92, 0.95, 1.0, 0.98, 1.12, 1.18, 0.96, 1.08, 0.9, 1.02]
    rows = []
    promo_months = {"人民路店": 3, "火车站店": 2, "大学城店": 8, "开发区店": 5, "老街店": 4}
    for branch, (dine, deliver, new, back) in NOODLE_BRANCHES.items():
        on = set((rng.choice(12, promo_months[branch], replace=False) + 1).tolist())
        for month in range(1, 13):
            promo = month in on
            lift = season[month - 1] * (1.1 if promo else 1.0)
            rows.append(
                [
                    branch,
                    dt.datetime(2024, month, 1),
                    round(float(dine * lift * rng.normal(1, 0.06)), 0),
                    round(float(deliver * lift * rng.normal(1, 0.08)), 0),
                    int(new * season[month - 1] * (1.55 if promo else 1.0) * rng.normal(1, 0.08)),
                    int(back * season[month - 1] * rng.normal(1, 0.06)),
                    "是" if promo else "否",
                    int(rng.poisson(6 if branch == "火车站店" else 3)),
                ]
            )
    frame = pd.DataFrame(rows, columns=list(NOODLE_GROUPS))
    total: dict[str, Any] = {"门店": "合计"}
    for column in ["堂食（元）", "外卖（元）", "新客（人）", "回头客（人）", "差评（条）"]:
        total[column] = frame[column].sum()
    return pd.concat([frame, pd.DataFrame([total])], ignore_index=True)


# --- music school (en, merged) ---------------------------------------------------------------------
FIRST = ["Amelia", "Oliver", "Isla", "Noah", "Ava", "Leo", "Mia", "Arthur", "Freya", "Oscar", "Lily", "Theo"]
SURNAMES = ["Patel", "Jones", "Khan", "Walsh", "Murphy", "Clarke", "Hughes", "Ng", "Evans", "Price", "Shaw"]
TEACHERS = {"Mrs Bell": 0.82, "Mr Okafor": 0.66, "Ms Rossi": 0.74, "Mr Dunn": 0.48}
INSTRUMENTS = {"Piano": 420, "Violin": 380, "Guitar": 300, "Flute": 340}  # term fee (£)
MUSIC_GROUPS: Groups = {
    "Pupil": None,
    "Teacher": None,
    "Instrument": None,
    "Joined": None,
    "Exam Date": None,
    "Booked": "Lessons",
    "Attended": "Lessons",
    "Paid": "Fees (£)",
    "Outstanding": "Fees (£)",
    "Mark (out of 150)": "Grade Exam",
    "Passed?": "Grade Exam",
}


def music() -> pd.DataFrame:
    """110 pupils who sat a grade exam in 2024: the more lessons they came to, the better the
    mark (pass at 100 of 150); some still owe part of their fees."""
    rng = np.random.default_rng(1002)
    names = [f"{f} {s}" for f in FIRST for s in SURNAMES]
    pupils = rng.choice(names, 110, replace=False)
    rows = []
    for pupil in pupils:
        teacher = str(rng.choice(list(TEACHERS)))
        instrument = str(rng.choice(list(INSTRUMENTS), p=[0.4, 0.2, 0.25, 0.15]))
        joined = dt.datetime(2023, 1, 9) + dt.timedelta(days=int(rng.integers(0, 300)))
        exam = joined + dt.timedelta(days=int(rng.integers(150, 420)))
        booked = int(rng.integers(20, 37))
        attended = int(np.clip(round(booked * rng.beta(8, 2)), 8, booked))
        mark = int(np.clip(round(60 + 2.1 * attended * TEACHERS[teacher] + rng.normal(0, 11)), 55, 150))
        fee = INSTRUMENTS[instrument] * 3
        owed = 0 if rng.random() < 0.7 else int(rng.integers(2, 60)) * 5
        rows.append([pupil, teacher, instrument, joined, exam, booked, attended, fee - owed, owed, mark])
    frame = pd.DataFrame(rows, columns=list(MUSIC_GROUPS)[:-1])
    frame["Passed?"] = np.where(frame["Mark (out of 150)"] >= 100, "Y", "N")
    return frame


# --- school sports day (zh, merged) ----------------------------------------------------------------
CLASSES = ["初二1班", "初二2班", "初二3班", "初二4班", "初二5班"]
SURNAMES_ZH = list("王李张刘陈杨黄赵吴周徐孙马朱胡郭何林罗高")
GIVEN_ZH = [
    "子涵",
    "浩然",
    "欣怡",
    "宇轩",
    "梓萱",
    "俊杰",
    "雨桐",
    "一鸣",
    "思远",
    "佳琪",
    "天佑",
    "可馨",
    "博文",
    "诗雨",
]
SPORTS_GROUPS: Groups = {
    "班级": None,
    "姓名": None,
    "性别": None,
    "跳远（米）": "成绩",
    "50米跑（秒）": "成绩",
    "一分钟跳绳（个）": "成绩",
    "体测达标": None,
}


def sports() -> pd.DataFrame:
    """150 pupils of five classes at a school sports day, and the row of averages (平均) the PE
    teacher typed under them. Boys jump further; who jumps far also runs fast (a short time)."""
    rng = np.random.default_rng(1003)
    names = rng.choice([s + g for s in SURNAMES_ZH for g in GIVEN_ZH], 150, replace=False)
    rows = []
    for i, name in enumerate(names):
        klass = CLASSES[i // 30]
        boy = bool(rng.random() < 0.5)
        fitness = rng.normal(0, 1) + {"初二2班": 0.5, "初二4班": -0.45}.get(klass, 0.0)
        jump = round(float((2.05 if boy else 1.72) + 0.16 * fitness + rng.normal(0, 0.08)), 2)
        dash = round(float((8.1 if boy else 9.0) - 0.45 * fitness + rng.normal(0, 0.25)), 2)
        rope = int(np.clip(round(135 + 22 * fitness + (8 if not boy else 0) + rng.normal(0, 15)), 60, 200))
        passed = "是" if fitness + rng.normal(0, 0.6) > -0.55 else "否"
        rows.append([klass, str(name), "男" if boy else "女", jump, dash, rope, passed])
    frame = pd.DataFrame(rows, columns=list(SPORTS_GROUPS))
    averages = {"班级": "平均"} | {
        c: round(float(frame[c].mean()), 2) for c in ["跳远（米）", "50米跑（秒）", "一分钟跳绳（个）"]
    }
    return pd.concat([frame, pd.DataFrame([averages])], ignore_index=True)


# --- property fees (zh, csv) -----------------------------------------------------------------------
BUILDINGS = {"1栋": 2.2, "2栋": 2.2, "3栋": 2.8, "4栋": 2.8, "5栋": 3.5, "6栋": 1.8}  # 元 per ㎡ a month
ON_TIME = {"1栋": 0.9, "2栋": 0.82, "3栋": 0.75, "4栋": 0.86, "5栋": 0.93, "6栋": 0.55}


def fees() -> pd.DataFrame:
    """A year's property fee (12 months × area × the building's rate) for 30 flats in each of six
    buildings, paid on a day in 2024 typed three ways, some flats paying only part; blank rows
    where the clerk left a gap between buildings."""
    rng = np.random.default_rng(1004)
    rows: list[list[Any]] = []
    for building, rate in BUILDINGS.items():
        homes = sorted(rng.choice(18 * 4, 30, replace=False).tolist())  # 18 floors, 4 flats a floor
        for home in homes:
            flat = f"{building}{home // 4 + 1}{home % 4 + 1:02d}"
            area = round(float(rng.choice([68, 89, 105, 120, 143]) + rng.normal(0, 1.5)), 1)
            due = round(area * rate * 12, 2)
            on_time = bool(rng.random() < ON_TIME[building])
            paid = due if rng.random() < 0.85 else round(due * float(rng.choice([0.0, 0.25, 0.5])), 2)
            day = dt.date(2024, 1, 1) + dt.timedelta(
                days=int(rng.integers(0 if on_time else 90, 90 if on_time else 330))
            )
            style = int(rng.integers(0, 3))
            typed = [f"{day.year}/{day.month}/{day.day}", day.isoformat(), f"{day.year}年{day.month}月{day.day}日"][
                style
            ]
            rows.append([flat, building, area, due, paid, typed if paid > 0 else "", "是" if on_time else "否"])
        rows.append([""] * 7)
    frame = pd.DataFrame(
        rows, columns=["房号", "楼栋", "建筑面积（㎡）", "全年应缴（元）", "已缴（元）", "缴费日期", "是否按时缴纳"]
    )
    # A flat that paid nothing paid neither on time nor late: its 是否按时缴纳 is 否.
    frame.loc[frame["已缴（元）"].eq(0.0), "是否按时缴纳"] = "否"
    return frame


# --- car wash (en, csv) ----------------------------------------------------------------------------
WASHES = {"Basic": (8.0, 12), "Deluxe": (15.0, 25), "Valet": (35.0, 70)}  # price (£), minutes
SITES = {"Bridge St": 0.45, "Ring Road": 0.25, "Market Sq": 0.6}  # share with a loyalty card


def carwash() -> pd.DataFrame:
    """240 washes at three sites, January to June 2024, dates typed two ways, and the TOTAL row
    at the bottom. Tips are bigger on rainy days; valets take longest."""
    rng = np.random.default_rng(1005)
    rows: list[list[Any]] = []
    days = np.sort(rng.integers(0, 182, 240))
    for offset in days:
        day = dt.date(2024, 1, 1) + dt.timedelta(days=int(offset))
        site = str(rng.choice(list(SITES), p=[0.4, 0.35, 0.25]))
        wash = str(rng.choice(list(WASHES), p=[0.5, 0.32, 0.18]))
        price, minutes = WASHES[wash]
        rain = bool(rng.random() < 0.35)
        tip = round(max(0.0, float(rng.normal(2.6 if rain else 1.2, 0.9))) * (2 if wash == "Valet" else 1), 2)
        typed = day.isoformat() if rng.random() < 0.5 else f"{day.day} {day.strftime('%b')} {day.year}"
        rows.append(
            [
                typed,
                site,
                wash,
                price,
                int(minutes + rng.integers(-3, 8)),
                "Y" if rng.random() < SITES[site] else "N",
                tip,
                "Y" if rain else "N",
            ]
        )
    frame = pd.DataFrame(
        rows,
        columns=["Date", "Site", "Wash Type", "Price (£)", "Time Taken (mins)", "Loyalty Card", "Tip (£)", "Raining"],
    )
    total = {"Date": "TOTAL", "Price (£)": frame["Price (£)"].sum(), "Tip (£)": round(frame["Tip (£)"].sum(), 2)}
    return pd.concat([frame, pd.DataFrame([total])], ignore_index=True)


# --- dog kennel (en, xlsx) -------------------------------------------------------------------------
SIZES = {"Small": 22.0, "Medium": 27.0, "Large": 34.0}  # nightly rate (£)
DOGS = ["Biscuit", "Luna", "Max", "Poppy", "Rex", "Bella", "Milo", "Daisy", "Teddy", "Rosie", "Bruno", "Willow"]


def kennel() -> pd.DataFrame:
    """120 stays in 2024: dates partly real dates, partly typed as text ("5 Mar 2024" or
    "2024-03-05"); large dogs stay longer; a blank row left in the middle."""
    rng = np.random.default_rng(1006)
    rows: list[list[Any]] = []
    for i in range(120):
        size = str(rng.choice(list(SIZES), p=[0.4, 0.35, 0.25]))
        arrive = dt.datetime(2024, 1, 2) + dt.timedelta(days=int(rng.integers(0, 350)))
        nights = int(max(1, rng.poisson({"Small": 3.5, "Medium": 5, "Large": 7.5}[size])))
        leave = arrive + dt.timedelta(days=nights)
        cells: list[Any] = []
        for day in (arrive, leave):
            style = rng.random()
            cells.append(
                day
                if style < 0.6
                else (f"{day.day} {day.strftime('%b')} {day.year}" if style < 0.8 else day.date().isoformat())
            )
        bill = SIZES[size] * nights + (12.0 if rng.random() < 0.3 else 0.0)  # some had a bath (£12)
        repeat = "Yes" if rng.random() < {"Small": 0.62, "Medium": 0.45, "Large": 0.3}[size] else "No"
        rows.append([f"K{1001 + i}", str(rng.choice(DOGS)), size, *cells, SIZES[size], bill, repeat])
    frame = pd.DataFrame(
        rows,
        columns=["Booking", "Dog", "Size", "Check-in", "Check-out", "Rate per Night (£)", "Bill (£)", "Been Before?"],
    )
    blank = pd.DataFrame([[None] * len(frame.columns)], columns=frame.columns)
    return pd.concat([frame.iloc[:60], blank, frame.iloc[60:]], ignore_index=True)


# --- phone buy-back (zh, csv) ----------------------------------------------------------------------
BRANDS = {
    "苹果": (2600, 0.35, 0.85),
    "华为": (1500, 0.3, 0.75),
    "小米": (800, 0.28, 0.6),
    "OPPO": (700, 0.25, 0.55),
    "vivo": (650, 0.22, 0.7),
}
CONDITION = {"九成新": 1.0, "八成新": 0.8, "七成新": 0.62}


def phones() -> pd.DataFrame:
    """180 phones bought in at two shops, January to June 2024: the east shop pays more for a phone,
    the more paid for a phone, the more it sells for; unsold phones have no selling price."""
    rng = np.random.default_rng(1007)
    rows: list[list[Any]] = []
    for i in range(180):
        brand = str(rng.choice(list(BRANDS), p=[0.3, 0.25, 0.2, 0.13, 0.12]))
        base, margin, sell_rate = BRANDS[brand]
        condition = str(rng.choice(list(CONDITION), p=[0.4, 0.4, 0.2]))
        shop = "城东店" if rng.random() < 0.55 else "城西店"
        bought = round(
            float(base * CONDITION[condition] * rng.lognormal(0, 0.25) * (1.3 if shop == "城东店" else 1.0)), -1
        )
        sold = bool(rng.random() < sell_rate)
        price = round(float(bought * (1 + margin * rng.normal(1, 0.3))), -1) if sold else None
        day = dt.date(2024, 1, 1) + dt.timedelta(days=int(rng.integers(0, 182)))
        rows.append([f"HS{2401 + i}", day.isoformat(), shop, brand, condition, bought, price, "Y" if sold else "N"])
    return pd.DataFrame(
        rows, columns=["单号", "回收日期", "门店", "品牌", "成色", "回收价（元）", "售价（元）", "已售出(Y/N)"]
    )


GENERATORS: dict[str, Callable[[], pd.DataFrame]] = {
    NOODLES: noodles,
    MUSIC: music,
    SPORTS: sports,
    FEES: fees,
    CARWASH: carwash,
    KENNEL: kennel,
    PHONES: phones,
}
MERGED: dict[str, Groups] = {NOODLES: NOODLE_GROUPS, MUSIC: MUSIC_GROUPS, SPORTS: SPORTS_GROUPS}
FIXED_TIME = dt.datetime(2024, 12, 31, 9, 0, 0)


# --- writing ---------------------------------------------------------------------------------------
def xlsx_bytes(frame: pd.DataFrame, groups: Groups | None) -> bytes:
    """One sheet written with openpyxl (a merged two-row header with `groups`), byte-stable at FIXED_TIME."""
    return eval_files.xlsx_bytes(frame, groups, FIXED_TIME)


def file_bytes(name: str) -> bytes:
    """The file as a user's export would be: CSV in UTF-8 with a BOM (Excel's "CSV UTF-8"), or .xlsx."""
    frame = GENERATORS[name]()
    if name.endswith(".csv"):
        return frame.to_csv(index=False, lineterminator="\n").encode("utf-8-sig")
    return xlsx_bytes(frame, MERGED.get(name))


def write_files() -> None:
    eval_files.write_files(REPO, GENERATORS, file_bytes)


if __name__ == "__main__":
    write_files()
