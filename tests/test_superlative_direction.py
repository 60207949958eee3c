"""Which end a superlative of speed means depends on the measure (issue 24): the quickest by a length of
time ("Repair time (hours)", "用时（分钟）") is the smallest time, the slowest the largest; on a speed
("Download (Mbps)") the fastest is the largest. The measure's own unit tells which, not the question's
wording alone. Workbooks are built here; every expected figure is computed with pandas."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis_tools.common import fmt_num
from app.understanding.kinds import asks_extreme, asks_top, measured_in_time
from tests.test_builtin_understanding import Session, call, headline

MECHANICS = ["Ines", "Olu", "Piet", "Rosa", "Sami", "Tove", "Umar"]


def repairs(path: Path) -> pd.DataFrame:
    """420 repairs by seven mechanics: the hours each took and the bill."""
    rng = np.random.default_rng(21)
    n = 420
    mechanic = rng.choice(MECHANICS, n)
    pace = {m: rng.uniform(1.5, 4.0) for m in MECHANICS}
    frame = pd.DataFrame(
        {
            "Job": [f"J{i:04d}" for i in range(n)],
            "Mechanic": mechanic,
            "Repair time (hours)": [round(pace[m] * rng.uniform(0.6, 1.4), 2) for m in mechanic],
            "Bill": rng.gamma(3, 90, n).round(2),
        }
    )
    frame.to_csv(path, index=False)
    return frame


@pytest.mark.parametrize(
    ("measure", "timed"),
    [
        ("Repair time (hours)", True),
        ("用时（分钟）", True),
        ("Wait (secs)", True),
        ("Download (Mbps)", False),
        ("Bill", False),
        (None, False),
    ],
)
def test_a_measure_is_a_length_of_time_by_its_unit(measure, timed):
    assert measured_in_time(measure) is timed


@pytest.mark.parametrize(
    ("question", "measure", "extreme"),
    [
        ("Which mechanic is the quickest?", "Repair time (hours)", "least"),
        ("Which mechanic is the slowest?", "Repair time (hours)", "most"),
        ("哪个师傅修得最快？", "用时（分钟）", "least"),
        ("Which router is the fastest?", "Download (Mbps)", "most"),
        ("Which router is the slowest?", "Download (Mbps)", "least"),
        ("Which mechanic is the cheapest?", "Repair time (hours)", "least"),  # not a word of speed: as written
    ],
)
def test_a_superlative_of_speed_takes_its_end_from_the_measure(question, measure, extreme):
    assert asks_extreme(question, measure) == extreme


def test_the_n_quickest_by_a_time_are_the_bottom_n_and_by_a_speed_the_top_n():
    assert asks_top("the 3 fastest mechanics by repair time", "Repair time (hours)") == (3, True)
    assert asks_top("the 3 fastest routers", "Download (Mbps)") == (3, False)
    assert asks_top("the 3 slowest mechanics", "Repair time (hours)") == (3, False)


@pytest.mark.slow
def test_the_quickest_mechanics_have_the_smallest_average_time(tmp_path):
    path = tmp_path / "data" / "repairs.csv"
    path.parent.mkdir(parents=True)
    frame = repairs(path)
    run, calls = Session(tmp_path, path).ask("Which two mechanics are quickest, by their average repair time?")
    means = frame.groupby("Mechanic")["Repair time (hours)"].mean().nsmallest(2)
    # seven mechanics fit the totals table: every group's average is read, the lowest two named
    table = call(calls, "group_aggregate")
    assert table.arguments["group_columns"] == ["Mechanic"] and table.arguments["agg"] == "mean"
    expected = "; ".join(f"{i}. {m} {fmt_num(v)}" for i, (m, v) in enumerate(means.items(), 1))
    assert expected in headline(run)


@pytest.mark.parametrize(
    "question",
    [
        "前" + "9" * 5000 + "名",
        "top " + "9" * 5000 + " stores",
        "which " + "9" * 5000 + " stores are best",
        "the " + "9" * 5000 + " customers with the highest fee",
        "the " + "9" * 5000 + " most expensive orders",
    ],
)
def test_a_number_too_long_to_be_a_count_asks_no_top_n(question):
    """Past 4,300 digits int() refuses a number: the question stopped the run (ValueError). A number
    longer than a count ever is asks for no top N at all."""
    assert asks_top(question) is None
    assert asks_top("top 12 stores") == (12, False)
