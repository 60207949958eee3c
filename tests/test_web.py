"""The web app end to end, in process: workspace → upload → ask → live events → answer → reports."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from tests.factories import wait_until_ready

CJK = re.compile(r"[\u4e00-\u9fff]")
REPORT_KEYS = {
    "question",
    "language",
    "answer",
    "model",
    "datasets",
    "evidence",
    "tasks",
    "figures",
    "tool_calls",
    "unverified_numbers",
    "warnings",
}


# --- helpers ---------------------------------------------------------------------------------
def new_workspace(client: TestClient, name: str = "Sales review") -> str:
    response = client.post("/api/workspaces", json={"name": name})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def upload(client: TestClient, ws: str, name: str, content: bytes, **data: str):
    return client.post(f"/api/workspaces/{ws}/files", files={"file": (name, content)}, data=data)


def read_stream(
    client: TestClient, run_id: str, headers: dict | None = None, after: int | None = None, limit_s: float = 120.0
) -> list:
    """(id, kind, data) of every SSE message until the server closes the stream (or `limit_s`)."""
    events, current, deadline = [], {}, time.monotonic() + limit_s
    url = f"/api/runs/{run_id}/events" + (f"?after={after}" if after is not None else "")
    with client.stream("GET", url, headers=headers or {}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if time.monotonic() > deadline:
                pytest.fail(f"the event stream did not finish in {limit_s} s; last events: {events[-3:]}")
            if line.startswith(("id:", "event:", "data:")):
                key, _, value = line.partition(":")
                current[key] = value.strip()
            elif not line and "event" in current:
                events.append((int(current["id"]), current["event"], json.loads(current["data"])))
                current = {}
    return events


def ask(client: TestClient, ws: str, text: str) -> tuple[str, list]:
    response = client.post(f"/api/workspaces/{ws}/messages", json={"text": text})
    assert response.status_code == 202, response.text
    run_id = response.json()["run_id"]
    return run_id, read_stream(client, run_id)


def rerun(client: TestClient, run_id: str, role: str, value: str) -> str:
    """A reading chip's choice (`role` set to `value`) sent as the page sends it; the new run's id, once
    it has finished. The chip answers with a redirect to the new run."""
    moved = client.post(f"/runs/{run_id}/reread", data={"role": role, "value": value}, follow_redirects=False)
    assert moved.status_code == 303
    again = re.search(r"run=(\w+)", moved.headers["location"]).group(1)  # type: ignore[union-attr]
    assert again != run_id
    read_stream(client, again)
    return again


def finished_report(client: TestClient, ws: str, run_id: str) -> dict:
    """The JSON report of a run that finished (its warnings shown when it did not)."""
    report = client.get(f"/api/workspaces/{ws}/report.json?run={run_id}").json()
    assert report["status"] == "done", report.get("warnings")
    return report


# --- one full analysis, shared by the tests that read its results ----------------------------
@pytest.fixture(scope="module")
def flow(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from tests.conftest import sample_path

    path = sample_path("retail_sales.xlsx")
    settings = Settings(
        _env_file=None,
        data_dir=tmp_path_factory.mktemp("flow"),
        llm_model="builtin",
        sse_poll_interval_s=0.05,
        sse_heartbeat_s=1.0,
    )
    with TestClient(create_app(settings)) as client:
        ws = new_workspace(client)
        uploaded = upload(client, ws, path.name, path.read_bytes())
        assert uploaded.status_code == 201, uploaded.text
        # the read finished, however long it takes here (the upload may answer while it goes on)
        dataset = wait_until_ready(client, ws, uploaded.json()["dataset"]["id"])
        run_id, events = ask(client, ws, "Does revenue differ by region?")
        yield {
            "client": client,
            "ws": ws,
            "dataset": dataset,
            "run_id": run_id,
            "events": events,
            "settings": settings,
        }


def test_upload_returns_the_preview(flow):
    dataset = flow["dataset"]
    assert dataset["id"] and isinstance(dataset["header_row"], int) and dataset["header_row"] >= 1
    types = {c["name"]: c["type"] for c in dataset["columns"]}
    assert types.get("Region") == "category"
    assert types.get("Revenue") in ("number", "integer")
    assert set(types.values()) <= {"number", "integer", "datetime", "category", "text", "boolean", "identifier"}
    assert 0 < len(dataset["preview"]) <= flow["settings"].preview_rows
    assert set(dataset["preview"][0]) == set(types)
    for key in ("file", "format", "sheets", "rows", "cleaning", "warnings"):
        assert key in dataset


def test_event_stream_shows_the_work_in_order(flow):
    events = flow["events"]
    kinds = [kind for _, kind, _ in events]
    ids = [event_id for event_id, _, _ in events]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    for kind in ("tool_started", "tool_finished", "evidence", "answer"):
        assert kind in kinds, kind
    assert kinds.index("tool_started") < kinds.index("tool_finished") < kinds.index("evidence") < kinds.index("answer")
    finished = [data for _, kind, data in events if kind == "tool_finished"]
    assert all({"tool", "ok", "interpretation", "figures"} <= set(data) for data in finished)
    assert events[-1][2]["status"] == "done"


def test_stream_resumes_from_the_cursor(flow):
    client, events = flow["client"], flow["events"]
    last_but_one = events[-2][0]
    assert [kind for _, kind, _ in read_stream(client, flow["run_id"], after=last_but_one)] == ["run_finished"]
    resumed = read_stream(client, flow["run_id"], headers={"Last-Event-ID": str(last_but_one)})
    assert [e[0] for e in resumed] == [events[-1][0]]


def test_run_status_answer_and_evidence(flow):
    body = flow["client"].get(f"/api/runs/{flow['run_id']}").json()
    assert body["id"] == flow["run_id"] and body["status"] == "done" and body["question"] is None
    assert "region" in body["answer"].lower()
    assert len(body["evidence"]) >= 3
    assert all({"claim", "method", "metrics", "sample_size", "confidence"} <= set(e) for e in body["evidence"])


def test_report_json_follows_the_contract(flow):
    response = flow["client"].get(f"/api/workspaces/{flow['ws']}/report.json")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert re.search(
        r'filename="Sales review-Does revenue differ by region-\d{4}-\d{2}-\d{2}\.json"',
        response.headers["content-disposition"],
    )
    report = response.json()
    assert REPORT_KEYS <= set(report)
    assert report["evidence"] and all(
        e["method"] and isinstance(e["metrics"], dict) and "sample_size" in e for e in report["evidence"]
    )
    assert len(report["figures"]) >= 1


def test_report_html_is_self_contained(flow):
    response = flow["client"].get(f"/api/workspaces/{flow['ws']}/report.html")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    answer = flow["client"].get(f"/api/runs/{flow['run_id']}").json()["answer"]
    first_words = re.sub(r"[*_#`>|]", "", answer.strip().splitlines()[0])[:25].strip()
    assert first_words and first_words.split()[0] in response.text
    assert "data:image/png;base64," in response.text


@pytest.mark.parametrize(
    "fmt, media, magic",
    [
        ("md", "text/markdown", None),
        ("pdf", "application/pdf", b"%PDF"),
        ("docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", b"PK"),
    ],
)
def test_report_downloads(flow, fmt, media, magic):
    response = flow["client"].get(f"/api/workspaces/{flow['ws']}/report.{fmt}")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith(media)
    assert re.search(
        rf'^attachment; filename="Sales review-Does revenue differ by region-\d{{4}}-\d{{2}}-\d{{2}}\.{fmt}"$',
        response.headers["content-disposition"],
    )
    if magic:
        assert response.content.startswith(magic)
    else:
        assert "region" in response.text.lower()


def test_a_download_is_named_after_its_workspace_and_question_in_any_script():
    """Non-ASCII names travel as RFC 6266 filename* (UTF-8) with an ASCII name for old clients."""
    from urllib.parse import unquote

    from app.web.reports import _name_part, attachment

    assert _name_part("哪个门店的销售额最高？顺便看看月份") == "哪个门店的销售额最高"
    assert _name_part("Does revenue differ: North/South? Then by month") == "Does revenue differ North South"
    header = attachment("门店销售-哪个门店的销售额最高-2026-12-01.pdf")["Content-Disposition"]
    assert header.startswith("attachment; filename=\"report-2026-12-01.pdf\"; filename*=utf-8''")
    assert unquote(header.split("''", 1)[1]) == "门店销售-哪个门店的销售额最高-2026-12-01.pdf"


def test_analysis_script_download(flow):
    response = flow["client"].get(f"/api/workspaces/{flow['ws']}/analysis.py")
    assert response.status_code == 200 and 'filename="analysis.py"' in response.headers["content-disposition"]
    compile(response.text, "analysis.py", "exec")


def test_workspace_page_shows_preview_badges_and_run(flow):
    page = flow["client"].get(f"/workspaces/{flow['ws']}")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert 'class="badge type-category"' in page.text
    assert "badge type-number" in page.text or "badge type-integer" in page.text
    assert "Region" in page.text and "<table" in page.text
    assert "Does revenue differ by region?" in page.text
    assert f'data-run-id="{flow["run_id"]}"' in page.text and "evidence-card" in page.text
    assert "report.pdf" in page.text and "analysis.py" in page.text


def test_run_partial_is_a_fragment(flow):
    response = flow["client"].get(f"/runs/{flow['run_id']}?partial=1")
    assert response.status_code == 200 and "<html" not in response.text
    assert 'data-active="false"' in response.text and "answer-body" in response.text
    assert "<html" in flow["client"].get(f"/runs/{flow['run_id']}").text


def test_run_panel_shows_the_plan_and_which_claims_were_checked(flow):
    kinds = [kind for _, kind, _ in flow["events"]]
    assert "analysis_plan" in kinds and "verification" in kinds  # the live panel gets both
    page = flow["client"].get(f"/runs/{flow['run_id']}?partial=1").text
    plan = page.split("data-analysis-plan>", 1)[1].split("</dl>", 1)[0]
    assert "<dt>Goal</dt>" in plan and "Planned methods" in plan
    assert page.count("data-check>checked</span>") == page.count('class="evidence-card') >= 1
    assert "Every claim was checked against the analyses it cites." in page


def test_figures_are_served_and_traversal_refused(flow):
    client, ws = flow["client"], flow["ws"]
    urls = [f["url"] for _, kind, data in flow["events"] if kind == "tool_finished" for f in data["figures"]]
    assert urls and urls[0].startswith(f"/workspaces/{ws}/figures/")
    figure = client.get(urls[0])
    assert figure.status_code == 200 and figure.headers["content-type"] == "image/png"
    assert figure.content.startswith(b"\x89PNG")
    for bad in ("..%2F..%2Fverity.db", "%2e%2e%2fverity.db", "..png", "..%5C..%5Cverity.db", "nothing.png"):
        assert client.get(f"/workspaces/{ws}/figures/{bad}").status_code == 404, bad
    assert client.get(f"/workspaces/..%2F..%2F{ws}/figures/x.png").status_code == 404


def test_chinese_question_gets_a_chinese_answer(flow):
    run_id, events = ask(flow["client"], flow["ws"], "不同地区的收入有差异吗？")
    assert events[-1][1] == "run_finished" and events[-1][2]["status"] == "done"
    body = flow["client"].get(f"/api/runs/{run_id}").json()
    assert len(CJK.findall(body["answer"])) > 10


def test_interrupt_and_answers(flow):
    client, run_id = flow["client"], flow["run_id"]
    assert client.post(f"/api/runs/{run_id}/interrupt").status_code == 202
    assert client.post("/api/runs/nope/interrupt").status_code == 404
    from app.db.models import Question

    db = client.app.state.db
    with db.session() as session:
        question = Question(
            workspace_id=flow["ws"],
            run_id=run_id,
            kind="single",
            question="Which metric?",
            options=[{"label": "Revenue", "description": "money"}],
        )
        session.add(question)
        session.flush()
        question_id = question.id
    open_question = client.get(f"/api/runs/{run_id}").json()["question"]
    assert open_question == {
        "id": question_id,
        "kind": "single",
        "question": "Which metric?",
        "options": [{"label": "Revenue", "description": "money"}],
    }
    answered = client.post(f"/api/runs/{run_id}/answers", json={"question_id": question_id, "answer": "Revenue"})
    assert answered.status_code == 202
    assert client.get(f"/api/runs/{run_id}").json()["question"] is None
    with db.session() as session:
        assert session.get(Question, question_id).answer == "Revenue"
    assert client.post(f"/api/runs/{run_id}/answers", json={"question_id": "x", "answer": "y"}).status_code == 404
