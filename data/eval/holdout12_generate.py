"""Writes the spreadsheets of the twelfth held-out set (data/eval/files/h12_*), with fixed seeds.

`python data/eval/holdout12_generate.py` writes the six files; data/eval/holdout12_expected.py reads
them back from disk and computes every expected value (its `--check` fails when a file on disk no
longer matches what this script gives). Domains used by no earlier set: a bowling alley, ice-cream
kiosks, a wedding photographer, car parks, a tailor's alterations, kayak rentals. Four workbooks have
a merged two-row header (a group cell merged across its leaf columns); the files are left as people
leave them: a TOTAL / 合计 row, blank rows, dates typed several ways, units in brackets, Y/N and 是/否
columns, a few blank cells. Written without reading Verity's understanding or analyst code.
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
BOWLING = f"{FILES}/h12_bowling_lanes.xlsx"
KIOSKS = f"{FILES}/h12_ice_cream_kiosks.xlsx"
WEDDINGS = f"{FILES}/h12_wedding_photo_jobs.csv"
PARKING = f"{FILES}/h12_car_park_tickets.csv"
TAILOR = f"{FILES}/h12_tailor_alterations.xlsx"
KAYAKS = f"{FILES}/h12_kayak_rentals.xlsx"
NAMES = (BOWLING, KIOSKS, WEDDINGS, PARKING, TAILOR, KAYAKS)
MERGED = (BOWLING, KIOSKS, TAILOR, KAYAKS)
FIXED_TIME = dt.datetime(2024, 12, 31, 9, 0, 0)


# --- a bowling alley (merged header, English) -----------------------------------------------------
BOWLING_GROUPS: Groups = {
    "Ref": None,
    "Date": None,
    "Lane": "Booking",
    "Group Type": "Booking",
    "Players": "Play",
    "Games": "Play",
    "Lane Fee ($)": "Takings",
    "Food & Drink ($)": "Takings",
    "Repeat Customer": None,
}


def bowling() -> pd.DataFrame:
    rng = np.random.default_rng(1201)
    n = 236
    kinds = ["Birthday", "League", "Corporate", "Walk-in", "School"]
    kind = rng.choice(kinds, size=n, p=[0.26, 0.2, 0.16, 0.26, 0.12])
    days = pd.to_datetime("2024-01-02") + pd.to_timedelta(np.sort(rng.integers(0, 181, size=n)), unit="D")
    players_range = {
        "Birthday": (6, 16),
        "League": (8, 12),
        "Corporate": (10, 24),
        "Walk-in": (2, 5),
        "School": (15, 30),
    }
    per_game = {"Birthday": 26.0, "League": 18.0, "Corporate": 29.0, "Walk-in": 22.0, "School": 15.0}
    per_head = {"Birthday": 9.5, "League": 6.0, "Corporate": 17.5, "Walk-in": 5.0, "School": 3.5}
    repeat_p = {"Birthday": 0.22, "League": 0.88, "Corporate": 0.41, "Walk-in": 0.14, "School": 0.55}
    players = np.array([rng.integers(players_range[k][0], players_range[k][1] + 1) for k in kind])
    games = np.array([3 if k == "League" else int(rng.integers(1, 4)) for k in kind])
    lanes_used = np.ceil(players / 6)
    fee = np.round(games * lanes_used * np.array([per_game[k] for k in kind]) * rng.uniform(0.9, 1.1, n), 2)
    food = np.round(players * np.array([per_head[k] for k in kind]) * rng.lognormal(0, 0.3, n), 2)
    food_col: list = list(food)
    for i in rng.choice(n, size=9, replace=False):
        food_col[i] = None  # nothing recorded at the bar
    frame = pd.DataFrame(
        {
            "Ref": [f"BK-{1001 + i}" for i in range(n)],
            "Date": typed_dates(days, rng, [None, "%d %b %Y", "%Y/%m/%d"], [0.7, 0.15, 0.15]),
            "Lane": rng.integers(1, 11, size=n),
            "Group Type": kind,
            "Players": players,
            "Games": games,
            "Lane Fee ($)": fee,
            "Food & Drink ($)": food_col,
            "Repeat Customer": ["Y" if rng.random() < repeat_p[k] else "N" for k in kind],
        }
    )
    total = {
        "Ref": "TOTAL",
        "Players": int(players.sum()),
        "Games": int(games.sum()),
        "Lane Fee ($)": round(float(fee.sum()), 2),
        "Food & Drink ($)": round(float(np.nansum([v for v in food_col if v is not None])), 2),
    }
    return with_messy_rows(frame, [118], total)


# --- ice-cream kiosks (merged header, Chinese) ----------------------------------------------------
KIOSK_GROUPS: Groups = {
    "日期": None,
    "摊位": None,
    "最高气温(℃)": "天气",
    "下雨": "天气",
    "甜筒(支)": "销售",
    "杯装(份)": "销售",
    "营业额(元)": "销售",
    "进货(元)": "成本",
    "损耗(元)": "成本",
}


def kiosks() -> pd.DataFrame:
    rng = np.random.default_rng(1202)
    all_days = pd.date_range("2024-05-01", "2024-08-31", freq="D")
    season = 27 + 6 * np.sin((all_days.day_of_year.to_numpy() - 120) / 123 * np.pi)
    rain = rng.random(len(all_days)) < 0.27
    temp = np.round(season + rng.normal(0, 2.2, len(all_days)) - 3 * rain, 1)
    stalls = {"海滨公园": 1.35, "火车站": 1.1, "大学城": 0.85, "老街": 0.95, "体育馆": 0.7}
    open_p = {"海滨公园": 0.8, "火车站": 0.75, "大学城": 0.55, "老街": 0.7, "体育馆": 0.5}
    rows = []
    for d, day in enumerate(all_days):
        for stall, size in stalls.items():
            if rng.random() > open_p[stall]:
                continue
            demand = max(2.0, 7.5 * (temp[d] - 17)) * size * (0.55 if rain[d] else 1.0)
            cones = int(rng.poisson(demand))
            cups = int(rng.poisson(demand * 0.45))
            takings = cones * 6 + cups * 9
            stock = int(round(takings * 0.34 + rng.normal(0, 12)))
            waste = None if rng.random() < 0.06 else int(rng.integers(0, 45))
            rows.append([day, stall, temp[d], "是" if rain[d] else "否", cones, cups, takings, stock, waste])
    frame = pd.DataFrame(rows, columns=list(KIOSK_GROUPS))
    frame["日期"] = typed_dates(frame["日期"], rng, [None, "zh", "%Y.%m.%d"], [0.7, 0.18, 0.12])
    total = {"摊位": "合计"} | {
        c: int(frame[c].fillna(0).sum()) for c in ("甜筒(支)", "杯装(份)", "营业额(元)", "进货(元)")
    }
    total["损耗(元)"] = int(frame["损耗(元)"].fillna(0).sum())
    return with_messy_rows(frame, [150, 151], total)


# --- a wedding photographer's jobs (CSV, English) -------------------------------------------------
def weddings() -> pd.DataFrame:
    rng = np.random.default_rng(1203)
    n = 172
    packages = ["Elopement", "Basic", "Classic", "Premium"]
    package = rng.choice(packages, size=n, p=[0.14, 0.26, 0.36, 0.24])
    hours_by = {"Elopement": (2, 4), "Basic": (4, 6), "Classic": (6, 9), "Premium": (9, 12)}
    rate_by = {"Elopement": 150.0, "Basic": 120.0, "Classic": 135.0, "Premium": 160.0}
    lead_by = {"Elopement": 70, "Basic": 190, "Classic": 290, "Premium": 380}
    people = ["Ana", "Ben", "Chloe", "Dev"]
    album_p = {"Ana": 0.62, "Ben": 0.35, "Chloe": 0.5, "Dev": 0.21}
    photographer = rng.choice(people, size=n, p=[0.3, 0.25, 0.27, 0.18])
    hours = np.array([int(rng.integers(hours_by[p][0], hours_by[p][1] + 1)) for p in package])
    fee = np.round(hours * np.array([rate_by[p] for p in package]) + rng.integers(-4, 5, n) * 25, 0)
    wedding = pd.to_datetime("2023-04-01") + pd.to_timedelta(rng.integers(0, 580, n), unit="D")
    lead = np.array([max(21, int(rng.normal(lead_by[p], 45))) for p in package])
    enquiry = wedding - pd.to_timedelta(lead, unit="D")
    travel = np.round(rng.gamma(2.0, 22.0, n), 0)
    review = np.clip(np.round(5.1 - travel / 45 + rng.normal(0, 0.6, n)), 1, 5)
    review_col: list = [int(v) for v in review]
    for i in rng.choice(n, size=17, replace=False):
        review_col[i] = None  # no review left
    surnames = ["Smith", "Jones", "Patel", "Brown", "Khan", "Taylor", "Wilson", "Evans", "Hughes", "Walker"]
    forms = ["%Y-%m-%d", "%d %b %Y", "%Y/%m/%d"]
    frame = pd.DataFrame(
        {
            "Job No": [f"W{23001 + i}" for i in range(n)],
            "Couple": [f"{surnames[i % 10]} & {surnames[(i * 7 + 3) % 10]}" for i in range(n)],
            "Enquiry Date": typed_dates(enquiry, rng, forms, [0.6, 0.25, 0.15]),
            "Wedding Date": typed_dates(wedding, rng, forms, [0.6, 0.25, 0.15]),
            "Package": package,
            "Photographer": photographer,
            "Hours Booked": hours,
            "Fee (£)": fee.astype(int),
            "Travel (miles)": travel.astype(int),
            "Album Ordered": ["Y" if rng.random() < album_p[p] else "N" for p in photographer],
            "Review (stars)": review_col,
        }
    )
    total = {"Job No": "TOTAL", "Hours Booked": int(hours.sum()), "Fee (£)": int(fee.sum())}
    return with_messy_rows(frame, [60], total)


# --- car park tickets (CSV, Chinese) ----------------------------------------------------------------
def parking() -> pd.DataFrame:
    rng = np.random.default_rng(1204)
    n = 430
    sites = ["万达广场", "火车南站", "人民医院"]
    site = rng.choice(sites, size=n, p=[0.42, 0.33, 0.25])
    start = pd.to_datetime("2024-03-01") + pd.to_timedelta(np.sort(rng.integers(0, 122 * 24 * 60, n)), unit="min")
    minutes = np.array([int(rng.gamma(2.2, {"万达广场": 55, "火车南站": 140, "人民医院": 70}[s])) + 10 for s in site])
    hourly = {"万达广场": 5.0, "火车南站": 4.0, "人民医院": 6.0}
    kind = rng.choice(["小型车", "SUV", "货车"], size=n, p=[0.6, 0.32, 0.08])
    member_p = {"万达广场": 0.38, "火车南站": 0.17, "人民医院": 0.09}
    member = np.array(["是" if rng.random() < member_p[s] else "否" for s in site])
    amount = np.array(
        [
            round(np.ceil(m / 60) * hourly[s] * (1.5 if k == "货车" else 1.0) * (0.8 if mem == "是" else 1.0), 1)
            for m, s, k, mem in zip(minutes, site, kind, member)
        ]
    )
    pay = rng.choice(["微信", "支付宝", "现金", "ETC"], size=n, p=[0.46, 0.29, 0.15, 0.10])
    forms = ["%Y-%m-%d %H:%M", "slash-time", "%Y年%m月%d日 %H:%M"]
    picks = rng.choice(3, size=n, p=[0.6, 0.25, 0.15])
    typed = [
        f"{t.year}/{t.month}/{t.day} {t.hour}:{t.minute:02d}" if forms[p] == "slash-time" else t.strftime(forms[p])
        for t, p in zip(start, picks)
    ]
    frame = pd.DataFrame(
        {
            "票号": [f"P{240001 + i}" for i in range(n)],
            "车场": site,
            "入场时间": typed,
            "停车时长(分钟)": minutes,
            "车型": kind,
            "金额(元)": amount,
            "会员": member,
            "支付方式": pay,
        }
    )
    kind_blank = rng.choice(n, size=6, replace=False)
    frame["车型"] = frame["车型"].astype(object)
    frame.loc[kind_blank, "车型"] = None
    total = {"票号": "合计", "停车时长(分钟)": int(minutes.sum()), "金额(元)": round(float(amount.sum()), 1)}
    return with_messy_rows(frame, [200], total)


# --- a tailor's alterations (merged header, Chinese) ------------------------------------------------
TAILOR_GROUPS: Groups = {
    "单号": None,
    "接单日期": "接单",
    "师傅": "接单",
    "衣物": "接单",
    "取件日期": "交付",
    "按时交付": "交付",
    "工费(元)": "费用",
    "布料费(元)": "费用",
    "是否返工": None,
}


def tailor() -> pd.DataFrame:
    rng = np.random.default_rng(1205)
    n = 214
    masters = ["王师傅", "李师傅", "陈师傅", "赵师傅"]
    master = rng.choice(masters, size=n, p=[0.31, 0.29, 0.24, 0.16])
    garments = ["裤子", "西装", "连衣裙", "衬衫", "大衣"]
    garment = rng.choice(garments, size=n, p=[0.3, 0.18, 0.2, 0.2, 0.12])
    labour_by = {"裤子": (25, 60), "西装": (120, 320), "连衣裙": (60, 160), "衬衫": (30, 70), "大衣": (90, 240)}
    days_by = {"裤子": 3, "西装": 9, "连衣裙": 6, "衬衫": 3, "大衣": 8}
    redo_p = {"王师傅": 0.05, "李师傅": 0.14, "陈师傅": 0.09, "赵师傅": 0.22}
    late_p = {"王师傅": 0.1, "李师傅": 0.27, "陈师傅": 0.18, "赵师傅": 0.3}
    taken = pd.to_datetime("2024-03-01") + pd.to_timedelta(np.sort(rng.integers(0, 180, n)), unit="D")
    wait = np.array([max(1, int(rng.normal(days_by[g], 2.0))) for g in garment])
    picked = taken + pd.to_timedelta(wait, unit="D")
    labour = np.array([int(rng.integers(labour_by[g][0], labour_by[g][1] + 1)) for g in garment])
    cloth_col: list = [int(rng.integers(0, 80)) if rng.random() < 0.4 else None for _ in range(n)]
    forms: list[str | None] = [None, "dash-short", "zh"]
    picked_typed = typed_dates(picked, rng, forms, [0.7, 0.15, 0.15])
    for i in rng.choice(n, size=8, replace=False):
        picked_typed[i] = None  # not collected yet
    frame = pd.DataFrame(
        {
            "单号": [f"T-{3001 + i}" for i in range(n)],
            "接单日期": typed_dates(taken, rng, forms, [0.7, 0.15, 0.15]),
            "师傅": master,
            "衣物": garment,
            "取件日期": picked_typed,
            "按时交付": ["否" if rng.random() < late_p[m] else "是" for m in master],
            "工费(元)": labour,
            "布料费(元)": cloth_col,
            "是否返工": ["是" if rng.random() < redo_p[m] else "否" for m in master],
        }
    )
    total = {"单号": "合计", "工费(元)": int(labour.sum()), "布料费(元)": int(sum(v for v in cloth_col if v))}
    return with_messy_rows(frame, [97], total)


# --- kayak rentals (merged header, English) ----------------------------------------------------------
KAYAK_GROUPS: Groups = {
    "Rental No": None,
    "Date": "Trip",
    "Launch Site": "Trip",
    "Craft": "Trip",
    "Hours Out": "Time",
    "Rental Fee ($)": "Money",
    "Deposit Kept ($)": "Money",
    "Guided": None,
}


def kayaks() -> pd.DataFrame:
    rng = np.random.default_rng(1206)
    n = 258
    sites = ["North Beach", "Mill Pond", "River Bend"]
    site = rng.choice(sites, size=n, p=[0.4, 0.27, 0.33])
    crafts = ["Single Kayak", "Double Kayak", "Paddleboard"]
    craft = rng.choice(crafts, size=n, p=[0.42, 0.33, 0.25])
    hourly = {"Single Kayak": 18.0, "Double Kayak": 28.0, "Paddleboard": 21.0}
    guided_p = {"North Beach": 0.18, "Mill Pond": 0.07, "River Bend": 0.46}
    days = pd.to_datetime("2024-05-04") + pd.to_timedelta(np.sort(rng.integers(0, 150, n)), unit="D")
    hours = rng.choice([1, 1.5, 2, 2.5, 3, 3.5, 4, 5, 6], size=n, p=[0.14, 0.1, 0.2, 0.12, 0.14, 0.08, 0.1, 0.07, 0.05])
    guided = np.array(["Yes" if rng.random() < guided_p[s] else "No" for s in site])
    fee = np.array(
        [
            round(h * hourly[c] + (25.0 if g == "Yes" else 0.0) + float(rng.integers(0, 4)) * 0.5, 2)
            for h, c, g in zip(hours, craft, guided)
        ]
    )
    kept: list = [0.0 if rng.random() < 0.85 else float(rng.choice([10, 20, 40])) for _ in range(n)]
    for i in rng.choice(n, size=12, replace=False):
        kept[i] = None
    frame = pd.DataFrame(
        {
            "Rental No": [f"K{501 + i}" for i in range(n)],
            "Date": typed_dates(days, rng, [None, "%b %d, %Y", "%Y-%m-%d"], [0.72, 0.16, 0.12]),
            "Launch Site": site,
            "Craft": craft,
            "Hours Out": hours,
            "Rental Fee ($)": fee,
            "Deposit Kept ($)": kept,
            "Guided": guided,
        }
    )
    total = {"Rental No": "TOTAL", "Hours Out": float(hours.sum()), "Rental Fee ($)": round(float(fee.sum()), 2)}
    return with_messy_rows(frame, [130], total)


# --- the files ---------------------------------------------------------------------------------------
FRAMES: dict[str, tuple[Callable[[], pd.DataFrame], Groups | None]] = {
    BOWLING: (bowling, BOWLING_GROUPS),
    KIOSKS: (kiosks, KIOSK_GROUPS),
    WEDDINGS: (weddings, None),
    PARKING: (parking, None),
    TAILOR: (tailor, TAILOR_GROUPS),
    KAYAKS: (kayaks, KAYAK_GROUPS),
}


def fresh(name: str) -> bytes:
    """The bytes of one generated file."""
    return file_bytes(name, FRAMES, FIXED_TIME)


if __name__ == "__main__":
    write_files(REPO, NAMES, fresh)
