"""Plot tools that compare categories (group `plot`, SPEC §11): bar chart, pie chart, heatmap of a
pivot or a correlation matrix.

Every tool draws with the shared machinery in `charts.py` (no pyplot, Latin + CJK fonts, top-N + Other
folding), writes its PNG to `ctx.figure_path(stem)`, never changes the data it is given, and returns via
`plot_common.chart_result` with a one-sentence caption in the user's language.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from . import charts
from .base import ToolContext, ToolError, ToolResult
from .plot_common import chart_result, no_data_error, require_numeric_column

MAX_ANNOTATED_CELLS = 400
_AGG_NAMES = {
    "mean": ("Mean", "平均值"),
    "sum": ("Total", "总和"),
    "median": ("Median", "中位数"),
    "count": ("Count", "数量"),
}


_AGG = {
    "sum": ("Total", "总和"),
    "mean": ("Mean", "平均"),
    "median": ("Median", "中位数"),
    "count": ("Count", "数量"),
    "min": ("Minimum", "最小值"),
    "max": ("Maximum", "最大值"),
}


def plot_bar(
    data: pd.DataFrame,
    x_column: str,
    y_column: str | None = None,
    agg: Literal["mean", "sum", "count", "median"] = "mean",
    top: int = 15,
    title: str | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
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
        charts.set_labels(ax, title or default_title, y_label, x_column, ylabel_width=max(12, int(height * 6)))
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
        ctx.t(
            f"Highest: {best_short} ({charts.fmt_num(full[best])}, n={int(sizes[best]):,}); lowest: "
            f"{worst_short} ({charts.fmt_num(full[worst])}, n={int(sizes[worst]):,}), across all "
            f"{n_categories} categories.",
            f"在全部 {n_categories} 个类别中，最高的是 {best_short}（{charts.fmt_num(full[best])}，n={int(sizes[best]):,}），"
            f"最低的是 {worst_short}（{charts.fmt_num(full[worst])}，n={int(sizes[worst]):,}）。",
        ),
    ]
    if agg in ("count", "sum") and full.sum() > 0:
        share = float(shown.iloc[0] / full.sum()) if len(shown) else 0.0
        insights.append(
            ctx.t(
                f"{charts.short_label(labels[0])} accounts for {share:.1%} of the total.",
                f"{charts.short_label(labels[0])} 占总量的 {share:.1%}。",
            )
        )
    if agg in ("mean", "median"):
        small = int((sizes < 5).sum())
        if small:
            insights.append(
                ctx.t(
                    f"{small} categories have fewer than 5 rows; their {agg_en.lower()}s are unreliable.",
                    f"有 {small} 个类别少于 5 行，其{agg_zh}不够可靠。",
                )
            )
    limitations: list[str] = []
    if rest:
        rule = ctx.t("largest", "最大的") if agg in ("count", "sum") else ctx.t("most frequent", "最常见的")
        limitations.append(
            ctx.t(
                f"Only the {len(keep)} {rule} of {n_categories} categories have their own bar.",
                f"{n_categories} 个类别中只有{rule} {len(keep)} 个单独显示。",
            )
        )
    if n_missing_x:
        limitations.append(
            ctx.t(
                f"{n_missing_x} rows with a missing '{x_column}' are not counted.",
                f"有 {n_missing_x} 行的“{x_column}”缺失，未计入。",
            )
        )
    metrics: dict[str, float | int | str] = {
        "n": n,
        "n_categories": n_categories,
        "n_shown": len(keep),
        "agg": agg,
        "max_category": best_label,
        "max_value": float(full[best]),
        "min_category": worst_label,
        "min_value": float(full[worst]),
    }
    if other_value is not None:
        metrics["other_value"] = other_value
    table = pd.DataFrame({x_column: labels, "count" if agg == "count" else f"{agg}_{y_column}": values})
    return chart_result(ctx, path, caption, insights, limitations, metrics, f"bar chart ({agg})", n, table)


def plot_pie(
    data: pd.DataFrame,
    column: str | None = None,
    value_column: str | None = None,
    group_column: str | None = None,
    top: int = 6,
    title: str | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Draw a pie chart of shares: how rows split across the categories of a column, or how a total (e.g. revenue) splits across groups; small slices are combined into Other and percentages are labelled.

    Args:
        column: The categorical column whose share of rows is shown (or use group_column with value_column).
        value_column: Optional numeric column (not negative) whose total is split by group_column.
        group_column: The categorical column that defines the slices when value_column is given.
        top: How many slices are shown before the rest are combined into Other (2-12).
        title: Chart title; a descriptive one is made when omitted.
    """
    ctx = ctx or ToolContext()
    data = charts.unique_index(data)
    category = group_column or column
    if category is None:
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                "Say which column defines the slices (column or group_column).",
                "请指定切分扇区的列（column 或 group_column）。",
            ),
            hint='column="Region"  or  group_column="Region", value_column="Revenue"',
        )
    weights = pd.Series(1.0, index=data.index)
    if value_column:
        weights = require_numeric_column(data, value_column, ctx, "plot_pie without value_column (row shares)")
        if (weights < 0).any():
            raise ToolError(
                "invalid_values",
                ctx.t(
                    f"{value_column!r} has negative values; a pie cannot show them.",
                    f"{value_column!r} 含负数，饼图无法表示。",
                ),
                hint=ctx.t("Use plot_bar instead.", "请改用 plot_bar。"),
                column=value_column,
            )
    frame = pd.DataFrame({"c": data[category].loc[weights.index], "w": weights}).dropna()
    totals = frame.groupby("c", observed=True)["w"].sum().sort_values(ascending=False)
    if frame.empty or totals.sum() <= 0:
        raise no_data_error(value_column or category, ctx)
    keep, rest = charts.top_categories(totals, max(2, min(int(top), 12)))
    # by label, never as a mask: the slices of a yes/no column are True and False, which .loc would read as
    # a mask over the totals (one slice left, and a label for each of two)
    shares = totals.reindex(keep)
    labels = [charts.category_label(k, ctx.zh) for k in keep]
    if rest:
        shares = pd.concat([shares, pd.Series([totals.reindex(rest).sum()])])
        labels.append(charts.other_label(len(rest), ctx.zh))
    fig, ax = charts.new_figure((7.5, 5.5))
    ax.pie(
        shares.to_numpy(),
        labels=[charts.wrap_label(lb, 16, 2) for lb in labels],
        colors=charts.palette(len(labels), muted_last=bool(rest)),
        autopct=lambda p: f"{p:.1f}%" if p >= 3 else "",
        startangle=90,
        counterclock=False,
        pctdistance=0.72,
        wedgeprops={"linewidth": 1, "edgecolor": "white"},
        textprops={"fontsize": charts.TICK_SIZE, "color": charts.TEXT},
    )
    ax.set_aspect("equal")
    what_en, what_zh = (f"total {value_column}", f"{value_column}总量") if value_column else ("rows", "行数")
    charts.set_labels(ax, title or ctx.t(f"Share of {what_en} by {category}", f"各{category}的{what_zh}占比"))
    path = charts.save(fig, ctx.figure_path(f"pie_{charts.slug(category)}"))
    total = float(totals.sum())
    metrics: dict = {
        "n": int(len(frame)),
        "n_categories": len(totals),
        "n_slices": len(labels),
        "total": total,
        "largest_category": labels[0],
        "largest_share": float(shares.iloc[0] / total),
    }
    metrics.update({f"share.{lb}": float(v / total) for lb, v in zip(labels, shares)})
    many_en, many_zh = (
        (
            f"; with {len(totals)} categories a bar chart (plot_bar) compares them more accurately",
            f"；共有 {len(totals)} 个类别，用条形图（plot_bar）比较会更准确",
        )
        if len(totals) > 6
        else ("", "")
    )
    fold_en, fold_zh = (
        (f", the other {len(rest)} combined as Other", f"，其余 {len(rest)} 类合并为“其他”") if rest else ("", "")
    )
    caption = ctx.t(
        f"Pie chart of the share of {what_en} by {category} ({len(keep)} slices{fold_en}){many_en}.",
        f"各{category}的{what_zh}占比饼图（{len(keep)} 个扇区{fold_zh}）{many_zh}。",
    )
    insights = [
        ctx.t(
            f"{charts.short_label(labels[0])} is the largest share ({metrics['largest_share']:.1%}).",
            f"{charts.short_label(labels[0])} 占比最大（{metrics['largest_share']:.1%}）。",
        )
    ]
    limitations = [
        ctx.t(
            "Pies make similar shares hard to compare; exact shares are in the metrics.",
            "饼图难以比较相近的占比；精确占比见指标。",
        )
    ]
    if len(data) - len(frame):
        limitations.append(
            ctx.t(
                f"{len(data) - len(frame):,} rows with a missing value are not counted.",
                f"有 {len(data) - len(frame):,} 行缺失，未计入。",
            )
        )
    table = pd.DataFrame({category: labels, "value": shares.to_numpy(), "share": shares.to_numpy() / total})
    return chart_result(ctx, path, caption, insights, limitations, metrics, "pie chart", int(len(frame)), table)


def plot_heatmap(
    data: pd.DataFrame,
    columns: list[str] | None = None,
    x_column: str | None = None,
    y_column: str | None = None,
    value_column: str | None = None,
    agg: Literal["mean", "sum", "median", "count"] = "mean",
    method: Literal["pearson", "spearman"] = "pearson",
    top: int = 15,
    title: str | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Draw an annotated heatmap: either the correlation matrix of numeric columns, or a value (or row count) for every combination of two categorical columns.

    Args:
        columns: Numeric columns for a correlation heatmap; omit (with no x_column/y_column) to use every numeric column (at most 15).
        x_column: For a two-way heatmap: the categorical column across the top (the `top` most frequent values, the rest as Other).
        y_column: For a two-way heatmap: the categorical column down the side.
        value_column: For a two-way heatmap: the numeric column aggregated per cell; omit to count rows.
        agg: For a two-way heatmap: mean, sum, median or count per cell.
        method: For a correlation heatmap: pearson (linear) or spearman (rank, robust to outliers).
        top: Largest number of categories per axis (2-30).
        title: Chart title; a descriptive one is made when omitted.
    """
    ctx = ctx or ToolContext()
    data = charts.unique_index(data)
    if (x_column is None) != (y_column is None):
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                "A two-way heatmap needs both x_column and y_column.", "二维热力图需要同时给出 x_column 和 y_column。"
            ),
            hint=ctx.t("Or pass columns=[...] for a correlation heatmap.", "或用 columns=[...] 绘制相关系数热力图。"),
        )
    top = max(2, min(int(top), 30))
    if x_column:
        matrix, n, what_en, what_zh = _pivot_matrix(data, x_column, y_column, value_column, agg, top, ctx)
    else:
        matrix, n, what_en, what_zh = _corr_matrix(data, columns, method, ctx)
    corr = x_column is None
    size = (min(4.0 + 0.55 * matrix.shape[1], 13.0), min(3.0 + 0.45 * matrix.shape[0], 12.0))
    fig, ax = charts.new_figure(size)
    charts.set_grid(ax, "none")
    values = matrix.to_numpy(dtype=float)
    image = ax.imshow(
        values, cmap="RdBu_r" if corr else "Blues", vmin=-1 if corr else None, vmax=1 if corr else None, aspect="auto"
    )
    fig.colorbar(image, ax=ax, shrink=0.8)
    ax.set_xticks(
        range(matrix.shape[1]), [charts.wrap_label(c, 12, 2) for c in matrix.columns], rotation=30, ha="right"
    )
    ax.set_yticks(range(matrix.shape[0]), [charts.wrap_label(r, 18, 2) for r in matrix.index])
    if values.size <= MAX_ANNOTATED_CELLS:
        finite = values[np.isfinite(values)]
        mid = (np.nanmax(finite) + np.nanmin(finite)) / 2 if finite.size else 0
        for (i, j), v in np.ndenumerate(values):
            if np.isfinite(v):
                dark = abs(v) > 0.5 if corr else v > mid
                ax.text(
                    j,
                    i,
                    f"{v:.2f}" if corr else charts.fmt_num(v),
                    ha="center",
                    va="center",
                    fontsize=charts.ANNOT_SIZE if values.size <= 100 else 7,
                    color="white" if dark else charts.TEXT,
                )
    charts.set_labels(
        ax, title or ctx.t(what_en.capitalize(), what_zh), None if corr else x_column, None if corr else y_column
    )
    path = charts.save(fig, ctx.figure_path("heatmap_" + charts.slug("_".join(map(str, matrix.columns[:3])))))
    return _heatmap_result(ctx, path, matrix, n, corr, what_en, what_zh, method)


def _corr_matrix(data: pd.DataFrame, columns: list[str] | None, method: str, ctx: ToolContext):
    chosen = list(dict.fromkeys(columns)) if columns else [c for c in data.columns if charts.is_numeric(data[c])][:15]
    numeric = pd.DataFrame(
        {c: require_numeric_column(data, c, ctx, "plot_heatmap with x_column/y_column") for c in chosen}
    )
    numeric = numeric.loc[:, numeric.std() > 0] if len(numeric) else numeric
    if numeric.shape[1] < 2 or numeric.dropna().shape[0] < 3:
        raise ToolError(
            "insufficient_data",
            ctx.t(
                "A correlation heatmap needs at least two numeric, non-constant columns with 3+ complete rows.",
                "相关系数热力图至少需要两个非常量数值列，且至少 3 行完整数据。",
            ),
            hint=ctx.t(
                "Pass other columns, or use x_column/y_column for categories.",
                "请换其他列，或对类别列使用 x_column/y_column。",
            ),
        )
    return (
        numeric.corr(method=method),
        int(numeric.dropna().shape[0]),
        f"{method.capitalize()} correlation between {numeric.shape[1]} columns",
        f"{numeric.shape[1]} 个数值列之间的{'Pearson' if method == 'pearson' else 'Spearman'}相关系数",
    )


def _pivot_matrix(data, x_column, y_column, value_column, agg, top, ctx):
    values = (
        require_numeric_column(data, value_column, ctx, "plot_heatmap without value_column (counts)")
        if value_column and agg != "count"
        else pd.Series(1.0, index=data.index)
    )
    frame = pd.DataFrame({"x": data[x_column], "y": data[y_column]}).loc[values.index].assign(v=values).dropna()
    if frame.empty:
        raise no_data_error(f"{x_column}, {y_column}", ctx)
    for axis in ("x", "y"):
        keep, rest = charts.top_categories(frame[axis].value_counts(), top)
        frame[axis] = charts.fold_categories(frame[axis], keep, charts.other_label(len(rest), ctx.zh), ctx.zh)
    func = "size" if agg == "count" or not value_column else agg
    matrix = frame.groupby(["y", "x"], observed=True)["v"].agg(func).unstack("x").astype(float)
    matrix = matrix.loc[frame["y"].value_counts().index, frame["x"].value_counts().index]
    agg_en, agg_zh = _AGG["count" if func == "size" else agg]
    what_en = (
        f"{agg_en.lower()} of {value_column} by {y_column} and {x_column}"
        if func != "size"
        else f"row count by {y_column} and {x_column}"
    )
    what_zh = (
        f"按{y_column}和{x_column}的{value_column}{agg_zh}" if func != "size" else f"按{y_column}和{x_column}的行数"
    )
    return matrix, int(len(frame)), what_en, what_zh


def _heatmap_result(ctx, path, matrix, n, corr, what_en, what_zh, method) -> ToolResult:
    metrics: dict = {"n": n, "n_rows": int(matrix.shape[0]), "n_columns": int(matrix.shape[1])}
    insights = []
    if corr:
        pairs = matrix.where(np.triu(np.ones(matrix.shape, dtype=bool), 1)).stack().dropna()
        (a, b), r = pairs.abs().idxmax(), float(pairs.loc[pairs.abs().idxmax()])
        metrics.update(strongest_pair=f"{a} ~ {b}", strongest_r=r, method=method)
        for (i, j), v in list(pairs.items())[:50]:
            metrics[f"r.{i}.{j}"] = float(v)
        insights.append(
            ctx.t(
                f"The strongest relationship is between {a} and {b} (r = {r:.2f}); correlation is not causation.",
                f"关系最强的是 {a} 与 {b}（r = {r:.2f}）；相关不代表因果。",
            )
        )
        caption = ctx.t(
            f"Heatmap of the {what_en} ({n:,} complete rows); red is positive, blue negative.",
            f"{what_zh}的热力图（{n:,} 行完整数据），红色为正相关、蓝色为负相关。",
        )
    else:
        stacked = matrix.stack().dropna()
        (yi, xi) = stacked.idxmax()
        metrics.update(max_cell=f"{yi} | {xi}", max_value=float(stacked.max()), min_value=float(stacked.min()))
        insights.append(
            ctx.t(
                f"The highest cell is {yi} × {xi} ({charts.fmt_num(stacked.max())}).",
                f"最高的单元格是 {yi} × {xi}（{charts.fmt_num(stacked.max())}）。",
            )
        )
        caption = ctx.t(
            f"Heatmap of the {what_en} ({n:,} rows); darker cells are higher.",
            f"{what_zh}热力图（{n:,} 行），颜色越深数值越高。",
        )
    return chart_result(ctx, path, caption, insights, [], metrics, "heatmap", n, matrix.reset_index())
