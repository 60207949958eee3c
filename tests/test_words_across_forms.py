"""Words that name a column in another form or language (issue 24, a new user's trial on the sample
monthly_operations.xlsx and a staff sheet): a verb's past form as a yes/no column ("Left" asked about as
"leave", "离职"), a clipped word the dictionary itself uses ("ads" for 广告), a count named after "per" in
the other language ("per order" of 订单数), the number named before it ("revenue per order"). Every
expected figure is computed here with pandas, never read from Verity's output."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis_tools import run_tool
from analysis_tools.common import fmt_num
from app.analyst.date_span import asks_span
from app.analyst.period_totals import averages_periods
from app.analyst.plan import plan_analysis
from app.understanding.bilingual import clippings, strength
from app.understanding.text import past_verb
from app.understanding.words import loose_mentions
from tests.factories import SAMPLES
from tests.test_builtin_designs import seen
from tests.test_builtin_understanding import Session, call

OPERATIONS = SAMPLES / "monthly_operations.xlsx"


def staff() -> pd.DataFrame:
    """Sixty people in three departments, some of whom left (Yes/No)."""
    rng = np.random.default_rng(3)
    n = 60
    return pd.DataFrame(
        {
            "Name": [f"P{i}" for i in range(n)],
            "Department": rng.choice(["Sales", "IT", "HR"], n),
            "Salary": rng.integers(3000, 9000, n),
            "Left": rng.choice(["Yes", "No"], n, p=[0.3, 0.7]),
        }
    )


def operations() -> pd.DataFrame:
    return pd.read_excel(OPERATIONS)


# --- a verb's past form ------------------------------------------------------------------------------------
def test_a_past_form_is_read_as_its_verb():
    assert [past_verb(w) for w in ("Left", "sold", "churned")] == ["leave", "sell", "churn"]
    assert [past_verb(w) for w in ("leaving", "data", "species", "ads")] == ["", "", "", ""]


@pytest.mark.parametrize("question", ["How many people leave each year?", "Who is leaving?"])
def test_a_column_named_by_a_past_form_is_named_by_its_verb(question):
    assert list(loose_mentions(question, "Left"))


def test_a_chinese_verb_meets_an_english_past_form():
    assert strength("离职", "Left") > 0
    assert strength("离职", "Lift") == 0


@pytest.mark.parametrize(
    ("question", "grouped"),
    [("How many people leave in each department?", True), ("Which department has the most people leaving?", True)],
)
def test_leave_reads_the_left_column(question, grouped):
    plan = plan_analysis(question, seen(staff(), "staff"), zh=False)
    used = {str(v) for s in plan.steps for v in s.arguments.values()} | {str(c.get("column")) for c in plan.filters}
    assert "Left" in used
    assert (plan.dimension == "Department") is grouped


# --- a clipping the dictionary uses --------------------------------------------------------------------------
def test_a_clipping_stands_for_the_sense_word_it_begins():
    assert "advertisement" in clippings("广告")["ad"]
    assert strength("ads", "广告费用") == 1.0
    assert strength("add", "广告费用") == 0  # a word that merely begins like one is no clipping


# --- a rate per a count named in the other language -----------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "top"),
    [
        ("Which store spends the most on ads per order?", "广告费用"),
        ("What is the revenue per order of each store?", "营业额"),
    ],
)
def test_per_order_divides_by_the_order_count(question, top):
    plan = plan_analysis(question, seen(operations(), "monthly_operations"), zh=False)
    assert plan.kind == "per_unit" and plan.dimension == "门店"
    derive = next(s for s in plan.steps if s.tool == "derive_column")
    assert derive.arguments["expression"] == f"`{top}_sum` / `订单数_sum`"


@pytest.mark.slow
def test_ads_per_order_by_store_end_to_end(tmp_path):
    frame = operations()
    sums = frame.groupby("门店")[["广告费用", "订单数"]].sum()
    rates = (sums["广告费用"] / sums["订单数"]).sort_values(ascending=False)
    run, calls = Session(tmp_path, OPERATIONS).ask("Which store spends the most on ads per order?")
    ranked = call(calls, "rank_values")
    assert ranked.metrics["rank.1.label"] == rates.index[0]
    assert ranked.metrics["rank.1.value"] == pytest.approx(rates.iloc[0])
    assert all(f"{g} {fmt_num(v)}" in run.answer for g, v in rates.items())


# --- how long the data runs -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "unit"),
    [
        ("How many years of data are there?", "year"),
        ("数据有几年？", "year"),
        ("How many months does the data cover?", "month"),
        ("一共有多少个月的数据？", "month"),
        ("几月的营业额最高？", ""),  # which month, not how many
        ("平均几天能修好？", ""),  # an average, not a span
    ],
)
def test_a_span_is_asked_by_how_many_of_a_unit_of_time(question, unit):
    assert asks_span(question) == unit


@pytest.mark.parametrize(
    ("question", "part"), [("How many years of data are there?", "year"), ("数据有几年？", "year")]
)
def test_the_span_is_planned_as_the_periods_the_dates_cover(question, part):
    plan = plan_analysis(question, seen(operations(), "monthly_operations"), zh=not question.isascii())
    made = next(s for s in plan.steps if s.tool == "derive_column")
    assert plan.kind == "span" and made.arguments["part"] == part and made.arguments["columns"] == ["月份"]
    totals = next(s for s in plan.steps if s.tool == "group_aggregate")
    assert totals.arguments["aggregations"] == ["nunique", "min", "max"]


def test_how_many_days_with_a_column_named_is_no_span():
    plan = plan_analysis("How many days had 营业额 over 900000?", seen(operations(), "monthly_operations"), zh=False)
    assert plan.kind != "span"


def test_the_whole_table_reports_every_aggregation():
    frame = operations()
    frame["年"] = frame["月份"].dt.year
    result = run_tool(
        "group_aggregate", frame, group_columns=[], value_columns=["年"], aggregations=["nunique", "min", "max"]
    )
    assert [v for k, v in result.metrics.items() if k.startswith("年_")] == [4, 2021, 2024]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("How many years of data are there?", "The data covers {n} years: {a} to {b}"),
        ("数据有几年？", "数据覆盖 {n} 年：从 {a} 到 {b}"),
    ],
)
def test_the_years_of_data_end_to_end(tmp_path, question, said):
    years = operations()["月份"].dt.year
    run, _ = Session(tmp_path, OPERATIONS).ask(question)
    assert said.format(n=years.nunique(), a=years.min(), b=years.max()) in run.answer


# --- a period named as what is averaged over ---------------------------------------------------------------------
def shop_days() -> pd.DataFrame:
    """Sales on random days of 2024: several rows a month per store, so a store's mean monthly total is not
    its mean row."""
    rng = np.random.default_rng(5)
    n = 200
    return pd.DataFrame(
        {
            "日期": pd.to_datetime("2024-01-01") + pd.to_timedelta(rng.integers(0, 366, n), unit="D"),
            "门店": rng.choice(["东门", "西门"], n),
            "营业额": rng.integers(100, 1000, n),
        }
    )


@pytest.mark.parametrize(
    ("question", "averaged"),
    [
        ("每个门店平均每月的营业额是多少？", True),
        ("What is the average monthly 营业额 of each 门店?", True),
        ("average 营业额 per month by 门店", True),
        ("每个月的平均营业额是多少？", False),  # each month's own average, listed
    ],
)
def test_a_mean_word_before_the_period_averages_the_periods_totals(question, averaged):
    assert averages_periods(question) is averaged


def test_each_stores_average_month_is_planned_in_two_steps():
    plan = plan_analysis("每个门店平均每月的营业额是多少？", seen(shop_days(), "shop"), zh=True)
    totals, average = [s for s in plan.steps if s.tool == "group_aggregate"]
    assert totals.prep and totals.arguments["agg"] == "sum" and totals.arguments["group_columns"][1:] == ["门店"]
    assert average.arguments["group_columns"] == ["门店"] and average.arguments["agg"] == "mean"
    assert average.arguments["value_columns"] == ["营业额_sum"] and plan.dimension == "门店"


@pytest.mark.slow
def test_each_stores_average_month_end_to_end(tmp_path):
    frame = shop_days()
    path = tmp_path / "shop.xlsx"
    frame.to_excel(path, index=False)
    monthly = frame.groupby([frame["日期"].dt.to_period("M"), "门店"])["营业额"].sum()
    expected = monthly.groupby(level="门店").mean()
    assert not np.allclose(expected, frame.groupby("门店")["营业额"].mean())  # the mean row is another figure
    run, calls = Session(tmp_path, path).ask("每个门店平均每月的营业额是多少？")
    assert all(f"{store} {fmt_num(v)}" in run.answer for store, v in expected.items())
    assert "每个月的 营业额 合计，再取平均（按 门店 分）" in run.answer


# --- "how much" of no named thing asks an amount of money ---------------------------------------------------------
def visits() -> pd.DataFrame:
    rng = np.random.default_rng(9)
    n = 80
    minutes = rng.integers(10, 40, n)
    doctor = rng.choice(["陈医生", "李医生"], n)
    return pd.DataFrame(
        {
            "医生": doctor,
            "就诊时长（分钟）": minutes,
            "费用（元）": minutes * np.where(doctor == "陈医生", 20, 14) + rng.integers(0, 50, n),
        }
    )


def test_how_much_per_minute_divides_the_money_column_by_the_minutes():
    plan = plan_analysis("How much do we earn per minute for each 医生?", seen(visits(), "visits"), zh=False)
    derive = next(s for s in plan.steps if s.tool == "derive_column")
    assert plan.kind == "per_unit" and plan.dimension == "医生"
    assert derive.arguments["expression"] == "`费用（元）_sum` / `就诊时长（分钟）_sum`"


def test_how_much_of_a_named_thing_is_no_money():
    plan = plan_analysis("How much milk do we get per minute?", seen(visits(), "visits"), zh=False)
    assert plan.kind != "per_unit"


@pytest.mark.parametrize(
    ("question", "group"),
    [("How much do we earn per minute for each vet?", "医生"), ("How much do we earn per minute?", None)],
)
def test_each_group_asked_takes_the_default_grouping_for_a_rate(question, group):
    plan = plan_analysis(question, seen(visits(), "visits"), zh=False)
    assert plan.kind == "per_unit" and plan.dimension == group
