"""A count of rows is answered as a count (issue 24, the answering): "how many" asked with a Chinese
numeral question (几天, 几次), of the rows a cut on a number keeps (the number named only by its cut
is not the measure), "how many days" on a table with one row per day, each group's count where the
question asks for every group, and the rows whose yes/no is no where the words negate it. Sheets are
built here; expected figures are computed with pandas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from analysis_tools.common import fmt_num
from app.analyst import data_tasks, past_the_reading
from app.analyst.data_tasks import asks_how_many, count_plan
from app.analyst.scope import cut_column, number_filter
from tests.test_builtin_understanding import Session, call, headline

pytestmark = pytest.mark.slow


def shop_days(path: Path) -> pd.DataFrame:
    """One row per day: the shop open that day, its takings, its rainfall flag."""
    rng = np.random.default_rng(3)
    n = 120
    frame = pd.DataFrame(
        {
            "日期": pd.date_range("2024-01-01", periods=n, freq="D"),
            "门店": rng.choice(["东门店", "西门店", "南门店"], n, p=[0.5, 0.3, 0.2]),
            "营业额（元）": rng.normal(1500, 400, n).round(1),
            "顾客人数": rng.integers(20, 200, n),
            "是否下雨": rng.choice(["是", "否"], n, p=[0.3, 0.7]),
        }
    )
    frame.to_csv(path, index=False)
    return frame


def requests(path: Path) -> pd.DataFrame:
    rng = np.random.default_rng(8)
    n = 200
    frame = pd.DataFrame(
        {
            "申请编号": [f"Q{i:04d}" for i in range(n)],
            "部门": rng.choice(["财务部", "销售部", "技术部"], n),
            "费用（元）": rng.integers(100, 1200, n),
            "审批时长（天）": rng.integers(1, 9, n),
            "是否批准": rng.choice(["是", "否"], n, p=[0.8, 0.2]),
        }
    )
    frame.to_csv(path, index=False)
    return frame


def test_each_groups_days_past_a_cut_are_counted(tmp_path):
    path = tmp_path / "data" / "门店.csv"
    path.parent.mkdir(parents=True)
    frame = shop_days(path)
    run, calls = Session(tmp_path, path).ask("只看营业额超过1500元的那些天，每个门店各有几天？")
    assert call(calls, "filter_rows").arguments["conditions"] == [{"column": "营业额（元）", "op": ">", "value": 1500}]
    counts = frame[frame["营业额（元）"] > 1500]["门店"].value_counts()
    said = headline(run)
    assert all(f"{shop} {fmt_num(n)}" in said for shop, n in counts.items()), said
    assert not any(c.tool == "compare_groups" for c in calls)


def test_the_rows_a_cut_keeps_are_counted_not_the_number_summed(tmp_path):
    path = tmp_path / "data" / "申请.csv"
    path.parent.mkdir(parents=True)
    frame = requests(path)
    run, _ = Session(tmp_path, path).ask("费用超过500元的申请一共有多少个？")
    kept = int((frame["费用（元）"] > 500).sum())
    assert f"{fmt_num(kept)} 个（共 {len(frame)} 个）" in headline(run), headline(run)  # in the question's measure word


def test_the_negated_yes_no_counts_its_no(tmp_path):
    path = tmp_path / "data" / "申请.csv"
    path.parent.mkdir(parents=True)
    frame = requests(path)
    run, _ = Session(tmp_path, path).ask("没被批准的申请有多少个？")
    refused = int((frame["是否批准"] == "否").sum())
    assert f"是否批准 为 否 的有 {fmt_num(refused)} 个" in headline(run), headline(run)


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("每个门店各有几天？", True),
        ("其中下雨的有几次？", True),
        ("How many orders were late?", True),
        ("这几种产品的销量有差异吗？", False),  # 这几种: "these few kinds", a determiner
        ("销量最高的是哪几个门店？", False),  # 哪几个: "which ones"
        ("几乎每天都下雨吗？", False),
    ],
)
def test_a_numeral_question_asks_how_many_a_determiner_does_not(question, asks):
    assert asks_how_many(question) is asks


@pytest.mark.parametrize("question", ["Does revenue differ by region?", "Which 门店 sells the most?"])
def test_a_question_without_a_chinese_question_word_is_not_tagged(question, monkeypatch):
    """jieba's tagger is not asked about a question that has none of the Chinese question words a
    numeral question opens with: its tables cost ~0.4 s of CPU and ~100 MB in every `verity analyze`
    of an English question (bench/analyze.py, the fixed cost)."""

    def tagger_asked(text: str) -> tuple:
        raise AssertionError(f"tagged {text!r}")

    monkeypatch.setattr(data_tasks, "tagged_words", tagger_asked)
    assert asks_how_many(question) is False


BOXES: list[dict[str, Any]] = [
    {"name": "档口", "type": "category", "levels": 3},
    {"name": "销量（箱）", "type": "integer"},
    {"name": "单价（元/箱）", "type": "number"},
]


@pytest.mark.parametrize("question", ["只看单价超过80的记录，一共卖出去多少箱？", "一共卖了几箱？"])
def test_how_many_of_a_columns_unit_is_no_count_of_rows(question):
    """ "多少箱", "几箱": the number counted in boxes (销量（箱）) is what is asked, added up, not the rows; a
    price per box (元/箱) counts no boxes."""
    assert count_plan(question, BOXES, [], 90, True) is None
    assert count_plan("一共有多少条记录？", BOXES, [], 90, True) is not None


def test_a_cuts_column_is_in_its_own_clause():
    """The number a cut keeps rows by is named next to it in the same clause: 售出数量 after the comma names
    what is measured, not what the cut is on."""
    assert (
        cut_column("只看超过80块的记录，售出数量一共多少？", [*BOXES, {"name": "售出数量", "type": "integer"}]) is None
    )
    assert cut_column("单价超过80的记录有多少条？", BOXES) == "单价（元/箱）"


def orders(path: Path) -> pd.DataFrame:
    rng = np.random.default_rng(12)
    n = 260
    frame = pd.DataFrame(
        {
            "Placed": pd.to_datetime("2024-05-01") + pd.to_timedelta(rng.integers(0, 60, n), unit="D"),
            "Branch": rng.choice(["Quay", "Mill", "Abbey", "Green"], n, p=[0.4, 0.3, 0.2, 0.1]),
            "Items": rng.integers(1, 10, n),
            "Bill": rng.gamma(5, 18, n).round(2),
        }
    )
    frame.to_csv(path, index=False)
    return frame


def test_which_group_has_the_most_of_what_the_rows_are_counts_them(tmp_path):
    """ "Which branch took the most orders" of a table of orders: each branch's rows, counted (not a default
    number's average), within the cut."""
    path = tmp_path / "data" / "orders.csv"
    path.parent.mkdir(parents=True)
    frame = orders(path)
    run, calls = Session(tmp_path, path).ask("Just for 6 or more items, which branch took the most orders?")
    assert call(calls, "filter_rows").arguments["conditions"] == [{"column": "Items", "op": ">=", "value": 6}]
    counts = frame[frame["Items"] >= 6]["Branch"].value_counts()
    said = headline(run)
    assert said.startswith(f"**Rows with Items >= 6 per Branch: {counts.index[0]} {fmt_num(counts.iloc[0])}"), said
    assert not any(c.tool in ("compare_groups", "rank_values") for c in calls)


def test_a_plain_cut_with_no_measure_cuts_the_number_it_splits():
    """A count has no measure to cut ("households of 5 or more people"): the one number column the cut's
    value splits is cut (a whole number: the whole-number column whose range holds it)."""
    numeric = [
        {"name": "Household Size", "type": "integer", "minimum": 1, "maximum": 9},
        {"name": "Total Weight (kg)", "type": "number", "minimum": 6.0, "maximum": 38.0},
    ]
    found = number_filter("Just for homes of 5 or more people, who sends the most?", numeric, None)
    assert found == {"column": "Household Size", "op": ">=", "value": 5}


def test_of_them_counts_within_the_first_parts_rows(tmp_path):
    """ "…超过500元的申请一共有多少个？其中财务部有几个？": 其中 ("of them") asks about the rows the first part
    kept, so its cut keeps them for the second part too; a filter on the counted column says its count."""
    path = tmp_path / "data" / "申请.csv"
    path.parent.mkdir(parents=True)
    frame = requests(path)
    run, _ = Session(tmp_path, path).ask("费用超过500元的申请一共有多少个？其中财务部有几个？")
    kept = frame[frame["费用（元）"] > 500]
    answer = past_the_reading(run.answer)
    assert f"费用（元） > 500 的有 {fmt_num(len(kept))} 个（共 {fmt_num(len(frame))} 个）" in answer, answer
    assert f"部门 为 财务部 的有 {fmt_num(int((kept['部门'] == '财务部').sum()))} 个。" in answer, answer


def staff(path: Path) -> pd.DataFrame:
    rng = np.random.default_rng(21)
    n = 90
    frame = pd.DataFrame(
        {
            "Employee": [f"E{i:03d}" for i in range(n)],
            "Department": rng.choice(["Sales", "Support", "Engineering"], n),
            "Hire Date": pd.to_datetime("2019-01-01") + pd.to_timedelta(rng.integers(0, 1800, n), unit="D"),
            "Salary": rng.integers(4000, 12000, n),
        }
    )
    frame["Left"] = rng.choice(["Yes", "No"], n, p=[0.3, 0.7])
    frame.to_csv(path, index=False)
    return frame


@pytest.mark.parametrize("question", ["How many people were hired in 2021?", "2021年入职了多少人？"])
def test_a_count_in_a_named_year_counts_that_years_rows(tmp_path, question):
    """A new user's trial: "How many people were hired in 2021?" said "There are 60 rows in all" (a count
    plan took no time filter), and "2021年入职了多少人？" compared salaries (the 年 of the named year read as a
    unit of time asked about). The named year keeps its rows, then they are counted, of all the rows."""
    path = tmp_path / "data" / "staff.csv"
    path.parent.mkdir(parents=True)
    frame = staff(path)
    run, calls = Session(tmp_path, path).ask(question)
    hired = int((frame["Hire Date"].dt.year == 2021).sum())
    said = headline(run)
    assert call(calls, "filter_rows").arguments["conditions"][0]["column"] == "Hire Date"
    expected = (
        f"Hire Date 在 2021 年 的有 {hired} 人（共 {len(frame)} 人）"
        if question.startswith("2021")
        else f"{hired} rows have Hire Date in 2021 (of {len(frame)} in all)"
    )
    assert expected in said, said
    assert not any(c.tool == "compare_groups" for c in calls)


@pytest.mark.parametrize(
    ("question", "kept", "said"),
    [
        ("How many people left in each department?", "Yes", "Rows with Left = Yes per Department: "),
        ("每个部门被批准的申请各有多少个？", "是", "各部门中 是否批准 = 是 的行数："),
        ("每个部门没被批准的申请有多少个？", "否", "各部门中 是否批准 = 否 的行数："),
    ],
)
def test_each_groups_rows_with_a_yes_are_counted(tmp_path, question, kept, said):
    """A new user's trial: "How many people left in each department?" said "12 of 60 rows have Left = Yes":
    the groups the question asks for were dropped. The rows with the yes (the no, where the words negate
    it) are kept, then each group's rows counted."""
    path = tmp_path / "data" / ("staff.csv" if question.isascii() else "申请.csv")
    path.parent.mkdir(parents=True)
    frame = staff(path) if question.isascii() else requests(path)
    group, flag = ("Department", "Left") if question.isascii() else ("部门", "是否批准")
    run, calls = Session(tmp_path, path).ask(question)
    assert call(calls, "filter_rows").arguments["conditions"][0]["column"] == flag
    counts = frame[frame[flag] == kept][group].value_counts()
    answer = headline(run)
    assert said in answer and all(f"{g} {fmt_num(n)}" in answer for g, n in counts.items()), answer


def test_how_many_rows_past_a_cut_named_around_it_are_counted_not_listed(tmp_path: Path) -> None:
    """How many rentals were out for more than 3 hours?" on a sheet with a column naming each row (Rental No):
    the rows past the cut are counted. The words of Hours Out stand on both sides of the cut ("out for more than
    3 hours"); a list of every rental number, or a comparison of Hours Out by a default group, was the answer."""
    rng = np.random.default_rng(12)
    n = 90
    frame = pd.DataFrame(
        {
            "Rental No": [f"R{100 + i}" for i in range(n)],
            "Site": rng.choice(["Pond", "Beach", "Bend"], n),
            "Hours Out": rng.choice(np.arange(1.0, 7.0, 0.5), n),
            "Fee ($)": rng.normal(60, 15, n).round(2),
        }
    )
    path = tmp_path / "rentals.csv"
    frame.to_csv(path, index=False)
    run, _ = Session(tmp_path, path).ask("How many rentals were out for more than 3 hours?", language="en")
    expected = int((frame["Hours Out"] > 3).sum())
    assert f"{fmt_num(expected)} rentals have Hours Out > 3" in headline(run), headline(run)  # the question's word


@pytest.mark.parametrize(
    ("question", "things"),
    [
        ("How many parcels arrived damaged?", "parcels"),
        ("How many of the bookings were cancelled?", "bookings"),
        ("How many overdue invoices are there?", "overdue invoices"),
        ("How many tickets cost more than $40?", "tickets"),
        ("How many were late?", ""),  # no word for the rows: they stay rows
        ("退货的有多少单？", "单"),
        ("一共有多少次维修？", "次"),
        ("多少个订单超过了3天？", "个订单"),
        ("有几家门店亏损？", "家门店"),
        ("有多少？", ""),
    ],
)
def test_a_count_is_said_in_the_questions_own_word_for_the_rows(question, things):
    """ "How many rentals …" answered "88 rows have …": the count is said in what the question counts the
    rows as — the English words after "how many" through the first plural, the Chinese measure word after
    the numeral question and a noun right after it."""
    from app.analyst.data_tasks import counted_as

    assert counted_as(question) == things


def test_a_chinese_cut_on_an_english_number_counts_its_rows(tmp_path: Path) -> None:
    """ "租车时间超过3小时的有多少单？" on English headers: 时间 right before the cut was read as the Date column (a
    time asked, so no count) and the cut went to Deposit ($), the other number 3 splits; the cut's unit (小时,
    Hours Out by meaning) names the number cut, and the words right before a cut name no date to count by."""
    rng = np.random.default_rng(7)
    n = 120
    frame = pd.DataFrame(
        {
            "Hire No": [f"B{300 + i}" for i in range(n)],
            "Date": pd.date_range("2024-04-01", periods=n, freq="D"),
            "Station": rng.choice(["Quay", "Park", "Mill"], n),
            "Hours Out": rng.choice(np.arange(1.0, 6.5, 0.5), n),
            "Deposit ($)": rng.choice([0, 10, 20, 40], n),
        }
    )
    path = tmp_path / "bike_hire.csv"
    frame.to_csv(path, index=False)
    run, calls = Session(tmp_path, path).ask("租车时间超过3小时的有多少单？", language="zh")
    assert call(calls, "filter_rows").arguments["conditions"] == [{"column": "Hours Out", "op": ">", "value": 3}]
    expected = int((frame["Hours Out"] > 3).sum())
    assert f"Hours Out > 3 的有 {expected} 单（共 {n} 单）" in headline(run), headline(run)
