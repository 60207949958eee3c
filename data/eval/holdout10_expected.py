"""A tenth held-out question set for `verity eval`: everyday questions of a shop owner, a teacher, a clerk.

`python data/eval/holdout10_expected.py --write` writes data/eval/holdout10.json (run
data/eval/holdout10_generate.py first for the spreadsheets, data/eval/files/h10_*); `--check` fails
when a spreadsheet differs from its generator or the task file from this computation; `--summary`
prints the counts by language, by kind and on merged headers.

Every expected value is computed here with plain pandas / scipy from the files as read back from
disk, never from a run of Verity, and the questions were written without reading the analyst's or
the understanding code (nor the tests). They are for measuring, not for tuning: do not change the
analyst to fit them, and do not diagnose them (issue 24).

Thirty-eight questions, nineteen in English and nineteen in Chinese; nineteen are asked in the other
language than the sheet's headers, eighteen are on the three workbooks with merged two-row headers.
The words of the questions are a non-expert's: they rarely repeat a column's name.
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
from holdout10_generate import (
    CARWASH,
    FEES,
    GENERATORS,
    KENNEL,
    MERGED,
    MUSIC,
    NOODLES,
    PHONES,
    SPORTS,
    file_bytes,
)

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "data" / "eval" / "holdout10.json"

ABOUT = (
    "A tenth held-out evaluation question set (issue 24): 38 everyday questions, 19 English and 19 Chinese, 19 "
    "asked in the other language than the sheet's headers, 18 on workbooks with merged two-row headers; top/bottom "
    "N rows, filters, yes/no rates per group, shares, compound questions, derived quantities, per-month totals, "
    "relationships and two groups compared, on seven generated spreadsheets of new domains (h10_*, written by "
    "data/eval/holdout10_generate.py with fixed seeds). Written without reading the analyst's or the "
    "understanding code; every expected value computed independently with pandas/scipy by "
    "data/eval/holdout10_expected.py. Sealed: score it, never diagnose it."
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
    """The files whose data differ from what holdout10_generate.py gives now."""
    return eval_files.stale_files(REPO, GENERATORS, file_bytes, MERGED)


def merged_ranges(name: str) -> list[str]:
    """The merged cells of a workbook, as openpyxl reads them (the header really is merged)."""
    return eval_files.merged_ranges(REPO / name)


DATE_FORMS = ("%Y-%m-%d", "%Y/%m/%d", "%Y年%m月%d日", "%d %b %Y")


def dates(column: pd.Series) -> pd.Series:
    """Dates as people type them: real date cells, 2024-03-05, 2024/3/5, 2024年3月5日, 5 Mar 2024."""
    return eval_files.dates(column, DATE_FORMS)


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


# --- the questions ---------------------------------------------------------------------------------
def noodle_tasks() -> list[dict]:
    """Chinese headers, merged (营业收入 over 堂食/外卖, 客流 over 新客/回头客), a 合计 row at the bottom."""
    sheet = read(NOODLES)
    assert merged_ranges(NOODLES) == ["A1:A2", "B1:B2", "C1:D1", "E1:F1", "G1:G2", "H1:H2"]
    assert sheet["门店"].iloc[-1] == "合计"
    months = sheet[sheet["门店"].ne("合计")].copy()
    assert len(months) == 60
    months["月份"] = pd.to_datetime(months["月份"])
    for column in ["堂食（元）", "外卖（元）", "新客（人）", "回头客（人）"]:
        months[column] = pd.to_numeric(months[column])
    delivery = months.groupby("门店")["外卖（元）"].sum().sort_values(ascending=False)
    apart(delivery, 1, 20000)
    dine_month = months.groupby(months["月份"].dt.month)["堂食（元）"].sum().sort_values(ascending=False)
    apart(dine_month, 1, 5000)
    promo = months["当月有无促销"].eq("是").groupby(months["门店"]).mean().sort_values(ascending=False)
    apart(promo, 1, 0.05)
    dine_share = (months.groupby("门店")["堂食（元）"].sum() / months["堂食（元）"].sum()).sort_values(ascending=False)
    apart(dine_share, 2, 0.02)
    on_promo = months["当月有无促销"].eq("是")
    back_promo = int(months.loc[on_promo, "回头客（人）"].sum())
    new_yes, new_no = months.loc[on_promo, "新客（人）"], months.loc[~on_promo, "新客（人）"]
    welch = stats.ttest_ind(new_yes, new_no, equal_var=False)
    return [
        ask(
            "noodle_most_takeaway_branch",
            [NOODLES],
            "Which of our shops made the most from takeaway orders over the whole year, and how much was that?",
            [headline(delivery.index[0]), money(delivery.iloc[0])],
            "sum of 外卖（元） (under the merged 营业收入 header) by 门店, the 合计 row left out (pandas): "
            + listing(delivery),
            ["group_total", "top_group", "compound", "merged", "cross_language"],
        ),
        ask(
            "noodle_dine_in_by_month_zh",
            [NOODLES],
            "五家店加起来，每个月店里堂吃一共收了多少钱？哪个月最多？",
            [month_words(int(dine_month.index[0])), money(dine_month.iloc[0])],
            "sum of 堂食（元） (under the merged 营业收入 header) by month of 月份, 合计 row left out (pandas): "
            + listing(dine_month.sort_index()),
            ["per_month", "compound", "merged"],
        ),
        ask(
            "noodle_promotion_rate_zh",
            [NOODLES],
            "每家店一年里搞促销的月份占几成？哪家店搞得最多？",
            [headline(promo.index[0]), *[rate(v) for v in promo.head(2)]],
            "share of the 12 months with 当月有无促销 == 是 by 门店 (pandas): "
            + ", ".join(f"{k} {pct(v)}%" for k, v in promo.items()),
            ["yes_no_rate", "compound", "merged"],
        ),
        ask(
            "noodle_dine_in_share",
            [NOODLES],
            "What slice of the year's eat-in money does each shop bring in?",
            [headline(dine_share.index[0]), *[rate(v) for v in dine_share.head(2)]],
            "sum of 堂食（元） by 门店 over the total of the 60 branch-months, 合计 row left out (pandas): "
            + ", ".join(f"{k} {pct(v)}%" for k, v in dine_share.items()),
            ["share", "merged", "cross_language"],
        ),
        ask(
            "noodle_regulars_in_promo_months",
            [NOODLES],
            "Counting only the months when a shop was running a promotion, how many regulars came back in total?",
            [number(back_promo, 0.5)],
            f"sum of 回头客（人） (under the merged 客流 header) where 当月有无促销 == 是, {int(on_promo.sum())} "
            f"branch-months (pandas): {back_promo}",
            ["filter", "merged", "cross_language"],
        ),
        ask(
            "noodle_new_faces_promo_vs_not_zh",
            [NOODLES],
            "有促销的月份跟没促销的月份比，一家店一个月平均多来多少新顾客？",
            [
                either(mean_shown(new_yes.mean() - new_no.mean(), 1.0), mean_shown(new_yes.mean(), 1.0)),
                either(mean_shown(new_yes.mean() - new_no.mean(), 1.0), mean_shown(new_no.mean(), 1.0)),
                says("多", "高", "更"),
            ],
            f"mean 新客（人） where 当月有无促销 == 是 ({len(new_yes)} branch-months) {new_yes.mean():.3f}, == 否 "
            f"({len(new_no)}) {new_no.mean():.3f}; gap {new_yes.mean() - new_no.mean():.3f}; Welch p = "
            f"{welch.pvalue:.2g} (scipy)",
            ["compare_two_groups", "merged"],
        ),
    ]


def music_tasks() -> list[dict]:
    """English headers, merged (Lessons, Fees (£), Grade Exam)."""
    pupils = read(MUSIC)
    assert merged_ranges(MUSIC) == ["A1:A2", "B1:B2", "C1:C2", "D1:D2", "E1:E2", "F1:G1", "H1:I1", "J1:K1"]
    assert len(pupils) == 110
    owed = pupils.set_index("Pupil")["Outstanding"].sort_values(ascending=False)
    owed5 = apart(owed, 5, 0)
    passed = pupils["Passed?"].eq("Y").groupby(pupils["Teacher"]).mean().sort_values(ascending=False)
    apart(passed, 1, 0.05)
    days = (pd.to_datetime(pupils["Exam Date"]) - pd.to_datetime(pupils["Joined"])).dt.days
    piano = pupils.loc[pupils["Instrument"].eq("Piano"), "Paid"]
    came, mark = relation(pupils["Attended"], pupils["Mark (out of 150)"])
    assert came.statistic > 0.3 and came.pvalue < 1e-4
    lowest = pupils.set_index("Pupil")["Mark (out of 150)"].sort_values()
    low3 = apart(lowest, 3, 0)
    return [
        ask(
            "music_five_biggest_debts",
            [MUSIC],
            "Which five pupils still owe us the most money?",
            [says_all(*owed5.index), number(float(owed5.iloc[0]), 0.5)],
            "Outstanding (under the merged Fees (£) header) by Pupil, highest first (pandas): "
            + listing(owed.head(7), "{:g}"),
            ["top_n_rows", "merged"],
        ),
        ask(
            "music_pass_rate_by_teacher_zh",
            [MUSIC],
            "每个老师教的学生，考级过了的占多少？哪个老师的学生过得最多？",
            [headline(passed.index[0]), *[rate(v) for v in passed.head(2)]],
            "share of Passed? == Y (under the merged Grade Exam header) by Teacher (pandas): "
            + ", ".join(f"{k} {pct(v)}%" for k, v in passed.items()),
            ["yes_no_rate", "compound", "merged", "cross_language"],
        ),
        ask(
            "music_days_join_to_exam",
            [MUSIC],
            "On average, how long is it in days from a pupil starting with us to sitting their exam?",
            [mean_shown(days.mean(), 0.6)],
            f"mean of Exam Date - Joined in days over {len(pupils)} pupils (pandas): {days.mean():.4f} "
            f"(median {days.median():g})",
            ["derived", "merged"],
        ),
        ask(
            "music_piano_fees_paid_zh",
            [MUSIC],
            "只看学钢琴的孩子，学费一共已经收了多少？",
            [money(float(piano.sum()))],
            f"sum of Paid (under the merged Fees (£) header) where Instrument == Piano, {len(piano)} pupils (pandas): "
            f"{piano.sum():,.0f}",
            ["filter", "merged", "cross_language"],
        ),
        ask(
            "music_lessons_and_marks",
            [MUSIC],
            "Do the kids who turn up to more lessons get better results in their exam?",
            [mark, says("more", "higher", "better", "positive", "increase", "yes", "Yes", "tend")],
            f"Pearson r of Attended (Lessons) and Mark (out of 150) (Grade Exam) over {len(pupils)} pupils = "
            f"{came.statistic:.4f}, p = {came.pvalue:.2g} (scipy)",
            ["relationship", "merged"],
        ),
        ask(
            "music_three_lowest_marks_zh",
            [MUSIC],
            "考试分数最低的三个学生是谁？",
            [says_all(*low3.index), number(float(low3.iloc[0]), 0.5)],
            "Mark (out of 150) by Pupil, lowest first (pandas): " + listing(lowest.head(5), "{:g}"),
            ["top_n_rows", "merged", "cross_language"],
        ),
    ]


def sports_tasks() -> list[dict]:
    """Chinese headers, merged (成绩 over the three events), a row of averages (平均) at the bottom."""
    sheet = read(SPORTS)
    assert merged_ranges(SPORTS) == ["A1:A2", "B1:B2", "C1:C2", "D1:F1", "G1:G2"]
    assert sheet["班级"].iloc[-1] == "平均"
    kids = sheet[sheet["班级"].ne("平均")].copy()
    assert len(kids) == 150
    fastest = kids.set_index("姓名")["50米跑（秒）"].astype(float).sort_values()
    fast5 = apart(fastest, 5, 0)
    fit = kids["体测达标"].eq("是").groupby(kids["班级"]).mean().sort_values()
    apart(fit, 1, 0.05)
    jump = kids.groupby("性别")["跳远（米）"].mean()
    welch = stats.ttest_ind(
        kids.loc[kids["性别"].eq("男"), "跳远（米）"], kids.loc[kids["性别"].eq("女"), "跳远（米）"], equal_var=False
    )
    boys3 = kids.loc[kids["班级"].eq("初二3班") & kids["性别"].eq("男"), "一分钟跳绳（个）"].astype(float)
    run, run_shown = relation(kids["跳远（米）"], kids["50米跑（秒）"])
    assert run.statistic < -0.3 and run.pvalue < 1e-4
    skips = int((kids["一分钟跳绳（个）"].astype(float) >= 150).sum())
    return [
        ask(
            "sports_five_fastest_sprinters",
            [SPORTS],
            "Who were the five quickest kids in the 50 metre sprint?",
            [says_all(*fast5.index), number(float(fast5.iloc[0]), 0.005)],
            "50米跑（秒） (under the merged 成绩 header) by 姓名, shortest first, 平均 row left out (pandas): "
            + listing(fastest.head(7)),
            ["top_n_rows", "merged", "cross_language"],
        ),
        ask(
            "sports_fitness_pass_by_class_zh",
            [SPORTS],
            "每个班体测合格的学生占多少？哪个班最差？",
            [headline(fit.index[0]), *[rate(v) for v in fit.head(2)]],
            "share of 体测达标 == 是 by 班级, 平均 row left out (pandas): "
            + ", ".join(f"{k} {pct(v)}%" for k, v in fit.items()),
            ["yes_no_rate", "compound", "merged"],
        ),
        ask(
            "sports_boys_girls_long_jump",
            [SPORTS],
            "Do the boys jump further than the girls in the long jump, and by how much on average?",
            [
                either(mean_shown(jump["男"] - jump["女"], 0.011), mean_shown(jump["男"], 0.011)),
                either(mean_shown(jump["男"] - jump["女"], 0.011), mean_shown(jump["女"], 0.011)),
                says("further", "farther", "longer", "more", "higher", "yes", "Yes"),
            ],
            f"mean 跳远（米） by 性别 (pandas): 男 {jump['男']:.4f}, 女 {jump['女']:.4f}, gap "
            f"{jump['男'] - jump['女']:.4f}; Welch p = {welch.pvalue:.2g} (scipy)",
            ["compare_two_groups", "compound", "merged", "cross_language"],
        ),
        ask(
            "sports_class3_boys_skipping_zh",
            [SPORTS],
            "只看初二3班的男生，一分钟跳绳平均能跳多少下？",
            [mean_shown(boys3.mean(), 0.06)],
            f"mean 一分钟跳绳（个） where 班级 == 初二3班 and 性别 == 男, {len(boys3)} pupils (pandas): {boys3.mean():.4f}",
            ["filter", "merged"],
        ),
        ask(
            "sports_jump_and_sprint_zh",
            [SPORTS],
            "跳远跳得远的孩子，是不是短跑也跑得快？",
            [run_shown, says("负", "快", "越远", "越短", "越少", "是的", "相关")],
            f"Pearson r of 跳远（米） and 50米跑（秒） over {len(kids)} pupils = {run.statistic:.4f}, p = "
            f"{run.pvalue:.2g} (scipy); a shorter time is a faster run",
            ["relationship", "merged"],
        ),
        ask(
            "sports_skip_150_or_more",
            [SPORTS],
            "How many children managed 150 skips or more in the one-minute rope skipping?",
            [number(skips, 0.5)],
            f"count of pupils with 一分钟跳绳（个） >= 150, 平均 row left out (pandas): {skips} of {len(kids)}",
            ["filter", "merged", "cross_language"],
        ),
    ]


def fee_tasks() -> list[dict]:
    """Chinese headers, csv, blank rows between buildings, payment dates typed three ways."""
    flats = read(FEES)
    assert len(flats) == 180
    on_time = flats["是否按时缴纳"].eq("是").groupby(flats["楼栋"]).mean().sort_values()
    apart(on_time, 1, 0.05)
    per_sqm = (
        (flats["全年应缴（元）"] / flats["建筑面积（㎡）"] / 12).groupby(flats["楼栋"]).agg(["mean", "min", "max"])
    )
    assert (per_sqm["max"] - per_sqm["min"]).max() < 0.01  # one rate per building: a clear answer
    per_sqm = per_sqm["mean"].sort_values(ascending=False)
    apart(per_sqm, 1, 0.2)
    paid_on = dates(flats["缴费日期"])
    assert paid_on.notna().sum() == flats["已缴（元）"].gt(0).sum()
    monthly = flats.groupby(paid_on.dt.month.astype("Int64"))["已缴（元）"].sum().sort_values(ascending=False)
    apart(monthly, 1, 2000)
    owing = (flats["全年应缴（元）"] - flats["已缴（元）"]).round(2)
    owing.index = flats["房号"]
    assert flats["房号"].is_unique
    owing = owing.sort_values(ascending=False)
    owe3 = apart(owing, 3, 1)
    collected = (flats.groupby("楼栋")["已缴（元）"].sum() / flats["已缴（元）"].sum()).sort_values(ascending=False)
    apart(collected, 1, 0.01)
    return [
        ask(
            "fees_on_time_by_building",
            [FEES],
            "For each block, what share of households paid their fee on time? Which block is the worst?",
            [headline(on_time.index[0]), *[rate(v) for v in on_time.head(2)]],
            "share of 是否按时缴纳 == 是 by 楼栋 over 180 flats, blank rows left out (pandas): "
            + ", ".join(f"{k} {pct(v)}%" for k, v in on_time.items()),
            ["yes_no_rate", "compound", "cross_language"],
        ),
        ask(
            "fees_dearest_per_square_metre_zh",
            [FEES],
            "哪栋楼的物业费单价最贵？一平米一个月要交多少钱？",
            [headline(per_sqm.index[0]), number(r(per_sqm.iloc[0], 2), 0.011)],
            "全年应缴（元） / 建筑面积（㎡） / 12 by 楼栋 (the same for every flat of a building) (pandas): "
            + listing(per_sqm, "{:.3f}"),
            ["derived", "per_unit", "compound"],
        ),
        ask(
            "fees_collected_by_month_zh",
            [FEES],
            "每个月实际收上来多少物业费？哪个月收得最多？",
            [month_words(int(monthly.index[0])), money(monthly.iloc[0])],
            "sum of 已缴（元） by month of 缴费日期 (typed 2024/3/5, 2024-03-05 or 2024年3月5日) (pandas): "
            + listing(monthly.sort_index()),
            ["per_month", "compound"],
        ),
        ask(
            "fees_three_biggest_arrears",
            [FEES],
            "Which three flats still owe us the most, and how much does each owe?",
            [says_all(*owe3.index), *[money(v) for v in owe3]],
            "全年应缴（元） - 已缴（元） by 房号, highest first (pandas): " + listing(owing.head(5)),
            ["top_n_rows", "derived", "compound", "cross_language"],
        ),
        ask(
            "fees_share_collected_by_building",
            [FEES],
            "Of all the money we've actually collected, what percentage came from each block?",
            [headline(collected.index[0]), *[rate(v) for v in collected.head(2)]],
            "sum of 已缴（元） by 楼栋 over the total collected (pandas): "
            + ", ".join(f"{k} {pct(v)}%" for k, v in collected.items()),
            ["share", "cross_language"],
        ),
    ]


def carwash_tasks() -> list[dict]:
    """English headers, csv, dates typed two ways, a TOTAL row at the bottom."""
    sheet = read(CARWASH)
    assert sheet["Date"].iloc[-1] == "TOTAL"
    washes = sheet[sheet["Date"].ne("TOTAL")].copy()
    assert len(washes) == 240
    washes["Date"] = dates(washes["Date"])
    assert washes["Date"].notna().all()
    monthly = washes.groupby(washes["Date"].dt.month)["Price (£)"].sum().sort_values()
    apart(monthly, 1, 20)
    loyal = washes["Loyalty Card"].eq("Y").groupby(washes["Site"]).mean().sort_values(ascending=False)
    dear = washes.loc[washes["Price (£)"] > 20, "Tip (£)"]
    rain, dry = washes.loc[washes["Raining"].eq("Y"), "Tip (£)"], washes.loc[washes["Raining"].eq("N"), "Tip (£)"]
    welch = stats.ttest_ind(rain, dry, equal_var=False)
    assert welch.pvalue < 0.001
    takings = (washes.groupby("Wash Type")["Price (£)"].sum() / washes["Price (£)"].sum()).sort_values(ascending=False)
    apart(takings, 1, 0.02)
    return [
        ask(
            "carwash_takings_by_month_zh",
            [CARWASH],
            "每个月洗车一共收了多少钱？哪个月收得最少？",
            [month_words(int(monthly.index[0])), money(monthly.iloc[0])],
            "sum of Price (£) by month of Date (typed 2024-03-14 or 14 Mar 2024), TOTAL row left out (pandas): "
            + listing(monthly.sort_index()),
            ["per_month", "compound", "cross_language"],
        ),
        ask(
            "carwash_loyalty_by_site",
            [CARWASH],
            "At each of our sites, what percentage of customers have one of our loyalty cards?",
            [headline(loyal.index[0]), *[rate(v) for v in loyal]],
            "share of Loyalty Card == Y by Site over 240 washes (pandas): "
            + ", ".join(f"{k} {pct(v)}%" for k, v in loyal.items()),
            ["yes_no_rate"],
        ),
        ask(
            "carwash_tips_on_dear_washes_zh",
            [CARWASH],
            "价格在20镑以上的那些单子，平均一单能拿多少小费？",
            [mean_shown(dear.mean(), 0.006)],
            f"mean Tip (£) where Price (£) > 20 (only the Valet washes, £35), {len(dear)} washes (pandas): "
            f"{dear.mean():.4f}",
            ["filter", "cross_language"],
        ),
        ask(
            "carwash_tips_rain_or_dry",
            [CARWASH],
            "Do people tip more when it's wet than when it's dry?",
            [
                either(mean_shown(rain.mean() - dry.mean(), 0.006), mean_shown(rain.mean(), 0.006)),
                either(mean_shown(rain.mean() - dry.mean(), 0.006), mean_shown(dry.mean(), 0.006)),
                says("more", "higher", "bigger", "yes", "Yes", "larger"),
            ],
            f"mean Tip (£) by Raining (pandas): Y {rain.mean():.4f} ({len(rain)} washes), N {dry.mean():.4f} "
            f"({len(dry)}); gap {rain.mean() - dry.mean():.4f}; Welch p = {welch.pvalue:.2g} (scipy)",
            ["compare_two_groups"],
        ),
        ask(
            "carwash_share_by_wash_zh",
            [CARWASH],
            "几种洗车服务，各自的收入占总收入的百分之多少？",
            [headline(takings.index[0]), *[rate(v) for v in takings]],
            "sum of Price (£) by Wash Type over the total of 240 washes, TOTAL row left out (pandas): "
            + ", ".join(f"{k} {pct(v)}%" for k, v in takings.items()),
            ["share", "cross_language"],
        ),
    ]


def kennel_tasks() -> list[dict]:
    """English headers, xlsx, a blank row, check-in/out dates partly real dates, partly text."""
    stays = read(KENNEL)
    assert len(stays) == 120
    nights = (dates(stays["Check-out"]) - dates(stays["Check-in"])).dt.days
    assert (nights > 0).all()
    by_size = nights.groupby(stays["Size"]).mean()
    welch = stats.ttest_ind(nights[stays["Size"].eq("Large")], nights[stays["Size"].eq("Small")], equal_var=False)
    repeat = stays["Been Before?"].eq("Yes").groupby(stays["Size"]).mean().sort_values(ascending=False)
    bills = stays.set_index("Booking")["Bill (£)"].astype(float).sort_values(ascending=False)
    top4 = apart(bills, 4, 0)
    return [
        ask(
            "kennel_average_nights_zh",
            [KENNEL],
            "狗狗平均每次在我们这儿住几个晚上？",
            [mean_shown(nights.mean(), 0.06)],
            f"mean of Check-out - Check-in in days (dates partly typed as text) over {len(stays)} stays, the blank "
            f"row left out (pandas): {nights.mean():.4f}",
            ["derived", "cross_language"],
        ),
        ask(
            "kennel_large_vs_small_nights",
            [KENNEL],
            "Do the big dogs stay longer than the little ones? How many nights does each usually stay on average?",
            [
                mean_shown(by_size["Large"], 0.06),
                mean_shown(by_size["Small"], 0.06),
                says("longer", "more", "yes", "Yes"),
            ],
            f"mean of Check-out - Check-in in days by Size (pandas): {listing(by_size, '{:.4f}')}; Large vs Small "
            f"Welch p = {welch.pvalue:.2g} (scipy)",
            ["derived", "compare_two_groups", "compound"],
        ),
        ask(
            "kennel_returning_by_size_zh",
            [KENNEL],
            "大狗、中型狗、小狗里面，以前来住过的老客户各占多少比例？",
            [*[rate(v) for v in repeat]],
            "share of Been Before? == Yes by Size (pandas): " + ", ".join(f"{k} {pct(v)}%" for k, v in repeat.items()),
            ["yes_no_rate", "cross_language"],
        ),
        ask(
            "kennel_four_biggest_bills",
            [KENNEL],
            "Which four bookings brought in the most money?",
            [says_all(*top4.index), money(top4.iloc[0])],
            "Bill (£) by Booking, highest first (pandas): " + listing(bills.head(6)),
            ["top_n_rows"],
        ),
        ask(
            "kennel_count_and_takings",
            [KENNEL],
            "How many stays did we have this year, and how much did they bring in altogether?",
            [number(len(stays), 0.5), money(float(stays["Bill (£)"].sum()))],
            f"count of bookings (the blank row left out) {len(stays)}; sum of Bill (£) {stays['Bill (£)'].sum():,.2f} (pandas)",
            ["compound"],
        ),
    ]


def phone_tasks() -> list[dict]:
    """Chinese headers, csv, unsold phones without a selling price, a Y/N column."""
    phones = read(PHONES)
    assert len(phones) == 180
    sold = phones[phones["已售出(Y/N)"].eq("Y")]
    assert sold["售价（元）"].notna().all() and phones.loc[phones["已售出(Y/N)"].eq("N"), "售价（元）"].isna().all()
    profit = (sold["售价（元）"] - sold["回收价（元）"]).groupby(sold["品牌"]).mean().sort_values(ascending=False)
    apart(profit, 1, 50)
    sell_rate = phones["已售出(Y/N)"].eq("Y").groupby(phones["品牌"]).mean().sort_values(ascending=False)
    bought = phones.set_index("单号")["回收价（元）"].sort_values(ascending=False)
    top5 = apart(bought, 5, 0)
    link, link_shown = relation(sold["回收价（元）"], sold["售价（元）"])
    assert link.statistic > 0.8
    shop = phones.groupby("门店")["回收价（元）"].mean()
    welch = stats.ttest_ind(
        phones.loc[phones["门店"].eq("城东店"), "回收价（元）"],
        phones.loc[phones["门店"].eq("城西店"), "回收价（元）"],
        equal_var=False,
    )
    higher = shop.idxmax()
    return [
        ask(
            "phones_profit_per_sold_phone_by_brand",
            [PHONES],
            "Looking just at the phones we've sold, how much do we make on each one on average for each brand? "
            "Which brand earns us the most?",
            [headline(profit.index[0]), mean_shown(profit.iloc[0], 0.6), mean_shown(profit.iloc[1], 0.6)],
            f"mean of 售价（元） - 回收价（元） where 已售出(Y/N) == Y ({len(sold)} phones) by 品牌 (pandas): "
            + listing(profit),
            ["derived", "filter", "compound", "cross_language"],
        ),
        ask(
            "phones_sell_through_by_brand_zh",
            [PHONES],
            "每个牌子收进来的手机，卖掉了的占多少？",
            [*[rate(v) for v in sell_rate]],
            "share of 已售出(Y/N) == Y by 品牌 (pandas): " + ", ".join(f"{k} {pct(v)}%" for k, v in sell_rate.items()),
            ["yes_no_rate"],
        ),
        ask(
            "phones_five_dearest_buys_zh",
            [PHONES],
            "收的时候花钱最多的五台手机是哪几单？",
            [says_all(*top5.index), money(top5.iloc[0])],
            "回收价（元） by 单号, highest first (pandas): " + listing(bought.head(7), "{:,.0f}"),
            ["top_n_rows"],
        ),
        ask(
            "phones_buy_price_and_sale_price",
            [PHONES],
            "Do the phones we pay more for also sell for more?",
            [link_shown, says("more", "higher", "positive", "strong", "yes", "Yes", "increase")],
            f"Pearson r of 回收价（元） and 售价（元） over the {len(sold)} sold phones = {link.statistic:.4f}, p = "
            f"{link.pvalue:.2g} (scipy)",
            ["relationship", "cross_language"],
        ),
        ask(
            "phones_east_vs_west_buy_price_zh",
            [PHONES],
            "城东店和城西店比，平均收一台手机谁花得多？多多少？",
            [
                headline(higher),
                either(mean_shown(shop.max() - shop.min(), 0.6), mean_shown(shop.max(), 0.6)),
                either(mean_shown(shop.max() - shop.min(), 0.6), mean_shown(shop.min(), 0.6)),
            ],
            f"mean 回收价（元） by 门店 (pandas): {listing(shop)}; gap {shop.max() - shop.min():.2f}; Welch p = "
            f"{welch.pvalue:.2g} (scipy)",
            ["compare_two_groups", "compound"],
        ),
    ]


def build() -> dict[str, Any]:
    KINDS.clear()
    tasks = (
        noodle_tasks() + music_tasks() + sports_tasks() + fee_tasks() + carwash_tasks() + kennel_tasks() + phone_tasks()
    )
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
            print("these files differ from their generator; run data/eval/holdout10_generate.py: " + ", ".join(stale))
            return 1
        print("the h10_* spreadsheets in data/eval/files match their generator")
    return expected_main(args, make=build, out=OUT)


if __name__ == "__main__":
    sys.exit(main())
