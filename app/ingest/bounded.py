"""Read a file in a forked child process with a wall-time limit and a memory limit.

A crafted or damaged file can make a native reader spin or allocate without end; inside a child
that costs one killed process, never the server or the CLI, and the user gets a `too_large`
error instead of a hang. How many reads run at once is bounded too (app.ingest.parse_slots): a
read waits for a slot, so several big uploads together stay within `parse_total_memory_mb`. A
read is a *job* folder (app.ingest.child says what the child does with it): a whole table
(`load_table_bounded`), the streamed preview of a big workbook (`preview_table_bounded`) or the
CLI's `inspect --json` (`inspect_bounded`).

Who forks the child:
- a process with one thread (the CLI) forks itself: cheapest. The child imports the readers
  itself (this module imports no pandas, so `verity inspect` forks within milliseconds of its
  start) and starts the early parse first (app.ingest.early_parse);
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
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.config import Settings, get_settings
from app.ingest import progress
from app.ingest.child import (
    HINT,
    HINT_ZH,
    LIMITED_MARK,
    OUT_OF_MEMORY,
    READERS,
    SETUP_ERROR,
    SETUP_FAILED,
    NoChild,
    crashed_for_memory,
    damaged,
    extra_memory_mb,
    out_of_memory,
    read_job,
    wait_child,
)
from app.ingest.errors import IngestError
from app.ingest.parse_slots import parse_slot

if TYPE_CHECKING:
    import pandas as pd

    from app.ingest.pipeline import LoadedTable

log = logging.getLogger(__name__)
DOCUMENT_HINT = "Keep the parts the analysis needs (definitions, rules, context), or save it again as plain text."
DOCUMENT_HINT_ZH = "只保留分析需要的部分（定义、规则、背景），或另存为纯文本。"


def load_table_bounded(
    path: str | Path,
    sheet: str | None = None,
    settings: Settings | None = None,
    on_progress: Callable[[dict[str, Any]], None] | None = None,
) -> LoadedTable:
    """`load_table` in a child process: at most `parse_timeout_s` seconds and `parse_memory_mb`
    megabytes of memory beyond what the child starts with. Raises IngestError as `load_table`
    does, and `too_large` when a limit is hit. `on_progress` is handed the read's progress
    ({"stage", "rows", "percent"}, app.ingest.progress) while the child reads."""
    return _bounded("table", path, sheet, settings, on_progress=on_progress)


def preview_table_bounded(
    path: str | Path, sheet: str | None = None, rows: int = 20, settings: Settings | None = None
) -> dict | None:
    """`preview_table` (the streamed first rows of a big workbook) in a child process, with the
    same limits: the web server parses nothing of an uploaded file itself. None when the
    streaming reader cannot preview this file (read it whole instead)."""
    return _bounded("preview", path, sheet, settings, rows=rows)


def inspect_bounded(
    path: str | Path, sheet: str | None = None, rows: int = 20, settings: Settings | None = None
) -> dict:
    """The contract's `inspect --json` (`pipeline.inspect_file`), computed in a child process with
    the same limits; the answer is plain JSON values, so the caller needs no pandas."""
    return _bounded("inspect", path, sheet, settings, rows=rows)


def document_text_bounded(path: str | Path, file_name: str, settings: Settings | None = None) -> str:
    """The text of a reference document (`app.knowledge.document_text`) read in a child process
    held to `document_timeout_s` of CPU and wall time and `document_memory_mb` of memory: a
    crafted .docx or PDF costs one killed child, never the web server. Raises KnowledgeError
    (a limit hit is `too_large`, with a hint about documents)."""
    from app.knowledge import KnowledgeError

    settings = settings or get_settings()
    try:
        return _bounded("document", path, file_name, settings, timeout=settings.document_timeout_s)
    except KnowledgeError:
        raise
    except IngestError as exc:  # a limit of the child (time, memory) or a crash: said of a document
        if exc.category == "corrupt_file":  # the child crashed on it
            hint, hint_zh = (
                "Open it in Word or LibreOffice and save it again.",
                "请用 Word 或 WPS 打开，再重新保存一份。",
            )
        else:
            hint, hint_zh = DOCUMENT_HINT, DOCUMENT_HINT_ZH
        raise KnowledgeError(exc.category, exc.message, hint, exc.message_zh, hint_zh) from exc


# A table read takes up to about ten times its file's size in memory (issue 27's measures: ~10x for a CSV read
# cell by cell). Where no child can read (no fork, the read server gone), the file is read in this process,
# which has no limit of its own: only a file that fits the child's limit at that growth is.
IN_PROCESS_GROWTH = 10


def _bounded(
    kind: str,
    path: str | Path,
    sheet: str | None,
    settings: Settings | None,
    timeout: float | None = None,
    on_progress: Callable[[dict[str, Any]], None] | None = None,
    **options,
):
    settings = settings or get_settings()
    timeout = settings.parse_timeout_s if timeout is None else timeout
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    # Absolute: the read server's children resolve the job in the server's working folder, which is where
    # it was started, not necessarily this process's now (a relative data_dir, `data/runtime` by default,
    # named another folder there: the child found no job and "could not start", and the file was read
    # in-process without its limits). The settings' data_dir likewise, for what the reader keeps there.
    job = Path(tempfile.mkdtemp(prefix="read-", dir=settings.data_dir)).resolve()
    try:
        # The child needs the limits, not the model's API key: that never touches the disk.
        limits = settings.model_copy(update={"llm_api_key": None, "data_dir": settings.data_dir.resolve()})
        request = (kind, str(Path(path).resolve()), sheet, limits, options)
        (job / "request.pkl").write_bytes(pickle.dumps(request))
        with parse_slot(settings):  # a queue: the reads at once stay within parse_total_memory_mb
            try:
                with progress.watch(job, on_progress):
                    status, code, peak_kb = run_job(job, timeout)
                return _outcome(kind, job, status, code, timeout, peak_kb)
            except NoChild as exc:
                if Path(path).stat().st_size * IN_PROCESS_GROWTH > extra_memory_mb(kind, settings) << 20:
                    log.warning("refusing %s: %s, and it may not fit in-process", Path(path).name, exc)
                    raise out_of_memory() from None
                log.warning("reading %s in-process: %s", Path(path).name, exc)
                return READERS[kind](path, sheet, settings, None, **options)
    finally:
        shutil.rmtree(job, ignore_errors=True)


# Work a one-threaded process does while its forked child reads (`while_reading`): run once, by the
# next read that forks here. A thread would not do: a process with a second thread must not fork.
_MEANWHILE: list[Callable[[Callable[[], bool]], None]] = []


@contextmanager
def while_reading(work: Callable[[Callable[[], bool]], None]) -> Iterator[None]:
    """Within the block, the first read that forks its child in this process runs `work` in the parent
    while the child reads (`verity analyze` imports the agent and the tools then: the read is a second
    core's work). `work` is given `reading()`, whether the child is still reading: work that can wait
    stops when it is not (`verity analyze` then starts its check's sandbox, whose files the read made).
    The read's time limit still counts from the fork. `work` must not raise; it is dropped at the end
    of the block if no read ran it."""
    _MEANWHILE[:] = [work]
    try:
        yield
    finally:
        _MEANWHILE.clear()


def _still_running(pid: int) -> bool:
    """Whether the forked child `pid` has not ended yet (it is left to wait_child to reap). Where that
    cannot be asked without reaping it (no waitid: macOS), it is taken to be reading still."""
    if not hasattr(os, "waitid"):
        return True
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None
    except ChildProcessError:
        return False


def run_job(job: Path, timeout: float) -> tuple[str, int, int]:
    """Fork a child for the job, here or in the read server; ("exit", code) or ("timeout", -9), and
    the child's peak resident size in KiB."""
    if threading.active_count() == 1 and hasattr(os, "fork"):
        pid = os.fork()
        if pid == 0:  # ---- child
            code = SETUP_FAILED
            try:
                code = read_job(job, early=True)
            finally:
                os._exit(code)
        started = time.monotonic()
        while _MEANWHILE:
            _MEANWHILE.pop()(lambda: _still_running(pid))
        return wait_child(pid, max(0.0, timeout - (time.monotonic() - started)))
    from app.ingest.readserver import read_server

    try:
        server = read_server()
    except OSError as exc:  # the interpreter could not be started again (resources, permissions)
        raise NoChild(f"the read server could not start ({exc})") from None
    return server.run(job, timeout)


def _outcome(kind: str, job: Path, status: str, code: int, timeout: float, peak_kb: int = 0):
    # Stopped at its deadline, or by its CPU-time limit (SIGXCPU) before the deadline came.
    if status == "timeout" or code == -signal.SIGXCPU:
        raise IngestError(
            "too_large",
            f"Reading this file took longer than {timeout:g} seconds.",
            HINT,
            f"读取这个文件用了超过 {timeout:g} 秒，时间太长了。",
            HINT_ZH,
        )
    result = job / "result.pkl"
    if result.exists():
        outcome_kind, payload = pickle.loads(result.read_bytes())
        if outcome_kind == "error":
            raise payload
        if kind != "table":
            return payload
        from app.ingest.pipeline import LoadedTable

        info, pii, frame = payload
        return LoadedTable(frame=_read_frame(job) if frame is None else frame, info=info, pii=pii)
    if code == SETUP_FAILED and not (job / LIMITED_MARK).exists():
        why = job / SETUP_ERROR
        raise NoChild("the reading child could not start" + (f" ({why.read_text()})" if why.exists() else ""))
    if code in (OUT_OF_MEMORY, SETUP_FAILED):  # under its limit, the child could not even write what went wrong
        raise out_of_memory()
    if code in (-signal.SIGSEGV, -signal.SIGBUS, -signal.SIGILL):
        raise out_of_memory() if crashed_for_memory(job, peak_kb) else damaged()
    # Killed without a result: the kernel's out-of-memory killer, or an allocation the native
    # reader could not survive under the address-space limit (it aborts).
    raise out_of_memory()


def _read_frame(job: Path) -> pd.DataFrame:
    import pyarrow as pa

    # Memory-mapped: the columns point into the file's pages, which stay valid after the job
    # folder is removed (the mapping keeps the file alive).
    arrow = pa.ipc.open_file(pa.memory_map(str(job / "frame.arrow"))).read_all()
    return arrow.to_pandas(split_blocks=True)
