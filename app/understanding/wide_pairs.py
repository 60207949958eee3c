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

from app.understanding.profile_reading import NUMERIC

# (earlier, later) markers of the same measurement taken twice; English ones only as whole words
PAIR_MARKERS = (
    ("before", "after"),
    ("pre", "post"),
    ("baseline", "followup"),
    ("baseline", "follow-up"),
    ("baseline", "final"),
    ("baseline", "end"),
    ("start", "end"),
    ("initial", "final"),
    ("first", "second"),
    ("1st", "2nd"),
    ("old", "new"),
    ("前", "后"),
    ("前", "後"),
    ("第一次", "第二次"),
    ("首次", "复查"),
    ("初", "末"),
    ("期初", "期末"),
)
_NUMBER = re.compile(r"\d+")
# a change or a difference between the two measurements
CHANGE_CUE = re.compile(
    r"\b(?:drop\w*|fall\w*|fell|ris(?:e|es|ing)|rose|increas\w*|decreas\w*|declin\w*|improv\w*|worse\w*|"
    r"go(?:ne|es)? (?:up|down)|went (?:up|down)|c[ao]m(?:e|es|ing) (?:up|down)|chang\w*|differ\w*|higher|lower|bigger|smaller|larger|"
    r"greater|more|less|fewer|better|worse|gain\w*|los[ets]\w*|reduc\w*|grow\w*|grew|shr[iu]nk\w*|"
    r"effect\w*|work(?:s|ed)?|help\w*|compar\w*)\b|than|比较|对比|降|升|增|减|变|改善|好转|涨|跌|缩小|扩大|有效|效果|进步|退步|提升|下滑|"
    r"更(?:高|低|多|少|大|小|好|差)|(?:高|低|多|少|大|小)(?:了|吗|于|多少)|差(?:别|异|多少)|区别|不同|比(?!例|率|重)",
    re.I,
)
# a change proper (not "higher" or "different", which compare the groups' levels)
CHANGE_ONLY = re.compile(
    r"\b(?:drop\w*|fall\w*|fell|ris(?:e|es|ing)|rose|increas\w*|decreas\w*|declin\w*|improv\w*|worsen\w*|"
    r"go(?:ne|es)? (?:up|down)|went (?:up|down)|c[ao]m(?:e|es|ing) (?:up|down)|chang\w*|gain\w*|"
    r"reduc\w*|grow\w*|grew|shr[iu]nk\w*)\b|降|升|增加|增长|减少|变化|改善|好转|进步|退步|提升|下滑|涨|跌",
    re.I,
)
# the two move together: a relationship, not a difference
RELATION_CUE = re.compile(
    r"correlat|relat(?:ed|ion)|associat|\bthe (?:more|less|higher|lower|bigger|larger)\b.*\bthe\b|"
    r"\bpredict|\bfor (?:each|every)\b|\bper (?:extra|additional|more|unit)\b|越.{1,20}越|相关|关系|关联|预测|"
    r"每(?:增加|多|高|长|提高)",
    re.I,
)
_THAN = re.compile(r"\bthan\b|\bvs\.?\b|\bversus\b|\bcompared (?:to|with)\b|比(?!例|率|较|重)|相比|对比", re.I)
_BETWEEN = re.compile(
    r"\bdiffer\w*\b.{0,20}\bbetween\b|\bgap between\b|之间.{0,4}(?:差|区别|不同)|"
    r"^\s*(?:please\s+)?compare\b|^\s*(?:请)?(?:比较|对比)",
    re.I,
)  # "compare hwy and cty": the two side by side
_OTHER = re.compile(r"\bother\b|另一|另外一|其他那|另一只|另一个")
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


def _mentions(question: str, shared: str, earlier: str, later: str) -> bool:
    """The question names what a pair's names share: one of its words ("systolic"), two Chinese
    characters in a row of it ("血压" of 治疗前血压/治疗后血压), or both the markers ("lower after than
    before")."""
    text = question.lower()
    markers = [set(_LATIN_WORD.findall(name.lower())) - set(_LATIN_WORD.findall(shared)) for name in (earlier, later)]
    if all(len(m) == 1 and re.search(rf"(?<![a-z0-9]){re.escape(next(iter(m)))}(?![a-z0-9])", text) for m in markers):
        return True
    words = {w for w in _LATIN_WORD.findall(shared) if len(w) >= 3 and not w.isdigit()}
    if any(re.search(rf"(?<![a-z]){re.escape(w)}", text) for w in words):
        return True
    return any(
        piece in text
        for part in re.findall(r"[\u4e00-\u9fff]+", shared)
        for piece in (part[i : i + 2] for i in range(len(part) - 1))
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
    han_a = re.findall(r"[\u4e00-\u9fff]", a)
    return any("".join(han_a[i : i + 2]) in b for i in range(len(han_a) - 1))
