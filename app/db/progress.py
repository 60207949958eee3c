"""News of runs, pushed to the open progress pages of every node (issue 26 point 3).

A progress page keeps an event stream open (GET /api/runs/{run}/events). The stream used to read
the events table four times a second: 10 open pages cost ~80 PostgreSQL transactions a second,
most of them finding nothing. Now a stream reads when it is told that its run has news:

- Every session of a `Database` notes the runs whose events or status it writes (`after_flush`).
  On PostgreSQL it sends `NOTIFY verity_progress, '<run id>'` in the same transaction, so the
  notice goes out when, and only when, the rows are committed, to every node.
- Each process has one listener per PostgreSQL database: a thread with its own connection that
  LISTENs and wakes the streams of this process that follow the run named (fan-out in memory).
  While it is not connected (the server restarted) the streams fall back to reading on a timer.
- On SQLite (the embedded default: one machine) a commit wakes this process's streams directly.
  Writers in other processes (`verity worker` on the same file) cannot notify: with them the
  streams keep reading on a timer, which on a local file costs no server anything.

The pages of one run on one node share their reads: each ring starts a new generation of the run's
news, and streams woken by the same ring at the same cursor await one read (`shared_read`), so 10
open pages of a run cost one read per news, not ten. Without news the listener rings every run
once per `sse_heartbeat_s` (the streams' keep-alive), again one shared read per run: a status changed
by a bulk UPDATE (a worker's claim, a sweep of silent workers) sends no notice, and is seen then.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from sqlalchemy import Engine, event, inspect, text
from sqlalchemy.engine import URL
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import Event, Run

log = logging.getLogger(__name__)

CHANNEL = "verity_progress"
QUIET_EVENTS = frozenset({"span"})  # trace spans: no page waits for them
RECONNECT_S = (0.5, 1.0, 2.0, 5.0)  # the listener's pauses between tries to reconnect
LISTEN_TICK_S = 1.0  # how often the listener looks up from its socket (to notice it should stop)
T = TypeVar("T")


class Waiter:
    """One event stream's doorbell: rung from any thread, awaited in the stream's event loop."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.loop = asyncio.get_running_loop()
        self.rung = asyncio.Event()

    def ring(self) -> None:
        try:
            self.loop.call_soon_threadsafe(self.rung.set)
        except RuntimeError:  # its loop has closed: the stream is gone
            pass

    async def wait(self, timeout_s: float) -> bool:
        """True when rung within the timeout. The bell is cleared, so a ring after this call
        (even before the stream's next read has finished) is not lost."""
        try:
            await asyncio.wait_for(self.rung.wait(), timeout_s)
            return True
        except TimeoutError:
            return False
        finally:
            self.rung.clear()


class ProgressBus:
    """This process's streams, by run, and (on PostgreSQL) the listener that wakes them."""

    def __init__(self, url: URL, tick_s: float = 10.0) -> None:
        self.url = url
        self.postgres = url.get_backend_name() == "postgresql"
        self.tick_s = tick_s  # how often every followed run is rung without news (the keep-alive)
        self._waiters: dict[str, set[Waiter]] = {}
        self._generation: dict[str, int] = {}  # run -> rings so far
        self._reads: dict[tuple[int, str, int, int], asyncio.Task[Any]] = {}  # (loop, run, cursor, generation)
        self._lock = threading.Lock()
        self._listener: threading.Thread | None = None
        self._stop = threading.Event()
        self.listening = threading.Event()  # the listener is connected and LISTENs
        self.users = 0  # Database objects sharing this bus

    # --- the streams' side ------------------------------------------------------------------
    def subscribe(self, run_id: str) -> Waiter:
        waiter = Waiter(run_id)
        with self._lock:
            self._waiters.setdefault(run_id, set()).add(waiter)
        self.listen()
        return waiter

    def listen(self) -> None:
        """Start the listener (PostgreSQL; idempotent). A web server starts it with the app, so the
        first page does not read on a timer while it connects; workers and the CLI never need it."""
        if self.postgres:
            self._start_listener()

    def unsubscribe(self, waiter: Waiter) -> None:
        with self._lock:
            waiters = self._waiters.get(waiter.run_id)
            if waiters is not None:
                waiters.discard(waiter)
                if not waiters:
                    del self._waiters[waiter.run_id]
                    self._generation.pop(waiter.run_id, None)
                    for key in [k for k in self._reads if k[1] == waiter.run_id]:
                        del self._reads[key]

    def generation(self, run_id: str) -> int:
        with self._lock:
            return self._generation.get(run_id, 0)

    async def shared_read(self, run_id: str, cursor: int, generation: int, read: Callable[[], Awaitable[T]]) -> T:
        """`read()`, or the result of the same read another stream of this run started in this
        generation (after the same ring, so it saw the same news) at the same cursor. The read is a
        task of its own: a page that closes while its read runs does not take it from the others."""
        loop = asyncio.get_running_loop()
        key = (id(loop), run_id, cursor, generation)
        with self._lock:
            task = self._reads.get(key)
            if task is None:
                task = self._reads[key] = loop.create_task(_awaited(read))
                task.add_done_callback(lambda done: self._forget_failed(key, done))
                for old in [k for k in self._reads if k[1] == run_id and k[3] < generation]:
                    del self._reads[old]  # an older generation's reads: no stream asks for them again
        return await asyncio.shield(task)

    def _forget_failed(self, key: tuple[int, str, int, int], task: asyncio.Future[Any]) -> None:
        if task.cancelled() or task.exception() is not None:  # the next stream tries again
            with self._lock:
                if self._reads.get(key) is task:
                    del self._reads[key]

    def pushes(self) -> bool:
        """Whether news reaches this process's streams without them reading on a timer."""
        return self.listening.is_set() if self.postgres else True

    # --- the writers' side ------------------------------------------------------------------
    def ring(self, run_ids: set[str] | list[str]) -> None:
        """The runs have news: a new generation of each, and their streams are woken."""
        with self._lock:
            waiters: list[Waiter] = []
            for run_id in run_ids:
                if run_id in self._waiters:
                    self._generation[run_id] = self._generation.get(run_id, 0) + 1
                    waiters.extend(self._waiters[run_id])
        for waiter in waiters:
            waiter.ring()

    def ring_all(self) -> None:
        with self._lock:
            runs = list(self._waiters)
        self.ring(runs)

    # --- the listener (PostgreSQL) ----------------------------------------------------------
    def _start_listener(self) -> None:
        with self._lock:
            if self._listener is not None and self._listener.is_alive():
                return
            self._stop.clear()
            self._listener = threading.Thread(target=self._listen, name="verity-progress-listener", daemon=True)
            self._listener.start()

    def _listen(self) -> None:
        import psycopg

        conninfo = self.url.set(drivername="postgresql").render_as_string(hide_password=False)
        failures = 0
        while not self._stop.is_set():
            try:
                with psycopg.connect(conninfo, autocommit=True) as connection:
                    connection.execute(f"LISTEN {CHANNEL}")
                    self.listening.set()
                    failures = 0
                    self.ring_all()  # news sent while no one listened: every stream reads once
                    ticked = time.monotonic()
                    while not self._stop.is_set():
                        runs = {n.payload for n in connection.notifies(timeout=LISTEN_TICK_S)}
                        if runs:
                            self.ring(runs)
                        if time.monotonic() - ticked >= self.tick_s:  # the keep-alive, one read per run
                            ticked = time.monotonic()
                            self.ring_all()
            except Exception:  # the server went away: streams read on a timer meanwhile
                if self._stop.is_set():
                    break
                log.warning("progress listener lost its connection; reconnecting", exc_info=failures == 0)
            finally:
                self.listening.clear()
            self.ring_all()
            self._stop.wait(RECONNECT_S[min(failures, len(RECONNECT_S) - 1)])
            failures += 1

    def stop(self) -> None:
        self._stop.set()
        listener = self._listener
        if listener is not None:
            listener.join(timeout=LISTEN_TICK_S + 2)


async def _awaited(read: Callable[[], Awaitable[T]]) -> T:
    return await read()


# One bus per database per process: every app, worker and test Database object on the same
# database shares it (two apps in one test process on one SQLite file see each other's news).
_buses: dict[str, ProgressBus] = {}
_buses_lock = threading.Lock()


def progress_bus(engine: Engine, tick_s: float = 10.0) -> ProgressBus:
    key = engine.url.render_as_string(hide_password=False)
    with _buses_lock:
        bus = _buses.get(key)
        if bus is None:
            bus = _buses[key] = ProgressBus(engine.url, tick_s)
        bus.users += 1
        return bus


def release_bus(bus: ProgressBus) -> None:
    with _buses_lock:
        bus.users -= 1
        if bus.users > 0:
            return
        for key, found in list(_buses.items()):
            if found is bus:
                del _buses[key]
    bus.stop()


# --- the hooks on every session of a Database ------------------------------------------------
def install(factory: sessionmaker[Any], bus: ProgressBus) -> None:
    """Sessions made by `factory` announce the runs they write news of: NOTIFY in the transaction
    on PostgreSQL, and a ring of this process's streams after the commit (both databases)."""
    event.listen(factory, "after_flush", lambda session, _context: _note(session, bus))
    event.listen(factory, "after_commit", lambda session: _rang(session, bus, commit=True))
    event.listen(factory, "after_soft_rollback", lambda session, _previous: _rang(session, bus, commit=False))


def _note(session: Session, bus: ProgressBus) -> None:
    runs: set[str] = set()
    for obj in session.new:
        if isinstance(obj, Event) and obj.kind not in QUIET_EVENTS and obj.run_id:
            runs.add(obj.run_id)
    for obj in session.dirty:
        if isinstance(obj, Run) and inspect(obj).attrs.status.history.has_changes():
            runs.add(obj.id)
    if not runs:
        return
    noted: set[str] = session.info.setdefault("progress_runs", set())
    fresh = runs - noted
    noted |= runs
    if bus.postgres and fresh:
        connection = session.connection()
        for run_id in sorted(fresh):  # sent by the server at commit, and only if it commits
            connection.execute(text("SELECT pg_notify(:channel, :run)"), {"channel": CHANNEL, "run": run_id})


def _rang(session: Session, bus: ProgressBus, commit: bool) -> None:
    runs: set[str] = session.info.pop("progress_runs", set())
    if commit and runs:
        bus.ring(runs)
