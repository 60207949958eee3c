"""Test doubles for the model: a scripted ChatModel, and a local OpenAI-compatible HTTP server
that the real `openai` client talks to."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from app.agent.model import ModelReply, ToolCallRequest


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


def completion(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None,
               finish_reason: str | None = None) -> dict[str, Any]:
    """A chat.completions response body."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": c["arguments"]}} for c in tool_calls]
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "fake-model",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop")}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}


class FakeOpenAIServer:
    """Serves scripted responses at /v1/chat/completions on a loopback port.

    A scripted item is either a response body (dict) or an (HTTP status, body) tuple, which lets
    tests return 429/500 to exercise retries.
    """

    def __init__(self, script: list[Any]):
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server API)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                item = server.script.pop(0) if server.script else completion("(script exhausted)")
                status, payload = item if isinstance(item, tuple) else (200, item)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

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
