"""Suggested questions generated from column types (a pure function: columns in, sentences out)."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations
from typing import Any

from app.translations import CATALOG

NUMERIC = ("number", "integer")
GROUPING = ("category", "boolean")

TEMPLATES = {k.removeprefix("suggest."): v for k, v in CATALOG.items() if k.startswith("suggest.")}


# Columns people usually ask about come first ("revenue" before "units").
KEY_MEASURES = ("revenue", "sales", "amount", "profit", "income", "cost", "price", "score", "spend", "salary",
                "收入", "销售", "金额", "利润", "成本", "价格", "得分", "分数", "费用", "工资")


def _rank(column: dict[str, Any]) -> tuple[int, int]:
    name = str(column.get("name", "")).lower()
    keyword = next((i for i, word in enumerate(KEY_MEASURES) if word in name), len(KEY_MEASURES))
    return keyword, 0 if column.get("type") == "number" else 1


def usable(columns: Iterable[dict[str, Any]], kinds: tuple[str, ...]) -> list[str]:
    """Names of columns of the given types, personal data left out; key measures first."""
    chosen = [c for c in columns if c.get("type") in kinds and not c.get("pii")]
    if set(kinds) <= set(NUMERIC):
        chosen.sort(key=_rank)  # a stable sort: otherwise the sheet's order is kept
    return [c["name"] for c in chosen]


def _say(key: str, lang: str, a: str = "", b: str = "") -> str:
    return TEMPLATES[key].get(lang, TEMPLATES[key]["en"]).format(a=a, b=b)


def questions_for(columns: list[dict[str, Any]], lang: str = "en") -> list[str]:
    """Every suggestion one table's columns allow, the most useful kinds first."""
    nums, cats = usable(columns, NUMERIC), usable(columns, GROUPING)
    dates = usable(columns, ("datetime",))
    by_cat = [_say("num_by_cat", lang, n, c) for n in nums[:2] for c in cats[:2]]
    over_time = [_say("num_over_time", lang, n) for n in nums[:2] if dates]
    pairs = [_say("num_num", lang, a, b) for a, b in list(combinations(nums[:3], 2))[:2]]
    cat_pairs = [_say("cat_cat", lang, a, b) for a, b in list(combinations(cats[:2], 2))[:1]]
    # one of each kind first, so a short list still shows the variety of questions possible
    out = by_cat[:1] + over_time[:1] + pairs[:1] + by_cat[1:] + cat_pairs + over_time[1:] + pairs[1:]
    out += [_say("num_dist", lang, n) for n in nums[:1]]
    return out


def suggest_questions(tables: list[list[dict[str, Any]]], lang: str = "en", limit: int = 5) -> list[str]:
    """Suggestions for the workspace's tables (each a list of `{"name", "type", "pii"}` columns)."""
    seen: list[str] = []
    for columns in tables:
        for question in questions_for(columns, lang):
            if question not in seen:
                seen.append(question)
    if tables and not seen:
        seen.append(_say("overview", lang))
    return seen[:limit]
