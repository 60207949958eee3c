"""The warm parent's call handling, inside the sandbox: fork one child per request, read its one
result message within the wall time, kill what it left behind and describe how it ended.

Standard library only.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import time
import traceback

from sandbox.worker_child import _SAFE_NAME, run_child
from sandbox.worker_errors import _death


class Parent:
    def __init__(self, spec: dict, sock: socket.socket):
        self.spec = spec
        self.sock = sock
        self.scratch = spec["scratch"]
        self.pidns = bool(spec.get("pidns"))
        self.tmp_keep = set(os.listdir("/tmp")) if self.pidns else None

    def run(self, request: dict) -> dict:
        call_id = _SAFE_NAME.sub("_", str(request.get("call_id") or "call"))[:80]
        call_dir = os.path.join(self.scratch, "calls", call_id)
        os.makedirs(call_dir, exist_ok=True)
        limits = request["limits"]
        wall_s = float(limits["wall_s"])
        read_fd, write_fd = os.pipe()
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:  # ---- child
            code = 70
            try:
                os.close(read_fd)
                self.sock.close()
                code = run_child(write_fd, call_dir, call_id, request)
            except BaseException:  # noqa: BLE001 - never return into the parent's loop
                code = 71
                try:
                    os.write(2, traceback.format_exc().encode("utf-8", "replace"))
                except BaseException:  # noqa: BLE001
                    pass
            finally:
                os._exit(code)
        os.close(write_fd)
        # The child sends one length-prefixed message; processes the code forked may keep the
        # pipe open, so the parent stops reading at the end of the message, not at EOF.
        buffer, timed_out, expected = bytearray(), False, None
        deadline = started + wall_s
        while expected is None or len(buffer) < expected:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            buffer += chunk
            if expected is None and len(buffer) >= 8:
                expected = 8 + int.from_bytes(buffer[:8], "big")
        os.close(read_fd)
        if timed_out:
            _kill(pid)
        status = _wait(pid, 5.0)
        try:  # whatever the call forked and left behind in its process group
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        elapsed = time.monotonic() - started
        self.cleanup()
        reply = _decode(bytes(buffer[8:expected])) if expected and len(buffer) >= expected else None
        if timed_out:
            reply = {"ok": False, "error": {"error": "limit_exceeded", "limit": "wall",
                                            "message": f"The code ran longer than the wall-time limit of {wall_s:g} s "
                                                       "and was stopped.",
                                            "hint": "Make the computation smaller (sample the rows, fewer iterations) "
                                                    "or avoid waiting (sleep, input).", "retryable": False}}
        elif reply is None:
            reply = {"ok": False, "error": _death(status, limits)}
        reply.update(op="result", call_id=call_id, call_dir=os.path.relpath(call_dir, self.scratch),
                     duration_ms=round(elapsed * 1000, 1), exit_status=status)
        return reply

    def cleanup(self) -> None:
        """Nothing the call started outlives it, and /tmp starts empty for the next call."""
        if self.pidns:
            # In our own pid namespace every process but init, the zygote and this parent is a
            # leftover of the call (a fork bomb refills: repeat until none is left).
            keep = {1, os.getpid(), os.getppid()}
            for _ in range(100):
                others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in keep]
                if not others:
                    break
                for pid in others:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                _reap()
                time.sleep(0.005)
            _reap()
            for name in os.listdir("/tmp"):
                if name in (self.tmp_keep or ()):
                    continue
                path = os.path.join("/tmp", name)
                try:
                    if os.path.isdir(path) and not os.path.islink(path):
                        shutil.rmtree(path, ignore_errors=True)
                    else:
                        os.unlink(path)
                except OSError:
                    pass
        else:
            _reap()


def _kill(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except OSError:
            pass


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _wait(pid: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return -1
        if done:
            return status
        if time.monotonic() > deadline:
            _kill(pid)
            timeout, deadline = 0, time.monotonic() + 5
        time.sleep(0.005)


def _decode(raw: bytes) -> dict | None:
    if not raw:
        return None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
