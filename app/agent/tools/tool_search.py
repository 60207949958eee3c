"""tool_search: the model finds tools by what they do; those found join the next request (SPEC §3;
which tools a request offers is exposure.py's)."""

from __future__ import annotations

from analysis_tools import ToolContext, ToolError, ToolResult
from analysis_tools.registry import GROUPS as ALL_GROUPS
from app.agent.run_scope import run_scope
from app.agent.tools.exposure import DETAILED_MATCHES, rank_tools


def tool_search(query: str, limit: int = 5, ctx: ToolContext | None = None) -> ToolResult:
    """Find tools by what they do, in English or Chinese (e.g. "correlation", "相关"), with their full
    descriptions and arguments. The tools found become callable from the next request.

    Args:
        query: What you want to do, in a few words.
        limit: Most tools to return.
    """
    exposure = run_scope(ctx, missing_ok=True).exposure
    if exposure is None:
        raise ToolError("no_exposure", "tool_search is not available outside a turn.", retryable=False)
    found = rank_tools(exposure.registry, query, max(1, min(int(limit), 20)))
    if not found:
        return ToolResult(
            text=f"[tools]\nNo tool matched {query!r}. Groups: {', '.join(ALL_GROUPS)}. "
            "Try other words, or run_python when no tool fits.",
            payload={"tools": [], "exposed_tools": [], "exposed_groups": []},
        )
    # Only the best matches join the request (each one found stays for the rest of the turn and adds
    # its schema to every later request); the others are listed, callable after a search by name.
    best = found[:DETAILED_MATCHES]
    new, refused = exposure.request_tools(t.name for t in best)
    refused_groups = sorted({t.group for t in best if t.name in refused})
    offered = exposure.names() | set(new)
    # details on demand: the best matches with their full description and arguments (schemas are brief)
    lines = [
        ("- " + t.details() if i < DETAILED_MATCHES else f"- {t.name} ({t.group}): {' '.join(t.description.split())}")
        + (" [not available in this turn]" if t.name in refused else "")
        for i, t in enumerate(found)
    ]
    listed = [t.name for t in found[DETAILED_MATCHES:] if t.name not in offered]
    note = [
        f"Callable from the next request: {', '.join(new)}."
        if new
        else "These tools are already available."
        if not refused
        else ""
    ]
    if listed:
        note.append(f"To call {', '.join(listed)}, tool_search its name first.")
    if refused:
        note.append(f"Not available while the data is being prepared: {', '.join(refused_groups)}.")
    return ToolResult(
        text="[tools]\n" + "\n".join(lines) + "\n\n[exposure]\n" + " ".join(n for n in note if n),
        payload={
            "tools": [t.name for t in found],
            "exposed_tools": new,
            "exposed_groups": sorted({t.group for t in best if t.name in new}),
            "refused_groups": refused_groups,
        },
    )
