"""Wide paired designs (issue 14): two numeric columns that measure the same thing twice on each row
("Systolic Before"/"Systolic After", 治疗前血压/治疗后血压, "Wr.Hnd"/"NW.Hnd", "hwy"/"cty"). A question
that compares the two is a paired comparison row by row, not a comparison of groups, a correlation,
or a question about which periods to compare. (repeated_design.py reads the long format: one row
per subject and time.)

Three readings, from the strongest signal to the most general:
- the names say so: two columns whose names differ only by a pair marker (before/after, pre/post,
  前/后, 第一次/第二次, or a number: "Sales 2023"/"Sales 2024"), one of them or their shared part named
  by a question about a change or a difference;
- the question says so: two measurements on the same scale, one named before "than"/"vs"/"比" and the
  other after it ("more miles per gallon on the highway than in the city"), or "the difference
  between X and Y";
- "the other": one measurement named, and "the other …" of a column sharing a word of its name
  ("the writing hand … the other hand": Wr.Hnd and NW.Hnd).
A question about how the two move together (correlation words, "the more … the more") is not one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from app.understanding import vocabulary
from app.understanding.profile_reading import NUMERIC
from app.understanding.text import HAN_RUN, is_cjk, word_spans

_FILE = "designs"  # vocabulary/designs.toml: the words; the patterns with structure stay here
# (earlier, later) markers of the same measurement taken twice; English ones only as whole words
PAIR_MARKERS = vocabulary.pairs(_FILE, "pair_markers")
_NUMBER = re.compile(r"\d+")
# a change proper (not "higher" or "different", which compare the groups' levels)
_CHANGE_ONLY_EN = vocabulary.alternation(_FILE, "change_only_en")
_CHANGE_ONLY_ZH = vocabulary.word_alternation(_FILE, "change_only_zh")
CHANGE_ONLY = re.compile(rf"\b(?:{_CHANGE_ONLY_EN})\b|{_CHANGE_ONLY_ZH}", re.I)
# a change or a difference between the two measurements: a change proper, or the words of a difference
CHANGE_CUE = re.compile(
    rf"\b(?:{_CHANGE_ONLY_EN}|{vocabulary.alternation(_FILE, 'change_cue_en')})\b|{_CHANGE_ONLY_ZH}|"
    + vocabulary.alternation(_FILE, "change_cue_other", bi_comparing=r"比(?!例|率|重)"),
    re.I,
)
# the two move together: a relationship, not a difference
RELATION_CUE = vocabulary.regex(_FILE, "relation_cue", re.I)
_THAN = vocabulary.regex(_FILE, "than", re.I, bi_than=r"比(?!例|率|较|重)")
_BETWEEN = vocabulary.regex(
    _FILE,
    "between",
    re.I,
    compare_request=r"^\s*(?:please\s+)?compare\b",  # "compare hwy and cty": the two side by side
    compare_request_zh=r"^\s*(?:请)?(?:比较|对比)",
)
_OTHER = vocabulary.regex(_FILE, "other")
_LATIN_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class WidePair:
    """Two measurements on each row: the difference is first - second (later minus earlier when the
    names have markers, else the order the question names them in)."""

    first: str
    second: str
    marked: bool = False  # the names carry a before/after marker: first is the later one


def wide_pair(question: str, columns: list[dict[str, Any]], spans: list[Any]) -> WidePair | None:
    """The wide paired design a question asks about, when the table has one (see the module doc)."""
    if RELATION_CUE.search(question):
        return None
    numbers = {
        c["name"]: c
        for c in columns
        if c["type"] in NUMERIC and not c.get("pii") and not c.get("binary") and not c.get("coded")
    }
    named = list(dict.fromkeys(name for _, _, name in spans if name in numbers))
    if len(named) > 2:
        return None
    if CHANGE_CUE.search(question):
        for earlier, later, shared in marked_pairs(list(numbers)):
            if (set(named) <= {earlier, later}) if named else _mentions(question, shared, earlier, later):
                return WidePair(later, earlier, marked=True)
    if len(named) == 2 and same_scale(numbers[named[0]], numbers[named[1]]) and _compared(question, spans, named):
        return WidePair(named[0], named[1])
    if len(named) == 1 and _OTHER.search(question):
        partners = [
            n
            for n in numbers
            if n != named[0] and _common_words(n, named[0]) and same_scale(numbers[n], numbers[named[0]])
        ]
        if len(partners) == 1:
            return WidePair(named[0], partners[0])
    return None


def marked_change(question: str, columns: list[dict[str, Any]], spans: list[Any]) -> WidePair | None:
    """The change between a marked pair a question asks about group by group ("did scores improve more
    in class A than in class B"): a change word and the pair (or what its names share) named."""
    if not CHANGE_ONLY.search(question) or RELATION_CUE.search(question):
        return None
    numbers = [c["name"] for c in columns if c["type"] in NUMERIC and not c.get("pii")]
    named = {name for _, _, name in spans if name in numbers}
    for earlier, later, shared in marked_pairs(numbers):
        if (named <= {earlier, later}) if named else _mentions(question, shared, earlier, later):
            return WidePair(later, earlier, marked=True)
    return None


def marked_pairs(names: list[str]) -> list[tuple[str, str, str]]:
    """(earlier, later, what the names share) for the column pairs whose names differ only by a pair
    marker or a number."""
    pairs = []
    for a in names:
        for b in names:
            shared = _marker_swap(a, b) if a != b else None
            if shared is None and a != b and _number_swap(a, b):
                shared = _NUMBER.sub(" ", a.lower())
            if shared is not None:
                pairs.append((a, b, shared))
    return pairs


def marker_columns(question: str, columns: list[dict[str, Any]]) -> list[str]:
    """The two columns of a marked pair a question names by their markers, in the question's order:
    "before minus after" → [Systolic Before, Systolic After]; "治疗前减治疗后" → [治疗前血压, 治疗后血压]."""
    numbers = [c["name"] for c in columns if c["type"] in NUMERIC and not c.get("pii")]
    text = question.lower()
    for earlier, later, _ in marked_pairs(numbers):
        places = [_marker_at(text, name, partner) for name, partner in ((earlier, later), (later, earlier))]
        if all(at >= 0 for at in places) and places[0] != places[1]:
            return [earlier, later] if places[0] < places[1] else [later, earlier]
    return []


def _marker_at(text: str, name: str, partner: str) -> int:
    """Where the question says the part of `name` that `partner` lacks (its marker), -1 if nowhere."""
    low, other = name.lower(), partner.lower()
    start = next((i for i in range(min(len(low), len(other))) if low[i] != other[i]), 0)
    end = next((i for i in range(min(len(low), len(other))) if low[-1 - i] != other[-1 - i]), 0)
    marker = low[start : len(low) - end].strip(" _.-")
    if not marker:
        return -1
    pattern = rf"(?<![a-z0-9]){re.escape(marker)}(?![a-z0-9])" if marker.isascii() else re.escape(marker)
    match = re.search(pattern, text)
    return match.start() if match else -1


def _marker_swap(a: str, b: str) -> str | None:
    """What the names share when b is a with one earlier marker replaced by its later one ("Systolic
    Before" → "Systolic After": "systolic")."""
    low_a, low_b = a.lower(), b.lower()
    for earlier, later in PAIR_MARKERS:
        for match in re.finditer(re.escape(earlier), low_a):
            i, j = match.start(), match.end()
            if earlier.isascii() and (_letter(low_a, i - 1) or _letter(low_a, j)):
                continue  # whole words only: "pre" is not in "pressure"
            if low_a[:i] + later + low_a[j:] == low_b:
                return f"{low_a[:i]} {low_a[j:]}"
    return None


def sides_said(question: str) -> frozenset[int]:
    """Which side of a pair the question's own words say, by any pair marker of either language: 0 for
    an earlier one (before, 前, 第一次), 1 for a later one (after, 后, 复查). An English marker counts as a
    whole word; a Chinese marker of one character only as a word of its own to the segmenter ("辅导后":
    辅导 / 后; never the 后 of 以后 or 最后, nor the 前 of 前三名)."""
    text = question.lower()
    words = {text[start:end] for start, end in word_spans(text)}
    said: set[int] = set()
    for pair in PAIR_MARKERS:
        for side, marker in enumerate(pair):
            if marker.isascii():
                found = re.search(rf"(?<![a-z0-9]){re.escape(marker)}(?![a-z0-9])", text) is not None
            else:
                found = marker in words if len(marker) == 1 else marker in text
            if found:
                said.add(side)
    return frozenset(said)


def said_side(question: str, column: str, columns: list[dict[str, Any]]) -> str | None:
    """The column of a marked pair the question's markers point to, when `column` is one of the pair
    and the question says one side only, in either language: "辅导后的成绩" over "Score / Before" and
    "Score / After" is the later one, whichever leaf a word for the pair's shared part reached first.
    None when the column is in no marked pair or the question says both sides or neither."""
    sides = sides_said(question)
    if len(sides) != 1:
        return None
    numbers = [c["name"] for c in columns if c["type"] in NUMERIC and not c.get("pii")]
    for earlier, later, _ in marked_pairs(numbers):
        if column in (earlier, later):
            return later if 1 in sides else earlier
    return None


def _mentions(question: str, shared: str, earlier: str, later: str) -> bool:
    """The question names what a pair's names share: one of its words ("systolic"), two Chinese
    characters in a row of it ("血压" of 治疗前血压/治疗后血压), or both the markers ("lower after than
    before")."""
    text = question.lower()
    if sides_said(question) == {0, 1}:  # both sides said, in the names' language or the other ("辅导后比辅导前")
        return True
    markers = [set(_LATIN_WORD.findall(name.lower())) - set(_LATIN_WORD.findall(shared)) for name in (earlier, later)]
    if all(len(m) == 1 and re.search(rf"(?<![a-z0-9]){re.escape(next(iter(m)))}(?![a-z0-9])", text) for m in markers):
        return True
    words = {w for w in _LATIN_WORD.findall(shared) if len(w) >= 3 and not w.isdigit()}
    if any(re.search(rf"(?<![a-z]){re.escape(w)}", text) for w in words):
        return True
    return any(
        piece in text for part in HAN_RUN.findall(shared) for piece in (part[i : i + 2] for i in range(len(part) - 1))
    )


def _letter(text: str, at: int) -> bool:
    return 0 <= at < len(text) and text[at].isascii() and text[at].isalpha()


def _number_swap(a: str, b: str) -> bool:
    """The same name with a smaller number in a than in b ("score1"/"score2", "Sales 2023"/"Sales 2024")."""
    if _NUMBER.sub("#", a) != _NUMBER.sub("#", b):
        return False
    pairs = [(int(x), int(y)) for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)) if x != y]
    return len(pairs) == 1 and pairs[0][0] < pairs[0][1]


def same_scale(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two numbers on the same scale: their ranges (from the profile) overlap over at least a quarter
    of the narrower one, and neither is more than five times the other at its top."""
    bounds = [v for v in (a.get("minimum"), b.get("minimum"), a.get("maximum"), b.get("maximum")) if v is not None]
    if len(bounds) < 4:
        return False
    lows, highs = (float(bounds[0]), float(bounds[1])), (float(bounds[2]), float(bounds[3]))
    overlap = min(highs) - max(lows)
    narrower = min(highs[0] - lows[0], highs[1] - lows[1])
    tops = sorted(abs(h) for h in highs)
    return overlap > 0 and overlap >= 0.25 * narrower and tops[1] <= 5 * max(tops[0], 1e-12)


def _compared(question: str, spans: list[Any], named: list[str]) -> bool:
    """One measurement named before a comparison word ("than", "vs", "比") and the other after it,
    "the difference between" the two, or a request to compare them ("compare hwy and cty", "比较…")."""
    if _BETWEEN.search(question):
        return True
    for match in _THAN.finditer(question):
        before = {name for start, _, name in spans if start < match.start() and name in named}
        after = {name for start, _, name in spans if start >= match.end() and name in named}
        if before and after and before != after:
            return True
    return False


def _common_words(a: str, b: str) -> bool:
    """Names sharing a word ("Wr.Hnd" and "NW.Hnd" share "hnd"), or two characters in Chinese."""
    words_a, words_b = set(_LATIN_WORD.findall(a.lower())), set(_LATIN_WORD.findall(b.lower()))
    if {w for w in words_a & words_b if len(w) >= 2 and not w.isdigit()}:
        return True
    han_a = [c for c in a if is_cjk(c)]
    return any("".join(han_a[i : i + 2]) in b for i in range(len(han_a) - 1))
