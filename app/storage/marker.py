"""The start-up check: is this node's object store the one its database was made with? (issue 26 point 5)

Nodes share nothing but the database and the store. A node started with the wrong store (its own data
folder where a shared one was meant, another bucket, a mistyped prefix) would otherwise run: its uploads
land where no other node looks, and the other nodes find the files its rows name missing. So the store
and the database carry the same random id: the marker object `verity-store.json` at the store's top,
and the one row of `store_marker`. The first start writes both; every later start of a server or a
worker compares them and refuses to start, in plain words, when they differ, when one is missing, or
when the store cannot be reached.

The first start writes the row and the marker in one transaction, the row first: two nodes starting
together on a new database both try to insert row 1, the database makes the second wait until the
first has committed (with its marker written), and the second then finds both and compares them.
"""

from __future__ import annotations

import json
import secrets
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.db.models import StoreMarker, utcnow
from app.storage.backends import ObjectStore, S3Store, StoreUnavailable

MARKER_KEY = "verity-store.json"
MAKING_WAIT_S = 5.0  # how long a node waits for another node that is making the marker and the row


class StoreMismatch(Exception):
    """The node must not start: `str(exc)` is the plain message for the operator."""


@dataclass(frozen=True)
class Marker:
    store_id: str
    created_at: str


def store_place(store: ObjectStore) -> str:
    """Where the store is, in the words an operator configured it with."""
    if isinstance(store, S3Store):
        endpoint = store.client.meta.endpoint_url
        return f"{store.url} at {endpoint}"
    return str(getattr(store, "root", store.kind))


def read_marker(store: ObjectStore) -> Marker | None:
    """The store's marker; None when it has none (or what is there is not a marker Verity wrote)."""
    with tempfile.TemporaryDirectory(prefix="verity-marker-") as folder:
        target = Path(folder) / MARKER_KEY
        if not store.get_file(MARKER_KEY, target):
            return None
        try:
            body = json.loads(target.read_text(encoding="utf-8"))
            return Marker(str(body["store_id"]), str(body.get("created_at", "")))
        except (OSError, ValueError, KeyError, TypeError):
            return None


def write_marker(store: ObjectStore, marker: Marker) -> None:
    with tempfile.TemporaryDirectory(prefix="verity-marker-") as folder:
        source = Path(folder) / MARKER_KEY
        body = {
            "store_id": marker.store_id,
            "created_at": marker.created_at,
            "note": "Verity's store marker: the database this store belongs to holds the same id. Keep it.",
        }
        source.write_text(json.dumps(body, indent=1), encoding="utf-8")
        store.put_file(MARKER_KEY, source)


def check_store(sessions: Callable[[], Session], store: ObjectStore) -> str:
    """Compare the store's marker with the database's row (writing both at the first start). Returns
    what was done ("made" or "matched"); raises StoreMismatch with the operator's message otherwise."""
    place = store_place(store)
    try:
        with sessions() as session, session.begin():
            row = session.get(StoreMarker, 1)
            marker = read_marker(store)
            if row is None and marker is None:
                made = Marker(secrets.token_hex(16), utcnow().isoformat(timespec="seconds"))
                session.add(StoreMarker(id=1, store_id=made.store_id, store_kind=store.kind, store_place=place))
                session.flush()  # the row first: a second node starting now waits here until we commit
                write_marker(store, made)
                return "made"
    except IntegrityError:  # another node made them first, this very moment: compare with its
        pass
    except StoreUnavailable as exc:
        raise StoreMismatch(unreachable(place, exc)) from exc
    deadline = time.monotonic() + MAKING_WAIT_S
    while True:
        try:
            with sessions() as session:
                row = session.get(StoreMarker, 1)
            marker = read_marker(store)
        except StoreUnavailable as exc:
            raise StoreMismatch(unreachable(place, exc)) from exc
        # A marker without a row may be another node's first start between writing the marker and
        # committing the row: give it a moment before taking the store for another database's.
        if row is not None or marker is None or time.monotonic() > deadline:
            return compare(row, marker, place)
        time.sleep(0.2)


def compare(row: StoreMarker | None, marker: Marker | None, place: str) -> str:
    if row is not None and marker is not None and row.store_id == marker.store_id:
        return "matched"
    if row is None and marker is not None:
        raise StoreMismatch(
            f"The file store {place} already belongs to another Verity database (made {marker.created_at}), "
            "not to the database this node is configured with. Check VERITY_DATABASE_URL and VERITY_STORAGE_URL: "
            "every server and worker must use the same database and the same store. To start a new database "
            f"with this store on purpose, delete the object {MARKER_KEY} from the store first."
        )
    made = f"made {row.created_at:%Y-%m-%d %H:%M} UTC with the store {row.store_place}" if row is not None else ""
    if marker is None:
        raise StoreMismatch(
            f"The file store {place} is not the one this database was {made}: it does not hold the marker "
            f"{MARKER_KEY} (a new or emptied store, or this node's own folder where a shared one was meant). "
            "Every server and worker must use the same store: check VERITY_STORAGE_URL (and "
            "VERITY_STORAGE_ENDPOINT_URL), or, with the local folder, that VERITY_DATA_DIR is the shared folder."
        )
    raise StoreMismatch(
        f"The file store {place} belongs to another Verity database: its marker does not match this "
        f"database, which was {made}. Every server and worker must use the same database and the same store: "
        "check VERITY_DATABASE_URL and VERITY_STORAGE_URL."
    )


def unreachable(place: str, exc: BaseException) -> str:
    cause = str(exc).split(": ", 1)[-1] if ": " in str(exc) else str(exc)
    return (
        f"The file store {place} cannot be reached, so this node does not start (it would not find the "
        f"files of the others, nor they its). Check that the store is running and that the address and keys "
        f"(VERITY_STORAGE_URL, VERITY_STORAGE_ENDPOINT_URL, VERITY_STORAGE_ACCESS_KEY_ID) are right. Cause: {cause}"
    )
