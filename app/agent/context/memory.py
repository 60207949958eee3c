"""Memory (SPEC §6): what earlier runs of the workspace concluded, injected at the memory tier,
the weakest guidance above the data: it may be stale. Each finding names the run it came from,
and says so when the workspace's data changed after it was found (a new upload or version)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from app.agent.context.tiers import Item
from app.agent.store import Evidence, Run, Session, earlier_evidence
from app.translations import CATALOG

STALE_NOTE = CATALOG["report.stale_finding"]["en"]  # the report says it in its own language


def earlier_findings(
    session: Session, workspace_id: str, run_id: str | None, datasets: Iterable[Any], budget_chars: int = 1_500
) -> tuple[Item, ...]:
    """The newest findings of other runs that fit `budget_chars`, oldest first."""
    if budget_chars <= 0:
        return ()
    rows = earlier_evidence(session, workspace_id, excluding_run_id=run_id, limit=50)
    data_changed = max((_aware(d.created_at) for d in datasets), default=None)
    items, used = [], 0
    for evidence, run in rows:
        if _withdrawn_or_failed(run, evidence.id):  # a claim the run took back (or that failed) is no finding
            continue
        text = finding_text(evidence, stale=data_changed is not None and data_changed > _aware(run.created_at))
        if used + len(text) > budget_chars:
            break
        used += len(text)
        question = " ".join(run.question.split())
        items.append(
            Item(
                f"{_aware(run.created_at):%Y-%m-%d} · {question[:60]}{'…' if len(question) > 60 else ''}",
                "memory",
                text,
            )
        )
    return tuple(reversed(items))


def _withdrawn_or_failed(run: Run, evidence_id: str) -> bool:
    verification = (run.state or {}).get("verification") or {}
    statuses = {r.get("evidence_id"): r.get("status") for r in verification.get("results", [])}
    return evidence_id in (verification.get("withdrawn") or {}) or statuses.get(evidence_id) in (
        "failed",
        "superseded",
        "retracted",
    )


def finding_text(evidence: Evidence, stale: bool) -> str:
    how = "; ".join(
        part for part in (evidence.method, f"n={evidence.sample_size}" if evidence.sample_size else "") if part
    )
    text = " ".join(evidence.claim.split()) + (f" ({how})" if how else "")
    return f"{text} [{STALE_NOTE}]" if stale else text


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
