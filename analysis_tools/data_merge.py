"""Data tools that combine or summarise tables (group `data`): `merge_datasets` (with a join
cardinality check before joining), `group_aggregate` and `pivot_table`.

A join that silently multiplies rows is the classic spreadsheet mistake that doubles revenue, so
`merge_datasets` counts the keys on both sides first, predicts the result's size exactly, and
refuses many-to-many joins or unexpected growth unless asked to allow them.
"""

from __future__ import annotations

from typing import Literal

import pandas as pd

from .base import ToolContext, ToolError, ToolResult
from .common import column_kind, fmt_num, frame_text, label, periods_in_time_order, require_numeric
from .data_quality import require_columns, require_rows, step_result
from .registry import suggest

_EXAMPLES = 5


def merge_datasets(
    data: dict[str, pd.DataFrame],
    left: str,
    right: str,
    on: list[str] | None = None,
    left_on: list[str] | None = None,
    right_on: list[str] | None = None,
    how: Literal["left", "inner", "outer", "right"] = "left",
    max_row_growth: float = 1.0,
    allow_many_to_many: bool = False,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Join two datasets on key columns (like VLOOKUP or a SQL join) after checking the key cardinality; refuses joins that would multiply rows (many-to-many, or duplicated lookup keys) unless allowed, and reports unmatched keys both ways.

    Args:
        left: Name of the main dataset (its rows are kept with how=left).
        right: Name of the dataset to look values up in.
        on: Key column(s) with the same name in both datasets; omit when they share exactly one column name.
        left_on: Key column(s) in the left dataset when the names differ (use with right_on).
        right_on: Key column(s) in the right dataset, in the same order as left_on.
        how: left (keep every left row), inner (only matching rows), outer (all rows of both) or right.
        max_row_growth: The result may have at most this many times the expected rows (1.0 = a lookup that adds no rows).
        allow_many_to_many: Allow a join where keys repeat on both sides or rows multiply (only when that is intended).
    """
    ctx = ctx or ToolContext()
    if not isinstance(data, dict):
        raise ToolError(
            "invalid_arguments",
            ctx.t("merge_datasets needs several datasets by name.", "merge_datasets 需要按名称提供多个数据集。"),
            hint=ctx.t("Load both files first.", "请先加载两个文件。"),
        )
    frames = {name: _dataset(data, name, ctx) for name in (left, right)}
    lf, rf = frames[left], frames[right]
    lkeys, rkeys = _keys(lf, rf, on, left_on, right_on, ctx)
    lk, rk, notes = _normalised_keys(lf[lkeys], rf[rkeys], ctx)
    stats = _cardinality(lk, rk, how)
    growth = stats["result_rows"] / max(stats["base_rows"], 1)
    if not allow_many_to_many and (
        stats["cardinality"] == "many-to-many" and stats["m2m_keys"] or growth > max_row_growth + 1e-12
    ):
        raise ToolError(
            "join_multiplies_rows",
            ctx.t(
                f"This {stats['cardinality']} join would turn {stats['base_rows']:,} rows into {stats['result_rows']:,} "
                f"(×{growth:.2f}): some keys repeat in {right!r}, so rows would be duplicated and totals inflated.",
                f"这是{stats['cardinality']}连接，会把 {stats['base_rows']:,} 行变成 {stats['result_rows']:,} 行（×{growth:.2f}）："
                f"{right!r} 中有重复的键，行会被复制、合计会被放大。",
            ),
            hint=ctx.t(
                "Aggregate the right dataset to one row per key first (group_aggregate), add key columns, "
                "or pass allow_many_to_many=true if the multiplication is intended.",
                "请先用 group_aggregate 把右表汇总为每个键一行、增加键列，或在确需时设 allow_many_to_many=true。",
            ),
            cardinality=stats["cardinality"],
            expected_rows=stats["result_rows"],
            base_rows=stats["base_rows"],
            row_growth=round(growth, 4),
            duplicate_keys_left=stats["dup_left_examples"],
            duplicate_keys_right=stats["dup_right_examples"],
        )
    lw, rw = lf.assign(**{c: lk[c] for c in lkeys}), rf.assign(**{c: rk[c] for c in rkeys})
    merged = _join(lw, rw, lkeys, rkeys, how, right)
    return _merge_result(ctx, merged, left, right, lkeys, rkeys, how, stats, growth, notes)


def _dataset(data: dict[str, pd.DataFrame], name: str, ctx: ToolContext) -> pd.DataFrame:
    if name not in data:
        names = list(data)
        raise ToolError(
            "dataset_not_found",
            ctx.t(f"There is no dataset named {name!r}.", f"没有名为 {name!r} 的数据集。"),
            hint=ctx.t(f"Available: {names}", f"现有数据集：{names}"),
            did_you_mean=suggest(name, names),
            available=names,
        )
    frame = data[name]
    if len(frame) == 0:
        raise ToolError(
            "insufficient_data",
            ctx.t(f"Dataset {name!r} has no rows.", f"数据集 {name!r} 没有行。"),
            hint=ctx.t("Check the file or undo the last filter.", "请检查文件或撤销上一步筛选。"),
        )
    return frame


def _keys(lf, rf, on, left_on, right_on, ctx) -> tuple[list[str], list[str]]:
    if on:
        lkeys = rkeys = list(on)
    elif left_on or right_on:
        lkeys, rkeys = list(left_on or []), list(right_on or [])
        if len(lkeys) != len(rkeys) or not lkeys:
            raise ToolError(
                "invalid_arguments",
                ctx.t("left_on and right_on need the same number of columns.", "left_on 和 right_on 的列数必须相同。"),
                hint='left_on=["cust_id"], right_on=["id"]',
            )
    else:
        shared = [c for c in lf.columns if c in set(rf.columns)]
        if len(shared) != 1:
            raise ToolError(
                "invalid_arguments",
                ctx.t(
                    f"Say which key columns to join on (shared column names: {shared[:20]}).",
                    f"请指定连接键（两表同名的列：{shared[:20]}）。",
                ),
                hint=ctx.t("Pass on=[...] or left_on/right_on.", "请传入 on=[...] 或 left_on/right_on。"),
                shared_columns=shared[:50],
            )
        lkeys = rkeys = shared
    require_columns(lf, lkeys, ctx, "on/left_on")
    require_columns(rf, rkeys, ctx, "on/right_on")
    return lkeys, rkeys


def _normalised_keys(
    lk: pd.DataFrame, rk: pd.DataFrame, ctx: ToolContext
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Keys that can be compared: text trimmed; a number key against a text key compared as text."""
    lk, rk = lk.copy(), rk.copy()
    notes: list[str] = []
    for (lc, a), (rc, b) in zip(lk.items(), rk.items()):
        a_num, b_num = _is_number(a), _is_number(b)
        if a_num != b_num:
            a, b = _key_text(a), _key_text(b)
            notes.append(
                ctx.t(
                    f"{lc} / {rc}: a number key and a text key were compared as text.",
                    f"{lc} / {rc}：数字键与文本键按文本比较。",
                )
            )
        elif not a_num and not pd.api.types.is_datetime64_any_dtype(a.dtype):
            a, b = _key_text(a), _key_text(b)
        lk[lc], rk[rc] = a, b
    return lk, rk, notes


def _is_number(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype)


def _key_text(s: pd.Series) -> pd.Series:
    return s.map(lambda v: label(v).strip(), na_action="ignore").astype("str")


def _cardinality(lk: pd.DataFrame, rk: pd.DataFrame, how: str) -> dict:
    """Key counts per side and the exact size of the join result, without joining."""
    lc = lk.groupby(list(lk.columns), dropna=True, observed=True).size()
    rc = rk.groupby(list(rk.columns), dropna=True, observed=True).size()
    rc.index.names = lc.index.names
    both = pd.concat([lc.rename("l"), rc.rename("r")], axis=1, join="inner")
    matched = int((both["l"] * both["r"]).sum())
    l_matched_rows, r_matched_rows = int(both["l"].sum()), int(both["r"].sum())
    l_unmatched, r_unmatched = len(lk) - l_matched_rows, len(rk) - r_matched_rows  # incl. missing keys
    result = (
        matched + (l_unmatched if how in ("left", "outer") else 0) + (r_unmatched if how in ("right", "outer") else 0)
    )
    base = {"left": len(lk), "inner": l_matched_rows, "right": len(rk), "outer": len(lk) + r_unmatched}[how]
    dup_l, dup_r = bool((lc > 1).any()), bool((rc > 1).any())
    cardinality = {
        (False, False): "one-to-one",
        (True, False): "many-to-one",
        (False, True): "one-to-many",
        (True, True): "many-to-many",
    }[(dup_l, dup_r)]
    m2m = both[(both["l"] > 1) & (both["r"] > 1)]

    def examples(counts: pd.Series) -> list[str]:
        top = counts[counts > 1].sort_values(ascending=False).head(_EXAMPLES)
        return [f"{_key_label(k)} (×{int(c)})" for k, c in top.items()]

    return {
        "cardinality": cardinality,
        "result_rows": result,
        "base_rows": base,
        "matched_rows": matched,
        "left_keys": len(lc),
        "right_keys": len(rc),
        "matched_keys": len(both),
        "m2m_keys": len(m2m),
        "left_rows_unmatched": l_unmatched,
        "right_rows_unmatched": r_unmatched,
        "left_keys_unmatched": len(lc) - len(both),
        "right_keys_unmatched": len(rc) - len(both),
        "left_missing_keys": int(lk.isna().any(axis=1).sum()),
        "right_missing_keys": int(rk.isna().any(axis=1).sum()),
        "dup_left_examples": examples(lc),
        "dup_right_examples": examples(rc),
        "unmatched_left_examples": [_key_label(k) for k in lc.index.difference(both.index)[:_EXAMPLES]],
        "unmatched_right_examples": [_key_label(k) for k in rc.index.difference(both.index)[:_EXAMPLES]],
    }


def _key_label(key) -> str:
    return " | ".join(label(k) for k in key) if isinstance(key, tuple) else label(key)


def _join(lw: pd.DataFrame, rw: pd.DataFrame, lkeys: list[str], rkeys: list[str], how: str, right: str) -> pd.DataFrame:
    """pandas joins missing keys to missing keys; here a missing key never matches anything."""
    l_null, r_null = lw[lkeys].isna().any(axis=1), rw[rkeys].isna().any(axis=1)
    left_part = lw if how in ("left", "outer") else lw[~l_null]
    right_part = rw if how == "right" else rw[~r_null]
    merged = left_part.merge(right_part, how=how, left_on=lkeys, right_on=rkeys, suffixes=("", f"_{right}"), sort=False)
    if how == "outer" and r_null.any():
        merged = pd.concat([merged, rw[r_null].rename(columns=dict(zip(rkeys, lkeys)))], ignore_index=True)
    if lkeys != rkeys:  # the right key duplicates the left key's values
        merged = merged.drop(columns=[c for c in rkeys if c in merged.columns and c not in lkeys])
    return merged.reset_index(drop=True)


def _merge_result(ctx, merged, left, right, lkeys, rkeys, how, stats, growth, notes) -> ToolResult:
    keys = ", ".join(lkeys if lkeys == rkeys else [f"{a}={b}" for a, b in zip(lkeys, rkeys)])
    step = f"merge_datasets: {left} {how} join {right} on {keys} ({stats['cardinality']}, {stats['base_rows']:,} → {len(merged):,} rows)"
    metrics = {k: v for k, v in stats.items() if not isinstance(v, list)}
    metrics.update(n_rows=len(merged), n_columns=merged.shape[1], row_growth=growth, how=how)
    profile = [
        ctx.t(
            f"{left}: {stats['left_keys']:,} distinct keys; {right}: {stats['right_keys']:,}; {stats['matched_keys']:,} keys in both.",
            f"{left}：{stats['left_keys']:,} 个不同的键；{right}：{stats['right_keys']:,} 个；两边都有的键 {stats['matched_keys']:,} 个。",
        ),
        ctx.t(
            f"Cardinality: {stats['cardinality']}; result {len(merged):,} rows.",
            f"对应关系：{stats['cardinality']}；结果 {len(merged):,} 行。",
        ),
    ]
    insights = []
    if stats["left_rows_unmatched"]:
        insights.append(
            ctx.t(
                f"{stats['left_rows_unmatched']:,} {left} rows found no match in {right} (e.g. {stats['unmatched_left_examples']})"
                + ("; their looked-up columns are empty." if how in ("left", "outer") else "; they were dropped."),
                f"{left} 中有 {stats['left_rows_unmatched']:,} 行在 {right} 中找不到对应（如 {stats['unmatched_left_examples']}）"
                + ("，查找到的列为空。" if how in ("left", "outer") else "，已被舍弃。"),
            )
        )
    if stats["right_keys_unmatched"]:
        insights.append(
            ctx.t(
                f"{stats['right_keys_unmatched']:,} keys of {right} do not occur in {left} (e.g. {stats['unmatched_right_examples']}).",
                f"{right} 中有 {stats['right_keys_unmatched']:,} 个键在 {left} 中不存在（如 {stats['unmatched_right_examples']}）。",
            )
        )
    if growth > 1 + 1e-12:
        insights.append(
            ctx.t(
                f"Rows multiplied ×{growth:.2f} (allowed); sums over the result count repeated rows more than once.",
                f"行数增加到 ×{growth:.2f}（已允许）；对结果求和时重复的行会被多次计入。",
            )
        )
    interpretation = ctx.t(
        f"Joined {left} with {right} on {keys}: {len(merged):,} rows; "
        f"{stats['left_rows_unmatched']:,} {left} rows had no match.",
        f"已按 {keys} 连接 {left} 与 {right}：共 {len(merged):,} 行；{left} 中 {stats['left_rows_unmatched']:,} 行没有匹配。",
    )
    method = ctx.t(
        f"{how} join after a key cardinality check (keys trimmed; missing keys never match).",
        f"{how} 连接，连接前检查键的对应关系（键去除首尾空格；缺失的键不参与匹配）。",
    )
    return step_result(
        ctx,
        merged,
        step,
        metrics=metrics,
        profile=profile,
        insights=insights,
        interpretation=interpretation,
        method=method,
        limitations=notes,
        dataset_name=f"{left}_{right}",
        extra={
            "cardinality": stats["cardinality"],
            "unmatched_left_examples": stats["unmatched_left_examples"],
            "unmatched_right_examples": stats["unmatched_right_examples"],
        },
    )


# ---------------------------------------------------------------- group_aggregate and pivot_table

AGGS = ("sum", "mean", "median", "count", "min", "max", "nunique")
Aggregation = Literal["sum", "mean", "median", "count", "min", "max", "nunique"]
_AGG_ZH = {
    "sum": "合计",
    "mean": "平均",
    "median": "中位数",
    "count": "计数",
    "min": "最小",
    "max": "最大",
    "nunique": "不同值个数",
}
_CELL_METRICS = 100


def group_aggregate(
    data: pd.DataFrame,
    group_columns: list[str],
    value_columns: list[str] | None = None,
    agg: Aggregation = "sum",
    aggregations: list[Aggregation] | None = None,
    compare: list[str] | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Summarise a table per group (like a spreadsheet subtotal or SQL GROUP BY): one row per group with the row count and the sum/mean/median/count/min/max/number of distinct values of chosen columns, one or several at once; the result is a side table, the active dataset stays.

    Args:
        group_columns: The column(s) that define the groups (e.g. ["Region"] or ["Region", "Month"]); [] for one row of the whole table (the grand totals).
        value_columns: The columns to summarise per group; omit to count rows only.
        agg: The one aggregation: sum, mean, median, count (non-missing values), min, max or nunique (distinct values).
        aggregations: Several in one table, replacing agg (e.g. ["mean", "median", "max"]).
        compare: Two groups to set against each other (e.g. ["East", "West"], ["6月", "1月"]): the first's figure minus the second's, and that difference relative to the second.
    """
    ctx = ctx or ToolContext()
    require_rows(data, ctx)
    groups = list(dict.fromkeys(group_columns))
    values = [v for v in dict.fromkeys(value_columns or []) if v not in groups]
    aggs: list[str] = list(dict.fromkeys(aggregations or [agg]))
    work = {f"g{i}": data[g] for i, g in enumerate(groups)}
    if not groups:  # the whole table as one group: its grand totals, in a row labelled "All"
        groups, work = [ctx.t("All", "全部")], {"g0": pd.Series(ctx.t("All rows", "全部行"), index=data.index)}
    # one input per value column and aggregation: a sum needs numbers, a count takes any values
    inputs = {(v, a): _agg_input(data, v, a, ctx) for v in values for a in aggs}
    for (v, a), series in inputs.items():
        work[f"v{values.index(v)}_{a}"] = series
    frame = pd.DataFrame(work, index=data.index)
    gkeys = [f"g{i}" for i in range(len(groups))]
    missing_keys = int(frame[gkeys].isna().any(axis=1).sum())
    grouped = frame.groupby(gkeys, dropna=False, observed=True, sort=False)
    out = grouped.size().rename("n_rows").to_frame()
    names = [f"{v}_{a}" for v in values for a in aggs]
    for v, a in inputs:
        out[f"{v}_{a}"] = grouped[f"v{values.index(v)}_{a}"].agg(a)
    out = out.reset_index().rename(columns=dict(zip(gkeys, groups)))
    out = out.sort_values(names[0] if names else "n_rows", ascending=False, kind="stable").reset_index(drop=True)
    if values and all(series.isna().all() for series in inputs.values()):
        raise ToolError(
            "insufficient_data",
            ctx.t("The value columns are entirely missing.", "数值列全部缺失。"),
            hint=ctx.t("Pick other value columns.", "请换其他数值列。"),
        )
    result = _aggregate_result(ctx, out, groups, names, aggs, len(data), missing_keys)
    if compare:
        _compare_two(result, out, groups, names[0] if names else "n_rows", compare, ctx)
    return result


def _compare_two(
    result: ToolResult, out: pd.DataFrame, groups: list[str], main: str, compare: list[str], ctx: ToolContext
) -> None:
    """The first compared group's figure minus the second's, and relative to it, in the result's metrics and
    reading ("东门和西门的销量差多少？": 518 − 498 = 20, +4.0%): a difference stated is one this tool computed."""
    if len(compare) != 2:
        raise ToolError(
            "invalid_argument",
            ctx.t("compare takes exactly two groups.", "compare 需要恰好两个组。"),
            hint=ctx.t('For example ["East", "West"].', '例如 ["东门", "西门"]。'),
        )
    figures = {_group_label(row, groups): row[main] for _, row in out.iterrows()}
    missing = [g for g in compare if g not in figures]
    if missing:
        raise ToolError(
            "value_not_found",
            ctx.t(f"No group named {missing[0]!r}.", f"没有名为 {missing[0]!r} 的组。"),
            hint=ctx.t("Compare two of the groups the table has.", "请比较表中已有的两个组。"),
            available=list(figures)[:20],
        )
    (first, a), (second, b) = ((g, float(figures[g])) for g in compare)
    result.metrics["difference"] = a - b
    relative = (a - b) / abs(b) if b else None
    if relative is not None:
        result.metrics["relative_difference"] = relative
    by = f" ({relative:+.1%})" if relative is not None else ""
    line = ctx.t(
        f"{first} minus {second}: {fmt_num(a)} − {fmt_num(b)} = {fmt_num(a - b)}{by}.",
        f"{first} 减 {second}：{fmt_num(a)} − {fmt_num(b)} = {fmt_num(a - b)}{by.replace(' (', '（').replace(')', '）')}。",
    )
    result.text = f"{result.text}\n{line}"
    result.interpretation = f"{result.interpretation} {line}"


def _agg_input(data: pd.DataFrame, column: str, agg: str, ctx: ToolContext) -> pd.Series:
    if agg in ("sum", "mean", "median"):
        return require_numeric(data, column, ctx)
    if agg in ("min", "max") and column_kind(data[column]) in ("number", "integer"):
        return require_numeric(data, column, ctx)
    return data[column]


def _group_label(row: pd.Series, groups: list[str]) -> str:
    return " | ".join(label(row[g]) for g in groups)


def _aggregate_result(ctx, out, groups, names, aggs, n, missing_keys) -> ToolResult:
    main = names[0] if names else "n_rows"
    agg = aggs[0]  # the first aggregation orders the table and heads the reading
    metrics: dict = {"n": n, "n_groups": len(out), "missing_group_rows": missing_keys, "agg": "+".join(aggs)}
    # the whole table as one row: every figure asked of it (the distinct values, the first and the last)
    shown = names if len(out) == 1 and names else [main]
    for _, row in out.head(20).iterrows():
        for name in shown:
            metrics[f"{name}.{_group_label(row, groups)}"] = row[name]
    if agg in ("sum", "count") and names:
        metrics[f"{main}.total"] = float(out[main].sum())
    profile = frame_text(out, 20)
    top = out.iloc[0]
    insights = []
    if (change := _change_over_periods(out, groups, main)) is not None:
        (first, start), (last, end), relative = change
        metrics["first_to_last_change"] = relative
        insights.append(
            ctx.t(
                f"From {first} to {last}, {main} went from {fmt_num(start)} to {fmt_num(end)} ({relative:+.1%}).",
                f"从 {first} 到 {last}，{main} 由 {fmt_num(start)} 变为 {fmt_num(end)}（{relative:+.1%}）。",
            )
        )
    if len(out) > 1 and agg in ("sum", "count") and out[main].sum() > 0:
        share = top[main] / out[main].sum()
        insights.append(
            ctx.t(
                f"{_group_label(top, groups)} is the largest group ({share:.1%} of the total {main}).",
                f"{_group_label(top, groups)} 是最大的组（占 {main} 总量的 {share:.1%}）。",
            )
        )
    small = int((out["n_rows"] < 5).sum())
    averages = [a for a in aggs if a in ("mean", "median")]
    if small and averages:
        insights.append(
            ctx.t(
                f"{small} group(s) have fewer than 5 rows; their {'/'.join(averages)} is unreliable.",
                f"有 {small} 个组不足 5 行，其{'/'.join(_AGG_ZH[a] for a in averages)}不够可靠。",
            )
        )
    if missing_keys:
        insights.append(
            ctx.t(
                f"{missing_keys:,} rows have a missing group value and form their own group.",
                f"有 {missing_keys:,} 行的分组值缺失，单独成组。",
            )
        )
    what = ", ".join(dict.fromkeys(n.rsplit("_", 1)[0] for n in names)) or "rows"
    step = f"group_aggregate: {'/'.join(aggs)} of {what} by {', '.join(groups)} ({n:,} rows → {len(out):,} groups)"
    by, best = " | ".join(groups), _group_label(top, groups)
    most = _plain_measure(
        main[: -len(agg) - 1] if names else None, agg, ctx
    )  # "the highest total 销售额", not "销售额_sum"
    interpretation = ctx.t(
        f"{len(out):,} groups by {by}; {by} = {best} has {most} ({fmt_num(top[main])}).",
        f"按 {by} 共分为 {len(out):,} 组；{by} = {best} 的{most}（{fmt_num(top[main])}）。",
    )
    return step_result(
        ctx,
        out,
        step,
        metrics=metrics,
        profile=profile,
        insights=insights,
        interpretation=interpretation,
        method=ctx.t(
            f"Group-by aggregation ({', '.join(aggs)}); missing values are ignored within each group.",
            f"分组汇总（{'、'.join(_AGG_ZH[a] for a in aggs)}），组内忽略缺失值。",
        ),
        preview=False,  # the profile is the table itself: printed once
    )


def _change_over_periods(
    out: pd.DataFrame, groups: list[str], main: str
) -> tuple[tuple[str, float], tuple[str, float], float] | None:
    """Grouped by calendar periods alone: the first period's figure, the last one's and the relative change
    between them (what "from Jan to Jun it went from 1,834 to 1,904 (+3.8%)" says), so a reading of the
    totals over time cites a number this analysis computed. None for groups that are not periods."""
    if len(groups) != 1 or len(out) < 2:
        return None
    figures = {label(period): value for period, value in zip(out[groups[0]], out[main])}
    timed = periods_in_time_order(figures)
    if len(figures) != len(out) or timed is None:
        return None
    first, last = timed[0], timed[-1]
    start, end = float(figures[first]), float(figures[last])
    if not (pd.notna(start) and pd.notna(end)) or start == 0:
        return None
    return (first, start), (last, end), (end - start) / abs(start)


def _plain_measure(value: str | None, agg: str, ctx: ToolContext) -> str:
    """The largest group's measure in plain words, as its reading names it: "the highest total 销售额" /
    " 销售额 合计最高"; the table's own column key ("销售额_sum") is for the table, not for people."""
    if value is None:  # no value column: the groups' row counts
        return ctx.t("the most rows", "行数最多")
    en = {
        "sum": "total",
        "mean": "average",
        "median": "median",
        "count": "count of",
        "min": "smallest",
        "max": "largest",
        "nunique": "number of distinct",
    }[agg]
    if agg in ("count", "nunique"):
        return ctx.t(f"the highest {en} {value}", f" {value} {_AGG_ZH[agg]}最多")
    return ctx.t(f"the highest {en} {value}", f" {value} {_AGG_ZH[agg]}最高")


def pivot_table(
    data: pd.DataFrame,
    index_column: str,
    columns_column: str,
    value_column: str | None = None,
    agg: Literal["sum", "mean", "median", "count", "min", "max", "nunique"] = "sum",
    margins: bool = False,
    max_columns: int = 30,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Cross-tabulate like an Excel pivot table: rows from one column, columns from another, and in each cell the sum/mean/median/count/min/max of a value column (or the number of rows); optional totals; the result is a side table, the active dataset stays.

    Args:
        index_column: The column whose values become the rows (e.g. Region).
        columns_column: The column whose values become the columns (e.g. Month); at most max_columns distinct values.
        value_column: The numeric column summarised in each cell; omit to count rows.
        agg: sum, mean, median, count, min, max or nunique.
        margins: Add a Total row and column (computed from the rows, so a mean total is the overall mean).
        max_columns: Refuse to build more columns than this (2-200).
    """
    ctx = ctx or ToolContext()
    require_rows(data, ctx)
    func = "size" if value_column is None else agg
    values = _agg_input(data, value_column, agg, ctx) if value_column else pd.Series(1.0, index=data.index)
    frame = pd.DataFrame({"i": data[index_column], "c": data[columns_column], "v": values}, index=data.index)
    dropped = int(frame[["i", "c"]].isna().any(axis=1).sum())
    frame = frame.dropna(subset=["i", "c"])
    if frame.empty:
        raise ToolError(
            "insufficient_data",
            ctx.t("No rows have both an index and a column value.", "没有同时具有行、列取值的数据。"),
            hint=ctx.t("Pick columns with fewer missing values.", "请选择缺失较少的列。"),
        )
    n_cols = int(frame["c"].nunique())
    if n_cols > max(2, min(int(max_columns), 200)):
        raise ToolError(
            "too_many_categories",
            ctx.t(
                f"{columns_column!r} has {n_cols} distinct values; a pivot that wide is unreadable.",
                f"{columns_column!r} 有 {n_cols} 个不同取值，透视表会过宽。",
            ),
            hint=ctx.t(
                "Swap index_column and columns_column, use group_aggregate, or filter first.",
                "请交换行列、改用 group_aggregate，或先筛选。",
            ),
            n_distinct=n_cols,
        )
    wide = frame.groupby(["i", "c"], observed=True)["v"].agg(func).unstack("c")
    wide = wide.reindex(index=_natural_order(frame["i"]), columns=_natural_order(frame["c"]))
    if func in ("size", "sum", "count", "nunique"):
        wide = wide.fillna(0)  # no rows in a cell: a count or total of zero
    empty_cells = int(frame.groupby(["i", "c"], observed=True).ngroups)
    empty_cells = wide.size - empty_cells
    total = ctx.t("Total", "合计")
    if margins:
        wide[total] = frame.groupby("i", observed=True)["v"].agg(func)
        wide.loc[total] = list(frame.groupby("c", observed=True)["v"].agg(func).reindex(wide.columns[:-1])) + [
            frame["v"].agg(func) if func != "size" else len(frame)
        ]
    wide.columns = [label(c) for c in wide.columns]
    table = wide.rename_axis(index_column).reset_index()
    table[index_column] = table[index_column].map(label)
    return _pivot_result(
        ctx, table, wide, index_column, columns_column, value_column, agg, margins, total, dropped, empty_cells
    )


def _natural_order(values: pd.Series) -> list:
    """Numbers and dates in sorted order; labels in the order they first appear (Jan, Feb, … stay in order)."""
    unique = pd.unique(values)
    if pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_datetime64_any_dtype(values.dtype):
        return sorted(unique)
    return list(unique)


def _pivot_result(
    ctx, table, wide, index_column, columns_column, value_column, agg, margins, total, dropped, empty
) -> ToolResult:
    body = wide.drop(index=total, columns=total, errors="ignore") if margins else wide
    stacked = body.stack().dropna()
    what = f"{agg}({value_column})" if value_column else "count"
    metrics: dict = {
        "n_rows": len(body),
        "n_columns": body.shape[1],
        "empty_cells": empty,
        "rows_dropped_missing": dropped,
        "agg": agg,
    }
    if len(stacked):
        (ri, ci), (rj, cj) = stacked.idxmax(), stacked.idxmin()
        metrics.update(
            max_value=float(stacked.max()),
            max_cell=f"{label(ri)} | {ci}",
            min_value=float(stacked.min()),
            min_cell=f"{label(rj)} | {cj}",
        )
    for (r, c), v in list(stacked.items())[:_CELL_METRICS]:
        metrics[f"value.{label(r)}.{c}"] = float(v)
    if margins:
        metrics["grand_total"] = float(wide.loc[total, total])
    profile = frame_text(table, 25)
    insights = []
    if len(stacked):
        insights.append(
            ctx.t(
                f"Largest cell: {metrics['max_cell']} = {fmt_num(metrics['max_value'])}; smallest: {metrics['min_cell']} = {fmt_num(metrics['min_value'])}.",
                f"最大的单元格：{metrics['max_cell']} = {fmt_num(metrics['max_value'])}；最小的：{metrics['min_cell']} = {fmt_num(metrics['min_value'])}。",
            )
        )
    if empty:
        insights.append(
            ctx.t(
                f"{empty} combination(s) have no rows"
                + (" (shown as 0)." if agg in ("sum", "count", "nunique") or not value_column else " (left empty)."),
                f"有 {empty} 个组合没有数据"
                + ("（显示为 0）。" if agg in ("sum", "count", "nunique") or not value_column else "（留空）。"),
            )
        )
    step = f"pivot_table: {what} by {index_column} × {columns_column} ({len(body)} × {body.shape[1]}{', with totals' if margins else ''})"
    interpretation = ctx.t(
        f"A {len(body)} × {body.shape[1]} table of {what} by {index_column} (rows) and {columns_column} (columns).",
        f"按 {index_column}（行）和 {columns_column}（列）汇总 {what} 的 {len(body)} × {body.shape[1]} 表。",
    )
    limitations = (
        [
            ctx.t(
                f"{dropped:,} rows with a missing {index_column} or {columns_column} are not counted.",
                f"有 {dropped:,} 行的 {index_column} 或 {columns_column} 缺失，未计入。",
            )
        ]
        if dropped
        else []
    )
    return step_result(
        ctx,
        table,
        step,
        metrics=metrics,
        profile=profile,
        insights=insights,
        interpretation=interpretation,
        method=ctx.t(
            f"Pivot table ({agg}); totals are computed from the rows, not by adding cells.",
            f"数据透视表（{_AGG_ZH[agg]}）；合计由原始行计算，而非把单元格相加。",
        ),
        limitations=limitations,
        preview=False,  # the profile is the table itself: printed once
    )
