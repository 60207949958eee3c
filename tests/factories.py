"""Factories for tests: a database, a workspace with real uploaded data, a run service."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from pathlib import Path

from app.config import Settings
from app.db.session import Database, open_database
from app.runs import RunService
from app.workspaces import add_dataset, create_workspace

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "data" / "reference"  # published data with published results (its README.md)
CORPUS = REPO / "tests" / "data" / "corpus"  # other projects' hostile spreadsheets (its README.md)
SAMPLES = REPO / "data" / "samples"


def reference(relative: str) -> Path:
    """A file of data/reference. It is part of the repository, so a missing one fails the test."""
    path = REFERENCE / relative
    if not path.is_file():
        raise FileNotFoundError(f"{path} is not in this checkout (data/reference/README.md lists the files)")
    return path


def make_settings(tmp_path: Path, **overrides) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path / "runtime", **{"llm_model": "builtin", **overrides})


def workspace_with(db: Database, settings: Settings, path: Path, name: str = "test") -> str:
    with db.session() as session:
        workspace = create_workspace(session, name)
        add_dataset(session, settings, workspace, path, path.name)
        return workspace.id


def start_run(service: RunService, workspace_id: str, question: str) -> str:
    from app.db.models import Workspace

    with service.db.session() as session:
        return service.create(session, session.get(Workspace, workspace_id), question).id


def setup(tmp_path: Path, data: Path, model_factory=None, **overrides):
    settings = make_settings(tmp_path, **overrides)
    db = open_database(settings)
    service = RunService(db, settings, model_factory) if model_factory else RunService(db, settings)
    return settings, db, service, workspace_with(db, settings, data)


def wait_for_run(client, run_id: str, statuses, timeout: float = 120) -> dict:
    """Poll GET /api/runs/{run} until the run reaches one of `statuses` (background runs)."""
    import time

    deadline, body = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        body = client.get(f"/api/runs/{run_id}").json()
        if body["status"] in statuses:
            return body
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} never reached {statuses}: {body}")


def run_answered_in_own_words(tmp_path: Path, claim: str) -> tuple[Settings, Database, str]:
    """A finished run of a scripted language model on the sample workbook that records Revenue totals
    per Channel, then per Region (claimed as `claim`), then answers in words of its own with a number
    of its own: an answer that states none of the recorded claims (tests/test_answer_card.py,
    tests/test_report_first_pages.py)."""
    from app.agent.model.interface import ModelReply
    from tests.fakes import ScriptedModel, call

    model = ScriptedModel(
        [
            ModelReply(None, [call("group_aggregate", "c1", group_columns=["Channel"], value_columns=["Revenue"])]),
            ModelReply(
                None, [call("record_evidence", "c2", claim="Online sells most.", method="Sum", tool_call_ids=["c1"])]
            ),
            ModelReply(None, [call("group_aggregate", "c3", group_columns=["Region"], value_columns=["Revenue"])]),
            ModelReply(
                None, [call("record_evidence", "c4", claim=claim, method="Sum per region", tool_call_ids=["c3"])]
            ),
            ModelReply("Sales look healthy overall, with roughly 7 in 10 orders placed online."),
        ]
    )
    settings, db, service, ws = setup(tmp_path, SAMPLES / "retail_sales.xlsx", lambda *_: model)
    run_id = start_run(service, ws, "How are sales doing?")
    service.execute(run_id)
    return settings, db, run_id


def merged_sales_workbook(
    months: Iterable[int], shops: Sequence[tuple[str, int]], unit_price: int, sheet_per_shop: Sequence[str] = ()
) -> bytes:
    """A workbook of 2024's monthly sales with a merged two-row header: 门店/月份 under 基本信息, 销量/销售额
    under 销售情况. A row per month and shop: 销量 is the shop's base units plus the month's number, 销售额
    销量 × `unit_price` (the tests compute their expected numbers from the same rule). All on one sheet,
    or each shop on a sheet of its own named by `sheet_per_shop`."""
    from openpyxl import Workbook

    book = Workbook()
    default = book.active
    pages = [(default, list(shops))]
    if sheet_per_shop:
        book.remove(default)
        pages = [(book.create_sheet(name), [shop]) for name, shop in zip(sheet_per_shop, shops, strict=True)]
    months = list(months)
    for sheet, own in pages:
        sheet.append(["基本信息", None, "销售情况", None])
        sheet.append(["门店", "月份", "销量", "销售额"])
        sheet.merge_cells("A1:B1")
        sheet.merge_cells("C1:D1")
        for month in months:
            for shop, units in own:
                sheet.append([shop, f"2024-{month:02d}", units + month, (units + month) * unit_price])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def wait_until_ready(client, ws: str, dataset_id: str, limit_s: float = 60.0) -> dict:
    """The dataset once its background read has ended (GET .../datasets/{id} until its status is no
    longer "loading": ready, or failed with its error): for a test that needs the finished read of an
    upload, whatever the server's upload_wait_s and however busy the machine."""
    import time

    import pytest

    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        response = client.get(f"/api/workspaces/{ws}/datasets/{dataset_id}")
        assert response.status_code == 200, response.text
        dataset = response.json()["dataset"]
        if dataset["status"] != "loading":
            return dict(dataset)
        time.sleep(0.05)
    pytest.fail(f"dataset {dataset_id} still loading after {limit_s} s")
