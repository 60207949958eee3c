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
- {"language": "zh"}                              the report is in that language;
- {"uses": ["compare_two_groups"], "mentions": ["bwt", "smoke"]}   a successful call of one of
  these tools whose arguments name every one of these columns or values (the right variables);
- {"answer_number": 72.7, "abs_tol": 0.1}         the answer text shows a number this close
  ("rel_tol" also works; 14.25万 reads as 142500, 1,234.5 as 1234.5, 72.7% as 72.7);
- {"answer_contains_all": ["Electronics", "Home"]}  the answer mentions every one of them;
- {"headline_contains_any": ["sunflower"]}        the headline (the answer's first paragraph) does;
- {"answer_order": ["East", "South", "West"]}     the answer names them, first mentions in this order;
- {"answer_lacks": ["2024Q4"]}                    the answer mentions none of them;
- {"version_rows": 149}                           the run stored a new dataset version of that many rows;
- {"asked": "scope"}                              the run asked a clarification question on that topic
  (the topic itself or "scope.<anything>"); {"asked": "*"}: any clarification question at all;
- {"any": [fact, fact]}                           at least one of these facts holds.
A metric fact with "absolute": true compares the size of the value (a difference of means whose
sign depends on which group the tool names first).

Facts look at evidence (what the answer is built on), not at raw tool output, because a number
the run never recorded as evidence is not a finding of the run.
"""

from __future__ import annotations

import math
import re
from typing import Any

KINDS = (
    "tool",
    "metric",
    "answer_contains_any",
    "evidence_min",
    "language",
    "uses",
    "answer_number",
    "answer_contains_all",
    "headline_contains_any",
    "answer_lacks",
    "version_rows",
    "asked",
    "any",
    "answer_order",
)
WORD_LISTS = ("answer_contains_any", "answer_contains_all", "headline_contains_any", "answer_lacks", "answer_order")
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
    elif kind in WORD_LISTS or kind == "asked":
        words = [fact[kind]] if kind == "asked" else fact[kind]
        if not isinstance(words, list) or not words or not all(isinstance(w, str) and w for w in words):
            raise FactError(f"{kind} must be a non-empty list of strings: {fact!r}")
    elif kind in ("evidence_min", "version_rows") and not (isinstance(fact[kind], int) and fact[kind] >= 0):
        raise FactError(f"{kind} must be a whole number: {fact!r}")
    elif kind == "uses":
        tools, mentions = fact[kind], fact.get("mentions", [])
        if not isinstance(tools, list) or not tools or not all(isinstance(t, str) and t for t in tools):
            raise FactError(f"uses must be a non-empty list of tool names: {fact!r}")
        if not isinstance(mentions, list) or not all(isinstance(m, str) and m for m in mentions):
            raise FactError(f"mentions must be a list of strings: {fact!r}")
    elif kind == "answer_number" and not (
        _number(fact[kind]) and all(_number(fact.get(t, 0)) for t in ("abs_tol", "rel_tol"))
    ):
        raise FactError(f"answer_number and its tolerances must be numbers: {fact!r}")
    elif kind == "any":
        if not isinstance(fact[kind], list) or not fact[kind]:
            raise FactError(f"any must be a non-empty list of facts: {fact!r}")
        for inner in fact[kind]:
            validate_fact(inner)


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
    if kind == "answer_contains_all":
        return "answer mentions all of " + ", ".join(fact[kind])
    if kind == "headline_contains_any":
        return "headline mentions " + " / ".join(fact[kind])
    if kind == "answer_lacks":
        return "answer does not mention " + " / ".join(fact[kind])
    if kind == "answer_order":
        return "answer ranks " + " > ".join(fact[kind])
    if kind == "evidence_min":
        return f"at least {fact[kind]} evidence items"
    if kind == "uses":
        on = f" on {', '.join(fact.get('mentions') or [])}" if fact.get("mentions") else ""
        return f"uses {' or '.join(fact[kind])}{on}"
    if kind == "answer_number":
        bounds = [f"±{fact['abs_tol']}"] if "abs_tol" in fact else []
        bounds += [f"±{fact['rel_tol'] * 100:g}%"] if "rel_tol" in fact else []
        return f"answer shows {fact[kind]:g}" + (f" ({', '.join(bounds)})" if bounds else "")
    if kind == "version_rows":
        return f"a new dataset version with {fact[kind]} rows"
    if kind == "asked":
        return "asked a clarification question" if fact[kind] == "*" else f"asked a {fact[kind]} question"
    if kind == "any":
        return "one of: " + "; ".join(describe(f) for f in fact[kind])
    return f"tool {fact[kind]} succeeded" if kind == "tool" else f"{kind} {fact[kind]}"


def check(
    fact: dict[str, Any], report: dict[str, Any] | None, calls: list[dict[str, Any]], run: dict[str, Any] | None = None
) -> bool:
    """True when the run's report and tool calls show the fact. No report (the run did not
    finish) shows only the facts about what it did (tools, questions, versions). `run` holds
    what else the run recorded: {"versions": [rows, ...], "asked": [topic, ...]}."""
    kind, run = fact_kind(fact), run or {}
    if kind == "tool":
        return any(c["tool"] == fact["tool"] and c["ok"] for c in calls)
    if kind == "uses":
        return any(
            c["tool"] in fact["uses"] and c["ok"] and _mentions(c.get("arguments") or {}, fact.get("mentions") or [])
            for c in calls
        )
    if kind == "version_rows":
        return fact[kind] in (run.get("versions") or [])
    if kind == "asked":
        return any(
            fact[kind] == "*" or t == fact[kind] or t.startswith(fact[kind] + ".") for t in run.get("asked") or []
        )
    if kind == "any":
        return any(check(inner, report, calls, run) for inner in fact[kind])
    if report is None:
        return False
    answer = (report.get("answer") or "").lower()
    if kind == "metric":
        return any(_metric_matches(fact, item.get("metrics") or {}) for item in _evidence(fact, report, calls))
    if kind == "answer_contains_any":
        return any(word.lower() in answer for word in fact[kind])
    if kind == "answer_contains_all":
        return all(word.lower() in answer for word in fact[kind])
    if kind == "headline_contains_any":
        first = headline(answer)
        return any(word.lower() in first for word in fact[kind])
    if kind == "answer_lacks":
        return not any(word.lower() in answer for word in fact[kind])
    if kind == "answer_order":
        places = [answer.find(word.lower()) for word in fact[kind]]
        return all(p >= 0 for p in places) and places == sorted(places)
    if kind == "answer_number":
        return any(
            math.isclose(n, fact[kind], rel_tol=fact.get("rel_tol", 0.0), abs_tol=fact.get("abs_tol", 0.0))
            for n in numbers_in(report.get("answer") or "")
        )
    if kind == "evidence_min":
        return len(report.get("evidence") or []) >= fact[kind]
    return report.get("language") == fact["language"]


def headline(answer: str) -> str:
    """The answer's first paragraph after how the question was read (the built-in answer opens with
    it, issue 24): what a person reads before deciding to read on."""
    from app.analyst import past_the_reading  # here: `verity --help` loads the evaluation, never the analyst

    for block in re.split(r"\n\s*\n", past_the_reading(answer).strip()):
        if block.strip() and not block.lstrip().startswith("#"):
            return block.strip()
    return ""


NUMBER = re.compile(r"(?<![A-Za-z0-9_.])([-−]?\d(?:[\d,]*\d)?(?:\.\d+)?)\s*(万|亿)?")


def numbers_in(text: str) -> list[float]:
    """The numbers of a text as a person reads them: thousands separators dropped, 万 and 亿
    multiplied out, a percentage as its number (72.7% is 72.7)."""
    found = []
    for digits, unit in NUMBER.findall(text):
        try:
            value = float(digits.replace(",", "").replace("−", "-"))
        except ValueError:
            continue
        found.append(value * {"万": 1e4, "亿": 1e8}.get(unit, 1))
    return found


def _mentions(arguments: Any, wanted: list[str]) -> bool:
    """Every wanted name appears as one of the call's argument values (a column, a group label)."""
    values = {v.lower() for v in _strings(arguments)}
    return all(w.lower() in values for w in wanted)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return [str(value)] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


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
    if fact.get("absolute"):
        value = abs(value)
    if "below" in fact:
        return value < fact["below"]
    if "above" in fact:
        return value > fact["above"]
    return math.isclose(
        value,
        fact["value"],
        rel_tol=fact.get("rel_tol", 0.0 if "abs_tol" in fact else 0.01),
        abs_tol=fact.get("abs_tol", 0.0),
    )


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
