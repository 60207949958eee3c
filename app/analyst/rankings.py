"""What ranks highest or lowest: the top (or bottom) N groups by their total or average, the top N
rows when each row is a named thing (R's rownames), and when a number peaked (the date of its
largest value)."""

from __future__ import annotations

import re

from app.analyst.column_choice import row_label
from app.analyst.data_tasks import names_dated_event
from app.analyst.steps import Column, Plan, Spans, Step
from app.analyst.totals import asks_per_row
from app.understanding import semantic
from app.understanding.bilingual import senses
from app.understanding.kinds import asks_extreme
from app.understanding.language import local_text as _t
from app.understanding.profile_reading import is_level
from app.understanding.roles import groups_rows
from app.understanding.text import COUNT_WORDS_EN, lemma, tokens
from app.understanding.words import STOP, stem

# When something peaked: the date (row) of the largest value. "Which month" of several years is a season (SEASON).
WHEN = re.compile(
    r"\b(?:which|what) (?:year|day|date|week)\b|\bin what year\b|\bwhen (?:was|were|did)\b|"
    r"哪一年|哪年|哪个年份|哪一天|哪天|哪一周|什么时候|何时",
    re.I,
)


_TOP_NOUN = re.compile(r"\b(?:top|bottom|best|worst|largest|biggest|smallest|highest|lowest)\s+\w+\s+([a-z]+)", re.I)


def top_noun(question: str) -> str | None:
    """The thing a top-N question ranks ("top 5 customers" → customers), when it says one in English."""
    match = _TOP_NOUN.search(question)
    return match.group(1) if match and match.group(1).lower() not in STOP else None


# How many groups group_aggregate's table shows (the largest first; analysis_tools.data_merge): the bottom N
# of a grouping that has at most this many are read from the whole table, as the top N are.
AGGREGATE_SHOWN = 20


def top_steps(
    plan: Plan,
    question: str,
    columns: list[Column],
    named: list[str],
    top: tuple[int, bool],
    zh: bool,
    rows: int = 0,
    spans: Spans | None = None,
) -> bool:
    """Top/bottom N: the rows by the metric when each row is a named thing, else the groups of the
    entity the question ranks (or the plan's grouping, said so when the question names a thing the
    data has no column for) by their total, or their average when it asks for one."""
    metric, dimension = plan.metric or "", plan.dimension
    kinds = {c["name"]: c for c in columns}
    entity = next(
        (
            n
            for n in named
            if n != metric and kinds.get(n) and (kinds[n]["type"] in ("identifier", "text") or groups_rows(kinds[n]))
        ),
        None,
    )  # codes too: "gear", "cyl"
    if entity and one_row_each(kinds[entity], rows) and metric:  # "the five most expensive orders" by Order ID
        _top_rows(plan, metric, entity, top, zh)
        return True
    label = row_label(columns) or (None if entity else ranked_row_column(question, columns, rows))
    if entity is None and metric and (label or named_rows(columns, rows)):
        _top_rows(plan, metric, label, top, zh)  # each row is a named thing (R's rownames, an order by its number)
        return True
    if (
        entity is None
        and metric
        and dimension not in named
        and ranks_rows(question, columns, spans or [], dimension)
        and (labels := describing_columns(columns, metric))
    ):
        # "费用最高的5次就诊", "which 5 orders had the highest revenue": the things ranked are what the rows are and
        # the question names no grouping; ranking a grouping nobody asked for would answer another question.
        # Each row is shown by its date and its categories.
        _top_rows(plan, metric, labels, top, zh)
        return True
    if entity is None and dimension:
        entity = dimension
        if noun := top_noun(question):  # "top 5 customers" with no customer column: say so, show what there is
            plan.lead = _t(
                zh,
                f"The data has no column for “{noun}”; the list is by {dimension} instead.",
                f"数据中没有对应“{noun}”的列；下面改按 {dimension} 排列。",
            )
    if not entity:
        return False
    plan.kind, plan.top = "top", top
    plan.dimension = entity
    # the groups ranked by their average when the question asks for one ("best mileage on average"), or
    # when the number is a level whose sum means nothing (a price, a rate, a score: "单价最高的三个品类")
    averaged = asks_per_row(question, columns, spans or [])
    agg, word, word_zh = (
        ("mean", "average", "平均") if averaged or is_level(metric, columns) else ("sum", "total", "合计")
    )
    subject = _t(
        zh,
        f"{'Bottom' if top[1] else 'Top'} {top[0]} {entity} by {word} {metric}",
        f"按{metric}{word_zh}{'最低' if top[1] else '最高'}的{top[0]}个{entity}",
    )
    distinct = (kinds[entity].get("levels") or kinds[entity].get("distinct")) if entity in kinds else None
    if top[1] and not (distinct and distinct <= AGGREGATE_SHOWN):
        # the bottom of many groups (or of a count not known): rank_values lists them, where group_aggregate's
        # table would show only the largest; when every group fits its table, the table (like the top N's)
        arguments = {"value_column": metric, "top": top[0], "order": "smallest", "group_column": entity, "agg": agg}
        plan.steps.append(Step("rank_values", arguments, subject))
        return True
    plan.steps.append(
        Step("group_aggregate", {"group_columns": [entity], "value_columns": [metric], "agg": agg}, subject)
    )
    return True


def one_row_each(column: Column, rows: int) -> bool:
    """Whether a column names each row once (an order number, a person's name): ranking it ranks rows,
    while a column whose values repeat (a customer, a branch) ranks groups of rows."""
    if column["type"] == "identifier":
        return True
    levels = column.get("levels")
    return bool(rows and levels and levels >= rows)


def ranked_row_column(question: str, columns: list[Column], rows: int) -> str | None:
    """The column that names each row when the thing ranked is the row itself: the question's word for
    what it ranks is a word of an identifier's name ("orders" of Order ID, 订单 of 订单号). None when the
    question ranks something else or no column names the rows."""
    said = [t for t in tokens(question) if len(t.lemma) > 1]
    words, cjk = {t.lemma for t in said}, [t.word for t in said if t.is_cjk]
    # a Chinese word of the question that is no part of a column's name (学生, not the 数学 ranked by)
    free = [w for w in cjk if not any(w in str(c["name"]) or str(c["name"]) in w for c in columns)]
    for column in columns:
        if column.get("pii") or column["type"] not in ("identifier", "text") or not one_row_each(column, rows):
            continue
        name = str(column["name"])
        heads = [t.lemma for t in tokens(name) if not t.is_cjk]
        # its head words ("order" of Order ID), a Chinese word inside it (订单 of 订单号), a character of a
        # Chinese word the columns do not name (学生 and 学号, 员工 and 工号: the number of a pupil, of an employee),
        # or a Chinese word the columns do not name that means a head word (遛狗, to walk a dog, of Walk ID)
        head_stems = {stem(word) for word in heads[:-1] or heads if len(word) > 2}
        if (
            any(word in words for word in heads[:-1] or heads)
            or any(word in name for word in cjk)
            or any(char in name for word in free for char in word)
            or any(sense & head_stems for word in free for sense in senses(word))
        ):
            return name
    # else a column of names, one for each row ("the three tallest children" by Name): the rows are things
    names = [str(c["name"]) for c in columns if c["type"] == "text" and not c.get("pii") and one_row_each(c, rows)]
    return names[0] if len(names) == 1 else None


def named_rows(columns: list[Column], rows: int) -> bool:
    """Whether each row is a named thing even where its names are personal data (姓名): the rows are
    ranked then, by their row numbers, since personal names are not shown."""
    return any(c["type"] == "text" and one_row_each(c, rows) for c in columns)


# The thing a top-N question counts: the English word after its count that is a plural ("the five heaviest single
# handouts", "which 5 orders"), the Chinese word after its count and measure word ("5次就诊", "3个科室")
_COUNTED_EN = re.compile(r"\b(?:\d+|" + "|".join(COUNT_WORDS_EN) + r")\s+([a-z]+(?:\s+[a-z]+){0,3})", re.I)
_COUNTED_ZH = re.compile(r"(?:\d+|[一二两三四五六七八九十]+)\s*[个位名家种次笔单件条趟只款所类]\s*([\u4e00-\u9fff]{2})")


def counted_thing(question: str) -> str | None:
    """The word for the things a top-N question ranks, or None when it says none."""
    if match := _COUNTED_ZH.search(question):
        return match.group(1)
    for match in _COUNTED_EN.finditer(question):
        plural = next(
            (w for w in match.group(1).split() if w.lower().endswith("s") and lemma(w.lower()) != w.lower()), None
        )
        if plural:
            return plural.lower()
    return None


def ranks_rows(question: str, columns: list[Column], spans: Spans, grouping: str | None) -> bool:
    """Whether the things a top-N question ranks are the rows, where no column names them and the question names
    no grouping: it names the event a date column dates ("5次就诊" of 就诊日期, "orders" of Order Date), or a thing
    no grouping is close to in meaning ("the five heaviest single handouts") — not a grouping's word ("which 3
    areas": Region, by meaning; "top 5 customers" on orders: Customer Type, which the analyst asks about)."""
    if names_dated_event(question, spans, columns):
        return True
    thing = counted_thing(question)
    if thing is None:
        return False
    groupings = [str(c["name"]) for c in columns if groups_rows(c) and not c.get("pii")]
    return semantic.assumed_column(thing, groupings, "group") is None


# How many columns describe a row that has no name of its own (its date and its first categories)
DESCRIBED_BY = 3


def describing_columns(columns: list[Column], metric: str) -> list[str]:
    """The columns that show a ranked row as a reader would tell it apart: its number when it has one (an order
    number, whatever language its header is in: the reader looks the row up by it), its date, then its categories
    (not personal data, not the measure), at most DESCRIBED_BY of them."""
    numbered = [str(c["name"]) for c in columns if c["type"] == "identifier" and not c.get("pii")][:1]
    dated = [str(c["name"]) for c in columns if c["type"] == "datetime" and not c.get("pii")][:1]
    grouped = [str(c["name"]) for c in columns if c["name"] != metric and groups_rows(c) and not c.get("pii")]
    return [*numbered, *dated, *grouped][:DESCRIBED_BY]


def _top_rows(plan: Plan, metric: str, label: str | list[str] | None, top: tuple[int, bool], zh: bool) -> None:
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
                **({"label_columns": [label] if isinstance(label, str) else label} if label else {}),
            },
            subject,
        )
    )


def when_steps(plan: Plan, question: str, date: str, named: list[str], top: tuple[int, bool] | None, zh: bool) -> bool:
    """When the number was highest (or lowest): the date of its largest value, as its rows rank ("哪一年的
    失业人数最多"); not when the question names the grouping it compares."""
    metric, dimension = plan.metric or "", plan.dimension
    extreme = asks_extreme(question, metric) if WHEN.search(question) else None
    if not extreme or (dimension and dimension in named):
        return False
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
