"""Persistence of one run as it happens: messages, tool calls and progress events.

Every message and event is committed when it happens, so the page sees progress at once and a
crash loses at most the step in flight (which protocol healing then closes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from analysis_tools import ToolResult
from app.db.models import Event, Message, ToolCall

# Trace-only events that nothing on the page waits for: they are committed with the next write
# (the assistant message follows at once), which saves a commit each (bench/harness_overhead.py).
LAZY_EVENTS = frozenset({"span", "model_call", "model_reply"})


class RunRecorder:
    def __init__(self, session: Session, workspace_id: str, run_id: str, trace_dir: Path | None = None):
        self.session = session
        self.workspace_id = workspace_id
        self.run_id = run_id
        self.trace_dir = trace_dir  # where model-call requests are kept for the trace (tracing.py)

    def emit(self, kind: str, data: dict[str, Any] | None = None, commit: bool | None = None) -> None:
        self.session.add(Event(run_id=self.run_id, kind=kind, data=data or {}))
        if commit if commit is not None else kind not in LAZY_EVENTS:
            self.session.commit()

    def add_message(self, message: dict[str, Any]) -> None:
        self.session.add(
            Message(
                workspace_id=self.workspace_id,
                run_id=self.run_id,
                role=message["role"],
                content=message.get("content"),
                tool_calls=message.get("tool_calls"),
                tool_call_id=message.get("tool_call_id"),
                name=message.get("name"),
            )
        )
        self.session.commit()

    def record_tool_call(
        self,
        call_id: str,
        tool: str,
        arguments: dict[str, Any],
        result: ToolResult,
        content: str,
        figures: list[dict[str, str]],
    ) -> None:
        self.session.add(
            ToolCall(
                id=call_id,
                run_id=self.run_id,
                tool=tool,
                arguments=arguments,
                ok=result.ok,
                duration_ms=float(result.metrics.get("duration_ms", 0.0) or 0.0),
                result_text=content,
                metrics={k: v for k, v in result.metrics.items()},
                error=result.error,
                figures=figures,
                interpretation=result.interpretation,
            )
        )  # committed with the `tool_finished` event that follows at once (one commit, not two)

    def recorded_call(self, call_id: str) -> ToolCall | None:
        """The run's tool call `call_id` as recorded when it finished, or None when it never did
        (a run taken over from a worker that died replays it instead of executing it again)."""
        return self.session.get(ToolCall, (self.run_id, call_id))
