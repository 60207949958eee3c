"""Issue 23 point 5, the data and table half of the tool list: each fix with a test that failed on
the code before it (tables to six significant figures, fit summaries first, several aggregations in
one call, side tables that leave the active dataset alone, weighted counts, ...). Expected numbers
come from pandas, NumPy, SciPy or statsmodels directly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis_tools import registry, run_tool


def _section(text: str, tag: str) -> str:
    """The body of one [tag] section of a tool's text."""
    head = f"[{tag}]\n"
    assert head in text, f"no [{tag}] section in:\n{text}"
    return text.split(head, 1)[1].split("\n\n[", 1)[0]


# ---------------------------------------------------------------- 1. six significant figures


def test_describe_columns_prints_six_significant_figures() -> None:
    values = pd.Series([500.0, 510.0, 512.0, 515.0, 524.6460], name="score")
    frame = pd.DataFrame({"score": values})
    result = run_tool("describe_columns", frame, columns=["score"])
    assert result.ok, result.error
    expected_mean = f"{float(np.mean(values.to_numpy())):.6g}"  # 512.329, from NumPy
    assert expected_mean == "512.329"
    table = _section(result.text, "data_profile") if "[data_profile]" in result.text else result.text
    assert expected_mean in table
    assert "512.3 " not in table and not table.rstrip().endswith("512.3")


def test_rank_values_table_keeps_six_significant_figures() -> None:
    frame = pd.DataFrame({"city": ["A", "B", "C"], "price": [1234.56789, 987.654321, 5.5]})
    result = run_tool("rank_values", frame, value_column="price", top=2, label_columns=["city"])
    assert result.ok, result.error
    listed = _section(result.text, "result")
    assert f"{1234.56789:.6g}" in listed  # 1234.57, not 1,235
    assert f"{987.654321:.6g}" in listed  # 987.654, not 987.7


# ---------------------------------------------------------------- 8. several aggregations, printed once


def test_group_aggregate_several_aggregations_in_one_call_printed_once() -> None:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"region": rng.choice(["north", "south", "east"], 60), "sales": rng.gamma(3.0, 41.7, 60)})
    result = run_tool(
        "group_aggregate",
        frame,
        group_columns=["region"],
        value_columns=["sales"],
        aggregations=["mean", "median", "max"],
    )
    assert result.ok, result.error
    expected = frame.groupby("region")["sales"].agg(["mean", "median", "max"])
    table = result.table.set_index("region")
    for agg in ("mean", "median", "max"):
        assert np.allclose(table[f"sales_{agg}"].loc[expected.index], expected[agg]), agg
    # the table is in the text once (no second [preview] copy of the same rows)
    first_group = str(table.index[0])
    assert result.text.count(f"\n{first_group} ") + result.text.startswith(f"{first_group} ") <= 1
    assert "[preview]" not in result.text
