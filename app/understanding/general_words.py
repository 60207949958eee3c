"""The words of a question that name no variable — the language's own words, not the data's (read by
role_sources.unmatched_words: what is left after them, and after every column and value named, is a
phrase the data may lack).

Most of the work is done by general language tools rather than lists:
- English: a word is looked up by its dictionary form (text.lemma: compared → compare, drivers →
  driver, went → go) and its stem (words.stem), so the list (vocabulary/unmatched_words.toml
  `general_en`) holds each word once, not each of its inflections; the stop words (stop_words.toml)
  are not repeated there.
- Chinese: the closed word classes — pronouns and question words (哪个, 什么), numerals and measure
  words, prepositions, conjunctions, particles, adverbs, words of place and of time (之后, 去年) — are
  recognised by jieba's part-of-speech tagger (text.closed_class_spans), so the list `general_zh`
  keeps only open-class words of analysis (趋势, 影响, 平均 …) that the tagger cannot tell apart from a
  variable's name.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from app.understanding import vocabulary
from app.understanding.english_dictionary import lemminflect
from app.understanding.everyday_words import CONCEPTS
from app.understanding.kinds import UNITS_EN
from app.understanding.text import english_stop_words, is_cjk, lemma
from app.understanding.words import STOP, stem

_FILE = "unmatched_words"


# A cue pattern that is a plain word: `\bmean\b`, `\brates?\b` (the word without its plural s), or one
# plain group of plain alternatives, `最(?:低|少|小)`, `\b(?:most|highest)\b` (each alternative a word).
_PLAIN = r"[^\\()|?*+.\[\]{}^$]+"
_PLURAL = re.compile(rf"({_PLAIN})s\?")
_GROUP = re.compile(rf"({_PLAIN})?\(\?:({_PLAIN}(?:\|{_PLAIN})*)\)({_PLAIN})?")
# The kinds of question whose cue words ask for a statistic or a direction, never name a variable
# (question_kinds.toml): superlatives, shares, rates, means, directions of change, units of time.
_STATISTIC_TABLES = ("most", "least", "share", "rate", "mean_words", "direction", "time_units")


def plain_forms(pattern: str) -> tuple[str, ...]:
    """The words a cue pattern spells out whole, or () for a stem or a pattern with structure."""
    text = pattern.replace(r"\b", "")
    if re.fullmatch(_PLAIN, text):
        return (text,)
    if plural := _PLURAL.fullmatch(text):
        return (plural.group(1),)
    if group := _GROUP.fullmatch(text):
        before, after = group.group(1) or "", group.group(3) or ""
        return tuple(before + alternative + after for alternative in group.group(2).split("|"))
    return ()


def _statistic_forms() -> tuple[str, ...]:
    """The plain cue words of question_kinds.toml's tables of statistics and directions (_STATISTIC_TABLES)."""
    return tuple(
        form
        for table in _STATISTIC_TABLES
        for p in vocabulary.words("question_kinds", table, "patterns")
        for form in plain_forms(p)
    )


def _names_concept(word: str) -> bool:
    """Whether a cue word is an everyday concept's word (heaviest → heavy, 最重, 最便宜: the weight, the
    price): a superlative of such an adjective names the number it ranks."""
    if is_cjk(word[0]):
        return any(said in word for _, words in CONCEPTS for said in words if is_cjk(said[0]))
    return any(word in words or lemma(word) in words for _, words in CONCEPTS)


def analysis_words(script: str) -> tuple[str, ...]:
    """The plain words of the kinds of analysis that gates.toml lists (trends, comparisons, drivers, the
    future, importance), the cue words of question_kinds.toml's statistics and directions (highest, 占比,
    上升: _STATISTIC_TABLES) and the units of time and their adjectives of roles.toml (periods, grains): in
    `script` "en" the single English words (trend, compare, month, weekly), in "zh" the Chinese words of two
    characters or more (趋势, 差异, 季度). They ask how to analyse, never which variable; a stem or a
    phrase of a pattern (driv, over time) is left out."""
    items = [
        *vocabulary.words("gates", "trend_words"),
        *vocabulary.words("gates", "compare_words"),
        *vocabulary.words("gates", "driver_words", "patterns"),
        *vocabulary.words("gates", "future_words", "patterns"),
        *vocabulary.words("gates", "importance", "patterns"),
        *(f for f in _statistic_forms() if f.isascii() == (script == "en") and not _names_concept(f)),
        *vocabulary.keys("roles", "periods"),
        *vocabulary.keys("roles", "grains"),
    ]
    if script == "en":
        return tuple(dict.fromkeys(w for w in items if w.isascii() and w.isalpha() and w.islower()))
    return tuple(dict.fromkeys(w for w in items if len(w) >= 2 and all(is_cjk(c) for c in w)))


# The words of analysis the gates list, and the units of time, are not listed again in general_en.


@cache
def _general_en() -> frozenset[str]:
    """The listed English general words, the words of analysis, and the units of money a header's bracket
    may give (name_forms.toml currency_units; they name no variable either). Read on first use: the
    concepts' superlatives are told by their lemma, and the dictionary loads only when a question is read."""
    return frozenset(
        (
            *vocabulary.words(_FILE, "general_en"),
            *analysis_words("en"),
            *(w for w in vocabulary.words("name_forms", "currency_units") if w.isascii()),
        )
    )


ROW_WORDS = frozenset(vocabulary.words(_FILE, "row_words"))


def forms(word: str) -> tuple[str, ...]:
    """The forms a word is looked up by: as written, its dictionary form, its stem, without a final s."""
    return (word, lemma(word), stem(word), word.rstrip("s"))


@lru_cache(maxsize=65536)
def only_an_adverb(word: str) -> bool:
    """Whether the English dictionary (lemminflect's, in its wheel) reads a word only as an adverb
    (usually, roughly, significantly, instead): an adverb says how or how much, never which variable.
    A word it does not know, or knows as a noun, adjective or verb too, is not."""
    try:
        getAllLemmas = lemminflect().getAllLemmas
    except ImportError:  # pragma: no cover - a dependency; kept working without it
        return False
    return set(getAllLemmas(word)) == {"ADV"}


@lru_cache(maxsize=65536)
def library_stop_word(word: str) -> bool:
    """Whether a word is on scikit-learn's English stop list as written or by its dictionary form (went →
    go, taken → take), but not as the plural of a noun: "calls" is a thing counted, not "call"."""
    if word in english_stop_words():
        return True
    dictionary_form = lemma(word)
    if dictionary_form == word or dictionary_form not in english_stop_words():
        return False
    try:
        getAllLemmas = lemminflect().getAllLemmas
    except ImportError:  # pragma: no cover - a dependency; kept working without it
        return True
    return word in getAllLemmas(word).get("NOUN", (word,))


def is_general_en(word: str) -> bool:
    """Whether an English word (lower case) names no variable: a stop word (ours, or scikit-learn's
    English list: the closed classes, numbers up to twenty, everyday verbs), an adverb, or a word of analysis, comparison, time or grammar in any
    of its forms."""
    return (
        any(form in STOP for form in forms(word))  # highest → high, totals → total
        or library_stop_word(word)
        or only_an_adverb(word)
        or any(form in _general_en() for form in forms(word))
    )


@cache
def _row_lemmas() -> frozenset[str]:
    """The row words and the units of the rows (question_kinds.toml units_en), by dictionary form."""
    return frozenset(lemma(w) for w in (*ROW_WORDS, *UNITS_EN))


def counts_rows(word: str) -> bool:
    """Whether an English word, in any form, is a thing a table's rows often are or count (purchase,
    purchases, ticket): "per purchase" is a unit of the rows, its average, not a breakdown."""
    return lemma(word.lower()) in _row_lemmas()


def is_row_word(word: str) -> bool:
    """Whether an English word is a thing a table's rows often are (customers, orders), or its plural."""
    return word in ROW_WORDS or lemma(word) in ROW_WORDS
