"""Expected facts: what a task's run must show, checked against its real outputs.

A fact is a small JSON object of one kind:
- {"tool": "compare_groups"}                      that tool was called and succeeded;
- {"metric": "f_statistic", "value": 36.65, "rel_tol": 0.01}   some evidence item records this
  metric close to the value ("abs_tol" also works; rel_tol defaults to 1%), or
  {"metric": "p_value", "below": 0.05} / {"above": ...} / {"equals": "no trend"};
  "from_tool" restricts it to evidence that cites a call of that tool (a p-value of the
  correlation must not pass for the ANOVA's);
- {"answer_contains_any": ["East", "东部"]}       the final answer mentions one of them;
- {"evidence_min": 2}                             at least that many evidence items;
- {"language": "zh"}                              the report is in that language.

Facts look at evidence (what the answer is built on), not at raw tool output, because a number
the run never recorded as evidence is not a finding of the run.
"""

from __future__ import annotations

import math
from typing import Any

KINDS = ("tool", "metric", "answer_contains_any", "evidence_min", "language")
COMPARISONS = ("value", "below", "above", "equals")


class FactError(ValueError):
    """A fact in the task file that cannot be checked."""


def fact_kind(fact: dict[str, Any]) -> str:
    kinds = [k for k in KINDS if k in fact]
    if len(kinds) != 1:
        raise FactError(f"a fact needs exactly one of {', '.join(KINDS)}: {fact!r}")
    return kinds[0]


def validate_fact(fact: Any) -> None:
    if not isinstance(fact, dict):
        raise FactError(f"a fact must be an object: {fact!r}")
    kind = fact_kind(fact)
    if kind == "metric":
        given = [c for c in COMPARISONS if c in fact]
        if len(given) != 1:
            raise FactError(f"a metric fact needs exactly one of {', '.join(COMPARISONS)}: {fact!r}")
        bound = fact[given[0]]
        if given[0] != "equals" and not _number(bound):
            raise FactError(f"{given[0]} must be a number: {fact!r}")
    elif kind == "answer_contains_any":
        words = fact[kind]
        if not isinstance(words, list) or not words or not all(isinstance(w, str) and w for w in words):
            raise FactError(f"answer_contains_any must be a non-empty list of strings: {fact!r}")
    elif kind == "evidence_min" and not (isinstance(fact[kind], int) and fact[kind] >= 0):
        raise FactError(f"evidence_min must be a whole number: {fact!r}")


def describe(fact: dict[str, Any]) -> str:
    """A short label for tables and regressions: 'metric p_value < 0.05 (compare_groups)'."""
    kind = fact_kind(fact)
    if kind == "metric":
        if "value" in fact:
            tol = f"±{fact['abs_tol']}" if "abs_tol" in fact else f"±{fact.get('rel_tol', 0.01) * 100:g}%"
            test = f"≈ {fact['value']} ({tol})"
        else:
            test = {"below": "<", "above": ">", "equals": "="}[next(c for c in COMPARISONS if c in fact)]
            test = f"{test} {fact.get('below', fact.get('above', fact.get('equals')))}"
        source = f" ({fact['from_tool']})" if fact.get("from_tool") else ""
        return f"metric {fact['metric']} {test}{source}"
    if kind == "answer_contains_any":
        return "answer mentions " + " / ".join(fact[kind])
    if kind == "evidence_min":
        return f"at least {fact[kind]} evidence items"
    return f"tool {fact[kind]} succeeded" if kind == "tool" else f"{kind} {fact[kind]}"


def check(fact: dict[str, Any], report: dict[str, Any] | None, calls: list[dict[str, Any]]) -> bool:
    """True when the run's report and tool calls show the fact. No report (the run did not
    finish) shows only tool facts."""
    kind = fact_kind(fact)
    if kind == "tool":
        return any(c["tool"] == fact["tool"] and c["ok"] for c in calls)
    if report is None:
        return False
    if kind == "metric":
        return any(_metric_matches(fact, item.get("metrics") or {}) for item in _evidence(fact, report, calls))
    if kind == "answer_contains_any":
        answer = (report.get("answer") or "").lower()
        return any(word.lower() in answer for word in fact[kind])
    if kind == "evidence_min":
        return len(report.get("evidence") or []) >= fact[kind]
    return report.get("language") == fact["language"]


def _evidence(fact: dict[str, Any], report: dict[str, Any], calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    items = report.get("evidence") or []
    tool = fact.get("from_tool")
    if not tool:
        return items
    ids = {c["id"] for c in calls if c["tool"] == tool and c["ok"]}
    return [item for item in items if ids & set(item.get("tool_call_ids") or [])]


def _metric_matches(fact: dict[str, Any], metrics: dict[str, Any]) -> bool:
    if fact["metric"] not in metrics:
        return False
    value = metrics[fact["metric"]]
    if "equals" in fact:
        return value == fact["equals"] or str(value) == str(fact["equals"])
    if not _number(value) or math.isnan(value):
        return False
    if "below" in fact:
        return value < fact["below"]
    if "above" in fact:
        return value > fact["above"]
    return math.isclose(value, fact["value"], rel_tol=fact.get("rel_tol", 0.0 if "abs_tol" in fact else 0.01),
                        abs_tol=fact.get("abs_tol", 0.0))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
