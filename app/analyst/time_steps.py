"""Steps over time: the trend of a number and, when the question asks for the future, its forecast
as far ahead as it says (`add_time_steps`); the time of year it peaks (a seasonal pattern); and
the one year a question names, as a filter on the dated rows."""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple

from app.analyst.question_words import asks_trend
from app.analyst.rankings import WHEN
from app.analyst.steps import Arguments, Column, Condition, Plan, Step, date_column
from app.analyst.totals import each_period_unit, period_unit_named, ranked_period_unit
from app.understanding.kinds import MEAN_WORDS, SEASON, YEAR, asks_extreme
from app.understanding.language import local_text as _t
from app.understanding.named_months import Months, Recent, Relative, named_months, recent_stretch, relative_period
from app.understanding.profile_reading import is_level
from app.understanding.roles import forecast_arguments, forecast_request
from app.understanding.text import is_cjk


def add_time_steps(
    plan: Plan, question: str, forecast: bool, grain: str | None, columns: list[Column], metric: str, zh: bool
) -> bool:
    """Trend (and forecast, when `asks_for` says so) steps when the question is about time and there
    is a date column. The forecast goes as far ahead as the question asks ("the next three months");
    the tool's default (one seasonal cycle) when it does not say."""
    column = next((c for c in columns if c["type"] == "datetime" and not c.get("pii")), None)
    if column is None or not (asks_trend(question) or forecast):
        return False
    date = str(column["name"])
    subject = _t(zh, f"How {metric} changes over time", f"{metric}随时间的变化")
    level = {"agg": "mean"} if is_level(metric, columns) else {}  # a week's satisfaction is its average, not its sum
    plan.steps.append(Step("time_series_trend", {"date_column": date, "value_column": metric, **level}, subject))
    plan.steps.append(Step("plot_line", {"x_column": date, "y_column": metric}, evidence=False))
    if forecast:
        subject = _t(zh, f"Forecast {metric}", f"预测{metric}")
        arguments: Arguments = {"date_column": date, "value_column": metric, **level}
        if request := forecast_request(question):
            arguments.update(forecast_arguments(request, grain, column.get("span_days")))
        plan.steps.append(Step("forecast", arguments, subject))
    return True


SEASON_DAYS = 730  # a seasonal pattern needs two whole years (seasonal_decompose refuses less)


def season_steps(plan: Plan, date: str, zh: bool, columns: list[Column] | None = None, dataset: str = "") -> None:
    """Which time of year the number peaks ("每年哪个月最多"): the month of the year, from the seasonal
    pattern. Data that covers less than two years has no pattern to find: "which month was busiest"
    then asks which calendar month had the highest total (a month column, then the totals per month)."""
    metric = plan.metric or ""
    span = next((c.get("span_days") for c in columns or [] if c["name"] == date), None)
    if span is not None and span < SEASON_DAYS and dataset:
        month = f"{date}（月份）" if any(is_cjk(c) for c in date) else f"{date} (month)"  # the sheet's language
        derive = {"new_column_name": month, "kind": "date_part", "columns": [date], "part": "year_month"}
        subject = _t(zh, f"The month of each {date}", f"{date}所在的月份")
        plan.steps.append(
            Step("derive_column", {**derive, "output": dataset, "overwrite": True}, subject, evidence=False, prep=True)
        )
        plan.kind, plan.dimension, plan.derived = "total", month, dataset
        totals = {"group_columns": [month], "value_columns": [metric], "agg": "sum"}
        plan.steps.append(Step("group_aggregate", totals, _t(zh, f"Total {metric} per month", f"每月{metric}合计")))
        return
    plan.kind = "seasonal"
    subject = _t(zh, f"Which time of year {metric} peaks", f"{metric}在一年中的高峰和低谷")
    plan.steps.append(Step("seasonal_decompose", {"date_column": date, "value_column": metric}, subject))
    plan.steps.append(Step("plot_line", {"x_column": date, "y_column": metric}, evidence=False))


def time_filter(question: str, columns: list[Column]) -> list[Condition]:
    """The time a question names on data with dates, as a filter on the dated rows: a year ("2024年哪家门店…"),
    a month or months ("in March", "3月份", "March 2024", "三月到五月") or a quarter ("in Q2", "第二季度").
    A month without its year is taken in the data's own year; in its latest year where the dates cover
    several (the filter is shown in the answer's "Read as", one click from another reading)."""
    date = date_column(columns)
    if not date:
        return []
    year = YEAR.search(question)
    months = named_months(question)
    column = next(c for c in columns if c["name"] == date)
    if months is None and (recent := recent_stretch(question)):
        return _recent_filter(date, column, recent)
    relative = None if year or (months and months.year) else relative_period(question)
    if relative and any(relative.said.lower() in str(c["name"]).lower() for c in columns):
        relative = None  # "Visits Last Month": the words name a column, not a period to keep
    if relative and (months is None or relative.unit == "Y"):  # "去年", "上个月"; "去年3月": March of that year
        period = relative_span(relative, column)
        if period is None:
            return []
        if months is None:
            return [{"column": date, "op": "between", "value": list(period)}]
        year = None
        months = Months(months.first, months.last, int(period[0][:4]), months.span)
    if months is None:
        return (
            [{"column": date, "op": "between", "value": [f"{year.group(1)}-01-01", f"{year.group(1)}-12-31"]}]
            if year
            else []
        )
    said = months.year or (int(year.group(1)) if year else None)
    taken = said or _latest_year_with(months, column)
    if taken is None:
        return []
    return [{"column": date, "op": "between", "value": [f"{taken}-{months.first:02d}", f"{taken}-{months.last:02d}"]}]


_MONTHS_PER = {"M": 1, "Q": 3, "Y": 12}
_DAYS_PER = {"D": 1, "W": 7}


def _recent_filter(date: str, column: Column, recent: Recent) -> list[Condition]:
    """The data's latest stretch ("the last 3 months", "最近30天"), counted back from its last date: whole
    months for months, quarters and years, days for days and weeks; none where the last date is not known."""
    try:
        last = dt.date.fromisoformat(str(column.get("last") or ""))
    except ValueError:
        return []
    if recent.unit in _DAYS_PER:
        first = last - dt.timedelta(days=recent.count * _DAYS_PER[recent.unit] - 1)
        return [{"column": date, "op": "between", "value": [first.isoformat(), last.isoformat()]}]
    back = recent.count * _MONTHS_PER[recent.unit] - 1
    year, month = divmod(last.year * 12 + last.month - 1 - back, 12)
    return [{"column": date, "op": "between", "value": [f"{year}-{month + 1:02d}", f"{last.year}-{last.month:02d}"]}]


def relative_span(relative: Relative, column: Column) -> tuple[str, str] | None:
    """The first and last of the calendar period a question names relative to now ("去年", "last month",
    "本季度"), counted back from the column's last date: its year, quarter or month, `back` of them before.
    A year as its first and last day (2023-01-01, 2023-12-31), a quarter or a month as its months (2024-07,
    2024-09). None where the last date is not known."""
    try:
        last = dt.date.fromisoformat(str(column.get("last") or "")[:10])
    except ValueError:
        return None
    if relative.unit == "Y":
        year = last.year - relative.back
        return f"{year}-01-01", f"{year}-12-31"
    size = _MONTHS_PER[relative.unit]
    start = (last.year * 12 + last.month - 1) // size * size - relative.back * size  # the period's first month
    first, end = divmod(start, 12), divmod(start + size - 1, 12)
    return f"{first[0]}-{first[1] + 1:02d}", f"{end[0]}-{end[1] + 1:02d}"


def _latest_year_with(months: Months, column: Column) -> int | None:
    """The latest year of the column's dates (its profiled first and last) that holds the named months; None
    where the dates are not known or hold them in no year."""
    first, last = str(column.get("first") or ""), str(column.get("last") or "")
    if not (first[:4].isdigit() and last[:4].isdigit()):
        return None
    for year in range(int(last[:4]), int(first[:4]) - 1, -1):
        if f"{year}-{months.first:02d}" <= last[:7] and f"{year}-{months.last:02d}" >= first[:7]:
            return year
    return None


# The period a "which month / which quarter / which year" question ranks: the words of its cue say
# which (totals.period_unit_named); "each year", "每年" asks for the time of year instead (season_steps).
PERIOD_PARTS = {"year": "year", "quarter": "quarter", "month": "year_month", "week": "week", "day": "date"}


class UnitWords(NamedTuple):
    """How one unit of time is said, in the plans that put dated rows in calendar periods."""

    column: tuple[str, str]  # the made column's name (English, Chinese): Month / 月份
    each: str  # "the total of each month"
    every_zh: str  # 每个月的合计
    by_zh: str  # 按月比较
    label_zh: str  # 取最高的月份 (a day is 日期 here, 日 as a column)
    plural: str  # "The data covers 4 months"
    count_zh: str  # 数据覆盖 4 个月


PERIOD_WORDS = {
    "year": UnitWords(("Year", "年份"), "year", "每年", "年", "年份", "years", "年"),
    "quarter": UnitWords(("Quarter", "季度"), "quarter", "每个季度", "季度", "季度", "quarters", "个季度"),
    "month": UnitWords(("Month", "月份"), "month", "每个月", "月", "月份", "months", "个月"),
    "week": UnitWords(("Week", "周"), "week", "每周", "周", "周", "weeks", "周"),
    "day": UnitWords(("Day", "日"), "day", "每天", "日", "日期", "days", "天"),
}
_ORDER = ("day", "week", "month", "quarter", "year")  # finest first; the table's grain words are these + "ly"


def finer_rows(grain: str | None, unit: str) -> bool:
    """Whether the table's rows are finer than the unit (daily rows for "which year"), or several share a
    date: then a period's figure adds up many rows. A table of one row per period ranks its rows."""
    if not grain:  # irregular or unknown (a year read from numbers): the rows as they are
        return False
    if "several" in grain:
        return True
    base = next((u for u in _ORDER if grain.startswith(("dai" if u == "day" else u))), None)
    return base is None or _ORDER.index(base) < _ORDER.index(unit)


def period_steps(
    plan: Plan, question: str, date: str, dataset: str, columns: list[Column], grain: str | None, zh: bool
) -> bool:
    """ "Which month had the highest revenue", "哪个月的营业额最高", "which year sold the most" on daily rows:
    the dated rows put in calendar periods by a new column, each period's total (its average for a level
    such as a price or a rating, or when an average is asked), and the periods ranked. False when the
    question asks for the time of year (each year), names no period, asks for no highest or lowest, or
    names a period its rows already are (one row a year: the rows are ranked, rankings.when_steps)."""
    metric = plan.metric or ""
    extreme = asks_extreme(question, metric)
    cue = SEASON.search(question) or WHEN.search(question)
    if not (metric and extreme and cue) or each_period_unit(question) in ("year", "年"):
        return False
    unit = period_unit_named(cue.group(0))
    if unit not in PERIOD_PARTS or (unit not in ("month", "quarter") and not finer_rows(grain, unit)):
        return False
    _ranked_periods(plan, question, date, dataset, columns, unit, (1, extreme == "least"), zh)
    return True


def top_period_steps(
    plan: Plan, question: str, date: str, dataset: str, columns: list[Column], top: tuple[int, bool], zh: bool
) -> bool:
    """ "Top 3 months by orders", "订单最多的三个月": the N calendar periods the question counts (a unit of
    time right after its number), ranked by their totals (their averages for a level), as periods_steps
    ranks one. False when the number counts no unit of time, or counts a span ("前三个月", "the last 3
    months": a time filter)."""
    unit = ranked_period_unit(question)
    if not plan.metric or unit not in PERIOD_PARTS:
        return False
    _ranked_periods(plan, question, date, dataset, columns, unit, top, zh)
    plan.kind = "top"
    return True


def _ranked_periods(
    plan: Plan,
    question: str,
    date: str,
    dataset: str,
    columns: list[Column],
    unit: str,
    top: tuple[int, bool],
    zh: bool,
) -> None:
    """The calendar periods of `unit` made from the date and ranked by the measure's total (its average for a
    level, or when an average is asked): the first `top[0]` (the last, for a bottom N), three at least."""
    metric = plan.metric or ""
    period = period_column_step(plan, date, dataset, columns, unit, zh)
    agg = "mean" if MEAN_WORDS.search(question) or is_level(metric, columns) else "sum"
    (n, bottom), word, word_zh = top, "average" if agg == "mean" else "total", "平均" if agg == "mean" else "合计"
    plan.kind, plan.dimension, plan.top = "period", period, top
    subject = _t(
        zh,
        f"The {period.lower()} with the {'lowest' if bottom else 'highest'} {word} {metric}"
        if n == 1
        else f"The {'bottom' if bottom else 'top'} {n} by {word} {metric}",
        f"{metric}{word_zh}{'最低' if bottom else '最高'}的{period if n == 1 else f'{n}个{period}'}",
    )
    ranked: Arguments = {
        "value_column": metric,
        "top": n if n > 1 else 3,  # the one period, and the next two beside it
        "order": "smallest" if bottom else "largest",
        "group_column": period,
        "agg": agg,
    }
    plan.steps.append(Step("rank_values", ranked, subject))


def period_column_step(plan: Plan, date: str, dataset: str, columns: list[Column], unit: str, zh: bool) -> str:
    """The prep step that puts each dated row in its calendar period (a new column on a derived copy of
    the dataset, which becomes the plan's `derived`); the new column's name (kept clear of a column of
    the same name: "月份 月份" is "下单日期 月份")."""
    period = _t(zh, *PERIOD_WORDS[unit].column)
    period = f"{date} {period}" if period in {c["name"] for c in columns} else period
    plan.derived = f"{dataset}_按{PERIOD_WORDS[unit].column[1]}" if zh else f"{dataset}_by_{unit}"
    arguments: Arguments = {
        "new_column_name": period,
        "kind": "date_part",
        "columns": [date],
        "part": PERIOD_PARTS[unit],
        "output": plan.derived,
    }
    subject = _t(zh, f"Put each row of {date} in its {period.lower()}", f"按{date}把每行归入{period}")
    plan.steps.append(Step("derive_column", arguments, subject, evidence=False, prep=True))
    return period
