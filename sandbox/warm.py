"""One warm parent: a sandboxed worker process for one workspace (bwrap or unshare around
`sandbox.worker`), the channel to it, and the host's descriptors of its scratch. Every reply is
matched to its call (a new parent's hello after a crash is reported as the crash it is), and after
each call the outputs are copied out and the scratch emptied (sandbox.results).

Standard library only; no web or agent imports.
"""

from __future__ import annotations

import logging
import os
import select
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from sandbox import protocol
from sandbox.host import Isolation, Limits, SandboxUnavailable
from sandbox.launch import LaunchSpec, build_command
from sandbox.procs import sandbox_root, tree_pss_kb
from sandbox.protocol import reply_bytes
from sandbox.results import collect, empty_scratch, open_dir

log = logging.getLogger("sandbox.host")  # the logger name the host module always used
CRASHED = {
    "error": "sandbox_error",
    "retryable": True,
    "message": "The sandbox's Python process stopped while running this code (it was restarted); "
    "the code's output is lost.",
    "hint": "Run the code again; do not signal, kill or trace other processes.",
}


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
        self.in_use = 0  # calls waiting for or holding this parent (guarded by the pool's lock)
        self.memory_kb = 0
        self.memory_at = 0.0
        self.seccomp = "off"
        self.lock = threading.Lock()
        self.scratch_fd: int | None = None  # the sandbox's /scratch, opened once, never by path again
        self.tmp_fd: int | None = None
        self._seq = 0
        self._nsroot: str | None = None
        self.nsroot_path: str | None = None  # unshare: the empty host folder the root was mounted on
        self.proc, self.sock = self._start()

    def _start(self) -> tuple[subprocess.Popen, socket.socket]:
        self.spec.scratch_root.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.spec.data_root.mkdir(parents=True, exist_ok=True)
        ours, theirs = socket.socketpair()
        command, env, worker = build_command(self.spec, self.isolation, theirs.fileno())
        self._nsroot = self.nsroot_path = (worker.get("nsroot") or {}).get("root")
        log_path = self._log_path()
        log_file = open(log_path, "ab" if not log_path.exists() or log_path.stat().st_size < 1 << 20 else "wb")
        try:
            proc = subprocess.Popen(
                command,
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=log_file,
                env=env,
                start_new_session=True,
                cwd="/",
            )
        except BaseException:
            self._remove_nsroot()
            ours.close()
            raise
        finally:
            theirs.close()
            log_file.close()
        return proc, ours

    def wait_ready(self, timeout: float = 90.0) -> dict:
        """The parent's hello (the first message of a new parent), read once."""
        if self.hello is not None:
            return self.hello
        self.sock.settimeout(timeout)
        try:
            hello = protocol.recv(self.sock)
        except (protocol.ChannelClosed, OSError) as exc:
            self.close()
            raise SandboxUnavailable(f"the sandbox did not start ({exc}); see {self._log_path()}") from None
        if hello.get("error") or hello.get("op") != "hello":
            self.close()
            raise SandboxUnavailable(f"the sandbox did not start: {hello.get('error') or hello}")
        self._ready(hello)
        return hello

    def _ready(self, hello: dict) -> None:
        self.hello = hello
        self.seccomp = str(hello.get("seccomp", "off"))
        if hello.get("threads", 1) != 1:
            log.warning("sandbox parent has %s threads before forking: %s", hello["threads"], hello.get("thread_names"))
        if self.scratch_fd is None:
            try:
                self._open_scratch()
            except OSError as exc:
                self.close()
                raise SandboxUnavailable(f"the sandbox's scratch folder cannot be reached ({exc})") from None
        self._remove_nsroot()  # the sandbox has its root now: the empty host folder is not needed

    def _open_scratch(self) -> None:
        if self.isolation.kind == "unsafe":
            self.scratch_fd = open_dir(self.spec.scratch_root / "live")
            return
        root = sandbox_root(self.proc.pid)
        try:
            self.scratch_fd = open_dir("scratch", root)
            self.tmp_fd = open_dir("tmp", root)
        finally:
            os.close(root)

    def _log_path(self) -> Path:
        return self.spec.scratch_root.parent / f".sandbox-{self.spec.workspace_id[:40]}.log"

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def call(self, request: dict, limits: Limits) -> tuple[dict, list, list, Path]:
        """Run one request; the worker enforces the wall time itself, this is the backstop. Returns
        the reply and the figures and tables copied out of the sandbox (into a host folder), after
        which the sandbox's scratch is empty again."""
        with self.lock:
            self.wait_ready()  # under the lock: one reader of the channel at a time
            self.last_used = time.monotonic()
            self.calls += 1
            self._seq += 1
            request = {**request, "seq": self._seq}
            reply = self._exchange(request, limits.wall_s, limits.reply_mb)
            kept = self.spec.scratch_root / "calls" / request["call_id"]
            figures: list = []
            tables: list = []
            if self.scratch_fd is not None:
                figures, tables = collect(
                    self.scratch_fd,
                    request["call_id"],
                    reply,
                    kept,
                    limits.file_mb * 1024 * 1024,
                    limits.call_files_mb * 1024 * 1024,
                )
                empty_scratch(self.scratch_fd, self.tmp_fd)
            self.last_used = time.monotonic()
            return reply, figures, tables, kept

    def _exchange(self, request: dict, wall_s: float, reply_mb: int = 4) -> dict:
        deadline = time.monotonic() + wall_s + 15.0
        # the parent reads at most reply_mb from the call; its own fields add little: a bigger
        # message is refused before it is read (the sandbox is then replaced)
        max_message = reply_bytes({"reply_mb": reply_mb}) + (1 << 20)
        try:
            self._drain()
            protocol.send(self.sock, request)
            while True:
                self.sock.settimeout(max(0.1, deadline - time.monotonic()))
                reply = protocol.recv(self.sock, max_message)
                if (
                    reply.get("op") == "result"
                    and reply.get("seq") == request["seq"]
                    and reply.get("call_id") == request["call_id"]
                ):
                    break
                if reply.get("op") == "hello":
                    # The parent died during the call and the zygote started a new one: the call
                    # has no output, and the new parent is ready for the next call.
                    log.warning(
                        "sandbox parent of %s died during a call: %s", self.spec.workspace_id, reply.get("previous")
                    )
                    self._ready(reply)
                    self.recycles += 1
                    return {
                        "ok": False,
                        "error": dict(CRASHED),
                        "parent_crashed": True,
                        "stopped_processes": (reply.get("previous") or {}).get("stopped_processes", 0),
                    }
                log.warning("sandbox of %s sent an unexpected message: %.200s", self.spec.workspace_id, reply)
        except TimeoutError:
            self.close()
            return {
                "ok": False,
                "recycle": True,
                "error": {
                    "error": "limit_exceeded",
                    "limit": "wall",
                    "retryable": False,
                    "message": f"The code ran longer than the wall-time limit of {wall_s:g} s; the sandbox was "
                    "stopped.",
                    "hint": "Make the computation smaller or sample the rows.",
                },
            }
        except (protocol.ChannelClosed, OSError, ValueError) as exc:
            self.close()
            return {
                "ok": False,
                "recycle": True,
                "error": {
                    **CRASHED,
                    "message": f"The sandbox stopped unexpectedly ({type(exc).__name__}) while running "
                    "this code; the next call starts a fresh one.",
                },
            }
        if reply.get("recycled"):  # the zygote forks a fresh parent; it says hello first
            self.hello = None
            self.recycles += 1
        return reply

    def _drain(self) -> None:
        """A parent that died between calls (killed from outside, out of memory) has been replaced
        by the zygote, whose new parent said hello: read that now, so it is not taken for a crash
        of the call about to be sent."""
        while select.select([self.sock], [], [], 0)[0]:
            self.sock.settimeout(5.0)
            message = protocol.recv(self.sock)
            if message.get("op") == "hello":
                log.warning(
                    "sandbox parent of %s was replaced between calls: %s",
                    self.spec.workspace_id,
                    message.get("previous"),
                )
                self._ready(message)
            else:
                log.warning("sandbox of %s sent an unexpected message: %.200s", self.spec.workspace_id, message)

    def measure(self) -> int:
        """The sandbox's memory: the PSS of all its processes, in kB (cached for a few seconds)."""
        if time.monotonic() - self.memory_at > 3.0:
            self.memory_kb = tree_pss_kb(self.proc.pid) if self.alive else 0
            self.memory_at = time.monotonic()
        return self.memory_kb

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        for name in ("scratch_fd", "tmp_fd"):
            fd = getattr(self, name)
            if fd is not None:
                setattr(self, name, None)
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._remove_nsroot()

    def _remove_nsroot(self) -> None:
        if self._nsroot:
            try:
                os.rmdir(self._nsroot)
                self._nsroot = None
            except FileNotFoundError:
                self._nsroot = None
            except OSError:
                pass
