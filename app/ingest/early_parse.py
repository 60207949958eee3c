"""The early parse: calamine's parse of the likely table, started in a second process while the
reading child is still importing pandas.

In a whole-process `verity inspect` of a 100k-row workbook, calamine's parse takes about a second,
and fastexcel holds the GIL for all of it, so no thread can overlap it; importing the readers
(pandas, pyarrow, the settings) and finding the merged ranges take another half second. So the
CLI's reading child (app.ingest.child) forks once more before it imports anything: this
grandchild reads the first rows of the workbook straight from the zip (xlsxstream), finds the
table in them with the same rules the pipeline uses (table.layout_of_cells, no pandas), tells the
child which sheet and first row it chose, and parses those rows with exactly the options of
`readers.load_typed`, into an Arrow file in the job folder. When the pipeline then asks for the
data rows of that sheet from that row (`claim`), it waits for the grandchild and maps its file
instead of parsing; for anything else (another sheet, merged cells that move the header, a failed
parse) the grandchild is stopped and the pipeline parses as always, so the answer never depends on
the guess. Only .xlsx/.xlsm sheets bigger than their first rows are worth it.

The grandchild is bounded like its parent: the same memory limit, and it dies with the child
(PR_SET_PDEATHSIG), which the caller kills at its deadline.
"""

from __future__ import annotations

import json
import os
import signal
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from app.config import Settings

FILE = "early.arrow"


def typed_options(first: int, n: int | None) -> dict[str, Any]:
    """fastexcel's options for the data rows with native types (one definition for the pipeline's
    own parse and this one: the two must give the same table)."""
    # eager: one Arrow record batch straight from the reader, without the lazy sheet object in between
    return {"header_row": None, "skip_rows": first, "n_rows": n, "schema_sample_rows": None,
            "whitespace_as_null": True, "eager": True}


@dataclass
class _Pending:
    pid: int
    guess: int  # the read end of the pipe the grandchild writes its choice to
    path: str
    out: Path


_pending: _Pending | None = None


def start(job: Path, path: str, sheet: str | None, settings: Settings,
          limit_memory: Callable[[int], None]) -> None:
    """Fork the grandchild (from a single-threaded process); never raises."""
    global _pending
    if not hasattr(os, "fork") or Path(path).suffix.lower() not in (".xlsx", ".xlsm"):
        return
    try:
        guess_r, guess_w = os.pipe()
    except OSError:
        return
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        os.close(guess_r)
        os.close(guess_w)
        return
    if pid == 0:  # ---- grandchild
        code = 1
        try:
            os.close(guess_r)
            code = _parse(job / FILE, path, sheet, settings, limit_memory, parent, guess_w)
        finally:
            os._exit(code)
    os.close(guess_w)
    _pending = _Pending(pid, guess_r, path, job / FILE)


def claim(path: str | Path, sheet: str, first: int, n: int | None) -> pa.RecordBatch | None:
    """The early parse's record batch if it parsed exactly these rows (`sheet` from 0-based row
    `first` to the end), waiting for it to finish; else None (and the early parse is stopped)."""
    global _pending
    pending, _pending = _pending, None
    if pending is None:
        return None
    try:
        with os.fdopen(pending.guess, "rb") as pipe:
            chosen = json.loads(pipe.readline() or b"null")  # blocks until the grandchild has chosen
        if n is not None or chosen != {"path": str(path), "sheet": sheet, "first": first}:
            _stop(pending.pid)
            return None
        _, status = os.waitpid(pending.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0 or not pending.out.exists():
            return None
        import pyarrow as pa

        # Memory-mapped, as the parent maps the finished frame: no copy of the columns.
        return pa.ipc.open_file(pa.memory_map(str(pending.out))).get_batch(0)
    except (OSError, ValueError):
        _stop(pending.pid)
        return None


def discard() -> None:
    """Stop an early parse nobody claimed (a CSV after all, an error, a small sheet)."""
    global _pending
    pending, _pending = _pending, None
    if pending is not None:
        os.close(pending.guess)
        _stop(pending.pid)


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


# --- in the grandchild ---------------------------------------------------------------------------


def _parse(out: Path, path: str, sheet: str | None, settings: Settings, limit_memory: Callable[[int], None],
           parent: int, guess_w: int) -> int:
    _die_with(parent)
    import logging

    import fastexcel
    import pyarrow as pa
    import pyarrow.ipc

    for name in ("fastexcel", "calamine"):  # as in app.ingest.readers: the pipeline logs what matters
        logging.getLogger(name).setLevel(logging.ERROR)
    limit_memory(settings.parse_memory_mb)
    with os.fdopen(guess_w, "wb") as pipe:
        chosen = _choose(path, sheet, settings)
        pipe.write(json.dumps(chosen and {"path": path, "sheet": chosen[0], "first": chosen[1]}).encode() + b"\n")
    if chosen is None:
        return 1
    batch = fastexcel.read_excel(path).load_sheet(chosen[0], **typed_options(chosen[1], None))
    part = out.with_suffix(".part")
    with pa.OSFile(str(part), "wb") as sink, pa.ipc.new_file(sink, batch.schema) as writer:
        writer.write_batch(batch)
    part.rename(out)
    return 0


def _choose(path: str, sheet: str | None, settings: Settings) -> tuple[str, int] | None:
    """The sheet the pipeline will most likely read and its first data row, from the sheet's
    first rows: the largest sheet (the pipeline takes the largest table) unless one is named.
    None when the sheet is all in its first rows (nothing left worth parsing early) or anything
    is unusual (the pipeline decides those)."""
    from app.ingest.sniff import sniff_format
    from app.ingest.table import HEAD_ROWS, layout_of_cells
    from app.ingest.xlsxstream import XlsxBook, head_cells

    try:
        if sniff_format(Path(path), settings) not in ("xlsx", "xlsm"):
            return None
        with zipfile.ZipFile(path) as zf:
            book = XlsxBook(zf)
            entries = [e for e in book.sheets if sheet is None or e.name == sheet]
            if not entries:
                return None
            entry = max(entries, key=lambda e: e.xml_size)
            head = book.head(entry, HEAD_ROWS)
        if head.complete:
            return None
        cells = head_cells(head.rows, HEAD_ROWS)
        width = max((len(row) for row in cells), default=0)
        layout = layout_of_cells(cells, list(range(len(cells))), list(range(width)), None, None, False)
    except Exception:  # noqa: BLE001 - the pipeline reads this file the usual way and says what is wrong
        return None
    return (entry.name, layout.data_start) if layout.col_idx else None


def _die_with(parent: int) -> None:
    """Be killed when the reading child ends, however it ends (Linux; elsewhere the child's
    `discard` stops this process when the child ends normally)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the child ended before the signal was asked for
        os._exit(1)
