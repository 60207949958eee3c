"""Pages: the workspace list, creating a workspace, and the workspace page."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.config import Settings
from app.db.models import Dataset, Run, Workspace
from app.web.deps import (
    ApiError,
    CommittingRoute,
    CurrentUserDep,
    DbSessionDep,
    PageDep,
    SettingsDep,
    WorkspaceDep,
    owner_of,
)
from app.web.i18n import t
from app.web.pages import full_view, workspace_busy, workspace_context
from app.web.uploads import resume_if_stale, same_file_as
from app.workspaces import FAILED, create_workspace, dataset_status, delete_workspace, list_workspaces, listed_datasets

router = APIRouter(tags=["pages"], route_class=CommittingRoute)


@router.get("/", name="index")
def index(session: DbSessionDep, page: PageDep, user: CurrentUserDep) -> Response:
    return page.render("index.html", {"workspaces": list_workspaces(session, owner_of(user))})


@router.post("/workspaces", name="create_workspace_page")
def create_workspace_page(
    request: Request, session: DbSessionDep, user: CurrentUserDep, name: Annotated[str, Form(max_length=200)] = ""
) -> Response:
    workspace = create_workspace(session, name, owner=owner_of(user))
    return RedirectResponse(request.url_for("workspace_page", ws=workspace.id), status_code=303)


@router.get("/workspaces/{ws}", name="workspace_page")
def workspace_page(
    request: Request,
    workspace: WorkspaceDep,
    session: DbSessionDep,
    settings: SettingsDep,
    page: PageDep,
    run: str | None = None,
) -> Response:
    for dataset in listed_datasets(session, workspace.id):
        resume_if_stale(request.app, session, dataset)
    context = workspace_context(session, settings, workspace, page.lang, selected_run_id=run)
    context["duplicate_notice"] = duplicate_notice(
        session, settings, workspace, request.query_params.get("duplicate"), page.lang
    )
    return page.render("workspace.html", context)


def duplicate_notice(
    session: Session, settings: Settings, workspace: Workspace, dataset_id: str | None, lang: str
) -> str | None:
    """ "This file was uploaded before" after an upload whose bytes another file of the workspace has."""
    dataset = session.get(Dataset, dataset_id) if dataset_id else None
    if dataset is None or dataset.workspace_id != workspace.id:
        return None
    twin = same_file_as(session, settings, dataset)
    return t("duplicate_upload", lang, file=dataset.file_name, other=twin.file_name) if twin else None


@router.post("/workspaces/{ws}/delete", name="delete_workspace")
def delete_workspace_page(
    request: Request,
    workspace: WorkspaceDep,
    session: DbSessionDep,
    settings: SettingsDep,
    page: PageDep,
    confirm: Annotated[str, Form()] = "",
) -> Response:
    """The first post says what would go and asks; only the confirming post deletes (SPEC §7)."""
    busy = workspace_busy(session, workspace)
    if confirm != "yes" or busy:
        counts = {
            "files": len({d.original_path for d in listed_datasets(session, workspace.id)}),
            "runs": len(session.scalars(select(Run.id).where(Run.workspace_id == workspace.id)).all()),
        }
        return page.render(
            "workspace_delete.html", {"workspace": workspace, "busy": busy, **counts}, status_code=409 if busy else 200
        )
    delete_workspace(session, settings, workspace)
    return RedirectResponse(request.url_for("index"), status_code=303)


@router.delete("/api/workspaces/{ws}")
def api_delete_workspace(
    workspace: WorkspaceDep, session: DbSessionDep, settings: SettingsDep, confirm: bool = False
) -> dict[str, Any]:
    """Delete a workspace and everything in it; needs `?confirm=true`."""
    if not confirm:
        raise ApiError(
            409,
            "confirmation_required",
            t("delete_ws_question", "en", name=workspace.name),
            hint="This deletes its files, analyses and reports for good; repeat with ?confirm=true.",
        )
    if workspace_busy(session, workspace):
        raise ApiError(409, "busy", t("delete_ws_busy", "en"))
    return {"deleted": workspace.id, "rows": delete_workspace(session, settings, workspace)}


@router.get("/workspaces/{ws}/datasets/{dataset_id}/preview", name="dataset_partial")
def dataset_partial(
    workspace: WorkspaceDep, dataset_id: str, session: DbSessionDep, settings: SettingsDep, page: PageDep
) -> Response:
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
