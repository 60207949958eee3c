"""`verity worker`: runs executed by their own processes (run_executor=worker; DESIGN.md's
"app + worker + postgres").

The web process only records a run as queued. Each worker takes queued runs from the database
with a conditional update (`queued` → `running` where it is still queued), so two workers never
take the same run, on SQLite or PostgreSQL, without a broker. While a run executes, its worker
marks it alive (`heartbeat_at`) and looks for a stop request from the web (`stop_requested`).
A run whose worker went silent for `worker_stale_s` is marked interrupted, as after a crash,
and can be continued: every worker looks for such runs when it starts and every half of that time. Progress reaches the page as always: through the events table.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta

from sqlalchemy import select, update

from app.config import Settings
from app.db.models import Run, utcnow
from app.db.session import open_database, rows_changed
from app.runs import ModelFactory, RunService, default_model
from app.worker_health import alive_file

log = logging.getLogger(__name__)


class Worker:
    def __init__(self, settings: Settings, model_factory: ModelFactory = default_model, name: str | None = None):
        self.settings = settings
        self.db = open_database(settings)
        self.service = RunService(self.db, settings, model_factory)
        self.name = name or self.db.node.name  # a boot id, not a PID: containers are all PID 1
        self.slots = threading.Semaphore(settings.run_workers)
        self.active: set[str] = set()
        self.stop = threading.Event()
        self._lock = threading.Lock()

    # --- taking work -----------------------------------------------------------------------
    def claim(self) -> str | None:
        """The oldest queued run, now ours; None when there is none (or others took them all)."""
        with self.db.session() as session:
            queued = session.scalars(select(Run.id).where(Run.status == "queued").order_by(Run.created_at).limit(10))
            for run_id in list(queued):
                taken = rows_changed(
                    session,
                    update(Run)
                    .where(Run.id == run_id, Run.status == "queued")
                    .values(status="running", worker=self.name, heartbeat_at=utcnow(), stop_requested=False),
                )
                if taken:
                    session.commit()
                    return run_id
        return None

    def run_forever(self, once: bool = False) -> int:
        """Execute queued runs until stopped (`once`: until none is left). Returns how many ran."""
        self.recover_stale()
        self.mark_alive()  # well from the start (the healthcheck need not wait for the first beat)
        started, beat = 0, threading.Thread(target=self._heartbeat, name="verity-worker-heartbeat", daemon=True)
        beat.start()
        try:
            while not self.stop.is_set():
                if not self.slots.acquire(timeout=self.settings.worker_poll_s):
                    continue
                run_id = self.claim()
                if run_id is None:
                    self.slots.release()
                    if once and not self.active:
                        break
                    self.stop.wait(self.settings.worker_poll_s)
                    continue
                started += 1
                with self._lock:
                    self.active.add(run_id)
                    self.service._stops[run_id] = threading.Event()
                self.service.executor.submit(self._execute, run_id)
        finally:
            self.stop.set()
            self.service.shutdown()
            beat.join(timeout=self.settings.worker_heartbeat_s + 5)
            self.db.close()
        return started

    def _execute(self, run_id: str) -> None:
        try:
            self.service.execute(run_id)
        except Exception:  # noqa: BLE001 - execute records its own failures; this is a last resort
            log.exception("worker %s: run %s", self.name, run_id)
        finally:
            with self._lock:
                self.active.discard(run_id)
            self.slots.release()

    # --- staying in touch ------------------------------------------------------------------
    def _heartbeat(self) -> None:
        """Beat; and now and then look for runs another worker left behind when it died."""
        last_sweep = time.monotonic()
        while not self.stop.wait(self.settings.worker_heartbeat_s):
            try:
                self.beat()
                self.mark_alive()
                if time.monotonic() - last_sweep >= self.settings.worker_stale_s / 2:
                    last_sweep = time.monotonic()
                    if recovered := self.recover_stale():
                        log.warning("worker %s: %d run(s) of a silent worker marked interrupted", self.name, recovered)
            except Exception:  # noqa: BLE001 - a database hiccup must not kill the runs
                log.exception("worker %s: heartbeat failed", self.name)

    def healthy(self) -> bool:
        """Whether this worker takes runs (the job queue's worker: its consumers are running)."""
        return not self.stop.is_set()

    def mark_alive(self) -> None:
        """Touch ALIVE_FILE when the database answers and the worker takes runs: the container's
        healthcheck (`verity worker --alive`) reads its age. A worker stuck or cut off from the
        database stops touching it and is reported unhealthy (then restarted by its orchestrator)."""
        try:
            with self.db.session() as session:
                session.execute(select(1))
        except Exception:  # noqa: BLE001 - the database is away: not alive, said by the file's age
            log.warning("worker %s: the database does not answer", self.name)
            return
        if self.healthy():
            alive_file(self.settings).touch()

    def beat(self) -> None:
        """Mark our runs alive, and pass on the stop requests the web recorded for them."""
        with self._lock:
            active = list(self.active)
        if not active:
            return
        with self.db.session() as session:
            session.execute(
                update(Run).where(Run.id.in_(active), Run.worker == self.name).values(heartbeat_at=utcnow())
            )
            stopped = session.scalars(select(Run.id).where(Run.id.in_(active), Run.stop_requested.is_(True)))
            for run_id in stopped:
                if (event := self.service._stops.get(run_id)) is not None:
                    event.set()

    def recover_stale(self) -> int:
        """Runs whose worker stopped marking them alive (it crashed or was killed) end interrupted."""
        limit = utcnow() - timedelta(seconds=self.settings.worker_stale_s)
        with self.db.session() as session:
            stale = (Run.status == "running") & ((Run.heartbeat_at.is_(None)) | (Run.heartbeat_at < limit))
            return rows_changed(session, update(Run).where(stale).values(status="interrupted", finished_at=utcnow()))
