"""Suggested questions generated from column types (a pure function: columns in, sentences out)."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations
from typing import Any

from app.translations import CATALOG
from app.understanding import header_leaf, spoken_names

NUMERIC = ("number", "integer")
GROUPING = ("category", "boolean")

TEMPLATES = {k.removeprefix("suggest."): v for k, v in CATALOG.items() if k.startswith("suggest.")}


# Columns people usually ask about come first ("revenue" before "units").
KEY_MEASURES = (
    "revenue",
    "sales",
    "amount",
    "profit",
    "income",
    "cost",
    "price",
    "score",
    "spend",
    "salary",
    "收入",
    "销售",
    "金额",
    "利润",
    "成本",
    "价格",
    "得分",
    "分数",
    "费用",
    "工资",
)


def _rank(column: dict[str, Any]) -> tuple[int, int]:
    name = header_leaf(str(column.get("name", ""))).lower()
    keyword = next((i for i, word in enumerate(KEY_MEASURES) if word in name), len(KEY_MEASURES))
    return keyword, 0 if column.get("type") == "number" else 1


def usable(columns: Iterable[dict[str, Any]], kinds: tuple[str, ...]) -> list[str]:
    """Names of columns of the given types as people say them, personal data left out; key measures first."""
    columns = list(columns)
    spoken = spoken_names(columns)
    chosen = [c for c in columns if c.get("type") in kinds and not c.get("pii")]
    if set(kinds) <= set(NUMERIC):
        chosen.sort(key=_rank)  # a stable sort: otherwise the sheet's order is kept
    return [spoken[str(c["name"])] for c in chosen]


def _bands_of(group: str, measure: str) -> bool:
    """Whether a grouping column's name holds the measure's whole name ("Age Group" of Age, 年龄段 of 年龄):
    its groups are then bands of the measure itself, and "does Age differ by Age Group?" is no question."""
    group, measure = group.casefold(), measure.casefold()
    return len(group) > len(measure) and measure in group


def _say(key: str, lang: str, a: str = "", b: str = "") -> str:
    return TEMPLATES[key].get(lang, TEMPLATES[key]["en"]).format(a=a, b=b)


Suggestion = tuple[str, tuple[str, ...]]  # the question, the columns it names


def suggestions_for(columns: list[dict[str, Any]], lang: str = "en") -> list[Suggestion]:
    """Every suggestion one table's columns allow, the most useful kinds first, with the columns each names."""
    nums, cats = usable(columns, NUMERIC), usable(columns, GROUPING)
    dates = usable(columns, ("datetime",))
    by_cat: list[Suggestion] = [
        (_say("num_by_cat", lang, n, c), (n, c)) for n in nums[:2] for c in cats[:2] if not _bands_of(c, n)
    ]
    over_time: list[Suggestion] = [(_say("num_over_time", lang, n), (n, dates[0])) for n in nums[:2] if dates]
    pairs: list[Suggestion] = [(_say("num_num", lang, a, b), (a, b)) for a, b in list(combinations(nums[:3], 2))[:2]]
    cat_pairs: list[Suggestion] = [
        (_say("cat_cat", lang, a, b), (a, b)) for a, b in list(combinations(cats[:2], 2))[:1]
    ]
    # one of each kind first, so a short list still shows the variety of questions possible
    out: list[Suggestion] = by_cat[:1] + over_time[:1] + pairs[:1] + by_cat[1:] + cat_pairs + over_time[1:] + pairs[1:]
    out += [(_say("num_dist", lang, n), (n,)) for n in nums[:1]]
    return out


def questions_for(columns: list[dict[str, Any]], lang: str = "en") -> list[str]:
    """Every suggestion one table's columns allow, the most useful kinds first."""
    return [question for question, _ in suggestions_for(columns, lang)]


def suggest_questions(
    tables: list[list[dict[str, Any]]], lang: str = "en", limit: int = 6, names: list[str] | None = None
) -> list[str]:
    """Suggestions for the workspace's tables (each a list of `{"name", "type", "pii"}` columns), drawn
    from every table in turn (the best of each first). A question whose columns another table also has
    names its table (`names`, e.g. the file names), so it is clear, to the reader and to the analyst,
    which data it is about."""
    per_table = [suggestions_for(columns, lang) for columns in tables]
    column_sets = [set(spoken_names(columns).values()) for columns in tables]
    # Tables take turns, each with its best question not yet asked of another table: two sheets of one
    # shape (a month per sheet) get different questions, not the same list twice.
    asked: set[str] = set()
    seen: list[str] = []
    next_of = [0] * len(per_table)
    while any(at < len(suggestions) for at, suggestions in zip(next_of, per_table, strict=True)):
        for index, suggestions in enumerate(per_table):
            while next_of[index] < len(suggestions) and suggestions[next_of[index]][0] in asked:
                next_of[index] += 1
            if next_of[index] >= len(suggestions):
                continue
            question, used = suggestions[next_of[index]]
            next_of[index] += 1
            asked.add(question)
            shared = any(set(used) <= other for at, other in enumerate(column_sets) if at != index)
            if shared and names and index < len(names):
                question = in_dataset(question, names[index], lang)
            if question not in seen:
                seen.append(question)
    if tables and not seen:
        seen.append(_say("overview", lang))
    return seen[:limit]


def in_dataset(question: str, name: str, lang: str) -> str:
    template = CATALOG["suggest.in_dataset"]
    return template.get(lang, template["en"]).format(question=question.rstrip("?？. "), name=name)
