"""Bad input is a 4xx JSON error with a category, never a 500 (SPEC §5, §7), on SQLite and PostgreSQL:
NUL characters (PostgreSQL cannot store them), lone surrogates (no UTF-8 store can), event cursors
beyond any database integer. The last test sends such values to every parameter of every route of
the OpenAPI schema."""

from __future__ import annotations

import json
import re

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from tests.factories import wait_for_run

NUL, SURROGATE = "a\x00b", "a\ud800b"


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request):
    return None if request.param == "sqlite" else request.getfixturevalue("postgres_url")


@pytest.fixture
def edge(tmp_path, database_url):
    """A shared server (sign-in on) and the bearer headers of a signed-up user."""
    settings = Settings(
        _env_file=None,
        data_dir=tmp_path,
        llm_model="builtin",
        auth="on",
        database_url=database_url,
        sse_poll_interval_s=0.05,
        sse_heartbeat_s=1.0,
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        client.post("/signup", data={"email": "ada@example.com", "password": "long enough"})
        token = client.post("/api/auth/token", json={"email": "ada@example.com", "password": "long enough"}).json()
        client.cookies.clear()
        client.headers["Authorization"] = f"Bearer {token['token']}"
        yield client


def send_json(client: TestClient, method: str, url: str, body) -> object:
    """JSON with \\u escapes as written (httpx's json= cannot encode a lone surrogate)."""
    return client.request(method, url, content=json.dumps(body).encode(), headers={"Content-Type": "application/json"})


def assert_refused(response, category: str | None = None) -> None:
    assert 400 <= response.status_code < 500, (response.request.url, response.status_code, response.text[:300])
    if response.request.url.path.startswith("/api/"):
        error = response.json()["error"]
        assert error["category"] and error["message"]
        if category:
            assert error["category"] == category, error


def test_nul_characters_anywhere_are_refused(edge, retail_sales):
    ws = edge.post("/api/workspaces", json={"name": "ok"}).json()["id"]
    assert_refused(send_json(edge, "POST", "/api/workspaces", {"name": NUL}), "invalid_text")
    assert_refused(edge.get("/api/runs/a%00b"), "invalid_text")
    assert_refused(edge.get(f"/api/workspaces/{ws}/datasets/a%00b"), "invalid_text")
    assert_refused(edge.get("/workspaces/a%00b"))
    assert_refused(edge.post(f"/workspaces/{ws}/rules", data={"rules": NUL}))
    assert_refused(send_json(edge, "POST", f"/api/workspaces/{ws}/knowledge", {"title": "t", "text": NUL}))
    assert_refused(send_json(edge, "POST", f"/api/workspaces/{ws}/messages", {"text": NUL}))
    assert_refused(edge.get("/?lang=%00"))
    with open(retail_sales, "rb") as handle:
        assert_refused(
            edge.post(f"/api/workspaces/{ws}/files", files={"file": (retail_sales.name, handle)}, data={"sheet": NUL}),
            "invalid_text",
        )
    # unauthenticated: the token endpoint and the sign-in form
    anonymous = {"Authorization": ""}
    for body in ({"email": NUL, "password": "x"}, {"email": "a@b.c", "password": NUL}):
        response = edge.request(
            "POST",
            "/api/auth/token",
            content=json.dumps(body).encode(),
            headers={**anonymous, "Content-Type": "application/json"},
        )
        assert_refused(response, "invalid_text")
    assert_refused(edge.post("/login", data={"email": NUL, "password": "x"}, headers=anonymous))
    # nothing was stored, and the workspace still answers
    assert edge.get(f"/api/workspaces/{ws}/knowledge").json()["knowledge"] == []
    assert edge.get(f"/workspaces/{ws}").status_code == 200


def test_lone_surrogates_in_answers_and_sheets_are_refused(edge, retail_sales):
    ws = edge.post("/api/workspaces", json={"name": "s"}).json()["id"]
    with open(retail_sales, "rb") as handle:
        dataset = edge.post(f"/api/workspaces/{ws}/files", files={"file": (retail_sales.name, handle)}).json()
    run = edge.post(f"/api/workspaces/{ws}/messages", json={"text": "Does revenue differ by region?"}).json()["run_id"]
    wait_for_run(edge, run, {"done", "waiting", "failed"})
    assert_refused(
        send_json(edge, "POST", f"/api/runs/{run}/answers", {"question_id": "q", "answer": SURROGATE}), "invalid_text"
    )
    assert_refused(
        send_json(edge, "POST", f"/api/runs/{run}/answers", {"question_id": SURROGATE, "answer": ["x"]}), "invalid_text"
    )
    url = f"/api/workspaces/{ws}/datasets/{dataset['dataset']['id']}/sheet"
    assert_refused(send_json(edge, "POST", url, {"sheet": SURROGATE}), "invalid_text")
    assert_refused(send_json(edge, "POST", f"/api/workspaces/{ws}/messages", {"text": SURROGATE, SURROGATE: 1}))
    assert edge.get(f"/api/runs/{run}").status_code == 200


def test_event_cursors_beyond_any_event_are_refused(edge):
    ws = edge.post("/api/workspaces", json={"name": "e"}).json()["id"]
    run = edge.post(f"/api/workspaces/{ws}/messages", json={"text": "hello"}).json()["run_id"]
    wait_for_run(edge, run, {"done", "failed"})
    for query in ("after=1e26", "after=" + "9" * 30, "after=-1"):
        assert_refused(edge.get(f"/api/runs/{run}/events?{query}"), "invalid_request")
    for header in ("9" * 30, "9" * 5000, "12abc", "-3"):
        assert_refused(edge.get(f"/api/runs/{run}/events", headers={"Last-Event-ID": header}))
    # a real cursor still streams to the end
    with edge.stream("GET", f"/api/runs/{run}/events", headers={"Last-Event-ID": "0"}) as stream:
        assert stream.status_code == 200
        assert "event: run_finished" in "".join(stream.iter_text())


# --- every route of the schema ---------------------------------------------------------------
BAD_STRINGS = (NUL, SURROGATE, "9" * 5000, "")
BAD_NUMBERS = ("1e26", "9" * 30, "-1", "NaN")


def real_ids(client: TestClient, retail_sales) -> dict[str, str]:
    ws = client.post("/api/workspaces", json={"name": "fuzz"}).json()["id"]
    with open(retail_sales, "rb") as handle:
        dataset = client.post(f"/api/workspaces/{ws}/files", files={"file": (retail_sales.name, handle)}).json()
    run = client.post(f"/api/workspaces/{ws}/messages", json={"text": "Does revenue differ by region?"}).json()
    wait_for_run(client, run["run_id"], {"done"})
    return {
        "ws": ws,
        "run_id": run["run_id"],
        "dataset_id": dataset["dataset"]["id"],
        "fmt": "json",
        "span_id": "0",
        "name": "x.png",
        "entry_id": "x",
        "share_id": "x",
        "token_id": "x",
        "secret": "x",
    }


def fill(path: str, ids: dict[str, str]) -> str:
    return re.sub(r"{(\w+)(?::\w+)?}", lambda m: ids[m.group(1)], path)


def body_fields(schema: dict, operation: dict) -> tuple[str | None, dict[str, dict]]:
    """The request body's media type and its properties (resolving one $ref)."""
    content = (operation.get("requestBody") or {}).get("content") or {}
    for media, spec in content.items():
        ref = spec.get("schema", {}).get("$ref", "")
        target = schema["components"]["schemas"][ref.rsplit("/", 1)[-1]] if ref else spec.get("schema", {})
        return media, target.get("properties", {})
    return None, {}


def variants(properties: dict[str, dict]) -> list[dict]:
    """One body per (field, bad value); the other fields get plain values."""
    plain = dict.fromkeys(properties, "x")
    bodies = []
    for name, spec in properties.items():
        if spec.get("format") == "binary":
            continue
        bodies += [{**plain, name: bad} for bad in BAD_STRINGS]
    return bodies or [{}]


@pytest.mark.slow
def test_every_route_answers_bad_values_with_a_4xx(edge, retail_sales):
    ids = real_ids(edge, retail_sales)
    schema = edge.app.openapi()
    failures = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            names = re.findall(r"{(\w+)", path)
            urls = [fill(path, ids)] + [fill(path, {**ids, name: "a%00b"}) for name in names]
            for param in operation.get("parameters", []):
                if param["in"] == "query":
                    kind = param.get("schema", {}).get("type") or "string"
                    values = BAD_NUMBERS if kind in ("integer", "number") else BAD_STRINGS[:1] + BAD_STRINGS[2:]
                    urls += [f"{urls[0]}?{param['name']}={value.replace(chr(0), '%00')}" for value in values]
            media, properties = body_fields(schema, operation)
            for url in urls:
                bodies = variants(properties) if media else [None]
                for body in bodies:
                    if media == "application/json":
                        response = send_json(edge, method.upper(), url, body)
                    elif media:
                        data = {k: v for k, v in body.items() if "\ud800" not in v}
                        response = edge.request(method.upper(), url, data=data)
                    else:
                        response = edge.request(method.upper(), url)
                    if response.status_code >= 500:
                        failures.append(f"{method.upper()} {url} {str(body)[:60]}: {response.status_code}")
    assert failures == []
    assert edge.get(f"/api/runs/{ids['run_id']}").json()["status"] == "done"
