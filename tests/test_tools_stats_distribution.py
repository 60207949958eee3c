"""The rest of the stats group (normality, paired, two-way ANOVA, chi-square, logistic, proportions,
outliers, confidence intervals, curve fit) against published R results, plus their structured errors;
and NIST ANOVA SmLs07-09 (values beyond float64's precision)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis_tools import list_tools, run_tool
from tests.checks import assert_error

REF = Path(__file__).resolve().parents[1] / "data" / "reference"
RDATA = REF / "rdatasets"
NIST = REF / "nist"

NEW_TOOLS = [
    "normality_test",
    "paired_test",
    "two_way_anova",
    "chi_square_test",
    "logistic_regression",
    "proportion_test",
    "outlier_detection",
    "confidence_interval",
    "curve_fit",
]


def lre(estimate: float, certified: float) -> float:
    err = abs(estimate - certified) / abs(certified) if certified != 0 else abs(estimate - certified)
    return 15.0 if err == 0 else min(15.0, -math.log10(err))


def rdata(name: str, **kwargs) -> pd.DataFrame:
    path = RDATA / f"{name}.csv"
    return pd.read_csv(path, **kwargs)


def assert_clean(result) -> None:
    assert result.ok, result.error
    for key, value in result.metrics.items():
        assert type(value) in (int, float, str), (key, type(value))
        assert not (isinstance(value, float) and not math.isfinite(value)), key
    assert "[method]" in result.text and "[interpretation]" in result.text
    assert result.interpretation and result.method and result.sample_size


# ---------------------------------------------------------------- registry


def test_new_tools_are_registered_with_documented_schemas():
    tools = {t.name: t for t in list_tools("stats")}
    for name in NEW_TOOLS:
        assert name in tools, name
        tool = tools[name]
        assert tool.description and len(tool.summary) > 20
        for arg, prop in tool.parameters["properties"].items():
            assert prop.get("description"), (name, arg)


# ---------------------------------------------------------------- normality


def test_normality_shapiro_matches_r():
    mtcars = rdata("mtcars")
    before = mtcars.copy()
    r = run_tool("normality_test", mtcars, value_column="mpg")
    assert_clean(r)
    # R: shapiro.test(mtcars$mpg): W = 0.94756, p-value = 0.1229
    assert r.metrics["statistic"] == pytest.approx(0.94756, abs=5e-6)
    assert r.metrics["p_value"] == pytest.approx(0.1229, abs=5e-5)
    assert r.metrics["method"] == "shapiro" and r.metrics["normal"] == 1 and r.metrics["n"] == 32
    assert r.metrics["skewness"] == pytest.approx(0.6723771, abs=1e-6)  # e1071::skewness(type = 2)
    pd.testing.assert_frame_equal(mtcars, before)
    tooth = rdata("ToothGrowth")
    r = run_tool("normality_test", tooth, value_column="len")
    assert r.metrics["statistic"] == pytest.approx(0.96743, abs=5e-6)  # R: W = 0.96743, p = 0.1091
    assert r.metrics["p_value"] == pytest.approx(0.1091, abs=5e-5)


def test_normality_large_sample_and_skewed():
    rng = np.random.default_rng(1)
    big = pd.DataFrame({"v": rng.lognormal(size=8000)})
    r = run_tool("normality_test", big, value_column="v")
    assert_clean(r)
    assert r.metrics["method"] == "dagostino" and r.metrics["normal"] == 0
    assert "skewed right" in r.interpretation and "median" in r.interpretation
    assert any("tiny" in line for line in r.limitations)
    zh = run_tool("normality_test", big, value_column="v", language="zh")
    assert "中位数" in zh.interpretation


def test_normality_errors():
    df = pd.DataFrame({"amount": [1.0, 2.0, 3.0, 4.0], "name": list("abcd"), "flat": [5.0] * 4, "empty": [np.nan] * 4})
    r = run_tool("normality_test", df, value_column="amont")
    assert_error(r, "column_not_found")
    assert "amount" in r.error["did_you_mean"]
    assert_error(run_tool("normality_test", df, value_column="name"), "wrong_column_type")
    assert_error(run_tool("normality_test", df, value_column="flat"), "constant_column")
    assert_error(run_tool("normality_test", df, value_column="empty"), "insufficient_data")
    assert_error(run_tool("normality_test", df.iloc[:0], value_column="amount"), "insufficient_data")


# ---------------------------------------------------------------- paired


def test_paired_t_matches_r_sleep_long_and_wide():
    sleep = rdata("sleep")
    r = run_tool("paired_test", sleep, value_column="extra", group_column="group", id_column="ID", method="t")
    assert_clean(r)
    m = r.metrics
    # R: t.test(extra ~ group, data = sleep, paired = TRUE): t = -4.0621, df = 9, p-value = 0.002833,
    # 95 percent CI -2.4598858 -0.7001142, mean difference -1.58
    assert m["statistic"] == pytest.approx(-4.0621, abs=5e-5)
    assert m["df"] == 9 and m["p_value"] == pytest.approx(0.002833, abs=5e-7)
    assert m["ci_low"] == pytest.approx(-2.4598858, abs=1e-7) and m["ci_high"] == pytest.approx(-0.7001142, abs=1e-7)
    assert m["mean_difference"] == pytest.approx(-1.58) and m["n"] == 10
    assert m["effect_size"] == pytest.approx(-1.58 / 1.229995, abs=1e-5)
    wide = (
        sleep.pivot(index="ID", columns="group", values="extra").rename(columns={1: "drug1", 2: "drug2"}).reset_index()
    )
    w = run_tool("paired_test", wide, x_column="drug1", y_column="drug2", method="t")
    assert w.metrics["statistic"] == pytest.approx(m["statistic"], rel=1e-12)
    assert "drug1" in w.interpretation


def test_paired_auto_switches_to_wilcoxon_like_r():
    sleep = rdata("sleep")
    r = run_tool("paired_test", sleep, value_column="extra", group_column="group", id_column="ID")
    assert_clean(r)
    # differences are not normal (R: shapiro.test: W = 0.82987, p = 0.03334) with 10 pairs -> rank test;
    # R: wilcox.test(extra ~ group, data = sleep, paired = TRUE): V = 0, p-value = 0.009091
    assert r.metrics["shapiro_p_difference"] == pytest.approx(0.03334, abs=5e-6)
    assert r.metrics["method"] == "wilcoxon"
    assert r.metrics["statistic"] == 0 and r.metrics["p_value"] == pytest.approx(0.009091, abs=5e-7)
    assert r.metrics["effect_size"] == pytest.approx(-1.0)
    assert "rank test" in r.text


def test_paired_errors():
    sleep = rdata("sleep")
    assert_error(run_tool("paired_test", sleep, value_column="extra"), "invalid_arguments")
    assert_error(
        run_tool("paired_test", sleep, value_column="extra", group_column="group", id_column="IDD"), "column_not_found"
    )
    three = sleep.assign(group=sleep["ID"] % 3)
    assert_error(
        run_tool("paired_test", three, value_column="extra", group_column="group", id_column="rownames"),
        "wrong_group_count",
    )
    twice = pd.concat([sleep, sleep])
    assert_error(
        run_tool("paired_test", twice, value_column="extra", group_column="group", id_column="ID"), "duplicate_ids"
    )
    same = pd.DataFrame({"before": [1.0, 2.0, 3.0], "after": [2.0, 3.0, 4.0]})
    assert_error(run_tool("paired_test", same, x_column="before", y_column="after"), "constant_column")
    assert_error(run_tool("paired_test", same.iloc[:0], x_column="before", y_column="after"), "insufficient_data")


# ---------------------------------------------------------------- two-way ANOVA


def test_two_way_anova_matches_r():
    tooth = rdata("ToothGrowth")
    r = run_tool("two_way_anova", tooth, value_column="len", factor_columns=["supp", "dose"])
    assert_clean(r)
    m = r.metrics
    # R: summary(aov(len ~ supp * factor(dose), ToothGrowth)): F 15.572, 92.000, 4.107; p 0.000231, <2e-16, 0.021860
    assert m["f_statistic.supp"] == pytest.approx(15.572, abs=5e-4)
    assert m["f_statistic.dose"] == pytest.approx(92.000, abs=5e-4)
    assert m["f_statistic.supp:dose"] == pytest.approx(4.107, abs=5e-4)
    assert m["p_value.supp"] == pytest.approx(0.000231, abs=5e-7)
    assert m["p_value.supp:dose"] == pytest.approx(0.021860, abs=5e-7)
    assert m["df_within"] == 54 and m["ss_within"] == pytest.approx(712.1, abs=0.05)
    assert "depends on the other" in r.interpretation
    warp = rdata("warpbreaks")
    w = run_tool("two_way_anova", warp, value_column="breaks", factor_columns=["wool", "tension"]).metrics
    # R: summary(aov(breaks ~ wool * tension, warpbreaks)): F 3.765, 8.498, 4.189; p 0.058213, 0.000693, 0.021044
    assert (w["f_statistic.wool"], w["f_statistic.tension"], w["f_statistic.wool:tension"]) == pytest.approx(
        (3.765, 8.498, 4.189), abs=5e-4
    )
    assert (w["p_value.wool"], w["p_value.tension"]) == pytest.approx((0.058213, 0.000693), abs=5e-7)


def test_two_way_anova_unbalanced_is_type_two():
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    tooth = rdata("ToothGrowth").drop(index=[0, 1, 2, 30, 45, 59]).reset_index(drop=True)
    r = run_tool("two_way_anova", tooth, value_column="len", factor_columns=["supp", "dose"])
    ref = anova_lm(smf.ols("len ~ C(supp) * C(dose)", data=tooth).fit(), typ=2)
    assert r.metrics["f_statistic.supp"] == pytest.approx(ref.loc["C(supp)", "F"], rel=1e-9)
    assert r.metrics["f_statistic.dose"] == pytest.approx(ref.loc["C(dose)", "F"], rel=1e-9)
    assert "Unbalanced" in r.text
    additive = run_tool("two_way_anova", tooth, value_column="len", factor_columns=["supp", "dose"], interaction=False)
    ref = anova_lm(smf.ols("len ~ C(supp) + C(dose)", data=tooth).fit(), typ=2)
    assert additive.metrics["f_statistic.supp"] == pytest.approx(ref.loc["C(supp)", "F"], rel=1e-9)
    assert additive.metrics["ss_within"] == pytest.approx(ref.loc["Residual", "sum_sq"], rel=1e-9)
    assert "f_statistic.supp:dose" not in additive.metrics


def test_two_way_anova_errors():
    tooth = rdata("ToothGrowth")
    assert_error(run_tool("two_way_anova", tooth, value_column="len", factor_columns=["supp"]), "invalid_arguments")
    assert_error(
        run_tool("two_way_anova", tooth, value_column="len", factor_columns=["supp", "dos"]), "column_not_found"
    )
    one = tooth[tooth["supp"] == "VC"]
    assert_error(
        run_tool("two_way_anova", one, value_column="len", factor_columns=["supp", "dose"]), "wrong_group_count"
    )
    assert_error(
        run_tool("two_way_anova", tooth.assign(len=1.0), value_column="len", factor_columns=["supp", "dose"]),
        "constant_column",
    )
    assert_error(
        run_tool("two_way_anova", tooth.iloc[:0], value_column="len", factor_columns=["supp", "dose"]),
        "insufficient_data",
    )
    single = tooth.groupby(["supp", "dose"], as_index=False)["len"].first()  # one row per cell
    r = run_tool("two_way_anova", single, value_column="len", factor_columns=["supp", "dose"])
    assert r.ok and r.metrics["interaction_tested"] == 0 and "additive" in r.text


# ---------------------------------------------------------------- chi-square


def test_chi_square_matches_r_survey():
    survey = rdata("MASS_survey", keep_default_na=False, na_values=["NA"])  # "None" is an Exer level, not missing
    r = run_tool("chi_square_test", survey, x_column="Smoke", y_column="Exer")
    assert_clean(r)
    # R: chisq.test(table(survey$Smoke, survey$Exer)): X-squared = 5.4885, df = 6, p-value = 0.4828
    assert r.metrics["statistic"] == pytest.approx(5.4885, abs=5e-5)
    assert r.metrics["df"] == 6 and r.metrics["p_value"] == pytest.approx(0.4828, abs=5e-5)
    assert r.metrics["n"] == 236 and r.metrics["method"] == "chi_square"
    assert r.metrics["cramers_v"] == pytest.approx(math.sqrt(5.488546 / (236 * 2)), abs=1e-6)
    assert "unrelated" in r.interpretation
    assert any("20%" in line for line in r.limitations)


def test_chi_square_two_by_two_yates_and_fisher():
    mtcars = rdata("mtcars")
    r = run_tool("chi_square_test", mtcars, x_column="am", y_column="vs")
    # R: chisq.test(table(mtcars$am, mtcars$vs)): X-squared = 0.34754, df = 1, p-value = 0.5555
    assert r.metrics["method"] == "chi_square_yates"
    assert r.metrics["statistic"] == pytest.approx(0.34754, abs=5e-6) and r.metrics["p_value"] == pytest.approx(
        0.5555, abs=5e-5
    )
    small = pd.DataFrame({"seg": ["x"] * 6 + ["y"] * 6, "bought": ["yes"] * 5 + ["no"] + ["no"] * 5 + ["yes"]})
    f = run_tool("chi_square_test", small, x_column="seg", y_column="bought")
    assert_clean(f)
    # R: fisher.test(matrix(c(5, 1, 1, 5), 2)): p-value = 0.08009
    assert f.metrics["method"] == "fisher" and f.metrics["p_value"] == pytest.approx(0.08009, abs=5e-6)
    assert "exact" in f.text


def test_chi_square_errors():
    df = pd.DataFrame({"a": ["x", "y", "x", "y"], "b": ["p", "p", "p", "p"], "c": ["p", "q", "q", "p"]})
    assert_error(run_tool("chi_square_test", df, x_column="a", y_column="d"), "column_not_found")
    assert_error(run_tool("chi_square_test", df, x_column="a", y_column="b"), "constant_column")
    assert_error(run_tool("chi_square_test", df.iloc[:0], x_column="a", y_column="c"), "insufficient_data")
    ids = pd.DataFrame({"a": [str(i) for i in range(200)], "c": ["p", "q"] * 100})
    assert_error(run_tool("chi_square_test", ids, x_column="a", y_column="c"), "wrong_column_type")


# ---------------------------------------------------------------- logistic regression


def test_logistic_regression_matches_r_glm():
    mtcars = rdata("mtcars")
    r = run_tool("logistic_regression", mtcars, target_column="am", feature_columns=["wt", "hp"])
    assert_clean(r)
    m = r.metrics
    # R: glm(am ~ wt + hp, binomial, mtcars): 18.86630 (7.44356), -8.08348 (3.06868), 0.03626 (0.01773)
    assert m["coef.const"] == pytest.approx(18.86630, abs=5e-5)
    assert m["coef.wt"] == pytest.approx(-8.08348, abs=5e-5)
    assert m["coef.hp"] == pytest.approx(0.03626, abs=5e-6)
    assert (m["se.const"], m["se.wt"], m["se.hp"]) == pytest.approx((7.44356, 3.06868, 0.01773), abs=5e-5)
    assert m["odds_ratio.hp"] == pytest.approx(math.exp(m["coef.hp"]))
    assert m["or_ci_low.hp"] < m["odds_ratio.hp"] < m["or_ci_high.hp"]
    assert m["log_likelihood"] == pytest.approx(-5.0296, abs=5e-4)  # R: logLik = -5.0296; AIC 16.059
    assert m["aic"] == pytest.approx(16.059, abs=5e-4)
    assert m["n"] == 32 and m["events"] == 13 and 0.9 < m["auc"] <= 1
    assert "odds" in r.interpretation


def test_logistic_regression_labels_and_errors():
    mtcars = rdata("mtcars").assign(gear_box=lambda d: d["am"].map({0: "automatic", 1: "manual"}))
    r = run_tool("logistic_regression", mtcars, target_column="gear_box", feature_columns=["wt", "hp"])
    assert r.ok and r.metrics["event"] == "manual" and r.metrics["coef.wt"] == pytest.approx(-8.08348, abs=5e-5)
    flipped = run_tool(
        "logistic_regression", mtcars, target_column="gear_box", feature_columns=["wt", "hp"], success_value="automatic"
    )
    assert flipped.metrics["coef.wt"] == pytest.approx(8.08348, abs=5e-5)
    assert_error(
        run_tool("logistic_regression", mtcars, target_column="gear", feature_columns=["wt"]), "wrong_column_type"
    )
    assert_error(
        run_tool("logistic_regression", mtcars, target_column="am", feature_columns=["wtt"]), "column_not_found"
    )
    separated = pd.DataFrame({"y": [0] * 10 + [1] * 10, "x": np.arange(20.0)})
    assert_error(
        run_tool("logistic_regression", separated, target_column="y", feature_columns=["x"]), "perfect_separation"
    )
    assert_error(
        run_tool("logistic_regression", mtcars[mtcars["am"] == 1], target_column="am", feature_columns=["wt"]),
        "constant_column",
    )
    assert_error(
        run_tool("logistic_regression", mtcars.iloc[:0], target_column="am", feature_columns=["wt"]),
        "insufficient_data",
    )


# ---------------------------------------------------------------- proportions


def _successes(counts: dict[str, tuple[int, int]]) -> pd.DataFrame:
    rows = [{"variant": g, "converted": int(i < k)} for g, (k, n) in counts.items() for i in range(n)]
    return pd.DataFrame(rows)


def test_proportion_two_groups_matches_r_prop_test():
    df = _successes({"A": (45, 100), "B": (30, 100)})
    r = run_tool("proportion_test", df, value_column="converted", group_column="variant")
    assert_clean(r)
    m = r.metrics
    # R: prop.test(c(45, 30), c(100, 100), correct = FALSE): X-squared = 4.8, df = 1, p-value = 0.02846;
    # by hand: pooled 0.375, z = 0.15 / sqrt(0.375 * 0.625 * 0.02); CI 0.15 -/+ z * sqrt(.45 * .55 / 100 + .3 * .7 / 100)
    assert m["chi_square"] == pytest.approx(4.8, abs=1e-9)
    assert m["statistic"] == pytest.approx(0.15 / math.sqrt(0.375 * 0.625 * 0.02), rel=1e-12)
    assert m["p_value"] == pytest.approx(0.02846, abs=5e-6)
    assert m["ci_low"] == pytest.approx(0.15 - 1.959964 * math.sqrt(0.0045750), abs=1e-6)
    assert m["ci_high"] == pytest.approx(0.15 + 1.959964 * math.sqrt(0.0045750), abs=1e-6)
    assert m["proportion.A"] == 0.45 and m["n.B"] == 100
    assert "A (45.0%)" in r.interpretation


def test_proportion_one_sample_wilson():
    df = _successes({"all": (45, 100)}).assign(converted=lambda d: d["converted"].map({1: "yes", 0: "no"}))
    r = run_tool("proportion_test", df, value_column="converted", p0=0.5)
    assert_clean(r)
    # R: prop.test(45, 100, p = 0.5, correct = FALSE): X-squared = 1, p-value = 0.3173, CI 0.3561454 0.5475540
    assert r.metrics["chi_square"] == pytest.approx(1.0) and r.metrics["p_value"] == pytest.approx(0.3173, abs=5e-5)
    z = 1.959963984540054
    centre = (0.45 + z * z / 200) / (1 + z * z / 100)
    half = z * math.sqrt(0.45 * 0.55 / 100 + z * z / 40000) / (1 + z * z / 100)
    assert r.metrics["ci_low"] == pytest.approx(centre - half, abs=1e-12)
    assert r.metrics["ci_high"] == pytest.approx(0.5475540, abs=1e-7)
    k = run_tool(
        "proportion_test",
        _successes({"A": (10, 50), "B": (20, 50), "C": (30, 50)}),
        value_column="converted",
        group_column="variant",
    )
    # by hand: pooled 0.4; (10-20)²/20 + (30-20)²/20 + (40-30)²/30 + (20-30)²/30 = 16.667
    assert k.metrics["df"] == 2 and k.metrics["chi_square"] == pytest.approx(50 / 3, rel=1e-12)


def test_proportion_errors():
    df = _successes({"A": (45, 100), "B": (30, 100)})
    assert_error(run_tool("proportion_test", df, value_column="converted", p0=5), "invalid_arguments")
    assert_error(run_tool("proportion_test", df, value_column="converted", group_column="varaint"), "column_not_found")
    assert_error(
        run_tool("proportion_test", df[df.variant == "A"], value_column="converted", group_column="variant"),
        "wrong_group_count",
    )
    assert_error(
        run_tool("proportion_test", df.assign(converted=1), value_column="converted", group_column="variant"),
        "constant_column",
    )
    assert_error(run_tool("proportion_test", df, value_column="variant"), "ambiguous_outcome")
    assert_error(run_tool("proportion_test", df, value_column="variant", success_value="Z"), "value_not_found")
    assert run_tool("proportion_test", df, value_column="variant", success_value="A").metrics["proportion"] == 0.5
    assert_error(run_tool("proportion_test", df.iloc[:0], value_column="converted"), "insufficient_data")


# ---------------------------------------------------------------- outliers


def test_outliers_iqr_matches_r_boxplot_stats():
    mtcars = rdata("mtcars")
    r = run_tool("outlier_detection", mtcars, value_column="hp")
    assert_clean(r)
    # R: boxplot.stats(mtcars$hp)$out = 335; quantile(): 96.5, 123, 180
    assert r.metrics["n_outliers"] == 1 and r.metrics["example_1"] == 335
    assert (r.metrics["q1"], r.metrics["median"], r.metrics["q3"]) == (96.5, 123.0, 180.0)
    assert r.metrics["upper_fence"] == pytest.approx(180 + 1.5 * 83.5)
    assert r.metrics["share"] == pytest.approx(1 / 32) and r.metrics["n_high"] == 1
    assert r.payload["outlier_rows"] == [31]  # R: which(mtcars$hp == 335) = 31 (rows counted from 1)
    assert r.payload["examples"][0]["row"] == 31
    repeated = run_tool("outlier_detection", mtcars.set_axis([7] * 32), value_column="hp")
    assert repeated.payload["outlier_rows"] == [31]  # counted in the table given, whatever its index
    assert r.metrics["mad"] == 52 and r.metrics["n_outliers.mad"] == 0  # R: mad(hp, constant = 1) = 52
    m = run_tool("outlier_detection", mtcars, value_column="hp", method="mad", threshold=2.5)
    assert m.metrics["n_outliers"] == 1 and m.payload["examples"][0]["robust_z"] == pytest.approx(
        0.6745 * 212 / 52, abs=1e-3
    )


def test_outliers_errors_and_zero_mad():
    df = pd.DataFrame({"v": [10.0] * 20 + [11.0, 500.0], "flat": [1.0] * 22, "txt": ["a"] * 22})
    r = run_tool("outlier_detection", df, value_column="v", method="mad")
    assert r.ok and r.metrics["mad"] == 0 and r.metrics["n_outliers"] >= 1 and r.metrics["example_1"] == 500
    assert_error(run_tool("outlier_detection", df, value_column="flat"), "constant_column")
    assert_error(run_tool("outlier_detection", df, value_column="txt"), "wrong_column_type")
    assert_error(run_tool("outlier_detection", df, value_column="vv"), "column_not_found")
    assert_error(run_tool("outlier_detection", df, value_column="v", threshold=-1), "invalid_arguments")
    assert_error(run_tool("outlier_detection", df.iloc[:0], value_column="v"), "insufficient_data")


# ---------------------------------------------------------------- confidence intervals


def test_confidence_interval_mean_matches_r():
    sleep = rdata("sleep")
    r = run_tool("confidence_interval", sleep, value_column="extra")
    assert_clean(r)
    # R: t.test(sleep$extra)$conf.int = 0.5955845 2.4844155
    assert r.metrics["estimate"] == pytest.approx(1.54)
    assert r.metrics["ci_low"] == pytest.approx(0.5955845, abs=1e-7) and r.metrics["ci_high"] == pytest.approx(
        2.4844155, abs=1e-7
    )
    r90 = run_tool("confidence_interval", sleep, value_column="extra", confidence=0.9)
    assert r90.metrics["ci_low"] > r.metrics["ci_low"]


def test_confidence_interval_median_and_proportion():
    sleep = rdata("sleep")
    a = run_tool("confidence_interval", sleep, value_column="extra", statistic="median")
    b = run_tool("confidence_interval", sleep, value_column="extra", statistic="median")
    assert_clean(a)
    assert a.metrics == {**b.metrics, "duration_ms": a.metrics["duration_ms"]}  # fixed seed: reproducible
    assert a.metrics["ci_low"] <= a.metrics["estimate"] <= a.metrics["ci_high"]
    assert a.metrics["estimate"] == pytest.approx(0.95)
    assert "Bootstrap" in a.method
    big = pd.DataFrame({"v": np.random.default_rng(3).normal(50, 10, 40000)})
    o = run_tool("confidence_interval", big, value_column="v", statistic="median")
    assert "order statistics" in o.method and o.metrics["ci_low"] < 50 < o.metrics["ci_high"]
    df = _successes({"all": (45, 100)})
    p = run_tool("confidence_interval", df, value_column="converted", statistic="proportion")
    assert p.metrics["ci_low"] == pytest.approx(0.3561454, abs=1e-7) and p.metrics["ci_high"] == pytest.approx(
        0.5475540, abs=1e-7
    )
    assert "45.0%" in p.interpretation


def test_confidence_interval_errors():
    df = pd.DataFrame({"v": [1.0] * 5, "w": [1.0, 2.0, np.nan, 4.0, 5.0]})
    assert_error(run_tool("confidence_interval", df, value_column="v"), "constant_column")
    assert_error(run_tool("confidence_interval", df, value_column="w", confidence=95), "invalid_arguments")
    assert_error(run_tool("confidence_interval", df, value_column="w", statistic="mode"), "invalid_arguments")
    assert_error(run_tool("confidence_interval", df.iloc[:0], value_column="w"), "insufficient_data")
    r = run_tool("confidence_interval", df, value_column="w")
    assert r.ok and r.metrics["n"] == 4 and "1 rows" in r.interpretation


# ---------------------------------------------------------------- curve fit


def test_curve_fit_auto_picks_the_generating_family():
    rng = np.random.default_rng(7)
    x = np.linspace(1, 50, 80)
    df = pd.DataFrame({"spend": x, "sales": 12 * x**0.6 * np.exp(rng.normal(0, 0.02, x.size))})
    r = run_tool("curve_fit", df, x_column="spend", y_column="sales")
    assert_clean(r)
    assert r.metrics["best_model"] == "power" and r.metrics["coef.b2"] == pytest.approx(0.6, abs=0.01)
    assert {"r_squared.linear", "r_squared.exponential", "r_squared.logarithmic"} <= set(r.metrics)
    assert "Doubling spend" in r.interpretation
    e = run_tool("curve_fit", df.assign(sales=3 * np.exp(0.05 * x)), x_column="spend", y_column="sales")
    assert e.metrics["best_model"] == "exponential" and e.metrics["coef.b2"] == pytest.approx(0.05, rel=1e-9)
    assert has_cjk(run_tool("curve_fit", df, x_column="spend", y_column="sales", language="zh").interpretation)


def test_curve_fit_linear_equals_ols_and_formula_matches_cars():
    cars = rdata("cars")
    lin = run_tool("curve_fit", cars, x_column="speed", y_column="dist", model="linear").metrics
    ols = run_tool("linear_regression", cars, target_column="dist", feature_columns=["speed"]).metrics
    assert lin["coef.b1"] == pytest.approx(ols["coef.const"], rel=1e-9) and lin["se.b2"] == pytest.approx(
        ols["se.speed"], rel=1e-7
    )
    assert lin["residual_std_error"] == pytest.approx(15.38, abs=5e-3)  # R: lm(dist ~ speed, cars)
    quad = run_tool("curve_fit", cars, x_column="speed", y_column="dist", formula="b1*x + b2*x^2")
    assert quad.ok and quad.metrics["model"] == "formula"
    # R: lm(dist ~ 0 + speed + I(speed^2), cars): 1.23903, 0.09014
    assert quad.metrics["coef.b1"] == pytest.approx(1.23903, abs=5e-6) and quad.metrics["coef.b2"] == pytest.approx(
        0.09014, abs=5e-6
    )


def test_curve_fit_rejects_unsafe_or_bad_formulas():
    df = pd.DataFrame({"x": np.arange(1.0, 11.0), "y": np.arange(1.0, 11.0) ** 1.5})
    for formula in [
        "__import__('os').system('echo hacked')",
        "x.real * b1",
        "b1 * y",
        "b1 * open(x)",
        "b1 * x[0]",
        "lambda: b1",
        "b1 * x if b1 else x",
        "'a' * b1",
        "b1 * exp(x, base=2)",
        "b1 + b3 * x",
        "2 * x",
    ]:
        assert_error(run_tool("curve_fit", df, x_column="x", y_column="y", formula=formula), "invalid_formula")
    assert_error(
        run_tool("curve_fit", df, x_column="x", y_column="y", formula="b1*x**b2", start=[1.0]), "invalid_arguments"
    )
    assert_error(
        run_tool("curve_fit", df, x_column="x", y_column="y", formula="b1*log(x - b2)", start=[1.0, 5.0]), "fit_failed"
    )
    assert_error(run_tool("curve_fit", df, x_column="x", y_column="yy"), "column_not_found")
    assert_error(run_tool("curve_fit", df.assign(y=2.0), x_column="x", y_column="y"), "constant_column")
    assert_error(run_tool("curve_fit", df.assign(x=1.0), x_column="x", y_column="y"), "constant_column")
    assert_error(
        run_tool("curve_fit", df.assign(x=df.x - 5), x_column="x", y_column="y", model="power"), "invalid_values"
    )
    assert_error(run_tool("curve_fit", df.iloc[:0], x_column="x", y_column="y"), "insufficient_data")
    auto = run_tool("curve_fit", df.assign(x=df.x - 5), x_column="x", y_column="y")
    assert auto.ok and "r_squared.power" not in auto.metrics


# ---------------------------------------------------------------- NIST ANOVA beyond float64


def _nist_anova(name: str) -> tuple[dict, pd.DataFrame]:
    path = NIST / "anova" / f"{name}.dat"
    text = path.read_text()
    cert = {
        "f": float(re.search(r"^Between Treatment\s+\d+\s+\S+\s+\S+\s+(\S+)", text, re.M)[1]),
        "r2": float(re.search(r"Certified R-Squared\s+(\S+)", text)[1]),
    }
    first, last = map(int, re.search(r"Data\s+\(lines (\d+) to (\d+)\)", text).groups())
    rows = [line.split() for line in text.splitlines()[first - 1 : last] if line.strip()]
    return cert, pd.DataFrame({"treatment": [r[0] for r in rows], "response": [float(r[1]) for r in rows]})


@pytest.mark.parametrize("name", ["SmLs07", "SmLs08", "SmLs09"])
def test_anova_beyond_float64_reaches_four_digits_and_says_so(name):
    cert, df = _nist_anova(name)
    r = run_tool("compare_groups", df, value_column="response", group_column="treatment", method="anova")
    assert r.ok, r.error
    assert lre(r.metrics["f_statistic"], cert["f"]) >= 4
    assert lre(r.metrics["r_squared"], cert["r2"]) >= 4
    assert r.metrics["precision_warning"] == 1
    assert "float64" in r.text and any("float64" in line for line in r.limitations)
    assert r.metrics["mean.1"] == pytest.approx(1000000000000.4, abs=1e-3)
    zh = run_tool(
        "compare_groups", df, value_column="response", group_column="treatment", method="anova", language="zh"
    )
    assert "float64" in zh.text and "精度" in zh.text


def test_ordinary_anova_has_no_precision_warning():
    cert, df = _nist_anova("SmLs03")
    r = run_tool("compare_groups", df, value_column="response", group_column="treatment", method="anova")
    assert r.ok and "precision_warning" not in r.metrics


def test_new_tools_answer_in_chinese():
    sleep, mtcars, tooth = rdata("sleep"), rdata("mtcars"), rdata("ToothGrowth")
    results = [
        run_tool("normality_test", mtcars, value_column="mpg", language="zh"),
        run_tool("paired_test", sleep, value_column="extra", group_column="group", id_column="ID", language="zh"),
        run_tool("two_way_anova", tooth, value_column="len", factor_columns=["supp", "dose"], language="zh"),
        run_tool("chi_square_test", mtcars, x_column="am", y_column="vs", language="zh"),
        run_tool("logistic_regression", mtcars, target_column="am", feature_columns=["wt"], language="zh"),
        run_tool("proportion_test", mtcars, value_column="am", group_column="vs", language="zh"),
        run_tool("outlier_detection", mtcars, value_column="hp", language="zh"),
        run_tool("confidence_interval", mtcars, value_column="mpg", language="zh"),
        run_tool("curve_fit", mtcars, x_column="hp", y_column="mpg", language="zh"),
    ]
    for r in results:
        assert_clean(r)
        assert has_cjk(r.interpretation), r.interpretation


def has_cjk(text: str) -> bool:
    return bool(re.search(r"[\u4e00-\u9fff]", text))
