"""Commits that survive a busy SQLite file and a lost PostgreSQL connection.

A commit can fail for reasons that say nothing about the data: SQLite's single writer lock was held
longer than the busy timeout ("database is locked"), or the PostgreSQL connection was cut (a
restart, `pg_terminate_backend`, a network drop). `RetryingSession.commit` then rolls back, waits a
little, and writes the same unit of work again on a fresh connection (the pool pings it first):
the rows added, the attributes changed and the rows deleted since the last commit, as recorded by
the `before_flush` hook below. Anything else, and a fault that outlasts `db_retry_s`, is raised.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Integer, event, inspect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, make_transient

log = logging.getLogger(__name__)

BUSY_WORDS = ("database is locked", "database table is locked", "database is busy")


@dataclass
class UnitOfWork:
    """What this session wrote since its last commit, so it can be written again."""

    added: list[Any] = field(default_factory=list)
    changed: dict[int, tuple[Any, dict[str, Any]]] = field(default_factory=dict)
    deleted: list[Any] = field(default_factory=list)


def retriable(exc: BaseException) -> bool:
    """A lost connection or a busy SQLite file: the same write can succeed on a second try."""
    if not isinstance(exc, DBAPIError):
        return False
    return exc.connection_invalidated or any(word in str(exc.orig).lower() for word in BUSY_WORDS)


class RetryingSession(Session):
    def commit(self) -> None:
        deadline, pause = time.monotonic() + self.info.get("retry_s", 30.0), 0.05
        while True:
            work = self.info.setdefault("unit_of_work", UnitOfWork())  # filled by the flush hook
            try:
                super().commit()
                return
            except DBAPIError as exc:
                if not retriable(exc) or time.monotonic() + pause > deadline:
                    raise
                log.warning("commit failed (%s); writing it again in %.2f s", str(exc.orig).splitlines()[0], pause)
                super().rollback()
                time.sleep(pause)
                pause = min(pause * 2, 2.0)
                replay(self, work)


def replay(session: Session, work: UnitOfWork) -> None:
    """Put a rolled-back unit of work back into the session."""
    for obj in work.added:
        if inspect(obj).persistent:  # it was committed after all
            continue
        if not inspect(obj).transient:
            make_transient(obj)
        for column in inspect(obj).mapper.primary_key:  # database-made ids are made again
            if isinstance(column.type, Integer) and column.autoincrement in (True, "auto") and column.default is None:
                setattr(obj, inspect(obj).mapper.get_property_by_column(column).key, None)
        session.add(obj)
    for obj, values in work.changed.values():
        if inspect(obj).persistent:
            for key, value in values.items():
                setattr(obj, key, value)
    for obj in work.deleted:
        if inspect(obj).persistent:
            session.delete(obj)


@event.listens_for(RetryingSession, "before_flush")
def _record(session: Session, _context, _instances) -> None:
    work = session.info.setdefault("unit_of_work", UnitOfWork())
    seen = {id(obj) for obj in work.added}
    work.added += [obj for obj in session.new if id(obj) not in seen]
    for obj in session.dirty:
        state = inspect(obj)
        values = {
            prop.key: state.attrs[prop.key].value
            for prop in state.mapper.column_attrs
            if state.attrs[prop.key].history.has_changes()
        }
        if values:
            work.changed.setdefault(id(obj), (obj, {}))[1].update(values)
    gone = {id(obj) for obj in work.deleted}
    work.deleted += [obj for obj in session.deleted if id(obj) not in gone]


@event.listens_for(RetryingSession, "after_commit")
@event.listens_for(RetryingSession, "after_soft_rollback")
def _forget(session: Session, *_args) -> None:
    session.info.pop("unit_of_work", None)
