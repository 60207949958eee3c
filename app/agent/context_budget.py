"""The budget table of one model call (recorded in the `model_call` event for the trace) and
conflict-aware trimming of injected blocks (SPEC §4, §6)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.agent.summary import ACK, is_summary
from app.agent.tokens import REPLY_PRIMING, count_message, count_tokens, count_tools

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
    return {"parts": parts, "total": total, "budget": budget, "used": round(total / budget, 3) if budget else None,
            "messages": len(messages), "tool_schemas": len(tools or [])}


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
    if is_summary(m) or (m.get("role") == "assistant" and m.get("content") == ACK and i and is_summary(messages[i - 1])):
        return "summaries"
    if i == task:
        return "task"
    return "history" if i < task else "steps"


# --- conflict-aware trimming -----------------------------------------------------------------
@dataclass
class Block:
    """An injected context block: its trust tier decides what is trimmed first."""

    tier: str  # user | project-rules | knowledge | memory | evidence | data
    text: str
    source: str = ""

    @property
    def tokens(self) -> int:
        return count_tokens(self.text)


NEVER_DROPPED = ("user", "project-rules")
# Normally the least trusted tier goes first. When knowledge and memory conflict, they are the
# unreliable part and the evidence computed from the data is what settles it: they go first.
DROP_ORDER = ("data", "evidence", "memory", "knowledge")
DROP_ORDER_ON_CONFLICT = ("memory", "knowledge", "data", "evidence")


def trim_blocks(blocks: list[Block], budget_tokens: int, conflict: bool = False) -> list[Block]:
    """Drop whole blocks until the rest fits the budget; order kept. Within a tier the oldest
    (earliest) block goes first. User requirements and project rules are never dropped."""
    kept = list(blocks)
    total = sum(b.tokens for b in kept)
    for tier in DROP_ORDER_ON_CONFLICT if conflict else DROP_ORDER:
        for block in [b for b in kept if b.tier == tier]:
            if total <= budget_tokens:
                return kept
            kept.remove(block)
            total -= block.tokens
    return kept
