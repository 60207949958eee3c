"""What kind of analysis a question's words ask for: a comparison, a relationship, a regression's
drivers, a trend or a forecast (`wants`, `asks_for`), and whether it asks to split the rows into
groups at all (`asks_for_groups`). The words of each kind are in vocabulary.toml (keywords.*)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from app.analyst.vocabulary import kinds, words
from app.understanding.gate_words import COMPARE_WORDS, TREND_WORDS, says_drivers, says_future, says_importance
from app.understanding.kinds import EACH, asks_direction_over_time, asks_extreme, asks_top
from app.understanding.roles import asks_ahead

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


def asks_for_groups(question: str) -> bool:
    """Whether the question asks to split the data into groups (compare, relate, which is most, what
    helps or hurts, one answer for each or per something: "how often did each area run out"), so a
    group filled by default replaces something it asked for."""
    return bool(
        wants(question, "compare")
        or wants(question, "correlate")
        or wants(question, "drivers")
        or asks_extreme(question)
        or asks_top(question)
        or GROUP_CUES.search(question)
        or EACH.search(question)
    )
