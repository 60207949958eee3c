"""The months a question names as the time it is about (issue 24: filters): "in March", "March 2024",
"from March to May", "in Q2", "the second quarter", "the first half", "3月份", "2024年3月", "三月到五月",
"第二季度", "上半年". A
new user's trial found "Which region had the highest revenue in March?" and "3月份哪个地区的销售额最高？"
answered for the whole year, the month dropped without a word.

Only the calendar's closed classes are read here: the month names (Python's `calendar`, English),
month numbers with 月 (1-12, in digits or Chinese numerals), quarters (Q1-Q4, 第N季度, "first quarter") and
halves (上半年, 下半年, H1, "the second half").
An English month name counts after a word that places it in time (in, during, from, to, since …) or
before a year, so the verb "may" is never May. A number of months ("3个月", three months) and a day
("12月31日") are not a month named."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass

from app.understanding import vocabulary
from app.understanding.text import COUNT_WORDS_EN, COUNT_WORDS_ZH, tagged_words

# March -> 3, Mar -> 3, Sept -> 9 (lower case)
_EN_MONTHS = {name.lower(): i for i in range(1, 13) for name in (calendar.month_name[i], calendar.month_abbr[i])}
_EN_MONTHS["sept"] = 9
_EN_NAME = "|".join(sorted(_EN_MONTHS, key=len, reverse=True))
_YEAR = r"(?:19|20)\d{2}"
# a Chinese month number: 1-12 in digits, 一..十二 in numerals
_ZH_NUMBER = r"1[0-2]|0?[1-9]|十[一二]|[一二三四五六七八九十]"
_ZH_MONTH = rf"(?<![\d一二三四五六七八九十])(?:(?P<YEAR_>{_YEAR})\s*年\s*)?(?P<MONTH_>{_ZH_NUMBER})\s*月份?(?!\s*(?:\d|[一二三四五六七八九十])+\s*[日号])"
_EN_MONTH = rf"\b(?P<MONTH_>{_EN_NAME})\b\.?(?:\s*,?\s*(?P<YEAR_>{_YEAR})\b)?"
# "from March to May", "3月到5月": the months between too ("March and May" are two months, not a span)
_RANGE_JOIN = r"\s*(?:到|至|~|～|-|–|—|through|to|until)\s*"


def _span(month: str) -> str:
    """A month, or two joined as a span: groups y1 m1 (y2 m2)."""
    one, two = (month.replace("YEAR_", f"y{i}").replace("MONTH_", f"m{i}") for i in (1, 2))
    return rf"{one}(?:{_RANGE_JOIN}{two})?"


_ZH_RANGE = re.compile(_span(_ZH_MONTH))
_EN_RANGE = re.compile(_span(_EN_MONTH), re.I)
_PLACED = re.compile(r"\b(?:in|during|for|of|from|to|until|through|since|by)\s+(?:the\s+month\s+of\s+)?$", re.I)
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4}  # and 1st..4th, by their digit
_QUARTER = re.compile(
    rf"(?:(?P<y1>{_YEAR})\s*年?\s*)?(?:\bQ(?P<q>[1-4])\b|第?(?P<qz>[1-4一二三四])\s*季度"
    rf"|\b(?P<qo>{'|'.join(_ORDINALS)}|[1-4](?:st|nd|rd|th))\s+quarter\b)(?:\s*(?:of\s+)?(?P<y2>{_YEAR}))?",
    re.I,
)


# halves of the year: 上半年 / 下半年, "the first half (of 2024)", H1 / H2
_HALF = re.compile(
    rf"(?:(?P<y1>{_YEAR})\s*年?\s*)?(?:(?P<zh>[上下])半年|\bH(?P<h>[12])\b|\b(?P<en>first|second|1st|2nd)\s+half\b)"
    rf"(?:\s*(?:of\s+(?:the\s+year\s+)?)?(?P<y2>{_YEAR}))?",
    re.I,
)


@dataclass(frozen=True)
class Months:
    """The months named, first to last (1-12), and the year said with them (None: not said)."""

    first: int
    last: int
    year: int | None = None
    span: tuple[int, int] = (0, 0)  # where the question names them


def _zh_number(text: str) -> int:
    if text.isdigit():
        return int(text)
    if text.startswith("十"):
        return 10 + (COUNT_WORDS_ZH.get(text[1:], 0) if len(text) > 1 else 0)
    return COUNT_WORDS_ZH[text]


def _month(text: str) -> int:
    folded = text.lower().rstrip(".")
    return _EN_MONTHS[folded] if folded in _EN_MONTHS else _zh_number(text)


def _year(*said: str | None) -> int | None:
    return next((int(y) for y in said if y), None)


def named_months(question: str) -> Months | None:
    """The month, the months or the quarter the question names as its time, with the year said with them;
    None when it names none."""
    if match := _QUARTER.search(question):
        number = match.group("q") or match.group("qz") or ""
        ordinal = (match.group("qo") or "").lower()  # "second", "2nd"
        quarter = int(number) if number.isdigit() else COUNT_WORDS_ZH.get(number) or _ORDINALS.get(ordinal, 0)
        quarter = quarter or int(ordinal[:1])
        return Months(quarter * 3 - 2, quarter * 3, _year(match.group("y1"), match.group("y2")), match.span())
    if match := _HALF.search(question):
        second = (
            match.group("zh") == "下"
            or match.group("h") == "2"
            or (match.group("en") or "").lower() in ("second", "2nd")
        )
        return Months(
            7 if second else 1, 12 if second else 6, _year(match.group("y1"), match.group("y2")), match.span()
        )
    for match in _ZH_RANGE.finditer(question):
        first = _month(match.group("m1"))
        last = _month(match.group("m2")) if match.group("m2") else first
        if 1 <= first <= last <= 12:
            return Months(first, last, _year(match.group("y1"), match.group("y2")), match.span())
    for match in _EN_RANGE.finditer(question):
        said_year = match.group("y1") or match.group("y2")
        if not (_PLACED.search(question[: match.start()]) or said_year):
            continue  # "may", a verb; a month name nothing places in time
        first = _month(match.group("m1"))
        last = _month(match.group("m2")) if match.group("m2") else first
        if first <= last:
            return Months(first, last, _year(match.group("y1"), match.group("y2")), match.span())
    return None


# "the last 3 months", "past two weeks", "最近三个月", "过去30天", "近一年", "最近半年": the latest stretch of the data.
# The units are the understanding's period words (roles.toml periods: day, week, month …; 天, 周, 月 …).
_UNITS = {entry.key: entry.text("period") for entry in vocabulary.entries("roles", "periods")}
_ZH_UNIT = "|".join(sorted((u for u in _UNITS if not u.isascii()), key=len, reverse=True))
_EN_UNIT = "|".join(sorted((u for u in _UNITS if u.isascii()), key=len, reverse=True))
_RECENT_ZH = re.compile(rf"(?:最近|过去|近)\s*(?P<n>[\d{''.join(COUNT_WORDS_ZH)}]+|半)\s*个?\s*(?P<unit>{_ZH_UNIT})")
_RECENT_EN = re.compile(
    rf"\b(?:last|past|previous|recent)\s+(?P<n>\d+|{'|'.join(COUNT_WORDS_EN)})\s+(?P<unit>{_EN_UNIT})s?\b", re.I
)


@dataclass(frozen=True)
class Recent:
    """The latest `count` units (D, W, M, Q, Y) of the data, counted back from its last date."""

    count: int
    unit: str
    span: tuple[int, int] = (0, 0)


def recent_stretch(question: str) -> Recent | None:
    """The latest stretch of time a question names ("in the last 3 months", "最近三个月"); None when none."""
    if match := _RECENT_ZH.search(question):
        n, unit = match.group("n"), _UNITS[match.group("unit")]
        if n == "半":  # 最近半年: six months; 半个月: fifteen days
            return (
                Recent(6, "M", match.span()) if unit == "Y" else Recent(15, "D", match.span()) if unit == "M" else None
            )
        count = int(n) if n.isdigit() else _zh_number(n) if n in COUNT_WORDS_ZH or n.startswith("十") else 0
        return Recent(count, unit, match.span()) if count > 0 else None
    if match := _RECENT_EN.search(question):
        n = match.group("n").lower()
        count = int(n) if n.isdigit() else COUNT_WORDS_EN[n]
        return Recent(count, _UNITS[match.group("unit").lower()], match.span()) if count > 0 else None
    return None


# "去年", "今年", "上个月", "本月", "上季度", "last year", "this month", "the previous quarter": a calendar period
# counted back from the data's last date (its latest year, quarter or month, time_steps.time_filter). In
# Chinese a deictic before a period unit: 上/上个 (the one before), 本/这/这个/当 (the current one), and the
# year's own words 去年 (last), 今年 (this), 前年 (the one before last); in English last/previous/this/current
# before a unit. The units are the calendar's (roles.toml periods: month, quarter, year; 月, 季度, 年).
_CALENDAR = ("M", "Q", "Y")
_ZH_PERIODS = "|".join(
    sorted((u for u, p in _UNITS.items() if not u.isascii() and p in _CALENDAR), key=len, reverse=True)
)
_EN_PERIODS = "|".join(u for u, p in _UNITS.items() if u.isascii() and p in _CALENDAR)
_RELATIVE_ZH = re.compile(rf"(?P<year>[去今前])年|(?P<deixis>上个?|本|这个?|当)\s*(?P<unit>{_ZH_PERIODS})(?!\s*[日号])")
_RELATIVE_EN = re.compile(rf"\b(?P<deixis>last|previous|prior|this|current)\s+(?P<unit>{_EN_PERIODS})\b", re.I)
_BACK = {"去": 1, "今": 0, "前": 2, "last": 1, "previous": 1, "prior": 1}  # else 0: this, current, 本, 这, 当


@dataclass(frozen=True)
class Relative:
    """A calendar period counted back from the data's last date: `back` units (Y, Q, M) before its latest
    (0: the latest itself); `said` as the question says it ("去年", "last month")."""

    back: int
    unit: str
    said: str
    span: tuple[int, int] = (0, 0)


def relative_period(question: str) -> Relative | None:
    """The calendar period a question names relative to now ("去年", "上个月", "this quarter"); None when none."""
    starts = {start for _, _, start, _ in tagged_words(question)} if _RELATIVE_ZH.search(question) else set()
    # the words begin a word of the segmenter's: 以上年龄 (以上 / 年龄) and 成本月报 say no period
    if match := next((m for m in _RELATIVE_ZH.finditer(question) if m.start() in starts), None):
        if match.group("year"):
            return Relative(_BACK[match.group("year")], "Y", match.group(0), match.span())
        back = 1 if match.group("deixis").startswith("上") else 0
        unit = _UNITS[match.group("unit")]
        if unit == "Y" and back == 0 and match.group("deixis") != "本":  # 这年, 当年: "that year", no period of now
            return None
        return Relative(back, unit, match.group(0), match.span())
    if match := _RELATIVE_EN.search(question):
        back = _BACK.get(match.group("deixis").lower(), 0)
        return Relative(back, _UNITS[match.group("unit").lower()], match.group(0), match.span())
    return None
