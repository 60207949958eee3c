"""Each calendar period's figure (issue 24): "How much did we make each month?", "按月看销售额", "每周的
订单数", "monthly revenue by shop" list each period's total (a count of the rows when no measure is named
and the question counts) in time order, months as people write them, with the highest, the lowest and the
change from the first to the last; and the reading says so ("the total Sales (£) of each month").

The questions were written for these tests on a small generated table of dated sales rows; every
expected figure is computed here with pandas, never read from Verity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis_tools.common import fmt_num
from app.analyst.period_totals import asks_per_period
from tests.factories import SAMPLES
from tests.test_builtin_understanding import Session, call, headline

pytestmark = pytest.mark.slow

EN = ["Shop", "Date", "Item", "Qty", "Sales (£)"]
ZH = ["门店", "日期", "商品", "数量", "销售额"]


def sales(zh: bool = False) -> pd.DataFrame:
    """150 sales over ten months of 2024 at three shops: a shop, a date, an item, a quantity, the money."""
    rng = np.random.default_rng(7)
    n = 150
    frame = pd.DataFrame(
        {
            "Shop": rng.choice(["North", "South", "East"], n),
            "Date": pd.Timestamp("2024-01-01") + pd.to_timedelta(np.sort(rng.integers(0, 300, n)), unit="D"),
            "Item": rng.choice(["Tea", "Cake", "Bread"], n),
            "Qty": rng.integers(1, 6, n),
            "Sales (£)": rng.gamma(2.0, 20.0, n).round(2),
        }
    )
    if zh:
        frame.columns = ZH
    return frame


def ask(tmp_path: Path, frame: pd.DataFrame, name: str, question: str):
    path = tmp_path / "data" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return Session(tmp_path, path).ask(question)


def said(period: pd.Period, freq: str, zh: bool) -> str:
    """A period as the answer writes it: a month or a quarter as people do ("Mar 2024", "2024年3月", "Q1 2024",
    "2024年第1季度"), else the tool's label."""
    if freq == "M":
        return f"{period.year}年{period.month}月" if zh else period.strftime("%b %Y")
    if freq == "Q":
        return f"{period.year}年第{period.quarter}季度" if zh else f"Q{period.quarter} {period.year}"
    return str(period.year)


def in_order(text: str, labels: list[str]) -> bool:
    at = [text.find(label) for label in labels]
    return all(a >= 0 for a in at) and at == sorted(at)


@pytest.mark.parametrize(
    ("sheet_zh", "question", "freq"),
    [
        (False, "How much did we make each month?", "M"),
        (False, "What were total sales per quarter?", "Q"),
        (False, "Show the Sales (£) by month", "M"),
        (True, "每个月卖了多少钱？", "M"),
        (True, "按月看销售额", "M"),
        (True, "每个季度的销售额合计是多少？", "Q"),
        (True, "What was the total 销售额 each month?", "M"),
        (True, "每月销售额", "M"),
    ],
)
def test_each_periods_total_is_listed_in_time_order(tmp_path, sheet_zh, question, freq):
    frame = sales(sheet_zh)
    date, money = ("日期", "销售额") if sheet_zh else ("Date", "Sales (£)")
    zh = sheet_zh  # an English question on Chinese headers is answered in the sheet's language, as in test 24
    run, calls = ask(tmp_path, frame, "销售.csv" if sheet_zh else "sales.csv", question)
    made = call(calls, "derive_column")
    assert made.arguments["part"] == ("year_month" if freq == "M" else "quarter")
    totals = call(calls, "group_aggregate")
    assert totals.arguments["agg"] == "sum" and totals.arguments["value_columns"] == [money]
    assert totals.arguments["dataset"] == made.arguments["output"]
    per_period = frame.groupby(frame[date].dt.to_period(freq))[money].sum()
    text = headline(run)
    labels = [said(p, freq, zh) for p in per_period.index]
    assert in_order(text, [f"{label} {fmt_num(v)}" for label, v in zip(labels, per_period)])
    high, low = per_period.idxmax(), per_period.idxmin()
    if zh:
        assert f"最高是 {said(high, freq, zh)}（{fmt_num(per_period.max())}）" in text
        assert f"最低是 {said(low, freq, zh)}（{fmt_num(per_period.min())}）" in text
    else:
        assert f"Highest: {said(high, freq, zh)} ({fmt_num(per_period.max())})" in text
        assert f"lowest: {said(low, freq, zh)} ({fmt_num(per_period.min())})" in text
    change = (per_period.iloc[-1] - per_period.iloc[0]) / per_period.iloc[0]
    assert f"{change:+.1%}" in text
    unit = "month" if freq == "M" else "quarter"
    reading = run.answer.split("\n")[0]
    if zh:
        assert reading == f"理解为：{'每个月' if freq == 'M' else '每个季度'}的 {money} 合计。"
    else:
        assert reading == f"Read as: the total {money} of each {unit}."
    assert not any(c.tool in ("compare_groups", "time_series_trend", "seasonal_decompose") for c in calls)


@pytest.mark.parametrize(
    ("question", "agg"),
    [
        ("How much did we charge each month?", "sum"),
        ("What was the total Price ($) each month?", "sum"),
        ("What was the Price ($) each month?", "mean"),
    ],
)
def test_a_price_charged_adds_up_when_the_question_asks_how_much_was_done(tmp_path, question, agg):
    """Each job's Price ($) is a level by its name (a price is averaged over a month), but "how much did we charge
    each month" asks how much was done, and "total" says so: each month's sum then (it was each month's average,
    whatever the question said). Asked of the price itself, the month's average stays."""
    rng = np.random.default_rng(3)
    n = 90
    jobs = pd.DataFrame(
        {
            "Date": pd.Timestamp("2024-01-01") + pd.to_timedelta(np.sort(rng.integers(0, 180, n)), unit="D"),
            "Team": rng.choice(["Red", "Blue"], n),
            "Price ($)": rng.uniform(30, 200, n).round(2),
        }
    )
    run, calls = ask(tmp_path, jobs, "jobs.csv", question)
    totals = call(calls, "group_aggregate")
    assert totals.arguments["agg"] == agg and totals.arguments["value_columns"] == ["Price ($)"]
    per_month = jobs.groupby(jobs["Date"].dt.to_period("M"))["Price ($)"].agg(agg)
    text = headline(run)
    assert in_order(text, [f"{said(p, 'M', False)} {fmt_num(v)}" for p, v in per_month.items()]), text


@pytest.mark.parametrize(
    ("sheet_zh", "question"),
    [(True, "每周的订单数"), (False, "How many orders came in each week?")],
)
def test_a_count_per_week_when_no_measure_is_named(tmp_path, sheet_zh, question):
    frame = sales(sheet_zh)
    date = "日期" if sheet_zh else "Date"
    run, calls = ask(tmp_path, frame, "销售.csv" if sheet_zh else "sales.csv", question)
    made = call(calls, "derive_column")
    totals = call(calls, "group_aggregate")
    assert made.arguments["part"] == "week" and not totals.arguments.get("value_columns")
    weeks = frame.groupby(frame[date].dt.strftime("%G-W%V")).size()
    assert totals.metrics["n_groups"] == len(weeks)
    largest = weeks.sort_values(ascending=False, kind="stable").head(20)
    assert all(totals.metrics[f"n_rows.{week}"] == count for week, count in largest.items())
    assert all(f"{week} {count}" in headline(run) for week, count in largest.items())


@pytest.mark.parametrize(
    ("sheet_zh", "question"),
    [(False, "monthly revenue by shop"), (True, "各门店每个月的销售额")],
)
def test_each_groups_monthly_totals_with_a_grouping(tmp_path, sheet_zh, question):
    frame = sales(sheet_zh)
    date, money, shop = ("日期", "销售额", "门店") if sheet_zh else ("Date", "Sales (£)", "Shop")
    run, calls = ask(tmp_path, frame, "销售.csv" if sheet_zh else "sales.csv", question)
    totals = call(calls, "group_aggregate")
    month = call(calls, "derive_column").arguments["new_column_name"]
    assert totals.arguments["group_columns"] == [month, shop] and totals.arguments["agg"] == "sum"
    table = frame.groupby([frame[date].dt.strftime("%Y-%m"), shop])[money].sum()
    largest = table.sort_values(ascending=False).head(20)
    for (when, where), value in largest.items():
        assert totals.metrics[f"{money}_sum.{when} | {where}"] == pytest.approx(value)
    reading = run.answer.split("\n")[0]
    assert shop in reading and money in reading


@pytest.mark.parametrize(
    "question",
    [
        "Which month had the highest Sales (£)?",  # a superlative: the period ranked (time_steps.period_steps)
        "What is the monthly trend of sales?",  # a trend
        "每月销售额的变化趋势",
        "What share of sales does each shop bring in each month?",  # a share
        "What is the average Sales (£)?",  # no period
    ],
)
def test_the_neighbouring_questions_are_not_period_totals(question):
    assert asks_per_period(question) == ""


@pytest.mark.parametrize(
    ("zh", "question", "reading"),
    [
        (False, "Which month had the highest Sales (£)?", "Read as: the month with the highest total Sales (£)."),
        (True, "哪个月的销售额最低？", "理解为：按月比较 销售额 的合计，取最低的月份。"),
    ],
)
def test_the_reading_of_the_period_ranked(tmp_path, zh, question, reading):
    run, calls = ask(tmp_path, sales(zh), "销售.csv" if zh else "sales.csv", question)
    assert call(calls, "rank_values").arguments["group_column"]
    assert run.answer.split("\n")[0] == reading


@pytest.mark.parametrize("question", ["2022年哪个月的营业额最高？", "Which month of 2022 had the highest revenue?"])
def test_the_period_ranked_within_a_year_keeps_that_years_rows(tmp_path, question):
    """The months ranked are the asked year's: the date range on the column the months are made from
    keeps rows, it does not name a group (it was dropped: "2024年7月" answered a question about 2022)."""
    book = SAMPLES / "monthly_operations.xlsx"
    frame = pd.read_excel(book)
    in_2022 = frame[frame["月份"].dt.year == 2022]
    totals = in_2022.groupby(in_2022["月份"].dt.to_period("M"))["营业额"].sum()
    best = totals.idxmax()
    run, calls = Session(tmp_path, book).ask(question)
    assert call(calls, "filter_rows").arguments["conditions"][0]["column"] == "月份"
    said = f"{best.year}年{best.month}月" if not question.isascii() else best.strftime("%b %Y")
    assert said in headline(run) and fmt_num(totals.max()) in headline(run), headline(run)


def test_the_months_ahead_are_a_forecast_not_each_past_months_figure(tmp_path):
    """ "接下来6个月每个月的…" asks for the months ahead: a forecast of the table's one number, not the
    rows (or totals) of each month already there."""
    assert asks_per_period("预测接下来6个月每个月的游客人数") == ""
    assert asks_per_period("forecast each month's visitors for the next 6 months") == ""
    assert asks_per_period("每个月的游客人数是多少") != ""
    rng = np.random.default_rng(5)
    t = np.arange(60)
    frame = pd.DataFrame(
        {
            "date": pd.date_range("2019-01-01", periods=60, freq="MS").strftime("%Y-%m-%d"),
            "value": (1000 + 5 * t + 150 * np.sin(2 * np.pi * t / 12) + rng.normal(0, 30, 60)).round(0),
        }
    )
    path = tmp_path / "visitors.csv"
    frame.to_csv(path, index=False)
    _, calls = Session(tmp_path, path).ask("预测接下来6个月每个月的游客人数", ["继续"])
    step = call(calls, "forecast")
    assert step.arguments["value_column"] == "value" and step.arguments["horizon"] == 6
    assert step.metrics["last_actual"] == pytest.approx(float(frame["value"].iloc[-1]))
    assert not any(c.tool == "group_aggregate" for c in calls)
