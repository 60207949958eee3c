"""How the plot tools check their input and report: wrong-type and no-data errors, the note on
folded groups, and the result every chart returns (figure, caption, the text the model reads)."""

from __future__ import annotations

import pandas as pd

from . import charts
from .base import ToolContext, ToolError, ToolResult, tagged_text


def require_numeric_column(data: pd.DataFrame, column: str, ctx: ToolContext, other_tool: str) -> pd.Series:
    """The column as finite floats, or a structured wrong_column_type error."""
    series = data[column]
    if not charts.is_numeric(series):
        kind = str(series.dtype)
        if charts.mostly_numeric_text(series):
            hint = ctx.t(
                f"'{column}' holds numbers stored as text; convert it with convert_types first.",
                f"“{column}”中的数字是以文本形式存储的，请先用 convert_types 转换为数值。",
            )
        else:
            hint = ctx.t(
                f"Pick a numeric column, or use {other_tool} to chart the categories of '{column}'.",
                f"请选择数值列，或用 {other_tool} 绘制“{column}”的类别。",
            )
        raise ToolError(
            "wrong_column_type",
            ctx.t(f"Column '{column}' is not numeric (type {kind}).", f"列“{column}”不是数值类型（{kind}）。"),
            hint=hint,
            column=column,
            dtype=kind,
        )
    return charts.numeric_values(series)


def no_data_error(column: str, ctx: ToolContext) -> ToolError:
    return ToolError(
        "insufficient_data",
        ctx.t(f"Column '{column}' has no usable values to plot.", f"列“{column}”没有可绘制的有效值。"),
        hint=ctx.t("Check for missing values or filter less strictly.", "请检查缺失值，或放宽筛选条件。"),
    )


def folded_groups_note(n_folded: int, ctx: ToolContext) -> str:
    return ctx.t(f"{n_folded} smaller groups are combined as Other.", f"较小的 {n_folded} 个组合并为“其他”。")


def chart_result(
    ctx: ToolContext,
    path,
    caption: str,
    insights: list[str],
    limitations: list[str],
    metrics: dict,
    method: str,
    sample_size: int,
    table: pd.DataFrame | None = None,
) -> ToolResult:
    """What every plot tool returns: the figure, its caption and the chart text the model reads."""
    return ToolResult(
        metrics=metrics,
        figures=[str(path)],
        captions=[caption],
        text=tagged_text(
            chart=f"{caption}\n{ctx.t('file', '文件')}: {path}", insights=insights, limitations=limitations
        ),
        method=method,
        sample_size=sample_size,
        limitations=limitations,
        table=table,
    )
