"""A period the question goes through ("每个月", "each month", "monthly", "by month", "按季度") names the
column of that period as the grouping (issue 24): a column whose header, or a merged header's leaf, is
the period's word or holds it (月份, Month), or whose values are that period's labels (1月..6月, Jan..Jun,
Q1..Q4). Found in a new user's trial: on a sheet with a two-row merged header, "一店每个月的销量是多少？"
compared the stores' averages with 门店 assumed. Plans are made from the real profile of small tables
built here; the totals are checked against pandas."""

from __future__ import annotations

import numpy as np
import openpyxl
import pandas as pd
import pytest

from app.analyst.plan import plan_analysis
from app.understanding.period_groups import period_group_places
from tests.test_builtin_question_reading import seen, step

STORES = ["East", "West", "South"]


def group_source(plan):
    return next(s for s in plan.provenance.sources if s.role == "group")


def merged_sheet(tmp_path, months: list[str]):
    """A sheet with a two-row merged header (基本信息 over A:B, 销售情况 over C:D), stores by months."""
    rng = np.random.default_rng(3)
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "一店"
    sheet.append(["基本信息", None, "销售情况", None])
    sheet.merge_cells("A1:B1")
    sheet.merge_cells("C1:D1")
    sheet.append(["门店", "月份", "销量", "销售额"])
    rows = []
    for store in ["东门", "西门", "南门"]:
        for month in months:
            units = int(rng.integers(50, 150))
            rows.append((store, month, units))
            sheet.append([store, month, units, units * 12.5])
    path = tmp_path / "shop.xlsx"
    book.save(path)
    return path, pd.DataFrame(rows, columns=["门店", "月份", "销量"])


def test_each_month_groups_a_merged_headers_month_column_and_totals_it(tmp_path):
    path, frame = merged_sheet(tmp_path, [f"{m}月" for m in range(1, 7)])
    plan = plan_analysis("一店每个月的销量是多少？", seen(path), zh=True)
    assert plan.dimension == "基本信息 / 月份" and plan.metric == "销售情况 / 销量"
    assert not group_source(plan).default  # named by 每个月, not assumed
    totals = step(plan, "group_aggregate").arguments
    assert totals == {"group_columns": ["基本信息 / 月份"], "value_columns": ["销售情况 / 销量"], "agg": "sum"}
    assert frame.groupby("月份")["销量"].sum().to_dict()["1月"] == frame[frame["月份"] == "1月"]["销量"].sum()


def test_a_named_number_with_few_values_does_not_stop_the_period_grouping(tmp_path):
    """On a small sheet 销量 takes ten-odd whole values, so the profile calls it a code that could group
    rows (`coded`); naming it as the sum ("每个月的销量合计") must not keep 每个月 from grouping by 月份
    (found in a new user's trial: the stores were totalled instead)."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["基本信息", None, "销售情况", None])
    sheet.merge_cells("A1:B1")
    sheet.merge_cells("C1:D1")
    sheet.append(["门店", "月份", "销量", "销售额"])
    units = [51, 54, 60, 53, 51, 56, 52, 57, 55, 53, 58, 57, 51, 60, 57, 54, 59, 53]
    rows = [(store, f"{m}月") for store in ["东门", "西门", "南门"] for m in range(1, 7)]
    for (store, month), n in zip(rows, units):
        sheet.append([store, month, n, n * 12])
    path = tmp_path / "shop.xlsx"
    book.save(path)
    dataset = seen(path)
    assert next(c for c in dataset["columns"] if c["name"] == "销售情况 / 销量").get("coded")
    for question in ["每个月的销量合计是多少？", "What is the total 销量 per month?"]:
        plan = plan_analysis(question, dataset, zh=not question.isascii())
        assert plan.dimension == "基本信息 / 月份" and plan.metric == "销售情况 / 销量", question
        assert not group_source(plan).default


def months_table(tmp_path, column: str, labels: list[str]):
    rng = np.random.default_rng(5)
    rows = [(s, m, int(rng.integers(20, 90))) for s in STORES for m in labels]
    path = tmp_path / "sales.csv"
    pd.DataFrame(rows, columns=["Store", column, "Sales"]).to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    "question",
    ["How many did we sell each month?", "What were the monthly sales?", "Sales per month", "Show sales by month"],
)
def test_an_english_period_names_the_month_column(tmp_path, question):
    plan = plan_analysis(question, seen(months_table(tmp_path, "Month", ["Jan", "Feb", "Mar", "Apr", "May"])), zh=False)
    assert plan.dimension == "Month" and not group_source(plan).default


@pytest.mark.parametrize(
    ("labels", "question", "zh"),
    [
        (["Jan", "Feb", "Mar", "Apr", "May"], "How many did we sell every month?", False),
        ([f"{m}月" for m in range(1, 7)], "每月销量是多少？", True),
        (["Q1", "Q2", "Q3", "Q4"], "各季度的销量是多少？", True),
        (["Q1", "Q2", "Q3", "Q4"], "Sales by quarter", False),
    ],
)
def test_a_column_of_period_labels_is_the_periods_grouping(tmp_path, labels, question, zh):
    plan = plan_analysis(question, seen(months_table(tmp_path, "Period", labels)), zh=zh)
    assert plan.dimension == "Period" and not group_source(plan).default


def test_only_the_period_named_and_only_a_column_of_it():
    columns = [
        {"name": "Store", "type": "category", "values": STORES},
        {"name": "Period", "type": "category", "values": ["Q1", "Q2", "Q3"]},
        {"name": "Sales", "type": "integer"},
    ]
    assert period_group_places("sales by quarter", columns) == [(6, 16, "Period")]
    assert period_group_places("sales each month", columns) == []  # quarters are no months
    assert period_group_places("which store sold the most", columns) == []
    dated = [*columns, {"name": "Date", "type": "datetime"}]
    assert period_group_places("sales by quarter", dated) == []  # the dates' own periods answer it


def test_a_chinese_unit_that_begins_another_word_is_no_period():
    """按年龄 is "by age" (jieba: 按/年龄), not "by year": the year column is not its grouping; 按月 and
    逐年 (one word each) and 每个/月 go through a period."""
    columns = [
        {"name": "年份", "type": "category", "values": ["2023年", "2024年"]},
        {"name": "月份", "type": "category", "values": ["1月", "2月"]},
        {"name": "收入", "type": "integer"},
    ]
    assert period_group_places("按年龄分组的收入", columns) == []
    assert period_group_places("各天气下的收入", columns) == []
    assert period_group_places("按月统计收入", columns) == [(0, 2, "月份")]
    assert period_group_places("逐年的收入", columns) == [(0, 2, "年份")]
    assert period_group_places("每个月的收入", columns) == [(0, 3, "月份")]


def test_a_comparison_of_months_lists_their_averages_in_calendar_order():
    """The averages a comparison of months lists run 1月, 2月 … like the totals' headline, not by size
    (found in a new user's trial: "averages: 2月 59.67, 4月 56.67, 5月 55.67 …")."""
    from analysis_tools import run_tool
    from app.analyst.findings import finding
    from app.analyst.steps import Step

    months = [f"{m}月" for m in range(1, 7)]
    units = {"1月": [54, 55], "2月": [60, 59], "3月": [55, 56], "4月": [57, 56], "5月": [56, 55], "6月": [55, 56]}
    frame = pd.DataFrame([(m, u) for m in months for u in units[m]], columns=["月份", "销量"])
    step = Step("compare_groups", {"value_column": "销量", "group_column": "月份"})
    result = run_tool("compare_groups", frame, value_column="销量", group_column="月份").record()
    text = finding(step, result, zh=False)
    listed = text.split("(averages: ", 1)[1]
    assert [listed.index(m) for m in months] == sorted(listed.index(m) for m in months), text
    assert "2月 59.5" in listed  # the means themselves (pandas: (60 + 59) / 2)
    stores = pd.DataFrame({"门店": ["东门", "西门", "南门"] * 2, "销量": [50, 70, 60, 52, 72, 62]})
    by_store = run_tool("compare_groups", stores, value_column="销量", group_column="门店").record()
    other = finding(Step("compare_groups", {"value_column": "销量", "group_column": "门店"}), by_store, zh=False)
    assert other.split("(averages: ", 1)[1].startswith("西门 71")  # other groups: by size


@pytest.mark.parametrize(
    "question, zh",
    [
        ("销量最高的3个月是哪几个？", True),
        ("销量最高的三个月是哪几个？", True),
        ("Which three months sold the most?", False),
        ("the top 3 months by 销量", False),
    ],
)
def test_periods_ranked_by_a_count_are_the_grouping(tmp_path, question, zh):
    """A count of periods after a superlative, 哪, "which" or "top" ranks the periods: found in a new user's
    trial, "销量最高的3个月是哪几个？" on a merged-header sheet ranked the stores (门店 assumed)."""
    path, frame = merged_sheet(tmp_path, [f"{m}月" for m in range(1, 7)])
    plan = plan_analysis(question, seen(path), zh=zh)
    assert plan.dimension == "基本信息 / 月份" and not group_source(plan).default
    assert step(plan, "group_aggregate").arguments["group_columns"] == ["基本信息 / 月份"]


def test_a_span_of_periods_is_no_grouping():
    """过去3个月 (the last three months) is a span of time, not the months ranked."""
    columns = [{"name": "月份", "type": "category", "values": ["1月", "2月"]}, {"name": "收入", "type": "integer"}]
    assert period_group_places("过去3个月的收入", columns) == []
    assert period_group_places("收入最高的3个月", columns) == [(2, 8, "月份")]
