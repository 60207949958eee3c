"""Seasonal decomposition (STL): trend, seasonal pattern and remainder, the strength of each
(Hyndman's F measures) and the peak and low seasons in words."""

from __future__ import annotations

import calendar
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy import stats as sps

from . import charts
from .base import ToolContext, ToolError, ToolResult, tagged_text
from .common import clean_metrics, dropped_note, fmt_num
from .ts_common import FREQ_WORDS, SEASON, check_varies, regular_series

_WEEKDAYS = (
    ("Mon", "周一"),
    ("Tue", "周二"),
    ("Wed", "周三"),
    ("Thu", "周四"),
    ("Fri", "周五"),
    ("Sat", "周六"),
    ("Sun", "周日"),
)


def season_position(
    index: pd.PeriodIndex, freq: str, period: int
) -> tuple[np.ndarray, Callable[[int, ToolContext], str]]:
    """Where each period sits in the cycle and how to name a position (July, Tue, Q3 ...)."""
    if freq == "M" and period == 12:
        return index.month.to_numpy(), lambda k, ctx: ctx.t(calendar.month_name[k], f"{k}月")
    if freq == "D" and period == 7:
        return index.dayofweek.to_numpy(), lambda k, ctx: ctx.t(*_WEEKDAYS[k])
    if freq == "Q" and period == 4:
        return index.quarter.to_numpy(), lambda k, ctx: f"Q{k}"
    pos = np.arange(len(index)) % period
    return pos, lambda k, ctx: ctx.t(f"position {k + 1} of {period}", f"周期第 {k + 1} 位")


def choose_model(y: np.ndarray, period: int, model: str) -> str:
    """Multiplicative when values are positive and the seasonal swing grows with the level."""
    if model != "auto":
        return model
    if np.any(y <= 0) or len(y) < 3 * period:
        return "additive"
    from statsmodels.tsa.seasonal import STL

    res = STL(y, period=period, robust=True).fit()
    cycles = len(y) // period
    level = [res.trend[i * period : (i + 1) * period].mean() for i in range(cycles)]
    swing = [np.ptp(res.seasonal[i * period : (i + 1) * period]) for i in range(cycles)]
    rho = sps.spearmanr(level, swing)[0] if cycles >= 3 else 0.0
    return "multiplicative" if rho == rho and rho > 0.6 and max(level) / min(level) > 1.3 else "additive"


def decompose(
    data: pd.DataFrame,
    date_column: str,
    value_column: str,
    freq: str,
    agg: str,
    period: int | None,
    model: str,
    plot: bool,
    ctx: ToolContext,
) -> ToolResult:
    from statsmodels.tsa.seasonal import STL

    ts = regular_series(data, date_column, value_column, freq, agg, ctx, minimum=4)
    period = int(period or SEASON[ts.freq])
    if period < 2:
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                "Yearly data has no seasonal cycle; pass period or use a finer freq.",
                "年度数据没有季节周期；请指定 period 或使用更细的 freq。",
            ),
            hint="freq='M'",
        )
    y = ts.values.to_numpy()
    if len(y) < 2 * period + 1:
        raise ToolError(
            "insufficient_data",
            ctx.t(
                f"{len(y)} periods cover less than two full cycles of {period}; seasonality cannot be separated.",
                f"{len(y)} 个周期不足两个完整的 {period} 期循环，无法分离季节性。",
            ),
            hint=ctx.t("Use more history or a finer freq.", "请使用更长的历史数据或更细的 freq。"),
        )
    check_varies(ts.values, value_column, ctx)
    if model == "multiplicative" and np.any(y <= 0):
        raise ToolError(
            "invalid_arguments",
            ctx.t("A multiplicative model needs positive values.", "乘法模型要求数值全为正。"),
            hint="model='additive'",
        )
    chosen = choose_model(y, period, model)
    work = np.log(y) if chosen == "multiplicative" else y
    res = STL(work, period=period, robust=True).fit()
    trend, seasonal, resid = res.trend, res.seasonal, res.resid
    f_season = max(0.0, 1 - np.var(resid) / np.var(seasonal + resid))
    f_trend = max(0.0, 1 - np.var(resid) / np.var(trend + resid))
    pos, name = season_position(ts.values.index, ts.freq, period)
    profile = pd.Series(seasonal).groupby(pos).mean()
    effect = (np.expm1(profile) * 100) if chosen == "multiplicative" else profile
    peak, low = int(effect.idxmax()), int(effect.idxmin())
    metrics: dict = {
        "n_periods": len(y),
        "period": period,
        "freq": ts.freq,
        "model": chosen,
        "seasonal_strength": f_season,
        "trend_strength": f_trend,
        "peak_season": name(peak, ctx),
        "low_season": name(low, ctx),
        "peak_effect": float(effect[peak]),
        "low_effect": float(effect[low]),
        "effect_unit": "percent_of_trend" if chosen == "multiplicative" else "units",
    }
    for k, v in effect.items():
        metrics[f"seasonal_effect.{name(int(k), ctx)}"] = float(v)
    out = pd.DataFrame(
        {
            "period": ts.labels,
            "observed": y,
            "trend": np.exp(trend) if chosen == "multiplicative" else trend,
            "seasonal": np.exp(seasonal) if chosen == "multiplicative" else seasonal,
            "remainder": np.exp(resid) if chosen == "multiplicative" else resid,
        }
    )
    result = _result(metrics, effect, name, ts, value_column, ctx)
    result.table = out
    if plot:
        _plot(out, ts, value_column, chosen, result, ctx)
    return result


def _effect_words(v: float, multiplicative: bool, ctx: ToolContext) -> str:
    if multiplicative:
        return ctx.t(
            f"{abs(v):.0f}% {'above' if v >= 0 else 'below'} the trend",
            f"比趋势{'高' if v >= 0 else '低'} {abs(v):.0f}%",
        )
    return ctx.t(
        f"{fmt_num(abs(v))} {'above' if v >= 0 else 'below'} the trend",
        f"比趋势{'高' if v >= 0 else '低'} {fmt_num(abs(v))}",
    )


def _result(m: dict, effect: pd.Series, name, ts, value_column: str, ctx: ToolContext) -> ToolResult:
    mult = m["model"] == "multiplicative"
    fs = m["seasonal_strength"]
    strength = (
        ctx.t("strong", "很强") if fs >= 0.64 else ctx.t("moderate", "中等") if fs >= 0.36 else ctx.t("weak", "较弱")
    )
    peak_low = ctx.t(
        f"{m['peak_season']} is typically the high point ({_effect_words(m['peak_effect'], mult, ctx)}) and "
        f"{m['low_season']} the low point ({_effect_words(m['low_effect'], mult, ctx)}).",
        f"{m['peak_season']}通常是高点（{_effect_words(m['peak_effect'], mult, ctx)}），"
        f"{m['low_season']}是低点（{_effect_words(m['low_effect'], mult, ctx)}）。",
    )
    trend_dir = ts.values.iloc[-1] > ts.values.iloc[0]
    interpretation = ctx.t(
        f"{value_column} has a {strength} seasonal pattern (strength {fs:.2f} on a 0-1 scale). " + peak_low,
        f"{value_column} 的季节性{strength}（强度 {fs:.2f}，范围 0-1）。" + peak_low,
    )
    insights = [
        peak_low,
        ctx.t(
            f"Trend strength {m['trend_strength']:.2f}; the underlying level {'rose' if trend_dir else 'fell'} over the period.",
            f"趋势强度 {m['trend_strength']:.2f}；整体水平在此期间{'上升' if trend_dir else '下降'}。",
        ),
    ]
    insights += [
        ctx.t(
            f"{name(int(k), ctx)}: {_effect_words(v, mult, ctx)}", f"{name(int(k), ctx)}：{_effect_words(v, mult, ctx)}"
        )
        for k, v in effect.items()
    ][:12]
    method = ctx.t(
        f"STL decomposition (robust LOESS, cycle of {m['period']} periods) on "
        f"{'log values (multiplicative: swings grow with the level)' if mult else 'the values (additive)'}; "
        "strength = 1 - Var(remainder) / Var(component + remainder).",
        f"STL 分解（稳健 LOESS，周期 {m['period']}），{'对对数值（乘法模型：波动随水平增大）' if mult else '对原值（加法模型）'}；"
        "强度 = 1 - Var(残差) / Var(成分 + 残差)。",
    )
    profile = ctx.t(
        f"{m['n_periods']} {FREQ_WORDS[m['freq']][0]}s of {value_column}.",
        f"{m['n_periods']} 个{FREQ_WORDS[m['freq']][1]}的 {value_column}。",
    )
    if ts.dropped:
        profile += " " + dropped_note(ts.dropped, ctx)
    text = tagged_text(
        data_profile=profile,
        method=method,
        assumptions=ts.notes,
        insights=insights,
        conclusion=ctx.t(
            f"Seasonal strength {fs:.3f}, trend strength {m['trend_strength']:.3f}, model {m['model']}.",
            f"季节强度 {fs:.3f}，趋势强度 {m['trend_strength']:.3f}，模型 {m['model']}。",
        ),
        interpretation=interpretation,
    )
    limitations = [
        ctx.t(
            "The seasonal pattern is an average over the years seen; a single unusual year can shift it.",
            "季节模式是历年的平均；个别异常年份会影响结果。",
        )
    ]
    if m["n_periods"] < 3 * m["period"]:
        limitations.append(
            ctx.t("Fewer than three full cycles: the seasonal estimate is rough.", "不足三个完整周期：季节估计较粗略。")
        )
    return ToolResult(
        metrics=clean_metrics(m),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=m["n_periods"],
        limitations=limitations,
    )


def _plot(out: pd.DataFrame, ts, value_column: str, model: str, result: ToolResult, ctx: ToolContext) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9.0, 7.5), dpi=charts.DPI, facecolor="white", layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(4, 1, sharex=True)
    x = ts.values.index.to_timestamp()
    titles = [
        (ctx.t("observed", "实际值"), "observed"),
        (ctx.t("trend", "趋势"), "trend"),
        (ctx.t("seasonal", "季节") + (" (×)" if model == "multiplicative" else ""), "seasonal"),
        (ctx.t("remainder", "残差"), "remainder"),
    ]
    for ax, (title, col) in zip(axes, titles):
        charts.style_axes(ax)
        ax.plot(x, out[col], color=charts.ACCENT, linewidth=1.3)
        ax.set_ylabel(charts.wrap_label(title, 14, 1), fontsize=charts.TICK_SIZE, color=charts.TEXT)
    axes[0].set_title(
        charts.wrap_label(
            ctx.t(f"{value_column}: trend, seasonal pattern and remainder", f"{value_column}：趋势、季节与残差"), 60, 1
        ),
        loc="left",
        fontsize=charts.TITLE_SIZE,
    )
    path = charts.save(fig, ctx.figure_path("seasonal_decompose"))
    result.figures.append(str(path))
    result.captions.append(
        ctx.t(
            f"STL decomposition of {value_column} into trend, seasonal pattern and remainder.",
            f"{value_column} 的 STL 分解：趋势、季节模式与残差。",
        )
    )
