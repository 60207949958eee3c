"""Workspace knowledge on the page and in the API: add a note or a reference document, list,
remove (app/knowledge.py keeps them; app/agent/context/retrieval.py picks what a turn sees)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Request, UploadFile
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel, Field

from app.config import Settings
from app.db.models import KnowledgeEntry
from app.ingest.bounded import document_text_bounded
from app.knowledge import KnowledgeError, add_entry, entries
from app.web.deps import ApiError, CommittingRoute, DbSessionDep, PageDep, SettingsDep, WorkspaceDep, found
from app.web.pages import workspace_context
from app.web.uploads import safe_file_name
from app.workspaces import shown_file_name, stored_file_name

router = APIRouter(tags=["knowledge"], route_class=CommittingRoute)
MAX_DOCUMENT_BYTES = 20 * 1024 * 1024
MAX_NOTE_CHARS = 200_000
MAX_TITLE_CHARS = 200  # KnowledgeEntry.title


class NoteIn(BaseModel):
    title: str = Field("", max_length=MAX_TITLE_CHARS)
    text: str = Field(..., max_length=MAX_NOTE_CHARS)


def entry_dict(entry: KnowledgeEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "title": entry.title,
        "source": entry.source,
        "chars": len(entry.text),
        "created_at": entry.created_at.isoformat(),
    }


def read_document(upload: UploadFile, settings: Settings) -> tuple[str, str]:
    """(file name, text) of an uploaded reference document, read in a bounded child process (the
    view runs in a worker thread, so the event loop never waits for it)."""
    name = safe_file_name(upload.filename)
    data = upload.file.read(MAX_DOCUMENT_BYTES + 1)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise KnowledgeError(
            "too_large",
            f"The document is larger than {MAX_DOCUMENT_BYTES // 2**20} MB.",
            "Keep the parts the analysis needs.",
            f"文档超过了 {MAX_DOCUMENT_BYTES // 2**20} MB。",
            "只保留分析需要的部分。",
        )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / stored_file_name(name)
        path.write_bytes(data)
        return name, document_text_bounded(path, name, settings)


def keep(
    session, settings, workspace_id: str, title: str, text: str | None, upload: UploadFile | None
) -> KnowledgeEntry:
    if upload is not None and upload.filename:
        name, document = read_document(upload, settings)
        return add_entry(
            session,
            workspace_id,
            title or Path(name).stem[:MAX_TITLE_CHARS],
            document,
            source=shown_file_name(name),
            max_chars=settings.knowledge_max_chars,
        )
    return add_entry(session, workspace_id, title, text or "", max_chars=settings.knowledge_max_chars)


@router.post("/workspaces/{ws}/knowledge", name="add_knowledge")
def add_knowledge_page(
    request: Request,
    workspace: WorkspaceDep,
    session: DbSessionDep,
    settings: SettingsDep,
    page: PageDep,
    title: Annotated[str, Form(max_length=200)] = "",
    text: Annotated[str, Form(max_length=MAX_NOTE_CHARS)] = "",
    file: Annotated[UploadFile | None, File()] = None,
) -> Response:
    target = request.url_for("workspace_page", ws=workspace.id)
    try:
        keep(session, settings, workspace.id, title, text, file)
    except KnowledgeError as exc:
        context = workspace_context(
            session,
            settings,
            workspace,
            page.lang,
            knowledge_error={**exc.as_dict(), "file": file.filename if file else ""},
        )
        return page.render("workspace.html", context, status_code=400)
    return RedirectResponse(f"{target}?knowledge=saved#knowledge", status_code=303)


@router.post("/workspaces/{ws}/knowledge/{entry_id}/remove", name="remove_knowledge")
def remove_knowledge_page(request: Request, workspace: WorkspaceDep, entry_id: str, session: DbSessionDep) -> Response:
    session.delete(session.get(KnowledgeEntry, entry_id))  # `authorize` checked it is this workspace's
    return RedirectResponse(f"{request.url_for('workspace_page', ws=workspace.id)}#knowledge", status_code=303)


@router.get("/api/workspaces/{ws}/knowledge")
def api_list_knowledge(workspace: WorkspaceDep, session: DbSessionDep) -> dict[str, Any]:
    return {"knowledge": [entry_dict(e) for e in entries(session, workspace.id)]}


@router.post("/api/workspaces/{ws}/knowledge", status_code=201)
def api_add_note(body: NoteIn, workspace: WorkspaceDep, session: DbSessionDep, settings: SettingsDep) -> dict[str, Any]:
    try:
        return entry_dict(keep(session, settings, workspace.id, body.title, body.text, None))
    except KnowledgeError as exc:
        raise ApiError.from_ingest(400, exc) from exc


@router.post("/api/workspaces/{ws}/knowledge/files", status_code=201)
def api_add_document(
    workspace: WorkspaceDep,
    session: DbSessionDep,
    settings: SettingsDep,
    file: Annotated[UploadFile, File()],
    title: Annotated[str, Form(max_length=200)] = "",
) -> Any:
    try:
        return entry_dict(keep(session, settings, workspace.id, title, None, file))
    except KnowledgeError as exc:
        status = {"too_large": 413, "unsupported_format": 415}.get(exc.category, 400)
        raise ApiError.from_ingest(status, exc) from exc


@router.delete("/api/workspaces/{ws}/knowledge/{entry_id}")
def api_remove_knowledge(workspace: WorkspaceDep, entry_id: str, session: DbSessionDep) -> dict[str, Any]:
    entry = found(session, KnowledgeEntry, entry_id, f"{KnowledgeEntry.__tablename__} entry")  # as `authorize` says
    session.delete(entry)
    return {"removed": entry_dict(entry)}
