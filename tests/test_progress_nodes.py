"""Issue 26 point 3: progress across nodes without a page polling the database. A progress page's
event stream reads when its run has news: NOTIFY from any process on PostgreSQL, a ring in this
process on SQLite (app/db/progress.py); without news it reads once per keep-alive (PostgreSQL)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import app.web.api as api
from app.config import Settings
from app.db.models import Event, Run, Workspace
from app.db.session import Database
from tests.factories import REPO

pytestmark = pytest.mark.slow  # a server, a run or a child per test: handed out early (tests/conftest.py)

WRITER = """
import sys, time
from app.config import Settings
from app.db.models import Event, Run
from app.db.session import Database

db = Database(Settings(_env_file=None, data_dir=sys.argv[2], database_url=sys.argv[1]))
for n in range(3):
    time.sleep(0.5)
    with db.session() as session:
        session.add(Event(run_id=sys.argv[3], kind="step", data={"n": n}))
time.sleep(0.5)
with db.session() as session:
    session.get(Run, sys.argv[3]).status = "done"
    session.add(Event(run_id=sys.argv[3], kind="run_finished", data={"status": "done"}))
db.close()
"""


def running_run(db: Database) -> str:
    with db.session() as session:
        workspace = Workspace(name="progress")
        session.add(workspace)
        session.flush()
        run = Run(workspace_id=workspace.id, question="q", status="running")
        session.add(run)
        session.flush()
        return run.id


def follow(client: TestClient, run_id: str) -> list[tuple[float, str, dict[str, Any]]]:
    """The stream's events with the moment each arrived, until run_finished."""
    got, kind = [], ""
    with client.stream("GET", f"/api/runs/{run_id}/events") as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: "):
                got.append((time.monotonic(), kind, json.loads(line.removeprefix("data: "))))
                if kind == "run_finished":
                    break
    return got


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    seen: list[float] = []
    real = api.read_events

    def counted(*args: Any) -> Any:
        seen.append(time.monotonic())
        return real(*args)

    monkeypatch.setattr(api, "read_events", counted)
    return seen


def test_a_page_sees_events_another_node_writes_without_polling(postgres_url: str, tmp_path: Path, reads):
    """The writer is another process (another node): its NOTIFY reaches this node's listener."""
    from app.main import create_app

    settings = Settings(
        _env_file=None, data_dir=tmp_path, llm_model="builtin", database_url=postgres_url, sse_poll_interval_s=0.05
    )  # sse_heartbeat_s stays 10: no keep-alive read during the test
    with TestClient(create_app(settings)) as client:
        db: Database = client.app.state.db  # type: ignore[attr-defined]
        run_id = running_run(db)
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, postgres_url, str(tmp_path / "writer"), run_id], env=env, cwd=REPO
        )
        try:
            started = time.monotonic()
            got = follow(client, run_id)
        finally:
            assert writer.wait(60) == 0
    assert [kind for _, kind, _ in got] == ["step", "step", "step", "run_finished"]
    assert [data.get("n") for _, _, data in got[:3]] == [0, 1, 2]
    took = got[-1][0] - started
    # Polling every 0.05 s would have read ~took/0.05 (40+) times; with NOTIFY: once at the start,
    # then once per news (4), and maybe once more if a notice arrived while a read ran.
    assert len(reads) <= 7, (len(reads), took)
    assert took < 10  # the news came as it happened, not at the next keep-alive read


def test_the_embedded_database_rings_its_own_pages(tmp_path: Path, reads):
    """SQLite: a commit in this process wakes the page at once (no NOTIFY, no polling at poll_s)."""
    from app.main import create_app

    settings = Settings(
        _env_file=None, data_dir=tmp_path, llm_model="builtin", sse_poll_interval_s=0.05, sse_heartbeat_s=10
    )
    with TestClient(create_app(settings)) as client:
        db: Database = client.app.state.db  # type: ignore[attr-defined]
        run_id = running_run(db)
        written: list[float] = []

        def write() -> None:
            for n in range(3):
                time.sleep(0.4)
                with db.session() as session:
                    session.add(Event(run_id=run_id, kind="step", data={"n": n}))
                written.append(time.monotonic())
            with db.session() as session:
                run = session.get(Run, run_id)
                assert run is not None
                run.status = "done"
                session.add(Event(run_id=run_id, kind="run_finished", data={"status": "done"}))
            written.append(time.monotonic())

        writer = threading.Thread(target=write)
        writer.start()
        got = follow(client, run_id)
        writer.join()
    assert [kind for _, kind, _ in got] == ["step", "step", "step", "run_finished"]
    delays = [arrived - committed for (arrived, _, _), committed in zip(got, written)]
    assert max(delays) < 0.5, delays  # rung at the commit, not found at the next 1 s read
    assert len(reads) <= 8, len(reads)  # vs ~32 at poll_s = 0.05
