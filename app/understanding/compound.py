"""Two questions asked in one message ("How many items did we sell in total, and which month was
busiest?", "一共有多少个孩子？其中多少人午睡？"): the parts, each a question of its own, so the analyst
plans and answers each (issue 24).

The split follows the sentence's structure, never a list of phrasings: a boundary (a question mark, a
comma or semicolon, or "and" after a comma) with a clause that asks something on each side. A clause
asks when it holds a question word (the same words the reading already knows as naming no column:
stop_words "question words" and the forms of be/do/have in English, unmatched_words' Chinese question
words) or ends with a question mark. "Compare A and B" and "sales and profit by region" have no
asking clause after their "and", so they stay one question.
"""

from __future__ import annotations

import re
from functools import cache

from app.understanding import vocabulary
from app.understanding.kinds import FILTER_CUE, HOW_MANY, HOW_MUCH, NUMBER_CUT
from app.understanding.language import question_language
from app.understanding.text import FINITE, english_stop_words, is_cjk, word_forms

MIN_WORDS = 3  # a part shorter than this is a fragment of one question ("how much and how often")
MIN_CHARS_ZH = 4


@cache
def _english_askers() -> tuple[frozenset[str], frozenset[str]]:
    """The English question words, and the words that may open a question: those and the forms of be,
    do and have (stop_words: "question words", "forms of be, do and have")."""
    question: set[str] = set()
    opening: set[str] = set()
    for entry in vocabulary.entries("stop_words", "stop"):
        if entry.why.startswith("question words"):
            question.update(entry.strings("words"))
        if entry.why.startswith(("question words", "forms of be")):
            opening.update(form for word in entry.strings("words") for form in word_forms(word, FINITE))
    return frozenset(question), frozenset(opening)


@cache
def _chinese_askers() -> re.Pattern[str]:
    """The Chinese question words (哪, 多少, 是否, 什么 …: a word found inside a longer one asks too, 哪个,
    为什么) and 几 ("几天", "几个"), and the A-not-A question of a verb (是不是, 有没有, 会不会: _A_NOT_A)."""
    words = sorted(vocabulary.words("unmatched_words", "interrogatives_zh"), key=len, reverse=True)
    return re.compile("|".join([*map(re.escape, words), _A_NOT_A]))


# The A-not-A question, a grammar of its own: a verb, 不 or 没, the verb again (是不是, 有没有, 能不能).
_A_NOT_A = r"(\w)[不没]\1"


_QUESTION_END = re.compile(r"[?？]\s*$")
# where one clause may end and the next begin: a question mark, a semicolon, a comma, or ", and"
_BOUNDARY_EN = re.compile(r"\?\s+|;\s*|,\s*(?:and\s+)?|\s+and\s+", re.I)
_BOUNDARY_ZH = re.compile(r"[？?；;，,]\s*")
# where an opening clause that asks nothing ends ("Just for the East car park:", "For the 老街 stall,", "只看二店，")
_OPENING_END = re.compile(r"[:：,，]\s*")


def split_compound(question: str) -> list[str]:
    """The questions a message asks, in order: two parts when a boundary has an asking clause on each
    side, else the message itself (one element). An opening clause that asks nothing ("Just for the East
    car park: how many paid in cash, and how much did that add up to?") says which rows both parts are
    about: each part keeps it."""
    text = question.strip()
    # the sentence's own words decide, not a value named in the other script ("For the 老街 stall, …")
    chinese = question_language(text, [], "zh" if any(is_cjk(c) for c in text) else "en") == "zh"
    scope, body = _shared_scope(text, chinese)
    boundary = _BOUNDARY_ZH if chinese else _BOUNDARY_EN
    for match in boundary.finditer(body):
        left, right = body[: match.start()].strip(), body[match.end() :].strip()
        if chinese:
            right = _without_leading_conjunction(right)
        if not right or not _is_part(left, chinese) or not _is_part(right, chinese):
            continue
        if not chinese and not _opens_question(right):
            continue  # "compare A and B": what follows "and" asks nothing of its own
        if not _asks(left + match.group(0).strip(), chinese) or not _asks(right, chinese):
            continue
        if _condition(left, chinese):
            continue  # "where the fee is over 100, what share churned?": the rows the question is asked of
        left = left if _QUESTION_END.search(left) else left + ("？" if chinese else "?")
        return [scope + left, scope + right]
    return [question]


def _shared_scope(text: str, chinese: bool) -> tuple[str, str]:
    """The message's opening clause, with its closing mark, where it asks nothing and what follows asks
    (the rows both parts are about: "Just for the East car park: ", "For the 老街 stall, "), and the rest;
    else no opening and the whole text."""
    match = _OPENING_END.search(text)
    if match is None:
        return "", text
    opening, rest = text[: match.start()].strip(), text[match.end() :].strip()
    if not opening or not rest or _asks(opening, chinese) or not _asks(rest, chinese):
        return "", text
    return text[: match.end()], rest


def shares_opening(parts: list[str]) -> bool:
    """Whether the parts open alike, with the message's opening clause (split_compound's shared scope):
    a filter word there is the scope of both, not a later part's "其中…" about the first part's rows."""
    match = _OPENING_END.search(parts[0])
    return match is not None and all(part.startswith(parts[0][: match.end()]) for part in parts[1:])


def points_back(part: str) -> bool:
    """Whether an English part asks of the rows an earlier part is about by pointing back to them ("…, and
    how many of those were cancelled?", "what share of them had a tip"): "of" whose object is a pronoun —
    a function word (english_stop_words) that heads its phrase, the clause ending or a form of be, do or
    have following it ("of the month" has a noun after its article; "of those were" has a verb)."""
    words = [w.lower() for w in re.findall(r"[\w']+", part)]
    stop, verbs = english_stop_words(), _english_askers()[1]
    return any(
        word == "of"
        and (object_ := words[at + 1 : at + 2])
        and object_[0] in stop
        and object_[0] != "of"
        and (at + 2 == len(words) or words[at + 2] in verbs)
        for at, word in enumerate(words)
    )


def _condition(clause: str, chinese: bool) -> bool:
    """Whether a clause only says which rows the next one is about: it opens with a filter word ("only
    for East", "只看二店", "其中…"), or, in English, it holds a number's cut and no word after its first one
    asks or is a finite verb ("where monthly fee > 100", "if the price is above 50" asks nothing: its
    "where"/"if" opens a condition, not a question); a clause that opens by asking a number ("how many …
    more than 4 hours") is a question."""
    if FILTER_CUE.match(clause.strip()):
        return True
    if chinese or not NUMBER_CUT.search(clause) or HOW_MANY.match(clause) or HOW_MUCH.match(clause):
        return False  # "how many hires lasted more than 4 hours" asks, whatever its verb
    later = [w.lower() for w in re.findall(r"[\w']+", clause)[1:]]
    return not set(later) & _english_askers()[1]


def _is_part(clause: str, chinese: bool) -> bool:
    if chinese:
        return sum(1 for c in clause if is_cjk(c) or c.isalnum()) >= MIN_CHARS_ZH
    return len(re.findall(r"[\w']+", clause)) >= MIN_WORDS


def _opens_question(clause: str) -> bool:
    """An English clause that starts as a question does: "which month …", "what is …", "is it …", or a
    question word after one function word (a preposition: "on how many days …", "in which month …")."""
    words = [w.lower() for w in re.findall(r"[\w']+", clause)[:2]]
    question, opening = _english_askers()
    if words and words[0] in opening:
        return True
    return len(words) == 2 and words[0] in english_stop_words() and words[1] in question


def _asks(clause: str, chinese: bool) -> bool:
    """Whether a clause asks something: a question word, or a question mark at its end."""
    if _QUESTION_END.search(clause):
        return True
    if chinese:
        return bool(_chinese_askers().search(clause))
    words = {w.lower() for w in re.findall(r"[\w']+", clause)}
    return _opens_question(clause) or bool(words & _english_askers()[0])


def _without_leading_conjunction(clause: str) -> str:
    """A Chinese clause without the conjunction that joins it to the one before (并且, 另外, 同时):
    jieba's part-of-speech tag `c`, so no list of joining words is kept."""
    try:
        import jieba.posseg as posseg
    except ImportError:  # pragma: no cover - jieba is a dependency
        return clause
    pairs = list(posseg.cut(clause))
    if pairs and pairs[0].flag == "c" and len(pairs) > 1:
        return clause[len(pairs[0].word) :].lstrip("，, ")
    return clause
