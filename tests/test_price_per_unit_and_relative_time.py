"""A price per thing counted, done as a data step and answered (issue 24: "每件卖多少钱", "revenue per unit
sold by store": each group's total over its total, or the whole table's), and relative time as a date filter
counted from the data's last date ("去年", "上个月", "last quarter"). The workbooks are made here; every
expected figure is computed with pandas from them, never read from Verity's output.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis_tools import run_tool
from analysis_tools.common import fmt_num
from app.analyst.plan import plan_analysis
from app.analyst.time_steps import time_filter
from app.understanding.bilingual import is_classifier, names_a_quantity
from app.understanding.named_months import relative_period
from tests.test_builtin_designs import seen
from tests.test_builtin_understanding import Session, call


def sales_frame() -> pd.DataFrame:
    """Two years of a shop chain's sales every third day: units sold and revenue, each store its own price."""
    rng = np.random.default_rng(11)
    dates = pd.date_range("2023-01-02", "2024-12-29", freq="3D")
    n = len(dates)
    stores = np.array(["北京店", "上海店", "广州店"])[rng.integers(0, 3, n)]
    units = rng.integers(1, 40, n)
    price = np.select([stores == "北京店", stores == "上海店"], [50, 40], 30) + rng.integers(-5, 5, n)
    return pd.DataFrame({"日期": dates, "门店": stores, "销量": units, "销售额": units * price})


def english(frame: pd.DataFrame) -> pd.DataFrame:
    renamed = frame.rename(columns={"日期": "Date", "门店": "Store", "销量": "Units", "销售额": "Revenue"})
    renamed["Store"] = renamed["Store"].map({"北京店": "Beijing", "上海店": "Shanghai", "广州店": "Guangzhou"})
    return renamed


@pytest.fixture(scope="module")
def books(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("sales")
    frame = sales_frame()
    paths = {"zh": folder / "门店销售.xlsx", "en": folder / "store_sales.xlsx"}
    frame.to_excel(paths["zh"], index=False)
    english(frame).to_excel(paths["en"], index=False)
    return paths


def bold_lines(answer: str) -> list[str]:
    return [line for line in answer.split("\n") if line.startswith("**") and line.endswith("**")]


def ratio(frame: pd.DataFrame, top: str, bottom: str, group: str | None = None):
    if group is None:
        return frame[top].sum() / frame[bottom].sum()
    sums = frame.groupby(group)[[top, bottom]].sum()
    return (sums[top] / sums[bottom]).sort_values(ascending=False)


# --- the words: a measure word, a name that counts, a period relative to now ---------------------------
def test_measure_words_and_names_that_count():
    assert all(is_classifier(c) for c in "件个瓶箱")
    assert not any(is_classifier(c) for c in "店钱")
    assert all(names_a_quantity(n) for n in ("销量", "件数", "数量", "Units", "Quantity"))
    assert not any(names_a_quantity(n) for n in ("销售额", "营业额", "金额", "Revenue", "门店"))


@pytest.mark.parametrize(
    ("question", "back", "unit"),
    [
        ("去年哪个门店的销售额最高？", 1, "Y"),
        ("今年卖了多少", 0, "Y"),
        ("前年的销量", 2, "Y"),
        ("上个月各门店的销售额", 1, "M"),
        ("本月的销量", 0, "M"),
        ("上季度的销售额", 1, "Q"),
        ("Which store sold the most last year?", 1, "Y"),
        ("revenue this year", 0, "Y"),
        ("How much did we sell last month?", 1, "M"),
        ("revenue by store last quarter", 1, "Q"),
    ],
)
def test_relative_periods_are_read(question, back, unit):
    period = relative_period(question)
    assert period is not None and (period.back, period.unit) == (back, unit)


@pytest.mark.parametrize(
    "question", ["每月的销量", "上半年的销售额", "the last 3 months", "每年哪个月最多", "2023年的销量"]
)
def test_no_relative_period(question):
    assert relative_period(question) is None


# --- relative time as the dates' filter, counted from the data's last date ----------------------------------
DATES = [{"name": "日期", "type": "datetime", "first": "2023-01-02", "last": "2024-12-29"}]


@pytest.mark.parametrize(
    ("question", "value"),
    [
        ("去年的销售额", ["2023-01-01", "2023-12-31"]),
        ("今年的销售额", ["2024-01-01", "2024-12-31"]),
        ("上个月的销售额", ["2024-11", "2024-11"]),
        ("本月的销售额", ["2024-12", "2024-12"]),
        ("上季度的销售额", ["2024-07", "2024-09"]),
        ("去年3月的销售额", ["2023-03", "2023-03"]),
        ("revenue last quarter", ["2024-07", "2024-09"]),
    ],
)
def test_relative_time_filters_the_dates(question, value):
    assert time_filter(question, DATES) == [{"column": "日期", "op": "between", "value": value}]


def test_a_column_named_with_a_relative_period_is_no_filter():
    columns = [*DATES, {"name": "Visits Last Month", "type": "integer"}]
    assert time_filter("By how many Visits Last Month?", columns) == []


# --- a price per thing counted: the plan ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "group"),
    [("每件卖多少钱？", None), ("平均每件多少钱", None), ("每个门店每件的平均售价", "门店")],
)
def test_a_price_per_thing_counted_is_planned_as_totals_over_totals(question, group):
    plan = plan_analysis(question, seen(sales_frame(), "sales"), zh=True)
    totals = next(s for s in plan.steps if s.tool == "group_aggregate")
    assert plan.kind == "per_unit" and plan.dimension == group
    assert totals.arguments["group_columns"] == ([group] if group else [])
    assert totals.arguments["value_columns"] == ["销售额", "销量"]
    derive = next(s for s in plan.steps if s.tool == "derive_column")
    assert derive.arguments["expression"] == "`销售额_sum` / `销量_sum`"


@pytest.mark.parametrize(
    "question",
    ["每家店的销量是多少", "每种的平均销量是多少", "每瓶酒多少钱", "每个月的销售额是多少？", "每个星期卖多少钱？"],
)
def test_a_measure_word_before_a_noun_or_the_count_asked_is_no_price(question):
    plan = plan_analysis(question, seen(sales_frame(), "sales"), zh=True)
    assert not any(s.tool == "derive_column" and "÷" in str(s.arguments.get("new_column_name")) for s in plan.steps)


def test_whole_table_totals_as_one_row():
    frame = sales_frame()
    result = run_tool("group_aggregate", frame, group_columns=[], value_columns=["销售额", "销量"], agg="sum")
    assert result.ok and result.metrics["n_groups"] == 1
    assert result.metrics["销售额_sum.total"] == pytest.approx(frame["销售额"].sum())


# --- end to end: the answer in plain words, the figures pandas gives -------------------------------------------
pytestmark_slow = pytest.mark.slow


@pytestmark_slow
def test_price_per_piece_of_the_whole_table_zh(tmp_path, books):
    frame = pd.read_excel(books["zh"])
    run, calls = Session(tmp_path, books["zh"]).ask("每件卖多少钱？")
    assert call(calls, "describe_columns").metrics["销售额 ÷ 销量.mean"] == pytest.approx(
        ratio(frame, "销售额", "销量")
    )
    assert "理解为：销售额 ÷ 销量" in run.answer
    assert fmt_num(ratio(frame, "销售额", "销量")) in bold_lines(run.answer)[0]


@pytestmark_slow
def test_revenue_per_unit_sold_by_store(tmp_path, books):
    frame = pd.read_excel(books["en"])
    rates = ratio(frame, "Revenue", "Units", "Store")
    run, calls = Session(tmp_path, books["en"]).ask("revenue per unit sold by store")
    ranked = call(calls, "rank_values")
    assert ranked.metrics["rank.1.label"] == rates.index[0]
    assert ranked.metrics["rank.1.value"] == pytest.approx(rates.iloc[0])
    assert "Read as: Revenue ÷ Units by Store" in run.answer
    assert all(f"{g} {fmt_num(v)}" in bold_lines(run.answer)[0] for g, v in rates.items())


@pytestmark_slow
def test_last_year_keeps_the_latest_year_but_one(tmp_path, books):
    frame = pd.read_excel(books["zh"])
    kept = frame[frame["日期"].dt.year == frame["日期"].max().year - 1]
    totals = kept.groupby("门店")["销售额"].sum().sort_values(ascending=False)
    run, _ = Session(tmp_path, books["zh"]).ask("去年哪个门店的销售额最高？")
    assert "去年 = 2023 年" in run.answer.split("\n")[0]
    headline = bold_lines(run.answer)[0]
    assert headline.startswith(f"**{totals.index[0]}") and fmt_num(totals.iloc[0]) in headline


@pytestmark_slow
def test_price_per_unit_last_year(tmp_path, books):
    frame = pd.read_excel(books["en"])
    kept = frame[frame["Date"].dt.year == frame["Date"].max().year - 1]
    run, _ = Session(tmp_path, books["en"]).ask("What was the average price per unit last year?")
    assert "last year = 2023" in run.answer.split("\n")[0]
    assert fmt_num(ratio(kept, "Revenue", "Units")) in bold_lines(run.answer)[0]


@pytestmark_slow
def test_a_price_per_unit_after_another_summary_of_the_same_table(tmp_path, books):
    """A new user's trial: "东门和西门的销量差多少？" then "每个门店每件平均卖多少钱？" in one workspace failed ("以下分析
    未能完成"): the price's totals were stored as `sales_summary_2` (the first question's summary holds the name)
    while its next steps read `sales_summary`, the earlier table. They read the table the store gave the name
    to, and a step that reads another's output is asked for once that one ran."""
    frame = pd.read_excel(books["zh"])
    session = Session(tmp_path, books["zh"])
    session.ask("北京店和上海店的销量差多少？")
    run, calls = session.ask("每个门店每件平均卖多少钱？")
    read = call(calls, "derive_column").arguments["dataset"]
    assert read.startswith("门店销售_summary") and read != "门店销售_summary", read  # the new table, not the first's
    assert call(calls, "derive_column").ok and call(calls, "rank_values").arguments["dataset"] == read
    assert all(
        f"{g} {fmt_num(v)}" in bold_lines(run.answer)[0] for g, v in ratio(frame, "销售额", "销量", "门店").items()
    )
