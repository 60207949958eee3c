"""Issue 25 (point 9) through the product's paths: sign-up is limited per address; guessing does
not lock the owner out; the failure counts live in the database, so several servers count them
together (issue 26 F7), on SQLite and PostgreSQL; a password change revokes the API tokens; the
session cookie is Secure when the public address is https."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx
import pytest
from fastapi.testclient import TestClient

from app.cli import main as cli_main
from app.config import Settings
from app.main import create_app
from tests.test_throttle_proxy import serve

RIGHT = {"email": "ada@example.com", "password": "long enough"}
WRONG = {"email": "ada@example.com", "password": "wrong wrong"}
PROXIED = {"proxy_headers": True, "forwarded_allow_ips": "127.0.0.1"}


def settings_for(tmp_path, **overrides) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path, llm_model="builtin", auth="on", **overrides)


def token_from(client: httpx.Client, address: str, body: dict = RIGHT) -> httpx.Response:
    return client.post("/api/auth/token", json=body, headers={"X-Forwarded-For": address})


def usable(client: TestClient, bearer: dict[str, str]) -> bool:
    """Whether a bearer token still works: it makes a workspace (401 when revoked)."""
    made = client.post("/api/workspaces", json={"name": "by script"}, headers=bearer)
    assert made.status_code in (201, 401), made.text
    return made.status_code == 201


def sign_up_from(client: httpx.Client, address: str, email: str) -> httpx.Response:
    return client.post(
        "/signup", data={"email": email, "password": "long enough"}, headers={"X-Forwarded-For": address}
    )


def test_one_address_cannot_make_accounts_without_end(tmp_path):
    with ExitStack() as stack:
        server = stack.enter_context(_serving(settings_for(tmp_path, **PROXIED, signup_max_per_client=10)))
        # the fixture's own sign-up came from 127.0.0.1: these addresses start at 0
        made = [sign_up_from(server, "198.51.100.1", f"user{n}@example.com").status_code for n in range(12)]
        assert made[:10] == [303] * 10 and made[10:] == [429, 429]
        refused = sign_up_from(server, "198.51.100.1", "one.more@example.com")
        assert "Too many accounts" in refused.text
        assert sign_up_from(server, "198.51.100.2", "neighbour@example.com").status_code == 303


def test_probing_for_taken_addresses_counts_but_typos_do_not(tmp_path):
    with ExitStack() as stack:
        server = stack.enter_context(_serving(settings_for(tmp_path, **PROXIED, signup_max_per_client=2)))
        for _ in range(3):  # a short password makes no account and is not counted
            bad = server.post(
                "/signup", data={"email": "typo@example.com", "password": "short"}, headers={"X-Forwarded-For": "a::1"}
            )
            assert bad.status_code == 400
        assert sign_up_from(server, "2001:db8::1", "ada@example.com").status_code == 400  # taken: counted
        assert sign_up_from(server, "2001:db8::2", "bob@example.com").status_code == 303
        # another address of the same /64 network is the same machine
        assert sign_up_from(server, "2001:db8::3", "eve@example.com").status_code == 429
        assert sign_up_from(server, "2001:db8:0:1::3", "eve@example.com").status_code == 303


def test_guessers_on_many_addresses_do_not_lock_the_owner_out(tmp_path):
    with ExitStack() as stack:
        server = stack.enter_context(_serving(settings_for(tmp_path, **PROXIED)))
        for n in range(25):  # 25 addresses, one wrong password each: past the account's 20
            assert token_from(server, f"203.0.113.{n}", WRONG).status_code == 401
        for _ in range(5):  # and one address five times: that address is stopped for this account
            token_from(server, "198.51.100.9", WRONG)
        assert token_from(server, "198.51.100.9").status_code == 429
        # each guessing address waits now, even with the right password...
        assert token_from(server, "203.0.113.3").status_code == 429
        # ...a new guessing address gets one try, then waits
        assert token_from(server, "192.0.2.50", WRONG).status_code == 401
        assert token_from(server, "192.0.2.50", WRONG).status_code == 429
        # and the owner, from an address that has not failed, signs in: in the browser and by API
        home = server.post("/login", data=RIGHT, headers={"X-Forwarded-For": "192.0.2.200"})
        assert home.status_code == 303 and "verity_session" in home.headers["set-cookie"]
        assert token_from(server, "192.0.2.201").status_code == 201


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_two_servers_count_the_same_failures(tmp_path, request, database):
    # PostgreSQL: two nodes that share only the database; SQLite: two processes on one data folder
    url = request.getfixturevalue("postgres_url") if database == "postgresql" else None
    folders = (tmp_path / "a", tmp_path / "b") if url else (tmp_path, tmp_path)
    with ExitStack() as stack:
        first = stack.enter_context(_serving(settings_for(folders[0], **PROXIED, database_url=url)))
        second = stack.enter_context(_serving(settings_for(folders[1], **PROXIED, database_url=url)))
        for n in range(5):  # guesses spread over the two servers behind a load balancer
            assert token_from(first if n % 2 else second, "203.0.113.7", WRONG).status_code == 401
        assert token_from(first, "203.0.113.7").status_code == 429
        assert token_from(second, "203.0.113.7").status_code == 429
        assert token_from(second, "203.0.113.8").status_code == 201


def test_a_password_change_revokes_api_tokens_and_other_sessions(tmp_path):
    with TestClient(create_app(settings_for(tmp_path))) as browser:
        browser.post("/signup", data=RIGHT, follow_redirects=False)
        script = browser.post("/api/auth/token", json=RIGHT).json()["token"]
        page_token = browser.post("/account/tokens", data={"name": "cron"})
        assert page_token.status_code == 201
        bearer = {"Authorization": f"Bearer {script}"}
        assert usable(browser, bearer)
        changed = browser.post("/account/password", data={"current": "long enough", "new": "a new secret"})
        anonymous = TestClient(browser.app)
        assert not usable(anonymous, bearer)
        assert changed.status_code == 200 and "API token was revoked" in changed.text
        assert "cron" not in browser.get("/account").text  # the page's token is gone too
        assert browser.get("/", follow_redirects=False).status_code == 200  # the browser that changed it stays


def test_the_cli_password_change_revokes_api_tokens(tmp_path, monkeypatch):
    from app.config import get_settings

    monkeypatch.setenv("VERITY_DATA_DIR", str(tmp_path))
    get_settings.cache_clear()
    try:
        monkeypatch.setattr("sys.stdin", io.StringIO("long enough\n"))
        assert cli_main(["users", "add", "ada@example.com", "--password-stdin"]) == 0
        with TestClient(create_app(settings_for(tmp_path))) as client:
            token = client.post("/api/auth/token", json=RIGHT).json()["token"]
            bearer = {"Authorization": f"Bearer {token}"}
            assert usable(client, bearer)
            monkeypatch.setattr("sys.stdin", io.StringIO("another password\n"))
            assert cli_main(["users", "password", "ada@example.com", "--password-stdin"]) == 0
            assert not usable(client, bearer)
    finally:
        get_settings.cache_clear()


@pytest.mark.parametrize(
    "public_url,secure",
    [("https://verity.example.com", True), ("http://192.168.1.20:8000", False), (None, False)],
)
def test_the_session_cookie_is_secure_when_the_public_address_is_https(tmp_path, public_url, secure):
    with TestClient(create_app(settings_for(tmp_path, public_url=public_url))) as client:
        signed = client.post("/signup", data=RIGHT, follow_redirects=False)
        assert signed.status_code == 303
        assert ("secure" in signed.headers["set-cookie"].lower()) is secure
        login = client.post("/login", data=RIGHT, follow_redirects=False)
        assert ("secure" in login.headers["set-cookie"].lower()) is secure


@contextmanager
def _serving(settings: Settings) -> Iterator[httpx.Client]:
    """A real uvicorn with `verity serve`'s options (tests/test_throttle_proxy.py), signed up as ada."""
    running = serve(settings)
    try:
        yield next(running)
    finally:
        running.close()


def test_guesses_sent_at_once_are_counted_before_their_passwords_are_checked(tmp_path):
    """Each attempt is written before its password is checked, so 30 guesses sent together from
    one address get no more tries than 30 sent one after another."""
    from concurrent.futures import ThreadPoolExecutor

    with ExitStack() as stack:
        server = stack.enter_context(_serving(settings_for(tmp_path, **PROXIED)))
        base = str(server.base_url)

        def guess(_: int) -> int:
            with httpx.Client(base_url=base, trust_env=False, timeout=120) as client:
                return token_from(client, "203.0.113.30", WRONG).status_code

        with ThreadPoolExecutor(30) as pool:
            answers = list(pool.map(guess, range(30)))
        assert answers.count(401) <= 5 and answers.count(401) + answers.count(429) == 30


@pytest.mark.parametrize("trusted", ["127.0.0.1", "127.0.0.0/8", "10.0.0.0/8, 127.0.0.1"])
def test_a_trusted_proxy_saying_https_makes_the_cookie_secure(tmp_path, trusted):
    settings = settings_for(tmp_path, proxy_headers=True, forwarded_allow_ips=trusted)
    with ExitStack() as stack:
        server = stack.enter_context(_serving(settings))
        proxied = server.post("/login", data=RIGHT, headers={"X-Forwarded-Proto": "https"})
        assert proxied.status_code == 303 and "secure" in proxied.headers["set-cookie"].lower()
        plain = server.post("/login", data=RIGHT)
        assert "secure" not in plain.headers["set-cookie"].lower()
