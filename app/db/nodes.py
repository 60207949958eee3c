"""Who this node is, and the work it has taken on (issue 26 point 4: nodes are not PIDs).

A node is one start of a Verity process that opens the database: a web server, a `verity worker`,
a CLI command. Its identity is a boot id, a random uuid made at that start, with the host name and
the process id beside it for people reading it. A process id identifies nothing once servers run
in containers on several hosts: each container's process is PID 1, and `os.kill(1, 0)` answers
"alive" on every one of them.

Work that must be done by one node at a time (the background read of a big upload, a report's
number check, a run executed by a server's threads) is claimed as a lease: a row of `leases` keyed
by the work, holding the claimer's boot id and an expiry. The claim is a conditional write that
only one node wins (an UPDATE of an expired row, or the INSERT of a new one, which the primary key
lets only one node make); the holder's keeper thread renews its leases every third of their
lifetime while the work goes on; a node that dies stops renewing, and once the lease has expired
another node may take the work over. Expiry is reckoned from the nodes' clocks (kept by NTP), with
a lifetime far longer than any skew.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, cast

from sqlalchemy import CursorResult, delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.db.models import Lease, utcnow


class Sessions(Protocol):
    """What leases need of a Database (app/db/session.py, which holds this node's Leases)."""

    def session(self) -> AbstractContextManager[Session]: ...


log = logging.getLogger(__name__)

DEFAULT_TTL_S = 30.0
FORGOTTEN_AFTER = timedelta(days=1)  # an expired lease is deleted by the next renewal after this
RECEIVING = "receiving:"  # leases of uploads under way: receiving:<workspace>:<uuid>, detail the file name


@dataclass(frozen=True)
class Node:
    boot: str  # a uuid made when this node started: the identity leases are held by
    host: str
    pid: int  # for people only: never compared

    @classmethod
    def start(cls) -> Node:
        return cls(boot=uuid.uuid4().hex, host=socket.gethostname(), pid=os.getpid())

    @property
    def name(self) -> str:
        """How logs and the `runs.worker` column name it: host, process id and the boot id's start."""
        return f"{self.host}:{self.pid}:{self.boot[:12]}"

    def describe(self) -> dict[str, Any]:
        return {"boot": self.boot, "host": self.host, "pid": self.pid}


class Leases:
    """The leases one node holds in one database, and the thread that keeps them alive."""

    def __init__(self, db: Sessions, node: Node, ttl_s: float = DEFAULT_TTL_S):
        self.db, self.node, self.ttl = db, node, timedelta(seconds=ttl_s)
        self._held: dict[str, threading.Event] = {}  # key -> set when the lease was lost
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._keeper: threading.Thread | None = None

    # --- claiming and letting go -------------------------------------------------------------
    def claim(self, key: str, detail: str = "") -> bool:
        """Take the lease on `key` unless another node holds it unexpired. True: it is ours (also
        when we held it already), until `release` or until it is lost."""
        now = utcnow()
        values = {
            "detail": detail,
            "holder": self.node.boot,
            "holder_name": self.node.name,
            "acquired_at": now,
            "expires_at": now + self.ttl,
        }
        with self.db.session() as session:
            free = or_(Lease.holder == self.node.boot, Lease.expires_at < now)
            result = cast(
                CursorResult[Any], session.execute(update(Lease).where(Lease.key == key, free).values(**values))
            )
            taken = result.rowcount
            if not taken:
                try:
                    session.execute(insert(Lease).values(key=key, **values))
                    session.commit()
                except IntegrityError:  # the row exists and is another node's, or another node just made it
                    session.rollback()
                    return False
        with self._lock:
            self._held[key] = threading.Event()
            self._start_keeper()
        return True

    def release(self, key: str) -> None:
        """The work is done (or given up): the lease goes, so any node may claim it at once."""
        with self._lock:
            self._held.pop(key, None)
        with self.db.session() as session:
            session.execute(delete(Lease).where(Lease.key == key, Lease.holder == self.node.boot))

    def holds(self, key: str) -> bool:
        """We hold it and have not lost it (as far as the last renewal knows)."""
        with self._lock:
            lost = self._held.get(key)
        return lost is not None and not lost.is_set()

    def confirm(self, key: str) -> bool:
        """Asked of the database, before a result is written: the lease is still this node's (no other
        node has taken it over, however long this one stalled). A fence for writes after long work."""
        if not self.holds(key):
            return False
        with self.db.session() as session:
            row = session.get(Lease, key)
            return row is not None and row.holder == self.node.boot

    def holder(self, key: str) -> str | None:
        """The boot id of the node holding an unexpired lease on `key`, or None."""
        with self.db.session() as session:
            return lease_holder(session, key)

    def held_elsewhere(self, key: str) -> bool:
        holder = self.holder(key)
        return holder is not None and holder != self.node.boot

    # --- keeping them ------------------------------------------------------------------------
    def _start_keeper(self) -> None:
        if self._keeper is None or not self._keeper.is_alive():
            self._stop.clear()
            self._keeper = threading.Thread(target=self._keep, name="verity-leases", daemon=True)
            self._keeper.start()

    def _keep(self) -> None:
        last_renewed = utcnow()
        while not self._stop.wait(self.ttl.total_seconds() / 3):
            try:
                self.renew()
                last_renewed = utcnow()
            except Exception:  # a database hiccup: try again at the next beat
                log.exception("node %s: renewing leases failed", self.node.name)
                if utcnow() - last_renewed > self.ttl:  # they may have been taken over by now
                    with self._lock:
                        for lost in self._held.values():
                            lost.set()

    def renew(self) -> list[str]:
        """Push back the expiry of every lease we hold; those another node has taken (ours had
        expired: this node stalled) are marked lost. Returns the keys still ours."""
        with self._lock:
            keys = list(self._held)
        if not keys:
            return []
        now = utcnow()
        with self.db.session() as session:
            mine = (Lease.holder == self.node.boot) & Lease.key.in_(keys)
            session.execute(update(Lease).where(mine).values(expires_at=now + self.ttl))
            kept = set(session.scalars(select(Lease.key).where(mine)))
            # Leases of nodes long dead that no one took over (an upload's mark): free anyway.
            session.execute(delete(Lease).where(Lease.expires_at < now - FORGOTTEN_AFTER))
        with self._lock:
            for key in keys:
                if key not in kept and (lost := self._held.get(key)) is not None:
                    log.warning("node %s: lease %s was taken over by another node", self.node.name, key)
                    lost.set()
        return sorted(kept)

    def stop(self) -> None:
        """At shutdown: the keeper stops and every lease still held is given back, so another node
        takes the work over at once instead of after the expiry."""
        self._stop.set()
        with self._lock:
            keys, self._held = list(self._held), {}
        if keys:
            try:
                with self.db.session() as session:
                    session.execute(delete(Lease).where(Lease.holder == self.node.boot, Lease.key.in_(keys)))
            except Exception:  # the database is gone: the leases expire on their own
                log.warning("node %s: could not give back %d lease(s)", self.node.name, len(keys), exc_info=True)


def lease_holder(session: Session, key: str) -> str | None:
    """The boot id of the node holding an unexpired lease on `key`, or None (in the caller's session)."""
    row = session.get(Lease, key)
    if row is None or _aware(row.expires_at) < utcnow():
        return None
    return row.holder


def details_elsewhere(session: Session, prefix: str) -> list[str]:
    """The details of the unexpired leases whose keys start with `prefix` that other nodes than the
    session's own hold (e.g. the names of files another server is receiving for a workspace)."""
    me = (session.info.get("node") or {}).get("boot")
    rows = session.scalars(
        select(Lease.detail).where(
            Lease.key.startswith(prefix, autoescape=True), Lease.expires_at >= utcnow(), Lease.holder != me
        )
    )
    return list(rows)


def received_elsewhere(session: Session, workspace_id: str) -> list[str]:
    """The names of the files other nodes are receiving for the workspace right now (uploads not
    stored yet: a question asked here waits for them as for this process's own)."""
    return details_elsewhere(session, f"{RECEIVING}{workspace_id}:")


def held_elsewhere(session: Session, key: str) -> bool:
    """Another node than the session's own (Database puts its node in every session's info) holds
    an unexpired lease on `key`."""
    holder = lease_holder(session, key)
    return holder is not None and holder != (session.info.get("node") or {}).get("boot")


def _aware(moment: datetime) -> datetime:
    """SQLite gives naive UTC datetimes back."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
