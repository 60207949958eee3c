"""Writes the spreadsheets of the thirteenth held-out set (data/eval/files/h13_*), with fixed seeds.

`python data/eval/holdout13_generate.py` writes the six files; data/eval/holdout13_expected.py reads
them back from disk and computes every expected value (its `--check` fails when a file on disk no
longer matches what this script gives). Domains used by no earlier set: karaoke rooms, a piano
tuner's visits, a removals firm, blood donation drives, a recycling centre, vending machines. Three
workbooks have a merged two-row header (a group cell merged across its leaf columns); the files are
left as people leave them: a TOTAL / 合计 row, blank rows, dates typed several ways, units in
brackets, Y/N and 是/否 columns, a few blank cells. Written without reading Verity's understanding or
analyst code.
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
KARAOKE = f"{FILES}/h13_karaoke_rooms.xlsx"
PIANOS = f"{FILES}/h13_piano_tuning_visits.csv"
REMOVALS = f"{FILES}/h13_removals_jobs.xlsx"
BLOOD = f"{FILES}/h13_blood_donation_drives.xlsx"
RECYCLING = f"{FILES}/h13_recycling_dropoffs.csv"
VENDING = f"{FILES}/h13_vending_machines.xlsx"
NAMES = (KARAOKE, PIANOS, REMOVALS, BLOOD, RECYCLING, VENDING)
MERGED = (KARAOKE, REMOVALS, VENDING)
FIXED_TIME = dt.datetime(2024, 12, 31, 9, 0, 0)


def days_between(start: str, span: int, n: int, rng: np.random.Generator) -> pd.DatetimeIndex:
    """n days drawn from `span` days after `start`, in order (a log kept as the days went)."""
    return pd.to_datetime(start) + pd.to_timedelta(np.sort(rng.integers(0, span, size=n)), unit="D")


def blanked(values: list, rng: np.random.Generator, count: int) -> list:
    """The values with `count` of them left blank (not written down)."""
    values = list(values)
    for i in rng.choice(len(values), size=count, replace=False):
        values[i] = None
    return values


# --- karaoke rooms (merged header, Chinese) ----------------------------------------------------------
KARAOKE_GROUPS: Groups = {
    "单号": None,
    "日期": "预订",
    "门店": "预订",
    "包厢": "预订",
    "人数": "到店",
    "时长(小时)": "到店",
    "续钟": "到店",
    "房费(元)": "消费",
    "酒水(元)": "消费",
    "会员": None,
}


def karaoke() -> pd.DataFrame:
    rng = np.random.default_rng(1301)
    n = 248
    stores = ["春熙路店", "高新店", "双流店", "天府广场店"]
    store = rng.choice(stores, size=n, p=[0.32, 0.28, 0.18, 0.22])
    rooms = ["小包", "中包", "大包", "豪华包"]
    room = rng.choice(rooms, size=n, p=[0.34, 0.33, 0.21, 0.12])
    people_by = {"小包": (2, 5), "中包": (4, 9), "大包": (8, 16), "豪华包": (12, 22)}
    hourly = {"小包": 68, "中包": 108, "大包": 168, "豪华包": 268}
    head_spend = {"小包": 35, "中包": 45, "大包": 60, "豪华包": 90}
    extend_p = {"春熙路店": 0.35, "高新店": 0.2, "双流店": 0.5, "天府广场店": 0.28}
    days = days_between("2024-01-01", 182, n, rng)
    people = np.array([int(rng.integers(people_by[k][0], people_by[k][1] + 1)) for k in room])
    extended = np.array([rng.random() < extend_p[s] for s in store])
    hours = rng.choice([2, 3, 4], size=n, p=[0.45, 0.4, 0.15]) + extended * rng.choice([1, 2], size=n, p=[0.7, 0.3])
    weekend = np.where(days.day_of_week >= 5, 1.2, 1.0)
    fee = np.round(hours * np.array([hourly[k] for k in room]) * weekend).astype(int)
    member = rng.random(n) < 0.4
    drinks = np.round(
        people * np.array([head_spend[k] for k in room]) * rng.lognormal(0, 0.35, n) * np.where(member, 1.3, 1.0)
    ).astype(int)
    frame = pd.DataFrame(
        {
            "单号": [f"K{240001 + i}" for i in range(n)],
            "日期": typed_dates(days.to_series(), rng, [None, "zh", "slash-short"], [0.7, 0.18, 0.12]),
            "门店": store,
            "包厢": room,
            "人数": people,
            "时长(小时)": hours,
            "续钟": ["是" if e else "否" for e in extended],
            "房费(元)": fee,
            "酒水(元)": blanked(list(drinks), rng, 7),  # nothing ordered at the bar
            "会员": ["是" if m else "否" for m in member],
        }
    )
    total = {"单号": "合计", "人数": int(people.sum()), "房费(元)": int(fee.sum())}
    total["酒水(元)"] = int(frame["酒水(元)"].fillna(0).sum())
    return with_messy_rows(frame, [90, 91], total)


# --- a piano tuner's visits (CSV, English) --------------------------------------------------------
def pianos() -> pd.DataFrame:
    rng = np.random.default_rng(1302)
    n = 190
    tuners = ["Marta", "Owen", "Priya", "Tomasz"]
    tuner = rng.choice(tuners, size=n, p=[0.3, 0.27, 0.25, 0.18])
    kinds = ["Upright", "Baby Grand", "Grand"]
    kind = rng.choice(kinds, size=n, p=[0.6, 0.25, 0.15])
    wait_by = {"Marta": 6.0, "Owen": 11.0, "Priya": 4.0, "Tomasz": 15.0}
    follow_p = {"Marta": 0.07, "Owen": 0.22, "Priya": 0.12, "Tomasz": 0.31}
    booked = days_between("2024-01-08", 300, n, rng)
    wait = np.array([max(1, int(rng.gamma(3.0, wait_by[t] / 3.0))) for t in tuner])
    visit = booked + pd.to_timedelta(wait, unit="D")
    years = np.minimum(15, rng.gamma(1.6, 2.2, n).astype(int))
    pitch = np.array([y >= 4 and rng.random() < 0.75 for y in years])
    extra = {"Upright": 0, "Baby Grand": 15, "Grand": 25}
    minutes = np.round(55 + 7 * years + np.array([extra[k] for k in kind]) + 20 * pitch + rng.normal(0, 12, n))
    distance = np.round(rng.gamma(2.0, 9.0, n) + 1, 1)
    base = {"Upright": 75, "Baby Grand": 95, "Grand": 120}
    fee = np.array([base[k] for k in kind]) + 40 * pitch + 5 * np.round(distance * 0.6 / 5)
    forms = ["%Y-%m-%d", "%d/%m/%Y", "%d %b %Y"]
    surnames = ["Ahmed", "Baker", "Clarke", "Davies", "Edwards", "Fisher", "Green", "Hall", "Irwin", "Jones", "King"]
    frame = pd.DataFrame(
        {
            "Visit ID": [f"PT-{101 + i}" for i in range(n)],
            "Customer": [f"{('Mrs', 'Dr', 'Mr')[i % 3]} {surnames[(i * 5) % 11]}" for i in range(n)],
            "Booked On": typed_dates(booked.to_series(), rng, forms, [0.55, 0.3, 0.15]),
            "Visit Date": typed_dates(visit.to_series(), rng, forms, [0.55, 0.3, 0.15]),
            "Technician": tuner,
            "Piano Type": kind,
            "Years Since Last Tuning": blanked([int(y) for y in years], rng, 11),  # the owner could not say
            "Time on Job (min)": minutes.astype(int),
            "Distance (km)": distance,
            "Fee (£)": fee.astype(int),
            "Pitch Raise": ["Y" if p else "N" for p in pitch],
            "Follow-up Needed": ["Y" if rng.random() < follow_p[t] else "N" for t in tuner],
        }
    )
    total = {"Visit ID": "TOTAL", "Time on Job (min)": int(minutes.sum()), "Fee (£)": int(fee.sum())}
    return with_messy_rows(frame, [70], total)


# --- a removals firm's jobs (merged header, English) ----------------------------------------------
REMOVALS_GROUPS: Groups = {
    "Job Ref": None,
    "Move Date": "Job",
    "Crew": "Job",
    "Move Type": "Job",
    "Volume (m³)": "Load",
    "Distance (km)": "Load",
    "Crew Hours": "Load",
    "Quote ($)": "Price",
    "Final Bill ($)": "Price",
    "Damage Claim": None,
}


def removals() -> pd.DataFrame:
    rng = np.random.default_rng(1303)
    n = 220
    crews = ["Kestrel", "Falcon", "Osprey", "Heron"]
    crew = rng.choice(crews, size=n, p=[0.3, 0.27, 0.23, 0.2])
    kinds = ["Studio", "2-Bed", "3-Bed", "Office"]
    kind = rng.choice(kinds, size=n, p=[0.22, 0.33, 0.27, 0.18])
    volume_by = {"Studio": (8, 15), "2-Bed": (18, 30), "3-Bed": (30, 48), "Office": (35, 90)}
    per_m3 = {"Studio": 32.0, "2-Bed": 28.0, "3-Bed": 27.0, "Office": 34.0}
    damage_p = {"Kestrel": 0.06, "Falcon": 0.11, "Osprey": 0.2, "Heron": 0.09}
    pace = {"Kestrel": 1.0, "Falcon": 1.05, "Osprey": 0.95, "Heron": 1.12}
    days = days_between("2024-03-01", 184, n, rng)
    volume = np.round([rng.uniform(*volume_by[k]) for k in kind], 1)
    distance = np.round(rng.gamma(1.6, 14.0, n) + 2, 1)
    hours = np.round((volume / 5 + distance / 40 + rng.normal(0, 0.8, n)) * 2).clip(4, None) / 2
    quote = np.round((180 + volume * np.array([per_m3[k] for k in kind]) + distance * 12) / 10) * 10
    overrun = np.clip(rng.normal(0.04, 0.06, n), -0.05, None) * np.array([pace[c] for c in crew])
    final = np.round(quote * (1 + overrun))
    frame = pd.DataFrame(
        {
            "Job Ref": [f"RM-{2401 + i}" for i in range(n)],
            "Move Date": typed_dates(days.to_series(), rng, [None, "%b %d, %Y", "%Y/%m/%d"], [0.7, 0.18, 0.12]),
            "Crew": crew,
            "Move Type": kind,
            "Volume (m³)": volume,
            "Distance (km)": distance,
            "Crew Hours": hours,
            "Quote ($)": quote.astype(int),
            "Final Bill ($)": final.astype(int),
            "Damage Claim": ["Y" if rng.random() < damage_p[c] else "N" for c in crew],
        }
    )
    total = {"Job Ref": "TOTAL", "Quote ($)": int(quote.sum()), "Final Bill ($)": int(final.sum())}
    return with_messy_rows(frame, [75, 150], total)


# --- blood donation drives (plain workbook, Chinese) --------------------------------------------------
def blood() -> pd.DataFrame:
    rng = np.random.default_rng(1304)
    n = 300
    sites = ["人民广场", "科技园", "东湖公园", "北站"]
    site = rng.choice(sites, size=n, p=[0.35, 0.25, 0.2, 0.2])
    first_p = {"人民广场": 0.3, "科技园": 0.46, "东湖公园": 0.2, "北站": 0.58}
    days = days_between("2024-01-03", 180, n, rng)
    male = rng.random(n) < 0.55
    age = np.clip(np.round(rng.gamma(2.6, 7.5, n) + 16), 18, 60).astype(int)
    blood_type = rng.choice(["O", "A", "B", "AB"], size=n, p=[0.34, 0.3, 0.26, 0.1])
    haemoglobin = np.round(np.where(male, rng.normal(146, 12, n), rng.normal(131, 11, n))).astype(int)
    fit = (haemoglobin >= np.where(male, 120, 115)) & (rng.random(n) > 0.04)
    volume: list = []
    for m, ok in zip(male, fit):
        volume.append(int(rng.choice([200, 300, 400], p=[0.15, 0.35, 0.5] if m else [0.35, 0.45, 0.2])) if ok else None)
    frame = pd.DataFrame(
        {
            "编号": [f"XY{24001 + i}" for i in range(n)],
            "献血日期": typed_dates(days.to_series(), rng, [None, "zh", "%Y.%m.%d"], [0.65, 0.2, 0.15]),
            "献血点": site,
            "性别": ["男" if m else "女" for m in male],
            "年龄": age,
            "血型": blood_type,
            "血红蛋白(g/L)": haemoglobin,
            "体检合格": ["是" if ok else "否" for ok in fit],
            "献血量(毫升)": volume,
            "首次献血": ["是" if rng.random() < first_p[s] else "否" for s in site],
        }
    )
    total = {"编号": "合计", "献血量(毫升)": int(sum(v for v in volume if v))}
    return with_messy_rows(frame, [120], total)


# --- a recycling centre's drop-offs (CSV, Chinese) ------------------------------------------------
def recycling() -> pd.DataFrame:
    rng = np.random.default_rng(1305)
    n = 360
    sites = ["城东站", "城西站", "滨江站"]
    site = rng.choice(sites, size=n, p=[0.38, 0.34, 0.28])
    pickup_p = {"城东站": 0.25, "城西站": 0.12, "滨江站": 0.41}
    materials = ["废纸", "塑料瓶", "易拉罐", "旧衣物", "废铁"]
    material = rng.choice(materials, size=n, p=[0.3, 0.22, 0.15, 0.15, 0.18])
    price_by = {
        "废纸": (1.2, 1.6),
        "塑料瓶": (2.0, 2.6),
        "易拉罐": (5.5, 7.0),
        "旧衣物": (0.4, 0.8),
        "废铁": (1.8, 2.4),
    }
    weight_by = {"废纸": 15.0, "塑料瓶": 4.0, "易拉罐": 2.5, "旧衣物": 6.0, "废铁": 20.0}
    days = days_between("2024-04-01", 183, n, rng)
    office_paper = np.where((site == "城东站") & (material == "废纸"), 1.3, 1.0)  # offices nearby
    weight = np.round([rng.gamma(2.0, weight_by[m]) + 0.5 for m in material] * office_paper, 1)
    price = np.round([rng.uniform(*price_by[m]) for m in material], 1)
    amount = np.round(weight * price, 1)
    typed = typed_dates(days.to_series(), rng, ["%Y-%m-%d", "slash-short", "zh"], [0.6, 0.25, 0.15])
    frame = pd.DataFrame(
        {
            "单号": [f"HS{5001 + i}" for i in range(n)],
            "日期": typed,
            "回收站": site,
            "材料": material,
            "重量(公斤)": weight,
            "单价(元/公斤)": price,
            "金额(元)": amount,
            "上门回收": ["是" if rng.random() < pickup_p[s] else "否" for s in site],
            "称重员": blanked(list(rng.choice(["老周", "小林", "阿芳"], size=n)), rng, 14),
        }
    )
    total = {"单号": "合计", "重量(公斤)": round(float(weight.sum()), 1), "金额(元)": round(float(amount.sum()), 1)}
    return with_messy_rows(frame, [160, 161], total)


# --- vending machines (merged header, English) ----------------------------------------------------
VENDING_GROUPS: Groups = {
    "Visit No": None,
    "Visit Date": "Visit",
    "Machine": "Visit",
    "Snacks Sold": "Sales",
    "Drinks Sold": "Sales",
    "Cash ($)": "Sales",
    "Card ($)": "Sales",
    "Sold Out": "Restock",
    "Items Added": "Restock",
    "Faulty": None,
}


def vending() -> pd.DataFrame:
    rng = np.random.default_rng(1306)
    machines = {
        # visits a week, snacks and drinks sold between visits, the share paid in cash, sold out, faulty
        "Library Foyer": (2, 38, 30, 0.35, 0.12, 0.04),
        "Gym": (2, 22, 64, 0.18, 0.38, 0.05),
        "Car Park": (2, 30, 26, 0.5, 0.08, 0.2),
        "Staff Room": (2, 34, 28, 0.3, 0.18, 0.03),
        "Hospital Lobby": (2, 46, 44, 0.45, 0.3, 0.04),
    }
    weeks = pd.date_range("2024-01-01", "2024-06-28", freq="W-MON")
    rows = []
    for week in weeks:
        for machine, (visits, snacks, drinks, cash, sold_out, faulty) in machines.items():
            for day in sorted(rng.choice(5, size=visits, replace=False)):
                s, d = int(rng.poisson(snacks)), int(rng.poisson(drinks))
                takings = s * 1.75 + d * 2.25
                in_cash = round(takings * float(np.clip(rng.normal(cash, 0.08), 0.02, 0.95)) * 4) / 4
                out = rng.random() < sold_out
                rows.append(
                    [
                        week + pd.Timedelta(days=int(day)),
                        machine,
                        s,
                        d,
                        in_cash,
                        round(takings - in_cash, 2),
                        "Y" if out else "N",
                        s + d + int(rng.integers(0, 12)) + (8 if out else 0),
                        "Y" if rng.random() < faulty else "N",
                    ]
                )
    frame = pd.DataFrame(rows, columns=list(VENDING_GROUPS)[1:])
    frame = frame.sort_values("Visit Date", kind="stable").reset_index(drop=True)
    frame.insert(0, "Visit No", [f"V{301 + i}" for i in range(len(frame))])
    frame["Visit Date"] = typed_dates(frame["Visit Date"], rng, [None, "%d %b %Y", "%d.%m.%Y"], [0.7, 0.18, 0.12])
    frame["Cash ($)"] = frame["Cash ($)"].astype(object)
    frame.loc[rng.choice(len(frame), size=5, replace=False), "Cash ($)"] = None  # the coin box not counted
    total = {"Visit No": "TOTAL"} | {c: int(frame[c].sum()) for c in ("Snacks Sold", "Drinks Sold")}
    total |= {c: round(float(frame[c].fillna(0).sum()), 2) for c in ("Cash ($)", "Card ($)")}
    return with_messy_rows(frame, [100], total)


# --- the files ---------------------------------------------------------------------------------------
FRAMES: dict[str, tuple[Callable[[], pd.DataFrame], Groups | None]] = {
    KARAOKE: (karaoke, KARAOKE_GROUPS),
    PIANOS: (pianos, None),
    REMOVALS: (removals, REMOVALS_GROUPS),
    BLOOD: (blood, None),
    RECYCLING: (recycling, None),
    VENDING: (vending, VENDING_GROUPS),
}


def fresh(name: str) -> bytes:
    """The bytes of one generated file."""
    return file_bytes(name, FRAMES, FIXED_TIME)


if __name__ == "__main__":
    write_files(REPO, NAMES, fresh)
