"""The word a question ranks or asks about through a question word that determines it: the noun
after which/what ("Which store has the highest 销售额?", "which three stores …"), after 哪个/哪家/哪三家
("哪个门店…", "哪家店…"). It names the things the answer lists — the groups compared — never a subset of
the rows to keep: a table whose category column happens to hold a value spelt like it (Channel =
"Store") is not named by it (dataset_choice).

Grammar, not a list of phrasings: the question words are the reading's own (stop_words' "question
words"; unmatched_words' Chinese interrogatives), the words between them and the noun a count ("three",
三家) or a measure word by jieba's part-of-speech tagger, and the noun an open-class word (not a stop
word, not a form of be/do/have, not of a closed word class)."""

from __future__ import annotations

import re
from functools import cache

from app.understanding import vocabulary
from app.understanding.text import (
    COUNT_WORDS_EN,
    FINITE,
    english_stop_words,
    is_cjk,
    is_closed_class,
    tagged_words,
    word_forms,
    word_spans,
)
from app.understanding.words import words_at

Span = tuple[int, int]

_BETWEEN_EN = re.compile(r"[\s\d]*")  # only spaces and a count in digits between the question word and its noun


@cache
def _question_words_en() -> tuple[frozenset[str], frozenset[str]]:
    """The English question words, and the words that are no noun after one: stop words and the forms
    of be, do and have (stop_words: "question words", "forms of be, do and have")."""
    asking: set[str] = set()
    verbs: set[str] = set()
    for entry in vocabulary.entries("stop_words", "stop"):
        if entry.why.startswith("question words"):
            asking.update(entry.strings("words"))
        if entry.why.startswith("forms of be"):
            verbs.update(form for word in entry.strings("words") for form in word_forms(word, FINITE))
    return frozenset(asking), frozenset(verbs) | english_stop_words()


@cache
def _question_words_zh() -> tuple[str, ...]:
    """The Chinese question words (unmatched_words' interrogatives: 哪 is inside 哪个, 哪家, 哪些)."""
    return tuple(vocabulary.words("unmatched_words", "interrogatives_zh"))


def ranked_spans(question: str) -> list[Span]:
    """(start, end) of each word the question asks about by a question word that determines it, in
    question order; [] when no question word is followed by a noun ("What is …", "When did …")."""
    return sorted([*_english(question), *_chinese(question)])


_CHINESE_AFTER = re.compile(r"\s*([\u3400-\u9fff\uf900-\ufaff]+)")


def _english(question: str) -> list[Span]:
    asking, not_nouns = _question_words_en()
    words = [w for w in words_at(question) if w[2] not in COUNT_WORDS_EN]  # "which three stores": the count is skipped
    found = []
    for (_, end, word), (start, stop, after) in zip(words, words[1:], strict=False):
        if word in asking and after not in not_nouns and _BETWEEN_EN.fullmatch(_between(question, end, start)):
            found.append((start, stop))
    for _, end, word in words:  # "Which 门店 has …": a Chinese header named after the English question word
        if word in asking and (run := _CHINESE_AFTER.match(question, end)) and (spans := word_spans(run.group(1))):
            found.append((run.start(1) + spans[0][0], run.start(1) + spans[0][1]))
    return found


def _between(question: str, end: int, start: int) -> str:
    """The text between two words with any count in words taken out ("which three stores")."""
    text = question[end:start].lower()
    return re.sub(r"\b(?:" + "|".join(COUNT_WORDS_EN) + r")\b", " ", text)


def _chinese(question: str) -> list[Span]:
    if not any(is_cjk(c) for c in question):
        return []
    asking = _question_words_zh()
    words = tagged_words(question)
    found = []
    for i, (word, _, _, _) in enumerate(words):
        if not any(q in word for q in asking):
            continue
        for after, tag, start, end in words[i + 1 :]:
            if tag[:1] in "mq":  # a count or a measure word: 哪三家门店, 哪种产品
                continue
            if any(is_cjk(c) for c in after) and not is_closed_class(tag):
                found.append((start, end))
            break
    return found
