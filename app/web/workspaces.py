"""Pages: the workspace list, creating a workspace, and the workspace page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.config import Settings
from app.db.models import Dataset, Run, Workspace
from app.ingest.pipeline import LoadedTable
from app.web.chat import run_context
from app.web.datasets import version_entries
from app.web.deps import DbSessionDep, PageDep, SettingsDep, WorkspaceDep
from app.web.suggest import suggest_questions
from app.workspaces import active_datasets, create_workspace, list_workspaces, load_frame

router = APIRouter(tags=["pages"])


@router.get("/", name="index")
def index(session: DbSessionDep, page: PageDep) -> Response:
    return page.render("index.html", {"workspaces": list_workspaces(session)})


@router.post("/workspaces", name="create_workspace_page")
def create_workspace_page(request: Request, session: DbSessionDep,
                          name: Annotated[str, Form(max_length=200)] = "") -> Response:
    workspace = create_workspace(session, name)
    return RedirectResponse(request.url_for("workspace_page", ws=workspace.id), status_code=303)


@router.get("/workspaces/{ws}", name="workspace_page")
def workspace_page(workspace: WorkspaceDep, session: DbSessionDep, settings: SettingsDep, page: PageDep,
                   run: str | None = None) -> Response:
    context = workspace_context(session, settings, workspace, page.lang, selected_run_id=run)
    return page.render("workspace.html", context)


def workspace_context(session: Session, settings: Settings, workspace: Workspace, lang: str,
                      selected_run_id: str | None = None, **extra: Any) -> dict[str, Any]:
    """Everything the workspace page shows: data previews, suggestions, runs, the open run."""
    datasets = active_datasets(session, workspace.id)
    runs = list(session.scalars(select(Run).where(Run.workspace_id == workspace.id)
                                .order_by(Run.created_at.desc())))
    selected = next((r for r in runs if r.id == selected_run_id), runs[0] if runs else None)
    return {
        "workspace": workspace,
        "datasets": [{**dataset_view(d, settings.preview_rows), "versions": version_entries(session, d)}
                     for d in datasets],
        "suggestions": suggest_questions([d.info.get("columns", []) for d in datasets], lang),
        "runs": runs,
        "current": run_context(session, selected, lang) if selected else None,
        **extra,
    }


def dataset_view(dataset: Dataset, rows: int, preview: list[dict] | None = None) -> dict[str, Any]:
    """A dataset as the preview partial shows it (the first rows are read back, masked)."""
    info = dataset.info or {}
    columns = info.get("columns", [])
    if preview is None:
        preview = read_preview(dataset, rows)
    return {
        "id": dataset.id, "workspace_id": dataset.workspace_id, "name": dataset.name, "file": dataset.file_name,
        "sheet": dataset.sheet,
        "rows": dataset.rows, "info": info, "columns": columns, "preview": preview,
        "masked": [c for c in columns if c.get("pii")],
    }


def read_preview(dataset: Dataset, rows: int) -> list[dict]:
    pii = {c["name"]: c["pii"] for c in (dataset.info or {}).get("columns", []) if c.get("pii")}
    if not Path(dataset.working_path).exists():
        return []
    table = LoadedTable(frame=load_frame(dataset).head(rows), info=dataset.info, pii=pii)
    return table.preview(rows)
