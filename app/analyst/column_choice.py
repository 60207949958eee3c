"""Which columns a plan analyses where the question's words do not settle it all: the number
(`choose_metric`: a named measurement, else one named like a metric, else the first), the grouping
(`choose_dimension`), the other numbers a correlation looks at, the metric the user chose in a
clarification, and a table's row names."""

from __future__ import annotations

import re

from app.analyst.data_tasks import ROW_NUMBER
from app.analyst.steps import Column, Spans
from app.analyst.vocabulary import words
from app.understanding.kinds import EACH
from app.understanding.profile_reading import GROUPING, NUMERIC
from app.understanding.role_sources import same_family
from app.understanding.roles import column_spans, groups_rows
from app.understanding.words import SYNONYMS

METRIC_HINTS = words("metric_hints")  # tried in order (vocabulary.toml)


def mentioned_columns(question: str, columns: list[Column]) -> list[str]:
    """Columns named in the question (by name, synonym, stem or abbreviation), longest names first
    (so 'Unit Price' beats 'Price')."""
    return named_longest_first(column_spans(question, columns, SYNONYMS), columns)


def named_longest_first(spans: Spans, columns: list[Column]) -> list[str]:
    """The columns of `spans` (where the question names them), longest names first."""
    named = {name for _, _, name in spans}
    return [str(c["name"]) for c in sorted(columns, key=lambda c: -len(c["name"])) if c["name"] in named]


# What may stand between an each-word and the thing it goes through: a Chinese measure word (每家影院, 每一个
# 部门), "the"/"single" (each single store). Structure words, not vocabulary.
_EACH_GAP = re.compile(r"\s*(?:一)?[个家位种名类所间条只台辆]?\s*(?:(?:the|single|one)\s+)?$", re.I)
_EACH_ZH = re.compile(r"各(?!自|种|样|式)")


def each_named_first(question: str, spans: Spans, named: list[str]) -> list[str]:
    """`named` with the columns the question goes through one by one first ("每家影院…", "各影院", "for
    each cinema"): the grouping it asks about beats a longer name it mentions for something else."""
    text = question.lower()
    marks = [m.end() for m in EACH.finditer(text)] + [m.end() for m in _EACH_ZH.finditer(text)]
    each = {name for start, _, name in spans if any(at <= start and _EACH_GAP.match(text[at:start]) for at in marks)}
    return [n for n in named if n in each] + [n for n in named if n not in each]


def choose_metric(columns: list[Column], named: list[str], question: str = "") -> str | None:
    """The number to analyse: a named measurement, else the one measurement a word of its metric family
    names ("how many orders" for 订单数, "sales" for 销售额: gate_words.FAMILIES), else one named like a
    metric, else the first. Yes/no and code columns (smoke, cyl) are groups, not measurements, unless
    nothing else is named."""
    numeric = [str(c["name"]) for c in columns if c["type"] in NUMERIC and not c.get("pii")]
    measures = [
        str(c["name"])
        for c in columns
        if c["type"] in NUMERIC and not c.get("pii") and not (c.get("binary") or c.get("coded"))
    ]
    for pool in (measures, numeric):
        for name in named:
            if name in pool:
                return name
    if len(family := [name for name in measures if question and same_family(question, name)]) == 1:
        return family[0]
    for hint in METRIC_HINTS:
        for name in measures:
            if hint in name.lower():
                return name
    pool = measures or numeric
    return pool[0] if pool else None


def choose_dimension(
    columns: list[Column], named: list[str], implied: str | None = None, metric: str | None = None
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
    pool = real or few or groupable
    return str(pool[0]["name"]) if pool else None


def other_numeric(columns: list[Column], metric: str | None, limit: int = 6) -> list[str]:
    """The numbers besides the metric (no personal data), in column order."""
    return [str(c["name"]) for c in columns if c["type"] in NUMERIC and c["name"] != metric and not c.get("pii")][
        :limit
    ]


def chosen_metric(question: str, columns: list[Column], confirmed: dict[str, str]) -> str | None:
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


def row_label(columns: list[Column]) -> str | None:
    """A row-name column whose values are names, not numbers (R's rownames of mtcars: "Mazda RX4")."""
    for column in columns:
        values = column.get("values") or []
        if (
            ROW_NUMBER.match(column["name"].strip())
            and values
            and not any(re.fullmatch(r"-?[\d.,]+", str(v)) for v in values)
        ):
            return str(column["name"])
    return None
