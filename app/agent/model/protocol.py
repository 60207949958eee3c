"""Protocol self-healing: keep the tool_call / tool-result sequence valid for the next request.

Providers reject a history where an assistant tool call has no result, or a tool result answers
no call. Runs end in the middle of things (errors, budgets, interrupts, crashes), so the history
is repaired at the start of every round and whenever a turn exits.
"""

from __future__ import annotations

from typing import Any

INTERRUPTED = "[interrupted] This tool call did not complete (the run stopped before it returned)."


def heal_protocol(messages: list[dict[str, Any]]) -> list[str]:
    """Repair `messages` in place; return a description of each repair (for the trace)."""
    repairs: list[str] = []
    healed: list[dict[str, Any]] = []
    pending: dict[str, str] = {}  # open tool_call id -> tool name
    seen_ids: set[str] = set()
    for message in messages:
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                repairs.append(f"dropped orphan tool result {call_id}")
                continue
            pending.pop(call_id)
            healed.append(message)
            continue
        if pending:  # a non-tool message arrived while calls were still open
            healed.extend(_synthetic_results(pending, repairs))
        if role == "assistant" and message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                if call["id"] in seen_ids:
                    repairs.append(f"dropped duplicated tool call id {call['id']}")
                    continue
                seen_ids.add(call["id"])
                calls.append(call)
                pending[call["id"]] = call["function"]["name"]
            message = (
                {**message, "tool_calls": calls} if calls else {k: v for k, v in message.items() if k != "tool_calls"}
            )
            if not calls and not message.get("content"):
                message["content"] = ""
        healed.append(message)
    if pending:
        healed.extend(_synthetic_results(pending, repairs))
    messages[:] = healed
    return repairs


def _synthetic_results(pending: dict[str, str], repairs: list[str]) -> list[dict[str, Any]]:
    results = []
    for call_id, name in pending.items():
        repairs.append(f"added synthetic result for {name} ({call_id})")
        results.append({"role": "tool", "tool_call_id": call_id, "content": INTERRUPTED})
    pending.clear()
    return results
