"""The built-in analyst's vocabulary: the words it reads questions with and writes answers with,
kept as data in vocabulary.toml beside this module (read once, with the standard library's
tomllib). Every entry says why it exists; the modules that use a list take it from here by name.

An entry is a table with `why` and `words`: `words` is a list of words, or a table of named lists
or pairs (a role's name in English and Chinese). A list may be written in several entries (an
array of tables), each with its own `why` — when some of its words came in later, for another
reason — and reads as their words in order.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from app.understanding import vocabulary as shared

SOURCE = Path(__file__).with_name("vocabulary.toml")


@cache
def vocabulary() -> dict[str, Any]:
    """vocabulary.toml, parsed (once per process)."""
    with SOURCE.open("rb") as handle:
        return tomllib.load(handle)


def _entry(path: str) -> Any:
    found: Any = vocabulary()
    for part in path.split("."):
        found = found[part]
    return found


def words(path: str) -> tuple[str, ...]:
    """The words of the list at `path` ("keywords.compare"), in order, over all its entries."""
    entry = _entry(path)
    entries = entry if isinstance(entry, list) else [entry]
    return tuple(str(word) for part in entries for word in part["words"])


def word_set(path: str) -> frozenset[str]:
    return frozenset(words(path))


def named_lists(path: str) -> dict[str, tuple[str, ...]]:
    """The named lists of the entry at `path` (name -> its words)."""
    table: dict[str, list[str]] = _entry(path)["words"]
    return {name: tuple(str(word) for word in listed) for name, listed in table.items()}


def period_units() -> dict[str, tuple[str, ...]]:
    """The names of each unit of time ("month": month, 月, 月份): the units of the understanding's
    roles.toml periods that stand for it (by their period code: month, 月 → M), then this file's other
    names of it (period_units: 月份, yr, date). In the order of roles.toml (day, week, month, quarter, year)."""
    periods = [(entry.key, entry.text("period")) for entry in shared.entries("roles", "periods")]
    english = {code: unit for unit, code in reversed(periods) if unit.isascii()}  # D → day
    other = named_lists("period_units")
    units: dict[str, tuple[str, ...]] = {}
    for unit, code in periods:
        names = units.setdefault(english[code], ())
        units[english[code]] = (*names, unit)
    return {unit: (*names, *other.get(unit, ())) for unit, names in units.items()}


def period_aliases() -> dict[str, str]:
    """The other ways the each-period pattern catches a unit and the unit each stands for: every name of a
    unit that is not English (月 → month, 季度 → quarter), and this file's period_aliases ('dai' of 'daily')."""
    aliases = {name: unit for unit, names in period_units().items() for name in names if not name.isascii()}
    return aliases | {alias: unit for alias, (unit,) in named_lists("period_aliases").items()}


def pairs(path: str) -> dict[str, tuple[str, str]]:
    """The (English, Chinese) pairs of the entry at `path` by name."""
    return {name: (listed[0], listed[1]) for name, listed in named_lists(path).items()}


def pair_list(path: str) -> tuple[tuple[str, str], ...]:
    """The entry's words as a list of (English, Chinese) pairs, in order."""
    listed: list[list[str]] = _entry(path)["words"]
    return tuple((str(en), str(zh)) for en, zh in listed)


def kinds(path: str) -> list[str]:
    """The names of the lists under `path` ("keywords": compare, correlate, ...), in file order."""
    return list(_entry(path))
