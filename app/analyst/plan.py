"""What the built-in analyst decides to compute: the standard analyses that fit the column types
and the question's keywords (zh/en). Pure functions over dataset summaries, easy to test."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from app.analyst.data_tasks import (
    ROW_NUMBER,
    dedupe_plan,
    derive_plan,
    filter_conditions,
    filter_plan,
    missing_plan,
    ordered_names,
    per_pair,
    repeated_plan,
)
from app.analyst.designs import change_by_group, weekend_by_date, weekend_versus_weekdays, wide_pair_plan
from app.analyst.provenance import plan_roles, read_sources
from app.analyst.role_question import role_answers
from app.analyst.steps import Plan, Step, weighted_arguments
from app.analyst.versus_rest import asks_versus_rest, versus_rest
from app.understanding.count_pairs import count_pair
from app.understanding.everyday_words import CONDITION_WORDS
from app.understanding.kinds import (
    DERIVE,
    DROP_MISSING,
    EACH,
    FILTER_TASK,
    MEAN_WORDS,
    PER_UNIT,
    RATE,
    SEASON,
    SHARE,
    SLOPE,
    YEAR,
    asks_dedupe,
    asks_direction_over_time,
    asks_extreme,
    asks_paired,
    asks_top,
    asks_total,
)
from app.understanding.language import local_text as _t
from app.understanding.outcome import measure_names, rate_outcome
from app.understanding.profile_reading import GROUPING, NUMERIC, count_weights, is_level
from app.understanding.reading import Reading, read_question
from app.understanding.repeated_design import repeated_design
from app.understanding.role_sources import Provenance, unmatched_words
from app.understanding.roles import (
    asks_ahead,
    column_spans,
    forecast_arguments,
    forecast_request,
    groups_rows,
    named_values,
    regression_roles,
    superlative_measure,
)
from app.understanding.weekdays import asks_weekend, weekday_column, weekend_column
from app.understanding.wide_pairs import marked_change, marker_columns, wide_pair
from app.understanding.words import STOP, core_name, without_value_words
from app.understanding.words import SYNONYMS as WORD_SYNONYMS

METRIC_HINTS = (
    "revenue",
    "sales",
    "amount",
    "profit",
    "income",
    "price",
    "cost",
    "score",
    "satisfaction",
    "营业额",
    "销售额",
    "收入",
    "金额",
    "利润",
    "成本",
    "价格",
    "得分",
    "满意",
)

KEYWORDS = {
    "compare": (
        "differ",
        "difference",
        "compare",
        "comparison",
        " vs",
        "versus",
        "between",
        "by ",
        "across",
        "higher",
        "lower",
        "差异",
        "区别",
        "比较",
        "对比",
        "不同",
        "之间",
        "各",
        "哪个",
    ),
    "correlate": (
        "correlat",
        "relationship",
        "related",
        "relate",
        "associat",
        "link",
        "impact",
        "affect",
        "相关",
        "关系",
        "关联",
        "影响",
    ),
    "regress": (
        "driver",
        "drive",
        "factor",
        "explain",
        "regress",
        "model",
        "驱动",
        "因素",
        "回归",
        "解释",
        "matters most",
        "matter most",
        "most important for",
        "most important to",
        "biggest effect on",
        "影响最大",
        "最重要",
        "最关键",
    ),
    # "predict"/"预测" alone is either: a regression ("predict revenue from units") or a forecast
    # ("预测营业额"); see `asks_for`.
    "predict": ("predict", "预测"),
    "trend": (
        "trend",
        "over time",
        "change over",
        "changed over",
        "monthly",
        "by month",
        "per month",
        "growth",
        "趋势",
        "随时间",
        "变化",
        "每月",
        "按月",
        "增长",
        "走势",
    ),
    # The future: a horizon ahead ("next 6 weeks", "下周": asks_ahead) or one of these words.
    "forecast": (
        "forecast",
        "future",
        "next month",
        "next quarter",
        "next year",
        "next week",
        "upcoming",
        "未来",
        "下个月",
        "下月",
        "下个季度",
        "下季度",
        "明年",
        "今后",
        "接下来",
        "预报",
    ),
    # What makes a question about the future also ask for a regression: its drivers or factors.
    # ("determine"/"决定" are left out: "determine next month's revenue" asks for a forecast.)
    "drivers": (
        "driver",
        "drive",
        "factor",
        "explain",
        "regress",
        "affect",
        "influenc",
        "depend",
        "why",
        "matters most",
        "matter most",
        "most important for",
        "most important to",
        "驱动",
        "因素",
        "解释",
        "回归",
        "影响",
        "取决",
        "原因",
        "为什么",
        "最重要",
        "最关键",
    ),
    "distribution": (
        "distribution",
        "spread",
        "typical",
        "average",
        "mean",
        "median",
        "summary",
        "overview",
        "分布",
        "平均",
        "中位",
        "概况",
        "总体",
        "描述",
    ),
}
SYNONYMS = WORD_SYNONYMS  # words: everyday and other-language words for columns
GREETING = re.compile(r"^\s*(hi|hello|hey|thanks|thank you|你好|您好|谢谢|嗨)[\s!！。.,，]*$", re.I)


def asks_trend(question: str) -> bool:
    """A trend: the word ("trend", "趋势") or a direction over time ("rising over the years", "一直在增加")."""
    return wants(question, "trend") or asks_direction_over_time(question)


def wants(question: str, kind: str) -> bool:
    text = f" {question.lower()} "
    return any(word in text for word in KEYWORDS[kind])


@dataclass(frozen=True)
class Asks:
    """Whether a question asks for a forecast, a regression, or both."""

    forecast: bool
    regression: bool


def asks_for(question: str, has_date: bool, predictors_named: bool) -> Asks:
    """Forecast or regression, as the question's words decide. "预测"/"predict" is both a forecasting
    and a modelling word, so:
    - a question about the future (a horizon, 未来/明年/next month/forecast ...) is a forecast; it is
      also a regression only when it asks for drivers or factors, or names predictors ("with A and B");
    - otherwise "predict" alone is a forecast when the data have dates and the question neither asks
      for factors nor names predictors ("预测营业额"), else a regression ("哪些因素能预测营业额",
      "用广告费用来预测营业额"); the other modelling words (drivers, explain, regress) are a regression."""
    future = wants(question, "forecast") or asks_ahead(question)
    drivers = wants(question, "drivers") or predictors_named
    if future:
        return Asks(forecast=True, regression=drivers)
    forecast = wants(question, "predict") and has_date and not drivers and not wants(question, "regress")
    regression = wants(question, "regress") or (wants(question, "predict") and not forecast)
    return Asks(forecast=forecast, regression=regression)


def mentioned_columns(question: str, columns: list[dict[str, Any]]) -> list[str]:
    """Columns named in the question (by name, synonym, stem or abbreviation), longest names first
    (so 'Unit Price' beats 'Price')."""
    return named_longest_first(column_spans(question, columns, SYNONYMS), columns)


def named_longest_first(spans: list[Any], columns: list[dict[str, Any]]) -> list[str]:
    """The columns of `spans` (where the question names them), longest names first."""
    named = {name for _, _, name in spans}
    return [c["name"] for c in sorted(columns, key=lambda c: -len(c["name"])) if c["name"] in named]


def choose_metric(columns: list[dict[str, Any]], named: list[str]) -> str | None:
    """The number to analyse: a named measurement, else one named like a metric, else the first.
    Yes/no and code columns (smoke, cyl) are groups, not measurements, unless nothing else is named."""
    numeric = [c["name"] for c in columns if c["type"] in NUMERIC and not c.get("pii")]
    measures = [
        c["name"]
        for c in columns
        if c["type"] in NUMERIC and not c.get("pii") and not (c.get("binary") or c.get("coded"))
    ]
    for pool in (measures, numeric):
        for name in named:
            if name in pool:
                return name
    for hint in METRIC_HINTS:
        for name in measures:
            if hint in name.lower():
                return name
    return (measures or numeric or [None])[0]


def choose_dimension(
    columns: list[dict[str, Any]], named: list[str], implied: str | None = None, metric: str | None = None
) -> str | None:
    """A grouping column the question names, else the one whose values it names ("new and returning
    customers" → Customer Type), else the first category with few levels (a yes/no or code number
    column only when nothing else can group)."""
    groupable = [
        c
        for c in columns
        if groups_rows(c) and 2 <= (c.get("levels") or 0) <= 30 and not c.get("pii") and c["name"] != metric
    ]
    for name in named:
        if any(c["name"] == name for c in groupable):
            return name
    if implied and implied != metric:
        return implied
    few = [c for c in groupable if c.get("levels", 0) <= 12]
    real = [c for c in few if c["type"] in GROUPING] or [c for c in groupable if c["type"] in GROUPING]
    return (real or few or groupable or [{"name": None}])[0]["name"]


def other_numeric(columns: list[dict[str, Any]], metric: str | None, limit: int = 6) -> list[str]:
    return [c["name"] for c in columns if c["type"] in NUMERIC and c["name"] != metric and not c.get("pii")][:limit]


# What makes a question ask for groups even without a comparison word: whether something helps or
# hurts ("Do rainy days hurt business?"), which one is best.
GROUP_CUES = re.compile(
    r"\b(?:hurt|help|boost|improve|worsen|harm|benefit|increase|decrease|raise|reduce|lower|"
    r"affect|impact|influence|matter|make|makes|made|better|worse)s?\b|\b(?:and|or|vs\.?|versus)\b|"
    r"影响|导致|让|使|有利|不利|变差|变好|提高|降低|更好|更差|和|与|还是",
    re.I,
)


def asks_for_groups(question: str) -> bool:
    """Whether the question asks to split the data into groups (compare, relate, which is most, what
    helps or hurts), so a group filled by default replaces something it asked for."""
    return bool(
        wants(question, "compare")
        or wants(question, "correlate")
        or wants(question, "drivers")
        or asks_extreme(question)
        or asks_top(question)
        or GROUP_CUES.search(question)
    )


def plan_reading(reading: Reading) -> Plan:
    """Profile, then the analyses that fit the columns and the question (and the user's confirmed
    definitions: the chosen metric, the goal and the columns that are labels — the reading's `asked`
    and `columns` — and the columns the user named for a role the question's words did not settle:
    role_question). Column summaries may carry the values and date spans the profile showed
    (read_profile). The columns the question names are the reading's mentions. The plan records
    where each of its columns came from (role_sources)."""
    question, dataset, asked, columns = reading.root, reading.dataset, reading.asked, reading.columns
    answered = role_answers(reading.confirmed, reading.root_key, dataset["columns"])
    plan = _planned(reading, answered)
    chosen = chosen_metric(asked, columns, reading.confirmed)
    spans = [(m.start, m.end, m.name) for m in reading.mentions]
    plan.provenance = Provenance(
        reading.root_key,
        question,
        read_sources(plan, asked, columns, reading.mentions, chosen, answered),
        unmatched_words(
            question, columns, spans, (str(dataset.get("name") or ""),), tuple(name for _, name in plan_roles(plan))
        ),
        answered,
        columns,
        asks_for_groups(question),
    )
    return plan


def plan_analysis(question: str, dataset: dict[str, Any], zh: bool, confirmed: dict[str, str] | None = None) -> Plan:
    """`plan_reading` of one question (no earlier ones) on one dataset: for tests and scripts."""
    return plan_reading(read_question(question, [dataset], confirmed=confirmed, zh=zh))


def _planned(reading: Reading, answered: dict[str, str]) -> Plan:
    dataset, zh, question, columns = reading.dataset, reading.zh, reading.asked, reading.columns
    chosen = chosen_metric(question, columns, reading.confirmed)
    names = {c["name"] for c in columns}
    chosen = chosen or (answered["outcome"] if answered.get("outcome") in names else None)
    group = answered.get("group") if answered.get("group") in names else None
    spans = [(m.start, m.end, m.name) for m in reading.mentions]
    named = named_longest_first(spans, columns)
    grouping = [group, *named] if group else named  # the user's answer names the groups first
    roles = regression_roles(question, columns, spans)
    dated = any(c["type"] == "datetime" and not c.get("pii") for c in columns)
    implied, values = named_values(question, columns, spans)
    # the words that name a group are not modelling words: "front-wheel drive" asks for no drivers
    asks = asks_for(without_value_words(question, implied or "", values), dated, bool(roles.predictors))
    if DROP_MISSING.search(question):
        return missing_plan(columns, ordered_names(spans), zh)
    if asks_dedupe(question):
        return dedupe_plan(columns, zh)
    if FILTER_TASK.search(question) and (conditions := filter_conditions(question, columns, spans)):
        return filter_plan(conditions, zh)
    if DERIVE.search(question):  # two numbers named, or a pair named by its markers ("before minus after")
        measures = measure_names(columns, ordered_names(spans))
        if len(measures) >= 2 or len(measures := marker_columns(question, columns) or measures) >= 2:
            return derive_plan(question, per_pair(question, spans, measures), zh, str(dataset.get("name") or ""))
    if design := repeated_design(question, {**dataset, "columns": columns}, ordered_names(spans)):
        return repeated_plan(design, zh)
    # a grouping counts when its values are named or groups are set against each other: "after the
    # treatment" on a table with a Treatment column names the event, not the groups
    grouped = implied or next(
        (c["name"] for c in columns if groups_rows(c) and c["name"] in named and GROUPS_COMPARED.search(question)), None
    )
    if not grouped and (wide := wide_pair(question, columns, spans)):
        return wide_pair_plan(wide, zh)
    if grouped and (wide := marked_change(question, columns, spans)):
        # "did it drop more for women than for men": the change, group by group
        plan = Plan(None, grouped, [Step("profile_dataset", {}, evidence=False)], kind="change")
        change = change_by_group(plan, wide, str(dataset.get("name")), zh)
        plan.metric, plan.values = change, values if grouped == implied else []
        add_compare_steps(plan, [*columns, {"name": change, "type": "number"}], change, grouped, plan.values, zh)
        return plan
    # The metric the question asks about ("what drives revenue") beats the longest column it names.
    rate = None if chosen or roles.target else rate_outcome(question, columns, named, spans)
    pair = count_pair(columns) if not (rate or chosen or roles.target) and RATE.search(question) else None
    outcome = rate.column if rate else pair[0] if pair else None
    if rate and rate.success:  # its value names the outcome, not a group
        implied, values = named_values(question, [c for c in columns if c["name"] != outcome], spans)
    ranked = superlative_measure(question, spans, measure_names(columns, named)) if len(named) > 1 else None
    metric = chosen or roles.target or outcome or ranked or choose_metric(columns, named)
    dimension = choose_dimension(columns, grouping, implied, metric)
    plan = Plan(metric, dimension, [Step("profile_dataset", {}, evidence=False)])
    plan.values = values if dimension == implied else []
    plan.weights, plan.success = count_weights(columns, int(dataset.get("rows") or 0)), rate.success if rate else None
    plan.failures = pair[1] if pair else None
    if (
        dimension
        and len(plan.values) == 1
        and asks_versus_rest(question, plan.values[0], dimension)
        and (next((c.get("levels") or 0 for c in columns if c["name"] == dimension), 0) > 2)
    ):
        dimension = versus_rest(plan, dimension, str(dataset.get("name")), zh)  # one group against the others
        columns = [*columns, {"name": dimension, "type": "category", "levels": 2}]
    elif made := made_weekend_column(question, columns, metric):  # a version made for an earlier weekend question
        plan.whole, dimension = made
        plan.dimension, plan.values = dimension, []
    elif days := weekend_grouping(question, columns, dimension, metric):  # the weekend days against the weekdays
        dimension = weekend_versus_weekdays(plan, days, str(dataset.get("name")), zh)
        columns = [*columns, {"name": dimension, "type": "category", "levels": 2}]
    elif date := weekend_dates(question, columns, metric, dataset.get("grain")):
        dimension = weekend_by_date(plan, date, str(dataset.get("name")), zh)
        columns = [*columns, {"name": dimension, "type": "category", "levels": 2}]
    if not (asks.forecast or asks_trend(question)):
        plan.filters = year_filter(question, columns)
    group_named = dimension in (*grouping, implied) or plan.whole is not None
    if outcome and not group_named and not plan.weights and (by := measure_names(columns, named)):
        # "did older passengers have a lower chance of survival": the measurement compared between the outcomes
        plan.kind, plan.metric, plan.dimension = "proportion", by[0], outcome
        add_compare_steps(plan, columns, by[0], outcome, [], zh)
        return plan
    if outcome and not group_named and not wants(question, "compare"):
        plan.dimension = None  # "what share would buy again": the overall rate, not split by a group nobody named
    if outcome and special_steps(plan, question, columns, grouping, zh, outcome=outcome):
        return plan
    if (
        not chosen
        and not asks.forecast
        and relation_steps(plan, question, columns, spans, implied, roles, zh, asks.regression)
    ):
        return plan
    if metric and special_steps(plan, question, columns, grouping, zh, dated=dated, rows=int(dataset.get("rows") or 0)):
        return plan
    if metric is None:
        plan.notes.append("没有数值列，只能做描述。" if zh else "No numeric column: only a description is possible.")
        if dimension:
            plan.steps.append(
                Step("value_counts", {"column": dimension}, _t(zh, f"{dimension} breakdown", f"{dimension}分布"))
            )
            plan.steps.append(Step("plot_bar", {"x_column": dimension}, evidence=False))
        return plan
    plan.steps.append(Step("describe_columns", {"columns": [metric]}, _t(zh, f"Describe {metric}", f"描述{metric}")))
    plan.steps.append(Step("plot_histogram", {"value_column": metric}, evidence=False))
    over_time = add_time_steps(plan, question, asks.forecast, dataset.get("grain"), columns, metric, zh)
    specific = wants(question, "correlate") or asks.regression or over_time
    # a grouping the question names is compared ("does tension affect breaks"), unless it asks for drivers
    named_group = dimension in grouping and not asks.regression and not over_time
    if dimension and (wants(question, "compare") or not specific or plan.whole or named_group):
        add_compare_steps(plan, columns, metric, dimension, values if dimension == implied else [], zh)
    numeric = other_numeric(columns, metric, 50)
    chosen_predictors = [n for n in roles.predictors if roles.target == metric]
    others = (
        [n for n in chosen_predictors if n in numeric]
        or [n for n in named if n != metric and n in numeric]
        or other_numeric(columns, metric)
    )
    if others:
        subject = _t(zh, f"Relationship of {metric} with other numbers", f"{metric}与其他数值的关系")
        plan.steps.append(Step("correlation_analysis", {"columns": [metric, *others]}, subject))
        plan.steps.append(Step("plot_scatter", {"x_column": others[0], "y_column": metric}, evidence=False))
    features = chosen_predictors or others  # the predictors the question names, else the other numbers
    if features and asks.regression:
        subject = _t(zh, f"What explains {metric}", f"哪些因素解释{metric}")
        plan.steps.append(
            Step("linear_regression", {"target_column": metric, "feature_columns": features[:5]}, subject)
        )
    return plan


def weekend_grouping(
    question: str, columns: list[dict[str, Any]], dimension: str | None, metric: str | None
) -> dict[str, Any] | None:
    """The weekday column a question about the weekend splits ("Do we get more calls on weekends?"):
    the chosen grouping when it holds weekday names, else the only such column; None when none does."""
    if not (metric and asks_weekend(question)):
        return None
    days = [c for c in columns if weekday_column(c) and (c.get("levels") or 0) > 2 and c["name"] != metric]
    chosen = next((c for c in days if c["name"] == dimension), None)
    return chosen or (days[0] if len(days) == 1 else None)


def made_weekend_column(question: str, columns: list[dict[str, Any]], metric: str | None) -> tuple[str, str] | None:
    """The column it was made from and the weekend column a version made for an earlier weekend question
    already has ("Day: weekend days or weekdays", in either language): compared as it is, not made again."""
    if not (metric and asks_weekend(question)):
        return None
    names = [c["name"] for c in columns]
    return next(
        ((base, name) for name in names for base in names for zh in (False, True) if name == weekend_column(base, zh)),
        None,
    )


def weekend_dates(question: str, columns: list[dict[str, Any]], metric: str | None, grain: str | None) -> str | None:
    """The date column a weekend question splits when no column names the days (weekend_grouping): data
    day by day (or finer) with one date column."""
    if not (metric and asks_weekend(question)) or any(weekday_column(c) for c in columns):
        return None
    if (grain or "").split(" ")[0] in ("weekly", "monthly", "quarterly", "yearly"):
        return None
    dates = [c["name"] for c in columns if c["type"] == "datetime" and not c.get("pii")]
    return dates[0] if len(dates) == 1 else None


def year_filter(question: str, columns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A year the question names ("2024年哪家门店…") on data with dates: only that year's rows."""
    date = next((c["name"] for c in columns if c["type"] == "datetime" and not c.get("pii")), None)
    match = YEAR.search(question)
    if not (date and match):
        return []
    year = match.group(1)
    return [{"column": date, "op": "between", "value": [f"{year}-01-01", f"{year}-12-31"]}]


MORE_MORE = re.compile(
    r"越.{1,20}越|\bthe (?:more|less|higher|lower|bigger|larger|smaller|greater|longer|shorter|older|"
    r"heavier)\b.{1,40}\bthe (?:more|less|higher|lower|bigger|larger|smaller|greater|longer|shorter|"
    r"fewer|heavier|lighter|faster|slower)\b",
    re.I,
)
# groups set against each other ("more for women than for men", "哪个班进步更大"), not a group's mere mention
GROUPS_COMPARED = re.compile(
    r"\b(?:more|less|fewer|than|vs|versus|between|differ\w*|which|compar\w*|bigger|smaller|larger|"
    r"greater|faster|slower|higher|lower|each|every|per)\b|by \w|更|比|哪|不同|差异|区别|各|每|按",
    re.I,
)
# "the windier it is, the lower the ozone": any two comparatives (the first is what the second follows)
THE_ER = re.compile(r"\bthe (?:more|less|[a-z]+er)\b.{1,40}\bthe (?:more|less|fewer|[a-z]+er)\b", re.I)
# When something peaked: the date (row) of the largest value. "Which month" of several years is a season (SEASON).
WHEN = re.compile(
    r"\b(?:which|what) (?:year|day|date|week)\b|\bin what year\b|\bwhen (?:was|were|did)\b|"
    r"哪一年|哪年|哪个年份|哪一天|哪天|哪一周|什么时候|何时",
    re.I,
)
ADDITIVE = re.compile(
    r"revenue|sales|amount|profit|cost|income|spend|units|orders|count|quantity|营业额|销售额|收入|"
    r"金额|利润|成本|订单|数量|销量|件数",
    re.I,
)


def relation_steps(
    plan: Plan,
    question: str,
    columns: list[dict[str, Any]],
    spans: list[Any],
    implied: str | None,
    roles: Any,
    zh: bool,
    regression: bool = False,
) -> bool:
    """Two measurements named and no grouping: how they move together (correlation), and, when the
    question asks how much one changes per unit of the other ("for each extra inch", "每快1英里",
    "estimate volume from girth"), the regression slope. Two categories named and no measurement:
    whether they are related (chi-square)."""
    names = ordered_names(spans)
    kinds = {c["name"]: c for c in columns}
    measures = measure_names(columns, names)
    groups = [n for n in names if n not in measures and groups_rows(kinds[n])]
    scales = [n for n in groups if is_scale(kinds[n])]
    if len(measures) + len(scales) >= 2 and scales and len(scales) == len(groups):  # 1-5 ratings are scales here
        measures, groups = [n for n in names if n in measures or n in scales], []
    slope = bool(SLOPE.search(question) or roles.target)
    # "员工数越多的门店，订单数越多吗", "the bigger …, the more …": two numbers moving together, whatever groups
    # it names; a number with few values (Air.Flow) counts as a number here
    if MORE_MORE.search(question) and len(measures) < 2:
        measures = [n for n in names if n in measures or (kinds[n]["type"] in NUMERIC and kinds[n].get("coded"))]
    if len(measures) == 1 and (acting := [n for n in quantities_named(question, spans, kinds) if n not in measures]):
        # "Does exercise (0-7 hours) lower BMI?": how the two numbers go together, not BMI in 8 hour groups
        measures = [n for n in names if n in measures or n in acting]
        groups = [n for n in groups if n not in acting]
    together = bool(MORE_MORE.search(question)) and len(measures) >= 2
    if len(measures) >= 2 and (together or (not groups and not implied)) and (slope or not regression):
        target, predictors = slope_roles(question, spans, measures, roles)
        plan.kind, plan.metric, plan.dimension = "relationship", target, None
        plan.words = {name: question[start:end] for start, end, name in reversed(spans)}  # the first word wins
        subject = _t(
            zh, f"Relationship of {target} with {', '.join(predictors)}", f"{target}与{'、'.join(predictors)}的关系"
        )
        plan.steps.append(Step("correlation_analysis", {"columns": [target, *predictors]}, subject))
        plan.steps.append(Step("plot_scatter", {"x_column": predictors[0], "y_column": target}, evidence=False))
        if slope:
            subject = _t(
                zh,
                f"How much {target} changes with {', '.join(predictors)}",
                f"{target}随{'、'.join(predictors)}变化多少",
            )
            plan.steps.append(
                Step("linear_regression", {"target_column": target, "feature_columns": predictors[:5]}, subject)
            )
        return True
    categories = [n for n in groups if kinds[n]["type"] in GROUPING]
    if not measures and len(categories) >= 2:
        plan.kind, plan.metric, plan.dimension = "association", None, categories[0]
        subject = _t(zh, f"Is {categories[0]} related to {categories[1]}", f"{categories[0]}与{categories[1]}是否有关")
        arguments = {"x_column": categories[0], "y_column": categories[1]}
        plan.steps.append(Step("chi_square_test", arguments | weighted_arguments(plan), subject))
        return True
    return False


def is_scale(column: dict[str, Any]) -> bool:
    """A rating scale (1-5, 1-7, 0-10 …): whole numbers from 0 or 1 up to 5, 7 or 10, at least five of them."""
    return bool(
        column.get("coded")
        and (column.get("levels") or 0) >= 5
        and column.get("minimum") in (0, 1)
        and column.get("maximum") in (5, 7, 10)
    )


# What one measure does to another ("Does exercise lower BMI?", "运动能降低BMI吗"): the one before the
# verb acts on the one after it.
CAUSE = re.compile(
    r"\b(?:lower|lowers|lowered|reduce[sd]?|reducing|raise[sd]?|raising|increase[sd]?|increasing|"
    r"decrease[sd]?|improve[sd]?|improving|boost(?:s|ed)?|cut(?:s)?|hurt(?:s)?|worsen(?:s|ed)?)\b|"
    r"降低|减少|减轻|提高|提升|增加|改善|拉低|拉高|导致",
    re.I,
)
# A condition the other measure is read under: "when the weather is hot" (the measure after the cue),
# "天气热的时候"/"气温高时" (the measure before it).
# The verb right before the measure it acts on ("lower BMI", "reduce the BMI", "降低BMI"): "is ozone lower
# on windy days" compares, it names no cause.
ACTS_ON = re.compile(rf"(?:{CAUSE.pattern})\s*(?:(?:the|a|an|your|their|our|one's|people's)\s+)?$", re.I)
# ("When did revenue peak?" asks for a time: no condition)
WHEN_EN = re.compile(r"\b(?:when|whenever|if)\b(?!\s+(?:was|were|did|does|do|is|are|will|has|have|had)\b)", re.I)
WHEN_ZH = re.compile(r"的时候|时候|时[，,]|的话")


def leading_measure(question: str, spans: list[Any], measures: list[str]) -> str | None:
    """Of two measures, the one the question makes act on the other (a cause verb between them) or sets
    as the condition ("when …", "…的时候", a condition word: "hot", "热天"); None when it does neither."""
    placed = sorted((start, end, name) for start, end, name in spans if name in measures)
    firsts = {name: (start, end) for start, end, name in reversed(placed)}
    if len(firsts) != 2:
        return None
    (a, (_, a_end)), (b, (b_start, _)) = sorted(firsts.items(), key=lambda item: item[1])
    if a_end <= b_start and ACTS_ON.search(question[a_end:b_start]):
        return a
    if cue := WHEN_ZH.search(question):
        before = [name for start, _, name in placed if start < cue.start()]
        if before:
            return before[-1]
    if cue := WHEN_EN.search(question):
        after = [name for start, _, name in placed if start > cue.start()]
        if after:
            return after[0]
    # "热天气冰淇淋卖得更好吗", "on windy days": the measure named by a condition word is the condition
    conditions = {name for start, end, name in placed if question[start:end].lower() in CONDITION_WORDS}
    return conditions.pop() if len(conditions) == 1 else None


# A grouping named as such ("by cylinders", "各档位", "across gears"): a code column that stays groups.
NAMED_AS_GROUPS = re.compile(
    r"\b(?:by|across|per|each|every|between|among|which)\s+(?:the\s+)?$|(?:各|每个|每|不同|按|哪个|哪种|哪些)\s*$", re.I
)


def quantities_named(question: str, spans: list[Any], kinds: dict[str, dict[str, Any]]) -> list[str]:
    """Whole-number columns with few values (coded: Exercise Hours 0-7) the question treats as a quantity that
    acts on a measure ("Does exercise lower BMI?"), not named as groups ("by cylinders", "各档位")."""
    if not any(
        ACTS_ON.search(question[:start])
        for start, _, name in spans
        if name in measure_names(list(kinds.values()), [name])
    ):
        return []
    return [
        name
        for start, _, name in spans
        if kinds[name]["type"] in NUMERIC and kinds[name].get("coded") and not NAMED_AS_GROUPS.search(question[:start])
    ]


_CONJUNCTION = re.compile(r"^\s*(?:and|&|和|与|跟|及|以及|同)\s*$", re.I)


def _joined(question: str, spans: list[Any], measures: list[str]) -> bool:
    """Two measurements named side by side with "and" between them ("广告费用和营业额", "height and weight")."""
    named = [(start, end) for start, end, name in spans if name in measures]
    return len(named) >= 2 and bool(_CONJUNCTION.match(question[named[0][1] : named[1][0]]))


def slope_roles(question: str, spans: list[Any], measures: list[str], roles: Any) -> tuple[str, list[str]]:
    """Which measurement is explained and which explains it: the regression cue's target when there
    is one; else the one named after "for each …" (en) or before "每…" (zh) is the predictor."""
    if roles.target in measures:
        predictors = [n for n in roles.predictors if n in measures and n != roles.target]
        return roles.target, predictors or [n for n in measures if n != roles.target]
    cue = SLOPE.search(question)
    each = EACH.search(question)
    if cue:
        positions = {name: start for start, _, name in spans if name in measures}
        at = each.start() if each else cue.start()
        if (each.group(0) if each else cue.group(0)).startswith(("每", "估计", "推算")):
            before = [n for n in measures if positions.get(n, 10**9) < at]
            predictor = max(before, key=lambda n: positions[n]) if before else measures[-1]
        else:
            after = [n for n in measures if positions.get(n, -1) > at]
            predictor = min(after, key=lambda n: positions[n]) if after else measures[-1]
        return next(n for n in measures if n != predictor), [predictor]
    if len(measures) == 2 and (led := leading_measure(question, spans, measures)):
        return next(n for n in measures if n != led), [led]
    if (MORE_MORE.search(question) or THE_ER.search(question) or _joined(question, spans, measures)) and len(
        measures
    ) == 2:
        # "the windier, the less ozone", "广告费用和营业额": the second follows the first
        return measures[1], measures[:1]
    return measures[0], measures[1:]


def special_steps(
    plan: Plan,
    question: str,
    columns: list[dict[str, Any]],
    named: list[str],
    zh: bool,
    outcome: str | None = None,
    dated: bool = False,
    rows: int = 0,
) -> bool:
    """The question kinds with their own analysis (app.understanding.kinds): a yes/no outcome's rates per
    group, a paired design, top/bottom N, totals per group. False when none applies."""
    metric, dimension = plan.metric or "", plan.dimension
    if outcome:
        plan.kind = "proportion"
        if dimension:
            subject = _t(zh, f"Compare the {outcome} rate across {dimension}", f"比较不同{dimension}的{outcome}比例")
            arguments = {"value_column": outcome, "group_column": dimension}
            if plan.success:
                arguments["success_value"] = plan.success
            if plan.failures:  # counts of both outcomes on each row (ncases, ncontrols)
                arguments["failures_column"] = plan.failures
            plan.steps.append(Step("proportion_test", arguments | weighted_arguments(plan), subject))
            if plan.whole:  # and across every group of the column the one group was taken from
                subject = _t(
                    zh, f"Compare the {outcome} rate across {plan.whole}", f"比较不同{plan.whole}的{outcome}比例"
                )
                plan.steps.append(
                    Step(
                        "proportion_test", arguments | {"group_column": plan.whole} | weighted_arguments(plan), subject
                    )
                )
            if not plan.failures and next((c["type"] for c in columns if c["name"] == outcome), None) in NUMERIC:
                # 0/1: the mean is the rate
                plan.steps.append(
                    Step("plot_bar", {"x_column": dimension, "y_column": outcome, "agg": "mean"}, evidence=False)
                )
        elif plan.weights or plan.failures:  # a count table: the overall rate, each row weighed by its counts
            arguments = {
                "value_column": outcome,
                **({"success_value": plan.success} if plan.success else {}),
                **({"failures_column": plan.failures} if plan.failures else {}),
            }
            plan.steps.append(
                Step(
                    "proportion_test",
                    arguments | weighted_arguments(plan),
                    _t(zh, f"The {outcome} rate", f"{outcome}比例"),
                )
            )
        else:
            plan.steps.append(
                Step("value_counts", {"column": outcome}, _t(zh, f"{outcome} breakdown", f"{outcome}分布"))
            )
        return True
    levels = {c["name"]: c.get("levels") or 0 for c in columns}
    # paired when the question says so, or when the data does: an id column holding each subject once
    # per group of a two-group comparison (sleep: ID 1-10, each under both drugs)
    twice = [
        c["name"]
        for c in columns
        if c["type"] == "identifier"
        and not c.get("pii")
        and rows
        and dimension
        and levels.get(dimension) == 2
        and (c.get("distinct") or 0) * 2 == rows
    ]
    if asks_paired(question) or (twice and not asks_top(question)):
        ids = twice or [c["name"] for c in columns if c["type"] == "identifier" and not c.get("pii")]
        measures = [
            n
            for n in named
            if n != metric
            and next((c for c in columns if c["name"] == n), {}).get("type") in NUMERIC
            and not levels.get(n)
        ]
        subject = _t(zh, f"Paired comparison of {metric}", f"{metric}的配对比较")
        if dimension and levels.get(dimension) == 2 and ids:
            plan.kind = "paired"
            plan.steps.append(
                Step(
                    "paired_test",
                    {"value_column": metric, "group_column": dimension, "id_column": ids[-1], "method": "t"},
                    subject,
                )
            )
            return True
        if measures:
            plan.kind = "paired"
            plan.steps.append(
                Step("paired_test", {"x_column": metric, "y_column": measures[0], "method": "t"}, subject)
            )
            return True
    top = asks_top(question)
    if top:
        kinds = {c["name"]: c for c in columns}
        entity = next(
            (
                n
                for n in named
                if n != metric
                and kinds.get(n)
                and (kinds[n]["type"] in ("identifier", "text") or groups_rows(kinds[n]))
            ),
            None,
        )  # codes too: "gear", "cyl"
        label = row_label(columns)
        if entity is None and label and metric:  # each row is a named thing (R's rownames: car models)
            plan.kind, plan.top, plan.dimension = "rank", top, None
            subject = _t(
                zh,
                f"{'Bottom' if top[1] else 'Top'} {top[0]} rows by {metric}",
                f"{metric}{'最低' if top[1] else '最高'}的{top[0]}行",
            )
            plan.steps.append(
                Step(
                    "rank_values",
                    {
                        "value_column": metric,
                        "top": top[0],
                        "order": "smallest" if top[1] else "largest",
                        "label_columns": [label],
                    },
                    subject,
                )
            )
            return True
        if entity is None and dimension:
            entity = dimension
            if noun := top_noun(question):  # "top 5 customers" with no customer column: say so, show what there is
                plan.lead = _t(
                    zh,
                    f"The data has no column for “{noun}”; the list is by {dimension} instead.",
                    f"数据中没有对应“{noun}”的列；下面改按 {dimension} 排列。",
                )
        if entity:
            plan.kind, plan.top = "top", top
            plan.dimension = entity
            # the groups ranked by their average when the question asks for one ("best mileage on average")
            agg, word, word_zh = (
                ("mean", "average", "平均")
                if MEAN_WORDS.search(question) or asks_per_unit(question, columns)
                else ("sum", "total", "合计")
            )
            subject = _t(
                zh,
                f"{'Bottom' if top[1] else 'Top'} {top[0]} {entity} by {word} {metric}",
                f"按{metric}{word_zh}{'最低' if top[1] else '最高'}的{top[0]}个{entity}",
            )
            plan.steps.append(
                Step("group_aggregate", {"group_columns": [entity], "value_columns": [metric], "agg": agg}, subject)
            )
            return True
    date = next((c["name"] for c in columns if c["type"] == "datetime" and not c.get("pii")), None)
    if (
        date
        and WHEN.search(question)
        and (extreme := asks_extreme(question))
        and not (dimension and dimension in named)
    ):
        plan.kind, plan.dimension = "rank", None  # "哪一年的失业人数最多": the year of the largest value
        n = top[0] if top else 1
        subject = _t(
            zh,
            f"When {metric} was {'lowest' if extreme == 'least' else 'highest'}",
            f"{metric}{'最低' if extreme == 'least' else '最高'}的时间",
        )
        plan.steps.append(
            Step(
                "rank_values",
                {
                    "value_column": metric,
                    "top": n,
                    "order": "smallest" if extreme == "least" else "largest",
                    "label_columns": [date],
                },
                subject,
            )
        )
        return True
    if date and SEASON.search(question) and not (dimension and dimension in named):
        plan.kind = "seasonal"  # "每年哪个月最多": the month of the year, from the seasonal pattern
        subject = _t(zh, f"Which time of year {metric} peaks", f"{metric}在一年中的高峰和低谷")
        plan.steps.append(Step("seasonal_decompose", {"date_column": date, "value_column": metric}, subject))
        plan.steps.append(Step("plot_line", {"x_column": date, "y_column": metric}, evidence=False))
        return True
    if dimension and SHARE.search(question):
        plan.kind = "share"
        period, dimension = share_groups(question, columns, named, dimension)
        plan.dimension = dimension
        subject = _t(zh, f"Share of total {metric} by {dimension}", f"各{dimension}占{metric}总量的比例")
        plan.steps.append(Step("plot_pie", {"group_column": dimension, "value_column": metric, "top": 12}, subject))
        add_total_steps(plan, metric, dimension, zh)
        if period:  # "each month from each plan": the totals period by period too
            subject = _t(zh, f"Total {metric} by {period} and {dimension}", f"各{period}、各{dimension}的{metric}合计")
            plan.steps.append(
                Step(
                    "group_aggregate",
                    {"group_columns": [period, dimension], "value_columns": [metric], "agg": "sum"},
                    subject,
                    evidence=False,
                )
            )
        return True
    # "which store has the most revenue" over months or orders: the total, unless an average is asked
    # ("on average", "per order", "每单")
    per_row = bool(MEAN_WORDS.search(question)) or asks_per_unit(question, columns)
    summed = dated and asks_extreme(question) and ADDITIVE.search(metric) and not per_row
    counted = bool(plan.weights) and metric == plan.weights  # a count table: "most common" is the largest total
    if ((asks_total(question) and not per_row) or summed or counted) and dimension:
        plan.kind = "total"
        add_total_steps(plan, metric, dimension, zh)
        plan.steps.append(Step("plot_bar", {"x_column": dimension, "y_column": metric, "agg": "sum"}, evidence=False))
        return True
    return False


# A grouping named like a period of time ("Month", "季度"): the rows' period, not a part of the total.
PERIOD_NAME = re.compile(
    r"^(?:month|months|quarter|quarters|year|years|week|weeks|day|date|period|yr|"
    r"月|月份|季度|季|年|年份|周|日期)$",
    re.I,
)


def share_groups(
    question: str, columns: list[dict[str, Any]], named: list[str], dimension: str
) -> tuple[str | None, str]:
    """The period and the parts of a share question naming two groupings ("each month, the share of the total
    from each plan": Month and Plan): the shares are the parts', added up over the periods too. (None,
    the chosen grouping) when it names no period beside another grouping."""
    kinds = {c["name"]: c for c in columns}
    groups = [n for n in dict.fromkeys([dimension, *named]) if n in kinds and groups_rows(kinds[n])]
    periods = [n for n in groups if PERIOD_NAME.match(core_name(n).strip())] or each_period(question, columns)
    parts = [n for n in groups if n not in periods]
    return (periods[0], parts[0]) if periods and parts else (None, dimension)


_EACH_PERIOD = re.compile(
    r"\b(?:each|every|per)\s+(month|quarter|year|week|day)\b|\b(month|quarter|year|week|dai)ly\b|"
    r"每个?(月|季度|年|周|天)",
    re.I,
)
_PERIOD_UNITS = {
    "month": ("month", "months", "月", "月份"),
    "quarter": ("quarter", "quarters", "季度", "季"),
    "year": ("year", "years", "yr", "年", "年份"),
    "week": ("week", "weeks", "周"),
    "day": ("day", "date", "日期"),
    "dai": ("day", "date", "日期"),
    "季度": ("quarter", "quarters", "季度", "季"),
}
_PERIOD_UNITS |= {
    "月": _PERIOD_UNITS["month"],
    "年": _PERIOD_UNITS["year"],
    "周": _PERIOD_UNITS["week"],
    "天": _PERIOD_UNITS["day"],
}


def each_period(question: str, columns: list[dict[str, Any]]) -> list[str]:
    """The grouping column of the period a question goes through ("每个月" → 月份, "each month" → Month)."""
    match = _EACH_PERIOD.search(question)
    unit = next((g for g in match.groups() if g), "").lower() if match else ""
    names = _PERIOD_UNITS.get(unit, ())
    return [c["name"] for c in columns if groups_rows(c) and core_name(c["name"]).strip().lower() in names]


def asks_per_unit(question: str, columns: list[dict[str, Any]]) -> bool:
    """ "per order", "每单", "人均": the average of each group's rows. Not when the word after "per"/"每"
    names a grouping column ("per customer type", "每个顾客类型": a breakdown by it)."""
    kinds = {c["name"]: c for c in columns}
    groups = [
        (start, end)
        for start, end, name in column_spans(question, columns, SYNONYMS)
        if name in kinds and groups_rows(kinds[name])
    ]
    for match in PER_UNIT.finditer(question):
        unit = match.start("unit") if match.group("unit") else match.start("unit_zh") if match.group("unit_zh") else -1
        if unit < 0 or not any(start <= unit < end for start, end in groups):
            return True
    return False


def row_label(columns: list[dict[str, Any]]) -> str | None:
    """A row-name column whose values are names, not numbers (R's rownames of mtcars: "Mazda RX4")."""
    for column in columns:
        values = column.get("values") or []
        if (
            ROW_NUMBER.match(column["name"].strip())
            and values
            and not any(re.fullmatch(r"-?[\d.,]+", str(v)) for v in values)
        ):
            return column["name"]
    return None


_TOP_NOUN = re.compile(r"\b(?:top|bottom|best|worst|largest|biggest|smallest|highest|lowest)\s+\w+\s+([a-z]+)", re.I)


def top_noun(question: str) -> str | None:
    """The thing a top-N question ranks ("top 5 customers" → customers), when it says one in English."""
    match = _TOP_NOUN.search(question)
    return match.group(1) if match and match.group(1).lower() not in STOP else None


def add_total_steps(plan: Plan, metric: str, dimension: str, zh: bool) -> None:
    subject = _t(zh, f"Total {metric} by {dimension}", f"各{dimension}的{metric}合计")
    plan.steps.append(
        Step("group_aggregate", {"group_columns": [dimension], "value_columns": [metric], "agg": "sum"}, subject)
    )


def add_compare_steps(
    plan: Plan, columns: list[dict[str, Any]], metric: str, dimension: str, values: list[str], zh: bool
) -> None:
    """Compare the metric across the dimension's groups; when the question names exactly two of
    its values (and the column has more), just those two."""
    levels = next(c.get("levels", 0) for c in columns if c["name"] == dimension)
    arguments = {"value_column": metric, "group_column": dimension}
    if len(values) == 2 and levels > 2:
        arguments["groups"] = values
        subject = _t(zh, f"Compare {metric}: {values[0]} vs {values[1]}", f"比较{values[0]}与{values[1]}的{metric}")
    else:
        subject = _t(zh, f"Compare {metric} across {dimension}", f"比较不同{dimension}的{metric}")
    tool = "compare_two_groups" if levels == 2 or "groups" in arguments else "compare_groups"
    plan.steps.append(Step(tool, arguments, subject))
    plan.steps.append(Step("plot_bar", {"x_column": dimension, "y_column": metric, "agg": "mean"}, evidence=False))


def chosen_metric(question: str, columns: list[dict[str, Any]], confirmed: dict[str, str]) -> str | None:
    """The metric the user chose in a clarification (clarify.py, gates.py): topic `metric`, or
    `metric.<word>` for a question with that word; only a numeric column."""
    numeric = {c["name"] for c in columns if c["type"] in NUMERIC}
    return next(
        (
            answer
            for topic, answer in confirmed.items()
            if topic.startswith("metric")
            and answer in numeric
            and (topic == "metric" or topic.split(".", 1)[-1] in question.lower())
        ),
        None,
    )


def add_time_steps(
    plan: Plan, question: str, forecast: bool, grain: str | None, columns: list[dict[str, Any]], metric: str, zh: bool
) -> bool:
    """Trend (and forecast, when `asks_for` says so) steps when the question is about time and there
    is a date column. The forecast goes as far ahead as the question asks ("the next three months");
    the tool's default (one seasonal cycle) when it does not say."""
    column = next((c for c in columns if c["type"] == "datetime" and not c.get("pii")), None)
    date = column["name"] if column else None
    if date is None or not (asks_trend(question) or forecast):
        return False
    subject = _t(zh, f"How {metric} changes over time", f"{metric}随时间的变化")
    level = {"agg": "mean"} if is_level(metric, columns) else {}  # a week's satisfaction is its average, not its sum
    plan.steps.append(Step("time_series_trend", {"date_column": date, "value_column": metric, **level}, subject))
    plan.steps.append(Step("plot_line", {"x_column": date, "y_column": metric}, evidence=False))
    if forecast:
        subject = _t(zh, f"Forecast {metric}", f"预测{metric}")
        arguments = {"date_column": date, "value_column": metric, **level}
        if request := forecast_request(question):
            arguments.update(forecast_arguments(request, grain, column.get("span_days")))
        plan.steps.append(Step("forecast", arguments, subject))
    return True
