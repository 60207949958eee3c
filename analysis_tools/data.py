"""Data tools (group `data`)."""

from __future__ import annotations

import pandas as pd

from .base import ToolContext, ToolResult, tagged_text
from .common import clean_metrics, fmt_cell, fmt_num, label, require_numeric


def value_counts(
    data: pd.DataFrame,
    column: str,
    top: int = 20,
    normalize: bool = False,
    weight_column: str | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Count how often each value of a column occurs, with shares; missing values are counted separately; with weight_column, each row counts as its weight (a table of counts with a Freq column).

    Args:
        column: The column to count (usually a category such as region or product).
        top: How many values to list; the most frequent first, the rest summed as "other".
        normalize: Report by share (percent of non-missing rows) instead of by count in the text.
        weight_column: Cases each row stands for (e.g. Freq in a table of counts); shares are of the weights' total.
    """
    ctx = ctx or ToolContext()
    check_column(data, column, ctx)
    series = data[column]
    top = max(1, int(top))
    n = len(series)
    missing = int(series.isna().sum())
    unweighted = 0
    if weight_column:
        check_column(data, weight_column, ctx)
        weights = require_numeric(data, weight_column, ctx)
        unweighted = int((series.notna() & weights.isna()).sum())  # a row without a weight counts for nothing
        kept = series.notna() & weights.notna()
        present = series[kept].map(label)
        counts = weights[kept].groupby(present).sum().sort_values(ascending=False, kind="stable")
        missing_weight = float(weights[series.isna()].sum())
    else:
        present = series.dropna().map(label)
        counts = present.value_counts()
        missing_weight = float(missing)
    valid = counts.sum()
    shown = counts.head(top)
    other = counts.iloc[top:].sum()

    def amount(value: float) -> str:
        return fmt_cell(value) if weight_column else str(int(value))

    table = pd.DataFrame(
        {
            "value": [str(v) for v in shown.index],
            "count": shown.to_numpy(dtype=float if weight_column else int),
            "share": shown.to_numpy(dtype=float) / valid if valid else 0.0,
        }
    )
    metrics: dict = {"n": n, "missing": missing, "unique": int(len(counts)), "other": other}
    if weight_column:
        metrics.update(weight_column=weight_column, weighted_total=float(valid), rows_without_weight=unweighted)
    for value, count in shown.items():
        metrics[f"count.{value}"] = float(count) if weight_column else int(count)
        metrics[f"share.{value}"] = count / valid if valid else 0.0
    lines = [f"{str(v)[:40]:<40} {amount(c):>10} {c / valid * 100 if valid else 0:6.1f}%" for v, c in shown.items()]
    if normalize:
        lines = [f"{str(v)[:40]:<40} {c / valid * 100 if valid else 0:6.1f}% ({amount(c)})" for v, c in shown.items()]
    if other:
        lines.append(
            ctx.t(
                f"{'(other ' + str(len(counts) - top) + ' values)':<40} {amount(other):>10}",
                f"{'（其余 ' + str(len(counts) - top) + ' 个取值）':<40} {amount(other):>10}",
            )
        )
    lines.append(
        ctx.t(f"{'(missing)':<40} {amount(missing_weight):>10}", f"{'（缺失）':<40} {amount(missing_weight):>10}")
    )
    insights = []
    if len(shown):
        first, share = shown.index[0], shown.iloc[0] / valid
        insights.append(
            ctx.t(
                f"Most common: {first} ({share * 100:.1f}% of non-missing rows).",
                f"最常见：{first}（占非缺失行的 {share * 100:.1f}%）。",
            )
        )
        if share > 0.9 and len(counts) > 1:
            insights.append(
                ctx.t(
                    "One value dominates; comparisons across values will rest on few rows.",
                    "单一取值占绝大多数，按取值比较时其他组样本很少。",
                )
            )
    if missing:
        insights.append(
            ctx.t(
                f"{missing} rows ({missing / n * 100:.1f}%) are missing.",
                f"有 {missing} 行（{missing / n * 100:.1f}%）缺失。",
            )
        )
    interpretation = ctx.t(
        f"{column} has {len(counts)} distinct values; the most common is {shown.index[0]} ({fmt_num(shown.iloc[0], 6)} {'by ' + weight_column if weight_column else 'rows'})."
        if len(shown)
        else f"{column} has no non-missing values.",
        f"{column} 共有 {len(counts)} 个不同取值，最常见的是 {shown.index[0]}（{fmt_num(shown.iloc[0], 6)} {'（按 ' + weight_column + ' 加权）' if weight_column else '行'}）。"
        if len(shown)
        else f"{column} 没有非缺失值。",
    )
    text = tagged_text(data_profile="\n".join(lines), insights=insights, interpretation=interpretation)
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=interpretation,
        method="value counts",
        sample_size=n,
        table=table,
        payload={"counts": table.to_dict(orient="records")},
        limitations=([] if not missing else [ctx.t("Shares are of non-missing rows.", "占比按非缺失行计算。")])
        + (
            [
                ctx.t(
                    f"{unweighted} rows without a {weight_column} value were not counted.",
                    f"有 {unweighted} 行缺少 {weight_column}，未计入。",
                )
            ]
            if unweighted
            else []
        ),
    )


def check_column(data: pd.DataFrame, column: str, ctx: ToolContext) -> None:
    """For names the registry does not check (not `*_column`, or inside a list): a clear error with
    the available columns and a did-you-mean."""
    if column not in data.columns:
        from .base import ToolError
        from .registry import suggest

        available = [str(c) for c in data.columns]
        raise ToolError(
            "column_not_found",
            ctx.t(f"Column {column!r} does not exist.", f"列 {column!r} 不存在。"),
            column=column,
            hint=ctx.t("Retry with one of the available columns.", "请改用现有的列。"),
            did_you_mean=suggest(column, available),
            available=available[:60],
        )
