"""The host side's public face: the limits, which isolation can be in force here, and (re-exported)
the launch and pool machinery.

- `detect_isolation(mode)` says which isolation can be in force here: bubblewrap, `unshare`
  namespaces, or (only when explicitly asked) none at all ("unsafe").
- `sandbox.launch` builds the command line (bwrap/unshare argv, mounts, environment).
- `sandbox.warm`: `WarmParent` (one sandboxed worker process); `sandbox.pool`: `SandboxPool`, which
  reuses a workspace's warm parent (never another workspace's), recycles it after trouble, and
  bounds how many stay warm and their memory.
- `sandbox.results`: what a call produced (`RunOutcome`), copied out of the sandbox by descriptor.

Detection lives here, not in its own module: `detect_isolation` looks `probe` up in this module,
so replacing `sandbox.host.probe` (as the tests do) changes what every caller sees.

Standard library only; no web or agent imports.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache

MODES = ("auto", "bwrap", "unshare", "unsafe", "off")


@dataclass(frozen=True)
class Limits:
    cpu_s: int = 60
    wall_s: float = 120.0
    memory_mb: int = 2048
    max_procs: int = 64
    max_files: int = 256
    max_output_chars: int = 20_000
    file_mb: int = 64
    call_files_mb: int = 128  # figures and tables copied out of one call, each file (inode) once
    reply_mb: int = 4  # the largest result message read from a call (worker_parent) and from the sandbox (warm)
    scratch_mb: int = 256  # the size of the sandbox's /scratch and /tmp (fixed when it starts: LaunchSpec)

    def describe(self) -> str:
        return (
            f"cpu {self.cpu_s} s, wall {self.wall_s:g} s, memory {self.memory_mb} MB, "
            f"{self.max_procs} processes, {self.max_files} open files, output {self.max_output_chars} chars, "
            f"files {self.file_mb} MB, writable space {self.scratch_mb} MB"
        )


@dataclass(frozen=True)
class Isolation:
    kind: str  # bwrap | unshare | unsafe | none
    available: bool
    reason: str = ""
    binary: str | None = None

    @property
    def features(self) -> list[str]:
        if self.kind in ("bwrap", "unshare"):
            return [
                "no network",
                "own pid/mount/ipc/uts namespaces",
                "read-only data",
                "no host files",
                "clean environment",
                "nothing outlives a call",
                "seccomp",
            ]
        if self.kind == "unsafe":
            return ["NO isolation (unsafe mode)"]
        return []


class SandboxUnavailable(RuntimeError):
    pass


# ----------------------------------------------------------------------------- detection
def _probe(command: list[str]) -> tuple[bool, str]:
    try:
        done = subprocess.run(
            command, stdin=subprocess.DEVNULL, capture_output=True, timeout=20, env={"PATH": "/usr/bin:/bin"}
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"{type(exc).__name__}: {exc}"
    if done.returncode != 0:
        return False, (done.stderr or done.stdout).decode(errors="replace").strip()[:300]
    return True, ""


def bwrap_binary() -> str | None:
    return shutil.which("bwrap") or ("/usr/bin/bwrap" if os.access("/usr/bin/bwrap", os.X_OK) else None)


@cache
def probe(kind: str) -> Isolation:
    """Can this kind of isolation run here? (cached: it costs a process start)."""
    root = os.geteuid() == 0
    if kind == "bwrap":
        binary = bwrap_binary()
        if not binary:
            return Isolation(kind, False, "bubblewrap (bwrap) is not installed")
        command = [
            binary,
            "--ro-bind",
            "/",
            "/",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--unshare-net",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--new-session",
        ]
        command += ["--cap-drop", "ALL"] if root else ["--unshare-user"]
        ok, why = _probe(command + [sys.executable, "-I", "-S", "-c", "pass"])
        return Isolation(kind, ok, why, binary)
    if kind == "unshare":
        binary = shutil.which("unshare")
        if not binary:
            return Isolation(kind, False, "util-linux unshare is not installed")
        if os.uname().machine not in ("x86_64", "amd64"):
            return Isolation(kind, False, "the unshare fallback is only implemented for x86_64")
        command = [binary, "--net", "--pid", "--mount", "--ipc", "--uts", "--fork", "--kill-child"]
        if not root:
            command += ["--user", "--map-root-user"]
        ok, why = _probe(command + [sys.executable, "-I", "-S", "-c", "pass"])
        return Isolation(kind, ok, why, binary)
    if kind == "unsafe":
        return Isolation(kind, True, "unsafe mode: code runs without operating-system isolation")
    return Isolation("none", False, "run_python is switched off (sandbox_mode=off)")


def detect_isolation(mode: str = "auto") -> Isolation:
    if mode not in MODES:
        raise ValueError(f"unknown sandbox mode {mode!r}; use one of {MODES}")
    if mode == "off":
        return probe("off")
    if mode in ("bwrap", "unshare", "unsafe"):
        return probe(mode)
    reasons = []
    for kind in ("bwrap", "unshare"):
        found = probe(kind)
        if found.available:
            return found
        reasons.append(f"{kind}: {found.reason}")
    return Isolation(
        "none",
        False,
        "no isolation is available ("
        + "; ".join(reasons)
        + "); set sandbox_mode=unsafe only on a trusted single-user machine",
    )
