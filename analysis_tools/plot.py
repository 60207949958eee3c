"""Plot tools: PNG charts with readable CJK labels and a one-sentence caption (SPEC §11 plot).

Every tool draws with the shared machinery in `charts.py`, writes its PNG to
`ctx.figure_path(stem)` and never changes the data it is given.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from . import charts
from .base import ToolContext, ToolResult
from .plot_common import chart_result, folded_groups_note, no_data_error, require_numeric_column

SCATTER_SAMPLE = 5000
MAX_HIST_GROUPS = 6
MAX_SCATTER_GROUPS = 8

_AGG_NAMES = {
    "mean": ("Mean", "平均值"),
    "sum": ("Total", "总和"),
    "median": ("Median", "中位数"),
    "count": ("Count", "数量"),
}


# ----------------------------------------------------------------------------- histogram

def plot_histogram(data: pd.DataFrame, value_column: str, bins: int = 30, group_column: str | None = None,
                   title: str | None = None, ctx: ToolContext | None = None) -> ToolResult:
    """Draw a histogram of a numeric column: how its values are distributed (optionally one colour per group).

    Args:
        value_column: The numeric column whose distribution is drawn.
        bins: Number of bins (1-200).
        group_column: Optional categorical column; overlays one histogram per group (the largest 6 groups, the rest as Other).
        title: Chart title; a descriptive one is made when omitted.
    """
    ctx = ctx or ToolContext()
    data = charts.unique_index(data)
    values = require_numeric_column(data, value_column, ctx, "plot_bar")
    if values.empty:
        raise no_data_error(value_column, ctx)
    bins = int(min(max(bins, 1), 200))
    n = int(len(values))
    n_missing = int(len(data) - n)
    edges = np.histogram_bin_edges(values.to_numpy(), bins=bins)
    mean, median, std = float(values.mean()), float(values.median()), float(values.std()) if n > 1 else 0.0
    q25, q75 = float(values.quantile(0.25)), float(values.quantile(0.75))
    skew = float(values.skew()) if n > 2 else 0.0

    fig, ax = charts.new_figure()
    limitations: list[str] = []
    n_groups = 0
    if group_column:
        labels, order, n_folded = charts.group_labels(data, group_column, values.index, MAX_HIST_GROUPS, ctx.zh)
        n_groups = len(order)
        colors = charts.palette(len(order), muted_last=bool(n_folded))
        for rank, (name, color) in enumerate(zip(order, colors)):
            group_values = values.loc[labels.index[labels == name]].to_numpy()
            label = charts.wrap_label(name, 20, 1) + f" (n={len(group_values):,})"
            if n_folded and rank == len(order) - 1:  # "Other": an outline only, so it does not hide the groups
                ax.hist(group_values, bins=edges, histtype="step", color=charts.MUTED, linewidth=1.4,
                        linestyle="--", label=label, zorder=1)
                continue
            ax.hist(group_values, bins=edges, histtype="stepfilled", color=color, alpha=0.30, zorder=2)
            ax.hist(group_values, bins=edges, histtype="step", color=color, linewidth=1.5, label=label, zorder=3)
        charts.style_legend(ax, title=group_column, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        dropped = n - int(len(labels))
        if dropped:
            limitations.append(ctx.t(f"{dropped} rows with a missing '{group_column}' are not shown.",
                                     f"有 {dropped} 行的“{group_column}”缺失，未绘制。"))
        if n_folded:
            limitations.append(folded_groups_note(n_folded, ctx))
    else:
        ax.hist(values.to_numpy(), bins=edges, color=charts.ACCENT, edgecolor="white", linewidth=0.6)
        ax.axvline(median, color=charts.ACCENT_DARK, linestyle="--", linewidth=1.4,
                   label=ctx.t(f"median {charts.fmt_num(median)}", f"中位数 {charts.fmt_num(median)}"))
        charts.style_legend(ax, loc="upper right")
    default_title = ctx.t(f"Distribution of {value_column}", f"{value_column}的分布")
    if group_column:
        default_title = ctx.t(f"Distribution of {value_column} by {group_column}",
                              f"按{group_column}分组的{value_column}分布")
    charts.set_labels(ax, title or default_title, value_column, ctx.t("Count", "频数"))

    path = charts.save(fig, ctx.figure_path(f"histogram_{charts.slug(value_column)}"))
    if group_column:
        caption = ctx.t(
            f"Histogram of {value_column} for {n:,} rows in {bins} bins, one colour per {group_column} group "
            f"({n_groups} shown).",
            f"{value_column}的直方图（共 {n:,} 个值，{bins} 组），按{group_column}分色显示 {n_groups} 个组。",
        )
    else:
        caption = ctx.t(
            f"Histogram of {value_column} for {n:,} values in {bins} bins; the dashed line marks the median "
            f"({charts.fmt_num(median)}).",
            f"{value_column}的直方图（共 {n:,} 个值，{bins} 组），虚线为中位数（{charts.fmt_num(median)}）。",
        )
    if abs(skew) < 0.5:
        shape = ctx.t("roughly symmetric", "大致对称")
    elif skew > 0:
        shape = ctx.t("skewed to the right (a tail of large values)", "右偏（有一条大数值的长尾）")
    else:
        shape = ctx.t("skewed to the left (a tail of small values)", "左偏（有一条小数值的长尾）")
    insights = [
        ctx.t(f"Half of the values lie between {charts.fmt_num(q25)} and {charts.fmt_num(q75)}; "
              f"the median is {charts.fmt_num(median)} and the mean {charts.fmt_num(mean)}.",
              f"一半的值位于 {charts.fmt_num(q25)} 到 {charts.fmt_num(q75)} 之间；中位数为 {charts.fmt_num(median)}，"
              f"平均值为 {charts.fmt_num(mean)}。"),
        ctx.t(f"The distribution is {shape} (skewness {skew:.2f}); values range from "
              f"{charts.fmt_num(values.min())} to {charts.fmt_num(values.max())}.",
              f"分布{shape}（偏度 {skew:.2f}）；取值范围 {charts.fmt_num(values.min())} 到 {charts.fmt_num(values.max())}。"),
    ]
    if n_missing:
        limitations.append(ctx.t(f"{n_missing} missing or non-finite values are not shown.",
                                 f"有 {n_missing} 个缺失或非有限值未绘制。"))
    metrics = {"n": n, "n_missing": n_missing, "bins": bins, "mean": round(mean, 6), "median": round(median, 6),
               "std": round(std, 6), "min": float(values.min()), "max": float(values.max()),
               "skewness": round(skew, 4)}
    if group_column:
        metrics["n_groups"] = n_groups
    return chart_result(ctx, path, caption, insights, limitations, metrics, "histogram", n)


# ----------------------------------------------------------------------------- bar

def plot_bar(data: pd.DataFrame, x_column: str, y_column: str | None = None,
             agg: Literal["mean", "sum", "count", "median"] = "mean", top: int = 15, title: str | None = None,
             ctx: ToolContext | None = None) -> ToolResult:
    """Draw a bar chart of an aggregate of a numeric column per category (or row counts per category), sorted, with value labels.

    Args:
        x_column: The categorical column; one bar per category.
        y_column: The numeric column to aggregate per category; omit it to count rows per category.
        agg: How y is aggregated per category: mean, sum, count or median (count when y_column is omitted).
        top: Show at most this many categories (1-50); the remaining ones are combined into one Other bar. For count/sum the largest are kept; for mean/median the most frequent ones.
        title: Chart title; a descriptive one is made when omitted.
    """
    ctx = ctx or ToolContext()
    data = charts.unique_index(data)
    if y_column is None:
        agg = "count"
    top = int(min(max(top, 1), 50))
    x = data[x_column]
    if y_column is not None and agg != "count":
        y = require_numeric_column(data, y_column, ctx, "plot_bar without y_column (counts)")
        frame = pd.DataFrame({"x": x.loc[y.index], "y": y})
    elif y_column is not None:
        keep = data[y_column].notna()
        frame = pd.DataFrame({"x": x[keep], "y": 1.0})
    else:
        frame = pd.DataFrame({"x": x, "y": 1.0})
    n_missing_x = int(frame["x"].isna().sum())
    frame = frame[frame["x"].notna()]
    if frame.empty:
        raise no_data_error(y_column or x_column, ctx)

    func = {"mean": "mean", "sum": "sum", "median": "median", "count": "size"}[agg]
    grouped = frame.groupby("x", sort=False, observed=True)["y"]
    full = grouped.agg(func).astype(float)
    sizes = grouped.size()
    ranking = full.sort_values(ascending=False) if agg in ("count", "sum") else sizes.sort_values(ascending=False)
    keep, rest = charts.top_categories(ranking, top)
    shown = full.loc[keep].sort_values(ascending=False)
    labels = [charts.category_label(k, ctx.zh) for k in shown.index]
    values = list(shown.to_numpy())
    colors = [charts.ACCENT] * len(values)
    other_value = None
    if rest:
        rest_y = frame.loc[frame["x"].isin(set(rest)), "y"]
        other_value = float(len(rest_y)) if agg == "count" else float(getattr(rest_y, func)())
        labels.append(charts.other_label(len(rest), ctx.zh))
        values.append(other_value)
        colors.append(charts.MUTED)

    agg_en, agg_zh = _AGG_NAMES[agg]
    if agg == "count":
        y_label = ctx.t("Count", "数量") if y_column is None else ctx.t(f"Count of {y_column}", f"{y_column}的数量")
        default_title = ctx.t(f"Count by {x_column}", f"{x_column}各类别的数量")
    else:
        y_label = ctx.t(f"{agg_en} of {y_column}", f"{y_column}（{agg_zh}）")
        default_title = ctx.t(f"{agg_en} of {y_column} by {x_column}", f"按{x_column}分组的{y_column}{agg_zh}")

    longest = max(charts.text_width(label) for label in labels)
    horizontal = len(labels) > 8 or longest > 10
    height = 5.0 if not horizontal else min(max(2.6, 0.36 * len(labels) + 1.6), 12.0)
    fig, ax = charts.new_figure((8.0, height))
    value_labels = [charts.fmt_num(v) for v in values]
    if horizontal:
        charts.set_grid(ax, "x")
        wrapped = [charts.wrap_label(label, 22, 2) for label in labels]
        positions = np.arange(len(values))
        bars = ax.barh(positions, values, color=colors, height=0.68)
        ax.set_yticks(positions, wrapped)
        ax.invert_yaxis()  # largest at the top
        ax.bar_label(bars, labels=value_labels, padding=3, fontsize=charts.ANNOT_SIZE, color=charts.TEXT)
        charts.pad_value_limits(ax, values, "x")
        charts.set_labels(ax, title or default_title, y_label, x_column,
                          ylabel_width=max(12, int(height * 6)))
    else:
        wrapped = [charts.wrap_label(label, 12, 2) for label in labels]
        positions = np.arange(len(values))
        bars = ax.bar(positions, values, color=colors, width=0.68)
        ax.set_xticks(positions, wrapped)
        ax.bar_label(bars, labels=value_labels, padding=3, fontsize=charts.ANNOT_SIZE, color=charts.TEXT)
        charts.pad_value_limits(ax, values, "y")
        charts.set_labels(ax, title or default_title, x_column, y_label)

    stem = f"bar_{charts.slug(x_column)}" + (f"_{charts.slug(y_column)}" if y_column else "")
    path = charts.save(fig, ctx.figure_path(stem))

    n = int(len(frame))
    n_categories = int(len(full))
    best, worst = full.idxmax(), full.idxmin()
    best_label, worst_label = charts.category_label(best, ctx.zh), charts.category_label(worst, ctx.zh)
    best_short, worst_short = charts.short_label(best_label), charts.short_label(worst_label)
    what_en = "number of rows" if agg == "count" else f"{agg_en.lower()} {y_column}"
    what_zh = "行数" if agg == "count" else f"{y_column}{agg_zh}"
    folded_en = f", with the other {len(rest)} combined as Other" if rest else ""
    folded_zh = f"，其余 {len(rest)} 类合并为“其他”" if rest else ""
    caption = ctx.t(
        f"Bar chart of the {what_en} for each {x_column} category ({len(keep)} shown{folded_en}), "
        f"sorted from highest to lowest.",
        f"各{x_column}类别的{what_zh}条形图（显示 {len(keep)} 类{folded_zh}），按从高到低排序。",
    )
    insights = [
        ctx.t(f"Highest: {best_short} ({charts.fmt_num(full[best])}, n={int(sizes[best]):,}); lowest: "
              f"{worst_short} ({charts.fmt_num(full[worst])}, n={int(sizes[worst]):,}), across all "
              f"{n_categories} categories.",
              f"在全部 {n_categories} 个类别中，最高的是 {best_short}（{charts.fmt_num(full[best])}，n={int(sizes[best]):,}），"
              f"最低的是 {worst_short}（{charts.fmt_num(full[worst])}，n={int(sizes[worst]):,}）。"),
    ]
    if agg in ("count", "sum") and full.sum() > 0:
        share = float(shown.iloc[0] / full.sum()) if len(shown) else 0.0
        insights.append(ctx.t(f"{charts.short_label(labels[0])} accounts for {share:.1%} of the total.",
                              f"{charts.short_label(labels[0])} 占总量的 {share:.1%}。"))
    if agg in ("mean", "median"):
        small = int((sizes < 5).sum())
        if small:
            insights.append(ctx.t(f"{small} categories have fewer than 5 rows; their {agg_en.lower()}s are unreliable.",
                                  f"有 {small} 个类别少于 5 行，其{agg_zh}不够可靠。"))
    limitations: list[str] = []
    if rest:
        rule = ctx.t("largest", "最大的") if agg in ("count", "sum") else ctx.t("most frequent", "最常见的")
        limitations.append(ctx.t(f"Only the {len(keep)} {rule} of {n_categories} categories have their own bar.",
                                 f"{n_categories} 个类别中只有{rule} {len(keep)} 个单独显示。"))
    if n_missing_x:
        limitations.append(ctx.t(f"{n_missing_x} rows with a missing '{x_column}' are not counted.",
                                 f"有 {n_missing_x} 行的“{x_column}”缺失，未计入。"))
    metrics: dict[str, float | int | str] = {
        "n": n, "n_categories": n_categories, "n_shown": len(keep), "agg": agg,
        "max_category": best_label, "max_value": float(full[best]),
        "min_category": worst_label, "min_value": float(full[worst]),
    }
    if other_value is not None:
        metrics["other_value"] = other_value
    table = pd.DataFrame({x_column: labels, "count" if agg == "count" else f"{agg}_{y_column}": values})
    return chart_result(ctx, path, caption, insights, limitations, metrics, f"bar chart ({agg})", n, table)


# ----------------------------------------------------------------------------- scatter

def plot_scatter(data: pd.DataFrame, x_column: str, y_column: str, group_column: str | None = None,
                 trendline: bool = True, title: str | None = None, ctx: ToolContext | None = None) -> ToolResult:
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
            ax.scatter(x_all.loc[idx], y_all.loc[idx], s=size, color=color, alpha=alpha, linewidths=0,
                       label=charts.wrap_label(name, 24, 1))
        if n_folded:
            limitations.append(folded_groups_note(n_folded, ctx))
    else:
        ax.scatter(x_all.loc[plot_index], y_all.loc[plot_index], s=size, color=charts.ACCENT, alpha=alpha,
                   linewidths=0)
    if trendline and fit:
        line_x = np.linspace(float(x_all.min()), float(x_all.max()), 100)
        ax.plot(line_x, fit["intercept"] + fit["slope"] * line_x, color=charts.ACCENT_DARK if not group_column
                else charts.TEXT, linewidth=1.8,
                label=ctx.t(f"trend (r = {fit['r']:.2f})", f"趋势线（r = {fit['r']:.2f}）"))
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
        metrics.update({"r": round(fit["r"], 6), "r_squared": round(fit["r_squared"], 6),
                        "slope": fit["slope"], "intercept": fit["intercept"]})
        strength = abs(fit["r"])
        word = (ctx.t("strong", "强") if strength >= 0.7 else ctx.t("moderate", "中等") if strength >= 0.4
                else ctx.t("weak", "弱") if strength >= 0.2 else ctx.t("little or no", "几乎没有"))
        direction = ctx.t("positive", "正") if fit["r"] > 0 else ctx.t("negative", "负")
        if strength >= 0.2:
            insights.append(ctx.t(
                f"There is a {word} {direction} linear relationship (r = {fit['r']:.2f}): each 1 more in "
                f"{x_column} goes with {charts.fmt_num(fit['slope'])} in {y_column} on average.",
                f"两者存在{word}{direction}线性相关（r = {fit['r']:.2f}）：{x_column}每增加 1，{y_column}平均变化 "
                f"{charts.fmt_num(fit['slope'])}。"))
        else:
            insights.append(ctx.t(f"There is little or no linear relationship (r = {fit['r']:.2f}).",
                                  f"两者几乎没有线性相关（r = {fit['r']:.2f}）。"))
        insights.append(ctx.t("A trend in a chart is not proof of cause; use correlation_analysis for a test.",
                              "图中的趋势不代表因果；如需检验请使用 correlation_analysis。"))
    if sampled:
        limitations.append(ctx.t(f"Only {len(plot_index):,} of {n:,} points are drawn; the trendline uses all points.",
                                 f"仅绘制了 {n:,} 个点中的 {len(plot_index):,} 个；趋势线基于全部数据。"))
    if n_dropped:
        limitations.append(ctx.t(f"{n_dropped} rows with a missing value in either column are not shown.",
                                 f"有 {n_dropped} 行在任一列中缺失，未绘制。"))
    method = "scatter plot" + (" with OLS trendline" if trendline and fit else "")
    return chart_result(ctx, path, caption, insights, limitations, metrics, method, n)
