"""Shares and rates read by the language's grammar and the data's kinds (issue 24 point 3): a Chinese
verb of making up a part (占) with an amount asked after it asks each part's share however the amount
is asked (百分之几, 几成, 多少); a rate asked of something no column is called, on data with one yes/no
column, is that column's rate (an assumed reading), never the sum or share of a number nobody named.

The questions and the table are written for these tests; nothing is read from an evaluation set."""

from __future__ import annotations

import pytest

from app.analyst.plan import plan_analysis
from app.understanding.kinds import asks_share, share_of_whole

DEPOTS = {
    "name": "deliveries",
    "rows": 300,
    "columns": [
        {"name": "Depot", "type": "category", "levels": 3, "values": ["Northgate", "Riverside", "Airport"]},
        {"name": "Weight (kg)", "type": "number", "minimum": 1.0, "maximum": 40.0},
        {"name": "Cost", "type": "number", "minimum": 3.0, "maximum": 90.0},
        {"name": "Late?", "type": "boolean", "levels": 2, "values": ["True", "False"]},
    ],
}


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("各部门的人数分别占全公司的百分之几？", True),
        ("上个月退回的包裹大概占几成？", True),
        ("北区的收入占了多大比重", True),
        ("每个仓库的运费各占多少", True),
        ("哪个仓库占地最大？", False),  # 占地: another word, no part of a whole
        ("哪个仓库的运费最高？", False),
    ],
)
def test_a_part_of_the_whole_is_read_by_its_verb_and_the_amount_asked_after_it(question, asked):
    assert share_of_whole(question) is asked
    assert asks_share(question) is asked


def test_each_part_of_a_named_measure_is_its_share_of_the_total():
    plan = plan_analysis("每个Depot的Cost各占百分之几？", DEPOTS, zh=True)
    assert (plan.kind, plan.metric, plan.dimension) == ("share", "Cost", "Depot")
    assert any(s.tool == "plot_pie" and s.arguments.get("value_column") == "Cost" for s in plan.steps)


@pytest.mark.parametrize(
    ("question", "zh"),
    [("每个Depot误点的单子大概占几成？", True), ("How often does each Depot miss its slot?", False)],
)
def test_a_rate_of_something_no_column_is_called_is_the_lone_yes_no_columns_rate(question, zh):
    plan = plan_analysis(question, DEPOTS, zh=zh)
    assert (plan.kind, plan.metric, plan.dimension) == ("proportion", "Late?", "Depot")
    tested = next(s for s in plan.steps if s.tool == "proportion_test")
    assert (tested.arguments["value_column"], tested.arguments["group_column"]) == ("Late?", "Depot")
    outcome = next(s for s in plan.provenance.sources if s.role == "outcome")
    assert outcome.how == "semantic"  # assumed, shown as such: never "checked" on the reading


def test_a_named_measure_or_two_yes_no_columns_take_no_assumed_rate():
    plan = plan_analysis("What share of Cost does each Depot have?", DEPOTS, zh=False)
    assert plan.metric == "Cost" and plan.kind == "share"
    # the words right after the share's cue are the whole (the rows): a share of the rows, no rate
    plan = plan_analysis("各Depot占包裹数的比例", DEPOTS, zh=True)
    assert (plan.kind, plan.metric, plan.dimension) == ("share", None, "Depot")
    two = {**DEPOTS, "columns": [*DEPOTS["columns"], {"name": "Fragile?", "type": "boolean", "levels": 2}]}
    plan = plan_analysis("How often does each Depot miss its slot?", two, zh=False)
    assert plan.metric != "Late?" or next(s for s in plan.provenance.sources if s.role == "outcome").how != "semantic"


SHOPS = {
    "name": "shops",
    "rows": 18,
    "columns": [
        {"name": "门店", "type": "category", "levels": 3, "values": ["东门", "西门", "南门"]},
        {"name": "销量", "type": "integer", "minimum": 50.0, "maximum": 150.0},
        {"name": "销售额", "type": "integer", "minimum": 900.0, "maximum": 3300.0},
    ],
}


def test_a_share_of_a_measure_named_by_its_family_word_is_that_measures_share():
    """A new user's trial: "What share of total sales does each store have?" on 销量 and 销售额 answered each
    store's share of the rows: "sales" names 销售额 by its metric family (revenue, sales, 营业额 …) — the word
    the analyst already reads for the measure elsewhere — yet the share took no measure as named."""
    plan = plan_analysis("What share of total sales does each store have?", SHOPS, zh=False)
    assert (plan.kind, plan.metric, plan.dimension) == ("share", "销售额", "门店")
    plan = plan_analysis("各门店的订单占比是多少？", SHOPS, zh=True)  # orders: no column of that family
    assert (plan.kind, plan.metric) == ("share", None)
