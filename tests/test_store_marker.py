"""Issue 26 point 5: a node refuses to start, in plain words, when its object store is not the one its
database was made with (app/storage/marker.py). The S3 store is moto's real HTTP server, as in
tests/test_storage.py; the database SQLite and PostgreSQL."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.config import Settings
from app.db.models import StoreMarker
from app.db.session import open_database
from app.storage import marker as marker_module
from app.storage import store_of
from app.storage.marker import MARKER_KEY, StoreMismatch, check_store, read_marker
from tests.test_storage import ACCESS, new_bucket, s3_endpoint  # noqa: F401 - the fixture

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return f"sqlite:///{tmp_path / 'shared.db'}"


def node(data_dir: Path, database_url: str, **more: Any) -> Settings:
    return Settings(_env_file=None, data_dir=data_dir, llm_model="builtin", database_url=database_url, **more)


def s3(data_dir: Path, database_url: str, endpoint: str, bucket: str, **more: Any) -> Settings:
    return node(
        data_dir,
        database_url,
        storage_url=f"s3://{bucket}/verity",
        storage_endpoint_url=endpoint,
        storage_region="us-east-1",
        **ACCESS,
        **more,
    )


def start(settings: Settings) -> str:
    """What a starting node's check says: "made", "matched", or the StoreMismatch's message."""
    db = open_database(settings)
    try:
        return check_store(db.sessionmaker, store_of(settings))
    except StoreMismatch as exc:
        return f"refused: {exc}"
    finally:
        db.close()


def test_the_first_start_marks_both_and_later_starts_match(tmp_path, database_url):
    settings = node(tmp_path / "shared", database_url)
    assert start(settings) == "made"
    marker = read_marker(store_of(settings))
    assert marker is not None and (tmp_path / "shared" / MARKER_KEY).is_file()
    db = open_database(settings)
    with db.session() as session:
        row = session.get(StoreMarker, 1)
        assert row is not None and row.store_id == marker.store_id and row.store_kind == "local"
    db.close()
    assert start(settings) == "matched"
    assert start(settings) == "matched"


def test_a_node_with_its_own_folder_instead_of_the_shared_one_refuses(tmp_path, database_url):
    assert start(node(tmp_path / "shared", database_url)) == "made"
    said = start(node(tmp_path / "own", database_url))  # the same database, another folder
    assert said.startswith("refused: The file store ")
    assert str(tmp_path / "own") in said and "does not hold the marker" in said and "VERITY_DATA_DIR" in said
    assert not (tmp_path / "own" / MARKER_KEY).exists()  # nothing written where it refused


def test_a_store_of_another_database_refuses(tmp_path, database_url, monkeypatch):
    # A marker without a row is first waited on (another node may be making both this moment:
    # test_nodes_starting_together_... needs that wait); here nobody is, so a short wait says the same.
    monkeypatch.setattr(marker_module, "MAKING_WAIT_S", 0.5)
    assert start(node(tmp_path / "shared", f"sqlite:///{tmp_path / 'first.db'}")) == "made"
    said = start(node(tmp_path / "shared", database_url))  # a new database with the first one's store
    assert said.startswith("refused: ") and "already belongs to another Verity database" in said
    assert MARKER_KEY in said  # how to start afresh on purpose


def test_two_nodes_with_one_bucket_match_and_another_bucket_refuses(tmp_path, database_url, s3_endpoint):  # noqa: F811
    bucket = new_bucket(s3_endpoint, f"marker-{os.getpid()}-{len(database_url)}")
    other = new_bucket(s3_endpoint, f"marker-other-{os.getpid()}-{len(database_url)}")
    assert start(s3(tmp_path / "a", database_url, s3_endpoint, bucket)) == "made"
    assert start(s3(tmp_path / "b", database_url, s3_endpoint, bucket)) == "matched"  # a second node, own cache
    said = start(s3(tmp_path / "c", database_url, s3_endpoint, other))
    assert said.startswith(f"refused: The file store s3://{other}/verity at {s3_endpoint}")
    assert "does not hold the marker" in said and "VERITY_STORAGE_URL" in said
    # the marker's id differs from the row's: another database's store
    db = open_database(node(tmp_path / "a", database_url))
    with db.session() as session:
        row = session.get(StoreMarker, 1)
        assert row is not None
        row.store_id = "0" * 32
    db.close()
    said = start(s3(tmp_path / "b", database_url, s3_endpoint, bucket))
    assert said.startswith("refused: ") and "belongs to another Verity database" in said


def test_an_unreachable_store_is_said_plainly(tmp_path):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # tried once (no retries, as tests/test_storage.py's store that is down): the same words, without
    # botocore's growing pauses between four more tries (~8 s of waiting)
    settings = s3(tmp_path, f"sqlite:///{tmp_path / 'v.db'}", f"http://127.0.0.1:{port}", "nowhere", storage_retries=0)
    said = start(settings)
    assert said.startswith(f"refused: The file store s3://nowhere/verity at http://127.0.0.1:{port} cannot be reached")


@pytest.fixture
def cli(monkeypatch, capsys):
    """`verity ARGS` in this process (`app.cli.main`, what `python -m app.cli` calls) with the
    environment a node's process gets: no VERITY_* but the given ones. What these tests look at is
    the command's exit code and words, which a second interpreter importing the whole app (~3 s of
    CPU each) does not change; the one check about a fresh process's imports keeps its own
    (test_the_worker_healthcheck_imports_none_of_the_analysis_stack), and `python -m app.cli` itself
    runs in tests/test_cli.py."""
    import logging
    import signal

    from app import cli as app_cli
    from app.config import get_settings

    def run(args: list[str], data_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
        for name in [k for k in os.environ if k.startswith("VERITY_")]:
            monkeypatch.delenv(name)
        # `serve` writes its bind address to the environment: set here, so that it is undone after
        monkeypatch.setenv("VERITY_HOST", "127.0.0.1")
        monkeypatch.setenv("VERITY_PORT", "8000")
        monkeypatch.setenv("VERITY_DATA_DIR", str(data_dir))
        monkeypatch.setenv("VERITY_LLM_MODEL", "builtin")
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setattr(logging.root, "handlers", list(logging.root.handlers))  # the worker sets its own
        monkeypatch.setattr(logging.root, "level", logging.root.level)
        monkeypatch.chdir(REPO)
        sigterm = signal.getsignal(signal.SIGTERM)  # the worker sets its own
        get_settings.cache_clear()
        capsys.readouterr()
        try:
            code = app_cli.main(list(args))
        except SystemExit as exc:  # --help: argparse's exit
            code = exc.code if isinstance(exc.code, int) else 1
        finally:
            signal.signal(signal.SIGTERM, sigterm)
            get_settings.cache_clear()
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["verity", *args], code, out, err)

    yield run
    get_settings.cache_clear()  # the settings of the restored environment on next use


def test_serve_and_worker_refuse_with_a_plain_message_and_help_does_not_check(tmp_path, cli):
    shared = f"sqlite:///{tmp_path / 'shared.db'}"
    assert start(node(tmp_path / "shared", shared)) == "made"
    for command in (["serve", "--port", "1"], ["worker", "--once"]):
        done = cli(command, tmp_path / "own", VERITY_DATABASE_URL=shared)
        assert done.returncode == 4, done.stderr
        assert done.stderr.startswith("error: The file store ") and "does not hold the marker" in done.stderr
        assert "Traceback" not in done.stderr + done.stdout
    # --help and inspect never ask the store: they answer with a store that does not exist
    elsewhere = {"VERITY_DATABASE_URL": shared, "VERITY_STORAGE_URL": "s3://nowhere/x"}
    assert cli(["--help"], tmp_path / "own", **elsewhere).returncode == 0
    sheet = tmp_path / "t.csv"
    sheet.write_text("a,b\n1,2\n", encoding="utf-8")
    inspected = cli(["inspect", str(sheet)], tmp_path / "own", **elsewhere)
    assert inspected.returncode == 0, inspected.stderr
    # the worker on the right store starts (and, with nothing queued, ends at once)
    done = cli(["worker", "--once"], tmp_path / "shared", VERITY_DATABASE_URL=shared, VERITY_RUN_EXECUTOR="worker")
    assert done.returncode == 0, done.stderr
    assert "0 run(s) executed" in done.stdout


def test_the_worker_healthcheck_reads_whether_the_worker_found_itself_well(tmp_path, cli):
    """`verity worker --alive` (docker-compose.yml's worker healthcheck): 1 before any worker ran in the
    folder; 0 once a worker's heartbeat found the database answering (here: a `--once` worker)."""
    shared = f"sqlite:///{tmp_path / 'shared.db'}"
    never = cli(["worker", "--alive"], tmp_path / "shared", VERITY_DATABASE_URL=shared)
    assert never.returncode == 1 and never.stderr.startswith("worker not well: ") and "never" in never.stderr
    ran = cli(["worker", "--once"], tmp_path / "shared", VERITY_DATABASE_URL=shared, VERITY_RUN_EXECUTOR="worker")
    assert ran.returncode == 0, ran.stderr
    alive = cli(["worker", "--alive"], tmp_path / "shared", VERITY_DATABASE_URL=shared)
    assert alive.returncode == 0, alive.stderr
    assert (tmp_path / "shared" / f"worker.{socket.gethostname()}.alive").is_file()


def test_the_worker_healthcheck_imports_none_of_the_analysis_stack(tmp_path):
    """The healthcheck runs every 15 s in every worker container within a 10 s timeout: it reads a file's
    age, so it must not import the agent, pandas or matplotlib (through app.worker it did, and on a busy
    two-core host it took 18-21 s: every worker was reported unhealthy)."""
    probe = (
        "import sys\n"
        "from app.cli import main\n"
        "code = main(['worker', '--alive'])\n"
        "heavy = sorted(m for m in ('app.worker', 'app.runs', 'app.agent', 'pandas', 'matplotlib') if m in sys.modules)\n"
        "print(code, heavy)\n"
    )
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith("VERITY_")},
        "VERITY_DATA_DIR": str(tmp_path),
        "PYTHONPATH": str(REPO),
    }
    done = subprocess.run(
        [sys.executable, "-c", probe], env=environment, capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert done.stdout.strip() == "1 []", done.stdout + done.stderr  # 1: no worker ran here yet


def test_nodes_starting_together_on_a_new_database_make_one_marker(tmp_path, database_url, s3_endpoint):  # noqa: F811
    """Four nodes (each its own engine and cache folder) start at the same moment on a new database and
    bucket: one makes the marker and the row, the others wait for it and match it."""
    from concurrent.futures import ThreadPoolExecutor

    bucket = new_bucket(s3_endpoint, f"together-{os.getpid()}-{len(database_url)}")
    nodes = [s3(tmp_path / f"n{k}", database_url, s3_endpoint, bucket) for k in range(4)]
    databases = [open_database(settings) for settings in nodes]  # migrated one by one (alembic is not thread-safe)
    try:
        with ThreadPoolExecutor(4) as pool:
            said = sorted(pool.map(lambda k: check_store(databases[k].sessionmaker, store_of(nodes[k])), range(4)))
    finally:
        for db in databases:
            db.close()
    assert said == ["made", "matched", "matched", "matched"]
    assert start(nodes[0]) == "matched"


@pytest.mark.parametrize("backend", ["local", "s3"])
def test_prune_deletes_the_files_of_deleted_workspaces_only(tmp_path, backend, s3_endpoint, cli):  # noqa: F811
    """Files of a workspace the database no longer holds go; a live workspace's stay, and so do those of an
    unknown workspace written within the grace (its row may not be committed yet)."""
    from app.storage import node_files

    url = f"sqlite:///{tmp_path / 'v.db'}"
    if backend == "s3":
        settings = s3(tmp_path / "node", url, s3_endpoint, new_bucket(s3_endpoint, f"prune-{os.getpid()}"))
    else:
        settings = node(tmp_path / "node", url)
    files = node_files(settings)
    db = open_database(settings)
    from app.workspaces import create_workspace

    with db.session() as session:
        live = create_workspace(session, "kept").id
    db.close()
    for workspace_id in (live, "0123456789abcdef"):
        for name in ("files/a/sales.csv", "figures/f.png"):
            path = settings.workspace_dir(workspace_id) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x", encoding="utf-8")
            files.saved(path)
    assert files.prune_deleted_workspaces({live}) == {}  # the unknown one was written just now: kept
    assert files.prune_deleted_workspaces({live}, grace_s=0, dry_run=True) == {"0123456789abcdef": 2}
    assert files.store.keys("workspaces/0123456789abcdef")  # a dry run deletes nothing
    done = cli(["prune", "--grace-hours", "0"], tmp_path / "node", **cli_env(settings))
    assert done.returncode == 0, done.stderr
    assert "deleted 2 file(s) of deleted workspace 0123456789abcdef" in done.stdout
    assert files.store.keys("workspaces/0123456789abcdef") == []
    assert len(files.store.keys(f"workspaces/{live}")) == 2


def cli_env(settings: Settings) -> dict[str, str]:
    env = {"VERITY_DATABASE_URL": str(settings.database_url)}
    if settings.storage_url:
        env |= {
            "VERITY_STORAGE_URL": settings.storage_url,
            "VERITY_STORAGE_ENDPOINT_URL": str(settings.storage_endpoint_url),
            "VERITY_STORAGE_REGION": "us-east-1",
            "VERITY_STORAGE_ACCESS_KEY_ID": ACCESS["storage_access_key_id"],
            "VERITY_STORAGE_SECRET_ACCESS_KEY": ACCESS["storage_secret_access_key"],
        }
    return env
