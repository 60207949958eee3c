"""The forecast starts after the last complete period, says what it left out and why, and its line
is drawn to be seen (issue 14: "预测下个季度的销售额" forecast 2024Q4, a quarter the file has)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection

from analysis_tools import charts, run_tool
from analysis_tools.ts_common import FORECAST_WIDTH

REPO = Path(__file__).resolve().parents[1]
OPS = REPO / "data" / "samples" / "monthly_operations.xlsx"


def operations() -> pd.DataFrame:
    return pd.read_excel(OPS, engine="openpyxl")


def test_month_start_dates_make_a_complete_last_quarter(tmp_path):
    ops = operations()
    q4 = ops.loc[ops["月份"] >= "2024-10-01", "营业额"].sum()  # October, November, December 2024
    r = run_tool(
        "forecast",
        ops,
        date_column="月份",
        value_column="营业额",
        horizon=1,
        freq="Q",
        figures_dir=tmp_path,
        language="zh",
    )
    assert r.ok, r.error
    assert r.metrics["last_period"] == "2024Q4" and r.metrics["first_period"] == "2025Q1"
    assert r.metrics["last_actual"] == pytest.approx(q4, rel=1e-9)
    assert "excluded_periods" not in r.metrics and "2025Q1" in r.interpretation and "排除" not in r.interpretation
    assert list(r.table["period"]) == ["2025Q1"]


def test_a_partial_last_quarter_is_left_out_and_the_answer_says_so(tmp_path):
    ops = operations()
    to_november = ops[ops["月份"] < "2024-12-01"]  # 2024Q4 has October and November only
    q3 = ops.loc[ops["月份"].between("2024-07-01", "2024-09-01"), "营业额"].sum()
    r = run_tool(
        "forecast",
        to_november,
        date_column="月份",
        value_column="营业额",
        horizon=1,
        freq="Q",
        method="seasonal_naive",
        figures_dir=tmp_path,
    )
    assert r.ok, r.error
    assert r.metrics["excluded_periods"] == "2024Q4" and r.metrics["last_period"] == "2024Q3"
    assert r.metrics["first_period"] == "2024Q4" and r.metrics["last_actual"] == pytest.approx(q3, rel=1e-9)
    assert r.interpretation.startswith("2024Q4 was left out because the data cover only part of it")
    assert "after the last complete quarter, 2024Q3" in r.interpretation
    zh = run_tool(
        "forecast",
        to_november,
        date_column="月份",
        value_column="营业额",
        horizon=1,
        freq="Q",
        plot=False,
        method="seasonal_naive",
        language="zh",
    )
    assert "2024Q4 的数据不完整，已排除" in zh.interpretation


def test_daily_rows_through_the_last_day_keep_the_last_month_and_a_missing_day_does_not():
    days = pd.date_range("2022-01-01", "2024-12-31", freq="D")
    sales = pd.DataFrame({"day": days, "sales": 100 + np.arange(len(days)) * 0.1})
    full = run_tool(
        "forecast",
        sales,
        date_column="day",
        value_column="sales",
        freq="M",
        horizon=3,
        plot=False,
        method="seasonal_naive",
    )
    assert full.metrics["last_period"] == "2024-12" and full.metrics["first_period"] == "2025-01"
    short = run_tool(
        "forecast",
        sales.iloc[:-1],
        date_column="day",
        value_column="sales",
        freq="M",
        horizon=3,
        plot=False,
        method="seasonal_naive",
    )
    assert short.metrics["excluded_periods"] == "2024-12" and short.metrics["first_period"] == "2024-12"


@pytest.fixture
def drawn(monkeypatch):
    """What the real chart holds, read just before it is saved (saving closes the figure)."""
    seen = []
    real_save = charts.save

    def keep(fig, path):
        ax = fig.axes[0]
        seen.append(
            {
                "lines": {line.get_label(): line for line in ax.get_lines()},
                "widths": {line.get_label(): line.get_linewidth() for line in ax.get_lines()},
                "markers": {line.get_label(): (line.get_marker(), len(line.get_xdata())) for line in ax.get_lines()},
                "bands": [c.get_alpha() for c in ax.collections if isinstance(c, PolyCollection)],
                "segments": [seg for c in ax.collections for seg in getattr(c, "get_segments", list)()],
                "legend": [t.get_text() for t in ax.get_legend().get_texts()],
            }
        )
        return real_save(fig, path)

    monkeypatch.setattr(charts, "save", keep)
    return seen


def test_the_forecast_line_is_bold_with_its_band(tmp_path, drawn):
    r = run_tool(
        "forecast",
        operations(),
        date_column="月份",
        value_column="营业额",
        horizon=6,
        method="seasonal_naive",
        figures_dir=tmp_path,
    )
    assert r.ok and Path(r.figures[0]).stat().st_size > 10_000
    chart = drawn[-1]
    assert chart["widths"]["forecast"] >= FORECAST_WIDTH >= 1.8 * chart["widths"]["actual"]
    assert chart["markers"]["forecast"] == ("o", 6)
    assert chart["bands"] and min(chart["bands"]) >= 0.2  # the interval is shaded, not a hairline
    assert {"actual", "forecast", "prediction interval"} <= set(chart["legend"])


def test_one_period_ahead_still_shows_its_interval(tmp_path, drawn):
    r = run_tool(
        "forecast",
        operations(),
        date_column="月份",
        value_column="营业额",
        horizon=1,
        freq="Q",
        method="seasonal_naive",
        figures_dir=tmp_path,
    )
    chart = drawn[-1]
    assert r.ok and "prediction interval" in chart["legend"]
    lower, upper = r.table["lower"].iloc[0], r.table["upper"].iloc[0]
    assert any(np.isclose(min(s[:, 1]), lower) and np.isclose(max(s[:, 1]), upper) for s in chart["segments"])


@pytest.mark.slow
def test_next_quarter_through_the_cli(tmp_path, verity_here):
    """The issue's question, as a user runs it: the forecast is for 2025Q1, not a quarter the file has.
    (`verity analyze` in this process, conftest.verity_here: the report is the point.)"""
    out = tmp_path / "out"
    question = "预测下个季度的销售额"
    done = verity_here(
        "analyze", OPS, "--question", question, "--answer", "method.forecast=继续", "--no-input", "--out", out
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    forecasts = [c for c in report["tool_calls"] if c["tool"] == "forecast" and c["ok"]]
    assert forecasts and "2025Q1" in report["answer"]
    assert "2024Q4 约" not in report["answer"]


@pytest.mark.parametrize("language, words", [("en", "stay flat at about"), ("zh", "基本持平")])
def test_a_level_forecast_is_called_flat_not_given_as_two_points(tmp_path, language, words):
    """A series with no trend and no season forecasts one value every week; "about 1,346 in W1 and about
    1,346 by W8" read as a change beside a trend elsewhere (issue 28), so the reading says flat."""
    rng = np.random.default_rng(7)
    weeks = pd.date_range("2024-01-07", periods=60, freq="W")
    level = pd.DataFrame({"week": weeks, "boxes": 1346 + rng.normal(0, 15, len(weeks)).round()})
    r = run_tool(
        "forecast",
        level,
        date_column="week",
        value_column="boxes",
        horizon=8,
        freq="W",
        figures_dir=tmp_path,
        language=language,
    )
    assert r.ok, r.error
    forecast = r.table["forecast"]
    assert forecast.max() - forecast.min() <= 0.01 * forecast.mean()  # independently: the values are level
    assert words in r.interpretation
    rising = level.assign(boxes=level["boxes"] + np.arange(len(level)) * 20)
    r = run_tool(
        "forecast",
        rising,
        date_column="week",
        value_column="boxes",
        horizon=8,
        freq="W",
        figures_dir=tmp_path,
        language=language,
    )
    assert r.ok and words not in r.interpretation


def _orders(last_day_of_december: int, first_day_of_january: int = 5) -> pd.DataFrame:
    """About 13 orders a month through 2025, each month's first on day 1–3 and last on day 24–27: spaced
    two or three days apart, so the data read as weekly."""
    rng = np.random.default_rng(11)
    days = []
    for month in range(1, 13):
        first = first_day_of_january if month == 1 else 1 + month % 3
        last = last_day_of_december if month == 12 else 24 + (month * 7) % 4
        days += [pd.Timestamp(2025, month, int(d)) for d in np.linspace(first, last, 13).round()]
    return pd.DataFrame({"date": days, "amount": rng.uniform(50, 150, len(days)).round(2)})


def test_a_last_month_that_stops_as_late_as_the_others_is_complete():
    """Orders through 2025-12-25, every month's last order on day 24–27: the weekly spacing's last week
    (ending 12-28) falls short of 12-31, but December stops no earlier than the complete months did, so
    it is kept and "the next three months" start at 2026-01; January, starting on day 5, is kept too."""
    r = run_tool("forecast", _orders(25), date_column="date", value_column="amount", freq="M", horizon=3, plot=False)
    assert r.ok, r.error
    assert "excluded_periods" not in r.metrics
    assert r.metrics["last_period"] == "2025-12" and r.metrics["first_period"] == "2026-01"
    assert r.metrics["n_periods"] == 12


def test_a_last_month_that_stops_well_before_the_usual_end_is_left_out():
    stops = run_tool(
        "forecast", _orders(15), date_column="date", value_column="amount", freq="M", horizon=3, plot=False
    )
    assert stops.metrics["excluded_periods"] == "2025-12" and stops.metrics["first_period"] == "2025-12"
    late_start = run_tool(
        "forecast",
        _orders(25, first_day_of_january=14),
        date_column="date",
        value_column="amount",
        freq="M",
        horizon=3,
        plot=False,
    )
    assert late_start.metrics["excluded_periods"] == "2025-01" and late_start.metrics["n_periods"] == 11
