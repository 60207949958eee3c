"""How the words of a question name columns and values beyond the literal name (zh/en).

A non-expert rarely types the column name: "survive" for `survived`, "smoking" for `smoke`,
"birth weight" for `bwt`, "cylinders" for `cyl`, "earn" for `lwage`, "women" for the value
`female`. These pure functions find such mentions; roles turns them into column spans
and dataset_choice scores whole datasets with them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from functools import cache, lru_cache

from app.understanding import vocabulary
from app.understanding.english_dictionary import lemminflect
from app.understanding.everyday_words import concept_synonyms, merged
from app.understanding.text import english_stop_words, lemma, past_verb, plain_words, tokens, word_forms

# Words a question may use for a column named in the other language, or in everyday words
# (vocabulary/synonyms.toml [[columns]]: the key is a piece of the column name, lower case; the words
# are looked for in the question). The everyday words for common concepts (older → age, earn → income)
# join them from everyday_words.
_NAMED = vocabulary.keyed("synonyms", "columns")
SYNONYMS: dict[str, tuple[str, ...]] = merged(_NAMED, concept_synonyms())

# Everyday words for common category values: "women" names the level `female` ([[values]]).
VALUE_WORDS: dict[str, tuple[str, ...]] = vocabulary.keyed("synonyms", "values")


# Words that never name a column by a stem or an abbreviation: scikit-learn's English stop words of a
# closed class (below), and the words vocabulary/stop_words.toml lists beside them.


def _closed_class(word: str) -> bool:
    """Whether lemminflect's English dictionary reads a word as one of a closed class: it knows the open
    classes (nouns, verbs, adjectives) by their inflections, so a word with none (the, of, it, which), an
    auxiliary (is, has, were), or one whose only readings are an adverb or adjective that never inflects
    (about, before, there, only) is grammar, not a name."""
    getAllInflections, getAllLemmas = lemminflect().getAllInflections, lemminflect().getAllLemmas

    if "AUX" in getAllLemmas(word):
        return True
    return all(tag in ("RB", "JJ") and forms == (word,) for tag, forms in getAllInflections(word).items())


@cache
def _function_words() -> frozenset[str]:
    """scikit-learn's English stop words of a closed class (the, of, it, which, is, about, only)."""
    return frozenset(word for word in english_stop_words() if _closed_class(word))


def is_function_word(word: str) -> bool:
    """Whether a (lower-case) English word is a function word: one of scikit-learn's stop words of a closed class."""
    return word in _function_words()


@cache
def _stop_words() -> frozenset[str]:
    listed = {form for word in vocabulary.words("stop_words", "stop") for form in word_forms(word)}
    return frozenset(listed) | _function_words()


class _StopWords:
    """The stop words as a set to look words up in, read on the first look-up: scikit-learn (and the
    dictionary) load only when a question is read, never when this module is imported."""

    def __contains__(self, word: object) -> bool:
        return word in _stop_words()


STOP = _StopWords()


def stem(word: str) -> str:
    """A word's comparable form: its dictionary form (app.understanding.text.lemma: sold → sell,
    women → woman, stores → store) cut to a crude stem, so that forms the dictionary keeps apart still
    meet: "survive"/"survived", "smoking"/"smoke", "feeds"/"feed", "cancelled"/"cancel"."""
    w = lemma(word)
    for suffix in ("ing", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            w = w[: -len(suffix)]
            break
    if w.endswith("e") and len(w) >= 5:
        w = w[:-1]
    if len(w) >= 5 and w[-1] == w[-2] and w[-1] in "lptnmgrdb":  # cancelled/cancel, planned/plan: one letter
        w = w[:-1]
    return w


def words_at(text: str) -> list[tuple[int, int, str]]:
    """The English words of a text with their positions, folded (lower case, half width): the words
    of app.understanding.text.tokens that start with a letter and are not Chinese, without the clitic
    after an apostrophe."""
    words = []
    for token in tokens(text):
        if token.is_cjk or not (token.word[0].isascii() and token.word[0].isalpha()):
            continue
        if token.start and text[token.start - 1] in "'’":  # the clitic of women's, don't: part of the word before
            continue
        words.append((token.start, token.end, token.word))
    return words


# A bracket at the end of a name: its unit ("(min)") or a second name ("Economy (GDP per Capita)")
NAME_BRACKET = re.compile(r"[(（\[【]([^()（）\[\]【】]{1,24})[)）\]】]\s*[?？:：]*$")
# A unit or scale in brackets at the end of a name ("Delivery Time (min)", "亩产 (kg)", "面积（㎡）",
# "Satisfaction (1-5)") and a trailing "?" or ":" ("Personal Trainer?") are not words a question uses.
_NAME_DECORATION = re.compile(r"(?:\s*[(（\[【][^()（）\[\]【】]{1,24}[)）\]】])+\s*$|\s*[?？:：]+\s*$")


@lru_cache(maxsize=4096)
def core_name(name: str) -> str:
    """A column name without its unit and trailing punctuation, as a question says it:
    "Delivery Time (min)" → "Delivery Time"; the name itself when nothing is left. Read once per
    name (a run asks it of each column many times; issue 25: a header of 100,000 letters)."""
    core = _NAME_DECORATION.sub("", name.strip())
    core = _NAME_DECORATION.sub("", core)  # "Fee (£)?" has both
    return core if len(core) >= 2 else name


def name_words(name: str) -> list[str]:
    """A column name's Latin words and numbers (text.plain_words): "passengerClass" → passenger, class;
    "Unit_Price" → unit, price."""
    return [w for w in plain_words(name) if w.isascii()]


def _is_subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(ch in it for ch in short)


def skeleton(word: str) -> str:
    """A word's first letter and its consonants after it, each run once: weeks → wks, minutes → mnts."""
    tail = re.sub(r"[aeiou]", "", word[1:])
    return word[:1] + re.sub(r"(.)\1+", r"\1", tail)


def abbreviates(abbreviation: str, phrase: list[str]) -> bool:
    """Whether a short column name abbreviates consecutive question words: "bwt" ← "birth weight",
    "mpg" ← "miles per gallon", "cyl" ← "cylinders", "wks" ← "weeks". Every word gives its first
    letter, in order; a single word must start with the whole abbreviation or be spelt by its
    consonants (`skeleton`)."""
    a = abbreviation.lower()
    if not (2 <= len(a) <= 5 and a.isalpha()) or any(w in STOP for w in phrase):
        return False
    if len(phrase) == 1:
        word = phrase[0]
        if len(a) >= 3 and word.startswith(a) and len(word) > len(a):
            return True
        # spelt by its consonants, at most one left out: "wks" ← weeks, "pts" ← points, but not
        # "wks" ← workers (w-r-k-r-s: two left out), which the letters alone would allow
        consonants = skeleton(word)
        return (
            len(word) >= 4
            and a[0] == consonants[0]
            and a[-1] == consonants[-1]
            and _is_subsequence(a, consonants)
            and len(a) >= len(consonants) - 1
        )
    if a[0] != phrase[0][0] or len(a) < len(phrase):
        return False
    # each word's initial, in order, inside the abbreviation, and the whole a subsequence of the words
    position = 0
    for word in phrase:
        found = a.find(word[0], position)
        if found < 0:
            return False
        position = found + 1
    return _is_subsequence(a, "".join(phrase))


def loose_mentions(question: str, name: str) -> Iterator[tuple[int, int]]:
    """Where a question names a column by a stem or an abbreviation of its name (not the literal
    name: roles claims those first)."""
    words = words_at(question)
    parts = name_words(core_name(name))
    if len(parts) == 1:
        part = parts[0]
        target = stem(part)
        # a name that is a verb's past form ("Left", "Churned": what happened) is asked about by the verb
        # in any form ("leave", "leaving"): its verb's stem too
        verb = past_verb(part)
        targets = {t for t in (target, stem(verb) if verb else "") if len(t) >= 4}
        for start, end, word in words:
            if word in STOP:
                continue
            if stem(word) in targets:
                yield start, end
            elif part.startswith("l") and len(part) >= 5 and stem(word) == stem(part[1:]):  # lwage: log wage
                yield start, end
        for size in (3, 2, 1):
            for i in range(len(words) - size + 1):
                phrase = words[i : i + size]
                if abbreviates(part, [w for _, _, w in phrase]):
                    yield phrase[0][0], phrase[-1][1]
    elif abbreviated := _abbreviated_words(words, parts):  # "writing hand" names Wr.Hnd
        yield abbreviated
    elif all(any(len(stem(p)) >= 3 and stem(w) == stem(p) for _, _, w in words) for p in parts if p not in STOP):
        # the name's words close together ("sepal length"), not from the first to the last anywhere in
        # the question ("the sepal length, the higher the petal length" names two columns)
        wanted = [stem(p) for p in parts if p not in STOP]
        width = len(parts) + 1
        for i in range(len(words)):
            window = [(s, e) for s, e, w in words[i : i + width] if stem(w) in wanted]
            found = {stem(w) for _, _, w in words[i : i + width]}
            if window and words[i][2] and stem(words[i][2]) in wanted and all(w in found for w in wanted):
                yield window[0][0], window[-1][1]
                return
        hits = [(s, e) for s, e, w in words if any(stem(w) == stem(p) for p in parts)]
        if hits:  # far apart: as before, the whole stretch
            yield hits[0][0], hits[-1][1]


def _abbreviated_words(words: list[tuple[int, int, str]], parts: list[str]) -> tuple[int, int] | None:
    """Consecutive question words each of which a part of a short multi-part name abbreviates, in
    order: "writing hand" ← Wr.Hnd (a prefix, or the word's consonants), "sepal width" ← Sep.W does
    not count (a one-letter part says too little)."""
    if len(parts) < 2 or not all(2 <= len(p) <= 5 and p.isalpha() for p in parts):
        return None
    for i in range(len(words) - len(parts) + 1):
        window = words[i : i + len(parts)]
        if all(
            w not in STOP and (w.startswith(p) or abbreviates(p, [w])) and w != p for (_, _, w), p in zip(window, parts)
        ):
            return window[0][0], window[-1][1]
    return None


def spread_mentions(question: str, name: str, slack: int = 2) -> Iterator[tuple[int, int]]:
    """Where a Chinese column name is written with a word or two inside it: "订单总数" names 订单数,
    "门店的营业额" does not name 门店营业额 (too far apart). Every character in order, the first and
    the last in place, within `slack` extra characters."""
    chars = name.strip()
    if len(chars) < 2 or chars.isascii():
        return
    text = question.lower()
    for start in (i for i, ch in enumerate(text) if ch == chars[0].lower()):
        at, ok = start, True
        for ch in chars[1:].lower():
            at = text.find(ch, at + 1, start + len(chars) + slack)
            if at < 0:
                ok = False
                break
        if ok:
            yield start, at + 1


def value_words(value: str) -> tuple[str, ...]:
    """The words that name a category value: itself, and everyday words for it ("women" → female). A
    value of one letter is the initial of the one listed value that starts with it (F: female, M: male)
    and has its words."""
    word = str(value).strip().lower()
    if len(word) == 1 and word not in VALUE_WORDS:
        spelled = [key for key in VALUE_WORDS if key.startswith(word)]
        if len(spelled) == 1:
            return (word, *_with_forms((spelled[0], *VALUE_WORDS[spelled[0]])))
    return (word, *_with_forms(VALUE_WORDS.get(word, ())))


def _with_forms(words: tuple[str, ...]) -> tuple[str, ...]:
    """Each word followed by its inflections (text.word_forms: woman → women, male → males), so a
    plural the list would repeat is not listed."""
    forms = (word_forms(w) if w.isascii() and w.isalpha() else () for w in words)
    return tuple(dict.fromkeys(f for w, more in zip(words, forms, strict=True) for f in (w, *more)))


def without_value_words(question: str, values: list[str]) -> str:
    """The question without the everyday words that name the given values (longest first)."""
    words = sorted({w for value in values for w in value_words(value)[1:]}, key=len, reverse=True)
    for word in words:
        question = re.sub(re.escape(word), " ", question, flags=re.I)
    return question


def code_word(value: str, question: str) -> str | None:
    """The everyday word the question used for a value's code ("women" for sex = F), if it used one."""
    text = question.lower()
    return next((w for w in value_words(value)[1:] if w.lower() in text), None)


def question_key(text: str) -> str:
    """A short stable key of a question (gate topics that belong to one question)."""
    norm = " ".join(plain_words(text))
    return hashlib.sha1(norm.encode()).hexdigest()[:8]
