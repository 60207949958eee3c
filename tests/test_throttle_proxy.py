"""The sign-in throttle counts per account as well as per client, and the client address comes from
X-Forwarded-For only behind a configured proxy, under a real uvicorn started with the options
`verity serve` passes (uvicorn's own default would believe the header from 127.0.0.1)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from app.config import Settings
from app.main import create_app, server_options

pytestmark = pytest.mark.slow  # a server, a run or a child per test: handed out early (tests/conftest.py)

WRONG = {"email": "ada@example.com", "password": "wrong wrong"}


def serve(settings: Settings) -> Iterator[httpx.Client]:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(create_app(settings), log_level="warning", **server_options(settings))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    deadline = time.monotonic() + 30
    with httpx.Client(base_url=base, trust_env=False) as client:
        while True:
            try:
                if client.get("/healthz").status_code == 200:
                    break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        client.post("/signup", data={"email": "ada@example.com", "password": "long enough"})
        client.cookies.clear()
        try:
            yield client
        finally:
            server.should_exit = True
            thread.join(timeout=30)
            sock.close()


@pytest.fixture
def server(tmp_path, request) -> Iterator[httpx.Client]:
    settings = Settings(_env_file=None, data_dir=tmp_path, llm_model="builtin", auth="on", **request.param)
    yield from serve(settings)


def login(client: httpx.Client, forwarded_for: str | None = None, body: dict = WRONG, **headers) -> httpx.Response:
    if forwarded_for:
        headers["X-Forwarded-For"] = forwarded_for
    return client.post("/api/auth/token", json=body, headers=headers)


@pytest.mark.parametrize("server", [{}], indirect=True)
def test_a_rotating_forwarded_for_header_does_not_bypass_the_throttle(server):
    for n in range(5):
        assert login(server, f"10.0.0.{n}").status_code == 401
    refused = login(server, "10.0.0.99", {"email": "ada@example.com", "password": "long enough"})
    assert refused.status_code == 429 and refused.json()["error"]["category"] == "rate_limited"


@pytest.mark.parametrize(
    "server",
    [{"proxy_headers": True, "forwarded_allow_ips": "127.0.0.1", "login_max_failures_account": 8}],
    indirect=True,
)
def test_behind_a_trusted_proxy_clients_and_accounts_are_counted(server):
    for _ in range(5):
        assert login(server, "203.0.113.1").status_code == 401
    assert login(server, "203.0.113.1").status_code == 429  # that client, that account
    assert login(server, "203.0.113.2").status_code == 401  # another client still may try...
    for n in range(3, 6):
        login(server, f"203.0.113.{n}")
    # ...until the account has seen 8 failures from all clients together: then an address that has
    # failed on it waits, even with the right password, while one that has not (the owner's) gets in
    right = {"email": "ada@example.com", "password": "long enough"}
    assert login(server, "203.0.113.2", right).status_code == 429
    assert login(server, "203.0.113.77", right).status_code == 201
    # over https at the proxy, the session cookie is Secure
    signed = server.post(
        "/signup",
        data={"email": "bob@example.com", "password": "long enough"},
        headers={"X-Forwarded-For": "198.51.100.7", "X-Forwarded-Proto": "https"},
    )
    assert signed.status_code == 303
    assert "secure" in signed.headers["set-cookie"].lower()
    plain = server.post("/signup", data={"email": "eve@example.com", "password": "long enough"})
    assert "secure" not in plain.headers["set-cookie"].lower()


@pytest.mark.parametrize("server", [{"proxy_headers": True, "forwarded_allow_ips": "10.9.9.9"}], indirect=True)
def test_forwarded_headers_from_an_untrusted_peer_are_ignored(server):
    for n in range(5):
        login(server, f"10.0.0.{n}")
    assert login(server, "10.0.0.200").status_code == 429
    signed = server.post(
        "/signup", data={"email": "bob@example.com", "password": "long enough"}, headers={"X-Forwarded-Proto": "https"}
    )
    assert "secure" not in signed.headers["set-cookie"].lower()


@pytest.mark.parametrize(
    "server",
    [{"proxy_headers": True, "forwarded_allow_ips": "127.0.0.1", "login_max_failures_client": 3}],
    indirect=True,
)
def test_one_client_trying_many_accounts_is_slowed(server):
    for n in range(3):
        assert login(server, "192.0.2.1", {"email": f"user{n}@example.com", "password": "a guess"}).status_code == 401
    someone_else = {"email": "someone.else@example.com", "password": "a guess"}
    assert login(server, "192.0.2.1", someone_else).status_code == 429
    assert login(server, "192.0.2.2", someone_else).status_code == 401
