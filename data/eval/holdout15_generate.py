"""Writes the spreadsheets of the fifteenth held-out set (data/eval/files/h15_*), with fixed seeds.

`python data/eval/holdout15_generate.py` writes the six files; data/eval/holdout15_expected.py reads
them back from disk and computes every expected value (its `--check` fails when a file on disk no
longer matches what this script gives). Domains used by no earlier set: a laundromat's wash and dry
cycles, a caterer's orders, a locksmith's call-outs, a yoga studio's classes, a tattoo studio's
sessions, a self-storage business's rental contracts. Three workbooks have a merged two-row header (a
group cell merged across its leaf columns); the files are left as people leave them: a TOTAL / 合计
row, blank rows, dates typed two or three ways, units in brackets, Y/N, Yes/No and 是/否 columns, a few
blank cells. Written without reading Verity's understanding or analyst code.
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
LAUNDROMAT = f"{FILES}/h15_laundromat_cycles.csv"
CATERING = f"{FILES}/h15_catering_orders.csv"
LOCKSMITH = f"{FILES}/h15_locksmith_jobs.xlsx"
YOGA = f"{FILES}/h15_yoga_classes.xlsx"
TATTOO = f"{FILES}/h15_tattoo_sessions.xlsx"
STORAGE = f"{FILES}/h15_storage_units.xlsx"
NAMES = (LAUNDROMAT, CATERING, LOCKSMITH, YOGA, TATTOO, STORAGE)
MERGED = (LOCKSMITH, YOGA, TATTOO)
FIXED_TIME = dt.datetime(2025, 1, 13, 9, 0, 0)


def days_between(start: str, span: int, n: int, rng: np.random.Generator) -> pd.DatetimeIndex:
    """n days drawn from `span` days after `start`, in order (a log kept as the days went)."""
    return pd.to_datetime(start) + pd.to_timedelta(np.sort(rng.integers(0, span, size=n)), unit="D")


def blanked(values: list, rng: np.random.Generator, count: int) -> list:
    """The values with `count` of them left blank (not written down)."""
    values = list(values)
    for i in rng.choice(len(values), size=count, replace=False):
        values[i] = None
    return values


# --- a laundromat's wash and dry cycles (CSV, English) ----------------------------------------------
def laundromat() -> pd.DataFrame:
    rng = np.random.default_rng(1501)
    n = 318
    branches = ["Elm Street", "Riverside", "Station Road"]
    branch = rng.choice(branches, size=n, p=[0.4, 0.33, 0.27])
    machine = rng.choice(["Washer", "Dryer"], size=n, p=[0.56, 0.44])
    fault_p = {"Elm Street": 0.04, "Riverside": 0.13, "Station Road": 0.08}
    days = days_between("2024-01-01", 182, n, rng)
    load = np.round(rng.gamma(4.0, 1.6, n).clip(2.0, 18.0), 1)
    large = load > 9
    minutes = np.where(machine == "Washer", rng.choice([30, 45, 60], size=n), rng.choice([20, 30, 40, 50], size=n))
    price = np.where(machine == "Washer", 4.5 + large * 2.5 + (minutes == 60) * 1.0, 0.25 * minutes / 5 + large * 1.5)
    price = np.round(price, 2)
    detergent = [float(rng.choice([1.5, 2.0, 3.5])) if m == "Washer" and rng.random() < 0.3 else None for m in machine]
    frame = pd.DataFrame(
        {
            "Cycle No": [f"LC-{5001 + i}" for i in range(n)],
            "Date": typed_dates(days.to_series(), rng, ["%Y-%m-%d", "%d %b %Y"], [0.65, 0.35]),
            "Branch": branch,
            "Machine": machine,
            "Load (kg)": load,
            "Minutes": minutes,
            "Price ($)": price,
            "Detergent ($)": detergent,  # blank: brought their own
            "Paid by Card": ["Y" if rng.random() < 0.62 else "N" for _ in range(n)],
            "Machine Fault": ["Y" if rng.random() < fault_p[b] else "N" for b in branch],
        }
    )
    total = {"Cycle No": "TOTAL", "Price ($)": round(float(price.sum()), 2)}
    return with_messy_rows(frame, [97, 210], total)


# --- a caterer's orders (CSV, Chinese) -------------------------------------------------------------
def catering() -> pd.DataFrame:
    rng = np.random.default_rng(1502)
    n = 226
    kinds = ["公司", "家庭", "学校"]
    kind = rng.choice(kinds, size=n, p=[0.45, 0.35, 0.2])
    menus = ["自助餐", "盒饭", "茶歇"]
    menu = rng.choice(menus, size=n, p=[0.3, 0.45, 0.25])
    complaint_p = {"公司": 0.07, "家庭": 0.16, "学校": 0.11}
    portions = np.where(
        kind == "学校",
        rng.integers(60, 260, n),
        np.where(kind == "公司", rng.integers(20, 160, n), rng.integers(8, 60, n)),
    )
    unit = {"自助餐": 88.0, "盒饭": 32.0, "茶歇": 25.0}
    vegetarian = rng.random(n) < 0.22
    event = days_between("2024-01-08", 175, n, rng)
    lead = np.where(kind == "公司", rng.integers(3, 21, n), rng.integers(1, 10, n))
    ordered = event - pd.to_timedelta(lead, unit="D")
    price = np.round(
        portions * np.array([unit[m] for m in menu]) * np.where(vegetarian, 0.9, 1.0) * rng.uniform(0.92, 1.08, n)
    ).astype(int)
    deposit = blanked([int(round(p * 0.3, -1)) for p in price], rng, 14)  # no deposit taken
    forms = ["%Y-%m-%d", "zh", "slash-short"]
    frame = pd.DataFrame(
        {
            "订单号": [f"CT{8001 + i}" for i in range(n)],
            "下单日期": typed_dates(ordered.to_series(), rng, forms, [0.55, 0.3, 0.15]),
            "活动日期": typed_dates(event.to_series(), rng, forms, [0.55, 0.3, 0.15]),
            "客户类型": kind,
            "菜单": menu,
            "份数": portions,
            "总价(元)": price,
            "定金(元)": deposit,
            "素食": ["是" if v else "否" for v in vegetarian],
            "投诉": ["是" if rng.random() < complaint_p[k] else "否" for k in kind],
        }
    )
    total = {"订单号": "合计", "份数": int(portions.sum()), "总价(元)": int(price.sum())}
    return with_messy_rows(frame, [120], total)


# --- a locksmith's call-outs (merged header, Chinese) -----------------------------------------------
LOCKSMITH_GROUPS: Groups = {
    "单号": None,
    "接单日期": "接单",
    "区域": "接单",
    "师傅": "接单",
    "服务类型": "服务",
    "用时(分钟)": "服务",
    "夜间单": "服务",
    "人工费(元)": "收费",
    "材料费(元)": "收费",
    "好评": None,
}


def locksmith() -> pd.DataFrame:
    rng = np.random.default_rng(1503)
    n = 248
    smiths = ["张师傅", "李师傅", "王师傅", "周师傅"]
    smith = rng.choice(smiths, size=n, p=[0.31, 0.27, 0.24, 0.18])
    services = ["开锁", "换锁芯", "装智能锁"]
    service = rng.choice(services, size=n, p=[0.46, 0.32, 0.22])
    good_p = {"张师傅": 0.86, "李师傅": 0.71, "王师傅": 0.78, "周师傅": 0.58}
    night = rng.random(n) < np.where(service == "开锁", 0.38, 0.06)
    days = days_between("2024-01-02", 181, n, rng)
    base = {"开锁": 25, "换锁芯": 40, "装智能锁": 75}
    minutes = np.round(np.array([base[s] for s in service]) * rng.lognormal(0, 0.3, n)).astype(int) + 5
    labour = np.round(60 + minutes * 1.8 + np.where(night, 80, 0) + rng.normal(0, 12, n)).astype(int)
    parts_by = {"开锁": 0, "换锁芯": 120, "装智能锁": 900}
    parts = [
        None if s == "开锁" else int(round(parts_by[s] * rng.uniform(0.7, 1.6), -1)) for s in service
    ]  # a lockout needs no parts
    forms = [None, "%Y.%m.%d", "zh"]
    frame = pd.DataFrame(
        {
            "单号": [f"KS{2401 + i}" for i in range(n)],
            "接单日期": typed_dates(days.to_series(), rng, forms, [0.6, 0.25, 0.15]),
            "区域": rng.choice(["南山区", "福田区", "宝安区"], size=n, p=[0.4, 0.35, 0.25]),
            "师傅": smith,
            "服务类型": service,
            "用时(分钟)": minutes,
            "夜间单": ["是" if x else "否" for x in night],
            "人工费(元)": labour,
            "材料费(元)": parts,
            "好评": blanked(["是" if rng.random() < good_p[s] else "否" for s in smith], rng, 7),  # no review
        }
    )
    total = {"单号": "合计", "人工费(元)": int(labour.sum()), "材料费(元)": int(sum(p for p in parts if p))}
    return with_messy_rows(frame, [90, 91], total)


# --- a yoga studio's classes (merged header, English) ------------------------------------------------
YOGA_GROUPS: Groups = {
    "Class ID": None,
    "Class Date": "Schedule",
    "Teacher": "Schedule",
    "Style": "Schedule",
    "Booked": "Attendance",
    "Attended": "Attendance",
    "Drop-in Takings ($)": "Money",
    "Mat Hire ($)": "Money",
    "Waitlist": None,
}


def yoga() -> pd.DataFrame:
    rng = np.random.default_rng(1504)
    n = 276
    teachers = ["Anna", "Priya", "Tom", "Lena"]
    teacher = rng.choice(teachers, size=n, p=[0.3, 0.28, 0.24, 0.18])
    styles = ["Hatha", "Vinyasa", "Yin", "Hot Yoga"]
    style = rng.choice(styles, size=n, p=[0.3, 0.3, 0.2, 0.2])
    pull = {"Anna": 16, "Priya": 20, "Tom": 13, "Lena": 15}
    show = {"Anna": 0.88, "Priya": 0.84, "Tom": 0.78, "Lena": 0.9}
    days = days_between("2024-01-02", 181, n, rng)
    booked = np.minimum(np.array([rng.poisson(pull[t]) for t in teacher]) + np.where(style == "Hot Yoga", 3, 0), 26)
    booked = np.maximum(booked, 3)
    attended = np.array([rng.binomial(b, show[t]) for b, t in zip(booked, teacher)])
    drop_in = attended - rng.binomial(attended, 0.55)  # the others come on a class pass
    takings = np.round(drop_in * np.where(style == "Hot Yoga", 24.0, 19.0) - rng.choice([0, 0, 4.75, 9.5], size=n), 2)
    takings = takings.clip(0)
    mats = [round(float(m) * 2.5, 2) if m else None for m in rng.binomial(attended, 0.2)]  # nobody hired a mat
    waitlist_p = {"Hatha": 0.12, "Vinyasa": 0.22, "Yin": 0.08, "Hot Yoga": 0.41}
    frame = pd.DataFrame(
        {
            "Class ID": [f"YG{101 + i}" for i in range(n)],
            "Class Date": typed_dates(days.to_series(), rng, [None, "%d/%m/%Y", "%B %d, %Y"], [0.6, 0.25, 0.15]),
            "Teacher": teacher,
            "Style": style,
            "Booked": booked,
            "Attended": attended,
            "Drop-in Takings ($)": takings,
            "Mat Hire ($)": mats,
            "Waitlist": ["Y" if rng.random() < waitlist_p[s] else "N" for s in style],
        }
    )
    total = {"Class ID": "TOTAL", "Booked": int(booked.sum()), "Attended": int(attended.sum())}
    return with_messy_rows(frame, [140], total)


# --- a tattoo studio's sessions (merged header, English) ---------------------------------------------
TATTOO_GROUPS: Groups = {
    "Booking No": None,
    "Booked On": "Booking",
    "Session Date": "Booking",
    "Artist": "Booking",
    "Placement": "Tattoo",
    "Size (cm²)": "Tattoo",
    "Hours": "Tattoo",
    "Deposit ($)": "Payment",
    "Total Price ($)": "Payment",
    "First Tattoo": None,
    "Touch-up": None,
}


def tattoo() -> pd.DataFrame:
    rng = np.random.default_rng(1505)
    n = 204
    artists = ["Kai", "Rosa", "Dmitri"]
    artist = rng.choice(artists, size=n, p=[0.4, 0.35, 0.25])
    placements = ["Arm", "Leg", "Back", "Wrist", "Chest"]
    placement = rng.choice(placements, size=n, p=[0.34, 0.2, 0.14, 0.2, 0.12])
    area_by = {"Arm": 90, "Leg": 120, "Back": 320, "Wrist": 18, "Chest": 180}
    touch_p = {"Kai": 0.09, "Rosa": 0.17, "Dmitri": 0.3}
    hourly = {"Kai": 120, "Rosa": 150, "Dmitri": 110}
    size = np.round(np.array([area_by[p] for p in placement]) * rng.lognormal(0, 0.45, n)).astype(int) + 4
    hours = np.round((0.5 + size / 70 * rng.lognormal(0, 0.2, n)) * 4) / 4
    price = np.round(np.maximum(hours * np.array([hourly[a] for a in artist]), 80) + rng.choice([0, 0, 15, 25], size=n))
    price = price.astype(int)
    session = days_between("2024-01-04", 180, n, rng)
    wait = np.where(np.array([a == "Rosa" for a in artist]), rng.integers(14, 60, n), rng.integers(3, 35, n))
    booked_on = session - pd.to_timedelta(wait, unit="D")
    deposit = blanked([int(min(100, round(p * 0.2, -1))) for p in price], rng, 10)  # walk-ins pay no deposit
    frame = pd.DataFrame(
        {
            "Booking No": [f"TT-{701 + i}" for i in range(n)],
            "Booked On": typed_dates(booked_on.to_series(), rng, [None, "%d.%m.%Y"], [0.7, 0.3]),
            "Session Date": typed_dates(session.to_series(), rng, [None, "%d.%m.%Y"], [0.7, 0.3]),
            "Artist": artist,
            "Placement": placement,
            "Size (cm²)": size,
            "Hours": hours,
            "Deposit ($)": deposit,
            "Total Price ($)": price,
            "First Tattoo": ["Yes" if rng.random() < 0.35 else "No" for _ in range(n)],
            "Touch-up": ["Yes" if rng.random() < touch_p[a] else "No" for a in artist],
        }
    )
    total = {"Booking No": "TOTAL", "Total Price ($)": int(price.sum())}
    return with_messy_rows(frame, [75, 150], total)


# --- a self-storage business's contracts (plain workbook, Chinese) -----------------------------------
def storage() -> pd.DataFrame:
    rng = np.random.default_rng(1506)
    n = 232
    sites = ["城东仓", "城西仓", "高新仓"]
    site = rng.choice(sites, size=n, p=[0.38, 0.34, 0.28])
    sizes = ["小号", "中号", "大号"]
    size = rng.choice(sizes, size=n, p=[0.45, 0.35, 0.2])
    area_by = {"小号": (1.5, 4.0), "中号": (4.0, 9.0), "大号": (9.0, 20.0)}
    area = np.round([rng.uniform(*area_by[s]) for s in size], 1)
    per_m2 = {"城东仓": 78, "城西仓": 64, "高新仓": 95}
    rent = np.round(area * np.array([per_m2[s] for s in site]) * rng.uniform(0.93, 1.07, n)).astype(int)
    auto = rng.random(n) < 0.48
    late = rng.random(n) < np.where(auto, 0.07, 0.21) * np.array(
        [{"城东仓": 1.0, "城西仓": 1.5, "高新仓": 0.7}[s] for s in site]
    )
    start = days_between("2023-06-01", 330, n, rng)
    ended = rng.random(n) < 0.42
    end = start + pd.to_timedelta(rng.integers(30, 240, n), unit="D")
    end_typed = typed_dates(end.to_series(), rng, [None, "zh"], [0.7, 0.3])
    forms = [None, "zh", "%Y/%m/%d"]
    frame = pd.DataFrame(
        {
            "合同号": [f"ZC{5101 + i}" for i in range(n)],
            "起租日期": typed_dates(start.to_series(), rng, forms, [0.6, 0.25, 0.15]),
            "退租日期": [e if x else None for e, x in zip(end_typed, ended)],  # still renting
            "门店": site,
            "仓位尺寸": size,
            "面积(平方米)": area,
            "月租(元)": rent,
            "押金(元)": rent * 2,
            "自动续费": ["是" if a else "否" for a in auto],
            "逾期付款": ["是" if x else "否" for x in late],
        }
    )
    total = {"合同号": "合计", "面积(平方米)": round(float(area.sum()), 1), "月租(元)": int(rent.sum())}
    return with_messy_rows(frame, [60, 170], total)


# --- the files ---------------------------------------------------------------------------------------
FRAMES: dict[str, tuple[Callable[[], pd.DataFrame], Groups | None]] = {
    LAUNDROMAT: (laundromat, None),
    CATERING: (catering, None),
    LOCKSMITH: (locksmith, LOCKSMITH_GROUPS),
    YOGA: (yoga, YOGA_GROUPS),
    TATTOO: (tattoo, TATTOO_GROUPS),
    STORAGE: (storage, None),
}


def fresh(name: str) -> bytes:
    """The bytes of one generated file."""
    return file_bytes(name, FRAMES, FIXED_TIME)


if __name__ == "__main__":
    write_files(REPO, NAMES, fresh)
