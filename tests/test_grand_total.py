"""A question that asks one total and names no grouping ("What was the total revenue?", "3月份的总销售额是多少？")
is answered with that total first; the groups the analyst broke it down by follow. Found in a new user's
trial: the answer led with "East has the highest total Revenue", a ranking nobody asked for. Every number
is checked against pandas and against the tool call it cites."""

from __future__ import annotations

import pytest

from tests.test_builtin_understanding import Session, headline
from tests.test_named_months import shop


@pytest.mark.parametrize(
    "question, march, zh",
    [
        ("What was the total revenue?", False, False),
        ("What was the total revenue in March 2024?", True, False),
        ("3月份的总销售额是多少？", True, True),
    ],
)
def test_one_total_asked_leads_the_answer(tmp_path, question, march, zh):
    path, frame = shop(tmp_path)
    kept = frame[frame["Date"].dt.month == 3] if march else frame
    run, _ = Session(tmp_path, path).ask(question)
    said = headline(run)
    total = f"{kept['Revenue'].sum():,}"
    lead = f"合计：{total}" if zh else f"Total Revenue: {total}"
    assert lead in said, said
    best = kept.groupby("Region")["Revenue"].sum().idxmax()
    assert not said.lstrip("*").startswith(best)  # no ranking leads


def test_a_ranking_asked_still_leads_with_the_best_group(tmp_path):
    path, frame = shop(tmp_path)
    run, _ = Session(tmp_path, path).ask("Which region had the highest revenue?")
    best = frame.groupby("Region")["Revenue"].sum().idxmax()
    assert headline(run).lstrip("*").startswith(best)


@pytest.mark.parametrize(
    "question, zh", [("East的Revenue一共多少？", True), ("How much Revenue did East bring in in total?", False)]
)
def test_the_total_of_the_one_group_asked_about_leads(tmp_path, question, zh):
    """Found in a new user's trial: "北京店的广告费用一共多少？" led with 上海店, the highest, and named 北京店 only
    among the others."""
    path, frame = shop(tmp_path)
    run, _ = Session(tmp_path, path).ask(question)
    said = headline(run).lstrip("*")
    east = f"{frame.loc[frame['Region'] == 'East', 'Revenue'].sum():,}"
    assert said.startswith(f"East 的 Revenue 合计：{east}" if zh else f"Total Revenue for East: {east}"), said


def months_by_store(tmp_path):
    """Six months of three stores, a row a month and store (the rows are periods: a store's amount is its total)."""
    import pandas as pd

    rows = [
        (s, f"{m}月", 40 + 17 * m * (i + 1) % 90) for i, s in enumerate(["东门", "西门", "南门"]) for m in range(1, 7)
    ]
    frame = pd.DataFrame(rows, columns=["门店", "月份", "销量"])
    path = tmp_path / "months.csv"
    frame.to_csv(path, index=False)
    return path, frame


@pytest.mark.parametrize("question", ["每个门店的销量是多少？", "How many 销量 did each 门店 sell?"])
def test_an_amount_per_group_over_periods_is_each_groups_total(tmp_path, question):
    """Found in a new user's trial: "每个门店的销量是多少？" compared the stores' average months with a p-value."""
    path, frame = months_by_store(tmp_path)
    run, calls = Session(tmp_path, path).ask(question)
    totals = frame.groupby("门店")["销量"].sum()
    assert any(c.tool == "group_aggregate" and c.arguments.get("agg") == "sum" for c in calls)
    assert f"{totals.max():,}" in headline(run) and totals.idxmax() in headline(run)


@pytest.mark.parametrize("question", ["Which month had the lowest 销量?", "哪个门店的销量最少？"])
def test_the_lowest_asked_leads_with_the_lowest(tmp_path, question):
    """Found in a new user's trial: "Which month had the lowest revenue?" said "1月 has the highest total"."""
    path, frame = months_by_store(tmp_path)
    run, _ = Session(tmp_path, path).ask(question)
    column = "门店" if "门店" in question else "月份"
    totals = frame.groupby(column)["销量"].sum()
    said = headline(run).lstrip("*")
    assert said.startswith(totals.idxmin()) and f"{totals.min():,}" in said and ("最低" in said or "lowest" in said)


def test_an_order_from_the_highest_down_still_leads_with_the_highest(tmp_path):
    """ "Rank the regions by total revenue, from highest to lowest." names the lowest too: it asks for the order."""
    path, frame = shop(tmp_path)
    run, _ = Session(tmp_path, path).ask("Rank the regions by total revenue, from highest to lowest.")
    assert headline(run).lstrip("*").startswith(frame.groupby("Region")["Revenue"].sum().idxmax())


@pytest.mark.parametrize(
    "question, first, second",
    [
        ("东门和西门的销量差多少？", "东门", "西门"),
        ("How much more did 南门 sell than 东门?", "南门", "东门"),
        ("6月的销量比1月增长了多少？", "6月", "1月"),
    ],
)
def test_two_groups_set_against_each_other_are_their_totals_and_the_difference(tmp_path, question, first, second):
    """Found in a new user's trial: "东门和西门的销量差多少？" on a row per store and month compared the stores'
    average months with a p-value, and "6月的销售额比1月增长了多少？" the average rows of two months. Their totals
    are asked, and the difference, which group_aggregate computes (compare), so the check finds it."""
    path, frame = months_by_store(tmp_path)
    run, calls = Session(tmp_path, path).ask(question)
    column = "月份" if first.endswith("月") else "门店"
    totals = frame.groupby(column)["销量"].sum()
    a, b = int(totals[first]), int(totals[second])
    said = headline(run).lstrip("*")
    [aggregate] = [c for c in calls if c.tool == "group_aggregate"]
    assert aggregate.arguments["compare"] == [first, second]
    if question.isascii():
        assert (
            f"Total 销量: {first} {a:,}, {second} {b:,} — {first} {abs(a - b):,} {'more' if a >= b else 'less'}" in said
        )
    else:
        assert said.startswith(
            f"{first} 的 销量 合计 {a:,}，{second} {b:,}：{first} {'多' if a >= b else '少'} {abs(a - b):,}"
        )
    assert f"{(a - b) / b:+.1%}" in said, said
    assert not any(c.tool == "compare_groups" for c in calls)


def monthly_books(tmp_path):
    """A row per store and month over two years, with the month's orders and revenue."""
    import pandas as pd

    rows = [
        (pd.Timestamp(2023 + m // 12, m % 12 + 1, 1), s, 300 + 7 * m + 40 * i, 9000.0 + 210 * m + 1500 * i)
        for m in range(24)
        for i, s in enumerate(["North", "South", "Harbour"])
    ]
    frame = pd.DataFrame(rows, columns=["Month", "Store", "Orders Count", "Revenue"])
    path = tmp_path / "books.csv"
    frame.to_csv(path, index=False)
    return path, frame


@pytest.mark.parametrize(
    "question, year, zh",
    [("How much revenue did we make last year?", 2023, False), ("Revenue是多少？", None, True)],
)
def test_an_amount_of_the_whole_asked_is_its_total(tmp_path, question, year, zh):
    """A new user's trial: "上个月的营业额是多少？" (no grouping named) compared the stores' averages and led with a
    correlation of two other columns. An amount of the whole over periods is its total, the groups after it."""
    path, frame = monthly_books(tmp_path)
    kept = frame[frame["Month"].dt.year == year] if year else frame
    run, calls = Session(tmp_path, path).ask(question)
    said = headline(run).lstrip("*")
    total = f"{kept['Revenue'].sum():,.0f}"
    assert said.startswith(f"Revenue 合计：{total}" if zh else f"Total Revenue: {total}"), said
    assert not any(c.tool in ("compare_groups", "correlation_analysis") and c.task for c in calls)


@pytest.mark.parametrize("question", ["How many orders did we get in 2024?", "Which store has the most orders?"])
def test_things_counted_in_a_column_named_by_their_family_word_are_added_up(tmp_path, question):
    """ "How many orders …" on a table with a column of orders (Orders Count) counted the rows: the word names the
    column by its metric family (orders), so its numbers are added up, not the rows counted."""
    path, frame = monthly_books(tmp_path)
    kept = frame[frame["Month"].dt.year == 2024] if "2024" in question else frame
    run, _ = Session(tmp_path, path).ask(question)
    totals = kept.groupby("Store")["Orders Count"].sum()
    said = headline(run).lstrip("*")
    if "2024" in question:
        assert said.startswith(f"Total Orders Count: {totals.sum():,}"), said
    else:
        assert said.startswith(f"{totals.idxmax()} has the highest total Orders Count: {totals.max():,}"), said
