"""analysis.py's re-run of a run_python call: the model's code, with the datasets bound exactly as run_python
binds them in its sandbox (`sandbox.worker_child.ChildRun`, the same class: `datasets` as name -> DataFrame
read from a Parquet working copy with numpy dtypes, each dataset also a variable when its name is an
identifier, `pd`, `np`, `plt`, `scipy`, `stats`, `sm`, `smf`, `sklearn`, `save_figure`, `save_table`, and
the `result` variable), its printed output and `result` captured as a tool result whose numbers the
comparison checks.

It runs in the process of analysis.py. On the server, the whole of analysis.py runs inside the same
operating-system sandbox as run_python (`app.reports.reproduce`); a user who runs analysis.py on their
own machine runs the code it prints, as they choose.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from analysis_tools import ToolResult

# What the captured output may hold (run_python's own default), and the limits its error texts name.
LIMITS = {
    "max_output_chars": 50_000,
    "memory_mb": 0,
    "max_procs": 0,
    "cpu_s": 0,
    "file_mb": 0,
    "max_files": 0,
    "scratch_mb": 0,
}
TABLE_PREVIEW = 1_500
_written: dict[str, tuple[Any, str]] = {}  # dataset name -> (the frame, its Parquet copy)


def run_python_again(call_id: str, code: str, frames: dict[str, Any], folder: Path) -> ToolResult:
    """Run `code` as run_python ran it, in `folder / call_id` (its current folder: figures and saved
    tables land there). Returns a ToolResult: the printed output and `result` in `text`, the numbers of a
    dict `result` in `metrics`, the whole `result` in `payload`."""
    from sandbox import worker
    from sandbox.worker_child import MODULES, ChildRun

    if not MODULES:
        worker.preload()  # the same imports, CJK font and single-threaded libraries as in the sandbox
        _START.update(_library_state(MODULES))
    _restore(MODULES, _START)  # each call starts as from a clean interpreter (the sandbox forks one per call)
    call_dir = (folder / _safe(call_id)).resolve()
    call_dir.mkdir(parents=True, exist_ok=True)
    request = {"code": code, "datasets": _parquet_copies(frames, folder / "datasets"), "limits": LIMITS}
    if hasattr(os, "fork"):
        reply = _in_a_child(lambda: _execute(ChildRun, call_dir, call_id, request))
    else:  # (Windows, a user's own machine: in this process)
        reply = _execute(ChildRun, call_dir, call_id, request)
    return _tool_result(reply, call_dir)


MAX_REPLY_BYTES = 4 * 1024 * 1024  # what one re-run may send back (run_python's sandbox_max_reply_mb)
PARENT_ONLY_FDS: set[int] = set()  # descriptors the children never hold (analysis.py's summary pipe)


def _in_a_child(execute: Any) -> dict[str, Any]:
    """`execute()` in a forked child, its reply back over a pipe: the model's code never runs in this
    process, so it cannot change what later calls compute, the comparison, or the summary that this
    process alone sends (to a pipe the child does not hold: it closes PARENT_ONLY_FDS first, and
    this process is not dumpable, so the child cannot open it again through /proc)."""
    _not_dumpable()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # ---- the child
        try:
            os.close(read_fd)
            for fd in PARENT_ONLY_FDS:
                with contextlib.suppress(OSError):
                    os.close(fd)
            data = json.dumps(execute(), ensure_ascii=False, default=str).encode("utf-8")
            with os.fdopen(write_fd, "wb") as pipe:
                pipe.write(data[:MAX_REPLY_BYTES])
        finally:
            os._exit(0)
    os.close(write_fd)
    received = bytearray()
    with os.fdopen(read_fd, "rb") as pipe:
        while chunk := pipe.read(1 << 16):
            if len(received) <= MAX_REPLY_BYTES:
                received += chunk
    _, status = os.waitpid(pid, 0)
    try:
        reply = json.loads(received.decode("utf-8"))
        if isinstance(reply, dict):
            return reply
    except (UnicodeDecodeError, ValueError):
        pass
    ended = (
        f"signal {os.WTERMSIG(status)}"
        if os.WIFSIGNALED(status)
        else f"exit status {os.waitstatus_to_exitcode(status)}"
    )
    return {"ok": False, "error": {"error": "python_error", "message": f"The code stopped the re-run ({ended})."}}


def _not_dumpable() -> None:
    """This process's /proc entries (its descriptors, its memory) closed to processes of its own user:
    the children that run the model's code."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass


def _execute(child_run: Any, call_dir: Path, call_id: str, request: dict[str, Any]) -> dict[str, Any]:
    """`ChildRun.execute` in `call_dir`, its printed output captured as run_python captures it."""
    here = os.getcwd()
    with (
        open(call_dir / "stdout.txt", "w", encoding="utf-8") as out,
        open(call_dir / "stderr.txt", "w", encoding="utf-8") as err,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        os.chdir(call_dir)
        try:
            reply: dict[str, Any] = child_run(str(call_dir), call_id, request).execute()
        finally:
            os.chdir(here)
    return reply


_START: dict[str, Any] = {}  # the libraries' settings before any call ran


def _library_state(modules: dict[str, Any]) -> dict[str, Any]:
    """The settings a call's code may change that would change the next call's output: numpy's print
    and error settings, matplotlib's rcParams (pandas' options are reset to their defaults)."""
    np, matplotlib = modules["np"], modules["matplotlib"]
    return {"print": np.get_printoptions(), "err": np.geterr(), "rc": dict(matplotlib.rcParams)}


def _restore(modules: dict[str, Any], state: dict[str, Any]) -> None:
    import warnings

    np, matplotlib, pd = modules["np"], modules["matplotlib"], modules["pd"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated options warn when they are reset
        pd.reset_option("all")
        np.set_printoptions(**state["print"])
        np.seterr(**state["err"])
        matplotlib.rcParams.update(state["rc"])
    modules["plt"].close("all")


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in str(name))[:60] or "call"


def _parquet_copies(frames: dict[str, Any], folder: Path) -> dict[str, str]:
    """Each frame as the Parquet working copy run_python reads (written again only when it changed)."""
    from app.ingest.pipeline import save_working_copy

    paths = {}
    for index, (name, frame) in enumerate(frames.items()):
        known = _written.get(name)
        if known is None or known[0] is not frame or not Path(known[1]).is_file():
            path = save_working_copy(frame, folder / f"dataset_{index}.parquet")
            _written[name] = (frame, str(path))
        paths[name] = _written[name][1]
    return paths


def _tool_result(reply: dict[str, Any], call_dir: Path) -> ToolResult:
    """The reply of `ChildRun.execute` as run_python's tool result (its text without the sandbox banner)."""
    stdout, stderr = (reply.get("stdout") or {}).get("text", ""), (reply.get("stderr") or {}).get("text", "")
    if not reply.get("ok"):
        error = dict(reply.get("error") or {"error": "python_error", "message": "The code failed."})
        if stdout:
            error["stdout"] = stdout[-2_000:]
        return ToolResult.failure(error)
    parts = []
    if stdout:
        parts.append(f"[stdout]\n{stdout.rstrip()}")
    if stderr:
        parts.append(f"[stderr]\n{stderr.rstrip()[-2_000:]}")
    result = reply.get("result")
    if result is not None:
        parts.append("[result]\n" + json.dumps(result, ensure_ascii=False, default=str)[:4_000])
    for table in reply.get("tables") or []:
        parts.append(
            f"[table {table['name']}] {table['rows']} rows x {len(table['columns'])} columns "
            f"(saved as {table['parquet']})\n{table['preview'][:TABLE_PREVIEW]}"
        )
    metrics: dict[str, Any] = {}
    if isinstance(result, dict):
        metrics = {
            k: v
            for k, v in result.items()
            if isinstance(k, str) and isinstance(v, (int, float, str)) and not isinstance(v, bool) and len(str(v)) < 200
        }
    figures = [str(call_dir / f["file"]) for f in reply.get("figures") or []]
    return ToolResult(
        text="\n\n".join(parts),
        metrics=metrics,
        figures=figures,
        method="Python code",
        payload={"result": result, "tables": reply.get("tables") or []},
    )
