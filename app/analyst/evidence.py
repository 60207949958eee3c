"""The built-in analyst's record_evidence calls: one per analysis whose result came back ok, with
its claim in plain words (findings.py), the method, the numbers it rests on, how many rows, the
limitations of such a reading, and the confidence (medium when columns stood in for words of the
question that matched none, or the reading was assumed)."""

from __future__ import annotations

from app.analyst.findings import plain_reading
from app.analyst.reading import kind_assumption, reading_assumed, table_assumed
from app.analyst.role_question import stood_in
from app.analyst.steps import Arguments, Plan
from app.analyst.turn_state import TurnView


def evidence_calls(plan: Plan, view: TurnView, zh: bool) -> list[tuple[str, Arguments]]:
    """record_evidence for each task step whose result is ok, in step order."""
    out = []
    for step in plan.steps:
        if not step.task:
            continue
        call_id, result = view.find(step.tool, step.arguments)
        if not result or not result.ok:
            continue
        metrics = {k: v for k, v in result.metrics.items() if isinstance(v, (int, float, str))}
        n = metrics.get("n") or metrics.get("n_rows")
        out.append(
            (
                "record_evidence",
                {
                    "claim": plain_reading(step, result, zh, plan) or step.task,
                    "method": result.method or step.tool,
                    "tool_call_ids": [call_id],
                    "metrics": metrics,
                    "sample_size": int(n) if isinstance(n, (int, float)) else None,
                    "limitations": _limitations(step.tool, zh),
                    "confidence": _confidence(plan),
                },
            )
        )
    return out


def _confidence(plan: Plan) -> str:
    """Medium when columns stood in for words of the question that matched none, or when the measure,
    groups or filter were assumed (a default or a partial match: app.analyst.reading), or the table was
    (a near-tie between the workspace's tables: reading.table_assumed), or the kind of answer was (a
    total or an average the question did not ask for: reading.kind_assumption): the numbers may be
    checked, but "high confidence" would vouch for a reading the question did not give."""
    assumed = reading_assumed(plan.provenance) or table_assumed(plan.choice) or bool(kind_assumption(plan, False))
    return "medium" if stood_in(plan.provenance) or assumed else "high"


def _limitations(tool: str, zh: bool) -> list[str]:
    common = ["基于观察数据，不能证明因果关系" if zh else "Observational data: does not establish cause and effect"]
    if tool in ("compare_groups", "compare_two_groups"):
        common.append(
            "组间其他差异（如时间、渠道）可能影响结果"
            if zh
            else "Other differences between the groups (time, channel, mix) may contribute"
        )
    if tool == "correlation_analysis":
        common.append(
            "相关系数只衡量线性（或单调）关系" if zh else "Correlation only measures linear (or monotonic) association"
        )
    return common
