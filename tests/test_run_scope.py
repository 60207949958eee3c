"""The run scope (app/agent/run_scope.py): the typed state harness tools share, carried opaquely by
ToolContext, read through one accessor that says what is missing."""

from __future__ import annotations

import pytest

from analysis_tools import ToolContext
from app.agent.model.interface import ToolCallRequest
from app.agent.run_scope import RunScope, ScopeMissing, run_scope
from app.agent.tools.toolbox import HARNESS_REGISTRY, DatasetCatalog, Toolbox


def test_the_accessor_names_what_is_missing():
    with pytest.raises(ScopeMissing, match="carries no run scope"):
        run_scope(ToolContext())
    with pytest.raises(ScopeMissing, match="carries no run scope"):
        run_scope(ToolContext(scope={"session": None}))  # the old string-keyed bag is refused, not read
    with pytest.raises(ScopeMissing, match="no run_id"):
        RunScope(workspace_id="w").need_run_id()
    assert run_scope(None, missing_ok=True) == RunScope()


def test_a_harness_tool_run_without_its_scope_fails_with_a_clear_internal_error():
    result = HARNESS_REGISTRY.run("task_list", None, ToolContext())
    assert not result.ok and result.error["error"] == "internal_error"
    assert result.error["message"].startswith("ScopeMissing: the tool context carries no run scope")
    partial = HARNESS_REGISTRY.run("task_list", None, ToolContext(scope=RunScope(run_id="r1")))
    assert "the run scope has no session" in partial.error["message"]


def test_a_reader_that_does_without_says_not_available():
    result = HARNESS_REGISTRY.run("compact_context", None, ToolContext(), reason="long")
    assert not result.ok and result.error["error"] == "not_available"


def test_the_toolbox_and_its_calls_share_one_scope():
    context = ToolContext()
    box = Toolbox(DatasetCatalog(), context)
    scope = run_scope(context)
    assert scope.exposure is box.exposure  # tool_search finds the toolbox's exposure through it
    found = box.execute(ToolCallRequest("c1", "tool_search", {"query": "correlation"}, "{}"))
    assert found.ok and "correlation_analysis" in found.payload["tools"]
    scope.pause = {"question_id": "q1", "call_id": "c0", "topic": "metric"}  # as ask_user_question sets it
    assert box.pause_requested == scope.pause
    held = box.execute(ToolCallRequest("c2", "tool_search", {"query": "mean"}, "{}"))
    assert not held.ok and held.error["error"] == "waiting_for_user"


def test_the_run_scope_is_a_leaf():
    """Any harness module can import it without making a circle: its types are for type checking only."""
    from tests.test_architecture import module_imports

    assert module_imports("app", type_checking=False)["app.agent.run_scope"] == set()
