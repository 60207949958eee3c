"""The ChatModel interface and its OpenAI-compatible implementation.

Messages and tool schemas are in OpenAI chat-completions format everywhere in the harness; a
ChatModel takes them and returns one `ModelReply`. The built-in analyst (builtin.py) implements
the same interface, so the loop cannot tell them apart.
"""

from __future__ import annotations

import ast
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import openai

from app.agent.model_recovery import StreamCollector, cut_off_empty, length_ladder, request_body
from app.config import Settings


@dataclass
class ToolCallRequest:
    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""
    argument_error: str | None = None  # set when the arguments could not be repaired

    def as_message_part(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": json.dumps(self.arguments, ensure_ascii=False)},
        }


@dataclass
class ModelReply:
    content: str | None
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    finish_reason: str = "stop"
    usage: dict[str, int] = field(default_factory=dict)
    exchanges: list[dict[str, Any]] = field(default_factory=list)  # each HTTP request/response, for the trace

    def as_message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [c.as_message_part() for c in self.tool_calls]
        return message


class ChatModel(Protocol):
    kind: str  # "builtin" | "openai-compatible"
    name: str

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply: ...


class ModelError(Exception):
    """The model endpoint failed after retries; the message is safe to show to a user."""

    def __init__(self, message: str, exchanges: list[dict[str, Any]] | None = None):
        super().__init__(message)
        self.exchanges = exchanges or []  # what was sent before the failure, for the trace


class OpenAICompatibleModel:
    """Any chat-completions endpoint with function calling, through the official client.

    The client retries timeouts, 429 and 5xx with exponential backoff (max_retries). Only
    parameters the user configured are sent, since some providers reject unknown ones. The exact
    bytes of every HTTP request are kept for the trace (an httpx request hook).
    """

    kind = "openai-compatible"
    supports_streaming = True

    def __init__(self, settings: Settings):
        self.name = settings.llm_model or ""
        self.settings = settings
        self._sent: list[bytes] = []
        self.client = openai.OpenAI(
            base_url=settings.llm_base_url,
            api_key=settings.llm_api_key or "not-needed",
            timeout=settings.llm_timeout_s,
            max_retries=settings.llm_max_retries,
            http_client=openai.DefaultHttpxClient(event_hooks={"request": [lambda r: self._sent.append(r.content)]}),
        )

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_delta: Callable[[str | None], None] | None = None,
    ) -> ModelReply:
        """One reply; an empty reply cut off by `finish_reason=length` is asked again with a
        larger output budget (model_recovery.length_ladder)."""
        exchanges: list[dict[str, Any]] = []
        ladder = length_ladder(self.settings.llm_max_output_tokens, self.settings.llm_length_retry_tokens)
        for step, max_tokens in enumerate(ladder):
            message = self._exchange(
                request_body(self.settings, self.name, messages, tools, max_tokens),
                exchanges,
                on_delta,
                "length-retry" if step else "reply",
            )
            if not cut_off_empty(message["finish_reason"], message["content"], message["tool_calls"]):
                break
        calls = [_tool_call(c["id"], c["name"], c["arguments"]) for c in message["tool_calls"]]
        return ModelReply(message["content"], calls, message["finish_reason"], message["usage"], exchanges)

    def _exchange(
        self, body: dict[str, Any], exchanges: list[dict[str, Any]], on_delta, purpose: str
    ) -> dict[str, Any]:
        """One logical request (the client may send it several times); returns the reply message."""
        self._sent.clear()
        started = time.perf_counter()
        record = {"purpose": purpose, "request": body}
        exchanges.append(record)
        try:
            response = self.client.chat.completions.create(**body)
            message = StreamCollector(on_delta).feed(response).message() if body.get("stream") else _message(response)
        except openai.APIError as exc:
            record.update(self._http_facts(started), error=f"{type(exc).__name__}: {exc}")
            raise ModelError(f"The language model service failed: {type(exc).__name__}: {exc}", exchanges) from exc
        record.update(self._http_facts(started), response=message)
        return message

    def _http_facts(self, started: float) -> dict[str, Any]:
        facts: dict[str, Any] = {
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
            "http_attempts": len(self._sent),
        }
        if self._sent:
            facts["request_raw"] = self._sent[-1]  # exactly what went over the wire (the trace stores it)
        return facts


def _message(response: Any) -> dict[str, Any]:
    choice = response.choices[0]
    usage = {}
    if response.usage:
        usage = {"input_tokens": response.usage.prompt_tokens, "output_tokens": response.usage.completion_tokens}
    calls = [
        {"id": c.id, "name": c.function.name, "arguments": c.function.arguments or ""}
        for c in (choice.message.tool_calls or [])
    ]
    return {
        "content": choice.message.content,
        "tool_calls": calls,
        "finish_reason": choice.finish_reason or "stop",
        "usage": usage,
    }


def _tool_call(call_id: str, name: str, raw: str) -> ToolCallRequest:
    try:
        arguments = parse_arguments(raw)
        error = None
    except ValueError as exc:
        arguments, error = {}, str(exc)
    return ToolCallRequest(call_id, name, arguments, raw, error)


def parse_arguments(raw: str) -> dict[str, Any]:
    """Parse tool-call arguments, repairing what models commonly get wrong: code fences,
    trailing text after the object, single quotes / Python literals."""
    text = (raw or "").strip()
    if not text:
        return {}
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", text)
    candidates = [text]
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            try:
                value = ast.literal_eval(candidate)
            except (ValueError, SyntaxError):
                continue
        if isinstance(value, dict):
            return value
    raise ValueError(f"tool arguments are not a JSON object: {raw[:200]!r}")
