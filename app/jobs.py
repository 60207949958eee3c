"""Runs on a job queue (run_executor=dramatiq): the web process sends a run to a broker, `verity
worker` processes execute it (app/job_worker.py).

Why Dramatiq on RabbitMQ: measured by bench/queue_takeover.py (kill -9 of the worker holding a 20 s
task), RabbitMQ gives the task to the other worker the moment the dead one's connection drops,
Celery on Redis with acks_late only after its visibility timeout (86 s there, and that timeout must
exceed the longest run), Dramatiq on Redis not within 150 s, procrastinate on PostgreSQL only once a stalled-job sweeper retries it. A message is
acknowledged when its run has ended, so a run is never lost with its worker. Redis works as the
broker too (broker_url redis://…), without the prompt hand-over.

Two queues, each with its own threads in every worker, so a question is never stuck behind full
reports: a question the intent rules read as a deep analysis (a full report, modelling) goes to
`verity-reports`, every other to `verity-questions` (job_queue_prefix names them).

RabbitMQ closes a delivery that is not acknowledged within its `consumer_timeout` (30 minutes by
default) and hands it to another worker: set it above the longest run (turn_wall_time_deep_s plus
the file wait) in rabbitmq.conf, e.g. `consumer_timeout = 7200000`.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from app.agent import classify
from app.config import Settings

if TYPE_CHECKING:
    import dramatiq

QUESTIONS, REPORTS = "questions", "reports"  # the two lanes
LANES = (QUESTIONS, REPORTS)
ACTOR = {QUESTIONS: "verity_answer_question", REPORTS: "verity_write_report"}  # one actor per lane
RUN_TIME_LIMIT_MS = 24 * 3600 * 1000  # a run is bounded by its own wall-time budget, not by the queue's

_brokers: dict[str, dramatiq.Broker] = {}
_lock = threading.Lock()


def lane_of(question: str) -> str:
    """The lane a question goes to: full reports and modelling (the intent rules' deep tier, read
    without asking a model) apart from everything else."""
    return REPORTS if classify(question, use_model=False).tier == "deep" else QUESTIONS


def queue_name(settings: Settings, lane: str) -> str:
    return f"{settings.job_queue_prefix}-{lane}"


def broker_for(settings: Settings) -> dramatiq.Broker:
    """This process's broker for `broker_url`, made once (its connections are per thread)."""
    with _lock:
        if (broker := _brokers.get(settings.broker_url)) is None:
            broker = _brokers[settings.broker_url] = make_broker(settings.broker_url)
        for lane in LANES:
            broker.declare_queue(queue_name(settings, lane))
        return broker


def make_broker(url: str) -> dramatiq.Broker:

    broker: dramatiq.Broker  # the `queue` extra: only a deployment with run_executor=dramatiq needs it
    if url.startswith("redis"):
        from dramatiq.brokers.redis import RedisBroker

        broker = RedisBroker(url=url, namespace="verity")
    else:
        from dramatiq.brokers.rabbitmq import RabbitmqBroker

        broker = RabbitmqBroker(url=url)
    return broker


def send_run(settings: Settings, run_id: str, question: str) -> str:
    """Queue a run for the workers; the lane it went to."""
    import dramatiq

    lane = lane_of(question)
    message: dramatiq.Message = dramatiq.Message(
        queue_name=queue_name(settings, lane), actor_name=ACTOR[lane], args=(run_id,), kwargs={}, options={}
    )
    broker_for(settings).enqueue(message)
    return lane


def close_brokers() -> None:
    with _lock:
        for broker in _brokers.values():
            broker.close()
        _brokers.clear()
