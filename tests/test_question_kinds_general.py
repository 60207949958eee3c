"""Filters, top/bottom N rows and the rate of a yes/no outcome, read by general means (issue 24 point 3),
on workbooks built here — one with a merged two-row header (基本信息: 门店, 月份; 销售情况: 销量, 销售额) —
in English and Chinese, first questions and follow-ups.

The filter is a real tool step (filter_rows, recorded) before the computation, and the "Read as" line
says it; every expected figure is computed here with pandas from the frame written to the file, never
read from Verity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from openpyxl import Workbook

from analysis_tools.common import fmt_num
from app.analyst.reading import READ_AS
from tests.test_builtin_understanding import Session, call, headline

pytestmark = pytest.mark.slow

STORES = ["东门", "西门", "二店", "三店", "南站", "北湖"]


def stores_workbook(path: Path) -> pd.DataFrame:
    """Six stores × twelve months of 2024 under a merged two-row header: 基本信息 over 门店 and 月份,
    销售情况 over 销量 and 销售额."""
    rng = np.random.default_rng(3)
    rows = []
    for store in STORES:
        for month in pd.date_range("2024-01-01", periods=12, freq="MS"):
            sold = int(rng.integers(80, 400))
            rows.append((store, month.strftime("%Y-%m"), sold, round(sold * float(rng.uniform(10, 30)), 2)))
    book = Workbook()
    sheet = book.active
    sheet.title = "销售"
    sheet.append(["基本信息", None, "销售情况", None])
    sheet.merge_cells("A1:B1")
    sheet.merge_cells("C1:D1")
    sheet.append(["门店", "月份", "销量", "销售额"])
    for row in rows:
        sheet.append(list(row))
    book.save(path)
    return pd.DataFrame(rows, columns=["门店", "月份", "销量", "销售额"])


def customers(path: Path) -> pd.DataFrame:
    rng = np.random.default_rng(8)
    n = 300
    frame = pd.DataFrame(
        {
            "Customer ID": [f"K{i:04d}" for i in range(n)],
            "Region": rng.choice(["North", "South", "East", "West"], n),
            "Tenure months": rng.integers(1, 60, n),
            "Monthly fee": rng.gamma(3, 20, n).round(2),
            "Churned": rng.choice(["Yes", "No"], n, p=[0.27, 0.73]),
        }
    )
    frame.to_csv(path, index=False)
    return frame


def classes(path: Path) -> pd.DataFrame:
    """160 pupils: a number each, a class (1班…4班), maths and English marks, passed or not (是/否)."""
    rng = np.random.default_rng(9)
    n = 160
    frame = pd.DataFrame(
        {
            "学号": [f"S{i:03d}" for i in range(n)],
            "班级": rng.choice(["1班", "2班", "3班", "4班"], n),
            "性别": rng.choice(["男", "女"], n),
            "数学": rng.integers(35, 100, n),
            "英语": rng.integers(40, 100, n),
        }
    )
    frame["是否及格"] = np.where(frame["数学"] >= 60, "是", "否")
    frame.to_excel(path, index=False)
    return frame


def products(path: Path) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    n = 80
    frame = pd.DataFrame(
        {
            "Product": [f"P-{i:03d}" for i in range(n)],
            "Category": rng.choice(["Toys", "Books", "Garden"], n),
            "Price": rng.gamma(2, 60, n).round(2),
            "Units sold": rng.integers(0, 500, n),
            "Rating": rng.integers(1, 6, n),
        }
    )
    frame.to_csv(path, index=False)
    return frame


def session(tmp_path: Path, make, name: str) -> tuple[Session, pd.DataFrame]:
    path = tmp_path / "data" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = make(path)
    return Session(tmp_path, path), frame


def read_as(run) -> str:
    return run.answer.lstrip().split("\n\n", 1)[0]


def filtered(calls, column: str, op: str, value) -> dict:
    """The filter_rows step that kept the rows, with its condition."""
    step = call(calls, "filter_rows")
    conditions = step.arguments["conditions"]
    assert {"column": column, "op": op, "value": value} in conditions, conditions
    return step.arguments


def pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def monthly_totals(frame: pd.DataFrame) -> list[str]:
    return [fmt_num(v) for v in frame.groupby("月份")["销售额"].sum().sort_index()]


# --- filters on a value, as a first question and as a follow-up, over a merged header ---------------
@pytest.mark.parametrize(
    ("question", "store"),
    [("Only for 东门: what were total sales each month?", "东门"), ("只看二店的每月销售额", "二店")],
)
def test_a_filter_on_a_value_keeps_its_rows_before_each_months_total(tmp_path, question, store):
    asker, frame = session(tmp_path, stores_workbook, "门店销售.xlsx")
    run, calls = asker.ask(question)
    kept = filtered(calls, "基本信息 / 门店", "==", store)
    months = call(calls, "derive_column")  # the months are made from the kept rows, then totalled
    totals = call(calls, "group_aggregate")
    assert months.arguments["dataset"] == kept["output"] and totals.arguments["dataset"] == months.arguments["output"]
    assert totals.arguments["value_columns"] == ["销售情况 / 销售额"]
    # every month's figure is the store's own (not all stores')
    assert all(figure in headline(run) for figure in monthly_totals(frame[frame["门店"] == store]))
    assert f"门店 = {store}" in read_as(run)


def test_a_follow_up_filter_reruns_each_months_total_on_the_kept_rows(tmp_path):
    asker, frame = session(tmp_path, stores_workbook, "门店销售.xlsx")
    first, _ = asker.ask("What were total sales each month?")
    assert all(figure in headline(first) for figure in monthly_totals(frame))
    run, calls = asker.ask("And only for 东门?")
    filtered(calls, "基本信息 / 门店", "==", "东门")
    assert all(figure in headline(run) for figure in monthly_totals(frame[frame["门店"] == "东门"]))
    assert "东门" in read_as(run)


def test_which_groups_have_rows_past_a_cut_lists_them_from_the_kept_rows(tmp_path):
    asker, frame = session(tmp_path, stores_workbook, "门店销售.xlsx")
    run, calls = asker.ask("销售额超过5000的门店有哪些")
    filtered(calls, "销售情况 / 销售额", ">", 5000)
    assert not any(c.tool in ("compare_groups", "correlation_analysis") for c in calls)
    counts = frame[frame["销售额"] > 5000]["门店"].value_counts()
    for store, n in counts.items():
        assert f"{store}（{n} 行）" in headline(run)
    assert f"有 {len(counts)} 个" in headline(run)
    assert "销售额 > 5000" in read_as(run)


def test_which_products_pass_a_cut_when_each_row_is_one_product(tmp_path):
    asker, frame = session(tmp_path, products, "products.csv")
    run, calls = asker.ask("Which products cost more than 100?")
    filtered(calls, "Price", ">", 100)
    kept = frame[frame["Price"] > 100]
    assert headline(run) == f"**{len(kept)} Product with Price > 100: {', '.join(sorted(kept['Product']))}.**"


def test_a_cut_on_one_number_filters_the_average_of_another(tmp_path):
    asker, frame = session(tmp_path, products, "products.csv")
    run, calls = asker.ask("where price > 100, what is the average rating?")
    filtered(calls, "Price", ">", 100)
    assert call(calls, "describe_columns").arguments["columns"] == ["Rating"]
    assert fmt_num(frame[frame["Price"] > 100]["Rating"].mean()) in headline(run)
    assert "Price > 100" in read_as(run)


def test_a_filter_on_the_only_group_gives_its_total(tmp_path):
    asker, frame = session(tmp_path, products, "products.csv")
    run, calls = asker.ask("just for Toys: total units sold?")
    filtered(calls, "Category", "==", "Toys")
    assert (
        headline(run)
        == f"**Total Units sold for Toys: {fmt_num(frame[frame.Category == 'Toys']['Units sold'].sum())}.**"
    )


def test_an_english_filter_names_a_chinese_class_value_and_a_new_question_is_not_a_follow_up(tmp_path):
    asker, frame = session(tmp_path, classes, "成绩.xlsx")
    asker.ask("数学最高的5个学生")
    # "Just for …" opens like a follow-up, but asks its own question after the colon: not the ranking again
    run, calls = asker.ask("Just for class 2: average English score?")
    filtered(calls, "班级", "==", "2班")
    assert not any(c.tool == "rank_values" for c in calls)
    assert fmt_num(frame[frame["班级"] == "2班"]["英语"].mean()) in headline(run)


# --- the top/bottom N rows ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("maker", "name", "question", "value", "label", "n", "bottom"),
    [
        (classes, "成绩.xlsx", "数学最高的5个学生", "数学", "学号", 5, False),
        (
            customers,
            "customers.csv",
            "the five customers with the highest monthly fee",
            "Monthly fee",
            "Customer ID",
            5,
            False,
        ),
        (products, "products.csv", "bottom 10 products by units sold", "Units sold", "Product", 10, True),
    ],
)
def test_the_top_n_things_are_rows_by_their_identifier(tmp_path, maker, name, question, value, label, n, bottom):
    asker, frame = session(tmp_path, maker, name)
    run, calls = asker.ask(question)
    ranked = call(calls, "rank_values")
    assert ranked.arguments["label_columns"] == [label] and "group_column" not in ranked.arguments
    assert not any(c.tool in ("group_aggregate", "correlation_analysis") for c in calls)
    expected = frame.nsmallest(n, value, keep="all") if bottom else frame.nlargest(n, value, keep="all")
    assert ranked.metrics["shown"] == n
    shown = [ranked.metrics[f"rank.{i}.value"] for i in range(1, n + 1)]
    assert shown == expected[value].head(n).tolist()
    listed = [ranked.metrics[f"rank.{i}.label"] for i in range(1, n + 1)]
    assert set(listed) <= set(expected[label])  # ties at the edge may list any of the tied rows
    assert str(n) in read_as(run)


def test_the_n_stores_with_the_highest_sales_are_groups_totalled(tmp_path):
    asker, frame = session(tmp_path, stores_workbook, "门店销售.xlsx")
    run, calls = asker.ask("the 3 stores with the highest sales")
    totals = frame.groupby("门店")["销售额"].sum().nlargest(3)
    assert call(calls, "group_aggregate").arguments["group_columns"] == ["基本信息 / 门店"]
    expected = "; ".join(f"{i}. {s} {fmt_num(v)}" for i, (s, v) in enumerate(totals.items(), 1))
    assert expected in headline(run)


# --- the rate of a yes/no outcome per group, in the sheet's own words --------------------------------
def test_the_churn_rate_per_region_then_only_one_region_then_a_cut(tmp_path):
    asker, frame = session(tmp_path, customers, "customers.csv")
    run, calls = asker.ask("What share of customers churned in each region?")
    assert not asker.asked  # the sheet records who churned: no retention window to ask for
    test = call(calls, "proportion_test")
    assert test.arguments["value_column"] == "Churned" and test.arguments["group_column"] == "Region"
    rates = frame.assign(churned=frame["Churned"].eq("Yes")).groupby("Region")["churned"].mean()
    assert "Churned = Yes" in headline(run)
    assert all(pct(rate) in headline(run) for rate in rates)
    assert read_as(run) == f"{READ_AS[0]}the Churned rate by Region."

    run, calls = asker.ask("And only for the South region?")
    filtered(calls, "Region", "==", "South")
    south = frame[frame["Region"] == "South"]
    yes = int(south["Churned"].eq("Yes").sum())
    assert headline(run) == f"**Churned = Yes: {pct(yes / len(south))} of the rows ({yes} of {len(south)}).**"

    run, calls = asker.ask("where monthly fee > 100, what share churned?")
    filtered(calls, "Monthly fee", ">", 100)
    kept = frame[frame["Monthly fee"] > 100]
    yes = int(kept["Churned"].eq("Yes").sum())
    assert headline(run) == f"**Churned = Yes: {pct(yes / len(kept))} of the rows ({yes} of {len(kept)}).**"


@pytest.mark.parametrize("question", ["各班及格率", "What is the pass rate in each class?"])
def test_the_pass_rate_per_class_in_the_sheets_own_word(tmp_path, question):
    asker, frame = session(tmp_path, classes, "成绩.xlsx")
    run, calls = asker.ask(question)
    test = call(calls, "proportion_test")
    assert test.arguments["value_column"] == "是否及格" and test.arguments["group_column"] == "班级"
    rates = frame.assign(passed=frame["是否及格"].eq("是")).groupby("班级")["passed"].mean()
    assert "是否及格 = 是" in headline(run) and "True" not in headline(run)
    assert all(pct(rate) in headline(run) for rate in rates)


def test_a_chinese_follow_up_keeps_the_rate_per_class_on_the_kept_rows(tmp_path):
    asker, frame = session(tmp_path, classes, "成绩.xlsx")
    asker.ask("各班及格率")
    run, calls = asker.ask("其中女生呢？")
    filtered(calls, "性别", "==", "女")
    girls = frame[frame["性别"] == "女"]
    rates = girls.assign(passed=girls["是否及格"].eq("是")).groupby("班级")["passed"].mean()
    assert all(pct(rate) in headline(run) for rate in rates)
    assert "性别 = 女" in read_as(run)
