"""Faults of the machine, not of Verity, told plainly: a full disk, a database that went away, text
or numbers the database cannot store. Each becomes an error with a category (API) or a page in the
user's language (the web app's handlers, app/main.py), never a traceback or `internal_error`; runs
and datasets use `fault_of` too (app/runs.py, app/workspaces.py).
"""

from __future__ import annotations

import errno
from dataclasses import dataclass

from sqlalchemy import exc as sa_exc

from app.storage.backends import StoreUnavailable

DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
DISK_FULL_WORDS = (
    "no space left on device",
    "database or disk is full",
    "disk quota exceeded",
    "could not extend file",
    "could not write to file",
)


@dataclass(frozen=True)
class Fault:
    status: int
    category: str
    message_key: str  # an app.web.i18n key: the message in the user's language


DISK_FULL = Fault(507, "disk_full", "error_disk_full")
DATABASE_DOWN = Fault(503, "database_unavailable", "error_database_unavailable")
BAD_VALUE = Fault(400, "invalid_request", "error_bad_value")
STORE_DOWN = Fault(503, "storage_unavailable", "error_storage_unavailable")


def fault_of(exc: BaseException) -> Fault | None:
    """The plain category of an exception that comes from the machine or from input no database can
    hold; None for everything else (a bug, answered as internal_error)."""
    for cause in causes(exc):
        if is_disk_full(cause):
            return DISK_FULL
        if isinstance(cause, StoreUnavailable):  # the object store (app/storage) did not answer: no damage
            return STORE_DOWN
    if isinstance(exc, sa_exc.StatementError):
        original = exc.orig
        if isinstance(exc, sa_exc.DataError) or isinstance(original, (UnicodeError, OverflowError, ValueError)):
            return BAD_VALUE
        if isinstance(exc, sa_exc.OperationalError) or getattr(exc, "connection_invalidated", False):
            return DATABASE_DOWN
    if isinstance(exc, sa_exc.PendingRollbackError) or is_disconnect(exc):
        return DATABASE_DOWN
    if isinstance(exc, (UnicodeEncodeError, OverflowError)):
        return BAD_VALUE
    return None


def causes(exc: BaseException) -> list[BaseException]:
    """The exception, what SQLAlchemy wrapped, and its causes (a short chain)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < 8 and current not in chain:
        chain.append(current)
        current = getattr(current, "orig", None) or current.__cause__ or current.__context__
    return chain


def is_disk_full(exc: BaseException) -> bool:
    if isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS:
        return True
    text = str(exc).lower()
    return (
        isinstance(exc, (OSError, sa_exc.DBAPIError, RuntimeError))
        and any(w in text for w in DISK_FULL_WORDS)
        or type(exc).__name__ in ("DiskFull",)
    )  # psycopg's SQLSTATE 53100


def is_disconnect(exc: BaseException) -> bool:
    """The database connection was lost (a restart, pg_terminate_backend, a network cut)."""
    return any(isinstance(c, sa_exc.DBAPIError) and c.connection_invalidated for c in causes(exc)) or any(
        type(c).__name__ in ("OperationalError", "AdminShutdown", "InterfaceError")
        and type(c).__module__.startswith(("psycopg", "sqlalchemy"))
        for c in causes(exc)
    )
