"""Time-series tools (group `timeseries`): trend with change points and seasonal decomposition here;
`forecast` in `timeseries_forecast`; period comparison and contribution in `timeseries_business`;
cohorts and funnels in `timeseries_customers`. This module is the registry's entry point."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats as sps

from .base import ToolContext, ToolResult, tagged_text
from .common import clean_metrics, dropped_note, fmt_num, fmt_p
from .timeseries_business import compare_periods, contribution_decomposition
from .timeseries_customers import cohort_retention, funnel_analysis
from .timeseries_forecast import forecast
from .ts_common import FREQ_WORDS, SEASON, check_varies, line_chart, period_label, regular_series

Freq = Literal["auto", "D", "W", "M", "Q", "Y"]
Agg = Literal["sum", "mean", "median", "count", "min", "max", "last"]
_MK_EXACT_MAX = 5000  # above this many periods Kendall's tau (O(n log n)) replaces the pairwise S


# ---------------------------------------------------------------- trend


def mann_kendall(y: np.ndarray) -> dict[str, float]:
    """Mann-Kendall trend test: S, tie-corrected variance, continuity-corrected z, two-sided p, tau."""
    n = len(y)
    if n > _MK_EXACT_MAX:
        tau, p = sps.kendalltau(np.arange(n), y)
        return {
            "s": float("nan"),
            "z": float(sps.norm.isf(p / 2) * np.sign(tau)),
            "p_value": float(p),
            "tau": float(tau),
        }
    s = 0.0
    for i in range(0, n - 1, 512):  # chunks keep the pairwise matrix small
        block = y[i : i + 512, None]
        diff = np.sign(y[None, :] - block)
        mask = np.arange(n)[None, :] > np.arange(i, min(i + 512, n - 1))[:, None]
        s += float(np.sum(diff[: mask.shape[0]] * mask))
    _, counts = np.unique(y, return_counts=True)
    var = (n * (n - 1) * (2 * n + 5) - np.sum(counts * (counts - 1) * (2 * counts + 5))) / 18
    z = 0.0 if s == 0 or var <= 0 else (s - np.sign(s)) / math.sqrt(var)
    return {"s": s, "z": float(z), "p_value": float(2 * sps.norm.sf(abs(z))), "tau": s / (n * (n - 1) / 2)}


def change_points(y: np.ndarray, max_points: int = 3) -> list[int]:
    """Binary segmentation on the mean with a BIC-type penalty 2·σ²·log n, where σ comes from the median
    absolute difference of neighbours (unaffected by the level shifts being looked for). Returns the
    first index of each new segment."""
    n = len(y)
    min_size = max(3, n // 10)
    sigma = float(np.median(np.abs(np.diff(y))) / (0.6745 * math.sqrt(2)))
    if sigma <= 0:
        sigma = float(np.std(y)) or 1.0
    penalty = 2 * sigma**2 * math.log(n)
    found: list[tuple[float, int]] = []
    stack = [(0, n)]
    while stack:
        a, b = stack.pop()
        if b - a < 2 * min_size:
            continue
        seg = y[a:b]
        csum, total, m = np.cumsum(seg), seg.sum(), b - a
        k = np.arange(min_size, m - min_size + 1)
        left = csum[k - 1]
        # reduction in the sum of squares from splitting at k: k(m-k)/m · (mean_left - mean_right)²
        gain = k * (m - k) / m * (left / k - (total - left) / (m - k)) ** 2
        best = int(np.argmax(gain))
        if gain[best] > penalty:
            cut = a + int(k[best])
            found.append((float(gain[best]), cut))
            stack += [(a, cut), (cut, b)]
    return sorted(c for _, c in sorted(found, reverse=True)[:max_points])


def time_series_trend(
    data: pd.DataFrame,
    date_column: str,
    value_column: str,
    freq: Freq = "auto",
    agg: Agg = "sum",
    alpha: float = 0.05,
    plot: bool = True,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Is a value going up or down over time? Mann-Kendall trend test with Sen's slope (change per period and % per period) and the dates where the level shifted (change points).

    Args:
        date_column: The date column.
        value_column: The numeric column (e.g. revenue).
        freq: Period length: D day, W week, M month, Q quarter, Y year; auto uses the data's own spacing.
        agg: How rows in one period are combined (sum for totals like revenue, mean for levels like price).
        alpha: Significance level, usually 0.05.
        plot: Also draw the series with its trend line and change points.
    """
    ctx = ctx or ToolContext()
    ts = regular_series(data, date_column, value_column, freq, agg, ctx, minimum=6)
    y = ts.values.to_numpy()
    check_varies(ts.values, value_column, ctx)
    n = len(y)
    mk = mann_kendall(y)
    x = np.arange(n, dtype=float)
    slope, intercept, lo, hi = sps.theilslopes(y, x, alpha=1 - 0.95) if n <= _MK_EXACT_MAX else _sen_sampled(y)
    positive = bool(np.all(y > 0))
    pct_per = (
        (math.expm1(sps.theilslopes(np.log(y), x)[0]) * 100)
        if positive and n <= _MK_EXACT_MAX
        else slope / abs(np.mean(y)) * 100
    )
    unit = FREQ_WORDS[ts.freq]
    direction = (
        "increasing"
        if mk["p_value"] < alpha and mk["z"] > 0
        else "decreasing"
        if mk["p_value"] < alpha and mk["z"] < 0
        else "no trend"
    )
    cps = change_points(y)
    metrics: dict = {
        "n_periods": n,
        "n_rows": ts.rows,
        "freq": ts.freq,
        "statistic": mk["z"],
        "mk_s": mk["s"],
        "p_value": mk["p_value"],
        "tau": mk["tau"],
        "effect_size": mk["tau"],
        "effect_size_name": "kendall_tau",
        "sen_slope": slope,
        "sen_slope_ci_low": lo,
        "sen_slope_ci_high": hi,
        "percent_per_period": pct_per,
        "trend": direction,
        "first_period": ts.labels[0],
        "last_period": ts.labels[-1],
        "start_fitted": intercept,
        "end_fitted": intercept + slope * (n - 1),
        "n_change_points": len(cps),
        "alpha": alpha,
        "agg": agg,
    }
    bounds = [0] + cps + [n]
    cp_lines = []
    for i, c in enumerate(cps, 1):
        before, after = float(np.mean(y[bounds[i - 1] : c])), float(np.mean(y[c : bounds[i + 1]]))
        metrics.update({f"change_point.{i}": ts.labels[c], f"level_before.{i}": before, f"level_after.{i}": after})
        cp_lines.append(
            ctx.t(
                f"Around {ts.labels[c]} the average level moved from {fmt_num(before)} to {fmt_num(after)} "
                f"({(after - before) / abs(before) * 100 if before else 0:+.0f}%).",
                f"大约在 {ts.labels[c]}，平均水平从 {fmt_num(before)} 变为 {fmt_num(after)}"
                f"（{(after - before) / abs(before) * 100 if before else 0:+.0f}%）。",
            )
        )
    result = _trend_result(metrics, cp_lines, ts, value_column, unit, alpha, ctx)
    if plot:
        fitted = pd.Series(intercept + slope * x, index=ts.values.index)
        path = line_chart(
            ctx,
            "trend",
            ts.values,
            ctx.t(f"{value_column} per {unit[0]} with its trend", f"每{unit[1]}{value_column}及趋势"),
            value_column,
            fitted=fitted,
            fitted_label=ctx.t("Sen trend line", "Sen 趋势线"),
            marks=[ts.values.index[c] for c in cps],
        )
        result.figures.append(path)
        result.captions.append(
            ctx.t(
                f"{value_column} per {unit[0]} ({ts.labels[0]} to {ts.labels[-1]}) with the Sen trend line; "
                "dotted lines mark level shifts.",
                f"每{unit[1]}{value_column}（{ts.labels[0]} 至 {ts.labels[-1]}）及 Sen 趋势线；点线为水平变化点。",
            )
        )
    return result


def _sen_sampled(y: np.ndarray) -> tuple[float, float, float, float]:
    """Sen's slope from a random million pairs (long series); no interval."""
    rng = np.random.default_rng(0)
    i, j = rng.integers(0, len(y), 1_000_000), rng.integers(0, len(y), 1_000_000)
    ok = i != j
    slopes = (y[j[ok]] - y[i[ok]]) / (j[ok] - i[ok])
    slope = float(np.median(slopes))
    return slope, float(np.median(y - slope * np.arange(len(y)))), float("nan"), float("nan")


def _trend_result(
    m: dict, cp_lines: list[str], ts, value_column: str, unit: tuple[str, str], alpha: float, ctx: ToolContext
) -> ToolResult:
    p, slope, pct_per = m["p_value"], m["sen_slope"], m["percent_per_period"]
    if m["trend"] == "no trend":
        reading = ctx.t(
            f"{value_column} shows no clear upward or downward trend from {m['first_period']} to {m['last_period']} "
            f"(change like this could easily be chance, {fmt_p(p)}).",
            f"从 {m['first_period']} 到 {m['last_period']}，{value_column} 没有明显的上升或下降趋势（这种变化可能只是偶然，{fmt_p(p)}）。",
        )
    else:
        up = m["trend"] == "increasing"
        reading = ctx.t(
            f"{value_column} {'rose' if up else 'fell'} about {abs(pct_per):.1f}% per {unit[0]} "
            f"({'+' if slope > 0 else ''}{fmt_num(slope)} per {unit[0]}) from {m['first_period']} to {m['last_period']}; "
            f"a trend this steady would rarely happen by chance ({fmt_p(p)}).",
            f"从 {m['first_period']} 到 {m['last_period']}，{value_column} 每{unit[1]}{'上升' if up else '下降'}约 {abs(pct_per):.1f}%"
            f"（每{unit[1]} {'+' if slope > 0 else ''}{fmt_num(slope)}）；如此稳定的趋势很少是偶然造成的（{fmt_p(p)}）。",
        )
    interpretation = reading + (" " + cp_lines[0] if cp_lines else "")
    profile = ctx.t(
        f"{m['n_periods']} {unit[0]}s ({m['first_period']} to {m['last_period']}), {m['agg']} of {value_column} per {unit[0]}.",
        f"{m['n_periods']} 个{unit[1]}（{m['first_period']} 至 {m['last_period']}），每{unit[1]}{value_column}的 {m['agg']}。",
    )
    if ts.dropped:
        profile += " " + dropped_note(ts.dropped, ctx)
    method = ctx.t(
        "Mann-Kendall trend test (tie-corrected variance, continuity correction) with Sen's slope (median of pairwise "
        "slopes, 95% CI); % per period from Sen's slope of the log values; change points by binary segmentation on the mean "
        "(BIC-type penalty, at most 3).",
        "Mann-Kendall 趋势检验（结校正方差、连续性校正）与 Sen 斜率（两两斜率的中位数，95% 置信区间）；"
        "每期百分比来自对数值的 Sen 斜率；变化点用均值二分分割法（BIC 型惩罚，最多 3 个）。",
    )
    assumptions = list(ts.notes) + [
        ctx.t(
            "Mann-Kendall needs no normality, but assumes periods are independent; strong seasonality or "
            "autocorrelation makes p too small.",
            "Mann-Kendall 不要求正态，但假设各期独立；强季节性或自相关会使 p 值偏小。",
        )
    ]
    conclusion = ctx.t(
        f"Mann-Kendall z = {fmt_num(m['statistic'], 4)}, tau = {fmt_num(m['tau'], 3)}, {fmt_p(p)}; Sen's slope "
        f"{fmt_num(slope)} per {unit[0]} (95% CI {fmt_num(m['sen_slope_ci_low'])} to {fmt_num(m['sen_slope_ci_high'])}).",
        f"Mann-Kendall z = {fmt_num(m['statistic'], 4)}，tau = {fmt_num(m['tau'], 3)}，{fmt_p(p)}；Sen 斜率每{unit[1]} "
        f"{fmt_num(slope)}（95% 置信区间 {fmt_num(m['sen_slope_ci_low'])} 至 {fmt_num(m['sen_slope_ci_high'])}）。",
    )
    text = tagged_text(
        data_profile=profile,
        method=method,
        assumptions=assumptions,
        insights=[reading] + cp_lines,
        conclusion=conclusion,
        interpretation=interpretation,
    )
    table = pd.DataFrame({"period": ts.labels, value_column: ts.values.to_numpy()})
    return ToolResult(
        metrics=clean_metrics(m),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=m["n_periods"],
        table=table,
        limitations=[
            ctx.t(
                "A trend describes the past; it does not say why or promise it continues.",
                "趋势描述的是过去，不说明原因，也不保证会持续。",
            )
        ],
    )


# ---------------------------------------------------------------- seasonal decomposition


def seasonal_decompose(
    data: pd.DataFrame,
    date_column: str,
    value_column: str,
    freq: Freq = "auto",
    agg: Agg = "sum",
    period: int | None = None,
    model: Literal["auto", "additive", "multiplicative"] = "auto",
    plot: bool = True,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Split a time series into trend, seasonal pattern and remainder (STL), with the strength of seasonality and the peak and low seasons.

    Args:
        date_column: The date column.
        value_column: The numeric column (e.g. sales).
        freq: Period length: D, W, M, Q or Y; auto uses the data's own spacing.
        agg: How rows in one period are combined (sum or mean ...).
        period: Length of the seasonal cycle in periods (default: 7 for days, 52 weeks, 12 months, 4 quarters).
        model: additive (seasonal swings of constant size), multiplicative (swings grow with the level; needs positive values) or auto.
        plot: Also draw the four components.
    """
    from .timeseries_seasonal import decompose

    ctx = ctx or ToolContext()
    return decompose(data, date_column, value_column, freq, agg, period, model, plot, ctx)


__all__ = [
    "change_points",
    "cohort_retention",
    "compare_periods",
    "contribution_decomposition",
    "forecast",
    "funnel_analysis",
    "mann_kendall",
    "period_label",
    "seasonal_decompose",
    "SEASON",
    "time_series_trend",
]
