"""Count tables (one row per combination with a frequency column, as R's table exports) weigh each row
by its frequency in rates and chi-square (issue 14). Expected values come from the table expanded to one
row per case, computed here with pandas/scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis_tools.base import ToolError
from analysis_tools.stats_categorical import chi_square_test, proportion_test

# A made-up count table: treatment x outcome x site, with an empty cell (0) as R tables have.
COUNTS = pd.DataFrame(
    {
        "Outcome": ["Cured", "Not cured"] * 4,
        "Treatment": ["Drug", "Drug", "Placebo", "Placebo"] * 2,
        "Site": ["North"] * 4 + ["South"] * 4,
        "n": [120, 30, 70, 80, 15, 0, 40, 45],
    }
)


def expanded(frame: pd.DataFrame, weights: str) -> pd.DataFrame:
    return frame.loc[np.repeat(frame.index.to_numpy(), frame[weights].to_numpy())].drop(columns=weights)


def test_rates_per_group_count_each_row_as_many_cases_as_its_frequency():
    cases = expanded(COUNTS, "n")
    cured = cases["Outcome"].eq("Cured").groupby(cases["Treatment"]).agg(["sum", "count"])
    result = proportion_test(COUNTS, "Outcome", "Treatment", success_value="Cured", weight_column="n")
    for group in ("Drug", "Placebo"):
        assert result.metrics[f"proportion.{group}"] == pytest.approx(
            cured.loc[group, "sum"] / cured.loc[group, "count"]
        )
        assert result.metrics[f"n.{group}"] == cured.loc[group, "count"]
    table = pd.crosstab(cases["Treatment"], cases["Outcome"]).to_numpy()
    chi2, p, _, _ = stats.chi2_contingency(table, correction=False)
    assert result.metrics["chi_square"] == pytest.approx(chi2)
    assert result.metrics["p_value"] == pytest.approx(p)
    assert result.metrics["n"] == len(cases)
    # unweighted, each row is one case: a different (wrong for this table) answer
    assert proportion_test(COUNTS, "Outcome", "Treatment", success_value="Cured").metrics["n"] == len(COUNTS)


def test_one_rate_of_a_count_table():
    cases = expanded(COUNTS, "n")
    result = proportion_test(COUNTS, "Outcome", success_value="Cured", weight_column="n", p0=0.5)
    assert result.metrics["proportion"] == pytest.approx(cases["Outcome"].eq("Cured").mean())
    assert result.metrics["n"] == len(cases)


def test_chi_square_of_a_count_table_matches_the_expanded_rows():
    cases = expanded(COUNTS, "n")
    result = chi_square_test(COUNTS, "Site", "Outcome", weight_column="n")
    table = pd.crosstab(cases["Site"], cases["Outcome"]).to_numpy()
    chi2, _, dof, _ = stats.chi2_contingency(table, correction=False)
    yates, p, _, _ = stats.chi2_contingency(table, correction=True)
    assert result.metrics["n"] == len(cases)
    assert result.metrics["chi_square"] == pytest.approx(chi2)
    assert result.metrics["statistic"] == pytest.approx(yates)
    assert result.metrics["p_value"] == pytest.approx(p)


def test_a_weight_column_must_hold_counts():
    bad = COUNTS.assign(n=COUNTS["n"] - 20)
    with pytest.raises(ToolError) as error:
        proportion_test(bad, "Outcome", "Treatment", success_value="Cured", weight_column="n")
    assert error.value.category == "wrong_column_type"


def test_rates_from_counts_of_both_outcomes_on_each_row():
    """Grouped binomial rows (esoph's ncases/ncontrols): successes / (successes + failures) per group."""
    grouped = pd.DataFrame(
        {
            "dose": ["low", "low", "mid", "mid", "high", "high"],
            "site": list("ABABAB"),
            "n_cured": [5, 8, 12, 9, 20, 17],
            "n_failed": [30, 25, 20, 22, 6, 9],
        }
    )
    long = pd.concat(
        [grouped.assign(cured=1, k=grouped["n_cured"]), grouped.assign(cured=0, k=grouped["n_failed"])],
        ignore_index=True,
    )
    rows = expanded(long, "k")
    rates = rows.groupby("dose")["cured"].mean()
    chi2, p, _, _ = stats.chi2_contingency(pd.crosstab(rows["dose"], rows["cured"]), correction=False)
    result = proportion_test(grouped, "n_cured", "dose", failures_column="n_failed")
    for dose in ("low", "mid", "high"):
        assert result.metrics[f"proportion.{dose}"] == pytest.approx(rates[dose])
    assert result.metrics["chi_square"] == pytest.approx(chi2) and result.metrics["p_value"] == pytest.approx(p)
    assert result.metrics["n"] == len(rows)
    overall = proportion_test(grouped, "n_cured", failures_column="n_failed")
    assert overall.metrics["proportion"] == pytest.approx(rows["cured"].mean())
