"""Accounts (SPEC §7): passwords, sessions and API tokens; when sign-in is required; the pages."""

from __future__ import annotations

from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from app.cli import main as cli_main
from app.config import Settings
from app.db.models import AuthToken, Workspace
from app.db.session import open_database
from app.main import create_app
from app.users import (
    API,
    SESSION,
    AccountError,
    auth_required,
    check_password,
    create_user,
    hash_password,
    issue_token,
    user_for_secret,
    verify_password,
)


def make(tmp_path, **overrides) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path, llm_model="builtin", **overrides)


# --- the account functions -------------------------------------------------------------------
def test_password_hash_is_salted_scrypt_and_verifies():
    first, second = hash_password("correct horse"), hash_password("correct horse")
    assert first.startswith("scrypt$16384$8$1$") and first != second  # a new salt each time
    assert verify_password("correct horse", first) and verify_password("correct horse", second)
    assert not verify_password("correct hors", first)
    assert not verify_password("correct horse", "md5$abc") and not verify_password("x", "garbage")


def test_create_user_checks_input_and_logs_in_case_insensitively(tmp_path):
    db = open_database(make(tmp_path))
    with db.session() as session:
        user = create_user(session, "  Ada@Example.com ", "long enough", "Ada")
        assert user.email == "ada@example.com" and user.name == "Ada"
        for email, password, key in [
            ("not-an-address", "long enough", "auth_bad_email"),
            ("bob@example.com", "short", "auth_short_password"),
            ("ADA@example.com", "long enough", "auth_email_taken"),
        ]:
            with pytest.raises(AccountError) as caught:
                create_user(session, email, password)
            assert caught.value.key == key
        assert check_password(session, "ADA@EXAMPLE.COM", "long enough").id == user.id
        for email, password in [("ada@example.com", "wrong password"), ("nobody@example.com", "long enough")]:
            with pytest.raises(AccountError) as caught:
                check_password(session, email, password)
            assert caught.value.key == "auth_failed"


def test_tokens_are_stored_hashed_expire_and_keep_their_kind(tmp_path):
    db = open_database(make(tmp_path))
    with db.session() as session:
        user = create_user(session, "ada@example.com", "long enough")
        token, secret = issue_token(session, user.id, API, name="script")
        assert secret.startswith("vt_") and secret not in token.token_hash and len(token.token_hash) == 64
        assert user_for_secret(session, secret, kind=API).id == user.id
        assert user_for_secret(session, secret, kind=SESSION) is None  # an API token is not a cookie
        assert user_for_secret(session, secret + "x") is None and user_for_secret(session, None) is None
        _, expired = issue_token(session, user.id, SESSION, lifetime=timedelta(seconds=-1))
        assert user_for_secret(session, expired, kind=SESSION) is None
    with db.session() as session:  # the expired session was deleted on sight; the API token remains
        assert [t.kind for t in session.query(AuthToken)] == [API]


@pytest.mark.parametrize(
    "auth,host,required",
    [
        ("auto", "127.0.0.1", False),
        ("auto", "localhost", False),
        ("auto", "::1", False),
        ("auto", "0.0.0.0", True),
        ("auto", "192.168.1.20", True),
        ("auto", "verity.example.com", True),
        ("on", "127.0.0.1", True),
        ("off", "0.0.0.0", False),
    ],
)
def test_sign_in_is_required_unless_bound_to_loopback(tmp_path, auth, host, required):
    assert auth_required(make(tmp_path, auth=auth, host=host)) is required


# --- the pages and the API with sign-in required ----------------------------------------------
@pytest.fixture
def shared(tmp_path):
    with TestClient(create_app(make(tmp_path, host="0.0.0.0"))) as client:
        yield client


def sign_up(client: TestClient, email: str, password: str = "long enough", name: str = "") -> None:
    response = client.post(
        "/signup", data={"email": email, "password": password, "name": name, "next": "/"}, follow_redirects=False
    )
    assert response.status_code == 303, response.text
    assert "verity_session" in response.cookies


def test_anonymous_requests_are_sent_to_sign_in(shared):
    assert shared.get("/healthz").json() == {"status": "ok"}
    page = shared.get("/workspaces/abc?x=1", follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"] == "/login?next=%2Fworkspaces%2Fabc%3Fx%3D1"
    api = shared.post("/api/workspaces", json={"name": "x"})
    assert api.status_code == 401 and api.headers["www-authenticate"] == "Bearer"
    assert api.json()["error"]["category"] == "unauthorized" and "hint" in api.json()["error"]
    login = shared.get("/login", headers={"accept-language": "zh-CN"})
    assert login.status_code == 200 and "登录" in login.text and "注册" in login.text


def test_sign_up_sign_in_and_out_in_the_browser(shared):
    sign_up(shared, "ada@example.com", name="Ada Lovelace")
    home = shared.get("/")
    assert home.status_code == 200 and "Ada Lovelace" in home.text
    created = shared.post("/workspaces", data={"name": "Q3"}, follow_redirects=False)
    assert created.status_code == 303
    assert shared.get(created.headers["location"]).status_code == 200
    shared.post("/logout", follow_redirects=False)
    assert shared.get("/", follow_redirects=False).status_code == 303  # the session is gone server-side
    wrong = shared.post("/login", data={"email": "ada@example.com", "password": "nope nope", "next": "/"})
    assert wrong.status_code == 400 and "wrong" in wrong.text
    again = shared.post(
        "/login",
        data={"email": "ADA@example.com", "password": "long enough", "next": "//evil.example/steal"},
        follow_redirects=False,
    )
    assert again.status_code == 303 and again.headers["location"] == "/"  # no open redirect
    assert "Q3" in shared.get("/").text


def test_closed_sign_up_admits_only_the_first_account(tmp_path):
    with TestClient(create_app(make(tmp_path, auth="on", signup="closed"))) as client:
        sign_up(client, "first@example.com")
        client.post("/logout")
        assert client.get("/signup").status_code == 403
        refused = client.post("/signup", data={"email": "second@example.com", "password": "long enough"})
        assert refused.status_code == 403 and "verity users add" in refused.text


def test_api_tokens_from_the_api_the_account_page_and_the_cli(shared, tmp_path, monkeypatch, capsys):
    sign_up(shared, "ada@example.com")
    page = shared.post("/account/tokens", data={"name": "monthly script"})
    assert page.status_code == 201 and "monthly script" in page.text
    from_page = page.text.split('<code class="new-token">')[1].split("</code>")[0]
    bad = shared.post("/api/auth/token", json={"email": "ada@example.com", "password": "wrong password"})
    assert bad.status_code == 401 and bad.json()["error"]["category"] == "unauthorized"
    from_api = shared.post("/api/auth/token", json={"email": "ada@example.com", "password": "long enough"})
    assert from_api.status_code == 201
    monkeypatch.setenv("VERITY_DATA_DIR", str(tmp_path))
    from app.config import get_settings

    get_settings.cache_clear()
    try:
        assert cli_main(["users", "token", "ada@example.com"]) == 0
    finally:
        get_settings.cache_clear()
    from_cli = capsys.readouterr().out.strip()
    anonymous = TestClient(shared.app)
    for secret in (from_page, from_api.json()["token"], from_cli):
        headers = {"Authorization": f"Bearer {secret}"}
        response = anonymous.post("/api/workspaces", json={"name": "by script"}, headers=headers)
        assert response.status_code == 201, response.text
    # Revoking on the account page stops the token at once.
    token_id = shared.get("/account").text.split("/account/tokens/")[1].split("/revoke")[0]
    shared.post(f"/account/tokens/{token_id}/revoke")
    statuses = [
        anonymous.post("/api/workspaces", json={"name": "x"}, headers={"Authorization": f"Bearer {s}"}).status_code
        for s in (from_page, from_api.json()["token"], from_cli)
    ]
    assert sorted(statuses) == [201, 201, 401]


def test_a_bad_bearer_token_is_refused_even_in_local_mode(client):
    response = client.post("/api/workspaces", json={"name": "x"}, headers={"Authorization": "Bearer vt_nope"})
    assert response.status_code == 401 and "not valid" in response.json()["error"]["message"]
    assert client.post("/api/workspaces", json={"name": "x"}).status_code == 201  # no token: local use


def test_cli_adds_users_and_claims_local_workspaces(tmp_path, monkeypatch, capsys):
    from app.config import get_settings
    from app.workspaces import create_workspace, list_workspaces

    monkeypatch.setenv("VERITY_DATA_DIR", str(tmp_path))
    get_settings.cache_clear()
    try:
        db = open_database(get_settings())
        with db.session() as session:
            create_workspace(session, "made before accounts existed")
        monkeypatch.setattr("sys.stdin", __import__("io").StringIO("long enough\n"))
        assert cli_main(["users", "add", "ada@example.com", "--password-stdin", "--claim-local"]) == 0
        assert "1 local workspace" in capsys.readouterr().out
        monkeypatch.setattr("sys.stdin", __import__("io").StringIO("short\n"))
        assert cli_main(["users", "add", "bob@example.com", "--password-stdin"]) == 2
        assert "at least 8" in capsys.readouterr().err
        assert cli_main(["users", "list"]) == 0
        assert "ada@example.com" in capsys.readouterr().out
        with db.session() as session:
            ada = check_password(session, "ada@example.com", "long enough")
            assert [w.name for w in list_workspaces(session, ada.id)] == ["made before accounts existed"]
            assert list_workspaces(session, None) == []
        db.engine.dispose()
    finally:
        get_settings.cache_clear()


def test_password_guessing_is_throttled_per_address(shared):
    sign_up(shared, "ada@example.com")
    shared.post("/logout")
    for _ in range(5):
        assert shared.post("/login", data={"email": "ada@example.com", "password": "guess guess"}).status_code == 400
    blocked = shared.post("/login", data={"email": "ada@example.com", "password": "long enough"})
    assert blocked.status_code == 429 and "Too many" in blocked.text  # even the right password waits
    api = shared.post("/api/auth/token", json={"email": "ada@example.com", "password": "long enough"})
    assert api.status_code == 429 and api.json()["error"]["category"] == "rate_limited"
    # Another address is not affected.
    sign_up(shared, "bob@example.com")


def test_throttle_forgets_old_failures(tmp_path):
    import time

    with TestClient(create_app(make(tmp_path, host="0.0.0.0", login_max_failures=2, login_window_s=1.0))) as client:
        sign_up(client, "ada@example.com")
        client.post("/logout")
        for email in ("ada@example.com", "ADA@example.com "):  # one account, however it is typed
            assert client.post("/login", data={"email": email, "password": "guess guess"}).status_code == 400
        assert client.post("/login", data={"email": "ada@example.com", "password": "long enough"}).status_code == 429
        time.sleep(1.1)
        signed = client.post(
            "/login", data={"email": "ada@example.com", "password": "long enough"}, follow_redirects=False
        )
        assert signed.status_code == 303


def test_cli_tokens_and_removal_need_an_existing_account(tmp_path, monkeypatch, capsys):
    from app.config import get_settings

    monkeypatch.setenv("VERITY_DATA_DIR", str(tmp_path))
    get_settings.cache_clear()
    try:
        assert cli_main(["users", "token", "nobody@example.com"]) == 2
        assert cli_main(["users", "remove", "nobody@example.com"]) == 2
        assert capsys.readouterr().err.count("no account nobody@example.com") == 2
        monkeypatch.setattr("sys.stdin", __import__("io").StringIO("long enough\n"))
        assert cli_main(["users", "add", "ada@example.com", "--password-stdin"]) == 0
        assert cli_main(["users", "token", "ada@example.com"]) == 0
        monkeypatch.setattr("sys.stdin", __import__("io").StringIO("another password\n"))
        assert cli_main(["users", "password", "ada@example.com", "--password-stdin"]) == 0
        db = open_database(get_settings())
        with db.session() as session:
            assert check_password(session, "ada@example.com", "another password")
        db.engine.dispose()
        assert cli_main(["users", "remove", "ada@example.com", "--delete-workspaces"]) == 0
        assert "and 0 workspace(s)" in capsys.readouterr().out
        db = open_database(get_settings())
        with db.session() as session:
            assert session.query(AuthToken).count() == 0
        db.engine.dispose()
    finally:
        get_settings.cache_clear()


def test_changing_the_password_signs_out_other_browsers(shared):
    sign_up(shared, "ada@example.com")
    other = TestClient(shared.app)
    other.post("/login", data={"email": "ada@example.com", "password": "long enough"}, follow_redirects=False)
    assert other.get("/", follow_redirects=False).status_code == 200
    wrong = shared.post("/account/password", data={"current": "not it at all", "new": "brand new secret"})
    assert wrong.status_code == 400 and "wrong" in wrong.text
    short = shared.post("/account/password", data={"current": "long enough", "new": "short"})
    assert short.status_code == 400 and "at least 8" in short.text
    done = shared.post("/account/password", data={"current": "long enough", "new": "brand new secret"})
    assert done.status_code == 200 and "Password changed" in done.text
    assert shared.get("/", follow_redirects=False).status_code == 200  # this browser stays signed in
    assert other.get("/", follow_redirects=False).status_code == 303  # the other one is signed out
    assert (
        other.post(
            "/login", data={"email": "ada@example.com", "password": "brand new secret"}, follow_redirects=False
        ).status_code
        == 303
    )


def test_deleting_an_account_deletes_its_workspaces_only(shared, tmp_path):
    sign_up(shared, "bob@example.com")
    bobs = shared.post("/api/workspaces", json={"name": "bob's"}).json()["id"]
    shared.post("/logout")
    sign_up(shared, "ada@example.com")
    adas = shared.post("/api/workspaces", json={"name": "ada's"}).json()["id"]
    shared.post(f"/api/workspaces/{adas}/knowledge", json={"text": "a note"})
    page = shared.get("/account")
    assert "<title>Verity — Your account</title>" in page.text and page.text.count('id="delete-account"') == 1
    wrong = shared.post("/account/delete", data={"password": "not my password"})
    assert wrong.status_code == 400 and "wrong" in wrong.text
    gone = shared.post("/account/delete", data={"password": "long enough"}, follow_redirects=False)
    assert gone.status_code == 303 and gone.headers["location"] == "/login"
    refused = shared.post("/login", data={"email": "ada@example.com", "password": "long enough"})
    assert refused.status_code == 400  # the account is gone
    shared.post("/login", data={"email": "bob@example.com", "password": "long enough"})
    assert shared.get(f"/workspaces/{bobs}").status_code == 200
    with shared.app.state.db.session() as session:
        assert session.get(Workspace, adas) is None and session.get(Workspace, bobs) is not None
