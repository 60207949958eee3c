"""More plot tools (group `plot`): line, box, heatmap and pie charts, drawn with the shared machinery
in `charts.py` (no pyplot, Latin + CJK fonts, top-N + Other folding) and returned via
`plot_common.chart_result` with a one-sentence caption in the user's language."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from matplotlib import dates as mdates

from . import charts
from .base import ToolContext, ToolError, ToolResult
from .common import column_kind
from .data_transform import parse_dates
from .plot_common import chart_result, folded_groups_note, no_data_error, require_numeric_column

MAX_TIME_POINTS = 1000
_label = charts.category_label
MAX_ANNOTATED_CELLS = 400
_AGG = {"sum": ("Total", "总和"), "mean": ("Mean", "平均"), "median": ("Median", "中位数"), "count": ("Count", "数量"),
        "min": ("Minimum", "最小值"), "max": ("Maximum", "最大值")}
_FREQ = {"day": ("D", "day", "日"), "week": ("W", "week", "周"), "month": ("M", "month", "月"),
         "quarter": ("Q", "quarter", "季度"), "year": ("Y", "year", "年")}


# ----------------------------------------------------------------------------- line

def plot_line(data: pd.DataFrame, x_column: str, y_column: str, group_column: str | None = None,
              agg: Literal["sum", "mean", "median", "count", "min", "max"] = "sum",
              freq: Literal["auto", "none", "day", "week", "month", "quarter", "year"] = "auto", top: int = 6,
              title: str | None = None, ctx: ToolContext | None = None) -> ToolResult:
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
    x = parse_dates(x_raw) if is_time else (x_raw if charts.is_numeric(x_raw) else x_raw.map(lambda v: charts.category_label(v, ctx.zh), na_action="ignore"))
    frame = pd.DataFrame({"x": x.loc[y.index], "y": y}).dropna()
    if frame.empty:
        raise no_data_error(f"{x_column}, {y_column}", ctx)
    unit = None
    if is_time:
        frame["x"], unit = _bucket_dates(frame["x"], freq)
    order = list(pd.unique(frame["x"])) if not (is_time or charts.is_numeric(frame["x"])) else None
    n_folded, lines = 0, {}
    if group_column:
        labels, names, n_folded = charts.group_labels(data, group_column, frame.index, max(1, min(int(top), 10)), ctx.zh)
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
        ax.plot(xs, s.to_numpy(), color=color, linewidth=1.8, marker="o" if len(s) <= 60 else None, markersize=3.5,
                label=charts.wrap_label(name, 24, 1))
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
    charts.set_labels(ax, title or ctx.t(f"{y_label} over {x_column}", f"{y_column}{agg_zh}随{x_column}的变化"), x_column, y_label)
    path = charts.save(fig, ctx.figure_path(f"line_{charts.slug(x_column)}_{charts.slug(y_column)}"))
    return _line_result(ctx, path, lines, frame, x_column, y_column, group_column, agg, unit, n_folded, len(data))


def _bucket_dates(dates: pd.Series, freq: str) -> tuple[pd.Series, str | None]:
    if freq == "auto":
        if dates.nunique() <= MAX_TIME_POINTS:
            return dates, None
        span_days = (dates.max() - dates.min()).days + 1
        freq = next((f for f, days in (("day", 1), ("week", 7), ("month", 31), ("quarter", 92)) if span_days / days <= MAX_TIME_POINTS), "year")
    if freq == "none":
        return dates, None
    code = _FREQ[freq][0]
    return dates.dt.to_period(code).dt.start_time, freq


def _series(frame: pd.DataFrame, agg: str, order: list | None) -> pd.Series:
    s = frame.groupby("x", sort=order is None)["y"].agg("size" if agg == "count" else agg).astype(float)
    return s.reindex([v for v in order if v in s.index]) if order is not None else s


def _line_result(ctx, path, lines, frame, x_column, y_column, group_column, agg, unit, n_folded, n_total) -> ToolResult:
    first_line = next(iter(lines.values()))
    all_x = sorted({v for s in lines.values() for v in s.index}, key=lambda v: (str(type(v)), v)) if len(lines) > 1 else list(first_line.index)
    agg_en, agg_zh = _AGG[agg]
    per_en, per_zh = (f" per {unit}", f"（按{_FREQ[unit][2]}）") if unit else ("", "")
    group_en, group_zh = (f", one line per {group_column} ({len(lines)} shown)", f"，每个{group_column}一条线（显示 {len(lines)} 条）") \
        if group_column else ("", "")
    caption = ctx.t(f"Line chart of the {agg_en.lower()} {y_column}{per_en} over {x_column} from {_label(all_x[0])} to "
                    f"{_label(all_x[-1])} ({len(all_x)} points){group_en}.",
                    f"{y_column}{agg_zh}{per_zh}随{x_column}变化的折线图，从 {_label(all_x[0])} 到 {_label(all_x[-1])}"
                    f"（{len(all_x)} 个点）{group_zh}。")
    metrics: dict = {"n": int(len(frame)), "n_points": len(all_x), "agg": agg, "n_lines": len(lines)}
    insights, limitations, s = [], [], first_line
    if len(s):
        start, end = float(s.iloc[0]), float(s.iloc[-1])
        peak, low = s.idxmax(), s.idxmin()
        metrics.update(first_x=_label(s.index[0]), last_x=_label(s.index[-1]), first_value=start, last_value=end,
                       change=end - start, max_x=_label(peak), max_value=float(s.max()), min_x=_label(low), min_value=float(s.min()))
        if start:
            metrics["pct_change"] = (end - start) / abs(start) * 100
        name = next(iter(lines))
        change = f" ({metrics['pct_change']:+.1f}%)" if "pct_change" in metrics else ""
        insights.append(ctx.t(f"{charts.short_label(name)}: from {charts.fmt_num(start)} at {metrics['first_x']} to {charts.fmt_num(end)} at {metrics['last_x']}{change}; "
                              f"highest {charts.fmt_num(s.max())} at {metrics['max_x']}, lowest {charts.fmt_num(s.min())} at {metrics['min_x']}.",
                              f"{charts.short_label(name)}：从 {metrics['first_x']} 的 {charts.fmt_num(start)} 到 {metrics['last_x']} 的 {charts.fmt_num(end)}{change}；"
                              f"最高 {charts.fmt_num(s.max())}（{metrics['max_x']}），最低 {charts.fmt_num(s.min())}（{metrics['min_x']}）。"))
    if unit and len(s) >= 2:
        limitations.append(ctx.t(f"The first and last {unit} may be partial, which makes them look lower for sums and counts.",
                                 f"第一个和最后一个{_FREQ[unit][2]}可能不完整，求和或计数时会显得偏低。"))
    if n_folded:
        limitations.append(folded_groups_note(n_folded, ctx))
    dropped = n_total - int(len(frame))
    if dropped:
        limitations.append(ctx.t(f"{dropped:,} rows with a missing {x_column}, {y_column}{' or ' + group_column if group_column else ''} are not shown.",
                                 f"有 {dropped:,} 行的 {x_column}、{y_column}{'或' + group_column if group_column else ''} 缺失，未绘制。"))
    limitations.append(ctx.t("A trend in a chart is not a test; use time_series_trend to check it.", "图中的趋势不等于检验；请用 time_series_trend 检验。"))
    return chart_result(ctx, path, caption, insights, limitations, metrics, f"line chart ({agg})", int(len(frame)))


# ----------------------------------------------------------------------------- box

def plot_box(data: pd.DataFrame, value_column: str, group_column: str | None = None, top: int = 10,
             show_outliers: bool = True, title: str | None = None, ctx: ToolContext | None = None) -> ToolResult:
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
        labels, names, n_folded = charts.group_labels(data, group_column, values.index, max(1, min(int(top), 30)), ctx.zh)
        if labels.empty:
            raise no_data_error(group_column, ctx)
        groups = {name: values.loc[labels.index[labels == name]].to_numpy() for name in names}
    else:
        groups = {value_column: values.to_numpy()}
    stats = {name: _box_stats(v, name) for name, v in groups.items() if len(v)}
    other = charts.other_label(n_folded, ctx.zh) if n_folded else None
    order = sorted((k for k in stats if k != other), key=lambda k: -stats[k]["med"]) + ([other] if other in stats else [])
    boxes = [stats[k] for k in order]
    horizontal = len(boxes) > 8 or max(charts.text_width(k) for k in order) > 12
    fig, ax = charts.new_figure((8.0, min(max(3.0, 0.4 * len(boxes) + 1.6), 12.0)) if horizontal else charts.FIG_SIZE)
    for box in boxes:
        box["label"] = charts.wrap_label(box["label"], 22 if horizontal else 12, 2)
        box["fliers"] = box["fliers"][:200]
    artists = ax.bxp(boxes, showfliers=show_outliers, patch_artist=True, orientation="horizontal" if horizontal else "vertical",
                     widths=0.6, medianprops={"color": charts.ACCENT_DARK, "linewidth": 1.8},
                     flierprops={"marker": "o", "markersize": 3, "alpha": 0.5, "markeredgecolor": charts.MUTED})
    for patch, name in zip(artists["boxes"], order):
        patch.set_facecolor(charts.MUTED if name == other else charts.ACCENT)
        patch.set_alpha(0.45)
    if horizontal:
        charts.set_grid(ax, "x")
        ax.invert_yaxis()
    axis_en = ctx.t(f"{value_column} by {group_column}", f"按{group_column}分组的{value_column}") if group_column else value_column
    charts.set_labels(ax, title or ctx.t(f"Spread of {axis_en}", f"{axis_en}的分布"),
                      value_column if horizontal else (group_column or ""), None if horizontal else value_column)
    path = charts.save(fig, ctx.figure_path(f"box_{charts.slug(value_column)}"))
    return _box_result(ctx, path, stats, order, values, value_column, group_column, n_folded, len(data))


def _box_stats(v: np.ndarray, name: str) -> dict:
    q1, med, q3 = np.percentile(v, [25, 50, 75])
    iqr = q3 - q1
    inside = v[(v >= q1 - 1.5 * iqr) & (v <= q3 + 1.5 * iqr)]
    fliers = v[(v < q1 - 1.5 * iqr) | (v > q3 + 1.5 * iqr)]
    return {"label": name, "q1": q1, "med": med, "q3": q3, "whislo": inside.min(), "whishi": inside.max(),
            "fliers": fliers, "mean": float(v.mean()), "n": len(v), "n_fliers": len(fliers)}


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
        insights.append(ctx.t(f"{charts.short_label(hi)} has the highest median ({charts.fmt_num(stats[hi]['med'])}) and {charts.short_label(lo)} the lowest ({charts.fmt_num(stats[lo]['med'])}).",
                              f"{charts.short_label(hi)} 的中位数最高（{charts.fmt_num(stats[hi]['med'])}），{charts.short_label(lo)} 最低（{charts.fmt_num(stats[lo]['med'])}）。"))
        caption = ctx.t(f"Box plot of {value_column} for {len(order)} {group_column} groups ordered by median; each box spans the middle half of the values and its line marks the median.",
                        f"按{group_column}分组（{len(order)} 组，按中位数排序）的{value_column}箱线图，箱体覆盖中间一半的数据，箱中的线为中位数。")
    else:
        s = stats[order[0]]
        metrics.update(q1=float(s["q1"]), q3=float(s["q3"]))
        insights.append(ctx.t(f"Half of the values lie between {charts.fmt_num(s['q1'])} and {charts.fmt_num(s['q3'])}; the median is {charts.fmt_num(s['med'])}.",
                              f"一半的值位于 {charts.fmt_num(s['q1'])} 到 {charts.fmt_num(s['q3'])} 之间；中位数为 {charts.fmt_num(s['med'])}。"))
        caption = ctx.t(f"Box plot of {value_column} for {n:,} values; the box spans the middle half of the values and its line marks the median.",
                        f"{value_column}的箱线图（{n:,} 个值），箱体覆盖中间一半的数据，箱中的线为中位数。")
    if n_out:
        insights.append(ctx.t(f"{n_out:,} values lie beyond 1.5 × IQR from their box (possible outliers).",
                              f"有 {n_out:,} 个值超出箱体 1.5 倍四分位距（可能是异常值）。"))
    limitations = [folded_groups_note(n_folded, ctx)] if n_folded else []
    if n_total - n:
        limitations.append(ctx.t(f"{n_total - n:,} rows with a missing value or group are not shown.", f"有 {n_total - n:,} 行数值或分组缺失，未绘制。"))
    return chart_result(ctx, path, caption, insights, limitations, metrics, "box plot", n)


# ----------------------------------------------------------------------------- heatmap

def plot_heatmap(data: pd.DataFrame, columns: list[str] | None = None, x_column: str | None = None,
                 y_column: str | None = None, value_column: str | None = None,
                 agg: Literal["mean", "sum", "median", "count"] = "mean", method: Literal["pearson", "spearman"] = "pearson",
                 top: int = 15, title: str | None = None, ctx: ToolContext | None = None) -> ToolResult:
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
        raise ToolError("invalid_arguments", ctx.t("A two-way heatmap needs both x_column and y_column.", "二维热力图需要同时给出 x_column 和 y_column。"),
                        hint=ctx.t("Or pass columns=[...] for a correlation heatmap.", "或用 columns=[...] 绘制相关系数热力图。"))
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
    image = ax.imshow(values, cmap="RdBu_r" if corr else "Blues", vmin=-1 if corr else None, vmax=1 if corr else None, aspect="auto")
    fig.colorbar(image, ax=ax, shrink=0.8)
    ax.set_xticks(range(matrix.shape[1]), [charts.wrap_label(c, 12, 2) for c in matrix.columns], rotation=30, ha="right")
    ax.set_yticks(range(matrix.shape[0]), [charts.wrap_label(r, 18, 2) for r in matrix.index])
    if values.size <= MAX_ANNOTATED_CELLS:
        finite = values[np.isfinite(values)]
        mid = (np.nanmax(finite) + np.nanmin(finite)) / 2 if finite.size else 0
        for (i, j), v in np.ndenumerate(values):
            if np.isfinite(v):
                dark = abs(v) > 0.5 if corr else v > mid
                ax.text(j, i, f"{v:.2f}" if corr else charts.fmt_num(v), ha="center", va="center",
                        fontsize=charts.ANNOT_SIZE if values.size <= 100 else 7, color="white" if dark else charts.TEXT)
    charts.set_labels(ax, title or ctx.t(what_en.capitalize(), what_zh), None if corr else x_column, None if corr else y_column)
    path = charts.save(fig, ctx.figure_path("heatmap_" + charts.slug("_".join(map(str, matrix.columns[:3])))))
    return _heatmap_result(ctx, path, matrix, n, corr, what_en, what_zh, method)


def _corr_matrix(data: pd.DataFrame, columns: list[str] | None, method: str, ctx: ToolContext):
    chosen = list(dict.fromkeys(columns)) if columns else [c for c in data.columns if charts.is_numeric(data[c])][:15]
    numeric = pd.DataFrame({c: require_numeric_column(data, c, ctx, "plot_heatmap with x_column/y_column") for c in chosen})
    numeric = numeric.loc[:, numeric.std() > 0] if len(numeric) else numeric
    if numeric.shape[1] < 2 or numeric.dropna().shape[0] < 3:
        raise ToolError("insufficient_data", ctx.t("A correlation heatmap needs at least two numeric, non-constant columns with 3+ complete rows.",
                                                   "相关系数热力图至少需要两个非常量数值列，且至少 3 行完整数据。"),
                        hint=ctx.t("Pass other columns, or use x_column/y_column for categories.", "请换其他列，或对类别列使用 x_column/y_column。"))
    return (numeric.corr(method=method), int(numeric.dropna().shape[0]), f"{method.capitalize()} correlation between {numeric.shape[1]} columns",
            f"{numeric.shape[1]} 个数值列之间的{'Pearson' if method == 'pearson' else 'Spearman'}相关系数")


def _pivot_matrix(data, x_column, y_column, value_column, agg, top, ctx):
    values = require_numeric_column(data, value_column, ctx, "plot_heatmap without value_column (counts)") if value_column and agg != "count" \
        else pd.Series(1.0, index=data.index)
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
    what_en = f"{agg_en.lower()} of {value_column} by {y_column} and {x_column}" if func != "size" else f"row count by {y_column} and {x_column}"
    what_zh = f"按{y_column}和{x_column}的{value_column}{agg_zh}" if func != "size" else f"按{y_column}和{x_column}的行数"
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
        insights.append(ctx.t(f"The strongest relationship is between {a} and {b} (r = {r:.2f}); correlation is not causation.",
                              f"关系最强的是 {a} 与 {b}（r = {r:.2f}）；相关不代表因果。"))
        caption = ctx.t(f"Heatmap of the {what_en} ({n:,} complete rows); red is positive, blue negative.",
                        f"{what_zh}的热力图（{n:,} 行完整数据），红色为正相关、蓝色为负相关。")
    else:
        stacked = matrix.stack().dropna()
        (yi, xi) = stacked.idxmax()
        metrics.update(max_cell=f"{yi} | {xi}", max_value=float(stacked.max()), min_value=float(stacked.min()))
        insights.append(ctx.t(f"The highest cell is {yi} × {xi} ({charts.fmt_num(stacked.max())}).",
                              f"最高的单元格是 {yi} × {xi}（{charts.fmt_num(stacked.max())}）。"))
        caption = ctx.t(f"Heatmap of the {what_en} ({n:,} rows); darker cells are higher.", f"{what_zh}热力图（{n:,} 行），颜色越深数值越高。")
    return chart_result(ctx, path, caption, insights, [], metrics, "heatmap", n, matrix.reset_index())


# ----------------------------------------------------------------------------- pie

def plot_pie(data: pd.DataFrame, column: str | None = None, value_column: str | None = None,
             group_column: str | None = None, top: int = 6, title: str | None = None,
             ctx: ToolContext | None = None) -> ToolResult:
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
        raise ToolError("invalid_arguments", ctx.t("Say which column defines the slices (column or group_column).", "请指定切分扇区的列（column 或 group_column）。"),
                        hint='column="Region"  or  group_column="Region", value_column="Revenue"')
    weights = pd.Series(1.0, index=data.index)
    if value_column:
        weights = require_numeric_column(data, value_column, ctx, "plot_pie without value_column (row shares)")
        if (weights < 0).any():
            raise ToolError("invalid_values", ctx.t(f"{value_column!r} has negative values; a pie cannot show them.", f"{value_column!r} 含负数，饼图无法表示。"),
                            hint=ctx.t("Use plot_bar instead.", "请改用 plot_bar。"), column=value_column)
    frame = pd.DataFrame({"c": data[category].loc[weights.index], "w": weights}).dropna()
    totals = frame.groupby("c", observed=True)["w"].sum().sort_values(ascending=False)
    if frame.empty or totals.sum() <= 0:
        raise no_data_error(value_column or category, ctx)
    keep, rest = charts.top_categories(totals, max(2, min(int(top), 12)))
    shares = totals.loc[keep]
    labels = [charts.category_label(k, ctx.zh) for k in keep]
    if rest:
        shares = pd.concat([shares, pd.Series([totals.loc[rest].sum()])])
        labels.append(charts.other_label(len(rest), ctx.zh))
    fig, ax = charts.new_figure((7.5, 5.5))
    ax.pie(shares.to_numpy(), labels=[charts.wrap_label(lb, 16, 2) for lb in labels], colors=charts.palette(len(labels), muted_last=bool(rest)),
           autopct=lambda p: f"{p:.1f}%" if p >= 3 else "", startangle=90, counterclock=False, pctdistance=0.72,
           wedgeprops={"linewidth": 1, "edgecolor": "white"}, textprops={"fontsize": charts.TICK_SIZE, "color": charts.TEXT})
    ax.set_aspect("equal")
    what_en, what_zh = (f"total {value_column}", f"{value_column}总量") if value_column else ("rows", "行数")
    charts.set_labels(ax, title or ctx.t(f"Share of {what_en} by {category}", f"各{category}的{what_zh}占比"))
    path = charts.save(fig, ctx.figure_path(f"pie_{charts.slug(category)}"))
    total = float(totals.sum())
    metrics: dict = {"n": int(len(frame)), "n_categories": len(totals), "n_slices": len(labels), "total": total,
                     "largest_category": labels[0], "largest_share": float(shares.iloc[0] / total)}
    metrics.update({f"share.{lb}": float(v / total) for lb, v in zip(labels, shares)})
    many_en, many_zh = (f"; with {len(totals)} categories a bar chart (plot_bar) compares them more accurately",
                        f"；共有 {len(totals)} 个类别，用条形图（plot_bar）比较会更准确") if len(totals) > 6 else ("", "")
    fold_en, fold_zh = (f", the other {len(rest)} combined as Other", f"，其余 {len(rest)} 类合并为“其他”") if rest else ("", "")
    caption = ctx.t(f"Pie chart of the share of {what_en} by {category} ({len(keep)} slices{fold_en}){many_en}.",
                    f"各{category}的{what_zh}占比饼图（{len(keep)} 个扇区{fold_zh}）{many_zh}。")
    insights = [ctx.t(f"{charts.short_label(labels[0])} is the largest share ({metrics['largest_share']:.1%}).",
                      f"{charts.short_label(labels[0])} 占比最大（{metrics['largest_share']:.1%}）。")]
    limitations = [ctx.t("Pies make similar shares hard to compare; exact shares are in the metrics.", "饼图难以比较相近的占比；精确占比见指标。")]
    if len(data) - len(frame):
        limitations.append(ctx.t(f"{len(data) - len(frame):,} rows with a missing value are not counted.", f"有 {len(data) - len(frame):,} 行缺失，未计入。"))
    table = pd.DataFrame({category: labels, "value": shares.to_numpy(), "share": shares.to_numpy() / total})
    return chart_result(ctx, path, caption, insights, limitations, metrics, "pie chart", int(len(frame)), table)
