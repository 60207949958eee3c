"""The context cascade (SPEC §4): four levels that keep a turn within its token budget and never
lose data. Everything that leaves the context is on disk first (outputs.py) and comes back with
`read_tool_output`.

  level 1  shelve_output     every tool output is saved; > 3,000 chars the model gets a shortened
                             text and a reference, > 15,000 a 2,000-char <persisted-output> preview
  level 2  micro_compact     when compacting: tool results beyond the newest 8 become compact previews
  level 3  summarize_history above the turn's budget (or on request): transcript saved, early
                             history summarised, the newest 10 messages kept whole
  level 4  request_compaction the `compact_context` tool and the page's button ask for level 3

`compact(turn)` runs before each model call but changes nothing below the budget (the history is
append-only, a stable prefix for prompt caches); above it, or on request, it runs levels 2 and 3
and emits one `context_compacted` event. Over budget it also
trims the injected guidance, conflict-aware (SPEC §4, §6; context.trim_order): normally old tool
results are summarised first and the memory, then the knowledge block of the system prompt go
only if that was not enough; when knowledge and memory disagree they go first, and the evidence
that can settle the disagreement is kept. Both stay in the database and come back next turn.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from analysis_tools import ResultRecord
from app.agent.context import summary
from app.agent.context.outputs import OutputStore
from app.agent.context.previews import COMPACTED, PERSISTED, compact_preview, reference_of, shorten
from app.agent.context.tiers import CONFLICT_SOURCE, trim_order, without_block
from app.agent.model.tokens import count_messages
from app.agent.tracing import TracedModel

if TYPE_CHECKING:
    from app.agent.model.interface import ChatModel
    from app.config import Settings

log = logging.getLogger(__name__)
DEFAULT_TOKEN_RATIO = 0.7  # the analysis ratio, until the turn's intent says otherwise
# A read-back is a copy of something already on disk; tool_search's answer is the harness's own,
# bounded, and useless cut (the descriptions are what the model searched for).
NO_SHELVE = {"read_tool_output", "tool_search"}
# Arguments by which a call asks for a number of rows: a result the model asked to be that long is
# shown whole up to the persist limit, not cut at the truncation size (issue 23: max_rows ignored).
ROW_REQUEST_ARGUMENTS = ("max_rows",)


def asks_for_rows(arguments: dict[str, Any] | None) -> bool:
    """Did the call ask explicitly for a number of rows (an argument of ROW_REQUEST_ARGUMENTS)?"""
    return any((arguments or {}).get(name) is not None for name in ROW_REQUEST_ARGUMENTS)


# Workspaces whose live turn should compact at its next round (the page's button sets this).
_REQUESTED: dict[str, str] = {}


@dataclass
class ContextWindow:
    """Per-turn state and limits of the cascade (defaults are the spec's numbers)."""

    store: OutputStore
    threshold_tokens: int = 100_000
    token_ratio: float = DEFAULT_TOKEN_RATIO
    truncate_chars: int = 3_000
    persist_chars: int = 15_000
    preview_chars: int = 2_000
    keep_tool_results: int = 8
    keep_messages: int = 10
    compact_chars: int = 800
    workspace_id: str | None = None
    requested: str | None = None
    summaries: int = 0

    @classmethod
    def from_settings(cls, settings: Settings, workspace_id: str) -> ContextWindow:
        return cls(
            OutputStore.of(settings, workspace_id),
            settings.context_threshold_tokens,
            truncate_chars=settings.tool_result_truncate_chars,
            persist_chars=settings.tool_result_persist_chars,
            preview_chars=settings.tool_result_preview_chars,
            keep_tool_results=settings.context_keep_tool_results,
            keep_messages=settings.context_keep_messages,
            workspace_id=workspace_id,
        )

    def request(self, reason: str = "requested") -> None:
        self.requested = reason or "requested"


def window_of(turn: Any) -> ContextWindow | None:
    return getattr(turn, "context", None)


def token_budget(turn: Any) -> int:
    """The turn's context budget: threshold × the intent's ratio (0.3 / 0.7 / 1.0)."""
    window = window_of(turn)
    threshold = window.threshold_tokens if window else 100_000
    intent = getattr(turn, "intent", None)
    ratio = next(
        (
            getattr(intent, n)
            for n in ("token_ratio", "token_budget_ratio", "budget_ratio")
            if isinstance(getattr(intent, n, None), (int, float))
        ),
        None,
    )
    return int(threshold * (ratio or (window.token_ratio if window else DEFAULT_TOKEN_RATIO)))


# --- level 1 ---------------------------------------------------------------------------------
def shelve_output(
    window: ContextWindow | None,
    call_id: str,
    tool: str,
    text: str,
    record: ResultRecord | None = None,
    whole: bool = False,
) -> str:
    """Save a tool output in full (always first), with its `record` as plain data beside it; return
    what the model sees of it (`whole`: the call asked for this many rows, so it is shown whole up
    to the persist limit)."""
    if window is None:
        return text
    if tool in NO_SHELVE:  # shown whole, never shortened; its record is kept all the same, so a turn
        if record is not None:  # resumed elsewhere knows what its tool_search found (runs.py restores it)
            window.store.save_result(window.store.save_output(call_id, text), record.as_json())
        return text
    output_id = window.store.save_output(call_id, text)
    if record is not None:
        window.store.save_result(output_id, record.as_json())
    if len(text) <= (window.persist_chars if whole else window.truncate_chars):
        return text
    ref = f'read_tool_output(id="{output_id}", offset=0, length=8000)'
    if len(text) > window.persist_chars:
        preview = shorten(text, window.preview_chars)
        return (
            f'{PERSISTED} id="{output_id}" chars="{len(text)}">\n{preview}\n</persisted-output>\n'
            f"The full output ({len(text):,} characters) is saved; read it with {ref}."
        )
    shown = shorten(text, window.truncate_chars)
    return f"{shown}\n[truncated] {len(shown):,} of {len(text):,} characters shown; full output: {ref}."


# --- level 2 ---------------------------------------------------------------------------------
def micro_compact(messages: list[dict[str, Any]], window: ContextWindow, keep: int | None = None) -> int:
    """Replace tool results older than the newest `keep` with compact previews (persisted first).
    Returns how many were compacted."""
    keep = window.keep_tool_results if keep is None else keep
    tool_indexes = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
    old = tool_indexes[: max(len(tool_indexes) - keep, 0)]
    names = {c["id"]: c["function"]["name"] for m in messages for c in m.get("tool_calls") or []}
    done = 0
    for i in old:
        message = messages[i]
        content = str(message.get("content") or "")
        if content.startswith(COMPACTED) or len(content) <= window.compact_chars // 2:
            continue
        call_id = message.get("tool_call_id") or f"tool_{i}"
        output_id = reference_of(content) if content.startswith(PERSISTED) or "[truncated]" in content else None
        output_id = output_id or window.store.save_output(call_id, content)
        messages[i] = {
            **message,
            "content": compact_preview(content, output_id, names.get(call_id, ""), window.compact_chars),
        }
        done += 1
    return done


# --- level 3 ---------------------------------------------------------------------------------
def find_safe_boundary(messages: list[dict[str, Any]], keep: int) -> int:
    """Index where the kept recent part starts: at most `keep` messages back, moved earlier so a
    tool result is never separated from the assistant message that called it. 0 means no split."""
    start = _head_length(messages)
    split = max(len(messages) - keep, start)
    while split > start and messages[split].get("role") == "tool":
        split -= 1
    return split if split > start else 0


def summarize_history(
    messages: list[dict[str, Any]], window: ContextWindow, model: ChatModel | None, reason: str
) -> dict[str, Any] | None:
    """Save the transcript, summarise the early history, keep the newest messages. In place."""
    split = find_safe_boundary(messages, window.keep_messages)
    if not split:
        return None
    transcript_id = window.store.save_transcript(messages)  # first: nothing is lost
    head, early, recent = messages[: _head_length(messages)], messages[_head_length(messages) : split], messages[split:]
    names = {c["id"]: c["function"]["name"] for m in early for c in m.get("tool_calls") or []}
    for m in early:  # every dropped tool result is also readable under its own id
        if m.get("role") == "tool" and not str(m.get("content") or "").startswith((COMPACTED, PERSISTED)):
            window.store.save_output(m.get("tool_call_id") or "tool", str(m.get("content") or ""))
    text, source = write_summary(early, model)
    messages[:] = (
        head
        + [
            summary.summary_message(text, summary.key_lines(early), len(early), transcript_id),
            {"role": "assistant", "content": summary.ACK},
        ]
        + recent
    )
    window.summaries += 1
    return {
        "level": 3,
        "reason": reason,
        "transcript": transcript_id,
        "summarised": len(early),
        "kept": len(recent),
        "summary_by": source,
        "tools_seen": sorted(set(names.values())),
    }


def write_summary(early: list[dict[str, Any]], model: ChatModel | None) -> tuple[str, str]:
    """The model's structured summary; extractive for the built-in analyst or when the model fails."""
    if model is None or getattr(model, "kind", "") == "builtin":
        return summary.extractive_summary(early), "extractive"
    try:
        reply = model.complete(summary.summary_request(early), [])
    except Exception as exc:  # a failed summary must not end the turn: fall back, keep going
        log.warning("summary request failed: %s", exc)
        return summary.extractive_summary(early), "extractive"
    text = (reply.content or "").strip()
    if not text or reply.tool_calls:
        return summary.extractive_summary(early), "extractive"
    return text, "model"


# --- level 4 and the round -------------------------------------------------------------------
def request_compaction(workspace_id: str, reason: str = "user") -> None:
    """Ask the live turn of a workspace to compact at its next round (the page's button)."""
    _REQUESTED[workspace_id] = reason


def compact(turn: Any) -> list[dict[str, Any]]:
    """Levels 2 and 3 for one round. Returns what was done (also emitted for the trace)."""
    window = window_of(turn)
    if window is None:
        return []
    done: list[dict[str, Any]] = []
    reason = window.requested or (_REQUESTED.pop(window.workspace_id, None) if window.workspace_id else None)
    window.requested = None
    budget = token_budget(turn)
    tools = upcoming_tools(turn.toolbox)
    before = count_messages(turn.messages, tools)
    # Below the budget the history is append-only: every request extends the previous one, so a
    # provider's prompt cache serves it (issue 23). Earlier messages are rewritten only here.
    if reason or before > budget:
        if n := micro_compact(turn.messages, window):
            done.append({"level": 2, "compacted": n})
        conflict = CONFLICT_SOURCE in str(turn.messages[0].get("content") or "") if turn.messages else False
        for step in trim_order(conflict):
            if step == "old_tool_results":
                if reason or count_messages(turn.messages, tools) > budget:
                    done += _summarise(turn, window, tools, budget, reason)
            elif count_messages(turn.messages, tools) > budget and _drop_guidance(turn.messages, step):
                done.append({"level": "trim", "dropped": step, "conflict": conflict})
        after = count_messages(turn.messages, tools)
        done.append({"level": "tokens", "before": before, "after": after, "budget": budget})
    if done:  # one event per compaction, its steps inside
        turn.recorder.emit("context_compacted", {"reason": reason or "over_budget", "steps": done})
    return done


def _summarise(
    turn: Any, window: ContextWindow, tools: list[dict[str, Any]], budget: int, reason: str | None
) -> list[dict[str, Any]]:
    """Level 3, then compaction of the newest results too when they alone are still too big."""
    done = []
    if event := summarize_history(
        turn.messages, window, TracedModel(turn.model, turn.recorder, "summary"), reason or "over_budget"
    ):
        done.append(event)
    for keep in (2, 0):
        if count_messages(turn.messages, tools) <= budget:
            break
        micro_compact(turn.messages, window, keep=keep)
    return done


def _drop_guidance(messages: list[dict[str, Any]], tier: str) -> bool:
    """Take the memory or knowledge block out of the system prompt (for the rest of this turn)."""
    if not messages or messages[0].get("role") != "system":
        return False
    trimmed = without_block(messages[0]["content"], tier)
    if trimmed == messages[0]["content"]:
        return False
    messages[0] = {**messages[0], "content": trimmed}
    return True


class ToolSchemas(Protocol):
    """What the cascade needs of a Toolbox (whose module imports this one, so it is named by shape)."""

    def schemas(self) -> list[dict[str, Any]]: ...


def upcoming_tools(toolbox: ToolSchemas) -> list[dict[str, Any]]:
    """The schemas the next request will offer, without assembling it (`Toolbox.schemas()` is
    called once per request: it ages the exposure's search leases)."""
    exposure = getattr(toolbox, "exposure", None)
    if exposure is None:
        return toolbox.schemas()
    return [t.schema() for t in exposure.upcoming()]


def _head_length(messages: list[dict[str, Any]]) -> int:
    """Leading system messages (kept whole) and an earlier summary with its acknowledgement."""
    n = 0
    while n < len(messages) and messages[n].get("role") == "system":
        n += 1
    return n
