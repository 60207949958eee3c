"""Designs the built-in analyst reads from the data and the question (issue 14): two columns measured
on each row (a wide paired design), data tasks done as data operations, averages per row against
totals, and the direction of a relationship in plain words.

Plans are read from small frames through the real profile; the end-to-end runs go through the
harness. Expected numbers are computed here with pandas/scipy, never read from Verity's output.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis_tools.common import fmt_num
from analysis_tools.core import profile_dataset
from app.agent.builtin_plan import plan_analysis
from app.agent.intent import decide
from app.agent.profile_reading import read_profile
from app.agent.toolbox import tool_message_content
from app.agent.wide_pairs import marked_pairs, same_scale
from app.workspaces import dataset_summary, describe_columns_of


def seen(frame: pd.DataFrame, name: str = "data") -> dict:
    """The dataset summary as the analyst reads it after its profile_dataset call."""
    dataset = SimpleNamespace(name=name, rows=len(frame), file_name=f"{name}.csv", sheet=None,
                              info={"columns": describe_columns_of(frame)})
    return read_profile(dataset_summary(dataset, frame), tool_message_content(profile_dataset(frame)))


def task_steps(question: str, frame: pd.DataFrame) -> list[tuple[str, dict]]:
    zh = any("\u4e00" <= ch <= "\u9fff" for ch in question)
    return [(s.tool, s.arguments) for s in plan_analysis(question, seen(frame), zh).steps if s.task]


RNG = np.random.default_rng(7)
N = 30


def pressure() -> pd.DataFrame:
    before = RNG.normal(150, 12, N).round(0)
    return pd.DataFrame({"Sex": RNG.choice(["F", "M"], N), "Age": RNG.integers(30, 80, N),
                         "Systolic Before": before, "Systolic After": (before - RNG.normal(8, 6, N)).round(0)})


def pressure_zh() -> pd.DataFrame:
    frame = pressure()
    return pd.DataFrame({"性别": frame["Sex"].map({"F": "女", "M": "男"}), "年龄": frame["Age"],
                         "治疗前血压": frame["Systolic Before"], "治疗后血压": frame["Systolic After"]})


def hands() -> pd.DataFrame:
    writing = RNG.normal(18.7, 1.8, N).round(1)
    return pd.DataFrame({"Sex": RNG.choice(["Female", "Male"], N), "Wr.Hnd": writing,
                         "NW.Hnd": (writing - RNG.normal(0.2, 0.5, N)).round(1), "Height": RNG.normal(172, 9, N).round(1)})


def mileage() -> pd.DataFrame:
    city = RNG.integers(11, 28, N)
    return pd.DataFrame({"manufacturer": RNG.choice(["audi", "ford", "honda"], N),
                         "displ": RNG.uniform(1.6, 5, N).round(1), "cty": city, "hwy": city + RNG.integers(3, 10, N)})


# --- 1. wide paired designs ----------------------------------------------------------------------
PAIRED = [
    ("Did systolic pressure drop after the treatment?", pressure, ("Systolic After", "Systolic Before")),
    ("Is blood pressure lower after than before?", pressure, ("Systolic After", "Systolic Before")),
    ("治疗后血压是不是降了？", pressure_zh, ("治疗后血压", "治疗前血压")),
    ("血压降了吗", pressure_zh, ("治疗后血压", "治疗前血压")),
    ("Is the writing hand span bigger than the other hand?", hands, ("Wr.Hnd", "NW.Hnd")),
    ("Is NW.Hnd smaller than Wr.Hnd?", hands, ("NW.Hnd", "Wr.Hnd")),
    ("Do cars get more miles per gallon on the highway than in the city?", mileage, ("hwy", "cty")),
    ("Is there a difference between city and highway mileage?", mileage, ("cty", "hwy")),
    ("城市油耗cty比高速hwy低吗？", mileage, ("cty", "hwy")),
]


@pytest.mark.parametrize("question, frame, pair", PAIRED)
def test_two_columns_measured_on_each_row_are_compared_row_by_row(question, frame, pair):
    steps = task_steps(question, frame())
    assert steps == [("paired_test", {"x_column": pair[0], "y_column": pair[1], "method": "t"})]


NOT_PAIRED = [
    ("Is the writing hand span related to height?", hands, "correlation_analysis"),
    ("Do systolic before and systolic after move together?", pressure, None),  # no change asked: not a paired test
    ("Is systolic pressure after treatment different between men and women?", pressure, "compare_two_groups"),
    ("Are older patients' systolic pressure higher than younger ones?", pressure, None),
    ("Is displ bigger than cty?", mileage, None),  # litres and miles per gallon: not one scale
    ("The more hwy, the more cty?", mileage, "correlation_analysis"),
]


@pytest.mark.parametrize("question, frame, expected", NOT_PAIRED)
def test_other_questions_on_such_tables_are_not_paired(question, frame, expected):
    tools = [tool for tool, _ in task_steps(question, frame())]
    assert "paired_test" not in tools
    if expected:
        assert expected in tools


def test_names_differing_by_a_marker_or_a_number_are_pairs():
    names = ["Systolic Before", "Systolic After", "pressure", "pre_score", "post_score", "Sales 2023", "Sales 2024",
             "治疗前血压", "治疗后血压", "Wr.Hnd", "NW.Hnd"]
    assert {(a, b) for a, b, _ in marked_pairs(names)} == {
        ("Systolic Before", "Systolic After"), ("pre_score", "post_score"), ("Sales 2023", "Sales 2024"),
        ("治疗前血压", "治疗后血压")}


def test_same_scale_needs_overlapping_ranges():
    assert same_scale({"minimum": 11, "maximum": 35}, {"minimum": 12, "maximum": 44})
    assert not same_scale({"minimum": 1.6, "maximum": 7}, {"minimum": 9, "maximum": 35})
    assert not same_scale({"minimum": 0, "maximum": 200}, {"minimum": 150, "maximum": 2000})
    assert not same_scale({"minimum": 1}, {"minimum": 1, "maximum": 3})


def test_a_measure_that_drops_is_not_a_data_task():
    assert decide("Did systolic pressure drop after the treatment?").kind != "data_prep"
    assert decide("Drop the rows where Ozone is missing").kind == "data_prep"
    assert decide("drop duplicates").kind == "data_prep"


@pytest.mark.slow
def test_a_wide_paired_question_runs_a_paired_test_with_a_plain_headline(tmp_path):
    from tests.test_builtin_understanding import Session, call, headline

    frame = pressure()
    path = tmp_path / "pressure.csv"
    frame.to_csv(path, index=False)
    session = Session(tmp_path, path)
    run, calls = session.ask("Did systolic pressure drop after the treatment?")
    test = call(calls, "paired_test")
    difference = frame["Systolic After"] - frame["Systolic Before"]
    assert test.metrics["p_value"] == pytest.approx(stats.ttest_rel(frame["Systolic After"], frame["Systolic Before"]).pvalue)
    assert not any(c.tool in ("compare_two_groups", "correlation_analysis") for c in calls) and not session.asked
    assert headline(run).startswith(f"**On the same {N} rows, Systolic After is on average {fmt_num(-difference.mean())} "
                                    f"lower than Systolic Before (lower in {int((difference < 0).sum())} of {N} rows)")

    zh = pressure_zh()
    path = tmp_path / "血压.csv"
    zh.to_csv(path, index=False)
    session = Session(tmp_path / "zh", path)
    run, calls = session.ask("治疗后血压是不是降了？")
    assert call(calls, "paired_test").arguments["x_column"] == "治疗后血压"
    drop = (zh["治疗前血压"] - zh["治疗后血压"]).mean()
    assert headline(run).startswith(f"**在同样的 {N} 行上，治疗后血压 平均比 治疗前血压 低 {fmt_num(drop)}")


def _path(tmp_path: Path, frame: pd.DataFrame, name: str) -> Path:
    path = tmp_path / f"{name}.csv"
    frame.to_csv(path, index=False)
    return path
