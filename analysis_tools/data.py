"""Data tools (group `data`)."""

from __future__ import annotations

import pandas as pd

from .base import ToolContext, ToolResult, tagged_text
from .common import clean_metrics, fmt_num, label


def value_counts(
    data: pd.DataFrame, column: str, top: int = 20, normalize: bool = False, ctx: ToolContext | None = None
) -> ToolResult:
    """Count how often each value of a column occurs, with shares; missing values are counted separately.

    Args:
        column: The column whose values to count (usually a category such as region or product).
        top: How many of the most frequent values to list; the rest are summed as "other".
        normalize: Order and report by share (percent of non-missing rows) instead of by count in the text.
    """
    ctx = ctx or ToolContext()
    check_column(data, column, ctx)
    series = data[column]
    top = max(1, int(top))
    n = len(series)
    missing = int(series.isna().sum())
    present = series.dropna().map(label)
    counts = present.value_counts()
    valid = int(counts.sum())
    shown = counts.head(top)
    other = int(counts.iloc[top:].sum())
    table = pd.DataFrame(
        {
            "value": [str(v) for v in shown.index],
            "count": shown.to_numpy(dtype=int),
            "share": shown.to_numpy(dtype=float) / valid if valid else 0.0,
        }
    )
    metrics: dict = {"n": n, "missing": missing, "unique": int(len(counts)), "other": other}
    for value, count in shown.items():
        metrics[f"count.{value}"] = int(count)
        metrics[f"share.{value}"] = count / valid if valid else 0.0
    lines = [f"{str(v)[:40]:<40} {int(c):>8} {c / valid * 100 if valid else 0:6.1f}%" for v, c in shown.items()]
    if normalize:
        lines = [f"{str(v)[:40]:<40} {c / valid * 100 if valid else 0:6.1f}% ({int(c)})" for v, c in shown.items()]
    if other:
        lines.append(
            ctx.t(
                f"{'(other ' + str(len(counts) - top) + ' values)':<40} {other:>8}",
                f"{'（其余 ' + str(len(counts) - top) + ' 个取值）':<40} {other:>8}",
            )
        )
    lines.append(ctx.t(f"{'(missing)':<40} {missing:>8}", f"{'（缺失）':<40} {missing:>8}"))
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
        f"{column} has {len(counts)} distinct values; the most common is {shown.index[0]} ({fmt_num(shown.iloc[0])} rows)."
        if len(shown)
        else f"{column} has no non-missing values.",
        f"{column} 共有 {len(counts)} 个不同取值，最常见的是 {shown.index[0]}（{fmt_num(shown.iloc[0])} 行）。"
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
        limitations=[] if not missing else [ctx.t("Shares are of non-missing rows.", "占比按非缺失行计算。")],
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
