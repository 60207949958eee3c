"""Issue 27 point 2: no upload holds its request while the file is read. Every format goes to the
background read; a read that takes longer than `upload_wait_s` is answered "loading", says how far
it has got (rows read, percent: app.ingest.progress, written by the reading child), and the dataset
becomes ready. A bad file still ends with its error's category and hint, on the page in en and zh.

Real uploads through the in-process client and the real reader (a forked child); the gate only
holds the read back until the test has looked at the "loading" answer."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape

import app.workspaces as workspaces
from app.config import Settings
from app.db.models import Dataset
from app.ingest import progress
from app.ingest.bounded import load_table_bounded
from tests.factories import wait_until_ready

ROWS = 3000


def sales_csv(path: Path, rows: int = ROWS) -> Path:
    lines = ["Order,Region,Revenue,Date"]
    lines += [
        f"A{i:05d},{('East', 'West', 'North')[i % 3]},{100 + i * 0.5},2024-01-{1 + i % 28:02d}" for i in range(rows)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def progress_seen(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every progress the background read records, as the dataset's info holds it just after."""
    seen: list[dict[str, Any]] = []
    real = workspaces.note_progress

    def noting(db, dataset_id: str, reported: dict) -> None:
        real(db, dataset_id, reported)
        with db.session() as session:
            dataset = session.get(Dataset, dataset_id)
            if dataset is not None and "progress" in (dataset.info or {}):
                seen.append(dict(dataset.info["progress"]))

    monkeypatch.setattr(workspaces, "note_progress", noting)
    return seen


@pytest.fixture
def quick_client(unwaiting_client: Callable[..., TestClient]) -> TestClient:
    """The server answering uploads without waiting for their read (upload_wait_s=0)."""
    return unwaiting_client()


def new_workspace(client: TestClient) -> str:
    response = client.post("/api/workspaces", json={"name": "Progress"})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def dataset_of(client: TestClient, ws: str, dataset_id: str) -> dict[str, Any]:
    response = client.get(f"/api/workspaces/{ws}/datasets/{dataset_id}")
    assert response.status_code == 200, response.text
    return response.json()["dataset"]


def test_a_csv_upload_answers_loading_reports_progress_and_becomes_ready(
    quick_client: TestClient, gate: threading.Event, progress_seen: list[dict[str, Any]], tmp_path: Path
):
    ws = new_workspace(quick_client)
    path = sales_csv(tmp_path / "sales.csv")
    response = quick_client.post(f"/api/workspaces/{ws}/files", files={"file": (path.name, path.read_bytes())})
    assert response.status_code == 201, response.text
    loading = response.json()["dataset"]
    assert loading["status"] == "loading" and loading["file"] == "sales.csv" and loading["format"] == "csv"

    page = quick_client.get(f"/workspaces/{ws}").text
    assert "Reading the file…" in page and "data-dataset-loading" in page
    assert "Still reading: sales.csv" in page  # beside the question box: a question waits for it

    gate.set()
    ready = wait_until_ready(quick_client, ws, loading["id"])
    assert ready["status"] == "ready" and ready["rows"] == ROWS and "progress" not in ready
    assert [c["name"] for c in ready["columns"]] == ["Order", "Region", "Revenue", "Date"]
    assert ready["preview"][0]["Order"] == "A00000"
    # the reading child's stages came through to the dataset, ending with every row read
    assert progress_seen, "no progress was recorded"
    assert all(0 <= p["percent"] <= 100 and p["stage"] in progress.STAGES for p in progress_seen)
    assert [p["percent"] for p in progress_seen] == sorted(p["percent"] for p in progress_seen)
    assert progress_seen[-1] == {"stage": "saving", "rows": ROWS, "percent": 97}
    assert any(p["stage"] in ("types", "checks") and p["rows"] == ROWS for p in progress_seen)


def test_the_card_shows_how_far_the_read_has_got_in_each_language(quick_client: TestClient, tmp_path: Path):
    ws = new_workspace(quick_client)
    path = sales_csv(tmp_path / "sales.csv")
    loading = quick_client.post(f"/api/workspaces/{ws}/files", files={"file": (path.name, path.read_bytes())}).json()[
        "dataset"
    ]
    db = quick_client.app.state.db
    workspaces.note_progress(db, loading["id"], {"stage": "types", "rows": 1_234_567, "percent": 62})

    body = dataset_of(quick_client, ws, loading["id"])
    assert body["status"] == "loading" and body["progress"] == {"stage": "types", "rows": 1_234_567, "percent": 62}
    english = quick_client.get(f"/workspaces/{ws}").text
    assert "1,234,567 rows read, 62% done." in english and 'value="62"' in english
    assert "0 rows" not in english  # nothing is known of its rows and columns yet: only the progress
    chinese = quick_client.get(f"/workspaces/{ws}?lang=zh").text
    assert "已读取 1,234,567 行，完成 62%。" in chinese and "正在读取文件" in chinese
    assert "rows read" not in chinese


def test_a_bad_file_read_within_the_wait_is_refused_with_its_category_and_hint(client: TestClient):
    """With the default wait (the tests' own is long enough for any machine), a bad file's read ends
    before the answer: it is refused as before, and nothing of it is kept."""
    ws = new_workspace(client)
    response = client.post(f"/api/workspaces/{ws}/files", files={"file": ("empty.csv", b"")})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["category"] == "empty_file" and error["message"] and error["hint"]
    with client.app.state.db.session() as session:
        assert session.query(Dataset).filter_by(workspace_id=ws).count() == 0
    page = client.post(f"/workspaces/{ws}/upload", files={"file": ("empty.csv", b"")})
    assert page.status_code == 400 and escape(error["hint"]) in page.text


def test_a_bad_file_read_after_the_answer_ends_failed_with_category_and_hint(
    quick_client: TestClient, gate: threading.Event
):
    ws = new_workspace(quick_client)
    response = quick_client.post(
        f"/api/workspaces/{ws}/files", files={"file": ("scan.csv", b"\x00\x01\x02PK\x03" * 400)}
    )
    assert response.status_code == 201, response.text
    assert response.json()["dataset"]["status"] == "loading"
    gate.set()
    failed = wait_until_ready(quick_client, ws, response.json()["dataset"]["id"])
    assert failed["status"] == "failed"
    assert failed["error"]["category"] and failed["error"]["hint"] and failed["error"]["hint_zh"]
    page = quick_client.get(f"/workspaces/{ws}").text
    assert "Reading the whole file failed." in page and escape(failed["error"]["hint"]) in page
    chinese = quick_client.get(f"/workspaces/{ws}?lang=zh").text
    assert escape(failed["error"]["hint_zh"]) in chinese


def test_a_bounded_read_hands_its_progress_on(tmp_path: Path):
    """The reading child writes its stages; the waiting side is handed them, the last one included."""
    path = sales_csv(tmp_path / "sales.csv", rows=500)
    seen: list[dict[str, Any]] = []
    settings = Settings(_env_file=None, data_dir=tmp_path / "data")
    table = load_table_bounded(path, settings=settings, on_progress=seen.append)
    assert len(table.frame) == 500
    assert seen and seen[-1]["rows"] == 500 and seen[-1]["stage"] in ("types", "checks")
