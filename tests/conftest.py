"""Shared fixtures: settings in a temp data dir, the app client, no internet, sample files.

In CI (`CI=true`) nothing the CI machine is meant to have may skip quietly: a run without the
reference data (data/reference/) or the corpus (tests/data/corpus/) of the checkout, PostgreSQL, RabbitMQ,
the committed samples or Chromium stops at the start with what is missing, and a test that would
skip for one of them fails instead.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
import subprocess
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import create_engine, text

from app.config import Settings
from tests.factories import CORPUS, REFERENCE, REPO, SAMPLES

if TYPE_CHECKING:
    from fastapi.testclient import TestClient

IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
# The in-process client's requests name the host "testserver"; a server without sign-in answers
# only to names it knows (DNS rebinding, app/web/security.py), so the tests add it, as Django's
# test runner adds it to ALLOWED_HOSTS. tests/test_web_edge.py checks the guard without it.
os.environ.setdefault("VERITY_ALLOWED_HOSTS", "testserver")
# Every upload is read in the background; its request waits up to upload_wait_s for the read (1 s by
# default). The tests that check what a read upload shows wait for the read as long as it takes, so
# a busy test machine never turns them into a "still loading" answer: the same background read, only
# a longer wait. tests/test_upload_progress.py sets it to 0 to see the loading answer and its progress.
os.environ.setdefault("VERITY_UPLOAD_WAIT_S", "120")
# The checkout's own data that the tests read: a clone that lacks one is broken, not a machine
# without an optional resource (tests/test_self_contained.py keeps it that way).
IN_REPOSITORY = {
    REFERENCE / "nist": "the NIST reference data",
    REFERENCE / "rdatasets": "the R datasets",
    CORPUS / "calamine": "the spreadsheet corpus",
    CORPUS / "messytables": "the spreadsheet corpus",
    CORPUS / "tablib": "the spreadsheet corpus",
}
# Words in the skip reasons of tests that need what CI has (the skips are spread over the test
# modules; their reasons name the resource). In CI such a skip is a failure.
NEEDED_IN_CI = ("reference data", "corpus", "postgresql", "rabbitmq", "sample", "chromium", "playwright")


class InternetBlocked(OSError):
    """Tests never reach the internet; a live LLM or remote fetch is a test bug."""


def _is_local(address) -> bool:
    if not isinstance(address, tuple):  # AF_UNIX paths and the like
        return True
    host = str(address[0])
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def pytest_sessionstart(session: pytest.Session) -> None:
    if not IN_CI:
        return
    missing = [f"{folder} ({what})" for folder, what in IN_REPOSITORY.items() if not any(folder.glob("*"))]
    if (reason := _postgres_unreachable()) is not None:
        missing.append(f"PostgreSQL at {PG_ADMIN} ({reason})")
    try:
        socket.create_connection(("127.0.0.1", 5672), timeout=2).close()
    except OSError as exc:
        missing.append(f"RabbitMQ at 127.0.0.1:5672 ({type(exc).__name__})")
    if missing:
        pytest.exit(
            "CI=true, but the tests need what is missing here:\n  "
            + "\n  ".join(missing)
            + "\nOutside CI a test that needs one of them skips (or fails); in CI it must run.",
            returncode=3,
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The long files first. The suite runs on 2 workers that each take the next whole file when done
    (pyproject.toml's addopts: `--dist loadfile --no-loadscope-reorder`, which keeps this order): a long
    file handed out last keeps one worker busy while the other has nothing left, so the files with
    tests marked slow (servers and workers as processes, whole question sets) are handed out before
    the rest, the most slow tests first; after them the files with the most tests, as xdist orders
    them by itself. A stable sort: the tests of a file keep their order."""

    def file_of(item: pytest.Item) -> str:
        return item.nodeid.split("::")[0]

    tests = Counter(file_of(item) for item in items)
    slow = Counter(file_of(item) for item in items if item.get_closest_marker("slow") is not None)
    items.sort(key=lambda item: (-slow[file_of(item)], -tests[file_of(item)]))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The files that took longest (setup, call and teardown of their tests together, summed over both
    workers): where the suite's time goes, for keeping it within its 15 minutes (.ci/run prints it)."""
    per_file: Counter[str] = Counter()
    for reports in terminalreporter.stats.values():
        for report in reports:
            if isinstance(getattr(report, "duration", None), float) and getattr(report, "nodeid", ""):
                per_file[report.nodeid.split("::")[0]] += report.duration
    if len(per_file) > 1:
        terminalreporter.write_sep("=", "slowest files (test seconds, both workers)")
        for name, seconds in per_file.most_common(20):
            terminalreporter.write_line(f"{seconds:8.1f}  {name}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    outcome = yield
    _fail_needed_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _fail_needed_skip(outcome.get_result())  # a module that skips itself at import


def _fail_needed_skip(report) -> None:
    if not (IN_CI and report.skipped):
        return
    reason = str(report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr)
    reason = reason.removeprefix("Skipped: ")
    if any(word in reason.lower() for word in NEEDED_IN_CI):
        report.outcome = "failed"
        report.longrepr = f"CI=true: this test must run here, but it skipped: {reason}"


def _postgres_unreachable() -> str | None:
    try:
        engine = create_engine(PG_ADMIN)
        with engine.connect():
            pass
        engine.dispose()
    except Exception as exc:  # noqa: BLE001 - any failure to connect is the answer
        return type(exc).__name__
    return None


@pytest.fixture(autouse=True)
def fresh_settings() -> Iterator[None]:
    """The process-wide settings are read from the environment once and cached; a test that sets
    VERITY_* variables must not find the values an earlier test's app cached."""
    from app.config import get_settings

    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture(autouse=True)
def no_internet(monkeypatch: pytest.MonkeyPatch) -> None:
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def guarded(real):
        def connect(self, address, *args, **kwargs):
            if not _is_local(address):
                raise InternetBlocked(f"tests may not connect to {address!r}")
            return real(self, address, *args, **kwargs)

        return connect

    monkeypatch.setattr(socket.socket, "connect", guarded(real_connect))
    monkeypatch.setattr(socket.socket, "connect_ex", guarded(real_connect_ex))


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        _env_file=None, data_dir=tmp_path, llm_model="builtin", sse_poll_interval_s=0.05, sse_heartbeat_s=1.0
    )


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    from fastapi.testclient import TestClient

    from app.main import create_app

    with TestClient(create_app(settings)) as test_client:
        yield test_client


@pytest.fixture
def verity_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`verity ARGS` in this process: `app.cli.main(ARGS)`, what `python -m app.cli ARGS` calls, in the
    environment such a process gets (VERITY_DATA_DIR = tmp_path/runtime unless given, the built-in
    analyst, no API key, a stdin that is no terminal); its exit code, stdout and stderr come back as a
    CompletedProcess. For tests about what a command answers or writes: a second interpreter importing
    the whole app for it costs ~3 s of CPU and proves nothing more. Where the process itself is what a
    test is about (its imports, its start, being killed) the test keeps its own interpreter, and
    `python -m app.cli` itself runs in tests/test_cli.py."""
    import io
    import logging
    import sys

    from app import cli
    from app.config import get_settings

    def run(*args: object, cwd: Path = REPO, **env: str) -> subprocess.CompletedProcess[str]:
        for name in ("VERITY_LLM_API_KEY", "OPENAI_API_KEY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("VERITY_DATA_DIR", str(tmp_path / "runtime"))
        monkeypatch.setenv("VERITY_LLM_MODEL", "builtin")
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.chdir(cwd)
        monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # as stdin=DEVNULL: never a terminal
        handlers = list(logging.root.handlers)
        monkeypatch.setattr(logging.root, "handlers", list(handlers))  # a command sets its own
        monkeypatch.setattr(logging.root, "level", logging.root.level)
        argv = [str(arg) for arg in args]
        get_settings.cache_clear()
        capsys.readouterr()
        try:
            code = cli.main(argv)
        finally:
            get_settings.cache_clear()
            for handler in logging.root.handlers:
                if handler not in handlers:  # the command's log file
                    handler.close()
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["verity", *argv], code, out, err)

    return run


def sample_path(name: str) -> Path:
    """A committed demo workbook; `VERITY_TEST_SAMPLES` points elsewhere while they are being made."""
    folder = Path(os.environ.get("VERITY_TEST_SAMPLES", SAMPLES))
    path = folder / name
    if not path.is_file():
        pytest.skip(f"sample {name} is not there yet")
    return path


@pytest.fixture
def retail_sales() -> Path:
    return sample_path("retail_sales.xlsx")


PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
RABBITMQ = os.environ.get("VERITY_TEST_RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672/")


@pytest.fixture
def rabbitmq_url() -> str:
    """The job queue's broker (run_executor=dramatiq; tests/test_queue.py, tests/test_two_nodes.py)."""
    try:
        socket.create_connection(("127.0.0.1", 5672), timeout=2).close()
    except OSError as exc:
        pytest.skip(f"RabbitMQ not reachable: {type(exc).__name__}")  # in CI the skip fails the test
    return RABBITMQ


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """A new, empty PostgreSQL database for as long as the block runs; dropped after (skips the test
    where no server answers: in CI the skip fails it)."""
    try:
        admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            name = f"verity_test_{secrets.token_hex(4)}"
            connection.execute(text(f"CREATE DATABASE {name}"))
    except Exception as exc:  # noqa: BLE001 - no server on this machine
        pytest.skip(f"PostgreSQL not reachable: {type(exc).__name__}")
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    finally:
        with admin.connect() as connection:
            connection.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    with fresh_postgres_database() as url:
        yield url


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Holds every background read of an upload (`app.workspaces.load_table_bounded`, the real one
    after) until the test sets it (tests/test_upload_background.py, test_upload_progress.py)."""
    from app import workspaces

    event, real = threading.Event(), workspaces.load_table_bounded

    def gated(*args, **kwargs):
        event.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(workspaces, "load_table_bounded", gated)
    yield event
    event.set()


@pytest.fixture
def unwaiting_client(tmp_path: Path, gate: threading.Event) -> Iterator[Callable[..., TestClient]]:
    """Opens the server answering an upload at once, without waiting for its read (upload_wait_s=0),
    the gate holding the read: `unwaiting_client(model_factory=..., **settings)` (tests/test_upload_background.py,
    test_upload_progress.py). After the test the gate opens and every read finishes before the app closes."""
    from fastapi.testclient import TestClient

    from app.main import create_app

    opened: list[Any] = []
    with ExitStack() as stack:

        def open_client(model_factory: Any = None, **overrides: Any) -> TestClient:
            settings = Settings(
                _env_file=None, data_dir=tmp_path / "data", llm_model="builtin", upload_wait_s=0.0, **overrides
            )
            application = create_app(settings, model_factory=model_factory)
            opened.append(application)
            return stack.enter_context(TestClient(application))

        yield open_client
        gate.set()
        for application in opened:
            executor = (getattr(application.state, "background_pools", None) or {}).get("ingest")
            if executor is not None:
                executor.shutdown(wait=True)
