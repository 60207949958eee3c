"""Real processes for the tests of more than one node (issue 26): `verity serve`, job-queue workers
(tests/queue_worker.py), an S3-compatible server (moto in server mode), each an OS process of its own
configured only by VERITY_* environment variables, as a deployment's containers are. The broker
(RabbitMQ) and PostgreSQL are the machine's: tests/conftest.py's fixtures find them.

Shared by tests/test_queue.py (a worker killed mid-run) and tests/test_two_nodes.py (two servers and
two workers on one PostgreSQL, one store and one broker); `same_report_on_both` also by
tests/test_storage.py (two in-process nodes on one store).
"""

from __future__ import annotations

import io
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import zipfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr

from app.config import Settings
from app.jobs import LANES, close_brokers, queue_name
from tests.factories import REPO

# the keys every test S3 store is opened with (moto accepts any; a real store would check them)
S3_ACCESS = {"storage_access_key_id": "verity-test", "storage_secret_access_key": "verity-test-secret"}
START_TIMEOUT_S = 120  # four Python processes importing pandas at once on a loaded 2-core machine


def queue_settings(broker_url: str, **more: Any) -> Settings:
    """Settings whose runs go to job-queue workers (run_executor=dramatiq) on queues of the test's own
    (a fresh job_queue_prefix: `delete_queues` removes them after), the workers beating every 0.5 s so a
    killed one is noticed soon."""
    fields: dict[str, Any] = {
        "llm_model": "builtin",
        "run_executor": "dramatiq",
        "broker_url": broker_url,
        "job_queue_prefix": f"verity-test-{secrets.token_hex(4)}",
        "worker_heartbeat_s": 0.5,
        "sse_heartbeat_s": 1.0,
    }
    return Settings(_env_file=None, **(fields | more))


def delete_queues(settings: Settings) -> None:
    """Remove a test's queues (job_queue_prefix) from the broker, dead letters and delays included."""
    import pika

    close_brokers()
    connection = pika.BlockingConnection(pika.URLParameters(settings.broker_url))
    channel = connection.channel()
    for lane in LANES:
        for suffix in ("", ".DQ", ".XQ"):
            channel.queue_delete(queue=queue_name(settings, lane) + suffix)
    connection.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def process_env(settings: Settings, **extra: str) -> dict[str, str]:
    """The environment of a process configured as `settings`: every setting the test chose, as the
    VERITY_* variable a deployment would set; none of this process's own VERITY_* leaks in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERITY_")}
    for name in settings.model_fields_set:
        value = getattr(settings, name)
        if value is None:
            continue
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        env[f"VERITY_{name.upper()}"] = str(value).lower() if isinstance(value, bool) else str(value)
    env.update(extra)
    return env


def _spawn(argv: list[str], env: dict[str, str], log: Path, group: bool = False) -> subprocess.Popen[str]:
    """`group`: the process and its children in a process group of their own, which `stop` signals
    whole (`unshare` passes no SIGTERM on to the process it started)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:  # the child keeps its own descriptor
        process = subprocess.Popen(
            argv, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, text=True, start_new_session=group
        )
    process.group = group  # type: ignore[attr-defined]
    return process


# A process as a container's: PID 1 of a PID namespace of its own, with its own /proc (a container
# runtime does the same). Ending `unshare` (SIGTERM) ends the process with it.
PID_ONE = ("unshare", "--pid", "--fork", "--mount-proc", "--kill-child=SIGTERM")


def pid_namespaces() -> bool:
    """Whether this machine lets the tests start processes as PID 1 (root, or user namespaces)."""
    try:
        done = subprocess.run([*PID_ONE, "sh", "-c", "echo $$"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and done.stdout.strip() == "1"


def launch_worker(settings: Settings, delay_s: float, **extra: str) -> subprocess.Popen[str]:
    """A job-queue worker process (tests/queue_worker.py: the real worker, the built-in analyst slowed
    by `delay_s` before each reply); returns at once: `await_worker` waits for it (`start_workers`: both)."""
    env = process_env(settings, VERITY_TEST_MODEL_DELAY_S=str(delay_s), **extra)
    log = Path(settings.data_dir) / f"worker-{secrets.token_hex(3)}.log"
    process = _spawn([sys.executable, "-m", "tests.queue_worker"], env, log)
    process.log = log  # type: ignore[attr-defined]
    process.settings = settings  # type: ignore[attr-defined]
    return process


def await_worker(*processes: subprocess.Popen[str]) -> None:
    """Wait until every one of the workers is ready. They were launched together and start side by
    side: each worker's start (imports, broker connection) is waited for once, not one after another.
    Ready is what the broker says: each of their queues (both lanes and their delay queues) has as
    many consumers as workers consume it (a worker says "ready" when its consumer threads start,
    before they have connected)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    for process in processes:
        log: Path = process.log  # type: ignore[attr-defined]
        while "ready" not in log.read_text() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert process.poll() is None and "ready" in log.read_text(), log.read_text()
    expected: Counter[str] = Counter(
        queue_name(process.settings, lane) + suffix  # type: ignore[attr-defined]
        for process in processes
        for lane in LANES
        for suffix in ("", ".DQ")
    )
    broker_url = processes[0].settings.broker_url  # type: ignore[attr-defined]
    while (short := consumers_missing(broker_url, expected)) and time.monotonic() < deadline:
        assert all(process.poll() is None for process in processes), [p.log.read_text() for p in processes]  # type: ignore[attr-defined]
        time.sleep(0.05)
    assert not short, f"these queues lack consumers: {short}"


def consumers_missing(broker_url: str, expected: Counter[str]) -> dict[str, int]:
    """The queues (of `expected`, queue name: consumers) that have fewer consumers on the broker than
    expected, with how many they have (0 for one not declared yet)."""
    import pika
    from pika.exceptions import ChannelClosedByBroker

    connection = pika.BlockingConnection(pika.URLParameters(broker_url))
    try:
        missing = {}
        channel = connection.channel()
        for queue, count in expected.items():
            try:
                have = channel.queue_declare(queue=queue, passive=True).method.consumer_count
            except ChannelClosedByBroker:  # not declared yet (404): the broker closed the channel
                have, channel = 0, connection.channel()
            if have < count:
                missing[queue] = have
        return missing
    finally:
        connection.close()


def launch_cli_worker(settings: Settings, **extra: str) -> subprocess.Popen[str]:
    """`verity worker` itself as its own process (run_executor=worker: it takes queued runs from the
    database); returns at once: `await_line(process, "Verity worker")` waits until it is set up."""
    env = process_env(settings, PYTHONPATH=str(REPO), **extra)
    log = Path(settings.data_dir) / f"worker-{secrets.token_hex(3)}.log"
    process = _spawn([sys.executable, "-m", "app.cli", "worker"], env, log)
    process.log = log  # type: ignore[attr-defined]
    return process


def await_line(process: subprocess.Popen[str], text: str) -> None:
    """Wait until the process has written `text` to its log (and is still running)."""
    log: Path = process.log  # type: ignore[attr-defined]
    deadline = time.monotonic() + START_TIMEOUT_S
    while text not in log.read_text() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert process.poll() is None and text in log.read_text(), log.read_text()[-3000:]


def start_workers(count: int, settings: Settings, delay_s: float, **extra: str) -> list[subprocess.Popen[str]]:
    """`count` workers (`launch_worker`), launched at once and ready."""
    workers = [launch_worker(settings, delay_s, **extra) for _ in range(count)]
    await_worker(*workers)
    return workers


def launch_server(settings: Settings, wrap: tuple[str, ...] = (), **extra: str) -> tuple[subprocess.Popen[str], str]:
    """`verity serve` on a free port of 127.0.0.1 (local use: no sign-in), as its own process (under
    `wrap`, e.g. PID_ONE); returns at once with its base URL: `await_server` waits until it answers."""
    port = free_port()
    env = process_env(settings, PYTHONPATH=str(REPO), **extra)
    log = Path(settings.data_dir) / f"server-{port}.log"
    serve = [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    process = _spawn([*wrap, *serve], env, log, group=bool(wrap))
    process.log = log  # type: ignore[attr-defined]
    return process, f"http://127.0.0.1:{port}"


def await_server(process: subprocess.Popen[str], base: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"{base}/healthz", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"the server at {base} did not start: {process.log.read_text()[-3000:]}")  # type: ignore[attr-defined]


def stop(*processes: subprocess.Popen[Any]) -> None:
    """SIGTERM, as `docker stop` sends, to each at once (they shut down side by side); SIGKILL to any
    that has not ended in 40 s."""
    for process in processes:
        if process.poll() is None:
            if getattr(process, "group", False):
                os.killpg(process.pid, signal.SIGTERM)
            else:
                process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=40)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def s3_server(folder: Path) -> Iterator[str]:
    """moto's S3 server as its own process (a real HTTP server speaking the S3 protocol, which boto3
    talks to as it talks to MinIO or AWS); yields its endpoint URL."""
    port = free_port()
    log = folder / "s3.log"
    process = _spawn([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], dict(os.environ), log)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                httpx.get(endpoint, timeout=5)
                break
            except httpx.HTTPError:
                assert process.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        yield endpoint
    finally:
        stop(process)


def new_bucket(endpoint: str, name: str) -> str:
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=S3_ACCESS["storage_access_key_id"],
        aws_secret_access_key=S3_ACCESS["storage_secret_access_key"],
        region_name="us-east-1",
    )
    client.create_bucket(Bucket=name)
    return name


def same_report_on_both(
    a: httpx.Client, b: httpx.Client, ws: str, run_id: str, figures: list[dict[str, Any]]
) -> dict[str, bytes]:
    """A run's figures (its report's `figures`) and its report in every format, downloaded from node A and
    node B: the same bytes on both, each figure a PNG, every figure in the zip bundle and drawn in the PDF.
    Returns the downloads by format."""
    names = [Path(f["path"]).name for f in figures]
    for name in names:
        on_a, on_b = a.get(f"/workspaces/{ws}/figures/{name}"), b.get(f"/workspaces/{ws}/figures/{name}")
        assert on_a.status_code == on_b.status_code == 200 and on_a.content == on_b.content
        assert on_a.content.startswith(b"\x89PNG")
    downloads: dict[str, bytes] = {}
    for fmt in ("html", "md", "zip", "json", "pdf", "docx"):
        from_a = a.get(f"/api/workspaces/{ws}/report.{fmt}", params={"run": run_id})
        from_b = b.get(f"/api/workspaces/{ws}/report.{fmt}", params={"run": run_id})
        assert from_a.status_code == from_b.status_code == 200, (fmt, from_a.text[:200], from_b.text[:200])
        assert from_a.content == from_b.content, fmt
        downloads[fmt] = from_a.content
    with zipfile.ZipFile(io.BytesIO(downloads["zip"])) as bundle:
        assert sorted(n for n in bundle.namelist() if n.startswith("report/figures/")) == sorted(
            f"report/figures/{n}" for n in set(names)
        )
    from pypdf import PdfReader

    assert sum(len(page.images) for page in PdfReader(io.BytesIO(downloads["pdf"])).pages) == len(names)
    return downloads
