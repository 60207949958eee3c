"""The same subjects measured twice: a paired test of a number between the two groups of a column with
an id for each subject (the question says "paired", or the data shows it: each id once per group),
or between two numbers the question names on the same rows."""

from __future__ import annotations

from app.analyst.steps import Column, Plan, Step
from app.understanding.kinds import asks_paired, asks_top
from app.understanding.language import local_text as _t
from app.understanding.profile_reading import NUMERIC


def paired_steps(plan: Plan, question: str, columns: list[Column], named: list[str], rows: int, zh: bool) -> bool:
    """A paired test when the question or the data asks for one; False when neither does or no
    pairing fits."""
    metric, dimension = plan.metric or "", plan.dimension
    levels = {c["name"]: c.get("levels") or 0 for c in columns}
    twice = _each_subject_twice(columns, dimension, levels, rows)
    if not (asks_paired(question) or (twice and not asks_top(question))):
        return False
    ids = twice or [str(c["name"]) for c in columns if c["type"] == "identifier" and not c.get("pii")]
    measures = [
        n
        for n in named
        if n != metric and next((c for c in columns if c["name"] == n), {}).get("type") in NUMERIC and not levels.get(n)
    ]
    subject = _t(zh, f"Paired comparison of {metric}", f"{metric}的配对比较")
    if dimension and levels.get(dimension) == 2 and ids:
        plan.kind = "paired"
        plan.steps.append(
            Step(
                "paired_test",
                {"value_column": metric, "group_column": dimension, "id_column": ids[-1], "method": "t"},
                subject,
            )
        )
        return True
    if measures:
        plan.kind = "paired"
        plan.steps.append(Step("paired_test", {"x_column": metric, "y_column": measures[0], "method": "t"}, subject))
        return True
    return False


def _each_subject_twice(columns: list[Column], dimension: str | None, levels: dict[str, int], rows: int) -> list[str]:
    """Paired when the data says so: an id column holding each subject once per group of a two-group
    comparison (sleep: ID 1-10, each under both drugs)."""
    if not (rows and dimension and levels.get(dimension) == 2):
        return []
    return [
        str(c["name"])
        for c in columns
        if c["type"] == "identifier" and not c.get("pii") and (c.get("distinct") or 0) * 2 == rows
    ]
