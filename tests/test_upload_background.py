"""Uploads read in a background thread: a big workbook's preview of its first rows at once, every
format's full read in the background.

A tiny `background_ingest_mb` sends a small generated workbook through the background path; a gate
around `load_table_bounded` holds the full read so the "loading" state can be looked at deterministically.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.db.models import Dataset
from app.ingest.errors import CATEGORIES
from app.runs import default_model
from app.workspaces import LOADING, active_datasets, add_loading_dataset, loading_datasets
from tests.factories import wait_until_ready

ROWS = 1500


def make_workbook(path: Path, rows: int = ROWS) -> Path:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Orders"
    sheet.append(["Order ID", "Region", "Revenue", "Date"])
    for i in range(rows):
        sheet.append(
            [f"A{i:05d}", ("East", "West", "North")[i % 3], 100.5 + i, dt.date(2024, 1, 1) + dt.timedelta(days=i % 300)]
        )
    book.save(path)
    return path


def damage_sheet(source: Path, target: Path) -> Path:
    """The same workbook with its sheet XML cut off part-way: the first rows stream fine, the
    full read fails."""
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = data[: len(data) * 6 // 10]
            out.writestr(item, data)
    return target


@pytest.fixture
def workbook(tmp_path: Path) -> Path:
    return make_workbook(tmp_path / "orders.xlsx")


@pytest.fixture
def models_seen() -> list[list[dict[str, Any]]]:
    return []


@pytest.fixture
def bg_client(unwaiting_client: Callable[..., TestClient], models_seen: list) -> TestClient:
    """Answered at once (upload_wait_s=0): the gate holds the read, whose "loading" state is looked at."""

    def model_factory(settings: Settings, datasets: list[dict[str, Any]], language: str):
        models_seen.append(datasets)
        return default_model(settings, datasets, language)

    return unwaiting_client(
        model_factory=model_factory, sse_poll_interval_s=0.05, sse_heartbeat_s=1.0, background_ingest_mb=0.001
    )


def new_workspace(client: TestClient) -> str:
    response = client.post("/api/workspaces", json={"name": "Big files"})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def upload(client: TestClient, ws: str, path: Path):
    return client.post(f"/api/workspaces/{ws}/files", files={"file": (path.name, path.read_bytes())})


def test_api_returns_the_preview_at_once_then_the_full_table(
    bg_client: TestClient, workbook: Path, gate: threading.Event
):
    ws = new_workspace(bg_client)
    started = time.monotonic()
    response = upload(bg_client, ws, workbook)
    assert response.status_code == 201, response.text
    assert time.monotonic() - started < 10
    dataset = response.json()["dataset"]
    assert dataset["status"] == "loading" and dataset["partial"] is True
    assert dataset["id"] and dataset["name"] == "orders"
    assert len(dataset["preview"]) == 20 and dataset["preview"][0]["Order ID"] == "A00000"
    assert [c["name"] for c in dataset["columns"]] == ["Order ID", "Region", "Revenue", "Date"]
    assert dataset["header_row"] == 1 and dataset["selected_sheet"] == "Orders"

    polled = bg_client.get(f"/api/workspaces/{ws}/datasets/{dataset['id']}").json()["dataset"]
    assert polled["status"] == "loading" and len(polled["preview"]) == 20

    gate.set()
    ready = wait_until_ready(bg_client, ws, dataset["id"])
    assert ready["status"] == "ready" and ready["rows"] == ROWS and "partial" not in ready
    assert ready["preview"][0]["Order ID"] == "A00000" and len(ready["preview"]) == 20
    assert {c["name"]: c["type"] for c in ready["columns"]}["Revenue"] == "number"
    with bg_client.app.state.db.session() as session:
        stored = session.get(Dataset, dataset["id"])
        assert (bg_client.app.state.settings.data_dir / stored.working_path).is_file() and stored.rows == ROWS
        assert [d.id for d in active_datasets(session, ws)] == [dataset["id"]]
        assert (bg_client.app.state.settings.data_dir / stored.original_path).read_bytes() == workbook.read_bytes()


def test_unknown_dataset_is_404(bg_client: TestClient):
    ws = new_workspace(bg_client)
    response = bg_client.get(f"/api/workspaces/{ws}/datasets/nope")
    assert response.status_code == 404 and response.json()["error"]["category"] == "not_found"


def test_page_shows_the_loading_notice_then_the_full_preview(
    bg_client: TestClient, workbook: Path, gate: threading.Event
):
    ws = new_workspace(bg_client)
    with workbook.open("rb") as handle:
        partial = bg_client.post(
            f"/workspaces/{ws}/upload", files={"file": (workbook.name, handle)}, headers={"X-Requested-With": "fetch"}
        )
    assert partial.status_code == 200, partial.text
    assert "Still reading the rest of the file" in partial.text and "data-dataset-loading" in partial.text
    assert "A00000" in partial.text

    page = bg_client.get(f"/workspaces/{ws}")
    assert page.status_code == 200
    assert "Still reading the rest of the file" in page.text and "data-dataset-loading" in page.text
    assert "Still reading: orders.xlsx" in page.text  # beside the question box
    assert "about 1500 rows" in page.text
    dataset_id = page.text.split('data-dataset-id="', 1)[1].split('"', 1)[0]
    assert f"/api/workspaces/{ws}/datasets/{dataset_id}" in page.text

    gate.set()
    assert wait_until_ready(bg_client, ws, dataset_id)["status"] == "ready"
    card = bg_client.get(f"/workspaces/{ws}/datasets/{dataset_id}/preview")
    assert card.status_code == 200
    assert "data-dataset-loading" not in card.text and "Still reading" not in card.text
    assert "1500 rows" in card.text and "A00000" in card.text
    page = bg_client.get(f"/workspaces/{ws}")
    assert "Still reading" not in page.text and "1500 rows" in page.text


def test_damaged_big_file_ends_failed_with_a_category(
    bg_client: TestClient, workbook: Path, gate: threading.Event, tmp_path: Path
):
    gate.set()
    ws = new_workspace(bg_client)
    damaged = damage_sheet(workbook, tmp_path / "damaged.xlsx")
    response = upload(bg_client, ws, damaged)
    assert response.status_code == 201, response.text
    dataset = response.json()["dataset"]
    assert dataset["status"] == "loading" and dataset["preview"]

    failed = wait_until_ready(bg_client, ws, dataset["id"])
    assert failed["status"] == "failed"
    assert failed["error"]["category"] in CATEGORIES and failed["error"]["message"]
    with bg_client.app.state.db.session() as session:
        assert active_datasets(session, ws) == []
        assert [d.id for d in loading_datasets(session, ws)] == [dataset["id"]]

    page = bg_client.get(f"/workspaces/{ws}")
    assert "Reading the whole file failed." in page.text and failed["error"]["message"] in page.text
    assert failed["error"]["category"] not in page.text  # the category is for programs; people read the headline
    chinese = bg_client.get(f"/workspaces/{ws}?lang=zh").text  # the stored error carries its Chinese text
    assert "读取整个文件失败。" in chinese and failed["error"]["message_zh"] in chinese
    assert failed["error"]["message"] not in chinese
    dismissed = bg_client.post(f"/workspaces/{ws}/datasets/{dataset['id']}/dismiss", follow_redirects=False)
    assert dismissed.status_code == 303
    assert "Reading the whole file failed." not in bg_client.get(f"/workspaces/{ws}").text


def test_truncated_big_file_is_refused_at_once(bg_client: TestClient, workbook: Path):
    ws = new_workspace(bg_client)
    response = bg_client.post(f"/api/workspaces/{ws}/files", files={"file": ("cut.xlsx", workbook.read_bytes()[:3000])})
    assert response.status_code == 400
    assert response.json()["error"]["category"] == "corrupt_file"


def test_question_while_loading_waits_for_the_loading_file_and_analyses_it(
    bg_client: TestClient, workbook: Path, gate: threading.Event, models_seen: list
):
    """A question asked while a big upload is read in the background may be about it (issue 24: asked
    without it, the analyst asked back about another table's columns): the run waits for the read,
    as a step of its own, then analyses the file."""
    ws = new_workspace(bg_client)
    dataset = upload(bg_client, ws, workbook).json()["dataset"]
    assert dataset["status"] == "loading"
    response = bg_client.post(f"/api/workspaces/{ws}/messages", json={"text": "Does revenue differ by region?"})
    assert response.status_code == 202
    run_id = response.json()["run_id"]
    time.sleep(1.0)
    run = bg_client.get(f"/api/runs/{run_id}").json()
    assert run["status"] in ("queued", "running") and models_seen == [], run  # waiting, nothing analysed yet
    still = bg_client.get(f"/api/workspaces/{ws}/datasets/{dataset['id']}").json()["dataset"]
    assert still["status"] == "loading"  # the full read is still held by the gate

    gate.set()
    deadline = time.monotonic() + 60
    while (run := bg_client.get(f"/api/runs/{run_id}").json())["status"] not in ("done", "failed", "interrupted"):
        assert time.monotonic() < deadline, run
        time.sleep(0.05)
    assert run["status"] == "done", run
    assert [d["name"] for d in models_seen[0]] == [dataset["name"]]  # the model was told of the file, now read
    assert run["evidence"], run
    assert wait_until_ready(bg_client, ws, dataset["id"])["status"] == "ready"


def test_a_csv_is_read_in_the_background_too(bg_client: TestClient, gate: threading.Event, tmp_path: Path):
    """Issue 27 point 2: every format, CSV included, is read by the background read (a million-row
    CSV held its request for 15 s); held by the gate, the upload is answered "loading" at once, with
    no rows to show yet (a CSV has no streamed preview), and is ready with all its rows once read."""
    ws = new_workspace(bg_client)
    csv = tmp_path / "small.csv"
    csv.write_text("Region,Revenue\n" + "".join(f"East,{i}\n" for i in range(200)), encoding="utf-8")
    response = upload(bg_client, ws, csv)
    assert response.status_code == 201, response.text
    dataset = response.json()["dataset"]
    assert dataset["status"] == "loading" and dataset["preview"] == [] and dataset["file"] == "small.csv"
    gate.set()
    ready = wait_until_ready(bg_client, ws, dataset["id"])
    assert ready["status"] == "ready" and ready["rows"] == 200
    assert [c["name"] for c in ready["columns"]] == ["Region", "Revenue"] and len(ready["preview"]) == 20


def test_default_threshold_keeps_ordinary_workbooks_synchronous(client: TestClient, workbook: Path):
    ws = new_workspace(client)
    dataset = upload(client, ws, workbook).json()["dataset"]
    assert dataset["status"] == "ready" and dataset["rows"] == ROWS


def test_a_load_left_by_a_gone_process_is_resumed(bg_client: TestClient, workbook: Path, gate: threading.Event):
    """After a restart a "loading" dataset is read again when it is looked at."""
    gate.set()
    ws = new_workspace(bg_client)
    settings = bg_client.app.state.settings
    from app.db.models import Workspace
    from app.ingest.pipeline import preview_table

    with bg_client.app.state.db.session() as session:
        workspace = session.get(Workspace, ws)
        preview = preview_table(workbook, settings=settings)
        stale = add_loading_dataset(
            session,
            settings,
            workspace,
            workbook,
            workbook.name,
            None,
            preview,
            loader={"pid": 2**30, "boot": "an earlier server"},
        )
        dataset_id = stale.id
        assert stale.info["status"] == LOADING  # and no node holds its lease: the earlier server is gone
    ready = wait_until_ready(bg_client, ws, dataset_id)
    assert ready["status"] == "ready" and ready["rows"] == ROWS


# --- the page in a real browser: the notice, then the full preview swapped in by app.js -------
@pytest.mark.slow
def test_browser_swaps_in_the_full_preview(tmp_path: Path, workbook: Path, gate: threading.Event):
    import shutil
    import socket

    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    chromium = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if chromium is None:
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    import uvicorn

    from app.main import create_app

    settings = Settings(
        _env_file=None,
        data_dir=tmp_path / "runtime",
        llm_model="builtin",
        background_ingest_mb=0.001,
        upload_wait_s=0.0,
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(settings), log_level="warning", timeout_graceful_shutdown=5))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=chromium, args=["--no-sandbox", "--disable-gpu", "--no-proxy-server"]
            )
            page = browser.new_page()
            deadline = time.monotonic() + 30
            while not server.started:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.05)
            page.goto(base + "/")
            page.fill("#ws-name", "Big file")
            page.press("#ws-name", "Enter")
            page.wait_for_selector("#upload-file")
            page.set_input_files("#upload-file", str(workbook))
            page.click(".upload-form button[type=submit]")
            page.wait_for_selector("[data-dataset-loading] .loading-notice", timeout=30_000)
            assert "A00000" in page.inner_text(".dataset")
            gate.set()
            page.wait_for_selector(".dataset-ready", timeout=30_000)
            assert page.locator("[data-dataset-loading]").count() == 0
            assert "1500" in page.inner_text(".dataset-head")
            browser.close()
    finally:
        gate.set()
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
