"""Run evaluation tasks for real and measure them.

Each task is one run through the same path as `verity analyze`: a workspace, the task's files
added with `add_dataset`, `RunService.create`, `execute` in this thread, clarification questions
answered from the task's pre-set answers, the Report row read back. Nothing is simulated: every
number here is read from the run's rows (tool_calls, events, reports) after it ends.

A task that cannot finish (a file that will not read, a question nobody pre-answered, a harness
error) becomes a failed result with a reason; the other tasks still run.
"""

from __future__ import annotations

import copy
import logging
import time
from pathlib import Path
from typing import Any, Callable

from sqlalchemy import select

from app.agent import answer_question, open_questions
from app.cli_questions import external_id
from app.config import REPO_ROOT, Settings
from app.db.models import Event, Question, Report, Run, ToolCall, Workspace
from app.db.session import open_database
from app.evaluation import facts as fact_checks
from app.evaluation.tasks import EvalTask
from app.ingest.bounded import load_table_bounded
from app.ingest.errors import IngestError
from app.ingest.pipeline import LoadedTable
from app.runs import RunService
from app.workspaces import add_dataset, create_workspace

log = logging.getLogger(__name__)

MAX_RESUMES = 10  # each resume answers at least one question; a run that keeps asking stops here
# Refusals by the budget gate (budget.py): the call was over a cap or banned, never executed.
BUDGET_REFUSALS = ("budget_exhausted", "banned_call", "python_budget_exhausted")
RETRY_PURPOSES = ("reemit", "length-retry")  # model requests that repeat an unusable reply

Progress = Callable[[int, int, dict[str, Any]], None]
Reads = dict[tuple[str, int, int], LoadedTable]  # a task file (path, size, mtime) -> its table
# The tables read_once keeps for the tasks after: the checkout's sets hold ~5 MB in all; a task set of
# big files keeps what fits and reads the others each time, as before.
KEEP_READS_BYTES = 256 * 1024 * 1024


def run_tasks(
    tasks: list[EvalTask], settings: Settings, root: Path = REPO_ROOT, progress: Progress | None = None
) -> list[dict[str, Any]]:
    """Run the tasks in order against one database under `settings.data_dir`; one result each."""
    db = open_database(settings)
    service = RunService(db, settings)
    results = []
    reads: Reads = {}  # a file several tasks name is read once (the task set: 70 files, 26 distinct)
    try:
        for i, task in enumerate(tasks):
            results.append(run_task(service, task, root, reads))
            if progress:
                progress(i + 1, len(tasks), results[-1])
    finally:
        service.shutdown()
        db.engine.dispose()
    return results


def run_task(service: RunService, task: EvalTask, root: Path = REPO_ROOT, reads: Reads | None = None) -> dict[str, Any]:
    """One task, start to end: the run, its metrics and the facts it shows. `reads`: the tables of the
    files earlier tasks of this evaluation read (read_once), added to as this task reads its own."""
    started = time.perf_counter()
    run_id = None
    try:
        run_id = start_run(service, task, root, reads)
        settle(service, run_id, task.answers)
        measured = measure(service, run_id)
    except IngestError as exc:
        measured = failed(f"{exc.category}: {exc.message}")
    except Exception as exc:  # a harness bug must not end the whole evaluation: it is this task's failure
        log.debug("evaluation task %s failed", task.id, exc_info=True)
        measured = measure_after_error(service, run_id, f"{type(exc).__name__}: {exc}")
    found = [
        fact
        for fact in task.facts
        if fact_checks.check(fact, measured["report"], measured["calls"], measured.get("recorded"))
    ]
    return {
        "id": task.id,
        "language": task.language or "en",
        "status": measured["status"],
        "reason": measured["reason"],
        "facts_found": len(found),
        "facts_total": len(task.facts),
        "fully_right": len(found) == len(task.facts),
        "missed": [fact_checks.describe(f) for f in task.facts if f not in found],
        **measured["metrics"],
        "wall_s": round(time.perf_counter() - started, 2),
        "run_id": run_id,
    }


def start_run(service: RunService, task: EvalTask, root: Path, reads: Reads | None = None) -> str:
    """The workspace with the task's files and rules; its earlier questions (`before`) run first,
    each to its end, so the scored question is a real follow-up. Returns the scored run's id."""
    with service.db.session() as session:
        workspace = create_workspace(session, f"eval: {task.id}")
        workspace.rules = task.rules
        for path in task.paths(root):
            if not path.is_file():
                raise IngestError(
                    "empty_file",
                    f"File not found: {path}",
                    "Check the task's files.",
                    f"找不到文件：{path}",
                    "请检查评测任务列出的文件。",
                )
            table = read_once(reads, path, service.settings) if reads is not None else None
            add_dataset(session, service.settings, workspace, path, path.name, table=table)
        workspace_id = workspace.id
    for earlier in task.before:
        settle(service, create_run(service, workspace_id, earlier, task.language), task.answers)
    return create_run(service, workspace_id, task.question, task.language)


def read_once(reads: Reads, path: Path, settings: Settings) -> LoadedTable:
    """The task file's table: read (in its bounded child, as an upload is) the first time a task of the
    evaluation names it, and the same table for each later task that names the same, unchanged file
    (the same bytes read the same way give the same table; retail_sales.xlsx is in 16 tasks). Each
    task's dataset gets its own copy of the description; the frame is only written out (add_dataset
    stores the working copy the run reads). A file that does not read raises, every time."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if (table := reads.get(key)) is None:
        table = load_table_bounded(path, settings=settings)
        kept = sum(int(t.frame.memory_usage(deep=False).sum()) for t in reads.values())
        if kept + int(table.frame.memory_usage(deep=False).sum()) <= KEEP_READS_BYTES:
            reads[key] = table
    return LoadedTable(table.frame, copy.deepcopy(table.info), dict(table.pii))


def create_run(service: RunService, workspace_id: str, question: str, language: str | None) -> str:
    with service.db.session() as session:
        return service.create(session, session.get_one(Workspace, workspace_id), question, language).id


def settle(service: RunService, run_id: str, answers: dict[str, list[str]]) -> None:
    """Execute the run; while it waits on questions the task answers, answer and resume it. A
    question the task does not answer leaves the run waiting (scored as a failure, never a hang)."""
    service.execute(run_id)
    for _ in range(MAX_RESUMES):
        with service.db.session() as session:
            run = session.get_one(Run, run_id)
            pending = open_questions(session, run_id) if run.status == "waiting" else []
            given = [(q, value) for q in pending if (value := given_answer(q, answers))]
            if not pending or len(given) < len(pending):
                return
            for question, value in given:
                answer_question(session, question, value if question.kind == "multi" else value[0])
            run.status = "queued"  # as resume_after_answer does, but executed here, not in a thread
        service.execute(run_id)


def given_answer(question: Question, answers: dict[str, list[str]]) -> list[str] | None:
    """The task's answer to a question: by its external id, its own id, or the topic's first part
    ("scope" answers "scope.retail_sales", whichever file the gate names)."""
    topic = external_id(question)
    return answers.get(topic) or answers.get(question.id) or answers.get(topic.split(".")[0])


# --- metrics ---------------------------------------------------------------------------------
def measure(service: RunService, run_id: str) -> dict[str, Any]:
    """Status, report and process metrics of a run that has stopped (done, failed or waiting)."""
    with service.db.session() as session:
        run = session.get_one(Run, run_id)
        calls = [
            {
                "id": c.id,
                "tool": c.tool,
                "ok": bool(c.ok),
                "error": (c.error or {}).get("error"),
                "arguments": c.arguments or {},
            }
            for c in session.scalars(select(ToolCall).where(ToolCall.run_id == run_id))
        ]
        versions = [
            int((e.data or {}).get("rows") or 0)
            for e in session.scalars(select(Event).where(Event.run_id == run_id, Event.kind == "dataset_version"))
        ]
        asked = [q.topic or "" for q in session.scalars(select(Question).where(Question.run_id == run_id))]
        events = list(
            session.scalars(
                select(Event)
                .where(Event.run_id == run_id, Event.kind.in_(("budget", "span", "model_reply")))
                .order_by(Event.id)
            )
        )
        report = None
        if run.status == "done":
            row = session.scalars(
                select(Report).where(Report.run_id == run_id).order_by(Report.created_at.desc())
            ).first()
            report = row.content if row else None
        reason = None
        if run.status == "waiting":
            reason = "waiting for answers: " + ", ".join(external_id(q) for q in open_questions(session, run_id))
        elif run.status != "done":
            reason = run.error or run.status
        return {
            "status": run.status,
            "reason": reason,
            "report": report,
            "calls": calls,
            "recorded": {"versions": versions, "asked": asked},
            "metrics": process_metrics(calls, events, report, run),
        }


def process_metrics(
    calls: list[dict[str, Any]], events: list[Event], report: dict[str, Any] | None, run: Run
) -> dict[str, Any]:
    ok = sum(c["ok"] for c in calls)
    budgets = [e.data or {} for e in events if e.kind == "budget"]
    spans = [e.data or {} for e in events if e.kind == "span"]
    last = budgets[-1] if budgets else {}
    return {
        "model": f"{run.model_kind}:{run.model_name}",
        "intent": run.intent,
        "tool_calls": len(calls),
        "tool_ok": ok,
        "tool_success_rate": round(ok / len(calls), 4) if calls else None,
        # a turn that ran into a cap, plus every call the gate refused for being over one
        "budget_overruns": sum(bool(b.get("spent")) for b in budgets)
        + sum(c["error"] in BUDGET_REFUSALS for c in calls),
        "budget_warnings": sum(len(b.get("notes") or []) for b in budgets),
        # rounds carry over a pause (budget.restore), so the last snapshot counts the whole run
        "steps": int(last.get("rounds") or sum(e.kind == "model_reply" for e in events)),
        "model_calls": len(spans),
        "retries": sum(s.get("purpose") in RETRY_PURPOSES for s in spans)
        + sum(max(0, int(s.get("http_attempts") or 0) - 1) for s in spans),
        "evidence": len(report.get("evidence") or []) if report else 0,
        "unverified_numbers": len(report.get("unverified_numbers") or []) if report else 0,
    }


def failed(reason: str) -> dict[str, Any]:
    """A task that never got a run (its files did not read): nothing ran, nothing to count."""
    empty = {
        "model": None,
        "intent": None,
        "tool_calls": 0,
        "tool_ok": 0,
        "tool_success_rate": None,
        "budget_overruns": 0,
        "budget_warnings": 0,
        "steps": 0,
        "model_calls": 0,
        "retries": 0,
        "evidence": 0,
        "unverified_numbers": 0,
    }
    return {"status": "failed", "reason": reason, "report": None, "calls": [], "metrics": empty}


def measure_after_error(service: RunService, run_id: str | None, reason: str) -> dict[str, Any]:
    """What the run recorded before the error (its tool calls still count), marked failed."""
    if run_id is None:
        return failed(reason)
    try:
        measured = measure(service, run_id)
    except Exception:  # the database itself is the problem: report the first error only
        return failed(reason)
    return {**measured, "status": "failed", "reason": reason, "report": None}
