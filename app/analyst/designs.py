"""The built-in analyst's steps for the designs the question's reading finds (app.understanding):
a wide pair's change compared between groups or tested row by row (wide_pairs), the weekend
against the weekdays from a weekday or date column (weekdays: which column a weekend question
splits, `weekend_grouping`, `weekend_dates`, `made_weekend_column`). Each adds a data step that
makes a new version (derive_column) or a whole plan."""

from __future__ import annotations

from app.analyst.steps import Column, Plan, Step
from app.understanding.language import local_text as _t
from app.understanding.weekdays import asks_weekend, weekday_column, weekend_arguments, weekend_column, weekend_dataset
from app.understanding.wide_pairs import WidePair


def change_by_group(plan: Plan, pair: WidePair, dataset: str, zh: bool) -> str:
    """A prep step that adds the change (later - earlier) as a column of a new version of the dataset (not
    a second table, which would leave later questions two tables to choose from); the column's name,
    which the plan then compares across the groups."""
    name = f"{pair.first} - {pair.second}"
    plan.derived = dataset
    subject = _t(zh, f"Add the change {name}", f"新增变化量 {name}")
    arguments = {
        "new_column_name": name,
        "kind": "difference",
        "columns": [pair.first, pair.second],
        "output": plan.derived,
    }
    plan.steps.append(Step("derive_column", arguments, subject, evidence=False, prep=True))
    return name


def wide_pair_plan(pair: WidePair, zh: bool) -> Plan:
    """A paired test of the two columns, row by row: the difference is first - second."""
    a, b = pair.first, pair.second
    subject = _t(zh, f"Compare {a} with {b} on the same rows", f"同一行上比较{a}与{b}")
    return Plan(
        a,
        None,
        [
            Step("profile_dataset", {}, evidence=False),
            Step("paired_test", {"x_column": a, "y_column": b, "method": "t"}, subject),
        ],
        kind="paired",
    )


def weekend_versus_weekdays(plan: Plan, column: Column, dataset: str, zh: bool) -> str:
    """A prep step that adds "<day column>: weekend days or weekdays" as a new version; the new column's name.
    The weekend group leads the comparison's headline."""
    plan.derived = weekend_dataset(dataset, zh)
    arguments = weekend_arguments(column, plan.derived, zh)
    subject = _t(
        zh,
        f"Mark the weekend days (Saturday, Sunday) against the weekdays in {column['name']}",
        f"按{column['name']}把周末（周六、周日）和工作日分开",
    )
    plan.steps.append(Step("derive_column", arguments, subject, evidence=False, prep=True))
    plan.whole, plan.dimension, plan.values = column["name"], arguments["new_column_name"], []
    return plan.dimension


def weekend_by_date(plan: Plan, date: str, dataset: str, zh: bool) -> str:
    """With no weekday column, the weekend days and the weekdays from a date column (derive_column's
    date_part "weekend"); the new column's name."""
    plan.derived = weekend_dataset(dataset, zh)
    arguments = {
        "new_column_name": weekend_column(date, zh),
        "kind": "date_part",
        "columns": [date],
        "part": "weekend",
        "output": plan.derived,
    }
    subject = _t(
        zh,
        f"Mark the weekend days (Saturday, Sunday) against the weekdays from {date}",
        f"按{date}把周末（周六、周日）和工作日分开",
    )
    plan.steps.append(Step("derive_column", arguments, subject, evidence=False, prep=True))
    plan.whole, plan.dimension, plan.values = date, weekend_column(date, zh), []
    return weekend_column(date, zh)


def weekend_grouping(question: str, columns: list[Column], dimension: str | None, metric: str | None) -> Column | None:
    """The weekday column a question about the weekend splits ("Do we get more calls on weekends?"):
    the chosen grouping when it holds weekday names, else the only such column; None when none does."""
    if not (metric and asks_weekend(question)):
        return None
    days = [c for c in columns if weekday_column(c) and (c.get("levels") or 0) > 2 and c["name"] != metric]
    chosen = next((c for c in days if c["name"] == dimension), None)
    return chosen or (days[0] if len(days) == 1 else None)


def made_weekend_column(question: str, columns: list[Column], metric: str | None) -> tuple[str, str] | None:
    """The column it was made from and the weekend column a version made for an earlier weekend question
    already has ("Day: weekend days or weekdays", in either language): compared as it is, not made again."""
    if not (metric and asks_weekend(question)):
        return None
    names = [str(c["name"]) for c in columns]
    return next(
        ((base, name) for name in names for base in names for zh in (False, True) if name == weekend_column(base, zh)),
        None,
    )


def weekend_dates(question: str, columns: list[Column], metric: str | None, grain: str | None) -> str | None:
    """The date column a weekend question splits when no column names the days (weekend_grouping): data
    day by day (or finer) with one date column."""
    if not (metric and asks_weekend(question)) or any(weekday_column(c) for c in columns):
        return None
    if (grain or "").split(" ")[0] in ("weekly", "monthly", "quarterly", "yearly"):
        return None
    dates = [str(c["name"]) for c in columns if c["type"] == "datetime" and not c.get("pii")]
    return dates[0] if len(dates) == 1 else None
