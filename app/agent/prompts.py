"""The system prompt and the language of a turn."""

from __future__ import annotations

import re
from typing import Any, Iterable

from analysis_tools.registry import vocabulary_note
from app.agent.context.tiers import PRIORITY, Sources, injected_blocks

_CJK = re.compile(r"[\u4e00-\u9fff]")

ROLE = "You are Verity, a careful data analyst working for someone who is not an analyst."
# The intent picks which of these sections a turn's system prompt carries (intent.SECTIONS):
# a greeting needs the role and the language; an analysis needs planning and evidence rules too.
SECTION_TEXT = {
    "planning": '- Plan with task_create when the question needs several steps (call_tool name "task_create", '
    'arguments {"subject": ...}).',
    "evidence": "- Compute every number with a tool, never invent one.\n"
    "- After each finding, call record_evidence citing the tool_call_ids that produced it.\n"
    "- Choose methods whose assumptions hold; say what you did when they do not.\n"
    "- Correlation is not causation: never claim a cause from a correlation.",
}
ANSWER_STYLE = (
    "- Final answer: conclusions first, in plain words, each with its key number, then caveats; "
    "explain any jargon; no tracebacks or raw JSON."
)
DATA_SOURCE = 'source="workspace-datasets"'
ALL_SECTIONS = ("role", "priority", "language", "rules", "datasets", "planning", "evidence", "report")


def detect_language(text: str, default: str = "en") -> str:
    """zh when the text contains Chinese characters, else en (or the default for empty text)."""
    if _CJK.search(text or ""):
        return "zh"
    return "en" if re.search(r"[A-Za-z]", text or "") else default


def system_prompt(
    datasets: list[dict[str, Any]],
    language: str,
    rules: str = "",
    sections: Iterable[str] | None = None,
    **sources: Any,
) -> str:
    """Role, the priority order (once), then every injected block wrapped at its trust tier
    (context.py): user definitions, the workspace rules file, knowledge, memory, data, conflicts.
    `sections` (from the intent) leaves out what the turn does not need."""
    wanted = set(sections or ALL_SECTIONS)
    lines = [ROLE] + [SECTION_TEXT[k] for k in ("planning", "evidence") if k in wanted] + [ANSWER_STYLE]
    if "datasets" in wanted:  # a turn that works on data has tools: their shared argument names, once
        lines.append(vocabulary_note())
    parts = ["\n".join(lines)]
    if "priority" in wanted:
        parts.append(PRIORITY)
    if "language" in wanted:
        parts.append(f"Write the final answer in {'Chinese (简体中文)' if language == 'zh' else 'English'}.")
    if "rules" not in wanted:
        rules, sources = "", {**sources, "definitions": ()}
    if "datasets" not in wanted:
        datasets, sources = [], {**sources, "dataset_warnings": {}, "knowledge": (), "memory": (), "reading": ""}
    blocks = injected_blocks(Sources(datasets, rules or "", **sources))
    if "datasets" not in wanted:  # a greeting or a method question needs no data block at all
        blocks = [b for b in blocks if DATA_SOURCE not in b]
    return "\n\n".join(parts + blocks)
