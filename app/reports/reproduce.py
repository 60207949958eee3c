"""Run a report's analysis.py and record whether it reproduced every number (what `verity analyze` does
before it says "reproduced by analysis.py" in the report, and what the page's "Check every number" button
starts in the background).

The script is generated from the report, but the report holds the model's words (labels, column names),
so the child is treated as untrusted: it gets a minimal environment (none of the server's keys, tokens or
VERITY_* settings), its own HOME, an address-space limit, a CPU-time limit and a wall-time limit, and it
runs in its own process group, which is killed whole when the time is up."""

from __future__ import annotations

import json
import os
import re
import signal
import site
import subprocess
import sys
import tempfile
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
    why it did not come: "timeout", "cpu", "memory" or "error" (it stopped early or wrote no summary)."""

    summary: dict[str, Any] | None
    reason: str | None = None


def child_environment(home: Path, cache_dir: Path | None = None) -> dict[str, str]:
    """The environment of the script: PATH and the locale from the server, the repository on PYTHONPATH,
    UTF-8 output, its own HOME, single-threaded numeric libraries (the CPU limit counts every thread)."""
    env = {name: os.environ[name] for name in PASSED_ON if name in os.environ and not SECRET_NAME.search(name)}
    env.update({
        "PYTHONPATH": os.pathsep.join(import_paths()), "PYTHONIOENCODING": "utf-8", "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": str(home), "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(cache_dir or home / ".matplotlib"),
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    })
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


def check_analysis_script(script: Path, limits: Limits | None = None, cache_dir: Path | None = None) -> Outcome:
    """Run analysis.py in its own folder with this Python, under `limits`; what it printed goes to
    analysis_output.txt beside it."""
    limits = limits or Limits()
    with tempfile.TemporaryDirectory(prefix="verity-check-") as folder:
        summary_file = Path(folder) / "summary.json"
        command = [sys.executable, "-c", LAUNCHER, str(max(0, limits.memory_mb) * 1024 * 1024),
                   str(max(0, limits.cpu_s)), script.name, "--summary", str(summary_file)]
        try:
            child = subprocess.Popen(command, cwd=script.parent, env=child_environment(Path(folder), cache_dir),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        except OSError:
            return Outcome(None, "error")
        try:
            output, _ = child.communicate(timeout=limits.timeout_s or None)
        except subprocess.TimeoutExpired:
            kill_group(child)
            output, _ = child.communicate()
            save_output(script, output)
            return Outcome(None, "timeout")
        finally:
            kill_group(child)  # anything the script left running
        save_output(script, output)
        summary = read_summary(summary_file)
    if summary is not None:
        return Outcome(summary)
    return Outcome(None, stop_reason(child.returncode, output))


def run_analysis_script(script: Path, timeout_s: float = 600.0) -> dict[str, Any] | None:
    """The summary of a run of analysis.py (see check_analysis_script), or None when the script could not
    run to its end (then the report claims nothing)."""
    return check_analysis_script(script, Limits(timeout_s=timeout_s)).summary


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
    if returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        return "cpu"
    text = (output or b"")[-4000:].decode("utf-8", errors="replace")
    if "MemoryError" in text or "Cannot allocate memory" in text or "std::bad_alloc" in text:
        return "memory"
    return "error"
