"""Numbers in text: extraction and matching at the precision written.

Shared by the report's final-answer check (`app.reports.builder.unverified_numbers`) and the
claim verification after tool rounds (`app.agent.verification`), so both read "1.2万", "45%",
"12,000", "3.4k" and "0.05" the same way: a number matches a value when it equals it at the
precision written (rounding), as a percentage or a fraction, with thousands separators and
万/亿/k/M/million scales.
"""

from __future__ import annotations

import bisect
import math
import re
import tomllib
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cache
from pathlib import Path
from typing import Any, Iterable

_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])"  # not inside a word or after a decimal point (CJK text may touch it)
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?|\.\d+)"
    r"(?P<unit>\s?%|\s?‰|\s?万|\s?亿)?"
)
_TRAILING_WORD = re.compile(r"[A-Za-z0-9_.]*")
_LIST_ITEM = re.compile(r"^\s*(?:#{1,6}\s*)?(?:[-*+]\s+)?[(（]?\d{1,3}[.)、）:](?=\s|$|[^\d])", re.MULTILINE)
_MONTH_NAMES = (
    r"Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|Oct(?:ober)?|"
    r"Nov(?:ember)?|Dec(?:ember)?"
)
_DATE_PATTERNS = [
    # a date is never the start of a year range: "2011-2014" is not "2011-20" and 14
    re.compile(
        r"(?<!\d)(?:19|20)\d{2}(?:-\d{1,2}(?:-\d{1,2})?|/\d{1,2}(?:/\d{1,2})?|\.\d{1,2}\.\d{1,2})(?!\d)"
        r"(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?"
    ),
    re.compile(r"(?<!\d)(?:19|20)\d{2}\s*[-–—~至到]\s*(?:(?:19|20)\d{2}|\d{2})(?![\d.])"),  # "2011–14"
    re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b"),
    re.compile(r"\d{4}\s*年(?:\s*\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?)?"),
    re.compile(r"\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?"),
    re.compile(r"\d{1,2}\s*[日号]"),
    # a day as English readers write it: "5 Mar 2024", "25 December", "Mar 5, 2024"
    re.compile(r"\b\d{1,2}\s+(?:" + _MONTH_NAMES + r")\b\.?(?:,?\s+(?:19|20)\d{2}\b)?", re.IGNORECASE),
    re.compile(r"\b(?:" + _MONTH_NAMES + r")\b\.?\s+\d{1,2}(?:st|nd|rd|th)?,\s*(?:19|20)\d{2}\b", re.IGNORECASE),
    re.compile(r"第\s*\d+\s*[步项条点章节个季度周天]"),
]
_URL = re.compile(r"https?://\S+|\]\([^)]*\)")
_CODE_FENCE = re.compile(r"```.*?```", re.DOTALL)
_COMPARATOR = re.compile(r"(?:[<>≤≥=]|α|alpha|significance level|显著性水平)\s*$", re.IGNORECASE)
_CONFIDENCE_LEVEL = re.compile(r"^\s*(?:CI\b|C\.I\.|confidence|credible|prediction interval|置信|可信)", re.IGNORECASE)
# Written as a percentage without "%": "3.2 percentage points", "a 12.3 percentage-point gap", "16.5 points",
# "45 percent"; matched as a percentage (×100 of a fraction in the evidence) like "45%".
_POINT_WORDS = r"(?:个百分点|百分点|percentage[- ]points?\b|percent\b|per cent\b|points?\b|pp\b|pts?\b)"
_POINTS = re.compile(r"^\s*-?\s*" + _POINT_WORDS, re.IGNORECASE)
# The lower end of a range whose upper end carries the unit: "8.1 to 16.5 points", "8.1–16.5 pp".
_RANGE_TO_POINTS = re.compile(
    r"^\s*(?:to|and|–|—|-|~|至|到)\s*-?\d+(?:\.\d+)?\s*(?:%|-?\s*" + _POINT_WORDS + ")", re.IGNORECASE
)
# A rate's base: "4.2 mpg per 1000 lb" is 0.0042 mpg per lb (or a coefficient per 1000 lb): the number
# divided by the base is backed too. The base itself ("1000") is a unit, not a finding.
_PER_BASE = re.compile(
    r"^[^\d\n]{0,30}?\bper\s+(?P<base>\d{1,3}(?:,\d{3})+|\d+)(?:\s*(?P<word>thousand|million))?"
    r"\s*[A-Za-z\u4e00-\u9fff$€£]",
    re.IGNORECASE,
)
_PER_BEFORE = re.compile(r"\bper\s*$", re.IGNORECASE)
_PER_AFTER = re.compile(r"^\s*(?:thousand\s+|million\s+)?[A-Za-z\u4e00-\u9fff$€£]")
_SCALE_WORD = re.compile(r"^(?:\s*(thousand|million|billion|trillion)\b|(k|K|M|bn|B)\b)")
_SCALES = {"thousand": 3, "k": 3, "K": 3, "million": 6, "M": 6, "billion": 9, "bn": 9, "B": 9, "trillion": 12}
_CITATION = re.compile(r"[\[【]\d{1,3}[\]】]")
_CONVENTIONAL_THRESHOLDS = {Decimal("0.1"), Decimal("0.05"), Decimal("0.01"), Decimal("0.001"), Decimal("0.0001")}
# The usual effect-size cut-offs (Cohen's d 0.2 / 0.5 / 0.8, r 0.1 / 0.3 / 0.5), written as a rule of thumb:
# "d below 0.2 counts as small", "通常 0.2 以下算很小". Only when the text says it is a cut-off.
_RULE_OF_THUMB = _CONVENTIONAL_THRESHOLDS | {Decimal("0.2"), Decimal("0.3"), Decimal("0.5"), Decimal("0.8")}
_CUT_OFF_BEFORE = re.compile(
    r"(?:\b(?:below|under|above|over|less than|more than|at least|at most)|"
    r"低于|高于|小于|大于|不到|超过)\s*$",
    re.IGNORECASE,
)
_CUT_OFF_AFTER = re.compile(
    r"^\s*(?:以下|以上|及以下|及以上|or (?:less|more|below|above|under|over)\b|"
    r"(?:and|or) (?:below|above)\b)",
    re.IGNORECASE,
)
_RULE_OF_THUMB_WORDS = re.compile(
    r"usually|typically|conventionally|by convention|rule of thumb|commonly|"
    r"通常|一般|习惯上|惯例|经验",
    re.IGNORECASE,
)
# "2.3 × 10^-31", "2.3×10⁻³¹", "2.3 x 10^(-31)", "10^-5": one number, not 2.3, 10 and 31
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SCIENTIFIC = re.compile(
    r"(?<![A-Za-z0-9_.])(?:(?P<mantissa>\d+(?:\.\d+)?)\s*[×xX*·⋅]\s*)?10\s*"
    r"(?:(?:\^|\*\*)\s*\(?\s*(?P<exp>[-−–+]?\s*\d+)\s*\)?|(?P<sup>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))"
)
# Degrees of freedom in statistics notation: "F(1,156)" is df 1 and 156, not 1,156.
_DF_COMMA = re.compile(
    r"((?<![A-Za-z])(?:F|t|H|U|W|z|df|χ²|χ2|X²|X2|chi²|chi2|chi-squared?)\s*\(\s*\d+(?:\.\d+)?)\s*,"
    r"(?=\s*\d)",
    re.IGNORECASE,
)
# A bound, not a value: "p < 0.0001", "|r| ≥ 0.5"; the label names the quantity it bounds.
_BOUND = re.compile(
    r"(?P<label>\|?[A-Za-zα-ωΑ-Ω²_]+(?:[-_ ]?(?:value|adj|adjusted))?\|?)?\s*(?P<op><=|>=|≤|≥|<|>|＜|＞)\s*$"
)
_APPROXIMATE = re.compile(
    r"(?:\babout|\bapproximately|\bapprox\.?|\baround|\broughly|\bnearly|\balmost|\bsome|"
    r"\bcirca|\bca\.|~|≈|∼|约|大约|大概|近|将近|接近)\s*$",
    re.IGNORECASE,
)
_APPROXIMATE_AFTER = re.compile(r"^\s*(?:左右|上下|or so\b)")
_P_LABEL = re.compile(r"^(?:p|p[-_ ]?values?|pvalues?|p[-_ ]?adj(?:usted)?|adjusted p)$", re.IGNORECASE)
_QUANTITY_KEYS = {  # bound label -> how metric keys name that quantity
    "r": re.compile(r"^(?:r|r\..+|correlation|pearson_r|spearman_rho|rho)$"),
    "r²": re.compile(r"^(?:r_squared|r2|adj_r_squared|rsquared|rsquared_adj)$"),
}
_P_IN_TEXT = re.compile(
    r"\bp(?:[-_ ]?val(?:ue)?)?\s*(?P<op>=|:|<|≤|<=)\s*(?P<num>\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)", re.IGNORECASE
)


class Written:
    """A number as written in the answer: its value, the precision written, and its scale."""

    __slots__ = (
        "text",
        "value",
        "decimals",
        "percent",
        "scale",
        "tolerance",
        "bound",
        "per",
        "before",
        "after",
        "scale_word",
        "range_end",
        "ratio",
        "digits",
        "approximate",
    )

    def __init__(self, text: str, digits: str, unit: str, multiplier: Decimal | None = None, approximate: bool = False):
        self.text = text
        self.bound: tuple[str, str] | None = None  # (comparator, label) when the number is a bound
        self.per: Decimal | None = None  # the base of a rate ("per 1000 lb"): value / per is backed too
        self.before, self.after = "", ""  # the text around it, for restatements (`restatement_holds`)
        self.scale_word = ""  # "thousand" in "512 thousand"
        self.range_end: str | None = None  # "4.9" when the number is the lower end of "4.5–4.9"
        self.ratio: tuple[Decimal, Decimal, bool] | None = None  # "19 times out of 20": (19, 20, said of times)
        self.digits, self.approximate = digits, approximate
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
                if (zeros >= 3 or approximate) and zeros and mantissa.strip("0"):  # "12,000", "about 150"
                    unit_step = Decimal(10) ** zeros
            elif self.decimals == 0 and approximate:  # "about 40%"
                zeros = len(mantissa) - len(mantissa.rstrip("0"))
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
        if self.per:  # "4.2 per 1000 lb" stands for 0.0042 per lb as well
            targets += [(target / self.per, tol / self.per) for target, tol in list(targets)]
        for value in backing:
            v = Decimal(repr(abs(value)))
            for target, tol in targets:
                if abs(v - target) <= tol * Decimal("1.000001") + abs(target) * Decimal("1e-12"):
                    return True
        return False


def _numbers_in(text: str) -> list[tuple[re.Match, str]]:
    """All number tokens with the rest of their word (to tell '12kg' from an id like '3fa9c2')."""
    found = []
    for match in _NUMBER.finditer(text):
        tail = ""
        if not match.group("unit"):
            word = _TRAILING_WORD.match(text, match.end("num"))  # always a match, if only of ""
            tail = word.group(0) if word else ""
        found.append((match, tail))
    return found


def _scientific_value(match: re.Match) -> str:
    """The e-notation of a "2.3 × 10^-31" match ("2.3e-31")."""
    exponent = match.group("exp") if match.group("exp") is not None else match.group("sup").translate(_SUPERSCRIPT)
    exponent = re.sub(r"\s", "", exponent).replace("−", "-").replace("–", "-")
    return f"{match.group('mantissa') or '1'}e{exponent}"


def _scientific_numbers(text: str) -> tuple[str, list[tuple[str, str, int]]]:
    """The text with "m × 10^e" blanked, and each one as (shown, e-notation, offset)."""
    found = []
    for match in _SCIENTIFIC.finditer(text):
        if match.group("mantissa") is None and match.group("exp") is None and match.group("sup") is None:
            continue
        found.append((match.group(0), _scientific_value(match), match.start()))
    return _blank(text, _SCIENTIFIC), found


def _split_degrees_of_freedom(text: str) -> str:
    """ "F(1,156)" -> "F(1 156)": two numbers, same offsets."""
    return _DF_COMMA.sub(lambda m: m.group(0)[:-1] + " ", text)


def backing_values(texts: Iterable[str], values: Iterable[Any]) -> list[float]:
    """Every number in tool outputs and evidence, with percentages also as fractions."""
    out: list[float] = []
    for value in values:
        _collect_value(value, out)
    for text in texts:
        if not text:
            continue
        text = str(text)
        if "10" in text:
            text, scientific = _scientific_numbers(text)
            out += [float(value) for _shown, value, _at in scientific]
        if "(" in text:
            text = _split_degrees_of_freedom(text)
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
                if word := _SCALE_WORD.match(text[match.end() : match.end() + 12]):  # "1.2M", "3 million"
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
    text = _split_degrees_of_freedom(text)
    text, scientific = _scientific_numbers(text)
    numbers = []
    for shown, value, at in scientific:
        written = Written(shown, value, "")
        written.bound = _bound(text[max(0, at - 24) : at])
        numbers.append(written)
    text, ratios = _ratios(text)
    numbers += ratios
    range_ends = {m.start("a"): m.group("b") for m in _word_pattern("bins", "range").finditer(text)}
    for match, tail in _numbers_in(text):
        if tail and re.search(r"\d", tail):  # part of an identifier such as 3fa9c2 or 12b_4
            continue
        digits, unit = match.group("num"), match.group("unit") or ""
        before = text[max(0, match.start() - 24) : match.start()]
        after = text[match.end() : match.end() + 48]
        if _PER_BEFORE.search(before) and _PER_AFTER.match(after):
            continue  # the base of a rate ("per 1000 lb"): a unit, not a finding
        shown, multiplier, scale_word = match.group(0), None, ""
        if not unit and (points := _POINTS.match(after)):  # "3.2 percentage points" is a percentage
            unit, shown = "%", shown + points.group(0).rstrip()
        elif not unit and _RANGE_TO_POINTS.match(after):  # "8.1 to 16.5 points": both ends are percentages
            unit = "%"
        elif not unit and (word := _SCALE_WORD.match(after)):  # "1.2 million", "3.4k"
            scale_word = word.group(1) or word.group(2)
            multiplier = Decimal(10) ** _SCALES[scale_word]
            shown = shown + word.group(0)
        approximate = bool(_APPROXIMATE.search(before) or _APPROXIMATE_AFTER.match(after))
        # "$12,300": a money amount's zeros at the end are rounding, not precision
        approximate = approximate or _is_money(before, after)
        try:
            written = Written(shown, digits, unit, multiplier, approximate)
        except (InvalidOperation, ValueError):
            continue
        written.bound = _bound(before)
        written.before, written.after = before, after
        written.scale_word = scale_word
        written.range_end = range_ends.get(match.start("num"))
        if per := _PER_BASE.match(after):
            base = Decimal(per.group("base").replace(",", "")) * Decimal(10) ** _SCALES.get(per.group("word") or "", 0)
            written.per = base if base > 1 else None
        if unit.strip() == "" and multiplier is None and "." not in digits and "e" not in digits.lower():
            whole = written.value
            if whole <= 10:  # small counts: "two groups", "3 regions"
                continue
            if "," not in digits and 1900 <= whole <= 2100:  # years
                continue
        if _COMPARATOR.search(before) and written.value in _CONVENTIONAL_THRESHOLDS:
            continue  # "p < 0.05", "α = 0.05": a convention, not a finding
        if written.value in _RULE_OF_THUMB and _is_rule_of_thumb(before, after):
            continue  # "usually below 0.2 counts as small": a convention, not a finding
        if (
            written.percent
            and written.value in (Decimal(90), Decimal(95), Decimal(99))
            and _CONFIDENCE_LEVEL.search(after)
        ):
            continue  # "95% confidence interval"
        numbers.append(written)
    return numbers


# --- restatements: a number the outputs show, written another correct way (number_words.toml) ----------
WORDS_SOURCE = Path(__file__).with_name("number_words.toml")


@cache
def number_words() -> dict[str, Any]:
    """number_words.toml, parsed (once per process)."""
    with WORDS_SOURCE.open("rb") as handle:
        return tomllib.load(handle)


@cache
def _word_pattern(section: str, key: str) -> re.Pattern[str]:
    return re.compile(number_words()[section][key], re.IGNORECASE)


def _is_money(before: str, after: str) -> bool:
    return bool(_word_pattern("money", "before").search(before) or _word_pattern("money", "after").match(after))


def _ratios(text: str) -> tuple[str, list[Written]]:
    """ "19 times out of 20" as one number (95%), its span blanked so 19 and 20 are not read alone."""
    found = []
    pattern = _word_pattern("ratio", "pattern")
    for match in pattern.finditer(text):
        a, b = Decimal(match.group("a")), Decimal(match.group("b"))
        if b <= 10 or a > b:  # "3 out of 5" stays two small counts (not findings on their own)
            continue
        written = Written(match.group(0), f"{a / b * 100:.1f}", "%")
        written.ratio = (a, b, bool(match.group("times")))
        found.append(written)
    blanked = pattern.sub(
        lambda m: re.sub(r"\S", " ", m.group(0)) if 10 < int(m.group("b")) >= int(m.group("a")) else m.group(0), text
    )
    return blanked, found


@dataclass
class Backing:
    """What the outputs show, read once for the restatement checks."""

    texts: list[str]
    values: list[float]
    intervals: list[tuple[Decimal, Decimal]] = field(default_factory=list)

    def __post_init__(self) -> None:
        pattern = _word_pattern("bins", "interval")
        for text in self.texts:
            for match in pattern.finditer(str(text or "")):
                self.intervals.append((Decimal(match.group("lo")), Decimal(match.group("hi"))))

    @property
    def joined(self) -> str:
        return "\n".join(str(t or "") for t in self.texts)


def restatement_holds(written: Written, backing: Backing) -> bool:
    """A correct restatement of a value the outputs show (number_words.toml says why each is one): r²
    from r, a rounded bound ("over 300" from 336), another time unit, a column's own unit word
    ("512 thousand" in a column of thousands), a ratio ("19 times out of 20"), a bin label."""
    if written.ratio is not None:
        a, b, times = written.ratio
        parts_backed = all(Written(str(x), str(x), "").matches(backing.values) for x in (a, b))
        conventional = times and any(
            abs(float(a / b) - level) < 1e-9 for level in number_words()["ratio"]["conventional"]
        )
        return parts_backed or conventional
    if _word_pattern("r_squared", "label").search(written.before) and written.matches(
        [v * v for v in backing.values if abs(v) <= 1]
    ):
        return True
    if _rounded_bound_holds(written, backing.values):
        return True
    if _other_time_unit_matches(written, backing.values):
        return True
    if written.scale_word:
        word = {"k": "thousand", "K": "thousand", "M": "million"}.get(written.scale_word, written.scale_word).lower()
        unit = number_words()["unit_scales"].get(word)
        if unit and re.search(unit, backing.joined, re.IGNORECASE):
            plain = Written(written.digits, written.digits, "", None, written.approximate)
            if plain.matches(backing.values):
                return True
    return _bin_label_holds(written, backing)


def _step(written: Written) -> Decimal:
    """One unit of the last figure written: 300 -> 100, 2.5 -> 0.1."""
    if written.decimals:
        return Decimal(1).scaleb(-written.decimals) * written.scale
    mantissa = str(written.value)
    zeros = len(mantissa) - len(mantissa.rstrip("0")) if mantissa.strip("0") else 0
    return Decimal(10) ** zeros * written.scale


def _rounded_bound_holds(written: Written, backing: list[float]) -> bool:
    """ "over 300" holds for a value in (300, 400]; "under 50" for one in [40, 50)."""
    lower = _word_pattern("rounded_bound", "lower").search(written.before) or _word_pattern(
        "rounded_bound", "lower_after"
    ).match(written.after)
    upper = _word_pattern("rounded_bound", "upper").search(written.before) or _word_pattern(
        "rounded_bound", "upper_after"
    ).match(written.after)
    if not (lower or upper) or written.percent:
        return False
    limit, step = written.value * written.scale, _step(written)
    for value in backing:
        v = Decimal(repr(abs(value)))
        if lower and limit < v <= limit + step:
            return True
        if upper and limit - step <= v < limit:
            return True
    return False


def _other_time_unit_matches(written: Written, backing: list[float]) -> bool:
    """ "0.5 seconds per year" from a slope of 0.0083 minutes per year: the value in another time unit."""
    units = {k: v for k, v in number_words()["time_units"].items() if isinstance(v, dict)}
    near = written.after[:40]
    for unit in units.values():
        if not re.match(rf"^\s*(?:[A-Za-z]+\s+){{0,2}}?(?:per\s+)?{unit['pattern']}(?![A-Za-z])", near, re.IGNORECASE):
            continue
        for other in units.values():
            if other is unit:
                continue
            factor = Decimal(other["length"]) / Decimal(unit["length"])
            converted = [v * float(f) for v in backing for f in (factor, 1 / factor)]
            if written.matches(converted):
                return True
        return False
    return False


def _bin_label_holds(written: Written, backing: Backing) -> bool:
    """ "4.5–4.9" labels the printed bin (4.4, 4.9]: its lower end is one step above the printed edge."""
    if written.range_end is None or not backing.intervals:
        return False
    try:
        end = Written(written.range_end, written.range_end, "")
    except InvalidOperation:
        return False
    step = Decimal(1).scaleb(-written.decimals)
    for lo, hi in backing.intervals:
        if end.matches([float(hi)]) and Decimal(0) < written.value - lo <= step * Decimal("1.000001"):
            return True
    return False


def _is_rule_of_thumb(before: str, after: str) -> bool:
    """The number is a cut-off the text calls customary ("通常 0.2 以下", "usually below 0.2")."""
    is_cut_off = bool(_CUT_OFF_BEFORE.search(before) or _CUT_OFF_AFTER.match(after))
    return is_cut_off and bool(_RULE_OF_THUMB_WORDS.search(before[-40:]))


def _bound(before: str) -> tuple[str, str] | None:
    """(comparator, label) when the text before a number ends in a comparator ("p <", "|r| ≥")."""
    match = _BOUND.search(before)
    if not match:
        return None
    op = {"<=": "≤", ">=": "≥", "＜": "<", "＞": ">"}.get(match.group("op"), match.group("op"))
    return op, (match.group("label") or "").strip()


def _quantity(label: str) -> str | None:
    """Which quantity a bound's label names: p, r (|r| too) or r²; None when unknown."""
    clean = label.strip("|").strip().lower().replace("^2", "²")
    if _P_LABEL.match(clean):
        return "p"
    if clean in ("r", "rho", "ρ"):
        return "r"
    if clean in ("r²", "r2", "r-squared", "r_squared", "rsquared"):
        return "r²"
    return None


def quantities(texts: Iterable[str], values: Iterable[Any]) -> dict[str, list[float]]:
    """The values of named quantities in the backing (metric keys and "p = ..." in text), for bounds:
    "p" (exact p-values), "p<" (upper bounds a tool printed, "p < 0.001"), "r", "r²"."""
    found: dict[str, list[float]] = {"p": [], "p<": [], "r": [], "r²": []}

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                key = str(key).lower()
                if isinstance(item, (int, float)) and not isinstance(item, bool) and math.isfinite(item):
                    if "p_value" in key or "pvalue" in key or key in ("p", "p_adj") or key.endswith("_p"):
                        found["p"].append(float(item))
                    for name, pattern in _QUANTITY_KEYS.items():
                        if pattern.match(key):
                            found[name].append(float(item))
                else:
                    walk(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)

    for value in values:
        walk(value)
    for text in texts:
        for match in _P_IN_TEXT.finditer(str(text or "")):
            number = float(match.group("num"))
            found["p" if match.group("op") in "=:" else "p<"].append(number)
    return found


def bound_holds(written: Written, known: dict[str, list[float]]) -> bool:
    """A bound is backed when a value of the quantity it names satisfies it ("p < 0.0001" when
    p = 3e-17); a printed upper bound backs any looser one ("p < 0.01" from "p < 0.001")."""
    op, label = written.bound or ("", "")
    name = _quantity(label)
    if name is None:
        return False
    limit = float(written.value * written.scale)
    values = [abs(v) for v in known.get(name, [])] if label.startswith("|") else known.get(name, [])
    test = {"<": lambda v: v < limit, "≤": lambda v: v <= limit, ">": lambda v: v > limit, "≥": lambda v: v >= limit}[
        op
    ]
    if any(test(v) for v in values):
        return True
    return name == "p" and op in ("<", "≤") and any(v <= limit for v in known.get("p<", []))


def unverified_numbers(
    answer: str,
    texts: Iterable[str],
    values: Iterable[Any],
    ignore_strings: Iterable[str] = (),
    cited_in: str | None = None,
) -> list[str]:
    """Numbers in the answer found in none of the texts/values, as written, without repeats.
    A bound ("p < 0.0001") is also backed when the quantity it names satisfies it; a complement, sum
    or difference of numbers `cited_in` (the answer's own words: not the metrics copied beside a claim)
    writes is backed too (`derivation_holds`)."""
    texts, values = list(texts), list(values)
    backing = backing_values(texts, values)
    known: dict[str, list[float]] | None = None
    restating: Backing | None = None
    pools: Pools | None = None
    seen: set[str] = set()
    missing = []
    for written in answer_numbers(answer, ignore_strings):
        key = written.text.strip()
        if key in seen:
            continue
        seen.add(key)
        if written.matches(backing):
            continue
        if written.bound is not None:
            known = known if known is not None else quantities(texts, values)
            if bound_holds(written, known):
                continue
        restating = restating or Backing([str(t or "") for t in texts], backing)
        if restatement_holds(written, restating):
            continue
        pools = (
            pools
            if pools is not None
            else _term_pools(texts, values, answer if cited_in is None else cited_in, backing)
        )
        if derivation_holds(written, pools):
            continue
        missing.append(key)
    return missing


# --- a number derived from shown ones: a complement, a sum or a difference --------------------------------
POOL_LIMIT = 40  # terms searched in one output at most
TERMS_AT_MOST = 3  # a sum of two or three shown numbers, a difference of two


@dataclass
class Pools:
    """The terms each single output offers (terms combine within one output, never across outputs),
    and the complements of the percentages the outputs print."""

    outputs: list[list[float]]
    complements: list[float]


def _term_pools(texts: list[Any], values: list[Any], answer: str, backing: list[float]) -> Pools:
    """One pool per output (a text or a value of the backing): the numbers it shows that the checked
    text also writes (those are the numbers the text cites; any number of a long table would make
    "some three numbers add up to it" back almost anything: 400 hp from two of mtcars' values)."""
    written = [w for w in answer_numbers(answer) if w.bound is None and w.matches(backing)]
    outputs, complements = [], []
    for source in [*texts, *values]:
        shown: list[float] = []
        if isinstance(source, str):
            for match, _tail in _numbers_in(source):
                try:
                    number = float(match.group("num").replace(",", ""))
                except ValueError:
                    continue
                shown.append(number)
                if (match.group("unit") or "").strip() == "%" and 0 <= number <= 100:
                    complements.append(100 - number)
        elif source is not None:
            _collect_value(source, shown)
        cited = [abs(v) for v in shown if math.isfinite(v) and v and any(w.matches([v]) for w in written)]
        if len(cited) >= 2:
            outputs.append(cited[:POOL_LIMIT])
    return Pools(outputs, complements)


def derivation_holds(written: Written, pools: Pools) -> bool:
    """The number is the complement of a percentage an output prints (13.5% beside 86.5%), or a sum of
    two or three numbers the text cites from one output, or the difference of two (10,662 = 3,625 + 3,584 + 3,453; "about 170" of
    3,625 − 3,453 = 172), exact to the precision written ("about" allows the rounding it shows)."""
    if written.bound is not None or written.ratio is not None:
        return False
    if written.percent and written.matches(pools.complements):
        return True
    for pool in pools.outputs:
        if _combines(written, pool):
            return True
    return False


def _combines(written: Written, pool: list[float]) -> bool:
    """A sum of two or three of the pool's numbers (each used once), or a difference of two, within the
    written number's tolerance."""
    targets = [(float(t), float(tol) * 1.000001) for t, tol in zip(written.candidates(), _tolerances(written))]
    ordered = sorted(pool)
    n = len(ordered)

    def found(low: float, high: float, after: int) -> bool:
        """A pool number in [low, high] at an index past `after` (each number used once)."""
        i = bisect.bisect_left(ordered, low, lo=after + 1)
        return i < n and ordered[i] <= high

    for target, tol in targets:
        for i, a in enumerate(ordered):
            if found(target - a - tol, target - a + tol, i):  # a + b
                return True
            if found(a - target - tol, a - target + tol, -1) and abs(a - target) > tol:  # a - b, b > 0
                return True
            if TERMS_AT_MOST >= 3:
                for j in range(i + 1, n):
                    rest = target - a - ordered[j]
                    if rest < ordered[j] - tol:
                        break
                    if found(rest - tol, rest + tol, j):  # a + b + c
                        return True
    return False


def _tolerances(written: Written) -> list[Decimal]:
    tolerances = [written.tolerance]
    if written.percent:
        per = Decimal(1000) if written.text.rstrip().endswith("‰") else Decimal(100)
        tolerances.append(written.tolerance / per)
    return tolerances


# --- a reported value against re-computed ones ----------------------------------------------------
def metric_token(value: float) -> str:
    """How a metric value of the evidence is written when it is checked: the float's shortest repr, so
    the precision checked is the precision the value was reported at (36.65 -> two decimals)."""
    return repr(float(value))


def reported_value_matches(value: float, backing: Iterable[float]) -> bool:
    """The claim verification's rule for one reported metric value (`Written.matches`): it agrees with a
    backing value at the precision it is written (36.65 stands for anything in [36.645, 36.655]; 7.4e-22
    at the mantissa's precision); the sign is not compared (as in text, where "-" is often a dash); a
    percentage a tool printed ("48.1%") backs 48.1 and 0.481; no other rescaling. `backing` is what
    `backing_values` collects from outputs."""
    token = metric_token(abs(float(value)))
    if not math.isfinite(float(value)):
        return False
    return Written(token, token, "").matches(backing)
