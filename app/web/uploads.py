"""The upload service the upload page, the JSON API and the dataset actions share: saving an upload
under the size limit, reading it in the background (every format, with its progress), and telling
twins apart."""

from __future__ import annotations

import hashlib
import logging
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from pathlib import Path

from fastapi import FastAPI, UploadFile
from sqlalchemy.orm import Session

from app.config import Settings
from app.db.models import Dataset, Workspace
from app.db.nodes import RECEIVING, Leases
from app.db.session import Database
from app.ingest.bounded import preview_table_bounded
from app.ingest.errors import IngestError
from app.ingest.parse_slots import on_wait, slots
from app.storage import node_files
from app.web.background import background_pool
from app.workspaces import (
    FAILED,
    LOADING,
    add_loading_dataset,
    dataset_status,
    finish_loading,
    listed_datasets,
    receiving,
    remove_upload,
    stored_file_name,
)

log = logging.getLogger(__name__)

CHUNK = 1024 * 1024
STATUS_BY_CATEGORY = {"too_large": 413, "unsupported_format": 415}
# Formats whose first rows are streamed without parsing the sheet (`preview_table`); others would be
# read whole by the preview itself, so they show the background read's progress instead.
STREAMED_PREVIEW = (".xlsx", ".xlsm")
# Which node reads a loading dataset is a
# lease in the database ("load:<id>", app/db/nodes.py): the node that claims it reads it, renewing the
# claim while it reads; a load whose node died (the lease expired) is taken over when the dataset
# is looked at (`resume_if_stale`). Process ids decide nothing: containers' processes are all PID 1.
_pending_lock = threading.Lock()


def pending(app: FastAPI) -> set[str]:
    """Datasets whose read this app has queued or runs (hold `_pending_lock`)."""
    found: set[str] | None = getattr(app.state, "pending_loads", None)
    if found is None:
        found = app.state.pending_loads = set()
    return found


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
    session: Session,
    settings: Settings,
    workspace: Workspace,
    upload: UploadFile,
    sheet: str | None,
    leases: Leases | None = None,
) -> Dataset:
    """Keep an uploaded file in the workspace as a "loading" dataset; its read is the background
    one (`start_background_load`, which the caller starts once this is committed, then
    `answer_when_read`). Raises IngestError for an upload past the size limit.

    Every format is read in the background, so that no upload holds its request while a big file is
    parsed (a million-row CSV takes seconds). A workbook larger than `background_ingest_mb` is
    previewed first from its first rows, streamed; other files show their progress until read."""
    name = safe_file_name(upload.filename)
    # a question asked meanwhile waits for this file (runs.py); committed before the mark is lifted, so
    # no moment goes by in which the file is neither under way nor stored
    with receiving(workspace.id, name), announced(leases, workspace.id, name), saved_upload(upload, settings) as path:
        preview = quick_preview(path, sheet or None, settings) if wants_streamed_preview(path, settings) else None
        loading = add_loading_dataset(
            session,
            settings,
            workspace,
            path,
            name,
            sheet or None,
            preview or unread_preview(path),
            loader=session_node(session),
        )
        session.commit()
        return loading


def unread_preview(path: Path) -> dict:
    """What a loading dataset shows before its read has found anything: its file and format (the
    card shows the read's progress instead of rows)."""
    return {"file": path.name, "format": path.suffix.lstrip(".").lower() or "?", "rows": 0, "columns": []}


def answer_when_read(
    app: FastAPI, session: Session, dataset: Dataset, queued: Future[None] | None, received: float
) -> Dataset:
    """Wait for the background read of a new upload until `upload_wait_s` after the body was received
    (`received`, time.monotonic(): storing the file counts too), so that a small file is answered as
    read; a longer read answers "loading" with its progress.
    A read that failed meanwhile is answered as the upload's error, as a bad file always was: the
    dataset is removed (nothing of a bad file is kept) and its IngestError raised."""
    settings: Settings = app.state.settings
    if queued is not None:
        try:
            queued.result(timeout=max(0.0, settings.upload_wait_s - (time.monotonic() - received)))
        except FutureTimeout:  # still reading: the page and the API poll the dataset
            pass
    session.refresh(dataset)
    if dataset_status(dataset) == FAILED and (error := (dataset.info or {}).get("error")):
        remove_upload(session, settings, dataset)
        session.commit()
        message_zh, hint_zh = error.get("message_zh") or "", error.get("hint_zh") or ""
        raise IngestError(error["category"], error.get("message") or "", error.get("hint") or "", message_zh, hint_zh)
    return dataset


@contextmanager
def announced(leases: Leases | None, workspace_id: str, name: str) -> Iterator[None]:
    """The upload under way, as a lease other nodes see: a question asked on another server waits
    for the file too (app/db/nodes.py, `received_elsewhere`). Renewed while it is received; gone after."""
    key = f"{RECEIVING}{workspace_id}:{uuid.uuid4().hex}"
    if leases is None or not leases.claim(key, detail=name):
        yield
        return
    try:
        yield
    finally:
        leases.release(key)


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


def wants_streamed_preview(path: Path, settings: Settings) -> bool:
    """A big workbook, whose first rows are shown before it is read (a CSV has no such preview)."""
    return path.suffix.lower() in STREAMED_PREVIEW and path.stat().st_size > settings.background_ingest_mb * 1024 * 1024


# --- the background read of uploads ---------------------------------------------------------
def ingest_executor(app: FastAPI) -> ThreadPoolExecutor:
    """The worker threads that read uploads: as many as reads may run at once (parse_slots, which
    bound their memory together), so that small files are not queued behind one big read while a
    slot is free; a read past the slots waits for one (and says so: `note_waiting`)."""
    return background_pool(app, "ingest", workers=slots(app.state.settings))


def load_lease(dataset_id: str) -> str:
    return f"load:{dataset_id}"


def session_node(session: Session) -> dict:
    """This node as recorded in a loading dataset, for people reading it (the lease decides)."""
    return dict(session.info.get("node") or {})


def start_background_load(app: FastAPI, dataset_id: str) -> Future[None] | None:
    """Queue the full read of a committed "loading" dataset: at most once per process, and only
    when this node wins the dataset's lease (no other node reads it now). The read's future when
    queued here; None when it is not (under way already, or another node reads it)."""
    db: Database = app.state.db
    with _pending_lock:
        if dataset_id in pending(app):
            return None
        pending(app).add(dataset_id)
    queued: Future[None] | None = None
    try:
        if not db.leases.claim(load_lease(dataset_id)):  # another live node reads it
            return None
        queued = ingest_executor(app).submit(_background_load, app, dataset_id)
    except RuntimeError:  # the executor is shut down: the app is stopping; another node or a restart resumes it
        db.leases.release(load_lease(dataset_id))
    finally:
        if queued is None:
            with _pending_lock:
                pending(app).discard(dataset_id)
    return queued


def _background_load(app: FastAPI, dataset_id: str) -> None:
    db: Database = app.state.db
    settings: Settings = app.state.settings
    key = load_lease(dataset_id)
    try:
        with on_wait(lambda message: note_waiting(db, dataset_id, message)):  # its turn in the read queue
            # The result is recorded only while the lease is still ours: a node that stalled past
            # the expiry has had its read taken over, and the other node's result stands.
            finish_loading(db, settings, dataset_id, still_ours=lambda: db.leases.confirm(key))
    except Exception:  # e.g. the database went away; the lease expires and another node resumes it
        log.exception("background read of dataset %s could not be recorded", dataset_id)
    finally:
        db.leases.release(key)
        with _pending_lock:
            pending(app).discard(dataset_id)


def note_waiting(db, dataset_id: str, message: dict | None) -> None:
    """A loading dataset says while it waits for its turn to be read ("waiting", zh and en)."""
    with db.session() as session:
        dataset = session.get(Dataset, dataset_id)
        if dataset is not None and dataset_status(dataset) == LOADING:
            info = {k: v for k, v in (dataset.info or {}).items() if k != "waiting"}
            dataset.info = {**info, **({"waiting": message} if message else {})}
            session.commit()


def resume_if_stale(app: FastAPI, session: Session, dataset: Dataset) -> None:
    """A dataset left "loading" by a node that is gone (a restart, a crashed container) is read
    again once that node's lease has expired; the original is kept, so nothing is lost. A load
    another live node holds the lease of is left alone, whatever its process id."""
    if dataset_status(dataset) != LOADING:
        return
    with _pending_lock:
        if dataset.id in pending(app):
            return
    db: Database = app.state.db
    if not db.leases.claim(load_lease(dataset.id)):  # another live node reads it
        return
    dataset.info = {**dataset.info, "loader": db.node.describe()}
    session.commit()  # before the read starts: its result is written over this, never under it
    start_background_load(app, dataset.id)


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
