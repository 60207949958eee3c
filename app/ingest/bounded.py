"""Read a file in a forked child process with a wall-time limit and a memory limit.

A crafted or damaged file can make a native reader spin or allocate without end; inside a child
that costs one killed process, never the server or the CLI, and the user gets a `too_large`
error instead of a hang. How many reads run at once is bounded too (app.ingest.parse_slots): a
read waits for a slot, so several big uploads together stay within `parse_total_memory_mb`. A read is a *job*: a folder holding `request.pkl` (file, sheet and the
limits); the child writes `result.pkl` (the table's description, or the IngestError) and
`frame.arrow` (the table, an Arrow file the parent memory-maps) there and exits. A job reads a
whole table (`load_table_bounded`) or the streamed preview of a big workbook
(`preview_table_bounded`).

Who forks the child:
- a process with one thread (the CLI) forks itself: cheapest, everything is already imported;
- a multi-threaded process (the web server) must not fork (the child can inherit a lock another
  thread held and hang), so a single-threaded read server (`python -m app.ingest.readserver`,
  started once, with the readers imported) forks the children on its behalf.
If neither can run (no fork on this platform, a read server that cannot start), the read runs in
this process, limited by `parse_timeout_s` between steps only, and that is logged.
"""

from __future__ import annotations

import logging
import os
import pickle
import resource
import select
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa

from app.config import Settings, get_settings
from app.ingest import pipeline
from app.ingest.errors import IngestError
from app.ingest.parse_slots import parse_slot
from app.ingest.pipeline import LoadedTable

log = logging.getLogger(__name__)
_HINT = "Split the file or remove the sheets, rows and columns you do not need."
SETUP_FAILED = 3  # the child's exit code when it could not even start reading (the machinery, not the file)


class NoChild(Exception):
    """No child process could read the file (the machinery failed, not the file)."""


def load_table_bounded(path: str | Path, sheet: str | None = None, settings: Settings | None = None) -> LoadedTable:
    """`load_table` in a child process: at most `parse_timeout_s` seconds and `parse_memory_mb`
    megabytes of memory beyond what the child starts with. Raises IngestError as `load_table`
    does, and `too_large` when a limit is hit."""
    return _bounded("table", path, sheet, settings)


def preview_table_bounded(path: str | Path, sheet: str | None = None, rows: int = 20,
                          settings: Settings | None = None) -> dict | None:
    """`preview_table` (the streamed first rows of a big workbook) in a child process, with the
    same limits: the web server parses nothing of an uploaded file itself. None when the
    streaming reader cannot preview this file (read it whole instead)."""
    return _bounded("preview", path, sheet, settings, rows=rows)


def _bounded(kind: str, path: str | Path, sheet: str | None, settings: Settings | None, **options):
    settings = settings or get_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    job = Path(tempfile.mkdtemp(prefix="read-", dir=settings.data_dir))
    try:
        # The child needs the limits, not the model's API key: that never touches the disk.
        request = (kind, str(Path(path).resolve()), sheet, settings.model_copy(update={"llm_api_key": None}), options)
        (job / "request.pkl").write_bytes(pickle.dumps(request))
        with parse_slot(settings):  # a queue: the reads at once stay within parse_total_memory_mb
            try:
                status, code = run_job(job, settings.parse_timeout_s)
                return _outcome(kind, job, status, code, settings)
            except NoChild as exc:
                log.warning("reading %s in-process: %s", Path(path).name, exc)
                return _READERS[kind](path, sheet, settings, None, **options)
    finally:
        shutil.rmtree(job, ignore_errors=True)


def import_readers() -> None:
    """Import what reading imports lazily, before forking: a child under its memory limit may not
    be able to map a shared library any more, and a forked child should not pay for imports."""
    import charset_normalizer  # noqa: F401
    import fastexcel  # noqa: F401

    import app.ingest.xlsxstream  # noqa: F401


def run_job(job: Path, timeout: float) -> tuple[str, int]:
    """Fork a child for the job, here or in the read server; ("exit", code) or ("timeout", -9)."""
    if threading.active_count() == 1 and hasattr(os, "fork"):
        import_readers()
        pid = os.fork()
        if pid == 0:  # ---- child
            code = SETUP_FAILED
            try:
                code = read_job(job)
            finally:
                os._exit(code)
        return wait_child(pid, timeout)
    from app.ingest.readserver import read_server

    try:
        server = read_server()
    except OSError as exc:  # the interpreter could not be started again (resources, permissions)
        raise NoChild(f"the read server could not start ({exc})") from None
    return server.run(job, timeout)


def wait_child(pid: int, timeout: float) -> tuple[str, int]:
    """Wait for a child up to `timeout` seconds; kill it after that."""
    deadline = time.monotonic() + timeout
    fd = pidfd(pid)
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return "exit", os.waitstatus_to_exitcode(status)
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "timeout", -signal.SIGKILL
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


def read_job(job: Path) -> int:
    """In the forked child: apply the memory limit, read the file, write the outcome; the exit code."""
    try:
        kind, path, sheet, settings, options = pickle.loads((job / "request.pkl").read_bytes())
        reader = _READERS[kind]
    except Exception:  # noqa: BLE001 - a job folder this code did not write
        return SETUP_FAILED
    limit_memory(settings.parse_memory_mb)
    try:
        outcome = ("ok", reader(path, sheet, settings, job, **options))
    except IngestError as exc:
        outcome = ("error", exc)
    except MemoryError:
        outcome = ("error", _out_of_memory())
    except BaseException:  # noqa: BLE001 - anything else a damaged file triggers is a damaged file
        outcome = ("error", _damaged())
    partial = job / "result.part"
    try:
        partial.write_bytes(pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL))
    except MemoryError:  # the table fitted, its copy for the parent did not
        del outcome
        partial.write_bytes(pickle.dumps(("error", _out_of_memory())))
    partial.rename(job / "result.pkl")
    return 0


def _read_table(path, sheet, settings: Settings, job: Path | None):
    """In the child (job set): the table's description, its frame written beside it. In-process
    (job None, no child available): the LoadedTable itself."""
    table = pipeline.load_table(path, sheet=sheet, settings=settings)
    if job is None:
        return table
    return table.info, table.pii, _write_frame(table.frame, job)


def _read_preview(path, sheet, settings: Settings, job: Path | None, rows: int = 20) -> dict | None:
    """The preview, or None when the streaming reader trips over something unusual in a file
    that is not bad input: the caller then reads the file whole, which decides."""
    try:
        return pipeline.preview_table(path, sheet=sheet, rows=rows, settings=settings)
    except (IngestError, MemoryError):
        raise
    except Exception:  # noqa: BLE001
        log.warning("streamed preview of %s failed; it will be read whole", Path(path).name, exc_info=True)
        return None


_READERS = {"table": _read_table, "preview": _read_preview}


def _write_frame(frame: pd.DataFrame, job: Path) -> pd.DataFrame | None:
    """The table as an Arrow IPC file the parent maps without copying (None: written there);
    a frame Arrow cannot hold goes back pickled instead (returned)."""
    try:
        arrow = pa.Table.from_pandas(frame, preserve_index=False)
        with pa.OSFile(str(job / "frame.arrow"), "wb") as sink, pa.ipc.new_file(sink, arrow.schema) as writer:
            writer.write_table(arrow)
        return None
    except (pa.ArrowException, TypeError, ValueError):
        return frame


def _read_frame(job: Path) -> pd.DataFrame:
    # Memory-mapped: the columns point into the file's pages, which stay valid after the job
    # folder is removed (the mapping keeps the file alive).
    arrow = pa.ipc.open_file(pa.memory_map(str(job / "frame.arrow"))).read_all()
    return arrow.to_pandas(split_blocks=True)


def limit_memory(extra_mb: int) -> None:
    """Cap the address space at what the child already maps plus `extra_mb` (RLIMIT_AS: the kernel
    refuses the allocation; Python raises MemoryError or the native reader aborts, and either way
    the read ends in this child)."""
    try:
        with open("/proc/self/statm") as fh:
            mapped = int(fh.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        mapped = 0
    limit = mapped + extra_mb * 1024 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):
        pass


def _outcome(kind: str, job: Path, status: str, code: int, settings: Settings):
    if status == "timeout":
        raise IngestError("too_large", f"Reading this file took longer than {settings.parse_timeout_s:g} seconds.",
                          _HINT)
    result = job / "result.pkl"
    if result.exists():
        outcome_kind, payload = pickle.loads(result.read_bytes())
        if outcome_kind == "error":
            raise payload
        if kind != "table":
            return payload
        info, pii, frame = payload
        return LoadedTable(frame=_read_frame(job) if frame is None else frame, info=info, pii=pii)
    if code == SETUP_FAILED:
        raise NoChild("the reading child could not start")
    if code in (-signal.SIGSEGV, -signal.SIGBUS, -signal.SIGILL):
        raise _damaged()
    # Killed without a result: the kernel's out-of-memory killer, or an allocation the native
    # reader could not survive under the address-space limit (it aborts).
    raise _out_of_memory()


def _damaged() -> IngestError:
    return IngestError("corrupt_file", "The file is damaged or uses a structure Verity cannot read.",
                       "Open it in Excel or LibreOffice and save it again.")


def _out_of_memory() -> IngestError:
    return IngestError("too_large", "Reading this file needed more memory than Verity allows for one file.", _HINT)
