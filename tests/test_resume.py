"""Pause and resume across a server restart: a waiting run keeps waiting, and answering it in a
fresh process (new RunService, new app, same database) resumes and completes it."""

import time

import numpy as np
import pandas as pd
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.agent.policy.clarify import answer_question, resume_after_answer
from app.db.models import Message, Question, Run
from app.db.session import open_database
from app.runs import RunService
from tests.factories import make_settings, setup, start_run, wait_for_run

pytestmark = pytest.mark.slow  # a server, a run or a child per test: handed out early (tests/conftest.py)


def shop_csv(tmp_path):
    rng = np.random.default_rng(3)
    n = 60
    path = tmp_path / "shop.csv"
    pd.DataFrame(
        {
            "region": rng.choice(["East", "West"], n),
            "revenue": rng.normal(100, 10, n).round(2),
            "revenue_net": rng.normal(90, 10, n).round(2),
            "gmv": rng.normal(120, 9, n).round(2),
        }
    ).to_csv(path, index=False)
    return path


def test_waiting_run_survives_recover_and_resumes_in_a_new_service(tmp_path):
    settings, db, service, ws = setup(tmp_path, shop_csv(tmp_path))
    run_id = start_run(service, ws, "Does revenue differ by region?")
    service.execute(run_id)
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "waiting" and run.state["waiting"]["question_id"]
        stored = s.scalars(select(Message).where(Message.run_id == run_id)).all()
    service.shutdown()
    db.engine.dispose()

    # the "restart": a new database handle and run service over the same files
    db2 = open_database(make_settings(tmp_path))
    service2 = RunService(db2, make_settings(tmp_path))
    assert service2.recover() == 0
    with db2.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "waiting"
        question = s.scalars(select(Question).where(Question.run_id == run_id)).one()
        answer_question(s, question, "gmv")
        assert resume_after_answer(s, service2, run)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with db2.session() as s:
            status = s.get(Run, run_id).status
        if status in ("done", "failed"):
            break
        time.sleep(0.1)
    with db2.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "done", run.error
        assert "gmv" in run.answer and "waiting" not in run.state
        messages = s.scalars(select(Message).where(Message.run_id == run_id).order_by(Message.id)).all()
        assert [m.content for m in messages[: len(stored)]] == [m.content for m in stored]  # rebuilt, not redone
        assert sum(1 for m in messages if m.role == "user" and not (m.content or "").startswith("[harness]")) == 1
    service2.shutdown()


def test_answer_after_restart_through_the_api(tmp_path):
    from app.main import create_app

    settings = make_settings(tmp_path)
    path = shop_csv(tmp_path)
    with TestClient(create_app(settings)) as first:
        ws = first.post("/api/workspaces", json={"name": "r"}).json()["id"]
        with path.open("rb") as fh:
            first.post(f"/api/workspaces/{ws}/files", files={"file": ("shop.csv", fh, "text/csv")})
        run_id = first.post(f"/api/workspaces/{ws}/messages", json={"text": "how is revenue doing?"}).json()["run_id"]
        body = wait_for_run(first, run_id, ("waiting",))
    with TestClient(create_app(settings)) as second:  # a new app: recover() ran at start-up
        body = second.get(f"/api/runs/{run_id}").json()
        assert body["status"] == "waiting" and body["question"]["options"][1]["label"] == "revenue_net"
        answered = second.post(
            f"/api/runs/{run_id}/answers", json={"question_id": body["question"]["id"], "answer": "revenue_net"}
        )
        assert answered.status_code == 202 and answered.json()["status"] == "resumed"
        done = wait_for_run(second, run_id, ("done", "failed"))
        assert done["status"] == "done" and "revenue_net" in done["answer"] and done["evidence"]


def test_a_run_taken_over_after_a_tool_search_calls_what_the_search_found(tmp_path):
    """A worker dies after a round whose tool_search made a tool callable (the built-in analyst finds
    time_series_trend that way); the worker that takes the run over (a new RunService: nothing of the
    first process's memory) may still call it, and answers as an undisturbed run does. Before, the
    search's finds died with the process: the resumed turn dropped the trend and answered another
    question (issue 26's two-node acceptance test found it)."""
    from app.agent.turn import Interrupted
    from app.analyst import BuiltinAnalyst
    from tests.conftest import sample_path

    workbook, question = sample_path("retail_sales.xlsx"), "How does revenue develop over time by month?"
    _, calm_db, calm_service, calm_ws = setup(tmp_path / "calm", workbook)
    calm_id = start_run(calm_service, calm_ws, question)
    calm_service.execute(calm_id)
    with calm_db.session() as s:
        calm = s.get(Run, calm_id)
        assert calm.status == "done", calm.error
        calm_answer = calm.answer
    services: list[RunService] = []

    class DiesAfterThreeRounds(BuiltinAnalyst):
        replies = 0

        def complete(self, messages, tools):
            DiesAfterThreeRounds.replies += 1
            if DiesAfterThreeRounds.replies == 4:  # as a killed worker: nothing of this round is written
                services[0].handed_over.add(run_id)
                raise Interrupted()
            return super().complete(messages, tools)

    settings, db, dying, ws = setup(
        tmp_path / "taken", workbook, lambda s, datasets, language: DiesAfterThreeRounds(datasets, language)
    )
    services.append(dying)
    run_id = start_run(dying, ws, question)
    dying.execute(run_id)
    with db.session() as s:
        assert s.get(Run, run_id).status == "running"  # left as a dead worker leaves it
        searched = [m for m in s.scalars(select(Message).where(Message.run_id == run_id)) if m.tool_calls]
        assert any(c["function"]["name"] == "tool_search" for m in searched for c in m.tool_calls)
    RunService(open_database(settings), settings).execute(run_id)  # another worker takes it over
    with db.session() as s:
        taken = s.get(Run, run_id)
        assert taken.status == "done", taken.error
        assert taken.answer == calm_answer and "trend" in taken.answer
