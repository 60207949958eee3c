"""The vocabulary of the clarification gates (app/agent/policy/gates.py): metric families and their
words, goal cues, period and method patterns, identifier-like names — read from
vocabulary/gates.toml — and the word matching they use."""

from __future__ import annotations

import re
from collections.abc import Iterable

from app.understanding import vocabulary
from app.understanding.text import plain_words


def normalise(text: str) -> str:
    """The text's plain words (text.plain_words) joined by one space: a name is found in a question
    as a substring of this form."""
    return " ".join(plain_words(text))


def word_set(text: str) -> set[str]:
    """The text's plain words, a final plural "s" dropped (orders → order, but not class)."""
    return {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in plain_words(text)}


def has_word(words: Iterable[str], text: str) -> bool:
    norm, tokens = normalise(text), word_set(text)
    for word in words:
        if word.isascii():
            if (" " in word and word in norm) or word in tokens:
                return True
        elif word in text:
            return True
    return False


_FILE = "gates"  # vocabulary/gates.toml


# A family of metric columns: the words that refer to it; `generic` words name the family, not a
# specific column (a column called just "revenue" is not named exactly when "revenue_net" exists).
def _optional(entry: vocabulary.Entry, name: str) -> tuple[str, ...]:
    return entry.strings(name) if name in entry.fields else ()


FAMILIES: dict[str, dict[str, tuple[str, ...]]] = {
    entry.key: {
        "words": (*entry.strings("words"), *_optional(entry, "specific")),
        "generic": (*entry.strings("words"), *_optional(entry, "generic_also")),
    }
    for entry in vocabulary.entries(_FILE, "families")
}
# A qualifier of a metric's name -> what it means (English, Chinese)
HINTS: dict[str, tuple[str, str]] = {
    entry.key: (entry.text("en"), entry.text("zh")) for entry in vocabulary.entries(_FILE, "hints")
}
# The words of the kinds of analysis a question asks for, one list each, which the analyst's plan
# (app/analyst/question_words.py) and the gates' goal cues both read: plain words, looked for as text.
TREND_WORDS = vocabulary.words(_FILE, "trend_words")
COMPARE_WORDS = vocabulary.words(_FILE, "compare_words")


def _table_alternation(table: str) -> str:
    """A table of this file as one pattern: its entries' plain `words` escaped, or their `patterns`;
    `table.key` is the one entry of the table with that key (methods.retention)."""
    table, _, key = table.partition(".")
    return "|".join(
        "|".join(map(re.escape, entry.strings("words"))) if "words" in entry.fields else entry.alternation()
        for entry in vocabulary.entries(_FILE, table)
        if not key or entry.fields.get("key") == key
    )


def _with_shared(entry: vocabulary.Entry) -> str:
    """An entry's patterns and those of the tables it names in `also` (a goal's shared words), as one."""
    shared = entry.strings("also") if "also" in entry.fields else ()
    return "|".join([entry.alternation(), *map(_table_alternation, shared)])


# Importance phrased as "what matters most for X" (a drivers question), and the words of what drives,
# explains or models a number: both read by the gates and the analyst.
IMPORTANCE = vocabulary.alternation(_FILE, "importance")
# The goal a question states -> the pattern of its words (matched ignoring case)
GOAL_CUES: dict[str, str] = {entry.key: _with_shared(entry) for entry in vocabulary.entries(_FILE, "goal_cues")}
VAGUE = re.compile(
    rf"^\s*(?:{vocabulary.alternation(_FILE, 'vague_openers')})?(?:{vocabulary.alternation(_FILE, 'vague_requests')})",
    re.I,
)

PERIOD_COMPARE = vocabulary.regex(_FILE, "period_compare", re.I)
# An explicit period: numbers and month names, a pattern of its own (not a list of words)
EXPLICIT_PERIOD = re.compile(
    r"\b(?:19|20)\d{2}\b|\bq[1-4]\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\d{4}-\d{1,2}|"
    r"\d{1,2}月|第?[一二三四1-4]季度|\blast \d+ (?:days|weeks|months)\b|最近\d+天",
    re.I,
)


# kind -> (pattern, (en what, zh what), (en risk, zh risk))
METHODS: dict[str, tuple[str, tuple[str, str], tuple[str, str]]] = {
    entry.key: (_with_shared(entry), entry.pair("what"), entry.pair("risk"))
    for entry in vocabulary.entries(_FILE, "methods")
}
# A bare "预测"/"predict" is a forecast unless the question asks what drives or explains something
# and names no future ("哪些因素能预测营业额" is a model of drivers, "预测营业额" a forecast).
DRIVER_WORDS = vocabulary.alternation(_FILE, "driver_words")
FUTURE_WORDS = vocabulary.alternation(_FILE, "future_words")


def says_future(text: str) -> bool:
    """Whether a text names a future (next month, upcoming, 未来, 下周): a forecast's words."""
    return re.search(FUTURE_WORDS, text, re.I) is not None


def says_drivers(text: str) -> bool:
    """Whether a text asks what drives, explains or matters most for something (factor, why, 影响)."""
    return re.search(f"{DRIVER_WORDS}|{IMPORTANCE}", text, re.I) is not None


def says_importance(text: str) -> bool:
    """Whether a text asks what matters most for something (matters most, 最重要)."""
    return re.search(IMPORTANCE, text, re.I) is not None


INFERENTIAL = ("compare", "trend", "attribution", "retention", "funnel")  # goals (GOAL_CUES keys) a test answers
# An identifier-like name: an English word for an id at its end or its start, a Chinese one anywhere
ID_LIKE = re.compile(
    rf"(?:^|[\s_\-])(?:{vocabulary.word_alternation(_FILE, 'id_suffixes')})$"
    rf"|^(?:{vocabulary.word_alternation(_FILE, 'id_prefixes')})[\s_\-]"
    rf"|{vocabulary.word_alternation(_FILE, 'id_words_zh')}",
    re.I,
)
