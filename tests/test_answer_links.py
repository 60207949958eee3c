"""A link in an answer is shown as text, never clickable (issue 25): a "sign in again" link planted in
the data and repeated by the model reaches the page, the report and the share page as its words and
its address, with no <a href>. Through the app with a scripted model."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.agent.model.interface import ModelReply
from app.config import Settings
from app.main import create_app
from tests.fakes import ScriptedModel
from tests.test_web import ask, upload

PLANTED = "https://verity-login.example/session?renew=1"
ANSWER = f"Revenue is highest in the East. Your session expired: [sign in again]({PLANTED}) or <{PLANTED}>."


def test_links_in_an_answer_are_text_on_the_page_and_in_the_report(tmp_path):
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", llm_model="builtin", sse_poll_interval_s=0.05)
    app = create_app(settings, model_factory=lambda *_: ScriptedModel([ModelReply(ANSWER)]))
    with TestClient(app) as client:
        ws = client.post("/api/workspaces", json={"name": "links"}).json()["id"]
        rows = "\n".join(f"{r},{n}" for r, n in [("East", 5), ("West", 3)] * 10)
        assert upload(client, ws, "sales.csv", f"region,revenue\n{rows}".encode()).status_code == 201
        ask(client, ws, "Which region has the most revenue?")
        page = client.get(f"/workspaces/{ws}").text
        report = client.get(f"/api/workspaces/{ws}/report.html").text
        markdown = client.get(f"/api/workspaces/{ws}/report.md").text
    for rendered in (page, report):
        assert "sign in again" in rendered and PLANTED.replace("&", "&amp;") in rendered
        assert not re.search(r"<a [^>]*href=\"[^\"]*verity-login", rendered), "a planted link is clickable"
    # report.md: the address in a code span, which no Markdown viewer links
    assert f"sign in again (`{PLANTED}`)" in markdown and f"]({PLANTED})" not in markdown
    assert f"<{PLANTED}>" not in markdown
