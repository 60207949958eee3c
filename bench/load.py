"""Several users at once: how responsive the web server stays while their analyses run, with runs
in the server's threads vs in `verity worker` processes.

    python bench/load.py [--users 6] [--workers 2] [--database-url postgresql+psycopg://...]

Each mode starts a real server (uvicorn, a temporary data folder, the built-in analyst). Every
user creates a workspace, uploads data/samples/retail_sales.xlsx, asks a question and polls until
the answer is there. Meanwhile a probe opens the workspace page (a server-rendered page that reads
the database) every 100 ms. Printed: the page's latency idle and under load (ratio against idle,
same run), and the runs' wall time. Runs in the server's threads share its interpreter (and GIL)
with the pages; worker processes do not.
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
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "samples" / "retail_sales.xlsx"
QUESTION = "Does revenue differ by region?"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(mode: str, workers: int, database_url: str | None) -> tuple[str, list[subprocess.Popen]]:
    data = tempfile.mkdtemp(prefix=f"verity-load-{mode}-")
    env = {**os.environ, "VERITY_DATA_DIR": data, "VERITY_LLM_MODEL": "builtin", "VERITY_RUN_EXECUTOR": mode,
           "VERITY_WORKER_POLL_S": "0.1", "VERITY_RUN_WORKERS": "2"}
    if database_url:
        env["VERITY_DATABASE_URL"] = database_url
    port = free_port()
    quiet = dict(cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    processes = [subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(port)], **quiet)]
    if mode == "worker":
        processes += [subprocess.Popen([sys.executable, "-m", "app.cli", "worker"], **quiet) for _ in range(workers)]
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return base, processes
        except httpx.HTTPError:
            time.sleep(0.2)
    stop(processes)
    raise SystemExit(f"the {mode} server did not start")


def stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def user(base: str, results: list[float]) -> None:
    with httpx.Client(base_url=base, timeout=120) as client:
        ws = client.post("/api/workspaces", json={"name": "load"}).json()["id"]
        started = time.perf_counter()
        with open(SAMPLE, "rb") as handle:
            client.post(f"/api/workspaces/{ws}/files", files={"file": (SAMPLE.name, handle)}).raise_for_status()
        run = client.post(f"/api/workspaces/{ws}/messages", json={"text": QUESTION}).json()["run_id"]
        while client.get(f"/api/runs/{run}").json()["status"] not in ("done", "failed", "interrupted"):
            time.sleep(0.2)
        results.append(time.perf_counter() - started)


def probe(base: str, page: str, stop_at: threading.Event, out: list[float]) -> None:
    with httpx.Client(base_url=base, timeout=60) as client:
        while not stop_at.is_set():
            started = time.perf_counter()
            client.get(page).raise_for_status()
            out.append(time.perf_counter() - started)
            stop_at.wait(0.1)


def measure(mode: str, users: int, workers: int, database_url: str | None) -> dict:
    base, processes = start(mode, workers, database_url)
    try:
        with httpx.Client(base_url=base) as client:
            ws = client.post("/api/workspaces", json={"name": "probe"}).json()["id"]
        page = f"/workspaces/{ws}"
        idle: list[float] = []
        done = threading.Event()
        threading.Timer(3.0, done.set).start()
        probe(base, page, done, idle)
        loaded: list[float] = []
        runs: list[float] = []
        done = threading.Event()
        watcher = threading.Thread(target=probe, args=(base, page, done, loaded))
        watcher.start()
        started = time.perf_counter()
        crowd = [threading.Thread(target=user, args=(base, runs)) for _ in range(users)]
        for thread in crowd:
            thread.start()
        for thread in crowd:
            thread.join()
        wall = time.perf_counter() - started
        done.set()
        watcher.join()
    finally:
        stop(processes)
    return {"idle": statistics.median(idle), "p50": statistics.median(loaded),
            "p95": statistics.quantiles(loaded, n=20)[-1] if len(loaded) >= 20 else max(loaded),
            "runs": len(runs), "wall": wall, "run_median": statistics.median(runs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=6)
    parser.add_argument("--workers", type=int, default=2, help="worker processes in worker mode")
    parser.add_argument("--database-url", default=None, help="default: SQLite in a temporary folder")
    args = parser.parse_args()
    rows = {}
    for mode in ("threads", "worker"):
        rows[mode] = measure(mode, args.users, args.workers, args.database_url)
    print(f"\n{args.users} users, each: upload retail_sales.xlsx, ask, wait for the answer "
          f"(worker mode: {args.workers} worker processes)\n")
    print(f"{'runs in':10} {'page idle':>10} {'page p50':>9} {'p50/idle':>9} {'page p95':>9} {'p95/idle':>9} "
          f"{'runs':>5} {'all done':>9} {'run p50':>8}")
    for mode, r in rows.items():
        print(f"{mode:10} {r['idle'] * 1000:8.0f}ms {r['p50'] * 1000:7.0f}ms {r['p50'] / r['idle']:8.1f}x "
              f"{r['p95'] * 1000:7.0f}ms {r['p95'] / r['idle']:8.1f}x {r['runs']:5d} {r['wall']:8.1f}s "
              f"{r['run_median']:7.1f}s")


if __name__ == "__main__":
    main()
