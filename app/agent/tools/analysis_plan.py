"""The analysis plan (SPEC §8): what the run sets out to establish, recorded before the analyses.

`record_analysis_plan` is a harness tool (core group). The plan is kept in `Run.state["plan"]`
(it survives compaction and restarts), emitted as an `analysis_plan` event for the page, and shown
in the report's "how this was analysed". Verification reads it to state the primary hypothesis.
With `assumptions` the plan also records its reading of the question (`plan["reading"]`: named by the
question, or assumed and what), which the page and the reports mark apart from the arithmetic's check.
"""

from __future__ import annotations

from typing import Any, Literal

from analysis_tools import ToolContext, ToolError, ToolResult
from app.agent.run_scope import run_scope
from app.agent.store import run_by_id

QUESTION_TYPES = (
    "description",
    "comparison",
    "relationship",
    "trend",
    "forecast",
    "attribution",
    "retention",
    "funnel",
    "segmentation",
    "prediction",
    "data_quality",
    "other",
)


def _texts(items: list[str] | str | None) -> list[str]:
    if isinstance(items, str):
        items = [items]
    return [str(x).strip() for x in items or [] if str(x).strip()]


def record_analysis_plan(
    goal: str,
    question_type: Literal[QUESTION_TYPES] = "other",  # type: ignore[valid-type]
    metrics: list[str] | None = None,
    dimensions: list[str] | None = None,
    method_plan: list[str] | None = None,
    limitations: list[str] | None = None,
    assumptions: list[str] | None = None,
    reading: dict[str, Any] | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Record the analysis plan before analysing: the goal, the metrics and dimensions, the methods.

    Args:
        goal: What to establish, in the user's words (e.g. "whether revenue differs by region").
        question_type: description, comparison, relationship, trend, forecast, attribution, retention, funnel,
            segmentation, prediction, data_quality or other.
        metrics: Measured columns (e.g. ["revenue"]).
        dimensions: Columns that split them (e.g. ["region"]).
        method_plan: Methods, in order (e.g. ["describe revenue", "compare regions (ANOVA or Kruskal-Wallis)"]).
        limitations: What it cannot establish (e.g. "observational data: no cause and effect").
        assumptions: What the reading of the question assumed because the question did not name it
            (e.g. "the measure is revenue: the question names no column for it"); [] when the question
            named every column used.
        reading: How the question was read, for the page: {"read_as": one sentence, "roles": [{"role",
            "value", "how", "options"}]}, a role being the table, measure, group, filter, kind or n (the
            built-in analyst fills it).
    """
    if not str(goal or "").strip():
        raise ToolError("invalid_plan", "The plan needs a goal.", hint="State what the analysis must establish.")
    scope = run_scope(ctx)
    run = run_by_id(scope.need_session(), scope.need_run_id())
    plan = {
        "goal": str(goal).strip(),
        "question_type": question_type if question_type in QUESTION_TYPES else "other",
        "metrics": _texts(metrics),
        "dimensions": _texts(dimensions),
        "method_plan": _texts(method_plan),
        "limitations": _texts(limitations),
    }
    if assumptions is not None:  # the reading's own mark (issue 24): "checked" is about the arithmetic only
        assumed = _texts(assumptions)
        recorded: dict[str, Any] = {"status": "assumed" if assumed else "named", "assumed": assumed}
        if isinstance(reading, dict):  # the sentence and the roles the page's chips change (issue 24 point 4)
            recorded.update(read_as_roles(reading))
        plan["reading"] = recorded
    if run is not None:
        run.state = {**(run.state or {}), "plan": plan}  # a new dict: the JSON column sees the change
    scope.send("analysis_plan", plan)
    lines = [f"[plan] recorded: {plan['goal']} ({plan['question_type']})"]
    if not plan["limitations"]:
        lines.append("note: no limitation stated; say what this plan cannot establish.")
    return ToolResult(text="\n".join(lines), payload={"plan": plan})


def read_as_roles(reading: dict[str, Any]) -> dict[str, Any]:
    """The read-as sentence, the question's key and the changeable roles of a `reading` argument,
    kept to their plain shapes (a model may send anything)."""
    roles = []
    for role in reading.get("roles") or []:
        if isinstance(role, dict) and role.get("role") in ("table", "measure", "group", "filter", "kind", "n"):
            how = role.get("how") if role.get("how") in ("named", "assumed", "answer") else "named"
            options = [str(o) for o in role.get("options") or [] if str(o).strip()]
            entry = {"role": role["role"], "value": str(role.get("value") or ""), "how": how, "options": options}
            if (
                role["role"] == "filter" and str(role.get("column") or "").strip()
            ):  # the column a filter chip keeps rows of
                entry["column"] = str(role["column"])
            roles.append(entry)
    return {"key": str(reading.get("key") or ""), "read_as": str(reading.get("read_as") or ""), "roles": roles}
