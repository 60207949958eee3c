"""Business questions over time: how this period compares with the last (by DAILY AVERAGE, so
periods of different lengths compare fairly) and which segments drove a change in a total or a ratio."""

from __future__ import annotations

import warnings
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats as sps

from .base import ToolContext, ToolError, ToolResult, tagged_text
from .common import clean_metrics, fmt_num, fmt_p, label, p_sentence, require_numeric
from .timeseries_contrib import contribution_decomposition
from .ts_common import parse_dates

_PERIODS = {"month": "M", "week": "W", "quarter": "Q", "year": "Y"}
_MAX_GROUPS = 50


def _day(value: str, name: str, ctx: ToolContext) -> pd.Timestamp:
    try:
        day = pd.Timestamp(str(value)).normalize()
        if not 1000 <= day.year <= 3000:  # "April" parses to a timestamp in year 1 or so
            raise ValueError(value)
        return day
    except (ValueError, TypeError, OverflowError):
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                f"{name} = {value!r} is not a date; use ISO format like 2024-03-31.",
                f"{name} = {value!r} 不是日期；请用 2024-03-31 这样的 ISO 格式。",
            ),
            hint="YYYY-MM-DD",
        ) from None


def _windows(first: pd.Timestamp, last: pd.Timestamp, cs, ce, ps, pe, period: str, ctx: ToolContext):
    """(current_start, current_end, previous_start, previous_end) as days, ends inclusive."""
    if (cs is None) != (ce is None) or (ps is None) != (pe is None):
        raise ToolError(
            "invalid_arguments",
            ctx.t("Give both the start and the end of a period.", "请同时给出周期的开始和结束日期。"),
            hint="current_start='2024-03-01', current_end='2024-03-31'",
        )
    if cs is None:
        if ps is not None:
            raise ToolError(
                "invalid_arguments",
                ctx.t(
                    "Give the current period too (current_start, current_end).",
                    "请同时给出当前周期（current_start、current_end）。",
                ),
                hint="current_start",
            )
        p = last.to_period(_PERIODS[period])
        if last < p.end_time.normalize():  # the latest period is not over yet: compare full periods
            p -= 1
        return p.start_time, p.end_time.normalize(), (p - 1).start_time, (p - 1).end_time.normalize()
    cs, ce = _day(cs, "current_start", ctx), _day(ce, "current_end", ctx)
    if ps is None:  # the same number of days right before
        pe_ = cs - pd.Timedelta(days=1)
        ps_ = pe_ - (ce - cs)
    else:
        ps_, pe_ = _day(ps, "previous_start", ctx), _day(pe, "previous_end", ctx)
    for a, b, what in ((cs, ce, "current"), (ps_, pe_, "previous")):
        if b < a:
            raise ToolError(
                "invalid_arguments",
                ctx.t(
                    f"The {what} period ends before it starts.",
                    f"{'当前' if what == 'current' else '上一'}周期的结束日期早于开始日期。",
                ),
                hint=ctx.t("Swap start and end.", "请交换开始与结束日期。"),
            )
    return cs, ce, ps_, pe_


def _covered(start, end, first, last) -> tuple[pd.Timestamp, pd.Timestamp, int]:
    """The part of [start, end] the data covers and its number of calendar days."""
    a, b = max(start, first), min(end, last)
    return a, b, max((b - a).days + 1, 0)


def compare_periods(
    data: pd.DataFrame,
    date_column: str,
    value_column: str,
    current_start: str | None = None,
    current_end: str | None = None,
    previous_start: str | None = None,
    previous_end: str | None = None,
    group_column: str | None = None,
    period: Literal["month", "week", "quarter", "year"] = "month",
    alpha: float = 0.05,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Compare a value between two date ranges (this month vs last month, a campaign vs before) by DAILY AVERAGE so periods of different lengths compare fairly, with the change in % and an optional breakdown by a dimension.

    Args:
        date_column: The date column.
        value_column: The numeric column to total (e.g. revenue).
        current_start: First day of the current period (ISO date, e.g. 2024-04-01); omit both current and previous for the last full period vs the one before.
        current_end: Last day of the current period, inclusive (e.g. 2024-04-30).
        previous_start: First day of the comparison period; omit to use the same number of days right before the current period.
        previous_end: Last day of the comparison period, inclusive.
        group_column: Optional dimension (e.g. region) to break the change down by.
        period: The calendar period used for the default comparison: month, week, quarter or year.
        alpha: Significance level for the test on daily totals.
    """
    ctx = ctx or ToolContext()
    dates = parse_dates(data, date_column, ctx)
    values = require_numeric(data, value_column, ctx)
    keep = dates.notna() & values.notna()
    if not keep.any():
        raise ToolError(
            "insufficient_data",
            ctx.t("No rows with both a date and a value.", "没有同时具有日期和数值的行。"),
            hint=ctx.t("Check the date and value columns.", "请检查日期列和数值列。"),
        )
    dropped = int((~keep).sum())
    days, values = dates[keep].dt.normalize(), values[keep]
    first, last = days.min(), days.max()
    cs, ce, ps, pe = _windows(first, last, current_start, current_end, previous_start, previous_end, period, ctx)
    notes = []
    wins = {}
    for name, (a, b) in (("current", (cs, ce)), ("previous", (ps, pe))):
        ca, cb, n_days = _covered(a, b, first, last)
        zh_name = {"current": "当前", "previous": "上一"}[name]
        if n_days == 0:
            raise ToolError(
                "insufficient_data",
                ctx.t(
                    f"The {name} period {a.date()} to {b.date()} lies outside the data ({first.date()} to {last.date()}).",
                    f"{zh_name}周期 {a.date()} 至 {b.date()} 不在数据范围内（{first.date()} 至 {last.date()}）。",
                ),
                hint=ctx.t("Choose dates inside the data range.", "请选择数据范围内的日期。"),
            )
        if n_days < (b - a).days + 1:
            notes.append(
                ctx.t(
                    f"The data covers only {ca.date()} to {cb.date()} of the {name} period ({n_days} of {(b - a).days + 1} days); "
                    "its daily average uses the covered days.",
                    f"数据只覆盖{zh_name}周期的 {ca.date()} 至 {cb.date()}（{(b - a).days + 1} 天中的 {n_days} 天）；日均值按覆盖天数计算。",
                )
            )
        mask = (days >= ca) & (days < cb + pd.Timedelta(days=1))  # [start, end + 1 day)
        wins[name] = {"start": a, "end": b, "days": n_days, "mask": mask, "range": (ca, cb)}
    if cs <= pe and ps <= ce:
        notes.append(ctx.t("The two periods overlap.", "两个周期有重叠。"))
    m: dict = {
        "n_rows": int(keep.sum()),
        "current_start": str(cs.date()),
        "current_end": str(ce.date()),
        "previous_start": str(ps.date()),
        "previous_end": str(pe.date()),
    }
    daily = {}
    for name, w in wins.items():
        total = float(values[w["mask"]].sum())
        m.update(
            {
                f"total.{name}": total,
                f"days.{name}": w["days"],
                f"daily_avg.{name}": total / w["days"],
                f"rows.{name}": int(w["mask"].sum()),
            }
        )
        per_day = values[w["mask"]].groupby(days[w["mask"]]).sum()
        daily[name] = per_day.reindex(pd.date_range(*w["range"], freq="D"), fill_value=0.0).to_numpy()
    cur, prev = m["daily_avg.current"], m["daily_avg.previous"]
    m["change_abs"] = cur - prev
    m["change_pct"] = (cur / prev - 1) * 100 if prev else float("nan")
    m["total_change_pct"] = (
        (m["total.current"] / m["total.previous"] - 1) * 100 if m["total.previous"] else float("nan")
    )
    if min(len(daily["current"]), len(daily["previous"])) >= 3 and np.ptp(np.concatenate(list(daily.values()))) > 0:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            test = sps.ttest_ind(daily["current"], daily["previous"], equal_var=False)
        m.update(statistic=float(test.statistic), p_value=float(test.pvalue), alpha=alpha)
    breakdown = _breakdown(data, group_column, keep, wins, values, m, ctx) if group_column else pd.DataFrame()
    return _compare_result(m, breakdown, group_column, value_column, notes, dropped, ctx)


def _breakdown(data, group_column, keep, wins, values, m, ctx) -> pd.DataFrame:
    groups = data.loc[keep, group_column]
    if groups.nunique() > _MAX_GROUPS:
        raise ToolError(
            "wrong_column_type",
            ctx.t(
                f"{group_column!r} has {groups.nunique()} values, too many for a breakdown.",
                f"{group_column!r} 有 {groups.nunique()} 个取值，太多，无法细分。",
            ),
            hint=ctx.t("Use a dimension with fewer values.", "请使用取值更少的维度。"),
            column=group_column,
        )
    labels = groups.map({v: label(v) for v in groups.dropna().unique()}).fillna(ctx.t("(missing)", "（缺失）"))
    cols = {name: values[w["mask"]].groupby(labels[w["mask"]]).sum() / w["days"] for name, w in wins.items()}
    table = pd.DataFrame({"daily_avg_current": cols["current"], "daily_avg_previous": cols["previous"]}).fillna(0.0)
    table["change"] = table["daily_avg_current"] - table["daily_avg_previous"]
    table["change_pct"] = np.where(
        table["daily_avg_previous"] != 0,
        (table["daily_avg_current"] / table["daily_avg_previous"].replace(0, np.nan) - 1) * 100,
        np.nan,
    )
    total_change = m["change_abs"]
    table["share_of_change_pct"] = table["change"] / total_change * 100 if total_change else np.nan
    table = table.reindex(table["change"].abs().sort_values(ascending=False).index)
    for g, row in table.iterrows():
        m.update(
            {
                f"daily_avg.current.{g}": row["daily_avg_current"],
                f"daily_avg.previous.{g}": row["daily_avg_previous"],
                f"change_pct.{g}": row["change_pct"],
                f"share_of_change_pct.{g}": row["share_of_change_pct"],
            }
        )
    return table.reset_index(names=group_column)


def _compare_result(m, breakdown, group_column, value_column, notes, dropped, ctx) -> ToolResult:
    cur, prev, chg = m["daily_avg.current"], m["daily_avg.previous"], m["change_pct"]
    span = ctx.t(
        f"{m['current_start']} to {m['current_end']} ({m['days.current']} days) vs {m['previous_start']} to "
        f"{m['previous_end']} ({m['days.previous']} days)",
        f"{m['current_start']} 至 {m['current_end']}（{m['days.current']} 天）对比 {m['previous_start']} 至 "
        f"{m['previous_end']}（{m['days.previous']} 天）",
    )
    if chg != chg:
        move = ctx.t("the previous period had no value, so no % change", "上一周期没有数值，无法计算变化百分比")
    elif abs(chg) < 0.05:
        move = ctx.t("no change", "没有变化")
    else:
        move = ctx.t(
            f"{'up' if chg > 0 else 'down'} {abs(chg):.1f}%", f"{'上升' if chg > 0 else '下降'} {abs(chg):.1f}%"
        )
    reading = ctx.t(
        f"Per day, {value_column} averaged {fmt_num(cur)} in the current period and {fmt_num(prev)} in the previous one: {move} ({span}).",
        f"按日均计算，{value_column} 当前周期为 {fmt_num(cur)}，上一周期为 {fmt_num(prev)}：{move}（{span}）。",
    )
    insights = [reading]
    if m["days.current"] != m["days.previous"]:
        insights.append(
            ctx.t(
                f"The periods have different lengths, so totals ({fmt_num(m['total.current'])} vs {fmt_num(m['total.previous'])}, "
                f"{m['total_change_pct']:+.1f}%) would mislead; the comparison uses daily averages.",
                f"两个周期天数不同，直接比较总量（{fmt_num(m['total.current'])} 对 {fmt_num(m['total.previous'])}，"
                f"{m['total_change_pct']:+.1f}%）会产生误导；因此按日均值比较。",
            )
        )
    interpretation = reading + (" " + insights[1] if len(insights) > 1 else "")
    if "p_value" in m:
        interpretation += (
            " " + ctx.t("Comparing day by day, ", "逐日比较，") + p_sentence(m["p_value"], m["alpha"], ctx)
        )
    if len(breakdown) and breakdown.iloc[0]["change"] != 0:
        top = breakdown.iloc[0]
        share = top["share_of_change_pct"]
        driver = ctx.t(
            f"{group_column} {top[group_column]} moved most ({fmt_num(top['change'])} per day"
            + (f", {share:.0f}% of the change" if share == share else "")
            + ").",
            f"{group_column} 中 {top[group_column]} 变化最大（每天 {fmt_num(top['change'])}"
            + (f"，占变化的 {share:.0f}%" if share == share else "")
            + "）。",
        )
        insights.append(driver)
        interpretation += " " + driver
        insights += [
            ctx.t(
                f"{r[group_column]}: {fmt_num(r['daily_avg_previous'])} → {fmt_num(r['daily_avg_current'])} per day",
                f"{r[group_column]}：每天 {fmt_num(r['daily_avg_previous'])} → {fmt_num(r['daily_avg_current'])}",
            )
            for _, r in breakdown.head(10).iterrows()
        ]
    method = ctx.t(
        "Each period is the calendar window [start, end + 1 day); totals are divided by the calendar days the data covers "
        "(days without rows count as zero), and the change is the ratio of daily averages. Welch t-test on the daily totals.",
        "每个周期为日历窗口 [开始, 结束 + 1 天)；总量除以数据覆盖的日历天数（无数据的日子按 0 计），变化为日均值之比。对每日总量做 Welch t 检验。",
    )
    profile = ctx.t(
        f"{m['rows.current']} rows in the current period, {m['rows.previous']} in the previous.",
        f"当前周期 {m['rows.current']} 行，上一周期 {m['rows.previous']} 行。",
    )
    if dropped:
        profile += ctx.t(
            f" {dropped} rows without a date or value were left out.", f" 有 {dropped} 行缺少日期或数值，已排除。"
        )
    conclusion = ctx.t(
        f"Daily average {fmt_num(cur)} vs {fmt_num(prev)} ({chg:+.1f}%)"
        + (f"; Welch t on daily totals {fmt_p(m['p_value'])}." if "p_value" in m else "."),
        f"日均 {fmt_num(cur)} 对 {fmt_num(prev)}（{chg:+.1f}%）"
        + (f"；每日总量 Welch t 检验 {fmt_p(m['p_value'])}。" if "p_value" in m else "。"),
    )
    text = tagged_text(
        data_profile=profile,
        method=method,
        assumptions=notes,
        insights=insights,
        conclusion=conclusion,
        interpretation=interpretation,
    )
    return ToolResult(
        metrics=clean_metrics(m),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=m["rows.current"] + m["rows.previous"],
        table=breakdown if len(breakdown) else None,
        limitations=notes
        + [
            ctx.t(
                "Days without rows count as zero (e.g. closed days); a day-of-week mix difference between the periods can also move the average.",
                "没有数据的日子按 0 计（如休息日）；两个周期中星期构成的差异也会影响日均值。",
            )
        ],
    )


__all__ = ["compare_periods", "contribution_decomposition"]
