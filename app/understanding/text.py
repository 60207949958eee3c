"""The words of a text, for every part of the reading: a real Chinese segmenter (jieba), an English
lemmatizer (simplemma) and one normalisation of case, width, brackets and units.

Both libraries are heavy (jieba's dictionary, simplemma's English table) and are loaded the first
time a text is segmented or a word lemmatized, never on import: `verity --help` and `inspect` stay
fast. Without them (not installed) Chinese runs count as one word each and a word is its own lemma.

Offsets always refer to the text as given: `fold` maps one character to one character (full-width
to half-width, every kind of bracket to ( and ), upper to lower case), so the words of the folded
text lie where they lie in the original.

Read through this module (one function per job): a question's words (`tokens`, `word_spans`), a
name's or a short text's plain words (`plain_words`: words.name_words, words.question_key,
gate_words.normalise/word_set), dictionary forms (`lemma`, under words.stem), the closed word classes
of Chinese by jieba's tagger (`closed_class_spans`: the words of a question that name no variable,
general_words.py), the words inside a long Chinese word (`inner_words`: the knowledge search,
app/agent/context/retrieval.py) and the evidence tool's comparable words (app/agent/tools/evidence.py).

Still beside it: app/understanding/segment.py `whole_words` (over `word_spans`); runs of Han characters
by regular expression in role_sources.py, wide_pairs.py, column_forms.py and role_question.py (they cut
a run at vocabulary words, not words of the language).
"""

from __future__ import annotations

import importlib.util
import logging
import re
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from app.understanding.english_dictionary import lemminflect

Span = tuple[int, int]

# One character for one character, so offsets survive: full-width ASCII (Ａ, ０, ％) and the ideographic
# space to their half-width forms, the brackets people use around a unit or a second name to ( and ).
_OPENING = "([{（［｛【〔〖⦅｟"
_CLOSING = ")]}）］｝】〕〗⦆｠"
_FOLD = {0xFF01 + i: 0x21 + i for i in range(0xFF5E - 0xFF01 + 1)} | {0x3000: 0x20}
_FOLD |= {ord(c): ord("(") for c in _OPENING} | {ord(c): ord(")") for c in _CLOSING}

_ASCII_WORD = re.compile(r"[a-z][a-z']*")
# A bracket at the end of a name: its unit or scale ("Delivery Time (min)", "面积（㎡）").
_TRAILING_BRACKET = re.compile(r"\s*\(([^()]{1,24})\)\s*$")


MERGED_HEADER = " / "  # how ingest joins a merged group cell and the column's own header (app/ingest/table.py)
# The counts a question spells out in words ("the three best", "top five"): the closed class of small
# cardinal numbers, one list for the top-N grammar, the row counts and the ranked word (ranked_entity)
COUNT_WORDS_EN = {
    w: i for i, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split(), 1)
}
COUNT_WORDS_ZH = {c: i for i, c in enumerate("一二三四五六七八九十", 1)} | {"两": 2}


def header_leaf(name: str) -> str:
    """A column's own header under a merged group header: "销售情况 / 销售额" → "销售额" (the group word
    is shared by its leaves, so it names none of them); any other name as it is, stripped."""
    return name.rsplit(MERGED_HEADER, 1)[-1].strip()


@dataclass(frozen=True)
class Token:
    """One word of a text: as folded (`word`), its dictionary form (`lemma`: English words only, a
    Chinese word is its own lemma), where it lies in the original text, and whether it is Chinese."""

    word: str
    lemma: str
    start: int
    end: int
    is_cjk: bool


# A run of Han characters (the ranges of `is_cjk`): the one pattern for "the Chinese of a text".
HAN_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")


def is_cjk(char: str) -> bool:
    """Whether a character is a Han character (CJK unified ideographs and extension A)."""
    return "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff"


def fold(text: str) -> str:
    """The text with full-width forms half-width, brackets as ( and ), and lower case — the same
    length as the text, character for character."""
    folded = text.translate(_FOLD)
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in folded)


def normalise(text: str) -> str:
    """The text as compared: folded, compatibility forms spelt out (㎡ → m2, ㎏ → kg, ① → 1) and runs of
    white space as one space. Not offset-preserving; use `fold` where positions matter."""
    return " ".join(unicodedata.normalize("NFKC", fold(text)).split())


_CAMEL = re.compile(r"([a-z])([A-Z])")


def plain_words(text: str) -> list[str]:
    """The words of a name or a short text as plain runs of letters and digits, folded: camelCase and
    snake_case split, every other character a separator, a run of Han characters one word
    ("passengerClass" → passenger, class; "Unit_Price (USD)" → unit, price, usd; "销售额2024" →
    销售额, 2024). The rule for names and for comparing texts word by word; `tokens` segments Chinese."""
    return list(_plain_words(text))


@lru_cache(maxsize=4096)
def _plain_words(text: str) -> tuple[str, ...]:
    """`plain_words`, read once per text: a run reads its columns' names many times over (a header of
    100,000 letters was split 80 times a question, seconds of a run thread's time; issue 25)."""
    spaced = _CAMEL.sub(r"\1 \2", text)
    found: list[str] = []
    current: list[str] = []
    for char in fold(spaced) + " ":
        if current and (not (char.isalnum() and char != "_") or is_cjk(char) != is_cjk(current[-1])):
            found.append("".join(current))  # a separator, or where Han characters meet Latin ones
            current = []
        if char.isalnum() and char != "_":
            current.append(char)
    return tuple(found)


def split_unit(name: str) -> tuple[str, str | None]:
    """A column name's core and the unit or scale in brackets at its end, both normalised:
    "Delivery Time (MIN)" → ("delivery time", "min"), "面积（㎡）" → ("面积", "m2"); (name, None) without one."""
    text = normalise(name)
    found = _TRAILING_BRACKET.search(text)
    if found is None or found.start() == 0:
        return text, None
    return text[: found.start()].strip(), found.group(1).strip()


@cache
def _segmenter() -> Any | None:
    """jieba's default tokenizer, its dictionary loaded once per process; None when jieba is missing."""
    try:
        import jieba
    except ImportError:  # pragma: no cover - a dependency; kept working without it
        return None
    jieba.setLogLevel(logging.WARNING)  # it logs the dictionary's loading at INFO
    return jieba


@lru_cache(maxsize=4096)  # every question, phrase and column name of a long-running server: bounded
def word_spans(text: str) -> tuple[Span, ...]:
    """(start, end) of each word of the text, in order; spaces and punctuation are words of their own.
    A text without a character jieba reads as Chinese is cut by jieba's own rules for such text
    (`_spans_without_han`), without loading its dictionary (0.65 s of CPU, in every process that
    reads an English question otherwise)."""
    if not JIEBA_HAN.search(text) and not DICTIONARY_MARK.search(text):
        return _spans_without_han(text) if _jieba_installed() else _runs(text)
    jieba = _segmenter()
    if jieba is None:
        return _runs(text)
    words = [(str(word), start, end) for word, start, end in jieba.tokenize(text)]
    return tuple((start, end) for _, start, end in _measure_words_apart(jieba, words))


@cache
def _jieba_installed() -> bool:
    """Whether jieba can be imported (looked up, not imported: its import is a tenth of a second)."""
    return importlib.util.find_spec("jieba") is not None


# jieba's default cut (jieba.Tokenizer.cut, HMM on) of a text with no character of its Han range:
# the text splits into blocks of letters, digits and +#&._%- (re_han_default) and blocks of anything
# else. A block of anything else is cut at whitespace (re_skip_default), each other character a word of
# its own. A block of the first kind meets the dictionary only where it holds one of the dictionary's
# words made of those characters alone (each has a DICTIONARY_MARK: left to jieba); otherwise every character is
# a word of one character in its DAG, so the whole block is one unknown run, which jieba's HMM step
# (jieba.finalseg.cut) cuts into runs of letters and digits (a decimal and a percent sign kept on) and
# what lies between them. tests/test_text.py compares this with jieba on many texts, and checks that the
# dictionary's words of these characters all still hold a mark.
JIEBA_HAN = re.compile(r"[\u4e00-\u9fd5]")
JIEBA_BLOCKS = re.compile(r"([\u4e00-\u9fd5a-zA-Z0-9+#&\._%\-]+)")
_JIEBA_SKIP = re.compile(r"(\r\n|\s)")
_JIEBA_HMM_SKIP = re.compile(r"([a-zA-Z0-9]+(?:\.\d+)?%?)")
# jieba's dictionary words of those characters (AT&T, C#, C++) each hold one of these marks: a rule, not a list
DICTIONARY_MARK = re.compile(r"[&#+]")


def _spans_without_han(text: str) -> tuple[Span, ...]:
    """jieba.tokenize(text) of a text with no Han character (in jieba's range) and no dictionary word
    mark (DICTIONARY_MARK), by jieba's rules (above)."""
    words: list[str] = []
    for block in JIEBA_BLOCKS.split(text):
        if not block:
            continue
        if JIEBA_BLOCKS.match(block):
            words.extend([block] if len(block) == 1 else (w for w in _JIEBA_HMM_SKIP.split(block) if w))
            continue
        for piece in _JIEBA_SKIP.split(block):
            words.extend([piece] if _JIEBA_SKIP.match(piece) else piece)
    spans, at = [], 0
    for word in words:
        spans.append((at, at + len(word)))
        at += len(word)
    return tuple(spans)


def _runs(text: str) -> tuple[Span, ...]:
    """Every run of letters as one word (the rule without a segmenter)."""
    spans, start = [], None
    for at, char in enumerate(text + " "):
        if char.isalnum() and start is None:
            start = at
        elif not char.isalnum() and start is not None:
            spans.append((start, at))
            start = None
    return tuple(spans)


# jieba's part-of-speech tags of the closed word classes (the ICTCLAS tag set it uses): pronouns and
# question words (r), numerals (m) and measure words (q, mq), prepositions (p), conjunctions (c),
# particles (u…), modal particles (y), interjections and onomatopoeia (e, o), words of place (f) and
# adverbs (d, and zg: a bound morpheme such as 很). A closed class is a grammar's own list; a word of it
# names no variable. Time words (t) are not closed: 周末, 春节, 夏天 may be what the data lacks.
# The tag's first letter says the class (mq: a numeral with its measure word; uj, ul …: particles).
_CLOSED_CLASSES = "rmqpcuyeofd"
_BOUND_ADVERB = "zg"


@cache
def _tagger() -> Any | None:
    """jieba's part-of-speech tagger (jieba.posseg, on the same dictionary); None when jieba is missing."""
    if _segmenter() is None:
        return None
    import jieba.posseg

    return jieba.posseg


def is_closed_class(tag: str) -> bool:
    """Whether a jieba part-of-speech tag is one of a closed word class (above)."""
    return tag == _BOUND_ADVERB or tag[:1] in _CLOSED_CLASSES


@lru_cache(maxsize=4096)
def tagged_words(text: str) -> tuple[tuple[str, str, int, int], ...]:
    """(word, part-of-speech tag, start, end) of each word of the text by jieba's tagger, in order
    (各片区占多少 → 各/r, 片区/n, 占/v, 多少/m); () without jieba."""
    tagger = _tagger()
    if tagger is None:
        return ()
    found, at = [], 0
    for pair in tagger.cut(text):
        end = at + len(pair.word)
        found.append((str(pair.word), str(pair.flag), at, end))
        at = end
    words = _measure_words_apart(_segmenter(), [(word, start, end) for word, _, start, end in found])
    if len(words) == len(found):
        return tuple(found)
    tags = {(start, end): tag for _, tag, start, end in found}
    return tuple((word, tags.get((start, end)) or _dictionary_tag(word), start, end) for word, start, end in words)


def _measure_words_apart(jieba: Any, words: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """The words with a measure word cut off the word that follows a numeral: a numeral is followed by its
    measure word, so a dictionary word that opens with one right after a numeral is a measure word and the
    next word, run together (多少天才付钱: 多少 | 天 | 才 | 付钱 "how many days until paying", not 天才
    "genius"; 3个人 → 3 | 个 | 人). The split is taken where the character is a measure word by jieba's own
    dictionary (tag q: 天, 个, 次, 家) and the rest is a word of that dictionary; numerals by the same tags
    (m: 多少, 几, 三) or digits."""
    found: list[tuple[str, int, int]] = []
    for word, start, end in words:
        previous = found[-1][0] if found else ""
        if (
            len(word) > 1
            and is_cjk(word[0])
            and jieba.dt.FREQ.get(word[1:])
            and previous
            and (previous.isdigit() or _dictionary_tag(previous) == "m")
            and _dictionary_tag(word[0]) == "q"
        ):
            found += [(word[0], start, start + 1), (word[1:], start + 1, end)]
            continue
        found.append((word, start, end))
    return found


def _dictionary_tag(word: str) -> str:
    """The part-of-speech tag jieba's dictionary gives a word ("" for a word it lacks); loads the tagger's
    table (a lookup, asked only of a word that could be a measure word run into the next one)."""
    tagger = _tagger()
    return str(tagger.dt.word_tag_tab.get(word, "")) if tagger is not None else ""


@lru_cache(maxsize=4096)
def closed_class_spans(text: str) -> tuple[Span, ...]:
    """(start, end) of each Chinese word of the text that belongs to a closed word class by jieba's
    part-of-speech tagger (哪个门店的销售额最高 → 哪个, 的); () without jieba, and () for a text without
    a Chinese character, whose words the tagger is not asked about (its tables cost a second to load)."""
    if not any(is_cjk(char) for char in text):
        return ()
    return tuple(
        (start, end)
        for word, tag, start, end in tagged_words(text)
        if any(is_cjk(c) for c in word) and is_closed_class(tag)
    )


@cache
def english_stop_words() -> frozenset[str]:
    """scikit-learn's English stop words (the Glasgow Information Retrieval Group's list), read from the
    one plain module that holds them: importing scikit-learn for them costs about a second of CPU in
    every process that reads a question, and the list is all the reading needs of scikit-learn. Empty
    without scikit-learn."""
    package = importlib.util.find_spec("sklearn")
    for folder in (package.submodule_search_locations or ()) if package else ():
        spec = importlib.util.spec_from_file_location(
            "_verity_sklearn_stop_words", f"{folder}/feature_extraction/_stop_words.py"
        )
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except OSError:  # another layout of the package: import it the usual way below
            continue
        return frozenset(module.ENGLISH_STOP_WORDS)
    try:
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
    except ImportError:  # pragma: no cover - a dependency; kept working without it
        return frozenset()
    return frozenset(ENGLISH_STOP_WORDS)


@cache
def _lemmatizer() -> Any | None:
    """simplemma's lemmatize function (its English table is read on the first call); None when missing."""
    try:
        from simplemma import lemmatize
    except ImportError:  # pragma: no cover - a dependency; kept working without it
        return None
    return lemmatize


@lru_cache(maxsize=65536)
def lemma(word: str) -> str:
    """The dictionary form of an English word, lower case: stores → store, sold → sell, women → woman.
    A word that is not plain English letters (Chinese, a number, a code like "x2") is returned folded."""
    folded = fold(word.strip())
    if not _ASCII_WORD.fullmatch(folded):
        return folded
    lemmatize = _lemmatizer()
    if lemmatize is None:
        return folded
    found = str(lemmatize(folded, lang="en")).lower()
    return found if found.isascii() and found.isalpha() else folded


@lru_cache(maxsize=8192)
def is_clipped(word: str) -> bool:
    """Whether an English-looking word is no word of the dictionary in any form (lemminflect knows no
    lemma for it): a clipped name ("Exer" for exercise, "dist" for distance), a code, an acronym."""
    folded = fold(word.strip())
    if len(folded) < 3 or not _ASCII_WORD.fullmatch(folded):
        return False
    try:
        getAllLemmas = lemminflect().getAllLemmas
    except ImportError:  # pragma: no cover - a dependency; kept working without it
        return False
    return not getAllLemmas(folded)


@lru_cache(maxsize=8192)
def past_verb(word: str) -> str:
    """The verb an English past form stands for where the lemmatizer reads the word as another part of
    speech (left → leave: simplemma keeps the adjective "left"; churned → churn), by lemminflect's
    dictionary: the word must be a past tense or past participle of that verb. "" for any other word.
    A yes/no column named by what happened ("Left", "Churned") is asked about by the verb ("leave")."""
    folded = fold(word.strip())
    if not _ASCII_WORD.fullmatch(folded):
        return ""
    try:
        getAllLemmas, getInflection = lemminflect().getAllLemmas, lemminflect().getInflection
    except ImportError:  # pragma: no cover - a dependency; kept working without it
        return ""
    for verb in getAllLemmas(folded, upos="VERB").get("VERB", ()):
        past = {*getInflection(verb, tag="VBD"), *getInflection(verb, tag="VBN")}
        if verb != folded and folded in {p.lower() for p in past}:
            return str(verb).lower()
    return ""


FINITE = ("VB", "VBD", "VBP", "VBZ")  # a verb's base form and its finite forms: is, was, does, has
DEGREES = ("JJR", "JJS")  # an adjective's comparative and superlative: higher, highest


@lru_cache(maxsize=1024)
def word_forms(word: str, tags: tuple[str, ...] = ()) -> tuple[str, ...]:
    """An English word and its inflections by lemminflect's dictionary, lower case (be → am, are, is,
    was, were, been, being; give → gives, gave, given; low → lower, lowest); with tags, the word and only
    the forms of those Penn tags (FINITE: be → am, are, is, was, were; DEGREES: high → higher, highest).
    The word alone when the dictionary lacks it."""
    try:
        getAllInflections = lemminflect().getAllInflections
    except ImportError:  # pragma: no cover - a dependency; kept working without it
        return (word,)
    found = [word]
    for upos in (None, "AUX"):
        table = getAllInflections(word) if upos is None else getAllInflections(word, upos=upos)
        for tag, forms in table.items():
            if not tags or tag in tags:
                found.extend(f.lower() for f in forms)
    return tuple(dict.fromkeys(found))


# The auxiliary verbs (do, have, be in their finite forms: did, has, were …) that open a question's clause
# before its subject: "how many cups | did | we sell", "how many cups | did | members buy".
AUXILIARIES = frozenset(form for verb in ("do", "have", "be") for form in word_forms(verb, FINITE))


@lru_cache(maxsize=4096)
def inner_words(word: str) -> tuple[str, ...]:
    """The shorter dictionary words inside a Chinese word, then the word (jieba's search mode: 销售额 →
    销售, 销售额), so that a search for one finds a text that says the other; (word,) otherwise."""
    if len(word) < 3 or not any(is_cjk(c) for c in word):
        return (word,)
    jieba = _segmenter()
    if jieba is None:
        return (word,)
    return (*dict.fromkeys(w for w in jieba.cut_for_search(word) if w != word), word)


def tokens(text: str) -> list[Token]:
    """The words of a text in order, Chinese segmented into words (哪个门店的销售额最高 → 哪个, 门店, 的,
    销售额, 最高) and English words with their lemmas; spaces and punctuation are left out."""
    folded = fold(text)
    found = []
    for start, end in word_spans(folded):
        word = folded[start:end]
        if not any(c.isalnum() for c in word):
            continue
        cjk = any(is_cjk(c) for c in word)
        found.append(Token(word, word if cjk else lemma(word), start, end, cjk))
    return found
