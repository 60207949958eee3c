"""Plot tools for how one variable moves with another (group `plot`, SPEC §11): scatter plot and
line chart (a trend over time or an ordered x).

Every tool draws with the shared machinery in `charts.py` (no pyplot, Latin + CJK fonts, top-N + Other
folding), writes its PNG to `ctx.figure_path(stem)`, never changes the data it is given, and returns via
`plot_common.chart_result` with a one-sentence caption in the user's language.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from matplotlib import dates as mdates

from . import charts
from .base import ToolContext, ToolResult
from .common import column_kind
from .parsing import parse_dates
from .plot_common import chart_result, folded_groups_note, no_data_error, require_numeric_column

SCATTER_SAMPLE = 5000
MAX_SCATTER_GROUPS = 8
MAX_TIME_POINTS = 1000
_label = charts.category_label
_AGG = {
    "sum": ("Total", "总和"),
    "mean": ("Mean", "平均"),
    "median": ("Median", "中位数"),
    "count": ("Count", "数量"),
    "min": ("Minimum", "最小值"),
    "max": ("Maximum", "最大值"),
}
_FREQ = {
    "day": ("D", "day", "日"),
    "week": ("W", "week", "周"),
    "month": ("M", "month", "月"),
    "quarter": ("Q", "quarter", "季度"),
    "year": ("Y", "year", "年"),
}


def plot_scatter(
    data: pd.DataFrame,
    x_column: str,
    y_column: str,
    group_column: str | None = None,
    trendline: bool = True,
    title: str | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Draw a scatter plot of two numeric columns, with an optional least-squares trendline and colours per group.

    Args:
        x_column: The numeric column on the horizontal axis.
        y_column: The numeric column on the vertical axis.
        group_column: Optional categorical column; points are coloured by group (the largest 8, the rest as Other).
        trendline: Draw the ordinary least squares line fitted to all points.
        title: Chart title; a descriptive one is made when omitted.
    """
    ctx = ctx or ToolContext()
    data = charts.unique_index(data)
    xs = require_numeric_column(data, x_column, ctx, "plot_bar")
    ys = require_numeric_column(data, y_column, ctx, "plot_bar")
    index = xs.index.intersection(ys.index)
    if len(index) == 0:
        raise no_data_error(f"{x_column}, {y_column}", ctx)
    x_all, y_all = xs.loc[index], ys.loc[index]
    n = int(len(index))
    n_dropped = int(len(data) - n)
    sampled = n > SCATTER_SAMPLE
    plot_index = pd.Index(pd.Series(index).sample(SCATTER_SAMPLE, random_state=0).sort_values()) if sampled else index

    # OLS on all points (not the sample)
    fit = None
    if n >= 3 and float(x_all.std()) > 0:
        slope, intercept = np.polyfit(x_all.to_numpy(), y_all.to_numpy(), 1)
        r = float(np.corrcoef(x_all.to_numpy(), y_all.to_numpy())[0, 1]) if float(y_all.std()) > 0 else 0.0
        fit = {"slope": float(slope), "intercept": float(intercept), "r": r, "r_squared": r * r}

    fig, ax = charts.new_figure()
    charts.set_grid(ax, "both")
    size = 22 if len(plot_index) <= 500 else (12 if len(plot_index) <= 2000 else 7)
    alpha = 0.8 if len(plot_index) <= 500 else 0.5
    limitations: list[str] = []
    if group_column:
        labels, order, n_folded = charts.group_labels(data, group_column, plot_index, MAX_SCATTER_GROUPS, ctx.zh)
        colors = charts.palette(len(order), muted_last=bool(n_folded))
        for name, color in zip(order, colors):
            idx = labels.index[labels == name]
            ax.scatter(
                x_all.loc[idx],
                y_all.loc[idx],
                s=size,
                color=color,
                alpha=alpha,
                linewidths=0,
                label=charts.wrap_label(name, 24, 1),
            )
        if n_folded:
            limitations.append(folded_groups_note(n_folded, ctx))
    else:
        ax.scatter(x_all.loc[plot_index], y_all.loc[plot_index], s=size, color=charts.ACCENT, alpha=alpha, linewidths=0)
    if trendline and fit:
        line_x = np.linspace(float(x_all.min()), float(x_all.max()), 100)
        ax.plot(
            line_x,
            fit["intercept"] + fit["slope"] * line_x,
            color=charts.ACCENT_DARK if not group_column else charts.TEXT,
            linewidth=1.8,
            label=ctx.t(f"trend (r = {fit['r']:.2f})", f"趋势线（r = {fit['r']:.2f}）"),
        )
    if group_column or (trendline and fit):
        charts.style_legend(ax, title=group_column if group_column else None, markerscale=2.5)
    default_title = ctx.t(f"{y_column} vs {x_column}", f"{y_column}与{x_column}的关系")
    charts.set_labels(ax, title or default_title, x_column, y_column)
    path = charts.save(fig, ctx.figure_path(f"scatter_{charts.slug(x_column)}_{charts.slug(y_column)}"))

    sample_en = f" (a random sample of {len(plot_index):,} of {n:,} points is shown)" if sampled else ""
    sample_zh = f"（随机抽取 {n:,} 个点中的 {len(plot_index):,} 个显示）" if sampled else ""
    trend_en = ", with a least-squares trendline" if trendline and fit else ""
    trend_zh = "，并附最小二乘趋势线" if trendline and fit else ""
    group_en = f", coloured by {group_column}" if group_column else ""
    group_zh = f"，按{group_column}着色" if group_column else ""
    caption = ctx.t(
        f"Scatter plot of {y_column} against {x_column} for {n:,} rows{group_en}{trend_en}{sample_en}.",
        f"{y_column}与{x_column}的散点图，共 {n:,} 行{group_zh}{trend_zh}{sample_zh}。",
    )
    insights: list[str] = []
    metrics: dict[str, float | int | str] = {"n": n, "n_plotted": int(len(plot_index))}
    if fit:
        metrics.update(
            {
                "r": round(fit["r"], 6),
                "r_squared": round(fit["r_squared"], 6),
                "slope": fit["slope"],
                "intercept": fit["intercept"],
            }
        )
        strength = abs(fit["r"])
        word = (
            ctx.t("strong", "强")
            if strength >= 0.7
            else ctx.t("moderate", "中等")
            if strength >= 0.4
            else ctx.t("weak", "弱")
            if strength >= 0.2
            else ctx.t("little or no", "几乎没有")
        )
        direction = ctx.t("positive", "正") if fit["r"] > 0 else ctx.t("negative", "负")
        if strength >= 0.2:
            insights.append(
                ctx.t(
                    f"There is a {word} {direction} linear relationship (r = {fit['r']:.2f}): each 1 more in "
                    f"{x_column} goes with {charts.fmt_num(fit['slope'])} in {y_column} on average.",
                    f"两者存在{word}{direction}线性相关（r = {fit['r']:.2f}）：{x_column}每增加 1，{y_column}平均变化 "
                    f"{charts.fmt_num(fit['slope'])}。",
                )
            )
        else:
            insights.append(
                ctx.t(
                    f"There is little or no linear relationship (r = {fit['r']:.2f}).",
                    f"两者几乎没有线性相关（r = {fit['r']:.2f}）。",
                )
            )
        insights.append(
            ctx.t(
                "A trend in a chart is not proof of cause; use correlation_analysis for a test.",
                "图中的趋势不代表因果；如需检验请使用 correlation_analysis。",
            )
        )
    if sampled:
        limitations.append(
            ctx.t(
                f"Only {len(plot_index):,} of {n:,} points are drawn; the trendline uses all points.",
                f"仅绘制了 {n:,} 个点中的 {len(plot_index):,} 个；趋势线基于全部数据。",
            )
        )
    if n_dropped:
        limitations.append(
            ctx.t(
                f"{n_dropped} rows with a missing value in either column are not shown.",
                f"有 {n_dropped} 行在任一列中缺失，未绘制。",
            )
        )
    method = "scatter plot" + (" with OLS trendline" if trendline and fit else "")
    return chart_result(ctx, path, caption, insights, limitations, metrics, method, n)


def plot_line(
    data: pd.DataFrame,
    x_column: str,
    y_column: str,
    group_column: str | None = None,
    agg: Literal["sum", "mean", "median", "count", "min", "max"] = "sum",
    freq: Literal["auto", "none", "day", "week", "month", "quarter", "year"] = "auto",
    top: int = 6,
    title: str | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Draw a line chart of a numeric column over dates (or another ordered column), aggregating rows that share an x value, optionally one line per group.

    Args:
        x_column: The horizontal axis: dates (best), numbers, or ordered labels (kept in the order they first appear).
        y_column: The numeric column drawn as the line.
        group_column: Optional categorical column: one line per group (the largest `top`, the rest as one Other line).
        agg: How rows with the same x (and group) are combined: sum, mean, median, count, min or max.
        freq: For dates: day, week, month, quarter or year buckets; auto picks one when there are more than 1000 distinct dates; none keeps every date.
        top: How many groups get their own line (1-10).
        title: Chart title; a descriptive one is made when omitted.
    """
    ctx = ctx or ToolContext()
    data = charts.unique_index(data)
    y = require_numeric_column(data, y_column, ctx, "plot_bar")
    x_raw = data[x_column]
    is_time = pd.api.types.is_datetime64_any_dtype(x_raw.dtype) or column_kind(x_raw) == "datetime"
    x = (
        parse_dates(x_raw)
        if is_time
        else (
            x_raw
            if charts.is_numeric(x_raw)
            else x_raw.map(lambda v: charts.category_label(v, ctx.zh), na_action="ignore")
        )
    )
    frame = pd.DataFrame({"x": x.loc[y.index], "y": y}).dropna()
    if frame.empty:
        raise no_data_error(f"{x_column}, {y_column}", ctx)
    unit = None
    if is_time:
        frame["x"], unit = _bucket_dates(frame["x"], freq)
    order = list(pd.unique(frame["x"])) if not (is_time or charts.is_numeric(frame["x"])) else None
    n_folded, lines = 0, {}
    if group_column:
        labels, names, n_folded = charts.group_labels(
            data, group_column, frame.index, max(1, min(int(top), 10)), ctx.zh
        )
        if labels.empty:
            raise no_data_error(group_column, ctx)
        frame = frame.loc[labels.index].assign(g=labels)
        for name in names:
            lines[name] = _series(frame[frame["g"] == name], agg, order)
    else:
        lines[y_column] = _series(frame, agg, order)
    fig, ax = charts.new_figure()
    colors = charts.palette(len(lines), muted_last=bool(n_folded))
    position = {v: i for i, v in enumerate(order or [])}
    for (name, s), color in zip(lines.items(), colors):
        xs = [position[v] for v in s.index] if order is not None else s.index
        ax.plot(
            xs,
            s.to_numpy(),
            color=color,
            linewidth=1.8,
            marker="o" if len(s) <= 60 else None,
            markersize=3.5,
            label=charts.wrap_label(name, 24, 1),
        )
    if order is not None:
        step = max(1, len(order) // 15)
        ax.set_xticks(range(0, len(order), step), [charts.wrap_label(v, 12, 2) for v in order[::step]])
    elif is_time:
        locator = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    if group_column:
        charts.style_legend(ax, title=group_column, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    agg_en, agg_zh = _AGG[agg]
    y_label = ctx.t(f"{agg_en} of {y_column}", f"{y_column}（{agg_zh}）")
    charts.set_labels(
        ax, title or ctx.t(f"{y_label} over {x_column}", f"{y_column}{agg_zh}随{x_column}的变化"), x_column, y_label
    )
    path = charts.save(fig, ctx.figure_path(f"line_{charts.slug(x_column)}_{charts.slug(y_column)}"))
    return _line_result(ctx, path, lines, frame, x_column, y_column, group_column, agg, unit, n_folded, len(data))


def _bucket_dates(dates: pd.Series, freq: str) -> tuple[pd.Series, str | None]:
    if freq == "auto":
        if dates.nunique() <= MAX_TIME_POINTS:
            return dates, None
        span_days = (dates.max() - dates.min()).days + 1
        freq = next(
            (
                f
                for f, days in (("day", 1), ("week", 7), ("month", 31), ("quarter", 92))
                if span_days / days <= MAX_TIME_POINTS
            ),
            "year",
        )
    if freq == "none":
        return dates, None
    code = _FREQ[freq][0]
    return dates.dt.to_period(code).dt.start_time, freq


def _series(frame: pd.DataFrame, agg: str, order: list | None) -> pd.Series:
    s = frame.groupby("x", sort=order is None)["y"].agg("size" if agg == "count" else agg).astype(float)
    return s.reindex([v for v in order if v in s.index]) if order is not None else s


def _line_result(ctx, path, lines, frame, x_column, y_column, group_column, agg, unit, n_folded, n_total) -> ToolResult:
    first_line = next(iter(lines.values()))
    all_x = (
        sorted({v for s in lines.values() for v in s.index}, key=lambda v: (str(type(v)), v))
        if len(lines) > 1
        else list(first_line.index)
    )
    agg_en, agg_zh = _AGG[agg]
    per_en, per_zh = (f" per {unit}", f"（按{_FREQ[unit][2]}）") if unit else ("", "")
    group_en, group_zh = (
        (f", one line per {group_column} ({len(lines)} shown)", f"，每个{group_column}一条线（显示 {len(lines)} 条）")
        if group_column
        else ("", "")
    )
    caption = ctx.t(
        f"Line chart of the {agg_en.lower()} {y_column}{per_en} over {x_column} from {_label(all_x[0])} to "
        f"{_label(all_x[-1])} ({len(all_x)} points){group_en}.",
        f"{y_column}{agg_zh}{per_zh}随{x_column}变化的折线图，从 {_label(all_x[0])} 到 {_label(all_x[-1])}"
        f"（{len(all_x)} 个点）{group_zh}。",
    )
    metrics: dict = {"n": int(len(frame)), "n_points": len(all_x), "agg": agg, "n_lines": len(lines)}
    insights, limitations, s = [], [], first_line
    if len(s):
        start, end = float(s.iloc[0]), float(s.iloc[-1])
        peak, low = s.idxmax(), s.idxmin()
        metrics.update(
            first_x=_label(s.index[0]),
            last_x=_label(s.index[-1]),
            first_value=start,
            last_value=end,
            change=end - start,
            max_x=_label(peak),
            max_value=float(s.max()),
            min_x=_label(low),
            min_value=float(s.min()),
        )
        if start:
            metrics["pct_change"] = (end - start) / abs(start) * 100
        name = next(iter(lines))
        change = f" ({metrics['pct_change']:+.1f}%)" if "pct_change" in metrics else ""
        insights.append(
            ctx.t(
                f"{charts.short_label(name)}: from {charts.fmt_num(start)} at {metrics['first_x']} to {charts.fmt_num(end)} at {metrics['last_x']}{change}; "
                f"highest {charts.fmt_num(s.max())} at {metrics['max_x']}, lowest {charts.fmt_num(s.min())} at {metrics['min_x']}.",
                f"{charts.short_label(name)}：从 {metrics['first_x']} 的 {charts.fmt_num(start)} 到 {metrics['last_x']} 的 {charts.fmt_num(end)}{change}；"
                f"最高 {charts.fmt_num(s.max())}（{metrics['max_x']}），最低 {charts.fmt_num(s.min())}（{metrics['min_x']}）。",
            )
        )
    if unit and len(s) >= 2:
        limitations.append(
            ctx.t(
                f"The first and last {unit} may be partial, which makes them look lower for sums and counts.",
                f"第一个和最后一个{_FREQ[unit][2]}可能不完整，求和或计数时会显得偏低。",
            )
        )
    if n_folded:
        limitations.append(folded_groups_note(n_folded, ctx))
    dropped = n_total - int(len(frame))
    if dropped:
        limitations.append(
            ctx.t(
                f"{dropped:,} rows with a missing {x_column}, {y_column}{' or ' + group_column if group_column else ''} are not shown.",
                f"有 {dropped:,} 行的 {x_column}、{y_column}{'或' + group_column if group_column else ''} 缺失，未绘制。",
            )
        )
    limitations.append(
        ctx.t(
            "A trend in a chart is not a test; use time_series_trend to check it.",
            "图中的趋势不等于检验；请用 time_series_trend 检验。",
        )
    )
    return chart_result(ctx, path, caption, insights, limitations, metrics, f"line chart ({agg})", int(len(frame)))
