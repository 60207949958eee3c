"""Traces (SPEC §10, §12): every model call and every tool call of a run is a span.

A model span is a `span` event (small: round, model, duration, tokens, finish reason, sizes,
errors) plus a JSON file `traces/{run}/{span}.json` with the exact request that went over the
wire and the response. Tool spans are the `tool_calls` rows (arguments, result, duration, error)
placed in order by their `tool_finished` events. No new tables; `span` events are kept out of the
page's event stream. `build_trace` assembles the whole trace for the page and the JSON API.
"""

from __future__ import annotations

import json
import secrets
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.agent.model.interface import ModelError, ModelReply
from app.agent.model.recovery import DeltaBuffer
from app.agent.store import Run, Session, ToolCall, run_events, run_tool_calls

if TYPE_CHECKING:
    from app.agent.recorder import RunRecorder
    from app.config import Settings

SPAN = "span"
# Progress events that the trace shows as spans (or that only animate the page) rather than notes.
NOT_NOTES = {SPAN, "answer_delta", "tool_started", "tool_finished", "model_call", "model_reply"}
INLINE_LIMIT = 300_000  # bytes of request/response JSON shown inline on the page; larger ones are linked

_Signature = tuple[Any, ...]  # a message's or schema's identity (_signature)
_Pins = tuple[Any, ...]  # the objects whose ids a cached signature holds


def trace_dir(settings: Settings, workspace_id: str, run_id: str) -> Path:
    return settings.workspace_dir(workspace_id) / "traces" / run_id


def traced_call(
    recorder: RunRecorder,
    model: Any,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    purpose: str = "reply",
    round_: int = 0,
) -> ModelReply:
    """Ask the model; record one span per HTTP exchange (or one for an in-process model). Any
    harness code that asks the model (intent fallback, summaries) can use it to appear in the trace."""
    streaming = getattr(model, "supports_streaming", False) and purpose in ("reply", "reemit")
    delta = DeltaBuffer(recorder.emit) if streaming else None
    started = time.perf_counter()
    try:
        reply: ModelReply = (
            model.complete(messages, tools, on_delta=delta) if streaming else model.complete(messages, tools)
        )
    except ModelError as exc:
        exchanges = exc.exchanges or [_local_exchange(messages, tools, started, error=str(exc))]
        record_model_spans(recorder, model, exchanges, purpose, round_)
        raise
    except Exception as exc:
        record_model_spans(
            recorder,
            model,
            [_local_exchange(messages, tools, started, error=f"{type(exc).__name__}: {exc}")],
            purpose,
            round_,
        )
        raise
    if delta:
        delta.flush()
    record_model_spans(
        recorder, model, reply.exchanges or [_local_exchange(messages, tools, started, reply=reply)], purpose, round_
    )
    return reply


def _local_exchange(
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    started: float,
    reply: ModelReply | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    """A model that runs in-process (the built-in analyst, a scripted test model) gets exactly
    the messages and tools; that is its request."""
    exchange: dict[str, Any] = {
        "purpose": "reply",
        "request": {"messages": messages, "tools": tools},
        "duration_ms": round((time.perf_counter() - started) * 1000, 1),
        "http_attempts": 0,
    }
    if reply is not None:
        exchange["response"] = {
            "content": reply.content,
            "finish_reason": reply.finish_reason,
            "usage": reply.usage,
            "tool_calls": [
                {
                    "id": c.id,
                    "name": c.name,
                    "arguments": c.raw_arguments or json.dumps(c.arguments, ensure_ascii=False),
                }
                for c in reply.tool_calls
            ],
        }
    if error:
        exchange["error"] = error
    return exchange


def record_model_spans(
    recorder: RunRecorder, model: Any, exchanges: list[dict[str, Any]], purpose: str, round_: int
) -> list[str]:
    return [
        record_model_span(
            recorder,
            exchange,
            round_,
            getattr(model, "name", ""),
            purpose if i == 0 else exchange.get("purpose", purpose),
        )
        for i, exchange in enumerate(exchanges)
    ]


def record_model_span(recorder: RunRecorder, exchange: dict[str, Any], round_: int, model: str, purpose: str) -> str:
    """Store the request/response payload first (nothing is lost if the event fails), then the span."""
    span_id = "m" + secrets.token_hex(6)
    request, response = exchange.get("request") or {}, exchange.get("response") or {}
    raw = exchange.get("request_raw")  # the bytes that went over the wire, when there was a wire
    request_text = raw.decode("utf-8") if raw else encode_request(recorder, request)
    payload = (
        '{"request": ' + request_text + ', "response": ' + json.dumps(response, ensure_ascii=False, default=str) + "}"
    )
    data: dict[str, Any] = {
        "span_id": span_id,
        "type": "model",
        "round": round_,
        "purpose": purpose,
        "model": model,
        "duration_ms": exchange.get("duration_ms"),
        "http_attempts": exchange.get("http_attempts", 0),
        "finish_reason": response.get("finish_reason"),
        "usage": response.get("usage") or {},
        "tool_calls": [c.get("name") for c in response.get("tool_calls") or []],
        "error": exchange.get("error"),
        "sizes": {
            "messages": len(request.get("messages") or []),
            "tools": len(request.get("tools") or []),
            "request_bytes": len(raw) if raw else len(request_text.encode("utf-8")),
            "response_chars": len(response.get("content") or ""),
        },
        "parameters": sorted(k for k in request if k not in ("messages", "tools")),
    }
    folder = getattr(recorder, "trace_dir", None)
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{span_id}.json").write_text(payload, encoding="utf-8")
        kept = getattr(recorder, "kept", None)
        if kept is not None:  # into the object store: the trace page of any node shows it
            kept(str(folder / f"{span_id}.json"))
        data["payload"] = f"{span_id}.json"
    else:
        data["payload_inline"] = json.loads(payload)
    recorder.emit(SPAN, data, commit=bool(exchange.get("error")))  # else committed with the next write
    return span_id


class RequestEncoder:
    """JSON of a request that is mostly the same as last round's: each message and each tool
    schema is encoded once and reused while it is built from the same objects (the harness
    replaces a message's content rather than editing it; healing rebuilds tool-call lists from
    the same call dicts; schemas are rebuilt around the same parameter dicts). Keeps tracing a
    200-message history cheap (bench/harness_overhead.py)."""

    def __init__(self) -> None:
        self.cache: dict[_Signature, tuple[_Pins, str]] = {}

    def encode(self, request: dict[str, Any]) -> str:
        fresh: dict[_Signature, tuple[_Pins, str]] = {}
        parts = []
        for key, value in request.items():
            if key in ("messages", "tools") and isinstance(value, list):
                text = "[" + ", ".join(self.item(v, fresh) for v in value) + "]"
            else:
                text = json.dumps(value, ensure_ascii=False, default=str)
            parts.append(json.dumps(key) + ": " + text)
        self.cache = fresh  # only what the current request holds stays cached
        return "{" + ", ".join(parts) + "}"

    def item(self, value: Any, fresh: dict[_Signature, tuple[_Pins, str]]) -> str:
        signature, pins = _signature(value)
        hit = self.cache.get(signature) or fresh.get(signature)
        if hit is None:  # the entry pins the leaves, so their ids cannot be reused meanwhile
            hit = (pins, json.dumps(value, ensure_ascii=False, default=str))
        fresh[signature] = hit
        return hit[1]


def _signature(value: Any) -> tuple[_Signature, _Pins]:
    """Identity of a message or tool schema two levels deep: its keys, the ids of its values and,
    for a nested dict or list, the ids of what it holds. Returns the pins that keep those ids
    from being reused while the entry is cached."""
    if not isinstance(value, dict):
        return (id(value),), (value,)
    signature: list[tuple[Any, ...]] = []
    pins: list[Any] = [value, *value.values()]
    for key, child in value.items():
        if isinstance(child, dict):
            signature.append((key, tuple(child), tuple(map(id, child.values()))))
            pins.extend(child.values())
        elif isinstance(child, list):
            signature.append((key, tuple(map(id, child))))
            pins.extend(child)
        else:
            signature.append((key, id(child)))
    return tuple(signature), tuple(pins)


_encoders: weakref.WeakKeyDictionary[Any, RequestEncoder] = weakref.WeakKeyDictionary()


def encode_request(recorder: Any, request: dict[str, Any]) -> str:
    try:
        encoder = _encoders.setdefault(recorder, RequestEncoder())
    except TypeError:  # an object that cannot be weakly referenced
        encoder = RequestEncoder()
    return encoder.encode(request)


# --- reading -------------------------------------------------------------------------------
def build_trace(session: Session, run: Run, folder: Path, inline_payloads: bool = True) -> dict[str, Any]:
    """The run's spans in order (model calls and tool calls), plus the harness notes between them."""
    events = run_events(session, run.id)
    calls = {c.id: c for c in run_tool_calls(session, run.id)}
    items: list[dict[str, Any]] = []
    budget_table = None  # the context budget of the next model call (the `model_call` event)
    for event in events:
        data = event.data or {}
        if event.kind == "model_call":
            budget_table = data.get("context")
        elif event.kind == SPAN:
            items.append({**model_span(data, folder, inline_payloads, event.created_at), "budget_table": budget_table})
        elif event.kind == "tool_finished" and data.get("id") in calls:
            items.append(tool_span(calls.pop(data["id"]), event.created_at))
        elif event.kind not in NOT_NOTES:
            items.append({"type": "note", "kind": event.kind, "data": data, "at": _iso(event.created_at)})
    items += [tool_span(c, c.created_at) for c in sorted(calls.values(), key=lambda c: c.created_at)]
    spans = [i for i in items if i["type"] != "note"]
    totals = {
        "model_calls": sum(s["type"] == "model" for s in spans),
        "tool_calls": sum(s["type"] == "tool" for s in spans),
        "input_tokens": sum((s.get("usage") or {}).get("input_tokens") or 0 for s in spans),
        "output_tokens": sum((s.get("usage") or {}).get("output_tokens") or 0 for s in spans),
        "errors": sum(bool(s.get("error")) for s in spans),
    }
    return {
        "run_id": run.id,
        "workspace_id": run.workspace_id,
        "status": run.status,
        "question": run.question,
        "model": {"kind": run.model_kind, "name": run.model_name},
        "totals": totals,
        "items": items,
    }


def model_span(data: dict[str, Any], folder: Path, inline: bool, at: Any) -> dict[str, Any]:
    span = {k: v for k, v in data.items() if k != "payload_inline"}
    span["at"] = _iso(at)
    if inline:
        span.update(load_payload(data, folder))
    return span


def load_payload(data: dict[str, Any], folder: Path) -> dict[str, Any]:
    """{"request": ..., "response": ...} of a model span (empty when the file is gone)."""
    if "payload_inline" in data:
        return dict(data["payload_inline"])
    path = folder / str(data.get("payload", ""))
    if not data.get("payload") or not path.is_file() or path.parent.resolve() != folder.resolve():
        return {"request": None, "response": None}
    payload: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))  # written by record_model_span
    return payload


def tool_span(call: ToolCall, at: Any) -> dict[str, Any]:
    arguments = json.dumps(call.arguments or {}, ensure_ascii=False, default=str)
    return {
        "type": "tool",
        "span_id": call.id,
        "tool": call.tool,
        "arguments": call.arguments or {},
        "ok": call.ok,
        "duration_ms": call.duration_ms,
        "error": call.error,
        "sizes": {"argument_chars": len(arguments), "result_chars": len(call.result_text or "")},
        "result": call.result_text or "",
        "at": _iso(at),
    }


def _iso(moment: Any) -> str | None:
    return moment.isoformat() if moment is not None else None


class TracedModel:
    """A ChatModel whose every request becomes a trace span: for the harness's own requests
    (intent fallback, context summaries) outside the loop's reply path."""

    def __init__(self, model: Any, recorder: RunRecorder, purpose: str):
        self.model, self.recorder, self.purpose = model, recorder, purpose
        self.kind, self.name = getattr(model, "kind", ""), getattr(model, "name", "")

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        return traced_call(self.recorder, self.model, messages, tools, purpose=self.purpose)
