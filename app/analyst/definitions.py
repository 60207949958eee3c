"""The user's confirmed definitions as the built-in analyst reads them back from the user tier of
the system prompt (what a model sees: app.agent.context.tiers.user_block writes it)."""

from __future__ import annotations

import re
from typing import Any

DEFINITION = re.compile(r"^- \[([^\]\n]+)\] .*? → (.+)$", re.M)


def confirmed_definitions(messages: list[dict[str, Any]]) -> dict[str, str]:
    """topic -> answer, read back from the user-tier block of the system prompt (what a model sees)."""
    system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
    block = re.search(r'<context source="user-confirmed" tier="user">(.*?)</context>', system, re.S)
    return {topic: answer.strip() for topic, answer in DEFINITION.findall(block.group(1))} if block else {}
