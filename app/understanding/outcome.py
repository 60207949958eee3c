"""Which yes/no outcome a rate question asks about (zh/en): a yes/no column it names ("more likely to
survive" → survived), or a value of a two-level category it names ("were men admitted at a higher
rate" → Admit = Admitted). Its rate is then compared between groups, not its average."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from app.understanding.english_dictionary import lemminflect
from app.understanding.general_words import is_row_word
from app.understanding.kinds import RATE
from app.understanding.profile_reading import GROUPING, NUMERIC, is_scale, measured_in_a_unit
from app.understanding.roles import Span, value_position


@dataclass(frozen=True)
class Outcome:
    column: str
    success: str | None = None  # the value that counts as a success, when the column is not yes/no


def measure_names(columns: list[dict[str, Any]], named: list[str]) -> list[str]:
    """The named columns that are measurements: numbers, not yes/no or codes — but a few whole values under a
    unit of measure (时长（小时） of jobs of 2-5 hours) are amounts too, though they may also split rows."""
    kinds = {c["name"]: c for c in columns if not c.get("pii")}
    return [
        n
        for n in named
        if kinds.get(n, {}).get("type") in NUMERIC
        and not kinds[n].get("binary")
        and not (kinds[n].get("coded") and not measured_in_a_unit(n))
    ]


def rate_outcome(question: str, columns: list[dict[str, Any]], named: list[str], spans: list[Span]) -> Outcome | None:
    """The yes/no outcome of a rate question: a yes/no column it names, else a two-level category
    one of whose values it names next to a rate word ("admitted at a higher rate")."""
    column = binary_outcome(columns, named, spans, question)
    if column:
        return Outcome(column)
    rate = RATE.search(question)
    if not rate:
        return None
    # not blanked: "admitted" names both the column Admit (an abbreviation) and its value Admitted
    text = question.lower()
    found = []
    for col in columns:
        if col["type"] not in GROUPING or col.get("levels") != 2 or col.get("pii"):
            continue
        values = [str(v) for v in col.get("values") or []]
        hits = [(at, value) for value in values if (at := value_position(text, value, values, 2)) >= 0]
        if len(hits) == 1:  # both values named: the groups ("men and women"), not the outcome
            found.append((abs(hits[0][0] - rate.start()), col["name"], hits[0][1]))
    if not found:
        return None
    _, name, value = min(found)
    return Outcome(name, value)


def binary_outcome(
    columns: list[dict[str, Any]], named: list[str], spans: list[Span], question: str = ""
) -> str | None:
    """A yes/no column the question names as its outcome ("more likely to survive") when it names
    no measurement, or asks for a rate ("偏低的比例"): its rate is compared between groups, not its
    average. Of two yes/no columns, the one named nearest the rate word."""
    kinds = {c["name"]: c for c in columns if not c.get("pii")}
    rate = RATE.search(question)
    # a rating of five or more points, or on a scale its header declares ("评分(1-5)"), is a measurement here
    # too: "is the overall score higher for remote workers" compares the score between the yes/no groups
    rated = [
        n
        for n in named
        if n in kinds and (is_scale(kinds[n]) or (kinds[n].get("coded") and (kinds[n].get("levels") or 0) >= 5))
    ]
    if (measure_names(columns, named) or rated) and not rate:
        return None
    binary = [
        (start, name)
        for start, _, name in spans
        if kinds.get(name) and (kinds[name]["type"] == "boolean" or kinds[name].get("binary"))
    ]
    if not binary:
        return None
    if not rate and _rows_compared_by_a_quality(question, spans, {n for _, n in binary}):
        return None  # "are gift-wrapped orders bigger": the yes/no column sorts the rows compared, not an outcome
    if rate and len({n for _, n in binary}) > 1:
        return min(binary, key=lambda b: abs(b[0] - rate.start()))[1]
    return binary[0][1]


# Comparatives of amount say more or fewer of the rows ("more likely", "fewer returns"), not a quality of each row.
_AMOUNT_BASES = frozenset({"much", "many", "little", "few", "less"})


def _rows_compared_by_a_quality(question: str, spans: list[Span], binary: set[str]) -> bool:
    """Whether a yes/no column is said as a mark of the rows ("gift-wrapped orders", "refunded bookings") and the
    question compares a quality of those rows by an English comparative adjective (bigger, longer, cheaper;
    not more/fewer, which count the rows): the rows with and without the mark compared on a measure, not the
    mark's rate. English only: lemminflect's comparative forms."""
    text = question.lower()
    marked = False
    for _, end, name in spans:
        after = re.match(r"[\s-]*([a-z]+)", text[end:])
        if name in binary and after and is_row_word(after.group(1)):
            marked = True
    if not marked:
        return False
    try:
        dictionary = lemminflect()
    except ImportError:  # pragma: no cover - a dependency; kept working without it
        return False
    for word in re.findall(r"[a-z]+", text):
        bases = [b for b in dictionary.getAllLemmas(word).get("ADJ", ()) if b not in _AMOUNT_BASES]
        if any(word in dictionary.getAllInflections(b).get("JJR", ()) for b in bases):
            return True
    return False
