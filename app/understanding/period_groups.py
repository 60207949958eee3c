"""The column a question's period names as its grouping (issue 24): "每个月的销量", "按季度", "各年",
"how many did we sell each month", "monthly sales", "per month", "by month", and a question asking which
period ("哪个月", "which quarter": the periods ranked) name as the groups the column of that period: one
whose header (its leaf, under a merged header) is the period's word or holds it (Month, Sales Month, 月,
月份), or whose values are labels of that period (1月..12月, Jan..Dec,
2024-01; Q1, 第一季度; 2023, 2023年). Without it the question's 月 is a single character no column is
named by, and the analyst assumed another grouping.

The period words are the understanding's roles.toml periods and grains (day, week, month, quarter,
year; 天, 周, 月, 季度, 年; monthly …) and the Chinese period names of name_forms.toml zh_generic (月份,
年份); the structure (each/every/per/by/which, 每/按/各/逐/哪 before a unit) is here. A dated table is
left to the date's own periods (the analyst's period totals)."""

from __future__ import annotations

import calendar
import re
from typing import Any

from app.understanding import vocabulary
from app.understanding.profile_reading import GROUPING
from app.understanding.text import COUNT_WORDS_EN, COUNT_WORDS_ZH, header_leaf, tagged_words
from app.understanding.words import core_name, name_words

# unit word -> its period letter (D, W, M, Q, Y), and the adjectives (monthly -> M)
_UNITS = {entry.key: entry.text("period") for entry in vocabulary.entries("roles", "periods")}
_GRAINS = {entry.key: entry.text("period") for entry in vocabulary.entries("roles", "grains")}
# Chinese names of a period's column beyond the unit itself (月份, 年份): zh_generic's words that begin with a unit
_ZH_NAMES = [w for w in vocabulary.words("name_forms", "zh_generic") if any(w.startswith(u) for u in _UNITS)]


def _alternation(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_EN_UNITS = [u for u in _UNITS if u.isascii()]
_ZH_UNITS = [u for u in _UNITS if not u.isascii()]
_EN_COUNT = rf"(?:\d+|{_alternation(list(COUNT_WORDS_EN))})"
_ZH_COUNT = rf"[\d{''.join(COUNT_WORDS_ZH)}几]+"
# "each month", "every week", "per quarter", "by year", "monthly"; "每个月", "每月", "每一年", "按月", "各季度", "逐月";
# and periods ranked by a count: "which three months", "the top 3 weeks", "哪三个月", "销量最高的3个月" (a count
# after a superlative's 的 or 哪 ranks the periods; "过去3个月", the last three months, is a span, not a grouping)
_PERIOD_PHRASE = re.compile(
    rf"\b(?:each|every|per|by|(?:which|top)(?:\s+{_EN_COUNT})?)\s+(?P<en>{_alternation(_EN_UNITS)})s?\b"
    rf"|\b(?P<grain>{_alternation(list(_GRAINS))})\b"
    rf"|(?:每一?个?|按|各|逐|哪一?个?|(?:哪|最[^\s，。？！、的]{{1,3}}的)\s*{_ZH_COUNT}\s*个?)\s*(?P<zh>{_alternation(_ZH_UNITS)})",
    re.I,
)

_MONTH_NAMES = {n.lower() for n in (*calendar.month_name[1:], *calendar.month_abbr[1:])} | {"sept"}
_YEAR = r"(?:19|20)\d{2}"
# the labels of each period a column's values may be (all of its sampled values)
_LABELS: dict[str, re.Pattern[str]] = {
    "M": re.compile(rf"^(?:\d{{1,2}}\s*月份?|{_YEAR}\s*[-/.年]\s*\d{{1,2}}\s*月?)$"),
    "Q": re.compile(rf"^(?:(?:{_YEAR}\s*[-/ ]?\s*)?Q[1-4]|第?[一二三四1-4]\s*季度?)$", re.I),
    "Y": re.compile(rf"^{_YEAR}\s*年?$"),
    "W": re.compile(r"^(?:W\s*\d{1,2}|第\s*\d{1,2}\s*周)$", re.I),
}


def _labels_of(column: dict[str, Any], period: str) -> bool:
    """Whether the column's sampled values are all labels of the period (two at least)."""
    values = [str(v).strip() for v in column.get("values") or []]
    if len(values) < 2:
        return False
    if period == "M" and all(v.lower().rstrip(".") in _MONTH_NAMES for v in values):
        return True
    pattern = _LABELS.get(period)
    return pattern is not None and all(pattern.match(v) for v in values)


def _named_like(column: dict[str, Any], period: str) -> bool:
    """Whether the column's header (its leaf) is the period's word or holds it: Month, Sales Month, 月, 月份."""
    leaf = core_name(header_leaf(str(column["name"]))).strip().lower()
    units = [u for u, p in _UNITS.items() if p == period]
    if leaf in units or any(leaf == w for w in _ZH_NAMES if any(w.startswith(u) for u in units)):
        return True
    words = set(name_words(leaf))
    return any(u.isascii() and (u in words or f"{u}s" in words) for u in units)


def _whole_unit(question: str, end: int) -> bool:
    """Whether the Chinese unit ending at `end` ends a word as jieba segments the question (每个/月, 按月,
    各/季度), not the start of a longer one (按/年龄, 各/天气); True without jieba."""
    words = tagged_words(question)
    return not words or any(stop == end for *_, stop in words)


def period_group_places(question: str, columns: list[dict[str, Any]]) -> list[tuple[int, int, str]]:
    """Where the question goes through a period as its grouping ("每个月", "by month", "monthly") and the
    one grouping column of that period: (start, end, column name) of the unit's words. None on a table
    with a date column (its periods are made from the dates) or where more than one column fits."""
    if any(c.get("type") == "datetime" for c in columns):
        return []
    places = []
    for match in _PERIOD_PHRASE.finditer(question):
        if match.group("zh") and not _whole_unit(question, match.end("zh")):
            continue  # 按年龄 (by age): 年 begins another word
        said = match.group("en") or match.group("zh") or ""
        period = _UNITS.get(said.lower()) or _GRAINS.get((match.group("grain") or "").lower(), "")
        if not period:
            continue
        fits = [
            c["name"]
            for c in columns
            if (c.get("type") in GROUPING or c.get("coded")) and (_named_like(c, period) or _labels_of(c, period))
        ]
        if len(fits) == 1:
            places.append((match.start(), match.end(), fits[0]))
    return places


def period_column(columns: list[dict[str, Any]]) -> str | None:
    """The first grouping column that is a period of time (`is_period_column`): rows put in periods, like
    the rows of a dated table. None when the table has none."""
    return next((str(c["name"]) for c in columns if is_period_column(c)), None)


def is_period_column(column: dict[str, Any]) -> bool:
    """Whether a grouping column is a period of time by its header or its values (月份 of 1月..12月,
    Quarter of Q1..Q4, Month of Jan..Dec)."""
    if not (column.get("type") in GROUPING or column.get("coded")):
        return False
    return any(_named_like(column, period) or _labels_of(column, period) for period in set(_UNITS.values()))


_ZH_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4}
_MONTH_NUMBER = {
    name.lower(): number
    for number in range(1, 13)
    for name in (calendar.month_name[number], calendar.month_abbr[number])
} | {"sept": 9}
# the numbers of a period label in calendar order: (year, the period within it) — 2024年3月, 2024-Q1, 3月, Q1, 第一季度
_LABEL_PARTS = re.compile(
    rf"^(?:(?P<year>{_YEAR})\s*(?:[-/.年]|\s)?\s*)?(?:Q|第)?\s*(?P<part>\d{{1,2}}|[一二三四])?\s*(?:月份?|季度?|周)?$",
    re.I,
)


def _calendar_key(text: str) -> tuple[int, int] | None:
    """(year, the month, quarter or week within it; 0 for none) of a period label; None for another text."""
    plain = text.strip().lower().rstrip(".")
    if plain in _MONTH_NUMBER:
        return 0, _MONTH_NUMBER[plain]
    plain = re.sub(r"^w(?=\s*\d)", "", plain)  # W12: the week's number
    match = _LABEL_PARTS.match(plain)
    if not match or not (match.group("year") or match.group("part")):
        return None
    part = match.group("part") or "0"
    return int(match.group("year") or 0), _ZH_DIGITS.get(part) or int(part)


def calendar_order(labels: list[str]) -> list[str] | None:
    """Group labels that are all periods of one kind (1月..12月, Jan..Dec, Q1..Q4, 第一季度, 2023年, 2024-03,
    W1..W52) in calendar order; None when one of them is not such a label or they are of mixed kinds
    (a period breakdown is read in time order; other groups by size)."""
    if len(labels) < 2:
        return None
    kinds = [p for p in (*_LABELS, "named") if all(_is_label(text, p) for text in labels)]
    keys = [_calendar_key(text) for text in labels]
    if not kinds or any(key is None for key in keys):
        return None
    ordered = sorted(zip(keys, labels), key=lambda pair: pair[0] or (0, 0))
    return [text for _, text in ordered]


def _is_label(text: str, period: str) -> bool:
    """Whether `text` is a label of the period (`_LABELS`), or a month's name ("named")."""
    if period == "named":
        return text.strip().lower().rstrip(".") in _MONTH_NAMES
    return bool(_LABELS[period].match(text.strip()))
