"""Issue 24 (point 1): general language tools read a column from its header's structure.

- A Chinese compound is right-headed (评分 is a kind of 分, 单价 a kind of 价): a question that uses a
  number's head character as a noun of its own ("学员打的分") names that column, when no other column's
  name holds the character; the tagger tells the noun from a verb ("按讲师分") or a count ("8分").
- A header's bracket may declare a rating scale ("满意度（1-10）"): the column is a rating, a measurement
  to compare between groups, even when the answers given use only a few of its points.

Made-up tables and phrasings (not the evaluation's)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from app.analyst.plan import plan_analysis
from app.understanding.column_forms import declared_scale
from app.understanding.profile_reading import is_scale
from app.understanding.roles import column_mentions, match_kinds
from app.understanding.words import SYNONYMS
from tests.test_builtin_question_reading import seen, step

COURSES = [
    {"name": "讲师", "type": "category"},
    {"name": "课时费（元）", "type": "integer"},
    {"name": "学员评分（1-10）", "type": "integer", "coded": True, "levels": 4},
]


def kinds(question: str, columns: list[dict]) -> dict[str, str]:
    return match_kinds(column_mentions(question, columns, SYNONYMS))


@pytest.mark.parametrize(
    "question",
    ["哪位讲师拿到的分最高？", "线上课和线下课学员打的分一样吗", "学员给的分和课时费有关系吗"],
)
def test_the_head_character_of_a_numbers_name_used_as_a_noun_names_it(question: str) -> None:
    assert kinds(question, COURSES).get("学员评分（1-10）") == "partial"


@pytest.mark.parametrize(
    ("question", "columns"),
    [
        ("按讲师分，课时费最高的是谁？", COURSES),  # 分 is the verb "split"
        ("评到8分以上的课有几节", COURSES),  # 8分 is a count of points, a value
        ("哪位讲师拿到的分最高？", [*COURSES, {"name": "考试得分", "type": "number"}]),  # two names end in 分
        ("哪位讲师拿到的分最高？", [{"name": "讲师", "type": "category"}, {"name": "学员评分", "type": "category"}]),
    ],
)
def test_a_head_character_names_nothing_as_a_verb_a_count_a_shared_head_or_a_category(
    question: str, columns: list[dict]
) -> None:
    assert not any("分" in name for name in kinds(question, columns)), kinds(question, columns)


def test_a_bracket_declares_a_scale_only_of_two_rising_whole_numbers() -> None:
    assert declared_scale("学员评分（1-10）") == (1, 10)
    assert declared_scale("Service rating (0~5)") == (0, 5)
    assert declared_scale("Temperature (°C)") is None
    assert declared_scale("Wait (10-2)") is None
    assert declared_scale("Score 1-5") is None  # no bracket: a name, not a declaration
    few = {"name": "Taste (1-7)", "type": "integer", "coded": True, "levels": 3, "minimum": 4, "maximum": 6}
    assert is_scale(few) and not is_scale({**few, "name": "Taste"})
    assert not is_scale({**few, "coded": False})  # a measured number is no scale of codes


def test_a_declared_scale_of_few_given_points_is_compared_between_the_yes_no_groups(tmp_path: Path) -> None:
    """ "线上学员和线下学员打的分差别大吗": the 1-10 score (only 6 to 9 given) compared between the yes/no
    groups, not the share of online learners at each score."""
    rng = np.random.default_rng(11)
    online = rng.choice(["是", "否"], 80)
    frame = pd.DataFrame(
        {
            "讲师": rng.choice(["李老师", "王老师", "陈老师"], 80),
            "线上？": online,
            "课时费（元）": rng.integers(150, 400, 80),
            "学员评分（1-10）": np.where(online == "是", rng.integers(6, 9, 80), rng.integers(7, 10, 80)),
        }
    )
    path = tmp_path / "courses.csv"
    frame.to_csv(path, index=False)
    plan = plan_analysis("线上学员和线下学员打的分差别大吗？", seen(path), zh=True)
    assert step(plan, "compare_two_groups").arguments == {"value_column": "学员评分（1-10）", "group_column": "线上？"}


# --- the table a unit names -----------------------------------------------------------------------
MILL = {
    "name": "mill",
    "rows": 90,
    "columns": [
        {"name": "仓库", "type": "category", "levels": 4, "values": ["东仓", "西仓", "南仓", "北仓"]},
        {"name": "月份", "type": "datetime"},
        {"name": "销量（吨）", "type": "number"},
        {"name": "运费（元）", "type": "number"},
    ],
}
SHOP = {
    "name": "shop",
    "rows": 200,
    "columns": [
        {"name": "Date", "type": "datetime"},
        {"name": "Till", "type": "category", "levels": 3, "values": ["A", "B", "C"]},
        {"name": "Revenue", "type": "number"},
        {"name": "Customers", "type": "integer"},
    ],
}


def test_a_unit_of_one_tables_number_settles_a_tie_of_everyday_words() -> None:
    """ "sold" is an everyday word for both 销量 and Revenue; "tonnes" is what only the mill's 销量 counts."""
    from app.understanding.dataset_choice import choose_dataset, fit, unit_fit

    chosen = choose_dataset("Which depot sold the most tonnes?", [SHOP, MILL])
    assert (chosen.how, chosen.dataset["name"]) == ("words", "mill")
    # without the unit the words cannot tell: the user is asked
    assert choose_dataset("Which one sold the most?", [SHOP, MILL]).how == "tie"  # no unit named: asked
    # "depot" is 仓库 in the bilingual dictionary (CC-CEDICT): a second column of the mill, so no tie
    assert choose_dataset("Which depot sold the most?", [SHOP, MILL]).dataset["name"] == "mill"
    # a unit both tables count by does not tell them apart
    stocked = {**SHOP, "columns": [*SHOP["columns"], {"name": "进货量（吨）", "type": "number"}]}
    assert (
        unit_fit(
            "Which depot sold the most tonnes?", [fit("Which depot sold the most tonnes?", d) for d in (stocked, MILL)]
        )
        is None
    )


# --- a ranking by nothing named -------------------------------------------------------------------
SALON = {
    "name": "salon",
    "rows": 240,
    "columns": [
        {"name": "Stylist", "type": "category", "levels": 5, "values": ["Ana", "Bo", "Cy", "Dee", "Eli"]},
        {"name": "Haircuts", "type": "integer", "distinct": 30, "minimum": 1, "maximum": 40},
        {"name": "Takings (£)", "type": "number", "distinct": 200, "minimum": 20, "maximum": 900},
        {"name": "Tips (£)", "type": "number", "distinct": 120, "minimum": 0, "maximum": 80},
    ],
}
SALON_ZH = {
    "name": "理发店",
    "rows": 240,
    "columns": [
        {"name": "理发师", "type": "category", "levels": 3, "values": ["小林", "阿杰", "小美"]},
        {"name": "剪发单数", "type": "integer", "distinct": 30, "minimum": 1, "maximum": 40},
        {"name": "小费（元）", "type": "number", "distinct": 120, "minimum": 0, "maximum": 80},
    ],
}


@pytest.mark.parametrize(
    ("question", "dataset", "zh", "quoted"),
    [
        ("Which stylist is the best?", SALON, False, "“best”"),
        ("Who are our top stylists?", SALON, False, "“top”"),
        ("这几位理发师里谁最好？", SALON_ZH, True, "“最好”"),
    ],
)
def test_a_ranking_that_names_no_number_asks_which_number_it_ranks_by(
    question: str, dataset: dict, zh: bool, quoted: str
) -> None:
    from app.analyst.role_question import role_question

    plan = plan_analysis(question, dataset, zh=zh)
    ask = role_question(plan.provenance, plan.metric, zh=zh)
    assert ask is not None and quoted in ask["question"], ask
    assert ask["topic"].endswith(".outcome")
    labels = [o["label"] for o in ask["options"]]
    numbers = [c["name"] for c in dataset["columns"] if c["type"] != "category"]
    assert set(numbers) <= set(labels) and len(labels) == len(numbers) + 1, labels  # and "None of these"


@pytest.mark.parametrize(
    ("question", "dataset"),
    [
        ("Which stylist took the most in tips?", SALON),  # the number is named
        ("Which stylist is the best?", {**SALON, "columns": SALON["columns"][:2]}),  # one number: nothing to choose
    ],
)
def test_a_ranking_by_a_named_number_or_the_only_one_asks_nothing(question: str, dataset: dict) -> None:
    from app.analyst.role_question import role_question

    plan = plan_analysis(question, dataset, zh=False)
    assert role_question(plan.provenance, plan.metric, zh=False) is None
