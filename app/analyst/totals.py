"""Totals and shares per group: "which store brings in the most revenue" over months or orders is a
total, unless an average is asked ("on average", "per order", "每单": `asks_per_unit`); "what share
of the total" is each group's part (a pie) and, when the question goes through a period as well
("each month, the share from each plan"), the totals period by period."""

from __future__ import annotations

import re

from app.analyst.question_words import asks_each_group
from app.analyst.steps import Column, Plan, Spans, Step
from app.analyst.vocabulary import period_aliases, period_units, words
from app.understanding.column_forms import counts_things, names_things_en
from app.understanding.general_words import counts_rows
from app.understanding.kinds import DIFFERENCE, HOW_MANY, HOW_MUCH, MEAN_WORDS, PER_UNIT, asks_extreme, asks_total
from app.understanding.language import local_text as _t
from app.understanding.period_groups import is_period_column, period_column, period_group_places
from app.understanding.profile_reading import is_level
from app.understanding.roles import groups_rows
from app.understanding.text import COUNT_WORDS_EN, lemma
from app.understanding.vocabulary import word_alternation
from app.understanding.words import core_name, name_words

ADDITIVE = words("additive")  # parts of a name that make a number a total (vocabulary.toml)
# A grouping named like a period of time ("Month", "季度"): the rows' period, not a part of the total —
# any name of a unit of time (period_units). ("period" itself, listed for one hold-out question, went:
# that question's period is the one it names, each_period.)
PERIOD_NAMES = {word for names in period_units().values() for word in names}


def _period_name(name: str) -> bool:
    """Whether a column is named like a period of time, in any form (Months: month)."""
    core = core_name(name).strip().lower()
    return core in PERIOD_NAMES or lemma(core) in PERIOD_NAMES


def additive(name: str, columns: list[Column] | None = None) -> bool:
    """Whether a number's name says it adds up (revenue, orders, 销量): its total per group makes sense.
    An English word of the list counts as a whole word of the name (its lemma too: "Units Sold", not the
    "count" of Country or Discount); a Chinese one anywhere in it (销售额 in 月销售额). A name that also says
    it is a level (a rate, a share, an average, a price, a score: 利润率, 平均销售额, "Revenue %", "Unit Cost
    Price") is not additive whatever amount it is a rate of, nor is a column whose values look like a
    rating (profile_reading.is_level): adding up its rows means nothing."""
    if is_level(name, columns or []):
        return False
    lowered = name.lower()
    english = set(name_words(lowered)) | {lemma(word) for word in name_words(lowered)}
    listed = any((word in english) if word.isascii() else (word in lowered) for word in ADDITIVE)
    return listed or counts_things(name) or _whole_things(name, columns or [])  # 杯数, 销量（箱）, Copies


def _whole_things(name: str, columns: list[Column]) -> bool:
    """An English plural name over whole numbers never below 0 (Copies, Tickets Sold): a number of things,
    which adds up like 杯数 (a plural over decimals or negatives, "Returns %" or "Degrees", is another
    quantity)."""
    column = next((c for c in columns if c["name"] == name), None)
    whole = column is not None and column.get("type") == "integer" and (column.get("minimum") or 0) >= 0
    return whole and names_things_en(name)


def share_groups(question: str, columns: list[Column], named: list[str], dimension: str) -> tuple[str | None, str]:
    """The period and the parts of a share question naming two groupings ("each month, the share of the total
    from each plan": Month and Plan): the shares are the parts', added up over the periods too. (None,
    the chosen grouping) when it names no period beside another grouping."""
    kinds = {c["name"]: c for c in columns}
    groups = [n for n in dict.fromkeys([dimension, *named]) if n in kinds and groups_rows(kinds[n])]
    periods = [n for n in groups if _period_name(n)] or each_period(question, columns)
    parts = [n for n in groups if n not in periods]
    return (periods[0], parts[0]) if periods and parts else (None, dimension)


EACH_PERIOD = re.compile(
    r"\b(?:each|every|per)\s+(month|quarter|year|week|day)\b|\b(month|quarter|year|week|dai)ly\b|"
    r"每个?(月|季度|年|周|天)",
    re.I,
)
# the column names of each unit EACH_PERIOD catches, its other spellings too ("dai" of "daily", "月")
_PERIOD_UNITS = period_units()
_PERIOD_UNITS |= {alias: _PERIOD_UNITS[unit] for alias, unit in period_aliases().items()}


def each_period_unit(question: str) -> str:
    """The period a question goes through ("each year" → year, "每月" → 月), or "" when it names none."""
    match = EACH_PERIOD.search(question)
    return next((g for g in match.groups() if g), "").lower() if match else ""


_UNITS = ("year", "quarter", "month", "week", "day")  # coarsest first
# A count of calendar periods ("3 months", "三个月", "five years"; not a year's number: 2023年), and a span
# before it ("前三个月", "这三年", "the last 3 months", "over these 3 years" are a stretch of time, not the N
# periods ranked)
_COUNTED_PERIODS = re.compile(
    r"(?<![A-Za-z0-9.])(?P<span>(?:前|后|头|最近|近|过去|这|那|(?:the\s+)?(?:last|past|first|next|previous)\s+"
    r"|(?:these|those|over)\s+)\s*)?"
    r"(?:\d{1,2}(?!\d)|[一二两三四五六七八九十]+|"
    + "|".join(COUNT_WORDS_EN)
    + r")\s*个?\s*(?P<unit>[a-z]+|[\u4e00-\u9fff]{1,2})",
    re.I,
)


def ranked_period_unit(question: str) -> str:
    """The unit of time a top-N question counts ("the top 3 months", "订单最多的三个月" → month), or "" when
    its number counts no unit of time or a stretch of it ("前三个月", "the last 3 months")."""
    for match in _COUNTED_PERIODS.finditer(question):
        said = match.group("unit").lower()
        heads = (said, said.rstrip("s")) if said.isascii() else (said, said[:1])  # 三个月是…: 月
        unit = next((u for u in _UNITS if any(h in _PERIOD_UNITS[u] for h in heads)), "")
        if unit and not match.group("span"):
            return unit
    return ""


def period_unit_named(text: str) -> str:
    """The unit of time a short text names by one of its period words ("which quarter" → quarter, "哪个月"
    → month), coarsest first; "" when none."""
    lowered = text.lower()

    def said(word: str) -> bool:
        if word.isascii():
            return re.search(rf"\b{re.escape(word)}s?\b", lowered) is not None  # which months: month
        # a one-character unit after a measure word or "which" (哪个月, 哪一年, 哪年), not the 季 of 旺季
        return (word in lowered) if len(word) > 1 else any(f"{c}{word}" in lowered for c in "个一几哪")

    return next(
        (unit for unit in _UNITS if any(map(said, _PERIOD_UNITS.get(unit, ())))),
        "",
    )


def each_period(question: str, columns: list[Column]) -> list[str]:
    """The grouping column of the period a question goes through ("每个月" → 月份, "each month" → Month)."""
    unit = each_period_unit(question)
    names = _PERIOD_UNITS.get(unit, ())
    return [
        c["name"]
        for c in columns
        if groups_rows(c) and (core := core_name(c["name"]).strip().lower()) and (core in names or lemma(core) in names)
    ]


def asks_per_unit(question: str, columns: list[Column], spans: Spans) -> bool:
    """ "per order", "每单", "人均": the average of each group's rows. Not when the word after "per"/"每"
    names a grouping column ("per customer type", "每个顾客类型": a breakdown by it); `spans` are where
    the question names its columns."""
    kinds = {c["name"]: c for c in columns}
    groups = [(start, end) for start, end, name in spans if name in kinds and groups_rows(kinds[name])]
    for match in PER_UNIT.finditer(question):
        if match.group("unit") and not counts_rows(match.group("unit")):
            continue  # "per month", "each region": not a thing the rows are
        unit = match.start("unit") if match.group("unit") else match.start("unit_zh") if match.group("unit_zh") else -1
        if unit < 0 or not any(start <= unit < end for start, end in groups):
            return True
    return False


def add_total_steps(plan: Plan, metric: str, dimension: str, zh: bool) -> None:
    subject = _t(zh, f"Total {metric} by {dimension}", f"各{dimension}的{metric}合计")
    plan.steps.append(
        Step("group_aggregate", {"group_columns": [dimension], "value_columns": [metric], "agg": "sum"}, subject)
    )


def share_steps(
    plan: Plan, question: str, columns: list[Column], named: list[str], dimension: str, zh: bool, counted: bool = False
) -> None:
    """Each group's share of the total (plot_pie) with the totals, and the totals per period when the
    question goes through one. `counted`: the question names no measure ("各渠道占订单的比例"), so
    each group's share of the rows."""
    metric = plan.metric or ""
    plan.kind = "share"
    period, dimension = share_groups(question, columns, named, dimension)
    plan.dimension = dimension
    if counted:
        plan.metric = None
        subject = _t(zh, f"Share of rows by {dimension}", f"各{dimension}占行数的比例")
        plan.steps.append(Step("plot_pie", {"column": dimension, "top": 12}, subject))
        return
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


# A negating prefix right before a word (非会员, "non-members", "unpaid"): the word's opposite.
NEGATED_BEFORE = re.compile(rf"(?:^|[^a-z])(?:{word_alternation('roles', 'negating_prefixes')})-?$", re.I)


def both_sides_named(question: str, columns: list[Column], spans: Spans, dimension: str | None) -> bool:
    """Whether the question names a yes/no grouping and its opposite ("会员和非会员", "members and non-members"):
    an amount asked of the two ("…的销售额分别是多少") is asked of each side, as of two groups named by their
    values ("东门和西门的销量"), so over dated rows each side's total."""
    column = next((c for c in columns if c["name"] == dimension), None)
    if column is None or column.get("type") != "boolean":
        return False
    text = question.lower()
    said = [NEGATED_BEFORE.search(text[:start]) is not None for start, _, name in spans if name == dimension]
    words = {text[start:end] for start, end, name in spans if name == dimension}
    # the opposite written as a prefix inside the same word ("non-members" said once, read with "members")
    for word in words:
        for match in re.finditer(re.escape(word), text):
            said.append(NEGATED_BEFORE.search(text[: match.start()]) is not None)
    return True in said and False in said


def asks_per_row(question: str, columns: list[Column], spans: Spans) -> bool:
    """Whether the question asks for an average: "on average", "平均", "per order", "每单"."""
    return bool(MEAN_WORDS.search(question)) or asks_per_unit(question, columns, spans)


def averaged_by_default(question: str, columns: list[Column], spans: Spans, metric: str) -> bool:
    """Whether groups compared by their average of `metric` is a default the question did not say: it
    asks which group has the most of an additive number ("which store has the highest sales") on rows
    that are in no periods (total_steps totals it over periods), naming neither a total nor an average.
    Rows without dates may be repeated measurements, so the averages are compared; but a store's sales
    may as well be its total, and the two may crown different stores: the reading marks the average as
    assumed and offers the total (reading.kind_assumption). A level (a score, a price) is not additive:
    its average is the only sensible reading, and stays unmarked."""
    if not asks_extreme(question) or asks_total(question) or asks_per_row(question, columns, spans):
        return False
    return additive(metric, columns)


def asks_amount(question: str) -> bool:
    """Whether the question asks how much or how many ("how much revenue", "how many units", "多少")."""
    return bool(HOW_MANY.search(question) or HOW_MUCH.search(question))


def total_steps(plan: Plan, question: str, columns: list[Column], spans: Spans, dated: bool, zh: bool) -> bool:
    """The total per group when the question asks for a total, or for the most of an additive number
    over dated rows ("which store has the most revenue"), or the most common case of a count table;
    False otherwise."""
    metric, dimension = plan.metric or "", plan.dimension
    # "which store has the most revenue" over months or orders: the total, unless an average is asked
    # ("on average", "per order", "每单")
    per_row = asks_per_row(question, columns, spans)
    # the rows are parts of a total when they are periods' or orders' (a date column, or a column of
    # periods such as 月份 of 1月..12月, which is not a date but puts the rows in months just the same)
    over_periods = dated or period_column(columns) is not None
    ranked = over_periods and asks_extreme(question) and additive(metric, columns) and not per_row
    counted = bool(plan.weights) and metric == plan.weights  # a count table: "most common" is the largest total
    # "每个月的销量", "units sold each month" on a column of months: each period's total of an additive number
    # (what happened in a month is its total; its average row, a store's month, would be another question)
    periods = {name for _, _, name in period_group_places(question.lower(), columns)}
    # "每个门店的销量是多少？", "how much revenue did each store make": an amount per group, over rows that are
    # periods or orders, is the group's total (its average month would be another question)
    # "东门和西门的销量差多少？", "6月的销售额比1月增长了多少？": two groups named, an amount asked of each: their totals
    # "上个月的营业额是多少？", "how much revenue did we make": an amount of the whole, no grouping named, is its
    # total (the groups it breaks down into follow: findings._groups_assumed)
    each = asks_each_group(question, columns) or both_sides_named(question, columns, spans, dimension)
    whole = dimension not in {name for _, _, name in spans} and not DIFFERENCE.search(question)
    amount = over_periods and asks_amount(question) and (each or len(plan.values) == 2 or whole)
    summed = ranked or ((dimension in periods or amount) and additive(metric, columns) and not per_row)
    asked = asks_total(question) and not per_row
    if not ((asked or summed or counted) and dimension):
        return False
    plan.kind = "total"
    # a group's most of an additive number that the question asked neither as a total nor as an average
    # ("which store has the highest sales"): the total is a default, which the reading marks as assumed
    # and offers the average for (reading.kind_assumption)
    # (not where the groups are periods themselves: "which month sold the most" is the month's total)
    grouping = next((c for c in columns if c["name"] == dimension), {})
    by_period = dimension in periods or is_period_column(grouping)
    plan.kind_default = "mean" if ranked and not (by_period or asked or counted) else None
    add_total_steps(plan, metric, dimension, zh)
    if len(plan.values) == 2 and not counted:  # "东门和西门的销量差多少？": the first's total less the second's
        plan.steps[-1].arguments["compare"] = [str(v) for v in plan.values]
    plan.steps.append(Step("plot_bar", {"x_column": dimension, "y_column": metric, "agg": "sum"}, evidence=False))
    return True
