"""The web app without a full analysis: API basics, pages, upload errors, languages, error pages."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.ingest.errors import CATEGORIES
from app.main import create_app
from app.web.i18n import t
from tests.test_web import new_workspace, read_stream, upload


def test_healthz(client):
    assert client.get("/healthz").json() == {"status": "ok"}


def test_create_workspace_by_api_and_page(client):
    response = client.post("/api/workspaces", json={"name": "Clinic visits"})
    assert response.status_code == 201 and response.json()["name"] == "Clinic visits"
    page = client.post("/workspaces", data={"name": "Shop"}, follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"].startswith("http")
    shown = client.get(page.headers["location"])
    assert shown.status_code == 200 and "Shop" in shown.text
    listing = client.get("/").text
    assert "Clinic visits" in listing and "Shop" in listing


def test_unknown_things_are_json_404s_on_the_api_and_pages_elsewhere(client):
    for url in ("/api/runs/nope", "/api/workspaces/nope/report.json"):
        response = client.get(url)
        assert response.status_code == 404 and response.json()["error"]["category"] == "not_found"
    page = client.get("/workspaces/nope")
    assert page.status_code == 404 and "<html" in page.text and "Traceback" not in page.text
    ws = new_workspace(client)
    no_report = client.get(f"/api/workspaces/{ws}/report.html")
    assert no_report.status_code == 404 and no_report.json()["error"]["category"] == "no_report"
    bad_body = client.post(f"/api/workspaces/{ws}/messages", json={})
    assert bad_body.status_code == 400 and bad_body.json()["error"]["category"] == "invalid_request"


def test_upload_errors_have_categories(client):
    ws = new_workspace(client)
    empty = upload(client, ws, "empty.csv", b"")
    assert empty.status_code == 400 and empty.json()["error"]["category"] == "empty_file"
    assert empty.json()["error"]["message"]
    exe = upload(client, ws, "setup.exe", b"MZ\x90\x00" + b"\x00" * 200)
    assert exe.status_code == 415 and exe.json()["error"]["category"] == "unsupported_format"
    png = upload(client, ws, "sales.xlsx", b"\x89PNG\r\n\x1a\n" + b"\x00" * 500)
    assert png.status_code in (400, 415) and png.json()["error"]["category"] in CATEGORIES
    assert list((client.app.state.settings.data_dir).glob("upload-*")) == []  # temp files removed


def test_upload_limit_is_enforced_while_streaming(tmp_path):
    settings = Settings(_env_file=None, data_dir=tmp_path, llm_model="builtin", max_upload_mb=0)
    with TestClient(create_app(settings)) as client:
        ws = new_workspace(client)
        response = upload(client, ws, "data.csv", b"a,b\n1,2\n")
        assert response.status_code == 413 and response.json()["error"]["category"] == "too_large"
        declared = upload(client, ws, "big.csv", b"a,b\n" + b"1,2\n" * 400_000)  # refused before reading
        assert declared.status_code == 413 and declared.json()["error"]["category"] == "too_large"
        page = client.post(f"/workspaces/{ws}/upload", files={"file": ("big.csv", b"1,2\n" * 400_000)})
        assert page.status_code == 413 and "<html" in page.text


def test_page_upload_shows_a_preview_or_a_friendly_error(client):
    ws = new_workspace(client)
    csv = "Region,Revenue\n" + "".join(f"{r},{i * 10.5}\n" for i, r in enumerate(["East", "West"] * 15))
    done = client.post(f"/workspaces/{ws}/upload", files={"file": ("sales.csv", csv.encode())}, follow_redirects=False)
    assert done.status_code == 303
    page = client.get(f"/workspaces/{ws}").text
    assert "sales.csv" in page and "badge type-category" in page and "Does Revenue differ by Region?" in page
    fragment = client.post(f"/workspaces/{ws}/upload?partial=1", files={"file": ("more.csv", csv.encode())})
    assert fragment.status_code == 200 and "<html" not in fragment.text and "badge type-" in fragment.text
    failed = client.post(f"/workspaces/{ws}/upload", files={"file": ("empty.csv", b"")})
    assert failed.status_code == 400 and 'role="alert"' in failed.text
    headline = re.search(r"data-error-headline><strong>([^<]*)</strong>", failed.text).group(1)
    assert headline.startswith("empty.csv: ")  # the file and the reader's own words for what is wrong
    assert "empty_file" not in failed.text  # no internal codes
    assert f'data-replace-url="/workspaces/{ws}"' in failed.text  # the address bar returns to the workspace
    # a Chinese page names the file and the problem in Chinese first; the reader's precise message follows
    encrypted = client.post(
        f"/workspaces/{ws}/upload",
        headers={"accept-language": "zh-CN"},
        files={"file": ("locked.xlsx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 4096)},
    )
    assert encrypted.status_code in (400, 415)
    headline = re.search(r"data-error-headline><strong>([^<]*)</strong>", encrypted.text).group(1)
    assert headline in [
        t("file_error_head_" + c, "zh", file="locked.xlsx")
        for c in ("encrypted_file", "corrupt_file", "unsupported_format")
    ]
    # what to do, once, in Chinese: the reader's own hint for this file (the category's advice only without one)
    hint = re.search(r"data-error-hint>([^<]*)<", encrypted.text).group(1)
    assert re.search(r"[\u4e00-\u9fff]", hint)
    assert not any(t("file_error_" + c, "zh") in encrypted.text for c in ("encrypted_file", "corrupt_file"))


@pytest.mark.parametrize(
    "took, lang, shown",
    [(0.4, "en", "<1 s"), (0.4, "zh", "不到 1 秒"), (0.0, "zh", "不到 1 秒"), (1.0, "en", "1 s"), (12.7, "zh", "12 s")],
)
def test_a_run_shorter_than_a_second_says_so_in_the_pages_language(took, lang, shown):
    """Not "0 s", which reads as if the run took no time or had not begun."""
    from datetime import datetime, timedelta
    from types import SimpleNamespace

    from app.web.run_panel import elapsed_label, elapsed_seconds

    start = datetime(2026, 1, 5, 9, 30)  # naive, as SQLite hands it back (UTC)
    run = SimpleNamespace(created_at=start, finished_at=start + timedelta(seconds=took))
    assert elapsed_label(elapsed_seconds(run), lang) == shown  # type: ignore[arg-type]


def test_asking_from_the_page_redirects_to_the_live_run(client):
    ws = new_workspace(client)
    client.post(f"/workspaces/{ws}/upload", files={"file": ("s.csv", b"Region,Revenue\nEast,1\nWest,2\n")})
    response = client.post(f"/workspaces/{ws}/ask", data={"text": "hello"}, follow_redirects=False)
    assert response.status_code == 303 and "?run=" in response.headers["location"]
    run_id = response.headers["location"].split("?run=")[1].split("#")[0]
    read_stream(client, run_id)  # let the run end before the app shuts down
    page = client.get(response.headers["location"]).text
    assert f'data-run-id="{run_id}"' in page and "hello" in page


def test_language_follows_query_cookie_and_browser(client):
    chinese = client.get("/?lang=zh")
    assert "创建工作区" in chinese.text and chinese.cookies.get("lang") == "zh"
    assert "创建工作区" in client.get("/").text  # remembered in the cookie
    client.cookies.clear()
    assert "Create a workspace" in client.get("/").text
    assert "创建工作区" in client.get("/", headers={"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"}).text
    assert "Create a workspace" in client.get("/", headers={"Accept-Language": "en-US,en"}).text


def test_unexpected_errors_are_plain(settings, monkeypatch):
    import app.web.api as api
    import app.web.workspaces as pages

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(pages, "list_workspaces", broken)
    monkeypatch.setattr(api, "create_workspace", broken)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        page = client.get("/?lang=zh")
        assert page.status_code == 500 and "Verity 遇到了意外问题" in page.text and "boom" not in page.text
        response = client.post("/api/workspaces", json={"name": "x"})
        assert response.status_code == 500 and response.json()["error"]["category"] == "internal_error"


def test_default_app_builds():
    import app.main

    application = create_app()
    assert app.main.app is create_app
    assert application.url_path_for("figure", ws="w1", name="a.png") == "/workspaces/w1/figures/a.png"
    assert application.url_path_for("report_file", ws="w1", fmt="pdf") == "/api/workspaces/w1/report.pdf"
    assert application.url_path_for("api_events", run_id="r1") == "/api/runs/r1/events"


def test_suggested_questions_from_column_types():
    from app.web.suggest import suggest_questions

    columns = [
        {"name": "Revenue", "type": "number"},
        {"name": "Region", "type": "category"},
        {"name": "Date", "type": "datetime"},
        {"name": "Phone", "type": "text", "pii": "phone"},
    ]
    english = suggest_questions([columns], "en")
    assert english[0] == "Does Revenue differ by Region?" and "How does Revenue change over time?" in english
    assert suggest_questions([columns], "zh")[0] == "Revenue在不同Region之间有差异吗？"
    assert suggest_questions([], "en") == []
    assert not any("Phone" in q for q in english)


def test_suggested_questions_come_from_every_dataset_and_name_it_when_columns_are_shared():
    from app.web.suggest import suggest_questions

    sales = [
        {"name": "Revenue", "type": "number"},
        {"name": "Region", "type": "category"},
        {"name": "Date", "type": "datetime"},
        {"name": "Cost", "type": "number"},
    ]
    teams = [{"name": "Score", "type": "number"}, {"name": "Team", "type": "category"}]
    mixed = suggest_questions([sales, teams], "en", names=["sales.xlsx", "teams.csv"])
    assert mixed[:2] == ["Does Revenue differ by Region?", "Does Score differ by Team?"] and len(mixed) == 6
    assert not any(" in " in q for q in mixed)  # nothing shared: no file named
    older = [{"name": "Revenue", "type": "number"}, {"name": "Region", "type": "category"}]
    both = suggest_questions([sales, older], "en", names=["sales.xlsx", "sales_2024.csv"])
    # the tables take turns with different questions: the same question twice (once per file) was noise
    assert both[:2] == [
        "Does Revenue differ by Region in sales.xlsx?",
        "What does the distribution of Revenue look like in sales_2024.csv?",
    ]
    assert len({q.split(" in ")[0] for q in both}) == len(both)
    assert "How does Revenue change over time?" in both  # only sales.xlsx has dates: not ambiguous
    assert (
        suggest_questions([sales, older], "zh", names=["sales.xlsx", "b.csv"])[1]
        == "在b.csv中，Revenue的分布是怎样的？"
    )
    assert len(suggest_questions([sales, teams, older], "en", names=["a", "b", "c"])) == 6


def test_no_suggestion_compares_a_measure_across_bands_of_itself():
    """Found in a new user's trial on the sample survey: "Does Age differ by Age Group?" was suggested."""
    from app.web.suggest import suggest_questions

    columns = [
        {"name": "Age", "type": "integer"},
        {"name": "Age Group", "type": "category"},
        {"name": "Gender", "type": "category"},
    ]
    english = suggest_questions([columns], "en")
    assert "Does Age differ by Gender?" in english
    assert not any("by Age Group" in q for q in english)
    chinese = [{"name": "年龄", "type": "integer"}, {"name": "年龄段", "type": "category"}]
    assert not any("年龄段" in q and "差异" in q for q in suggest_questions([chinese], "zh"))


def test_suggested_questions_name_the_leaf_of_a_merged_header_and_two_sheets_differ():
    """ "销售额在不同门店之间有差异吗？", not "销售情况 / 销售额在不同基本信息 / 门店之间有差异吗？" (issue 28);
    two sheets of one shape get different questions."""
    from app.web.suggest import suggest_questions

    month = [
        {"name": "基本信息 / 门店", "type": "category"},
        {"name": "基本信息 / 月份", "type": "datetime"},
        {"name": "销售情况 / 销量", "type": "integer"},
        {"name": "销售情况 / 销售额", "type": "integer"},
    ]
    alone = suggest_questions([month], "zh")
    assert alone[0] == "销售额在不同门店之间有差异吗？" and not any(" / " in q for q in alone)
    two = suggest_questions([month, month], "zh", names=["一月", "二月"])
    assert len(two) == len(set(two)) == 6
    assert len({q.split("中，", 1)[1] for q in two}) == 6  # no question asked of both sheets
    same_leaf = [{"name": "上半年 / 销售额", "type": "number"}, {"name": "下半年 / 销售额", "type": "number"}]
    assert suggest_questions([same_leaf], "zh")[0] == "上半年 / 销售额和下半年 / 销售额有关系吗？"
    # the question that asks which table names the leaves too ("匹配：门店, 销售额")
    from app.understanding import Fit, describe_fit

    fit = Fit({"name": "month", "rows": 30, "columns": month}, ["基本信息 / 门店", "销售情况 / 销售额"], [], False, {})
    assert describe_fit(fit, zh=True) == "30 行; 匹配：门店, 销售额"


def test_the_workspace_page_in_chinese_has_no_browser_english(client):
    from tests.test_web import ask, new_workspace, upload

    ws = new_workspace(client)
    rows = "".join(f"{'North' if i % 2 else 'South'},{i}\n" for i in range(30))
    assert upload(client, ws, "sales.csv", f"region,revenue\n{rows}".encode()).status_code == 201
    assert upload(client, ws, "teams.csv", f"team,score\n{rows}".encode()).status_code == 201
    ask(client, ws, "Does revenue differ by region?")
    page = client.get(f"/workspaces/{ws}?lang=zh").text
    assert page.count('aria-hidden="true">选择文件<') == 2 and page.count(">未选择文件<") == 2  # upload, document
    assert "revenue在不同region之间有差异吗？" in page and "score在不同team之间有差异吗？" in page
    # the compact button sits under the run panel, after the ask box and the suggestions
    assert page.index('id="run-panel"') < page.index("conversation-tools") and page.index("suggestions") < page.index(
        "conversation-tools"
    )


def test_answers_are_escaped_before_markdown():
    from app.web.run_panel import answer_html

    rendered = str(answer_html("**Yes** <script>x()</script> [a](javascript:x()) mean 12.5", ["12.5"]))
    assert "<strong>Yes</strong>" in rendered and "<script>" not in rendered
    assert "javascript:" not in rendered and '<mark class="unverified"' in rendered


def test_every_file_error_category_is_explained_in_both_languages():
    from app.knowledge import KnowledgeError  # noqa: F401 - its categories are the same contract categories
    from app.web.i18n import STRINGS

    for category in CATEGORIES:
        entry = STRINGS[f"file_error_{category}"]
        assert entry["en"] and entry["zh"] and entry["en"] != entry["zh"]
        head = STRINGS[f"file_error_head_{category}"]
        assert "{file}" in head["en"] and "{file}" in head["zh"] and head["en"] != head["zh"]


def test_file_error_headlines_name_the_file_and_cause_in_both_languages(client):
    """Each category's error box, as the page renders it: the file and what is wrong first, no code."""
    templates = client.app.state.templates
    for category in CATEGORIES:
        error = {
            "category": category,
            "message": "There is no sheet named 'Sales'.",
            "hint": "Pick a sheet.",
            "file": "q3.xlsx",
        }
        for lang in ("en", "zh"):
            html = templates.get_template("_error_detail.html").render(error=error, lang=lang, t=t)
            headline = re.search(r"data-error-headline><strong>([^<]*)</strong>", html).group(1)
            expected = (
                "q3.xlsx: There is no sheet named &#39;Sales&#39;."
                if lang == "en"
                else t(f"file_error_head_{category}", "zh", file="q3.xlsx")
            )
            assert headline == expected, (category, lang, html)
            assert category not in html and "There is no sheet named" in html


def test_the_page_language_decides_the_runs_language_and_the_api_the_questions_words(client):
    """On the page the card, the answer and the report are in the page's language, whatever language the
    question is written in (issue 24: an English question on the zh page got an English card). Through the
    API, with no page, the question's own words decide, not the column names in it."""
    from app.db.models import Run

    ws = new_workspace(client)
    csv = "地区,收入\n" + "".join(f"{r},{i * 10.5}\n" for i, r in enumerate(["东", "西"] * 15))
    client.post(f"/workspaces/{ws}/upload", files={"file": ("sales.csv", csv.encode())})

    def language(run_id: str) -> str:
        with client.app.state.db.session() as session:
            return session.get(Run, run_id).language

    def asked(text: str, lang: str) -> str:
        done = client.post(f"/workspaces/{ws}/ask?lang={lang}", data={"text": text}, follow_redirects=False)
        return language(done.headers["location"].split("?run=")[1].split("#")[0])

    def asked_through_the_api(text: str) -> str:
        return language(client.post(f"/api/workspaces/{ws}/messages", json={"text": text}).json()["run_id"])

    assert asked("Does 收入 differ by 地区?", "zh") == "zh" and asked("收入在不同地区之间有差异吗？", "en") == "en"
    assert asked("收入 地区", "en") == "en" and asked("收入 地区", "zh") == "zh"
    assert asked_through_the_api("Does 收入 differ by 地区?") == "en"
    assert asked_through_the_api("收入在不同地区之间有差异吗？") == "zh"


def test_earlier_questions_show_the_answer_words_without_markdown():
    from app.reports.safe_markdown import markdown_snippet

    answer = "**Revenue differs** by region (p < 0.001).\n\n### Supporting findings\n\n- East is _highest_."
    assert markdown_snippet(answer) == "Revenue differs by region (p < 0.001). Supporting findings East is highest."
    assert markdown_snippet("word " * 100, 30).endswith(" …") and len(markdown_snippet("word " * 100, 30)) <= 32


def test_the_same_file_twice_is_flagged_and_repeated_rows_are_in_the_cleaning_log(client):
    ws = new_workspace(client)
    csv = b"Region,Revenue\nEast,1\nWest,2\nEast,1\nNorth,3\nEast,1\n"
    first = client.post(f"/workspaces/{ws}/upload", files={"file": ("sales.csv", csv)}, follow_redirects=False)
    assert first.status_code == 303 and "duplicate=" not in first.headers["location"]
    page = client.get(first.headers["location"]).text
    assert "data-duplicate-upload" not in page
    assert "rows that repeat an earlier row exactly (kept) (2)" in page  # East,1 three times: two repeats
    again = client.post(f"/workspaces/{ws}/upload", files={"file": ("sales copy.csv", csv)}, follow_redirects=False)
    assert "duplicate=" in again.headers["location"]
    page = client.get(again.headers["location"]).text
    assert "data-duplicate-upload" in page
    assert t("duplicate_upload", "en", file="sales copy.csv", other="sales.csv").replace('"', "&#34;") in page
    other = client.post(
        f"/workspaces/{ws}/upload", files={"file": ("other.csv", csv + b"South,4\n")}, follow_redirects=False
    )
    assert "duplicate=" not in other.headers["location"]


def test_nothing_destructive_comes_before_the_question_box(client):
    """In the page's (and the keyboard's) order the question box comes before every remove or delete
    button, with data and without."""
    ws = new_workspace(client)
    for _ in range(2):
        page = client.get(f"/workspaces/{ws}").text
        ask = page.index('name="text"')
        for marker in ("/delete", "/remove"):
            assert all(at > ask for at in (m.start() for m in re.finditer(re.escape(marker), page))), marker
        client.post(f"/workspaces/{ws}/upload", files={"file": ("s.csv", b"Region,Revenue\nEast,1\nWest,2\n")})


def test_no_downloads_or_share_link_for_a_run_without_data(client):
    from tests.factories import wait_for_run

    ws = new_workspace(client)
    run = client.post(f"/api/workspaces/{ws}/messages", json={"text": "How is revenue doing?"})
    assert run.status_code == 202, run.text
    wait_for_run(client, run.json()["run_id"], {"done", "failed"})
    page = client.get(f"/workspaces/{ws}?run={run.json()['run_id']}").text
    assert 'class="downloads"' not in page and "/share" not in page


def test_suggestions_come_from_the_uploads_not_the_tables_an_analysis_derived(client):
    from tests.factories import REPO, wait_for_run

    ws = new_workspace(client)
    sales = (REPO / "data" / "samples" / "retail_sales.xlsx").read_bytes()
    assert upload(client, ws, "retail_sales.xlsx", sales).status_code == 201
    run = client.post(f"/api/workspaces/{ws}/messages", json={"text": "Which region brings in the most total revenue?"})
    wait_for_run(client, run.json()["run_id"], {"done"})  # it keeps the total per region as a derived table
    page = client.get(f"/workspaces/{ws}").text
    suggestions = re.findall(r'class="suggestion">([^<]+)<', page)
    assert "Does Revenue differ by Region?" in suggestions
    assert not [q for q in suggestions if "_sum" in q or "n_rows" in q]
