"""The harness's records besides what the recorder writes as it happens (recorder.py: messages,
tool calls and events of a run in flight): every query and write of the harness's tools and
mechanisms, as small functions grouped by record kind.

The rest of the harness reads and writes the database only through this module and the recorder,
so a change of storage touches these two files. The row types a module needs for annotations or
construction are re-exported here too (`Session` included). What a record *means* (what a finding
says, when a task is stale, which answer counts as yes) stays with the module that uses it; this
module only finds, adds and stamps rows.

A leaf of the harness: it imports nothing of `app.agent`, so any module of it can import the store.
"""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Event, Evidence, Message, Question, Run, Task, ToolCall, utcnow

__all__ = [
    "Event",
    "Evidence",
    "Message",
    "Question",
    "Run",
    "Session",
    "Task",
    "ToolCall",
    "add_evidence",
    "add_question",
    "add_summary_message",
    "add_task",
    "answered_question",
    "answered_questions",
    "earlier_evidence",
    "evidence_by_id",
    "latest_summary_message",
    "mark_task_updated",
    "open_questions",
    "previous_finished_run",
    "question_by_id",
    "question_for_call",
    "require_run",
    "run_by_id",
    "run_events",
    "run_evidence",
    "run_has_evidence",
    "run_has_tasks",
    "run_messages",
    "run_tasks",
    "run_tool_call",
    "run_tool_calls",
    "save_answer",
    "task_by_id",
]


_Row = TypeVar("_Row", Message, Question, Task, Evidence)


def _stored(session: Session, row: _Row) -> _Row:
    """Add a new row and flush it, so it has its id (and its defaults) before the caller uses it."""
    session.add(row)
    session.flush()
    return row


# --- runs ------------------------------------------------------------------------------------------
def run_by_id(session: Session, run_id: str) -> Run | None:
    """The run, or None when there is no such run (a reader that can do without one)."""
    return session.get(Run, run_id)


def require_run(session: Session, run_id: str) -> Run:
    """The run a mechanism works for; its absence is a harness bug, said plainly."""
    run = session.get(Run, run_id)
    if run is None:
        raise LookupError(f"there is no run {run_id!r}")
    return run


def previous_finished_run(session: Session, run: Run) -> Run | None:
    """The workspace's newest finished (`done`) run created before `run`."""
    return session.scalars(
        select(Run)
        .where(
            Run.workspace_id == run.workspace_id,
            Run.id != run.id,
            Run.status == "done",
            Run.created_at < run.created_at,
        )
        .order_by(Run.created_at.desc())
    ).first()


# --- messages (the recorder writes a run's own; these are read back, or have no run) ---------------
def run_messages(session: Session, run_id: str) -> list[Message]:
    """The run's messages in the order they were written."""
    return list(session.scalars(select(Message).where(Message.run_id == run_id).order_by(Message.id)))


def latest_summary_message(session: Session, workspace_id: str, name_prefix: str) -> Message | None:
    """The workspace's newest message without a run whose name starts with `name_prefix` (a
    compaction summary: conversation.py)."""
    return session.scalars(
        select(Message)
        .where(
            Message.workspace_id == workspace_id,
            Message.run_id.is_(None),
            Message.name.like(f"{name_prefix}%"),
        )
        .order_by(Message.id.desc())
    ).first()


def add_summary_message(session: Session, workspace_id: str, content: str, name: str) -> Message:
    """Store a workspace-level user message with no run (a compaction summary), flushed."""
    return _stored(session, Message(workspace_id=workspace_id, run_id=None, role="user", content=content, name=name))


# --- questions (clarification, clarify.py) ---------------------------------------------------------
def question_by_id(session: Session, question_id: str) -> Question | None:
    return session.get(Question, question_id)


def answered_questions(session: Session, workspace_id: str) -> list[Question]:
    """The workspace's answered questions, oldest first: its confirmed definitions."""
    return list(
        session.scalars(
            select(Question)
            .where(Question.workspace_id == workspace_id, Question.answer.is_not(None))
            .order_by(Question.created_at)
        )
    )


def answered_question(session: Session, workspace_id: str, topic: str) -> Question | None:
    """The newest answered question of the workspace on `topic`."""
    return session.scalars(
        select(Question)
        .where(Question.workspace_id == workspace_id, Question.topic == topic, Question.answer.is_not(None))
        .order_by(Question.answered_at.desc())
    ).first()


def open_questions(session: Session, run_id: str) -> list[Question]:
    """The run's questions still without an answer, oldest first."""
    return list(
        session.scalars(
            select(Question).where(Question.run_id == run_id, Question.answer.is_(None)).order_by(Question.created_at)
        )
    )


def question_for_call(session: Session, run_id: str, call_id: str) -> Question | None:
    """The question the run's `ask_user_question` call `call_id` stored."""
    return session.scalars(select(Question).where(Question.run_id == run_id, Question.tool_call_id == call_id)).first()


def add_question(
    session: Session,
    *,
    workspace_id: str,
    run_id: str,
    kind: str,
    question: str,
    options: list[dict[str, str]],
    reason: str,
    topic: str,
    tool_call_id: str | None,
) -> Question:
    """Store a question for the user, flushed (it has its id)."""
    return _stored(
        session,
        Question(
            workspace_id=workspace_id,
            run_id=run_id,
            kind=kind,
            question=question,
            options=options,
            reason=reason,
            topic=topic,
            tool_call_id=tool_call_id,
        ),
    )


def save_answer(session: Session, question: Question, answer: Any) -> Question:
    """Store the user's answer with the moment it came, flushed."""
    question.answer, question.answered_at = answer, utcnow()
    session.flush()
    return question


# --- tasks (tasks.py, and the ones evidence completes) ---------------------------------------------
def task_by_id(session: Session, task_id: str) -> Task | None:
    return session.get(Task, task_id)


def run_tasks(session: Session, run_id: str) -> list[Task]:
    """The run's tasks that are not deleted, in the order they were made."""
    return list(
        session.scalars(select(Task).where(Task.run_id == run_id, Task.status != "deleted").order_by(Task.created_at))
    )


def run_has_tasks(session: Session, run_id: str) -> bool:
    return session.scalar(select(Task.id).where(Task.run_id == run_id).limit(1)) is not None


def add_task(
    session: Session,
    *,
    workspace_id: str,
    run_id: str,
    subject: str,
    description: str,
    expected_output: str,
    required_capability: str,
    evidence_requirements: str,
    blocked_by: list[str],
) -> Task:
    """Store a new task, flushed (it has its id)."""
    return _stored(
        session,
        Task(
            workspace_id=workspace_id,
            run_id=run_id,
            subject=subject,
            description=description,
            expected_output=expected_output,
            required_capability=required_capability,
            evidence_requirements=evidence_requirements,
            blocked_by=blocked_by,
        ),
    )


def mark_task_updated(task: Task) -> None:
    """Stamp a change of the task now: the stale-task watch reads `updated_at` before any flush,
    so the column's own on-update stamp would come too late."""
    task.updated_at = utcnow()


# --- evidence (evidence.py, verification, memory) --------------------------------------------------
def evidence_by_id(session: Session, evidence_id: str) -> Evidence | None:
    return session.get(Evidence, evidence_id)


def run_evidence(session: Session, run_id: str) -> list[Evidence]:
    """The run's evidence in the order it was recorded."""
    return list(session.scalars(select(Evidence).where(Evidence.run_id == run_id).order_by(Evidence.created_at)))


def run_has_evidence(session: Session, run_id: str) -> bool:
    return session.scalar(select(Evidence.id).where(Evidence.run_id == run_id).limit(1)) is not None


def earlier_evidence(
    session: Session, workspace_id: str, excluding_run_id: str | None, limit: int = 50
) -> list[tuple[Evidence, Run]]:
    """The workspace's newest evidence of runs other than `excluding_run_id`, each with its run,
    newest first."""
    return list(
        session.execute(
            select(Evidence, Run)
            .join(Run, Evidence.run_id == Run.id)
            .where(Evidence.workspace_id == workspace_id, Evidence.run_id != (excluding_run_id or ""))
            .order_by(Evidence.created_at.desc())
            .limit(limit)
        ).tuples()
    )


def add_evidence(
    session: Session,
    *,
    workspace_id: str,
    run_id: str,
    claim: str,
    method: str,
    result_summary: str,
    metrics: dict[str, Any],
    sample_size: int | None,
    confidence: str,
    limitations: list[str],
    tool_call_ids: list[str],
) -> Evidence:
    """Store an evidence item, flushed (it has its id)."""
    return _stored(
        session,
        Evidence(
            workspace_id=workspace_id,
            run_id=run_id,
            claim=claim,
            method=method,
            result_summary=result_summary,
            metrics=metrics,
            sample_size=sample_size,
            confidence=confidence,
            limitations=limitations,
            tool_call_ids=tool_call_ids,
        ),
    )


# --- tool calls (written by the recorder) ----------------------------------------------------------
def run_tool_call(session: Session, run_id: str, call_id: str) -> ToolCall | None:
    """The run's tool call `call_id` (a call id is unique only within its run)."""
    return session.get(ToolCall, (run_id, call_id))


def run_tool_calls(session: Session, run_id: str) -> list[ToolCall]:
    return list(session.scalars(select(ToolCall).where(ToolCall.run_id == run_id)))


# --- events (written by the recorder) --------------------------------------------------------------
def run_events(session: Session, run_id: str) -> list[Event]:
    """The run's events in the order they were emitted."""
    return list(session.scalars(select(Event).where(Event.run_id == run_id).order_by(Event.id)))
