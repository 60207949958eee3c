"""Days of the week (issue 14): a column whose values are weekday names (Monday … Sunday, Mon …,
星期一 … 星期日, 周一 … 周日, 礼拜一 …) is read in any of these forms, so "周一" in a question names the
value 星期一 and "Mondays" names Monday; a question about the weekend ("weekends", "周末", "双休日")
compares the weekend days (Saturday and Sunday) with the weekdays, two groups made from that column,
not the seven days one by one."""

from __future__ import annotations

import calendar
import re
from typing import Any

from app.understanding import vocabulary

# Monday first. The English names come from the standard library's calendar (its names in the C locale,
# the one Python starts in), and every abbreviation is a prefix of three letters or more of the name (Mon,
# Tue, Tues, Thu, Thur, Thurs …; the first, three letters, is the one a column's short style writes). What
# follows a Chinese prefix (a word for the week) to name each day is in vocabulary/weekdays.toml.
_DAYS = vocabulary.entries("weekdays", "days")
if len(_DAYS) != 7:
    raise vocabulary.VocabularyError(f"weekdays.toml: [[days]] must be the seven days, Monday first, not {len(_DAYS)}")
_EN_FULL = tuple(name.lower() for name in calendar.day_name)
_EN_SHORT = tuple(tuple(name[:end] for end in range(3, len(name))) for name in _EN_FULL)
_ZH_DAYS = tuple(day.strings("zh") for day in _DAYS)
# The Chinese words for a week (周, 星期, 礼拜: roles.toml periods of period W) say "day of the week" before the
# day's number.
_ZH_PREFIXES = tuple(
    entry.key
    for entry in vocabulary.entries("roles", "periods")
    if entry.text("period") == "W" and not entry.key.isascii()
)
WEEKEND_DAYS = (5, 6)  # Saturday, Sunday


def _zh_forms(day: int) -> list[str]:
    return [f"{prefix}{end}" for prefix in _ZH_PREFIXES for end in _ZH_DAYS[day]]


def day_of(value: Any) -> int | None:
    """Which day of the week (0 = Monday) a value names, in English (full or short) or Chinese; None if none."""
    text = str(value).strip().lower().rstrip(".")
    for day in range(7):
        if text == _EN_FULL[day] or text in _EN_SHORT[day] or text in _zh_forms(day):
            return day
    return None


def weekday_column(column: dict[str, Any]) -> bool:
    """A grouping column of at most seven levels whose listed values are all (two or more) weekday names."""
    values = [str(v) for v in column.get("values") or []]
    return (
        column["type"] in ("category", "text")
        and 2 <= (column.get("levels") or 0) <= 7
        and len(values) >= 2
        and all(day_of(v) is not None for v in values)
    )


def day_at(text: str, value: str) -> int:
    """Where the (lower-case) question names the weekday `value` in any form ("mondays", "周一" for
    星期一, "星期天" for 周日); -1 if nowhere. English forms only as whole words ("sun" is not in "sunny")."""
    day = day_of(value)
    if day is None:
        return -1
    found = []
    for form in (_EN_FULL[day], *_zh_forms(day)):
        if form.isascii():
            match = re.search(rf"(?<![a-z]){form}s?(?![a-z])", text)
            found.append(match.start() if match else -1)
        else:
            found.append(text.find(form))
    return min((at for at in found if at >= 0), default=-1)


WEEKEND = vocabulary.regex("weekdays", "weekend", re.I)


def asks_weekend(question: str) -> bool:
    """Whether the question is about the weekend ("on weekends", "周末", "双休日")."""
    return bool(WEEKEND.search(question))


def _same_style(values: list[str], day: int) -> list[str]:
    """The ways the column writes `day`: the forms of the style its listed values use (full or short
    English in their case, or the Chinese prefix they use), so the condition matches its rows."""
    forms: list[str] = []
    for value in values:
        text = value.strip()
        lowered = text.lower().rstrip(".")
        if lowered in _EN_FULL:
            word = _EN_FULL[day]
        elif any(lowered in short for short in _EN_SHORT):
            word = _EN_SHORT[day][0]
        else:
            prefix = next(p for p in _ZH_PREFIXES if text.startswith(p))
            forms += [f for f in _zh_forms(day) if f.startswith(prefix)]
            continue
        forms.append(word.upper() if text.isupper() else word.title() if text[:1].isupper() else word)
    return list(dict.fromkeys(forms))


def weekend_labels(zh: bool) -> tuple[str, str]:
    return ("周末", "工作日") if zh else ("weekend days", "weekdays")


def weekend_column(dimension: str, zh: bool) -> str:
    """The new column's name: "Day: weekend days or weekdays"."""
    weekend, weekdays = weekend_labels(zh)
    return f"{dimension}：{weekend}或{weekdays}" if zh else f"{dimension}: {weekend} or {weekdays}"


def weekend_arguments(column: dict[str, Any], output: str, zh: bool) -> dict[str, Any]:
    """derive_column's arguments: the weekend days' label or the weekdays' label, in a new column."""
    name, values = column["name"], [str(v) for v in column.get("values") or []]
    days = [form for day in WEEKEND_DAYS for form in _same_style(values, day)]
    condition = " or ".join(f"`{name}` == '{form}'" for form in days)
    weekend, weekdays = weekend_labels(zh)
    return {
        "new_column_name": weekend_column(name, zh),
        "expression": f"where({condition}, '{weekend}', '{weekdays}')",
        "output": output,
    }


def weekend_dataset(dataset: str, zh: bool) -> str:
    """The new version's name, one per language (its column's name and labels differ): calls_weekend_vs_weekdays."""
    return f"{dataset}_周末_vs_工作日" if zh else f"{dataset}_weekend_vs_weekdays"
