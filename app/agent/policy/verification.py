"""Claim verification between tool rounds (SPEC §8): the harness's hooks.

After each round of tool calls, when gated (analysis/deep intent, new evidence since the last
check), every new evidence item is checked against the tool calls it cites (claims.py: its
numbers, found in the cited outputs at the precision written; its wording, against the methods run:
claim_wording.py). The results update the hypothesis set and the synthesis policy (hypotheses.py);
both are kept in `Run.state`, emitted as a `verification` event and injected into the next round
as a harness block. The final answer is checked in answer_check.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.agent.policy.claim_wording import confirmed_experiment
from app.agent.policy.claims import PARTLY, resolved_results, verify_evidence, withdrawn_evidence
from app.agent.policy.hypotheses import hypothesis_set, synthesis_policy
from app.agent.run_scope import run_scope
from app.agent.store import Run, Session, run_by_id, run_evidence, run_tool_call
from app.agent.tools.tasks import stale_task_reminder
from app.workspaces import active_datasets

GATED_TIERS = ("analysis", "deep")


# --- the harness hooks ----------------------------------------------------------------------------------
def is_gated(turn: Any) -> bool:
    intent = getattr(turn, "intent", None)
    return intent is None or getattr(intent, "tier", "analysis") in GATED_TIERS


def turn_run(turn: Any) -> tuple[Session, Run] | None:
    """The run the turn works for, with its session; None outside a run (a toolbox on its own)."""
    scope = run_scope(turn.toolbox.context, missing_ok=True)
    session = scope.session
    if session is None or not scope.run_id:
        return None
    run = run_by_id(session, scope.run_id)
    return None if run is None else (session, run)


def verify_run(
    session: Session, run: Run, emit: Callable[[str, dict[str, Any]], None], final: bool = False
) -> dict[str, Any] | None:
    """Check the evidence recorded since the last check; update and persist hypotheses and policy.
    Returns the verification state, or None when there was nothing new to check."""
    state = dict(run.state or {})
    verification = dict(state.get("verification") or {"results": []})
    checked = {r["evidence_id"] for r in verification["results"]}
    items = run_evidence(session, run.id)
    new = [e for e in items if e.id not in checked]
    withdrawn = withdrawn_evidence(state)
    if not new and not final and sorted(withdrawn) == verification.get("applied_withdrawals", []):
        return None
    results = [dict(r) for r in verification["results"]]
    experiment = confirmed_experiment(session, run) if new else bool(verification.get("experiment"))
    rows = [d.rows for d in active_datasets(session, run.workspace_id) if d.rows] if new else []
    for item in new:
        calls = [c for cid in item.tool_call_ids or [] if (c := run_tool_call(session, run.id, cid))]
        results.append(verify_evidence(item, calls, run.question or "", experiment, dataset_rows=rows))
    results = resolved_results(results, withdrawn)
    hypotheses = hypothesis_set(
        results, state.get("plan"), run.question, run.language, (state.get("intent") or {}).get("scope", "full")
    )
    policy = synthesis_policy(results, hypotheses, experiment)
    verification = {
        **verification,
        "results": results,
        "status": policy["verification"],
        "experiment": experiment,
        "checks": int(verification.get("checks", 0)) + (1 if new else 0),
        "applied_withdrawals": sorted(withdrawn),
    }
    run.state = {**state, "verification": verification, "hypotheses": hypotheses, "synthesis_policy": policy}
    emit(
        "verification",
        {
            "final": final,
            "checked": [e.id for e in new],
            "status": policy["verification"],
            "results": [r for r in results if r["evidence_id"] in {e.id for e in new}],
            "hypotheses": hypotheses["all"],
            "policy": policy,
        },
    )
    return run.state


def verification_block(state: dict[str, Any]) -> str:
    """The harness block for the next round: what failed, the hypotheses, the synthesis policy."""
    results, policy = state["verification"]["results"], state["synthesis_policy"]
    lines = []
    failed = [r for r in results if r["status"] == "failed"]
    partly = [r for r in results if r["status"] == PARTLY]
    for r in failed:
        lines.append(f"- evidence {r['evidence_id']} FAILED: " + "; ".join(i["detail"] for i in r["issues"]))
    for r in partly:
        lines.append(
            f"- evidence {r['evidence_id']} partly verified (its other numbers were found): "
            + "; ".join(i["detail"] for i in r["issues"])
        )
    passed = sum(r["status"] == "passed" for r in results)
    counts = {  # the counts that are not zero: "1 claim(s) passed." says all when all passed
        "claim(s) passed": passed,
        "partly verified": len(partly),
        "failed": len(failed),
        "corrected or withdrawn": len(results) - passed - len(partly) - len(failed),
    }
    lines.append("- " + (", ".join(f"{n} {what}" for what, n in counts.items() if n) or "0 claim(s) passed") + ".")
    if failed or partly:
        lines.append(
            "- Fix a failed claim with record_evidence(..., supersedes=[its id]) or withdraw it with "
            "retract_evidence; either way it stops counting against the answer."
        )
    if state["hypotheses"]["all"]:
        lines.append("Hypotheses:")
        lines += [f"- {h['id']} {h['role']} [{h['status']}]: {h['statement']}" for h in state["hypotheses"]["all"]]
    lines.append(f"Synthesis policy: recommendations {policy['recommendations']}, wording {policy['wording']}.")
    lines += [f"- {rule}" for rule in policy["rules"]]
    body = "\n".join(lines)
    return (
        f"[harness] Verification of the recorded claims against the tool outputs they cite.\n"
        f'<context source="harness-verification" tier="system">\n{body}\n</context>'
    )


def between_rounds(turn: Any) -> list[str]:
    """Harness notes due before the next model request: claim verification (gated) and the
    stale-task reminder. State lives in Run.state, so it survives a resume."""
    if (found := turn_run(turn)) is None:
        return []
    session, run = found
    notes = []
    if is_gated(turn) and (state := verify_run(session, run, turn.recorder.emit)) is not None:
        notes.append(verification_block(state))
    watch = dict((run.state or {}).get("task_watch") or {})
    reminder = stale_task_reminder(session, run.id, turn.budget.rounds, watch)
    run.state = {**(run.state or {}), "task_watch": watch}
    if reminder:
        turn.recorder.emit("task_reminder", {"round": turn.budget.rounds})
        notes.append(reminder)
    return notes
