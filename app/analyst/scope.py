"""What narrows or shapes the built-in analyst's plan beyond the question's own words (issue 14):
the filters a question or its follow-ups ask for ("and only for online orders?") and the workspace
rules ("always report totals") — applied, or named in the answer as not applied."""

from __future__ import annotations

import re
from typing import Any

from app.analyst.steps import Condition, Plan
from app.analyst.totals import add_total_steps
from app.understanding.kinds import FILTER_CUE, TOTAL, Chain
from app.understanding.roles import column_spans, named_values
from app.understanding.words import SYNONYMS

_RULES_BLOCK = re.compile(r'<context source="workspace-rules" tier="project-rules">\n(.*?)\n</context>', re.S)


def chain_filters(chain: Chain, dataset: dict[str, Any], keep: set[str] | None = None) -> list[Condition]:
    """filter_rows conditions for the category values named after "only"/"just"/"只看" in the
    follow-ups of a question (each follow-up keeps the earlier ones' filters). Columns in `keep`
    (the question's grouping) are not filtered."""
    columns = [c for c in dataset.get("columns", []) if not c.get("pii") and c["type"] != "boolean"]
    conditions: dict[str, Condition] = {}
    for part in chain.narrowing:
        if not FILTER_CUE.search(part):
            continue
        column, values = named_values(part, columns, column_spans(part, columns, SYNONYMS))
        if not column or column in (keep or set()):
            continue
        conditions[column] = (
            {"column": column, "op": "==", "value": values[0]}
            if len(values) == 1
            else {"column": column, "op": "in", "value": values}
        )
    return list(conditions.values())


def filtered_name(name: str, conditions: list[Condition]) -> str:
    """The name of a filtered copy: retail_sales_online."""
    values = [
        str(c["value"][0])[:4] if c["op"] == "between" and str(c["value"][0])[:4] == str(c["value"][1])[:4] else v
        for c in conditions
        for v in (c["value"] if isinstance(c["value"], list) else [c["value"]])
    ]
    values = list(dict.fromkeys(values))
    slug = "_".join(re.sub(r"\W+", "_", str(v).lower()).strip("_") for v in values)[:40] or "subset"
    return f"{name}_{slug}"


def workspace_rules(messages: list[dict[str, Any]]) -> list[str]:
    """The lines of the workspace rules file, as injected into the system prompt (context.py)."""
    system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
    block = _RULES_BLOCK.search(system)
    if not block:
        return []
    lines = [re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip() for line in block.group(1).splitlines()]
    lines = lines[:-1] if len(lines) > 1 else lines  # the tier's closing note is not a rule
    return [line for line in lines if line and not line.startswith("#")]


def apply_rules(plan: Plan, rules: list[str], zh: bool) -> None:
    """Apply the rules the built-in analyst understands (totals per group); record every rule as
    applied or not, so the answer says which ones it could not apply."""
    for rule in rules:
        applied = False
        if TOTAL.search(rule):
            if plan.kind in ("total", "top"):
                applied = True
            elif plan.metric and plan.dimension and plan.kind not in ("dedupe", "proportion"):
                if not any(s.tool == "group_aggregate" for s in plan.steps):
                    add_total_steps(plan, plan.metric, plan.dimension, zh)
                applied = True
        plan.rules.append((rule, applied))


def describe_condition(condition: Condition, zh: bool) -> str:
    """'Channel = Online', '月份 in 2024', 'carat > 1' for the answer."""
    column, op, value = condition["column"], condition["op"], condition["value"]
    if op == "between" and isinstance(value, list) and len(value) == 2:
        start, end = str(value[0]), str(value[1])
        if start[:4] == end[:4] and start.endswith("-01-01") and end.endswith("-12-31"):
            return f"{column} 在 {start[:4]} 年" if zh else f"{column} in {start[:4]}"
        return f"{column} 在 {start} 至 {end}" if zh else f"{column} from {start} to {end}"
    if isinstance(value, list):
        return f"{column} = {' / '.join(map(str, value))}"
    return f"{column} {'=' if op == '==' else op} {value}"
