"""Each tool call's result as plain data (analysis_tools.ResultRecord), by call id: what a program
that reads results (the built-in analyst) is handed instead of the text a model is shown, which the
context cascade shortens, compacts and summarises.

The live turn's records are kept here as the loop makes them (loop.run_call, masked like the text);
each is also saved beside its text in the output store (context/outputs.py), so a turn resumed in
another process (after a clarification pause) gets its earlier rounds' records back (`restore`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from analysis_tools import ResultRecord, ToolResult
from app.agent.context.outputs import OutputStore
from app.agent.context.previews import reference_of


class CallResults:
    """call id -> the record of its result; calling it is the lookup (analysis_tools.ResultLookup)."""

    def __init__(self, mask: Callable[[str], str] = str):
        self.mask = mask  # personal data never reaches a reader of results either (privacy.py)
        self._records: dict[str, ResultRecord] = {}

    def __call__(self, call_id: str) -> ResultRecord | None:
        return self._records.get(call_id)

    def keep(self, call_id: str, result: ToolResult) -> ResultRecord:
        """The record of a call's result (executed or refused), kept under its call id."""
        record = result.record(self.mask)
        self._records[call_id] = record
        return record

    def found_by_search(self, messages: list[dict[str, Any]]) -> list[str]:
        """The tools the tool_search calls in `messages` made callable, from their records (a resumed
        turn makes them callable again: exposure.py forgets with the process that ran the search)."""
        found: list[str] = []
        for message in messages:
            for call in message.get("tool_calls") or []:
                record = self._records.get(call.get("id"))
                if call["function"]["name"] == "tool_search" and record is not None and record.ok:
                    found += [str(name) for name in record.details.get("exposed_tools") or []]
        return found

    def called_before(self, messages: list[dict[str, Any]]) -> list[str]:
        """The tools `messages` called that ran (by name, or through call_tool): a resumed turn keeps them callable,
        as the process that ran them did (exposure.note_call) — a model that calls one again by its exact name after
        a clarification pause is not refused it."""
        called: list[str] = []
        for message in messages:
            for call in message.get("tool_calls") or []:
                record = self._records.get(call.get("id"))
                if record is None or not record.ok:
                    continue
                name = call["function"]["name"]
                if name == "call_tool":  # the tool it named (Toolbox.resolve)
                    name = _named_tool(call["function"].get("arguments"))
                called += [name] if name else []
        return called

    def restore(self, messages: list[dict[str, Any]], store: OutputStore | None) -> int:
        """The records of the tool results in `messages` that this process did not make (a resumed
        turn's earlier rounds), read from the output store; how many were found. A stored message
        is the output's whole text or its shortened form, which names the saved output."""
        if store is None:
            return 0
        found = 0
        for message in messages:
            call_id, content = message.get("tool_call_id"), message.get("content")
            if message.get("role") != "tool" or not call_id or call_id in self._records or not isinstance(content, str):
                continue
            output_id = store.output_id_of(call_id, content) or reference_of(content)
            saved = store.read_result(output_id) if output_id else None
            if saved is not None:
                self._records[call_id] = ResultRecord.from_json(saved)
                found += 1
        return found


def _named_tool(arguments: Any) -> str:
    """The tool a call_tool call's arguments name ("" when they cannot be read)."""
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return ""
    name = parsed.get("name") if isinstance(parsed, dict) else None
    return name if isinstance(name, str) else ""
