"""Tasks: the plan the user sees. They live in the database, so they survive compaction and
restarts. Tool functions here are registered in the `core` group (harness_tools.py)."""

from __future__ import annotations

from typing import Any, Literal

from analysis_tools import ToolContext, ToolError, ToolResult
from app.agent.run_scope import run_scope
from app.agent.store import Session, Task, add_task, mark_task_updated, run_tasks, task_by_id

STATUSES = ("pending", "in_progress", "completed", "deleted")


def task_dict(task: Task) -> dict[str, Any]:
    return {
        "id": task.id,
        "subject": task.subject,
        "status": task.status,
        "completed_by": task.completed_by,
        "blocked_by": list(task.blocked_by or []),
        "expected_output": task.expected_output,
        "evidence_id": task.evidence_id,
        "result_summary": task.result_summary,
        "confidence": task.confidence,
    }


def _session(ctx: ToolContext | None) -> Session:
    return run_scope(ctx).need_session()


def _find(ctx: ToolContext | None, task_id: str) -> Task:
    scope = run_scope(ctx)
    task = task_by_id(scope.need_session(), task_id)
    if task is None or task.workspace_id != scope.need_workspace_id():
        ids = [t.id for t in run_tasks(scope.need_session(), scope.need_run_id())]
        raise ToolError("task_not_found", f"No task with id {task_id!r}.", hint=f"Existing task ids: {ids}")
    return task


def _tasks_text(tasks: list[Task]) -> str:
    return (
        "\n".join(
            f"- {t.id} [{t.status}] {t.subject}" + (f" (blocked by {t.blocked_by})" if t.blocked_by else "")
            for t in tasks
        )
        or "(no tasks)"
    )


def task_create(
    subject: str,
    description: str = "",
    expected_output: str = "",
    required_capability: str = "",
    evidence_requirements: str = "",
    blocked_by: list[str] | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Add a step to the analysis plan the user sees. Evidence that matches the task completes it.

    Args:
        subject: Short title, in the user's language.
        description: What the step does.
        expected_output: What it should establish (e.g. "whether revenue differs by region").
        required_capability: Kind of method (e.g. "group comparison", "regression").
        evidence_requirements: Evidence that completes it.
        blocked_by: Ids of tasks that must finish first.
    """
    session = _session(ctx)
    for dep in blocked_by or []:
        _find(ctx, dep)
    scope = run_scope(ctx)
    task = add_task(
        session,
        workspace_id=scope.need_workspace_id(),
        run_id=scope.need_run_id(),
        subject=subject,
        description=description,
        expected_output=expected_output,
        required_capability=required_capability,
        evidence_requirements=evidence_requirements,
        blocked_by=list(blocked_by or []),
    )
    scope.send("task", task_dict(task))
    return ToolResult(
        text=f"[task] created {task.id}: {subject}", metrics={"task_id": task.id}, payload={"task": task_dict(task)}
    )


def task_update(
    task_id: str,
    status: Literal["pending", "in_progress", "completed", "deleted"] | None = None,
    subject: str | None = None,
    result_summary: str | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Change a task's status or subject. A task blocked by unfinished tasks cannot start.

    Args:
        task_id: The task's id.
        status: New status: pending, in_progress, completed or deleted.
        subject: New title.
        result_summary: What was found, when completing.
    """
    task = _find(ctx, task_id)
    if status in ("in_progress", "completed"):
        session = _session(ctx)
        open_deps = [d for d in task.blocked_by or [] if (dep := task_by_id(session, d)) and dep.status != "completed"]
        if open_deps:
            raise ToolError(
                "task_blocked",
                f"Task {task_id} is blocked by unfinished tasks {open_deps}.",
                hint="Complete the blocking tasks first.",
            )
    if status:
        task.status = status
        if status == "completed" and not task.completed_by:
            task.completed_by = "model"
    if subject:
        task.subject = subject
    if result_summary:
        task.result_summary = result_summary
    mark_task_updated(task)
    run_scope(ctx).send("task", task_dict(task))
    return ToolResult(text=f"[task] {task.id} is {task.status}: {task.subject}", payload={"task": task_dict(task)})


def task_get(task_id: str, ctx: ToolContext | None = None) -> ToolResult:
    """Show one task with its details.

    Args:
        task_id: The task's id.
    """
    task = _find(ctx, task_id)
    return ToolResult(
        text="[task]\n" + "\n".join(f"{k}: {v}" for k, v in task_dict(task).items()), payload={"task": task_dict(task)}
    )


def task_list(ctx: ToolContext | None = None) -> ToolResult:
    """List the tasks of the current analysis plan with their status."""
    tasks = run_tasks(_session(ctx), run_scope(ctx).need_run_id())
    return ToolResult(text="[tasks]\n" + _tasks_text(tasks), payload={"tasks": [task_dict(t) for t in tasks]})


# --- the stale-task reminder (SPEC §8) ---------------------------------------------------------
STALE_ROUNDS = 3
STALE_REMINDER = (
    "[harness] Reminder: no task of the plan was updated for {n} rounds. Open tasks:\n{tasks}\n"
    "Record evidence for what you found (it completes matching tasks), update or delete tasks that "
    "no longer apply, or answer."
)


def stale_task_reminder(
    session: Session, run_id: str, rounds: int, state: dict[str, Any], stale_after: int = STALE_ROUNDS
) -> str | None:
    """A reminder when tasks are open and none was updated for `stale_after` rounds.

    `state` (kept in `Run.state["task_watch"]`) holds the tasks' last seen fingerprint and the round it
    changed; a reminder restarts the count, so it comes back only after another quiet stretch."""
    tasks = run_tasks(session, run_id)
    open_tasks = [t for t in tasks if t.status not in ("completed", "deleted")]
    fingerprint = "|".join(f"{t.id}:{t.status}:{t.updated_at}" for t in tasks)
    if fingerprint != state.get("fingerprint"):
        state.update(fingerprint=fingerprint, since=rounds)
        return None
    if not open_tasks or rounds - state.get("since", rounds) < stale_after:
        return None
    state["since"] = rounds
    return STALE_REMINDER.format(n=stale_after, tasks=_tasks_text(open_tasks))
