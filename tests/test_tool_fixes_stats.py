"""Issue 23, point 5 (statistics half): each tool says what it actually computed and reads its numbers
right. Expected values come from scipy/statsmodels called directly here, never from Verity's output."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from analysis_tools import run_tool
from analysis_tools.common import fmt_num


def _yearly(n: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame(
        {
            "year": pd.date_range("1990-01-01", periods=n, freq="YS"),
            "output": 100 + 3 * np.arange(n) + rng.normal(0, 2, n),
        }
    )


def test_forecast_on_yearly_data_names_the_non_seasonal_model_and_gives_each_period_its_interval():
    data = _yearly()
    result = run_tool("forecast", data, date_column="year", value_column="output", horizon=4, method="ets", plot=False)
    assert result.ok, result.error
    # what _fit_predict fits on yearly data, fitted here with statsmodels directly
    from statsmodels.tsa.exponential_smoothing.ets import ETSModel

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = ETSModel(data["output"], error="add", trend="add", damped_trend=True, seasonal=None).fit(disp=False)
        frame = fit.get_prediction(start=len(data), end=len(data) + 3).summary_frame(alpha=0.05)
    said = result.text + " " + result.method
    assert "Holt-Winters" not in said and "seasonal ARIMA" not in said and ", seasonal" not in said
    assert "no seasonal component" in result.metrics["model_name"]
    conclusion = result.text.split("[conclusion]")[1].split("[interpretation]")[0]
    widths = []
    for year, (_, row) in zip(range(2020, 2024), frame.iterrows()):
        assert (
            f"{year}: {fmt_num(row['mean'])} ({fmt_num(row['pi_lower'])} to {fmt_num(row['pi_upper'])})" in conclusion
        )
        assert result.metrics[f"lower.{year}"] == pytest.approx(row["pi_lower"], rel=1e-6)
        widths.append(row["pi_upper"] - row["pi_lower"])
    assert widths[-1] > widths[0]  # the intervals differ by period: one interval for all would be wrong


def test_forecast_on_monthly_data_with_seasons_still_says_holt_winters():
    months = pd.date_range("2018-01-01", periods=48, freq="MS")
    rng = np.random.default_rng(3)
    values = 200 + 2 * np.arange(48) + 30 * np.sin(2 * np.pi * np.arange(48) / 12) + rng.normal(0, 3, 48)
    data = pd.DataFrame({"month": months, "sales": values})
    result = run_tool("forecast", data, date_column="month", value_column="sales", horizon=3, method="ets", plot=False)
    assert result.ok, result.error
    assert "Holt-Winters" in result.metrics["model_name"] and "period 12" in result.metrics["model_name"]


def _autocorrelated_regression() -> tuple[pd.DataFrame, float]:
    rng = np.random.default_rng(11)
    n = 120
    x = np.linspace(0, 10, n)
    noise = np.zeros(n)
    for i in range(1, n):  # AR(1) errors with rho 0.8: neighbouring residuals move together
        noise[i] = 0.8 * noise[i - 1] + rng.normal()
    y = 2 + 0.5 * x + noise
    from statsmodels.regression.linear_model import OLS
    from statsmodels.stats.stattools import durbin_watson
    from statsmodels.tools import add_constant

    dw = float(durbin_watson(OLS(y, add_constant(x)).fit().resid))
    return pd.DataFrame({"x": x, "y": y}), dw


def test_durbin_watson_far_below_two_is_read_as_strong_positive_autocorrelation():
    data, dw = _autocorrelated_regression()
    assert dw < 1.0  # the premise: statsmodels' own Durbin-Watson is far below 2
    result = run_tool("linear_regression", data, target_column="y", feature_columns=["x"])
    assert result.ok, result.error
    assert result.metrics["durbin_watson"] == pytest.approx(dw, rel=1e-9)
    assert result.metrics["residual_autocorrelation"] == "strong_positive"
    line = next(a for a in result.text.splitlines() if "Durbin-Watson =" in a)
    assert "strong positive autocorrelation" in line and "about 2 is fine" not in line


def _skewed_groups() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    frames = [
        pd.DataFrame({"region": region, "revenue": rng.lognormal(mean, 1.0, 200)})
        for region, mean in (("North", 3.0), ("South", 3.2), ("East", 3.1))
    ]
    return pd.concat(frames, ignore_index=True)


def test_compare_groups_auto_ranks_clearly_skewed_groups_even_when_they_are_large():
    data = _skewed_groups()
    groups = [g["revenue"].to_numpy() for _, g in data.groupby("region", sort=False)]
    assert min(abs(sps.skew(g, bias=False)) for g in groups) > 1  # the premise: every group is highly skewed
    h, p = sps.kruskal(*groups)
    result = run_tool("compare_groups", data, value_column="revenue", group_column="region")
    assert result.ok, result.error
    assert result.metrics["method"] == "kruskal"
    assert result.metrics["statistic"] == pytest.approx(h, rel=1e-9)
    assert result.metrics["p_value"] == pytest.approx(p, rel=1e-9)
    assert "skewed" in result.text


def test_compare_two_groups_auto_uses_mann_whitney_on_skewed_groups():
    data = _skewed_groups()
    two = data[data["region"].isin(["North", "South"])]
    a = two.loc[two["region"] == "North", "revenue"].to_numpy()
    b = two.loc[two["region"] == "South", "revenue"].to_numpy()
    expected = sps.mannwhitneyu(a, b, alternative="two-sided")
    result = run_tool("compare_two_groups", two, value_column="revenue", group_column="region")
    assert result.ok, result.error
    assert result.metrics["method"] == "mannwhitney"
    assert result.metrics["p_value"] == pytest.approx(expected.pvalue, rel=1e-6)


def test_compare_groups_auto_keeps_anova_for_symmetric_groups():
    rng = np.random.default_rng(8)
    data = pd.DataFrame({"g": np.repeat(["a", "b", "c"], 100), "v": rng.normal(10, 2, 300)})
    result = run_tool("compare_groups", data, value_column="v", group_column="g")
    expected = sps.f_oneway(*[data.loc[data["g"] == k, "v"] for k in "abc"])
    assert result.metrics["method"] == "anova"
    assert result.metrics["p_value"] == pytest.approx(expected.pvalue, rel=1e-9)


def test_normality_test_flags_a_column_of_four_distinct_values_as_discrete():
    rng = np.random.default_rng(2)
    data = pd.DataFrame({"rating": rng.choice([1, 2, 3, 4], size=150, p=[0.1, 0.3, 0.4, 0.2])})
    result = run_tool("normality_test", data, value_column="rating")
    assert result.ok, result.error
    assert result.metrics["distinct_values"] == len(np.unique(data["rating"])) == 4
    assert result.metrics["discrete"] == 1
    assert result.metrics["p_value"] == pytest.approx(sps.shapiro(data["rating"]).pvalue, rel=1e-9)
    assert "discrete" in result.interpretation
    continuous = run_tool("normality_test", pd.DataFrame({"v": rng.normal(size=150)}), value_column="v")
    assert continuous.metrics["discrete"] == 0


def test_a_correlation_of_one_is_read_as_the_same_quantity_not_a_third_factor():
    rng = np.random.default_rng(4)
    km = rng.uniform(1, 100, 80)
    data = pd.DataFrame(
        {"distance_km": km, "distance_miles": km * 0.621371, "fare": 3 + 2 * km + rng.normal(0, 40, 80)}
    )
    r = sps.pearsonr(data["distance_km"], data["distance_miles"]).statistic
    assert abs(r) > 0.999
    pair = run_tool("correlation_analysis", data, x_column="distance_km", y_column="distance_miles")
    assert pair.metrics["r"] == pytest.approx(r, rel=1e-12)
    assert "a third factor may drive both" not in pair.interpretation and "lockstep" in pair.interpretation
    matrix = run_tool("correlation_analysis", data, columns=["distance_km", "distance_miles", "fare"])
    assert "lockstep" in matrix.interpretation
    # a moderate correlation keeps the usual caution
    loose = run_tool("correlation_analysis", data, x_column="distance_km", y_column="fare")
    assert abs(sps.pearsonr(data["distance_km"], data["fare"]).statistic) < 0.999
    assert "a third factor may drive both" in loose.interpretation


# ---------------------------------------------------------------- ingest (issue 23: "At load, ...")


def _load(tmp_path, text: str, name: str = "table.csv"):
    from app.ingest.pipeline import load_table

    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load_table(path)


def test_day_first_dates_written_as_text_become_dates(tmp_path):
    days = pd.date_range("2021-01-01", periods=40, freq="D")
    text = "when,sales\n" + "".join(f"{d:%d/%m/%Y},{i}\n" for i, d in enumerate(days))
    table = _load(tmp_path, text)
    assert str(table.frame["when"].dtype).startswith("datetime64")
    expected = pd.to_datetime([f"{d:%d/%m/%Y}" for d in days], format="%d/%m/%Y")
    assert (table.frame["when"].to_numpy() == expected.to_numpy()).all()
    assert next(c for c in table.info["columns"] if c["name"] == "when")["type"] == "datetime"


def test_month_name_and_two_digit_year_dates_become_dates(tmp_path):
    days = pd.date_range("2020-01-20", periods=30, freq="D")
    text = "day,us_day,cases\n" + "".join(
        f'"{d:%b} {d.day}, {d:%Y}",{d.month}/{d.day}/{d:%y},{i}\n' for i, d in enumerate(days)
    )
    table = _load(tmp_path, text)
    for column in ("day", "us_day"):
        assert (table.frame[column].to_numpy() == days.to_numpy()).all(), column


def test_ambiguous_slash_dates_are_not_guessed_by_format(tmp_path):
    from app.ingest.textvalues import Distinct, parse_dates_by_format

    texts = pd.Series([f"{d:02d}/{m:02d}/2020" for d in range(1, 13) for m in range(1, 13)])
    # every value reads as day/month and as month/day, giving different dates: no format may win
    assert parse_dates_by_format(Distinct.of(texts), len(texts)) is None


def test_estimate_with_range_becomes_the_number_with_low_and_high_columns(tmp_path):
    import re

    cells = ["298[110-510]", "1 234[1 000-1 500]", "0", "No data", "87[40-150]", "5[2-9]"] * 5
    text = "country,cases\n" + "".join(f"c{i},{v}\n" for i, v in enumerate(cells))
    table = _load(tmp_path, text)
    frame = table.frame
    assert {"cases", "cases (low)", "cases (high)"} <= set(frame.columns)
    assert list(frame.columns).index("cases (low)") == list(frame.columns).index("cases") + 1
    for i, cell in enumerate(cells):
        found = re.fullmatch(r"([\d ]+)\[([\d ]+)-([\d ]+)\]", cell)
        if found:
            estimate, low, high = (float(g.replace(" ", "")) for g in found.groups())
            assert (frame.loc[i, "cases"], frame.loc[i, "cases (low)"], frame.loc[i, "cases (high)"]) == (
                estimate,
                low,
                high,
            )
        elif cell == "0":
            assert frame.loc[i, "cases"] == 0 and pd.isna(frame.loc[i, "cases (low)"])
        else:
            assert pd.isna(frame.loc[i, "cases"])
    assert pd.api.types.is_numeric_dtype(frame["cases"])
    assert any(c["action"] == "split estimate and range" for c in table.info["cleaning"])


def test_a_nameless_row_number_first_column_is_dropped(tmp_path):
    source = pd.DataFrame({"city": list("abcdefgh"), "value": np.arange(8) * 2.5})
    written = tmp_path / "indexed.csv"
    source.to_csv(written)  # pandas writes its 0..n-1 index as a first column with a blank header
    from app.ingest.pipeline import load_table

    table = load_table(written)
    assert list(table.frame.columns) == ["city", "value"]
    reread = pd.read_csv(written)  # pandas itself names that column "Unnamed: 0"
    assert reread.columns[0] == "Unnamed: 0"
    again = tmp_path / "again.csv"
    reread.to_csv(again, index=False)
    assert list(load_table(again).frame.columns) == ["city", "value"]
    # a first column of real numbers (not 0..n-1) stays
    kept = _load(tmp_path, "Unnamed: 0,value\n5,1\n9,2\n2,3\n", "kept.csv")
    assert list(kept.frame.columns) == ["Unnamed: 0", "value"]
