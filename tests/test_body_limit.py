"""Request bodies are bounded while they arrive (app/web/body_limit.py), through the real app.

The hostile bodies are generated chunk by chunk as the app asks for them, the way a server hands
over a chunked body: each test counts how many bytes the app pulled before it answered.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.web.body_limit import upload_routes
from tests.test_web import new_workspace, upload

CHUNK = 64 * 1024


def send_body(
    client: TestClient, method: str, path: str, chunks: Iterator[bytes], headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes, int]:
    """Drive the app's ASGI callable with a body pulled lazily from `chunks` (no Content-Length
    unless `headers` has one): (status, headers, response body, bytes the app pulled)."""
    pulled, sent, finished = 0, [], False
    raw_headers = [(b"host", b"testserver")] + [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": raw_headers,
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
        "state": {},
    }

    async def receive() -> dict[str, Any]:
        nonlocal pulled, finished
        if finished:
            return {"type": "http.disconnect"}
        chunk = next(chunks, None)
        if chunk is None:
            finished = True
            return {"type": "http.request", "body": b"", "more_body": False}
        pulled += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": True}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def call() -> None:
        await client.app(scope, receive, send)

    client.portal.call(call)
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    names = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    return start["status"], names, body, pulled


def endless(total_bytes: int, first: bytes = b"") -> Iterator[bytes]:
    """`total_bytes` of body in CHUNK pieces, made only as they are asked for."""
    yield first
    left = total_bytes - len(first)
    while left > 0:
        yield b" " * min(CHUNK, left)
        left -= CHUNK


def multipart(name: str, size: int, boundary: str = "b0und") -> tuple[Iterator[bytes], dict[str, str]]:
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: text/csv\r\n\r\na,b\r\n"
    ).encode()

    def parts() -> Iterator[bytes]:
        yield head
        left = size
        while left > 0:
            yield b"1,2\r\n" * min(CHUNK // 5, max(1, left // 5))
            left -= CHUNK
        yield f"\r\n--{boundary}--\r\n".encode()

    return parts(), {"content-type": f"multipart/form-data; boundary={boundary}"}


@pytest.fixture()
def signed_in_server(tmp_path) -> Iterator[TestClient]:
    settings = Settings(_env_file=None, data_dir=tmp_path, llm_model="builtin", auth="on", max_upload_mb=1)
    with TestClient(create_app(settings)) as client:
        yield client


def test_a_chunked_json_body_is_refused_as_soon_as_it_passes_the_limit_before_sign_in(signed_in_server):
    status, headers, body, pulled = send_body(
        signed_in_server,
        "POST",
        "/api/workspaces",
        endless(40 * 1024 * 1024, b'{"name": "'),
        {"content-type": "application/json"},
    )
    error = json.loads(body)["error"]
    assert status == 413 and error["category"] == "too_large" and error["hint"], body
    limit = signed_in_server.app.state.settings.max_request_mb * 1024 * 1024
    assert pulled <= limit + CHUNK, pulled  # not the 40 MB the client would send
    assert headers["connection"] == "close"


def test_a_declared_length_over_the_limit_is_refused_before_a_byte_is_read(signed_in_server):
    status, _, body, pulled = send_body(
        signed_in_server,
        "POST",
        "/api/workspaces",
        endless(10 * 1024 * 1024),
        {"content-type": "application/json", "content-length": str(10 * 1024 * 1024)},
    )
    assert status == 413 and json.loads(body)["error"]["category"] == "too_large"
    assert pulled == 0


def test_an_anonymous_upload_is_refused_before_its_body_is_read(signed_in_server):
    chunks, headers = multipart("data.csv", 900 * 1024)
    status, _, body, pulled = send_body(signed_in_server, "POST", "/api/workspaces/any/files", chunks, headers)
    assert status == 401 and json.loads(body)["error"]["category"] == "unauthorized"
    assert pulled == 0
    page_chunks, page_headers = multipart("data.csv", 900 * 1024)
    status, location, _, pulled = send_body(
        signed_in_server, "POST", "/workspaces/any/upload", page_chunks, page_headers
    )
    assert status == 303 and location["location"].startswith("/login") and pulled == 0


def test_uploads_have_the_upload_limit_and_other_bodies_the_request_limit(signed_in_server):
    client = signed_in_server
    client.post("/signup", data={"email": "ada@example.com", "password": "long enough"})
    ws = new_workspace(client)
    cookie = f"verity_session={client.cookies.get('verity_session')}"
    # An upload of 0.9 MB passes (over nothing but the upload limit of 1 MB) ...
    ok = upload(client, ws, "fine.csv", b"a,b\n" + b"1,2\n" * (900 * 1024 // 4))
    assert ok.status_code == 201, ok.text
    # ... one that grows past it while it arrives is stopped there.
    chunks, headers = multipart("big.csv", 50 * 1024 * 1024)
    status, _, body, pulled = send_body(
        client, "POST", f"/api/workspaces/{ws}/files", chunks, headers | {"cookie": cookie}
    )
    assert status == 413 and json.loads(body)["error"]["category"] == "too_large"
    assert pulled <= (1 + 1) * 1024 * 1024 + CHUNK, pulled
    # A JSON route does not get the upload limit by calling its body "multipart".
    chunks, headers = multipart("big.csv", 50 * 1024 * 1024)
    status, _, body, pulled = send_body(client, "POST", "/api/workspaces", chunks, headers | {"cookie": cookie})
    assert status == 413 and pulled <= client.app.state.settings.max_request_mb * 1024 * 1024 + CHUNK
    # A page form (no file parameter) over the limit gets a page.
    chunks, headers = multipart("big.csv", 8 * 1024 * 1024)
    status, headers_out, page, _ = send_body(client, "POST", "/workspaces", chunks, headers | {"cookie": cookie})
    assert status == 413 and headers_out["content-type"].startswith("text/html") and b"<html" in page


def test_the_longest_note_the_api_takes_fits_the_request_limit(client):
    ws = new_workspace(client)
    text = "营" * 199_000  # every character escaped by json.dumps: 1.2 MB of body
    body = json.dumps({"title": "long", "text": text}).encode()
    assert len(body) > 1024 * 1024
    response = client.post(
        f"/api/workspaces/{ws}/knowledge", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 201, response.text[:300]


def test_every_route_that_takes_a_file_gets_the_upload_limit(tmp_path):
    settings = Settings(_env_file=None, data_dir=tmp_path, llm_model="builtin", max_request_mb=0.5)
    app = create_app(settings)
    assert {route.path for route in upload_routes(app.routes)} == {  # type: ignore[attr-defined]
        "/api/workspaces/{ws}/files",
        "/api/workspaces/{ws}/knowledge/files",
        "/workspaces/{ws}/upload",
        "/workspaces/{ws}/knowledge",
    }
    with TestClient(app) as client:
        ws = new_workspace(client)
        big = upload(client, ws, "big.csv", b"a,b\n" + b"1,2\n" * (1024 * 1024 // 4))  # 1 MB: over the request limit
        assert big.status_code == 201, big.text
        note = client.post(f"/api/workspaces/{ws}/knowledge", json={"title": "t", "text": "x" * 600_000})
        assert note.status_code == 413 and note.json()["error"]["category"] == "too_large"
