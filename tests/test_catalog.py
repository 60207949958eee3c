"""The whole analysis catalog: every tool is listed with a schema, and degenerate data or wrong
arguments always come back as a structured error, never as an exception or an internal error."""

import numpy as np
import pandas as pd
import pytest

from analysis_tools import list_tools, run_tool

CATALOG = {  # SPEC §11, the analysis groups (the core harness tools live in app/agent/tools/toolbox.py)
    "core": {"list_datasets", "preview_data", "profile_dataset"},
    "data": {
        "clean_data",
        "convert_types",
        "filter_rows",
        "derive_column",
        "group_aggregate",
        "pivot_table",
        "merge_datasets",
        "detect_data_quality",
        "value_counts",
    },
    "stats": {
        "describe_columns",
        "normality_test",
        "compare_two_groups",
        "paired_test",
        "compare_groups",
        "two_way_anova",
        "chi_square_test",
        "correlation_analysis",
        "linear_regression",
        "logistic_regression",
        "proportion_test",
        "outlier_detection",
        "confidence_interval",
        "curve_fit",
    },
    "ml": {
        "train_regression_model",
        "train_classifier",
        "feature_importance",
        "cluster_segments",
        "pca_analysis",
        "anomaly_detection",
    },
    "timeseries": {
        "time_series_trend",
        "seasonal_decompose",
        "forecast",
        "compare_periods",
        "cohort_retention",
        "funnel_analysis",
        "contribution_decomposition",
    },
    "plot": {"plot_histogram", "plot_bar", "plot_line", "plot_scatter", "plot_box", "plot_heatmap", "plot_pie"},
}

# Degenerate data: all values missing, or a single constant group.
N = 12
DEGENERATE = pd.DataFrame(
    {
        "v": [np.nan] * N,
        "w": [np.nan] * N,
        "g": ["only"] * N,
        "h": ["one"] * N,
        "d": pd.to_datetime([None] * N),
        "id": [f"u{i}" for i in range(N)],
    }
)
ARGUMENTS = {
    "value_column": "v",
    "group_column": "g",
    "x_column": "v",
    "y_column": "w",
    "column": "v",
    "columns": ["v", "w"],
    "target_column": "v",
    "feature_columns": ["w"],
    "factor_columns": ["g", "h"],
    "date_column": "d",
    "id_column": "id",
    "index_column": "g",
    "columns_column": "h",
    "group_columns": ["g"],
    "value_columns": ["v"],
    "to": "number",
    "conditions": [{"column": "v", "op": ">", "value": 1}],
    "new_column_name": "z",
    "expression": "`v` * 2",
    "left": "a",
    "right": "b",
    "on": ["id"],
}


DESCRIBE_OR_RESHAPE = {
    "list_datasets",
    "preview_data",
    "profile_dataset",
    "clean_data",
    "detect_data_quality",
    "value_counts",
    "describe_columns",
    "group_aggregate",
    "pivot_table",
}


def tools():
    return sorted(list_tools(), key=lambda t: t.name)


def test_the_catalog_is_complete_and_described():
    names = {t.name: t for t in list_tools()}
    for group, expected in CATALOG.items():
        assert expected <= {n for n, t in names.items() if t.group == group}, group
    for tool in names.values():
        assert tool.description and tool.schema()["function"]["parameters"]["type"] == "object"
    assert sum(len(v) for v in CATALOG.values()) >= 40


@pytest.mark.parametrize("tool", tools(), ids=lambda t: t.name)
def test_unknown_argument_is_a_structured_error(tool):
    data = {"a": DEGENERATE, "b": DEGENERATE} if tool.multi_data else DEGENERATE
    result = run_tool(tool.name, data, no_such_argument=1)
    assert not result.ok and result.error["error"] == "invalid_arguments" and result.error["hint"]


@pytest.mark.parametrize("tool", tools(), ids=lambda t: t.name)
def test_degenerate_data_is_a_structured_error(tool, tmp_path):
    required = tool.parameters["required"]
    if any(name not in ARGUMENTS for name in required):
        pytest.skip(f"no generic arguments for {required}")
    arguments = {name: ARGUMENTS[name] for name in required}
    data = {"a": DEGENERATE, "b": DEGENERATE} if tool.multi_data else DEGENERATE
    result = run_tool(tool.name, data, figures_dir=tmp_path, **arguments)
    if result.ok:  # tools that describe or reshape can honestly answer on an all-missing table
        assert tool.name in DESCRIBE_OR_RESHAPE and result.interpretation
        return
    assert result.error["error"] != "internal_error", result.error
    assert result.error["message"] and "Traceback" not in result.error["message"]
