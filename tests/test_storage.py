"""Every kept file in an object store (issue 26 point 1): one interface, the data folder or any
S3-compatible store; keys in the database; a bounded cache per node that fetches what it lacks.

The S3 server is moto in server mode: a real HTTP server speaking the S3 protocol, which boto3 talks
to over HTTP exactly as it talks to MinIO or AWS (no client-side mocking).
"""

from __future__ import annotations

import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.storage import LocalStore, NodeFiles, S3Store, StoreUnavailable, key_from_legacy_path, node_files
from tests.processes import S3_ACCESS as ACCESS
from tests.processes import new_bucket, same_report_on_both


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{server._server.server_port}"  # type: ignore[attr-defined]
    finally:
        server.stop()


def s3_settings(data_dir: Path, endpoint: str, bucket: str, **more: Any) -> Settings:
    return Settings(
        _env_file=None,
        data_dir=data_dir,
        storage_url=f"s3://{bucket}/verity",
        storage_endpoint_url=endpoint,
        storage_region="us-east-1",
        llm_model="builtin",
        **ACCESS,
        **more,
    )


# --- the interface: both backends keep the same contract --------------------------------------------
@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "local":
        return LocalStore(tmp_path / "store")
    endpoint = request.getfixturevalue("s3_endpoint")
    bucket = new_bucket(endpoint, f"contract-{time.monotonic_ns()}")
    return S3Store(f"s3://{bucket}/some/prefix", endpoint_url=endpoint, region="us-east-1", **_keys())


def _keys() -> dict[str, str]:
    return {"access_key_id": ACCESS["storage_access_key_id"], "secret_access_key": ACCESS["storage_secret_access_key"]}


def test_both_backends_store_fetch_list_and_delete_by_key(store, tmp_path):
    source = tmp_path / "upload.bin"
    payload = bytes(range(256)) * 40_000  # 10 MB: boto3 sends it in parts
    source.write_bytes(payload)
    store.put_file("workspaces/w1/files/f1/sales.xlsx", source)
    store.put_file("workspaces/w1/figures/chart.png", source)
    store.put_file("workspaces/w2/figures/other.png", source)
    assert store.exists("workspaces/w1/files/f1/sales.xlsx") and not store.exists("workspaces/w1/nothing")
    target = tmp_path / "elsewhere" / "copy.bin"
    assert store.get_file("workspaces/w1/files/f1/sales.xlsx", target) and target.read_bytes() == payload
    assert store.get_file("workspaces/w1/missing.bin", tmp_path / "no.bin") is False
    assert not (tmp_path / "no.bin").exists()  # nothing half-written is left for a missing key
    assert store.keys("workspaces/w1") == ["workspaces/w1/figures/chart.png", "workspaces/w1/files/f1/sales.xlsx"]
    assert store.delete_prefix("workspaces/w1/") == 2
    assert store.keys("workspaces/w1") == [] and store.exists("workspaces/w2/figures/other.png")
    store.delete("workspaces/w2/figures/other.png")
    store.delete("workspaces/w2/figures/other.png")  # deleting what is gone is no error
    assert not store.exists("workspaces/w2/figures/other.png")


@pytest.mark.parametrize("bad", ["", "/etc/passwd", "../x", "workspaces/../x", "a//b", "a\\b"])
def test_a_key_names_a_file_inside_the_store(bad):
    with pytest.raises(ValueError):
        LocalStore(Path("/tmp")).exists(bad)


def test_an_unreachable_store_is_unavailable_not_missing(tmp_path):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    store = S3Store("s3://bucket", endpoint_url=f"http://127.0.0.1:{port}", timeout_s=1, max_attempts=1, **_keys())
    with pytest.raises(StoreUnavailable):
        store.exists("workspaces/w/files/f/x.csv")
    with pytest.raises(StoreUnavailable):
        store.get_file("workspaces/w/files/f/x.csv", tmp_path / "x.csv")


def test_the_settings_say_how_often_a_store_request_is_tried_again(tmp_path):
    """storage_retries reaches the S3 client: what a deployment sets, and what lets a test of a store
    that is down give up after one retry instead of the default's four, with growing pauses."""
    settings = s3_settings(tmp_path, "http://127.0.0.1:9", "bucket")
    retries = node_files(settings).store.client.meta.config.retries  # type: ignore[attr-defined]
    assert retries["total_max_attempts"] == 1 + 4  # the first try and four more
    fewer = node_files(settings.model_copy(update={"storage_retries": 1}))
    assert fewer.store.client.meta.config.retries["total_max_attempts"] == 2  # type: ignore[attr-defined]


def test_legacy_paths_become_keys():
    assert (
        key_from_legacy_path("/srv/verity/data/workspaces/ab12/files/cd34/x.csv") == "workspaces/ab12/files/cd34/x.csv"
    )
    assert key_from_legacy_path("data/runtime/workspaces/ab12/figures/c.png") == "workspaces/ab12/figures/c.png"
    assert key_from_legacy_path("workspaces/ab12/files/cd34/x.csv") == "workspaces/ab12/files/cd34/x.csv"
    assert key_from_legacy_path("/somewhere/else.csv") == "/somewhere/else.csv"  # nothing guessed
    assert key_from_legacy_path("") == ""


# --- the node's cache --------------------------------------------------------------------------------
def test_the_local_backend_is_the_data_folder_itself(tmp_path):
    files = node_files(Settings(_env_file=None, data_dir=tmp_path / "data"))
    path = files.path_of("workspaces/w/files/f/a.csv")
    path.parent.mkdir(parents=True)
    path.write_text("x,y\n1,2\n")
    assert files.saved(path) == "workspaces/w/files/f/a.csv"
    assert files.local("workspaces/w/files/f/a.csv") == path  # no copy anywhere else
    assert sorted(p.name for p in (tmp_path / "data").rglob("*") if p.is_file()) == ["a.csv"]
    path.unlink()
    assert files.local("workspaces/w/files/f/a.csv") is None  # gone from the only store: missing


def test_a_file_missing_from_the_cache_is_fetched_and_the_cache_stays_bounded(tmp_path, s3_endpoint, monkeypatch):
    bucket = new_bucket(s3_endpoint, "cache")
    writer = NodeFiles(*_node(tmp_path / "a", s3_endpoint, bucket, cache_max_mb=0))
    reader = NodeFiles(*_node(tmp_path / "b", s3_endpoint, bucket, cache_max_mb=0.25))  # 256 KiB
    monkeypatch.setattr("app.storage.files.EVICT_GRACE_S", 0.0)  # no grace for files used just now
    keys = []
    for n in range(6):  # 6 x 100 KiB
        path = writer.path_of(f"workspaces/w/files/f{n}/part.bin")
        path.parent.mkdir(parents=True)
        path.write_bytes(bytes([n]) * 100 * 1024)
        keys.append(writer.saved(path))
    for n, key in enumerate(keys):
        fetched = reader.local(key)
        assert fetched is not None and fetched.read_bytes() == bytes([n]) * 100 * 1024
        assert fetched.stat().st_mode & 0o777 == path.stat().st_mode & 0o777  # the sandbox's user reads it too
        time.sleep(0.01)  # distinct access times
    cached = list((tmp_path / "b" / "workspaces").rglob("*.bin"))
    assert sum(p.stat().st_size for p in cached) <= 256 * 1024
    assert reader.path_of(keys[-1]).is_file()  # the newest stays; the oldest went first
    assert not reader.path_of(keys[0]).is_file()
    again = reader.local(keys[0])  # evicted, so fetched again: the same bytes
    assert again is not None and again.read_bytes() == bytes([0]) * 100 * 1024
    # a file the store does not hold is never evicted (it would be lost)
    own = reader.path_of("workspaces/w/only-here.bin")
    own.write_bytes(b"z" * 300 * 1024)
    reader.evict(grace_s=0)
    assert own.is_file()
    # nor is a file used within the grace period, even past the limit
    monkeypatch.setattr("app.storage.files.EVICT_GRACE_S", 60.0)
    for key in keys:
        reader.local(key)
    reader.evict()
    assert all(reader.path_of(key).is_file() for key in keys)
    # a workspace deleted through another node leaves this node's cache too
    writer.remove_folder("workspaces/w")
    assert reader.path_of(keys[-1]).is_file()
    monkeypatch.setattr("app.storage.files.EVICT_GRACE_S", 0.0)
    assert reader.drop_deleted_workspaces() == ["w"] and not (tmp_path / "b" / "workspaces" / "w").exists()


def _node(data_dir: Path, endpoint: str, bucket: str, **more: Any) -> tuple[Settings, S3Store]:
    settings = s3_settings(data_dir, endpoint, bucket, **more)
    return settings, S3Store(f"s3://{bucket}/verity", endpoint_url=endpoint, region="us-east-1", **_keys())


# --- rows written before keys ------------------------------------------------------------------------
def test_the_migration_turns_stored_paths_into_keys(tmp_path):
    import sqlalchemy as sa
    from alembic import command
    from alembic.config import Config

    from app.db.session import MIGRATIONS, Database

    settings = Settings(_env_file=None, data_dir=tmp_path / "data")
    db = Database(settings)
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with db.engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, "0006")
    old = f"{tmp_path}/data/workspaces/w1/files/f1"
    with db.engine.begin() as connection:
        connection.execute(
            sa.text("INSERT INTO workspaces (id, name, rules, created_at) VALUES ('w1', 'w', '', '2026-01-01')")
        )
        connection.execute(
            sa.text(
                "INSERT INTO datasets (id, workspace_id, name, file_name, format, original_path, working_path, version, "
                "active, rows, info, created_at) VALUES ('d1', 'w1', 'sales', 'sales.csv', 'csv', :o, :w, 1, 1, 3, '{}', "
                "'2026-01-01')"
            ),
            {"o": f"{old}/sales.csv", "w": "data/runtime/workspaces/w1/files/f1/working_v1.parquet"},
        )
        connection.execute(
            sa.text(
                "INSERT INTO runs (id, workspace_id, question, language, status, model_kind, model_name, state, "
                "created_at, stop_requested) VALUES ('r1', 'w1', 'q', 'en', 'done', 'builtin', 'builtin', '{}', '2026-01-01', 0)"
            )
        )
        figures = f'[{{"path": "{tmp_path}/data/workspaces/w1/figures/chart.png", "caption": "c"}}]'
        connection.execute(
            sa.text(
                "INSERT INTO tool_calls (run_id, id, tool, arguments, ok, duration_ms, result_text, metrics, figures, "
                "interpretation, created_at) VALUES ('r1', 'c1', 't', '{}', 1, 0, '', '{}', :f, '', '2026-01-01')"
            ),
            {"f": figures},
        )
        connection.execute(
            sa.text(
                "INSERT INTO reports (id, workspace_id, run_id, content, created_at) VALUES ('p1', 'w1', 'r1', :c, '2026-01-01')"
            ),
            {"c": '{"answer": "a", "figures": ' + figures + "}"},
        )
    db.migrate()
    with db.engine.connect() as connection:
        assert connection.execute(sa.text("SELECT original_path, working_path FROM datasets")).one() == (
            "workspaces/w1/files/f1/sales.csv",
            "workspaces/w1/files/f1/working_v1.parquet",
        )
        assert (
            "workspaces/w1/figures/chart.png"
            in connection.execute(sa.text("SELECT figures FROM tool_calls")).scalar_one()
        )
        content = connection.execute(sa.text("SELECT content FROM reports")).scalar_one()
        assert '"workspaces/w1/figures/chart.png"' in content and str(tmp_path) not in content
    db.engine.dispose()


# --- two nodes that share only the database and the store --------------------------------------------
QUESTION = "How does revenue develop over time by month?"


@pytest.mark.slow
def test_two_nodes_share_every_file_through_the_store(tmp_path, s3_endpoint):
    """Upload on A; open, preview, ask, figures, every report download, a share link and the number check
    on B, whose data folder never saw the upload (issue 26 F1-F5). Each of these failed before the store:
    B marked the upload damaged (F1, F2), served no figures (F3, F4) and checked no numbers (F5)."""
    from app.db.models import Dataset, Run
    from app.main import create_app
    from tests.conftest import sample_path
    from tests.factories import wait_for_run

    bucket = new_bucket(s3_endpoint, "two-nodes")
    database = f"sqlite:///{tmp_path / 'shared.db'}"
    node = {
        name: s3_settings(tmp_path / name, s3_endpoint, bucket, database_url=database, sse_poll_interval_s=0.05)
        for name in ("a", "b")
    }
    workbook = sample_path("retail_sales.xlsx")
    with TestClient(create_app(node["a"])) as a, TestClient(create_app(node["b"])) as b:
        ws = a.post("/api/workspaces", json={"name": "two nodes"}).json()["id"]
        with open(workbook, "rb") as handle:
            uploaded = a.post(f"/api/workspaces/{ws}/files", files={"file": (workbook.name, handle)})
        assert uploaded.status_code == 201, uploaded.text
        dataset = uploaded.json()["dataset"]
        with a.app.state.db.session() as session:
            row = session.get(Dataset, dataset["id"])
            original_key, working_key = row.original_path, row.working_path
        assert original_key.startswith(f"workspaces/{ws}/files/") and not Path(original_key).is_absolute()
        assert not (tmp_path / "b" / working_key).exists()  # B has never seen the file
        shutil.rmtree(tmp_path / "a" / "workspaces")  # nor does A keep it now (its cache emptied): only the store

        # F1: B opens the workspace and the dataset: fetched, shown, not damaged
        seen = b.get(f"/api/workspaces/{ws}/datasets/{dataset['id']}").json()["dataset"]
        assert seen["status"] == "ready" and seen["preview"] == dataset["preview"]
        assert "damaged" not in b.get(f"/workspaces/{ws}").text.lower()
        assert (tmp_path / "b" / working_key).is_file()  # now in B's cache
        assert a.get(f"/api/workspaces/{ws}/datasets/{dataset['id']}").json()["dataset"]["status"] == "ready"

        # F2: a question asked on B runs on B (its run threads) with the data
        run_id = b.post(f"/api/workspaces/{ws}/messages", json={"text": QUESTION}).json()["run_id"]
        done = wait_for_run(b, run_id, {"done", "failed", "waiting"})
        assert done["status"] == "done", done
        assert "upload" not in (done.get("answer") or "").lower()[:80]

        # F3: the figures B made are served by A, byte for byte, and every download is the same on both
        report = a.get(f"/api/workspaces/{ws}/report.json", params={"run": run_id}).json()
        names = [Path(f["path"]).name for f in report["figures"]]
        assert names and all(not Path(f["path"]).is_absolute() for f in report["figures"])
        downloads = same_report_on_both(a, b, ws, run_id, report["figures"])
        assert downloads["html"].count(b"<img") == len(names)

        # F4: a share link made on A opens on B with every image
        share = a.post(f"/api/runs/{run_id}/shares", params={"confirm": "true"}).json()
        shared = b.get(urlparse(share["url"]).path)
        assert shared.status_code == 200 and shared.text.count("<img") == len(names)

        # the trace's payloads written on B are read on A
        trace = a.get(f"/api/runs/{run_id}/trace").json()
        assert trace["items"]

        # F5: "Check every number" on A (the run and its files are B's): the data is found
        checked = a.post(f"/runs/{run_id}/check-numbers", follow_redirects=False)
        assert checked.status_code == 303
        deadline = time.monotonic() + 300
        while "reproduction" not in (
            report := a.get(f"/api/workspaces/{ws}/report.json", params={"run": run_id}).json()
        ):
            with a.app.state.db.session() as session:
                check = (session.get(Run, run_id).state or {}).get("number_check") or {}
            assert check.get("status") != "stopped", check  # the check ran and said why it could not finish
            assert time.monotonic() < deadline, "the number check never finished"
            time.sleep(0.5)
        assert report["reproduction"].get("status") != "no_data", report["reproduction"]
        assert report["reproduction"].get("status") == "passed", report["reproduction"]


def test_tool_outputs_written_on_one_node_are_read_on_another_and_never_overwritten(tmp_path, s3_endpoint):
    """A turn resumed on another worker reads the full outputs and results its earlier steps kept."""
    from app.agent.context.outputs import OutputStore

    bucket = new_bucket(s3_endpoint, "outputs")
    a = OutputStore.of(s3_settings(tmp_path / "a", s3_endpoint, bucket), "w1")
    b = OutputStore.of(s3_settings(tmp_path / "b", s3_endpoint, bucket), "w1")
    assert a.save_output("call_0", "first run's table") == "call_0"
    a.save_result("call_0", '{"rows": 3}')
    assert b.read("call_0") == "first run's table" and b.read_result("call_0") == '{"rows": 3}'
    # the same call id in another run, on the other node: a numbered id, the first text kept
    assert b.save_output("call_0", "second run's table") == "call_0_2"
    assert a.read("call_0") == "first run's table" and a.read("call_0_2") == "second run's table"
    assert a.output_id_of("call_0", "second run's table") == "call_0_2"
    transcript = a.save_transcript([{"role": "user", "content": "hello"}])
    assert '"hello"' in (b.read(transcript) or "")
    assert sorted(b.ids()) == sorted(["call_0", "call_0_2", transcript])


@pytest.mark.slow
def test_personal_data_is_shown_the_same_on_every_node(tmp_path, s3_endpoint):
    """The workspace's pseudonym book goes through the store: the report asked on B (stored with
    pseudonyms) reads with the real names on A too."""
    import json

    import pandas as pd
    from sqlalchemy import select

    from app.db.models import Report
    from app.main import create_app
    from tests.factories import wait_for_run

    people = pd.DataFrame(
        {
            "姓名": ["张三", "李四", "王五", "赵六"] * 10,
            "手机": ["13812345678", "13987654321", "15011112222", "18633334444"] * 10,
            "Amount": [120.5, 80.0, 99.9, 150.0] * 10,
        }
    )
    bucket = new_bucket(s3_endpoint, "book")
    database = f"sqlite:///{tmp_path / 'shared.db'}"
    node = {name: s3_settings(tmp_path / name, s3_endpoint, bucket, database_url=database) for name in ("a", "b")}
    with TestClient(create_app(node["a"])) as a, TestClient(create_app(node["b"])) as b:
        ws = a.post("/api/workspaces", json={"name": "people"}).json()["id"]
        body = people.to_csv(index=False).encode()
        assert a.post(f"/api/workspaces/{ws}/files", files={"file": ("people.csv", body)}).status_code == 201
        run_id = b.post(f"/api/workspaces/{ws}/messages", json={"text": "What is the Amount of 张三?"}).json()["run_id"]
        assert wait_for_run(b, run_id, {"done", "failed", "waiting"})["status"] == "done"
        on_a = a.get(f"/api/workspaces/{ws}/report.md", params={"run": run_id}).text
        on_b = b.get(f"/api/workspaces/{ws}/report.md", params={"run": run_id}).text
        with a.app.state.db.session() as session:  # stored as the model read it: with the pseudonym
            stored = session.scalars(select(Report).where(Report.run_id == run_id)).one().content
        assert "张三" not in json.dumps(stored, ensure_ascii=False) and "姓名_0" in json.dumps(
            stored, ensure_ascii=False
        )
        assert on_a == on_b and "张三" in on_a and "姓名_0" not in on_a  # each node reads the real name


@pytest.mark.slow
def test_a_store_that_does_not_answer_is_said_plainly_and_damages_nothing(tmp_path, s3_endpoint):
    """B cannot reach the store: its pages and runs say so (503 storage_unavailable), and the dataset
    stays ready for everyone (it is not the data that failed)."""
    from app.main import create_app
    from app.web.i18n import t
    from tests.conftest import sample_path
    from tests.factories import wait_for_run

    bucket = new_bucket(s3_endpoint, "down")
    database = f"sqlite:///{tmp_path / 'shared.db'}"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    good = s3_settings(tmp_path / "a", s3_endpoint, bucket, database_url=database)
    # tried again once, not four times (storage_retries): the same answer, without the default's
    # growing pauses between tries for every request B makes
    down = s3_settings(tmp_path / "b", dead, bucket, database_url=database, storage_retries=1)
    workbook = sample_path("retail_sales.xlsx")
    with TestClient(create_app(good)) as a, TestClient(create_app(down), raise_server_exceptions=False) as b:
        ws = a.post("/api/workspaces", json={"name": "store down"}).json()["id"]
        with open(workbook, "rb") as handle:
            dataset = a.post(f"/api/workspaces/{ws}/files", files={"file": (workbook.name, handle)}).json()["dataset"]
        answer = b.get(f"/api/workspaces/{ws}/datasets/{dataset['id']}")
        assert answer.status_code == 503 and answer.json()["error"]["category"] == "storage_unavailable"
        page = b.get(f"/workspaces/{ws}?lang=zh")
        assert page.status_code == 503 and t("error_storage_unavailable", "zh") in page.text
        run_id = b.post(f"/api/workspaces/{ws}/messages", json={"text": QUESTION}).json()["run_id"]
        run = wait_for_run(b, run_id, {"done", "failed", "interrupted", "waiting"})
        assert run["status"] == "interrupted" and run["error"] == t("error_storage_unavailable", "en")
        assert a.get(f"/api/workspaces/{ws}/datasets/{dataset['id']}").json()["dataset"]["status"] == "ready"
