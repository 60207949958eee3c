"""Files fail under Verity and nothing is lost: a damaged Parquet working copy does not brick the
workspace (it is marked damaged and rebuilt from the kept original), and a full disk is a plain
`disk_full` error in the user's language, never `internal_error`."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape
from sqlalchemy import select

from app.config import Settings
from app.db.models import Dataset, Run
from app.main import create_app
from app.web.i18n import t
from tests.factories import setup, start_run, wait_for_run

pytestmark = pytest.mark.slow  # a server, a run or a child per test: handed out early (tests/conftest.py)

QUESTION = "Does revenue differ by region?"


def shown(key: str, lang: str = "en") -> str:
    """A UI string as it appears in a page (escaped by Jinja)."""
    return str(escape(t(key, lang)))


def upload(client: TestClient, ws: str, path: Path):
    with open(path, "rb") as handle:
        return client.post(f"/api/workspaces/{ws}/files", files={"file": (path.name, handle)})


def test_a_damaged_working_copy_is_marked_and_rebuilt_from_the_original(client, retail_sales):
    ws = client.post("/api/workspaces", json={"name": "damaged"}).json()["id"]
    dataset = upload(client, ws, retail_sales).json()["dataset"]
    with client.app.state.db.session() as session:
        working = client.app.state.settings.data_dir / session.get(Dataset, dataset["id"]).working_path
        original = client.app.state.settings.data_dir / session.get(Dataset, dataset["id"]).original_path
    kept = original.read_bytes()
    working.write_bytes(working.read_bytes()[: working.stat().st_size // 2])  # a half-written file

    page = client.get(f"/workspaces/{ws}")
    assert page.status_code == 200 and shown("dataset_damaged") in page.text
    assert shown("dataset_rebuild") in page.text
    body = client.get(f"/api/workspaces/{ws}/datasets/{dataset['id']}").json()["dataset"]
    assert body["status"] == "damaged" and body["error"]["category"] == "damaged_file"
    chinese = client.get(f"/workspaces/{ws}?lang=zh").text
    assert shown("dataset_damaged", "zh") in chinese
    assert "工作副本已损坏" in chinese and "The working copy Verity made" not in chinese  # no English under it

    # a question does not crash on it: the damaged table is left out of the analysis
    run = client.post(f"/api/workspaces/{ws}/messages", json={"text": QUESTION}).json()["run_id"]
    assert wait_for_run(client, run, {"done", "failed", "waiting"})["status"] == "done"

    rebuilt = client.post(f"/api/workspaces/{ws}/datasets/{dataset['id']}/rebuild")
    assert rebuilt.status_code == 201, rebuilt.text
    new = rebuilt.json()["dataset"]
    assert new["status"] == "ready" and new["version"] == 2 and new["rows"] == dataset["rows"]
    assert new["preview"] == dataset["preview"]  # the same table as before the damage
    assert original.read_bytes() == kept  # the original was never touched
    again = client.post(f"/api/workspaces/{ws}/messages", json={"text": QUESTION}).json()["run_id"]
    answer = wait_for_run(client, again, {"done", "failed"})
    assert answer["status"] == "done" and answer["evidence"]


def test_the_page_rebuilds_a_missing_working_copy(client, retail_sales):
    ws = client.post("/api/workspaces", json={"name": "missing"}).json()["id"]
    dataset = upload(client, ws, retail_sales).json()["dataset"]
    with client.app.state.db.session() as session:
        (client.app.state.settings.data_dir / session.get(Dataset, dataset["id"]).working_path).unlink()
    assert shown("dataset_damaged") in client.get(f"/workspaces/{ws}").text
    done = client.post(f"/workspaces/{ws}/datasets/{dataset['id']}/rebuild", follow_redirects=False)
    assert done.status_code == 303
    page = client.get(f"/workspaces/{ws}")
    assert shown("dataset_damaged") not in page.text and "Revenue" in page.text


@pytest.fixture
def tiny_disk(tmp_path) -> Path:
    """A 3 MB file system, nearly full: writes on it fail with ENOSPC like on a full disk."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True, check=False
        ).returncode
        != 0
    ):
        pytest.skip("mounting a small tmpfs needs root")
    try:
        filler = mount / "filler"
        with open(filler, "wb") as handle:
            try:
                while True:
                    handle.write(b"\0" * 65536)
                    handle.flush()
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
        size = filler.stat().st_size
        os.truncate(filler, size - 100_000)  # room for a little, not for an upload
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_is_a_plain_disk_full_error(tmp_path, tiny_disk, retail_sales):
    settings = Settings(
        _env_file=None, data_dir=tiny_disk, llm_model="builtin", database_url=f"sqlite:///{tmp_path / 'verity.db'}"
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        ws = client.post("/api/workspaces", json={"name": "full"}).json()["id"]
        refused = upload(client, ws, retail_sales)
        assert refused.status_code == 507, refused.text
        error = refused.json()["error"]
        assert error["category"] == "disk_full" and "disk" in error["message"] and error["hint"]
        zh = client.post(f"/workspaces/{ws}/upload?lang=zh", files={"file": (retail_sales.name, b"x" * 300_000)})
        assert zh.status_code == 507 and shown("error_disk_full", "zh") in zh.text
        # nothing half-stored, and the workspace still answers
        assert client.get(f"/workspaces/{ws}").status_code == 200
        with client.app.state.db.session() as session:
            assert session.scalars(select(Dataset)).all() == []
        # (the read-slot lock files are the server's own machinery, empty, not stored data)
        stored = [p for p in tiny_disk.rglob("*") if p.is_file() and ".parse-slots" not in p.parts]
        assert stored == [tiny_disk / "filler"]
        # once there is room again, the same upload works
        (tiny_disk / "filler").unlink()
        assert upload(client, ws, retail_sales).status_code == 201


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_run_that_hits_a_full_disk_ends_with_a_plain_message(tmp_path, retail_sales, monkeypatch, language):
    settings, db, service, ws = setup(tmp_path, retail_sales)

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("app.runs.build_report", no_space)  # writing the report is the last write of a run
    run_id = start_run(service, ws, QUESTION if language == "en" else "各地区的营业额有差异吗？")
    service.execute(run_id)
    with db.session() as session:
        run = session.get(Run, run_id)
        assert run.status == "failed" and run.error == t("error_disk_full", run.language)
        assert run.language == language and "OSError" not in run.error
    shutil.rmtree(settings.data_dir, ignore_errors=True)
