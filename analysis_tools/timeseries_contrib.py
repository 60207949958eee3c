"""Which segments drove a change between two periods: additive contributions for a total (shares sum
to 100%), and for a ratio (numerator / denominator, e.g. revenue per order) the split of the change
into a mix effect (segments' weights moved) and a rate effect (the ratio moved inside segments)."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from .base import ToolContext, ToolError, ToolResult, tagged_text
from .common import clean_metrics, fmt_num, label, require_numeric
from .ts_common import parse_dates, period_label

_MAX_GROUPS = 100


def _sort_key(v: str):
    try:
        return (0, float(v), v)
    except ValueError:
        return (1, 0.0, v)


def _period_labels(data, date_column, period_column, periods, freq, ctx) -> tuple[pd.Series, str, str, list[str]]:
    """A label per row and the (previous, current) labels compared."""
    notes = []
    if period_column:
        raw = data[period_column]
        labels = raw.map({v: label(v) for v in raw.dropna().unique()})
    elif date_column:
        dates = parse_dates(data, date_column, ctx)
        per = dates.dt.to_period(freq)
        labels = per.map({p: period_label(p) for p in per.dropna().unique()})
        if not periods and dates.notna().any():
            last = per.max()
            if dates.max().normalize() < last.end_time.normalize() and per.nunique() > 2:
                labels = labels.where(per != last)  # an unfinished period would understate its total
                notes.append(
                    ctx.t(
                        f"The latest period {period_label(last)} is not complete and was left out.",
                        f"最近的周期 {period_label(last)} 尚不完整，已排除。",
                    )
                )
    else:
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                "Give date_column (with freq) or period_column to define the two periods.",
                "请给出 date_column（配合 freq）或 period_column 来定义两个周期。",
            ),
            hint="period_column='year'",
        )
    present = sorted(labels.dropna().unique(), key=_sort_key)
    if periods:
        wanted = [label(p) for p in periods]
        missing = [p for p in wanted if p not in present]
        if len(wanted) != 2 or missing:
            from .registry import suggest

            raise ToolError(
                "value_not_found" if missing else "invalid_arguments",
                ctx.t(
                    f"periods must name two periods present in the data; missing {missing}.",
                    f"periods 必须是数据中存在的两个周期；缺少 {missing}。",
                ),
                hint=ctx.t(f"Periods present: {present[-12:]}", f"现有周期：{present[-12:]}"),
                did_you_mean=suggest(missing[0], present) if missing else [],
            )
        prev, cur = wanted
    else:
        if len(present) < 2:
            raise ToolError(
                "insufficient_data",
                ctx.t(
                    f"Only {len(present)} period(s) in the data; two are needed.",
                    f"数据中只有 {len(present)} 个周期，需要两个。",
                ),
                hint=ctx.t("Use a finer freq or another period column.", "请使用更细的 freq 或其他周期列。"),
            )
        prev, cur = present[-2], present[-1]
        if len(present) > 2:
            notes.append(
                ctx.t(
                    f"Comparing the latest two periods, {prev} and {cur} (pass periods to choose others).",
                    f"比较最近两个周期 {prev} 与 {cur}（可用 periods 指定其他周期）。",
                )
            )
    return labels, prev, cur, notes


def contribution_decomposition(
    data: pd.DataFrame,
    group_column: str,
    value_column: str | None = None,
    date_column: str | None = None,
    period_column: str | None = None,
    periods: list[str] | None = None,
    freq: Literal["D", "W", "M", "Q", "Y"] = "M",
    numerator_column: str | None = None,
    denominator_column: str | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Explain which segments drove a change between two periods: each segment's contribution to the change in a total (shares sum to 100%), or for a ratio metric (numerator/denominator) the split into mix effect and rate effect.

    Args:
        group_column: The segment column (e.g. region, product line).
        value_column: The numeric column whose total changed (e.g. revenue); not needed for a ratio.
        date_column: Date column; rows are grouped into periods of length freq (default: the latest two complete periods).
        period_column: Alternatively, a column that already names the period (e.g. year with two values).
        periods: The two periods to compare, [previous, current], as labels (e.g. ["2024-01", "2024-02"] for months, "2024Q1", "2024").
        freq: Period length when date_column is used: D, W, M, Q or Y.
        numerator_column: For a ratio metric, its numerator (e.g. revenue, conversions).
        denominator_column: For a ratio metric, its denominator (e.g. orders, visits).
    """
    ctx = ctx or ToolContext()
    ratio = bool(numerator_column or denominator_column)
    if ratio and not (numerator_column and denominator_column):
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                "A ratio needs both numerator_column and denominator_column.",
                "比率指标需要同时给出 numerator_column 和 denominator_column。",
            ),
            hint="denominator_column",
        )
    if not ratio and not value_column:
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                "Give value_column (a total) or numerator_column + denominator_column (a ratio).",
                "请给出 value_column（总量）或 numerator_column + denominator_column（比率）。",
            ),
            hint="value_column",
        )
    labels, prev, cur, notes = _period_labels(data, date_column, period_column, periods, freq, ctx)
    groups = data[group_column]
    if groups.nunique() > _MAX_GROUPS:
        raise ToolError(
            "wrong_column_type",
            ctx.t(
                f"{group_column!r} has {groups.nunique()} values; too many segments.",
                f"{group_column!r} 有 {groups.nunique()} 个取值，分段太多。",
            ),
            hint=ctx.t("Use a dimension with fewer values.", "请使用取值更少的维度。"),
            column=group_column,
        )
    seg = groups.map({v: label(v) for v in groups.dropna().unique()}).fillna(ctx.t("(missing)", "（缺失）"))
    measured = (numerator_column, denominator_column) if ratio else (value_column,)
    cols = [c for c in measured if c is not None]  # all of them: checked above
    vals = pd.DataFrame({c: require_numeric(data, c, ctx) for c in cols})
    in_scope = labels.isin([prev, cur])
    keep = in_scope & vals.notna().all(axis=1)
    dropped = int((in_scope & ~keep).sum())
    sums = vals[keep].groupby([labels[keep], seg[keep]]).sum()
    if ratio:
        return _ratio(sums, prev, cur, numerator_column, denominator_column, group_column, notes, dropped, ctx)
    return _additive(sums[value_column], prev, cur, value_column, group_column, notes, dropped, ctx)


def _table(sums: pd.Series, prev: str, cur: str) -> pd.DataFrame:
    wide = sums.unstack(0).reindex(columns=[prev, cur]).fillna(0.0)
    wide = wide.rename(columns={prev: "previous", cur: "current"})
    wide.columns.name = None
    return wide


def _additive(sums, prev, cur, value_column, group_column, notes, dropped, ctx) -> ToolResult:
    t = _table(sums, prev, cur)
    t["change"] = t["current"] - t["previous"]
    total_prev, total_cur = float(t["previous"].sum()), float(t["current"].sum())
    change = total_cur - total_prev
    t["share_pct"] = t["change"] / change * 100 if change else np.nan
    t = t.reindex(t["change"].abs().sort_values(ascending=False).index)
    m: dict = {
        "period.previous": prev,
        "period.current": cur,
        "total.previous": total_prev,
        "total.current": total_cur,
        "change": change,
        "change_pct": (change / total_prev * 100) if total_prev else float("nan"),
        "n_segments": len(t),
        "mode": "additive",
    }
    for g, r in t.iterrows():
        m.update({f"contribution.{g}": r["change"], f"share_pct.{g}": r["share_pct"]})
    top = t.index[0]
    m.update(top_driver=str(top), top_driver_share_pct=t.loc[top, "share_pct"])
    direction = ctx.t("grew" if change > 0 else "fell", "增长" if change > 0 else "下降")
    lines = [
        ctx.t(
            f"{g}: {fmt_num(r['previous'])} → {fmt_num(r['current'])} ({'+' if r['change'] >= 0 else ''}{fmt_num(r['change'])}"
            + (f", {r['share_pct']:.0f}% of the change)" if change else ")"),
            f"{g}：{fmt_num(r['previous'])} → {fmt_num(r['current'])}（{'+' if r['change'] >= 0 else ''}{fmt_num(r['change'])}"
            + (f"，占变化的 {r['share_pct']:.0f}%）" if change else "）"),
        )
        for g, r in t.head(12).iterrows()
    ]
    if change == 0:
        interpretation = ctx.t(
            f"Total {value_column} did not change between {prev} and {cur}; segment changes cancel out.",
            f"{prev} 与 {cur} 之间 {value_column} 总量没有变化；各分段的变化相互抵消。",
        )
    else:
        interpretation = ctx.t(
            f"Total {value_column} {direction} by {fmt_num(abs(change))} ({m['change_pct']:+.1f}%) from {prev} to {cur}. "
            f"{group_column} {top} accounts for {m['top_driver_share_pct']:.0f}% of that change "
            f"({'+' if t.loc[top, 'change'] >= 0 else ''}{fmt_num(t.loc[top, 'change'])}).",
            f"从 {prev} 到 {cur}，{value_column} 总量{direction}了 {fmt_num(abs(change))}（{m['change_pct']:+.1f}%）。"
            f"其中 {group_column} 为 {top} 的部分贡献了 {m['top_driver_share_pct']:.0f}%"
            f"（{'+' if t.loc[top, 'change'] >= 0 else ''}{fmt_num(t.loc[top, 'change'])}）。",
        )
        against = t[np.sign(t["change"]) == -np.sign(change)]
        if len(against):
            g = against.index[0]
            offset = ctx.t(
                f" Partly offset by {g} ({fmt_num(against.loc[g, 'change'])}).",
                f" {g} 的反向变化（{fmt_num(against.loc[g, 'change'])}）抵消了一部分。",
            )
            interpretation += offset
    method = ctx.t(
        "Additive decomposition: each segment's contribution is its own change; shares are contribution / total change "
        "(they sum to 100%; a segment moving against the total has a negative share).",
        "加法分解：每个分段的贡献就是它自身的变化；占比 = 贡献 / 总变化（合计 100%；与总体反向变化的分段占比为负）。",
    )
    return _finish(m, t.reset_index(names=group_column), lines, interpretation, method, notes, dropped, ctx)


def _ratio(sums, prev, cur, num, den, group_column, notes, dropped, ctx) -> ToolResult:
    n, d = _table(sums[num], prev, cur), _table(sums[den], prev, cur)
    if d["previous"].sum() <= 0 or d["current"].sum() <= 0:
        raise ToolError(
            "insufficient_data",
            ctx.t(
                f"{den!r} sums to zero in a period; the ratio is undefined.",
                f"{den!r} 在某个周期合计为 0，比率无定义。",
            ),
            hint=ctx.t("Check the denominator.", "请检查分母列。"),
        )
    w0, w1 = d["previous"] / d["previous"].sum(), d["current"] / d["current"].sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        r0, r1 = n["previous"] / d["previous"], n["current"] / d["current"]
    # a segment absent from one period keeps its other rate: its whole effect is mix
    r0, r1 = r0.where(d["previous"] > 0, r1), r1.where(d["current"] > 0, r0)
    R0, R1 = float(n["previous"].sum() / d["previous"].sum()), float(n["current"].sum() / d["current"].sum())
    # midpoint (Shapley) split: w1·r1 - w0·r0 = Δw·(r̄ - R̄) + Δr·w̄ exactly, summed over segments
    mix = (w1 - w0) * ((r0 + r1) / 2 - (R0 + R1) / 2)
    rate = (r1 - r0) * (w0 + w1) / 2
    change = R1 - R0
    t = pd.DataFrame(
        {
            "weight_previous": w0,
            "weight_current": w1,
            "rate_previous": r0,
            "rate_current": r1,
            "mix_effect": mix,
            "rate_effect": rate,
            "contribution": mix + rate,
        }
    )
    t["share_pct"] = t["contribution"] / change * 100 if change else np.nan
    t = t.reindex(t["contribution"].abs().sort_values(ascending=False).index)
    m: dict = {
        "period.previous": prev,
        "period.current": cur,
        "rate.previous": R0,
        "rate.current": R1,
        "change": change,
        "change_pct": change / R0 * 100 if R0 else float("nan"),
        "mix_effect": float(mix.sum()),
        "rate_effect": float(rate.sum()),
        "n_segments": len(t),
        "mode": "ratio",
    }
    m["mix_share_pct"] = m["mix_effect"] / change * 100 if change else float("nan")
    m["rate_share_pct"] = m["rate_effect"] / change * 100 if change else float("nan")
    for g, r in t.iterrows():
        m.update(
            {
                f"contribution.{g}": r["contribution"],
                f"share_pct.{g}": r["share_pct"],
                f"mix_effect.{g}": r["mix_effect"],
                f"rate_effect.{g}": r["rate_effect"],
            }
        )
    top = t.index[0]
    m.update(top_driver=str(top), top_driver_share_pct=t.loc[top, "share_pct"])
    metric = f"{num} / {den}"
    main = "mix" if abs(m["mix_effect"]) > abs(m["rate_effect"]) else "rate"
    why = (
        ctx.t(
            "mostly because the mix shifted between segments (their share of the denominator changed)",
            "主要是因为各分段的构成（在分母中的占比）发生了变化",
        )
        if main == "mix"
        else ctx.t("mostly because the ratio changed within segments", "主要是因为各分段内部的比率发生了变化")
    )
    interpretation = ctx.t(
        f"{metric} went from {fmt_num(R0)} to {fmt_num(R1)} ({m['change_pct']:+.1f}%) between {prev} and {cur}, {why}: "
        f"mix effect {fmt_num(m['mix_effect'])}, rate effect {fmt_num(m['rate_effect'])}. "
        f"{group_column} {top} contributed most ({fmt_num(t.loc[top, 'contribution'])}).",
        f"从 {prev} 到 {cur}，{metric} 从 {fmt_num(R0)} 变为 {fmt_num(R1)}（{m['change_pct']:+.1f}%），{why}："
        f"结构效应 {fmt_num(m['mix_effect'])}，比率效应 {fmt_num(m['rate_effect'])}。{group_column} 中 {top} 的贡献最大（{fmt_num(t.loc[top, 'contribution'])}）。",
    )
    lines = [
        ctx.t(
            f"{g}: share {r['weight_previous'] * 100:.0f}% → {r['weight_current'] * 100:.0f}%, rate {fmt_num(r['rate_previous'])} → "
            f"{fmt_num(r['rate_current'])}; mix {fmt_num(r['mix_effect'])}, rate {fmt_num(r['rate_effect'])}",
            f"{g}：占比 {r['weight_previous'] * 100:.0f}% → {r['weight_current'] * 100:.0f}%，比率 {fmt_num(r['rate_previous'])} → "
            f"{fmt_num(r['rate_current'])}；结构效应 {fmt_num(r['mix_effect'])}，比率效应 {fmt_num(r['rate_effect'])}",
        )
        for g, r in t.head(12).iterrows()
    ]
    method = ctx.t(
        "Mix-rate decomposition of a ratio with midpoint weights: for each segment, mix = Δweight × (segment's average rate − "
        "overall average rate), rate = Δrate × average weight; mix + rate over all segments equals the change exactly.",
        "比率的结构-比率分解（中点权重）：每个分段的结构效应 = 权重变化 ×（分段平均比率 − 总体平均比率），比率效应 = 比率变化 × 平均权重；"
        "所有分段的两项之和恰好等于总变化。",
    )
    return _finish(m, t.reset_index(names=group_column), lines, interpretation, method, notes, dropped, ctx)


def _finish(m, table, lines, interpretation, method, notes, dropped, ctx) -> ToolResult:
    if dropped:
        notes = notes + [
            ctx.t(f"{dropped} rows with missing values were left out.", f"有 {dropped} 行因缺失值被排除。")
        ]
    text = tagged_text(
        data_profile=ctx.t(
            f"{m['n_segments']} segments, periods {m['period.previous']} and {m['period.current']}.",
            f"{m['n_segments']} 个分段，周期 {m['period.previous']} 与 {m['period.current']}。",
        ),
        method=method,
        assumptions=notes,
        insights=lines,
        conclusion=ctx.t(f"Top driver: {m['top_driver']}.", f"最主要的驱动因素：{m['top_driver']}。"),
        interpretation=interpretation,
    )
    return ToolResult(
        metrics=clean_metrics(m),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=None,
        table=table,
        limitations=notes
        + [ctx.t("Contributions describe where the change happened, not why.", "贡献说明变化发生在哪里，不说明原因。")],
    )
