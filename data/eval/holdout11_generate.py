"""The spreadsheets of the eleventh held-out question set: generated with fixed seeds, written as users keep them.

`python data/eval/holdout11_generate.py` writes the six files under data/eval/files/ (h11_*).
data/eval/holdout11_expected.py reads them back from disk and computes every expected value; its
`--check` mode also fails when a file on disk no longer matches this generator.

The domains are new to the evaluation sets: a taxi firm's shifts, a museum's ticket desk and a
campsite's bookings (three .xlsx workbooks with MERGED two-row headers, made with openpyxl: a group
cell such as "Takings (£)" or 费用（元） merged across its leaf columns, a column without a group
merged down over both rows), a language school's students, an escape-room venue and a beekeeper's
honey harvests. Messy touches as people leave them: a TOTAL row, a 合计 row and a row of averages
at the bottom, blank rows, dates typed several ways (real date cells, 2024-03-05, 2024/3/5,
2024年3月5日, 2024.3.5, 5 Mar 2024), units in brackets, 是/否, Y/N and Yes/No columns, blank cells.
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

TAXI = f"{FILES}/h11_taxi_fleet_shifts.xlsx"
MUSEUM = f"{FILES}/h11_museum_ticket_desk.xlsx"
CAMPSITE = f"{FILES}/h11_campsite_bookings.xlsx"
LANGUAGE = f"{FILES}/h11_language_school_students.csv"
ESCAPE = f"{FILES}/h11_escape_room_games.csv"
HONEY = f"{FILES}/h11_beekeeping_harvests.xlsx"

# A merged-header sheet: each leaf column's group (the merged cell above it), None for a column
# that stands alone (its name merged down over both header rows).
Groups = dict[str, str | None]


def typed_zh(day: dt.date, style: int) -> str:
    """A date as a Chinese clerk types it, in one of four ways."""
    return [
        day.isoformat(),
        f"{day.year}/{day.month}/{day.day}",
        f"{day.year}年{day.month}月{day.day}日",
        f"{day.year}.{day.month}.{day.day}",
    ][style]


# --- taxi fleet (en, merged) -----------------------------------------------------------------------
DRIVERS = {  # driver: (fare per mile (£), complaint chance, night-shift share)
    "Dave Clarke": (2.45, 0.05, 0.3),
    "Priya Shah": (2.70, 0.03, 0.5),
    "Tom Reilly": (2.30, 0.16, 0.6),
    "Ana Costa": (2.55, 0.07, 0.2),
    "Mo Hassan": (2.95, 0.09, 0.7),
    "Jen Walsh": (2.40, 0.11, 0.4),
}
CABS = ["Cab 1", "Cab 2", "Cab 3", "Cab 4"]
TAXI_GROUPS: Groups = {
    "Shift No": None,
    "Driver": None,
    "Cab": None,
    "Date": None,
    "Day/Night": None,
    "Street Hails": "Trips",
    "App Bookings": "Trips",
    "Distance (miles)": None,
    "Fares": "Takings (£)",
    "Tips": "Takings (£)",
    "Complaint?": None,
}


def taxi() -> pd.DataFrame:
    """150 shifts of six drivers, January to April 2024, and the TOTAL row under them. Night
    shifts take more in fares; tips are sometimes left blank (none that shift)."""
    rng = np.random.default_rng(1101)
    rows: list[list[Any]] = []
    days = np.sort(rng.integers(0, 121, 150))
    for i, offset in enumerate(days):
        day = dt.datetime(2024, 1, 1) + dt.timedelta(days=int(offset))
        driver = str(rng.choice(list(DRIVERS)))
        per_mile, complaint, nights = DRIVERS[driver]
        night = bool(rng.random() < nights)
        hails = int(rng.poisson(9 if night else 6))
        app = int(rng.poisson(7 if night else 8))
        miles = round(float((hails + app) * rng.normal(4.2 if night else 3.4, 0.5)), 1)
        fares = round(float(miles * per_mile * (1.15 if night else 1.0) * rng.normal(1, 0.05)), 2)
        tips = round(float(max(0.0, rng.normal(0.06, 0.04)) * fares), 2)
        rows.append(
            [
                f"S{i + 1:03d}",
                driver,
                str(rng.choice(CABS)),
                day,
                "Night" if night else "Day",
                hails,
                app,
                miles,
                fares,
                tips if tips >= 1 else None,
                "Y" if rng.random() < complaint else "N",
            ]
        )
    frame = pd.DataFrame(rows, columns=list(TAXI_GROUPS))
    total: dict[str, Any] = {"Shift No": "TOTAL"}
    for column in ["Street Hails", "App Bookings", "Distance (miles)", "Fares", "Tips"]:
        total[column] = round(float(frame[column].sum()), 2)
    return pd.concat([frame, pd.DataFrame([total])], ignore_index=True)


# --- museum ticket desk (en, merged) ---------------------------------------------------------------
MUSEUM_GROUPS: Groups = {
    "Date": None,
    "Day": None,
    "Weather": None,
    "Adult": "Tickets Sold",
    "Student": "Tickets Sold",
    "Senior (free)": "Tickets Sold",
    "Ticket Sales": "Income (£)",
    "Audio Guides": "Income (£)",
    "Special Exhibition Open": None,
}
ADULT_PRICE, STUDENT_PRICE, GUIDE_PRICE = 12, 6, 3
EXHIBITION = {1: 0.0, 2: 0.2, 3: 0.75, 4: 0.9, 5: 0.6, 6: 0.3}  # chance the exhibition room is open


def museum() -> pd.DataFrame:
    """Every opening day (closed on Mondays) from January to June 2024, a blank row after each
    month, and the row of averages the desk manager typed at the bottom. The special exhibition
    brings more visitors; rain brings people indoors."""
    rng = np.random.default_rng(1102)
    rows: list[list[Any]] = []
    day = dt.datetime(2024, 1, 2)
    month = 1
    while day < dt.datetime(2024, 7, 1):
        if day.month != month:
            rows.append([None] * len(MUSEUM_GROUPS))
            month = day.month
        if day.weekday() != 0:
            weather = str(rng.choice(["Sunny", "Cloudy", "Rain"], p=[0.35, 0.4, 0.25]))
            special = bool(rng.random() < EXHIBITION[day.month])
            lift = (1.35 if special else 1.0) * (1.2 if weather == "Rain" else 1.0) * (1.5 if day.weekday() >= 5 else 1)
            lift *= 0.8 + 0.07 * day.month
            adult = int(rng.poisson(70 * lift))
            student = int(rng.poisson(22 * lift))
            senior = int(rng.poisson(18 * lift))
            guides = int(rng.binomial(adult + student + senior, 0.18))
            rows.append(
                [
                    day,
                    day.strftime("%a"),
                    weather,
                    adult,
                    student,
                    senior,
                    adult * ADULT_PRICE + student * STUDENT_PRICE,
                    guides * GUIDE_PRICE,
                    "Yes" if special else "No",
                ]
            )
        day += dt.timedelta(days=1)
    frame = pd.DataFrame(rows, columns=list(MUSEUM_GROUPS))
    filled = frame.dropna(how="all")
    averages: dict[str, Any] = {"Date": "Average"}
    for column in ["Adult", "Student", "Senior (free)", "Ticket Sales", "Audio Guides"]:
        averages[column] = round(float(filled[column].mean()), 1)
    return pd.concat([frame, pd.DataFrame([averages])], ignore_index=True)


# --- campsite (zh, merged) -------------------------------------------------------------------------
AREAS = {"草坪区": (120, 0.35), "湖景区": (180, 0.2), "林间区": (150, 0.45), "房车区": (260, 0.6)}  # 元/晚, pets
CAMP_GROUPS: Groups = {
    "预订号": None,
    "营区": None,
    "入住日期": None,
    "退房日期": None,
    "成人": "人数",
    "儿童": "人数",
    "营位费": "费用（元）",
    "装备租赁": "费用（元）",
    "是否带宠物": None,
    "评分（满分5分）": None,
}


def campsite() -> pd.DataFrame:
    """170 bookings from April to October 2024: dates partly real date cells, partly typed as
    text; children left blank where none came; a rating only where the guest gave one; the 合计
    row at the bottom. Bigger parties hire more gear."""
    rng = np.random.default_rng(1103)
    rows: list[list[Any]] = []
    arrivals = np.sort(rng.integers(0, 200, 170))
    for i, offset in enumerate(arrivals):
        area = str(rng.choice(list(AREAS), p=[0.35, 0.25, 0.25, 0.15]))
        rate, pets = AREAS[area]
        arrive = dt.datetime(2024, 4, 1) + dt.timedelta(days=int(offset))
        nights = int(max(1, rng.poisson(2.2 if area != "房车区" else 3.5)))
        leave = arrive + dt.timedelta(days=nights)
        adults = int(rng.choice([1, 2, 2, 2, 3, 4]))
        children = int(rng.choice([0, 0, 1, 2, 3]))
        people = adults + children
        gear = 0 if rng.random() < 0.35 else int(round(35 * people * nights * rng.uniform(0.5, 1.3) / 5) * 5)
        score = int(
            np.clip(round(rng.normal(4.1 + (0.4 if children else 0) + (0.2 if area == "湖景区" else 0), 0.6)), 1, 5)
        )
        cells: list[Any] = []
        for day in (arrive, leave):
            style = rng.random()
            cells.append(day if style < 0.5 else typed_zh(day.date(), int(rng.integers(0, 4))))
        rows.append(
            [
                f"C24{i + 1:03d}",
                area,
                *cells,
                adults,
                children if children else None,
                rate * nights,
                gear,
                "是" if rng.random() < pets else "否",
                score if rng.random() < 0.8 else None,
            ]
        )
    frame = pd.DataFrame(rows, columns=list(CAMP_GROUPS))
    total: dict[str, Any] = {"预订号": "合计"}
    for column in ["成人", "儿童", "营位费", "装备租赁"]:
        total[column] = frame[column].sum()
    return pd.concat([frame, pd.DataFrame([total])], ignore_index=True)


# --- language school (zh, csv) ---------------------------------------------------------------------
LANGUAGES = {"英语": 0.5, "日语": 0.4, "韩语": 0.3, "法语": 0.72}  # chance of signing up again
CLASS_TYPES = {"一对一": 320, "小班": 130, "大班": 60}  # 元 per lesson hour
CHANNELS = ["朋友介绍", "短视频广告", "传单", "搜索引擎"]
SURNAMES_ZH = list("王李张刘陈杨黄赵吴周徐孙马朱胡郭何林罗高梁宋郑谢韩唐冯于董萧程曹")
GIVEN_ZH = [
    "雅琪",
    "子轩",
    "梦瑶",
    "浩宇",
    "思彤",
    "晨曦",
    "嘉怡",
    "明哲",
    "若汐",
    "俊熙",
    "可欣",
    "泽宇",
    "诗涵",
    "一诺",
]


def language() -> pd.DataFrame:
    """190 students who enrolled from January to September 2024: the fee is the hours bought
    times the class type's hourly price; who attends more scores higher in the final test (blank
    for those who did not sit it); enrolment dates typed four ways; blank rows left by the clerk."""
    rng = np.random.default_rng(1104)
    names = rng.choice([s + g for s in SURNAMES_ZH for g in GIVEN_ZH], 190, replace=False)
    rows: list[list[Any]] = []
    for i, name in enumerate(names):
        lang = str(rng.choice(list(LANGUAGES), p=[0.45, 0.25, 0.18, 0.12]))
        kind = str(rng.choice(list(CLASS_TYPES), p=[0.2, 0.45, 0.35]))
        hours = int(rng.integers(4, 31)) * (2 if kind == "一对一" else 4)
        day = dt.date(2024, 1, 1) + dt.timedelta(days=int(rng.integers(0, 274)))
        attendance = int(np.clip(round(rng.normal(82, 11)), 35, 100))
        score = int(np.clip(round(30 + 0.6 * attendance + rng.normal(0, 8) + (4 if kind == "一对一" else 0)), 20, 100))
        again = rng.random() < LANGUAGES[lang] * (0.7 + 0.4 * attendance / 100)
        channel = str(rng.choice(CHANNELS, p=[0.35, 0.3, 0.15, 0.2]))
        rows.append(
            [
                f"XY{2401 + i}",
                str(name),
                lang,
                kind,
                typed_zh(day, int(rng.integers(0, 4))),
                hours,
                hours * CLASS_TYPES[kind],
                attendance,
                score if rng.random() < 0.88 else None,
                "是" if again else "否",
                channel,
            ]
        )
        if i in (47, 112, 150):
            rows.append([None] * 11)
    return pd.DataFrame(
        rows,
        columns=[
            "学号",
            "姓名",
            "语种",
            "班型",
            "报名日期",
            "课时数",
            "学费（元）",
            "出勤率（%）",
            "结业测试成绩",
            "是否续报",
            "了解渠道",
        ],
    )


# --- escape rooms (en, csv) ------------------------------------------------------------------------
ROOMS = {"The Vault": 0.66, "Haunted Manor": 0.45, "Lab 13": 0.3, "Pharaoh's Tomb": 0.5}  # escape chance


def head_price(players: int) -> float:
    return 25.0 if players == 2 else (22.0 if players <= 4 else 19.0)


def escape() -> pd.DataFrame:
    """230 games from January to June 2024, dates typed two ways; a team that did not get out has
    no time written down; the more hints, the longer a team takes; the TOTAL row at the bottom."""
    rng = np.random.default_rng(1105)
    rows: list[list[Any]] = []
    days = np.sort(rng.integers(0, 182, 230))
    for i, offset in enumerate(days):
        day = dt.date(2024, 1, 1) + dt.timedelta(days=int(offset))
        room = str(rng.choice(list(ROOMS), p=[0.3, 0.3, 0.2, 0.2]))
        corporate = bool(rng.random() < 0.22)
        players = int(np.clip(rng.poisson(5.2 if corporate else 3.2), 2, 8))
        hints = int(rng.poisson(2.2))
        escaped = bool(rng.random() < ROOMS[room] + 0.03 * (players - 3))
        minutes = round(float(np.clip(rng.normal(40 + 3.2 * hints, 5), 25, 59.9)), 1) if escaped else None
        typed = day.isoformat() if rng.random() < 0.5 else f"{day.day} {day.strftime('%b')} {day.year}"
        rows.append(
            [
                f"ER-{1001 + i}",
                typed,
                room,
                players,
                head_price(players),
                players * head_price(players),
                "Yes" if escaped else "No",
                minutes,
                hints,
                "Y" if corporate else "N",
            ]
        )
    frame = pd.DataFrame(
        rows,
        columns=[
            "Booking Ref",
            "Date",
            "Room",
            "Players",
            "Price per Head (£)",
            "Total Paid (£)",
            "Escaped?",
            "Time Taken (mins)",
            "Hints Used",
            "Corporate (Y/N)",
        ],
    )
    total = {
        "Booking Ref": "TOTAL",
        "Players": int(frame["Players"].sum()),
        "Total Paid (£)": frame["Total Paid (£)"].sum(),
    }
    return pd.concat([frame, pd.DataFrame([total])], ignore_index=True)


# --- beekeeping (zh, xlsx) -------------------------------------------------------------------------
APIARIES = {"山脚蜂场": 0.12, "果园蜂场": 0.36, "河边蜂场": 0.2}  # chance of finding varroa mites
BREEDS = {"中蜂": (6.0, 180.0), "意蜂": (14.0, 70.0)}  # kg a harvest at 8 frames, 元 per kg


def honey() -> pd.DataFrame:
    """36 hives at three apiaries, harvested three to five times between April and September 2024:
    stronger colonies (more frames) give more honey, Italian bees far more than Chinese bees (whose
    honey sells dearer); harvest dates partly real date cells, partly typed; the 合计 row at the bottom."""
    rng = np.random.default_rng(1106)
    rows: list[list[Any]] = []
    for n in range(36):
        apiary = list(APIARIES)[n // 12]
        hive = f"{'ABC'[n // 12]}-{n % 12 + 1:02d}"
        breed = "意蜂" if rng.random() < 0.5 else "中蜂"
        kg_at_8, price = BREEDS[breed]
        strength = int(rng.integers(5, 12))
        for visit in sorted(rng.choice(np.arange(0, 180), int(rng.integers(3, 6)), replace=False)):
            day = dt.datetime(2024, 4, 1) + dt.timedelta(days=int(visit))
            frames = int(np.clip(strength + rng.integers(-1, 2), 3, 12))
            kg = round(float(max(0.5, kg_at_8 * frames / 8 * rng.normal(1, 0.18))), 1)
            style = rng.random()
            when: Any = day if style < 0.55 else typed_zh(day.date(), int(rng.integers(0, 4)))
            mites = "是" if rng.random() < APIARIES[apiary] else "否"
            rows.append([hive, apiary, breed, when, frames, kg, round(float(price * rng.uniform(0.95, 1.05))), mites])
    frame = pd.DataFrame(
        rows,
        columns=[
            "蜂箱编号",
            "蜂场",
            "蜂种",
            "取蜜日期",
            "蜂群强度（框）",
            "产蜜量（公斤）",
            "售价（元/公斤）",
            "发现蜂螨",
        ],
    )
    total = {"蜂箱编号": "合计", "产蜜量（公斤）": round(float(frame["产蜜量（公斤）"].sum()), 1)}
    return pd.concat([frame, pd.DataFrame([total])], ignore_index=True)


GENERATORS: dict[str, Callable[[], pd.DataFrame]] = {
    TAXI: taxi,
    MUSEUM: museum,
    CAMPSITE: campsite,
    LANGUAGE: language,
    ESCAPE: escape,
    HONEY: honey,
}
MERGED: dict[str, Groups] = {TAXI: TAXI_GROUPS, MUSEUM: MUSEUM_GROUPS, CAMPSITE: CAMP_GROUPS}
FIXED_TIME = dt.datetime(2024, 12, 31, 9, 0, 0)


# --- writing ---------------------------------------------------------------------------------------
def xlsx_bytes(frame: pd.DataFrame, groups: Groups | None) -> bytes:
    """One sheet written with openpyxl (a merged two-row header with `groups`), byte-stable at FIXED_TIME."""
    return eval_files.xlsx_bytes(frame, groups, FIXED_TIME)


def file_bytes(name: str) -> bytes:
    """The file as a user's export would be: CSV in UTF-8 with a BOM (Excel's "CSV UTF-8"), or .xlsx."""
    frame = GENERATORS[name]()
    if name.endswith(".csv"):
        for column in frame.columns:  # whole numbers written as people type them: 78, not 78.0
            values = frame[column]
            if values.dtype.kind == "f" and values.dropna().mod(1).eq(0).all():
                frame[column] = values.astype("Int64")
        return frame.to_csv(index=False, lineterminator="\n").encode("utf-8-sig")
    return xlsx_bytes(frame, MERGED.get(name))


def write_files() -> None:
    eval_files.write_files(REPO, GENERATORS, file_bytes)


if __name__ == "__main__":
    write_files()
