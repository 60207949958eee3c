"""Numbers in text: extraction and matching at the precision written.

Shared by the report's final-answer check (`app.reports.builder.unverified_numbers`) and the
claim verification after tool rounds (`app.agent.verification`), so both read "1.2万", "45%",
"12,000", "3.4k" and "0.05" the same way: a number matches a value when it equals it at the
precision written (rounding), as a percentage or a fraction, with thousands separators and
万/亿/k/M/million scales.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any, Iterable

_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])"  # not inside a word or after a decimal point (CJK text may touch it)
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?|\.\d+)"
    r"(?P<unit>\s?%|\s?‰|\s?万|\s?亿)?"
)
_TRAILING_WORD = re.compile(r"[A-Za-z0-9_.]*")
_LIST_ITEM = re.compile(r"^\s*(?:#{1,6}\s*)?(?:[-*+]\s+)?[(（]?\d{1,3}[.)、）:](?=\s|$|[^\d])", re.MULTILINE)
_DATE_PATTERNS = [
    re.compile(r"(?<!\d)(?:19|20)\d{2}(?:-\d{1,2}(?:-\d{1,2})?|/\d{1,2}(?:/\d{1,2})?|\.\d{1,2}\.\d{1,2})"
               r"(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?"),
    re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b"),
    re.compile(r"\d{4}\s*年(?:\s*\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?)?"),
    re.compile(r"\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?"),
    re.compile(r"\d{1,2}\s*[日号]"),
    re.compile(r"第\s*\d+\s*[步项条点章节个季度周天]"),
]
_URL = re.compile(r"https?://\S+|\]\([^)]*\)")
_CODE_FENCE = re.compile(r"```.*?```", re.DOTALL)
_COMPARATOR = re.compile(r"(?:[<>≤≥=]|α|alpha|significance level|显著性水平)\s*$", re.IGNORECASE)
_CONFIDENCE_LEVEL = re.compile(r"^\s*(?:CI\b|C\.I\.|confidence|credible|prediction interval|置信|可信)", re.IGNORECASE)
_POINTS = re.compile(r"^\s*(?:个百分点|percentage points?\b|pp\b|pts?\b)", re.IGNORECASE)
_SCALE_WORD = re.compile(r"^(?:\s*(thousand|million|billion|trillion)\b|(k|K|M|bn|B)\b)")
_SCALES = {"thousand": 3, "k": 3, "K": 3, "million": 6, "M": 6, "billion": 9, "bn": 9, "B": 9, "trillion": 12}
_CITATION = re.compile(r"[\[【]\d{1,3}[\]】]")
_CONVENTIONAL_THRESHOLDS = {Decimal("0.1"), Decimal("0.05"), Decimal("0.01"), Decimal("0.001"), Decimal("0.0001")}


class Written:
    """A number as written in the answer: its value, the precision written, and its scale."""

    __slots__ = ("text", "value", "decimals", "percent", "scale", "tolerance")

    def __init__(self, text: str, digits: str, unit: str, multiplier: Decimal | None = None):
        self.text = text
        clean = digits.replace(",", "")
        self.value = Decimal(clean)
        unit = unit.strip()
        self.percent = unit in ("%", "‰")
        self.scale = multiplier or {"万": Decimal(10_000), "亿": Decimal(100_000_000)}.get(unit, Decimal(1))
        mantissa = clean.lower().split("e")[0]
        self.decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        if "e" in clean.lower():  # scientific notation: compare at the mantissa's precision
            exponent = int(clean.lower().split("e")[1])
            unit_step = Decimal(1).scaleb(exponent - self.decimals)
        else:
            unit_step = Decimal(1).scaleb(-self.decimals)
            if self.decimals == 0 and not self.percent:
                zeros = len(mantissa) - len(mantissa.rstrip("0"))
                if zeros >= 3 and mantissa.strip("0"):  # "12,000": written to the thousand
                    unit_step = Decimal(10) ** zeros
        self.tolerance = unit_step / 2 * self.scale

    def candidates(self) -> list[Decimal]:
        """The values this number may stand for: 45% is 45 or 0.45; 1.2万 is 12000."""
        base = self.value * self.scale
        if self.percent:
            per = Decimal(1000) if self.text.rstrip().endswith("‰") else Decimal(100)
            return [base, base / per]
        return [base]

    def matches(self, backing: Iterable[float]) -> bool:
        tolerances = [self.tolerance]
        if self.percent:
            per = Decimal(1000) if self.text.rstrip().endswith("‰") else Decimal(100)
            tolerances.append(self.tolerance / per)
        targets = list(zip(self.candidates(), tolerances))
        for value in backing:
            v = Decimal(repr(abs(value)))
            for target, tol in targets:
                if abs(v - target) <= tol * Decimal("1.000001") + Decimal("1e-12"):
                    return True
        return False


def _numbers_in(text: str) -> list[tuple[re.Match, str]]:
    """All number tokens with the rest of their word (to tell '12kg' from an id like '3fa9c2')."""
    found = []
    for match in _NUMBER.finditer(text):
        tail = _TRAILING_WORD.match(text, match.end("num")).group(0) if not match.group("unit") else ""
        found.append((match, tail))
    return found


def backing_values(texts: Iterable[str], values: Iterable[Any]) -> list[float]:
    """Every number in tool outputs and evidence, with percentages also as fractions."""
    out: list[float] = []
    for value in values:
        _collect_value(value, out)
    for text in texts:
        if not text:
            continue
        text = str(text)
        for match, _tail in _numbers_in(text):
            try:
                number = float(match.group("num").replace(",", ""))
            except ValueError:
                continue
            unit = (match.group("unit") or "").strip()
            if unit == "%":
                out += [number, number / 100]
            elif unit == "‰":
                out += [number, number / 1000]
            elif unit == "万":
                out += [number, number * 1e4]
            elif unit == "亿":
                out += [number, number * 1e8]
            else:
                out.append(number)  # a negative number written in text is still the same magnitude
                if word := _SCALE_WORD.match(text[match.end():match.end() + 12]):  # "1.2M", "3 million"
                    out.append(number * 10 ** _SCALES[word.group(1) or word.group(2)])
    return [v for v in out if math.isfinite(v)]


def _collect_value(value: Any, out: list[float]) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, (int, float)):
        out.append(float(value))
    elif isinstance(value, str):
        out.extend(backing_values([value], []))
    elif isinstance(value, dict):
        for item in value.values():
            _collect_value(item, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect_value(item, out)
    elif hasattr(value, "item"):
        try:
            _collect_value(value.item(), out)
        except (TypeError, ValueError):
            pass


def _blank(text: str, pattern: re.Pattern) -> str:
    """Replace matches with spaces, keeping offsets (and line starts) intact."""
    return pattern.sub(lambda m: re.sub(r"\S", " ", m.group(0)), text)


def answer_numbers(answer: str, ignore_strings: Iterable[str] = ()) -> list[Written]:
    """The numbers in an answer that a reader would take as findings."""
    text = answer or ""
    for token in sorted({s for s in ignore_strings if s}, key=len, reverse=True):
        text = text.replace(token, " " * len(token))
    text = _blank(text, _CODE_FENCE)
    text = _blank(text, _URL)
    for pattern in _DATE_PATTERNS:
        text = _blank(text, pattern)
    text = _blank(text, _LIST_ITEM)
    text = _blank(text, _CITATION)
    numbers = []
    for match, tail in _numbers_in(text):
        if tail and re.search(r"\d", tail):  # part of an identifier such as 3fa9c2 or 12b_4
            continue
        digits, unit = match.group("num"), match.group("unit") or ""
        before = text[max(0, match.start() - 24):match.start()]
        after = text[match.end():match.end() + 24]
        shown, multiplier = match.group(0), None
        if not unit and (points := _POINTS.match(after)):  # "3.2 percentage points" is a percentage
            unit, shown = "%", shown + points.group(0)
        elif not unit and (word := _SCALE_WORD.match(after)):  # "1.2 million", "3.4k"
            multiplier = Decimal(10) ** _SCALES[word.group(1) or word.group(2)]
            shown = shown + word.group(0)
        try:
            written = Written(shown, digits, unit, multiplier)
        except (InvalidOperation, ValueError):
            continue
        if unit.strip() == "" and multiplier is None and "." not in digits and "e" not in digits.lower():
            whole = written.value
            if whole <= 10:  # small counts: "two groups", "3 regions"
                continue
            if "," not in digits and 1900 <= whole <= 2100:  # years
                continue
        if _COMPARATOR.search(before) and written.value in _CONVENTIONAL_THRESHOLDS:
            continue  # "p < 0.05", "α = 0.05": a convention, not a finding
        if written.percent and written.value in (Decimal(90), Decimal(95), Decimal(99)) and _CONFIDENCE_LEVEL.search(after):
            continue  # "95% confidence interval"
        numbers.append(written)
    return numbers


def unverified_numbers(answer: str, texts: Iterable[str], values: Iterable[Any],
                       ignore_strings: Iterable[str] = ()) -> list[str]:
    """Numbers in the answer found in none of the texts/values, as written, without repeats."""
    backing = backing_values(texts, values)
    seen: set[str] = set()
    missing = []
    for written in answer_numbers(answer, ignore_strings):
        key = written.text.strip()
        if key in seen:
            continue
        seen.add(key)
        if not written.matches(backing):
            missing.append(key)
    return missing
