"""Run a report's analysis.py and record whether it reproduced every number (what `verity analyze` does
before it says "reproduced by analysis.py" in the report, and what the page's "Check every number" button
starts in the background).

The script is generated from the report, but the report holds the model's words (labels, column names)
and re-runs the model's own run_python code, so it runs inside the same operating-system sandbox as
run_python (`sandbox.script_run`: bubblewrap, else the `unshare` fallback): no network, the system and
Python read-only, Verity's packages and the data files read-only, a private writable folder of its own
(a copy of the script, its figures; a size-limited file system in memory that the host reads through a
descriptor once the sandbox has ended, never by a path), a clean environment, an unprivileged user, the seccomp
filter, an address-space limit, a CPU-time limit and a wall-time limit (the whole sandbox is killed when
the time is up). When no sandbox can run here the check does not run ("no_sandbox"), unless the server
runs run_python itself without one (sandbox_mode=unsafe, a trusted single-user machine): then the child
runs on the host with the same environment scrubbing and limits.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import select
import shutil
import signal
import site
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.paths import REPO_ROOT

# How the host opens what the script left in its scratch folder (sandbox.results: never a link, never
# waiting on a FIFO)
DIR_FLAGS_RELATIVE = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS_RELATIVE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

# Passed on from the server's environment (if set): what Python and the locale need, nothing else.
PASSED_ON = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT")
SECRET_NAME = re.compile(r"^VERITY_|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
# Set in the child before it starts the script: the limits hold for the script and anything it starts
# (a launcher instead of preexec_fn, which is unsafe in the multi-threaded server).
LAUNCHER = """\
import os, resource, sys
memory, cpu = int(sys.argv[1]), int(sys.argv[2])
if memory > 0:
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
if cpu > 0:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
os.execv(sys.executable, [sys.executable, *sys.argv[3:]])
"""


@dataclass(frozen=True)
class Limits:
    """What one run of analysis.py may use; 0 (or None) means no limit of that kind."""

    timeout_s: float = 600.0
    memory_mb: int = 0
    cpu_s: int = 0
    output_mb: int = 8  # what it prints, kept (head and tail) in analysis_output.txt; the rest is read and dropped
    scratch_mb: int = 256  # its writable folder, in memory (in the sandbox; 0: the host folder itself)


@dataclass(frozen=True)
class Outcome:
    """The script's summary ({"status": "passed" | "failed", "matched", "differing", ...}), or None with
    why it did not come: "timeout", "cpu", "memory", "error" (it stopped early or wrote no summary) or
    "no_sandbox" (it was not run: no sandbox can run here, and it never runs unsandboxed on the server)."""

    summary: dict[str, Any] | None
    reason: str | None = None


def child_environment(home: Path, cache_dir: Path | None = None) -> dict[str, str]:
    """The environment of the script: PATH and the locale from the server, the repository on PYTHONPATH,
    UTF-8 output, its own HOME, single-threaded numeric libraries (the CPU limit counts every thread)."""
    env = {name: os.environ[name] for name in PASSED_ON if name in os.environ and not SECRET_NAME.search(name)}
    env.update(
        {
            "PYTHONPATH": os.pathsep.join(import_paths()),
            "PYTHONIOENCODING": "utf-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": str(home),
            "MPLBACKEND": "Agg",
            "MPLCONFIGDIR": str(cache_dir or home / ".matplotlib"),
            "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
        }
    )
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    return env


def import_paths() -> list[str]:
    """Where the script finds Verity and its libraries: this checkout, the server's PYTHONPATH, and the
    user's site-packages when the server uses them (they are found through HOME, which the child lacks)."""
    paths = [str(REPO_ROOT), *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if user_site and user_site in sys.path:
        paths.append(user_site)
    return list(dict.fromkeys(paths))


def check_analysis_script(
    script: Path,
    limits: Limits | None = None,
    cache_dir: Path | None = None,
    data_files: Sequence[Path] = (),
    sandbox_mode: str = "auto",
    working_copies: Mapping[str, Path] | None = None,
) -> Outcome:
    """Run analysis.py under `limits`, in the sandbox (see the module); it reads `data_files` (the
    datasets' stored files, at their own paths). What it printed goes to analysis_output.txt beside it.

    `working_copies` (dataset name -> its first version's Parquet working copy): the tables as the
    run's reader made them, read by the script instead of reading the uploads again (`--working`).
    The same table, cheaper: the read of a million-row CSV is seconds, its Parquet copy a fraction."""
    limits = limits or Limits()
    working = [arg for name, path in (working_copies or {}).items() for arg in ("--working", name, str(path))]
    if working_copies is not None:  # Verity's own check: the run's profiles of these tables stand
        working.append("--reuse-profiles")
    data_files = [*data_files, *(working_copies or {}).values()]
    if sandbox_mode == "unsafe":
        return _check_on_host(script, limits, cache_dir, working)
    from sandbox import detect_isolation

    isolation = detect_isolation(sandbox_mode if sandbox_mode in ("bwrap", "unshare") else "auto")
    if not isolation.available:
        save_output(script, f"analysis.py was not run: no sandbox can run here ({isolation.reason}).\n".encode())
        return Outcome(None, "no_sandbox")
    return _check_in_sandbox(script, limits, cache_dir, data_files, isolation, working)


def _check_in_sandbox(
    script: Path | None,
    limits: Limits,
    cache_dir: Path | None,
    data_files: Sequence[Path],
    isolation: Any,
    script_args: Sequence[str] = (),
    early: _Early | None = None,
) -> Outcome:
    """`script` run in the sandbox; or, with `early` (and no script yet), the sandbox started with
    check_start.py, which imports and reads ahead and then runs the script `early` sends it."""
    from sandbox.script_run import ScriptJob, prepare_scratch, script_command

    with tempfile.TemporaryDirectory(prefix="verity-check-") as folder:
        scratch = Path(folder)
        if early is None:
            assert script is not None
            entry, entry_args, entry_fds = "analysis.py", [], ()  # type: tuple[str, list[str], tuple[int, ...]]
            shutil.copyfile(script, scratch / "analysis.py")
        else:
            entry, entry_args, entry_fds = CHECK_START.name, [str(early.read_fd), "analysis.py"], (early.read_fd,)
            shutil.copyfile(CHECK_START, scratch / CHECK_START.name)
        _copy_font_cache(cache_dir, scratch / ".matplotlib")
        prepare_scratch(scratch)
        # The summary comes back on a pipe the host opened: analysis.py writes it from its own process,
        # which the model's re-run code never runs in nor can reach (rerun_python); /scratch/summary.json,
        # which that code could write, is never read.
        summary_read, summary_write = os.pipe()
        # /scratch is a size-limited file system in memory (limits.scratch_mb): what the script writes
        # never reaches the host's disk; the host reads it afterwards through a descriptor the
        # sandbox's first process sends before the script starts (script_run._send_scratch).
        host_end, sandbox_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        in_memory = limits.scratch_mb > 0
        job = ScriptJob(
            scratch,
            entry,
            [*entry_args, "--summary-fd", str(summary_write), *script_args],
            packages=package_dirs(),
            data_files=list(data_files),
            memory_mb=max(0, limits.memory_mb),
            cpu_s=max(0, limits.cpu_s),
            scratch_mb=max(0, limits.scratch_mb),
            scratch_socket=sandbox_end.fileno() if in_memory else None,
        )
        command, env, new_root = script_command(job, isolation)
        scratch_fd: int | None = None
        try:
            returncode, output, timed_out = _run(
                command,
                env,
                scratch,
                limits.timeout_s,
                limits.output_mb,
                pass_fds=(summary_write, *entry_fds, *((sandbox_end.fileno(),) if in_memory else ())),
                early=early,
            )
        finally:
            os.close(summary_write)
            sandbox_end.close()
            summary = read_summary_pipe(summary_read)
            scratch_fd = received_scratch(host_end) if in_memory else None
            host_end.close()
            if new_root:
                shutil.rmtree(new_root, ignore_errors=True)
        if early is not None:
            script = early.script  # None: it was stopped before a script was sent
        try:
            if script is None:
                return Outcome(None, "stopped")
            save_output(script, output)
            if timed_out:
                return Outcome(None, "timeout")
            if scratch_fd is not None:
                _keep_font_cache_at(scratch_fd, cache_dir)
                copy_charts(Path("rerun_figures"), script.parent / "rerun_figures", dir_fd=scratch_fd)
            elif not in_memory:
                _keep_font_cache(scratch / ".matplotlib", cache_dir)
                copy_charts(scratch / "rerun_figures", script.parent / "rerun_figures")
        finally:
            if scratch_fd is not None:
                os.close(scratch_fd)  # the in-memory /scratch goes with it
    if summary is not None:
        return Outcome(summary)
    return Outcome(None, stop_reason(returncode, output))


CHECK_START = Path(__file__).resolve().with_name("check_start.py")


class _Early:
    """What a check started before its script exists shares with the thread that runs it: the pipe the
    script goes through, the script once sent, and the two events (`sent`, `stop`)."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.script: Path | None = None
        self.sent, self.stop = threading.Event(), threading.Event()
        self._read_open = True

    def close_read_end(self) -> None:
        if self._read_open:
            self._read_open = False
            os.close(self.read_fd)


class EarlyCheck:
    """The analysis.py check of `verity analyze`, started in its sandbox while the run is still going
    (`start_early_check`): the sandbox imports pandas, scipy and matplotlib and reads the working copies on
    the other core meanwhile. `finish(script)` sends the script and waits for the outcome, as
    check_analysis_script would have returned it; `cancel()` when there is nothing to check."""

    def __init__(self, inputs: tuple[Any, ...], sandbox_mode: str, run: Any) -> None:
        self.inputs = inputs  # (limits, cache_dir, data files, working copies) it was started with
        self.sandbox_mode = sandbox_mode
        self._early = _Early()
        self._outcome: Outcome | None = None
        self._thread = threading.Thread(target=self._work, args=(run,), name="verity-early-check", daemon=True)
        self._thread.start()

    def _work(self, run: Any) -> None:
        try:
            self._outcome = run(self._early)
        except Exception:  # finish() runs the check the ordinary way instead
            logging.getLogger(__name__).warning("the early analysis.py check failed", exc_info=True)
        finally:
            self._early.close_read_end()

    def finish(
        self,
        script: Path,
        limits: Limits,
        cache_dir: Path | None,
        data_files: Sequence[Path],
        working_copies: Mapping[str, Path],
    ) -> Outcome:
        """The check of `script`: in the sandbox started early when it was started for these same
        inputs and is still waiting, else (another table, a sandbox that could not start) as
        check_analysis_script runs it."""
        again = (limits, cache_dir, [*data_files], dict(working_copies))
        if again != self.inputs or not self._thread.is_alive():
            self.cancel()
            return check_analysis_script(script, limits, cache_dir, data_files, self.sandbox_mode, working_copies)
        early = self._early
        early.script = script
        early.sent.set()  # the time limit counts from here
        try:
            with open(early.write_fd, "wb", closefd=True) as pipe:
                pipe.write(script.read_bytes())
        except OSError:  # the sandbox ended before it read the script (it will not run it)
            early.script = None
        self._thread.join()
        if early.script is None or self._outcome is None:
            return check_analysis_script(script, limits, cache_dir, data_files, self.sandbox_mode, working_copies)
        return self._outcome

    @property
    def running(self) -> bool:
        """Whether its sandbox is still there (waiting for the script, or running it)."""
        return self._thread.is_alive()

    def cancel(self) -> None:
        """No script will come: the sandbox is stopped and its folder removed."""
        early = self._early
        early.stop.set()
        if not early.sent.is_set():
            early.sent.set()
            os.close(early.write_fd)
        self._thread.join(timeout=10)


def start_early_check(
    limits: Limits,
    cache_dir: Path | None,
    data_files: Sequence[Path],
    sandbox_mode: str,
    working_copies: Mapping[str, Path],
) -> EarlyCheck | None:
    """Start `verity analyze`'s check (check_analysis_script with `working_copies`) before its script
    exists, in the sandbox, so that its imports and reads run while the agent does. None where the
    check would not run in a sandbox (sandbox_mode=unsafe, or no sandbox here): it runs as before."""
    if sandbox_mode == "unsafe":
        return None
    from sandbox import detect_isolation

    isolation = detect_isolation(sandbox_mode if sandbox_mode in ("bwrap", "unshare") else "auto")
    if not isolation.available:
        return None
    inputs = (limits, cache_dir, [*data_files], dict(working_copies))
    working = [arg for name, path in working_copies.items() for arg in ("--working", name, str(path))]
    working.append("--reuse-profiles")  # as check_analysis_script passes them
    files = [*data_files, *working_copies.values()]

    def run(early: _Early) -> Outcome:
        return _check_in_sandbox(None, limits, cache_dir, files, isolation, working, early)

    return EarlyCheck(inputs, sandbox_mode, run)


MAX_CHARTS, MAX_CHART_BYTES = 200, 20 * 1024 * 1024
MAX_CHARTS_BYTES = 64 * 1024 * 1024  # all of one check's charts together
MAX_CHART_DEPTH = 8
MAX_CHART_ENTRIES = 10_000  # folder entries looked at in all: a folder of a million names costs no more


def received_scratch(channel: socket.socket) -> int | None:
    """The descriptor of the sandbox's /scratch its first process sent (read without waiting, once the
    sandbox has ended), when it is a folder; None when none came."""
    channel.setblocking(False)
    try:
        _data, fds, _flags, _address = socket.recv_fds(channel, 16, 4)
    except OSError:  # nothing was sent (it failed before), or the channel is gone
        return None
    folder = None
    for fd in fds:
        if folder is None and stat.S_ISDIR(os.fstat(fd).st_mode):
            folder = fd
        else:
            os.close(fd)
    return folder


def copy_charts(source: Path, target: Path, max_total: int = MAX_CHARTS_BYTES, dir_fd: int | None = None) -> int:
    """The charts the script drew again, out of its scratch folder once the sandbox has gone: regular
    .png files only, each opened without following a link or waiting on a FIFO (O_NOFOLLOW,
    O_NONBLOCK, then fstat: a link, a FIFO or a device is skipped, `source` itself included), each
    file (inode) once however many hard links name it, at most MAX_CHARTS files of MAX_CHART_BYTES
    and `max_total` bytes in all, out of the first MAX_CHART_ENTRIES names. `source` is opened
    relative to `dir_fd` when given (the sandbox's /scratch). Returns how many were copied."""
    try:
        top = os.open(source, DIR_FLAGS_RELATIVE, dir_fd=dir_fd)
    except OSError:  # missing, or a link (to the data folder, say): nothing is read through it
        return 0
    copied: list[int] = [0, 0, 0]  # files, bytes, entries looked at
    seen: set[tuple[int, int]] = set()
    try:
        _copy_chart_folder(top, target, copied, seen, max_total, 0)
    finally:
        os.close(top)
    return copied[0]


def _copy_chart_folder(
    folder_fd: int, target: Path, copied: list[int], seen: set[tuple[int, int]], max_total: int, depth: int
) -> None:
    with os.scandir(folder_fd) as listing:
        entries = sorted(itertools.islice(listing, max(0, MAX_CHART_ENTRIES - copied[2])), key=lambda e: e.name)
    copied[2] += len(entries)
    for entry in entries:
        if copied[0] >= MAX_CHARTS:
            return
        if entry.is_dir(follow_symlinks=False):
            if depth < MAX_CHART_DEPTH:
                try:
                    inner = os.open(entry.name, DIR_FLAGS_RELATIVE, dir_fd=folder_fd)
                except OSError:
                    continue
                try:
                    _copy_chart_folder(inner, target / entry.name, copied, seen, max_total, depth + 1)
                finally:
                    os.close(inner)
            continue
        if not entry.name.lower().endswith(".png"):
            continue
        try:
            fd = os.open(entry.name, FILE_FLAGS_RELATIVE, dir_fd=folder_fd)
        except OSError:  # a link (ELOOP), or gone
            continue
        with open(fd, "rb") as handle:
            info = os.fstat(fd)
            key = (info.st_dev, info.st_ino)
            if not stat.S_ISREG(info.st_mode) or key in seen or info.st_size > MAX_CHART_BYTES:
                continue
            if copied[1] + info.st_size > max_total:
                continue
            seen.add(key)
            data = handle.read(MAX_CHART_BYTES + 1)[:MAX_CHART_BYTES]
        target.mkdir(parents=True, exist_ok=True)
        (target / entry.name).write_bytes(data)
        copied[0] += 1
        copied[1] += len(data)


def package_dirs() -> list[Path]:
    """Verity's packages that analysis.py imports (mounted read-only; nothing else of the checkout)."""
    return [REPO_ROOT / name for name in ("app", "analysis_tools", "sandbox")]


def _copy_font_cache(cache_dir: Path | None, target: Path) -> None:
    """matplotlib's font list, built once (by the first check), copied in: a check cannot change it."""
    target.mkdir(parents=True, exist_ok=True)
    if cache_dir is None or not cache_dir.is_dir():
        return
    for item in cache_dir.glob("fontlist-*.json"):
        if item.is_file() and not item.is_symlink():
            shutil.copyfile(item, target / item.name)


def _keep_font_cache(built: Path, cache_dir: Path | None) -> None:
    """The first check's font list kept for the next ones (a list of font files: the next checks run in
    the same sandbox, so a list made there can name nothing they could not open anyway)."""
    if cache_dir is None or any(cache_dir.glob("fontlist-*.json")):
        return
    for item in built.glob("fontlist-*.json"):
        if item.is_file() and not item.is_symlink() and item.stat().st_size < 4_000_000:
            try:
                json.loads(item.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            cache_dir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(item, cache_dir / item.name)


def _run(
    command: list[str],
    env: dict[str, str],
    cwd: Path,
    timeout_s: float,
    output_mb: int = 8,
    pass_fds: Sequence[int] = (),
    early: _Early | None = None,
) -> tuple[int | None, bytes, bool]:
    """Run a command in its own process group; kill the group at the time limit (and anything left).
    Returns (exit status, its output (at most `output_mb`: the head and the tail), whether the time
    ran out). `early` (a check started before its script exists, `start_early_check`): the time limit counts
    from when the script is sent, and its `stop` kills the group at once."""
    try:
        child = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=tuple(pass_fds),
        )
    except OSError as exc:
        return None, f"analysis.py could not start: {exc}\n".encode(), False
    finally:
        if early is not None:  # the sandbox holds the script's read end now (or never will)
            early.close_read_end()
    assert child.stdout is not None
    deadline = None
    output = BoundedOutput(max(1, output_mb) * 1024 * 1024)
    timed_out = False
    try:
        while True:  # read as it comes (a pipe that fills would stop the script), keeping a bounded part
            if early is not None and early.stop.is_set():
                break
            if deadline is None and timeout_s and (early is None or early.sent.is_set()):
                deadline = time.monotonic() + timeout_s
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                timed_out = True
                break
            wait = 0.25 if early is not None and not early.sent.is_set() else 1.0  # sees `sent` and `stop` soon
            ready, _, _ = select.select([child.stdout], [], [], wait if left is None else min(left, wait))
            if ready:
                chunk = os.read(child.stdout.fileno(), 1 << 16)
                if not chunk:
                    break
                output.add(chunk)
        if timed_out or (early is not None and early.stop.is_set()):
            kill_group(child)
        child.wait(timeout=None if not timed_out else 30)
    finally:
        kill_group(child)  # anything the script left running
        child.stdout.close()
    return child.returncode, output.value(), timed_out


class BoundedOutput:
    """The head and the tail of a stream, `limit` bytes in all, and how much there was: a script that
    prints 400 MB costs the server `limit` bytes, and analysis_output.txt says what was left out."""

    def __init__(self, limit: int) -> None:
        self.limit, self.total = limit, 0
        self.head, self.tail = bytearray(), bytearray()

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit // 2 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            del self.tail[: max(0, len(self.tail) - self.limit // 2)]

    def value(self) -> bytes:
        if self.total <= len(self.head) + len(self.tail):
            return bytes(self.head + self.tail)
        marker = (
            f"\n... [output truncated: {self.total:,} bytes in all; the first {len(self.head):,} and the "
            f"last {len(self.tail):,} are kept] ...\n"
        )
        return bytes(self.head) + marker.encode() + bytes(self.tail)


def _keep_font_cache_at(scratch_fd: int, cache_dir: Path | None) -> None:
    """`_keep_font_cache` read through the sandbox's /scratch descriptor: .matplotlib and each
    fontlist-*.json opened without following a link or waiting on a FIFO, regular files only."""
    if cache_dir is None or any(cache_dir.glob("fontlist-*.json")):
        return
    try:
        folder = os.open(".matplotlib", DIR_FLAGS_RELATIVE, dir_fd=scratch_fd)
    except OSError:
        return
    try:
        with os.scandir(folder) as listing:
            names = sorted(entry.name for entry in itertools.islice(listing, 100))
        for name in names:
            if not (name.startswith("fontlist-") and name.endswith(".json")):
                continue
            try:
                fd = os.open(name, FILE_FLAGS_RELATIVE, dir_fd=folder)
            except OSError:
                continue
            with open(fd, "rb") as handle:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode) or info.st_size >= 4_000_000:
                    continue
                data = handle.read(4_000_000)
            try:
                json.loads(data.decode("utf-8"))
            except ValueError:
                continue
            cache_dir.mkdir(parents=True, exist_ok=True)
            (cache_dir / name).write_bytes(data)
            return
    finally:
        os.close(folder)


def _check_on_host(script: Path, limits: Limits, cache_dir: Path | None, script_args: Sequence[str] = ()) -> Outcome:
    """sandbox_mode=unsafe only: the child on the host, in the script's folder, with a scrubbed
    environment and the limits."""
    with tempfile.TemporaryDirectory(prefix="verity-check-") as folder:
        summary_read, summary_write = os.pipe()
        command = [
            sys.executable,
            "-c",
            LAUNCHER,
            str(max(0, limits.memory_mb) * 1024 * 1024),
            str(max(0, limits.cpu_s)),
            script.name,
            "--summary-fd",
            str(summary_write),
            *script_args,
        ]
        try:
            returncode, output, timed_out = _run(
                command,
                child_environment(Path(folder), cache_dir),
                script.parent,
                limits.timeout_s,
                limits.output_mb,
                pass_fds=(summary_write,),
            )
        finally:
            os.close(summary_write)
            summary = read_summary_pipe(summary_read)
        save_output(script, output)
        if timed_out:
            return Outcome(None, "timeout")
    if summary is not None:
        return Outcome(summary)
    return Outcome(None, stop_reason(returncode, output))


def run_analysis_script(
    script: Path, timeout_s: float = 600.0, data_files: Sequence[Path] = (), sandbox_mode: str = "auto"
) -> dict[str, Any] | None:
    """The summary of a run of analysis.py (see check_analysis_script) with only a time limit, or None when
    the script could not run to its end (then the report claims nothing)."""
    return check_analysis_script(
        script, Limits(timeout_s=timeout_s), data_files=data_files, sandbox_mode=sandbox_mode
    ).summary


def kill_group(child: subprocess.Popen) -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def save_output(script: Path, output: bytes | None) -> None:
    text = (output or b"").decode("utf-8", errors="replace")
    (script.parent / "analysis_output.txt").write_text(text, encoding="utf-8")


MAX_SUMMARY_BYTES = 64 * 1024


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def read_summary_pipe(read_fd: int) -> dict[str, Any] | None:
    """The summary analysis.py wrote on the host's pipe (read once the script has ended, without
    waiting: whatever is there, at most MAX_SUMMARY_BYTES), then the pipe is closed."""
    data = bytearray()
    try:
        os.set_blocking(read_fd, False)
        while len(data) <= MAX_SUMMARY_BYTES:
            try:
                chunk = os.read(read_fd, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            data += chunk
    finally:
        os.close(read_fd)
    try:
        summary = json.loads(bytes(data[:MAX_SUMMARY_BYTES]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return summary if isinstance(summary, dict) and summary.get("status") in ("passed", "failed") else None


COUNTS = ("matched", "differing", "not_recomputed", "failed_calls")


def host_verdict(summary: dict[str, Any], evidence_numbers: int) -> dict[str, Any]:
    """The check's verdict as the host recomputes it from the summary's counts and the report it
    knows: the counts must be whole numbers that add up to the report's `evidence_numbers`, and it
    passed only when every call re-ran, none differed and at least one matched. A report with no
    evidence numbers never passes ("all 999 numbers match" of 0 numbers)."""
    counts: dict[str, int] = {key: summary[key] for key in COUNTS if _count(summary.get(key))}
    if (
        len(counts) < len(COUNTS)
        or counts["matched"] + counts["differing"] + counts["not_recomputed"] != evidence_numbers
    ):
        return {
            "status": "failed",
            "matched": 0,
            "differing": 0,
            "not_recomputed": evidence_numbers,
            "failed_calls": 0,
            "inconsistent": True,  # the counts did not describe this report: none is taken
        }
    passed = counts["failed_calls"] == 0 and counts["differing"] == 0 and counts["matched"] > 0
    return {"status": "passed" if passed else "failed", **counts}


def stop_reason(returncode: int | None, output: bytes | None) -> str:
    """Why a script that wrote no summary stopped: the CPU limit sends SIGXCPU (then SIGKILL); running
    out of the address space shows as a MemoryError (or a library that could not allocate)."""
    # (in the sandbox, the exit status of its first process: 128 + the signal that ended the script)
    if returncode in (-signal.SIGXCPU, -signal.SIGKILL, 128 + signal.SIGXCPU, 128 + signal.SIGKILL):
        return "cpu"
    text = (output or b"")[-4000:].decode("utf-8", errors="replace")
    if "MemoryError" in text or "Cannot allocate memory" in text or "std::bad_alloc" in text:
        return "memory"
    return "error"
