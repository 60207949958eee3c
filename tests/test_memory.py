"""Memory (SPEC §6): earlier runs' findings reach later turns at the memory tier, with their
origin, newest first within a budget, and marked stale once the data has changed."""

from __future__ import annotations

import pytest

from app.agent.context.tiers import TIERS
from app.agent.model.interface import ModelReply
from app.db.models import Dataset, Evidence
from app.runs import RunService
from app.workspaces import add_version, load_frame
from tests.factories import setup, start_run
from tests.fakes import ScriptedModel
from tests.test_trust import blocks_of

pytestmark = pytest.mark.slow  # a server, a run or a child per test: handed out early (tests/conftest.py)

QUESTION = "Does revenue differ by region?"


def memory_of(model: ScriptedModel) -> str:
    system = model.requests[0]["messages"][0]["content"]
    found = [body for _, tier, body in blocks_of(system) if tier == "memory"]
    return found[0] if found else ""


def test_findings_of_earlier_runs_are_remembered_and_marked_stale_when_data_changes(tmp_path, retail_sales):
    settings, db, builtin, ws = setup(tmp_path, retail_sales)
    first = start_run(builtin, ws, QUESTION)
    builtin.execute(first)
    with db.session() as s:
        claims = [e.claim for e in s.query(Evidence).filter_by(run_id=first)]
    assert claims

    model = ScriptedModel([ModelReply("ok"), ModelReply("ok")])
    scripted = RunService(db, settings, lambda *_: model)
    scripted.execute(start_run(scripted, ws, "And by channel?"))
    memory = memory_of(model)
    assert TIERS["memory"][1] in memory and f"· {QUESTION}]" in memory
    assert any(" ".join(c.split()) in memory for c in claims) and "recompute" not in memory

    with db.session() as s:  # a cleaning step makes a new version: the old findings may be stale now
        dataset = s.query(Dataset).filter_by(workspace_id=ws, active=True).one()
        add_version(s, settings, dataset, load_frame(dataset, settings).head(50), "kept the first 50 rows")
    model.requests.clear()
    scripted.execute(start_run(scripted, ws, "And by channel, again?"))
    assert "the data changed after this was found: recompute" in memory_of(model)


def test_memory_respects_its_budget(tmp_path, retail_sales):
    settings, db, builtin, ws = setup(tmp_path, retail_sales)
    builtin.execute(start_run(builtin, ws, QUESTION))
    sizes = {}
    for budget in (0, 200, 1_500):
        model = ScriptedModel([ModelReply("ok")])
        service = RunService(db, settings.model_copy(update={"memory_budget_chars": budget}), lambda *_: model)
        service.execute(start_run(service, ws, "x?"))
        sizes[budget] = memory_of(model).count("\n- [") + memory_of(model).startswith("- [")
    assert sizes[0] == 0 and 0 < sizes[200] < sizes[1_500]
