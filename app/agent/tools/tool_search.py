"""tool_search: the model finds tools by what they do; those found join the next request (SPEC §3;
which tools a request offers is exposure.py's)."""

from __future__ import annotations

from typing import Any

from analysis_tools import ToolContext, ToolError, ToolResult
from analysis_tools.registry import GROUPS as ALL_GROUPS
from app.agent.run_scope import run_scope
from app.agent.tools.exposure import DETAILED_MATCHES, rank_tools


def tool_search(query: str, limit: int = DETAILED_MATCHES, ctx: ToolContext | None = None) -> ToolResult:
    """Find tools by what they do, in English or Chinese (e.g. "correlation", "相关"); returns each
    one's full description and arguments, callable at once with call_tool.

    Args:
        query: What you want to do, in a few words.
        limit: Most tools to return.
    """
    exposure = run_scope(ctx, missing_ok=True).exposure
    if exposure is None:
        raise ToolError("no_exposure", "tool_search is not available outside a turn.", retryable=False)
    found = rank_tools(exposure.registry, query, max(1, min(int(limit), 8)))
    if not found:
        return ToolResult(
            text=f"[tools]\nNo tool matched {query!r}. Groups: {', '.join(ALL_GROUPS)}. "
            "Try other words, or run_python when no tool fits.",
            payload={"tools": [], "exposed_tools": [], "exposed_groups": []},
        )
    # every tool found is callable at once, through call_tool: the tools array never changes (exposure.py)
    new, refused = exposure.request_tools(t.name for t in found)
    refused_groups = sorted({t.group for t in found if t.name in refused})
    lines = ["- " + t.details() + (" [not available in this turn]" if t.name in refused else "") for t in found]
    callable_now = [t.name for t in found if t.name not in refused]
    note = []
    if callable_now:
        note.append(f'Call any of them now with call_tool(name="{callable_now[0]}", arguments={{...}}).')
    if refused:
        note.append(f"Not available: the user ruled out {', '.join(refused_groups)}.")
    return ToolResult(
        text="[tools]\n" + "\n".join(lines) + "\n\n[exposure]\n" + " ".join(note),
        payload={
            "tools": [t.name for t in found],
            "exposed_tools": new,
            "exposed_groups": sorted({t.group for t in found if t.name in new}),
            "refused_groups": refused_groups,
        },
    )


def call_tool(name: str, arguments: dict[str, Any] | None = None, ctx: ToolContext | None = None) -> ToolResult:
    """Call a tool by name: one tool_search found, or ask_user_question, preview_data, profile_dataset,
    record_analysis_plan, task_update, retract_evidence, read_tool_output.

    Args:
        name: The tool's name.
        arguments: Its arguments, as one JSON object.
    """
    # The Toolbox runs the named tool itself (Toolbox.resolve); this body runs only outside a Toolbox.
    raise ToolError("no_toolbox", "call_tool is only available in a run.", retryable=False)
