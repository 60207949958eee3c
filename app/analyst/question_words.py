"""What kind of analysis a question's words ask for: a comparison, a relationship, a regression's
drivers, a trend or a forecast (`wants`, `asks_for`), and whether it asks to split the rows into
groups at all (`asks_for_groups`). The words of each kind are in vocabulary.toml (keywords.*)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.analyst.vocabulary import kinds, words
from app.understanding.gate_words import COMPARE_WORDS, TREND_WORDS, says_drivers, says_future, says_importance
from app.understanding.general_words import counts_rows
from app.understanding.kinds import (
    EACH,
    PER_UNIT,
    TIME_UNITS,
    asks_direction_over_time,
    asks_extreme,
    asks_top,
    unit_seconds,
)
from app.understanding.roles import asks_ahead
from app.understanding.text import is_cjk, split_unit, tagged_words

# The words of each kind, looked for as text: the analyst's own (vocabulary.toml keywords.*) and those it
# shares with the clarification gates (understanding/vocabulary/gates.toml).
KEYWORDS: dict[str, tuple[str, ...]] = {kind: words(f"keywords.{kind}") for kind in kinds("keywords")}
KEYWORDS |= {"compare": COMPARE_WORDS, "trend": TREND_WORDS}
# The kinds read by a pattern of the shared vocabulary (a forecast: the future; drivers; importance,
# which also asks for a regression).
_SAID: dict[str, Callable[[str], bool]] = {"forecast": says_future, "drivers": says_drivers, "regress": says_importance}
GREETING = re.compile(r"^\s*(hi|hello|hey|thanks|thank you|你好|您好|谢谢|嗨)[\s!！。.,，]*$", re.I)

# What makes a question ask for groups even without a comparison word: whether something helps or
# hurts ("Do rainy days hurt business?"), which one is best.
GROUP_CUES = re.compile(
    r"\b(?:hurt|help|boost|improve|worsen|harm|benefit|increase|decrease|raise|reduce|lower|"
    r"affect|impact|influence|matter|make|makes|made|better|worse)s?\b|\b(?:and|or|vs\.?|versus)\b|"
    r"影响|导致|让|使|有利|不利|变差|变好|提高|降低|更好|更差|和|与|还是",
    re.I,
)


def wants(question: str, kind: str) -> bool:
    """Whether the question has one of the words of `kind` (KEYWORDS: compare, correlate, regress ...; _SAID:
    forecast, drivers, and importance for regress)."""
    text = f" {question.lower()} "
    return any(word in text for word in KEYWORDS.get(kind, ())) or (kind in _SAID and _SAID[kind](question))


def asks_trend(question: str) -> bool:
    """A trend: the word ("trend", "趋势") or a direction over time ("rising over the years", "一直在增加")."""
    return wants(question, "trend") or asks_direction_over_time(question)


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


def asks_for_groups(question: str, columns: list[dict[str, Any]] | None = None) -> bool:
    """Whether the question asks to split the data into groups (compare, relate, which is most, what
    helps or hurts, one answer for each something: "how often did each area run out", asks_each_group),
    so a group filled by default replaces something it asked for."""
    return asks_each_group(question, columns or []) or bool(
        wants(question, "compare")
        or wants(question, "correlate")
        or wants(question, "drivers")
        or asks_extreme(question)
        or asks_top(question)
        or GROUP_CUES.search(question)
    )


def asks_each_group(question: str, columns: list[dict[str, Any]]) -> bool:
    """Whether "each"/"every"/"per"/每 asks for one answer per group ("each part of the market", "per
    area", "每个片区"), not per unit: not before a unit of time ("per day", 每天), a unit a column's header
    counts in (每箱 of 单价（元/箱）, "per kg" of Weight (kg)) or a thing the rows are ("per order",
    "each customer": kinds.PER_UNIT, an average over the rows)."""
    units = {
        piece.strip().lower()
        for column in columns
        if (unit := split_unit(str(column.get("name") or ""))[1])
        for piece in unit.split("/")
        if piece.strip()
    }
    per_rows = {m.start() for m in PER_UNIT.finditer(question) if not m.group("unit") or counts_rows(m.group("unit"))}
    for match in EACH.finditer(question):
        if match.start() in per_rows:
            continue
        if is_cjk(match.group(0)[0]):
            said = _after_each_zh(question, match.start())
        else:
            said = [m.group(1)] if (m := re.match(r"\s*([a-z]+)", question[match.end() :], re.I)) else []
        if not said or not any(unit_seconds(w) or TIME_UNITS.fullmatch(w) or w.lower() in units for w in said if w):
            return True
    return False


def _after_each_zh(question: str, at: int) -> list[str]:
    """What 每 at `at` is each of, by the segmenter: the rest of its word (每箱 → 箱, 每天 → 天, 每家店 → 家店),
    its first character and what follows that (每个月 → 个, 月), and the next word (每个片区 → 个, 片区)."""
    words = [(start, end) for _, _, start, end in tagged_words(question)]
    holding = next((i for i, (start, end) in enumerate(words) if start <= at < end), None)
    if holding is None:
        return []
    rest = question[at + 1 : words[holding][1]]
    following = question[slice(*words[holding + 1])] if holding + 1 < len(words) else ""
    return [w for w in (rest, rest[:1], rest[1:], following) if w]
