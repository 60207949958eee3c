"""Uploading files (page form) and serving figures. The upload helpers are shared with the API."""

from __future__ import annotations

import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Iterator

from fastapi import APIRouter, File, Form, HTTPException, Request, UploadFile
from fastapi.responses import FileResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from app.config import Settings
from app.db.models import Dataset, Workspace
from app.ingest.errors import IngestError
from app.ingest.pipeline import LoadedTable
from app.web.deps import DbSessionDep, PageDep, SettingsDep, WorkspaceDep, wants_partial
from app.workspaces import add_dataset

router = APIRouter(tags=["pages"])

CHUNK = 1024 * 1024
STATUS_BY_CATEGORY = {"too_large": 413, "unsupported_format": 415}


# --- the upload service the page and the API share -------------------------------------------
def too_large(settings: Settings) -> IngestError:
    return IngestError("too_large", f"The file is larger than {settings.max_upload_mb} MB.",
                       "Split the file, or remove sheets and columns you do not need.")


def safe_file_name(name: str | None) -> str:
    base = Path((name or "").replace("\\", "/")).name.strip()
    return base if base not in ("", ".", "..") else "upload"


@contextmanager
def saved_upload(upload: UploadFile, settings: Settings) -> Iterator[Path]:
    """Copy the upload to a temporary file chunk by chunk, enforcing the size limit; removed after."""
    limit = settings.max_upload_mb * 1024 * 1024
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="upload-", dir=settings.data_dir))
    target = folder / safe_file_name(upload.filename)
    try:
        written = 0
        with target.open("wb") as out:
            while chunk := upload.file.read(CHUNK):
                written += len(chunk)
                if written > limit:
                    raise too_large(settings)
                out.write(chunk)
        yield target
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def ingest_upload(session: Session, settings: Settings, workspace: Workspace, upload: UploadFile,
                  sheet: str | None) -> tuple[Dataset, LoadedTable]:
    """Read an uploaded file into the workspace. Raises IngestError for bad input."""
    with saved_upload(upload, settings) as path:
        return add_dataset(session, settings, workspace, path, safe_file_name(upload.filename), sheet or None)


def error_status(error: IngestError) -> int:
    return STATUS_BY_CATEGORY.get(error.category, 400)


# --- page routes --------------------------------------------------------------------------------
@router.post("/workspaces/{ws}/upload", name="upload")
def upload_page(request: Request, workspace: WorkspaceDep, session: DbSessionDep, settings: SettingsDep,
                page: PageDep, file: Annotated[UploadFile, File()],
                sheet: Annotated[str | None, Form()] = None) -> Response:
    from app.web.workspaces import dataset_view, workspace_context

    try:
        dataset, table = ingest_upload(session, settings, workspace, file, sheet)
    except IngestError as error:
        context = workspace_context(session, settings, workspace, page.lang, upload_error=error.as_dict())
        return page.render("workspace.html", context, status_code=error_status(error))
    if wants_partial(request):
        view = dataset_view(dataset, settings.preview_rows, table.preview(settings.preview_rows))
        return page.render("_dataset_preview.html", {"dataset": view})
    return RedirectResponse(request.url_for("workspace_page", ws=workspace.id), status_code=303)


@router.get("/workspaces/{ws}/figures/{name}", name="figure")
def figure(ws: str, name: str, settings: SettingsDep) -> Response:
    """A chart PNG of the workspace; names are plain file names, never paths."""
    if not plain_png_name(name) or not re.fullmatch(r"[\w-]{1,32}", ws):
        raise HTTPException(404, "figure not found")
    folder = (settings.workspace_dir(ws) / "figures").resolve()
    path = (folder / name).resolve()
    if path.parent != folder or not path.is_file():
        raise HTTPException(404, "figure not found")
    return FileResponse(path, media_type="image/png", headers={"Cache-Control": "private, max-age=3600"})


def plain_png_name(name: str) -> bool:
    return (name.lower().endswith(".png") and not name.startswith(".")
            and not any(c in name for c in ("/", "\\", "\x00", ":")))
