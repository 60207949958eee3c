"""Slow clients are timed out (issue 25): real sockets against a real `verity serve` process. Before,
a connection sending a header line every few seconds, or nothing at all, or a body a byte at a
time, was held for as long as the client liked (500 of them, 500 connections)."""

from __future__ import annotations

import os
import selectors
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.config import Settings

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 1.0
# the timeout, the check's tick (a quarter of it) and slack for a busy machine
CLOSED_WITHIN_S = TIMEOUT_S + 2.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[int]:
    """`verity serve` in a process of its own, with one-second read timeouts."""
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "VERITY_DATA_DIR": str(tmp_path_factory.mktemp("serve")),
        "VERITY_LLM_MODEL": "builtin",
        "VERITY_HTTP_HEADER_TIMEOUT_S": str(TIMEOUT_S),
        "VERITY_HTTP_BODY_TIMEOUT_S": str(TIMEOUT_S),
        "VERITY_HTTP_BODY_MIN_BYTES_PER_S": "100",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2, trust_env=False).status_code == 200:
                    break
            except httpx.HTTPError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=30)


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setblocking(False)
    return sock


def trickle(socks: list[socket.socket], lines: Iterator[bytes], every_s: float, for_s: float) -> dict[int, float]:
    """Send the next line on every open socket each `every_s` seconds for `for_s` seconds; return
    when each socket was closed by the server (seconds from the start), by its index."""
    selector = selectors.DefaultSelector()
    for index, sock in enumerate(socks):
        selector.register(sock, selectors.EVENT_READ, index)
    closed: dict[int, float] = {}
    start = next_send = time.monotonic()
    while time.monotonic() - start < for_s and len(closed) < len(socks):
        if time.monotonic() >= next_send:
            line = next(lines)
            for index, sock in enumerate(socks):
                if index not in closed and line:
                    try:
                        sock.send(line)
                    except OSError:  # reset by the server
                        closed[index] = time.monotonic() - start
            next_send += every_s
        for key, _ in selector.select(timeout=0.05):
            try:
                data = key.fileobj.recv(4096)  # type: ignore[union-attr]
            except OSError:
                data = b""
            if not data or b"408" in data:
                closed.setdefault(key.data, time.monotonic() - start)
                selector.unregister(key.fileobj)
    for sock in socks:
        sock.close()
    return closed


def header_lines() -> Iterator[bytes]:
    yield b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    n = 0
    while True:
        n += 1
        yield f"X-Slow-{n}: {n}\r\n".encode()


def health_answers(port: int) -> bool:
    """The server answers an ordinary request meanwhile. How fast is bench's business: a wall-clock bound
    here failed on a loaded 2-core machine; a server stuck behind slow clients times out at 5 s instead."""
    return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5, trust_env=False).status_code == 200


def test_connections_sending_a_header_line_at_a_time_are_closed(server):
    socks = [connect(server) for _ in range(500)]
    answers: list[bool] = []
    probe = threading.Thread(target=lambda: answers.extend(health_answers(server) for _ in range(5)))
    probe.start()
    closed = trickle(socks, header_lines(), every_s=0.3, for_s=TIMEOUT_S + 4)
    probe.join()
    assert len(closed) == 500, f"{500 - len(closed)} slow connections still open"
    assert max(closed.values()) < CLOSED_WITHIN_S + 1.0  # 500 at once: a little more slack
    assert answers == [True] * 5  # the server answered others meanwhile


def test_a_connection_that_sends_nothing_is_closed(server):
    closed = trickle([connect(server)], iter(lambda: b"", None), every_s=1.0, for_s=TIMEOUT_S + 4)
    assert closed and closed[0] < CLOSED_WITHIN_S


def test_a_body_sent_a_byte_at_a_time_or_stopped_halfway_is_cut(server):
    head = (
        b"POST /api/workspaces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000\r\n\r\n"
    )

    def byte_at_a_time() -> Iterator[bytes]:
        yield head
        while True:
            yield b" "

    def stops_halfway() -> Iterator[bytes]:
        yield head + b" " * 500
        while True:
            yield b""

    # a byte every 0.2 s: never a pause as long as the timeout, but 5 bytes/s, under the minimum rate
    trickled = trickle([connect(server)], byte_at_a_time(), every_s=0.2, for_s=TIMEOUT_S + 4)
    assert trickled and trickled[0] < CLOSED_WITHIN_S
    stopped = trickle([connect(server)], stops_halfway(), every_s=0.2, for_s=TIMEOUT_S + 4)
    assert stopped and stopped[0] < CLOSED_WITHIN_S


def read_response(sock: socket.socket) -> bytes:
    """One whole response (its headers and Content-Length bytes of body) from a blocking socket."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        assert chunk, "the server closed the connection"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(4096)
    return head + b"\r\n\r\n" + body


def test_ordinary_clients_are_not_cut(server):
    with socket.create_connection(("127.0.0.1", server)) as sock:
        sock.settimeout(5)
        for _ in range(3):  # a kept-alive connection lives past the header timeout between requests
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert read_response(sock).startswith(b"HTTP/1.1 200")
            time.sleep(TIMEOUT_S * 0.7)
    with socket.create_connection(("127.0.0.1", server)) as sock:
        sock.settimeout(5)
        body = b'{"name": "sent in three parts"}' + b" " * 3000
        sock.sendall(
            b"POST /api/workspaces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
        )
        for part in (body[:1000], body[1000:2000], body[2000:]):  # pauses under the timeout, 3 KB/s
            time.sleep(TIMEOUT_S * 0.4)
            sock.sendall(part)
        answer = read_response(sock)
        assert answer.startswith(b"HTTP/1.1 201"), answer[:200]


def test_the_h11_protocol_gets_the_same_timeouts(tmp_path):
    """Where httptools is not installed uvicorn speaks h11: the timeouts hold there too."""
    import uvicorn
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from app.main import create_app
    from app.web.slow_clients import timed_protocol

    settings = Settings(_env_file=None, data_dir=tmp_path, llm_model="builtin", http_header_timeout_s=TIMEOUT_S)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(create_app(settings), log_level="warning", http=timed_protocol(settings, H11Protocol))
    served = uvicorn.Server(config)
    thread = threading.Thread(target=served.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    port = sock.getsockname()[1]
    try:
        deadline = time.monotonic() + 30
        while not served.started and time.monotonic() < deadline:
            time.sleep(0.05)
        closed = trickle([connect(port)], header_lines(), every_s=0.3, for_s=TIMEOUT_S + 4)
        assert closed and closed[0] < CLOSED_WITHIN_S
        assert health_answers(port)
    finally:
        served.should_exit = True
        thread.join(timeout=30)
        sock.close()


def test_uvicorn_run_by_hand_can_name_the_timed_protocol(monkeypatch):
    from uvicorn.importer import import_from_string

    from app.config import get_settings

    monkeypatch.setenv("VERITY_HTTP_HEADER_TIMEOUT_S", "7")
    get_settings.cache_clear()
    try:
        protocol = import_from_string("app.web.slow_clients:TimedHTTPProtocol")  # what `--http` does
        assert protocol.header_s == 7.0 and protocol.__name__.startswith("Timed")
    finally:
        get_settings.cache_clear()
