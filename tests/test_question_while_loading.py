"""A question asked while a file of the workspace is still being read (issue 24: on the zh page,
"哪个档口的销售额最高？" ended "等待你的回答", asked back about the van-hire CSV's columns, because the
fruit-market workbook it was about was not read yet). The run waits for the read and answers from the
right table; when the read outlasts the wait, the user is told plainly that the file is still loading."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.config import Settings
from app.db.models import Dataset, Event
from app.main import create_app
from app.workspaces import LOADING, READY, receiving
from tests.factories import REPO, wait_for_run

pytestmark = pytest.mark.slow  # a server, a run or a child per test: handed out early (tests/conftest.py)

FRUIT = REPO / "data/eval/files/h7_fruit_market_stalls.xlsx"
VANS = REPO / "data/eval/files/h7_van_hire_bookings.csv"


def workspace_with_fruit_loading(client: TestClient) -> tuple[str, str]:
    """The van CSV read, the fruit workbook in the state of a big upload still read in the background."""
    ws = client.post("/api/workspaces", json={"name": "档口"}).json()["id"]
    for path in (VANS, FRUIT):
        response = client.post(f"/api/workspaces/{ws}/files", files={"file": (path.name, path.read_bytes())})
        assert response.status_code == 201, response.text
    fruit_id = response.json()["dataset"]["id"]
    set_status(client, fruit_id, LOADING)
    return ws, fruit_id


def set_status(client: TestClient, dataset_id: str, status: str) -> None:
    with client.app.state.db.session() as session:
        dataset = session.get(Dataset, dataset_id)
        dataset.info = {**dataset.info, "status": status}
        session.commit()


def asked_on_the_zh_page(client: TestClient, ws: str, question: str) -> str:
    done = client.post(f"/workspaces/{ws}/ask?lang=zh", data={"text": question}, follow_redirects=False)
    return done.headers["location"].split("?run=")[1].split("#")[0]


def waiting_step(client: TestClient, run_id: str, timeout: float = 60) -> dict:
    """The run's step that waits for the file being read, once it is recorded."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with client.app.state.db.session() as session:
            for event in session.scalars(select(Event).where(Event.run_id == run_id, Event.kind == "tool_started")):
                if (event.data or {}).get("tool") == "wait_for_files":
                    return dict(event.data)
        time.sleep(0.2)
    raise AssertionError("the run never waited for the file still being read")


def app_settings(tmp_path: Path) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path, llm_model="builtin", sse_poll_interval_s=0.05)


def test_a_question_waits_for_the_file_still_loading_and_is_answered_from_it(tmp_path: Path) -> None:
    with TestClient(create_app(app_settings(tmp_path))) as client:
        ws, fruit_id = workspace_with_fruit_loading(client)
        run_id = asked_on_the_zh_page(client, ws, "哪个档口的销售额最高？")
        waiting_step(client, run_id)  # the run starts and waits; then the background read finishes
        assert client.get(f"/api/runs/{run_id}").json()["status"] == "running"
        set_status(client, fruit_id, READY)
        body = wait_for_run(client, run_id, ("done", "waiting", "failed"))
        assert body["status"] == "done", body
        assert body["question"] is None
        assert "老王果业" in body["answer"] and "h7_fruit_market_stalls" in body["answer"], body["answer"]
        page = client.get(f"/workspaces/{ws}?run={run_id}&lang=zh").text
        assert "等待仍在读取的文件" in page  # the wait was a step of the run, shown on the page


def test_a_read_that_outlasts_the_wait_is_said_plainly(tmp_path: Path) -> None:
    with TestClient(create_app(app_settings(tmp_path))) as client:
        client.app.state.runs.loading_wait_s = 1.0
        ws, _ = workspace_with_fruit_loading(client)
        run_id = asked_on_the_zh_page(client, ws, "哪个档口的销售额最高？")
        body = wait_for_run(client, run_id, ("done", "waiting", "failed"))
        assert body["status"] == "failed" and body["question"] is None, body
        assert body["error"].startswith("h7_fruit_market_stalls 还在读取中"), body["error"]


def test_a_question_asked_while_a_file_is_still_uploading_waits_for_it(tmp_path: Path) -> None:
    """Ask pressed while the upload of the workbook is still being received (a second tab, or the
    upload's page still sending): no dataset exists yet, and the question waits for the upload."""
    with TestClient(create_app(app_settings(tmp_path))) as client:
        ws = client.post("/api/workspaces", json={"name": "档口"}).json()["id"]
        client.post(f"/api/workspaces/{ws}/files", files={"file": (VANS.name, VANS.read_bytes())})
        with receiving(ws, FRUIT.name):  # the upload under way, as ingest_upload marks it
            run_id = asked_on_the_zh_page(client, ws, "哪个档口的销售额最高？")
            assert waiting_step(client, run_id)["files"] == [FRUIT.name]
            uploaded = client.post(f"/api/workspaces/{ws}/files", files={"file": (FRUIT.name, FRUIT.read_bytes())})
            assert uploaded.status_code == 201, uploaded.text
        body = wait_for_run(client, run_id, ("done", "waiting", "failed"))
        assert body["status"] == "done", body
        assert "老王果业" in body["answer"] and "h7_fruit_market_stalls" in body["answer"], body["answer"]
