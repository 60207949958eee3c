"""The early parse: calamine's parse of the likely table, started in a thread before the reading
child imports pandas.

In a whole-process `verity inspect` of a 100k-row workbook, calamine's parse takes about a second
of CPU, and importing the readers (pandas, pyarrow) and finding the merged ranges another half
second. fastexcel lets go of the GIL while calamine parses, so the CLI's reading child
(app.ingest.child) starts the parse in a thread before it imports anything: the thread reads the
first rows of the workbook straight from the zip (xlsxstream), finds the table in them with the
same rules the pipeline uses (table.layout_of_cells, no pandas) and parses those rows with exactly
the options of `readers.load_typed`, while the main thread imports the readers and the pipeline
scans the merged ranges. When the pipeline then asks for the data rows of that sheet from that
row (`claim`), it takes the thread's record batch instead of parsing; for anything else (another
sheet, merged cells that move the header, a failed parse) it waits for the thread to end (a
thread cannot be stopped, and two parses at once would need twice the memory) and parses as
always, so the answer never depends on the guess. Only .xlsx/.xlsm sheets bigger than their first
rows are worth it.

The thread runs in the reading child, under its time limit (the parent kills the child at its
deadline) and its memory limit (applied once the readers are imported; what the parse allocated
by then counts as already mapped).
"""

from __future__ import annotations

import logging
import threading
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from app.config import Settings


def typed_options(first: int, n: int | None) -> dict[str, Any]:
    """fastexcel's options for the data rows with native types (one definition for the pipeline's
    own parse and this one: the two must give the same table)."""
    # eager: one Arrow record batch straight from the reader, without the lazy sheet object in between
    return {
        "header_row": None,
        "skip_rows": first,
        "n_rows": n,
        "schema_sample_rows": None,
        "whitespace_as_null": True,
        "eager": True,
    }


@dataclass
class _Pending:
    path: str
    thread: threading.Thread | None = None
    chosen: tuple[str, int] | None = None  # (sheet, first data row) the thread parses
    batch: pa.RecordBatch | None = None
    # set once calamine has the rows (it lets go of the GIL) or the thread has ended without it
    parsing: threading.Event = field(default_factory=threading.Event)


_pending: _Pending | None = None


def start(path: str, sheet: str | None, settings: Settings) -> None:
    """Start the parse in a daemon thread; never raises."""
    global _pending
    if Path(path).suffix.lower() not in (".xlsx", ".xlsm"):
        return
    pending = _Pending(path)
    pending.thread = threading.Thread(
        target=_parse, args=(pending, sheet, settings), name="verity-early-parse", daemon=True
    )
    try:
        pending.thread.start()
    except RuntimeError:  # no thread could be started: the pipeline parses as always
        return
    _pending = pending


def claim(path: str | Path, sheet: str, first: int, n: int | None) -> pa.RecordBatch | None:
    """The early parse's record batch if it parsed exactly these rows (`sheet` from 0-based row
    `first` to the end), waiting for it to finish; else None, once the thread has ended."""
    global _pending
    pending, _pending = _pending, None
    if pending is None or pending.thread is None:
        return None
    pending.thread.join()
    if n is not None or pending.path != str(path) or pending.chosen != (sheet, first):
        return None
    return pending.batch


def wait_until_parsing() -> None:
    """Wait until the early parse has handed its rows to calamine, or has ended without: the
    reading child imports the readers after that, not during the check and the choice before it.
    Those are Python (the package's size check searches each worksheet's bytes for rows past the
    limit: a second of the GIL for a million rows) and so are the imports; at the same time they
    take turns on one core, calamine starting only after both. Once calamine parses (its own
    thread, without the GIL) the imports run beside it. No early parse: returns at once."""
    pending = _pending
    if pending is not None and pending.thread is not None:
        pending.parsing.wait()


def discard() -> None:
    """Forget an early parse nobody claimed (a CSV after all, an error, a small sheet): the reading
    child exits right after, which ends the thread."""
    global _pending
    _pending = None


# --- in the thread -------------------------------------------------------------------------------


def _parse(pending: _Pending, sheet: str | None, settings: Settings) -> None:
    try:
        import fastexcel

        for name in ("fastexcel", "calamine"):  # as in app.ingest.readers: the pipeline logs what matters
            logging.getLogger(name).setLevel(logging.ERROR)
        pending.chosen = _choose(pending.path, sheet, settings)
        if pending.chosen is not None:
            name, first = pending.chosen
            pending.parsing.set()
            pending.batch = fastexcel.read_excel(pending.path).load_sheet(name, **typed_options(first, None))
    except BaseException:  # noqa: BLE001 - Rust panics too: the pipeline parses again and says what is wrong
        pending.batch = None
    finally:
        pending.parsing.set()


def _choose(path: str, sheet: str | None, settings: Settings) -> tuple[str, int] | None:
    """The sheet the pipeline will most likely read and its first data row, from the sheet's
    first rows: the largest sheet (the pipeline takes the largest table) unless one is named.
    None when the sheet is all in its first rows (nothing left worth parsing early) or anything
    is unusual (the pipeline decides those)."""
    from app.ingest.sniff import sniff_format
    from app.ingest.table import HEAD_ROWS, layout_of_cells
    from app.ingest.xlsxstream import ROW_SLACK, XlsxBook, head_cells

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
            if head.complete or _declared_too_large(head.dimension, settings):
                return None
            if book.row_beyond(entry, settings.max_rows + ROW_SLACK) is not None:
                return None  # the pipeline refuses it unparsed (a row numbered past the limit)
        cells = head_cells(head.rows, HEAD_ROWS)
        width = max((len(row) for row in cells), default=0)
        layout = layout_of_cells(cells, list(range(len(cells))), list(range(width)), None, None, False)
    except Exception:  # noqa: BLE001 - the pipeline reads this file the usual way and says what is wrong
        return None
    return (entry.name, layout.data_start) if layout.col_idx else None


def _declared_too_large(dimension: tuple[int, int, int, int] | None, settings: Settings) -> bool:
    """The sheet says it is beyond the limits (the pipeline refuses it before parsing anything,
    readers._cells_limit): no parse is started for it."""
    from app.ingest.xlsxstream import ROW_SLACK

    if dimension is None:
        return False
    rows, cols = dimension[2] + 1, dimension[3] + 1
    return rows > settings.max_rows + ROW_SLACK or cols > settings.max_columns or rows * cols > settings.max_cells
