"""The warm parents: one sandboxed worker process per workspace (`WarmParent`) and the pool that
hands them out (`SandboxPool`), enforcing the wall-time limit as a backstop, recycling a parent
after a crash or a limit breach, and reaping idle ones.

Standard library only; no web or agent imports.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import signal
import socket
import subprocess
import threading
import time
import uuid
from dataclasses import asdict
from pathlib import Path

from sandbox import protocol
from sandbox.host import Isolation, Limits, SandboxUnavailable, detect_isolation
from sandbox.launch import INSIDE_DATA, LaunchSpec, build_command, sandbox_uid
from sandbox.results import RunOutcome, _artefact, _crashed, _host_stream, _prune_calls

log = logging.getLogger("sandbox.host")  # the logger name the host module always used
KEEP_CALLS = 200  # call folders kept in a workspace's scratch (full outputs, saved tables)


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
