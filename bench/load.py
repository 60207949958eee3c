"""Many users at once: errors (there must be none), page latency and run time, with runs in the
server's threads vs in `verity worker` processes, on SQLite (default) or PostgreSQL.

    python bench/load.py [--users 50] [--workers 2] [--database-url postgresql+psycopg://...]

Each mode starts a real server (`python -m app.cli serve`, a temporary data folder, the built-in
analyst). Every user, as a browser would: creates a workspace, uploads
data/samples/retail_sales.xlsx, opens the workspace page, asks a question, follows the run's event
stream to its end, reads the run and opens the page again. Meanwhile a probe opens a workspace page
(server-rendered, reads the database) every 100 ms. Printed per mode: failed requests (any 5xx,
any unexpected 4xx, timeouts, broken streams), runs that did not end `done`, the page latency idle
and under load (p50/p95, and the ratio to idle in the same run), and the run time (upload to
answer) p50/p95. Runs in the server's threads share its interpreter (and GIL) with the pages;
worker processes do not.
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
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
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


def follow_events(client: httpx.Client, run: str, tally: Tally) -> None:
    """Read the run's event stream to its `run_finished`, as the page does."""
    with client.stream("GET", f"/api/runs/{run}/events", timeout=httpx.Timeout(30, read=120)) as stream:
        tally.check(stream)
        for line in stream.iter_lines():
            if line.startswith("event: run_finished"):
                return
    tally.add("event stream ended without run_finished")


def user(base: str, tally: Tally, runs: list[float], pages: list[float], statuses: Counter) -> None:
    try:
        with httpx.Client(base_url=base, timeout=120) as client:
            ws = tally.check(client.post("/api/workspaces", json={"name": "load"}), (201,)).json()["id"]
            started = time.perf_counter()
            with open(SAMPLE, "rb") as handle:
                tally.check(client.post(f"/api/workspaces/{ws}/files", files={"file": (SAMPLE.name, handle)}), (201,))
            timed_page(client, f"/workspaces/{ws}", tally, pages)
            asked = tally.check(client.post(f"/api/workspaces/{ws}/messages", json={"text": QUESTION}), (202,))
            run = asked.json()["run_id"]
            follow_events(client, run, tally)
            status = tally.check(client.get(f"/api/runs/{run}")).json()["status"]
            runs.append(time.perf_counter() - started)
            timed_page(client, f"/workspaces/{ws}?run={run}", tally, pages)
            with tally.lock:
                statuses[status] += 1
    except (httpx.HTTPError, KeyError, ValueError) as exc:
        tally.add(f"{type(exc).__name__}")


def timed_page(client: httpx.Client, url: str, tally: Tally, out: list[float]) -> None:
    started = time.perf_counter()
    tally.check(client.get(url))
    out.append(time.perf_counter() - started)


def probe(base: str, page: str, stop_at: threading.Event, out: list[float], tally: Tally) -> None:
    with httpx.Client(base_url=base, timeout=60) as client:
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


def measure(mode: str, users: int, workers: int, database_url: str | None) -> dict:
    base, processes, data = start(mode, workers, database_url)
    tally, statuses = Tally(), Counter()
    try:
        with httpx.Client(base_url=base) as client:
            ws = client.post("/api/workspaces", json={"name": "probe"}).json()["id"]
        page = f"/workspaces/{ws}"
        idle: list[float] = []
        done = threading.Event()
        threading.Timer(3.0, done.set).start()
        probe(base, page, done, idle, tally)
        loaded: list[float] = []
        runs: list[float] = []
        user_pages: list[float] = []
        done = threading.Event()
        watcher = threading.Thread(target=probe, args=(base, page, done, loaded, tally))
        watcher.start()
        started = time.perf_counter()
        crowd = [threading.Thread(target=user, args=(base, tally, runs, user_pages, statuses)) for _ in range(users)]
        for thread in crowd:
            thread.start()
        for thread in crowd:
            thread.join()
        wall = time.perf_counter() - started
        done.set()
        watcher.join()
    finally:
        stop(processes)
    pages = loaded + user_pages
    return {
        "errors": sum(tally.errors.values()),
        "kinds": dict(tally.errors),
        "done": statuses.get("done", 0),
        "statuses": dict(statuses),
        "idle": statistics.median(idle),
        "p50": statistics.median(pages),
        "p95": percentile(pages, 95),
        "run_p50": statistics.median(runs) if runs else float("nan"),
        "run_p95": percentile(runs, 95),
        "wall": wall,
        "log": data / "server.log",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2, help="worker processes in worker mode")
    parser.add_argument("--database-url", default=None, help="default: SQLite in a temporary folder")
    parser.add_argument("--modes", default="threads,worker")
    args = parser.parse_args()
    rows = {mode: measure(mode, args.users, args.workers, args.database_url) for mode in args.modes.split(",")}
    database = "PostgreSQL" if args.database_url else "SQLite"
    print(
        f"\n{args.users} users on {database}, each: upload retail_sales.xlsx, open the page, ask, follow the "
        f"event stream, read the answer (worker mode: {args.workers} worker processes)\n"
    )
    print(
        f"{'runs in':8} {'errors':>6} {'done':>5} {'page idle':>9} {'page p50':>9} {'p50/idle':>8} {'page p95':>9} "
        f"{'p95/idle':>8} {'run p50':>8} {'run p95':>8} {'all done':>9}"
    )
    for mode, r in rows.items():
        print(
            f"{mode:8} {r['errors']:6d} {r['done']:5d} {r['idle'] * 1000:7.0f}ms {r['p50'] * 1000:7.0f}ms "
            f"{r['p50'] / r['idle']:7.1f}x {r['p95'] * 1000:7.0f}ms {r['p95'] / r['idle']:7.1f}x "
            f"{r['run_p50']:7.1f}s {r['run_p95']:7.1f}s {r['wall']:8.1f}s"
        )
    for mode, r in rows.items():
        if r["errors"] or r["done"] != args.users:
            print(f"\n{mode}: {r['kinds']} run statuses {r['statuses']} (server log: {r['log']})")


if __name__ == "__main__":
    main()
