"""The reading child: what runs in the process forked for one read (app.ingest.bounded forks it
in a single-threaded process, app.ingest.readserver for a multi-threaded one).

A read is a *job*: a folder holding `request.pkl` (kind, file, sheet, the settings and options);
the child applies the memory limit, reads, and writes `result.pkl` (the answer, or the
IngestError) and, for a whole table, `frame.arrow` (the table, an Arrow file the parent
memory-maps) there, then exits. Kinds: "table" (the LoadedTable), "preview" (the streamed first
rows of a big workbook) and "inspect" (the contract's `inspect --json`, computed here so that the
CLI never imports pandas itself).

Standard library only at import time: the CLI imports this, forks, and the child imports the
readers while its early parse (app.ingest.early_parse) has calamine working in a thread.
"""

from __future__ import annotations

import errno
import logging
import os
import pickle
import resource
import select
import signal
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.ingest import early_parse, progress
from app.ingest.errors import IngestError
from app.ingest.sniff import EXCEL_EXTS

if TYPE_CHECKING:
    from collections.abc import Callable

    import pandas as pd

    from app.config import Settings

log = logging.getLogger(__name__)
HINT = "Split the file or remove the sheets, rows and columns you do not need."
HINT_ZH = "请把文件拆开，或删掉用不到的工作表、行和列。"
SETUP_FAILED = 3  # the child's exit code when it could not even start reading (the machinery, not the file)
OUT_OF_MEMORY = 4  # ...when, under its memory limit, it could not even report what went wrong
# a file in the job folder: the child's resident bytes when its limit was set, and the limit's extra bytes
MEMORY_MARK = "memory"
# a file in the job folder, made just before the memory limit is set: a child that then ends with
# SETUP_FAILED ran out of room under its limit, it did not fail to start (see read_job)
LIMITED_MARK = "limited"
SETUP_ERROR = "setup_error.txt"  # why a child could not start (_setup_failed)


class NoChild(Exception):
    """No child process could read the file (the machinery failed, not the file)."""


def import_readers(text: bool = True, documents: bool = False) -> None:
    """Import everything a read uses before the memory limit is applied (a process under its limit
    may not be able to map a shared library any more); the read server does it once, before it
    forks, so that its children do not pay for imports. `text`: the text-file reader's encoding
    detection too (a workbook never needs it; 20 ms). `documents`: the reference-document readers
    (lxml, pypdf)."""
    if text:
        import charset_normalizer  # noqa: F401
    if documents:
        import lxml.etree  # noqa: F401
        import pypdf  # noqa: F401

        import app.ingest.documents
        import app.knowledge
    import fastexcel  # noqa: F401

    import app.ingest.pipeline  # pandas, pyarrow and the readers
    import app.ingest.xlsxstream  # noqa: F401


def read_job(job: Path, early: bool = False) -> int:
    """In the forked child: read the file under the memory limit, write the outcome; the exit code.
    `early`: start the early parse first (a child that still has the readers to import: the
    CLI's; the read server's children have them imported, so there is nothing to overlap)."""
    try:
        kind, path, sheet, settings, options = pickle.loads((job / "request.pkl").read_bytes())
        reader = READERS[kind]
    except Exception:  # noqa: BLE001 - a job folder this code did not write
        return _setup_failed(job)
    if early and kind in ("table", "inspect"):
        early_parse.start(path, sheet, settings)
        early_parse.wait_until_parsing()
    try:
        try:
            import_readers(text=Path(path).suffix.lower() not in EXCEL_EXTS, documents=kind == "document")
        except Exception:  # noqa: BLE001 - a broken installation is not the file's fault
            return _setup_failed(job)
        extra_mb = extra_memory_mb(kind, settings)
        # Under a tight limit even the handler below can fail (entering it allocates), and the error
        # then escapes with the caller's SETUP_FAILED: this mark tells the parent it was the limit.
        (job / LIMITED_MARK).touch()
        resident = limit_memory(extra_mb)
        try:
            (job / MEMORY_MARK).write_text(f"{resident} {extra_mb * 1024 * 1024}")
            outcome = _read_limited(kind, reader, path, sheet, settings, job, options)
            _write_outcome(job, outcome)
        except BaseException:  # noqa: BLE001 - under the limit, the machinery itself ran out of room
            # (a thread's stack, the copy of an error, a write): the limit's doing, never a reason to read
            # the file again unbounded in the parent (SETUP_FAILED would).
            return OUT_OF_MEMORY
    finally:
        early_parse.discard()
    return 0


def extra_memory_mb(kind: str, settings: Settings) -> int:
    """The memory a reading child may use beyond what it maps at its start (its RLIMIT_AS on top)."""
    return settings.document_memory_mb if kind == "document" else settings.parse_memory_mb


def _setup_failed(job: Path) -> int:
    """SETUP_FAILED, with why (the error's last line) left in the job folder for the parent's log: a child
    that could not start has the file read in-process, without its limits, so the cause must be seen."""
    try:
        (job / SETUP_ERROR).write_text(traceback.format_exc().strip().splitlines()[-1][:500])
    except Exception:  # noqa: BLE001 - the reason is a courtesy; the exit code says it failed
        pass
    return SETUP_FAILED


def _read_limited(
    kind: str, reader: Callable[..., Any], path: str, sheet: str | None, settings: Settings, job: Path, options: dict
) -> tuple[str, Any]:
    """The read itself, in the child under its memory limit: ("ok", what the reader returned) or
    ("error", an IngestError)."""
    if kind == "document":
        limit_cpu(settings.document_timeout_s)
    else:
        arrow_memory_returned_soon(workbook=Path(path).suffix.lower() in EXCEL_EXTS)
    if kind == "table":  # a whole table says how far it has got (a background upload's page shows it)
        progress.report_to(job)
    try:
        return ("ok", reader(path, sheet, settings, job, **options))
    except IngestError as exc:
        return ("error", exc)
    except MemoryError:
        return ("error", out_of_memory())
    except BaseException as exc:  # noqa: BLE001 - anything else a damaged file triggers is a damaged file
        # ...unless memory ran out underneath it: a reader that wraps the MemoryError in its own
        # error, or a native one that reports the failed allocation its own way.
        return ("error", out_of_memory() if ran_out_of_memory(exc) else damaged())


def _write_outcome(job: Path, outcome: tuple[str, Any]) -> None:
    partial = job / "result.part"
    try:
        partial.write_bytes(pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL))
    except MemoryError:  # the table fitted, its copy for the parent did not
        del outcome
        partial.write_bytes(pickle.dumps(("error", out_of_memory())))
    partial.rename(job / "result.pkl")


# How long jemalloc keeps freed pages before handing them back: for a text file, none. Kept a while (any
# decay above 0), they are handed back by jemalloc's background thread, which runs when the cores let it:
# the peak then depends on the machine's load, not on the file. The 1M-row CSV read in-process (several
# runs each, load 8-10): 435-439 MB at 0 every time, 439-504 MB at 100 ms, up to 469 MB even at 1 ms,
# 586-593 MB with the background thread off (nothing handed back); whole `verity inspect` runs on a quiet
# machine peaked at 551 MB with 100 ms (3.27x the file, past the 3x target). The cost: the pages of the next
# block faulted in again (~240k page faults against ~180k, ~0.05-0.1 s more system CPU of ~2.2 s).
ARROW_DECAY_MS = 0
# A workbook's peak is calamine's grid whatever the decay (1,782 MB at 1M rows either way), and handing its
# many Arrow blocks back one by one cost more there (1M rows, one run each: 2.59 s of system CPU against
# 1.79 s at 100 ms): it keeps them 100 ms, as before.
WORKBOOK_DECAY_MS = 100


def arrow_memory_returned_soon(workbook: bool = False) -> None:
    """In the reading child: every Arrow allocation (the CSV reader's blocks and the compute
    kernels' results alike) from jemalloc, which hands freed pages back to the system as they are
    freed (ARROW_DECAY_MS; a workbook's within WORKBOOK_DECAY_MS) instead of keeping them for reuse
    (mimalloc, the default, kept ~150 MB more at the peak of a million-row CSV). The child ends with
    its read, so nothing is kept for later anyway."""
    import pyarrow as pa

    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
        pa.jemalloc_set_decay_ms(WORKBOOK_DECAY_MS if workbook else ARROW_DECAY_MS)
    except (pa.ArrowNotImplementedError, NotImplementedError):  # a pyarrow built without jemalloc
        pass


def read_table(path, sheet, settings: Settings, job: Path | None):
    """In the child (job set): the table's description, its frame written beside it. In-process
    (job None, no child available): the LoadedTable itself."""
    from app.ingest import pipeline

    table = pipeline.load_table(path, sheet=sheet, settings=settings)
    if job is None:
        return table
    return table.info, table.pii, _write_frame(table.frame, job)


def read_preview(path, sheet, settings: Settings, job: Path | None, rows: int = 20) -> dict | None:
    """The preview, or None when the streaming reader trips over something unusual in a file
    that is not bad input: the caller then reads the file whole, which decides."""
    from app.ingest import pipeline

    try:
        return pipeline.preview_table(path, sheet=sheet, rows=rows, settings=settings)
    except (IngestError, MemoryError):
        raise
    except Exception:
        log.warning("streamed preview of %s failed; it will be read whole", Path(path).name, exc_info=True)
        return None


def read_inspect(path, sheet, settings: Settings, job: Path | None, rows: int = 20) -> dict:
    """The contract's `inspect --json` (plain JSON values: the parent needs no pandas to print it)."""
    from app.ingest import pipeline

    return pipeline.inspect_file(path, sheet=sheet, rows=rows, settings=settings)


def read_document(path, sheet, settings: Settings, job: Path | None) -> str:
    """The text of a reference document (`sheet` carries its uploaded name, which says its kind)."""
    from app.knowledge import document_text

    return document_text(Path(path), sheet or Path(path).name, settings)


READERS: dict[str, Any] = {
    "table": read_table,
    "preview": read_preview,
    "inspect": read_inspect,
    "document": read_document,
}


def _write_frame(frame: pd.DataFrame, job: Path) -> pd.DataFrame | None:
    """The table as an Arrow IPC file the parent maps without copying (None: written there);
    a frame Arrow cannot hold goes back pickled instead (returned)."""
    import pyarrow as pa

    try:
        arrow = pa.Table.from_pandas(frame, preserve_index=False)
        with pa.OSFile(str(job / "frame.arrow"), "wb") as sink, pa.ipc.new_file(sink, arrow.schema) as writer:
            writer.write_table(arrow)
        return None
    except (pa.ArrowException, TypeError, ValueError):
        return frame


def limit_memory(extra_mb: int) -> int:
    """Cap the address space at what the process already maps plus `extra_mb` (RLIMIT_AS: the kernel
    refuses the allocation; Python raises MemoryError or the native reader aborts or crashes, and
    either way the read ends in this child). Returns the bytes resident then (0 if unknown): what
    `crashed_for_memory` measures the child's growth from."""
    try:
        with open("/proc/self/statm") as fh:
            fields = fh.read().split()
        mapped, resident = int(fields[0]) * resource.getpagesize(), int(fields[1]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        mapped = resident = 0
    limit = mapped + extra_mb * 1024 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):
        pass
    return resident


def ran_out_of_memory(exc: BaseException) -> bool:
    """Whether an error raised by a read is memory running out under it: a MemoryError (Arrow's
    allocation failures are one) anywhere in its chain of causes, an OS error ENOMEM, or a thread
    that could not start (its stack is refused under the address-space limit). A reader that
    catches the MemoryError and raises its own error (a parse error, a fallback that fails) would
    otherwise call a file too big for the limit damaged."""
    seen: set[int] = set()
    stack: list[BaseException | None] = [exc]
    while stack:
        error = stack.pop()
        if error is None or id(error) in seen:
            continue
        seen.add(id(error))
        if isinstance(error, MemoryError):
            return True
        if isinstance(error, OSError) and error.errno == errno.ENOMEM:
            return True
        if isinstance(error, RuntimeError) and "can't start new thread" in str(error):
            return True
        stack += [error.__cause__, error.__context__]
    return False


def crashed_for_memory(job: Path, peak_kb: int) -> bool:
    """Whether a child that died of a crash signal (SIGSEGV, SIGBUS) had used at least half the
    memory its limit allowed (its peak resident size, `peak_kb` from the kernel, against what was
    resident when the limit was set): native code that does not check a refused allocation
    crashes instead of reporting it (pyarrow's CSV reader at a 20-30 MB limit segfaults or aborts
    from run to run), and that is the limit, not the file. A crash with memory to spare is the file's."""
    try:
        resident, extra = map(int, (job / MEMORY_MARK).read_text().split())
    except (OSError, ValueError):
        return False
    return extra > 0 and peak_kb * 1024 - resident >= extra // 2


def limit_cpu(seconds: float) -> None:
    """Cap the CPU time this process may use (RLIMIT_CPU: the kernel stops it with SIGXCPU, then
    SIGKILL), so a read that spins ends even if nobody is left to watch the clock."""
    limit = max(1, int(seconds + 0.999))
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))
    except (ValueError, OSError):
        pass


def wait_child(pid: int, timeout: float) -> tuple[str, int, int]:
    """Wait for a child up to `timeout` seconds; kill it after that. (how it ended, its exit code,
    its peak resident size in KiB)."""
    deadline = time.monotonic() + timeout
    fd = pidfd(pid)
    try:
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                return "exit", os.waitstatus_to_exitcode(status), usage.ru_maxrss
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                _, _, usage = os.wait4(pid, 0)
                return "timeout", -signal.SIGKILL, usage.ru_maxrss
            if fd is not None:
                select.select([fd], [], [], left)
            else:
                time.sleep(min(left, 0.01))
    finally:
        if fd is not None:
            os.close(fd)


def pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when the child exits (Linux 5.3+), or None."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def damaged() -> IngestError:
    return IngestError(
        "corrupt_file",
        "The file is damaged or uses a structure Verity cannot read.",
        "Open it in Excel or LibreOffice and save it again.",
        "文件已损坏，或用了 Verity 读不了的结构。",
        "请用 Excel 或 WPS 打开，再重新保存一份。",
    )


def out_of_memory() -> IngestError:
    return IngestError(
        "too_large",
        "Reading this file needed more memory than Verity allows for one file.",
        HINT,
        "读取这个文件需要的内存超过了 Verity 给单个文件的上限。",
        HINT_ZH,
    )
