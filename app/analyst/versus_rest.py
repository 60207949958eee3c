"""One group against all the others (issue 14): "crew survival compared with the passengers",
"are Ideal diamonds pricier than the rest?". The question names one value of a grouping column with
more than two values, and compares: the built-in analyst adds a two-level column (that value / the
others) as a new version of the data, and compares across it, as well as across every group."""

from __future__ import annotations

import re
from typing import Any

from app.analyst.steps import Plan, Step
from app.understanding.language import local_text as _t
from app.understanding.roles import value_position

REST_CUE = re.compile(
    r"\bthe others\b|\bthe rest\b|\beveryone else\b|\ball (?:the )?other\b|\bother \w+s\b|"
    r"\bcompared? (?:to|with)\b|\bversus\b|\bvs\.?\b|其他|其余|别的|相比|相较|对比|比起",
    re.I,
)


def asks_versus_rest(question: str, value: str) -> bool:
    """The named group comes first and is then compared ("Ideal … than the others", "线上…和其他渠道相比");
    a group named after the comparison word is the reference all groups are compared with
    ("do the treatments change weight compared with the control")."""
    text = question.lower()
    at = value_position(text, value)
    if at < 0 and (code := re.search(rf"(?<![A-Za-z0-9]){re.escape(str(value))}(?![A-Za-z0-9])", question)):
        at = code.start()  # a short code named after its column ("杀虫剂C"), case as written
    return at >= 0 and any(cue.start() > at for cue in REST_CUE.finditer(text))


def rest_label(zh: bool) -> str:
    return "其他" if zh else "others"


def rest_column(dimension: str, value: str, zh: bool) -> str:
    """The new column's name: "Class: Crew or others"."""
    return f"{dimension}：{value}或其他" if zh else f"{dimension}: {value} or others"


def rest_arguments(dimension: str, value: str, output: str, zh: bool) -> dict[str, Any]:
    """derive_column's arguments: the named value, or the others' label, in a new column of a new version."""
    quoted = str(value).replace("\\", "\\\\").replace("'", "\\'")
    other = rest_label(zh)
    return {
        "new_column_name": rest_column(dimension, value, zh),
        "expression": f"where(`{dimension}` == '{quoted}', '{quoted}', '{other}')",
        "output": output,
    }


def rest_dataset(name: str, value: str) -> str:
    """The new version's name: titanic_crew_vs_rest."""
    slug = re.sub(r"\W+", "_", str(value).lower()).strip("_")[:30] or "group"
    return f"{name}_{slug}_vs_rest"


def versus_rest(plan: Plan, dimension: str, dataset: str, zh: bool) -> str:
    """A prep step that adds "<dimension>: <value> or others" as a new version; the new column's name."""
    value = plan.values[0]
    plan.derived = rest_dataset(dataset, value)
    arguments = rest_arguments(dimension, value, plan.derived, zh)
    subject = _t(zh, f"Mark {value} against the other {dimension} groups", f"把{value}与其他{dimension}分开")
    plan.steps.append(Step("derive_column", arguments, subject, evidence=False, prep=True))
    plan.whole, plan.dimension, plan.values = dimension, arguments["new_column_name"], []
    return plan.dimension
