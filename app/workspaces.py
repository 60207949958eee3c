"""Workspaces and their datasets: the services the web pages, the API and the CLI share."""

from __future__ import annotations

import logging
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import pandas as pd
from pyarrow.lib import ArrowException
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.config import Settings
from app.db.models import Dataset, Workspace, new_id
from app.faults import fault_of
from app.ingest.bounded import load_table_bounded
from app.ingest.child import damaged, out_of_memory
from app.ingest.errors import IngestError
from app.ingest.pipeline import LoadedTable, read_working_copy, save_working_copy
from app.storage import NodeFiles, StoreUnavailable, node_files

if TYPE_CHECKING:
    from app.db.session import Database

log = logging.getLogger(__name__)

# A dataset's loading state lives in `Dataset.info["status"]` (no schema change): a big upload is
# stored at once with a preview of its first rows ("loading") and read fully in the background
# ("ready", or "failed" with `info["error"]`). Datasets without a status are ready. A working copy
# found unreadable later (a damaged disk, a half-written file) is "damaged": it is left out of
# analyses until it is rebuilt from the kept original (`rebuild_from_original`).
READY, LOADING, FAILED, DAMAGED = "ready", "loading", "failed", "damaged"


# Files whose upload this process is receiving right now, by workspace: no dataset row exists until the
# upload is read and committed, so a question asked meanwhile (from a second tab, or by pressing Ask while
# the upload's page is still sending) would not know of the file. Runs wait for them (runs.py).
_receiving: dict[str, list[str]] = {}
_receiving_lock = threading.Lock()


@contextmanager
def receiving(workspace_id: str, name: str) -> Iterator[None]:
    """Mark an upload to the workspace as under way until the block ends (its dataset committed or failed)."""
    with _receiving_lock:
        _receiving.setdefault(workspace_id, []).append(name)
    try:
        yield
    finally:
        with _receiving_lock:
            names = _receiving.get(workspace_id, [])
            names.remove(name)
            if not names:
                _receiving.pop(workspace_id, None)


def files_being_received(workspace_id: str) -> list[str]:
    """The names of the files this process is receiving for the workspace (uploads not stored yet)."""
    with _receiving_lock:
        return list(_receiving.get(workspace_id, []))


class DamagedWorkingCopy(Exception):
    """A dataset's Parquet working copy cannot be read; the uploaded original is kept intact."""

    def __init__(self, dataset: Dataset, cause: BaseException):
        super().__init__(f"the working copy of {dataset.name} cannot be read: {type(cause).__name__}: {cause}")
        self.dataset = dataset


def create_workspace(session: Session, name: str, owner: str | None = None) -> Workspace:
    workspace = Workspace(name=name.strip() or "Untitled", owner=owner)
    session.add(workspace)
    session.flush()
    return workspace


def list_workspaces(session: Session, owner: str | None) -> list[Workspace]:
    """The workspaces of one user (owner None: those of the local single-user mode)."""
    mine = Workspace.owner.is_(None) if owner is None else Workspace.owner == owner
    return list(session.scalars(select(Workspace).where(mine).order_by(Workspace.created_at.desc())))


def dataset_status(dataset: Dataset) -> str:
    return (dataset.info or {}).get("status") or READY


def listed_datasets(session: Session, workspace_id: str) -> list[Dataset]:
    """Every current dataset of the workspace, whatever its loading state (what the page lists)."""
    return list(
        session.scalars(
            select(Dataset).where(Dataset.workspace_id == workspace_id, Dataset.active).order_by(Dataset.created_at)
        )
    )


def active_datasets(session: Session, workspace_id: str) -> list[Dataset]:
    """The current datasets that can be analysed: fully read (a big upload still being read in the
    background, or one whose read failed, is left out until it is ready)."""
    return [d for d in listed_datasets(session, workspace_id) if dataset_status(d) == READY]


def loading_datasets(session: Session, workspace_id: str) -> list[Dataset]:
    """The current datasets that are not ready: still being read, or failed (shown with the error)."""
    return [d for d in listed_datasets(session, workspace_id) if dataset_status(d) != READY]


def dataset_name(file_name: str, taken: set[str], sheet: str | None = None) -> str:
    """A short identifier-like name the model can type: 'retail_sales', 'retail_sales_2'; a second
    sheet of a workbook already in the workspace is named by its sheet ('门店_二店')."""
    stem = re.sub(r"[^\w]+", "_", Path(file_name).stem, flags=re.UNICODE).strip("_").lower()
    stem = stem[:MAX_DATASET_NAME_CHARS].rstrip("_") or "data"
    if stem in taken and sheet:
        return dataset_name(f"{stem}_{sheet}", taken)
    name, n = stem, 1
    while name in taken:
        n += 1
        name = f"{stem}_{n}"
    return name


def add_dataset(
    session: Session,
    settings: Settings,
    workspace: Workspace,
    source: Path,
    file_name: str,
    sheet: str | None = None,
    table: LoadedTable | None = None,
) -> tuple[Dataset, LoadedTable]:
    """Keep the original byte-for-byte, read it, and store the working copy as Parquet.

    `table`: this very file (and sheet) as it was already read, with these settings: a caller that
    adds one file to many workspaces (the evaluation runner: 70 task files, 26 distinct) reads it once.
    Raises IngestError for bad input; nothing is saved in that case.
    """
    if table is None:
        table = load_table_bounded(source, sheet=sheet, settings=settings)
    original = keep_original(settings, workspace, source, file_name)
    working = original.parent / "working_v1.parquet"
    files = node_files(settings)
    try:
        save_working_copy(table.frame, working)
        files.saved(working)
    except BaseException:  # e.g. the disk is full: leave no half-stored upload behind
        files.remove_folder(files.key_of(original.parent))
        raise
    taken = {d.name for d in listed_datasets(session, workspace.id)}
    dataset = Dataset(
        workspace_id=workspace.id,
        name=dataset_name(
            file_name, taken, table.info.get("selected_sheet") if len(table.info.get("sheets") or []) > 1 else None
        ),
        file_name=shown_file_name(file_name),
        format=table.info["format"],
        sheet=table.info.get("selected_sheet"),
        original_path=files.key_of(original),  # keys in the store, never a path of this machine
        working_path=files.key_of(working),
        rows=int(table.info["rows"]),
        info=table.info,
        step="uploaded",
    )
    session.add(dataset)
    session.flush()
    return dataset, table


# A file system keeps at most 255 bytes of one name; the working copies add a suffix beside the
# original's stem, so stored names leave room for it. An "extension" longer than MAX_EXTENSION_BYTES
# is part of the name, not a type to keep.
MAX_STORED_NAME_BYTES, MAX_EXTENSION_BYTES = 200, 16
MAX_SHOWN_NAME_CHARS = 500  # Dataset.file_name and KnowledgeEntry.source hold this many
MAX_DATASET_NAME_CHARS = 60  # the identifier the model types


def stored_file_name(file_name: str) -> str:
    """The name a file is kept under on disk: `file_name` itself when it fits MAX_STORED_NAME_BYTES,
    else its stem cut (at a whole character) to fit, with its extension kept. The name the user gave
    is kept apart, for showing (`shown_file_name`)."""
    name = Path(file_name).name or "upload"
    if len(name.encode()) <= MAX_STORED_NAME_BYTES:
        return name
    suffix = Path(name).suffix
    if len(suffix.encode()) > MAX_EXTENSION_BYTES:
        suffix = ""
    stem = name[: len(name) - len(suffix)] if suffix else name
    room = MAX_STORED_NAME_BYTES - len(suffix.encode())
    return stem.encode()[:room].decode("utf-8", errors="ignore") + suffix


def shown_file_name(file_name: str) -> str:
    """The name shown for a file: as the user gave it, cut only past what the database keeps."""
    name = Path(file_name).name
    return name if len(name) <= MAX_SHOWN_NAME_CHARS else name[: MAX_SHOWN_NAME_CHARS - 1] + "…"


KEEP_FIGURES = 1_000  # figure files per workspace (with figures_keep_mb)


def prune_figures(folder: Path, settings: Settings) -> None:
    """A workspace's figures/ (`folder`) held to its budget: at most KEEP_FIGURES files and figures_keep_mb,
    the oldest removed first (the newest always stays). A report has copied its own figures when it
    was made (runs.finish), so only the live page of an old run loses them."""
    from sandbox.results import prune_kept

    prune_kept(folder, KEEP_FIGURES, settings.figures_keep_mb * 1024 * 1024)


def keep_original(settings: Settings, workspace: Workspace, source: Path, file_name: str) -> Path:
    """Copy the upload byte-for-byte into a new folder of the workspace, under its stored name
    (`stored_file_name`), and hand it to the store; the working copies go beside it. Returns its
    place in this node's cache (`node_files(settings).key_of` gives its key)."""
    folder = settings.workspace_dir(workspace.id) / "files" / new_id()
    folder.mkdir(parents=True, exist_ok=True)
    original = folder / stored_file_name(file_name)
    files = node_files(settings)
    try:
        shutil.copyfile(source, original)
        files.saved(original)
    except BaseException:  # e.g. the disk is full: no half-copied original is left behind
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return original


def add_loading_dataset(
    session: Session,
    settings: Settings,
    workspace: Workspace,
    source: Path,
    file_name: str,
    sheet: str | None,
    preview: dict,
    loader: dict | None = None,
) -> Dataset:
    """Keep the original and store a dataset from a preview of its first rows (`preview_table`),
    status "loading"; `finish_loading` reads the whole file later. It is not analysed until ready."""
    original = keep_original(settings, workspace, source, file_name)
    taken = {d.name for d in listed_datasets(session, workspace.id)}
    info = {**preview, "status": LOADING, "requested_sheet": sheet, "loader": loader or {}}
    dataset = Dataset(
        workspace_id=workspace.id,
        name=dataset_name(
            file_name, taken, preview.get("selected_sheet") if len(preview.get("sheets") or []) > 1 else None
        ),
        file_name=shown_file_name(file_name),
        format=str(preview.get("format") or Path(file_name).suffix.lstrip(".") or "?")[:20],
        sheet=preview.get("selected_sheet"),
        original_path=node_files(settings).key_of(original),
        working_path="",
        rows=int(preview.get("rows") or 0),
        info=info,
        step="uploaded",
    )
    session.add(dataset)
    session.flush()
    return dataset


def finish_loading(
    db: Database, settings: Settings, dataset_id: str, still_ours: Callable[[], bool] = lambda: True
) -> str | None:
    """The background half of a big upload: read the kept original fully, write the Parquet working
    copy and mark the dataset ready (or failed, with the error category and message). Runs in a
    worker thread with its own database session. Returns the final status (None: nothing to do)."""
    with db.session() as session:
        dataset = session.get(Dataset, dataset_id)
        if dataset is None or dataset_status(dataset) != LOADING:
            return None
        original_key, sheet = dataset.original_path, (dataset.info or {}).get("requested_sheet")
    files = node_files(settings)
    table: LoadedTable | None = None
    working, error = files.path_of(original_key).parent / "working_v1.parquet", None

    def record(progress: dict) -> None:
        note_progress(db, dataset_id, progress)

    try:
        original = original_file(files, original_key)  # fetched when another node took the upload
        table = load_table_bounded(original, sheet=sheet, settings=settings, on_progress=record)
        record({"stage": "saving", "rows": int(table.info["rows"]), "percent": 97})
        save_working_copy(table.frame, working)
        files.saved(working)
    except IngestError as exc:
        error = exc.as_dict()
    except MemoryError:
        error = out_of_memory().as_dict()
    except Exception:
        log.exception("background read of dataset %s failed", dataset_id)
        error = damaged().as_dict()
    with db.session() as session:
        dataset = session.get(Dataset, dataset_id)
        if dataset is None or not still_ours():  # not ours (another node took the read over): its result stands
            return None
        if table is not None and error is None:  # read and saved
            if not (dataset.info or {}).get("sheets"):  # stored before its sheets were known: named as a read upload is
                sheets = table.info.get("sheets") or []
                taken = {d.name for d in listed_datasets(session, dataset.workspace_id) if d.id != dataset.id}
                sheet_name = table.info.get("selected_sheet") if len(sheets) > 1 else None
                dataset.name = dataset_name(dataset.file_name, taken, sheet_name)
            dataset.info = {**table.info, "status": READY}  # a new dict: the JSON column sees the change
            dataset.rows = int(table.info["rows"])
            dataset.sheet = table.info.get("selected_sheet")
            dataset.format = table.info.get("format", dataset.format)
            dataset.working_path = files.key_of(working)
        else:
            info = {k: v for k, v in (dataset.info or {}).items() if k not in ("loader", "progress")}
            dataset.info = {**info, "status": FAILED, "error": error}
            files.remove(files.key_of(working))
        return dataset_status(dataset)


def note_progress(db: Database, dataset_id: str, progress: dict) -> None:
    """A loading dataset records how far its read has got (`info["progress"]`: stage, rows read,
    percent), which its card and the API show while it loads."""
    with db.session() as session:
        dataset = session.get(Dataset, dataset_id)
        if dataset is not None and dataset_status(dataset) == LOADING:
            shown = {k: progress[k] for k in ("stage", "rows", "percent") if k in progress}
            dataset.info = {**(dataset.info or {}), "progress": shown}  # a new dict: the JSON column sees it
            session.commit()


def original_file(files: NodeFiles, key: str) -> Path:
    """The kept original upload of `key` in this node's cache, fetched from the store when this node
    lacks it (when the store lacks it too: where it would be, so reading it says file_not_found).
    Raises StoreUnavailable when the store cannot be asked."""
    return files.local(key) or files.path_of(key)


def cached_file(settings: Settings, key: str) -> Path:
    """A kept file (an original upload, a working copy) in this node's cache, fetched from the store
    when this node lacks it; where it would be when the store lacks it too (reading it then fails as a
    missing file). The sandbox and the re-read tools get their inputs from here."""
    return original_file(node_files(settings), key)


def working_files(settings: Settings, datasets: list[Dataset]) -> dict[str, Path]:
    """Name -> the working copy in this node's cache, fetched as needed (what run_python reads)."""
    return {d.name: cached_file(settings, d.working_path) for d in datasets if d.working_path}


def first_working_copies(session: Session, settings: Settings, datasets: list[Dataset]) -> dict[str, Path]:
    """Name -> the working copy of each upload's first version, in this node's cache (fetched as
    needed): what the reader made of the uploaded file, the same table analysis.py gets by reading the
    upload again, without reading it (Verity's own check passes them: `--working`), and of each other
    sheet a run read from it (`NAME@SHEET`). Tables an analysis made are left out (analysis.py makes them
    again)."""
    firsts = {d.name: lineage_root(session, d) for d in datasets if not is_derived(session, d)}
    found = {name: cached_file(settings, d.working_path) for name, d in firsts.items() if d.working_path}
    # another sheet a run turned to (select_sheet): the first version read from it, as NAME@SHEET
    for name, first in firsts.items():
        for version in dataset_versions(session, first):
            key = f"{name}@{version.sheet}"
            if version.sheet != first.sheet and key not in found and version.working_path:
                found[key] = cached_file(settings, version.working_path)
    # resolved: analysis.py runs in its own folder (and sandbox), where a relative data dir names nothing
    return {name: path.resolve() for name, path in found.items() if path.is_file()}


def local_sources(settings: Settings, sources: list[dict], fetch: bool = True) -> list[dict]:
    """`dataset_sources` entries whose original_path is the upload's file on this node (fetched from the
    store with `fetch`), resolved: what analysis.py opens when it runs here."""
    files = node_files(settings)
    out = []
    for source in sources:
        key = str(source.get("original_path") or "")
        path = (files.local(key) if fetch and key else None) or (files.path_of(key) if key else None)
        out.append({**source, "original_path": str(path.resolve()) if path is not None else ""})
    return out


def load_frame(dataset: Dataset, settings: Settings) -> pd.DataFrame:
    """The dataset's working copy, from this node's cache (fetched from the store when this node lacks
    it: never damage). Raises DamagedWorkingCopy when the store holds no readable copy, and
    StoreUnavailable (not damage: the data is fine) when the store cannot be reached."""
    try:
        path = node_files(settings).local(dataset.working_path)
        if path is None:
            raise FileNotFoundError(f"the working copy {dataset.working_path!r} is not in the store")
        return read_working_copy(path)
    except StoreUnavailable:
        raise
    except (OSError, ValueError, ArrowException) as exc:
        if fault_of(exc) is not None:  # not the file: the machine (a full disk...)
            raise
        raise DamagedWorkingCopy(dataset, exc) from exc


def mark_damaged(dataset: Dataset) -> None:
    """Record that the working copy is unreadable (committed with the caller's session): the
    dataset leaves the analyses and its card offers to rebuild it from the kept original."""
    if dataset_status(dataset) == DAMAGED:
        return
    log.warning("dataset %s (%s): working copy %s is damaged", dataset.id, dataset.name, dataset.working_path)
    dataset.info = {
        **(dataset.info or {}),
        "status": DAMAGED,
        "error": {
            "category": "damaged_file",
            "message": "The working copy Verity made of this file is damaged and cannot be read. The file you "
            "uploaded is kept unchanged.",
            "hint": "Rebuild the table from the original upload; steps applied to it afterwards need to be done again.",
            "message_zh": "Verity 为这个文件做的工作副本已损坏，无法读取。你上传的文件原样保留。",
            "hint_zh": "请从原始上传重建这张表；之后对它做过的处理需要重新做一遍。",
        },
    }


def readable_frame(dataset: Dataset, settings: Settings) -> pd.DataFrame | None:
    """The working copy, or None after marking the dataset damaged."""
    try:
        return load_frame(dataset, settings)
    except DamagedWorkingCopy:
        mark_damaged(dataset)
        return None


def rebuild_from_original(session: Session, settings: Settings, dataset: Dataset) -> Dataset:
    """Read the kept original again (same sheet) into a new working copy, as a new current version
    of the dataset. The damaged version stays on record, inactive. Raises IngestError when the
    original itself cannot be read."""
    original = original_file(node_files(settings), dataset.original_path)
    table = load_table_bounded(original, sheet=dataset.sheet, settings=settings)
    return add_version(
        session,
        settings,
        dataset,
        table.frame,
        "rebuilt from the original upload",
        info={**table.info, "status": READY},
    )


def dataset_summary(dataset: Dataset, frame: pd.DataFrame | None = None) -> dict:
    """What the system prompt and the built-in analyst know of a dataset before any tool runs.
    With the frame, categorical columns also get their number of levels and the table its time
    grain. Both are kept in the dataset's info the first time (a version never changes), so
    later turns do not count them again."""
    info = dataset.info or {}
    learned = frame is not None and (
        "grain" not in info or any(c["type"] in LEVELLED and "levels" not in c for c in info.get("columns", []))
    )
    source = frame if learned else None  # the frame, when there is something to learn from it
    columns = []
    for c in info.get("columns", []):
        column = {"name": c["name"], "type": c["type"], "missing": c.get("missing", 0), "pii": c.get("pii")}
        levels = c.get("levels")
        if levels is None and source is not None and c["type"] in LEVELLED and c["name"] in source.columns:
            levels = int(source[c["name"]].nunique(dropna=True))
        if levels is not None:
            column["levels"] = levels
        if c.get("words"):  # a yes/no column's own words (是/否), which answers show
            column["words"] = c["words"]
        columns.append(column)
    grain = info.get("grain")
    if source is not None and "grain" not in info:
        dates = [c["name"] for c in columns if c["type"] == "datetime" and c["name"] in source.columns]
        grain = time_grain(source[dates[0]]) if dates else None
    if learned:  # a new dict: the JSON column sees the change
        dataset.info = {
            **info,
            "grain": grain,
            "columns": [
                {**c, **({"levels": k["levels"]} if "levels" in k else {})}
                for c, k in zip(info.get("columns", []), columns)
            ],
        }
    summary: dict[str, Any] = {
        "name": dataset.name,
        "file": dataset.file_name,
        "sheet": dataset.sheet,
        "rows": dataset.rows,
        "columns": columns,
    }
    if grain:
        summary["grain"] = grain
    # the file's other sheets, by name: a question may name one ("只看二店的" on a book of a sheet per shop)
    selected = info.get("selected_sheet")
    if others := [str(s["name"]) for s in info.get("sheets") or [] if s.get("name") != selected and s.get("rows")]:
        summary["other_sheets"] = others
        # those laid out like the one read (a sheet per shop or month): a question naming one is about its rows
        width = next((s.get("columns") for s in info.get("sheets") or [] if s.get("name") == selected), None)
        alike = [
            str(s["name"]) for s in info.get("sheets") or [] if str(s["name"]) in others and s.get("columns") == width
        ]
        if width and alike:
            summary["sheets_alike"] = alike
    # a table an analysis made (is_derived, its first version): not offered as data to pick from
    if getattr(dataset, "version", 1) == 1 and getattr(dataset, "parent_id", None) is not None:
        summary["derived"] = True
    return summary


def sheet_summary(source: Dataset, sheet: str, table: LoadedTable) -> dict:
    """What the built-in analyst knows of a table (dataset_summary), for another sheet of its upload just
    read (select_sheet): it plans on that sheet next, before the new version is on record."""
    read = Dataset(name=source.name, file_name=source.file_name, sheet=sheet, rows=table.info["rows"])
    read.info = dict(table.info)
    return dataset_summary(read, table.frame)


LEVELLED = ("category", "boolean", "text")  # column types whose number of distinct values is told


# Typical spacing of distinct dates, in days, and the name of that level of detail.
GRAINS = (
    (0.9, 1.1, "daily"),
    (6.5, 7.5, "weekly"),
    (27.5, 31.5, "monthly"),
    (89, 93, "quarterly"),
    (364, 367, "yearly"),
)


def time_grain(dates: pd.Series) -> str | None:
    """The level of detail of a table over time: "daily", "weekly", "monthly", "quarterly" or
    "yearly" from the typical gap between its distinct dates, with " (several rows per date)"
    when a date repeats (transactions rather than one row per period). None when irregular."""
    distinct = pd.Series(pd.to_datetime(dates, errors="coerce").dropna().unique()).sort_values()
    if len(distinct) < 3:
        return None
    gap = distinct.diff().dt.total_seconds().median() / 86400
    name = next((label for low, high, label in GRAINS if low <= gap <= high), None)
    if name is None:
        return None
    return f"{name} (several rows per date)" if dates.notna().sum() > 1.5 * len(distinct) else name


def describe_columns_of(frame: pd.DataFrame) -> list[dict]:
    """Column entries (inspect --json shape) for a table made by a tool rather than read from a file."""
    from analysis_tools.common import column_kind

    return [
        {"name": str(c), "type": column_kind(frame[c]), "missing": int(frame[c].isna().sum()), "pii": None}
        for c in frame.columns
    ]


# What reading the uploaded file found (inspect --json): true of an upload and its versions only.
FILE_READING_KEYS = ("sheets", "header_row", "header_rows")


def add_version(
    session: Session,
    settings: Settings,
    source: Dataset,
    frame: pd.DataFrame,
    step: str,
    new_name: str | None = None,
    info: dict | None = None,
) -> Dataset:
    """Store a tool's output as a new dataset version (or, with `new_name`, a new derived dataset).

    Nothing is overwritten: the previous version stays on disk and in the database, inactive, so
    the user can go back (`activate_version`).
    """
    files = node_files(settings)
    folder = files.path_of(source.working_path or source.original_path).parent
    version = source.version + 1 if new_name is None else 1
    working = folder / (f"working_v{version}.parquet" if new_name is None else f"{new_name}_{new_id()}.parquet")
    save_working_copy(frame, working)
    files.saved(working)
    pii_columns = {c["name"]: c["pii"] for c in source.info.get("columns", []) if c.get("pii")}
    columns = [{**c, "pii": pii_columns.get(c["name"])} for c in describe_columns_of(frame)]
    own_words = {c["name"]: c["words"] for c in source.info.get("columns", []) if c.get("words")}
    for c in columns:  # a yes/no column keeps the sheet's own words (是/否) in the versions made from it
        if c["type"] == "boolean" and c["name"] in own_words:
            c["words"] = own_words[c["name"]]
    info = info or {**source.info, "rows": len(frame), "columns": columns, "cleaning": [], "warnings": []}
    if new_name is not None:  # a table a tool made was never read from a sheet: no sheets or header rows of its own
        info = {k: v for k, v in info.items() if k not in FILE_READING_KEYS}
    if new_name is None:
        source.active = False
    else:
        new_name = dataset_name(new_name, {d.name for d in listed_datasets(session, source.workspace_id)})
    dataset = Dataset(
        workspace_id=source.workspace_id,
        name=new_name or source.name,
        file_name=source.file_name,
        format=source.format,
        sheet=info.get("selected_sheet", source.sheet),
        original_path=source.original_path,
        working_path=files.key_of(working),
        version=version,
        parent_id=source.id,
        step=step,
        rows=len(frame),
        info=info,
    )
    session.add(dataset)
    session.flush()
    return dataset


def dataset_versions(session: Session, dataset: Dataset) -> list[Dataset]:
    """Every version of a dataset's lineage, oldest first."""
    return list(
        session.scalars(
            select(Dataset)
            .where(
                Dataset.workspace_id == dataset.workspace_id,
                Dataset.name == dataset.name,
                Dataset.original_path == dataset.original_path,
            )
            .order_by(Dataset.version)
        )
    )


def upload_family(session: Session, dataset: Dataset) -> list[Dataset]:
    """Every dataset that came from the same uploaded file: its versions and the tables tools
    derived from it (they share the original and its folder)."""
    return list(
        session.scalars(
            select(Dataset)
            .where(Dataset.workspace_id == dataset.workspace_id, Dataset.original_path == dataset.original_path)
            .order_by(Dataset.created_at)
        )
    )


def lineage_root(session: Session, dataset: Dataset) -> Dataset:
    """The first version of a dataset's lineage (the dataset itself when it is a first version)."""
    if dataset.version == 1:
        return dataset
    versions = dataset_versions(session, dataset)
    return versions[0] if versions else dataset


def is_derived(session: Session, dataset: Dataset) -> bool:
    """A table an analysis made (not an upload nor one of its versions). What the rows record
    decides: an upload's first version has no parent (`add_dataset`); a table a tool stored under a
    new name starts its own lineage at version 1 with its source as parent (`add_version` with
    `new_name`). Cleaning or another sheet makes a later version of the same lineage."""
    return lineage_root(session, dataset).parent_id is not None


def derived_parent(session: Session, dataset: Dataset) -> Dataset | None:
    """The dataset a derived table was made from (None for an upload, or when that source table
    has since been removed)."""
    parent_id = lineage_root(session, dataset).parent_id
    return session.get(Dataset, parent_id) if parent_id else None


def remove_derived(session: Session, settings: Settings, dataset: Dataset) -> list[str]:
    """Delete a table an analysis made: every version of it and their working copies, nothing
    else. The uploaded original, its folder and the other tables made from it stay (a table made
    from this one keeps its own working copy). Returns the names removed."""
    versions = dataset_versions(session, dataset)
    files_root = f"workspaces/{dataset.workspace_id}/files/"
    copies = {v.working_path for v in versions if v.working_path}
    for version in versions:
        session.delete(version)
    session.flush()
    files = node_files(settings)
    for copy in copies:  # only its own working copies inside the workspace, never the original
        if copy.startswith(files_root) and copy != dataset.original_path:
            files.remove(copy)
    return sorted({v.name for v in versions})


def remove_upload(session: Session, settings: Settings, dataset: Dataset) -> list[str]:
    """Delete an uploaded file from its workspace: every dataset made from it and its folder on
    disk (the original and all working copies). Callers ask the user to confirm first (SPEC §7).
    Reports already written keep their own copy of the results. Returns the names removed."""
    family = upload_family(session, dataset)
    names = sorted({d.name for d in family})
    folder = PurePosixPath(dataset.original_path).parent
    files_root = PurePosixPath("workspaces", dataset.workspace_id, "files")
    for member in family:
        session.delete(member)
    session.flush()
    if folder.parent == files_root:  # the upload's own folder, never anything outside the workspace
        node_files(settings).remove_folder(folder.as_posix())
    return names


def delete_workspace(session: Session, settings: Settings, workspace: Workspace) -> dict[str, int]:
    """Delete a workspace for good: its rows in every table and its folder (uploads, working
    copies, tool outputs, transcripts, figures, traces). Callers ask the user to confirm first and
    refuse while a run is busy (SPEC §7). Returns how many rows of each kind went."""
    from sqlalchemy import delete

    from app.db.models import (
        Event,
        Evidence,
        KnowledgeEntry,
        Message,
        Question,
        Report,
        ReportShare,
        Run,
        Task,
        ToolCall,
    )
    from app.db.session import rows_changed

    runs = select(Run.id).where(Run.workspace_id == workspace.id)
    counts = {}
    for of_run in (Event, ToolCall):  # rows that know their run only
        counts[of_run.__tablename__] = rows_changed(session, delete(of_run).where(of_run.run_id.in_(runs)))
    for owned in (Message, Evidence, Task, Question, ReportShare, Report, KnowledgeEntry, Dataset, Run):
        counts[owned.__tablename__] = rows_changed(session, delete(owned).where(owned.workspace_id == workspace.id))
    session.delete(workspace)
    session.flush()
    folder = settings.workspace_dir(workspace.id).resolve()
    if folder.parent == (settings.data_dir / "workspaces").resolve():  # never anything else
        node_files(settings).remove_folder(f"workspaces/{workspace.id}")  # the store's files and this node's
    from sandbox import get_pool

    get_pool(settings.sandbox_idle_s).close(workspace.id)  # its warm run_python process, if one is up
    return counts


def activate_version(session: Session, dataset: Dataset) -> None:
    """Make one version current (e.g. back to the original upload); the others stay, inactive."""
    for other in dataset_versions(session, dataset):
        other.active = other.id == dataset.id


def switch_sheet(session: Session, settings: Settings, dataset: Dataset, sheet: str) -> Dataset:
    """Re-read the kept original with another sheet, as a new version of the dataset.
    Raises IngestError (e.g. no_table_found for an unknown sheet)."""
    original = original_file(node_files(settings), dataset.original_path)
    table = load_table_bounded(original, sheet=sheet, settings=settings)
    return add_version(session, settings, dataset, table.frame, f"selected sheet {sheet!r}", info=table.info)
