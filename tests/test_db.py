"""The schema comes from Alembic migrations, which must match the models, on SQLite and PostgreSQL."""

import sqlite3

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine
from sqlalchemy.exc import IntegrityError, OperationalError

from app.db import session as session_module
from app.db.models import Base, Run, Workspace
from app.db.session import open_database
from tests.factories import make_settings


def assert_schema_matches_models(db):
    with db.engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert diff == []


def test_sqlite_migration_matches_models_and_is_idempotent(tmp_path):
    settings = make_settings(tmp_path)
    db = open_database(settings)
    db.migrate()  # a second upgrade is a no-op
    assert_schema_matches_models(db)
    assert (settings.data_dir / "verity.db").exists()


def sqlite_schema(path):
    with sqlite3.connect(path) as connection:
        tables = connection.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
        ).fetchall()
        return tables, connection.execute("SELECT version_num FROM alembic_version").fetchall()


def test_a_new_sqlite_database_gets_the_migrated_schema_as_a_copy(tmp_path, monkeypatch):
    """A new SQLite database (every test's, a CLI run's) is given the pages of one this process migrated
    once, instead of replaying the migrations: the same tables, indexes and Alembic version the migrations
    make, still in WAL mode, with the foreign keys enforced; a database that has tables is migrated on."""
    migrated = create_engine(f"sqlite:///{tmp_path / 'migrated.db'}")
    with migrated.begin() as connection:
        session_module.upgrade(connection)
    migrated.dispose()
    open_database(make_settings(tmp_path / "first")).close()  # this process's migrated copy exists now

    def no_migrations(connection):
        raise AssertionError("a new SQLite database was migrated, not copied")

    monkeypatch.setattr(session_module, "upgrade", no_migrations)
    settings = make_settings(tmp_path / "second")
    db = open_database(settings)
    assert_schema_matches_models(db)
    assert sqlite_schema(settings.data_dir / "verity.db") == sqlite_schema(tmp_path / "migrated.db")
    with db.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    with pytest.raises(IntegrityError), db.session() as session:  # a run of no workspace
        session.add(Run(workspace_id="none", question="?"))
    db.migrate()  # it has tables now, at the head of the migrations the kept copy was made by: left as it is
    db.close()


def test_the_migrated_schema_is_kept_in_the_data_dir_for_later_processes(tmp_path, monkeypatch):
    """The first process of a data dir keeps a migrated database in DATA_DIR/cache under the migrations'
    digest; a later process (no in-memory copy of its own) copies a new database from it and finds one
    already at that head current, importing neither Alembic nor the migrations. A database at an older
    migration is migrated on, and one whose tables Alembic never versioned is handed to Alembic."""
    settings = make_settings(tmp_path / "data")
    open_database(settings).close()
    kept = settings.data_dir / "cache" / f"schema-{session_module.migrations_digest()}.sqlite"
    assert kept.is_file()
    with sqlite3.connect(kept) as connection:
        head = connection.execute("SELECT version_num FROM alembic_version").fetchall()
    assert sqlite_schema(kept) == sqlite_schema(settings.data_dir / "verity.db")

    migrated: list[str] = []

    def upgrade(connection):
        migrated.append(str(connection.engine.url))
        from alembic import command
        from alembic.config import Config

        cfg = Config()
        cfg.set_main_option("script_location", str(session_module.MIGRATIONS))
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, "head")

    monkeypatch.setattr(session_module, "upgrade", upgrade)
    monkeypatch.setattr(session_module, "_schema", None)  # a new process: no in-memory copy yet
    (settings.data_dir / "verity.db").unlink()
    for leftover in settings.data_dir.glob("verity.db-*"):
        leftover.unlink()
    db = open_database(settings)  # a new database: the kept copy's pages
    assert migrated == [] and session_module._schema is None
    assert sqlite_schema(settings.data_dir / "verity.db") == sqlite_schema(kept)
    with db.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    db.migrate()  # at the kept copy's head: nothing to do, nothing imported
    assert migrated == []
    with db.engine.begin() as connection:  # an older database: Alembic takes it to the head
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = '0009_store_marker'")
        connection.exec_driver_sql("DROP TABLE pseudonyms")
        connection.exec_driver_sql("DROP TABLE pseudonym_books")
    db.migrate()
    assert len(migrated) == 1
    with sqlite3.connect(settings.data_dir / "verity.db") as connection:
        assert connection.execute("SELECT version_num FROM alembic_version").fetchall() == head
    assert_schema_matches_models(db)
    with db.engine.begin() as connection:  # tables Alembic never versioned: its version is not the head
        connection.exec_driver_sql("DROP TABLE alembic_version")
    with pytest.raises(OperationalError, match="already exists"):  # Alembic creates what is there
        db.migrate()
    assert len(migrated) == 2
    db.close()


def test_postgres_migration_and_round_trip(tmp_path, postgres_url):
    db = open_database(make_settings(tmp_path, database_url=postgres_url))
    assert_schema_matches_models(db)
    with db.session() as session:
        workspace = Workspace(name="销售分析")
        session.add(workspace)
        session.flush()
        session.add(Run(workspace_id=workspace.id, question="Does revenue differ?", state={"rounds": 2}))
    with db.session() as session:
        run = session.query(Run).one()
        assert run.state == {"rounds": 2} and run.workspace.name == "销售分析"
    db.engine.dispose()


def test_processes_starting_together_migrate_postgres_once(tmp_path, postgres_url):
    """App, workers and `verity migrate` may start at the same moment against an empty database:
    the advisory lock lets one migrate while the others wait, so none fails on a half-made schema."""
    import subprocess
    import sys

    from tests.factories import REPO

    code = (
        "from app.config import Settings; from app.db.session import open_database; "
        f"open_database(Settings(_env_file=None, data_dir={str(tmp_path)!r}, database_url={postgres_url!r}))"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stderr=subprocess.PIPE, text=True) for _ in range(4)
    ]
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], errors
    db = open_database(make_settings(tmp_path, database_url=postgres_url))
    with db.engine.connect() as connection:
        assert not compare_metadata(MigrationContext.configure(connection), Base.metadata)
    db.engine.dispose()


def test_processes_starting_together_migrate_one_sqlite_file_once(tmp_path):
    """Servers and workers started together on one new SQLite file (one machine, one data folder):
    one migrates while the others wait at the lock beside the file, so none fails on a schema another
    is making (before the lock all but one stopped: "table ... already exists")."""
    import subprocess
    import sys

    from tests.factories import REPO

    go = tmp_path / "go"
    code = (
        "import time; from pathlib import Path; from app.config import Settings; "
        "from app.db.session import open_database; print('ready', flush=True)\n"
        f"while not Path({str(go)!r}).exists(): time.sleep(0.01)\n"
        f"open_database(Settings(_env_file=None, data_dir={str(tmp_path / 'runtime')!r}))"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    assert [p.stdout.readline().strip() for p in procs] == ["ready"] * 3  # type: ignore[union-attr]
    go.touch()  # all at once, past their imports
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], errors
    db = open_database(make_settings(tmp_path))
    assert_schema_matches_models(db)
    db.engine.dispose()
