"""Which job engine hands a run over when its worker dies (issue 26): seconds from kill -9 of the
worker holding a task to the moment another worker starts it again.

    python bench/queue_takeover.py [--task-s 20] [--engines dramatiq-rabbitmq,dramatiq-redis,celery-redis]

For each engine: two worker processes (this script with `--worker`, one thread each, the engine's
at-least-once settings: Dramatiq acks after the actor returns; Celery with `acks_late`,
`task_reject_on_worker_lost`, prefetch 1 and a Redis visibility timeout just over the task's length,
as it must be), one task of `--task-s` seconds sent; once a worker has started it, that worker is
killed with SIGKILL, and the script waits (up to `--wait-s`) for the task to start on the other.
Printed: the takeover time per engine, or "never" within the wait. Each engine uses its own Redis
database / RabbitMQ queue names, emptied first.

Brokers: RabbitMQ at amqp://guest:guest@127.0.0.1:5672/ and Redis at redis://127.0.0.1:6379/.
Needs dramatiq[rabbitmq,redis] and celery[redis] (`pip install -e .[queue,bench]`).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RABBITMQ = os.environ.get("BENCH_RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672/")
REDIS = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379")
REDIS_DB = {"dramatiq-redis": 13, "celery-redis": 14}
QUEUE = "verity-bench-takeover"


# --- the workers (run as `--worker ENGINE NAME LOG`) -------------------------------------------------
def record(log: Path, name: str, what: str) -> None:
    with log.open("a") as handle:
        handle.write(f"{time.time():.3f} {name} {what}\n")


def dramatiq_broker(engine: str) -> Any:
    import dramatiq

    broker: dramatiq.Broker
    if engine == "dramatiq-rabbitmq":
        from dramatiq.brokers.rabbitmq import RabbitmqBroker

        broker = RabbitmqBroker(url=RABBITMQ)
    else:
        from dramatiq.brokers.redis import RedisBroker

        broker = RedisBroker(url=f"{REDIS}/{REDIS_DB[engine]}", namespace=QUEUE)
    dramatiq.set_broker(broker)
    return broker


def dramatiq_worker(engine: str, name: str, log: Path) -> None:
    import dramatiq
    from dramatiq import Worker

    broker = dramatiq_broker(engine)

    @dramatiq.actor(queue_name=QUEUE, max_retries=0, time_limit=3_600_000)
    def long_task(seconds: float) -> None:
        record(log, name, "start")
        time.sleep(seconds)
        record(log, name, "end")

    worker = Worker(broker, worker_threads=1)
    worker.start()
    record(log, name, "ready")
    signal.sigwait({signal.SIGTERM})
    worker.stop()


def celery_app(task_s: float) -> Any:
    from celery import Celery

    app = Celery("bench", broker=f"{REDIS}/{REDIS_DB['celery-redis']}")
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue=QUEUE,
        # Celery's own rule: longer than the longest task, else a running task is delivered twice
        broker_transport_options={"visibility_timeout": int(task_s * 1.5) + 1},
        worker_hijack_root_logger=False,
    )
    return app


def celery_worker(name: str, log: Path, task_s: float) -> None:
    app = celery_app(task_s)

    @app.task(name="long_task")
    def long_task(seconds: float) -> None:
        record(log, name, "start")
        time.sleep(seconds)
        record(log, name, "end")

    record(log, name, "ready")
    app.worker_main(["worker", "--pool=solo", "--concurrency=1", f"--hostname={name}@bench", "--loglevel=WARNING"])


# --- the measurement ---------------------------------------------------------------------------------
def empty(engine: str) -> None:
    if engine == "dramatiq-rabbitmq":
        broker = dramatiq_broker(engine)
        broker.declare_queue(QUEUE)
        broker.flush_all()
        broker.close()
        return
    import redis

    redis.Redis.from_url(f"{REDIS}/{REDIS_DB[engine]}").flushdb()


def send(engine: str, task_s: float) -> None:
    if engine.startswith("dramatiq"):
        import dramatiq

        broker = dramatiq_broker(engine)

        @dramatiq.actor(queue_name=QUEUE, max_retries=0, time_limit=3_600_000)
        def long_task(seconds: float) -> None:  # the sender's declaration: same name and queue
            raise AssertionError("runs in the workers")

        long_task.send(task_s)
        broker.close()
    else:
        celery_app(task_s).send_task("long_task", args=[task_s])


def lines(log: Path) -> list[tuple[float, str, str]]:
    if not log.exists():
        return []
    return [(float(t), n, w) for t, n, w in (line.split() for line in log.read_text().splitlines())]


def measure(engine: str, task_s: float, wait_s: float) -> tuple[float | None, str]:
    empty(engine)
    log = Path(tempfile.mkdtemp(prefix="queue-takeover-")) / "log"
    workers = {
        name: subprocess.Popen(
            [sys.executable, __file__, "--worker", engine, name, str(log), "--task-s", str(task_s)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for name in ("a", "b")
    }
    try:
        deadline = time.monotonic() + 60
        while sum(1 for _, _, w in lines(log) if w == "ready") < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(2.0)  # both consuming
        send(engine, task_s)
        deadline = time.monotonic() + 60
        while not (started := [(t, n) for t, n, w in lines(log) if w == "start"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not started:
            return None, "never started"
        _, holder = started[0]
        time.sleep(2.0)  # mid-task
        killed_at = time.time()
        workers[holder].send_signal(signal.SIGKILL)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            again = [t for t, n, w in lines(log) if w == "start" and n != holder]
            if again:
                return again[0] - killed_at, ""
            time.sleep(0.05)
        return None, f"not restarted within {wait_s:.0f} s"
    finally:
        for process in workers.values():
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
            process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engines", default="dramatiq-rabbitmq,dramatiq-redis,celery-redis")
    parser.add_argument("--task-s", type=float, default=20.0)
    parser.add_argument("--wait-s", type=float, default=150.0)
    parser.add_argument("--worker", nargs=3, metavar=("ENGINE", "NAME", "LOG"))
    args = parser.parse_args()
    if args.worker:
        engine, name, log = args.worker
        if engine.startswith("dramatiq"):
            dramatiq_worker(engine, name, Path(log))
        else:
            celery_worker(name, Path(log), args.task_s)
        return
    print(f"kill -9 of the worker holding a {args.task_s:.0f} s task; seconds until the other worker starts it")
    print(f"{'engine':<20} {'takeover':>10}  note")
    for engine in args.engines.split(","):
        seconds, note = measure(engine, args.task_s, args.wait_s)
        shown = f"{seconds:.1f}s" if seconds is not None else "never"
        print(f"{engine:<20} {shown:>10}  {note}", flush=True)


if __name__ == "__main__":
    main()
