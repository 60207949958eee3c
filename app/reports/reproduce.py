"""Run a report's analysis.py and record whether it reproduced every number (what `verity analyze` does
before it says "reproduced by analysis.py" in the report, and what the page's "Check every number" button
starts in the background).

The script is generated from the report, but the report holds the model's words (labels, column names)
and re-runs the model's own run_python code, so it runs inside the same operating-system sandbox as
run_python (`sandbox.script_run`: bubblewrap, else the `unshare` fallback): no network, the system and
Python read-only, Verity's packages and the data files read-only, a private writable folder of its own
(a copy of the script, its figures, its summary), a clean environment, an unprivileged user, the seccomp
filter, an address-space limit, a CPU-time limit and a wall-time limit (the whole sandbox is killed when
the time is up). When no sandbox can run here the check does not run ("no_sandbox"), unless the server
runs run_python itself without one (sandbox_mode=unsafe, a trusted single-user machine): then the child
runs on the host with the same environment scrubbing and limits.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import site
import stat
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.paths import REPO_ROOT

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
) -> Outcome:
    """Run analysis.py under `limits`, in the sandbox (see the module); it reads `data_files` (the
    datasets' stored files, at their own paths). What it printed goes to analysis_output.txt beside it."""
    limits = limits or Limits()
    if sandbox_mode == "unsafe":
        return _check_on_host(script, limits, cache_dir)
    from sandbox import detect_isolation

    isolation = detect_isolation(sandbox_mode if sandbox_mode in ("bwrap", "unshare") else "auto")
    if not isolation.available:
        save_output(script, f"analysis.py was not run: no sandbox can run here ({isolation.reason}).\n".encode())
        return Outcome(None, "no_sandbox")
    return _check_in_sandbox(script, limits, cache_dir, data_files, isolation)


def _check_in_sandbox(
    script: Path, limits: Limits, cache_dir: Path | None, data_files: Sequence[Path], isolation: Any
) -> Outcome:
    from sandbox.script_run import ScriptJob, prepare_scratch, script_command

    with tempfile.TemporaryDirectory(prefix="verity-check-") as folder:
        scratch = Path(folder)
        shutil.copyfile(script, scratch / "analysis.py")
        _copy_font_cache(cache_dir, scratch / ".matplotlib")
        prepare_scratch(scratch)
        job = ScriptJob(
            scratch,
            "analysis.py",
            ["--summary", "/scratch/summary.json"],
            packages=package_dirs(),
            data_files=list(data_files),
            memory_mb=max(0, limits.memory_mb),
            cpu_s=max(0, limits.cpu_s),
        )
        command, env, new_root = script_command(job, isolation)
        try:
            returncode, output, timed_out = _run(command, env, cwd=scratch, timeout_s=limits.timeout_s)
        finally:
            if new_root:
                shutil.rmtree(new_root, ignore_errors=True)
        save_output(script, output)
        if timed_out:
            return Outcome(None, "timeout")
        summary = read_summary(scratch / "summary.json")
        _keep_font_cache(scratch / ".matplotlib", cache_dir)
        copy_charts(scratch / "rerun_figures", script.parent / "rerun_figures")
    if summary is not None:
        return Outcome(summary)
    return Outcome(None, stop_reason(returncode, output))


MAX_CHARTS, MAX_CHART_BYTES = 200, 20 * 1024 * 1024


def copy_charts(source: Path, target: Path) -> int:
    """The charts the script drew again, out of its scratch folder once the sandbox has gone: regular
    .png files only (never a link, and nothing else the code wrote), at most MAX_CHARTS. Returns how many."""
    copied = 0
    for folder, dirs, files in os.walk(source, followlinks=False):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
        for name in sorted(files):
            path = Path(folder) / name
            info = path.lstat()
            if (
                copied >= MAX_CHARTS
                or not name.lower().endswith(".png")
                or not stat.S_ISREG(info.st_mode)
                or info.st_size > MAX_CHART_BYTES
            ):
                continue
            destination = target / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as handle:
                destination.write_bytes(handle.read())
            copied += 1
    return copied


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


def _run(command: list[str], env: dict[str, str], cwd: Path, timeout_s: float) -> tuple[int | None, bytes, bool]:
    """Run a command in its own process group; kill the group at the time limit (and anything left).
    Returns (exit status, output, whether the time ran out)."""
    try:
        child = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return None, f"analysis.py could not start: {exc}\n".encode(), False
    try:
        output, _ = child.communicate(timeout=timeout_s or None)
    except subprocess.TimeoutExpired:
        kill_group(child)
        output, _ = child.communicate()
        return child.returncode, output, True
    finally:
        kill_group(child)  # anything the script left running
    return child.returncode, output, False


def _check_on_host(script: Path, limits: Limits, cache_dir: Path | None) -> Outcome:
    """sandbox_mode=unsafe only: the child on the host, in the script's folder, with a scrubbed
    environment and the limits."""
    with tempfile.TemporaryDirectory(prefix="verity-check-") as folder:
        summary_file = Path(folder) / "summary.json"
        command = [
            sys.executable,
            "-c",
            LAUNCHER,
            str(max(0, limits.memory_mb) * 1024 * 1024),
            str(max(0, limits.cpu_s)),
            script.name,
            "--summary",
            str(summary_file),
        ]
        returncode, output, timed_out = _run(
            command, child_environment(Path(folder), cache_dir), script.parent, limits.timeout_s
        )
        save_output(script, output)
        if timed_out:
            return Outcome(None, "timeout")
        summary = read_summary(summary_file)
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


def read_summary(path: Path) -> dict[str, Any] | None:
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return summary if isinstance(summary, dict) and summary.get("status") in ("passed", "failed") else None


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
