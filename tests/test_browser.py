"""Page tests in a real browser: the app runs under uvicorn, Chromium drives it through Playwright.

The journey a non-analyst takes: create a workspace, upload a spreadsheet, read the preview,
ask a question, watch the steps arrive live (server-sent events), read the answer, the charts and
the evidence, and download the report. Needs the system Chromium (`apt-get install chromium`) and
the `playwright` package; `playwright install` is not needed and not used.
"""

from __future__ import annotations

import re
import shutil
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.config import Settings
from app.main import create_app
from app.web.i18n import t

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed (pip install -e '.[test]')"
)

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
if CHROMIUM is None:
    pytest.skip("Chromium is not installed (apt-get install chromium)", allow_module_level=True)

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "samples" / "retail_sales.xlsx"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-proxy-server",
]
RUN_TIMEOUT_MS = 120_000  # a builtin run takes ~5-15 s on a 2-core machine
PAGE_TIMEOUT_MS = 30_000

# Records, from the first script on every page, the steps the SSE handler appends to the step list
# while the run works (server-rendered steps arrive inside a swapped panel, not as direct <li>s).
LIVE_STEP_RECORDER = """
window.__liveSteps = [];
new MutationObserver(function (mutations) {
  mutations.forEach(function (m) {
    m.addedNodes.forEach(function (node) {
      if (node.nodeType === 1 && node.matches('li.step') && m.target.matches('[data-steps]')) {
        var panel = node.closest('[data-run-id]');
        window.__liveSteps.push({cls: node.className, text: node.textContent,
                                 status: panel && panel.getAttribute('data-status')});
      }
    });
  });
}).observe(document, {childList: true, subtree: true});
"""


@pytest.fixture
def live_server(tmp_path: Path, request) -> Iterator[str]:
    """The real app under uvicorn in a background thread, on a free loopback port (settings can be
    changed by indirect parametrization)."""
    import uvicorn

    overrides = getattr(request, "param", {})
    settings = Settings(_env_file=None, data_dir=tmp_path / "runtime", llm_model="builtin", **overrides)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        create_app(settings), host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=5
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="verity-uvicorn")
    thread.start()
    base = f"http://127.0.0.1:{port}"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + 30
    while True:
        try:
            with opener.open(f"{base}/healthz", timeout=2) as response:
                if response.status == 200:
                    break
        except OSError:
            pass
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            pytest.fail(f"the server did not answer {base}/healthz within 30 s")
        time.sleep(0.05)
    try:
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
        assert not thread.is_alive(), "uvicorn did not stop within 30 s"


@pytest.fixture(scope="module")
def browser() -> Iterator[playwright_api.Browser]:
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def wait_until(page, expression: str, timeout_ms: float) -> None:
    """`page.wait_for_function` evaluates its predicate with eval, which the pages' Content-Security-
    Policy forbids; `page.evaluate` does not go through the page's policy, so poll with it."""
    deadline = time.monotonic() + timeout_ms / 1000
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"{expression} did not become true within {timeout_ms / 1000:.0f} s")
        page.wait_for_timeout(50)


class Console:
    """Console errors and uncaught exceptions of one page."""

    def __init__(self, page) -> None:
        self.errors: list[str] = []
        page.on("console", self.on_console)
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))

    def on_console(self, msg) -> None:
        if msg.type == "error":
            self.errors.append(f"console.{msg.type}: {msg.text} {msg.location}")


@pytest.fixture
def page(browser, live_server: str):
    context = browser.new_context(base_url=live_server, locale="en-US", viewport={"width": 1280, "height": 900})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    page = context.new_page()
    page.console = Console(page)
    try:
        yield page
    finally:
        context.close()  # before the server stops, so the event stream closes


def test_upload_ask_and_follow_the_run_live(page, tmp_path: Path) -> None:
    expect = playwright_api.expect
    page.add_init_script(LIVE_STEP_RECORDER)

    # home: create a workspace
    page.goto("/")
    expect(page.get_by_role("heading", name="Create a workspace")).to_be_visible()
    page.fill("#ws-name", "Browser test")
    with page.expect_navigation():
        page.get_by_role("button", name="Create", exact=True).click()
    expect(page).to_have_url(re.compile(r"/workspaces/[^/?]+$"))
    expect(page.locator("h1.workspace-title")).to_have_text("Browser test")

    # upload the sample through the file input and the Upload button
    page.set_input_files("#upload-file", str(SAMPLE))
    with page.expect_navigation():
        page.get_by_role("button", name="Upload", exact=True).click()
    dataset = page.locator("#datasets article.dataset").first
    expect(dataset).to_be_visible()
    expect(dataset.locator("h3")).to_contain_text("retail_sales.xlsx")
    revenue = dataset.locator("li.column", has=page.locator(".column-name", has_text=re.compile(r"^Revenue$")))
    region = dataset.locator("li.column", has=page.locator(".column-name", has_text=re.compile(r"^Region$")))
    expect(revenue.locator(".badge")).to_have_text("number")
    expect(region.locator(".badge")).to_have_text("category")
    first_rows = dataset.locator("table")
    first_rows.first.scroll_into_view_if_needed()
    expect(first_rows.locator("th", has_text="Revenue").first).to_be_attached()
    assert first_rows.first.locator("tbody tr").count() >= 5, "the preview shows its first rows"

    # ask
    page.get_by_role("textbox", name="Ask a question").fill("Does revenue differ by region?")
    with page.expect_navigation():
        page.get_by_role("button", name="Ask", exact=True).click()
    panel = page.locator("#run")
    expect(panel).to_be_visible()
    expect(panel.locator(".run-question")).to_have_text("Does revenue differ by region?")
    assert panel.get_attribute("data-active") == "true", (
        "the run had already finished when its page loaded, so nothing was followed live"
    )

    # live: steps appear one by one while the run works, then the answer replaces the panel
    wait_until(page, "window.__liveSteps.length > 0", RUN_TIMEOUT_MS)
    live = page.evaluate("window.__liveSteps")
    assert all(step["status"] in ("queued", "running") for step in live[:1]), live
    expect(panel.locator(".status-badge")).to_have_text("Done", timeout=RUN_TIMEOUT_MS)
    expect(panel).to_have_attribute("data-active", "false")
    live = page.evaluate("window.__liveSteps")
    assert len(live) >= 2, f"expected several steps to arrive over the event stream: {live}"
    assert any("running" in step["cls"].split() for step in live), (
        f"no step was shown as running before it finished: {live}"
    )

    answer = panel.locator("section.answer")
    expect(answer).to_be_visible()
    expect(answer.locator(".answer-body")).to_contain_text("East")
    steps = panel.locator("[data-steps] li.step")
    assert steps.count() >= 2
    assert panel.locator("[data-steps] li.step.running").count() == 0
    cards = panel.locator("[data-evidence] article.evidence-card")
    assert cards.count() >= 1, "no evidence card"
    expect(cards.first.locator(".claim .badge[class*='confidence-']")).to_have_text(
        re.compile(r"(high|medium|low) confidence")
    )
    expect(cards.first.locator(".claim [data-check]")).to_have_text("checked")  # checked against its analysis

    # charts: every <img> in the run panel loads (they are lazy, so bring each into view)
    images = panel.locator("img")
    assert images.count() >= 1, "no chart in the run"
    for index in range(images.count()):
        image = images.nth(index)
        image.scroll_into_view_if_needed()
        image.evaluate("img => img.complete ? null : new Promise(r => { img.onload = img.onerror = r; })")
        width = image.evaluate("img => img.naturalWidth")
        assert width > 0, f"chart {image.get_attribute('src')} did not load"

    # the HTML report embeds its charts
    html_link = panel.locator("nav.downloads a[href*='report.html']")
    expect(html_link).to_have_count(1)
    response = page.request.get(html_link.get_attribute("href"))
    assert response.status == 200, response.status
    assert "data:image/png;base64" in response.text()

    page.locator("#run").scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / "run-finished.png"), full_page=True)
    assert page.console.errors == [], page.console.errors

    # share a read-only link: asked first, then the link opens for someone with no session
    with page.expect_navigation():
        panel.get_by_role("button", name=t("share_link", "en")).click()
    expect(page.locator("section.share")).to_contain_text(t("share_what", "en"))
    with page.expect_navigation():
        page.get_by_role("button", name=t("share_confirm", "en")).click()
    link = page.locator("code.new-token").inner_text()
    stranger = page.context.browser.new_context()
    try:
        shared = stranger.new_page()
        assert shared.goto(link).status == 200
        expect(shared.locator("body")).to_contain_text("Does revenue differ by region?")
    finally:
        stranger.close()
    assert page.console.errors == [], page.console.errors


def test_chinese_ui(page, tmp_path: Path) -> None:
    expect = playwright_api.expect
    page.goto("/?lang=zh")
    expect(page.locator("html")).to_have_attribute("lang", re.compile(r"^zh"))
    expect(page.get_by_role("heading", name=t("create_workspace", "zh"))).to_be_visible()
    expect(page.locator("body")).to_contain_text(t("app_tagline", "zh"))
    expect(page.locator("body")).to_contain_text(t("no_workspaces", "zh"))

    # the choice sticks (cookie): the workspace page is Chinese without ?lang=
    page.fill("#ws-name", "中文工作区")
    with page.expect_navigation():
        page.get_by_role("button", name=t("create", "zh"), exact=True).click()
    expect(page.locator("h1.workspace-title")).to_have_text("中文工作区")
    expect(page.get_by_role("heading", name=t("data", "zh"), exact=True)).to_be_visible()
    expect(page.get_by_role("button", name=t("upload", "zh"), exact=True)).to_be_visible()
    expect(page.get_by_role("textbox", name=t("ask", "zh"))).to_have_attribute(
        "placeholder", t("ask_placeholder", "zh")
    )
    page.screenshot(path=str(tmp_path / "zh-workspace.png"), full_page=True)
    assert page.console.errors == [], page.console.errors


@pytest.mark.parametrize("live_server", [{"auth": "on"}], indirect=True)
def test_shared_server_asks_to_sign_in_and_keeps_work_private(page, browser, live_server) -> None:
    expect = playwright_api.expect
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login\?next=%2F$"))
    page.get_by_role("link", name=t("auth_no_account", "en")).click()
    page.get_by_label(t("auth_name", "en")).fill("Ada")
    page.get_by_label(t("auth_email", "en")).fill("ada@example.com")
    page.get_by_label(t("auth_password", "en")).fill("long enough")
    page.get_by_role("button", name=t("auth_signup", "en")).click()
    expect(page.locator(".user-menu")).to_contain_text("Ada")
    page.get_by_label(t("workspace_name", "en")).fill("Ada's numbers")
    page.get_by_role("button", name=t("create", "en")).click()
    expect(page).to_have_url(re.compile(r"/workspaces/\w+$"))
    private_url = page.url

    # Someone else, in another browser session, signs up and cannot see or open it.
    other = browser.new_context(base_url=live_server, locale="zh-CN")
    try:
        bob = other.new_page()
        bob.goto("/signup")
        bob.get_by_label(t("auth_email", "zh")).fill("bob@example.com")
        bob.get_by_label(t("auth_password", "zh")).fill("long enough")
        bob.get_by_role("button", name=t("auth_signup", "zh")).click()
        expect(bob.locator(".user-menu")).to_be_visible()
        expect(bob.get_by_text("Ada's numbers")).to_have_count(0)
        response = bob.goto(private_url)
        assert response is not None and response.status == 404
    finally:
        other.close()

    # Signing out ends the session; the workspace is back after signing in again.
    page.get_by_role("button", name=t("auth_logout", "en")).click()
    expect(page).to_have_url(re.compile(r"/login$"))
    page.goto(private_url)
    page.get_by_label(t("auth_email", "en")).fill("ada@example.com")
    page.get_by_label(t("auth_password", "en")).fill("long enough")
    page.get_by_role("button", name=t("auth_login", "en")).click()
    expect(page).to_have_url(private_url)
    assert page.console.errors == []


def test_reference_notes_on_the_workspace_page(page, tmp_path: Path) -> None:
    expect = playwright_api.expect
    page.goto("/")
    page.get_by_label(t("workspace_name", "en")).fill("Notes")
    page.get_by_role("button", name=t("create", "en")).click()
    notes = page.locator("#knowledge")
    notes.locator("summary").click()
    expect(notes.get_by_text(t("knowledge_none", "en"))).to_be_visible()
    notes.get_by_label(t("knowledge_note_title", "en")).fill("Glossary")
    notes.get_by_label(t("knowledge_note_text", "en")).fill("AOV: average order value.")
    notes.get_by_role("button", name=t("knowledge_add", "en")).click()
    expect(page.get_by_role("status")).to_contain_text(t("knowledge_saved", "en"))
    expect(page.locator(".knowledge-list")).to_contain_text("Glossary")

    document = tmp_path / "policy.md"
    document.write_text("# Policy\n\nRevenue is counted net of VAT.", encoding="utf-8")
    notes = page.locator("#knowledge")
    notes.get_by_label(t("knowledge_file", "en")).set_input_files(str(document))
    notes.get_by_role("button", name=t("knowledge_add", "en")).click()
    expect(page.locator(".knowledge-list li")).to_have_count(2)
    expect(page.locator(".knowledge-list")).to_contain_text("policy.md")

    page.locator(".knowledge-list li", has_text="Glossary").get_by_role(
        "button", name=t("knowledge_remove", "en")
    ).click()
    expect(page.locator(".knowledge-list li")).to_have_count(1)
    assert page.console.errors == []
