"""The ChatModel interface and its OpenAI-compatible implementation.

Messages and tool schemas are in OpenAI chat-completions format everywhere in the harness; a
ChatModel takes them and returns one `ModelReply`. The built-in analyst (app.analyst) implements
the same interface, so the loop cannot tell them apart.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from app.agent.model.interface import ModelError, ModelReply, ToolCallRequest, parse_arguments
from app.agent.model.recovery import Delta, StreamCollector, cut_off_empty, length_ladder, request_body
from app.config import Settings


class OpenAICompatibleModel:
    """Any chat-completions endpoint with function calling, through the official client.

    The client retries timeouts, 429 and 5xx with exponential backoff (max_retries). Only
    parameters the user configured are sent, since some providers reject unknown ones. The exact
    bytes of every HTTP request are kept for the trace (an httpx request hook).
    """

    kind = "openai-compatible"
    supports_streaming = True

    def __init__(self, settings: Settings):
        import openai  # here, not at import: the built-in analyst and `verity inspect` never load the client (~0.5 s)

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
        larger output budget (recovery.length_ladder)."""
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
        self, body: dict[str, Any], exchanges: list[dict[str, Any]], on_delta: Delta | None, purpose: str
    ) -> dict[str, Any]:
        """One logical request (the client may send it several times); returns the reply message."""
        self._sent.clear()
        started = time.perf_counter()
        record = {"purpose": purpose, "request": body}
        exchanges.append(record)
        import openai  # loaded by __init__ already

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
