"""The built-in analyst: a deterministic planner behind the ChatModel interface (SPEC §10).

It runs when no language model is configured. It sees what a model sees (the messages) and
answers with tool calls, so every analysis goes through the same registry, budgets, evidence and
reports as with a real model. It is honest about what it is. What the tools returned it reads as
data (analysis_tools.ResultRecord, through the lookup the run hands it: `results`), never from
the text a model is shown, which the harness shortens.

A turn has five rounds (rounds.py): a look at the data (profile), plan (tasks), analyses,
evidence, answer (answer.py). The plan is made after the profile because the question may name
what only the data shows: the values of a category ("new and returning customers") and how long
the dates run (roles, profile_reading). A category with more values than the profile lists is
counted too (value_counts, found by tool_search when the turn does not offer it: one more round),
so any of its values can be named.
"""

from __future__ import annotations

from typing import Any

from analysis_tools import ResultLookup, ResultRecord
from app.agent.model.interface import ModelReply, ToolCallRequest
from app.analyst.answer import small_talk, write_answer
from app.analyst.compound_turn import compound_plan
from app.analyst.question_words import GREETING
from app.analyst.role_question import declined, not_found_answer, role_question
from app.analyst.rounds import ToolCalls, looks, next_calls, searches
from app.analyst.sheet_turn import at_selected_sheets, sheet_turns
from app.analyst.turn_plan import plan_turn
from app.analyst.turn_state import ASK, Message, TurnReader
from app.understanding import data_tables, in_spoken_names, tables_spoken_names
from app.understanding.compound import split_compound
from app.understanding.small_talk import is_small_talk

CALL_PREFIX = "call_builtin_"

# The arguments of each call that are words for people (shown on the page and in the reports), not
# what a tool computes with: these name columns as people say them (BuiltinAnalyst._said_arguments).
_PROSE: dict[str, tuple[str, ...]] = {
    "record_analysis_plan": ("metrics", "dimensions", "method_plan", "assumptions", "reading", "limitations"),
    "task_create": ("subject", "expected_output"),
    "record_evidence": ("claim", "method", "limitations"),
    ASK: ("question", "options", "reason"),
}


class BuiltinAnalyst:
    kind = "builtin"
    name = "builtin"

    def __init__(self, datasets: list[dict[str, Any]], language: str = "en", results: ResultLookup | None = None):
        self.datasets = datasets
        self.language = language
        self._counter = 0
        self._reader = TurnReader(results or _no_results)

    @property
    def results(self) -> ResultLookup:
        """Where the analyst finds what each tool call returned: call id -> its record (app/runs.py
        hands it the toolbox's)."""
        return self._reader.results

    @results.setter
    def results(self, lookup: ResultLookup) -> None:
        self._reader.results = lookup

    @property
    def zh(self) -> bool:
        return self.language == "zh"

    def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> ModelReply:
        view = self._reader.view(messages)
        # call ids go on from this turn's calls so far: a turn rebuilt in another process (after a
        # pause, or taken over from a worker that died) repeats no id its record holds
        self._counter = max(self._counter, sum(1 for call_id in view.calls if call_id.startswith(CALL_PREFIX)))
        datasets = data_tables(self.datasets, view.question)  # never an earlier analysis' table (a `_summary`)
        if GREETING.match(view.question) or is_small_talk(view.question) or not datasets:
            return ModelReply(small_talk(bool(datasets), self.zh))
        if found := sheet_turns(datasets, view):
            return self._reply(found)  # the sheet the question names, before anything is looked at
        datasets = at_selected_sheets(datasets, view)
        offered = {str(t["function"]["name"]) for t in tools} | view.found_tools()
        if found := looks(datasets, offered, view):
            return self._reply(found)  # look at the data before planning, as an analyst would
        parts = split_compound(view.question)  # two questions in one message: each planned, both answered
        if len(parts) > 1:
            plan = compound_plan(view, messages, parts, datasets, self.zh)
        else:
            plan = plan_turn(view, messages, datasets, self.zh)
        for part in plan.parts or [plan]:
            if declined(part.provenance) and part.provenance is not None:
                return ModelReply(not_found_answer(part.provenance, self.zh))  # "None of these": no default stands in
            ask = role_question(part.provenance, part.metric, self.zh)
            if ask and ASK in offered and not view.asked(ask["topic"]):
                return self._reply([(ASK, ask)])  # a variable the question names that no column matched (role_question)
        if found := searches(plan, offered, view):
            return self._reply(found)  # the tools the plan needs that this turn does not offer yet
        taken = frozenset(str(d.get("name")) for d in self.datasets)  # the workspace's tables, derived ones too
        if found := next_calls(plan, offered, view, self.zh, taken):
            return self._reply(found)
        return ModelReply(self._spoken(write_answer(plan, view, len(datasets) > 1, self.zh)))

    def _reply(self, calls: ToolCalls) -> ModelReply:
        requests = []
        for name, arguments in calls:
            self._counter += 1
            said = self._said_arguments(name, arguments)
            requests.append(ToolCallRequest(f"{CALL_PREFIX}{self._counter}_{name}", name, said))
        return ModelReply(None, requests, "tool_calls")

    @property
    def spoken(self) -> dict[str, str]:
        """Each column's full name → what a person calls it (understanding.spoken_names): a merged
        header's leaf ("销售额" for "销售情况 / 销售额"), its path where a table has the leaf twice, or
        where two tables disagree."""
        return tables_spoken_names(dataset.get("columns") or [] for dataset in self.datasets)

    def _spoken(self, value: Any) -> Any:
        """Text (or the texts of a list or mapping) with the columns named as people say them."""
        if isinstance(value, str):
            return in_spoken_names(value, self.spoken)
        if isinstance(value, list):
            return [self._spoken(v) for v in value]
        if isinstance(value, dict):
            return {k: self._spoken(v) for k, v in value.items()}
        return value

    def _said_arguments(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A call's arguments with the columns in its words for people named as people say them (the
        plan, its reading and chips, the tasks, the claims, a question about a role), so the answer, the
        page and every report name them alike. What a tool reads (columns, metrics, topics, ids) keeps the
        full names; a chip's choice comes back as the spoken name and role_question.role_answers maps it
        to its column."""
        if not any(name != said for name, said in self.spoken.items()):
            return arguments
        prose = _PROSE.get(tool, ())
        if tool == ASK and not str(arguments.get("topic") or "").startswith("role."):
            prose = ()  # another question's answers are read as they were offered (a table, a field's kind)
        return {k: self._spoken(v) if k in prose else v for k, v in arguments.items()}


def _no_results(call_id: str) -> ResultRecord | None:
    """The lookup of an analyst no run handed one: it has seen no tool results (a greeting)."""
    return None
