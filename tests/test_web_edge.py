"""The web edge (SPEC §7): cross-site requests are refused on every state-changing route, every
response carries the security headers, and the API docs are behind sign-in."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.datastructures import Headers

from app.config import Settings
from app.main import create_app
from app.web.security import PAGE_CSP, REPORT_CSP, cross_site_reason
from tests.factories import REPO, wait_for_run

UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}
CROSS_SITE = (
    {"Origin": "http://evil.example"},
    {"Origin": "http://testserver:8001"},  # the same host, another port
    {"Origin": "null"},
    {"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"},
    {"Sec-Fetch-Site": "same-site", "Origin": "http://testserver:8001"},
)


def unsafe_routes(app) -> list[tuple[str, str]]:
    """Every state-changing (method, path) of the app, from its OpenAPI schema (every route is in it)."""
    return sorted(
        (method.upper(), path)
        for path, operations in app.openapi()["paths"].items()
        for method in operations
        if method.upper() in UNSAFE
    )


def fill(path: str) -> str:
    return re.sub(r"{(\w+)(?::\w+)?}", "x", path)


def test_cross_site_posts_are_refused_on_every_route(client):
    routes = unsafe_routes(client.app)
    assert len(routes) >= 30  # forms and API: workspaces, uploads, rules, notes, answers, accounts, tokens...
    for method, path in routes:
        for headers in CROSS_SITE:
            response = client.request(method, fill(path), headers=headers, data={"name": "x"}, follow_redirects=False)
            assert response.status_code == 403, f"{method} {path} with {headers}: {response.status_code}"
    # The refusal is plain: JSON with a category for the API, a page in the user's language for forms.
    api = client.post("/api/workspaces", json={"name": "x"}, headers=CROSS_SITE[0])
    assert api.json()["error"]["category"] == "cross_site_request"
    page = client.post("/workspaces?lang=zh", data={"name": "x"}, headers=CROSS_SITE[1])
    assert "这个表单来自其他网站" in page.text and "Traceback" not in page.text
    assert "workspaces/" not in client.get("/").text  # none was created by all those posts


def test_same_origin_browsers_and_scripts_still_work(client):
    same = [
        {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"},
        {"Origin": "http://testserver"},
        {"Sec-Fetch-Site": "none"},
        {},
    ]  # {}: curl or a script, no browser to trick
    for n, headers in enumerate(same):
        response = client.post("/api/workspaces", json={"name": f"ok{n}"}, headers=headers)
        assert response.status_code == 201, (headers, response.text)
    form = client.post("/workspaces", data={"name": "by form"}, headers=same[0], follow_redirects=False)
    assert form.status_code == 303


def test_login_and_signup_are_protected_and_bearer_calls_are_exempt(tmp_path):
    settings = Settings(_env_file=None, data_dir=tmp_path, llm_model="builtin", auth="on")
    with TestClient(create_app(settings)) as client:
        # login CSRF: another site must not sign the browser in to the attacker's account
        for path in ("/signup", "/login"):
            refused = client.post(
                path,
                data={"email": "eve@example.com", "password": "long enough"},
                headers={"Origin": "http://evil.example"},
                follow_redirects=False,
            )
            assert refused.status_code == 403 and "verity_session" not in refused.headers.get("set-cookie", "")
        client.post("/signup", data={"email": "ada@example.com", "password": "long enough"})
        token = client.post("/api/auth/token", json={"email": "ada@example.com", "password": "long enough"}).json()
        client.cookies.clear()
        created = client.post(
            "/api/workspaces",
            json={"name": "from a script"},
            headers={"Authorization": f"Bearer {token['token']}", "Origin": "http://evil.example"},
        )
        assert created.status_code == 201, created.text


@pytest.mark.parametrize(
    ("method", "headers", "refused"),
    [
        ("GET", {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, False),  # reading is not changing
        ("POST", {"Origin": "https://app.example.com", "Host": "app.example.com"}, False),
        ("POST", {"Origin": "https://app.example.com:443", "Host": "app.example.com"}, False),
        ("POST", {"Origin": "http://app.example.com", "Host": "app.example.com:8000"}, True),
        ("POST", {"Origin": "http://app.example.com.evil", "Host": "app.example.com"}, True),
        ("POST", {"Origin": "https://proxy.example.com", "Host": "10.0.0.5:8000"}, True),
        ("POST", {"Sec-Fetch-Site": "same-site", "Origin": "https://a.example.com", "Host": "b.example.com"}, True),
        ("DELETE", {"Sec-Fetch-Site": "cross-site", "Authorization": "Bearer vt_x"}, False),
    ],
)
def test_cross_site_rule(method, headers, refused):
    assert (cross_site_reason(method, Headers(headers)) is not None) == refused


def test_trusted_origins_for_a_proxy_that_rewrites_the_host(tmp_path):
    settings = Settings(
        _env_file=None, data_dir=tmp_path, llm_model="builtin", trusted_origins="https://verity.example.com"
    )
    with TestClient(create_app(settings)) as client:
        ok = client.post("/api/workspaces", json={"name": "a"}, headers={"Origin": "https://verity.example.com"})
        assert ok.status_code == 201
        assert (
            client.post(
                "/api/workspaces", json={"name": "b"}, headers={"Origin": "https://other.example.com"}
            ).status_code
            == 403
        )


def test_without_sign_in_only_this_servers_names_are_served(tmp_path):
    """DNS rebinding: a page on rebound.example, re-pointed at 127.0.0.1, is same-origin with itself,
    so the Origin check passes; its Host names rebound.example and is refused. Loopback names, IP
    literals, public_url's host and allowed_hosts pass; with sign-in the check is off."""
    settings = Settings(
        _env_file=None,
        data_dir=tmp_path,
        llm_model="builtin",
        allowed_hosts="lab-box",
        public_url="https://verity.example.com",
    )
    with TestClient(create_app(settings), base_url="http://rebound.example:8000") as client:
        page = client.get("/", headers={"Accept-Language": "zh-CN"})
        assert page.status_code == 400 and "VERITY_ALLOWED_HOSTS" in page.text and "rebound.example" in page.text
        assert "不接受以此名称访问" in page.text and "Traceback" not in page.text
        posted = client.post("/api/workspaces", json={"name": "a"}, headers={"Origin": "http://rebound.example:8000"})
        assert posted.status_code == 400 and posted.json()["error"]["category"] == "unknown_host"
        assert "hint" in posted.json()["error"]
        assert "content-security-policy" in posted.headers  # refusals get the security headers too
        for host in (
            "localhost:8000",
            "127.0.0.1:8000",
            "[::1]:8000",
            "192.168.1.20:8000",
            "app.localhost",
            "LAB-BOX:8000",
            "verity.example.com",
        ):
            assert client.get("/healthz", headers={"Host": host}).status_code == 200, host
        assert client.get("/healthz", headers={"Host": "lab-box.attacker.example"}).status_code == 400

    signed_in = Settings(_env_file=None, data_dir=tmp_path / "multi", llm_model="builtin", auth="on")
    with TestClient(create_app(signed_in), base_url="http://verity.internal") as client:
        assert client.get("/healthz").status_code == 200
    anything = Settings(_env_file=None, data_dir=tmp_path / "any", llm_model="builtin", allowed_hosts="*")
    with TestClient(create_app(anything), base_url="http://whatever.example") as client:
        assert client.get("/healthz").status_code == 200


def assert_security_headers(response, csp: str = PAGE_CSP) -> None:
    assert response.headers["content-security-policy"] == csp, response.request.url
    assert "frame-ancestors 'none'" in csp
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] in ("same-origin", "no-referrer")


def test_every_response_has_security_headers(client, retail_sales):
    ws = client.post("/api/workspaces", json={"name": "headers"}).json()["id"]
    with open(retail_sales, "rb") as handle:
        client.post(f"/api/workspaces/{ws}/files", files={"file": (retail_sales.name, handle)})
    run = client.post(f"/api/workspaces/{ws}/messages", json={"text": "Does revenue differ by region?"}).json()
    wait_for_run(client, run["run_id"], {"done"})
    for url in (
        "/",
        f"/workspaces/{ws}",
        f"/runs/{run['run_id']}",
        "/login",
        "/static/app.css",
        "/no-such-page",
        f"/api/runs/{run['run_id']}",
        "/healthz",
        f"/api/workspaces/{ws}/report.md",
    ):
        assert_security_headers(client.get(url))
    # The self-contained report keeps its inline stylesheet and embedded charts, and runs no script.
    report = client.get(f"/api/workspaces/{ws}/report.html")
    assert_security_headers(report, REPORT_CSP)
    assert "script-src" not in REPORT_CSP and "<script" not in report.text
    share = client.post(f"/api/runs/{run['run_id']}/shares?confirm=true").json()
    shared = client.get(share["url"].replace("http://testserver", ""))
    assert shared.status_code == 200
    assert_security_headers(shared, REPORT_CSP)


def test_templates_and_static_have_no_inline_script():
    """The pages' policy allows scripts from /static only; an inline one would be blocked."""
    offenders = []
    for path in [*Path(REPO, "templates").glob("*.html"), *Path(REPO, "app/reports/templates").glob("*.html")]:
        text = path.read_text(encoding="utf-8")
        if (
            re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text)
            or re.search(r"\son[a-z]+\s*=", text)
            or "javascript:" in text.lower()
        ):
            offenders.append(path.name)
        if path.parent.name == "templates" and path.parent.parent == REPO and re.search(r"\sstyle\s*=", text):
            offenders.append(f"{path.name} (inline style)")
    assert offenders == []


def test_api_docs_follow_sign_in_and_can_be_turned_off(tmp_path, client):
    docs = client.get("/api/docs")
    assert docs.status_code == 200 and "swagger-ui" in docs.text
    csp = docs.headers["content-security-policy"]
    assert "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0] and "'sha256-" in csp
    assert "/api/workspaces" in client.get("/api/openapi.json").json()["paths"]
    shared = Settings(_env_file=None, data_dir=tmp_path / "a", llm_model="builtin", auth="on")
    with TestClient(create_app(shared)) as other:
        assert other.get("/api/openapi.json").status_code == 401
        assert other.get("/api/docs", follow_redirects=False).status_code in (303, 401)
        other.post("/signup", data={"email": "ada@example.com", "password": "long enough"})
        assert other.get("/api/openapi.json").status_code == 200
        assert other.get("/api/docs").status_code == 200
    off = Settings(_env_file=None, data_dir=tmp_path / "b", llm_model="builtin", api_docs=False)
    with TestClient(create_app(off)) as other:
        assert other.get("/api/openapi.json").status_code == 404
        assert other.get("/api/docs").status_code == 404
