"""The ChatModel interface and its OpenAI-compatible implementation.

Messages and tool schemas are in OpenAI chat-completions format everywhere in the harness; a
ChatModel takes them and returns one `ModelReply`. The built-in analyst (builtin.py) implements
the same interface, so the loop cannot tell them apart.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

import openai

from app.config import Settings


@dataclass
class ToolCallRequest:
    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""
    argument_error: str | None = None  # set when the arguments could not be repaired

    def as_message_part(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": json.dumps(self.arguments, ensure_ascii=False)}}


@dataclass
class ModelReply:
    content: str | None
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    finish_reason: str = "stop"
    usage: dict[str, int] = field(default_factory=dict)

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


class OpenAICompatibleModel:
    """Any chat-completions endpoint with function calling, through the official client.

    The client retries timeouts, 429 and 5xx with exponential backoff (max_retries). Only
    parameters the user configured are sent, since some providers reject unknown ones.
    """

    kind = "openai-compatible"

    def __init__(self, settings: Settings):
        self.name = settings.llm_model or ""
        self.settings = settings
        self.client = openai.OpenAI(
            base_url=settings.llm_base_url, api_key=settings.llm_api_key or "not-needed",
            timeout=settings.llm_timeout_s, max_retries=settings.llm_max_retries,
        )

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        request: dict[str, Any] = {"model": self.name, "messages": messages}
        if tools:
            request["tools"] = tools
        if self.settings.llm_temperature is not None:
            request["temperature"] = self.settings.llm_temperature
        if self.settings.llm_max_output_tokens:
            request["max_tokens"] = self.settings.llm_max_output_tokens
        try:
            response = self.client.chat.completions.create(**request)
        except openai.APIError as exc:
            raise ModelError(f"The language model service failed: {type(exc).__name__}: {exc}") from exc
        choice = response.choices[0]
        calls = [_tool_call(c) for c in (choice.message.tool_calls or [])]
        usage = {}
        if response.usage:
            usage = {"input_tokens": response.usage.prompt_tokens, "output_tokens": response.usage.completion_tokens}
        return ModelReply(choice.message.content, calls, choice.finish_reason or "stop", usage)


def _tool_call(call: Any) -> ToolCallRequest:
    raw = call.function.arguments or ""
    try:
        arguments = parse_arguments(raw)
        error = None
    except ValueError as exc:
        arguments, error = {}, str(exc)
    return ToolCallRequest(call.id, call.function.name, arguments, raw, error)


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
        candidates.append(text[start:end + 1])
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
