"""Dataset actions: read another sheet of the kept original, go back to an earlier version, and
remove an uploaded file, or one table an analysis made (after an explicit confirmation, SPEC §7).
Page forms and the JSON API share the same services (app.workspaces)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel
from sqlalchemy.orm import Session

from app.config import Settings
from app.db.models import Dataset, Workspace
from app.ingest.errors import IngestError
from app.web.deps import ApiError, CommittingRoute, DbSessionDep, PageDep, SettingsDep, WorkspaceDep
from app.web.i18n import t
from app.web.pages import analysis_running, dataset_body, version_entries, workspace_context
from app.web.uploads import error_status
from app.workspaces import (
    activate_version,
    is_derived,
    rebuild_from_original,
    remove_derived,
    remove_upload,
    switch_sheet,
    upload_family,
)

router = APIRouter(tags=["datasets"], route_class=CommittingRoute)


class SheetIn(BaseModel):
    sheet: str


def workspace_dataset(session: Session, workspace: Workspace, dataset_id: str) -> Dataset:
    dataset = session.get(Dataset, dataset_id)
    if dataset is None or dataset.workspace_id != workspace.id:
        raise HTTPException(404, "dataset not found")
    return dataset


def uploaded_dataset(session: Session, workspace: Workspace, dataset_id: str) -> Dataset:
    """A dataset read from an uploaded file: another sheet or a rebuild reads that file again, which
    for a table an analysis made would put the file's rows under the table's name."""
    dataset = workspace_dataset(session, workspace, dataset_id)
    if is_derived(session, dataset):
        raise ApiError(
            409,
            "derived_table",
            "This table was made by an analysis, not read from a file.",
            hint="Ask the question again to make it again, or remove it.",
        )
    return dataset


# --- pages ----------------------------------------------------------------------------------
@router.post("/workspaces/{ws}/datasets/{dataset_id}/remove", name="remove_dataset")
def remove_dataset_page(
    request: Request,
    workspace: WorkspaceDep,
    dataset_id: str,
    session: DbSessionDep,
    settings: SettingsDep,
    page: PageDep,
    confirm: Annotated[str, Form()] = "",
) -> Response:
    """The first post shows what would go and asks; only the confirming post removes."""
    dataset = workspace_dataset(session, workspace, dataset_id)
    busy = analysis_running(session, workspace)
    if confirm != "yes" or busy:
        names = ", ".join(removal_names(session, dataset))
        return page.render(
            "dataset_remove.html",
            {
                "workspace": workspace,
                "dataset": dataset,
                "names": names,
                "derived": is_derived(session, dataset),
                "busy": busy,
            },
            status_code=409 if busy else 200,
        )
    remove_dataset(session, settings, dataset)
    return RedirectResponse(request.url_for("workspace_page", ws=workspace.id), status_code=303)


def removal_names(session: Session, dataset: Dataset) -> list[str]:
    """What a removal takes: a table an analysis made goes alone; an upload takes every table made from it."""
    if is_derived(session, dataset):
        return [dataset.name]
    return sorted({d.name for d in upload_family(session, dataset)})


def remove_dataset(session: Session, settings: Settings, dataset: Dataset) -> list[str]:
    if is_derived(session, dataset):
        return remove_derived(session, settings, dataset)
    return remove_upload(session, settings, dataset)


@router.post("/workspaces/{ws}/datasets/{dataset_id}/sheet", name="switch_sheet")
def switch_sheet_page(
    request: Request,
    workspace: WorkspaceDep,
    dataset_id: str,
    session: DbSessionDep,
    settings: SettingsDep,
    page: PageDep,
    sheet: Annotated[str, Form()],
) -> Response:
    dataset = workspace_dataset(session, workspace, dataset_id)
    if is_derived(session, dataset):  # the page offers neither for a table an analysis made
        return RedirectResponse(request.url_for("workspace_page", ws=workspace.id), status_code=303)
    try:
        switch_sheet(session, settings, dataset, sheet)
    except IngestError as error:
        context = workspace_context(
            session, settings, workspace, page.lang, upload_error={**error.as_dict(), "file": dataset.file_name}
        )
        return page.render("workspace.html", context, status_code=error_status(error))
    return RedirectResponse(request.url_for("workspace_page", ws=workspace.id), status_code=303)


@router.post("/workspaces/{ws}/datasets/{dataset_id}/activate", name="activate_version")
def activate_version_page(
    request: Request, workspace: WorkspaceDep, dataset_id: str, session: DbSessionDep
) -> Response:
    activate_version(session, workspace_dataset(session, workspace, dataset_id))
    return RedirectResponse(request.url_for("workspace_page", ws=workspace.id), status_code=303)


@router.post("/workspaces/{ws}/datasets/{dataset_id}/rebuild", name="rebuild_dataset")
def rebuild_dataset_page(
    request: Request,
    workspace: WorkspaceDep,
    dataset_id: str,
    session: DbSessionDep,
    settings: SettingsDep,
    page: PageDep,
) -> Response:
    """A damaged working copy made again from the kept original (a new version of the dataset)."""
    dataset = workspace_dataset(session, workspace, dataset_id)
    if is_derived(session, dataset):  # the page offers neither for a table an analysis made
        return RedirectResponse(request.url_for("workspace_page", ws=workspace.id), status_code=303)
    try:
        rebuild_from_original(session, settings, dataset)
    except IngestError as error:
        context = workspace_context(
            session, settings, workspace, page.lang, upload_error={**error.as_dict(), "file": dataset.file_name}
        )
        return page.render("workspace.html", context, status_code=error_status(error))
    return RedirectResponse(request.url_for("workspace_page", ws=workspace.id), status_code=303)


# --- JSON API -------------------------------------------------------------------------------
@router.post("/api/workspaces/{ws}/datasets/{dataset_id}/rebuild", status_code=201)
def api_rebuild(
    workspace: WorkspaceDep, dataset_id: str, session: DbSessionDep, settings: SettingsDep
) -> dict[str, Any]:
    """Make a damaged dataset's working copy again from the kept original: 201 with the new version."""
    try:
        dataset = rebuild_from_original(session, settings, uploaded_dataset(session, workspace, dataset_id))
    except IngestError as error:
        raise ApiError.from_ingest(error_status(error), error) from None
    return {"dataset": dataset_body(session, dataset, settings)}


@router.get("/api/workspaces/{ws}/datasets/{dataset_id}/versions")
def api_versions(workspace: WorkspaceDep, dataset_id: str, session: DbSessionDep) -> dict[str, Any]:
    return {"versions": version_entries(session, workspace_dataset(session, workspace, dataset_id))}


@router.post("/api/workspaces/{ws}/datasets/{dataset_id}/sheet", status_code=201)
def api_switch_sheet(
    workspace: WorkspaceDep, dataset_id: str, body: SheetIn, session: DbSessionDep, settings: SettingsDep
) -> dict[str, Any]:
    try:
        dataset = switch_sheet(session, settings, uploaded_dataset(session, workspace, dataset_id), body.sheet)
    except IngestError as error:
        raise ApiError.from_ingest(error_status(error), error) from None
    return {"dataset": {**dataset.info, "id": dataset.id, "version": dataset.version}}


@router.post("/api/workspaces/{ws}/datasets/{dataset_id}/activate")
def api_activate(workspace: WorkspaceDep, dataset_id: str, session: DbSessionDep) -> dict[str, Any]:
    dataset = workspace_dataset(session, workspace, dataset_id)
    activate_version(session, dataset)
    return {"versions": version_entries(session, dataset)}


@router.delete("/api/workspaces/{ws}/datasets/{dataset_id}")
def api_remove(
    workspace: WorkspaceDep, dataset_id: str, session: DbSessionDep, settings: SettingsDep, confirm: bool = False
) -> dict[str, Any]:
    """Remove an uploaded file and everything made from it; needs `?confirm=true`."""
    dataset = workspace_dataset(session, workspace, dataset_id)
    if not confirm:
        names = removal_names(session, dataset)
        question = (
            t("remove_table_question", "en", name=dataset.name)
            if is_derived(session, dataset)
            else t("remove_question", "en", file=dataset.file_name)
        )
        raise ApiError(
            409,
            "confirmation_required",
            question,
            hint=f"This removes {', '.join(names)} for good; repeat with ?confirm=true.",
        )
    if analysis_running(session, workspace):
        raise ApiError(409, "busy", t("remove_busy", "en"))
    return {"removed": remove_dataset(session, settings, dataset)}
