"""Dataset actions: read another sheet of the kept original, and go back to an earlier version.
Page forms and the JSON API share the same services (app.workspaces)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel
from sqlalchemy.orm import Session

from app.db.models import Dataset, Workspace
from app.ingest.errors import IngestError
from app.web.deps import ApiError, DbSessionDep, PageDep, SettingsDep, WorkspaceDep
from app.web.files import error_status
from app.workspaces import activate_version, dataset_versions, switch_sheet

router = APIRouter(tags=["datasets"])


class SheetIn(BaseModel):
    sheet: str


def workspace_dataset(session: Session, workspace: Workspace, dataset_id: str) -> Dataset:
    dataset = session.get(Dataset, dataset_id)
    if dataset is None or dataset.workspace_id != workspace.id:
        raise HTTPException(404, "dataset not found")
    return dataset


def version_entries(session: Session, dataset: Dataset) -> list[dict[str, Any]]:
    return [{"id": v.id, "version": v.version, "step": v.step, "rows": v.rows, "active": v.active,
             "sheet": v.sheet} for v in dataset_versions(session, dataset)]


# --- pages ----------------------------------------------------------------------------------
@router.post("/workspaces/{ws}/datasets/{dataset_id}/sheet", name="switch_sheet")
def switch_sheet_page(request: Request, workspace: WorkspaceDep, dataset_id: str, session: DbSessionDep,
                      settings: SettingsDep, page: PageDep, sheet: Annotated[str, Form()]) -> Response:
    from app.web.workspaces import workspace_context

    try:
        switch_sheet(session, settings, workspace_dataset(session, workspace, dataset_id), sheet)
    except IngestError as error:
        context = workspace_context(session, settings, workspace, page.lang, upload_error=error.as_dict())
        return page.render("workspace.html", context, status_code=error_status(error))
    return RedirectResponse(request.url_for("workspace_page", ws=workspace.id), status_code=303)


@router.post("/workspaces/{ws}/datasets/{dataset_id}/activate", name="activate_version")
def activate_version_page(request: Request, workspace: WorkspaceDep, dataset_id: str,
                          session: DbSessionDep) -> Response:
    activate_version(session, workspace_dataset(session, workspace, dataset_id))
    return RedirectResponse(request.url_for("workspace_page", ws=workspace.id), status_code=303)


# --- JSON API -------------------------------------------------------------------------------
@router.get("/api/workspaces/{ws}/datasets/{dataset_id}/versions")
def api_versions(workspace: WorkspaceDep, dataset_id: str, session: DbSessionDep) -> dict[str, Any]:
    return {"versions": version_entries(session, workspace_dataset(session, workspace, dataset_id))}


@router.post("/api/workspaces/{ws}/datasets/{dataset_id}/sheet", status_code=201)
def api_switch_sheet(workspace: WorkspaceDep, dataset_id: str, body: SheetIn, session: DbSessionDep,
                     settings: SettingsDep) -> dict[str, Any]:
    try:
        dataset = switch_sheet(session, settings, workspace_dataset(session, workspace, dataset_id), body.sheet)
    except IngestError as error:
        raise ApiError(error_status(error), error.category, error.message, hint=error.hint) from None
    return {"dataset": {**dataset.info, "id": dataset.id, "version": dataset.version}}


@router.post("/api/workspaces/{ws}/datasets/{dataset_id}/activate")
def api_activate(workspace: WorkspaceDep, dataset_id: str, session: DbSessionDep) -> dict[str, Any]:
    dataset = workspace_dataset(session, workspace, dataset_id)
    activate_version(session, dataset)
    return {"versions": version_entries(session, dataset)}
