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
