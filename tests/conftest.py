"""Shared fixtures: settings in a temp data dir, the app client, no internet, sample files."""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
from pathlib import Path
from typing import Iterator

import pytest
from sqlalchemy import create_engine, text

from app.config import Settings

from tests.factories import REPO, SAMPLES  # noqa: F401 (fixtures below use them)


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
    return Settings(_env_file=None, data_dir=tmp_path, llm_model="builtin", sse_poll_interval_s=0.05,
                    sse_heartbeat_s=1.0)


@pytest.fixture
def client(settings: Settings) -> Iterator["TestClient"]:
    from fastapi.testclient import TestClient

    from app.main import create_app

    with TestClient(create_app(settings)) as test_client:
        yield test_client


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


@pytest.fixture
def postgres_url():
    try:
        admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            name = f"verity_test_{secrets.token_hex(4)}"
            connection.execute(text(f"CREATE DATABASE {name}"))
    except Exception as exc:  # no server on this machine
        pytest.skip(f"PostgreSQL not reachable: {type(exc).__name__}")
    yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    with admin.connect() as connection:
        connection.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
    admin.dispose()
