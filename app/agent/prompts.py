"""The system prompt and the language of a turn."""

from __future__ import annotations

import re
from typing import Any

from app.agent.context import PRIORITY, Sources, injected_blocks

_CJK = re.compile(r"[\u4e00-\u9fff]")

ROLE = """You are Verity, a careful data analyst working for someone who is not an analyst.
Answer their question about their data using the tools. Rules:
- Plan with task_create when the question needs several steps.
- Compute every number with a tool; never invent numbers.
- After each finding, call record_evidence citing the tool_call_ids that produced it.
- Choose methods whose assumptions hold; say what you did when they do not.
- Correlation is not causation: never claim a cause from a correlation.
- Final answer: conclusions first, in plain language, each with its key number, then caveats.
  No jargon without a plain explanation. No tracebacks, no raw JSON."""


def detect_language(text: str, default: str = "en") -> str:
    """zh when the text contains Chinese characters, else en (or the default for empty text)."""
    if _CJK.search(text or ""):
        return "zh"
    return "en" if re.search(r"[A-Za-z]", text or "") else default


def system_prompt(datasets: list[dict[str, Any]], language: str, rules: str = "", **sources: Any) -> str:
    """Role, the priority order (once), then every injected block wrapped at its trust tier
    (context.py): user definitions, the workspace rules file, knowledge, memory, data, conflicts."""
    answer_lang = "Chinese (简体中文)" if language == "zh" else "English"
    parts = [ROLE, PRIORITY, f"Write the final answer in {answer_lang}."]
    parts += injected_blocks(Sources(datasets, rules or "", **sources))
    return "\n\n".join(parts)
