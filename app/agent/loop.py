"""The agent loop. It is short on purpose: every mechanism is a named function beside it."""

from __future__ import annotations

import json
from typing import Any

from app.agent.context.budget_table import budget_table
from app.agent.context.compaction import asks_for_rows, compact, shelve_output, token_budget
from app.agent.model.interface import ModelReply, ToolCallRequest, parse_arguments
from app.agent.model.protocol import heal_protocol
from app.agent.model.recovery import malformed_calls, reemit_note
from app.agent.policy.answer_check import answer_recheck, check_answer
from app.agent.policy.budget import final_answer, gated_call
from app.agent.policy.clarify import ASK, awaiting_answer, gate_input, pause_if_asked
from app.agent.policy.gates import check_gates
from app.agent.policy.privacy import map_strings
from app.agent.policy.verification import between_rounds
from app.agent.run_scope import run_scope
from app.agent.tools.toolbox import tool_message_content
from app.agent.tracing import traced_call
from app.agent.turn import Interrupted, Turn, append


def run_turn(turn: Turn) -> str:
    """Ask the model, run the tools it calls, repeat until it answers; return the answer."""
    try:
        finish_open_calls(turn)  # a turn taken over from a worker that died: its last reply's calls
        while True:
            heal(turn)
            check_interrupt(turn)
            hold_for_gates(turn)  # below: a hard gate asks the user before any analysis tool runs
            if note := turn.budget.start_round():
                append(turn, {"role": "user", "content": note})
            for note in between_rounds(turn):  # verification.py: claim checks (gated), stale-task reminder
                append(turn, {"role": "user", "content": note})
            compact(turn)
            reply = call_model(turn)
            append(turn, reply.as_message())
            if not reply.tool_calls and (note := answer_recheck(turn, reply.content)):
                append(turn, {"role": "user", "content": note})  # its unbacked numbers go back once
                continue
            if not reply.tool_calls or turn.budget.spent:
                return check_answer(turn, final_answer(turn, reply.content))  # answer_check.py: the final check
            for call in reply.tool_calls:
                check_interrupt(turn)
                content = run_call(turn, call)
                if not awaiting_answer(turn, call):  # ask_user_question's result is the answer, written on resume
                    append(turn, {"role": "tool", "tool_call_id": call.id, "content": content})
            pause_if_asked(turn)  # clarify.py: the run waits for the user (RunService persists the pause)
    finally:
        if not awaiting_answer(turn):
            heal(turn)


def finish_open_calls(turn: Turn) -> None:
    """Complete the last reply's tool calls that have no result in the history: a turn taken over
    from a worker that died after the reply (app/jobs.py). A call that finished before the worker
    died is replayed from its record, never executed again (a figure, a stored table and evidence
    are made once); the call it was in the middle of runs now. A fresh or clarification-resumed
    turn has none (its question to the user is answered by turn_opening, not here)."""
    last = next((m for m in reversed(turn.messages) if m.get("role") == "assistant"), None)
    if last is None or not last.get("tool_calls"):
        return
    answered = {m.get("tool_call_id") for m in turn.messages if m.get("role") == "tool"}
    open_calls = [c for c in last["tool_calls"] if c["id"] not in answered and c["function"]["name"] != ASK]
    for part in open_calls:
        raw = part["function"].get("arguments") or ""
        call = ToolCallRequest(part["id"], part["function"]["name"], parse_arguments(raw), raw)
        recorded = turn.recorder.recorded_call(call.id)
        if recorded is None:
            content = run_call(turn, call)
        else:
            content = replay_call(turn, call, recorded.tool, recorded.result_text or "")
        append(turn, {"role": "tool", "tool_call_id": call.id, "content": content})
    if open_calls:
        turn.recorder.emit("calls_resumed", {"ids": [c["id"] for c in open_calls]})


def replay_call(turn: Turn, call: ToolCallRequest, tool: str, content: str) -> str:
    """What the model saw of a call that finished before its worker died, from its recorded text
    (shelved as run_call shelves it; its result record is read back from the output store)."""
    turn.budget.allow_tool_call()  # it counted against the budget when it ran
    shown = shelve_output(turn.context, call.id, tool, content, None, whole=asks_for_rows(call.arguments))
    if turn.context is not None:
        turn.toolbox.records.restore([{"role": "tool", "tool_call_id": call.id, "content": shown}], turn.context.store)
        if tool == "tool_search":  # what it found is callable again, as it was before the worker died
            last = {"tool_calls": [{"id": call.id, "function": {"name": tool}}]}
            turn.toolbox.exposure.request_tools(turn.toolbox.records.found_by_search([last]))
    return shown


def heal(turn: Turn) -> None:
    """Repair the history, and persist the synthetic tool results so the stored history is valid too."""
    before = {id(m) for m in turn.messages}
    repairs = heal_protocol(turn.messages)
    if repairs:
        for message in turn.messages:
            if id(message) not in before and message["role"] == "tool":
                turn.recorder.add_message(message)
        turn.recorder.emit("protocol_repaired", {"repairs": repairs})


def check_interrupt(turn: Turn) -> None:
    if turn.stop_event.is_set():
        raise Interrupted()


def call_model(turn: Turn) -> ModelReply:
    """One model request; with the budget spent no tools are offered, forcing an answer."""
    tools = [] if turn.budget.spent else turn.toolbox.schemas(turn.messages)
    turn.recorder.emit(
        "model_call",
        {
            "round": turn.budget.rounds,
            "tools": len(tools),
            "context": budget_table(turn.messages, tools, token_budget(turn)),
        },
    )
    reply = request_reply(turn, tools)  # traced; re-emit once on malformed arguments (below)
    turn.recorder.emit(
        "model_reply",
        {
            "round": turn.budget.rounds,
            "tool_calls": [c.name for c in reply.tool_calls],
            "finish_reason": reply.finish_reason,
            "usage": reply.usage,
        },
    )
    return reply


def request_reply(turn: Turn, tools: list[dict[str, Any]]) -> ModelReply:
    """One model reply for the loop: traced, streamed when configured, and with one re-emit request
    when tool arguments could not be repaired. The note is not kept in the history (the trace
    keeps it); a second malformed reply goes on and becomes a structured tool error."""
    reply = traced_complete(turn, turn.messages, tools)
    bad = malformed_calls(reply)
    if not bad:
        return reply
    turn.recorder.emit("arguments_reemit", {"tools": [c.name for c in bad], "errors": [c.argument_error for c in bad]})
    return traced_complete(turn, turn.messages + [reemit_note(bad)], tools, purpose="reemit")


def run_call(turn: Turn, call: ToolCallRequest) -> str:
    """Execute one tool call within budget; persist it; return what the model sees. A call_tool call
    is the tool it names from here on (budget, records, evidence: same id)."""
    resolved = turn.toolbox.resolve(call)
    call = resolved if isinstance(resolved, ToolCallRequest) else call
    turn.recorder.emit("tool_started", {"id": call.id, "tool": call.name, "arguments": call.arguments})
    result = gated_call(turn.budget, turn.toolbox.execute, call)  # budget.py: bans, caps; refusals never run
    content = turn.toolbox.mask(tool_message_content(result))
    record = turn.toolbox.records.keep(call.id, result)  # the result as data, for the built-in analyst
    result.interpretation = turn.toolbox.mask(result.interpretation)
    result.error = map_strings(result.error, turn.toolbox.mask)  # as the model saw it, in the trace too
    figures = [{"path": f.path, "caption": turn.toolbox.mask(f.caption)} for f in result.figure_records()]
    turn.recorder.record_tool_call(call.id, call.name, call.arguments, result, content, figures)
    turn.recorder.emit(
        "tool_finished",
        {
            "id": call.id,
            "tool": call.name,
            "ok": result.ok,
            "interpretation": result.interpretation,
            "error": result.error,
            "duration_ms": result.metrics.get("duration_ms"),
            "figures": [{"url": turn.figure_url(f["path"]), "caption": f["caption"]} for f in figures],
        },
    )
    # level 1: full text to disk first; an explicit row count (max_rows) is shown whole up to the persist limit
    return shelve_output(turn.context, call.id, call.name, content, record, whole=asks_for_rows(call.arguments))


def hold_for_gates(turn: Turn) -> None:
    """Before the turn's first analysis: when a hard gate fires, the harness asks through
    ask_user_question itself and the run pauses (no analysis tool has run)."""
    scope = run_scope(getattr(turn.toolbox, "context", None), missing_ok=True)
    if scope.gates_checked or scope.session is None or scope.run_id is None:
        return
    scope.gates_checked = True
    gate = check_gates(gate_input(turn))
    if gate is None:
        return
    arguments = gate.as_arguments()
    call = ToolCallRequest(f"gate-{gate.topic}"[:100], ASK, arguments, json.dumps(arguments, ensure_ascii=False))
    turn.recorder.emit("gate", {"topic": gate.topic, "reason": gate.reason})
    append(turn, ModelReply(None, [call], "tool_calls").as_message())
    content = run_call(turn, call)
    if not awaiting_answer(turn, call):  # the topic was answered meanwhile: go on with the answer
        append(turn, {"role": "tool", "tool_call_id": call.id, "content": content})
    pause_if_asked(turn)


# --- recording -----------------------------------------------------------------------------
def traced_complete(
    turn: Turn, messages: list[dict[str, Any]], tools: list[dict[str, Any]], purpose: str = "reply"
) -> ModelReply:
    """The loop's model request, traced (see `traced_call`)."""
    return traced_call(turn.recorder, turn.model, messages, tools, purpose, getattr(turn.budget, "rounds", 0))
