"""Many users at once: errors (there must be none), page latency and run time, with runs in the
server's threads vs in `verity worker` processes, on SQLite (default) or PostgreSQL; and on two
nodes (issue 26): two app servers and job-queue workers sharing only PostgreSQL, an S3 store and
RabbitMQ.

    python bench/load.py [--users 50] [--workers 2] [--database-url postgresql+psycopg://...]
    python bench/load.py --modes two-nodes [--database-url ADMIN_URL] [--broker-url amqp://...]
    python bench/load.py --base-urls http://a:8000,http://b:8000   # a running deployment
    python bench/load.py --base-urls URL,URL --tokens tokens.txt     # ... with sign-in on

Each mode starts a real server (`python -m app.cli serve`, a temporary data folder, the built-in
analyst). Every user, as a browser would: creates a workspace, uploads
data/samples/retail_sales.xlsx, opens the workspace page, asks a question, follows the run's event
stream to its end, reads the run and opens the page again. Meanwhile a probe opens a workspace page
(server-rendered, reads the database) every 100 ms. Printed per mode: failed requests (any 5xx,
any unexpected 4xx, timeouts, broken streams), runs that did not end `done`, the page latency idle
and under load (p50/p95, and the ratio to idle in the same run), and the run time (upload to
answer) p50/p95, and the question time (asked to `run_finished` on the stream) p50/p95. Runs in the
server's threads share its interpreter (and GIL) with the pages; worker processes do not.

two-nodes: this script starts the topology of tests/test_two_nodes.py with the real `verity worker`:
a fresh PostgreSQL database (made through `--database-url`, default the local server's postgres
database, dropped afterwards), moto's S3 server as the store (`python -m moto.server`; MinIO with
--base-urls), queues of its own on `--broker-url`, two `verity serve` and `--workers` `verity worker`
(run_executor=dramatiq), every process with a data folder (cache) of its own. Each user uploads on
one node and asks on the other, follows the run's progress on the node it uploaded to and reads the
answer on the node it asked; users alternate which node is which. --base-urls does the same against
servers already running (a docker-compose deployment behind no proxy, or the proxy twice). A deployment
with sign-in on (docker-compose.yml's) needs `--tokens FILE`, API tokens one a line (`verity users add` and
`verity users token` on an app server): user i sends token i (round robin), the probes the first. Give
each user an account of its own: one account may have only VERITY_MAX_ACTIVE_RUNS_PER_USER (3) runs at once.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
POSTGRES_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
RABBITMQ = "amqp://guest:guest@127.0.0.1:5672/"
S3_KEYS = {"VERITY_STORAGE_ACCESS_KEY_ID": "verity-bench", "VERITY_STORAGE_SECRET_ACCESS_KEY": "verity-bench-secret"}
LANES = ("questions", "reports")  # app/jobs.py: one queue per lane
SAMPLE = REPO / "data" / "samples" / "retail_sales.xlsx"
QUESTION = "Does revenue differ by region?"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(mode: str, workers: int, database_url: str | None) -> tuple[str, list[subprocess.Popen], Path]:
    data = Path(tempfile.mkdtemp(prefix=f"verity-load-{mode}-"))
    env = {
        **os.environ,
        "VERITY_DATA_DIR": str(data),
        "VERITY_LLM_MODEL": "builtin",
        "VERITY_RUN_EXECUTOR": mode,
        "VERITY_WORKER_POLL_S": "0.1",
        "VERITY_RUN_WORKERS": "2",
        "PYTHONPATH": str(REPO),
    }
    if database_url:
        env["VERITY_DATABASE_URL"] = database_url
    port = free_port()
    log = (data / "server.log").open("w")
    quiet = dict(cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    processes = [subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(port)], **quiet)]
    if mode == "worker":
        processes += [subprocess.Popen([sys.executable, "-m", "app.cli", "worker"], **quiet) for _ in range(workers)]
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300  # a loaded machine starts slowly
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz", timeout=10).status_code == 200:
                return base, processes, data
        except httpx.HTTPError:
            time.sleep(0.2)
    stop(processes)
    raise SystemExit(f"the {mode} server did not start (log: {data / 'server.log'})")


def wait_until_up(bases: list[str], processes: list[subprocess.Popen], log: Path) -> None:
    deadline = time.monotonic() + 300  # a loaded machine starts slowly
    for base in bases:
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=10).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
                stop(processes)
                raise SystemExit(f"{base} did not start (logs in {log})")
            time.sleep(0.2)


class TwoNodes:
    """Two `verity serve` and `workers` `verity worker` (run_executor=dramatiq) sharing a fresh
    PostgreSQL database, moto's S3 server and queues of their own on RabbitMQ; each process with a
    data folder of its own (its cache of the store)."""

    def __init__(self, workers: int, admin_url: str | None, broker_url: str):
        from sqlalchemy import create_engine, text
        from sqlalchemy.engine import make_url

        self.data = Path(tempfile.mkdtemp(prefix="verity-load-two-nodes-"))
        self.tag = f"verity_load_{os.getpid()}_{int(time.time())}"
        self.broker_url, self.processes = broker_url, []
        self.admin = create_engine(admin_url or POSTGRES_ADMIN, isolation_level="AUTOCOMMIT")
        with self.admin.connect() as connection:
            connection.execute(text(f"CREATE DATABASE {self.tag}"))
        database_url = make_url(admin_url or POSTGRES_ADMIN).set(database=self.tag).render_as_string(False)
        s3_port = free_port()
        self.processes.append(
            self.spawn("s3", [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(s3_port)], {})
        )
        endpoint = f"http://127.0.0.1:{s3_port}"
        self.bucket(endpoint)
        common = {
            "VERITY_LLM_MODEL": "builtin",
            "VERITY_DATABASE_URL": database_url,
            "VERITY_DB_PROCESSES": str(2 + workers),
            "VERITY_RUN_EXECUTOR": "dramatiq",
            "VERITY_BROKER_URL": broker_url,
            "VERITY_JOB_QUEUE_PREFIX": self.tag.replace("_", "-"),
            "VERITY_RUN_WORKERS": "2",
            "VERITY_STORAGE_URL": "s3://verity-load/verity",
            "VERITY_STORAGE_ENDPOINT_URL": endpoint,
            "VERITY_STORAGE_REGION": "us-east-1",
            **S3_KEYS,
        }
        serve = [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port"]
        ports = [free_port(), free_port()]
        self.bases = [f"http://127.0.0.1:{port}" for port in ports]
        for name, port in zip("ab", ports, strict=True):
            self.processes.append(self.spawn(f"server-{name}", [*serve, str(port)], common))
        for n in range(workers):
            self.processes.append(self.spawn(f"worker-{n + 1}", [sys.executable, "-m", "app.cli", "worker"], common))
        wait_until_up(self.bases, self.processes, self.data)
        deadline = time.monotonic() + 300
        while not all("Verity worker" in (self.data / f"worker-{n + 1}.log").read_text() for n in range(workers)):
            if time.monotonic() > deadline:
                self.close()
                raise SystemExit(f"the workers did not start (logs in {self.data})")
            time.sleep(0.2)
        time.sleep(2.0)  # their consumers connect to the broker

    def spawn(self, name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen:
        folder = self.data / name
        folder.mkdir()
        environment = {k: v for k, v in os.environ.items() if not k.startswith("VERITY_")}
        environment.update(env, VERITY_DATA_DIR=str(folder), PYTHONPATH=str(REPO))
        log = (self.data / f"{name}.log").open("w")
        return subprocess.Popen(argv, cwd=REPO, env=environment, stdout=log, stderr=subprocess.STDOUT)

    def bucket(self, endpoint: str) -> None:
        import boto3

        keys = list(S3_KEYS.values())
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id=keys[0],
            aws_secret_access_key=keys[1],
            region_name="us-east-1",
        )
        deadline = time.monotonic() + 120
        while True:
            try:
                client.create_bucket(Bucket="verity-load")
                return
            except Exception:  # the server is still starting
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)

    def close(self) -> None:
        import pika
        from sqlalchemy import text

        stop(self.processes)
        connection = pika.BlockingConnection(pika.URLParameters(self.broker_url))
        channel = connection.channel()
        for lane in LANES:
            for suffix in ("", ".DQ", ".XQ"):
                channel.queue_delete(queue=f"{self.tag.replace('_', '-')}-{lane}{suffix}")
        connection.close()
        with self.admin.connect() as connection:
            connection.execute(text(f"DROP DATABASE IF EXISTS {self.tag} WITH (FORCE)"))
        self.admin.dispose()


def stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


class Tally:
    """What went wrong, by kind, across all threads."""

    def __init__(self) -> None:
        self.errors: Counter[str] = Counter()
        self.reconnects = 0  # event streams a server closed (a restart) and the client opened again
        self.lock = threading.Lock()

    def add(self, kind: str) -> None:
        with self.lock:
            self.errors[kind] += 1

    def check(self, response: httpx.Response, expected: tuple[int, ...] = (200,)) -> httpx.Response:
        if response.status_code not in expected:
            self.add(f"{response.request.method} {route_of(response.request.url.path)} -> {response.status_code}")
        return response


def route_of(path: str) -> str:
    parts = path.strip("/").split("/")
    return "/" + "/".join(
        p if p in ("api", "workspaces", "runs", "files", "messages", "events") else "*" for p in parts
    )


def follow_events(client: httpx.Client, run: str, tally: Tally, reconnects: int = 5) -> None:
    """Read the run's event stream to its `run_finished`, as the page does: a stream that a server
    closes before the end (a rolling restart) is opened again with the last event's id, as EventSource
    does, up to `reconnects` times; each reopening is counted, not taken as an error."""
    last_id: str | None = None
    for attempt in range(reconnects + 1):
        headers = {"Last-Event-ID": last_id} if last_id else {}
        try:
            with client.stream(
                "GET", f"/api/runs/{run}/events", headers=headers, timeout=httpx.Timeout(30, read=120)
            ) as stream:
                tally.check(stream)
                if stream.status_code != 200:
                    return
                for line in stream.iter_lines():
                    if line.startswith("id: "):
                        last_id = line[4:].strip()
                    if line.startswith("event: run_finished"):
                        return
        except httpx.TransportError:  # the connection itself broke: reconnect the same way
            if attempt == reconnects:
                raise
        if attempt < reconnects:
            with tally.lock:
                tally.reconnects += 1
            time.sleep(1.0)  # EventSource's default retry interval is a few seconds
    tally.add("event stream ended without run_finished")


def user(
    upload_base: str,
    ask_base: str,
    tally: Tally,
    runs: list[float],
    questions: list[float],
    pages: list[float],
    statuses: Counter,
    headers: dict[str, str] | None = None,
) -> None:
    """One user: uploads on `upload_base`, asks on `ask_base` (the same server, or the other node),
    follows the run's progress where it uploaded and reads the answer where it asked."""
    try:
        with (
            httpx.Client(base_url=upload_base, timeout=120, headers=headers) as home,
            httpx.Client(base_url=ask_base, timeout=120, headers=headers) as other,
        ):
            ws = tally.check(home.post("/api/workspaces", json={"name": "load"}), (201,)).json()["id"]
            started = time.perf_counter()
            with open(SAMPLE, "rb") as handle:
                tally.check(home.post(f"/api/workspaces/{ws}/files", files={"file": (SAMPLE.name, handle)}), (201,))
            timed_page(other, f"/workspaces/{ws}", tally, pages)
            asked_at = time.perf_counter()
            asked = tally.check(other.post(f"/api/workspaces/{ws}/messages", json={"text": QUESTION}), (202,))
            run = asked.json()["run_id"]
            follow_events(home, run, tally)
            questions.append(time.perf_counter() - asked_at)
            status = tally.check(other.get(f"/api/runs/{run}")).json()["status"]
            runs.append(time.perf_counter() - started)
            timed_page(home, f"/workspaces/{ws}?run={run}", tally, pages)
            with tally.lock:
                statuses[status] += 1
    except (httpx.HTTPError, KeyError, ValueError) as exc:
        tally.add(f"{type(exc).__name__}")


def timed_page(client: httpx.Client, url: str, tally: Tally, out: list[float]) -> None:
    started = time.perf_counter()
    tally.check(client.get(url))
    out.append(time.perf_counter() - started)


def probe(
    base: str,
    page: str,
    stop_at: threading.Event,
    out: list[float],
    tally: Tally,
    headers: dict[str, str] | None = None,
) -> None:
    with httpx.Client(base_url=base, timeout=60, headers=headers) as client:
        while not stop_at.is_set():
            try:
                timed_page(client, page, tally, out)
            except httpx.HTTPError as exc:
                tally.add(f"probe {type(exc).__name__}")
            stop_at.wait(0.1)


def percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100)[q - 1]


def measure(
    mode: str,
    users: int,
    workers: int,
    database_url: str | None,
    broker_url: str,
    bases: list[str],
    tokens: list[str] | None = None,
) -> dict:
    """One mode's row: `threads` or `worker` (one server), `two-nodes` (started here) or `deployment`
    (the servers at `bases`, already running; `tokens`: API tokens for a deployment with sign-in)."""
    signed = [{"Authorization": f"Bearer {token}"} for token in tokens or []] or [{}]
    cleanup: Callable[[], None] = lambda: None  # noqa: E731
    if mode == "two-nodes":
        nodes = TwoNodes(workers, database_url, broker_url)
        bases, cleanup, log = nodes.bases, nodes.close, nodes.data
    elif mode != "deployment":
        base, processes, data = start(mode, workers, database_url)
        bases, cleanup, log = [base], lambda: stop(processes), data / "server.log"
    else:
        log = Path("(the deployment's own logs)")
    tally, statuses = Tally(), Counter()
    try:
        pages_of = {}
        for base in bases:
            with httpx.Client(base_url=base, headers=signed[0]) as client:
                pages_of[base] = f"/workspaces/{client.post('/api/workspaces', json={'name': 'probe'}).json()['id']}"
        idle: list[float] = []
        done = threading.Event()
        threading.Timer(3.0, done.set).start()
        for base in bases:  # one after the other: idle means nothing else runs
            probe(base, pages_of[base], done, idle, tally, signed[0])
            done.clear()
            threading.Timer(3.0, done.set).start()
        loaded: list[float] = []
        runs: list[float] = []
        questions: list[float] = []
        user_pages: list[float] = []
        done = threading.Event()
        watchers = [
            threading.Thread(target=probe, args=(b, pages_of[b], done, loaded, tally, signed[0])) for b in bases
        ]
        for watcher in watchers:
            watcher.start()
        started = time.perf_counter()
        crowd = [
            threading.Thread(
                target=user,
                args=(
                    bases[i % len(bases)],
                    bases[(i + 1) % len(bases)],
                    tally,
                    runs,
                    questions,
                    user_pages,
                    statuses,
                    signed[i % len(signed)],
                ),
            )
            for i in range(users)
        ]
        for thread in crowd:
            thread.start()
        for thread in crowd:
            thread.join()
        wall = time.perf_counter() - started
        done.set()
        for watcher in watchers:
            watcher.join()
    finally:
        cleanup()
    pages = loaded + user_pages
    return {
        "errors": sum(tally.errors.values()),
        "reconnects": tally.reconnects,
        "kinds": dict(tally.errors),
        "done": statuses.get("done", 0),
        "statuses": dict(statuses),
        "idle": statistics.median(idle),
        "p50": statistics.median(pages),
        "p95": percentile(pages, 95),
        "run_p50": statistics.median(runs) if runs else float("nan"),
        "run_p95": percentile(runs, 95),
        "question_p50": statistics.median(questions) if questions else float("nan"),
        "question_p95": percentile(questions, 95),
        "wall": wall,
        "log": log,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2, help="worker processes in worker and two-nodes modes")
    parser.add_argument(
        "--database-url",
        default=None,
        help="default: SQLite in a temporary folder; two-nodes: the server where a fresh database is made "
        f"(default {POSTGRES_ADMIN})",
    )
    parser.add_argument("--broker-url", default=RABBITMQ, help="two-nodes: the RabbitMQ the job queue runs on")
    parser.add_argument("--modes", default="threads,worker", help="threads, worker, two-nodes")
    parser.add_argument("--base-urls", default=None, help="comma-separated servers already running (one mode)")
    parser.add_argument("--tokens", type=Path, default=None, help="--base-urls with sign-in: API tokens, one a line")
    args = parser.parse_args()
    bases = args.base_urls.split(",") if args.base_urls else []
    tokens = args.tokens.read_text().split() if args.tokens else None
    modes = ["deployment"] if bases else args.modes.split(",")
    rows = {
        mode: measure(mode, args.users, args.workers, args.database_url, args.broker_url, bases, tokens)
        for mode in modes
    }
    database = (
        "the deployment's database"
        if bases
        else "PostgreSQL"
        if args.database_url or "two-nodes" in modes
        else "SQLite"
    )
    print(
        f"\n{args.users} users on {database}, each: upload retail_sales.xlsx, open the page, ask, follow the "
        f"event stream, read the answer (worker and two-nodes: {args.workers} worker processes; two-nodes: "
        "upload and progress on one node, question and answer on the other)\n"
    )
    print(
        f"{'runs in':10} {'errors':>6} {'done':>5} {'page idle':>9} {'page p50':>9} {'p50/idle':>8} {'page p95':>9} "
        f"{'p95/idle':>8} {'question p50':>12} {'question p95':>12} {'run p50':>8} {'run p95':>8} {'all done':>9}"
    )
    for mode, r in rows.items():
        print(
            f"{mode:10} {r['errors']:6d} {r['done']:5d} {r['idle'] * 1000:7.0f}ms {r['p50'] * 1000:7.0f}ms "
            f"{r['p50'] / r['idle']:7.1f}x {r['p95'] * 1000:7.0f}ms {r['p95'] / r['idle']:7.1f}x "
            f"{r['question_p50']:11.1f}s {r['question_p95']:11.1f}s "
            f"{r['run_p50']:7.1f}s {r['run_p95']:7.1f}s {r['wall']:8.1f}s"
        )
    for mode, r in rows.items():
        if r["reconnects"]:
            print(f"\n{mode}: {r['reconnects']} event stream(s) closed by a server and reopened (Last-Event-ID)")
        if r["errors"] or r["done"] != args.users:
            print(f"\n{mode}: {r['kinds']} run statuses {r['statuses']} (logs: {r['log']})")


if __name__ == "__main__":
    main()
