"""Verity's analysis tools: plain typed functions, registered explicitly by group.

from analysis_tools import list_tools, run_tool
result = run_tool("compare_two_groups", df, value_column="extra", group_column="group")
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from .base import ResultLookup, ResultRecord, TaggedText, ToolContext, ToolError, ToolResult, tagged_text
from .registry import Registry, Tool, make_tool

_build_lock = threading.Lock()


def registry() -> Registry:
    """The analysis tools' registry, built on first use: registering the tools imports their
    modules and with them scipy, statsmodels, scikit-learn and matplotlib (about a second), which
    reading a file (`verity inspect`, an upload's child process) and `verity --help` never need."""
    with _build_lock:
        if "REGISTRY" not in globals():
            globals()["REGISTRY"] = _build_registry()
    return globals()["REGISTRY"]


def __getattr__(name: str) -> Any:
    """`from analysis_tools import REGISTRY` keeps working: it builds the registry then (PEP 562)."""
    if name == "REGISTRY":
        return registry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _build_registry() -> Registry:
    from . import (
        core,
        data,
        data_derive,
        data_merge,
        data_quality,
        data_rank,
        data_transform,
        ml,
        plot_comparison,
        plot_distribution,
        plot_relationship,
        stats,
        timeseries,
    )

    return Registry(
        [
            # core: always visible
            make_tool(core.list_datasets, "core"),
            make_tool(core.preview_data, "core"),
            make_tool(core.profile_dataset, "core"),
            # data
            make_tool(data.value_counts, "data"),
            make_tool(data_quality.clean_data, "data"),
            make_tool(data_transform.convert_types, "data"),
            make_tool(data_transform.filter_rows, "data"),
            make_tool(data_derive.derive_column, "data"),
            make_tool(data_merge.group_aggregate, "data"),
            make_tool(
                data_rank.rank_values,
                "data",
                # the words of "the N largest …" (tool_search matches keywords as well as the description)
                keywords=[
                    "top",
                    "bottom",
                    "largest",
                    "smallest",
                    "highest",
                    "lowest",
                    "biggest",
                    "maximum",
                    "minimum",
                    "best",
                    "worst",
                    "sort",
                    "ranking",
                    "排名",
                    "排序",
                    "最大",
                    "最小",
                    "最高",
                    "最低",
                ],
            ),
            make_tool(data_merge.pivot_table, "data"),
            make_tool(data_merge.merge_datasets, "data"),
            make_tool(data_quality.detect_data_quality, "data"),
            # stats
            make_tool(stats.describe_columns, "stats"),
            make_tool(stats.compare_two_groups, "stats"),
            make_tool(stats.compare_groups, "stats"),
            make_tool(stats.correlation_analysis, "stats"),
            make_tool(stats.linear_regression, "stats"),
            make_tool(stats.normality_test, "stats"),
            make_tool(stats.paired_test, "stats"),
            make_tool(stats.two_way_anova, "stats"),
            make_tool(stats.chi_square_test, "stats"),
            make_tool(stats.logistic_regression, "stats"),
            make_tool(stats.proportion_test, "stats"),
            make_tool(stats.outlier_detection, "stats"),
            make_tool(stats.confidence_interval, "stats"),
            make_tool(stats.curve_fit, "stats"),
            # ml
            make_tool(ml.train_regression_model, "ml"),
            make_tool(ml.train_classifier, "ml"),
            make_tool(ml.feature_importance, "ml"),
            make_tool(ml.cluster_segments, "ml"),
            make_tool(ml.pca_analysis, "ml"),
            make_tool(ml.anomaly_detection, "ml"),
            # timeseries
            make_tool(timeseries.time_series_trend, "timeseries"),
            make_tool(timeseries.seasonal_decompose, "timeseries"),
            make_tool(timeseries.forecast, "timeseries"),
            make_tool(timeseries.compare_periods, "timeseries"),
            make_tool(timeseries.cohort_retention, "timeseries"),
            make_tool(timeseries.funnel_analysis, "timeseries"),
            make_tool(timeseries.contribution_decomposition, "timeseries"),
            # plot
            make_tool(plot_distribution.plot_histogram, "plot"),
            make_tool(plot_comparison.plot_bar, "plot"),
            make_tool(plot_relationship.plot_scatter, "plot"),
            make_tool(plot_relationship.plot_line, "plot"),
            make_tool(plot_distribution.plot_box, "plot"),
            make_tool(plot_comparison.plot_heatmap, "plot"),
            make_tool(plot_comparison.plot_pie, "plot"),
        ]
    )


def list_tools(group: str | None = None) -> list[Tool]:
    """All analysis tools, or those of one group."""
    return [t for t in registry() if group is None or t.group == group]


def run_tool(
    name: str,
    data: Any = None,
    *,
    ctx: ToolContext | None = None,
    language: str = "en",
    figures_dir: str | Path | None = None,
    **arguments: Any,
) -> ToolResult:
    """Run one tool on a DataFrame (or a dict of DataFrames). Never raises for user errors."""
    if ctx is None:
        ctx = ToolContext(language=language, figures_dir=Path(figures_dir) if figures_dir else None)
        if data is not None and not isinstance(data, dict):
            ctx.datasets = {"data": data}
            ctx.dataset_name = "data"
    return registry().run(name, data, ctx, **arguments)


__all__ = [
    "REGISTRY",
    "Registry",
    "ResultLookup",
    "ResultRecord",
    "TaggedText",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "list_tools",
    "make_tool",
    "registry",
    "run_tool",
    "tagged_text",
]
