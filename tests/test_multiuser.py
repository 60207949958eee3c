"""Multi-user mode (SPEC §7): a workspace belongs to its user and no one else can read it, on every
route, on SQLite and on PostgreSQL. The routes are taken from the app itself, so a route added
later is covered without editing this test."""

from __future__ import annotations

import re
import threading

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from tests.factories import wait_for_run

OWNED_PARAMS = {"ws", "run_id"}
QUESTION = "Does revenue differ by region?"


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        return None
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def shared_app(tmp_path, database_url):
    settings = Settings(
        _env_file=None,
        data_dir=tmp_path,
        llm_model="builtin",
        host="0.0.0.0",
        database_url=database_url,
        sse_poll_interval_s=0.05,
        sse_heartbeat_s=1.0,
    )
    with TestClient(create_app(settings)) as client:
        yield client


def account(client: TestClient, email: str) -> dict[str, str]:
    """Sign up through the page, then take an API token: the headers of that user's requests."""
    client.post("/signup", data={"email": email, "password": "long enough"}, follow_redirects=False)
    token = client.post("/api/auth/token", json={"email": email, "password": "long enough"}).json()["token"]
    client.cookies.clear()
    return {"Authorization": f"Bearer {token}"}


def analysed_workspace(client: TestClient, headers: dict, data_path) -> dict[str, str]:
    """A workspace with an uploaded file and a finished run: ids for every kind of path parameter."""
    ws = client.post("/api/workspaces", json={"name": "private"}, headers=headers).json()["id"]
    with open(data_path, "rb") as handle:
        upload = client.post(f"/api/workspaces/{ws}/files", files={"file": (data_path.name, handle)}, headers=headers)
    assert upload.status_code == 201, upload.text
    run = client.post(f"/api/workspaces/{ws}/messages", json={"text": QUESTION}, headers=headers).json()["run_id"]
    client.headers.update(headers)
    try:
        assert wait_for_run(client, run, {"done"})["status"] == "done"
    finally:
        client.headers.pop("Authorization")
    note = client.post(
        f"/api/workspaces/{ws}/knowledge", json={"title": "Glossary", "text": "Revenue is net of VAT."}, headers=headers
    )
    assert note.status_code == 201, note.text
    share = client.post(f"/api/runs/{run}/shares?confirm=true", headers=headers)
    assert share.status_code == 201, share.text
    return {
        "ws": ws,
        "run_id": run,
        "dataset_id": upload.json()["dataset"]["id"],
        "fmt": "json",
        "span_id": "0",
        "name": "figure.png",
        "entry_id": note.json()["id"],
        "share_id": share.json()["id"],
    }


def owned_routes(app) -> list[tuple[str, str]]:
    """(method, path) of every route with a workspace or run in its path, read from the OpenAPI
    schema (every route of the app is in it: none is excluded from the schema)."""
    return [
        (method.upper(), path)
        for path, operations in app.openapi()["paths"].items()
        if OWNED_PARAMS & set(re.findall(r"{(\w+)", path))
        for method in operations
    ]


def fill(path: str, ids: dict[str, str]) -> str:
    return re.sub(r"{(\w+)(?::\w+)?}", lambda m: ids[m.group(1)], path)


def test_no_one_else_can_read_or_change_a_workspace(shared_app, retail_sales):
    ada, bob = account(shared_app, "ada@example.com"), account(shared_app, "bob@example.com")
    ids = analysed_workspace(shared_app, ada, retail_sales)
    routes = owned_routes(shared_app.app)
    assert len(routes) >= 44  # pages and API: workspaces, datasets, runs, events, reports, traces, figures
    for method, path in routes:
        url = fill(path, ids)
        response = shared_app.request(method, url, headers=bob, json={}, follow_redirects=False)
        assert response.status_code == 404, f"{method} {url} answered {response.status_code} to another user"
        anonymous = shared_app.request(method, url, json={}, follow_redirects=False)
        assert anonymous.status_code in (303, 401), f"{method} {url} answered {anonymous.status_code} to nobody"
    # The owner still has everything, so the 404s above came from ownership, not from wrong ids.
    for url in (
        f"/api/runs/{ids['run_id']}",
        f"/api/workspaces/{ids['ws']}/report.json",
        f"/api/workspaces/{ids['ws']}/datasets/{ids['dataset_id']}",
        f"/api/runs/{ids['run_id']}/trace",
        f"/workspaces/{ids['ws']}",
        f"/runs/{ids['run_id']}",
        f"/api/workspaces/{ids['ws']}/knowledge",
    ):
        assert shared_app.get(url, headers=ada).status_code == 200, url
    report = shared_app.get(f"/api/workspaces/{ids['ws']}/report.json", headers=ada).json()
    assert report["question"] == QUESTION and report["evidence"]
    # Each user's list shows only their own workspaces.
    assert "private" in shared_app.get("/", headers=ada).text
    assert "private" not in shared_app.get("/", headers=bob).text


def test_two_users_analyse_at_the_same_time(shared_app, retail_sales):
    """Concurrent uploads and runs of different users stay apart (PostgreSQL: several connections)."""
    users = [account(shared_app, f"user{i}@example.com") for i in range(3)]
    results: dict[int, dict] = {}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            client = TestClient(shared_app.app)
            results[i] = analysed_workspace(client, users[i], retail_sales)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(users))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=240)
    assert not errors, errors
    for i, headers in enumerate(users):
        mine = shared_app.get(f"/api/runs/{results[i]['run_id']}", headers=headers)
        assert mine.status_code == 200 and mine.json()["status"] == "done"
        for j in range(len(users)):
            if j != i:
                other = shared_app.get(f"/api/runs/{results[j]['run_id']}", headers=headers)
                assert other.status_code == 404


def test_local_mode_keeps_signed_in_and_anonymous_work_apart(client, retail_sales):
    """Bound to loopback no sign-in is needed; someone who does sign in sees only their own work."""
    local = client.post("/api/workspaces", json={"name": "local"}).json()["id"]
    client.post("/signup", data={"email": "ada@example.com", "password": "long enough"}, follow_redirects=False)
    assert client.get(f"/workspaces/{local}").status_code == 404
    mine = client.post("/api/workspaces", json={"name": "ada's"}).json()["id"]
    assert client.get(f"/workspaces/{mine}").status_code == 200
    client.post("/logout")
    assert client.get(f"/workspaces/{local}").status_code == 200
    assert client.get(f"/workspaces/{mine}").status_code == 404


def test_one_users_queue_does_not_starve_the_others(tmp_path, retail_sales):
    """Runs wait in the queue (worker mode, no worker yet): each user may have three at a time."""
    settings = Settings(_env_file=None, data_dir=tmp_path, llm_model="builtin", host="0.0.0.0", run_executor="worker")
    with TestClient(create_app(settings)) as client:
        ada, bob = account(client, "ada@example.com"), account(client, "bob@example.com")
        ws = client.post("/api/workspaces", json={"name": "a"}, headers=ada).json()["id"]
        runs = [client.post(f"/api/workspaces/{ws}/messages", json={"text": f"q{i}"}, headers=ada) for i in range(4)]
        assert [r.status_code for r in runs] == [202, 202, 202, 429]
        assert (
            runs[3].json()["error"]["category"] == "too_many_runs"
            and "3 analyses" in runs[3].json()["error"]["message"]
        )
        page = client.post(f"/workspaces/{ws}/ask", data={"text": "one more"}, headers={**ada, "accept-language": "zh"})
        assert page.status_code == 429 and "3 个分析" in page.text and "one more" in page.text
        other = client.post("/api/workspaces", json={"name": "b"}, headers=bob).json()["id"]
        assert client.post(f"/api/workspaces/{other}/messages", json={"text": "q"}, headers=bob).status_code == 202
        client.post(f"/api/runs/{runs[0].json()['run_id']}/interrupt", headers=ada)
        assert client.post(f"/api/workspaces/{ws}/messages", json={"text": "q4"}, headers=ada).status_code == 202
