"""The upload service the upload page, the JSON API and the dataset actions share: saving an upload
under the size limit, reading it (big workbooks in the background), and telling twins apart."""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from fastapi import FastAPI, UploadFile
from sqlalchemy.orm import Session

from app.config import Settings
from app.db.models import Dataset, Workspace
from app.ingest.bounded import preview_table_bounded
from app.ingest.errors import IngestError
from app.ingest.parse_slots import on_wait
from app.ingest.pipeline import LoadedTable
from app.storage import node_files
from app.web.background import background_pool
from app.workspaces import (
    LOADING,
    add_dataset,
    add_loading_dataset,
    dataset_status,
    finish_loading,
    listed_datasets,
    receiving,
    stored_file_name,
)

log = logging.getLogger(__name__)

CHUNK = 1024 * 1024
STATUS_BY_CATEGORY = {"too_large": 413, "unsupported_format": 415}
# Formats whose first rows are streamed without parsing the sheet (`preview_table`); others are
# read whole by the preview itself, so a background read would only read them twice.
STREAMED_PREVIEW = (".xlsx", ".xlsm")
# This process, as recorded in a loading dataset: a load recorded by a process that is gone (a
# restart) is started again when the dataset is looked at (`resume_if_stale`).
PROCESS = {"pid": os.getpid(), "boot": uuid.uuid4().hex}
_pending: set[str] = set()
_pending_lock = threading.Lock()


def too_large(settings: Settings) -> IngestError:
    return IngestError(
        "too_large",
        f"The file is larger than {settings.max_upload_mb} MB.",
        "Split the file, or remove sheets and columns you do not need.",
        f"文件超过了 {settings.max_upload_mb} MB 的上限。",
        "请把文件拆开，或删掉用不到的工作表和列。",
    )


def safe_file_name(name: str | None) -> str:
    base = Path((name or "").replace("\\", "/")).name.strip()
    return base if base not in ("", ".", "..") else "upload"


@contextmanager
def saved_upload(upload: UploadFile, settings: Settings) -> Iterator[Path]:
    """Copy the upload to a temporary file chunk by chunk, enforcing the size limit; removed after."""
    limit = settings.max_upload_mb * 1024 * 1024
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="upload-", dir=settings.data_dir))
    target = folder / stored_file_name(safe_file_name(upload.filename))
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


def ingest_upload(
    session: Session, settings: Settings, workspace: Workspace, upload: UploadFile, sheet: str | None
) -> tuple[Dataset, LoadedTable | None]:
    """Read an uploaded file into the workspace. Raises IngestError for bad input.

    A workbook larger than `background_ingest_mb` is only previewed here (its first rows, streamed):
    the dataset is stored with status "loading" and no table (None) is returned; the caller starts
    `start_background_load` once the dataset is committed. Smaller files are read here, "ready"."""
    name = safe_file_name(upload.filename)
    # a question asked meanwhile waits for this file (runs.py); committed before the mark is lifted, so
    # no moment goes by in which the file is neither under way nor stored
    with receiving(workspace.id, name), saved_upload(upload, settings) as path:
        preview = quick_preview(path, sheet or None, settings) if wants_background(path, settings) else None
        if preview is not None:
            loading = add_loading_dataset(
                session, settings, workspace, path, name, sheet or None, preview, loader=dict(PROCESS)
            )
            session.commit()
            return loading, None
        stored = add_dataset(session, settings, workspace, path, name, sheet or None)
        session.commit()
        return stored


def quick_preview(path: Path, sheet: str | None, settings: Settings) -> dict | None:
    """The streamed preview of a big workbook; None (read it whole, here) when the streaming
    reader trips over something unexpected. Raises IngestError for bad input."""
    try:
        return preview_table_bounded(path, sheet=sheet, rows=settings.preview_rows, settings=settings)
    except IngestError:
        raise
    except Exception:  # the full read gives the plain-language error
        log.warning("streamed preview of %s failed; reading it whole", path.name, exc_info=True)
        return None


def wants_background(path: Path, settings: Settings) -> bool:
    return path.suffix.lower() in STREAMED_PREVIEW and path.stat().st_size > settings.background_ingest_mb * 1024 * 1024


# --- the background read of big uploads ---------------------------------------------------------
def ingest_executor(app: FastAPI) -> ThreadPoolExecutor:
    """One worker thread per app for full reads (one big workbook in memory at a time)."""
    return background_pool(app, "ingest")


def start_background_load(app: FastAPI, dataset_id: str) -> None:
    """Queue the full read of a committed "loading" dataset (at most once per process)."""
    with _pending_lock:
        if dataset_id in _pending:
            return
        _pending.add(dataset_id)
    try:
        ingest_executor(app).submit(_background_load, app.state.db, app.state.settings, dataset_id)
    except RuntimeError:  # the executor is shut down: the app is stopping; a restart resumes it
        with _pending_lock:
            _pending.discard(dataset_id)


def _background_load(db, settings: Settings, dataset_id: str) -> None:
    try:
        with on_wait(lambda message: note_waiting(db, dataset_id, message)):  # its turn in the read queue
            finish_loading(db, settings, dataset_id)
    except Exception:  # e.g. the database went away; a restart resumes the load
        log.exception("background read of dataset %s could not be recorded", dataset_id)
    finally:
        with _pending_lock:
            _pending.discard(dataset_id)


def note_waiting(db, dataset_id: str, message: dict | None) -> None:
    """A loading dataset says while it waits for its turn to be read ("waiting", zh and en)."""
    with db.session() as session:
        dataset = session.get(Dataset, dataset_id)
        if dataset is not None and dataset_status(dataset) == LOADING:
            info = {k: v for k, v in (dataset.info or {}).items() if k != "waiting"}
            dataset.info = {**info, **({"waiting": message} if message else {})}
            session.commit()


def resume_if_stale(app: FastAPI, session: Session, dataset: Dataset) -> None:
    """A dataset left "loading" by a process that is gone (a server restart) is read again; the
    original is kept, so nothing is lost. Another live server process's load is left alone."""
    if dataset_status(dataset) != LOADING:
        return
    with _pending_lock:
        if dataset.id in _pending:
            return
    loader = (dataset.info or {}).get("loader") or {}
    ours = loader.get("boot") == PROCESS["boot"] or loader.get("pid") == PROCESS["pid"]
    if not ours and process_alive(loader.get("pid")):
        return
    dataset.info = {**dataset.info, "loader": dict(PROCESS)}
    session.commit()  # the worker thread reads the dataset in its own session
    start_background_load(app, dataset.id)


def process_alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def same_file_as(session: Session, settings: Settings, dataset: Dataset) -> Dataset | None:
    """Another upload of the workspace with exactly these bytes and the same sheet (the same upload
    twice), or None; another sheet of the same workbook is another table, not a copy. The originals
    are read from this node's cache (fetched from the store when another node kept them)."""
    files = node_files(settings)
    mine = files.local(dataset.original_path or "")
    if mine is None:
        return None
    size, digest = mine.stat().st_size, None
    for other in listed_datasets(session, dataset.workspace_id):
        if other.id == dataset.id or (
            other.sheet != dataset.sheet and len((dataset.info or {}).get("sheets") or []) > 1
        ):
            continue
        theirs = files.local(other.original_path or "")
        if theirs is None or theirs.stat().st_size != size:
            continue
        digest = digest or file_digest(mine)
        if file_digest(theirs) == digest:
            return other
    return None


def file_digest(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def error_status(error: IngestError) -> int:
    return STATUS_BY_CATEGORY.get(error.category, 400)
