"""Cross-site form posts in a real browser (Chromium): a page on another site, and a page on another
port of the same host, try to post to the local no-sign-in app. Both are refused and nothing changes;
the app's own pages keep working under their Content-Security-Policy (no console errors)."""

from __future__ import annotations

import re
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


# Where the characters of each `text` inside `selector` sit: the distinct line tops of the occurrence
# spread over the most lines (one top: the text is on one line).
LINE_TOPS = """([selector, text]) => {
  const root = document.querySelector(selector);
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  let worst = null;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let at = node.data.indexOf(text); at >= 0; at = node.data.indexOf(text, at + 1)) {
      const tops = new Set();
      for (let i = at; i < at + text.length; i++) {
        const range = document.createRange();
        range.setStart(node, i); range.setEnd(node, i + 1);
        const rect = range.getBoundingClientRect();
        if (rect.width > 0) tops.add(Math.round(rect.top));
      }
      if (worst === null || tops.size > worst.length) worst = [...tops];
    }
  }
  return worst;
}"""


def test_clarification_options_sit_beside_their_labels_and_names_stay_whole(browser, live_server, tmp_path) -> None:  # noqa: F811
    """Issue 28 point 6: a radio button sits left of its label on one line (not centred above it), and at
    390 px a column name breaks only between its parts ("基本信息 / 门店", "销售额（元）"), never inside one
    ("基本信 / 息")."""
    from app.config import Settings
    from app.db.models import Question, Run
    from app.db.session import open_database
    from app.workspaces import create_workspace

    names = ["基本信息 / 门店", "销售情况 / 销售额（元）", "销售情况 / 销量（箱）"]
    db = open_database(Settings(_env_file=None, data_dir=tmp_path / "runtime", llm_model="builtin"))
    with db.session() as session:
        ws = create_workspace(session, "门店").id
        # the names at every offset of a line: somewhere a line ends where a name would break inside
        answer = "\n\n".join(f"{'合计' * k}按 {names[0]} 计算 {names[1]} 与 {names[2]}。" for k in range(16))
        run = Run(workspace_id=ws, question="哪个门店的销售额最高？", language="zh", status="waiting", answer=answer)
        session.add(run)
        session.flush()
        session.add(
            Question(
                workspace_id=ws,
                run_id=run.id,
                kind="single",
                question="“销售”应该用哪一列？",
                options=[{"label": n, "description": "数值，96 行，平均 350，范围 120 到 640"} for n in names[1:]],
            )
        )
        run_id = run.id
    context = browser.new_context(locale="zh-CN", viewport={"width": 1280, "height": 900})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        page = context.new_page()
        console = Console(page)
        page.goto(f"{live_server}/workspaces/{ws}?run={run_id}&lang=zh#run")
        card = page.locator("form.question")
        playwright_api.expect(card).to_be_visible()
        for width in (1280, 390):
            page.set_viewport_size({"width": width, "height": 900})
            card.scroll_into_view_if_needed()
            page.screenshot(path=str(tmp_path / f"card-{width}.png"))
            for option in card.locator(".option").all():
                radio = option.locator("input[type=radio]").bounding_box()
                label = option.locator("strong").bounding_box()
                assert radio and label and radio["width"] < 40, (width, radio)  # its own size, not the line's
                assert radio["x"] + radio["width"] <= label["x"], (width, radio, label)  # left of the label
                assert abs((radio["y"] + radio["height"] / 2) - (label["y"] + label["height"] / 2)) < 12, (radio, label)
            # every part of a column name on one line, in the answer and in the options
            for selector in ("#run .answer-body", "form.question"):
                for name in names:
                    for part in re.split(r" / |(?=（)", name):  # a word; its unit in brackets may go on the next line
                        tops = page.evaluate(LINE_TOPS, [selector, part])
                        assert tops is None or len(tops) == 1, (width, selector, part, tops)
        assert console.errors == [], console.errors
    finally:
        context.close()
