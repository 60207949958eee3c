"""Issue 26's acceptance: Verity past one machine, every part its own OS process sharing nothing but
the database, the object store and the broker.

Two app servers (`verity serve`, A and B) and two job-queue workers (tests/queue_worker.py: the real
`verity worker` with the built-in analyst held before its reply once a run has 3 finished calls
until the test releases it, so "mid-run" is a state the test can wait for), each with its own data folder (its own cache of the store); one fresh PostgreSQL
database; moto's S3 server as the store (MinIO does not install here; moto speaks the same protocol
over HTTP); RabbitMQ as the broker, with queues of the test's own.

Upload on A, ask on B; the run's progress streams and its page on both; the worker holding the run is
killed with SIGKILL mid-run and the other one finishes it from its recorded steps, with the answer
an undisturbed run of the same question gets and no finished tool call executed twice; then the
report in every format, its figures, a share link and "Check every number" from either node.
"""

from __future__ import annotations

import re
import shutil
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from app.config import Settings
from app.db.models import Event, Run, ToolCall
from tests.conftest import sample_path
from tests.factories import wait_for_run
from tests.processes import (
    S3_ACCESS,
    await_server,
    await_worker,
    delete_queues,
    launch_server,
    launch_worker,
    new_bucket,
    queue_settings,
    s3_server,
    same_report_on_both,
    stop,
)

pytestmark = pytest.mark.slow
QUESTION = "How does revenue develop over time by month?"  # the built-in analyst draws figures for it
FINAL = {"done", "failed", "interrupted", "waiting"}


class Cluster:
    """The running processes and a plain connection to their database (the test's own reads)."""

    def __init__(self, a: str, b: str, workers: list[Any], database_url: str, folder: Path):
        self.a, self.b = httpx.Client(base_url=a, timeout=120), httpx.Client(base_url=b, timeout=120)
        self.workers, self.folder = workers, folder
        self.release = folder / "release"  # the workers' models go on past 3 finished calls once it exists
        self.engine = create_engine(database_url)

    def close(self) -> None:
        self.a.close()
        self.b.close()
        self.engine.dispose()

    def holder_pid(self, run_id: str) -> int | None:
        with Session(self.engine) as session:
            run = session.get(Run, run_id)
            return int(run.worker.split(":")[1]) if run is not None and run.worker else None  # host:pid:boot

    def finished_calls(self, run_id: str) -> list[str]:
        with Session(self.engine) as session:
            return sorted(session.scalars(select(ToolCall.id).where(ToolCall.run_id == run_id)))

    def event_kinds(self, run_id: str, kind: str | None = None) -> list[str]:
        query = select(Event).where(Event.run_id == run_id).order_by(Event.id)
        with Session(self.engine) as session:
            return [
                e.kind if kind is None else str(e.data.get("id"))
                for e in session.scalars(query)
                if kind in (None, e.kind)
            ]

    def empty_caches(self) -> None:
        """Delete every process's copies of workspace files. The processes share this machine's disk,
        so without this a node could open another's files by the path it stored (issue 26: "with one
        shared folder nearly all of it works"); on separate hosts it could not."""
        for cache in self.folder.glob("*/workspaces"):
            shutil.rmtree(cache, ignore_errors=True)

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-2000:]}" for p in sorted(self.folder.rglob("*.log")))


@pytest.fixture
def cluster(tmp_path: Path, postgres_url: str, rabbitmq_url: str) -> Iterator[Cluster]:
    with ExitStack() as stack:
        endpoint = stack.enter_context(s3_server(tmp_path))
        bucket = new_bucket(endpoint, "two-nodes")
        base = queue_settings(
            rabbitmq_url,
            data_dir=tmp_path,
            database_url=postgres_url,
            db_processes=4,  # two servers and two workers share the PostgreSQL server
            storage_url=f"s3://{bucket}/verity",
            storage_endpoint_url=endpoint,
            storage_region="us-east-1",
            **S3_ACCESS,
        )
        stack.callback(delete_queues, base)

        def own(name: str) -> Settings:  # every process has a data folder (a cache) of its own
            return base.model_copy(update={"data_dir": tmp_path / name})

        # all four start at once; a server migrates the fresh database under PostgreSQL's advisory lock
        servers = [launch_server(own(name)) for name in ("a", "b")]
        # each worker's model holds its reply once a run has 3 finished calls, until Cluster.release
        # exists (the test makes it once the worker holding the run is killed): mid-run for certain
        hold = {"VERITY_TEST_MODEL_HOLD_AFTER_CALLS": "3", "VERITY_TEST_MODEL_RELEASE": str(tmp_path / "release")}
        workers = [launch_worker(own(name), delay_s=0, **hold) for name in ("w1", "w2")]
        stack.callback(stop, *(process for process, _ in servers), *workers)  # all four at once
        for process, url in servers:
            await_server(process, url)
        await_worker(*workers)
        nodes = Cluster(servers[0][1], servers[1][1], workers, postgres_url, tmp_path)
        stack.callback(nodes.close)
        yield nodes


def upload(client: httpx.Client, name: str) -> tuple[str, dict[str, Any]]:
    workbook = sample_path("retail_sales.xlsx")
    ws = client.post("/api/workspaces", json={"name": name}).json()["id"]
    with open(workbook, "rb") as handle:
        answer = client.post(f"/api/workspaces/{ws}/files", files={"file": (workbook.name, handle)})
    assert answer.status_code == 201, answer.text
    return ws, answer.json()["dataset"]


def ask(client: httpx.Client, ws: str, text: str) -> str:
    answer = client.post(f"/api/workspaces/{ws}/messages", json={"text": text})
    assert answer.status_code == 202, answer.text
    return str(answer.json()["run_id"])


def follow(client: httpx.Client, run_id: str, seen: list[tuple[int, str]]) -> None:
    """Read the run's progress stream to its end, as the run page does."""
    with client.stream("GET", f"/api/runs/{run_id}/events", timeout=httpx.Timeout(30, read=180)) as stream:
        event_id = 0
        for line in stream.iter_lines():
            if line.startswith("id: "):
                event_id = int(line[4:])
            elif line.startswith("event: "):
                seen.append((event_id, line[7:]))
                if line == "event: run_finished":
                    return


def test_two_servers_and_two_workers_share_only_the_database_the_store_and_the_broker(cluster: Cluster):
    a, b = cluster.a, cluster.b
    timings: dict[str, float] = {}
    started = time.monotonic()
    ws, dataset = upload(a, "two nodes")
    calm_ws, _ = upload(a, "undisturbed")  # the same data for the run nobody disturbs
    timings["two uploads on A"] = time.monotonic() - started
    cluster.empty_caches()  # every process is on this one machine: only the store may hold the files

    # F1: B opens what A received; the dataset stays ready for both
    seen = b.get(f"/api/workspaces/{ws}/datasets/{dataset['id']}").json()["dataset"]
    assert seen["status"] == "ready" and seen["preview"] == dataset["preview"]
    assert a.get(f"/api/workspaces/{ws}/datasets/{dataset['id']}").json()["dataset"]["status"] == "ready"

    # ask on B; both nodes follow its progress
    asked = time.monotonic()
    run_id = ask(b, ws, QUESTION)
    streams: dict[str, list[tuple[int, str]]] = {"a": [], "b": []}
    followers = [
        threading.Thread(target=follow, args=(client, run_id, streams[name]), daemon=True)
        for name, client in (("a", a), ("b", b))
    ]
    for thread in followers:
        thread.start()

    # mid-run: some tool calls finished, the run still going; its page shows it running on both nodes
    deadline = time.monotonic() + 120
    while len(cluster.finished_calls(run_id)) < 3 and time.monotonic() < deadline:
        assert all(w.poll() is None for w in cluster.workers), cluster.logs()
        time.sleep(0.05)
    done_before = cluster.finished_calls(run_id)
    for client in (a, b):
        page = client.get(f"/runs/{run_id}", params={"partial": "1"})
        assert page.status_code == 200 and 'data-status="running"' in page.text, page.text[:500]
        assert int(re.search(r'data-after="(\d+)"', page.text).group(1)) > 0  # type: ignore[union-attr]

    # kill -9 the worker holding the run: the other takes it over and finishes it from its steps
    victim = next(w for w in cluster.workers if w.pid == cluster.holder_pid(run_id))
    survivor = next(w for w in cluster.workers if w is not victim)
    assert len(done_before) >= 3 and b.get(f"/api/runs/{run_id}").json()["status"] == "running"
    victim.send_signal(signal.SIGKILL)
    killed_at = time.monotonic()
    victim.wait()
    cluster.release.touch()
    while cluster.holder_pid(run_id) != survivor.pid and time.monotonic() - killed_at < 60:
        time.sleep(0.05)
    timings["taken over after kill -9"] = time.monotonic() - killed_at
    assert cluster.holder_pid(run_id) == survivor.pid, cluster.logs()
    # the same question on the same data, undisturbed (nothing is killed any more), asked on A: the
    # survivor runs it beside the run it took over (each lane has run_workers threads)
    calm_asked = time.monotonic()
    calm_id = ask(a, calm_ws, QUESTION)
    body = wait_for_run(b, run_id, FINAL, timeout=180)
    timings["run on B, killed mid-run"] = time.monotonic() - asked
    for thread in followers:
        thread.join(timeout=60)
    assert body["status"] == "done", (body.get("error"), cluster.logs())

    # progress on both nodes: the same events, to the end, the hand-over among them
    assert streams["a"] == streams["b"] and streams["a"][-1][1] == "run_finished", streams
    assert "run_taken_over" in {kind for _, kind in streams["a"]}

    calm = wait_for_run(a, calm_id, FINAL, timeout=180)
    timings["undisturbed run on A"] = time.monotonic() - calm_asked
    assert calm["status"] == "done", calm.get("error")
    assert body["answer"] == calm["answer"] and body["answer"]
    assert cluster.finished_calls(run_id) == cluster.finished_calls(calm["id"])
    starts = Counter(cluster.event_kinds(run_id, "tool_started"))
    assert all(starts[call_id] == 1 for call_id in done_before), starts  # no finished call ran again
    kinds = cluster.event_kinds(run_id)
    assert kinds.count("run_taken_over") == 1 and "run_resumed" in kinds

    # the report in every format from either node: the same bytes, every figure in it (F3), though
    # no process keeps a file of the run any longer (the workers wrote them; emptied as on new hosts)
    cluster.empty_caches()
    asked = time.monotonic()
    report = a.get(f"/api/workspaces/{ws}/report.json", params={"run": run_id}).json()
    names = sorted({Path(f["path"]).name for f in report["figures"]})
    assert names, report.keys()
    downloads = same_report_on_both(a, b, ws, run_id, report["figures"])
    html_images = re.findall(rb'<img[^>]+src="data:image/png;base64,([^"]+)"', downloads["html"])
    assert len(html_images) == len(report["figures"]) and all(len(image) > 1000 for image in html_images)
    figure_bytes = sum(len(a.get(f"/workspaces/{ws}/figures/{name}").content) for name in names)
    assert len(downloads["pdf"]) > figure_bytes // 2  # a PDF with its figures, not the text alone (F3: 24 KB)
    timings["every download from both nodes"] = time.monotonic() - asked

    # F4: a share link made on A opens on B with every image
    share = a.post(f"/api/runs/{run_id}/shares", params={"confirm": "true"}).json()
    shared = b.get(urlparse(share["url"]).path)
    assert shared.status_code == 200 and shared.text.count("<img") == len(report["figures"])
    assert shared.text.count("data:image/png;base64,") == len(report["figures"])

    # F5: "Check every number" on B for the run A's upload fed; the outcome is in the report A serves
    asked = time.monotonic()
    checked = b.post(f"/runs/{run_id}/check-numbers", follow_redirects=False)
    assert checked.status_code == 303
    deadline = time.monotonic() + 180
    while "reproduction" not in (report := a.get(f"/api/workspaces/{ws}/report.json", params={"run": run_id}).json()):
        assert time.monotonic() < deadline, "the number check never finished"
        time.sleep(0.5)
    timings["number check on B, read on A"] = time.monotonic() - asked
    assert report["reproduction"].get("status") == "passed", report["reproduction"]
    print("\n" + "\n".join(f"{what:34} {seconds:6.1f} s" for what, seconds in timings.items()))
