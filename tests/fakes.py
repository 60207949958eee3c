"""Test doubles for the model: a scripted ChatModel, and a local OpenAI-compatible HTTP server
that the real `openai` client talks to."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from app.agent.model.interface import ModelReply, ToolCallRequest


class ScriptedModel:
    """Replies from a queue; records every request it got."""

    kind = "scripted"
    name = "scripted"

    def __init__(self, replies: list[ModelReply] | None = None):
        self.replies = list(replies or [])
        self.requests: list[dict[str, Any]] = []

    def enqueue(self, reply: ModelReply) -> None:
        self.replies.append(reply)

    def complete(self, messages, tools) -> ModelReply:
        self.requests.append({"messages": [dict(m) for m in messages], "tools": tools})
        if not self.replies:
            return ModelReply("done")
        return self.replies.pop(0)


def call(name: str, call_id: str, **arguments: Any) -> ToolCallRequest:
    return ToolCallRequest(call_id, name, arguments, json.dumps(arguments))


def completion(
    content: str | None = None, tool_calls: list[dict[str, Any]] | None = None, finish_reason: str | None = None
) -> dict[str, Any]:
    """A chat.completions response body."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in tool_calls
        ]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [
            {"index": 0, "message": message, "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop")}
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


@dataclass
class Slow:
    """A scripted item the fake server sends only after `seconds` (to exercise timeouts)."""

    seconds: float
    item: Any


def stream_chunks(payload: dict[str, Any], piece: int = 7) -> list[dict[str, Any]]:
    """A completion body cut into chat.completion.chunk objects, as providers stream them."""
    choice = payload["choices"][0]
    message = choice["message"]

    def chunk(delta, finish=None):
        return {
            "id": payload["id"],
            "object": "chat.completion.chunk",
            "created": 0,
            "model": payload["model"],
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    content = message.get("content") or ""
    chunks += [chunk({"content": content[i : i + piece]}) for i in range(0, len(content), piece)]
    for index, call in enumerate(message.get("tool_calls") or []):
        args = call["function"]["arguments"]
        chunks.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["function"]["name"], "arguments": ""},
                        }
                    ]
                }
            )
        )
        chunks += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": args[i : i + piece]}}]})
            for i in range(0, len(args), piece)
        ]
    chunks.append(chunk({}, choice["finish_reason"]))
    return chunks


class FakeOpenAIServer:
    """Serves scripted responses at /v1/chat/completions on a loopback port.

    A scripted item is either a response body (dict) or an (HTTP status, body) tuple, which lets
    tests return 429/500 to exercise retries. Instead of a list, a function of the request body
    that returns the item answers each request (runs at once, whose requests interleave).
    """

    def __init__(self, script: list[Any] | Callable[[dict[str, Any]], Any]):
        self.respond = script if callable(script) else None
        self.script = [] if callable(script) else list(script)
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server API)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                if server.respond is not None:
                    item = server.respond(body)
                else:
                    item = server.script.pop(0) if server.script else completion("(script exhausted)")
                if isinstance(item, Slow):  # answer after the client's timeout
                    time.sleep(item.seconds)
                    item = item.item
                status, payload = item if isinstance(item, tuple) else (200, item)
                if body.get("stream") and status == 200:
                    return self.stream(payload)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    if status != 200:
                        self.send_header("retry-after-ms", "10")  # keep retry tests fast
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def stream(self, payload):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for chunk in stream_chunks(payload):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "FakeOpenAIServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
