"""A month, months or a quarter the question names ("in March", "3月份", "in Q2", "三月到五月", "March 2024")
keep the dated rows of that time (issue 24: filters). Found in a new user's trial on the sample shop file:
"Which region had the highest revenue in March?" and "3月份哪个地区的销售额最高？" were answered for the whole
year, the month dropped without a word. Totals are checked against pandas on a sheet made here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from app.analyst.plan import plan_analysis
from app.understanding.named_months import Months, named_months, recent_stretch
from tests.test_builtin_question_reading import seen
from tests.test_builtin_understanding import Session, call, headline


@pytest.mark.parametrize(
    "question, months",
    [
        ("Which region had the highest revenue in March?", (3, 3, None)),
        ("3月份哪个地区的销售额最高？", (3, 3, None)),
        ("What was the total revenue in March 2024?", (3, 3, 2024)),
        ("2023年12月的销量", (12, 12, 2023)),
        ("十一月份卖了多少", (11, 11, None)),
        ("三月到五月的销量", (3, 5, None)),
        ("sales from March to May", (3, 5, None)),
        ("Which region sold the most in Q2?", (4, 6, None)),
        ("第二季度各地区的销售额", (4, 6, None)),
        ("revenue in the third quarter of 2023", (7, 9, 2023)),
        ("上半年各门店的订单数合计是多少？", (1, 6, None)),
        ("2023年下半年的营业额", (7, 12, 2023)),
        ("sales in the first half of 2024", (1, 6, 2024)),
    ],
)
def test_the_months_a_question_names(question, months):
    found = named_months(question)
    assert found is not None and (found.first, found.last, found.year) == months


@pytest.mark.parametrize(
    "question",
    [
        "May I see sales by region?",
        "销量最高的3个月是哪几个？",
        "过去3个月的销量",
        "12月31日的销售额",
        "每月销量",
        "which month sold most",
    ],
)
def test_no_month_is_named_by_a_verb_a_count_of_months_or_a_day(question):
    assert named_months(question) is None


def shop(tmp_path, years=(2024,)):
    rng = np.random.default_rng(11)
    dates = pd.concat([pd.Series(pd.date_range(f"{y}-01-01", f"{y}-12-31", freq="D")) for y in years])
    n = len(dates)
    frame = pd.DataFrame(
        {
            "Date": dates.to_numpy(),
            "Region": rng.choice(["East", "West", "North"], n),
            "Revenue": rng.integers(10, 500, n),
        }
    )
    path = tmp_path / "shop.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_a_month_without_its_year_is_taken_in_the_latest_year_the_dates_hold_it(tmp_path):
    path, _ = shop(tmp_path, years=(2023, 2024))
    plan = plan_analysis("Which region had the highest revenue in March?", seen(path), zh=False)
    assert plan.filters == [{"column": "Date", "op": "between", "value": ["2024-03", "2024-03"]}]
    plan = plan_analysis("Which region had the highest revenue in March 2023?", seen(path), zh=False)
    assert plan.filters == [{"column": "Date", "op": "between", "value": ["2023-03", "2023-03"]}]
    assert Months(3, 3).year is None


@pytest.mark.parametrize(
    "question, first, last",
    [("Which region had the highest revenue in March?", 3, 3), ("第二季度哪个地区的销售额最高？", 4, 6)],
)
def test_the_answer_is_the_named_months_totals(tmp_path, question, first, last):
    path, frame = shop(tmp_path)
    run, calls = Session(tmp_path, path).ask(question)
    kept = frame[frame["Date"].dt.month.between(first, last)]
    totals = kept.groupby("Region")["Revenue"].sum().sort_values(ascending=False)
    best = totals.index[0]
    said = headline(run)
    assert best in said and f"{totals.iloc[0]:,}" in said, said
    assert call(calls, "filter_rows") is not None
    assert f"{frame.groupby('Region')['Revenue'].sum().max():,}" not in said  # not the whole year's


@pytest.mark.parametrize(
    "question, count, unit",
    [
        ("最近三个月的销售额", 3, "M"),
        ("过去30天各地区的订单", 30, "D"),
        ("最近半年的营业额", 6, "M"),
        ("in the past two weeks", 2, "W"),
    ],
)
def test_the_latest_stretch_a_question_names(question, count, unit):
    found = recent_stretch(question)
    assert found is not None and (found.count, found.unit) == (count, unit)
    assert recent_stretch("last month") is None and recent_stretch("最近的订单") is None


def test_the_latest_months_are_counted_back_from_the_datas_last_date(tmp_path):
    path, frame = shop(tmp_path, years=(2023, 2024))
    plan = plan_analysis("最近三个月各地区的销售额合计是多少？", seen(path), zh=True)
    assert plan.filters == [{"column": "Date", "op": "between", "value": ["2024-10", "2024-12"]}]
    plan = plan_analysis("Revenue by region over the past 2 weeks", seen(path), zh=False)
    assert plan.filters == [{"column": "Date", "op": "between", "value": ["2024-12-18", "2024-12-31"]}]
    run, _ = Session(tmp_path, path).ask("最近三个月各地区的Revenue合计是多少？")
    kept = frame[frame["Date"] >= "2024-10-01"].groupby("Region")["Revenue"].sum()
    assert f"{kept.max():,}" in headline(run) and kept.idxmax() in headline(run)
