"""What the built-in analyst knows of the turn so far (`TurnView`): the question, the tool calls it
made, what each returned — as data, from the lookup the run hands it (analysis_tools.ResultRecord;
never the text a model is shown, which the harness shortens) — and the user's answers to the
questions it asked."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from analysis_tools import ResultLookup, ResultRecord
from app.analyst.steps import Arguments
from app.understanding.profile_reading import value_lookups

ASK = "ask_user_question"  # the clarification tool: a question to the user, the same for a model
Message = dict[str, Any]  # a chat message as the harness sends it (role, content, tool_calls ...)
Call = dict[str, Any]  # an assistant message's tool call: {"id", "type", "function": {"name", "arguments"}}
ANSWER_HEAD = "[answer]\n"  # how the harness writes the user's answer as the question's result (clarify.py)


def tool_of(call: Call) -> str:
    return str(call["function"]["name"])


def arguments_of(call: Call) -> Arguments:
    arguments: Arguments = json.loads(call["function"]["arguments"] or "{}")
    return arguments


def current_turn(messages: list[Message]) -> list[Message]:
    """Messages from the last real user message on (harness notes are not questions)."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m["role"] == "user" and not (m.get("content") or "").startswith("[harness]"):
            return messages[i:]
    return []


@dataclass(frozen=True)
class TurnView:
    """The turn so far: its question, its tool calls by id, their results by call id (those the lookup
    knows), and the answers to its ask_user_question calls by call id (the user's words, as first seen)."""

    question: str
    calls: dict[str, Call]
    results: dict[str, ResultRecord]
    answers: dict[str, str]

    @property
    def called(self) -> set[str]:
        """The tools called this turn."""
        return {tool_of(c) for c in self.calls.values()}

    def found_tools(self) -> set[str]:
        """The tools this turn's tool_search calls made callable: the tools array stays the same all
        run (the prompt cache keeps it), so what a search finds is called by name (exposure.py)."""
        found: set[str] = set()
        for call_id, call in self.calls.items():
            record = self.results.get(call_id)
            if tool_of(call) == "tool_search" and record is not None and record.ok:
                found.update(str(name) for name in record.details.get("exposed_tools") or [])
        return found

    def find(self, tool: str, arguments: Arguments) -> tuple[str | None, ResultRecord | None]:
        """The call of `tool` with exactly these arguments, and its result (None until it is known)."""
        for call_id, call in self.calls.items():
            if tool_of(call) == tool and arguments_of(call) == arguments:
                return call_id, self.results.get(call_id)
        return None, None

    def ran(self, tool: str, arguments: Arguments) -> bool:
        """Whether this turn called `tool` with these arguments (its result may still be coming)."""
        return self.find(tool, arguments)[0] is not None

    def result(self, tool: str, arguments: Arguments) -> ResultRecord | None:
        return self.find(tool, arguments)[1]

    def searched(self) -> set[str]:
        """What this turn's tool_search calls looked for."""
        return {str(arguments_of(c).get("query")) for c in self.calls.values() if tool_of(c) == "tool_search"}

    def asked(self, topic: str) -> bool:
        """Whether this turn already asked the question on that topic (never twice)."""
        return any(tool_of(c) == ASK and arguments_of(c).get("topic") == topic for c in self.calls.values())

    def user_answers(self) -> dict[str, str]:
        """topic -> answer of this turn's answered questions (the resumed turn's ask_user_question
        messages), so the answer is followed even before it shows among the confirmed definitions."""
        found = {}
        for call_id, call in self.calls.items():
            text = self.answers.get(call_id) or ""
            if tool_of(call) == ASK and text.startswith(ANSWER_HEAD):
                topic = arguments_of(call).get("topic")
                if topic:
                    found[str(topic)] = text[len(ANSWER_HEAD) :].split("\n", 1)[0].strip()
        return found

    def profile(self, dataset: str | None = None) -> str | None:
        """The profile this turn's profile_dataset call (of `dataset`, when several) showed, if it ran."""
        return next(
            (
                self.results[i].profile
                for i, c in self.calls.items()
                if tool_of(c) == "profile_dataset" and i in self.results and arguments_of(c).get("dataset") == dataset
            ),
            None,
        )

    def lookups(self, dataset: dict[str, Any], name: str | None = None) -> dict[str, dict[str, Any]]:
        """The metrics of this turn's value lookups of `dataset` (rounds.looks) by column, those that
        worked. Only the lookups: a value_counts the plan itself runs must not change the plan that made it."""
        found = {}
        for arguments in value_lookups(dataset):
            arguments = {"dataset": name, **arguments} if name else arguments
            result = self.result("value_counts", arguments)
            if result and result.ok:
                found[str(arguments["column"])] = result.metrics
        return found


class TurnReader:
    """Reads each round's messages into a TurnView. It remembers the user's answers as first seen: a
    later round may see an answer's message as a compact preview, but the plan must stay the same."""

    def __init__(self, results: ResultLookup):
        self.results = results
        self._answers: dict[str, str] = {}

    def view(self, messages: list[Message]) -> TurnView:
        turn = current_turn(messages)
        question = str(turn[0]["content"]) if turn else ""
        calls = {str(c["id"]): c for m in turn if m["role"] == "assistant" for c in m.get("tool_calls") or []}
        results = {}
        for message in turn:
            if message["role"] == "tool" and (record := self.results(message["tool_call_id"])) is not None:
                results[str(message["tool_call_id"])] = record
        return TurnView(question, calls, results, self._first_seen_answers(turn, calls))

    def _first_seen_answers(self, turn: list[Message], calls: dict[str, Call]) -> dict[str, str]:
        """This turn's answers to ask_user_question by call id, as first seen. An answer is the user's
        words, which the harness writes into the conversation (no tool result holds them)."""
        asked = {call_id for call_id, call in calls.items() if tool_of(call) == ASK}
        ids = [str(m["tool_call_id"]) for m in turn if m["role"] == "tool" and m["tool_call_id"] in asked]
        for m in turn:
            if m["role"] == "tool" and m["tool_call_id"] in asked:
                self._answers.setdefault(str(m["tool_call_id"]), m.get("content") or "")
        return {call_id: self._answers[call_id] for call_id in ids}
