"""Model-call recovery (SPEC §5): what the harness does when a model reply is unusable.

- Timeouts, 429 and 5xx are retried with exponential backoff by the official client itself
  (`max_retries`, `timeout` from the settings); tests/test_model_recovery.py proves it.
- Malformed tool-call arguments are repaired (`model.parse_arguments`); when they cannot be, the
  model is asked ONCE to re-emit the call (a harness note naming the tool and the parse error).
  A second failure stays a structured `invalid_arguments` tool error.
- `finish_reason=length` with nothing in the body is retried with a larger output budget on a
  bounded ladder (1× → 2× → 4× of the base `max_tokens`).
- Requests carry only what is configured: some providers reject unknown parameters.
- Streaming (optional): content deltas are forwarded while the reply arrives, so the final answer
  appears on the page as it is written; a reply that turns into tool calls resets the live text.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable

if TYPE_CHECKING:
    from app.agent.model.interface import ModelReply, ToolCallRequest
    from app.config import Settings

LENGTH_LADDER = (1, 2, 4)  # multiples of the base output budget; at most three requests
REEMIT_PREFIX = "[harness] Re-emit"

Delta = Callable[[str | None], None]  # text to append; None = forget what was streamed so far


# --- requests ------------------------------------------------------------------------------
def request_body(
    settings: "Settings",
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """The chat-completions body: only parameters that are configured (or needed) are sent."""
    body: dict[str, Any] = {"model": model, "messages": messages}
    if tools:
        body["tools"] = tools
    if settings.llm_temperature is not None:
        body["temperature"] = settings.llm_temperature
    if max_tokens:
        body["max_tokens"] = max_tokens
    if settings.llm_stream:
        body["stream"] = True
    return body


def length_ladder(configured: int | None, base: int) -> list[int | None]:
    """Output budgets to try in order: what is configured (None sends no max_tokens), then 2× and
    4× of it (or of `base` when nothing is configured)."""
    start = configured or base
    return [configured] + [start * k for k in LENGTH_LADDER[1:]]


def cut_off_empty(finish_reason: str | None, content: str | None, tool_calls: list[Any]) -> bool:
    """The provider ran out of output budget before writing anything usable."""
    return finish_reason == "length" and not (content or "").strip() and not tool_calls


# --- streaming -----------------------------------------------------------------------------
class StreamCollector:
    """Assembles a streamed chat completion into one message; forwards content deltas."""

    def __init__(self, on_delta: Delta | None = None):
        self.on_delta = on_delta
        self.content: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, int] = {}
        self.forwarded = False

    def feed(self, chunks: Iterable[Any]) -> "StreamCollector":
        for chunk in chunks:
            self.add(chunk)
        return self

    def add(self, chunk: Any) -> None:
        if getattr(chunk, "usage", None):
            self.usage = {"input_tokens": chunk.usage.prompt_tokens, "output_tokens": chunk.usage.completion_tokens}
        for choice in chunk.choices or []:
            delta = choice.delta
            for part in getattr(delta, "tool_calls", None) or []:
                self._tool_part(part)
            if getattr(delta, "content", None):
                self.content.append(delta.content)
                if self.on_delta and not self.calls:
                    self.on_delta(delta.content)
                    self.forwarded = True
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason

    def _tool_part(self, part: Any) -> None:
        if not self.calls and self.forwarded and self.on_delta:
            self.on_delta(None)  # the text so far was commentary before tool calls, not the answer
        call = self.calls.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
        call["id"] = part.id or call["id"]
        if part.function is not None:
            call["name"] += part.function.name or ""
            call["arguments"] += part.function.arguments or ""

    def message(self) -> dict[str, Any]:
        """The assembled reply in the non-streamed response shape (for the trace)."""
        return {
            "content": "".join(self.content) or None,
            "tool_calls": [self.calls[i] for i in sorted(self.calls)],
            "finish_reason": self.finish_reason or "stop",
            "usage": self.usage,
        }


class DeltaBuffer:
    """Coalesces streamed text into `answer_delta` events (not one database row per token)."""

    def __init__(self, emit: Callable[[str, dict[str, Any]], None], min_chars: int = 40, max_wait_s: float = 0.15):
        self.emit, self.min_chars, self.max_wait_s = emit, min_chars, max_wait_s
        self.pending: list[str] = []
        self.last = time.monotonic()

    def __call__(self, text: str | None) -> None:
        if text is None:
            self.pending.clear()
            self.emit("answer_delta", {"reset": True})
            return
        self.pending.append(text)
        if sum(map(len, self.pending)) >= self.min_chars or time.monotonic() - self.last >= self.max_wait_s:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.emit("answer_delta", {"text": "".join(self.pending)})
            self.pending.clear()
        self.last = time.monotonic()


# --- malformed arguments: ask once to re-emit ------------------------------------------------
def malformed_calls(reply: "ModelReply") -> list["ToolCallRequest"]:
    return [c for c in reply.tool_calls if c.argument_error]


def reemit_note(calls: list["ToolCallRequest"]) -> dict[str, Any]:
    """The harness message that asks the model to send its tool call(s) again."""
    lines = [
        f"- {c.name} (id {c.id}): {c.argument_error}; you sent: {json.dumps(c.raw_arguments[:300])}" for c in calls
    ]
    return {
        "role": "user",
        "content": (
            f"{REEMIT_PREFIX} your last reply. The arguments of these tool calls could not be parsed:\n"
            + "\n".join(lines)
            + "\nSend the tool call(s) again with the arguments as one valid JSON object each."
        ),
    }
