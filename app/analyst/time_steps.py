"""Steps over time: the trend of a number and, when the question asks for the future, its forecast
as far ahead as it says (`add_time_steps`); the time of year it peaks (a seasonal pattern); and
the one year a question names, as a filter on the dated rows."""

from __future__ import annotations

from app.analyst.question_words import asks_trend
from app.analyst.steps import Arguments, Column, Condition, Plan, Step, date_column
from app.understanding.kinds import YEAR
from app.understanding.language import local_text as _t
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


def year_filter(question: str, columns: list[Column]) -> list[Condition]:
    """A year the question names ("2024年哪家门店…") on data with dates: only that year's rows."""
    date = date_column(columns)
    match = YEAR.search(question)
    if not (date and match):
        return []
    year = match.group(1)
    return [{"column": date, "op": "between", "value": [f"{year}-01-01", f"{year}-12-31"]}]
