"""What the built-in analyst reads back from the data profile (profile_dataset's output, which is
what a model sees too): each column's type, levels and date span, small whole-number codes that
can group rows, decimal-year time columns (R ts exports), and every value of the grouping columns
the profile lists only in part, from the value_counts lookups made for them (`value_lookups`)."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from typing import Any

from app.understanding import vocabulary
from app.understanding.column_forms import declared_scale
from app.understanding.text import split_unit

_FILE = "profile_names"  # vocabulary/profile_names.toml

NUMERIC = ("number", "integer")
GROUPING = ("category", "boolean")

_PROFILE_LINE = re.compile(
    r"^(?P<name>.+?) \[(?P<kind>[\w-]+), (?P<role>[\w-]+)\] missing \d+, unique (?P<unique>\d+)"
    r"(?P<rest>.*)$",
    re.M,
)
SMALL_CODES = 12  # a whole-number column with at most this many values may be a code to group by (cyl, group)
_TOP = re.compile(r"(.+?) \(\d+\)(?:, |$)")


def read_profile(dataset: dict[str, Any], profile: str | None) -> dict[str, Any]:
    """The dataset summary with what profile_dataset showed: each category column's values (its most
    frequent ones) and each date column's span in days. Unchanged without a profile."""
    if not profile:
        return dataset
    seen = {m["name"]: m for m in _PROFILE_LINE.finditer(profile)}
    return {
        **dataset,
        "columns": [
            _with_codes(
                _with_profile({**c, "distinct": int(seen[c["name"]]["unique"])}, seen[c["name"]]["rest"]),
                seen[c["name"]],
            )
            if c["name"] in seen
            else c
            for c in dataset["columns"]
        ],
    }


_TIME_NAME = re.compile(rf"^(?:{vocabulary.word_alternation(_FILE, 'time_names')})s?$", re.I)  # and plurals (years)
_RANGE = re.compile(r"min (-?[\d,.]+),.*max (-?[\d,.]+)")


def decimal_years(name: str, rest: str) -> bool:
    """A number column named like time whose values are years (1949 … 1960.92): a date column."""
    match = _RANGE.search(rest)
    if not (_TIME_NAME.match(name.strip()) and match):
        return False
    low, high = (float(x.replace(",", "")) for x in match.groups())
    return 1000 <= low <= high <= 2200


def _with_codes(column: dict[str, Any], line: re.Match[str]) -> dict[str, Any]:
    """A number column the profile reads as yes/no (0/1: smoke, low) is `binary`; one with a few
    whole-number values (cyl, group) is `coded`: both can split rows into groups."""
    if column["type"] not in NUMERIC:
        return column
    if span := _RANGE.search(
        line["rest"]
    ):  # a count is never negative (count_weights); a time's range (repeated_design)
        column = {
            **column,
            "minimum": float(span.group(1).replace(",", "")),
            "maximum": float(span.group(2).replace(",", "")),
        }
    if decimal_years(column["name"], line["rest"]):  # R's ts export: time 1949, 1949.083 … (ts_common reads it)
        return {**column, "type": "datetime", "decimal_years": True}
    unique = int(line["unique"])
    if line["kind"] == "boolean" or unique == 2:
        return {**column, "binary": True, "levels": 2}
    if column["type"] == "integer" and line["role"] == "dimension" and unique <= SMALL_CODES:
        return {**column, "coded": True, "levels": unique}
    return column


def measured_in_a_unit(name: str) -> bool:
    """Whether a header puts a unit of measure in brackets (时长（小时）, Weight (kg), Fee ($)): its few whole
    values (jobs of 2, 3, 4 or 5 hours) are amounts to add and average as well as codes that may split rows
    (outcome.measure_names). A bracket of numbers (a scale, 评分(1-5)) or an abbreviation of "number" (No.) says
    no unit."""
    unit = split_unit(name)[1] or ""
    said = any(ch.isalpha() or unicodedata.category(ch) == "Sc" or ch == "%" for ch in unit)  # kg, 小时, $, %
    return said and unit.rstrip(".") not in ("no", "nr")


def _with_profile(column: dict[str, Any], rest: str) -> dict[str, Any]:
    """One profile line's tail: '; top East (305), West (288)' or '; 2024-01-01 00:00:00 → 2024-12-31 …'."""
    if "; top " in rest:
        return {**column, "values": _TOP.findall(rest.split("; top ", 1)[1])}
    if " → " in rest and column["type"] == "datetime":
        start, _, end = rest.lstrip("; ").partition(" → ")
        try:
            first, last = datetime.fromisoformat(start.strip()), datetime.fromisoformat(end.strip())
        except (ValueError, TypeError):  # a date format the profile may print differently
            return column
        # the first and last dates too: the year of a month a question names without one ("in March")
        return {
            **column,
            "span_days": (last - first).days,
            "first": first.date().isoformat(),
            "last": last.date().isoformat(),
        }
    return column


# A count table (R's table exports: UCBAdmissions, Titanic) has one row per combination of categories
# and a column saying how many cases the row stands for; rates and tests must weigh rows by it.
_COUNT_NAME = re.compile(rf"^(?:{vocabulary.word_alternation(_FILE, 'count_names')})s?$", re.I)  # and plurals (counts)


def count_weights(columns: list[dict[str, Any]], rows: int = 0) -> str | None:
    """The frequency column of a count table: a whole-number column named like a count (Freq, n,
    count, 频数), never negative, beside columns that are all categories (a row number aside), with
    no more rows than combinations of their values (with `rows`): InsectSprays' count of insects
    beside six sprays over 72 rows is a measurement, not a frequency."""
    weights = [
        c
        for c in columns
        if _COUNT_NAME.match(c["name"].strip()) and c["type"] == "integer" and (c.get("minimum") or 0) >= 0
    ]
    others = [c for c in columns if c not in weights and c["type"] != "identifier" and not c.get("pii")]
    if len(weights) != 1 or not others:
        return None
    if not all(c["type"] in GROUPING or c.get("coded") or c.get("binary") for c in others):
        return None
    combinations = 1
    for column in others:
        combinations *= column.get("levels") or column.get("distinct") or 1
    return weights[0]["name"] if not rows or rows <= combinations else None


PROFILE_TOP = 5  # values profile_dataset lists per column (analysis_tools/core.py _TOP)
LOOKUP_LEVELS = 50  # a column with more levels is too long to list, and hardly named value by value
MAX_LOOKUPS = 8  # value_counts calls at most before planning


def value_lookups(dataset: dict[str, Any]) -> list[dict[str, Any]]:
    """value_counts arguments for the grouping columns whose values the profile cannot all show (more
    than PROFILE_TOP levels, at most LOOKUP_LEVELS), fewest levels first: looked up before planning so
    a question may name any value ("Chengdu" as the 6th city). The values stay with the built-in
    analyst; the profile a language model reads keeps its short lists."""
    columns = [
        c
        for c in dataset.get("columns", [])
        if c["type"] in GROUPING and not c.get("pii") and PROFILE_TOP < (c.get("levels") or 0) <= LOOKUP_LEVELS
    ]
    fewest_first = sorted(columns, key=lambda c: c["levels"])[:MAX_LOOKUPS]
    return [{"column": c["name"], "top": LOOKUP_LEVELS} for c in fewest_first]


def read_values(dataset: dict[str, Any], counts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The dataset summary with each looked-up column's values, from its value_counts metrics
    ("count.<value>", most frequent first); they replace the profile's shorter list."""
    values = {
        column: [k.split(".", 1)[1] for k in metrics if k.startswith("count.")] for column, metrics in counts.items()
    }
    return {
        **dataset,
        "columns": [{**c, "values": values[c["name"]]} if values.get(c["name"]) else c for c in dataset["columns"]],
    }


# A column that is a level, not an amount: adding up its rows in a period means nothing (7 days of a
# 1-5 satisfaction summed to 27); their average does.
_LEVEL_NAME = re.compile(
    rf"\b(?:{vocabulary.word_alternation(_FILE, 'level_names_en')})\b|{vocabulary.word_alternation(_FILE, 'level_names_other')}",
    re.I,
)


def is_level(metric: str, columns: list[dict[str, Any]]) -> bool:
    """Whether a column's rows are combined by their mean, not their sum, over a period."""
    column = next((c for c in columns if c["name"] == metric), {})
    maximum = column.get("maximum")
    rating = (
        isinstance(maximum, (int, float))
        and maximum <= 10
        and (column.get("minimum") or 0) >= 0
        and column.get("type") == "number"
    )  # 1-5 or 1-10 with decimals: an average score per row
    return bool(_LEVEL_NAME.search(metric)) or rating


def is_scale(column: dict[str, Any]) -> bool:
    """A rating scale (1-5, 1-7, 0-10 …) of whole numbers: one its header declares ("客户评分(1-5)",
    whatever points were given), or one whose values run from 0 or 1 up to 5, 7 or 10, at least five of
    them. A rating is a measurement to average and compare, though its few values could split rows."""
    if not column.get("coded"):
        return False
    if declared_scale(str(column.get("name") or "")):
        return True
    return bool(
        (column.get("levels") or 0) >= 5 and column.get("minimum") in (0, 1) and column.get("maximum") in (5, 7, 10)
    )
