"""`verity worker` with run_executor=dramatiq: runs taken from the job queue (app/jobs.py).

Each queue has its own threads (run_workers each), so questions go on while full reports fill
theirs. A run's message is acknowledged when the run has ended; when its worker dies the broker
gives it to another worker, which takes the run over (`take`) and goes on from its recorded
steps: the turn is rebuilt from its messages and the finished tool calls are replayed from their
records, never executed again (app/agent/loop.py finish_open_calls). A failure of the machine
(a lost database) is raised to the queue, which starts the run again after a backoff that doubles;
a run started run_max_attempts times without ending is set aside as failed for good, with a page
that says so (`dead_letter`). Stop requests and heartbeats pass through the database as with the
polling worker (app/worker.py), whose heartbeat this class keeps; it never marks a silent worker's
run interrupted: the broker hands that run over instead.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

from sqlalchemy import select, update

from app.agent import RunRecorder, trace_dir
from app.config import Settings
from app.db.models import Run, utcnow
from app.db.session import rows_changed
from app.jobs import ACTOR, LANES, RUN_TIME_LIMIT_MS, broker_for, queue_name
from app.runs import FINAL_STATUSES, ModelFactory, default_model
from app.web.i18n import t
from app.worker import Worker

log = logging.getLogger(__name__)
TAKEN = "taken"


class WorkerStopping(Exception):
    """A delivery that came while the worker was stopping: raised so the queue gives it to another."""


class QueueWorker(Worker):
    def __init__(self, settings: Settings, model_factory: ModelFactory = default_model, name: str | None = None):
        super().__init__(settings, model_factory, name)
        self.service.retry_faults = True  # a lost database goes back to the queue, not "interrupted"
        self.broker = broker_for(settings)
        self.started = 0
        self.consuming = threading.Event()  # set once both queues are consumed
        self.owns_process = False  # `verity worker`: the process may end to hand its runs over

    def run_forever(self, once: bool = False) -> int:
        """Consume both queues until stopped. Returns how many runs this worker started."""
        import dramatiq

        backoff_ms = int(self.settings.run_retry_backoff_s * 1000)
        for lane in LANES:
            dramatiq.Actor(
                self.run_job,
                broker=self.broker,
                actor_name=ACTOR[lane],
                queue_name=queue_name(self.settings, lane),
                priority=0,
                options={
                    # the database counts a run's attempts (a kill -9 is one too); the queue must not give up first
                    "max_retries": self.settings.run_max_attempts + 1,
                    "min_backoff": backoff_ms,
                    "max_backoff": backoff_ms * 12,
                    "time_limit": RUN_TIME_LIMIT_MS,
                },
            )
        threads = max(self.settings.run_workers, 1)
        # one dramatiq Worker per lane, each adding its own bookkeeping middleware to the shared
        # broker: expected here, so dramatiq's warning about a second one is not shown to operators
        self.broker.logger.addFilter(lambda record: "same type twice" not in record.getMessage())
        consumers = [
            dramatiq.Worker(self.broker, queues={queue_name(self.settings, lane)}, worker_threads=threads)
            for lane in LANES
        ]
        for consumer in consumers:
            consumer.queue_prefetch = threads  # not twice the threads: a busy worker holds no run another could start
        beat = threading.Thread(target=self._heartbeat, name="verity-worker-heartbeat", daemon=True)
        beat.start()
        for consumer in consumers:
            consumer.start()
        self.consuming.set()
        self.mark_alive()
        try:
            self.stop.wait()
        finally:
            self.hand_over_or_stop(consumers)
        return self.started

    def hand_over_or_stop(self, consumers: list[Any]) -> None:
        """`docker stop`, a rolling restart: take no more runs (a delivery now goes back to the
        queue: run_job) and give the ones in flight worker_stop_grace_s to end. A run still going
        then is handed over the way a killed worker's is: the process ends at once (`owns_process`),
        so the broker gives its unacknowledged message to another worker, which goes on from the
        recorded steps, and no step of it runs here once it runs there. Not marked interrupted: it is not."""
        self.stop.set()
        deadline = time.monotonic() + self.settings.worker_stop_grace_s
        while self.active and time.monotonic() < deadline:
            time.sleep(0.1)
        with self._lock:
            left = list(self.active)
        if left:
            log.warning("worker %s: %d run(s) still going; handing them over", self.name, len(left))
            if self.owns_process:  # `verity worker`: end now, as a killed worker does
                print(f"Verity worker {self.name}: {len(left)} run(s) handed over", flush=True)
                logging.shutdown()
                os._exit(0)
            for run_id in left:  # a worker inside another program: its runs stop at their next step, writing no end
                self.service.handed_over.add(run_id)
                if (event := self.service._stops.get(run_id)) is not None:
                    event.set()
        stopping = [threading.Thread(target=consumer.stop, kwargs={"timeout": 5_000}) for consumer in consumers]
        for thread in stopping:  # both lanes at once
            thread.start()
        for thread in stopping:
            thread.join()
        self.service.executor.shutdown(wait=False)

    def run_job(self, run_id: str) -> None:
        """One delivery of a run's message: take the run (over), execute it, or set it aside."""
        if self.stop.is_set():  # stopping: the queue retries it after a backoff, on another worker
            raise WorkerStopping(f"worker {self.name} is stopping; run {run_id} goes back to the queue")
        taken = self.take(run_id)
        if taken != TAKEN:
            log.info("worker %s: run %s not started (%s)", self.name, run_id, taken)
            return
        with self._lock:
            self.active.add(run_id)
            self.service._stops[run_id] = threading.Event()
            self.started += 1
        try:
            self.service.execute(run_id)  # a lost database is raised: the queue retries after a backoff
        finally:
            with self._lock:
                self.active.discard(run_id)
            self.service.handed_over.discard(run_id)

    def take(self, run_id: str) -> str:
        """Make the run ours: a queued one, or a running one whose worker died (the broker gives a
        message to one worker at a time: another delivery means the last holder's connection is
        gone). A run that ended or waits for the user is left alone; one started run_max_attempts
        times already is set aside."""
        with self.db.session() as session:
            run = session.get(Run, run_id)
            if run is None:
                return "gone"
            if run.status in FINAL_STATUSES or run.status == "waiting":
                return run.status
            # a queued run starts afresh (a new question, or one resumed after the user's answer); a
            # running one was left by a worker that died or by a failure of the machine: one more attempt
            attempts = int((run.state or {}).get("attempts", 0)) + 1 if run.status == "running" else 1
            if attempts > self.settings.run_max_attempts:
                self.dead_letter(session, run, attempts - 1)
                return "dead_letter"
            taken = rows_changed(
                session,
                update(Run)
                .where(Run.id == run_id, Run.status.in_(("queued", "running")))
                .values(
                    status="running",
                    worker=self.name,
                    heartbeat_at=utcnow(),
                    state={**(run.state or {}), "attempts": attempts},
                ),
            )
            session.commit()
            if taken and attempts > 1:
                recorder = RunRecorder(session, run.workspace_id, run.id)
                recorder.emit("run_taken_over", {"worker": self.name, "attempt": attempts})
            return TAKEN if taken else "raced"

    def dead_letter(self, session: Any, run: Run, attempts: int) -> None:
        """The run failed for good: the page says it was tried `attempts` times and set aside."""
        run.status = "failed"
        run.error = t("run_dead_letter", run.language, attempts=attempts)
        run.state = {**(run.state or {}), "dead_letter": {"attempts": attempts, "at": utcnow().isoformat()}}
        recorder = RunRecorder(session, run.workspace_id, run.id, trace_dir(self.settings, run.workspace_id, run.id))
        self.service.finish(session, run, recorder)
        session.commit()
        log.warning("worker %s: run %s set aside after %d attempts", self.name, run.id, attempts)

    def healthy(self) -> bool:
        """Taking runs: both queues are consumed and the worker is not stopping."""
        return self.consuming.is_set() and not self.stop.is_set()

    def beat(self) -> None:
        """Mark our runs alive and pass on stop requests (Worker.beat); and stop a run another worker
        has taken over meanwhile (our broker connection dropped and the broker handed its message
        on): it goes on there from its recorded steps, and this worker writes nothing of its end."""
        super().beat()
        with self._lock:
            active = list(self.active)
        if not active:
            return
        with self.db.session() as session:
            lost = session.scalars(select(Run.id).where(Run.id.in_(active), Run.worker != self.name))
            for run_id in lost:
                log.warning("worker %s: run %s was taken over by another worker; stopping here", self.name, run_id)
                self.service.handed_over.add(run_id)
                if (event := self.service._stops.get(run_id)) is not None:
                    event.set()

    def recover_stale(self) -> int:
        """Nothing to do: a dead worker's runs come back through the broker."""
        return 0
