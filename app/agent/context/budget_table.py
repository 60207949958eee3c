"""The budget table of one model call (recorded in the `model_call` event for the trace). The
conflict-aware trimming of injected blocks is in compaction.compact (order: context.trim_order)."""

from __future__ import annotations

from typing import Any

from app.agent.context.summary import ACK, is_summary
from app.agent.model.tokens import REPLY_PRIMING, count_message, count_tools

PARTS = ("system", "tools", "task", "summaries", "history", "steps")


def budget_table(messages: list[dict[str, Any]], tools: list[dict[str, Any]], budget: int) -> dict[str, Any]:
    """Tokens per part of the request — system rules, tool schemas, the task (the user's current
    message), summaries, earlier history, the recent steps of this turn — against the budget."""
    parts = dict.fromkeys(PARTS, 0)
    parts["tools"] = count_tools(tools)
    task = _task_index(messages)
    for i, message in enumerate(messages):
        parts[_part_of(messages, i, task)] += count_message(message)
    total = REPLY_PRIMING + sum(parts.values())
    return {
        "parts": parts,
        "total": total,
        "budget": budget,
        "used": round(total / budget, 3) if budget else None,
        "messages": len(messages),
        "tool_schemas": len(tools or []),
    }


def _task_index(messages: list[dict[str, Any]]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        content = str(m.get("content") or "")
        if m.get("role") == "user" and not content.startswith("[harness]") and not is_summary(m):
            return i
    return -1


def _part_of(messages: list[dict[str, Any]], i: int, task: int) -> str:
    m = messages[i]
    if m.get("role") == "system":
        return "system"
    if is_summary(m) or (
        m.get("role") == "assistant" and m.get("content") == ACK and i and is_summary(messages[i - 1])
    ):
        return "summaries"
    if i == task:
        return "task"
    return "history" if i < task else "steps"
