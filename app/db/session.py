"""Engine and sessions. The schema is created and upgraded by Alembic migrations."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache, partial
from pathlib import Path
from typing import Any, cast

from sqlalchemy import Connection, CursorResult, Delete, Engine, Update, create_engine, event, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from app.config import Settings
from app.db.nodes import Leases, Node
from app.db.progress import install as announce_progress
from app.db.progress import progress_bus, release_bus
from app.db.retry import RetryingSession

MIGRATIONS = Path(__file__).parent / "migrations"
log = logging.getLogger(__name__)
MIGRATION_LOCK_KEY = 0x76657269  # "veri": the PostgreSQL advisory lock that serialises migrations


# Threads of the web server that may each hold a database session at once: the request threads
# (anyio's default limit for sync views and dependencies, and the event streams' reads).
SERVER_THREADS = 40


def rows_changed(session: Session, statement: Update | Delete) -> int:
    """Execute an UPDATE or DELETE and return how many rows it changed. Session.execute is typed
    to return a Result; for these statements it is a CursorResult, which has the count."""
    return cast(CursorResult[Any], session.execute(statement)).rowcount


def pool_size(settings: Settings) -> int:
    """Connections kept: one per thread that may hold a session at once (request threads, run
    threads, the background reader, the heartbeat), so no request waits for a connection."""
    return settings.db_pool_size or SERVER_THREADS + settings.run_workers + 4


def postgres_share(engine: Engine, processes: int) -> int | None:
    """This process's share of the server's connections, or None when it cannot be read."""
    try:
        with engine.connect() as connection:
            total = int(connection.execute(text("SHOW max_connections")).scalar_one())
            reserved = int(connection.execute(text("SHOW superuser_reserved_connections")).scalar_one())
    except DBAPIError:  # the server is down at start: the retrying sessions deal with that later
        return None
    return max(4, (total - reserved) // max(1, processes))


class Database:
    """One engine and session factory per Settings (an app, a CLI run, a test)."""

    def __init__(self, settings: Settings, node: Node | None = None):
        self.settings = settings
        # This start of a process (app/db/nodes.py): what its leases and its runs are held by.
        self.node = node or Node.start()
        self.leases = Leases(self, self.node, settings.lease_ttl_s)
        url = settings.sqlalchemy_url
        pool = {"pool_size": pool_size(settings), "max_overflow": 10, "pool_timeout": 60}
        if url.startswith("sqlite"):
            settings.data_dir.mkdir(parents=True, exist_ok=True)
            # `timeout` is SQLite's busy timeout: a writer waits that long for the one write lock.
            self.engine = create_engine(
                url, connect_args={"check_same_thread": False, "timeout": settings.sqlite_busy_timeout_s}, **pool
            )
            event.listen(self.engine, "connect", partial(_sqlite_pragmas, synchronous=settings.sqlite_synchronous))
            WriteGate(settings.sqlite_busy_timeout_s).install(self.engine)
        else:
            # pre_ping: a connection the server dropped (a restart, pg_terminate_backend) is replaced
            # when it is taken from the pool, instead of failing the next statement.
            self.engine = create_engine(url, pool_pre_ping=True, **pool)
            ceiling = postgres_share(self.engine, settings.db_processes)
            if ceiling and pool["pool_size"] + pool["max_overflow"] > ceiling:
                # The server refuses connections past max_connections ("too many clients"); a
                # smaller pool makes the extra threads wait for a connection instead.
                overflow = min(pool["max_overflow"], ceiling // 4)
                self.engine.dispose()
                self.engine = create_engine(
                    url,
                    pool_pre_ping=True,
                    pool_size=ceiling - overflow,
                    max_overflow=overflow,
                    pool_timeout=pool["pool_timeout"],
                )
        self.sessionmaker = sessionmaker(
            self.engine,
            class_=RetryingSession,
            expire_on_commit=False,
            info={"retry_s": settings.db_retry_s, "node": self.node.describe()},
        )
        # News of runs reaches the progress pages of every node (app/db/progress.py).
        self.progress = progress_bus(self.engine, settings.sse_heartbeat_s)
        announce_progress(self.sessionmaker, self.progress)

    def migrate(self) -> None:
        """Bring the schema to the newest migration (idempotent). A new, empty SQLite database gets
        the schema as a copy of a migrated one (sqlite_schema_copy); a SQLite database already at the
        migrations' head, as a copy kept in DATA_DIR/cache says it is, is left as it is (kept_schema)."""
        with sqlite_migration_lock(self.engine):
            if self.engine.dialect.name == "sqlite" and sqlite_schema_copy(self.engine, self.settings.data_dir):
                return
            with self.engine.begin() as connection:
                if connection.dialect.name == "postgresql":
                    # The app, its workers and `verity migrate` may start at once: one migrates, the
                    # others wait here and then find the schema at head (released at commit).
                    connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
                upgrade(connection)

    def close(self) -> None:
        """At shutdown: leases given back (another node takes their work over at once), then the
        connections closed."""
        self.leases.stop()
        release_bus(self.progress)
        self.engine.dispose()

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


def upgrade(connection: Connection) -> None:
    """Run the Alembic migrations up to the newest on an open connection, in its transaction."""
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = connection
    command.upgrade(cfg, "head")


_schema_lock = threading.Lock()
_schema: Engine | None = None


def _migrated_schema() -> Engine:
    """An in-memory SQLite database this process brought to the newest migration, once (its one
    connection stays in the engine's pool: the database lives as long as the engine)."""
    global _schema
    with _schema_lock:
        if _schema is None:
            template = create_engine("sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False})
            with template.begin() as connection:
                upgrade(connection)
            _schema = template
        return _schema


@cache
def migrations_digest() -> str:
    """A digest of the migration scripts (their names and bytes): the schema they make, and their head,
    are the same wherever it is the same."""
    digest = hashlib.sha256()
    for path in sorted(p for p in MIGRATIONS.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(MIGRATIONS).as_posix().encode("utf-8") + b"\x00" + path.read_bytes() + b"\x00")
    return digest.hexdigest()[:20]


def kept_schema(data_dir: Path) -> Path | None:
    """A SQLite database at the migrations' head, kept in DATA_DIR/cache under the migrations' digest:
    made once (the in-memory copy this process migrated, written whole to a new file and renamed into
    place: another process reads the old file or none), then read by every later process instead of
    importing Alembic and replaying the migrations (~0.2 s of CPU each `verity` command). A copy of
    older migrations is never read (another name) and is removed. None where the cache cannot be
    written (the in-memory copy serves)."""
    folder = Path(data_dir) / "cache"
    path = folder / f"schema-{migrations_digest()}.sqlite"
    if path.is_file():
        return path
    partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        template = _migrated_schema()
        target = sqlite3.connect(partial)
        try:
            with _schema_lock, template.connect() as source:
                cast(sqlite3.Connection, source.connection.driver_connection).backup(target)
        finally:
            target.close()
        os.replace(partial, path)
        for old in folder.glob("schema-*.sqlite"):  # the schema of earlier migrations: never read again
            if old != path:
                old.unlink(missing_ok=True)
    except (OSError, sqlite3.Error) as error:  # a read-only or full data dir: the in-memory copy serves
        log.warning("migrated schema not kept in %s (%s)", folder, error)
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)  # a full disk leaves no half-written copy behind
        return None
    return path


def _versions(connection: sqlite3.Connection) -> set[str] | None:
    try:
        return {str(row[0]) for row in connection.execute("SELECT version_num FROM alembic_version")}
    except sqlite3.Error:  # no alembic_version table (a database Alembic never ran on)
        return None


def sqlite_schema_copy(engine: Engine, data_dir: Path | None = None) -> bool:
    """Give a new SQLite database (no table yet) the newest schema by copying the pages of a migrated
    database (SQLite's backup API), and say whether it is at the newest schema now. Replaying every
    migration on each new database cost ~0.1 s of CPU and a commit per table: every test's database is
    a new one, and so is a CLI run's. What the copy holds is what the migrations made (alembic_version
    included), so a later start migrates on from it as from any other database. With `data_dir`, the
    copy is the one kept in its cache (kept_schema), and a database that already has tables is at the
    newest schema when its Alembic version is the kept copy's (the migrations would find nothing to
    do): neither Alembic nor the migrations are imported."""
    kept = kept_schema(data_dir) if data_dir is not None else None
    with engine.connect() as connection:
        raw = cast(sqlite3.Connection, connection.connection.driver_connection)
        empty = raw.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)
        if kept is not None:
            try:
                copy = sqlite3.connect(f"{kept.resolve().as_uri()}?mode=ro", uri=True)
                try:
                    head = _versions(copy)
                    if not empty:
                        return head is not None and _versions(raw) == head
                    copy.backup(raw)  # in one step: all of it or nothing
                    return True
                finally:
                    copy.close()
            except sqlite3.Error:  # an unreadable copy, or a database it cannot go into: the in-memory one
                pass
        if not empty:
            return False
        template = _migrated_schema()
        try:
            with _schema_lock, template.connect() as source:
                # in one step: all of it or nothing
                cast(sqlite3.Connection, source.connection.driver_connection).backup(raw)
        except sqlite3.Error:  # a database the copy cannot go into (another page size): migrate it
            return False
    return True


@contextmanager
def sqlite_migration_lock(engine: Engine) -> Iterator[None]:
    """Processes starting together on one SQLite file (servers, workers, `verity migrate`) migrate one
    after another, as PostgreSQL's advisory lock makes them: an exclusive lock on a file beside the
    database, held while migrating. SQLite's own lock cannot do it: Python's sqlite3 commits each
    CREATE TABLE by itself, so two processes that both found no schema both created it, and all but
    one stopped ("table ... already exists"). The others then find the schema at head. Nothing for
    another database, or for one in memory."""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:" or database.startswith("file:"):
        yield
        return
    path = Path(database)
    with open(path.with_name(f"{path.name}.migrate-lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process ends
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class WriteGate:
    """SQLite has one writer at a time. Writers of this process queue on a lock here and start
    the moment the previous one commits, instead of polling the file lock in SQLite's busy handler
    (which backs off to 100 ms sleeps: with 50 users and 40 request threads, waits piled up past the
    busy timeout). Other processes (`verity worker`) still meet at SQLite's lock. A writer that waits
    longer than the busy timeout goes ahead anyway (SQLite then decides), so nothing waits forever."""

    WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")

    def __init__(self, timeout_s: float):
        self.lock, self.timeout_s = threading.Lock(), timeout_s

    def install(self, engine) -> None:
        event.listen(engine, "before_cursor_execute", self.before_statement)
        event.listen(engine, "commit", self.release)
        event.listen(engine, "rollback", self.release)
        event.listen(engine.pool, "checkin", lambda _dbapi, record: self.release_info(record.info))

    def before_statement(self, connection, _cursor, statement: str, *_args) -> None:
        if "write_gate" not in connection.info and statement.lstrip()[:7].upper().startswith(self.WRITES):
            connection.info["write_gate"] = self.lock.acquire(timeout=self.timeout_s)

    def release(self, connection) -> None:
        self.release_info(connection.info)

    def release_info(self, info: dict) -> None:
        if info.pop("write_gate", False):
            self.lock.release()


def _sqlite_pragmas(dbapi_connection, _record, synchronous: str = "NORMAL") -> None:
    # WAL lets the event stream read while a background run writes. In WAL mode synchronous=NORMAL
    # is still crash-safe for the process (a commit survives the server dying); it skips the fsync
    # of every commit, which the per-step persistence of a run would otherwise pay each time.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA synchronous={'FULL' if synchronous == 'FULL' else 'NORMAL'}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def open_database(settings: Settings, node: Node | None = None) -> Database:
    db = Database(settings, node)
    db.migrate()
    return db
