"""The host side: choose the isolation, launch one warm parent per workspace, talk to it.

- `detect_isolation(mode)` says which isolation can be in force here: bubblewrap, `unshare`
  namespaces, or (only when explicitly asked) none at all ("unsafe").
- `WarmParent` is one sandboxed worker process (`sandbox.worker`) with a socketpair to it.
- `SandboxPool.run(...)` runs one piece of code for one workspace: it reuses the workspace's warm
  parent (never another workspace's), enforces the wall-time limit as a backstop, recycles the
  parent after a crash or a limit breach, and reaps idle parents.

Standard library only; no web or agent imports.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import uuid
import zlib
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from sandbox import protocol

log = logging.getLogger(__name__)

PACKAGE_DIR = Path(__file__).resolve().parent
INSIDE_PACKAGE_ROOT = "/opt/verity"
INSIDE_DATA = "/data"
INSIDE_SCRATCH = "/scratch"
SANDBOX_UID_BASE = 200_000  # per-workspace users when the host runs as root
SANDBOX_UID_SPAN = 100_000
MODES = ("auto", "bwrap", "unshare", "unsafe", "off")
KEEP_CALLS = 200  # call folders kept in a workspace's scratch (full outputs, saved tables)


@dataclass(frozen=True)
class Limits:
    cpu_s: int = 60
    wall_s: float = 120.0
    memory_mb: int = 2048
    max_procs: int = 64
    max_files: int = 256
    max_output_chars: int = 20_000
    file_mb: int = 64

    def describe(self) -> str:
        return (f"cpu {self.cpu_s} s, wall {self.wall_s:g} s, memory {self.memory_mb} MB, "
                f"{self.max_procs} processes, {self.max_files} open files, output {self.max_output_chars} chars, "
                f"files {self.file_mb} MB")


@dataclass(frozen=True)
class Isolation:
    kind: str  # bwrap | unshare | unsafe | none
    available: bool
    reason: str = ""
    binary: str | None = None

    @property
    def features(self) -> list[str]:
        if self.kind in ("bwrap", "unshare"):
            return ["no network", "own pid/mount/ipc/uts namespaces", "read-only data", "no host files",
                    "clean environment", "seccomp"]
        if self.kind == "unsafe":
            return ["NO isolation (unsafe mode)"]
        return []


class SandboxUnavailable(RuntimeError):
    pass


# ----------------------------------------------------------------------------- detection
def _probe(command: list[str]) -> tuple[bool, str]:
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=20,
                              env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"{type(exc).__name__}: {exc}"
    if done.returncode != 0:
        return False, (done.stderr or done.stdout).decode(errors="replace").strip()[:300]
    return True, ""


def bwrap_binary() -> str | None:
    return shutil.which("bwrap") or ("/usr/bin/bwrap" if os.access("/usr/bin/bwrap", os.X_OK) else None)


@lru_cache(maxsize=None)
def probe(kind: str) -> Isolation:
    """Can this kind of isolation run here? (cached: it costs a process start)."""
    root = os.geteuid() == 0
    if kind == "bwrap":
        binary = bwrap_binary()
        if not binary:
            return Isolation(kind, False, "bubblewrap (bwrap) is not installed")
        command = [binary, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--unshare-net",
                   "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session"]
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
    return Isolation("none", False, "no isolation is available (" + "; ".join(reasons)
                     + "); set sandbox_mode=unsafe only on a trusted single-user machine")


# ----------------------------------------------------------------------------- launch
def sandbox_uid(workspace_id: str) -> int:
    return SANDBOX_UID_BASE + zlib.crc32(workspace_id.encode()) % SANDBOX_UID_SPAN


def _python_paths() -> tuple[str, list[str], list[str]]:
    """The interpreter, the folders it needs (read-only) and its library path."""
    executable = os.path.realpath(sys.executable)
    paths = sysconfig.get_paths()
    folders = {os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix)}
    library = [os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib") if paths.get(k)]
    site = [os.path.realpath(paths[k]) for k in ("purelib", "platlib") if paths.get(k)]
    dynload = os.path.join(os.path.realpath(paths["platstdlib"]), "lib-dynload") if paths.get("platstdlib") else None
    if dynload and os.path.isdir(dynload):
        library.append(dynload)
    for item in [os.path.dirname(executable)] + library + site:
        if not any(item == f or item.startswith(f + os.sep) for f in folders):
            folders.add(item)
    # A system interpreter lives under /usr: bind its own files, never all of /usr/bin.
    folders = {f for f in folders if f not in ("/usr", "/", "/usr/local")} or set()
    return executable, sorted(folders), list(dict.fromkeys(site))


def _system_binds() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Shared libraries the interpreter links against (read-only) and the /lib symlinks."""
    binds, links = [], []
    for folder in ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libx32", "/usr/share/zoneinfo"):
        if os.path.isdir(folder):
            binds.append((folder, folder))
    for top in ("/lib", "/lib64", "/lib32", "/libx32"):
        if os.path.islink(top):
            links.append((os.readlink(top), top))
        elif os.path.isdir(top):
            binds.append((top, top))
    return binds, links


THREAD_ENV = {
    "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1", "BLIS_NUM_THREADS": "1", "ARROW_DEFAULT_MEMORY_POOL": "system",
    "JE_ARROW_MALLOC_CONF": "background_thread:false", "MPLBACKEND": "Agg",
}


def sandbox_env(home: str) -> dict[str, str]:
    """The whole environment of the sandbox: no VERITY_*, OPENAI_* or any other host variable."""
    return {"PATH": "/nonexistent", "HOME": home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
            "MPLCONFIGDIR": "/tmp/.matplotlib", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
            "PYTHONIOENCODING": "utf-8", **THREAD_ENV}


@dataclass
class LaunchSpec:
    workspace_id: str
    data_root: Path
    scratch_root: Path
    mode: str = "auto"
    tmp_size_mb: int = 256

    def key(self) -> tuple:
        return (self.workspace_id, str(self.data_root), str(self.scratch_root), self.mode)


def build_command(spec: LaunchSpec, isolation: Isolation, fd: int) -> tuple[list[str], dict[str, str], dict]:
    """The command line, environment and worker spec that start one warm parent."""
    executable, python_dirs, site = _python_paths()
    root = os.geteuid() == 0
    worker: dict[str, Any] = {"fd": fd, "seccomp": isolation.kind in ("bwrap", "unshare"),
                              "pidns": isolation.kind in ("bwrap", "unshare")}
    if isolation.kind == "unsafe":
        worker["scratch"] = str(spec.scratch_root)
        package_root = str(PACKAGE_DIR.parent)
        env = sandbox_env(str(spec.scratch_root))
        env["MPLCONFIGDIR"] = str(spec.scratch_root / ".matplotlib")
        return _python_command(executable, [package_root], site, worker), env, worker
    worker["scratch"] = INSIDE_SCRATCH
    if root:
        worker["uid"] = worker["gid"] = sandbox_uid(spec.workspace_id)
    env = sandbox_env(INSIDE_SCRATCH)
    system, links = _system_binds()
    read_only = system + [(d, d) for d in python_dirs] + [(str(PACKAGE_DIR), f"{INSIDE_PACKAGE_ROOT}/sandbox"),
                                                          (str(spec.data_root), INSIDE_DATA)]
    if isolation.kind == "bwrap":
        command = [isolation.binary, "--die-with-parent", "--new-session", "--unshare-net", "--unshare-pid",
                   "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        if root:  # privileged bwrap; the worker drops to its own uid before importing anything
            command += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:
            command += ["--unshare-user", "--uid", "65534", "--gid", "65534", "--disable-userns", "--cap-drop", "ALL"]
        # /tmp first: binds of an interpreter or virtualenv that lives under /tmp go on top of it.
        command += ["--perms", "1777", "--size", str(spec.tmp_size_mb * 1024 * 1024), "--tmpfs", "/tmp"]
        made: set[str] = {"/tmp"}
        for _source, dest in read_only + [(str(spec.scratch_root), INSIDE_SCRATCH)]:
            command += _parents(dest, made)
        for source, dest in read_only:
            command += ["--ro-bind", source, dest]
        for target, link in links:
            command += ["--symlink", target, link]
        command += ["--bind", str(spec.scratch_root), INSIDE_SCRATCH,
                    "--proc", "/proc", "--dev", "/dev", "--remount-ro", "/", "--chdir", "/",
                    "--clearenv"]
        for key, value in env.items():
            command += ["--setenv", key, value]
        command += _python_command(executable, [INSIDE_PACKAGE_ROOT], site, worker)
        return command, env, worker
    # unshare: namespaces from util-linux, the filesystem view built by sandbox.nsroot
    new_root = tempfile.mkdtemp(prefix="verity-nsroot-")
    os.chmod(new_root, 0o755)
    worker["nsroot"] = {"root": new_root, "tmp_size_mb": spec.tmp_size_mb, "chdir": "/",
                        "binds": [[s, d, True] for s, d in read_only] + [[str(spec.scratch_root), INSIDE_SCRATCH, False]],
                        "symlinks": [[t, link] for t, link in links]}
    command = [isolation.binary, "--net", "--pid", "--mount", "--ipc", "--uts", "--fork", "--kill-child"]
    if not root:
        command += ["--user", "--map-root-user"]
    command += _python_command(executable, [str(PACKAGE_DIR.parent), INSIDE_PACKAGE_ROOT], site, worker)
    return command, env, worker


def _parents(dest: str, made: set[str]) -> list[str]:
    """bwrap copies the mode of the host's parent folders (/root is 0700): create them 0755."""
    args = []
    parts = Path(dest).parent.parts[1:]
    current = ""
    for part in parts:
        current += "/" + part
        if current not in made:
            made.add(current)
            args += ["--perms", "0755", "--dir", current]
    return args


def _python_command(executable: str, package_roots: list[str], site: list[str], worker: dict) -> list[str]:
    # -I: no user site, no PYTHON* variables; -S: no .pth files (e.g. editable installs of the app);
    # the package roots and site-packages are put on the path explicitly. In unshare mode the
    # package is imported from its host path before the new root exists, from /opt/verity after.
    boot = ("import sys; sys.path[:0] = %r; sys.path += %r; from sandbox import worker; worker.main(sys.argv[1])"
            % (package_roots, site))
    return [executable, "-I", "-S", "-B", "-c", boot, json.dumps(worker)]


# ----------------------------------------------------------------------------- one warm parent
class WarmParent:
    """One sandboxed worker process for one workspace."""

    def __init__(self, spec: LaunchSpec, isolation: Isolation):
        self.spec = spec
        self.isolation = isolation
        self.hello: dict | None = None
        self.started_at = time.monotonic()
        self.last_used = time.monotonic()
        self.calls = 0
        self.recycles = 0
        self.seccomp = "off"
        self.lock = threading.Lock()
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self._nsroot: str | None = None
        self._start()

    def _start(self) -> None:
        scratch = self.spec.scratch_root
        scratch.mkdir(parents=True, exist_ok=True)
        self.spec.data_root.mkdir(parents=True, exist_ok=True)
        if scratch.is_symlink() or not scratch.is_dir():
            raise SandboxUnavailable(f"the scratch folder {scratch} is not a plain folder")
        if os.geteuid() == 0 and self.isolation.kind != "unsafe":
            # Only the scratch root itself: never follow anything the sandbox created inside it.
            uid = sandbox_uid(self.spec.workspace_id)
            os.lchown(scratch, uid, uid)
            os.chmod(scratch, 0o700, follow_symlinks=False)
        ours, theirs = socket.socketpair()
        command, env, worker = build_command(self.spec, self.isolation, theirs.fileno())
        self._nsroot = (worker.get("nsroot") or {}).get("root")
        log_path = self._log_path()
        log_file = open(log_path, "ab" if not log_path.exists() or log_path.stat().st_size < 1 << 20 else "wb")
        try:
            self.proc = subprocess.Popen(command, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                         stdout=log_file, stderr=log_file, env=env, start_new_session=True,
                                         cwd=str(scratch))
        finally:
            theirs.close()
            log_file.close()
        self.sock = ours

    def wait_ready(self, timeout: float = 90.0) -> dict:
        if self.hello is None:
            self.sock.settimeout(timeout)
            try:
                hello = protocol.recv(self.sock)
            except (protocol.ChannelClosed, OSError) as exc:
                self.close()
                raise SandboxUnavailable(f"the sandbox did not start ({exc}); see {self._log_path()}") from None
            if hello.get("error"):
                self.close()
                raise SandboxUnavailable(f"the sandbox did not start: {hello['error']}")
            self.hello = hello
            self.seccomp = str(hello.get("seccomp", "off"))
            if hello.get("threads", 1) != 1:
                log.warning("sandbox parent has %s threads before forking: %s", hello["threads"],
                            hello.get("thread_names"))
        return self.hello

    def _log_path(self) -> Path:
        return self.spec.scratch_root.parent / f".sandbox-{self.spec.workspace_id[:40]}.log"

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def call(self, request: dict, wall_s: float) -> dict:
        """Send one run request; the worker enforces the wall time itself, this is the backstop."""
        with self.lock:
            self.wait_ready()  # under the lock: one reader of the channel at a time
            self.last_used = time.monotonic()
            self.calls += 1
            try:
                self.sock.settimeout(wall_s + 15.0)
                protocol.send(self.sock, request)
                reply = protocol.recv(self.sock)
            except (socket.timeout, TimeoutError):
                self.close()
                return {"ok": False, "recycle": True, "error": {
                    "error": "limit_exceeded", "limit": "wall", "retryable": False,
                    "message": f"The code ran longer than the wall-time limit of {wall_s:g} s; the sandbox was "
                               "stopped.", "hint": "Make the computation smaller or sample the rows."}}
            except (protocol.ChannelClosed, OSError) as exc:
                self.close()
                return {"ok": False, "recycle": True, "error": {
                    "error": "python_error", "retryable": True,
                    "message": f"The sandbox process stopped unexpectedly ({type(exc).__name__}).",
                    "hint": "Run the code again; it starts in a fresh sandbox."}}
            self.last_used = time.monotonic()
            if reply.get("recycled"):  # the zygote forks a fresh parent; it says hello first
                self.hello = None
                self.recycles += 1
            return reply

    def close(self) -> None:
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        if self._nsroot:
            try:
                os.rmdir(self._nsroot)
            except OSError:
                pass


# ----------------------------------------------------------------------------- the pool
@dataclass
class RunOutcome:
    """What one run_python call produced, with host paths for every artefact."""

    ok: bool
    isolation: str
    error: dict | None = None
    stdout: dict = field(default_factory=dict)
    stderr: dict = field(default_factory=dict)
    figures: list[dict] = field(default_factory=list)   # {"path": host path, "caption": ...}
    tables: list[dict] = field(default_factory=list)    # {"name", "parquet", "csv", "rows", "columns", "preview"}
    result: Any = None
    call_dir: Path | None = None
    duration_ms: float = 0.0
    warm: bool = False
    datasets: dict = field(default_factory=dict)
    seccomp: str = "off"

    def as_dict(self) -> dict:
        data = asdict(self)
        data["call_dir"] = str(self.call_dir) if self.call_dir else None
        return data


class SandboxPool:
    """Warm parents by workspace id: never shared between workspaces, recycled after trouble,
    closed when idle."""

    def __init__(self, idle_s: float = 600.0):
        self.idle_s = idle_s
        self.parents: dict[str, WarmParent] = {}
        self.lock = threading.Lock()
        self._reaper: threading.Thread | None = None
        self._stop = threading.Event()

    def _parent(self, spec: LaunchSpec, isolation: Isolation) -> tuple[WarmParent, bool]:
        with self.lock:
            parent = self.parents.get(spec.workspace_id)
            if parent is not None and (parent.spec.key() != spec.key() or not parent.alive
                                       or parent.isolation.kind != isolation.kind):
                parent.close()
                parent = None
            warm = parent is not None and parent.hello is not None
            if parent is None:
                parent = WarmParent(spec, isolation)
                self.parents[spec.workspace_id] = parent
            self._ensure_reaper()
            return parent, warm

    def prewarm(self, spec: LaunchSpec, isolation: Isolation | None = None) -> None:
        """Start the workspace's parent now (it imports in the background)."""
        isolation = isolation or detect_isolation(spec.mode)
        if isolation.available:
            self._parent(spec, isolation)

    def run(self, spec: LaunchSpec, code: str, datasets: dict[str, Path], limits: Limits,
            call_id: str | None = None) -> RunOutcome:
        isolation = detect_isolation(spec.mode)
        if not isolation.available:
            raise SandboxUnavailable(isolation.reason)
        inside = {}
        data_root = spec.data_root.resolve()
        for name, path in datasets.items():
            resolved = Path(path).resolve()
            if isolation.kind == "unsafe":
                inside[name] = str(resolved)
                continue
            try:
                relative = resolved.relative_to(data_root)
            except ValueError:
                raise SandboxUnavailable(f"dataset {name!r} is not under the workspace's data folder") from None
            inside[name] = f"{INSIDE_DATA}/{relative.as_posix()}"
        call_id = re.sub(r"[^A-Za-z0-9_-]+", "_", call_id or uuid.uuid4().hex[:12])[:80]
        request = {"op": "run", "call_id": call_id, "code": code, "datasets": inside,
                   "limits": {k: v for k, v in asdict(limits).items()}}
        for attempt in range(2):
            parent, warm = self._parent(spec, isolation)
            try:
                reply = parent.call(request, limits.wall_s)
            except SandboxUnavailable:  # it did not start: try a new sandbox once
                with self.lock:
                    if self.parents.get(spec.workspace_id) is parent:
                        self.parents.pop(spec.workspace_id)
                if attempt:
                    raise
                continue
            break
        error = reply.get("error")
        # After a crash or a limit breach the parent process is replaced: by the zygote inside the
        # sandbox (fast, reply["recycled"]) or, when the sandbox itself failed, by a new sandbox.
        if reply.get("recycle") or (not reply.get("recycled") and _crashed(reply)):
            with self.lock:
                if self.parents.get(spec.workspace_id) is parent:
                    self.parents.pop(spec.workspace_id)
            parent.close()
            self.prewarm(spec, isolation)  # the next call finds a fresh, warm parent
        _prune_calls(spec.scratch_root / "calls", keep=KEEP_CALLS)
        # Everything in the reply came from inside the sandbox: file names are checked to be plain
        # regular files directly in this call's folder (no "..", no symlinks out of scratch).
        call_dir = spec.scratch_root.resolve() / "calls" / call_id
        figures = [{"path": str(p), "caption": str(f.get("caption", ""))[:300]} for f in reply.get("figures") or []
                   if (p := _artefact(call_dir, f.get("file")))]
        tables = []
        for table in reply.get("tables") or []:
            parquet, csv = _artefact(call_dir, table.get("parquet")), _artefact(call_dir, table.get("csv"))
            if parquet:
                tables.append({**table, "parquet": str(parquet), "csv": str(csv) if csv else None})
        return RunOutcome(
            ok=bool(reply.get("ok")), isolation=isolation.kind, error=error,
            stdout=_host_stream(reply.get("stdout"), call_dir), stderr=_host_stream(reply.get("stderr"), call_dir),
            figures=figures, tables=tables,
            result=reply.get("result"), call_dir=call_dir, duration_ms=float(reply.get("duration_ms") or 0.0),
            warm=warm, datasets=reply.get("datasets") or {}, seccomp=parent.seccomp)

    def close(self, workspace_id: str | None = None) -> None:
        with self.lock:
            ids = [workspace_id] if workspace_id else list(self.parents)
            parents = [self.parents.pop(i) for i in ids if i in self.parents]
        for parent in parents:
            parent.close()

    def _ensure_reaper(self) -> None:
        if self._reaper is None or not self._reaper.is_alive():
            self._reaper = threading.Thread(target=self._reap_idle, name="sandbox-reaper", daemon=True)
            self._reaper.start()

    def _reap_idle(self) -> None:
        while not self._stop.wait(max(1.0, min(30.0, self.idle_s / 4))):
            now = time.monotonic()
            with self.lock:
                idle = [k for k, p in self.parents.items()
                        if now - p.last_used > self.idle_s and not p.lock.locked()]
                parents = [self.parents.pop(k) for k in idle]
            for parent in parents:
                parent.close()


def _crashed(reply: dict) -> bool:
    """The child died (signal, os._exit) rather than finishing: the parent is replaced too."""
    return reply.get("exit_status") not in (0, None)


def _prune_calls(folder: Path, keep: int) -> None:
    """Scratch is cleaned: only the newest `keep` call folders (outputs, tables) are kept."""
    try:
        if folder.is_symlink() or not folder.is_dir():
            return
        entries = []
        for entry in os.scandir(folder):
            try:
                entries.append((entry.stat(follow_symlinks=False).st_mtime, entry))
            except OSError:
                pass
    except OSError:
        return
    if len(entries) <= keep:
        return
    entries.sort(key=lambda item: item[0])
    for _, entry in entries[: len(entries) - keep]:
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)  # never follows symlinks inside
            else:
                os.unlink(entry.path)
        except OSError:
            pass


def _artefact(call_dir: Path, name: Any) -> Path | None:
    """A file the sandbox reports, only when it is a regular file directly in the call folder and
    no part of its path below the (host-made) scratch root is a symlink the sandbox planted."""
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name in (".", "..") or "\0" in name:
        return None
    path = call_dir / name
    try:
        if os.path.realpath(path) != str(path) or not stat.S_ISREG(os.lstat(path).st_mode):
            return None
    except OSError:
        return None
    return path


def _host_stream(stream: dict | None, call_dir: Path) -> dict:
    stream = dict(stream or {})
    stream.setdefault("text", "")
    stream["truncated"] = bool(stream.get("truncated"))
    path = _artefact(call_dir, stream.get("file"))
    stream["path"] = str(path) if path else None
    return stream


_POOL: SandboxPool | None = None
_POOL_LOCK = threading.Lock()


def get_pool(idle_s: float = 600.0) -> SandboxPool:
    """The process-wide pool (one warm parent per workspace)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = SandboxPool(idle_s)
            atexit.register(_POOL.close)
        else:
            _POOL.idle_s = idle_s
        return _POOL
