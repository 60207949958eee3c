"""Forecasting: exponential smoothing (ETS / Holt-Winters) and seasonal ARIMA compete in a
rolling-origin backtest; the winner is refitted on all history and forecasts with prediction
intervals. A seasonal-naive forecast is the benchmark every model must beat."""

from __future__ import annotations

import warnings
from typing import Literal

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from .base import ToolContext, ToolError, ToolResult, tagged_text
from .common import clean_metrics, dropped_note, fmt_num
from .ml_common import SEED
from .ts_common import FREQ_WORDS, SEASON, check_varies, line_chart, period_label, regular_series

_FOLDS = 3
_HISTORY_RECORDED = 24  # known periods recorded as `actual.<period>` metrics at most (as many as forecasts)
_INTERVALS_LISTED = 12  # periods whose forecast and interval the text lists one by one (the table has all)


def model_name(name: str, seasonal: bool, period: int, positive: bool) -> tuple[str, str]:
    """The model `_fit_predict` actually fits, in English and Chinese: a yearly series or one shorter than
    two cycles gets no seasonal term, so it must not be called Holt-Winters or seasonal ARIMA."""
    if name == "ets":
        if seasonal:
            kind = ("multiplicative", "乘法") if positive else ("additive", "加法")
            return (
                f"Holt-Winters exponential smoothing (ETS: damped additive trend, {kind[0]} seasonality, period {period})",
                f"Holt-Winters 指数平滑（ETS：阻尼加法趋势，{kind[1]}季节，周期 {period}）",
            )
        return (
            "exponential smoothing with a damped trend (ETS, Holt's damped method; no seasonal component)",
            "阻尼趋势指数平滑（ETS，Holt 阻尼法；无季节成分）",
        )
    if name == "arima":
        on_logs = (" on log values", "，对数值") if positive else ("", "")
        if seasonal:
            return (
                f"seasonal ARIMA(0,1,1)(0,1,1)[{period}] (airline model{on_logs[0]})",
                f"季节性 ARIMA(0,1,1)(0,1,1)[{period}]（航空模型{on_logs[1]}）",
            )
        return (
            f"ARIMA(1,1,0) with drift{on_logs[0]} (no seasonal component)",
            f"带漂移的 ARIMA(1,1,0){on_logs[1]}（无季节成分）",
        )
    if seasonal:
        return ("seasonal naive (same period last cycle)", "季节性朴素法（上一周期同期值）")
    return ("naive (the last value carried forward)", "朴素法（沿用最后一个值）")


def _fit_predict(name: str, y: np.ndarray, h: int, period: int, alpha: float, intervals: bool = True) -> pd.DataFrame:
    """Forecast h steps with columns forecast, lower, upper."""
    seasonal = period >= 2 and len(y) >= 2 * period + 2
    positive = bool(np.all(y > 0))
    # one BLAS thread: these small state-space fits run 10x slower when BLAS threads compete for cores
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        if name == "ets":
            from statsmodels.tsa.exponential_smoothing.ets import ETSModel

            model = ETSModel(
                pd.Series(y),
                error="add",
                trend="add",
                damped_trend=True,
                seasonal=("mul" if positive else "add") if seasonal else None,
                seasonal_periods=period if seasonal else None,
            )
            res = model.fit(disp=False)
            if not intervals:  # backtests need the point forecast only (intervals are simulated)
                return pd.DataFrame({"forecast": np.asarray(res.forecast(h)), "lower": np.nan, "upper": np.nan})
            # multiplicative models get simulated intervals: a fixed seed keeps the answer reproducible
            try:
                pred = res.get_prediction(start=len(y), end=len(y) + h - 1, rng=np.random.default_rng(SEED))
            except TypeError:  # statsmodels < 0.15 names the seed random_state
                pred = res.get_prediction(start=len(y), end=len(y) + h - 1, random_state=SEED)
            frame = pred.summary_frame(alpha=alpha)
            return pd.DataFrame(
                {
                    "forecast": frame["mean"].to_numpy(),
                    "lower": frame["pi_lower"].to_numpy(),
                    "upper": frame["pi_upper"].to_numpy(),
                }
            )
        if name == "arima":
            from statsmodels.tsa.statespace.sarimax import SARIMAX

            work = np.log(y) if positive else y  # log: seasonal swings that grow with the level
            if seasonal:
                model = SARIMAX(work, order=(0, 1, 1), seasonal_order=(0, 1, 1, period))
            else:
                model = SARIMAX(work, order=(1, 1, 0), trend="t")
            res = model.fit(disp=False)
            fc = res.get_forecast(h)
            mean, ci = np.asarray(fc.predicted_mean), np.asarray(fc.conf_int(alpha=alpha))
            back = np.exp if positive else (lambda v: v)
            return pd.DataFrame({"forecast": back(mean), "lower": back(ci[:, 0]), "upper": back(ci[:, 1])})
    return _seasonal_naive(y, h, period if seasonal else 1, alpha)


def _seasonal_naive(y: np.ndarray, h: int, period: int, alpha: float) -> pd.DataFrame:
    from scipy import stats as sps

    last = y[-period:]
    reps = np.arange(h)
    fc = last[reps % period]
    resid = y[period:] - y[:-period]
    sd = float(np.std(resid, ddof=1)) if len(resid) > 1 else 0.0
    z = sps.norm.isf(alpha / 2)
    width = z * sd * np.sqrt(reps // period + 1)
    return pd.DataFrame({"forecast": fc, "lower": fc - width, "upper": fc + width})


def backtest(y: np.ndarray, names: list[str], h: int, period: int, alpha: float) -> tuple[dict, int]:
    """Rolling origin: the last `_FOLDS` windows of h periods, each forecast from the history before it."""
    min_train = 2 * period + 2 if period >= 2 else 8
    origins = [len(y) - k * h for k in range(_FOLDS, 0, -1) if len(y) - k * h >= min_train]
    scores = {}
    for name in names:
        errors: list[np.ndarray] = []
        actual: list[np.ndarray] = []
        for o in origins:
            try:
                pred = _fit_predict(name, y[:o], h, period, alpha, intervals=False)["forecast"].to_numpy()
            except Exception:  # a model that cannot fit this window loses the comparison
                errors = []
                break
            errors.append(pred - y[o : o + h])
            actual.append(y[o : o + h])
        if errors:
            e, a = np.concatenate(errors), np.concatenate(actual)
            nz = a != 0
            scores[name] = {
                "mae": float(np.mean(np.abs(e))),
                "mape": float(np.mean(np.abs(e[nz] / a[nz])) * 100) if nz.any() else float("nan"),
            }
    return scores, len(origins)


def forecast(
    data: pd.DataFrame,
    date_column: str,
    value_column: str,
    horizon: int | None = None,
    freq: Literal["auto", "D", "W", "M", "Q", "Y"] = "auto",
    agg: Literal["sum", "mean", "median", "count", "min", "max", "last"] = "sum",
    method: Literal["auto", "ets", "arima", "seasonal_naive"] = "auto",
    alpha: float = 0.05,
    plot: bool = True,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Forecast a time series for the coming periods with prediction intervals; exponential smoothing and seasonal ARIMA are compared by a rolling-origin backtest (MAPE/MAE) and the better one is used.

    Args:
        date_column: The date column.
        value_column: The numeric column to forecast (e.g. sales).
        horizon: How many periods ahead (default: one seasonal cycle, e.g. 12 months).
        freq: Period length: D, W, M, Q or Y; auto uses the data's own spacing.
        agg: How rows in one period are combined (sum for totals, mean for levels).
        method: auto picks the model with the lowest backtest error; or force ets, arima or seasonal_naive.
        alpha: 1 - the interval's coverage (0.05 gives 95% prediction intervals).
        plot: Also draw history, forecast and interval.
    """
    ctx = ctx or ToolContext()
    ts = regular_series(data, date_column, value_column, freq, agg, ctx, minimum=8)
    check_varies(ts.values, value_column, ctx)
    if not 0.001 <= alpha <= 0.5:
        raise ToolError(
            "invalid_arguments",
            ctx.t("alpha must be between 0.001 and 0.5.", "alpha 必须在 0.001 到 0.5 之间。"),
            hint="0.05",
        )
    y = ts.values.to_numpy()
    period = SEASON[ts.freq]
    h = int(horizon) if horizon is not None else (period if period >= 2 else 3)
    if not 1 <= h <= 500:
        raise ToolError(
            "invalid_arguments",
            ctx.t("horizon must be between 1 and 500 periods.", "horizon 必须在 1 到 500 之间。"),
            hint="12",
        )
    seasonal = period >= 2 and len(y) >= 2 * period + 2
    names: list[str] = ["ets", "arima", "seasonal_naive"] if method == "auto" else [method]
    scores, folds = backtest(
        y, names, min(h, period) if seasonal else min(h, max(1, len(y) // 6)), period if seasonal else 1, alpha
    )
    fittable = [n for n in names if n in scores] or names
    chosen = min(fittable, key=lambda n: scores[n]["mae"]) if scores else names[0]
    fc = _fit_predict(chosen, y, h, period, alpha)
    fc.index = pd.period_range(ts.values.index[-1] + 1, periods=h, freq=ts.values.index.freq)
    labels = [period_label(p) for p in fc.index]
    metrics: dict = {
        "model": chosen,
        "horizon": h,
        "freq": ts.freq,
        "n_periods": len(y),
        "interval_level": 1 - alpha,
        "backtest_folds": folds,
        "last_actual": float(y[-1]),
        "last_period": ts.labels[-1],
        "forecast_total": float(fc["forecast"].sum()),
        "forecast_mean": float(fc["forecast"].mean()),
        "seasonal": seasonal,
        "seasonal_period": period if seasonal else 0,
        "first_period": labels[0],
        "model_name": model_name(chosen, seasonal, period, bool(np.all(y > 0)))[0],
    }
    if agg not in ("sum", "count"):  # the periods are averages (a satisfaction score): adding them up means nothing
        del metrics["forecast_total"]
    if ts.left_out:
        metrics["excluded_periods"] = ", ".join(ts.left_out)
    if chosen in scores:
        metrics.update(backtest_mape=scores[chosen]["mape"], backtest_mae=scores[chosen]["mae"])
    for name, s in scores.items():
        metrics.update({f"backtest_mape.{name}": s["mape"], f"backtest_mae.{name}": s["mae"]})
    for lab, (_, row) in list(zip(labels, fc.iterrows()))[:24]:
        metrics.update({f"forecast.{lab}": row["forecast"], f"lower.{lab}": row["lower"], f"upper.{lab}": row["upper"]})
    # the last known periods, so that a chart drawn from the recorded numbers (the answer card's) shows the
    # history the forecast continues, not the forecast alone: twice the horizon, at least a year of months
    known = min(_HISTORY_RECORDED, max(2 * h, 12), len(y))
    for lab, value in zip(ts.labels[-known:], y[-known:], strict=True):
        metrics[f"actual.{lab}"] = float(value)
    names_of = {k: model_name(k, seasonal, period, bool(np.all(y > 0))) for k in (*scores, chosen)}
    result = _result(metrics, fc, labels, ts, value_column, scores, names_of, ctx)
    if plot:
        history = ts.values.iloc[-max(4 * h, 3 * period, 24) :]
        unit = FREQ_WORDS[ts.freq]
        path = line_chart(
            ctx,
            "forecast",
            history,
            ctx.t(
                f"{value_column}: history and {h}-{unit[0]} forecast",
                f"{value_column}：历史与未来 {h} 个{unit[1]}的预测",
            ),
            value_column,
            forecast=fc,
        )
        result.figures.append(path)
        result.captions.append(
            ctx.t(
                f"{value_column} per {unit[0]} with the {h}-{unit[0]} forecast and its {(1 - alpha) * 100:.0f}% prediction interval (shaded).",
                f"每{unit[1]}{value_column}及未来 {h} 个{unit[1]}的预测，阴影为 {(1 - alpha) * 100:.0f}% 预测区间。",
            )
        )
    return result


def _result(
    m: dict,
    fc: pd.DataFrame,
    labels: list[str],
    ts,
    value_column: str,
    scores: dict,
    names_of: dict[str, tuple[str, str]],
    ctx: ToolContext,
) -> ToolResult:
    unit = FREQ_WORDS[ts.freq]
    level = f"{m['interval_level'] * 100:.0f}%"
    first, last = fc.iloc[0], fc.iloc[-1]
    if m["horizon"] == 1:  # one period: its value and interval, nothing to add up
        reading = ctx.t(
            f"{value_column} is expected to be about {fmt_num(first['forecast'])} in {labels[0]} (likely between "
            f"{fmt_num(first['lower'])} and {fmt_num(first['upper'])}, {level} interval).",
            f"预计 {labels[0]} 的 {value_column} 约为 {fmt_num(first['forecast'])}（{level} 区间为 "
            f"{fmt_num(first['lower'])} 至 {fmt_num(first['upper'])}）。",
        )
    elif _flat(fc["forecast"]):  # "about 1,346 … and about 1,346" read as a change; say it stays level
        reading = ctx.t(
            f"{value_column} is expected to stay flat at about {fmt_num(first['forecast'])} per {unit[0]} from "
            f"{labels[0]} to {labels[-1]} ({labels[-1]} alone: likely between {fmt_num(last['lower'])} and "
            f"{fmt_num(last['upper'])}, {level} interval; every period's interval is listed below)"
            + (
                f"; about {fmt_num(m['forecast_total'])} over the next {m['horizon']} {unit[0]}s."
                if "forecast_total" in m
                else "."
            ),
            f"预计 {value_column} 从 {labels[0]} 到 {labels[-1]} 基本持平，每{unit[1]}约 {fmt_num(first['forecast'])}"
            f"（仅 {labels[-1]} 一期的 {level} 区间为 {fmt_num(last['lower'])} 至 {fmt_num(last['upper'])}，各期区间见下）"
            + (
                f"；未来 {m['horizon']} 个{unit[1]}合计约 {fmt_num(m['forecast_total'])}。"
                if "forecast_total" in m
                else "。"
            ),
        )
    else:
        reading = ctx.t(
            f"{value_column} is expected to be about {fmt_num(first['forecast'])} in {labels[0]} and about "
            f"{fmt_num(last['forecast'])} by {labels[-1]} ({labels[-1]} alone: likely between {fmt_num(last['lower'])} and {fmt_num(last['upper'])}, {level} interval; every period's interval is listed below); "
            + (
                f"the total over the next {m['horizon']} {unit[0]}s is about {fmt_num(m['forecast_total'])}."
                if "forecast_total" in m
                else f"about {fmt_num(m['forecast_mean'])} on average."
            ),
            f"预计 {labels[0]} 的 {value_column} 约为 {fmt_num(first['forecast'])}，到 {labels[-1]} 约为 {fmt_num(last['forecast'])}"
            f"（仅 {labels[-1]} 一期的 {level} 区间为 {fmt_num(last['lower'])} 至 {fmt_num(last['upper'])}，各期区间见下）；"
            + (
                f"未来 {m['horizon']} 个{unit[1]}合计约 {fmt_num(m['forecast_total'])}。"
                if "forecast_total" in m
                else f"平均约 {fmt_num(m['forecast_mean'])}。"
            ),
        )
    if "backtest_mape" in m and m["backtest_mape"] == m["backtest_mape"]:
        accuracy = ctx.t(
            f" When this method forecast the last {m['backtest_folds']} stretches of known history, it was off by "
            f"{m['backtest_mape']:.1f}% on average (MAE {fmt_num(m['backtest_mae'])}).",
            f" 用该方法预测最近 {m['backtest_folds']} 段已知历史时，平均误差为 {m['backtest_mape']:.1f}%（MAE {fmt_num(m['backtest_mae'])}）。",
        )
    else:
        accuracy = ctx.t(
            " There was too little history to backtest the forecast; treat it as rough.",
            " 历史数据太少，无法回测预测准确度；请仅作粗略参考。",
        )
    interpretation = reading + accuracy
    if m.get("excluded_periods"):  # said in the answer itself: otherwise "next quarter" looks like one the file has
        interpretation = (
            ctx.t(
                f"{m['excluded_periods']} was left out because the data cover only part of it, so the "
                f"forecast starts after the last complete {unit[0]}, {m['last_period']}. ",
                f"{m['excluded_periods']} 的数据不完整，已排除；因此预测从最后一个完整的{unit[1]}"
                f"（{m['last_period']}）之后开始。",
            )
            + interpretation
        )
    insights = [
        ctx.t(
            f"{names_of[k][0]}: backtest MAPE {fmt_num(s['mape'], 3)}%, MAE {fmt_num(s['mae'])}",
            f"{names_of[k][1]}：回测 MAPE {fmt_num(s['mape'], 3)}%，MAE {fmt_num(s['mae'])}",
        )
        for k, s in scores.items()
    ]
    if m["model"] == "seasonal_naive" and len(scores) > 1:
        insights.append(
            ctx.t("No model beat simply repeating last cycle's values.", "没有模型比简单重复上一周期的数值更好。")
        )
    chosen_name = names_of[m["model"]]
    candidates = (
        (
            "ETS (damped additive trend, seasonal), seasonal ARIMA (airline model) and seasonal naive",
            "ETS（阻尼加法趋势，含季节）、季节性 ARIMA（航空模型）和季节性朴素法",
        )
        if m["seasonal"]
        else (
            "ETS (damped additive trend, no season), ARIMA(1,1,0) with drift and naive",
            "ETS（阻尼加法趋势，无季节）、带漂移的 ARIMA(1,1,0) 和朴素法",
        )
    )
    method = ctx.t(
        f"Candidates {candidates[0]}, compared by a rolling-origin backtest over the last "
        f"{m['backtest_folds']} windows; fitted: {chosen_name[0]}, refitted on all {m['n_periods']} periods.",
        f"候选模型：{candidates[1]}，用最近 {m['backtest_folds']} 个窗口的滚动起点回测比较；"
        f"拟合：{chosen_name[1]}，并用全部 {m['n_periods']} 期重新拟合。",
    )
    assumptions = list(ts.notes)
    if not m["seasonal"]:
        assumptions.append(
            ctx.t(
                "Yearly data have no seasonal cycle: no seasonal pattern is modelled.",
                "年度数据没有季节周期：未建模季节性。",
            )
            if SEASON[ts.freq] < 2
            else ctx.t(
                "Fewer than two full seasonal cycles: no seasonal pattern is modelled.",
                "不足两个完整季节周期：未建模季节性。",
            )
        )
    profile = ctx.t(
        f"{m['n_periods']} {unit[0]}s up to {m['last_period']} (last value {fmt_num(m['last_actual'])}).",
        f"截至 {m['last_period']} 的 {m['n_periods']} 个{unit[1]}（最后一期 {fmt_num(m['last_actual'])}）。",
    )
    if ts.dropped:
        profile += " " + dropped_note(ts.dropped, ctx)
    limitations = [
        ctx.t(
            "A forecast assumes the future behaves like the past; promotions, price changes or shocks are not foreseen.",
            "预测假设未来与过去规律相同；促销、调价或突发事件无法预见。",
        ),
        ctx.t(
            "Intervals widen with the horizon; far-ahead values are increasingly uncertain.",
            "预测区间随时间变宽；越远越不确定。",
        ),
    ]
    if m["horizon"] > m["n_periods"] / 2:
        limitations.append(ctx.t("The horizon is long compared with the history.", "预测期相对历史长度过长。"))
    level = f"{m['interval_level'] * 100:.0f}%"
    table = fc.reset_index(drop=True)
    table.insert(0, "period", labels)
    text = tagged_text(
        data_profile=profile,
        method=method,
        assumptions=assumptions,
        insights=insights,
        conclusion=ctx.t(
            f"Forecast ({chosen_name[0]}), each period with its {level} prediction interval:\n"
            + _per_period(fc, labels, ctx),
            f"预测（{chosen_name[1]}），每期附 {level} 预测区间：\n" + _per_period(fc, labels, ctx),
        ),
        interpretation=interpretation,
    )
    return ToolResult(
        metrics=clean_metrics(m),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=m["n_periods"],
        limitations=limitations,
        table=table,
        payload={"forecast": table.to_dict(orient="records")},
    )


FLAT_SPREAD = 0.01  # forecasts within 1% of their mean across the whole horizon read as "flat"


def _flat(forecast: pd.Series) -> bool:
    """The forecast stays level over the horizon (naive or fully damped methods repeat one value)."""
    centre = float(forecast.abs().mean())
    return centre > 0 and float(forecast.max() - forecast.min()) <= FLAT_SPREAD * centre


def _per_period(fc: pd.DataFrame, labels: list[str], ctx: ToolContext) -> str:
    """One line per forecast period with its own interval: the interval widens with the horizon, so one
    interval quoted for the whole horizon would misstate every other period."""
    lines = [
        ctx.t(
            f"{lab}: {fmt_num(row['forecast'])} ({fmt_num(row['lower'])} to {fmt_num(row['upper'])})",
            f"{lab}：{fmt_num(row['forecast'])}（{fmt_num(row['lower'])} 至 {fmt_num(row['upper'])}）",
        )
        for lab, (_, row) in zip(labels[:_INTERVALS_LISTED], fc.iterrows())
    ]
    if len(labels) > _INTERVALS_LISTED:
        lines.append(
            ctx.t(
                f"… {len(labels) - _INTERVALS_LISTED} more period(s) in the table.",
                f"…… 另有 {len(labels) - _INTERVALS_LISTED} 期见表格。",
            )
        )
    return "\n".join(lines)
