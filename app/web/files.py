"""Uploading files from the page and serving figures (the upload service is app/web/uploads.py)."""

from __future__ import annotations

import re
import time
from typing import Annotated

from fastapi import APIRouter, File, Form, HTTPException, Request, UploadFile
from fastapi.responses import FileResponse, RedirectResponse, Response

from app.ingest.errors import IngestError
from app.storage import node_files
from app.web.deps import CommittingRoute, DbSessionDep, PageDep, SettingsDep, WorkspaceDep, wants_partial
from app.web.pages import dataset_view, workspace_context
from app.web.uploads import answer_when_read, error_status, ingest_upload, same_file_as, start_background_load

router = APIRouter(tags=["pages"], route_class=CommittingRoute)


# --- page routes --------------------------------------------------------------------------------
@router.post("/workspaces/{ws}/upload", name="upload")
def upload_page(
    request: Request,
    workspace: WorkspaceDep,
    session: DbSessionDep,
    settings: SettingsDep,
    page: PageDep,
    file: Annotated[UploadFile, File()],
    sheet: Annotated[str | None, Form()] = None,
) -> Response:
    try:
        received = time.monotonic()  # the body is in: from here the request waits upload_wait_s at most
        dataset = ingest_upload(session, settings, workspace, file, sheet, request.app.state.db.leases)
        # the worker thread reads it in its own session (committed above); a small file is read by the
        # time the wait is over, a big one shows its progress
        dataset = answer_when_read(
            request.app, session, dataset, start_background_load(request.app, dataset.id), received
        )
    except IngestError as error:
        context = workspace_context(
            session, settings, workspace, page.lang, upload_error={**error.as_dict(), "file": file.filename or ""}
        )
        return page.render("workspace.html", context, status_code=error_status(error))
    if wants_partial(request):
        return page.render("_dataset_preview.html", {"dataset": dataset_view(dataset, settings)})
    target = request.url_for("workspace_page", ws=workspace.id)
    if same_file_as(session, settings, dataset) is not None:  # the page says so next to the new copy
        return RedirectResponse(f"{target}?duplicate={dataset.id}#dataset-{dataset.id}", status_code=303)
    return RedirectResponse(target, status_code=303)


@router.get("/workspaces/{ws}/figures/{name}", name="figure")
def figure(ws: str, name: str, settings: SettingsDep) -> Response:
    """A chart PNG of the workspace; names are plain file names, never paths."""
    if not plain_png_name(name) or not re.fullmatch(r"[\w-]{1,32}", ws):
        raise HTTPException(404, "figure not found")
    folder = (settings.workspace_dir(ws) / "figures").resolve()
    path = (folder / name).resolve()
    if path.parent != folder:
        raise HTTPException(404, "figure not found")
    found = node_files(settings).local(f"workspaces/{ws}/figures/{name}")  # made on another node: fetched
    if found is None:
        raise HTTPException(404, "figure not found")
    return FileResponse(found, media_type="image/png", headers={"Cache-Control": "private, max-age=3600"})


def plain_png_name(name: str) -> bool:
    return (
        name.lower().endswith(".png")
        and not name.startswith(".")
        and not any(c in name for c in ("/", "\\", "\x00", ":"))
    )
