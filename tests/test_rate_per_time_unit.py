"""A rate per unit of time whose column is measured in that unit in either language (issue 24, derived
quantities): "money per hour taught" divides by 课时（小时）, "per hour" by Duration (hrs); the unit of
time is read by kinds.unit_seconds (app.numbers' time units, both languages), not by pandas' English
abbreviations alone. When the question asks which groups rank highest and names none by its column's
name, the groups are the ones the analyst takes for its words (an assumed reading), and each group's
rate is its total over its total. Workbooks are built here; expected figures are computed with pandas."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis_tools.common import fmt_num
from app.understanding.kinds import unit_seconds
from tests.test_builtin_understanding import Session, call, headline


@pytest.mark.parametrize(
    ("unit", "seconds"),
    [("小时", 3600.0), ("hrs", 3600.0), ("分钟", 60.0), ("days", 86400.0), ("元", None), ("km", None)],
)
def test_a_unit_of_time_in_either_language(unit, seconds):
    assert unit_seconds(unit) == seconds


def lessons(path: Path) -> pd.DataFrame:
    """300 lessons under Chinese headers: the teacher, the subject, its hours and its fee."""
    rng = np.random.default_rng(17)
    n = 300
    subject = rng.choice(["钢琴", "数学", "英语", "绘画"], n)
    hourly = {"钢琴": 180.0, "数学": 120.0, "英语": 100.0, "绘画": 80.0}
    hours = rng.choice([1.0, 1.5, 2.0], n)
    frame = pd.DataFrame(
        {
            "编号": [f"L{i:04d}" for i in range(n)],
            "老师": rng.choice(["周老师", "吴老师", "郑老师", "冯老师", "陈老师"], n),
            "科目": subject,
            "课时（小时）": hours,
            "学费（元）": [round(hourly[s] * h * rng.uniform(0.85, 1.15), 1) for s, h in zip(subject, hours)],
        }
    )
    frame.to_csv(path, index=False)
    return frame


def workshops(path: Path) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    n = 240
    frame = pd.DataFrame(
        {
            "Booking": [f"B{i:04d}" for i in range(n)],
            "Workshop": rng.choice(["Pottery", "Weaving", "Glass", "Printing"], n),
            "Duration (hrs)": rng.uniform(1.5, 4.0, n).round(1),
            "Income": rng.gamma(4, 30, n).round(2),
        }
    )
    frame.to_csv(path, index=False)
    return frame


def rates(frame: pd.DataFrame, group: str, top: str, bottom: str) -> pd.Series:
    sums = frame.groupby(group)[[top, bottom]].sum()
    return (sums[top] / sums[bottom]).sort_values(ascending=False)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("make", "name", "question", "group", "top", "bottom"),
    [
        (
            lessons,
            "课程.csv",
            "Which two subjects bring in the most money per hour taught?",
            "科目",
            "学费（元）",
            "课时（小时）",
        ),
        (
            workshops,
            "workshops.csv",
            "Which workshop makes the most Income per hour?",
            "Workshop",
            "Income",
            "Duration (hrs)",
        ),
    ],
)
def test_the_groups_rate_per_hour_is_their_total_over_their_hours(tmp_path, make, name, question, group, top, bottom):
    path = tmp_path / "data" / name
    path.parent.mkdir(parents=True)
    frame = make(path)
    run, calls = Session(tmp_path, path).ask(question)
    ratio = call(calls, "derive_column")
    assert ratio.arguments["expression"] == f"`{top}_sum` / `{bottom}_sum`"
    assert call(calls, "rank_values").arguments["group_column"] == group
    expected = rates(frame, group, top, bottom)
    assert all(f"{g} {fmt_num(v)}" in headline(run) for g, v in expected.items())


@pytest.mark.parametrize(
    ("name", "unit"),
    [("时长（小时）", True), ("Weight (kg)", True), ("Fee ($)", True), ("评分(1-5)", False), ("Rating (1–10)", False)],
)
def test_a_bracketed_unit_says_a_measurement(name, unit):
    from app.understanding.profile_reading import measured_in_a_unit

    assert measured_in_a_unit(name) is unit


def test_money_per_hour_of_whole_hours_and_a_verb_for_money(tmp_path):
    """ "平均每小时收费多少？" where every job lasts 2, 3, 4 or 5 whole hours: 时长（小时） is an amount (its bracket
    says a unit), not a code of four groups, and 收费 (CC-CEDICT: "to charge a fee") asks the money column."""
    rng = np.random.default_rng(21)
    n = 160
    hours = rng.choice([2, 3, 4, 5], n)
    frame = pd.DataFrame(
        {
            "阿姨": rng.choice(["王阿姨", "李阿姨", "张阿姨"], n),
            "时长（小时）": hours,
            "金额（元）": hours * rng.choice([50, 60, 70], n),
        }
    )
    path = tmp_path / "jobs.csv"
    frame.to_csv(path, index=False)
    run, calls = Session(tmp_path, path).ask("平均每小时收费多少？")
    row_by_row = (frame["金额（元）"] / frame["时长（小时）"]).mean()
    whole = frame["金额（元）"].sum() / frame["时长（小时）"].sum()
    said = headline(run)
    assert fmt_num(row_by_row) in said or fmt_num(whole) in said, said
    assert "金额（元） ÷ 时长（小时）" in said and " per " not in said, said  # named in the sheet's language
