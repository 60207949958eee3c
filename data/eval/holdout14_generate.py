"""Writes the spreadsheets of the fourteenth held-out set (data/eval/files/h14_*), with fixed seeds.

`python data/eval/holdout14_generate.py` writes the six files; data/eval/holdout14_expected.py reads
them back from disk and computes every expected value (its `--check` fails when a file on disk no
longer matches what this script gives). Domains used by no earlier set: a dog-walking business, a pet
grooming salon, a window cleaner's rounds, badminton court bookings, a plumber's call-outs, an
optician's orders. Three workbooks have a merged two-row header (a group cell merged across its leaf
columns); the files are left as people leave them: a TOTAL / 合计 row, blank rows, dates typed two or
three ways, units in brackets, Y/N and 是/否 columns, a few blank cells. Written without reading
Verity's understanding or analyst code.
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_files import Groups, file_bytes, typed_dates, with_messy_rows, write_files

REPO = Path(__file__).resolve().parents[2]
FILES = "data/eval/files"
DOGS = f"{FILES}/h14_dog_walks.csv"
GROOMING = f"{FILES}/h14_pet_grooming.xlsx"
WINDOWS = f"{FILES}/h14_window_cleaning.xlsx"
BADMINTON = f"{FILES}/h14_badminton_courts.csv"
PLUMBER = f"{FILES}/h14_plumber_callouts.xlsx"
OPTICIAN = f"{FILES}/h14_optician_orders.xlsx"
NAMES = (DOGS, GROOMING, WINDOWS, BADMINTON, PLUMBER, OPTICIAN)
MERGED = (GROOMING, WINDOWS, OPTICIAN)
FIXED_TIME = dt.datetime(2025, 1, 6, 9, 0, 0)


def days_between(start: str, span: int, n: int, rng: np.random.Generator) -> pd.DatetimeIndex:
    """n days drawn from `span` days after `start`, in order (a log kept as the days went)."""
    return pd.to_datetime(start) + pd.to_timedelta(np.sort(rng.integers(0, span, size=n)), unit="D")


def blanked(values: list, rng: np.random.Generator, count: int) -> list:
    """The values with `count` of them left blank (not written down)."""
    values = list(values)
    for i in rng.choice(len(values), size=count, replace=False):
        values[i] = None
    return values


# --- a dog-walking business (CSV, English) ---------------------------------------------------------
def dogs() -> pd.DataFrame:
    rng = np.random.default_rng(1401)
    n = 264
    walkers = ["Amy", "Ben", "Chloe", "Dev"]
    walker = rng.choice(walkers, size=n, p=[0.3, 0.26, 0.24, 0.2])
    sizes = ["Small", "Medium", "Large"]
    size = rng.choice(sizes, size=n, p=[0.38, 0.36, 0.26])
    late_p = {"Amy": 0.05, "Ben": 0.18, "Chloe": 0.09, "Dev": 0.27}
    speed = {"Small": 3.2, "Medium": 4.0, "Large": 4.6}
    days = days_between("2024-01-02", 362, n, rng)
    dogs_ = rng.choice([1, 2, 3], size=n, p=[0.72, 0.22, 0.06])
    minutes = rng.choice([30, 45, 60, 90], size=n, p=[0.3, 0.3, 0.28, 0.12])
    distance = np.round(minutes / 60 * np.array([speed[s] for s in size]) * rng.lognormal(0, 0.15, n), 2)
    base = {30: 12, 45: 16, 60: 20, 90: 28}
    extra = {"Small": 0, "Medium": 2, "Large": 4}
    fee = np.array([base[m] for m in minutes]) + np.array([extra[s] for s in size]) + (dogs_ - 1) * 8
    tipped = rng.random(n) < 0.55
    tips = [round(float(rng.gamma(2.0, m / 40)) * 2) / 2 + 0.5 if t else None for m, t in zip(minutes, tipped)]
    frame = pd.DataFrame(
        {
            "Walk ID": [f"DW-{1001 + i}" for i in range(n)],
            "Date": typed_dates(days.to_series(), rng, ["%Y-%m-%d", "%d/%m/%Y"], [0.7, 0.3]),
            "Walker": walker,
            "Dog Size": size,
            "Dogs": dogs_,
            "Duration (min)": minutes,
            "Distance (km)": distance,
            "Fee (£)": fee,
            "Tip (£)": tips,
            "Late Return": ["Y" if rng.random() < late_p[w] else "N" for w in walker],
            "Repeat Client": ["Y" if rng.random() < 0.7 else "N" for _ in range(n)],
        }
    )
    total = {"Walk ID": "TOTAL", "Fee (£)": int(fee.sum()), "Tip (£)": float(sum(t for t in tips if t))}
    return with_messy_rows(frame, [88, 176], total)


# --- a pet grooming salon (merged header, Chinese) --------------------------------------------------
GROOMING_GROUPS: Groups = {
    "单号": None,
    "预约日期": "预约",
    "门店": "预约",
    "宠物": "预约",
    "体重(公斤)": "服务",
    "服务项目": "服务",
    "用时(分钟)": "服务",
    "价格(元)": "收费",
    "加购(元)": "收费",
    "回头客": None,
}


def grooming() -> pd.DataFrame:
    rng = np.random.default_rng(1402)
    n = 236
    stores = ["望京店", "国贸店", "五道口店"]
    store = rng.choice(stores, size=n, p=[0.38, 0.34, 0.28])
    pet = rng.choice(["狗", "猫", "兔"], size=n, p=[0.6, 0.3, 0.1])
    service = rng.choice(["洗澡", "美容", "洗护套餐"], size=n, p=[0.45, 0.3, 0.25])
    back_p = {"望京店": 0.62, "国贸店": 0.41, "五道口店": 0.53}
    premium = {"望京店": 1.0, "国贸店": 1.18, "五道口店": 0.95}
    days = days_between("2024-01-03", 180, n, rng)
    weight = np.round(
        [
            rng.gamma(2.2, 6.0) + 2 if p == "狗" else rng.uniform(2.8, 7.5) if p == "猫" else rng.uniform(1.0, 3.2)
            for p in pet
        ],
        1,
    )
    base_time = {"洗澡": 45, "美容": 80, "洗护套餐": 110}
    cat_extra = np.where(pet == "猫", 15, 0)
    minutes = np.round(
        np.array([base_time[s] for s in service]) + weight * 1.6 + cat_extra + rng.normal(0, 10, n)
    ).astype(int)
    base_price = {"洗澡": 68, "美容": 158, "洗护套餐": 228}
    price = np.round(
        (np.array([base_price[s] for s in service]) + weight * 3.5) * np.array([premium[s] for s in store])
    ).astype(int)
    add_on = [int(rng.choice([20, 30, 45, 60])) if rng.random() < 0.35 else None for _ in range(n)]
    frame = pd.DataFrame(
        {
            "单号": [f"MR{24001 + i}" for i in range(n)],
            "预约日期": typed_dates(days.to_series(), rng, [None, "zh"], [0.75, 0.25]),
            "门店": store,
            "宠物": pet,
            "体重(公斤)": blanked(list(weight), rng, 6),  # not weighed
            "服务项目": service,
            "用时(分钟)": minutes,
            "价格(元)": price,
            "加购(元)": add_on,
            "回头客": ["是" if rng.random() < back_p[s] else "否" for s in store],
        }
    )
    total = {"单号": "合计", "价格(元)": int(price.sum()), "加购(元)": int(sum(a for a in add_on if a))}
    return with_messy_rows(frame, [110], total)


# --- a window cleaner's rounds (merged header, English) ---------------------------------------------
WINDOWS_GROUPS: Groups = {
    "Job No": None,
    "Job Date": "Job",
    "Cleaner": "Job",
    "Property": "Job",
    "Windows": "Work",
    "Hours": "Work",
    "Price ($)": "Billing",
    "Invoiced": "Billing",
    "Paid On": "Billing",
    "Complaint": None,
}


def windows() -> pd.DataFrame:
    rng = np.random.default_rng(1403)
    n = 244
    cleaners = ["Sam", "Rita", "Joel", "Mia"]
    cleaner = rng.choice(cleaners, size=n, p=[0.29, 0.27, 0.24, 0.2])
    kinds = ["House", "Flat", "Shop", "Office"]
    kind = rng.choice(kinds, size=n, p=[0.36, 0.26, 0.2, 0.18])
    count_by = {"House": (8, 22), "Flat": (4, 12), "Shop": (6, 16), "Office": (20, 60)}
    complaint_p = {"Sam": 0.04, "Rita": 0.1, "Joel": 0.22, "Mia": 0.08}
    pace = {"Sam": 0.12, "Rita": 0.1, "Joel": 0.09, "Mia": 0.13}
    days = days_between("2024-01-02", 181, n, rng)
    count = np.array([int(rng.integers(count_by[k][0], count_by[k][1] + 1)) for k in kind])
    hours = np.round((0.4 + count * np.array([pace[c] for c in cleaner]) + rng.normal(0, 0.35, n)).clip(0.5) * 4) / 4
    price = np.round(18 + count * 2.75 + np.where(kind == "Office", 25, 0) + rng.choice([0, 0, 5.5, 8.25], size=n), 2)
    invoiced = days + pd.to_timedelta(rng.integers(0, 3, n), unit="D")
    slow = rng.random(n) < 0.25
    paid = invoiced + pd.to_timedelta(np.where(slow, rng.integers(20, 45, n), rng.integers(1, 15, n)), unit="D")
    paid_typed = typed_dates(paid.to_series(), rng, [None, "%b %d, %Y"], [0.7, 0.3])
    frame = pd.DataFrame(
        {
            "Job No": [f"WC{301 + i}" for i in range(n)],
            "Job Date": typed_dates(days.to_series(), rng, [None, "%d/%m/%Y"], [0.7, 0.3]),
            "Cleaner": cleaner,
            "Property": kind,
            "Windows": count,
            "Hours": hours,
            "Price ($)": price,
            "Invoiced": list(invoiced.to_pydatetime()),
            "Paid On": blanked(paid_typed, rng, 9),  # not paid yet
            "Complaint": ["Y" if rng.random() < complaint_p[c] else "N" for c in cleaner],
        }
    )
    total = {"Job No": "TOTAL", "Windows": int(count.sum()), "Price ($)": round(float(price.sum()), 2)}
    return with_messy_rows(frame, [60, 61, 190], total)


# --- badminton court bookings (CSV, Chinese) -------------------------------------------------------
def badminton() -> pd.DataFrame:
    rng = np.random.default_rng(1404)
    n = 330
    halls = ["东区馆", "西区馆", "体育中心"]
    hall = rng.choice(halls, size=n, p=[0.42, 0.33, 0.25])
    slots = ["早场", "午场", "晚场"]
    slot = rng.choice(slots, size=n, p=[0.22, 0.3, 0.48])
    cancel_p = {"早场": 0.21, "午场": 0.09, "晚场": 0.14}
    rate = {"早场": 40, "午场": 50, "晚场": 80}
    factor = {"东区馆": 1.0, "西区馆": 1.1, "体育中心": 1.25}
    play = days_between("2024-01-05", 178, n, rng)
    lead = np.where(slot == "晚场", rng.integers(1, 15, n), rng.integers(0, 7, n))
    ordered = play - pd.to_timedelta(lead, unit="D")
    hours = rng.choice([1.0, 1.5, 2.0, 3.0], size=n, p=[0.3, 0.25, 0.35, 0.1])
    member = rng.random(n) < 0.45
    cancelled = np.array([rng.random() < cancel_p[s] for s in slot])
    amount = np.round(
        hours * np.array([rate[s] for s in slot]) * np.array([factor[h] for h in hall]) * np.where(member, 0.8, 1.0), 1
    )
    forms = ["%Y-%m-%d", "zh", "slash-short"]
    frame = pd.DataFrame(
        {
            "订单号": [f"YM{6001 + i}" for i in range(n)],
            "下单日期": typed_dates(ordered.to_series(), rng, forms, [0.6, 0.25, 0.15]),
            "打球日期": typed_dates(play.to_series(), rng, forms, [0.6, 0.25, 0.15]),
            "场馆": hall,
            "时段": slot,
            "时长(小时)": hours,
            "人数": rng.choice([2, 3, 4], size=n, p=[0.45, 0.15, 0.4]),
            "金额(元)": [None if c else a for a, c in zip(amount, cancelled)],  # refunded
            "会员": ["是" if m else "否" for m in member],
            "取消": ["是" if c else "否" for c in cancelled],
        }
    )
    total = {"订单号": "合计", "金额(元)": round(float(amount[~cancelled].sum()), 1)}
    return with_messy_rows(frame, [150], total)


# --- a plumber's call-outs (plain workbook, English) ------------------------------------------------
def plumber() -> pd.DataFrame:
    rng = np.random.default_rng(1405)
    n = 212
    plumbers = ["Gareth", "Nadia", "Luis"]
    who = rng.choice(plumbers, size=n, p=[0.4, 0.33, 0.27])
    kinds = ["Leak", "Boiler", "Blocked Drain", "Taps & Toilets"]
    kind = rng.choice(kinds, size=n, p=[0.3, 0.22, 0.2, 0.28])
    back_p = {"Gareth": 0.08, "Nadia": 0.15, "Luis": 0.26}
    emergency = rng.random(n) < np.array(
        [{"Leak": 0.5, "Boiler": 0.35, "Blocked Drain": 0.4}.get(k, 0.1) for k in kind]
    )
    reported = days_between("2024-01-02", 180, n, rng)
    wait = np.where(emergency, rng.choice([0, 1, 1, 2, 3], size=n), rng.integers(2, 15, n))
    fixed = reported + pd.to_timedelta(wait, unit="D")
    time_by = {"Leak": 1.5, "Boiler": 2.5, "Blocked Drain": 1.2, "Taps & Toilets": 1.0}
    hours = np.round((np.array([time_by[k] for k in kind]) * rng.lognormal(0, 0.35, n)).clip(0.5) * 2) / 2
    labour = np.round(hours * 55 + np.where(emergency, 45, 0)).astype(int)
    parts_by = {"Leak": 18.0, "Boiler": 95.0, "Blocked Drain": 6.0, "Taps & Toilets": 32.0}
    parts = [
        round(float(rng.gamma(2.0, parts_by[k] / 2)), 2) if rng.random() < 0.85 else None for k in kind
    ]  # no parts needed
    forms = [None, "%d.%m.%Y"]
    frame = pd.DataFrame(
        {
            "Job No": [f"PL-{4001 + i}" for i in range(n)],
            "Reported": typed_dates(reported.to_series(), rng, forms, [0.75, 0.25]),
            "Fixed": typed_dates(fixed.to_series(), rng, forms, [0.75, 0.25]),
            "Plumber": who,
            "Job Type": kind,
            "Emergency": ["Y" if e else "N" for e in emergency],
            "Hours on Site": hours,
            "Parts (£)": parts,
            "Labour (£)": labour,
            "Came Back": ["Y" if rng.random() < back_p[w] else "N" for w in who],
        }
    )
    total = {"Job No": "TOTAL", "Parts (£)": round(sum(p for p in parts if p), 2), "Labour (£)": int(labour.sum())}
    return with_messy_rows(frame, [100], total)


# --- an optician's orders (merged header, Chinese) ----------------------------------------------------
OPTICIAN_GROUPS: Groups = {
    "单号": None,
    "配镜日期": "配镜",
    "门店": "配镜",
    "验光师": "配镜",
    "镜片(元)": "价格",
    "镜框(元)": "价格",
    "取镜日期": "售后",
    "返修": "售后",
    "学生": None,
}


def optician() -> pd.DataFrame:
    rng = np.random.default_rng(1406)
    n = 252
    stores = ["万达店", "老街店", "火车站店"]
    store = rng.choice(stores, size=n, p=[0.42, 0.33, 0.25])
    repair_p = {"万达店": 0.06, "老街店": 0.14, "火车站店": 0.24}
    staff = {"万达店": ["刘医生", "陈医生"], "老街店": ["王医生"], "火车站店": ["赵医生", "孙医生"]}
    student = rng.random(n) < 0.3
    days = days_between("2024-02-01", 150, n, rng)
    lens = np.array(
        [int(rng.choice([198, 298, 480, 680, 980, 1580], p=[0.2, 0.25, 0.22, 0.16, 0.11, 0.06])) for _ in range(n)]
    )
    frame_price = np.round(rng.lognormal(np.where(student, 5.6, 6.1), 0.45, n)).astype(int) + 20
    wait = rng.integers(2, 9, n) + np.where(lens >= 980, 5, 0)
    pickup = days + pd.to_timedelta(wait, unit="D")
    frame = pd.DataFrame(
        {
            "单号": [f"YJ{3001 + i}" for i in range(n)],
            "配镜日期": typed_dates(days.to_series(), rng, [None, "%Y.%m.%d"], [0.72, 0.28]),
            "门店": store,
            "验光师": [str(rng.choice(staff[s])) for s in store],
            "镜片(元)": lens,
            "镜框(元)": frame_price,
            "取镜日期": blanked(
                typed_dates(pickup.to_series(), rng, [None, "zh"], [0.7, 0.3]), rng, 8
            ),  # not collected
            "返修": ["是" if rng.random() < repair_p[s] else "否" for s in store],
            "学生": ["是" if s else "否" for s in student],
        }
    )
    total = {"单号": "合计", "镜片(元)": int(lens.sum()), "镜框(元)": int(frame_price.sum())}
    return with_messy_rows(frame, [125], total)


# --- the files ---------------------------------------------------------------------------------------
FRAMES: dict[str, tuple[Callable[[], pd.DataFrame], Groups | None]] = {
    DOGS: (dogs, None),
    GROOMING: (grooming, GROOMING_GROUPS),
    WINDOWS: (windows, WINDOWS_GROUPS),
    BADMINTON: (badminton, None),
    PLUMBER: (plumber, None),
    OPTICIAN: (optician, OPTICIAN_GROUPS),
}


def fresh(name: str) -> bytes:
    """The bytes of one generated file."""
    return file_bytes(name, FRAMES, FIXED_TIME)


if __name__ == "__main__":
    write_files(REPO, NAMES, fresh)
