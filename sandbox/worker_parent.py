"""The warm parent's call handling, inside the sandbox: fork one child per request (it becomes
the call user when the host is root; in a user namespace it gets a pid namespace of its own), read
its one result message within the wall time, stop every process the call left behind and
describe how it ended.

The call's folder and /tmp are emptied by the host after it has copied the outputs it keeps
(sandbox.results): the parent never opens a file the call wrote. Standard library only.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import socket
import time
import traceback

from sandbox import caps, seccomp
from sandbox.protocol import MAX_MESSAGE, reply_bytes
from sandbox.worker_child import _SAFE_NAME, run_child
from sandbox.worker_errors import _death

CLONE_NEWPID = 0x20000000


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
                if self.spec.get("call_pidns"):
                    enter_call_namespace(write_fd, bool(self.spec.get("seccomp")))
                elif self.spec.get("call_uid") is not None:
                    caps.become_call_user(self.spec["call_uid"], self.spec["call_gid"])
                os.makedirs(call_dir, mode=0o700, exist_ok=True)
                code = run_child(write_fd, call_dir, call_id, request)
                if code == 0 and self.spec.get("call_pidns"):
                    _await_end()  # the parent counts what the call left running, then ends it
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
        max_reply = reply_bytes(limits)
        buffer, expected, timed_out = _read_reply(read_fd, pid, started + wall_s, max_reply)
        oversized = expected is not None and expected - 8 > max_reply
        os.close(read_fd)
        complete = not oversized and expected is not None and len(buffer) >= expected
        ended_by_us = end_call_namespace() if self.spec.get("call_pidns") and complete else 0
        if timed_out:
            _kill(pid)
        status = _wait(pid, 5.0)
        if ended_by_us and os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
            status = 0  # the call had sent its whole result: the kill was ours
        try:  # whatever the call forked and left behind in its process group
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        elapsed = time.monotonic() - started
        stopped = max(self.cleanup(), ended_by_us - 1)
        reply = _decode(bytes(buffer[8:expected])) if complete else None
        if timed_out:
            reply = {
                "ok": False,
                "error": {
                    "error": "limit_exceeded",
                    "limit": "wall",
                    "message": f"The code ran longer than the wall-time limit of {wall_s:g} s and was stopped.",
                    "hint": "Make the computation smaller (sample the rows, fewer iterations) "
                    "or avoid waiting (sleep, input).",
                    "retryable": False,
                },
            }
        elif oversized:
            reply = {"ok": False, "error": _reply_too_large((expected or 8) - 8, max_reply)}
        elif reply is None:
            reply = {"ok": False, "error": _death(status, limits)}
        reply.update(
            op="result",
            call_id=call_id,
            duration_ms=round(elapsed * 1000, 1),
            exit_status=status,
            stopped_processes=stopped,
        )
        return reply

    def cleanup(self) -> int:
        """Nothing the call started outlives it; returns how many processes were still running."""
        if self.pidns:
            # In the sandbox's own pid namespace every process but init, the zygote and this
            # parent is a leftover of the call, whatever process group or session it made.
            return stop_leftovers({1, os.getpid(), os.getppid()})
        _reap()
        return 0


def enter_call_namespace(write_fd: int, with_seccomp: bool) -> None:
    """A pid namespace of the call's own (user namespace: one uid for all): the call's process is
    its init, where the parent, the zygote and init of the sandbox do not exist (no pid of theirs
    can be named, signalled or traced), and when it ends the kernel kills what it left. This
    process stays outside, waits and ends as the call did; only the call returns from here, with
    no capability left and the seccomp filter installed."""
    if _libc().unshare(CLONE_NEWPID) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWPID)")
    runner = os.fork()
    if runner == 0:
        caps.drop_all()
        if with_seccomp and seccomp.install() != "on":
            raise SystemExit("the seccomp filter could not be installed")
        return
    os.close(write_fd)
    _, status = os.waitpid(runner, 0)
    if os.WIFSIGNALED(status):  # end the same way, so the parent reads the same death
        sig = os.WTERMSIG(status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 70)


def _await_end() -> None:
    """The call's init, its result sent: wait to be ended by the parent (SIGKILL from outside the
    namespace is the one signal that reaches it), so that the parent still sees what it left."""
    while True:
        signal.pause()


def end_call_namespace() -> int:
    """Count the processes still running in the call's pid namespace, its init included, and end
    the init: the kernel then kills everything else there. Returns the count (0: it had ended)."""
    init, running = None, 0
    for pid in _pids():
        inner = _nspid(pid)
        if len(inner) < 2:
            continue  # a process of the sandbox itself
        if inner[-1] == 1:
            init = pid
        if _running(pid):
            running += 1
    if init is not None:
        try:
            os.kill(init, signal.SIGKILL)
        except OSError:
            pass
    return running if init is not None else 0


def _nspid(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("NSpid:"):
                    return [int(p) for p in line.split()[1:]]
    except (OSError, ValueError):
        pass
    return []


def _libc():
    return ctypes.CDLL(None, use_errno=True)


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


def _reply_too_large(size: int, max_reply: int) -> dict:
    return {
        "error": "limit_exceeded",
        "limit": "reply",
        "message": f"The call's result message ({size:,} bytes) is larger than the limit of {max_reply:,} "
        "bytes; it was not read.",
        "hint": "Print less and keep `result` small (a summary, not the data); save big tables with save_table.",
        "retryable": False,
    }


def _read_reply(
    read_fd: int, pid: int, deadline: float, max_bytes: int = MAX_MESSAGE
) -> tuple[bytearray, int | None, bool]:
    """The child's one length-prefixed message: (bytes, expected length, timed out). Processes the
    code forked may keep the pipe open, so reading stops at the end of the message, or when the
    child has exited and nothing more is in the pipe (it blocks in write while its message does
    not fit, so it cannot exit before the message is read). A message announced larger than
    `max_bytes` is not read at all (its expected length says so): the code can write anything on
    that pipe, and the parent must not hold it."""
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
                    if expected - 8 > max_bytes:  # not a message the child's own code would write
                        return buffer, expected, False
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
