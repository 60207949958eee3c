"""The trace of a run (SPEC §10, §12): every model call with the exact request the model saw, and
every tool call with its arguments, sizes, duration and errors. A page and a JSON API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from app.agent import INLINE_LIMIT, build_trace, load_payload, trace_dir
from app.config import Settings
from app.db.models import Event, Run
from app.storage import node_files
from app.web.deps import ApiError, CommittingRoute, DbSessionDep, PageDep, RunDep, SettingsDep

router = APIRouter(tags=["traces"], route_class=CommittingRoute)


@router.get("/runs/{run_id}/trace", name="trace_page")
def trace_page(run: RunDep, session: DbSessionDep, settings: SettingsDep, page: PageDep) -> Response:
    trace = build_trace(session, run, trace_folder(settings, run))
    for item in trace["items"]:
        item["json"] = {
            key: pretty(item.get(key))
            for key in ("request", "response", "arguments", "data", "budget_table")
            if item.get(key) is not None
        }
    return page.render("trace.html", {"run": run, "trace": trace})


@router.get("/api/runs/{run_id}/trace")
def api_trace(run: RunDep, session: DbSessionDep, settings: SettingsDep) -> dict[str, Any]:
    return build_trace(session, run, trace_folder(settings, run))


@router.get("/api/runs/{run_id}/trace/{span_id}", name="api_span")
def api_span(run_id: str, span_id: str, run: RunDep, session: DbSessionDep, settings: SettingsDep) -> dict[str, Any]:
    """One model span with its full request and response (the page links here for large ones)."""
    for event in session.query(Event).filter(Event.run_id == run.id, Event.kind == "span"):
        if (event.data or {}).get("span_id") == span_id:
            return {**event.data, **load_payload(event.data, trace_folder(settings, run))}
    raise ApiError(404, "not_found", "This run has no such span.", "Use a span_id from GET /api/runs/{run}/trace.")


def pretty(value: Any) -> str | None:
    """Indented JSON for the page; None (a link instead) when it is too large to show inline."""
    text = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    return text if len(text) <= INLINE_LIMIT else None


def trace_folder(settings: Settings, run: Run) -> Path:
    """The run's trace payloads in this node's cache, fetched from the store when another node (the
    worker that ran it) wrote them."""
    folder = trace_dir(settings, run.workspace_id, run.id)
    files = node_files(settings)
    return files.local_folder(files.key_of(folder)) if files.store.remote else folder
