"""Values shown as the sheet's own people write them (issue 24): a yes/no column read as booleans at
ingest is shown in its own words (是/否, Yes/No, Y/N: the dataset's column info keeps them), a
timestamp at midnight as its day ("2015-04-01", never "2015-04-01 00:00:00") and a month as people
name it ("Oct 2009", "2024年3月") rather than "2009-10"."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date
from typing import Any

from app.analyst.vocabulary import words

_TRUE = re.compile(r"(?<![A-Za-z_])True(?![A-Za-z_])")
_FALSE = re.compile(r"(?<![A-Za-z_])False(?![A-Za-z_])")
_MIDNIGHT = re.compile(r"\b(\d{4}-\d{2}-\d{2})[ T]00:00(?::00(?:\.0+)?)?(?!\d|[:.]\d)")
# A month label as the time tools write it ("2024-03"): not part of a longer date or number.
_MONTH = re.compile(r"(?<![\d\-./])((?:19|20)\d{2})-(0[1-9]|1[0-2])(?![\d\-]|\.\d)")


def sheet_words_of(columns: Iterable[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Each yes/no column's own words ("true": "是", "false": "否") from a dataset's column info."""
    return {str(c["name"]): dict(c["words"]) for c in columns if c.get("type") == "boolean" and c.get("words")}


def own_word(value: Any, words: dict[str, str] | None) -> Any:
    """A yes/no cell as the sheet writes it (True or "True" → 是 with the column's words); other values
    as they are."""
    if words and isinstance(value, bool):
        return words.get("true" if value else "false", value)
    if words and isinstance(value, str):  # a column's listed values are strings ("True", "False")
        return words.get(value.lower(), value)
    return value


def rows_in_own_words(rows: list[dict[str, Any]], columns: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Preview rows with each yes/no cell as the sheet writes it (是/否), not True/False."""
    own = sheet_words_of(columns)
    if not own:
        return rows
    return [{name: own_word(value, own.get(name)) for name, value in row.items()} for row in rows]


def used_columns(arguments: dict[str, Any]) -> set[str]:
    """The column names a step's arguments mention (single names and lists of names)."""
    names: set[str] = set()
    for value in arguments.values():
        if isinstance(value, str):
            names.add(value)
        elif isinstance(value, (list, tuple)):
            names.update(v for v in value if isinstance(v, str))
    return names


def as_people_write(text: str, zh: bool, words: dict[str, dict[str, str]], columns: set[str] | None = None) -> str:
    """`text` with True/False in the sheet's own words and dates as people write them. Booleans are
    replaced only when the yes/no columns concerned (`columns`, else all of them) write yes and no
    the same way, so that a word is never given to the wrong column."""
    concerned = [w for name, w in words.items() if columns is None or name in columns]
    kinds = {tuple(sorted(w.items())) for w in concerned}
    if len(kinds) == 1:
        own = dict(next(iter(kinds)))
        if "true" in own:
            text = _TRUE.sub(own["true"], text)
        if "false" in own:
            text = _FALSE.sub(own["false"], text)
    text = _MIDNIGHT.sub(r"\1", text)
    return _MONTH.sub(lambda m: month_label(int(m.group(1)), int(m.group(2)), zh), text)


def month_label(year: int, month: int, zh: bool) -> str:
    """'2024年3月' / 'Mar 2024'."""
    return f"{year}年{month}月" if zh else date(year, month, 1).strftime("%b %Y")


def _is_number(value: str, number: float) -> bool:
    try:
        return float(value) == number
    except ValueError:
        return False


def says_yes(value: Any) -> bool:
    """Whether a value of a yes/no column is the yes: a word of yes_values (yes, true, y) or the number
    1 (1, 1.0), read as a number."""
    text = str(value).strip().lower()
    return text in words("yes_values") or _is_number(text, 1.0)


def says_no(value: Any) -> bool:
    """Whether a value of a yes/no column is the no: a word of no_values (no, false, n) or the number 0."""
    text = str(value).strip().lower()
    return text in words("no_values") or _is_number(text, 0.0)
