"""Readings of everyday questions where the words name a column in a way the rules alone miss (issue
24): a merged group header said beside its leaf, ... — each on a small sheet made here."""

from __future__ import annotations

from typing import Any

from app.analyst.plan import plan_analysis
from app.understanding import wide_pairs


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
