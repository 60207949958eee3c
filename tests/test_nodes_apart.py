"""Issue 26's F1-F5, each a test of its own: app servers and a worker on disks of their own, sharing
nothing but the database (and the object store, where there is one).

Node A (`verity serve`, runs in its threads) receives the uploads and answers a question with
figures; node B (`verity serve`, run_executor=worker) and a `verity worker` W are two other hosts.
All three are OS processes configured only by VERITY_* variables, on one fresh PostgreSQL database;
the store is moto's S3 server (in this process). While B or W works, A's files are out of their
reach (`Nodes.apart`): on one machine they could otherwise open A's files by the paths stored in
the database, which no other host can.

Only external surfaces are used (the HTTP API and the pages; the test reads the number check's state
from the run's row), so this file runs unchanged against the code before the store (24ec7d7; it ignores the store's variables), where every test fails:
  F1  B, opening the upload, stores it as damaged, for A too (tests/test_two_nodes.py shows it as well);
  F2  W answers a question on data it lacks "Please upload a spreadsheet first", status done;
  F3  B answers 404 for A's figures; its report.html, report.zip and PDF lack them, so the same
      link gives other files on B than on A;
  F4  a share link made on A opens on B with no images;
  F5  "Check every number" on B finds no data: analysis.py stops, "data file ... not found" (the
      issue saw no_data, "Not reproduced"; the test asks for a check that ran and passed).
"""

from __future__ import annotations

import io
import re
import shutil
import time
import zipfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest
from sqlalchemy import Engine, create_engine, text

from app.config import Settings
from tests.conftest import fresh_postgres_database, sample_path
from tests.factories import wait_for_run
from tests.processes import (
    S3_ACCESS,
    await_line,
    await_server,
    launch_cli_worker,
    launch_server,
    new_bucket,
    stop,
)

pytestmark = pytest.mark.slow
QUESTION = "What is the total revenue by region?"  # the built-in analyst draws a figure for it
FINAL = {"done", "failed", "interrupted", "waiting"}
DOWNLOADS = ("html", "md", "zip", "json", "pdf", "docx")


@dataclass
class Nodes:
    a: httpx.Client
    b: httpx.Client
    a_dir: Path
    figures_ws: str  # the workspace of the run on A (F3-F5)
    dataset_id: str  # its upload (F1)
    run_id: str
    answer_on_a: str
    spare_ws: str  # the same upload, asked nowhere yet (F2)
    database: Engine  # the test's own reads

    @contextmanager
    def apart(self) -> Iterator[None]:
        """A's files out of the other nodes' reach, as on hosts of their own: A's workspace folder is
        moved aside and put back (A only caches the store's files, where there is a store)."""
        kept, aside = self.a_dir / "workspaces", self.a_dir / "workspaces.elsewhere"
        kept.rename(aside)
        try:
            yield
        finally:
            shutil.rmtree(kept, ignore_errors=True)  # what A fetched meanwhile: the store has it
            aside.rename(kept)

    def report(self) -> dict[str, Any]:
        return self.a.get(f"/api/workspaces/{self.figures_ws}/report.json", params={"run": self.run_id}).json()

    def figure_names(self) -> list[str]:
        names = sorted({Path(figure["path"]).name for figure in self.report()["figures"]})
        assert names, "the run on A drew no figures"
        return names

    def number_check(self) -> dict[str, Any]:
        """The number check's state on the run's row (where the page reads "checking…" from)."""
        with self.database.connect() as connection:
            state = connection.execute(text("SELECT state FROM runs WHERE id = :id"), {"id": self.run_id}).scalar_one()
        return dict((state or {}).get("number_check") or {})

    def download(self, client: httpx.Client, fmt: str) -> bytes:
        answer = client.get(f"/api/workspaces/{self.figures_ws}/report.{fmt}", params={"run": self.run_id})
        assert answer.status_code == 200, (fmt, answer.text[:300])
        return answer.content


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with fresh_postgres_database() as url:
        yield url


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def upload(client: httpx.Client, name: str) -> tuple[str, str]:
    """A workspace with the sample workbook, once its dataset is ready: their ids."""
    workbook = sample_path("retail_sales.xlsx")
    ws = client.post("/api/workspaces", json={"name": name}).json()["id"]
    with open(workbook, "rb") as handle:
        answer = client.post(f"/api/workspaces/{ws}/files", files={"file": (workbook.name, handle)})
    assert answer.status_code == 201, answer.text
    dataset = answer.json()["dataset"]
    for _ in range(600):
        if dataset["status"] != "loading":
            break
        time.sleep(0.1)
        dataset = client.get(f"/api/workspaces/{ws}/datasets/{dataset['id']}").json()["dataset"]
    assert dataset["status"] == "ready", dataset
    return str(ws), str(dataset["id"])


def ask(client: httpx.Client, ws: str, question: str) -> str:
    answer = client.post(f"/api/workspaces/{ws}/messages", json={"text": question})
    assert answer.status_code == 202, answer.text
    return str(answer.json()["run_id"])


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory, database: str, s3_endpoint: str) -> Iterator[Nodes]:
    folder = tmp_path_factory.mktemp("nodes")
    base = Settings(
        _env_file=None,
        llm_model="builtin",
        database_url=database,
        db_processes=3,
        # the store (the code before it ignores these, as any unknown VERITY_* variable)
        storage_url=f"s3://{new_bucket(s3_endpoint, 'nodes-apart')}/verity",
        storage_endpoint_url=s3_endpoint,
        storage_region="us-east-1",
        storage_access_key_id=S3_ACCESS["storage_access_key_id"],
        storage_secret_access_key=S3_ACCESS["storage_secret_access_key"],
        # A runs questions in its threads, B leaves them to W, whose runs hold no lease: A's sweep of
        # runs whose server died (every lease_ttl_s) must not end W's run meanwhile
        lease_ttl_s=600,
    )

    def own(name: str, executor: str) -> Settings:  # every process has a data folder of its own
        return base.model_copy(update={"data_dir": folder / name, "run_executor": executor})

    with ExitStack() as stack:
        # all three start at once: the first migrates the fresh database under PostgreSQL's advisory lock
        servers = [launch_server(own("a", "threads")), launch_server(own("b", "worker"))]
        worker = launch_cli_worker(own("w", "worker"))
        stack.callback(stop, *(process for process, _ in servers), worker)
        for process, url in servers:
            await_server(process, url)
        await_line(worker, "Verity worker")
        a = stack.enter_context(httpx.Client(base_url=servers[0][1], timeout=120))
        b = stack.enter_context(httpx.Client(base_url=servers[1][1], timeout=120))
        (figures_ws, dataset_id), (spare_ws, _) = upload(a, "figures on A"), upload(a, "asked on B")
        run = wait_for_run(a, ask(a, figures_ws, QUESTION), FINAL, timeout=180)
        assert run["status"] == "done" and run["answer"], run
        engine = create_engine(database)
        stack.callback(engine.dispose)
        yield Nodes(a, b, folder / "a", figures_ws, dataset_id, run["id"], run["answer"], spare_ws, engine)


def test_f2_a_worker_without_the_file_answers_from_the_data(nodes: Nodes):
    """Asked on B, run by W: the answer A gave for the same question on the same upload, not "Please
    upload a spreadsheet first"."""
    with nodes.apart():
        body = wait_for_run(nodes.b, ask(nodes.b, nodes.spare_ws, QUESTION), FINAL, timeout=180)
    assert body["status"] == "done", body
    assert body["answer"] == nodes.answer_on_a, body["answer"][:300]


def test_f3_figures_made_on_a_are_served_by_b(nodes: Nodes):
    names = nodes.figure_names()
    with nodes.apart():
        on_b = {name: nodes.b.get(f"/workspaces/{nodes.figures_ws}/figures/{name}") for name in names}
    assert {name: answer.status_code for name, answer in on_b.items()} == dict.fromkeys(names, 200)
    for name, answer in on_b.items():
        assert answer.content == nodes.a.get(f"/workspaces/{nodes.figures_ws}/figures/{name}").content
        assert answer.content.startswith(b"\x89PNG")


def test_f3_report_downloads_from_b_carry_every_figure(nodes: Nodes):
    names = nodes.figure_names()
    with nodes.apart():
        html, bundle, pdf = (nodes.download(nodes.b, fmt) for fmt in ("html", "zip", "pdf"))
    from pypdf import PdfReader

    with zipfile.ZipFile(io.BytesIO(bundle)) as archive:
        zipped = sorted(
            n.removeprefix("report/figures/") for n in archive.namelist() if n.startswith("report/figures/")
        )
    found = {
        "report.html images": len(re.findall(rb'<img[^>]+src="data:image/png;base64,[^"]{1000,}"', html)),
        "report.zip figures": zipped,
        "report.pdf images": sum(len(page.images) for page in PdfReader(io.BytesIO(pdf)).pages),
    }
    assert found == {"report.html images": len(names), "report.zip figures": names, "report.pdf images": len(names)}


def test_f3_a_report_link_gives_the_same_file_on_both_nodes(nodes: Nodes):
    """B made and kept its own files of the report (without figures, before the store): the same link
    gave other bytes on B than on A."""
    with nodes.apart():
        from_b = {fmt: nodes.download(nodes.b, fmt) for fmt in DOWNLOADS}
    from_a = {fmt: nodes.download(nodes.a, fmt) for fmt in DOWNLOADS}
    differ = [fmt for fmt in DOWNLOADS if from_a[fmt] != from_b[fmt]]
    assert differ == [], {fmt: (len(from_a[fmt]), len(from_b[fmt])) for fmt in differ}


def test_f4_a_share_link_made_on_a_opens_on_b_with_its_images(nodes: Nodes):
    figures = len(nodes.report()["figures"])
    share = nodes.a.post(f"/api/runs/{nodes.run_id}/shares", params={"confirm": "true"})
    assert share.status_code in (200, 201), share.text
    with nodes.apart():
        shared = nodes.b.get(urlparse(share.json()["url"]).path)
    assert shared.status_code == 200
    assert shared.text.count("data:image/png;base64,") == figures


def test_f5_check_every_number_on_b_finds_the_data(nodes: Nodes):
    """The check runs on B, whose disk never held the upload; its outcome lands in the report A serves."""
    with nodes.apart():
        checked = nodes.b.post(f"/runs/{nodes.run_id}/check-numbers", follow_redirects=False)
        assert checked.status_code == 303, checked.text[:300]
        deadline = time.monotonic() + 180
        while (check := nodes.number_check()).get("status") in (None, "running"):
            assert time.monotonic() < deadline, "the number check never finished"
            time.sleep(0.5)
    assert check["status"] == "done", check  # not stopped for want of data
    reproduction = nodes.report().get("reproduction") or {}
    assert reproduction.get("status") == "passed", reproduction


# Last: before the store, B's look at the upload marked it damaged for every node, which the other
# tests must not meet (each shows its own fault).
def test_f1_b_opens_the_upload_a_received_and_it_stays_ready_for_both(nodes: Nodes):
    path = f"/api/workspaces/{nodes.figures_ws}/datasets/{nodes.dataset_id}"
    with nodes.apart():
        on_b = nodes.b.get(path)
    assert on_b.status_code == 200, on_b.text[:300]
    assert [on_b.json()["dataset"]["status"], nodes.a.get(path).json()["dataset"]["status"]] == ["ready", "ready"]
