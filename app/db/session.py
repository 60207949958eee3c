"""Engine and sessions. The schema is created and upgraded by Alembic migrations."""

from __future__ import annotations

from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Iterator

from sqlalchemy import create_engine, event, text
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings

MIGRATIONS = Path(__file__).parent / "migrations"
MIGRATION_LOCK_KEY = 0x76657269  # "veri": the PostgreSQL advisory lock that serialises migrations


class Database:
    """One engine and session factory per Settings (an app, a CLI run, a test)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        url = settings.sqlalchemy_url
        if url.startswith("sqlite"):
            settings.data_dir.mkdir(parents=True, exist_ok=True)
            self.engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
            event.listen(self.engine, "connect", partial(_sqlite_pragmas, synchronous=settings.sqlite_synchronous))
        else:
            self.engine = create_engine(url, pool_pre_ping=True)
        self.sessionmaker = sessionmaker(self.engine, expire_on_commit=False)

    def migrate(self) -> None:
        """Bring the schema to the newest migration (idempotent)."""
        from alembic import command
        from alembic.config import Config

        cfg = Config()
        cfg.set_main_option("script_location", str(MIGRATIONS))
        with self.engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                # The app, its workers and `verity migrate` may start at once: one migrates, the
                # others wait here and then find the schema at head (released at commit).
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
            cfg.attributes["connection"] = connection
            command.upgrade(cfg, "head")

    @contextmanager
    def session(self) -> Iterator[Session]:
        session = self.sessionmaker()
        try:
            yield session
            session.commit()
        except Exception:
            session.rollback()
            raise
        finally:
            session.close()


def _sqlite_pragmas(dbapi_connection, _record, synchronous: str = "NORMAL") -> None:
    # WAL lets the event stream read while a background run writes. In WAL mode synchronous=NORMAL
    # is still crash-safe for the process (a commit survives the server dying); it skips the fsync
    # of every commit, which the per-step persistence of a run would otherwise pay each time.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA synchronous={'FULL' if synchronous == 'FULL' else 'NORMAL'}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def open_database(settings: Settings) -> Database:
    db = Database(settings)
    db.migrate()
    return db
