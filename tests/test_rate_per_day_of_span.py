"""A rate per day of rows that each run from one date to another (issue 24, derived quantities): "the charge
per day" of a hire, a stay or a loan divides each row's amount by the days between its two dates — a column
made first, as a data step — and is then answered like any other rate per unit (per group: the group's total
over its days; without a group: each row's rate, averaged). On a table with one date "per day" stays each
calendar day. The tables and phrasings are made up here; expected figures are computed with pandas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from analysis_tools.common import fmt_num
from app.analyst.plan import plan_analysis
from tests.test_builtin_understanding import Session, call, headline


def col(name: str, kind: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "type": kind, "missing": 0, "pii": None, **more}


LOANS = {
    "name": "tool_loans",
    "rows": 80,
    "columns": [
        col("Loan No", "category", distinct=80, levels=80),
        col("Tool", "category", distinct=3, levels=3),
        col("Lent On", "datetime"),
        col("Returned On", "datetime"),
        col("Deposit", "number", distinct=60),
    ],
}


def test_a_rate_per_day_of_two_dated_rows_divides_by_each_rows_days():
    plan = plan_analysis("Which tool brings in the biggest deposit per day?", LOANS, zh=False)
    days = next(s for s in plan.steps if s.tool == "derive_column")
    assert days.arguments["expression"] == "`Returned On` - `Lent On`"  # the later date minus the earlier
    totals = call(plan.steps, "group_aggregate").arguments
    assert totals["group_columns"] == ["Tool"]
    assert totals["value_columns"] == ["Deposit", days.arguments["new_column_name"]]


def test_per_day_on_a_table_with_one_date_is_each_calendar_day():
    one_date = {**LOANS, "columns": [c for c in LOANS["columns"] if c["name"] != "Returned On"]}
    plan = plan_analysis("Which tool brings in the biggest deposit per day?", one_date, zh=False)
    assert not any("`Lent On`" in str(s.arguments.get("expression", "")) for s in plan.steps)


def stays(path: Path) -> pd.DataFrame:
    """90 guest-house stays under Chinese headers: the room, the two dates, what the stay cost."""
    rng = np.random.default_rng(23)
    n = 90
    arrive = pd.Timestamp("2025-04-01") + pd.to_timedelta(rng.integers(0, 150, n), unit="D")
    nights = rng.integers(1, 8, n)
    room = rng.choice(["江景房", "山景房", "庭院房"], n)
    price = {"江景房": 460.0, "山景房": 310.0, "庭院房": 240.0}
    frame = pd.DataFrame(
        {
            "预订编号": [f"S{i:03d}" for i in range(n)],
            "房间": room,
            "到店日": arrive.strftime("%Y-%m-%d"),
            "退房日": (arrive + pd.to_timedelta(nights, unit="D")).strftime("%Y-%m-%d"),
            "住宿费（元）": [round(price[r] * k * rng.uniform(0.9, 1.1), 1) for r, k in zip(room, nights)],
        }
    )
    frame.to_csv(path, index=False)
    return frame


def bikes(path: Path) -> pd.DataFrame:
    """70 e-bike hires under English headers."""
    rng = np.random.default_rng(29)
    n = 70
    out = pd.Timestamp("2025-06-01") + pd.to_timedelta(rng.integers(0, 90, n), unit="D")
    days = rng.integers(1, 6, n)
    frame = pd.DataFrame(
        {
            "Hire": [f"E{i:03d}" for i in range(n)],
            "Model": rng.choice(["Cargo", "City", "Mountain"], n),
            "Collected": out.strftime("%d/%m/%Y"),
            "Dropped Off": (out + pd.to_timedelta(days, unit="D")).strftime("%d/%m/%Y"),
            "Rental Price": (days * rng.uniform(18, 35, n)).round(2),
        }
    )
    frame.to_csv(path, index=False)
    return frame


def days_between(frame: pd.DataFrame, start: str, end: str, dayfirst: bool = False) -> pd.Series:
    return (pd.to_datetime(frame[end], dayfirst=dayfirst) - pd.to_datetime(frame[start], dayfirst=dayfirst)).dt.days


@pytest.mark.slow
def test_each_rooms_price_per_night_is_its_takings_over_its_days(tmp_path):
    path = tmp_path / "data" / "民宿订单.csv"
    path.parent.mkdir(parents=True)
    frame = stays(path)
    run, calls = Session(tmp_path, path).ask("按每天的住宿费来算，哪种房间最贵？")
    frame["天数"] = days_between(frame, "到店日", "退房日")
    sums = frame.groupby("房间")[["住宿费（元）", "天数"]].sum()
    expected = (sums["住宿费（元）"] / sums["天数"]).sort_values(ascending=False)
    assert call(calls, "rank_values").arguments["group_column"] == "房间"
    said = headline(run)
    assert all(f"{room} {fmt_num(value)}" in said for room, value in expected.items()), said
    assert run.answer.startswith("理解为：按 房间 计算")  # the reading says the rate, not "a summary"


@pytest.mark.slow
def test_the_average_price_per_day_of_a_hire_is_each_hires_rate_averaged(tmp_path):
    path = tmp_path / "data" / "ebike_hires.csv"
    path.parent.mkdir(parents=True)
    frame = bikes(path)
    run, _ = Session(tmp_path, path).ask("On average, what is the rental price per day?")
    per_day = frame["Rental Price"] / days_between(frame, "Collected", "Dropped Off", dayfirst=True)
    assert fmt_num(per_day.mean()) in headline(run)
    assert "per day" in run.answer.split("\n")[0]


@pytest.mark.parametrize(
    "question", ["按每天的 Deposit 来算，哪种 Tool 最高？", "Which tool brings in the biggest deposit per Day?"]
)
def test_the_rate_is_named_in_the_sheets_language_not_the_questions_spelling(question):
    """The new column is the sheet's: English headers get "… per day" whichever language or case the
    question used (before, the question's own word: "Deposit per 天", "Deposit per Day")."""
    plan = plan_analysis(question, LOANS, zh=not question.isascii())
    made = [s.arguments["new_column_name"] for s in plan.steps if s.tool == "derive_column"]
    assert made[-1] == "Deposit per day", made
