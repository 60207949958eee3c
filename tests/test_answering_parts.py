"""Derived quantities and compound questions answered in full (issue 24, the answering): "per hour"
divides by a column whose name counts hours without brackets (Hours Open), each group's total over
its total; a second question opened by a preposition ("…, and on how many days did it rain?") is a
question of its own, answered beside the first. Sheets are built here; expected figures are computed
with pandas."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis_tools.common import fmt_num
from app.analyst import past_the_reading
from app.understanding.compound import split_compound
from tests.test_builtin_understanding import Session, call, headline

pytestmark = pytest.mark.slow


def stalls(path: Path) -> pd.DataFrame:
    """One row per day: the market stall that traded, how long it was open, its takings, the weather."""
    rng = np.random.default_rng(11)
    n = 150
    stall = rng.choice(["Harbour", "Station", "Park"], n)
    hours = rng.choice([3.0, 4.5, 6.0, 7.5], n)
    rate = {"Harbour": 210.0, "Station": 160.0, "Park": 95.0}
    frame = pd.DataFrame(
        {
            "Day": pd.date_range("2024-03-01", periods=n, freq="D"),
            "Stall": stall,
            "Hours Open": hours,
            "Takings": [round(rate[s] * h * rng.uniform(0.8, 1.2), 2) for s, h in zip(stall, hours)],
            "Wet": rng.choice(["Yes", "No"], n, p=[0.35, 0.65]),
        }
    )
    frame.to_csv(path, index=False)
    return frame


def test_per_hour_divides_by_the_column_that_counts_hours(tmp_path):
    path = tmp_path / "data" / "stalls.csv"
    path.parent.mkdir(parents=True)
    frame = stalls(path)
    run, calls = Session(tmp_path, path).ask("Which stall brings in the most Takings per hour open?")
    assert call(calls, "derive_column").arguments["expression"] == "`Takings_sum` / `Hours Open_sum`"
    sums = frame.groupby("Stall")[["Takings", "Hours Open"]].sum()
    rates = (sums["Takings"] / sums["Hours Open"]).sort_values(ascending=False)
    said = headline(run)
    assert said.index(rates.index[0]) < said.index(rates.index[-1])
    assert all(f"{stall} {fmt_num(v)}" in said for stall, v in rates.items()), said


def test_a_second_question_opened_by_a_preposition_is_split():
    assert split_compound("What were the total takings, and on how many days was it wet?") == [
        "What were the total takings?",
        "on how many days was it wet?",
    ]
    assert split_compound("Compare takings and hours by stall") == ["Compare takings and hours by stall"]


def test_both_parts_are_answered(tmp_path):
    path = tmp_path / "data" / "stalls.csv"
    path.parent.mkdir(parents=True)
    frame = stalls(path)
    run, _ = Session(tmp_path, path).ask("What were the total Takings, and on how many days was it Wet?")
    answer = past_the_reading(run.answer)
    assert fmt_num(frame["Takings"].sum()) in answer, answer
    assert f"{fmt_num(int((frame['Wet'] == 'Yes').sum()))} of {len(frame)}" in answer, answer


def test_which_period_was_busiest_after_counting_each_period(tmp_path):
    """ "How many … each month, and which month was the busiest?": the second part names no measure and
    groups by the same months, so the first part's counts answer it (their highest is said), rather than
    a default measure totalled for "busiest" or a question about what it measures."""
    rng = np.random.default_rng(4)
    n = 240
    frame = pd.DataFrame(
        {
            "Ticket": [f"T{i:04d}" for i in range(n)],
            "Opened": pd.to_datetime("2024-01-01") + pd.to_timedelta(rng.integers(0, 180, n), unit="D"),
            "Team": rng.choice(["Desk", "Field"], n),
            "Minutes Spent": rng.integers(5, 240, n),
            "Refund": rng.choice([0, 0, 0, 20, 50], n),
            "Solved": rng.choice(["Yes", "No"], n),
        }
    )
    path = tmp_path / "data" / "tickets.csv"
    path.parent.mkdir(parents=True)
    frame.to_csv(path, index=False)
    run, calls = Session(tmp_path, path).ask(
        "How many tickets were opened each month, and which month was the busiest?"
    )
    months = frame["Opened"].dt.to_period("M").value_counts()
    said = headline(run)
    assert f"Highest: {months.idxmax().strftime('%b %Y')} ({fmt_num(months.max())})" in said, said
    assert not any(c.tool == "ask_user_question" for c in calls)
    # no default measure totalled per month for "busiest"
    assert all(not c.arguments.get("value_columns") for c in calls if c.tool == "group_aggregate")


def test_the_average_per_day_of_one_row_per_day_compares_the_rows(tmp_path):
    """ "平均每天的营业额" on a table with one row per day: each row is a day's figure, so the groups' averages
    are compared — not a list of each day's average."""
    rng = np.random.default_rng(6)
    n = 150
    frame = pd.DataFrame(
        {
            "日期": pd.date_range("2024-02-01", periods=n, freq="D"),
            "门店": rng.choice(["东门店", "西门店"], n),
            "营业额（元）": rng.normal(1200, 300, n).round(2),
            "是否下雨": rng.choice(["是", "否"], n, p=[0.3, 0.7]),
        }
    )
    path = tmp_path / "data" / "日营业.csv"
    path.parent.mkdir(parents=True)
    frame.to_csv(path, index=False)
    run, calls = Session(tmp_path, path).ask("下雨的日子和不下雨的日子，平均每天的营业额分别是多少？")
    compare = next(c for c in calls if c.tool in ("compare_groups", "compare_two_groups"))
    assert (compare.arguments["value_column"], compare.arguments["group_column"]) == ("营业额（元）", "是否下雨")
    means = frame.groupby("是否下雨")["营业额（元）"].mean()
    said = headline(run)
    assert fmt_num(means["是"]) in said and fmt_num(means["否"]) in said, said


def test_a_group_of_one_row_left_out_of_the_comparison_is_said_in_the_caveats(tmp_path):
    rng = np.random.default_rng(9)
    teams = [*rng.choice(["Red", "Blue", "Gold"], 89), "Solo"]
    frame = pd.DataFrame({"Team": teams, "Score": rng.normal(60, 10, 90).round(1)})
    path = tmp_path / "data" / "scores.csv"
    path.parent.mkdir(parents=True)
    frame.to_csv(path, index=False)
    run, calls = Session(tmp_path, path).ask("Does the Score differ between the teams?")
    assert call(calls, "compare_groups").arguments["group_column"] == "Team"
    caveats = run.answer.split("### Caveats", 1)[1]
    assert "Solo of Team has one row only" in caveats, run.answer
