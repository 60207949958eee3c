"""The read server: a single-threaded process that forks one child per file read for a
multi-threaded process (the web server), which must not fork itself.

    python -m app.ingest.readserver      # started by `read_server()`, talks over stdin/stdout

Requests are JSON lines on stdin, `{"id", "job", "timeout"}` (a job folder: app.ingest.child);
each answer is a JSON line on stdout, `{"id", "status": "exit"|"timeout", "code", "peak_kb"}`, sent when the
child has exited or was killed at its deadline. Children run concurrently. When stdin closes
(the web server stopped or died) the server kills its children and exits, so none is orphaned.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import selectors
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import IO, cast

from app.ingest.child import SETUP_FAILED, NoChild, import_readers, pidfd, read_job

log = logging.getLogger(__name__)


# --- the client, in the web server --------------------------------------------------------------


class ReadServer:
    """The web server's handle on its read server process."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "app.ingest.readserver"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            close_fds=True,
        )
        # both are pipes (PIPE above), never None
        self._requests, self._replies = cast(IO[bytes], self.process.stdin), cast(IO[bytes], self.process.stdout)
        self._lock = threading.Lock()
        self._waiting: dict[str, queue.Queue] = {}
        self._closed = False  # the server's answers ended: it stopped
        threading.Thread(target=self._answers, name="verity-read-server", daemon=True).start()

    def alive(self) -> bool:
        return self.process.poll() is None and not self._closed

    def run(self, job: Path, timeout: float) -> tuple[str, int, int]:
        """Have the server fork a child for `job`; ("exit", code) or ("timeout", -9), and the
        child's peak resident size in KiB."""
        ident = uuid.uuid4().hex
        answer: queue.Queue = queue.Queue(1)
        # the server's working folder is the one it started in: a relative job would be looked for there
        line = json.dumps({"id": ident, "job": str(Path(job).resolve()), "timeout": timeout}) + "\n"
        with self._lock:
            if self._closed:
                raise NoChild("the read server stopped")
            self._waiting[ident] = answer
            try:
                self._requests.write(line.encode())
                self._requests.flush()
            except (OSError, ValueError) as exc:
                self._waiting.pop(ident, None)
                raise NoChild(f"the read server is gone ({exc})") from None
        try:
            # The server enforces the deadline; the margin covers its start (imports) on first use.
            reply = answer.get(timeout=timeout + 60)
        except queue.Empty:
            reply = None
        finally:
            with self._lock:
                self._waiting.pop(ident, None)
        if reply is None:
            raise NoChild("the read server did not answer")
        return reply["status"], int(reply["code"]), int(reply.get("peak_kb", 0))

    def _answers(self) -> None:
        for raw in self._replies:
            try:
                reply = json.loads(raw)
            except ValueError:
                continue
            with self._lock:
                waiting = self._waiting.get(reply.get("id"))
            if waiting is not None:
                waiting.put(reply)
        with self._lock:  # the server stopped: nobody waits for an answer that will not come
            self._closed = True
            for waiting in self._waiting.values():
                waiting.put(None)


_server: ReadServer | None = None
_server_lock = threading.Lock()


def read_server() -> ReadServer:
    """This process's read server, started on first use and again if it died."""
    global _server
    with _server_lock:
        if _server is None or not _server.alive():
            _server = ReadServer()
        return _server


def start_read_server() -> None:
    """Start the read server ahead of the first upload (it imports pandas and the readers, a
    second or two). Safe to call more than once, from any thread."""
    try:
        read_server()
    except OSError:
        log.warning("the read server could not start; files will be read in-process", exc_info=True)


# --- the server ------------------------------------------------------------------------------


def serve(requests: int, answers) -> None:
    """Fork a child per request line read from the file descriptor `requests`; write the answers
    to `answers` (a binary file)."""
    import_readers(documents=True)  # once, before any fork

    selector = selectors.DefaultSelector()
    selector.register(requests, selectors.EVENT_READ, None)
    children: dict[int, tuple[str, float, int | None]] = {}  # pid -> (request id, deadline, pidfd)
    pending, open_input = b"", True
    while open_input or children:
        now = time.monotonic()
        wait = min((deadline for _, deadline, _ in children.values()), default=now + 3600) - now
        if any(fd is None for _, _, fd in children.values()):
            wait = min(wait, 0.05)  # no pidfd here: look for exited children every 50 ms
        for key, _ in selector.select(timeout=max(0.0, wait)):
            if key.data is not None:
                continue  # a child exited: reaped below
            chunk = os.read(requests, 65536)
            if not chunk:
                open_input = False
                selector.unregister(requests)
                for pid in children:
                    _kill(pid)
                continue
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:  # ---- child: never returns into the loop
                    code = SETUP_FAILED
                    try:
                        os.dup2(2, 1)  # stdout is the answer channel
                        code = read_job(Path(request["job"]))
                    finally:
                        os._exit(code)
                fd = pidfd(pid)
                children[pid] = (request["id"], time.monotonic() + float(request["timeout"]), fd)
                if fd is not None:
                    selector.register(fd, selectors.EVENT_READ, pid)
        for pid, (ident, deadline, fd) in list(children.items()):
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if not done and time.monotonic() < deadline:
                continue
            if done:
                reply = {"id": ident, "status": "exit", "code": os.waitstatus_to_exitcode(status)}
            else:
                _kill(pid)
                _, _, usage = os.wait4(pid, 0)
                reply = {"id": ident, "status": "timeout", "code": -signal.SIGKILL}
            reply["peak_kb"] = usage.ru_maxrss
            if fd is not None:
                selector.unregister(fd)
                os.close(fd)
            del children[pid]
            if open_input:
                answers.write((json.dumps(reply) + "\n").encode())
                answers.flush()


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ^C in the terminal stops the web server, which stops this
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # nothing else may write to the answer channel
    serve(sys.stdin.fileno(), answers)
