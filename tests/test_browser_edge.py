"""Cross-site form posts in a real browser (Chromium): a page on another site, and a page on another
port of the same host, try to post to the local no-sign-in app. Both are refused and nothing changes;
the app's own pages keep working under their Content-Security-Policy (no console errors)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.test_browser import (  # noqa: F401
    CHROMIUM_ARGS,
    PAGE_TIMEOUT_MS,
    Console,
    browser,
    live_server,
    playwright_api,
)

pytestmark = pytest.mark.slow

ATTACK_PAGE = """<!doctype html><html><body>
<form id="f" method="post" action="{target}/workspaces"><input name="name" value="{name}"></form>
<script>document.getElementById('f').submit();</script>
</body></html>"""


@pytest.fixture
def attacker() -> Iterator[tuple[int, dict[str, str]]]:
    """Another web server on this host (another port): serves one auto-submitting form per path."""
    pages: dict[str, str] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = pages.get(self.path, "").encode()
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True, name="attacker-site")
    thread.start()
    try:
        yield server.server_address[1], pages
    finally:
        server.shutdown()
        server.server_close()


def test_cross_site_and_other_port_form_posts_are_refused(browser, live_server, attacker) -> None:  # noqa: F811
    expect = playwright_api.expect
    port, pages = attacker
    context = browser.new_context(locale="en-US")
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        page = context.new_page()
        # same site, other port: http://127.0.0.1:<other> -> http://127.0.0.1:<app> (Sec-Fetch-Site: same-site)
        # another site: http://localhost:<other> -> http://127.0.0.1:<app> (cross-site)
        for host, name in (("127.0.0.1", "pwned-same-host"), ("localhost", "pwned-cross-site")):
            pages[f"/{name}"] = ATTACK_PAGE.format(target=live_server, name=name)
            with page.expect_response(lambda r: r.url == f"{live_server}/workspaces") as posted:
                page.goto(f"http://{host}:{port}/{name}")
            assert posted.value.status == 403, (name, posted.value.status)
            expect(page.locator("body")).to_contain_text("sent from another site")

        # Nothing was created, and the app's own form still works, with no CSP violation on its pages.
        own = context.new_page()
        console = Console(own)
        own.goto(live_server + "/")
        expect(own.locator("body")).not_to_contain_text("pwned")
        own.fill("#ws-name", "mine")
        with own.expect_navigation():
            own.get_by_role("button", name="Create", exact=True).click()
        expect(own.locator("h1.workspace-title")).to_have_text("mine")
        assert console.errors == [], console.errors
    finally:
        context.close()
