"""Plot tools for how one number is spread (group `plot`, SPEC §11): histogram and box plot.

Every tool draws with the shared machinery in `charts.py` (no pyplot, Latin + CJK fonts, top-N + Other
folding), writes its PNG to `ctx.figure_path(stem)`, never changes the data it is given, and returns via
`plot_common.chart_result` with a one-sentence caption in the user's language.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import charts
from .base import ToolContext, ToolResult
from .plot_common import chart_result, folded_groups_note, no_data_error, require_numeric_column

MAX_HIST_GROUPS = 6


# At most this many bars: one per whole number up to this span (a 1-5 rating, a count of children),
# and the most equal-width bins a data-chosen count may have.
MAX_AUTO_BINS = 30


def histogram_edges(values: pd.Series, bins: int | None) -> list[float]:
    """Bin edges: one bar per whole number when the column holds few of them (a 1-5 rating, a count
    of children), else `bins` equal widths — chosen from the data when not given (numpy's "auto":
    Sturges' or Freedman-Diaconis' rule, whichever is finer, at most MAX_AUTO_BINS). Thirty bins over
    the values 1-5 drew five thin bars with gaps that looked like missing answers; thirty over six
    values drew bars of one value each with empty bins between."""
    numbers = values.to_numpy(dtype=float)
    low, high = float(numbers.min()), float(numbers.max())
    if np.all(np.mod(numbers, 1) == 0) and high - low + 1 <= (bins or MAX_AUTO_BINS):
        return np.arange(low - 0.5, high + 1.0, 1.0).tolist()
    if bins is None:
        bins = min(len(np.histogram_bin_edges(numbers, bins="auto")) - 1, MAX_AUTO_BINS)
    return np.histogram_bin_edges(numbers, bins=bins).tolist()


def plot_histogram(
    data: pd.DataFrame,
    value_column: str,
    bins: int | None = None,
    group_column: str | None = None,
    title: str | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Draw a histogram of a numeric column: how its values are distributed (optionally one colour per group).

    Args:
        value_column: The numeric column whose distribution is drawn.
        bins: Number of bins (1-200); chosen from the data when omitted (at most 30).
        group_column: Optional categorical column; overlays one histogram per group (the largest 6 groups, the rest as Other).
        title: Chart title; a descriptive one is made when omitted.
    """
    ctx = ctx or ToolContext()
    data = charts.unique_index(data)
    values = require_numeric_column(data, value_column, ctx, "plot_bar")
    if values.empty:
        raise no_data_error(value_column, ctx)
    bins = None if bins is None else int(min(max(bins, 1), 200))
    n = int(len(values))
    n_missing = int(len(data) - n)
    edges = histogram_edges(values, bins)  # shared by every group
    bins = len(edges) - 1
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
                ax.hist(
                    group_values,
                    bins=edges,
                    histtype="step",
                    color=charts.MUTED,
                    linewidth=1.4,
                    linestyle="--",
                    label=label,
                    zorder=1,
                )
                continue
            ax.hist(group_values, bins=edges, histtype="stepfilled", color=color, alpha=0.30, zorder=2)
            ax.hist(group_values, bins=edges, histtype="step", color=color, linewidth=1.5, label=label, zorder=3)
        charts.style_legend(ax, title=group_column, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        dropped = n - int(len(labels))
        if dropped:
            limitations.append(
                ctx.t(
                    f"{dropped} rows with a missing '{group_column}' are not shown.",
                    f"有 {dropped} 行的“{group_column}”缺失，未绘制。",
                )
            )
        if n_folded:
            limitations.append(folded_groups_note(n_folded, ctx))
    else:
        ax.hist(values.to_numpy(), bins=edges, color=charts.ACCENT, edgecolor="white", linewidth=0.6)
        ax.axvline(
            median,
            color=charts.ACCENT_DARK,
            linestyle="--",
            linewidth=1.4,
            label=ctx.t(f"median {charts.fmt_num(median)}", f"中位数 {charts.fmt_num(median)}"),
        )
        charts.style_legend(ax, loc="upper right")
    default_title = ctx.t(f"Distribution of {value_column}", f"{value_column}的分布")
    if group_column:
        default_title = ctx.t(
            f"Distribution of {value_column} by {group_column}", f"按{group_column}分组的{value_column}分布"
        )
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
        ctx.t(
            f"Half of the values lie between {charts.fmt_num(q25)} and {charts.fmt_num(q75)}; "
            f"the median is {charts.fmt_num(median)} and the mean {charts.fmt_num(mean)}.",
            f"一半的值位于 {charts.fmt_num(q25)} 到 {charts.fmt_num(q75)} 之间；中位数为 {charts.fmt_num(median)}，"
            f"平均值为 {charts.fmt_num(mean)}。",
        ),
        ctx.t(
            f"The distribution is {shape} (skewness {skew:.2f}); values range from "
            f"{charts.fmt_num(values.min())} to {charts.fmt_num(values.max())}.",
            f"分布{shape}（偏度 {skew:.2f}）；取值范围 {charts.fmt_num(values.min())} 到 {charts.fmt_num(values.max())}。",
        ),
    ]
    if n_missing:
        limitations.append(
            ctx.t(
                f"{n_missing} missing or non-finite values are not shown.", f"有 {n_missing} 个缺失或非有限值未绘制。"
            )
        )
    metrics = {
        "n": n,
        "n_missing": n_missing,
        "bins": bins,
        "mean": round(mean, 6),
        "median": round(median, 6),
        "std": round(std, 6),
        "min": float(values.min()),
        "max": float(values.max()),
        "skewness": round(skew, 4),
    }
    if group_column:
        metrics["n_groups"] = n_groups
    return chart_result(ctx, path, caption, insights, limitations, metrics, "histogram", n)


def plot_box(
    data: pd.DataFrame,
    value_column: str,
    group_column: str | None = None,
    top: int = 10,
    show_outliers: bool = True,
    title: str | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Draw box plots of a numeric column (optionally one box per group, ordered by median): the middle half of the values, the median and outliers.

    Args:
        value_column: The numeric column whose spread is shown.
        group_column: Optional categorical column: one box per group (the largest `top` groups, the rest as Other).
        top: How many groups get their own box (1-30).
        show_outliers: Draw points beyond 1.5 × IQR from the box (at most 200 per box are drawn).
        title: Chart title; a descriptive one is made when omitted.
    """
    ctx = ctx or ToolContext()
    data = charts.unique_index(data)
    values = require_numeric_column(data, value_column, ctx, "plot_bar")
    if values.empty:
        raise no_data_error(value_column, ctx)
    n_folded = 0
    if group_column:
        labels, names, n_folded = charts.group_labels(
            data, group_column, values.index, max(1, min(int(top), 30)), ctx.zh
        )
        if labels.empty:
            raise no_data_error(group_column, ctx)
        groups = {name: values.loc[labels.index[labels == name]].to_numpy() for name in names}
    else:
        groups = {value_column: values.to_numpy()}
    stats = {name: _box_stats(v, name) for name, v in groups.items() if len(v)}
    other = charts.other_label(n_folded, ctx.zh) if n_folded else None
    order = sorted((k for k in stats if k != other), key=lambda k: -stats[k]["med"]) + (
        [other] if other in stats else []
    )
    boxes = [stats[k] for k in order]
    horizontal = len(boxes) > 8 or max(charts.text_width(k) for k in order) > 12
    fig, ax = charts.new_figure((8.0, min(max(3.0, 0.4 * len(boxes) + 1.6), 12.0)) if horizontal else charts.FIG_SIZE)
    for box in boxes:
        box["label"] = charts.wrap_label(box["label"], 22 if horizontal else 12, 2)
        box["fliers"] = box["fliers"][:200]
    artists = ax.bxp(
        boxes,
        showfliers=show_outliers,
        patch_artist=True,
        orientation="horizontal" if horizontal else "vertical",
        widths=0.6,
        medianprops={"color": charts.ACCENT_DARK, "linewidth": 1.8},
        flierprops={"marker": "o", "markersize": 3, "alpha": 0.5, "markeredgecolor": charts.MUTED},
    )
    for patch, name in zip(artists["boxes"], order):
        patch.set_facecolor(charts.MUTED if name == other else charts.ACCENT)
        patch.set_alpha(0.45)
    if horizontal:
        charts.set_grid(ax, "x")
        ax.invert_yaxis()
    axis_en = (
        ctx.t(f"{value_column} by {group_column}", f"按{group_column}分组的{value_column}")
        if group_column
        else value_column
    )
    charts.set_labels(
        ax,
        title or ctx.t(f"Spread of {axis_en}", f"{axis_en}的分布"),
        value_column if horizontal else (group_column or ""),
        None if horizontal else value_column,
    )
    path = charts.save(fig, ctx.figure_path(f"box_{charts.slug(value_column)}"))
    return _box_result(ctx, path, stats, order, values, value_column, group_column, n_folded, len(data))


def _box_stats(v: np.ndarray, name: str) -> dict:
    q1, med, q3 = np.percentile(v, [25, 50, 75])
    iqr = q3 - q1
    inside = v[(v >= q1 - 1.5 * iqr) & (v <= q3 + 1.5 * iqr)]
    fliers = v[(v < q1 - 1.5 * iqr) | (v > q3 + 1.5 * iqr)]
    return {
        "label": name,
        "q1": q1,
        "med": med,
        "q3": q3,
        "whislo": inside.min(),
        "whishi": inside.max(),
        "fliers": fliers,
        "mean": float(v.mean()),
        "n": len(v),
        "n_fliers": len(fliers),
    }


def _box_result(ctx, path, stats, order, values, value_column, group_column, n_folded, n_total) -> ToolResult:
    n = int(sum(s["n"] for s in stats.values()))
    n_out = int(sum(s["n_fliers"] for s in stats.values()))
    metrics: dict = {"n": n, "n_groups": len(order), "median": float(values.median()), "n_outliers": n_out}
    insights = []
    if group_column:
        for k in order:
            metrics[f"median.{k}"] = float(stats[k]["med"])
        hi, lo = order[0], [k for k in order if not (n_folded and k == order[-1])][-1]
        metrics.update(highest_median_group=hi, lowest_median_group=lo)
        insights.append(
            ctx.t(
                f"{charts.short_label(hi)} has the highest median ({charts.fmt_num(stats[hi]['med'])}) and {charts.short_label(lo)} the lowest ({charts.fmt_num(stats[lo]['med'])}).",
                f"{charts.short_label(hi)} 的中位数最高（{charts.fmt_num(stats[hi]['med'])}），{charts.short_label(lo)} 最低（{charts.fmt_num(stats[lo]['med'])}）。",
            )
        )
        caption = ctx.t(
            f"Box plot of {value_column} for {len(order)} {group_column} groups ordered by median; each box spans the middle half of the values and its line marks the median.",
            f"按{group_column}分组（{len(order)} 组，按中位数排序）的{value_column}箱线图，箱体覆盖中间一半的数据，箱中的线为中位数。",
        )
    else:
        s = stats[order[0]]
        metrics.update(q1=float(s["q1"]), q3=float(s["q3"]))
        insights.append(
            ctx.t(
                f"Half of the values lie between {charts.fmt_num(s['q1'])} and {charts.fmt_num(s['q3'])}; the median is {charts.fmt_num(s['med'])}.",
                f"一半的值位于 {charts.fmt_num(s['q1'])} 到 {charts.fmt_num(s['q3'])} 之间；中位数为 {charts.fmt_num(s['med'])}。",
            )
        )
        caption = ctx.t(
            f"Box plot of {value_column} for {n:,} values; the box spans the middle half of the values and its line marks the median.",
            f"{value_column}的箱线图（{n:,} 个值），箱体覆盖中间一半的数据，箱中的线为中位数。",
        )
    if n_out:
        insights.append(
            ctx.t(
                f"{n_out:,} values lie beyond 1.5 × IQR from their box (possible outliers).",
                f"有 {n_out:,} 个值超出箱体 1.5 倍四分位距（可能是异常值）。",
            )
        )
    limitations = [folded_groups_note(n_folded, ctx)] if n_folded else []
    if n_total - n:
        limitations.append(
            ctx.t(
                f"{n_total - n:,} rows with a missing value or group are not shown.",
                f"有 {n_total - n:,} 行数值或分组缺失，未绘制。",
            )
        )
    return chart_result(ctx, path, caption, insights, limitations, metrics, "box plot", n)
