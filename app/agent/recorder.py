"""Persistence of one run as it happens: messages, tool calls and progress events.

Every message and event is committed when it happens, so the page sees progress at once and a
crash loses at most the step in flight (which protocol healing then closes).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from analysis_tools import ToolResult
from app.db.models import Event, Message, ToolCall


class RunRecorder:
    def __init__(self, session: Session, workspace_id: str, run_id: str):
        self.session = session
        self.workspace_id = workspace_id
        self.run_id = run_id

    def emit(self, kind: str, data: dict[str, Any] | None = None) -> None:
        self.session.add(Event(run_id=self.run_id, kind=kind, data=data or {}))
        self.session.commit()

    def add_message(self, message: dict[str, Any]) -> None:
        self.session.add(Message(
            workspace_id=self.workspace_id, run_id=self.run_id, role=message["role"],
            content=message.get("content"), tool_calls=message.get("tool_calls"),
            tool_call_id=message.get("tool_call_id"), name=message.get("name"),
        ))
        self.session.commit()

    def record_tool_call(self, call_id: str, tool: str, arguments: dict[str, Any], result: ToolResult,
                         content: str, figures: list[dict[str, str]]) -> None:
        self.session.add(ToolCall(
            id=call_id, run_id=self.run_id, tool=tool, arguments=arguments, ok=result.ok,
            duration_ms=float(result.metrics.get("duration_ms", 0.0) or 0.0), result_text=content,
            metrics={k: v for k, v in result.metrics.items()}, error=result.error, figures=figures,
            interpretation=result.interpretation,
        ))
        self.session.commit()
