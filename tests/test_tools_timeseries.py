"""Time-series tools on R datasets (AirPassengers, Nile, ggplot2 economics) and crafted frames with
known answers, plus their structured errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from analysis_tools import list_tools, run_tool
from analysis_tools.timeseries import change_points, mann_kendall
from tests.checks import assert_error

REF = Path(__file__).resolve().parents[1] / "data" / "reference"
RDATA = REF / "rdatasets"

TS_TOOLS = {
    "time_series_trend",
    "seasonal_decompose",
    "forecast",
    "compare_periods",
    "cohort_retention",
    "funnel_analysis",
    "contribution_decomposition",
}


def load(name: str) -> pd.DataFrame:
    return pd.read_csv(RDATA / f"{name}.csv")


def assert_clean(result) -> None:
    assert result.ok, result.error
    for key, value in result.metrics.items():
        assert type(value) in (int, float, str), (key, type(value))
        assert value == value, key
    assert "[method]" in result.text and "[interpretation]" in result.text
    assert result.interpretation and result.method


def monthly(values, start="2020-01-01") -> pd.DataFrame:
    return pd.DataFrame({"month": pd.date_range(start, periods=len(values), freq="MS"), "revenue": values})


def test_timeseries_group_is_registered():
    tools = {t.name: t for t in list_tools("timeseries")}
    assert TS_TOOLS <= set(tools)
    for name in TS_TOOLS:
        props = tools[name].parameters["properties"]
        assert all(p.get("description") for k, p in props.items() if k != "dataset"), name


# ---------------------------------------------------------------- trend


def test_mann_kendall_matches_kendall_tau_without_ties():
    rng = np.random.default_rng(3)
    y = np.cumsum(rng.normal(0.2, 1, 80))
    mk = mann_kendall(y)
    tau, _ = sps.kendalltau(np.arange(80), y)
    assert mk["tau"] == pytest.approx(tau, abs=1e-12)
    s = sum(np.sign(y[j] - y[i]) for i in range(80) for j in range(i + 1, 80))
    assert mk["s"] == s
    z = (s - 1) / np.sqrt(80 * 79 * 165 / 18)
    assert mk["z"] == pytest.approx(z, rel=1e-12) and mk["p_value"] == pytest.approx(2 * sps.norm.sf(z), rel=1e-9)


def test_trend_reads_three_percent_per_month():
    rng = np.random.default_rng(0)
    values = 1000 * 1.03 ** np.arange(36) * rng.normal(1, 0.01, 36)
    df = monthly(values)
    before = df.copy()
    r = run_tool("time_series_trend", df, date_column="month", value_column="revenue", plot=False)
    assert_clean(r)
    m = r.metrics
    assert m["freq"] == "M" and m["n_periods"] == 36 and m["trend"] == "increasing"
    assert m["percent_per_period"] == pytest.approx(3.0, abs=0.2)
    assert "3.0% per month" in r.interpretation
    x = np.arange(36)
    assert m["sen_slope"] == pytest.approx(sps.theilslopes(values, x)[0])
    pd.testing.assert_frame_equal(df, before)
    zh = run_tool("time_series_trend", df, date_column="month", value_column="revenue", plot=False, language="zh")
    assert "每月上升约 3.0%" in zh.interpretation


def test_trend_nile_finds_the_1898_change_point():
    r = run_tool("time_series_trend", load("Nile"), date_column="time", value_column="value")
    assert_clean(r)
    m = r.metrics
    assert m["freq"] == "Y" and m["trend"] == "decreasing"
    # strucchange::breakpoints(Nile ~ 1): the last year of the old regime is 1898 (mean 1097.75, then 849.97)
    assert m["change_point.1"] == "1899"
    assert m["level_before.1"] == pytest.approx(1097.75) and m["level_after.1"] == pytest.approx(849.9722, abs=1e-4)
    assert r.figures and Path(r.figures[0]).exists()


def test_change_points_none_in_noise():
    rng = np.random.default_rng(5)
    assert change_points(rng.normal(10, 1, 120)) == []


def test_trend_aggregates_monthly_economics_to_quarters_and_errors():
    eco = load("ggplot2_economics")
    r = run_tool(
        "time_series_trend", eco, date_column="date", value_column="unemploy", freq="Q", agg="mean", plot=False
    )
    assert_clean(r)
    assert r.metrics["n_periods"] == 192 and r.metrics["first_period"] == "1967Q3"
    err = assert_error(
        run_tool("time_series_trend", eco, date_column="dat", value_column="unemploy"), "column_not_found"
    )
    assert "date" in err["did_you_mean"]
    assert_error(run_tool("time_series_trend", eco, date_column="pce", value_column="unemploy"), "wrong_column_type")
    assert_error(
        run_tool("time_series_trend", eco, date_column="date", value_column="unemploy", freq="X"), "invalid_arguments"
    )
    assert_error(
        run_tool("time_series_trend", eco.head(3), date_column="date", value_column="unemploy"), "insufficient_data"
    )
    assert_error(
        run_tool("time_series_trend", eco.assign(unemploy=5), date_column="date", value_column="unemploy"),
        "constant_column",
    )
    assert_error(
        run_tool("time_series_trend", eco.assign(date=None), date_column="date", value_column="unemploy"),
        "insufficient_data",
    )


def test_partial_last_month_is_not_counted_as_a_drop():
    days = pd.date_range("2023-10-01", "2024-06-10", freq="D")
    df = pd.DataFrame({"day": days, "sales": 10.0 + np.arange(len(days)) * 0.01})
    r = run_tool("time_series_trend", df, date_column="day", value_column="sales", freq="M", plot=False)
    assert_clean(r)
    assert r.metrics["last_period"] == "2024-05" and "2024-06" in r.text


# ---------------------------------------------------------------- seasonal


def test_seasonal_decompose_airpassengers():
    r = run_tool("seasonal_decompose", load("AirPassengers"), date_column="time", value_column="value")
    assert_clean(r)
    m = r.metrics
    assert m["model"] == "multiplicative" and m["period"] == 12
    assert m["seasonal_strength"] > 0.9 and m["trend_strength"] > 0.9
    assert m["peak_season"] in ("July", "August") and m["low_season"] == "November"
    assert r.table.shape == (144, 5) and r.figures
    zh = run_tool(
        "seasonal_decompose", load("AirPassengers"), date_column="time", value_column="value", plot=False, language="zh"
    )
    assert "7月" in zh.interpretation


def test_seasonal_decompose_errors():
    short = monthly(np.arange(18.0) + 1)
    assert_error(
        run_tool("seasonal_decompose", short, date_column="month", value_column="revenue"), "insufficient_data"
    )
    flat = monthly(np.full(48, 3.0))
    assert_error(run_tool("seasonal_decompose", flat, date_column="month", value_column="revenue"), "constant_column")
    neg = monthly(np.sin(np.arange(48)))
    assert_error(
        run_tool("seasonal_decompose", neg, date_column="month", value_column="revenue", model="multiplicative"),
        "invalid_arguments",
    )


# ---------------------------------------------------------------- forecast


def test_forecast_airpassengers_plausible_with_backtest_under_10pct(tmp_path):
    air = load("AirPassengers")
    r = run_tool("forecast", air, date_column="time", value_column="value", horizon=12, figures_dir=tmp_path)
    assert_clean(r)
    m = r.metrics
    assert m["backtest_mape"] < 10 and m["backtest_folds"] == 3
    assert {"backtest_mape.ets", "backtest_mape.arima", "backtest_mape.seasonal_naive"} <= set(m)
    assert m["model"] in ("ets", "arima")
    # R forecast::forecast(auto.arima / ets): 1961 runs about 420-700, peaking in July/August
    fc = r.table.set_index("period")
    assert len(fc) == 12 and list(fc.index[[0, -1]]) == ["1961-01", "1961-12"]
    assert fc["forecast"].between(400, 720).all()
    assert fc["forecast"].idxmax() in ("1961-07", "1961-08")
    assert (fc["lower"] < fc["forecast"]).all() and (fc["forecast"] < fc["upper"]).all()
    assert fc["upper"].iloc[-1] - fc["lower"].iloc[-1] > fc["upper"].iloc[0] - fc["lower"].iloc[0]
    assert m["forecast.1961-07"] == pytest.approx(fc.loc["1961-07", "forecast"])
    assert r.figures and Path(r.figures[0]).parent == tmp_path and r.captions


def test_forecast_without_season_and_errors():
    rng = np.random.default_rng(2)
    df = monthly(100 + 2 * np.arange(20) + rng.normal(0, 1, 20))
    r = run_tool("forecast", df, date_column="month", value_column="revenue", horizon=3, plot=False)
    assert_clean(r)
    assert r.metrics["seasonal"] == 0 and 135 < r.metrics["forecast.2021-09"] < 150
    assert_error(run_tool("forecast", df, date_column="month", value_column="revenue", horizon=0), "invalid_arguments")
    assert_error(run_tool("forecast", df.head(5), date_column="month", value_column="revenue"), "insufficient_data")
    assert_error(
        run_tool("forecast", df.assign(revenue=1.0), date_column="month", value_column="revenue"), "constant_column"
    )
    assert_error(run_tool("forecast", df.iloc[:0], date_column="month", value_column="revenue"), "insufficient_data")


# ---------------------------------------------------------------- compare periods


def _daily(start: str, end: str, per_day: float, regions=("East", "West")) -> pd.DataFrame:
    days = pd.date_range(start, end, freq="D")
    return pd.DataFrame(
        {"date": np.repeat(days, len(regions)), "region": list(regions) * len(days), "revenue": per_day / len(regions)}
    )


def test_compare_periods_31_vs_30_days_by_daily_average():
    df = _daily("2024-03-01", "2024-04-30", 100.0)
    before = df.copy()
    r = run_tool("compare_periods", df, date_column="date", value_column="revenue")  # default: April vs March
    assert_clean(r)
    m = r.metrics
    assert (m["current_start"], m["current_end"], m["previous_start"], m["previous_end"]) == (
        "2024-04-01",
        "2024-04-30",
        "2024-03-01",
        "2024-03-31",
    )
    assert (m["days.current"], m["days.previous"]) == (30, 31)
    assert (m["total.current"], m["total.previous"]) == (3000, 3100)
    assert m["total_change_pct"] == pytest.approx(-3.2258, abs=1e-4)  # totals mislead ...
    assert m["change_pct"] == 0.0  # ... daily averages are equal
    assert "different lengths" in r.interpretation and "daily average" in r.text
    pd.testing.assert_frame_equal(df, before)


def test_compare_periods_windows_include_the_whole_end_day_and_group_breakdown():
    df = _daily("2024-01-01", "2024-02-29", 10.0)
    df["date"] = df["date"] + pd.Timedelta(hours=23)  # late-evening timestamps on the end day
    df.loc[(df.date >= "2024-02-01") & (df.region == "East"), "revenue"] *= 3
    r = run_tool(
        "compare_periods",
        df,
        date_column="date",
        value_column="revenue",
        current_start="2024-02-01",
        current_end="2024-02-29",
        previous_start="2024-01-01",
        previous_end="2024-01-31",
        group_column="region",
    )
    assert_clean(r)
    m = r.metrics
    assert m["rows.current"] == 58 and m["rows.previous"] == 62
    assert m["daily_avg.current"] == pytest.approx(20.0) and m["daily_avg.previous"] == pytest.approx(10.0)
    assert m["change_pct"] == pytest.approx(100.0)
    assert m["share_of_change_pct.East"] == pytest.approx(100.0) and m["change_pct.West"] == pytest.approx(0.0)
    assert m["p_value"] < 0.001
    assert r.table.iloc[0]["region"] == "East"
    # only the current period given: the previous is the same number of days right before
    r2 = run_tool(
        "compare_periods",
        df,
        date_column="date",
        value_column="revenue",
        current_start="2024-02-20",
        current_end="2024-02-29",
    )
    assert r2.metrics["previous_start"] == "2024-02-10" and r2.metrics["previous_end"] == "2024-02-19"


def test_compare_periods_errors():
    df = _daily("2024-03-01", "2024-04-30", 100.0)
    kw = dict(date_column="date", value_column="revenue")
    assert_error(
        run_tool("compare_periods", df, current_start="2024-04-30", current_end="2024-04-01", **kw), "invalid_arguments"
    )
    assert_error(
        run_tool("compare_periods", df, current_start="April", current_end="2024-04-30", **kw), "invalid_arguments"
    )
    assert_error(
        run_tool("compare_periods", df, current_start="2023-01-01", current_end="2023-01-31", **kw), "insufficient_data"
    )
    assert_error(run_tool("compare_periods", df, date_column="region", value_column="revenue"), "wrong_column_type")
    assert_error(run_tool("compare_periods", df.iloc[:0], **kw), "insufficient_data")
    err = assert_error(run_tool("compare_periods", df, group_column="regoin", **kw), "column_not_found")
    assert "region" in err["did_you_mean"]


# ---------------------------------------------------------------- cohorts


def _cohort_rows() -> pd.DataFrame:
    rows = []
    for u in range(100):  # January cohort: 50% back in Feb, 25% in March
        rows.append((u, "2024-01-05"))
        if u < 50:
            rows.append((u, "2024-02-10"))
        if u < 25:
            rows.append((u, "2024-03-10"))
    for u in range(100, 200):  # February cohort: 30% back in March
        rows.append((u, "2024-02-03"))
        if u < 130:
            rows.append((u, "2024-03-15"))
            rows.append((u, "2024-03-16"))  # two visits in one month count once
    rows.append((5, "2024-04-30"))
    return pd.DataFrame(rows, columns=["user", "day"])


def test_cohort_retention_known_answer():
    r = run_tool("cohort_retention", _cohort_rows(), id_column="user", date_column="day", plot=True)
    assert_clean(r)
    m = r.metrics
    assert m["n_users"] == 200 and m["n_cohorts"] == 2
    assert m["retention.2024-01.1"] == 50.0 and m["retention.2024-02.1"] == 30.0
    assert m["retention.period_1"] == pytest.approx(40.0)
    assert m["retention.period_2"] == pytest.approx((25 + 0) / 200 * 100)
    assert m["retention.period_3"] == pytest.approx(1.0)  # only the January cohort is old enough
    assert m["best_cohort"] == "2024-01"
    table = r.table.set_index("cohort")
    assert np.isnan(table.loc["2024-02", "3"])  # not observed yet: unknown, not 0
    assert r.figures


def test_cohort_incomplete_last_month_left_out_and_errors():
    rows = _cohort_rows()
    rows.loc[len(rows)] = (7, "2024-04-12")
    rows = rows[rows.day != "2024-04-30"]
    r = run_tool("cohort_retention", rows, id_column="user", date_column="day", plot=False)
    assert r.ok and "retention.period_3" not in r.metrics and "not complete" in r.text
    one = pd.DataFrame({"user": [1, 2], "day": ["2024-01-01", "2024-01-20"]})
    assert_error(run_tool("cohort_retention", one, id_column="user", date_column="day"), "insufficient_data")
    assert_error(run_tool("cohort_retention", rows, id_column="user", date_column="user"), "wrong_column_type")
    assert_error(run_tool("cohort_retention", rows.iloc[:0], id_column="user", date_column="day"), "insufficient_data")


# ---------------------------------------------------------------- funnel


def test_funnel_from_step_columns_and_from_events():
    f = pd.DataFrame(
        {
            "visit": [True] * 100,
            "cart": [1] * 40 + [0] * 60,
            "purchase": pd.to_datetime(["2024-01-02"] * 10 + [None] * 85 + ["2024-01-03"] * 5),
        }
    )
    r = run_tool("funnel_analysis", f, columns=["visit", "cart", "purchase"])
    assert_clean(r)
    m = r.metrics
    assert (m["users.visit"], m["users.cart"], m["users.purchase"]) == (100, 40, 10)
    assert m["conversion_from_previous.purchase"] == 25.0 and m["overall_conversion"] == 10.0
    assert m["biggest_drop_step"] == "purchase" and m["biggest_drop_pct"] == 75.0
    assert "5 users" in r.text  # skipped the cart step
    ev = pd.DataFrame(
        {
            "uid": list(range(100)) + list(range(40)) + list(range(10)) + [1],
            "event": ["visit"] * 100 + ["cart"] * 40 + ["buy"] * 10 + ["visit"],
        }
    )
    r2 = run_tool("funnel_analysis", ev, value_column="event", id_column="uid")
    assert r2.ok and r2.table["step"].tolist() == ["visit", "cart", "buy"]
    assert r2.metrics["users.buy"] == 10 and r2.metrics["biggest_drop_step"] == "buy"


def test_funnel_errors():
    ev = pd.DataFrame({"uid": [1, 2], "event": ["visit", "visit"]})
    assert_error(run_tool("funnel_analysis", ev, value_column="event", id_column="uid"), "invalid_arguments")
    err = assert_error(
        run_tool("funnel_analysis", ev, value_column="event", id_column="uid", steps=["visit", "byu"]),
        "value_not_found",
    )
    assert err["hint"]
    assert_error(run_tool("funnel_analysis", ev), "invalid_arguments")
    f = pd.DataFrame({"a": [0, 0], "b": [1, 1]})
    assert_error(run_tool("funnel_analysis", f, columns=["a", "b"]), "insufficient_data")


# ---------------------------------------------------------------- contribution


def test_contribution_one_region_explains_80_percent():
    df = pd.DataFrame(
        {"year": [2023] * 3 + [2024] * 3, "region": ["A", "B", "C"] * 2, "revenue": [100, 100, 100, 180, 115, 105]}
    )
    r = run_tool("contribution_decomposition", df, group_column="region", value_column="revenue", period_column="year")
    assert_clean(r)
    m = r.metrics
    assert m["change"] == 100 and m["top_driver"] == "A" and m["share_pct.A"] == pytest.approx(80.0)
    assert sum(m[f"share_pct.{g}"] for g in "ABC") == pytest.approx(100.0)
    assert "80%" in r.interpretation


def test_contribution_with_dates_and_an_offsetting_segment():
    days = pd.date_range("2024-01-01", "2024-02-29", freq="D")
    df = pd.DataFrame({"date": np.repeat(days, 2), "region": ["N", "S"] * len(days), "sales": 10.0})
    feb = df.date >= "2024-02-01"
    df.loc[feb & (df.region == "N"), "sales"] = 20.0
    df.loc[feb & (df.region == "S"), "sales"] = 5.0
    r = run_tool("contribution_decomposition", df, group_column="region", value_column="sales", date_column="date")
    assert_clean(r)
    m = r.metrics
    assert (m["period.previous"], m["period.current"]) == ("2024-01", "2024-02")
    assert m["contribution.N"] == pytest.approx(29 * 20 - 31 * 10) and m["contribution.S"] == pytest.approx(
        29 * 5 - 31 * 10
    )
    assert "S" in r.interpretation and "offset" in r.interpretation
    assert m["share_pct.N"] + m["share_pct.S"] == pytest.approx(100.0)


def test_contribution_ratio_splits_mix_and_rate():
    df = pd.DataFrame(
        {
            "year": ["2023", "2023", "2024", "2024"],
            "channel": ["web", "store"] * 2,
            "revenue": [5000, 5000, 8800, 2000],
            "orders": [100, 50, 160, 20],
        }
    )
    r = run_tool(
        "contribution_decomposition",
        df,
        group_column="channel",
        numerator_column="revenue",
        denominator_column="orders",
        period_column="year",
    )
    assert_clean(r)
    m = r.metrics
    assert m["rate.previous"] == pytest.approx(10000 / 150) and m["rate.current"] == pytest.approx(10800 / 180)
    assert m["mix_effect"] + m["rate_effect"] == pytest.approx(m["change"], abs=1e-12)
    assert m["mix_effect"] < 0 < m["rate_effect"]  # shift to cheaper web orders; web orders got dearer
    assert m["rate_effect.store"] == pytest.approx(0.0)
    assert m["mix_share_pct"] + m["rate_share_pct"] == pytest.approx(100.0)


def test_contribution_errors():
    df = pd.DataFrame({"year": [2023, 2024], "region": ["A", "A"], "revenue": [1.0, 2.0]})
    assert_error(
        run_tool("contribution_decomposition", df, group_column="region", period_column="year"), "invalid_arguments"
    )
    assert_error(
        run_tool("contribution_decomposition", df, group_column="region", value_column="revenue"), "invalid_arguments"
    )
    assert_error(
        run_tool(
            "contribution_decomposition",
            df,
            group_column="region",
            value_column="revenue",
            period_column="year",
            periods=["2023", "2025"],
        ),
        "value_not_found",
    )
    assert_error(
        run_tool(
            "contribution_decomposition",
            df.head(1),
            group_column="region",
            value_column="revenue",
            period_column="year",
        ),
        "insufficient_data",
    )
    assert_error(
        run_tool("contribution_decomposition", df, group_column="region", value_column="region", period_column="year"),
        "wrong_column_type",
    )


def test_a_forecast_of_averages_gives_their_mean_not_a_total():
    days = pd.date_range("2024-01-01", periods=120, freq="D")
    data = pd.DataFrame({"day": days, "score": np.random.default_rng(1).uniform(3.5, 4.3, 120)})
    mean = run_tool("forecast", data, date_column="day", value_column="score", freq="W", agg="mean", horizon=2)
    assert mean.ok, mean.error
    assert "forecast_total" not in mean.metrics and "on average" in mean.interpretation
    assert 3.4 < mean.metrics["forecast_mean"] < 4.4
    total = run_tool("forecast", data, date_column="day", value_column="score", freq="W", horizon=2)
    assert total.metrics["forecast_total"] == pytest.approx(2 * total.metrics["forecast_mean"])
