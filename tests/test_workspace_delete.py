"""Deleting a workspace (SPEC §7: deleting needs explicit confirmation): every row and file goes,
nothing of other workspaces does, and a busy workspace is not deleted under a running analysis."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import inspect, text

from app.config import Settings
from app.main import create_app
from tests.factories import wait_for_run

pytestmark = pytest.mark.slow  # a server, a run or a child per test: handed out early (tests/conftest.py)


def analysed(client: TestClient, data) -> tuple[str, str]:
    ws = client.post("/api/workspaces", json={"name": "to delete"}).json()["id"]
    with open(data, "rb") as handle:
        assert client.post(f"/api/workspaces/{ws}/files", files={"file": (data.name, handle)}).status_code == 201
    client.post(f"/api/workspaces/{ws}/knowledge", json={"title": "Note", "text": "Revenue is net."})
    run = client.post(f"/api/workspaces/{ws}/messages", json={"text": "Does revenue differ by region?"}).json()[
        "run_id"
    ]
    assert wait_for_run(client, run, {"done"})["status"] == "done"
    return ws, run


def rows_of(client: TestClient, ws: str, run: str) -> dict[str, int]:
    """Rows that still mention the workspace or its run, per table."""
    engine = client.app.state.db.engine
    found = {}
    with engine.connect() as connection:
        for table in inspect(engine).get_table_names():
            columns = {c["name"] for c in inspect(engine).get_columns(table)}
            for column, value in (("workspace_id", ws), ("run_id", run), ("id", ws)):
                if column in columns and table != "alembic_version":
                    n = connection.execute(
                        text(f"SELECT COUNT(*) FROM {table} WHERE {column} = :v"), {"v": value}
                    ).scalar()
                    found[f"{table}.{column}"] = n
    return found


def test_deleting_a_workspace_removes_every_row_and_file(client, settings, retail_sales):
    keep, _ = analysed(client, retail_sales)
    ws, run = analysed(client, retail_sales)
    assert sum(rows_of(client, ws, run).values()) > 0 and (settings.workspace_dir(ws)).is_dir()
    unconfirmed = client.delete(f"/api/workspaces/{ws}")
    assert unconfirmed.status_code == 409 and unconfirmed.json()["error"]["category"] == "confirmation_required"
    deleted = client.delete(f"/api/workspaces/{ws}?confirm=true")
    assert (
        deleted.status_code == 200 and deleted.json()["rows"]["runs"] == 1 and deleted.json()["rows"]["knowledge"] == 1
    )
    assert sum(rows_of(client, ws, run).values()) == 0, rows_of(client, ws, run)
    assert not settings.workspace_dir(ws).exists()
    assert client.get(f"/api/runs/{run}").status_code == 404 and client.get(f"/workspaces/{ws}").status_code == 404
    # the other workspace is untouched
    assert (
        client.get(f"/api/workspaces/{keep}/report.json").status_code == 200 and settings.workspace_dir(keep).is_dir()
    )


def test_the_page_asks_first_and_a_busy_workspace_waits(tmp_path, retail_sales):
    settings = Settings(_env_file=None, data_dir=tmp_path, llm_model="builtin", run_executor="worker")
    with TestClient(create_app(settings)) as client:
        ws = client.post("/api/workspaces", json={"name": "季度复盘"}).json()["id"]
        asked = client.post(f"/workspaces/{ws}/delete", headers={"accept-language": "zh-CN"})
        assert asked.status_code == 200 and "季度复盘" in asked.text and "永久删除" in asked.text
        run = client.post(f"/api/workspaces/{ws}/messages", json={"text": "hello there, what is in the data?"})
        assert run.status_code == 202  # queued: no worker runs it in this test
        busy = client.delete(f"/api/workspaces/{ws}?confirm=true")
        assert busy.status_code == 409 and busy.json()["error"]["category"] == "busy"
        assert client.post(f"/workspaces/{ws}/delete", data={"confirm": "yes"}).status_code == 409
        client.post(f"/api/runs/{run.json()['run_id']}/interrupt")
        gone = client.post(f"/workspaces/{ws}/delete", data={"confirm": "yes"}, follow_redirects=False)
        assert gone.status_code == 303 and gone.headers["location"].endswith("/")
        assert "季度复盘" not in client.get("/").text
