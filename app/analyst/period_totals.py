"""Each calendar period's figure (issue 24): "How much did we make each month?", "按月看销售额", "每周的
订单数", "monthly revenue by shop". The dated rows are put in calendar periods by a new column (the
date_part machinery of time_steps.period_steps), then each period's total (its average for a level such
as a price or a rating; its number of rows when no measure is named and the question counts), kept in
time order, with the question's grouping beside the period when it names one. The headline lists the
periods in time order as people write them, names the highest and the lowest, and the change from the
first to the last.

Told apart from its neighbours by structure: an each/per/every/按/每 before a unit of time, a date
column, and no trend, forecast, season or superlative cue (those have their own plans)."""

from __future__ import annotations

import re
from typing import Any

from analysis_tools.common import fmt_num
from app.analyst.question_words import asks_trend, wants
from app.analyst.steps import Arguments, Column, Plan, Step
from app.analyst.time_steps import PERIOD_PARTS, PERIOD_WORDS, finer_rows, period_column_step
from app.analyst.totals import EACH_PERIOD
from app.analyst.vocabulary import period_aliases, period_units
from app.understanding.kinds import (
    AMOUNT_DONE,
    HOW_MANY,
    MEAN_WORDS,
    SEASON,
    asks_extreme,
    asks_share,
    asks_top,
    asks_total,
)
from app.understanding.language import local_text as _t
from app.understanding.profile_reading import is_level
from app.understanding.roles import asks_ahead, groups_rows

# the unit each period word stands for (vocabulary.toml period_units / period_aliases: "月" → month)
_UNIT_OF = {word: unit for unit, names in period_units().items() for word in names}
_UNIT_OF |= period_aliases()
# "按月", "按季度看", "by month": 按/by straight before a unit of time, a "per period" too; the units are the
# vocabulary's (period_units, period_aliases), the structure is here
_BY_UNIT = re.compile(r"(?:按\s*|\bby\s+)(" + "|".join(sorted(_UNIT_OF, key=len, reverse=True)) + r")s?(?![a-z])", re.I)
# the date_part each unit's column is made with, back to its unit (read_as reads the plan's steps)
UNIT_OF_PART = {part: unit for unit, part in PERIOD_PARTS.items()}


def _period_phrase(question: str) -> re.Match[str] | None:
    """Where the question names the period it goes through ("each month", "monthly", "每周", "按月")."""
    return EACH_PERIOD.search(question) or _BY_UNIT.search(question)


def per_period_unit(question: str) -> str:
    """The calendar unit a question goes through ("each month" → month, "每周" → week, "按月" → month,
    "monthly" → month); "" when it names none."""
    match = _period_phrase(question)
    said = next((g for g in match.groups() if g), "") if match else ""
    return _UNIT_OF.get(said, _UNIT_OF.get(said.lower(), ""))


def asks_per_period(question: str) -> str:
    """The unit when the question asks for each period's figure, listed: a unit after each/per/every/by/
    按/每, and no trend, forecast, season, share, top-N or superlative cue (their own plans answer those).
    The period's own words ("monthly", "按月") are no trend cue here: the words left are read for one."""
    unit = per_period_unit(question)
    match = _period_phrase(question)
    if not unit or match is None:
        return ""
    rest = f"{question[: match.start()]} {question[match.end() :]}"
    if asks_trend(rest) or SEASON.search(question) or asks_share(question):
        return ""
    if wants(question, "forecast") or asks_ahead(question):  # "接下来12个月每个月的…": the months ahead
        return ""
    if asks_extreme(question) or asks_top(question):
        return ""
    return unit


def period_total_steps(
    plan: Plan,
    question: str,
    date: str,
    dataset: str,
    columns: list[Column],
    zh: bool,
    group: str | None = None,
    counted: bool = False,
    grain: str | None = None,
) -> bool:
    """Each period's total of the plan's measure (its mean for a level, or when an average is asked; the
    rows per period when `counted`), by the period and, when the question names one, a grouping beside
    it. False when the question asks for no per-period figure, or for the average per period of a table
    with one row per period (`grain`, workspaces.time_grain: each row is already one period's figure)."""
    unit = asks_per_period(question)
    if not unit or unit not in PERIOD_PARTS:
        return False
    if grain and MEAN_WORDS.search(question) and not finer_rows(grain, unit):
        return False  # "平均每天的营业额" on one row a day: the average of the rows, each row is a day
    period = period_column_step(plan, date, dataset, columns, unit, zh)
    kinds = {c["name"]: c for c in columns}
    beside = [group] if group and group in kinds and group != date and groups_rows(kinds[group]) else []
    metric = plan.metric or ""
    plan.kind, plan.dimension, plan.top = "total", period, None
    each, every_zh = PERIOD_WORDS[unit].each, PERIOD_WORDS[unit].every_zh
    if counted or not metric:
        plan.metric = None
        subject = _t(zh, f"Rows per {each}", f"{every_zh}的行数")
        totals: Arguments = {"group_columns": [period, *beside]}
    elif averages_periods(question) and not is_level(metric, columns):
        _average_of_period_totals(plan, metric, period, beside, unit, zh)
        plan.dimension = beside[0] if beside else None  # the groups compared; the period is averaged over
        return True
    else:
        # a level (a price, a score) is averaged over a period, unless the question asks how much was done
        level = is_level(metric, columns) and not (AMOUNT_DONE.search(question) or asks_total(question))
        agg = "mean" if MEAN_WORDS.search(question) or level else "sum"
        word = _t(zh, "Average" if agg == "mean" else "Total", "平均" if agg == "mean" else "合计")
        subject = _t(zh, f"{word} {metric} per {each}", f"{every_zh}的{metric}{word}")
        totals = {"group_columns": [period, *beside], "value_columns": [metric], "agg": agg}
    if beside:
        subject += _t(zh, f" and {beside[0]}", f"（按{beside[0]}分）")
    plan.steps.append(Step("group_aggregate", totals, subject))
    return True


def averages_periods(question: str) -> bool:
    """Whether the period is what the question averages over: a word of the mean before the period it names
    ("平均每月的营业额", "average monthly revenue", "average revenue per month": each month's total, then their
    average), not after it ("每个月的平均营业额", "each month's average": each month's own average, listed)."""
    mean, period = MEAN_WORDS.search(question), _period_phrase(question)
    return mean is not None and period is not None and mean.start() < period.start()


def _average_of_period_totals(plan: Plan, metric: str, period: str, beside: list[str], unit: str, zh: bool) -> None:
    """Each period's total of the measure (by the grouping beside it too), a side table, then the average of
    those totals over the periods, per group: "每个门店平均每月的营业额" is each store's mean monthly total, not
    its mean row (a store with two rows in a month has one monthly total)."""
    by_period = str(plan.derived)
    totals: Arguments = {"dataset": by_period, "group_columns": [period, *beside], "value_columns": [metric]}
    plan.steps.append(Step("group_aggregate", totals | {"agg": "sum"}, "", evidence=False, prep=True))
    plan.derived = (
        f"{by_period}_summary"  # the name group_aggregate's side table is stored under (analysis_tools.tables)
    )
    each, every_zh = PERIOD_WORDS[unit].each, PERIOD_WORDS[unit].every_zh
    subject = _t(zh, f"Average {metric} per {each}", f"平均{every_zh}的{metric}")
    if beside:
        subject += _t(zh, f" by {beside[0]}", f"（按{beside[0]}分）")
    averaged: Arguments = {
        "dataset": plan.derived,
        "group_columns": beside,
        "value_columns": [f"{metric}_sum"],
        "agg": "mean",
    }
    plan.steps.append(Step("group_aggregate", averaged, subject))


def averaged_period_unit(plan: Plan) -> str:
    """The unit when the plan averages each period's totals (`_average_of_period_totals`); "" otherwise."""
    steps = [s for s in plan.steps if s.tool == "group_aggregate"]
    if len(steps) != 2 or steps[1].arguments.get("agg") != "mean" or not steps[0].prep:
        return ""
    return _period_unit_of(plan, steps[0])


def _period_unit_of(plan: Plan, step: Step) -> str:
    """The unit of the date_part column a group_aggregate step groups by first; "" when it groups by none."""
    made = {
        s.arguments.get("new_column_name"): s.arguments.get("part")
        for s in plan.steps
        # not season_steps' month column, written onto the table itself for "which month was busiest"
        if s.tool == "derive_column" and s.arguments.get("kind") == "date_part" and not s.arguments.get("overwrite")
    }
    grouped = step.arguments.get("group_columns") or []
    part = made.get(grouped[0]) if grouped else None
    return UNIT_OF_PART.get(str(part), "") if part else ""


def averaged_periods_headline(plan: Plan, metrics: dict[str, Any], zh: bool) -> str | None:
    """'Average 营业额 per month by 门店 (each month's total, averaged): 上海店 862,332; …' / '平均每个月的营业额
    （每月合计的平均，按 门店 分）：上海店 862,332；…'; the one average when no grouping is beside the period."""
    unit = averaged_period_unit(plan)
    step = [s for s in plan.steps if s.tool == "group_aggregate"][-1]
    value = str(step.arguments["value_columns"][0])
    metric, group = value[: -len("_sum")], (step.arguments.get("group_columns") or [None])[0]
    main = f"{value}_mean."
    figures = [
        (k[len(main) :], float(v)) for k, v in metrics.items() if k.startswith(main) and isinstance(v, (int, float))
    ]
    if not unit or not figures:
        return None
    each, every_zh = PERIOD_WORDS[unit].each, PERIOD_WORDS[unit].every_zh
    if group is None:
        shown = fmt_num(figures[0][1])
        periods = fmt_num(metrics.get("n"))
        return _t(
            zh,
            f"Average {metric} per {each}: {shown} (the total of each of {periods} {each}s, averaged).",
            f"平均{every_zh}的{metric}：{shown}（共 {periods} 期，各期合计后的平均）。",
        )
    listed = ("；" if zh else "; ").join(f"{label} {fmt_num(v)}" for label, v in figures)
    return _t(
        zh,
        f"Average {metric} per {each} by {group} (each {each}'s total, averaged): {listed}.",
        f"平均{every_zh}的{metric}（各期合计后取平均，按 {group} 分）：{listed}。",
    )


def is_period_totals(plan: Plan) -> str:
    """The unit when the plan lists each period's figure (a date_part column made and totalled by it);
    "" otherwise."""
    first = next((s for s in plan.steps if s.tool == "group_aggregate"), None)
    if first is None or averaged_period_unit(plan):  # the periods' totals averaged: not listed period by period
        return ""
    return _period_unit_of(plan, first)


def period_totals_headline(metric: str | None, agg: str, metrics: dict[str, Any], unit: str, zh: bool) -> str | None:
    """'Total Sales (£) per month: Jan 2024 1,234; Feb 2024 1,100; …. Highest: Mar 2024 (1,500); lowest:
    Feb 2024 (1,100); from Jan 2024 to Oct 2024 it went from 1,234 to 1,400 (+13.4%).' The labels are
    the tool's ("2024-03"); as_people_write turns them into the sheet's own way of writing a month."""
    main = f"{metric}_{agg}." if metric else "n_rows."
    figures = {
        k[len(main) :]: float(v)
        for k, v in metrics.items()
        if k.startswith(main) and k != f"{main}total" and isinstance(v, (int, float))
    }
    if not figures:
        return None
    grouped = any(" | " in label for label in figures)
    ordered = sorted(figures.items())  # the labels (2024-03, 2024-Q1, 2024-W05, 2024) sort in time order
    listed = ("；" if zh else "; ").join(f"{label} {fmt_num(v)}" for label, v in ordered)
    words = PERIOD_WORDS.get(unit, PERIOD_WORDS["month"])
    each, every_zh = words.each, words.every_zh
    if zh:
        what = "行数" if not metric else f"{metric}{'平均' if agg == 'mean' else '合计'}"
        head = f"{every_zh}的{what}：{listed}"
    else:
        what = "rows" if not metric else f"{'average' if agg == 'mean' else 'total'} {metric}"
        head = f"{what[0].upper()}{what[1:]} per {each}: {listed}"
    shown = int(metrics.get("n_groups") or 0)
    if shown > len(ordered):  # the tool reads out the largest groups only: say so, and name no lowest
        return head + _t(
            zh, f" (the {len(ordered)} largest of {shown}).", f"（{shown} 个中最大的 {len(ordered)} 个）。"
        )
    if grouped or len(ordered) < 2:
        return head + ("。" if zh else ".")
    high = max(ordered, key=lambda item: item[1])
    low = min(ordered, key=lambda item: item[1])
    (first, start), (last, end) = ordered[0], ordered[-1]
    change = f" ({(end - start) / abs(start):+.1%})" if start else ""
    if zh:
        return (
            f"{head}。最高是 {high[0]}（{fmt_num(high[1])}），最低是 {low[0]}（{fmt_num(low[1])}）；"
            f"从 {first} 到 {last}，由 {fmt_num(start)} 变为 {fmt_num(end)}{change.replace(' (', '（').replace(')', '）')}。"
        )
    return (
        f"{head}. Highest: {high[0]} ({fmt_num(high[1])}); lowest: {low[0]} ({fmt_num(low[1])}); "
        f"from {first} to {last} it went from {fmt_num(start)} to {fmt_num(end)}{change}."
    )


# A count by its structure: Chinese "<thing>数" (订单数, 人数: the number of things; not 数据/数值/数字/数量,
# which are data, values, digits, a quantity column) and the English "number of <things>".
_COUNT_OF = re.compile(r"(?<=[\u4e00-\u9fff])数(?![据值字量])|\bnumber of\b", re.I)


def counted_per_period(question: str, metric: str | None, chosen: str | None, named: list[str]) -> bool:
    """Whether the figure per period is its number of rows: the question names no measure (the plan's is
    a default) and asks how many ("how many orders each week", "每周的订单数")."""
    return not (chosen or metric in named) and bool(HOW_MANY.search(question) or _COUNT_OF.search(question))


def period_label(plan: Plan, zh: bool) -> str | None:
    """How the periods a plan made from the dates and groups by are said in a sentence ("months", "月份"),
    for its column's name ("Month", "月份 月份" beside a column 月份); None when it groups by no such period."""
    made = next(
        (s.arguments for s in plan.steps if s.prep and s.arguments.get("new_column_name") == plan.dimension), None
    )
    unit = UNIT_OF_PART.get(str(made.get("part"))) if made and made.get("kind") == "date_part" else None
    if not unit:
        return None
    each, name = PERIOD_WORDS[unit].each, PERIOD_WORDS[unit].label_zh
    return name if zh else f"{each}s"


def period_reading(plan: Plan, zh: bool) -> str:
    """How a period plan was read (reading.read_as): "the month with the highest total Sales" / "按月比较
    Sales 的合计，取最高的月份" for the period ranked (time_steps.period_steps), "the total Sales of each
    month" / "每个月的 Sales 合计" for each period's figure listed; "" for other plans."""
    m = plan.metric
    if plan.kind == "period":
        part = next((s.arguments.get("part") for s in plan.steps if s.tool == "derive_column"), None)
        unit = UNIT_OF_PART.get(str(part), "")
        ranked = next((s.arguments for s in plan.steps if s.tool == "rank_values"), {})
        mean, bottom = ranked.get("agg") == "mean", ranked.get("order") == "smallest"
        if not (unit and m):
            return ""
        each, by, name = PERIOD_WORDS[unit].each, PERIOD_WORDS[unit].by_zh, PERIOD_WORDS[unit].label_zh
        if zh:
            return f"按{by}比较 {m} 的{'平均值' if mean else '合计'}，取{'最低' if bottom else '最高'}的{name}"
        return f"the {each} with the {'lowest' if bottom else 'highest'} {'average' if mean else 'total'} {m}"
    if averaged := averaged_period_unit(plan):  # "每个门店平均每月的营业额": each period's total, averaged
        each, every_zh = PERIOD_WORDS[averaged].each, PERIOD_WORDS[averaged].every_zh
        if zh:
            return f"{every_zh}的 {m} 合计，再取平均" + (f"（按 {plan.dimension} 分）" if plan.dimension else "")
        return f"the total {m} of each {each}, averaged" + (f" by {plan.dimension}" if plan.dimension else "")
    unit = is_period_totals(plan)
    if plan.kind != "total" or not unit:
        return ""
    agg = next((s.arguments.get("agg", "sum") for s in plan.steps if s.tool == "group_aggregate"), "sum")
    grouped = next((s.arguments.get("group_columns") or [] for s in plan.steps if s.tool == "group_aggregate"), [])
    beside = grouped[1] if len(grouped) > 1 else ""
    each, every_zh = PERIOD_WORDS[unit].each, PERIOD_WORDS[unit].every_zh
    if zh:
        what = f"{m} {'平均值' if agg == 'mean' else '合计'}" if m else "行数"
        return f"{every_zh}的 {what}" + (f"（按 {beside} 分）" if beside else "")
    what = f"the {'average' if agg == 'mean' else 'total'} {m}" if m else "the number of rows"
    return f"{what} of each {each}" + (f" by {beside}" if beside else "")
