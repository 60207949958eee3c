"""The ChatModel interface: what the harness sends a model and what it gets back.

Messages and tool schemas are in OpenAI chat-completions format everywhere in the harness; a
ChatModel takes them and returns one `ModelReply`. The OpenAI-compatible client
(openai_compatible.py) and the built-in analyst (app.analyst) both implement it, so the loop
cannot tell them apart."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any, Protocol


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
