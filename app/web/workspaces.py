"""Pages: the workspace list, creating a workspace, and the workspace page."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.config import Settings
from app.db.models import Dataset, Run, Workspace
from app.ingest.pipeline import LoadedTable
from app.knowledge import entries
from app.web.chat import run_context
from app.web.datasets import analysis_running, version_entries
from app.web.deps import (ApiError, CommittingRoute, CurrentUserDep, DbSessionDep, PageDep, SettingsDep, WorkspaceDep,
                          owner_of)
from app.web.i18n import t
from app.web.suggest import suggest_questions
from app.web.files import resume_if_stale, same_file_as
from app.workspaces import (DAMAGED, FAILED, LOADING, READY, create_workspace, dataset_status, delete_workspace,
                            list_workspaces, listed_datasets, readable_frame)

router = APIRouter(tags=["pages"], route_class=CommittingRoute)


@router.get("/", name="index")
def index(session: DbSessionDep, page: PageDep, user: CurrentUserDep) -> Response:
    return page.render("index.html", {"workspaces": list_workspaces(session, owner_of(user))})


@router.post("/workspaces", name="create_workspace_page")
def create_workspace_page(request: Request, session: DbSessionDep, user: CurrentUserDep,
                          name: Annotated[str, Form(max_length=200)] = "") -> Response:
    workspace = create_workspace(session, name, owner=owner_of(user))
    return RedirectResponse(request.url_for("workspace_page", ws=workspace.id), status_code=303)


@router.get("/workspaces/{ws}", name="workspace_page")
def workspace_page(request: Request, workspace: WorkspaceDep, session: DbSessionDep, settings: SettingsDep,
                   page: PageDep, run: str | None = None) -> Response:
    for dataset in listed_datasets(session, workspace.id):
        resume_if_stale(request.app, session, dataset)
    context = workspace_context(session, settings, workspace, page.lang, selected_run_id=run)
    context["duplicate_notice"] = duplicate_notice(session, workspace, request.query_params.get("duplicate"), page.lang)
    return page.render("workspace.html", context)


def duplicate_notice(session: Session, workspace: Workspace, dataset_id: str | None, lang: str) -> str | None:
    """"This file was uploaded before" after an upload whose bytes another file of the workspace has."""
    dataset = session.get(Dataset, dataset_id) if dataset_id else None
    if dataset is None or dataset.workspace_id != workspace.id:
        return None
    twin = same_file_as(session, dataset)
    return t("duplicate_upload", lang, file=dataset.file_name, other=twin.file_name) if twin else None


def workspace_busy(session: Session, workspace: Workspace) -> bool:
    """An analysis or a background file read is working on the workspace's files right now."""
    return analysis_running(session, workspace) or any(
        dataset_status(d) == LOADING for d in listed_datasets(session, workspace.id))


@router.post("/workspaces/{ws}/delete", name="delete_workspace")
def delete_workspace_page(request: Request, workspace: WorkspaceDep, session: DbSessionDep, settings: SettingsDep,
                          page: PageDep, confirm: Annotated[str, Form()] = "") -> Response:
    """The first post says what would go and asks; only the confirming post deletes (SPEC §7)."""
    busy = workspace_busy(session, workspace)
    if confirm != "yes" or busy:
        counts = {"files": len({d.original_path for d in listed_datasets(session, workspace.id)}),
                  "runs": len(session.scalars(select(Run.id).where(Run.workspace_id == workspace.id)).all())}
        return page.render("workspace_delete.html", {"workspace": workspace, "busy": busy, **counts},
                           status_code=409 if busy else 200)
    delete_workspace(session, settings, workspace)
    return RedirectResponse(request.url_for("index"), status_code=303)


@router.delete("/api/workspaces/{ws}")
def api_delete_workspace(workspace: WorkspaceDep, session: DbSessionDep, settings: SettingsDep,
                         confirm: bool = False) -> dict[str, Any]:
    """Delete a workspace and everything in it; needs `?confirm=true`."""
    if not confirm:
        raise ApiError(409, "confirmation_required", t("delete_ws_question", "en", name=workspace.name),
                       hint="This deletes its files, analyses and reports for good; repeat with ?confirm=true.")
    if workspace_busy(session, workspace):
        raise ApiError(409, "busy", t("delete_ws_busy", "en"))
    return {"deleted": workspace.id, "rows": delete_workspace(session, settings, workspace)}


@router.get("/workspaces/{ws}/datasets/{dataset_id}/preview", name="dataset_partial")
def dataset_partial(workspace: WorkspaceDep, dataset_id: str, session: DbSessionDep, settings: SettingsDep,
                    page: PageDep) -> Response:
    """The preview card of one dataset (app.js swaps it in once a background read is done)."""
    dataset = session.get(Dataset, dataset_id)
    if dataset is None or dataset.workspace_id != workspace.id:
        raise HTTPException(404, "dataset not found")
    return page.render("_dataset_preview.html", {"dataset": full_view(session, settings, dataset)})


@router.post("/workspaces/{ws}/datasets/{dataset_id}/dismiss", name="dismiss_dataset")
def dismiss_dataset(request: Request, workspace: WorkspaceDep, dataset_id: str, session: DbSessionDep) -> Response:
    """Take a file whose background read failed off the page (its original stays on disk)."""
    dataset = session.get(Dataset, dataset_id)
    if dataset is None or dataset.workspace_id != workspace.id:
        raise HTTPException(404, "dataset not found")
    if dataset_status(dataset) == FAILED:
        dataset.active = False
    return RedirectResponse(request.url_for("workspace_page", ws=workspace.id), status_code=303)


def workspace_context(session: Session, settings: Settings, workspace: Workspace, lang: str,
                      selected_run_id: str | None = None, **extra: Any) -> dict[str, Any]:
    """Everything the workspace page shows: data previews, suggestions, runs, the open run."""
    listed = listed_datasets(session, workspace.id)
    datasets = [d for d in listed if dataset_status(d) == READY]
    runs = list(session.scalars(select(Run).where(Run.workspace_id == workspace.id)
                                .order_by(Run.created_at.desc())))
    selected = next((r for r in runs if r.id == selected_run_id), runs[0] if runs else None)
    return {
        "workspace": workspace,
        "datasets": [full_view(session, settings, d) for d in listed],
        "loading": [d.file_name for d in listed if dataset_status(d) == LOADING],
        "suggestions": suggest_questions([d.info.get("columns", []) for d in datasets], lang),
        "runs": runs,
        "current": run_context(session, selected, lang) if selected else None,
        "run_selected": selected is not None and selected.id == selected_run_id,  # the page is the run's: titled by it
        "knowledge": entries(session, workspace.id),
        **extra,
    }


def full_view(session: Session, settings: Settings, dataset: Dataset) -> dict[str, Any]:
    versions = version_entries(session, dataset) if dataset_status(dataset) == READY else []
    return {**dataset_view(dataset, settings.preview_rows), "versions": versions}


def dataset_view(dataset: Dataset, rows: int, preview: list[dict] | None = None) -> dict[str, Any]:
    """A dataset as the preview partial shows it (the first rows are read back, masked). A dataset
    still being read shows the preview of its first rows kept in its info (already masked)."""
    if preview is None and dataset_status(dataset) == READY:
        preview = read_preview(dataset, rows)
    elif preview is None:
        preview = list((dataset.info or {}).get("preview") or [])[:rows]
    info = dataset.info or {}  # reading the preview may have found the working copy damaged
    columns = info.get("columns", [])
    status = dataset_status(dataset)
    return {
        "id": dataset.id, "workspace_id": dataset.workspace_id, "name": dataset.name, "file": dataset.file_name,
        "sheet": dataset.sheet,
        "rows": dataset.rows, "info": info, "columns": columns, "preview": preview if status != DAMAGED else [],
        "masked": [c for c in columns if c.get("pii")],
        "status": status, "error": info.get("error") if status in (FAILED, DAMAGED) else None,
    }


def read_preview(dataset: Dataset, rows: int) -> list[dict]:
    """The first rows of the working copy, masked ([] when it is missing or damaged: then marked)."""
    pii = {c["name"]: c["pii"] for c in (dataset.info or {}).get("columns", []) if c.get("pii")}
    if not dataset.working_path:
        return []
    frame = readable_frame(dataset)
    if frame is None:
        return []
    return LoadedTable(frame=frame.head(rows), info=dataset.info, pii=pii).preview(rows)
