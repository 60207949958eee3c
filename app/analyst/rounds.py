"""The rounds of a turn before its answer, each the tool calls of one reply: a look at the data
before planning (the profile of each dataset, and the counts of the categories it lists only in
part), tool_search for the planned tools the turn does not offer yet, then the tasks with the
plan, a prep step of its own (a filter the analyses read), the analyses, and the evidence. An
empty list means the round is done: the next one runs, or the answer is written."""

from __future__ import annotations

from typing import Any

from analysis_tools.tables import table_name
from app.analyst.evidence import evidence_calls
from app.analyst.plan_record import plan_arguments
from app.analyst.steps import Arguments, Plan, Step
from app.analyst.turn_state import TurnView
from app.understanding.profile_reading import value_lookups

ToolCalls = list[tuple[str, Arguments]]  # (tool, arguments) of one reply
MAX_PROFILED = 5  # datasets looked at before planning (the newest ones)


def looks(datasets: list[dict[str, Any]], offered: set[str], view: TurnView) -> ToolCalls:
    """Before the plan (no task yet): the profile of each dataset, and the value counts of the
    categories it lists only in part; when value_counts is not offered, a tool_search for it first (once)."""
    if "task_create" in view.called:
        return []
    many = len(datasets) > 1
    found: ToolCalls = []
    for dataset in datasets[-MAX_PROFILED:]:
        arguments = {"dataset": dataset["name"]} if many else {}
        if "profile_dataset" in offered and not view.ran("profile_dataset", arguments):
            found.append(("profile_dataset", arguments))
    missing = [
        ({"dataset": ds["name"], **arguments} if many else arguments)
        for ds in datasets[-MAX_PROFILED:]
        for arguments in value_lookups(ds)
    ]
    missing = [a for a in missing if not view.ran("value_counts", a)]
    if missing and "value_counts" in offered:
        found += [("value_counts", arguments) for arguments in missing]
    elif missing and "tool_search" in offered and "tool_search" not in view.called:
        found.append(("tool_search", {"query": "value_counts", "limit": 1}))
    return found


def searches(plan: Plan, offered: set[str], view: TurnView) -> ToolCalls:
    """tool_search for the planned tools this turn does not offer (once per tool): those of the tasks, and
    of the prep steps the tasks read (a per-unit rate's totals, which are no task of their own)."""
    if "tool_search" not in offered:
        return []
    searched = view.searched()
    missing = dict.fromkeys(
        s.tool for s in plan.steps if (s.task or s.prep) and s.tool not in offered and s.tool not in searched
    )
    return [("tool_search", {"query": tool, "limit": 1}) for tool in missing]


def next_calls(
    plan: Plan, offered: set[str], view: TurnView, zh: bool, taken: frozenset[str] = frozenset()
) -> ToolCalls:
    """Tasks (with the plan), then a prep step, then the analyses, then evidence; [] when the
    answer is next. `taken`: the workspace's table names (a prep step's output named like one is stored
    under another name: as_stored)."""
    # the look at the data ran before the plan; a count of the kept rows (a profile of the filtered copy, a
    # task of its own: data_tasks.count_plan) is an analysis that has not
    analyses = [
        s
        for s in plan.steps
        if s.tool in offered and (s.tool != "profile_dataset" or (s.task and not view.ran(s.tool, s.arguments)))
    ]
    analysed = any(view.ran(s.tool, s.arguments) for s in analyses)
    if offered and "task_create" not in view.called and not analysed and (tasks := _tasks(plan, offered, view, zh)):
        return tasks
    as_stored(plan, view)
    prep = [s for s in analyses if s.prep and not view.ran(s.tool, s.arguments)]
    if prep:  # a filter first: the analyses read its output; a step that reads another's output waits for it
        return [(s.tool, s.arguments) for s in _until_one_reads_another(prep, taken)]
    main = [s for s in analyses if not s.prep]
    if main and not any(view.ran(s.tool, s.arguments) for s in main):
        return [(s.tool, s.arguments) for s in main]
    if offered and "record_evidence" in offered and "record_evidence" not in view.called:
        return evidence_calls(plan, view, zh)
    return []


def _until_one_reads_another(steps: list[Step], taken: frozenset[str]) -> list[Step]:
    """The steps up to the first that reads a table an earlier one of them makes under a name a table already
    holds: the store names it otherwise, known once that one ran (as_stored). A free name is made as planned,
    so the steps go together."""
    made: set[str] = set()
    for i, step in enumerate(steps):
        if step.arguments.get("dataset") in made:
            return steps[:i]
        name = step.arguments.get("output") or table_name(str(step.arguments.get("dataset") or ""), step.tool)
        if name in taken:
            made.add(str(name))
    return steps


def as_stored(plan: Plan, view: TurnView) -> None:
    """The tables the later steps read, by the names the store gave the prep steps' outputs: a name an earlier
    question's table holds is not taken again (`stores_summary` made anew is `stores_summary_2`), and a step
    that read the planned name would read that earlier table."""
    for step in [s for s in plan.steps if s.prep]:
        _, record = view.find(step.tool, step.arguments)
        stored = record.details.get("dataset_name") if record is not None and record.ok else None
        planned = step.arguments.get("output") or table_name(str(step.arguments.get("dataset") or ""), step.tool)
        if not stored or not planned or stored == planned:
            continue
        for later in plan.steps:
            if later is not step:
                later.arguments = {
                    k: stored if k in ("dataset", "output") and v == planned else v for k, v in later.arguments.items()
                }


def _tasks(plan: Plan, offered: set[str], view: TurnView, zh: bool) -> ToolCalls:
    """A task per analysis, after the plan itself (record_analysis_plan), as a model would (SPEC §8)."""
    tasks: ToolCalls = [
        ("task_create", {"subject": s.task, "expected_output": s.task, "required_capability": s.tool})
        for s in plan.steps
        if s.task and "task_create" in offered
    ]
    if tasks and "record_analysis_plan" in offered:
        tasks.insert(0, ("record_analysis_plan", plan_arguments(view.question, plan, zh)))
    return tasks
