"""What the time-series tools share: reading a date column (dates, text dates, decimal years like
R's 1949.083), turning rows into a regular series (one value per day/week/month/quarter/year),
period labels, and the line chart of a series with optional forecast band."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import charts
from .base import ToolContext, ToolError
from .common import column_kind, require_numeric

FREQS = ("D", "W", "M", "Q", "Y")
SEASON = {"D": 7, "W": 52, "M": 12, "Q": 4, "Y": 1}  # the natural seasonal cycle of each frequency
FREQ_WORDS = {
    "D": ("day", "天"),
    "W": ("week", "周"),
    "M": ("month", "月"),
    "Q": ("quarter", "季度"),
    "Y": ("year", "年"),
}
AGGS = ("sum", "mean", "median", "count", "min", "max", "last")


def parse_dates(data: pd.DataFrame, column: str, ctx: ToolContext) -> pd.Series:
    """The column as naive timestamps (NaT where missing); a non-date column gets wrong_column_type."""
    s = data[column]
    if not s.notna().any():  # all missing: "no data", not "wrong type"
        return pd.Series(pd.NaT, index=s.index, dtype="datetime64[ns]")
    if pd.api.types.is_datetime64_any_dtype(s.dtype):
        return s.dt.tz_localize(None) if getattr(s.dt, "tz", None) is not None else s
    if isinstance(s.dtype, pd.PeriodDtype):
        return s.dt.to_timestamp()
    if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
        values = pd.to_numeric(s, errors="coerce").astype(float)
        present = values.dropna()
        if len(present) and present.between(1000, 3000).all():
            return _decimal_years(values)
    else:
        text = s.astype("string").str.strip()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                parsed = pd.to_datetime(text, errors="coerce", format="mixed")
            except (ValueError, TypeError):
                parsed = pd.Series(pd.NaT, index=s.index)
        present = int(text.notna().sum())
        if present and parsed.notna().sum() / present >= 0.9:
            return parsed.dt.tz_localize(None) if getattr(parsed.dt, "tz", None) is not None else parsed
    dates = [str(c) for c in data.columns if column_kind(data[c]) == "datetime"][:10]
    raise ToolError(
        "wrong_column_type",
        ctx.t(f"Column {column!r} does not hold dates.", f"列 {column!r} 不是日期列。"),
        hint=ctx.t(
            f"Use a date column, e.g. {dates}." if dates else "Convert the column to dates first (convert_types).",
            f"请使用日期列，例如 {dates}。" if dates else "请先用 convert_types 转换为日期。",
        ),
        column=column,
        suitable_columns=dates,
    )


def _decimal_years(values: pd.Series) -> pd.Series:
    """1949.0, 1949.083 ... (R's ts time) -> month starts when the fractions are twelfths, else days."""
    year = np.floor(values)
    frac = values - year
    months = frac * 12
    if np.nanmax(np.abs(months - np.round(months))) < 0.01:
        out = pd.to_datetime(
            {"year": year.fillna(2000).astype(int), "month": np.round(months).fillna(0).astype(int) + 1, "day": 1}
        )
    else:
        out = pd.to_datetime(year.fillna(2000).astype(int).astype(str) + "-01-01") + pd.to_timedelta(
            frac.fillna(0) * 365.25, unit="D"
        )
    return out.where(values.notna())


def natural_freq(dates: pd.Series) -> str:
    """The finest of D/W/M/Q/Y that is not finer than the typical gap between distinct dates."""
    unique = np.sort(dates.dropna().unique())
    if len(unique) < 2:
        return "D"
    gap = float(np.median(np.diff(unique).astype("timedelta64[s]").astype(float))) / 86400
    for freq, limit in (("D", 1.5), ("W", 8), ("M", 45), ("Q", 120)):
        if gap <= limit:
            return freq
    return "Y"


def period_label(period: pd.Period) -> str:
    """2024-03 for a month, 2024Q1, 2024, a week by its Monday, a day by its date."""
    f = period.freqstr[0]
    if f == "W":
        return period.start_time.strftime("%Y-%m-%d")
    return str(period)


@dataclass
class Series:
    values: pd.Series  # indexed by a PeriodIndex without gaps
    freq: str
    dropped: int  # rows without a date or a value
    notes: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # incomplete edge periods dropped from a total
    rows: int = 0  # the data rows behind the periods kept (a 12-month series may stand on 4,392 rows)

    @property
    def labels(self) -> list[str]:
        return [period_label(p) for p in self.values.index]


def regular_series(
    data: pd.DataFrame, date_column: str, value_column: str | None, freq: str, agg: str, ctx: ToolContext, minimum: int
) -> Series:
    """One value per period (agg of the rows in it), gaps filled, incomplete edge periods dropped for totals."""
    dates = parse_dates(data, date_column, ctx)
    if agg not in AGGS:
        raise ToolError(
            "invalid_arguments", ctx.t(f"agg must be one of {AGGS}.", f"agg 必须是 {AGGS} 之一。"), hint="sum"
        )
    values = require_numeric(data, value_column, ctx) if value_column else pd.Series(1.0, index=data.index)
    keep = dates.notna() & (values.notna() if agg != "count" else True)
    dropped = int((~keep).sum())
    dates, values = dates[keep], values[keep]
    if dates.empty:
        raise ToolError(
            "insufficient_data",
            ctx.t("No rows with both a date and a value.", "没有同时具有日期和数值的行。"),
            hint=ctx.t("Check the date and value columns for missing values.", "请检查日期列和数值列的缺失值。"),
        )
    data_freq = natural_freq(dates)
    freq = data_freq if freq == "auto" else freq
    if freq not in FREQS:
        raise ToolError(
            "invalid_arguments",
            ctx.t(f"freq must be auto or one of {FREQS}.", f"freq 必须是 auto 或 {FREQS} 之一。"),
            hint="M",
        )
    periods = dates.dt.to_period(freq)
    grouped = values.groupby(periods).agg(agg)
    full = pd.period_range(grouped.index.min(), grouped.index.max(), freq=freq)
    notes = []
    missing = len(full) - len(grouped)
    if missing:
        fill = 0.0 if agg in ("sum", "count") else np.nan
        grouped = grouped.reindex(full, fill_value=fill)
        if agg not in ("sum", "count"):
            grouped = grouped.interpolate(limit_direction="both")
        notes.append(
            ctx.t(
                f"{missing} period(s) without rows were filled ({'with 0' if agg in ('sum', 'count') else 'by interpolation'}).",
                f"{missing} 个没有数据的周期已填补（{'按 0' if agg in ('sum', 'count') else '线性插值'}）。",
            )
        )
    series = Series(grouped.astype(float), freq, dropped, notes)
    if agg in ("sum", "count") and FREQS.index(freq) > FREQS.index(data_freq):
        _drop_partial_edges(series, dates, data_freq, ctx)
    series.rows = int(periods.isin(series.values.index).sum())
    if len(series.values) < minimum:
        raise ToolError(
            "insufficient_data",
            ctx.t(
                f"Only {len(series.values)} {FREQ_WORDS[freq][0]}(s) of data; at least {minimum} are needed.",
                f"只有 {len(series.values)} 个{FREQ_WORDS[freq][1]}的数据，至少需要 {minimum} 个。",
            ),
            hint=ctx.t("Use a finer freq (e.g. W or D) or more data.", "请使用更细的 freq（如 W 或 D）或更多数据。"),
        )
    return series


def _drop_partial_edges(series: Series, dates: pd.Series, data_freq: str, ctx: ToolContext) -> None:
    """A total over a period the data only partly covers understates it: drop such first/last periods.
    Each date stands for its own period at the data's spacing: a monthly row dated 2024-12-01 covers
    all of December, so 2024Q4 with October, November and December is complete. An edge the data do
    not reach is still complete when the data stop no earlier in it than they do in the complete
    periods between: orders on 2025-01-05 … 2025-12-25, each month's last on day 24–27, read as weekly
    and ending with a week that stops at 12-28, made December "incomplete"; its last order is as late
    as any month's. The same rule at both edges (the first date against the usual first day)."""
    idx = series.values.index
    covered_from = dates.min().to_period(data_freq).start_time
    covered_to = dates.max().to_period(data_freq).end_time
    usual_head, usual_tail = _usual_edges(dates, idx)
    drop = []
    if len(idx) > 2 and covered_from > idx[0].start_time:
        head = (dates.min().normalize() - idx[0].start_time).days
        if usual_head is None or head > usual_head:
            drop.append(idx[0])
    if len(idx) > 2 and covered_to < idx[-1].end_time.normalize():
        tail = (idx[-1].end_time.normalize() - dates.max().normalize()).days
        if usual_tail is None or tail > usual_tail:
            drop.append(idx[-1])
    if drop:
        series.values = series.values.drop(drop)
        series.left_out = [period_label(p) for p in drop]
        span = f"{dates.min():%Y-%m-%d} – {dates.max():%Y-%m-%d}"
        series.notes.append(
            ctx.t(
                f"Incomplete period(s) {', '.join(series.left_out)} were left out: the data ({span}) cover "
                "only part of them, and a partial total would look like a drop.",
                f"不完整的周期 {'、'.join(series.left_out)} 已排除：数据（{span}）只覆盖其中一部分，"
                "不完整的合计会看起来像下降。",
            )
        )


INTERIOR_NEEDED = 3  # complete periods between the edges needed to say where the data usually start and stop


def _usual_edges(dates: pd.Series, idx: pd.PeriodIndex) -> tuple[int | None, int | None]:
    """The most days from a period's start to its first date, and from its last date to the period's
    end, over the periods between the edges that have rows: how far short of a period's bounds the data
    stop in periods that are complete. None when too few such periods say it."""
    if len(idx) < INTERIOR_NEEDED + 2:
        return None, None
    days = dates.dt.normalize()
    by_period = days.groupby(days.dt.to_period(idx.freq))
    first, last = by_period.min(), by_period.max()
    inner = [p for p in idx[1:-1] if p in first.index]
    if len(inner) < INTERIOR_NEEDED:
        return None, None
    heads = [(first[p] - p.start_time).days for p in inner]
    tails = [(p.end_time.normalize() - last[p]).days for p in inner]
    return max(heads), max(tails)


def check_varies(values: pd.Series, column: str, ctx: ToolContext) -> None:
    if values.nunique() <= 1:
        raise ToolError(
            "constant_column",
            ctx.t(
                f"{column!r} has the same value in every period; there is no trend or pattern to find.",
                f"{column!r} 每个周期的值都相同，没有趋势或规律可言。",
            ),
            hint=ctx.t("Check the value column or the aggregation.", "请检查数值列或汇总方式。"),
            column=column,
        )


def pct(x: float) -> str:
    return "—" if x is None or not math.isfinite(x) else f"{x:+.1f}%"


def line_chart(
    ctx: ToolContext,
    stem: str,
    history: pd.Series,
    title: str,
    ylabel: str,
    *,
    fitted: pd.Series | None = None,
    fitted_label: str = "",
    forecast: pd.DataFrame | None = None,
    marks: list | None = None,
) -> str:
    """History as a line; optional fitted/trend line, forecast with its interval band, vertical marks."""
    fig, ax = charts.new_figure((9.0, 5.0))
    x = history.index.to_timestamp()
    ax.plot(x, history.to_numpy(), color=charts.ACCENT, linewidth=1.6, label=ctx.t("actual", "实际值"))
    if fitted is not None:
        ax.plot(
            fitted.index.to_timestamp(),
            fitted.to_numpy(),
            color=charts.PALETTE[1],
            linewidth=1.6,
            linestyle="--",
            label=fitted_label,
        )
    if forecast is not None and len(forecast):
        _forecast_layer(ax, ctx, history, forecast)
    for when in marks or []:
        ax.axvline(
            when.to_timestamp() if hasattr(when, "to_timestamp") else when,
            color=charts.PALETTE[3],
            linestyle=":",
            linewidth=1.4,
        )
    charts.style_legend(ax, loc="upper left")
    charts.set_labels(ax, title, ctx.t("date", "日期"), ylabel)
    return str(charts.save(fig, ctx.figure_path(stem)))


FORECAST_WIDTH = 3.0  # the forecast is what the chart is for: bolder than the history (1.6)


def _forecast_layer(ax, ctx: ToolContext, history: pd.Series, forecast: pd.DataFrame) -> None:
    """The forecast drawn to be seen: a bold dashed line with markers, joined to the last actual
    value, over its shaded interval band, with a dotted line where the forecast begins."""
    fx = forecast.index.to_timestamp()
    color = charts.PALETTE[1]
    if forecast[["lower", "upper"]].notna().all().all():
        label = ctx.t("prediction interval", "预测区间")
        if len(fx) == 1:  # a band over one point has no width: an interval bar instead
            mid = float(forecast["forecast"].iloc[0])
            ax.errorbar(
                fx,
                [mid],
                yerr=[[mid - float(forecast["lower"].iloc[0])], [float(forecast["upper"].iloc[0]) - mid]],
                fmt="none",
                ecolor=color,
                alpha=0.45,
                elinewidth=10,
                capsize=0,
                label=label,
                zorder=2,
            )
        else:
            ax.fill_between(
                fx, forecast["lower"], forecast["upper"], color=color, alpha=0.25, linewidth=0, label=label, zorder=2
            )
    if len(history):  # join the forecast to the last actual value, so the two read as one story
        ax.plot(
            [history.index[-1].to_timestamp(), fx[0]],
            [float(history.iloc[-1]), float(forecast["forecast"].iloc[0])],
            color=color,
            linewidth=FORECAST_WIDTH,
            linestyle="--",
            zorder=4,
        )
        ax.axvline(history.index[-1].to_timestamp(), color="0.45", linestyle=":", linewidth=1.2, zorder=1)
    ax.plot(
        fx,
        forecast["forecast"],
        color=color,
        linewidth=FORECAST_WIDTH,
        linestyle="--",
        marker="o",
        markersize=6,
        label=ctx.t("forecast", "预测"),
        zorder=5,
    )
