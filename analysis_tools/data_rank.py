"""Ranking (group `data`): the top or bottom N rows by a column, or groups ranked by a total —
"the five most expensive diamonds", "the row with the highest revenue", "top 5 customers by
spend", "the three slowest months". Sorting is what a non-expert asks for most often after a
total, and a mean or a test is the wrong answer to it."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from .base import ToolContext, ToolError, ToolResult, tagged_text
from .common import clean_metrics, fmt_cell, fmt_num, label, require_numeric
from .data import check_column
from .data_quality import require_rows

MAX_TOP = 100


def rank_values(
    data: pd.DataFrame,
    value_column: str,
    top: int = 5,
    order: Literal["largest", "smallest"] = "largest",
    group_column: str | None = None,
    agg: Literal["sum", "mean", "median", "count", "max", "min"] = "sum",
    label_columns: list[str] | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Top or bottom N (the N largest, smallest, highest or lowest): rows ranked by a number, or groups ranked by their total or mean.

    Args:
        value_column: The number to rank by (e.g. Revenue, price).
        top: How many to list (1 for "the highest", 5 for "top 5"); at most 100.
        order: largest (top N, the maximum) or smallest (bottom N, the minimum).
        group_column: Rank groups instead of rows (e.g. Customer for "top customers by spend").
        agg: With group_column: how each group's values combine (sum for totals, mean, median, count, max, min).
        label_columns: Columns shown beside each ranked row (e.g. the name or date); rows only.
    """
    ctx = ctx or ToolContext()
    require_rows(data, ctx)
    top = max(1, min(int(top), MAX_TOP))
    values = require_numeric(data, value_column, ctx)
    largest = order != "smallest"
    if group_column:
        ranked, total, n_used, what = _rank_groups(data, values, group_column, agg, ctx)
    else:
        ranked, total, n_used, what = _rank_rows(data, values, label_columns or [], ctx)
    if ranked.empty:
        raise ToolError(
            "insufficient_data",
            ctx.t(f"{value_column} has no numbers to rank.", f"{value_column} 没有可排序的数值。"),
            hint=ctx.t("Pick a numeric column.", "请选择数值列。"),
        )
    ordered = ranked.sort_values("value", ascending=not largest, kind="stable")
    shown = ordered.head(top).reset_index(drop=True)
    shown.insert(0, "rank", range(1, len(shown) + 1))
    ties = _ties_at_cut(ordered, top)
    return _rank_result(
        ctx,
        shown,
        value_column,
        group_column,
        agg if group_column else None,
        largest,
        total,
        n_used,
        len(data),
        what,
        ties,
    )


def _rank_rows(data: pd.DataFrame, values: pd.Series, label_columns: list[str], ctx: ToolContext):
    for column in label_columns:
        check_column(data, column, ctx)
    present = values.notna().to_numpy()
    rows = np.flatnonzero(present) + 1  # 1-based, as a spreadsheet user counts data rows
    if label_columns:
        shown = data.loc[present, label_columns].map(lambda v: "" if pd.isna(v) else label(v))
        names = shown.apply(lambda r: " · ".join(v for v in r if v), axis=1).tolist()
    else:
        names = [ctx.t(f"row {r}", f"第 {r} 行") for r in rows]
    ranked = pd.DataFrame({"name": names, "row": rows, "value": values[present].to_numpy(dtype=float)})
    return ranked, float(values[present].sum()), int(present.sum()), "rows"


def _rank_groups(data: pd.DataFrame, values: pd.Series, group_column: str, agg: str, ctx: ToolContext):
    check_column(data, group_column, ctx)
    frame = pd.DataFrame({"group": data[group_column], "value": values}).dropna(subset=["group"])
    grouped = frame.groupby("group", observed=True, sort=False)["value"]
    result = grouped.count() if agg == "count" else grouped.agg(agg)
    ranked = pd.DataFrame(
        {
            "name": [label(g) for g in result.index],
            "n_rows": grouped.size().to_numpy(),
            "value": result.to_numpy(dtype=float),
        }
    ).dropna(subset=["value"])
    return ranked, float(frame["value"].sum()), int(frame["value"].notna().sum()), "groups"


def _ties_at_cut(ordered: pd.DataFrame, top: int) -> int:
    """How many ranked items beyond the cut share the last shown value (a top 5 that hides a tie)."""
    if len(ordered) <= top:
        return 0
    last = ordered["value"].iloc[top - 1]
    return int((ordered["value"].iloc[top:] == last).sum())


def _rank_result(
    ctx: ToolContext,
    shown: pd.DataFrame,
    value_column: str,
    group_column: str | None,
    agg: str | None,
    largest: bool,
    total: float,
    n_used: int,
    n: int,
    what: str,
    ties: int,
) -> ToolResult:
    share_of_total = agg == "sum" and total > 0 and (shown["value"] >= 0).all()
    metrics: dict = {"n": n, "n_used": n_used, "shown": len(shown), "total": total, "ties_beyond": ties}
    lines = []
    for row in shown.itertuples(index=False):
        name = str(row.name)
        metrics[f"rank.{row.rank}.value"] = float(row.value)
        metrics[f"rank.{row.rank}.label"] = name
        if share_of_total:
            metrics[f"rank.{row.rank}.share"] = float(row.value) / total
        share = f"  ({float(row.value) / total * 100:.1f}%)" if share_of_total else ""
        lines.append(f"{row.rank:>3}. {name[:50]:<50} {fmt_cell(row.value):>14}{share}")
    first = shown.iloc[0]
    first_name = str(first["name"])
    measure = _measure_name(value_column, agg, ctx)
    direction = ctx.t("highest" if largest else "lowest", "最高" if largest else "最低")
    interpretation = ctx.t(
        f"The {direction} {measure} is {first_name}: {fmt_num(first['value'])}.",
        f"{measure}{direction}的是 {first_name}：{fmt_num(first['value'])}。",
    )
    insights = []
    if share_of_total and len(shown) > 1:
        covered = float(shown["value"].sum()) / total
        insights.append(
            ctx.t(
                f"The {len(shown)} listed make up {covered * 100:.1f}% of the total {fmt_num(total)}.",
                f"列出的 {len(shown)} 项合计占总量 {fmt_num(total)} 的 {covered * 100:.1f}%。",
            )
        )
    limitations = []
    if ties:
        limitations.append(
            ctx.t(
                f"{ties} more {what} tie with the last one listed ({fmt_num(shown['value'].iloc[-1])}).",
                f"另有 {ties} 项与列出的最后一项并列（{fmt_num(shown['value'].iloc[-1])}）。",
            )
        )
    if n_used < n:
        limitations.append(
            ctx.t(f"{n - n_used} rows without a number were left out.", f"{n - n_used} 行没有数值，未参与排序。")
        )
    text = tagged_text(result="\n".join(lines), insights=insights, interpretation=interpretation)
    method = ctx.t(f"{what} ranked by {measure}", f"按{measure}排序")
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=n_used,
        limitations=limitations,
        payload={"ranked": shown.to_dict(orient="records"), "order": "largest" if largest else "smallest"},
    )


def _measure_name(value_column: str, agg: str | None, ctx: ToolContext) -> str:
    if agg is None:
        return value_column
    words = {
        "sum": ("total", "合计"),
        "mean": ("average", "平均值"),
        "median": ("median", "中位数"),
        "count": ("count of", "计数："),
        "max": ("largest", "最大"),
        "min": ("smallest", "最小"),
    }[agg]
    return ctx.t(f"{words[0]} {value_column}", f"{value_column}{words[1]}" if agg != "count" else f"{value_column}计数")
