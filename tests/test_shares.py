"""Read-only report links (SPEC §7: sharing outside the workspace is confirmed first): the link
shows the report to someone without an account, and nothing else; it can be revoked."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from tests.factories import wait_for_run
from tests.test_multiuser import account

QUESTION = "Does revenue differ by region?"


def test_a_shared_link_shows_the_report_to_anyone_until_it_is_revoked(tmp_path, retail_sales):
    settings = Settings(_env_file=None, data_dir=tmp_path, llm_model="builtin", host="0.0.0.0")
    with TestClient(create_app(settings)) as client:
        ada = account(client, "ada@example.com")
        ws = client.post("/api/workspaces", json={"name": "q3"}, headers=ada).json()["id"]
        with open(retail_sales, "rb") as handle:
            client.post(f"/api/workspaces/{ws}/files", files={"file": ("sales.xlsx", handle)}, headers=ada)
        run = client.post(f"/api/workspaces/{ws}/messages", json={"text": QUESTION}, headers=ada).json()["run_id"]
        client.headers.update(ada)
        assert wait_for_run(client, run, {"done"})["status"] == "done"
        assert "Share a read-only link" in client.get(f"/runs/{run}").text

        asked = client.post(f"/runs/{run}/share")
        assert asked.status_code == 200 and "without signing in" in asked.text and "/shared/" not in asked.text
        made = client.post(f"/runs/{run}/share", data={"confirm": "yes"})
        assert made.status_code == 200 and made.url.path == f"/runs/{run}/share"  # post, redirect, get
        link = made.text.split('<code class="new-token" id="share-link">')[1].split("</code>")[0]
        assert "/shared/" in link
        in_chinese = client.get(f"/runs/{run}/share?lang=zh")  # the page's 中文 link keeps the new link
        assert in_chinese.status_code == 200 and "创建链接" not in in_chinese.text and link in in_chinese.text
        assert link not in TestClient(client.app, headers=ada).get(f"/runs/{run}/share").text  # not another browser
        unconfirmed = client.post(f"/api/runs/{run}/shares")
        assert unconfirmed.status_code == 409 and unconfirmed.json()["error"]["category"] == "confirmation_required"
        by_api = client.post(f"/api/runs/{run}/shares?confirm=true").json()

        stranger = TestClient(client.app)  # no account, no cookie
        for url in (link, by_api["url"]):
            page = stranger.get(url.replace("http://testserver", ""))
            assert page.status_code == 200 and QUESTION in page.text and "<html" in page.text
            assert (
                page.headers["x-robots-tag"] == "noindex, nofollow" and page.headers["referrer-policy"] == "no-referrer"
            )
        assert stranger.get(f"/workspaces/{ws}", follow_redirects=False).status_code == 303  # only the report
        assert stranger.get("/shared/not-a-real-link").status_code == 404

        listed = client.get(f"/api/runs/{run}/shares").json()["shares"]
        assert [s["views"] for s in listed] == [1, 1]
        revoked = client.delete(f"/api/runs/{run}/shares/{by_api['id']}")
        assert revoked.status_code == 200
        assert stranger.get(by_api["url"].replace("http://testserver", "")).status_code == 404
        assert stranger.get(link.replace("http://testserver", "")).status_code == 200  # the other link stays
        page_revoke = client.post(f"/runs/{run}/shares/{listed[0]['id']}/revoke", follow_redirects=False)
        assert page_revoke.status_code == 303
        assert stranger.get(link.replace("http://testserver", "")).status_code == 404


def test_nothing_to_share_before_the_report(client):
    ws = client.post("/api/workspaces", json={"name": "empty"}).json()["id"]
    run = client.post(f"/api/workspaces/{ws}/messages", json={"text": "hello"}).json()["run_id"]
    wait_for_run(client, run, {"done", "failed"})
    from app.db.models import Report

    with client.app.state.db.session() as session:
        session.query(Report).filter_by(run_id=run).delete()
    missing = client.post(f"/api/runs/{run}/shares?confirm=true")
    assert missing.status_code == 404 and missing.json()["error"]["category"] == "no_report"


@pytest.mark.slow
def test_share_links_use_the_public_url_and_warn_when_only_this_computer_can_open_them(tmp_path, retail_sales):
    """VERITY_PUBLIC_URL is the address others use; without it, a link to localhost says that nobody
    else can open it. The copy button is a plain button the static script wires up (no inline script)."""
    import re

    def shared(settings: Settings, base_url: str) -> str:
        with TestClient(create_app(settings), base_url=base_url) as client:
            ws = client.post("/api/workspaces", json={"name": "q3"}).json()["id"]
            with open(retail_sales, "rb") as handle:
                client.post(f"/api/workspaces/{ws}/files", files={"file": ("sales.xlsx", handle)})
            run = client.post(f"/api/workspaces/{ws}/messages", json={"text": QUESTION}).json()["run_id"]
            assert wait_for_run(client, run, {"done"})["status"] == "done"
            api = client.post(f"/api/runs/{run}/shares?confirm=true").json()["url"]
            page = client.post(f"/runs/{run}/share", data={"confirm": "yes"}).text
            link = re.search(r'<code class="new-token" id="share-link">([^<]+)</code>', page).group(1)
            assert link.rsplit("/", 1)[0] == api.rsplit("/", 1)[0]
            return page

    public = shared(
        Settings(
            _env_file=None, data_dir=tmp_path / "a", llm_model="builtin", public_url="https://verity.example.org/"
        ),
        "http://127.0.0.1:8000",
    )
    assert '<code class="new-token" id="share-link">https://verity.example.org/shared/' in public
    assert "data-reach-warning" not in public
    assert re.search(r'<button type="button" data-copy="share-link"[^>]*>Copy</button>', public)
    assert "<script>" not in public and " onclick=" not in public

    local = shared(Settings(_env_file=None, data_dir=tmp_path / "b", llm_model="builtin"), "http://127.0.0.1:8000")
    assert '<code class="new-token" id="share-link">http://127.0.0.1:8000/shared/' in local
    assert "data-reach-warning" in local and "only this computer can open it" in local and "VERITY_PUBLIC_URL" in local
