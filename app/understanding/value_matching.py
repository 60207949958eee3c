"""How a question names a category value in everyday forms (zh/en), by general rules:

- English: irregular plurals ("women" → Woman), a plural value named in the singular ("smoker" →
  Smokers), the other spelling ("colour" → Color), and a bare word with its inflection ("rainy
  days" → Rain; "rain" → Rainy) — whole words only, so "rain" is never read inside "train" or
  "Grain", and never two inflections of one word ("returned" is not Returning);
- Chinese: a one-character value (男, 女, 晴, 雨) of a column with few levels, written as the natural
  everyday word around it: 男生, 男同学, 女性, 晴天, 下雨天, 男的; or beside another of the column's
  values (男女). A single character is never matched alone: "难" is not 男, nor 雨 in "雨量".
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from app.understanding import vocabulary
from app.understanding.english_dictionary import lemminflect
from app.understanding.spelling import text_variants
from app.understanding.text import tagged_words

# Plurals the dictionary does not pair, each way round: person → people (vocabulary/value_forms.toml); the
# others (man → men, women → woman) are lemminflect's (_noun_forms).
_IRREGULAR = dict(vocabulary.pairs("value_forms", "irregular_plurals"))
_IRREGULAR.update({plural: single for single, plural in list(_IRREGULAR.items())})


@lru_cache(maxsize=4096)
def _noun_forms(word: str) -> tuple[str, ...]:
    """A noun's singular and plural by lemminflect's English dictionary (women → woman, child → children),
    irregular ones included; () without it."""
    try:
        getInflection, getLemma = lemminflect().getInflection, lemminflect().getLemma
    except ImportError:  # pragma: no cover - a dependency; kept working without it
        return ()
    single = [str(form) for form in getLemma(word, upos="NOUN")[:1]]
    if single and single[0] != word:
        return tuple(single)
    return tuple(str(form) for form in getInflection(word, tag="NNS")[:1])


FEW_LEVELS = 12  # a one-character Chinese value is matched only in a column of this many levels at most


def value_forms(value: str) -> tuple[str, ...]:
    """Other English forms a question may write a value in: irregular plural or singular, the singular
    of a plural value, the other spelling. Lower case; empty for other values."""
    word = value.strip().lower()
    if not word.isascii() or not re.fullmatch(r"[a-z][a-z -]*", word):
        return ()
    forms = set(text_variants(word))
    if word in _IRREGULAR:
        forms.add(_IRREGULAR[word])
    elif word.isalpha():
        forms.update(_noun_forms(word))
    if len(word) >= 5 and word.endswith("s") and not word.endswith("ss"):
        forms.add(word[:-1])  # Smokers ← "smoker"
    forms.discard(word)
    return tuple(sorted(forms))


def _root(word: str) -> str:
    """A word without -ing/-ed/-y/-s and a doubled last letter: rainy → rain, sunny → sun, raining → rain."""
    for suffix in ("ing", "ed", "y", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]
    return word


def inflected_at(text: str, value: str) -> int:
    """Where a whole question word and a one-word value are the same word, one of them bare and the
    other inflected ("rainy"/"raining" for Rain, "rain" for Rainy); -1 if nowhere."""
    word = value.strip().lower()
    if not (word.isascii() and word.isalpha() and len(word) >= 3):
        return -1
    root = _root(word)
    for match in re.finditer(r"[a-z]+", text):
        asked = match.group(0)
        if asked != word and (asked == root or word == _root(asked)) and _root(asked) == root and len(root) >= 3:
            return match.start()
    return -1


# What a one-character value is written with in everyday Chinese: after it (男生, 女性, 晴天, 雨天,
# 男同学), or 的 after it where it stands alone (男的), or 下 before it (下雨天, 下雪的时候).
_ZH_AFTER = vocabulary.words("value_forms", "zh_after_value")
_ZH_ALONE_BEFORE = set(vocabulary.characters("value_forms", "zh_alone_before"))
_ZH_YES_NO = set(vocabulary.characters("value_forms", "zh_yes_no"))


def zh_single_value_at(text: str, value: str, others: list[str], levels: int) -> int:
    """Where the question names a one-character Chinese value in its everyday form; -1 if nowhere.
    `others` are the column's other values (男女: both named), `levels` how many it has."""
    char = value.strip()
    if len(char) != 1 or char.isascii() or char in _ZH_YES_NO or not 2 <= levels <= FEW_LEVELS:
        return -1
    singles = {str(v).strip() for v in others if len(str(v).strip()) == 1} - {char}
    for at in (i for i, ch in enumerate(text) if ch == char):
        before, after = text[at - 1] if at else " ", text[at + 1 :]
        if after.startswith(_ZH_AFTER) or before == "下":
            return at
        if after.startswith("的") and before in _ZH_ALONE_BEFORE:
            return at
        if before in singles or after[:1] in singles:  # 男女, 晴雨
            return at
    return _noun_alone_at(text, char)


def zh_yes_no_mark(value: str) -> bool:
    """Whether a value is a one-character Chinese yes/no answer (有, 无, 是, 否): a column of two such
    values (电梯: 有/无) is named with its value right before its name ("有电梯的房子")."""
    return len(value) == 1 and value in _ZH_YES_NO


def _noun_alone_at(text: str, char: str) -> int:
    """Where the character stands as a noun of its own to the segmenter's tagger ("其中猫有几次": 猫/n), not
    inside a longer word (雨 of 雨量) nor as another word class (the 男 of 只看男的 is b, and reads by 的)."""
    for word, tag, start, _ in tagged_words(text):
        if word == char and tag == "n":
            return start
    return -1


# --- a place or name written in Chinese characters on one side and in pinyin on the other ----------------
# "只看杭州的受访者" over City = Hangzhou, "just the Chengdu stores" over 门店 = 成都: the value is the same
# word in two scripts. Each character may be read any of its ways (重庆 is chong+qing, not zhong+qing),
# tones and spaces ignored. Two characters at least and four letters at least: one character's syllable
# (an, yi) would turn up everywhere.
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]{2,}")
_PINYIN_VALUE = re.compile(r"[A-Za-z]+(?:[ '\-][A-Za-z]+)*")
_ROMAN_WORDS = re.compile(r"[A-Za-z]+")
MIN_ROMAN_LETTERS = 4


@lru_cache(maxsize=8192)
def _readings(char: str) -> tuple[str, ...]:
    """The toneless pinyin readings of a Chinese character (重 → zhong, chong, tong); () for another."""
    from pypinyin.pinyin_dict import pinyin_dict  # the character table only, loaded at the first use

    readings = pinyin_dict.get(ord(char), "")
    bare = ("".join(c for c in unicodedata.normalize("NFD", r) if c.isascii()) for r in readings.split(","))
    return tuple(dict.fromkeys(r for r in bare if r))


def _spelt(chars: str, letters: str, whole: bool) -> int:
    """How many characters from the start of `chars` spell `letters` exactly, one reading each (all of
    `chars` when `whole`); 0 when they cannot."""

    def spell(i: int, j: int) -> int:
        if j == len(letters):
            return i if (i == len(chars) or not whole) else 0
        if i == len(chars):
            return 0
        for reading in _readings(chars[i]):
            if letters.startswith(reading, j) and (n := spell(i + 1, j + len(reading))):
                return n
        return 0

    return spell(0, 0)


def _english_word(letters: str) -> bool:
    """Whether letters are an English noun, adjective or adverb (women, online): read as English, not as
    pinyin (我们 is wo+men). A verb-only word stays a name (to shanghai)."""
    getAllLemmas = lemminflect().getAllLemmas

    return bool(set(getAllLemmas(letters)) - {"VERB"})


def romanized_at(text: str, value: str) -> int:
    """Where the question writes a value in the other script: a pinyin value (Hangzhou, Xi'an) in
    Chinese characters, or a Chinese value (杭州) in pinyin ("Hangzhou", "Hang Zhou"); -1 if nowhere."""
    value = value.strip()
    if _PINYIN_VALUE.fullmatch(value):
        letters = re.sub(r"[ '\-]", "", value).lower()
        if len(letters) < MIN_ROMAN_LETTERS or _english_word(letters):
            return -1
        for run in _CJK_RUN.finditer(text):
            for i in range(len(run.group()) - 1):
                if _spelt(run.group()[i:], letters, whole=False) >= 2:
                    return run.start() + i
        return -1
    if not (_CJK_RUN.fullmatch(value) and len(value) >= 2):
        return -1
    found = list(_ROMAN_WORDS.finditer(text))
    words = [w.group().lower() for w in found]
    for i in range(len(words)):
        for j in range(i + 1, min(i + len(value), len(words)) + 1):  # "Hangzhou", "Hang Zhou": a word a character
            letters = "".join(words[i:j])
            if len(letters) >= MIN_ROMAN_LETTERS and not _english_word(letters) and _spelt(value, letters, whole=True):
                return found[i].start()
    return -1
