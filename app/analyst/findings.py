"""What a tool's result says, in plain words that answer the question: the headline for the tool and
the question's kind (headlines.py), else the tool's own interpretation or conclusion; a comparison's
finding adds each group's average. Read from the result as data (analysis_tools.ResultRecord)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from analysis_tools import ResultRecord
from analysis_tools.common import fmt_num
from analysis_tools.tables import table_name
from app.analyst.date_span import span_headline
from app.analyst.headlines import (
    change_headline,
    dedupe_headline,
    derive_headline,
    drivers_headline,
    extreme_headline,
    forecast_headline,
    grand_total_headline,
    group_averages_headline,
    missing_headline,
    named_group_headline,
    named_total_headline,
    pair_total_headline,
    paired_headline,
    period_headline,
    proportion_headline,
    rank_headline,
    ranked_groups_headline,
    relationship_headline,
    rows_share_headline,
    share_headline,
    total_headline,
    two_group_headline,
    wide_paired_headline,
)
from app.analyst.period_totals import (
    averaged_period_unit,
    averaged_periods_headline,
    is_period_totals,
    period_label,
    period_totals_headline,
)
from app.analyst.scope import describe_conditions
from app.analyst.sheet_words import as_people_write, as_percents, column_values, says_no, says_yes, used_columns
from app.analyst.steps import Plan, Step
from app.understanding.kinds import asks_extreme, asks_group_averages
from app.understanding.period_groups import calendar_order
from app.understanding.wide_pairs import marked_pairs
from app.understanding.words import code_word

COMPARISONS = ("compare_groups", "compare_two_groups")


def finding(step: Step, result: ResultRecord, zh: bool, plan: Plan | None = None, question: str = "") -> str:
    """The step's plain-language reading, with group averages for comparisons."""
    return _in_percents(_finding(step, result, zh, plan, question), step, result, plan)


def _in_percents(text: str, step: Step, result: ResultRecord, plan: Plan | None) -> str:
    """A rate kept as a fraction (plan.percents: 退货率 0.056) said as a percentage, 5.6%."""
    measured = used_columns(step.arguments) & (plan.percents if plan else frozenset())
    for column in measured:
        text = as_percents(text, column_values(result.metrics, column))
    return text


def _finding(step: Step, result: ResultRecord, zh: bool, plan: Plan | None, question: str) -> str:
    text = plain_reading(step, result, zh, plan, question)
    means = _means(result.metrics)
    # named_group_headline lists them all; two_group_headline says both to five digits (3.0367, not 3.037) — but a
    # group the question named in its own words ("women" of Female) is listed so ("Female (women) 165.7")
    every_mean_said = all(
        (fmt_num(v) in text or fmt_num(v, 5) in text)
        and (_named(g, question, zh) == g or _named(g, question, zh) in text)
        for g, v in means.items()
    )
    if step.tool in COMPARISONS and means and not every_mean_said:
        # periods (1月..6月, Q1..Q4) in calendar order, as the totals' headline lists them; other groups by size
        in_time = calendar_order(list(means))
        ranked = [(g, means[g]) for g in in_time] if in_time else sorted(means.items(), key=lambda kv: -kv[1])
        listed = ("，" if zh else ", ").join(f"{_named(g, question, zh)} {fmt_num(v)}" for g, v in ranked)  # 862,332
        text += f"（各组平均值：{listed}）" if zh else f" (averages: {listed})"
    return _as_people_write(text, step, zh, plan)


def plain_reading(step: Step, result: ResultRecord, zh: bool, plan: Plan | None = None, question: str = "") -> str:
    """What a result says, in plain words that answer the question (headlines.py), else the
    tool's own interpretation: a regression names its strongest factor with its effect in units, a
    forecast gives every period with its interval, a rate comparison the rates, totals the shares."""
    headline = HEADLINES[step.tool](step, result, zh, plan, question) if step.tool in HEADLINES else None
    return _as_people_write(headline or result.interpretation or result.conclusion, step, zh, plan)


def _as_people_write(text: str, step: Step, zh: bool, plan: Plan | None) -> str:
    """The sheet's own yes/no words for the step's yes/no columns, dates as people write them."""
    if not text:
        return text
    return as_people_write(
        text, zh, plan.sheet_words if plan else {}, used_columns(step.arguments), plan.grain if plan else None
    )


Headline = Callable[[Step, ResultRecord, bool, Plan | None, str], str | None]


def _drivers(step: Step, result: ResultRecord, zh: bool, plan: Plan | None, question: str) -> str | None:
    return drivers_headline(step.arguments["target_column"], result.metrics, zh)


def _forecast(step: Step, result: ResultRecord, zh: bool, plan: Plan | None, question: str) -> str | None:
    return forecast_headline(step.arguments["value_column"], result.metrics, zh)


def _rates(step: Step, result: ResultRecord, zh: bool, plan: Plan | None, question: str) -> str | None:
    arguments = step.arguments
    if not arguments.get("group_column"):
        return None
    outcome = arguments.get("success_value") or arguments["value_column"]  # "the Admitted rate"
    if not arguments.get("success_value") and plan is not None and outcome in plan.sheet_words:
        outcome = f"{outcome} = True"  # the rate of its yes, in the sheet's own word (as_people_write: 是否及格 = 是)
    if failures := arguments.get("failures_column"):  # "the ncases/(ncases+ncontrols) rate"
        outcome = f"{outcome}/({outcome}+{failures})"
    first = _one_group_against_others(arguments["group_column"], plan)
    yes = None if first else _named_yes_group(arguments["group_column"], result.metrics, plan)
    asked = _asked_group(arguments["group_column"], plan)
    return proportion_headline(outcome, arguments["group_column"], result.metrics, zh, first or yes, bool(yes), asked)


def _asked_group(column: str, plan: Plan | None) -> str | None:
    """The one group of the compared column the question names ("赵阿姨的好评率是多少"): its rate and its place
    are told after the ranking."""
    if plan is None or plan.dimension != column or len(plan.values) != 1:
        return None
    return str(plan.values[0])


def _named_yes_group(column: str, metrics: dict[str, Any], plan: Plan | None) -> str | None:
    """The yes of a yes/no grouping the question names ("are members who have a personal trainer less
    likely to cancel": Personal Trainer? = Yes): the group it asks about, so the answer says how its rate
    stands against the other's ("lower for Yes: 7.3% vs 25.1%"), not only which is highest. None for a
    grouping the question does not name (a default) or one that is not yes/no."""
    groups = [k.split(".", 1)[1] for k in metrics if k.startswith("proportion.")]
    if plan is None or plan.provenance is None or len(groups) != 2:
        return None
    if any(s.role == "group" and column in s.columns for s in plan.provenance.defaults()):
        return None
    yes = [g for g in groups if says_yes(g)]
    return yes[0] if len(yes) == 1 and any(says_no(g) for g in groups) else None


def _totals(step: Step, result: ResultRecord, zh: bool, plan: Plan | None, question: str) -> str | None:
    arguments = step.arguments
    if plan is not None and plan.kind == "span":  # "数据有几年": the calendar periods the dates cover
        return span_headline(plan, result.metrics, zh)
    if plan is not None and averaged_period_unit(plan):  # "平均每月的营业额": each month's total, averaged
        return averaged_periods_headline(plan, result.metrics, zh)
    if plan is not None and (unit := is_period_totals(plan)):  # "每个月卖了多少钱": the periods in time order
        values = arguments.get("value_columns") or [None]
        return period_totals_headline(values[0], arguments.get("agg", "sum"), result.metrics, unit, zh)
    if not arguments.get("value_columns"):
        return None
    metric, group = arguments["value_columns"][0], arguments["group_columns"][0]
    if plan is not None and plan.kind == "total" and not plan.top:
        if _groups_assumed(plan, group, question):
            # "what was the total revenue (in March)?": the one total asked leads; the groups only break it down
            return grand_total_headline(metric, group, result.metrics, zh)
        # "北京店的广告费用一共多少？": the group asked about leads, the others beside it
        if len(plan.values) == 1 and (named := named_total_headline(metric, str(plan.values[0]), result.metrics, zh)):
            return named
        # "东门和西门的销量差多少？": the two groups asked about, the first against the second
        if len(plan.values) == 2 and (
            pair := pair_total_headline(metric, str(plan.values[0]), str(plan.values[1]), result.metrics, zh)
        ):
            return pair
    return total_headline(
        metric,
        group,
        result.metrics,
        zh,
        plan.top if plan and plan.kind == "top" else None,
        arguments.get("agg", "sum"),
        lowest=_asks_lowest_only(question, metric),
    )


# an order from the top down: "from highest to lowest", "largest to smallest", "从高到低", "由多到少"
_HIGH_TO_LOW = re.compile(
    r"\b(?:highest|largest|biggest|most|best|top)\b\W+(?:\w+\W+){0,2}?to\W+(?:the\W+)?(?:lowest|smallest|least|worst|bottom)\b"
    r"|[从由]\s*[高大多]\s*[到至往]\s*[低小少]",
    re.I,
)


def _asks_lowest_only(question: str, measure: str) -> bool:
    """Whether the question asks which is lowest, and not for an order that runs to it ("from highest to
    lowest", "从高到低": a ranking, the highest first)."""
    return asks_extreme(question, measure) == "least" and not _HIGH_TO_LOW.search(question)


def _groups_assumed(plan: Plan, group: str, question: str) -> bool:
    """Whether the grouping of a total is the analyst's default, not the question's: no group named, and
    no ranking asked ("which store sold the most" names what to rank, even when no column says store)."""
    if plan.provenance is None or asks_extreme(question, plan.metric):
        return False
    return any(s.role == "group" and group in s.columns for s in plan.provenance.defaults())


def _breakdown(step: Step, result: ResultRecord, zh: bool, plan: Plan | None, question: str) -> str | None:
    """A value_counts step's headline where the plan reads it as an answer: the things past a cut
    (scope.passing_steps), the rate of a yes/no outcome (rates.rate_steps); None for a plain breakdown."""
    if plan is not None and plan.kind == "passing":
        return _passing(step, result, zh, plan)
    return _overall_rate(step, result, zh, plan, question)


def _passing(step: Step, result: ResultRecord, zh: bool, plan: Plan) -> str | None:
    """'门店 with 销售额 > 5000: 三店 (10 rows), 二店 (9), 西门 (5)' — every thing the kept rows hold, most rows first."""
    column = str(step.arguments.get("column"))
    counts = {
        k[len("count.") :]: v
        for k, v in result.metrics.items()
        if k.startswith("count.") and isinstance(v, (int, float)) and v
    }
    cut = describe_conditions(plan.filters, zh)
    if not cut:
        return None
    other = result.metrics.get("other") or 0
    if not counts:
        return f"没有 {column} 满足 {cut}。" if zh else f"No {column} has {cut}."
    if all(n == 1 for n in counts.values()):  # one row per thing (a product each): the names alone
        listed = ("、" if zh else ", ").join(sorted(counts))
    elif zh:
        listed = "、".join(f"{v}（{fmt_num(n)} 行）" for v, n in counts.items())
    else:
        listed = ", ".join(f"{v} ({fmt_num(n)} {'row' if n == 1 else 'rows'})" for v, n in counts.items())
    if zh:
        more = f"，另有 {fmt_num(result.metrics.get('unique', 0) - len(counts))} 个" if other else ""
        return f"满足 {cut} 的 {column} 有 {fmt_num(result.metrics.get('unique', len(counts)))} 个：{listed}{more}。"
    more = f", and {fmt_num(result.metrics.get('unique', 0) - len(counts))} more" if other else ""
    return f"{fmt_num(result.metrics.get('unique', len(counts)))} {column} with {cut}: {listed}{more}."


def _overall_rate(step: Step, result: ResultRecord, zh: bool, plan: Plan | None, question: str) -> str | None:
    """The rate of a yes/no outcome over the rows analysed, for a rate question with no groups (rate_steps'
    breakdown): "Churned = Yes: 25.0% of the rows (22 of 88)" — its yes in the sheet's own word; or of
    the one value the question named of a many-valued column ("what percentage of orders are online":
    "Channel = Online: 46.2% of the rows (554 of 1,200)"). None for any other breakdown, which says its
    most common value."""
    if plan is None or plan.kind != "proportion":
        return None
    metrics, column = result.metrics, step.arguments.get("column")
    named = [plan.success] if plan.success and column == plan.metric else []
    yes = next((key for key in (*named, "True", "1", "1.0") if f"share.{key}" in metrics), None)
    n = metrics.get("n")
    if yes is None or not isinstance(n, (int, float)) or not n:
        return None
    share, count = float(metrics[f"share.{yes}"]), metrics.get(f"count.{yes}", 0)
    label = f"{column} = {'True' if yes == 'True' else yes}"
    if zh:
        return f"{label} 的比例：{share * 100:.1f}%（{fmt_num(n)} 行中 {fmt_num(count)} 行）。"
    return f"{label}: {share * 100:.1f}% of the rows ({fmt_num(count)} of {fmt_num(n)})."


def _ranks(step: Step, result: ResultRecord, zh: bool, plan: Plan | None, question: str) -> str | None:
    arguments = step.arguments
    if group := arguments.get("group_column"):  # the top/bottom N groups by their total or average
        bottom, agg = arguments.get("order") == "smallest", arguments.get("agg", "sum")
        if plan is not None and plan.kind == "period":  # "which month": the one period, then the next ones
            return period_headline(arguments["value_column"], agg, result.metrics, bottom, zh)
        said = (period_label(plan, zh) if plan is not None and group == plan.dimension else None) or group
        return ranked_groups_headline(arguments["value_column"], said, agg, result.metrics, bottom, zh)
    return rank_headline(arguments["value_column"], result.metrics, arguments.get("order") == "smallest", zh)


def _paired(step: Step, result: ResultRecord, zh: bool, plan: Plan | None, question: str) -> str | None:
    arguments = step.arguments
    if "x_column" in arguments:  # two columns on each row (wide_pairs)
        first, second = arguments["x_column"], arguments["y_column"]
        change = any(pair[:2] == (second, first) for pair in marked_pairs([first, second]))
        return wide_paired_headline(first, second, result.metrics, zh, change)
    metric = arguments.get("value_column") or arguments.get("x_column", "")
    return paired_headline(metric, result.metrics, _pair_labels(result), zh)


def _shares(step: Step, result: ResultRecord, zh: bool, plan: Plan | None, question: str) -> str | None:
    arguments = step.arguments
    if not arguments.get("value_column"):  # each group's share of the rows
        column = arguments.get("column")
        return rows_share_headline(column, result.metrics, zh) if column else None
    return share_headline(arguments["value_column"], arguments["group_column"], result.metrics, zh)


def _relationship(step: Step, result: ResultRecord, zh: bool, plan: Plan | None, question: str) -> str | None:
    if plan is None or plan.kind != "relationship":
        return None
    target, *predictors = step.arguments["columns"]
    return relationship_headline(predictors[0], target, result.metrics, zh, plan.words) if predictors else None


def _derived(step: Step, result: ResultRecord, zh: bool, plan: Plan | None, question: str) -> str | None:
    if plan is None or plan.kind != "derive":
        return None
    source = plan.dataset
    table = table_name(source, step.tool, step.arguments.get("output", "")) if source else None
    return derive_headline(step.arguments, result.metrics, table, source, zh)


def _cleaned(step: Step, result: ResultRecord, zh: bool, plan: Plan | None, question: str) -> str | None:
    arguments, dataset = step.arguments, plan.dataset if plan else None
    if arguments.get("drop_missing_in") and not arguments.get("drop_duplicates"):
        return missing_headline(arguments["drop_missing_in"], result.metrics, dataset, zh)
    return dedupe_headline(result.metrics, dataset, zh)


def _two_groups(step: Step, result: ResultRecord, zh: bool, plan: Plan | None, question: str) -> str | None:
    arguments = step.arguments
    if changed := _change(step, result, zh, plan):
        return changed
    if "groups" in arguments:
        return None
    first = _one_group_against_others(arguments["group_column"], plan)
    lead = (plan.values[0] if plan and plan.values else first) or _extreme_group(
        result.metrics, asks_extreme(question, arguments["value_column"])
    )
    return two_group_headline(arguments["value_column"], arguments["group_column"], result.metrics, lead, zh)


def _groups(step: Step, result: ResultRecord, zh: bool, plan: Plan | None, question: str) -> str | None:
    arguments, metrics = step.arguments, result.metrics
    if changed := _change(step, result, zh, plan):
        return changed
    if plan is not None and len(plan.values) == 1 and arguments.get("group_column") == plan.dimension:
        # "rainy days": that group, against the others
        return named_group_headline(arguments["value_column"], arguments["group_column"], metrics, plan.values[0], zh)
    if extreme := asks_extreme(question, arguments["value_column"]):
        return extreme_headline(arguments["value_column"], arguments["group_column"], metrics, extreme == "least", zh)
    # "每个科室的平均费用是多少？": the averages are the answer, also in a follow-up narrowing it ("And only for
    # Gadget?": the question it continues, as the reading has it)
    if asks_group_averages(plan.provenance.question if plan and plan.provenance else question):
        return group_averages_headline(arguments["value_column"], arguments["group_column"], metrics, zh)
    return None


HEADLINES: dict[str, Headline] = {
    "linear_regression": _drivers,
    "forecast": _forecast,
    "proportion_test": _rates,
    "group_aggregate": _totals,
    "rank_values": _ranks,
    "paired_test": _paired,
    "plot_pie": _shares,
    "correlation_analysis": _relationship,
    "derive_column": _derived,
    "clean_data": _cleaned,
    "compare_two_groups": _two_groups,
    "compare_groups": _groups,
    "value_counts": _breakdown,
}


def _change(step: Step, result: ResultRecord, zh: bool, plan: Plan | None) -> str | None:
    """A change column ("later - earlier", designs.change_by_group) compared between groups."""
    if (
        plan is None
        or plan.kind != "change"
        or not (parts := re.fullmatch(r"(.+) - (.+)", step.arguments["value_column"]))
    ):
        return None
    return change_headline(parts.group(1), parts.group(2), result.metrics, zh)


def _one_group_against_others(column: str, plan: Plan | None) -> str | None:
    """The named group of a column made to set one group against the others (versus_rest.rest_column:
    "<column>: <value> or others", weekdays.weekend_column: the weekend days or the weekdays); None
    when the column is the whole grouping."""
    if plan is None or not plan.whole or column == plan.whole:
        return None
    match = re.search(r"[:：]\s*(.+?)\s*(?:or others|或其他|or weekdays|或工作日)$", column)
    return match.group(1) if match else None


def _means(metrics: dict[str, Any]) -> dict[str, float]:
    return {k.split(".", 1)[1]: v for k, v in metrics.items() if k.startswith("mean.") and isinstance(v, (int, float))}


def _extreme_group(metrics: dict[str, Any], extreme: str | None) -> str | None:
    """The group with the highest (or, for "least", the lowest) average: it leads a "which … most" answer."""
    means = _means(metrics)
    if not (extreme and means):
        return None
    return (min if extreme == "least" else max)(means, key=lambda g: means[g])


def _pair_labels(result: ResultRecord) -> tuple[str, str] | None:
    """The two conditions of a paired test (its `pair`: the difference is the first minus the second)."""
    pair = result.details.get("pair")
    return (str(pair[0]), str(pair[1])) if isinstance(pair, list) and len(pair) == 2 else None


def _named(value: str, question: str, zh: bool) -> str:
    """A group as the question called it too: "F (women)" when it asked about women (sex = F)."""
    word = code_word(value, question)
    return value if not word else f"{value}（{word}）" if zh else f"{value} ({word})"
