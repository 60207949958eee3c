"""What a turn is told besides the data and the rules, gathered from the workspace: the user's
confirmed definitions (clarify.py), the knowledge relevant to the question (retrieval.py), the
findings of earlier runs (memory.py) and the upload warnings. context.py wraps each in its tier;
this module only collects, so the tiers stay free of the database and of the modules that feed them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.agent.context.memory import earlier_findings
from app.agent.context.retrieval import relevant_knowledge
from app.agent.policy.clarify import definition_text
from app.agent.store import Session, answered_questions
from app.knowledge import entries


def workspace_sources(
    session: Session,
    workspace_id: str,
    datasets: Iterable[Any],
    question: str = "",
    knowledge_chars: int = 3_000,
    run_id: str | None = None,
    memory_chars: int = 1_500,
) -> dict[str, Any]:
    """What a turn injects besides rules and dataset summaries: the user's confirmed definitions
    (answered clarification questions), the workspace knowledge relevant to the question (at most
    `knowledge_chars`), the findings of earlier runs (memory, at most `memory_chars`) and the
    upload warnings of each active dataset."""
    answered = answered_questions(session, workspace_id)
    datasets = list(datasets)
    definitions = tuple(definition_text(q) for q in answered)
    return {
        "definitions": definitions,
        "knowledge": relevant_knowledge(entries(session, workspace_id), question, knowledge_chars),
        "memory": earlier_findings(session, workspace_id, run_id, datasets, memory_chars),
        "dataset_warnings": {d.name: list((d.info or {}).get("warnings") or []) for d in datasets},
    }


def guidance_record(rules: str, sources: dict[str, Any]) -> dict[str, Any]:
    """What a turn was told besides the data (kept in Run.state["guidance"] for the report): the
    workspace rules, the user's confirmed definitions, the knowledge passages and the memories."""

    def items(key: str) -> list[dict[str, str]]:
        return [{"source": i.source, "text": i.text} for i in sources.get(key) or ()]

    return {
        "rules": [line.strip("-* ").strip() for line in (rules or "").splitlines() if line.strip("-* #").strip()],
        "definitions": list(sources.get("definitions") or ()),
        "knowledge": items("knowledge"),
        "memory": items("memory"),
    }
