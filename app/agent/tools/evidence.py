"""Evidence: every conclusion is tied to the tool calls that computed it.

Recording evidence downgrades over-confident claims and completes the tasks it satisfies, so
the model does not have to remember task_update (SPEC §8).
"""

from __future__ import annotations

import math
import re
from statistics import NormalDist
from typing import Any, Literal

from analysis_tools import ToolContext, ToolError, ToolResult
from app.agent.run_scope import run_scope
from app.agent.store import (
    Evidence,
    Session,
    Task,
    add_evidence,
    evidence_by_id,
    mark_task_updated,
    require_run,
    run_tasks,
    run_tool_call,
)
from app.agent.tools.tasks import task_dict
from app.understanding.text import is_cjk, tokens

_STOP = {"the", "and", "for", "with", "does", "whether", "data", "between", "from", "that", "this", "are", "was"}


def evidence_dict(item: Evidence) -> dict[str, Any]:
    return {
        "id": item.id,
        "claim": item.claim,
        "method": item.method,
        "result_summary": item.result_summary,
        "metrics": dict(item.metrics or {}),
        "sample_size": item.sample_size,
        "confidence": item.confidence,
        "limitations": list(item.limitations or []),
        "tool_call_ids": list(item.tool_call_ids or []),
    }


# A method that infers beyond the rows (a test, a model, a forecast) needs stated limitations for
# "high" confidence; a plain description (a mean, a count, a share) does not.
INFERENTIAL = re.compile(
    r"test|anova|regress|correlat|model|forecast|predict|classif|cluster|chi|mann|kruskal|"
    r"wilcoxon|fisher|logistic|causal|effect|检验|回归|相关|模型|预测|方差分析|聚类",
    re.IGNORECASE,
)


SMALL_SAMPLE = 30
ALPHA = 0.05
POWER = 0.8
MEDIUM_EFFECT = 0.5  # Cohen's d


def well_powered_n(alpha: float = ALPHA, power: float = POWER, effect: float = MEDIUM_EFFECT) -> int:
    """The total sample (two equal groups) at which a two-sided test at `alpha` detects a medium effect
    with `power` (normal approximation: 4·(z₁₋α/₂ + z_power)²/d², 126 at the defaults). A null result on
    at least this many is informative: no medium or larger effect."""
    z = NormalDist()
    return math.ceil(4 * (z.inv_cdf(1 - alpha / 2) + z.inv_cdf(power)) ** 2 / effect**2)


def rows_behind(calls: list[Any]) -> int | None:
    """The data rows behind a result computed on periods (a monthly trend on 4,392 rows): the largest
    `n_rows` of a cited call that aggregated rows into periods; None when no call did."""
    rows = [
        int(m["n_rows"])
        for c in calls
        if "n_periods" in (m := c.metrics or {}) and isinstance(m.get("n_rows"), (int, float))
    ]
    return max(rows, default=None)


def downgrade_confidence(
    confidence: str,
    sample_size: int | None,
    metrics: dict[str, Any],
    limitations: list[str],
    method: str = "",
    calls: list[Any] | None = None,
) -> tuple[str, list[str]]:
    """'high' needs n >= 30, a significant result (when there is a p-value) and, for an inference
    (a p-value, or a test/model method), stated limitations. The sample is the rows behind the result:
    12 months aggregated from 4,392 rows are not a small sample. A null result on a sample large enough
    to detect a medium effect (`well_powered_n`) is a finding, not a reason to doubt it."""
    reasons = []
    if confidence == "high":
        behind = rows_behind(calls or [])
        if sample_size is not None and sample_size < SMALL_SAMPLE and not (behind and behind >= SMALL_SAMPLE):
            reasons.append("sample size below 30")
        p = metrics.get("p_value")
        n = sample_size if sample_size is not None else metrics.get("n")
        powered = isinstance(n, (int, float)) and n >= well_powered_n()
        if isinstance(p, (int, float)) and p >= ALPHA and not powered:
            reasons.append("result not statistically significant")
        inferential = isinstance(p, (int, float)) or bool(INFERENTIAL.search(method or ""))
        if not limitations and inferential:
            reasons.append("no limitation stated")
    return ("medium" if reasons else confidence), reasons


def _words(text: str) -> set[str]:
    """Comparable words (app.understanding.text.tokens): stop words dropped, Latin words of three letters
    or more cut to a 5-letter stem ("describe"/"descriptive", "compare"/"comparison"), tool names split
    into their parts, and Chinese words as their characters (会员组 meets 会员: a task's words and the
    evidence's are segmented apart)."""
    words: set[str] = set()
    for token in tokens(text.replace("_", " ")):
        if token.is_cjk:
            words.update(c for c in token.word if is_cjk(c))
        elif len(token.word) >= 3 and token.word.isalnum() and token.word not in _STOP:
            words.add(token.word[:5])
    return words


def matching_tasks(tasks: list[Task], evidence_text: str) -> list[Task]:
    """Active tasks whose subject/expected output/capability/requirements the evidence covers."""
    found = _words(evidence_text)
    matched = []
    for task in tasks:
        if task.status in ("completed", "deleted"):
            continue
        wanted = _words(
            " ".join([task.subject, task.expected_output, task.required_capability, task.evidence_requirements])
        )
        if wanted and len(wanted & found) / len(wanted) >= 0.5:
            matched.append(task)
    return matched


def record_evidence(
    claim: str,
    method: str,
    tool_call_ids: list[str],
    metrics: dict[str, Any] | None = None,
    sample_size: int | None = None,
    limitations: list[str] | None = None,
    confidence: Literal["high", "medium", "low"] = "medium",
    supersedes: list[str] | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Record a conclusion with the tool calls that back it (retract_evidence withdraws one). Every
    claim in the answer needs evidence.

    Args:
        claim: The conclusion, with its key numbers.
        method: The method run (e.g. "Welch t-test").
        tool_call_ids: Ids of the calls that computed it.
        metrics: Key numbers, name -> value.
        sample_size: Rows behind it.
        limitations: What could make it wrong.
        confidence: high, medium or low.
        supersedes: Ids of the evidence (or its record_evidence calls) this corrects.
    """
    scope = run_scope(ctx)
    session, run_id = scope.need_session(), scope.need_run_id()
    found = [run_tool_call(session, run_id, cid) for cid in tool_call_ids]
    unknown = [cid for cid, call in zip(tool_call_ids, found) if call is None]
    if not tool_call_ids or unknown:
        raise ToolError(
            "invalid_evidence",
            f"Evidence must cite tool calls of this run; unknown ids: {unknown}.",
            hint="Pass the ids of the tool calls whose results support the claim.",
        )
    calls = [call for call in found if call is not None]  # all of them: none is unknown
    replaced = [_evidence_id(session, run_id, ref) for ref in supersedes or []]
    metrics = dict(metrics or {})
    if not metrics:  # fall back to the numbers the cited tools computed
        for call in calls:
            metrics.update({k: v for k, v in (call.metrics or {}).items() if k != "duration_ms"})
    limitations = list(limitations or [])
    level, reasons = downgrade_confidence(confidence, sample_size, metrics, limitations, method, calls)
    item = add_evidence(
        session,
        workspace_id=scope.need_workspace_id(),
        run_id=run_id,
        claim=claim,
        method=method,
        result_summary="",  # the claim states the result (one field for the model to fill, not two)
        metrics=metrics,
        sample_size=sample_size,
        confidence=level,
        limitations=limitations,
        tool_call_ids=list(tool_call_ids),
    )
    completed = complete_tasks(session, run_id, item)
    scope.send("evidence", evidence_dict(item))
    for task in completed:
        scope.send("task", task_dict(task))
    withdraw(session, run_id, replaced, by=item.id, reason="superseded")
    lines = [f"[evidence] recorded {item.id} (confidence {level})"]
    if replaced:
        lines.append("supersedes " + ", ".join(replaced))
    if reasons:
        lines.append(f"confidence lowered from high: {', '.join(reasons)}")
    if completed:
        lines.append("completed tasks: " + ", ".join(t.id for t in completed))
    return ToolResult(
        text="\n".join(lines),
        metrics={"evidence_id": item.id, "confidence": level},
        payload={"evidence": evidence_dict(item)},
    )


def complete_tasks(session: Session, run_id: str, item: Evidence) -> list[Task]:
    # The cited tools count as part of the evidence: a task that needs "compare_groups" is
    # satisfied by evidence computed by compare_groups.
    tools = [call.tool for cid in item.tool_call_ids if (call := run_tool_call(session, run_id, cid))]
    text = " ".join([item.claim, item.result_summary, item.method, *map(str, item.metrics), *tools])
    done = matching_tasks(run_tasks(session, run_id), text)
    for task in done:
        task.status, task.completed_by, task.evidence_id = "completed", "evidence", item.id
        task.result_summary, task.confidence = item.result_summary or item.claim, item.confidence
        mark_task_updated(task)
    return done


def retract_evidence(evidence_id: str, reason: str = "", ctx: ToolContext | None = None) -> ToolResult:
    """Withdraw recorded evidence that was wrong (e.g. it failed verification); it no longer counts.

    Args:
        evidence_id: The evidence id, or the id of the record_evidence call that recorded it.
        reason: Why it is withdrawn.
    """
    scope = run_scope(ctx)
    session, run_id = scope.need_session(), scope.need_run_id()
    found = _evidence_id(session, run_id, evidence_id)
    withdraw(session, run_id, [found], by=None, reason=reason or "retracted")
    scope.send("evidence_withdrawn", {"id": found, "reason": reason})
    return ToolResult(
        text=f"[evidence] retracted {found}; it no longer backs the answer.", metrics={"evidence_id": found}
    )


def _evidence_id(session: Session, run_id: str, ref: str) -> str:
    """An evidence id of this run, from the id itself or the record_evidence call that made it."""
    ref = str(ref).strip()
    item = evidence_by_id(session, ref)
    if item is not None and item.run_id == run_id:
        return item.id
    call = run_tool_call(session, run_id, ref)
    found = (call.metrics or {}).get("evidence_id") if call is not None and call.tool == "record_evidence" else None
    if found:
        return str(found)
    raise ToolError(
        "evidence_not_found",
        f"No evidence {ref!r} in this run.",
        hint="Use the id from '[evidence] recorded <id>' or the id of that record_evidence call.",
    )


def withdraw(session: Session, run_id: str, ids: list[str], by: str | None, reason: str) -> None:
    """Mark evidence as superseded (by a newer record) or retracted, in the run's verification state
    (claim verification then stops counting it; app.agent.verification)."""
    if not ids:
        return
    run = require_run(session, run_id)
    state = dict(run.state or {})
    verification = dict(state.get("verification") or {"results": []})
    withdrawn = dict(verification.get("withdrawn") or {})
    withdrawn.update({eid: {"by": by, "reason": reason} for eid in ids})
    run.state = {**state, "verification": {**verification, "withdrawn": withdrawn}}
