"""Runs executed by `verity worker` processes (run_executor=worker), on SQLite and PostgreSQL:
a real worker process answers a question asked through the API; two workers never take the same
run; a stop request crosses processes through the database; a run whose worker died is recovered."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from app.agent.model.interface import ModelReply
from app.config import Settings
from app.db.models import Event, Run, Workspace, utcnow
from app.main import create_app
from app.worker import Worker
from tests.factories import REPO, reference, wait_for_run, workspace_with
from tests.fakes import ScriptedModel, call

PLANT = "rdatasets/PlantGrowth.csv"


@pytest.fixture(params=["sqlite", "postgres"])
def settings(request, tmp_path) -> Settings:
    url = None if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    return Settings(
        _env_file=None,
        data_dir=tmp_path,
        llm_model="builtin",
        database_url=url,
        run_executor="worker",
        worker_poll_s=0.05,
        worker_heartbeat_s=0.1,
        sse_poll_interval_s=0.05,
        sse_heartbeat_s=1.0,
    )


def worker_env(settings: Settings) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERITY_")}
    env.update(
        VERITY_DATA_DIR=str(settings.data_dir),
        VERITY_RUN_EXECUTOR="worker",
        VERITY_LLM_MODEL="builtin",
        VERITY_WORKER_POLL_S="0.05",
        VERITY_WORKER_HEARTBEAT_S="0.2",
    )
    if settings.database_url:
        env["VERITY_DATABASE_URL"] = settings.database_url
    return env


def test_a_worker_process_answers_a_question_asked_through_the_api(settings, retail_sales):
    with TestClient(create_app(settings)) as client:
        ws = client.post("/api/workspaces", json={"name": "worker"}).json()["id"]
        with open(retail_sales, "rb") as handle:
            assert client.post(f"/api/workspaces/{ws}/files", files={"file": ("sales.xlsx", handle)}).status_code == 201
        run_id = client.post(f"/api/workspaces/{ws}/messages", json={"text": "Does revenue differ by region?"}).json()[
            "run_id"
        ]
        time.sleep(0.3)
        assert client.get(f"/api/runs/{run_id}").json()["status"] == "queued"  # the web process does not run it
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "worker"],
            cwd=REPO,
            env=worker_env(settings),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            body = wait_for_run(client, run_id, {"done", "failed"}, timeout=180)
            assert body["status"] == "done" and body["evidence"]
            assert (
                client.get(f"/api/workspaces/{ws}/report.json").json()["question"] == "Does revenue differ by region?"
            )
        finally:
            process.send_signal(signal.SIGTERM)
            output = process.communicate(timeout=60)[0]
        assert process.returncode == 0, output
        assert "1 run(s) executed" in output
        with client.app.state.db.session() as session:
            run = session.get(Run, run_id)
            assert run.worker.split(":")[1] == str(process.pid) and run.heartbeat_at is not None


def test_two_workers_never_take_the_same_run(settings):
    workers = [Worker(settings.model_copy(update={"run_workers": 2}), name=f"w{i}") for i in range(2)]
    db = workers[0].db
    ws = workspace_with(db, settings, reference(PLANT))
    runs = []
    with db.session() as session:
        workspace = session.get(Workspace, ws)
        for i in range(6):
            runs.append(workers[0].service.create(session, workspace, f"Does weight differ by group? ({i})").id)
    threads = [threading.Thread(target=w.run_forever, kwargs={"once": True}) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=240)
    check = Worker(settings)
    with check.db.session() as session:
        for run_id in runs:
            run = session.get(Run, run_id)
            started = session.query(Event).filter_by(run_id=run_id, kind="run_started").count()
            assert (run.status, started, run.worker in ("w0", "w1")) == ("done", 1, True)
    check.db.engine.dispose()


class SlowModel(ScriptedModel):
    """Keeps calling a tool, slowly: a run that only ends when it is stopped."""

    def complete(self, messages, tools):
        self.requests.append({"messages": messages})
        time.sleep(0.1)
        return ModelReply(None, [call("describe_columns", f"c{len(self.requests)}", columns=["weight"])])


def test_the_stop_button_reaches_a_run_in_another_process(settings):
    worker = Worker(settings, model_factory=lambda *_: SlowModel())
    with TestClient(create_app(settings)) as client:
        ws = workspace_with(client.app.state.db, settings, reference(PLANT))
        queued = client.post(f"/api/workspaces/{ws}/messages", json={"text": "Describe the weights"}).json()["run_id"]
        assert client.post(f"/api/runs/{queued}/interrupt").json()["status"] == "interrupted"  # no worker took it

        run_id = client.post(f"/api/workspaces/{ws}/messages", json={"text": "Describe the weights"}).json()["run_id"]
        thread = threading.Thread(target=worker.run_forever)
        thread.start()
        try:
            deadline = time.monotonic() + 30
            while client.get(f"/api/runs/{run_id}").json()["status"] != "running" and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)  # a few steps in
            assert client.post(f"/api/runs/{run_id}/interrupt").json()["status"] == "interrupting"
            body = wait_for_run(client, run_id, {"interrupted", "done", "failed"}, timeout=30)
            assert body["status"] == "interrupted"
        finally:
            worker.stop.set()
            thread.join(timeout=30)
        assert client.get(f"/api/runs/{queued}").json()["status"] == "interrupted"


def test_a_run_whose_worker_died_is_recovered(settings):
    worker = Worker(settings)
    ws = workspace_with(worker.db, settings, reference(PLANT))
    with worker.db.session() as session:
        dead = Run(
            workspace_id=ws,
            question="q",
            status="running",
            worker="gone",
            heartbeat_at=utcnow() - timedelta(seconds=settings.worker_stale_s + 5),
        )
        alive = Run(workspace_id=ws, question="q", status="running", worker="busy", heartbeat_at=utcnow())
        session.add_all([dead, alive])
    assert worker.recover_stale() == 1
    with worker.db.session() as session:
        assert session.get(Run, dead.id).status == "interrupted" and session.get(Run, alive.id).status == "running"
    worker.db.engine.dispose()


def test_a_running_worker_sweeps_up_after_a_dead_one(settings):
    """The sweep runs in the heartbeat too, not only at start: a worker that stays up notices."""
    worker = Worker(settings.model_copy(update={"worker_stale_s": 0.4}))
    ws = workspace_with(worker.db, settings, reference(PLANT))
    thread = threading.Thread(target=worker.run_forever)
    thread.start()
    try:
        with worker.db.session() as session:
            dead = Run(workspace_id=ws, question="q", status="running", worker="gone", heartbeat_at=utcnow())
            session.add(dead)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with worker.db.session() as session:
                if session.get(Run, dead.id).status == "interrupted":
                    break
            time.sleep(0.1)
        with worker.db.session() as session:
            assert session.get(Run, dead.id).status == "interrupted"
    finally:
        worker.stop.set()
        thread.join(timeout=30)
