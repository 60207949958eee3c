"""An eleventh held-out question set for `verity eval`: everyday questions of a cab firm, a museum, a campsite.

`python data/eval/holdout11_expected.py --write` writes data/eval/holdout11.json (run
data/eval/holdout11_generate.py first for the spreadsheets, data/eval/files/h11_*); `--check` fails
when a spreadsheet differs from its generator or the task file from this computation; `--summary`
prints the counts by language, by kind and on merged headers.

Every expected value is computed here with plain pandas / scipy from the files as read back from
disk, never from a run of Verity, and the questions were written without reading the analyst's or
the understanding code (nor the tests). They are for measuring, not for tuning: do not change the
analyst to fit them, and do not diagnose them (issue 24).

Forty-two questions, twenty-one in English and twenty-one in Chinese; eighteen are asked in the
other language than the sheet's headers, twenty-one are on the three workbooks with merged two-row
headers. The words of the questions are a non-expert's: they rarely repeat a column's name.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The fact shorthands and the --write/--check driver are the main set's, so every set writes facts alike;
# the file helpers are shared with the other held-out sets (eval_files.py).
import eval_files
from expected import MONEY, either, headline, number, pct, r, says, says_all, task
from expected import main as expected_main
from holdout11_generate import CAMPSITE, ESCAPE, GENERATORS, HONEY, LANGUAGE, MERGED, MUSEUM, TAXI, file_bytes

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "data" / "eval" / "holdout11.json"

ABOUT = (
    "An eleventh held-out evaluation question set (issue 24): 42 everyday questions, 21 English and 21 Chinese, "
    "18 asked in the other language than the sheet's headers, 21 on workbooks with merged two-row headers; "
    "top/bottom N rows, filters, yes/no rates per group, every group's share, compound questions, derived "
    "quantities (days between two dates, per-unit rates), per-month totals, relationships and two groups "
    "compared, on six generated spreadsheets of new domains (h11_*, written by data/eval/holdout11_generate.py "
    "with fixed seeds). Written without reading the analyst's or the understanding code; every expected value "
    "computed independently with pandas/scipy by data/eval/holdout11_expected.py. Sealed: score it, never "
    "diagnose it."
)

# What each question asks for, so the set's mix can be counted (`--summary`); not part of the task file.
KINDS: dict[str, list[str]] = {}


def ask(id_: str, files: list[str], question: str, facts: list[dict], source: str, kinds: list[str]) -> dict:
    KINDS[id_] = kinds
    return task(id_, files, question, facts, source)


# --- reading the files back ------------------------------------------------------------------------
def read_bytes(content: bytes, name: str) -> pd.DataFrame:
    """A file as a person reads it; the workbooks in MERGED have a merged two-row header."""
    return eval_files.read_bytes(content, name, MERGED)


def read(name: str) -> pd.DataFrame:
    """A file as read back from disk, blank rows dropped: the expected values come from what a user uploads."""
    return read_bytes((REPO / name).read_bytes(), name).dropna(how="all").reset_index(drop=True)


def stale_files() -> list[str]:
    """The files whose data differ from what holdout11_generate.py gives now."""
    return eval_files.stale_files(REPO, GENERATORS, file_bytes, MERGED)


def merged_ranges(name: str) -> list[str]:
    """The merged cells of a workbook, as openpyxl reads them (the header really is merged)."""
    return eval_files.merged_ranges(REPO / name)


DATE_FORMS = ("%Y-%m-%d", "%Y/%m/%d", "%Y年%m月%d日", "%Y.%m.%d", "%d %b %Y")


def dates(column: pd.Series) -> pd.Series:
    """Dates as people type them: real date cells, 2024-03-05, 2024/3/5, 2024年3月5日, 2024.3.5, 5 Mar 2024."""
    return eval_files.dates(column, DATE_FORMS)


def numbers(frame: pd.DataFrame, *columns: str) -> pd.DataFrame:
    frame = frame.copy()
    for column in columns:
        frame[column] = pd.to_numeric(frame[column])
    return frame


# --- fact helpers ----------------------------------------------------------------------------------
def rate(share: float) -> dict[str, Any]:
    """A share as the answer may show it: a percentage (23.5 for 23.5%) or a fraction (0.235)."""
    return either(number(pct(share), 0.15), number(r(share, 3), 0.0015))


def mean_shown(value: float, tol: float = 0.06) -> dict[str, Any]:
    return number(r(value, 2), tol)


def money(value: float) -> dict[str, Any]:
    """A total of money, shown rounded (12,345 or 1.23万) within 0.1%."""
    return number(r(value, 2), rel_tol=MONEY)


def month_words(month: int) -> dict[str, Any]:
    """A month named the way an answer may name it: April, Apr, 4月, 2024-04."""
    name = pd.Timestamp(2024, month, 1)
    return says(name.strftime("%B"), name.strftime("%b "), f"{month}月", name.strftime("%Y-%m"), f"{month:d}/2024")


def day_words(day: pd.Timestamp) -> dict[str, Any]:
    """A day named the way an answer may name it: 2024-03-09, 9 March, March 9, 3月9日, 2024/3/9."""
    words = [
        day.strftime("%Y-%m-%d"),
        f"{day.day} {day.strftime('%B')}",
        f"{day.day} {day.strftime('%b')}",
        f"{day.strftime('%B')} {day.day}",
        f"{day.strftime('%b')} {day.day}",
        f"{day.month}月{day.day}日",
        f"{day.year}/{day.month}/{day.day}",
    ]
    return says(*dict.fromkeys(words))  # May is both its name and its short name


def apart(series: pd.Series, n: int, gap: float) -> pd.Series:
    """The first n of a ranked series, asserting they stand apart from the next by more than `gap`."""
    assert len(series) == n or abs(series.iloc[n - 1] - series.iloc[n]) > gap, series.head(n + 2)
    return series.head(n)


def relation(x: pd.Series, y: pd.Series) -> tuple[Any, dict[str, Any]]:
    """Pearson r, and how strong in the answer's words: r (its size, as a negative r may be written
    '-0.62' or '0.62, negative'), Spearman's or Kendall's rank correlation, the OLS slope or R²."""
    pair = pd.DataFrame({"x": pd.to_numeric(x), "y": pd.to_numeric(y)}).dropna()
    pearson = stats.pearsonr(pair["x"], pair["y"])
    ranks = [stats.spearmanr(pair["x"], pair["y"]).statistic, stats.kendalltau(pair["x"], pair["y"]).statistic]
    slope = stats.linregress(pair["x"], pair["y"]).slope
    shown = [number(r(c, 2), 0.011) for c in (pearson.statistic, *ranks)]
    shown += [number(r(abs(c), 2), 0.011) for c in (pearson.statistic, *ranks) if c < 0]
    shown += [
        number(r(slope, 2), 0.011),
        number(r(pearson.statistic**2, 2), 0.011),
        number(pct(pearson.statistic**2), 1),
    ]
    unique = list({json.dumps(f, sort_keys=True): f for f in shown}.values())  # r and a rank correlation may agree
    return pearson, either(*unique)


def listing(series: pd.Series, fmt: str = "{:,.2f}") -> str:
    return ", ".join(f"{k} {fmt.format(v)}" for k, v in series.items())


def percents(series: pd.Series) -> str:
    return ", ".join(f"{k} {pct(v)}%" for k, v in series.items())


# --- the questions ---------------------------------------------------------------------------------
def taxi_tasks() -> list[dict]:
    """English headers, merged (Trips over Street Hails/App Bookings, Takings (£) over Fares/Tips),
    a TOTAL row at the bottom, tips left blank on some shifts."""
    sheet = read(TAXI)
    assert merged_ranges(TAXI) == ["A1:A2", "B1:B2", "C1:C2", "D1:D2", "E1:E2", "F1:G1", "H1:H2", "I1:J1", "K1:K2"]
    assert sheet["Shift No"].iloc[-1] == "TOTAL"
    shifts = sheet[sheet["Shift No"].ne("TOTAL")].copy()
    assert len(shifts) == 150
    shifts = numbers(shifts, "Street Hails", "App Bookings", "Distance (miles)", "Fares", "Tips")
    shifts["Date"] = pd.to_datetime(shifts["Date"])
    per_mile_total = (
        shifts.groupby("Driver")["Fares"].sum() / shifts.groupby("Driver")["Distance (miles)"].sum()
    ).sort_values(ascending=False)
    per_mile_mean = (
        (shifts["Fares"] / shifts["Distance (miles)"]).groupby(shifts["Driver"]).mean().sort_values(ascending=False)
    )
    apart(per_mile_total, 1, 0.05)
    assert per_mile_total.index[0] == per_mile_mean.index[0]
    complaints = shifts["Complaint?"].eq("Y").groupby(shifts["Driver"]).mean().sort_values(ascending=False)
    apart(complaints, 1, 0.03)
    tips = shifts.set_index("Shift No")["Tips"].dropna().sort_values(ascending=False)
    top5 = apart(tips, 5, 0.1)
    night = shifts[shifts["Day/Night"].eq("Night")]
    night_trips = int((night["Street Hails"] + night["App Bookings"]).sum())
    night_fares, day_fares = night["Fares"], shifts.loc[shifts["Day/Night"].eq("Day"), "Fares"]
    welch = stats.ttest_ind(night_fares, day_fares, equal_var=False)
    assert welch.pvalue < 0.01
    monthly = shifts.groupby(shifts["Date"].dt.month)["Fares"].sum().sort_values(ascending=False)
    apart(monthly, 1, 100)
    share = (shifts.groupby("Driver")["Fares"].sum() / shifts["Fares"].sum()).sort_values(ascending=False)
    apart(share, 2, 0.01)
    return [
        ask(
            "taxi_fares_per_mile_by_driver",
            [TAXI],
            "Which of our drivers gets the most money per mile driven, and how much a mile is it?",
            [
                headline(per_mile_total.index[0]),
                either(mean_shown(per_mile_total.iloc[0], 0.011), mean_shown(per_mile_mean.iloc[0], 0.011)),
            ],
            "sum of Fares (under the merged Takings (£) header) / sum of Distance (miles) by Driver, TOTAL row left "
            "out (pandas): "
            + listing(per_mile_total, "{:.3f}")
            + "; the mean of each shift's Fares / Distance: "
            + listing(per_mile_mean, "{:.3f}"),
            ["derived", "per_unit", "top_group", "compound", "merged"],
        ),
        ask(
            "taxi_complaint_rate_by_driver_zh",
            [TAXI],
            "每个司机的班次里，被乘客投诉的占百分之几？谁最多？",
            [headline(complaints.index[0]), *[rate(v) for v in complaints.head(2)]],
            "share of Complaint? == Y by Driver over 150 shifts, TOTAL row left out (pandas): " + percents(complaints),
            ["yes_no_rate", "compound", "merged", "cross_language"],
        ),
        ask(
            "taxi_five_best_tipped_shifts",
            [TAXI],
            "Which five shifts brought in the biggest tips?",
            [says_all(*top5.index), money(top5.iloc[0])],
            "Tips (under the merged Takings (£) header) by Shift No, highest first, blank tips left out (pandas): "
            + listing(tips.head(7)),
            ["top_n_rows", "merged"],
        ),
        ask(
            "taxi_night_trips_total_zh",
            [TAXI],
            "只算夜班的话，路边拦车加上手机叫车，一共拉了多少趟客人？",
            [number(night_trips, 0.5)],
            f"sum of Street Hails + App Bookings (under the merged Trips header) where Day/Night == Night, "
            f"{len(night)} shifts (pandas): {night_trips}",
            ["filter", "derived", "merged", "cross_language"],
        ),
        ask(
            "taxi_night_vs_day_fares",
            [TAXI],
            "On average, does a night shift take more in fares than a day shift? By how much?",
            [
                either(mean_shown(night_fares.mean() - day_fares.mean(), 0.6), mean_shown(night_fares.mean(), 0.6)),
                either(mean_shown(night_fares.mean() - day_fares.mean(), 0.6), mean_shown(day_fares.mean(), 0.6)),
                says("more", "higher", "yes", "Yes", "bigger"),
            ],
            f"mean Fares by Day/Night (pandas): Night {night_fares.mean():.4f} ({len(night_fares)} shifts), Day "
            f"{day_fares.mean():.4f} ({len(day_fares)}); gap {night_fares.mean() - day_fares.mean():.4f}; Welch p = "
            f"{welch.pvalue:.2g} (scipy)",
            ["compare_two_groups", "compound", "merged"],
        ),
        ask(
            "taxi_fares_by_month_zh",
            [TAXI],
            "每个月车费一共收了多少？哪个月收得最多？",
            [month_words(int(monthly.index[0])), money(monthly.iloc[0])],
            "sum of Fares by month of Date, TOTAL row left out (pandas): " + listing(monthly.sort_index()),
            ["per_month", "compound", "merged", "cross_language"],
        ),
        ask(
            "taxi_fare_share_by_driver",
            [TAXI],
            "How is the fare money split between the drivers? Give each one's percentage of the total.",
            [headline(share.index[0]), *[rate(v) for v in share.head(2)]],
            "sum of Fares by Driver over the total of the 150 shifts, TOTAL row left out (pandas): " + percents(share),
            ["share", "merged"],
        ),
    ]


def museum_tasks() -> list[dict]:
    """English headers, merged (Tickets Sold over Adult/Student/Senior (free), Income (£) over Ticket
    Sales/Audio Guides), a blank row after each month, a row of averages at the bottom."""
    sheet = read(MUSEUM)
    assert merged_ranges(MUSEUM) == ["A1:A2", "B1:B2", "C1:C2", "D1:F1", "G1:H1", "I1:I2"]
    assert sheet["Date"].iloc[-1] == "Average"
    days = sheet[sheet["Date"].ne("Average")].copy()
    days = numbers(days, "Adult", "Student", "Senior (free)", "Ticket Sales", "Audio Guides")
    days["Date"] = pd.to_datetime(days["Date"])
    assert len(days) == 156 and days["Date"].dt.day_of_week.ne(0).all()
    days["visitors"] = days["Adult"] + days["Student"] + days["Senior (free)"]
    special = days["Special Exhibition Open"].eq("Yes")
    on, off = days.loc[special, "visitors"], days.loc[~special, "visitors"]
    welch = stats.ttest_ind(on, off, equal_var=False)
    assert welch.pvalue < 0.001
    monthly = days.groupby(days["Date"].dt.month)["Ticket Sales"].sum().sort_values()
    apart(monthly, 1, 500)
    busiest = days.set_index("Date")["visitors"].sort_values(ascending=False)
    top5 = apart(busiest, 5, 0)
    kinds = days[["Adult", "Student", "Senior (free)"]].sum()
    kind_share = (kinds / kinds.sum()).sort_values(ascending=False)
    rainy_adults = int(days.loc[days["Weather"].eq("Rain"), "Adult"].sum())
    per_visitor = days["Audio Guides"].sum() / days["visitors"].sum()
    open_rate = special.groupby(days["Date"].dt.month).mean().sort_values(ascending=False)
    apart(open_rate, 1, 0.05)
    return [
        ask(
            "museum_exhibition_days_visitors",
            [MUSEUM],
            "On days when the special exhibition was open, how many more people came in on average than on the "
            "other days?",
            [
                either(mean_shown(on.mean() - off.mean(), 0.6), mean_shown(on.mean(), 0.6)),
                either(mean_shown(on.mean() - off.mean(), 0.6), mean_shown(off.mean(), 0.6)),
            ],
            f"visitors = Adult + Student + Senior (free) (under the merged Tickets Sold header); mean by Special "
            f"Exhibition Open (pandas): Yes {on.mean():.4f} ({len(on)} days), No {off.mean():.4f} ({len(off)}); gap "
            f"{on.mean() - off.mean():.4f}; Welch p = {welch.pvalue:.2g} (scipy)",
            ["compare_two_groups", "derived", "merged"],
        ),
        ask(
            "museum_ticket_income_by_month_zh",
            [MUSEUM],
            "每个月卖门票收了多少钱？哪个月最少？",
            [month_words(int(monthly.index[0])), money(monthly.iloc[0])],
            "sum of Ticket Sales (under the merged Income (£) header) by month of Date, blank rows and the Average "
            "row left out (pandas): " + listing(monthly.sort_index()),
            ["per_month", "compound", "merged", "cross_language"],
        ),
        ask(
            "museum_five_busiest_days",
            [MUSEUM],
            "What were our five busiest days, counting everyone who came through the door?",
            [*[day_words(d) for d in top5.index], number(float(top5.iloc[0]), 0.5)],
            "Adult + Student + Senior (free) by Date, highest first (pandas): "
            + ", ".join(f"{d:%Y-%m-%d} {v:g}" for d, v in busiest.head(7).items()),
            ["top_n_rows", "derived", "merged"],
        ),
        ask(
            "museum_ticket_kind_share_zh",
            [MUSEUM],
            "这半年来的人里，成人、学生、老人各占百分之多少？",
            [*[rate(v) for v in kind_share]],
            "sum of Adult, Student and Senior (free) (under the merged Tickets Sold header) over their total, the "
            "Average row left out (pandas): " + percents(kind_share),
            ["share", "merged", "cross_language"],
        ),
        ask(
            "museum_rainy_day_adults",
            [MUSEUM],
            "Just on the rainy days, how many full-price adult tickets did we sell altogether?",
            [number(rainy_adults, 0.5)],
            f"sum of Adult where Weather == Rain, {int(days['Weather'].eq('Rain').sum())} days, the Average row left "
            f"out (pandas): {rainy_adults}",
            ["filter", "merged"],
        ),
        ask(
            "museum_audio_guide_per_visitor_zh",
            [MUSEUM],
            "平均下来，每来一位参观者，讲解器能带来多少钱的收入？",
            [number(r(per_visitor, 2), 0.011)],
            f"sum of Audio Guides (under the merged Income (£) header) / sum of Adult + Student + Senior (free) over "
            f"{len(days)} days (pandas): {days['Audio Guides'].sum():g} / {days['visitors'].sum():g} = "
            f"{per_visitor:.4f}",
            ["derived", "per_unit", "merged", "cross_language"],
        ),
        ask(
            "museum_exhibition_open_by_month",
            [MUSEUM],
            "For each month, on what share of our opening days was the special exhibition open? Which month had it "
            "open most?",
            [month_words(int(open_rate.index[0])), *[rate(v) for v in open_rate.head(2)]],
            "share of Special Exhibition Open == Yes by month of Date over the opening days (pandas): "
            + percents(open_rate),
            ["yes_no_rate", "compound", "merged"],
        ),
    ]


def campsite_tasks() -> list[dict]:
    """Chinese headers, merged (人数 over 成人/儿童, 费用（元） over 营位费/装备租赁), dates partly text,
    children blank where none came, a 合计 row at the bottom."""
    sheet = read(CAMPSITE)
    assert merged_ranges(CAMPSITE) == ["A1:A2", "B1:B2", "C1:C2", "D1:D2", "E1:F1", "G1:H1", "I1:I2", "J1:J2"]
    assert sheet["预订号"].iloc[-1] == "合计"
    stays = sheet[sheet["预订号"].ne("合计")].copy()
    assert len(stays) == 170
    stays = numbers(stays, "成人", "儿童", "营位费", "装备租赁", "评分（满分5分）")
    arrive, leave = dates(stays["入住日期"]), dates(stays["退房日期"])
    assert arrive.notna().all() and leave.notna().all()
    nights = (leave - arrive).dt.days
    assert (nights > 0).all()
    pets = stays["是否带宠物"].eq("是").groupby(stays["营区"]).mean().sort_values(ascending=False)
    apart(pets, 1, 0.05)
    pitch_share = (stays.groupby("营区")["营位费"].sum() / stays["营位费"].sum()).sort_values(ascending=False)
    apart(pitch_share, 1, 0.01)
    paid = (stays["营位费"] + stays["装备租赁"]).set_axis(stays["预订号"]).sort_values(ascending=False)
    top3 = apart(paid, 3, 0)
    kids = stays[stays["儿童"].fillna(0) > 0]
    kid_scores = kids["评分（满分5分）"].dropna()
    monthly = stays.groupby(arrive.dt.month)["营位费"].sum().sort_values(ascending=False)
    apart(monthly, 1, 300)
    people = stays["成人"] + stays["儿童"].fillna(0)
    gear, gear_shown = relation(people, stays["装备租赁"])
    assert gear.statistic > 0.3 and gear.pvalue < 0.001
    return [
        ask(
            "camp_average_nights_zh",
            [CAMPSITE],
            "客人平均每次来营地住几个晚上？",
            [mean_shown(nights.mean(), 0.06)],
            f"mean of 退房日期 - 入住日期 in days (dates partly typed as text: 2024/4/1, 2024年4月1日, 2024.4.1) over "
            f"{len(stays)} bookings, the 合计 row left out (pandas): {nights.mean():.4f}",
            ["derived", "merged"],
        ),
        ask(
            "camp_pets_by_area",
            [CAMPSITE],
            "In each part of the site, what percentage of bookings came with a pet? Which part gets the most?",
            [headline(pets.index[0]), *[rate(v) for v in pets.head(2)]],
            "share of 是否带宠物 == 是 by 营区 over 170 bookings, the 合计 row left out (pandas): " + percents(pets),
            ["yes_no_rate", "compound", "merged", "cross_language"],
        ),
        ask(
            "camp_pitch_share_by_area_zh",
            [CAMPSITE],
            "营位费的收入里，每个区分别占多大比例？",
            [headline(pitch_share.index[0]), *[rate(v) for v in pitch_share.head(2)]],
            "sum of 营位费 (under the merged 费用（元） header) by 营区 over the total, the 合计 row left out "
            "(pandas): " + percents(pitch_share),
            ["share", "merged"],
        ),
        ask(
            "camp_three_biggest_bookings",
            [CAMPSITE],
            "Which three bookings spent the most with us in total, counting the pitch and any gear they hired?",
            [says_all(*top3.index), money(top3.iloc[0])],
            "营位费 + 装备租赁 (under the merged 费用（元） header) by 预订号, highest first (pandas): "
            + listing(paid.head(5), "{:,.0f}"),
            ["top_n_rows", "derived", "compound", "merged", "cross_language"],
        ),
        ask(
            "camp_rating_with_children_zh",
            [CAMPSITE],
            "其中带了小孩的那些预订，平均打了几分？",
            [mean_shown(kid_scores.mean(), 0.006)],
            f"mean 评分（满分5分） where 儿童 > 0 (blank 儿童 is none), {len(kids)} bookings of which {len(kid_scores)} "
            f"rated (pandas): {kid_scores.mean():.4f}",
            ["filter", "merged"],
        ),
        ask(
            "camp_pitch_income_by_month",
            [CAMPSITE],
            "How much did we take in pitch fees each month, going by the arrival date? Which month was the best?",
            [month_words(int(monthly.index[0])), money(monthly.iloc[0])],
            "sum of 营位费 by month of 入住日期 (dates partly text), the 合计 row left out (pandas): "
            + listing(monthly.sort_index(), "{:,.0f}"),
            ["per_month", "compound", "merged", "cross_language"],
        ),
        ask(
            "camp_party_size_and_gear_zh",
            [CAMPSITE],
            "一起来的人越多，租装备花的钱是不是也越多？",
            [gear_shown, says("多", "正", "是的", "相关", "越")],
            f"Pearson r of 成人 + 儿童 (blank 儿童 as 0) and 装备租赁 over {len(stays)} bookings = "
            f"{gear.statistic:.4f}, p = {gear.pvalue:.2g} (scipy)",
            ["relationship", "derived", "merged"],
        ),
    ]


def language_tasks() -> list[dict]:
    """Chinese headers, csv, blank rows, enrolment dates typed four ways, blank test scores."""
    students = read(LANGUAGE)
    assert len(students) == 190
    again = students["是否续报"].eq("是").groupby(students["语种"]).mean().sort_values(ascending=False)
    apart(again, 1, 0.05)
    per_hour = (students["学费（元）"] / students["课时数"]).groupby(students["班型"]).agg(["mean", "min", "max"])
    assert (per_hour["max"] - per_hour["min"]).max() < 1e-9  # one price per class type: a clear answer
    per_hour = per_hour["mean"].sort_values(ascending=False)
    fees = students.set_index("姓名")["学费（元）"].sort_values(ascending=False)
    assert students["姓名"].is_unique
    top5 = apart(fees, 5, 0)
    channel = students["了解渠道"].value_counts(normalize=True).sort_values(ascending=False)
    apart(channel, 1, 0.02)
    japanese = students.loc[students["语种"].eq("日语"), "结业测试成绩"].dropna()
    link, link_shown = relation(students["出勤率（%）"], students["结业测试成绩"])
    assert link.statistic > 0.4 and link.pvalue < 1e-6
    enrolled = dates(students["报名日期"])
    assert enrolled.notna().all()
    monthly = enrolled.dt.month.value_counts().sort_values(ascending=False)
    apart(monthly, 1, 0)
    return [
        ask(
            "lang_renewal_rate_by_language_zh",
            [LANGUAGE],
            "学不同语种的学员，续报的比例分别是多少？哪个语种最高？",
            [headline(again.index[0]), *[rate(v) for v in again.head(2)]],
            "share of 是否续报 == 是 by 语种 over 190 students, blank rows left out (pandas): " + percents(again),
            ["yes_no_rate", "compound"],
        ),
        ask(
            "lang_price_per_hour_by_class",
            [LANGUAGE],
            "For each kind of class, how much does a student pay per hour of lessons?",
            [*[number(float(v), 0.5) for v in per_hour]],
            "学费（元） / 课时数 by 班型 (the same for every student of a class type) (pandas): "
            + listing(per_hour, "{:g}"),
            ["derived", "per_unit", "cross_language"],
        ),
        ask(
            "lang_five_biggest_fees_zh",
            [LANGUAGE],
            "交钱最多的五个学员是谁？",
            [says_all(*top5.index), money(top5.iloc[0])],
            "学费（元） by 姓名, highest first (pandas): " + listing(fees.head(7), "{:,.0f}"),
            ["top_n_rows"],
        ),
        ask(
            "lang_channel_share",
            [LANGUAGE],
            "How did our students hear about us? Give the percentage for each way.",
            [headline(channel.index[0]), *[rate(v) for v in channel]],
            "share of students by 了解渠道 (value counts over 190) (pandas): " + percents(channel),
            ["share", "cross_language"],
        ),
        ask(
            "lang_japanese_test_average_zh",
            [LANGUAGE],
            "只看学日语的学员，结业考试平均考了多少分？",
            [mean_shown(japanese.mean(), 0.06)],
            f"mean 结业测试成绩 where 语种 == 日语, {int(students['语种'].eq('日语').sum())} students of whom "
            f"{len(japanese)} sat the test (pandas): {japanese.mean():.4f}",
            ["filter"],
        ),
        ask(
            "lang_attendance_and_results",
            [LANGUAGE],
            "Do the students who come to class more often do better in the final test?",
            [link_shown, says("more", "higher", "better", "positive", "yes", "Yes", "tend", "increase")],
            f"Pearson r of 出勤率（%） and 结业测试成绩 over the {int(students['结业测试成绩'].notna().sum())} students "
            f"with a score = {link.statistic:.4f}, p = {link.pvalue:.2g} (scipy)",
            ["relationship", "cross_language"],
        ),
        ask(
            "lang_signups_by_month_zh",
            [LANGUAGE],
            "每个月有多少新学员报名？哪个月报名的人最多，有几个？",
            [month_words(int(monthly.index[0])), number(int(monthly.iloc[0]), 0.5)],
            "count of students by month of 报名日期 (typed 2024-04-27, 2024/8/2, 2024年1月7日 or 2024.2.8) "
            "(pandas): " + listing(monthly.sort_index(), "{:d}"),
            ["per_month", "compound"],
        ),
    ]


def escape_tasks() -> list[dict]:
    """English headers, csv, dates typed two ways, no time for a team that did not get out, a TOTAL row."""
    sheet = read(ESCAPE)
    assert sheet["Booking Ref"].iloc[-1] == "TOTAL"
    games = sheet[sheet["Booking Ref"].ne("TOTAL")].copy()
    assert len(games) == 230
    games["Date"] = dates(games["Date"])
    assert games["Date"].notna().all()
    out = games["Escaped?"].eq("Yes")
    assert games.loc[out, "Time Taken (mins)"].notna().all() and games.loc[~out, "Time Taken (mins)"].isna().all()
    rate_by_room = out.groupby(games["Room"]).mean().sort_values(ascending=False)
    apart(rate_by_room, 1, 0.05)
    quickest = games.loc[out].set_index("Booking Ref")["Time Taken (mins)"].sort_values()
    fast3 = apart(quickest, 3, 0)
    monthly = games.groupby(games["Date"].dt.month)["Total Paid (£)"].sum().sort_values(ascending=False)
    apart(monthly, 1, 50)
    corporate = games.loc[games["Corporate (Y/N)"].eq("Y"), "Players"]
    others = games.loc[games["Corporate (Y/N)"].eq("N"), "Players"]
    welch = stats.ttest_ind(corporate, others, equal_var=False)
    assert welch.pvalue < 0.001
    takings = (games.groupby("Room")["Total Paid (£)"].sum() / games["Total Paid (£)"].sum()).sort_values(
        ascending=False
    )
    apart(takings, 1, 0.01)
    hints, hints_shown = relation(games["Hints Used"], games["Time Taken (mins)"])
    assert hints.statistic > 0.4 and hints.pvalue < 1e-6
    escaped_hints = games.loc[out, "Hints Used"]
    return [
        ask(
            "escape_success_rate_by_room",
            [ESCAPE],
            "In which room do teams most often make it out in time? Give me the success rate for every room.",
            [headline(rate_by_room.index[0]), *[rate(v) for v in rate_by_room]],
            "share of Escaped? == Yes by Room over 230 games, TOTAL row left out (pandas): " + percents(rate_by_room),
            ["yes_no_rate", "compound"],
        ),
        ask(
            "escape_three_fastest_zh",
            [ESCAPE],
            "逃出来最快的三组是哪几个订单？各用了多少分钟？",
            [says_all(*fast3.index), *[number(float(v), 0.05) for v in fast3]],
            "Time Taken (mins) by Booking Ref among Escaped? == Yes, lowest first (pandas): "
            + listing(quickest.head(5), "{:.1f}"),
            ["top_n_rows", "filter", "compound", "cross_language"],
        ),
        ask(
            "escape_takings_by_month",
            [ESCAPE],
            "How much money came in each month? Which month was our best?",
            [month_words(int(monthly.index[0])), money(monthly.iloc[0])],
            "sum of Total Paid (£) by month of Date (typed 2024-01-03 or 3 Jan 2024), TOTAL row left out (pandas): "
            + listing(monthly.sort_index(), "{:,.0f}"),
            ["per_month", "compound"],
        ),
        ask(
            "escape_corporate_team_size_zh",
            [ESCAPE],
            "公司团建来的队伍和普通客人比，平均一队多几个人？",
            [
                either(mean_shown(corporate.mean() - others.mean(), 0.06), mean_shown(corporate.mean(), 0.06)),
                either(mean_shown(corporate.mean() - others.mean(), 0.06), mean_shown(others.mean(), 0.06)),
            ],
            f"mean Players by Corporate (Y/N) (pandas): Y {corporate.mean():.4f} ({len(corporate)} games), N "
            f"{others.mean():.4f} ({len(others)}); gap {corporate.mean() - others.mean():.4f}; Welch p = "
            f"{welch.pvalue:.2g} (scipy)",
            ["compare_two_groups", "cross_language"],
        ),
        ask(
            "escape_takings_share_by_room",
            [ESCAPE],
            "What percentage of our takings does each room bring in?",
            [headline(takings.index[0]), *[rate(v) for v in takings]],
            "sum of Total Paid (£) by Room over the total of 230 games, TOTAL row left out (pandas): "
            + percents(takings),
            ["share"],
        ),
        ask(
            "escape_hints_and_time_zh",
            [ESCAPE],
            "要的提示越多，逃出来花的时间是不是就越长？",
            [hints_shown, says("长", "多", "正", "是的", "相关", "越")],
            f"Pearson r of Hints Used and Time Taken (mins) over the {int(out.sum())} teams that got out (no time "
            f"for the others) = {hints.statistic:.4f}, p = {hints.pvalue:.2g} (scipy)",
            ["relationship", "cross_language"],
        ),
        ask(
            "escape_hints_when_escaped",
            [ESCAPE],
            "Among the teams that did get out, how many hints did they ask for on average?",
            [mean_shown(escaped_hints.mean(), 0.006)],
            f"mean Hints Used where Escaped? == Yes, {len(escaped_hints)} games (pandas): {escaped_hints.mean():.4f}",
            ["filter"],
        ),
    ]


def honey_tasks() -> list[dict]:
    """Chinese headers, plain xlsx, harvest dates partly real date cells, partly typed, a 合计 row."""
    sheet = read(HONEY)
    assert sheet["蜂箱编号"].iloc[-1] == "合计"
    harvests = sheet[sheet["蜂箱编号"].ne("合计")].copy()
    assert len(harvests) == 147
    harvests = numbers(harvests, "蜂群强度（框）", "产蜜量（公斤）", "售价（元/公斤）")
    mites = harvests["发现蜂螨"].eq("是").groupby(harvests["蜂场"]).mean().sort_values(ascending=False)
    apart(mites, 1, 0.05)
    by_hive = harvests.groupby("蜂箱编号")["产蜜量（公斤）"].sum().sort_values(ascending=False)
    top5 = apart(by_hive, 5, 0.05)
    italian = harvests.loc[harvests["蜂种"].eq("意蜂"), "产蜜量（公斤）"]
    chinese = harvests.loc[harvests["蜂种"].eq("中蜂"), "产蜜量（公斤）"]
    welch = stats.ttest_ind(italian, chinese, equal_var=False)
    assert welch.pvalue < 0.001
    when = dates(harvests["取蜜日期"])
    assert when.notna().all()
    monthly = harvests.groupby(when.dt.month)["产蜜量（公斤）"].sum().sort_values(ascending=False)
    apart(monthly, 1, 5)
    worth = harvests["产蜜量（公斤）"] * harvests["售价（元/公斤）"]
    worth_share = (worth.groupby(harvests["蜂场"]).sum() / worth.sum()).sort_values(ascending=False)
    apart(worth_share, 1, 0.01)
    orchard = worth[harvests["蜂场"].eq("果园蜂场")]
    frames, frames_shown = relation(harvests["蜂群强度（框）"], harvests["产蜜量（公斤）"])
    assert frames.statistic > 0.2 and frames.pvalue < 0.01
    return [
        ask(
            "honey_mites_rate_by_apiary_zh",
            [HONEY],
            "每个蜂场取蜜时查出蜂螨的比例是多少？哪个蜂场最严重？",
            [headline(mites.index[0]), *[rate(v) for v in mites]],
            "share of 发现蜂螨 == 是 by 蜂场 over 147 harvests, the 合计 row left out (pandas): " + percents(mites),
            ["yes_no_rate", "compound"],
        ),
        ask(
            "honey_five_best_hives",
            [HONEY],
            "Which five hives gave us the most honey over the whole season?",
            [says_all(*top5.index), number(r(top5.iloc[0], 1), 0.05)],
            "sum of 产蜜量（公斤） by 蜂箱编号 over its harvests, highest first, the 合计 row left out (pandas): "
            + listing(by_hive.head(7), "{:.1f}"),
            ["top_n_rows", "cross_language"],
        ),
        ask(
            "honey_italian_vs_chinese_bees_zh",
            [HONEY],
            "意蜂和中蜂比，每次取蜜平均能多取多少公斤？",
            [
                either(mean_shown(italian.mean() - chinese.mean(), 0.06), mean_shown(italian.mean(), 0.06)),
                either(mean_shown(italian.mean() - chinese.mean(), 0.06), mean_shown(chinese.mean(), 0.06)),
            ],
            f"mean 产蜜量（公斤） by 蜂种 (pandas): 意蜂 {italian.mean():.4f} ({len(italian)} harvests), 中蜂 "
            f"{chinese.mean():.4f} ({len(chinese)}); gap {italian.mean() - chinese.mean():.4f}; Welch p = "
            f"{welch.pvalue:.2g} (scipy)",
            ["compare_two_groups"],
        ),
        ask(
            "honey_kilos_by_month",
            [HONEY],
            "How many kilos of honey did we take off in each month, and which month gave the most?",
            [month_words(int(monthly.index[0])), number(r(monthly.iloc[0], 1), 0.05)],
            "sum of 产蜜量（公斤） by month of 取蜜日期 (real dates, or typed 2024/6/10, 2024年9月12日, 2024.5.3), "
            "the 合计 row left out (pandas): " + listing(monthly.sort_index(), "{:.1f}"),
            ["per_month", "compound", "cross_language"],
        ),
        ask(
            "honey_income_share_by_apiary_zh",
            [HONEY],
            "按卖蜜能卖的钱算，三个蜂场各占总数的百分之多少？",
            [headline(worth_share.index[0]), *[rate(v) for v in worth_share]],
            "产蜜量（公斤） × 售价（元/公斤）, summed by 蜂场 over the total (pandas): " + percents(worth_share),
            ["share", "derived"],
        ),
        ask(
            "honey_orchard_worth",
            [HONEY],
            "Only for the orchard apiary: what was all its honey worth, at the prices we sold it for?",
            [money(float(orchard.sum()))],
            f"sum of 产蜜量（公斤） × 售价（元/公斤） where 蜂场 == 果园蜂场, {len(orchard)} harvests (pandas): "
            f"{orchard.sum():,.2f}",
            ["filter", "derived", "cross_language"],
        ),
        ask(
            "honey_colony_strength_and_yield_zh",
            [HONEY],
            "蜂群越强、框数越多，取的蜜是不是也越多？",
            [frames_shown, says("多", "正", "是的", "相关", "越")],
            f"Pearson r of 蜂群强度（框） and 产蜜量（公斤） over {len(harvests)} harvests = {frames.statistic:.4f}, "
            f"p = {frames.pvalue:.2g} (scipy)",
            ["relationship"],
        ),
    ]


def build() -> dict[str, Any]:
    KINDS.clear()
    tasks = taxi_tasks() + museum_tasks() + campsite_tasks() + language_tasks() + escape_tasks() + honey_tasks()
    return {"about": ABOUT, "tasks": tasks}


def summary(data: dict[str, Any]) -> str:
    tasks = data["tasks"]
    kinds = Counter(k for t in tasks for k in KINDS[t["id"]])
    languages = Counter(t["language"] for t in tasks)
    lines = [f"{len(tasks)} tasks; " + ", ".join(f"{k} {v}" for k, v in sorted(languages.items()))]
    lines += [f"  {k}: {v}" for k, v in sorted(kinds.items())]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "--summary" in args:
        print(summary(build()))
        args = [a for a in args if a != "--summary"]
        if not args:
            return 0
    if "--check" in args:
        stale = stale_files()
        if stale:
            print("these files differ from their generator; run data/eval/holdout11_generate.py: " + ", ".join(stale))
            return 1
        print("the h11_* spreadsheets in data/eval/files match their generator")
    return expected_main(args, make=build, out=OUT)


if __name__ == "__main__":
    sys.exit(main())
