"""The warm parent's call handling, inside the sandbox: fork one child per request (it becomes
the call user when the host is root), read its one result message within the wall time, stop
every process the call left behind and describe how it ended.

The call's folder and /tmp are emptied by the host after it has copied the outputs it keeps
(sandbox.results): the parent never opens a file the call wrote. Standard library only.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import time
import traceback

from sandbox import caps
from sandbox.protocol import MAX_MESSAGE
from sandbox.worker_child import _SAFE_NAME, run_child
from sandbox.worker_errors import _death


class Parent:
    def __init__(self, spec: dict, sock: socket.socket):
        self.spec = spec
        self.sock = sock
        self.scratch = spec["scratch"]
        self.pidns = bool(spec.get("pidns"))

    def run(self, request: dict) -> dict:
        call_id = _SAFE_NAME.sub("_", str(request.get("call_id") or "call"))[:80]
        call_dir = os.path.join(self.scratch, "calls", call_id)
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
                if self.spec.get("call_uid") is not None:
                    caps.become_call_user(self.spec["call_uid"], self.spec["call_gid"])
                os.makedirs(call_dir, mode=0o700, exist_ok=True)
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
        buffer, expected, timed_out = _read_reply(read_fd, pid, started + wall_s)
        os.close(read_fd)
        if timed_out:
            _kill(pid)
        status = _wait(pid, 5.0)
        try:  # whatever the call forked and left behind in its process group
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        elapsed = time.monotonic() - started
        stopped = self.cleanup()
        reply = _decode(bytes(buffer[8:expected])) if expected and len(buffer) >= expected else None
        if timed_out:
            reply = {"ok": False, "error": {"error": "limit_exceeded", "limit": "wall",
                                            "message": f"The code ran longer than the wall-time limit of {wall_s:g} s "
                                                       "and was stopped.",
                                            "hint": "Make the computation smaller (sample the rows, fewer iterations) "
                                                    "or avoid waiting (sleep, input).", "retryable": False}}
        elif reply is None:
            reply = {"ok": False, "error": _death(status, limits)}
        reply.update(op="result", call_id=call_id, duration_ms=round(elapsed * 1000, 1), exit_status=status,
                     stopped_processes=stopped)
        return reply

    def cleanup(self) -> int:
        """Nothing the call started outlives it; returns how many processes were still running."""
        if self.pidns:
            # In the sandbox's own pid namespace every process but init, the zygote and this
            # parent is a leftover of the call, whatever process group or session it made.
            return stop_leftovers({1, os.getpid(), os.getppid()})
        _reap()
        return 0


def stop_leftovers(keep: set[int]) -> int:
    """Kill every process of this pid namespace outside `keep` (CAP_KILL when the calls run as
    another user); a fork bomb refills, so repeat until none is left. Returns how many were
    running (not zombies) in the first round."""
    found = -1
    for _ in range(200):
        others = [pid for pid in _pids() if pid not in keep]
        if found < 0:
            found = sum(1 for pid in others if _running(pid))
        if not others:
            break
        for pid in others:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap()
        time.sleep(0.002)
    _reap()
    return max(found, 0)


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def _read_reply(read_fd: int, pid: int, deadline: float) -> tuple[bytearray, int | None, bool]:
    """The child's one length-prefixed message: (bytes, expected length, timed out). Processes the
    code forked may keep the pipe open, so reading stops at the end of the message, or when the
    child has exited and nothing more is in the pipe (it blocks in write while its message does
    not fit, so it cannot exit before the message is read)."""
    buffer, expected = bytearray(), None
    try:
        exited = os.pidfd_open(pid)
    except (AttributeError, OSError):
        exited = None
    watched = [read_fd] + ([exited] if exited is not None else [])
    try:
        while expected is None or len(buffer) < expected:
            left = deadline - time.monotonic()
            if left <= 0:
                return buffer, expected, True
            ready, _, _ = select.select(watched, [], [], left)
            if read_fd in ready:
                chunk = os.read(read_fd, 1 << 16)
                if not chunk:
                    break
                buffer += chunk
                if expected is None and len(buffer) >= 8:
                    expected = 8 + int.from_bytes(buffer[:8], "big")
                    if expected > MAX_MESSAGE:  # not a message the child's own code would write
                        return buffer, None, False
            elif exited is not None and exited in ready:
                break  # the child is gone and the pipe holds nothing more
    finally:
        if exited is not None:
            os.close(exited)
    return buffer, expected, False


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
