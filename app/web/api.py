"""The JSON API of CONTRACT.md (the pages use the same services) and the progress event stream."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from functools import partial
from typing import Annotated, Any

import anyio
from fastapi import (
    APIRouter,
    File,
    Form,
    Header,
    HTTPException,
    Query,
    Request,
    UploadFile,
)
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field
from sqlalchemy import select

from app.agent import answer_question, evidence_dict, resume_after_answer, unmasked
from app.db.models import Dataset, Event, Evidence, Question, Run
from app.db.pseudonyms import workspace_book
from app.db.session import Database
from app.ingest.errors import IngestError
from app.runs import FINAL_STATUSES, TooManyRuns
from app.web.chat import question_language
from app.web.deps import (
    ApiError,
    CommittingRoute,
    CurrentUserDep,
    DbSessionDep,
    RunDep,
    RunServiceDep,
    SettingsDep,
    WorkspaceDep,
    owner_of,
)
from app.web.pages import dataset_body
from app.web.run_panel import open_question
from app.web.uploads import answer_when_read, error_status, ingest_upload, resume_if_stale, start_background_load
from app.workspaces import create_workspace

router = APIRouter(tags=["api"], route_class=CommittingRoute)

FINAL = FINAL_STATUSES
EVENT_BATCH = 200
SQLITE_QUIET_READ_S = 1.0  # a stream on SQLite reads this often without news (a local file: no server pays)
MAX_EVENT_ID = 2**63 - 1  # event ids are BIGINT-sized: a larger cursor is not an event of anything


class WorkspaceIn(BaseModel):
    name: str = Field("", max_length=200)


class MessageIn(BaseModel):
    text: str = Field(..., max_length=20_000)


class AnswerIn(BaseModel):
    question_id: str
    answer: str | list[str]


@router.get("/healthz")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.post("/api/workspaces", status_code=201)
def api_create_workspace(body: WorkspaceIn, session: DbSessionDep, user: CurrentUserDep) -> dict[str, str]:
    workspace = create_workspace(session, body.name, owner=owner_of(user))
    return {"id": workspace.id, "name": workspace.name}


@router.post("/api/workspaces/{ws}/files", status_code=201)
def api_upload(
    request: Request,
    workspace: WorkspaceDep,
    session: DbSessionDep,
    settings: SettingsDep,
    file: Annotated[UploadFile, File()],
    sheet: Annotated[str | None, Form()] = None,
) -> Any:
    """201 with the dataset. Every file is read in the background: one read within `upload_wait_s`
    is answered as read ("status": "ready"); a longer read answers at once ("status": "loading", with
    "progress": {"stage", "rows", "percent"} once it has begun; a big workbook's first rows with
    "partial": true); poll GET /api/workspaces/{ws}/datasets/{id} until "ready" or "failed"."""
    try:
        received = time.monotonic()  # the body is in: from here the request waits upload_wait_s at most
        dataset = ingest_upload(session, settings, workspace, file, sheet, request.app.state.db.leases)
        dataset = answer_when_read(
            request.app, session, dataset, start_background_load(request.app, dataset.id), received
        )
    except IngestError as error:
        raise ApiError.from_ingest(error_status(error), error) from error
    # the name as uploaded (the table was read from its stored, maybe shortened, name)
    return {"dataset": {**dataset_body(session, dataset, settings), "file": dataset.file_name}}


@router.get("/api/workspaces/{ws}/datasets/{dataset_id}")
def api_dataset(
    request: Request, workspace: WorkspaceDep, dataset_id: str, session: DbSessionDep, settings: SettingsDep
) -> dict[str, Any]:
    """One dataset as inspect --json plus "id", "name", "version", "status" (loading|ready|failed)
    and, when failed, "error": {"category", "message", "hint"}."""
    dataset = session.get(Dataset, dataset_id)
    if dataset is None or dataset.workspace_id != workspace.id:
        raise HTTPException(404, "dataset not found")
    resume_if_stale(request.app, session, dataset)
    return {"dataset": dataset_body(session, dataset, settings)}


@router.post("/api/workspaces/{ws}/messages", status_code=202)
def api_message(body: MessageIn, workspace: WorkspaceDep, session: DbSessionDep, runs: RunServiceDep) -> dict[str, str]:
    if not body.text.strip():
        raise ApiError(400, "invalid_request", "The message is empty.", "Write a question about your data.")
    try:
        # the question's own words decide its language, not the column names in it (as on the page)
        language = question_language(session, workspace.id, body.text, runs.settings.lang)
        run = runs.create(session, workspace, body.text.strip(), language)
    except TooManyRuns as exc:
        raise ApiError(429, "too_many_runs", str(exc), "Wait for one of them to finish, or stop one.") from exc
    session.commit()  # the worker thread reads the run in its own session
    runs.submit(run.id)
    return {"run_id": run.id}


@router.get("/api/runs/{run_id}")
def api_run(run: RunDep, session: DbSessionDep, settings: SettingsDep) -> dict[str, Any]:
    question = open_question(session, run.id)
    evidence = session.scalars(select(Evidence).where(Evidence.run_id == run.id).order_by(Evidence.created_at))
    # the owner reads the real values where the model wrote pseudonyms (question, evidence; privacy.py)
    owners = unmasked(
        {
            "question": question_dict(question) if question else None,
            "evidence": [evidence_dict(e) for e in evidence],
        },
        workspace_book(session, settings, run.workspace_id),
    )
    return {
        "id": run.id,
        "status": run.status,
        "question": owners["question"],
        "answer": run.answer,
        "evidence": owners["evidence"],
        "error": run.error,
        "language": run.language,
    }


def question_dict(question: Question) -> dict[str, Any]:
    return {
        "id": question.id,
        "kind": question.kind,
        "question": question.question,
        "options": list(question.options or []),
    }


@router.post("/api/runs/{run_id}/answers", status_code=202)
def api_answer(body: AnswerIn, run: RunDep, session: DbSessionDep, runs: RunServiceDep) -> dict[str, str]:
    question = session.get(Question, body.question_id)
    if question is None or question.run_id != run.id:
        raise ApiError(404, "not_found", "This run has no such question.", "Use the id from GET /api/runs/{run}.")
    if question.kind != "multi" and isinstance(body.answer, list):
        body.answer = ", ".join(body.answer)
    answer_question(session, question, body.answer)  # a confirmed definition of the workspace from now on
    resumed = resume_after_answer(session, runs, run)  # clarify.py: the waiting run continues
    return {"status": "resumed" if resumed else "accepted", "question_id": question.id}


@router.post("/api/runs/{run_id}/interrupt", status_code=202)
def api_interrupt(run: RunDep, runs: RunServiceDep) -> dict[str, str]:
    return {"status": runs.interrupt(run.id), "run_id": run.id}


# --- server-sent events ----------------------------------------------------------------------
@router.get("/api/runs/{run_id}/events")
async def api_events(
    request: Request,
    run_id: str,
    settings: SettingsDep,
    after: Annotated[int | None, Query(ge=0, le=MAX_EVENT_ID)] = None,
    last_event_id: Annotated[str | None, Header(max_length=40)] = None,
) -> Any:
    """Progress events after `after` (or the `Last-Event-ID` a reconnecting browser sends)."""
    db: Database = request.app.state.db
    if await anyio.to_thread.run_sync(partial(run_status, db, run_id)) is None:
        return JSONResponse({"error": {"category": "not_found", "message": "run not found"}}, status_code=404)
    cursor = event_cursor(last_event_id, after)
    stream = event_stream(db, run_id, cursor, settings.sse_poll_interval_s, settings.sse_heartbeat_s)
    return StreamingResponse(
        stream, media_type="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )


def event_cursor(last_event_id: str | None, after: int | None) -> int:
    """Where the stream starts. An event id is a 64-bit database integer: anything else is refused
    (a 30-digit number would overflow the query, a 5,000-digit one int() itself)."""
    if last_event_id is None or not last_event_id.strip():
        return after or 0
    value = last_event_id.strip()
    if not (value.isascii() and value.isdigit() and len(value) <= 19 and int(value) <= MAX_EVENT_ID):
        raise ApiError(
            400,
            "invalid_request",
            "Last-Event-ID must be the id of an event of this run.",
            "Reconnect without the header to receive the run's events from the start.",
        )
    return int(value)


def run_status(db: Database, run_id: str) -> str | None:
    with db.session() as session:
        run = session.get(Run, run_id)
        return run.status if run else None


def read_events(db: Database, run_id: str, cursor: int) -> tuple[list[tuple[int, str, dict]], str | None]:
    """New events after the cursor and the run's status, from one fresh session (one snapshot)."""
    with db.session() as session:
        # trace spans stay out of the page's stream (GET /api/runs/{run}/trace serves them)
        rows = session.scalars(
            select(Event)
            .where(Event.run_id == run_id, Event.id > cursor, Event.kind != "span")
            .order_by(Event.id)
            .limit(EVENT_BATCH)
        )
        events = [(e.id, e.kind, dict(e.data or {})) for e in rows]
        run = session.get(Run, run_id)
        return events, (run.status if run else None)


def sse_message(event_id: int, kind: str, data: dict[str, Any]) -> str:
    payload = json.dumps(data, ensure_ascii=False, default=str)
    lines = "".join(f"data: {line}\n" for line in payload.splitlines() or [""])
    return f"id: {event_id}\nevent: {kind}\n{lines}\n"


async def event_stream(db: Database, run_id: str, cursor: int, poll_s: float, heartbeat_s: float) -> AsyncIterator[str]:
    """The run's events as they come; close after `run_finished`. The stream reads the events table
    when the run has news (app/db/progress.py: NOTIFY on PostgreSQL, a ring in this process on
    SQLite), once per keep-alive without news, and every `poll_s` only while news cannot reach this
    process (the listener reconnecting; worker processes writing a SQLite file). A run that ended
    without a `run_finished` (a server restart) gets a synthetic one once its final status has been
    seen twice in a row."""
    yield "retry: 3000\n: connected\n\n"
    bus, pushed = db.progress, db.settings.run_executor == "threads" or db.progress.postgres
    waiter = bus.subscribe(run_id)  # before the first read: news after it rings the bell
    try:
        last_sent, quiet_final, rung = time.monotonic(), 0, False
        while True:
            read = partial(anyio.to_thread.run_sync, partial(read_events, db, run_id, cursor))
            if rung:  # woken by news: the run's other pages here woken by the same news share one read
                events, status = await bus.shared_read(run_id, cursor, bus.generation(run_id), read)
            else:
                events, status = await read()
            for event_id, kind, data in events:
                cursor = event_id
                yield sse_message(event_id, kind, data)
                if kind == "run_finished":
                    return
            if len(events) == EVENT_BATCH:
                continue  # more are waiting: read on (the run's other pages here share these reads too)
            if events:
                last_sent, quiet_final = time.monotonic(), 0
            else:
                quiet_final = quiet_final + 1 if status in FINAL or status is None else 0
                if quiet_final >= 2:
                    yield sse_message(cursor, "run_finished", {"status": status or "failed", "synthetic": True})
                    return
            if time.monotonic() - last_sent >= heartbeat_s:
                yield ": keep-alive\n\n"
                last_sent = time.monotonic()
            rung = False
            if quiet_final or not (pushed and bus.pushes()):
                await asyncio.sleep(poll_s)  # a final status is looked at again soon; no news can come
            elif bus.postgres:  # the listener rings every followed run once per keep-alive
                rung = await waiter.wait(2 * heartbeat_s)
            else:  # SQLite: another process on the same file (a second server) rings no bell here
                rung = await waiter.wait(min(heartbeat_s, SQLITE_QUIET_READ_S))
    finally:
        bus.unsubscribe(waiter)
