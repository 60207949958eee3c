"""Columns under a two-row merged header are named by their leaf, never by their group word (issue 24):
a school sheet 基本信息 (姓名, 性别, 班级) / 成绩 (语文, 数学, 英语). "数学成绩" and "English score" name the
leaf the question says; the group word 成绩/score alone names no column (it once picked its first leaf,
语文); "各班" reaches 班级 by its leaf's leading word. Expected figures come from pandas."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest

from analysis_tools.common import fmt_num
from app.understanding.roles import column_mentions
from app.understanding.words import SYNONYMS
from tests.test_builtin_understanding import Session, call, headline

LEAVES = ["姓名", "性别", "班级", "语文", "数学", "英语"]
GROUPS = ["基本信息"] * 3 + ["成绩"] * 3
COLUMNS = [
    {"name": "基本信息 / 姓名", "type": "identifier"},
    {"name": "基本信息 / 性别", "type": "category", "values": ["男", "女"]},
    {"name": "基本信息 / 班级", "type": "category", "values": ["1班", "2班", "3班"]},
    *({"name": f"成绩 / {leaf}", "type": "integer"} for leaf in LEAVES[3:]),
]


def school_sheet(path: Path) -> pd.DataFrame:
    """The workbook with its group row merged over three columns each; the frame pandas reads of it."""
    rng = np.random.default_rng(7)
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(GROUPS)
    sheet.merge_cells("A1:C1")
    sheet.merge_cells("D1:F1")
    sheet.append(LEAVES)
    for i in range(40):
        gender = "男" if rng.random() < 0.5 else "女"
        scores = [int(rng.integers(40, 100)), int(rng.integers(35, 100)), int(rng.integers(45, 100))]
        sheet.append([f"学生{i + 1}", gender, f"{1 + i % 3}班", *scores])
    book.save(path)
    return pd.read_excel(path, header=1)


def named(question: str, columns: list[dict] = COLUMNS) -> list[tuple[str, str]]:
    return [(question[m.start : m.end], m.name) for m in column_mentions(question, columns, SYNONYMS)]


# --- which columns the question names ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "leaf"),
    [("数学成绩最高的3个学生是谁？", "数学"), ("男生和女生的英语成绩有差别吗？", "英语"), ("语文分数的平均值", "语文")],
)
def test_a_leaf_said_with_its_group_word_is_the_leaf(question, leaf):
    assert {name for _, name in named(question)} == {f"成绩 / {leaf}"}


@pytest.mark.parametrize("question", ["成绩怎么样？", "What is the average score?", "How many students scored high?"])
def test_a_group_word_alone_names_no_column(question):
    assert named(question) == []


def test_a_grouping_under_a_group_header_is_named_by_its_leafs_leading_word():
    assert named("各班人数是多少？") == [("班", "基本信息 / 班级")]


def test_a_counted_thing_is_no_number_named_by_its_last_character():
    """ "3个学生" counts the rows: 学 is the last character of 数学, but a number is never what is counted."""
    flat = [
        {"name": "班级", "type": "category"},
        {"name": "数学", "type": "integer"},
        {"name": "语文", "type": "integer"},
    ]
    assert named("成绩最高的3个学生是谁？", flat) == []
    assert named("哪个班人数最多？", flat) == [("班", "班级")]


# --- the answers, end to end -----------------------------------------------------------------------------
@pytest.mark.slow
def test_the_school_sheet_is_answered_about_the_leaves_asked(tmp_path):
    frame = school_sheet(tmp_path / "scores.xlsx")
    session = Session(tmp_path, tmp_path / "scores.xlsx")

    _, calls = session.ask("数学成绩最高的3个学生是谁？")
    ranked = call(calls, "rank_values").arguments
    assert (ranked["value_column"], ranked["top"], ranked["order"]) == ("成绩 / 数学", 3, "largest")
    assert not [c for c in calls if c.tool == "correlation_analysis"]

    run, calls = session.ask("男生和女生的英语成绩有差别吗？")
    compared = call(calls, "compare_two_groups").arguments
    assert (compared["value_column"], compared["group_column"]) == ("成绩 / 英语", "基本信息 / 性别")
    means = frame.groupby("性别")["英语"].mean()
    said = headline(run)  # the two averages, as the headline says two of them: to five digits
    assert all(fmt_num(means[g]) in said or fmt_num(means[g], 5) in said for g in ("女", "男")), said

    run, calls = session.ask("What is the average English score?", language="en")
    assert call(calls, "describe_columns").arguments["columns"] == ["成绩 / 英语"]
    assert fmt_num(frame["英语"].mean()) in headline(run)

    run, calls = session.ask("How many students scored below 60 in math?", language="en")
    kept = call(calls, "filter_rows").arguments["conditions"]
    assert kept == [{"column": "成绩 / 数学", "op": "<", "value": 60}]

    run, calls = session.ask("每个班的数学平均分是多少？")
    compared = call(calls, "compare_groups").arguments
    assert (compared["value_column"], compared["group_column"]) == ("成绩 / 数学", "基本信息 / 班级")
    for group, mean in frame.groupby("班级")["数学"].mean().items():
        assert f"{group} {fmt_num(mean)}" in headline(run)

    run, calls = session.ask("各班人数是多少？")
    assert call(calls, "value_counts").arguments["column"] == "基本信息 / 班级"
    for group, count in frame["班级"].value_counts().items():
        assert f"{group} {count}" in headline(run)
