"""The schema comes from Alembic migrations, which must match the models, on SQLite and PostgreSQL."""

import secrets

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, text

from app.db.models import Base, Run, Workspace
from app.db.session import open_database
from tests.factories import make_settings

PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


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


@pytest.fixture
def postgres_url():
    try:
        admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            name = f"verity_test_{secrets.token_hex(4)}"
            connection.execute(text(f"CREATE DATABASE {name}"))
    except Exception as exc:  # no server on this machine
        pytest.skip(f"PostgreSQL not reachable: {type(exc).__name__}")
    yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    with admin.connect() as connection:
        connection.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
    admin.dispose()


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
