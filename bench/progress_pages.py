"""What open progress pages cost PostgreSQL: transactions per second (issue 26 point 3).

    python bench/progress_pages.py                              # this checkout
    python bench/progress_pages.py --checkout /work/main        # another one (the polling code)
    python bench/progress_pages.py --checkout /work/main --checkout .   # both, one table

For each checkout a server (`app.main:create_app`, uvicorn, runs in threads) is started in its
own process on a fresh PostgreSQL database, made through the server's `test` database
(127.0.0.1:5432, trust auth) and dropped after. A run is recorded as running, and `--pages`
clients (10) follow its event stream (GET /api/runs/{run}/events) as the progress page does. The
transactions of that database (pg_stat_database: xact_commit + xact_rollback) are counted over
`--seconds` (20) in three phases:

- idle server: no page open (the server's own background work, the bench's reads of the counter);
- pages, quiet run: the pages open, the run writes nothing;
- pages, busy run: the pages open, and a writer (another process's Database, as a worker would)
  adds 2 events a second to the run; its own 2 transactions a second are counted too.

The writer is this checkout's code in every column (its NOTIFY is ignored by a server that polls),
so the columns differ only by the server. PostgreSQL's statistics reach the counter up to 10 s
after a transaction: each phase settles 11 s before its window opens.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# A PostgreSQL 15 backend that has just reported its statistics holds the next report back for up
# to 10 s (PGSTAT_IDLE_INTERVAL): the counter is read only once a phase's start-up (each page's
# first read of the run's history) has surely been reported.
STATS_LAG_S = 11.0

SERVER = """
import sys, uvicorn
from app.config import Settings
from app.main import create_app
settings = Settings(_env_file=None, data_dir=sys.argv[2], database_url=sys.argv[1], llm_model="builtin")
uvicorn.run(create_app(settings), host="127.0.0.1", port=int(sys.argv[3]), log_level="warning")
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def fresh_database(admin_url: str) -> Iterator[str]:
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    name = f"verity_bench_{secrets.token_hex(4)}"
    with admin.connect() as connection:
        connection.execute(text(f"CREATE DATABASE {name}"))
    try:
        yield admin_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as connection:
            connection.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()


@contextmanager
def server(checkout: Path, url: str, data_dir: Path) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(checkout), "VERITY_ALLOWED_HOSTS": "127.0.0.1,localhost"}
    process = subprocess.Popen([sys.executable, "-c", SERVER, url, str(data_dir), str(port)], env=env, cwd=checkout)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"the server of {checkout} did not start")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait(30)


def transactions(url: str) -> int:
    engine = create_engine(url)
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_stat_clear_snapshot()"))
        value = connection.execute(
            text("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()")
        ).scalar_one()
    engine.dispose()
    return int(value)


def rate(url: str, seconds: float) -> float:
    time.sleep(STATS_LAG_S)  # the previous phase's statistics land first
    before = transactions(url)
    time.sleep(seconds)
    after = transactions(url)  # what the window's last seconds wait to report is offset by the
    # previous window's late reports: in a steady phase both are the same
    # each reading of the counter is itself a transaction or two: not the server's
    return max(0.0, (after - before - 2) / seconds)


def follow(base: str, run_id: str, stop: threading.Event, opened: threading.Semaphore) -> None:
    with httpx.Client(base_url=base, timeout=None) as client:
        with client.stream("GET", f"/api/runs/{run_id}/events") as response:
            opened.release()
            for _ in response.iter_lines():
                if stop.is_set():
                    return


def measure(checkout: Path, admin_url: str, pages: int, seconds: float, workdir: Path) -> dict[str, float]:
    from app.config import Settings
    from app.db.models import Event, Run, Workspace
    from app.db.session import Database

    with fresh_database(admin_url) as url, server(checkout, url, workdir / checkout.name) as base:
        writer_db = Database(Settings(_env_file=None, data_dir=workdir / "writer", database_url=url))
        with writer_db.session() as session:
            workspace = Workspace(name="bench")
            session.add(workspace)
            session.flush()
            run = Run(workspace_id=workspace.id, question="bench", status="running")
            session.add(run)
            session.flush()
            run_id = run.id
        figures = {"idle server": rate(url, seconds)}
        stop, opened = threading.Event(), threading.Semaphore(0)
        readers = [
            threading.Thread(target=follow, args=(base, run_id, stop, opened), daemon=True) for _ in range(pages)
        ]
        for reader in readers:
            reader.start()
        for _ in readers:
            opened.acquire(timeout=30)
        figures[f"{pages} pages, quiet run"] = rate(url, seconds)

        def write() -> None:
            n = 0
            while not stop.is_set():
                with writer_db.session() as session:
                    session.add(Event(run_id=run_id, kind="step", data={"n": n}))
                n += 1
                stop.wait(0.5)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        figures[f"{pages} pages, busy run (2 events/s)"] = rate(url, seconds)
        stop.set()
        writer.join()
        writer_db.close()
        return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", action="append", type=Path, help="a checkout to serve (repeatable)")
    parser.add_argument("--admin-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/test")
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/verity-bench-progress"))
    args = parser.parse_args()
    checkouts = [c.resolve() for c in (args.checkout or [REPO])]
    results = {str(c): measure(c, args.admin_url, args.pages, args.seconds, args.workdir) for c in checkouts}
    phases = list(next(iter(results.values())))
    width = max(len(p) for p in phases)
    print(f"{'PostgreSQL transactions/s'.ljust(width)}  " + "  ".join(f"{c:>24}" for c in results))
    for phase in phases:
        print(f"{phase.ljust(width)}  " + "  ".join(f"{results[c][phase]:>24.1f}" for c in results))


if __name__ == "__main__":
    main()
