"""What a number column counts by the unit in its header, and whether a phrase of the question names
it so (issue 24): "which stall sold the most boxes" names 销量（箱） by 箱, across languages by the
multilingual embedding (semantic.py). Read by the analyst's role questions (role_question.py) and by
the choice of the table a question is about (dataset_choice.py)."""

from __future__ import annotations

from typing import Any

from app.understanding import semantic  # its model loads on the first phrase, not on import
from app.understanding.profile_reading import NUMERIC
from app.understanding.roles import groups_rows
from app.understanding.text import split_unit


def quantity_unit(column: dict[str, Any]) -> str | None:
    """What a number column counts by its bracketed unit: 销量（箱） counts 箱 (boxes); a rate's unit
    counts its numerator (单价（元/箱） is an amount of 元 per box, not boxes). None: no unit, or not a number."""
    if column.get("type") not in NUMERIC:
        return None
    unit = split_unit(str(column["name"]))[1]
    counted = unit.split("/")[0].strip() if unit else ""
    return counted or None


def unit_scores(phrases: list[str], columns: list[dict[str, Any]]) -> dict[str, float]:
    """Each number column's closeness to the phrases by what its unit counts ("boxes" and 箱: the
    multilingual embedding reads the unit across languages, a word of it written out counts fully)."""
    units = {str(c["name"]): unit for c in columns if (unit := quantity_unit(c))}
    if not phrases or not units:
        return {}
    distinct = sorted(set(units.values()))
    closeness = {u: max(_unit_match(p, u) for p in phrases) for u in distinct}
    return {name: closeness[unit] for name, unit in units.items()}


def _unit_match(phrase: str, unit: str) -> float:
    if unit in phrase.lower():  # 箱数 counts 箱
        return 1.0
    return max(semantic.scores([phrase], [unit]).values(), default=0.0)


# How far a phrase's closeness to a number column's unit must lead its closeness to every grouping
# column's header before it is read as the measure ("which stall sold the most boxes": boxes is 0.86
# from 箱 and at most 0.82 from 档口/片区/月份; "stall" leads no unit). The same lead that makes a
# column in meaning the assumed reading (role_question.ASSUME_LEAD).
UNIT_LEAD = 0.02


def names_a_unit(phrase: str, columns: list[dict[str, Any]]) -> bool:
    """Whether an unmatched phrase is what a number column counts (its unit) rather than groups: a
    measure the question names by the unit in the sheet's header ("boxes" for 销量（箱）)."""
    by_unit = unit_scores([phrase], [c for c in columns if not c.get("pii")])
    if not by_unit:
        return False
    groups = [str(c["name"]) for c in columns if groups_rows(c) and not c.get("pii")]
    nearest_group = max(semantic.scores([phrase], groups).values(), default=0.0) if groups else 0.0
    return max(by_unit.values()) - nearest_group >= UNIT_LEAD
