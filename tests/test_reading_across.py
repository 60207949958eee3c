"""Readings of everyday questions where the words name a column in a way the rules alone miss (issue
24): a merged group header said beside its leaf, ... — each on a small sheet made here."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from app.analyst import past_the_reading
from app.analyst.plan import plan_analysis
from app.analyst.scope import negated, yes_no_filter
from app.db.models import Run
from app.evaluation.runner import settle
from app.understanding import wide_pairs
from app.understanding.compound import split_compound
from app.understanding.roles import named_values
from tests.factories import setup, start_run


def _columns(*specs: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"name": name, "type": kind} for name, kind in specs]


WORKSHOP = {
    "name": "output",
    "columns": _columns(
        ("日期", "datetime"),
        ("鸡舍", "category"),
        ("产蛋量（枚） / 上午", "number"),
        ("产蛋量（枚） / 下午", "number"),
        ("耗电（度）", "number"),
    ),
}


def test_a_group_header_beside_its_named_leaf_names_that_leaf() -> None:
    # 上午 names "产蛋量（枚） / 上午"; 产蛋量 is its group header, not a word for the other leaf (下午)
    plan = plan_analysis("按鸡舍算，上午产蛋量加起来最多的是哪两个鸡舍？", WORKSHOP, zh=True)
    assert plan.metric == "产蛋量（枚） / 上午"
    assert plan.dimension == "鸡舍"


COURSE = {
    "name": "course",
    "columns": [
        {"name": "Learner", "type": "identifier"},
        {"name": "Coach", "type": "category", "levels": 4},
        {"name": "Typing Speed (wpm) / Before", "type": "number", "minimum": 10, "maximum": 60},
        {"name": "Typing Speed (wpm) / After", "type": "number", "minimum": 15, "maximum": 80},
    ],
}


def test_a_marker_in_the_other_language_picks_its_side_of_a_marked_pair() -> None:
    # 速度 reaches the pair by what it shares; 后 (a word of its own) says the later one
    plan = plan_analysis("培训后的打字速度，平均最低的是哪两位教练的学员？", COURSE, zh=True)
    assert plan.metric == "Typing Speed (wpm) / After"
    plan = plan_analysis("培训前的打字速度，平均最低的是哪两位教练的学员？", COURSE, zh=True)
    assert plan.metric == "Typing Speed (wpm) / Before"
    # the 后 of 以后 or 最后 is no marker
    assert wide_pairs.sides_said("最后一名是谁？以后呢？") == frozenset()
    assert wide_pairs.sides_said("辅导后比辅导前") == {0, 1}


COMPLAINTS: dict[str, Any] = {
    "name": "complaints",
    "columns": [
        {"name": "Case", "type": "identifier"},
        {"name": "Category", "type": "category", "levels": 3, "values": ["Noise", "Parking", "Litter"]},
        {"name": "Fine (£)", "type": "number"},
    ],
}
PETS: dict[str, Any] = {
    "name": "pets",
    "columns": [
        {"name": "宠物", "type": "category", "levels": 3, "values": ["兔子", "仓鼠", "鹦鹉"]},
        {"name": "体重（克）", "type": "number"},
    ],
}


def test_a_value_is_named_in_the_other_language_by_a_word_that_is_it() -> None:
    # 停车: "to park; parking" — the value Parking; 噪音 "noise" — Noise
    assert named_values("只看停车方面的投诉", COMPLAINTS["columns"], []) == ("Category", ["Parking"])
    assert named_values("噪音和停车比，哪个罚得多？", COMPLAINTS["columns"], []) == ("Category", ["Noise", "Parking"])
    # "rabbits" is what 兔子 is, and "parrots" what 鹦鹉 is
    assert named_values("do rabbits weigh more than parrots?", PETS["columns"], []) == ("宠物", ["兔子", "鹦鹉"])
    # a word that only shares a word with a value's gloss is not it: 牛奶 ("cow's milk") is no Cow
    cows = [{"name": "Animal", "type": "category", "levels": 2, "values": ["Cow", "Goat"]}]
    assert named_values("牛奶卖了多少？", cows, []) == (None, [])


def _stall(grain: str) -> dict[str, Any]:
    return {
        "name": "stall",
        "rows": 120,
        "grain": grain,
        "columns": [
            {"name": "日期", "type": "datetime"},
            {"name": "天气", "type": "category", "levels": 2, "values": ["晴", "阴"]},
            {"name": "销售额", "type": "number", "minimum": 100, "maximum": 900},
        ],
    }


def test_the_average_per_day_on_one_row_a_day_is_the_rows_average() -> None:
    question = "晴天和阴天比，平均每天的销售额差多少？"
    daily = plan_analysis(question, _stall("daily"), zh=True)
    assert daily.metric == "销售额" and daily.dimension == "天气"
    assert not any(s.arguments.get("kind") == "date_part" for s in daily.steps)
    # several rows a day: a day's figure adds up its rows, so the days are made first
    several = plan_analysis(question, _stall("daily (several rows per date)"), zh=True)
    assert any(s.arguments.get("kind") == "date_part" for s in several.steps)


def test_a_one_character_value_standing_as_a_noun_of_its_own_is_named() -> None:
    poultry = [{"name": "禽类", "type": "category", "levels": 3, "values": ["鸡", "鸭", "鹅"]}]
    assert named_values("其中鹅有几只？", poultry, []) == ("禽类", ["鹅"])
    # inside a longer word, or a bound morpheme, it is not the value (鸭血 is a dish, 鸡蛋 an egg)
    assert named_values("鸭血和鸡蛋卖了多少？", poultry, []) == (None, [])


def test_a_count_of_rows_past_a_cut_counts_the_kept_rows(tmp_path: Path) -> None:
    # 价格 beside the cut says which rows are counted: it is not added up, and the count is of the kept rows
    frame = pd.DataFrame(
        {
            "订单号": [f"D{i:03d}" for i in range(30)],
            "类别": ["文具", "玩具", "食品"] * 10,
            "价格": [20 + 9 * i for i in range(30)],
        }
    )
    path = tmp_path / "orders.csv"
    frame.to_csv(path, index=False)
    kept = int((frame["价格"] > 100).sum())
    assert kept not in (30, int(frame.loc[frame["价格"] > 100, "价格"].sum()))
    settings, db, service, ws = setup(tmp_path, path)
    run_id = start_run(service, ws, "价格超过100元的订单一共有多少个？")
    settle(service, run_id, {})
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "done", run.error
        headline = past_the_reading(run.answer).split("\n")[0]
    assert re.search(rf"(?<![\d,.]){kept}(?![\d.])", headline), headline


def test_a_question_word_after_a_preposition_opens_a_question_of_its_own() -> None:
    assert split_compound("What was the total footfall, and on how many days did it snow?") == [
        "What was the total footfall?",
        "on how many days did it snow?",
    ]
    assert split_compound("Compare footfall and sales by weekday") == ["Compare footfall and sales by weekday"]


def _kiosk(grain: str) -> dict[str, Any]:
    return {
        "name": "kiosk",
        "rows": 90,
        "grain": grain,
        "columns": [
            {"name": "Date", "type": "datetime"},
            {"name": "Snow?", "type": "boolean", "levels": 2},
            {"name": "Footfall", "type": "integer", "minimum": 10, "maximum": 400},
        ],
    }


def test_on_one_row_a_day_how_many_days_counts_the_rows() -> None:
    plan = plan_analysis("On how many days did it snow?", _kiosk("daily"), zh=False)
    assert plan.kind == "count" and plan.dimension == "Snow?"
    assert [s.tool for s in plan.steps] == ["profile_dataset", "value_counts"]
    # several rows a day: the days are no rows to count
    assert (
        plan_analysis("On how many days did it snow?", _kiosk("daily (several rows per date)"), zh=False).kind
        != "count"
    )


def test_a_negator_before_a_passive_leaves_those_rows_out() -> None:
    # 没被录取: "not (been) admitted" — 被 marks the passive between the negator and the verb
    assert negated("没被录取的学生有多少个？", "录取")
    columns = [{"name": "是否录取", "type": "boolean", "levels": 2, "words": {"true": "是", "false": "否"}}]
    assert yes_no_filter("没被录取的学生有多少个？", columns) == {
        "column": "是否录取",
        "op": "==",
        "value": "否",
        "negated": True,
    }


STANDS = {
    "name": "stands",
    "columns": [
        {"name": "Stand", "type": "category", "levels": 3},
        {"name": "Minutes Staffed", "type": "number", "minimum": 30, "maximum": 300},
        {"name": "Days Late", "type": "integer", "minimum": 0, "maximum": 9},
        {"name": "Tickets Sold", "type": "integer", "minimum": 5, "maximum": 200},
    ],
}


def test_a_rate_per_unit_of_time_divides_by_the_named_column_that_says_that_unit() -> None:
    # "per minute we're staffed": Minutes Staffed, whose name says its unit, named by the question
    plan = plan_analysis("Which stand sells the most tickets per minute we're staffed?", STANDS, zh=False)
    assert plan.kind == "per_unit" and plan.dimension == "Stand"
    made = next(s for s in plan.steps if s.tool == "derive_column")
    assert made.arguments["expression"] == "`Tickets Sold_sum` / `Minutes Staffed_sum`"
    # a unit word in the name of a column the question does not name is no denominator
    assert plan_analysis("Which stand sells the most tickets per day?", STANDS, zh=False).kind != "per_unit"


def test_a_number_named_past_the_cuts_clause_is_no_column_of_the_cut() -> None:
    produce = {
        "name": "produce",
        "columns": [
            {"name": "摊位", "type": "category", "levels": 4},
            {"name": "交易 / 单价（元/斤）", "type": "number", "minimum": 2, "maximum": 30},
            {"name": "交易 / 销量（斤）", "type": "integer", "minimum": 10, "maximum": 500},
        ],
    }
    # 卖出 names 销量 after the comma: what is added up, not which rows the cut keeps
    plan = plan_analysis("只看超过10块的那些记录，一共卖出去多少斤？", produce, zh=True)
    assert plan.kind != "count"


def test_a_rate_per_a_unit_spelt_out_divides_by_the_column_in_its_symbol() -> None:
    # "per kilometre" of Distance (km), "per kilogram" of Weight (kg): the symbol is the word clipped
    vans = {
        "name": "vans",
        "columns": [
            {"name": "Depot", "type": "category", "levels": 3},
            {"name": "Fuel (l)", "type": "number", "minimum": 5, "maximum": 80},
            {"name": "Distance (km)", "type": "number", "minimum": 20, "maximum": 600},
            {"name": "Load (kg)", "type": "number", "minimum": 100, "maximum": 900},
        ],
    }
    for said, unit in (("kilometre", "Distance (km)"), ("kilogram", "Load (kg)")):
        plan = plan_analysis(f"How much Fuel do the vans use per {said} at each depot?", vans, zh=False)
        assert plan.kind == "per_unit" and plan.dimension == "Depot"
        made = next(s for s in plan.steps if s.tool == "derive_column")
        assert made.arguments["expression"] == f"`Fuel (l)_sum` / `{unit}_sum`"
    # a unit of time is read by its time column, not as a clipped symbol ("per minute" is no "mi")
    assert plan_analysis("How much Fuel do the vans use per minute?", vans, zh=False).kind != "per_unit"
