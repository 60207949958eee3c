"""A turn that asks two questions in one message (app.understanding.compound): each part planned as a
question of its own (turn_plan.plan_turn), and one plan for the turn's rounds that runs the steps of
both; the answer gives each part's finding, in the question's order (answer.write_answer)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.analyst.steps import DATA_TASK_KINDS, Condition, Plan
from app.analyst.turn_plan import plan_turn
from app.analyst.turn_state import Message, TurnView
from app.understanding.column_forms import money_taken_column
from app.understanding.compound import points_back, shares_opening
from app.understanding.kinds import FILTER_CUE, HOW_MANY, HOW_MUCH, MEAN_WORDS, TOTAL
from app.understanding.language import local_text as _t
from app.understanding.roles import MATCH_KINDS

# how a role came from the question's own words, not a default or the user's answer: every way a column
# is named (roles.MATCH_KINDS) but placing a phrase by meaning, and a value named
_NAMED = frozenset(MATCH_KINDS) - {"semantic"} | {"value"}


def compound_plan(
    view: TurnView, messages: list[Message], parts: list[str], datasets: list[dict[str, Any]], zh: bool
) -> Plan:
    """The plan of each part; then one plan that holds the steps of all (the first part's roles, its
    provenance and its dataset), with the parts kept in `parts` for the answer. A later part that names
    no column nor value of its own continues the first: the whole message is planned as one question."""
    plans: list[Plan] = []
    supplied: set[int] = set()  # the parts whose measure this turn chose for them (of the earlier part's rows)
    for part in parts:
        if plans and (FILTER_CUE.match(part) or _back_to_cut_rows(part, plans[0], zh)) and not shares_opening(parts):
            # "其中猫有几次？", "…, and how many of those were cancelled?": of the rows the first part is about,
            # so its words (its cut) keep them too
            part = f"{parts[0].rstrip('？?。.')}，{part}"
        plan = plan_turn(replace(view, question=part), messages, datasets, zh)
        if plans and (of_rows := _amount_of_rows(view, messages, datasets, zh, part, plans[0], plan)):
            # "How many drivers paid in cash, and how much did that add up to?": an amount of the first part's rows
            supplied.add(len(plans))
            plans.append(of_rows)
            continue
        if plans and not _names_a_measure(plan) and _counts_rows(plans[0]) and _groups(plan) == _groups(plans[0]):
            # "How many requests came in each month, and which month was the busiest?": a part that names no
            # measure, by the same groups, asks about the first part's counts, whose answer says the highest
            continue
        if plans and not _names_anything(plan):
            # "…？和乘客相比怎么样？", "…, and is it growing?": a part that names nothing of its own continues
            # the first; the message is one question
            return plan_turn(view, messages, datasets, zh)
        if plans and not _names_a_measure(plan) and (measure := plans[0].metric):
            # "…, and which month was busiest?": a part that names no column asks about the first part's measure
            plan = plan_turn(replace(view, question=f"{part} ({measure})"), messages, datasets, zh)
        plans.append(plan)
    plans = [
        plan if i in supplied else _with_later_measure(view, messages, datasets, zh, parts, plans, i, supplied)
        for i, plan in enumerate(plans)
    ]
    first = plans[0]
    merged = replace(first, steps=[], notes=[], parts=plans)
    seen: set[str] = set()
    for plan in plans:
        for step in plan.steps:
            key = f"{step.tool}:{sorted(step.arguments.items())!r}"
            if key not in seen:
                seen.add(key)
                merged.steps.append(step)
        merged.notes += [n for n in plan.notes if n not in merged.notes]
    return merged


def _amount_of_rows(
    view: TurnView,
    messages: list[Message],
    datasets: list[dict[str, Any]],
    zh: bool,
    part: str,
    first: Plan,
    plan: Plan,
) -> Plan | None:
    """A later part that asks an amount and names no measure of its own ("…, and how much did they bring
    in between them?", "what did it take on an average day?", "…，这些一共是多少？") asks it of the rows the
    first part is about (_rows_of, less conditions on a column the part filters itself), and of the money they
    took in (column_forms.money_taken_column; else the first part's measure): planned again so. None when
    the part is not such a part, or there is no measure to take."""
    rows = _rows_of(first)
    if not rows or _names_a_measure(plan) or not _asks_amount(part, zh):
        return None
    chosen = next((d for d in datasets if d.get("name") == first.dataset), None)
    measure = money_taken_column(chosen.get("columns", [])) if chosen else None
    if (measure := measure or first.metric) is None:
        return None
    own = {c["column"]: c for c in plan.filters}
    carried: tuple[Condition, ...] = tuple(c for c in rows if own.get(c["column"], c) == c)
    # how much several rows came to is their sum, unless the part asks an average ("on an average day")
    amount = measure if MEAN_WORDS.search(part) else _t(zh, f"total {measure}", f"{measure}合计")
    return plan_turn(replace(view, question=f"{part} ({amount})"), messages, datasets, zh, carried)


def _back_to_cut_rows(part: str, first: Plan, zh: bool) -> bool:
    """Whether an English part points back ("how many of those were cancelled") to rows the first part cut
    (its filters, or the one group it names): where the first part took every row, "which of them" points
    to its groups or all its rows, and the part is read on its own words as before."""
    return not zh and points_back(part) and bool(_rows_of(first))


def _rows_of(plan: Plan) -> list[Condition]:
    """The rows a part is about: its filters, or the one group of its grouping it names ("For the 老街 stall,
    how much did we write off?" totals every stall's and says 老街's: 老街 is what it asks about)."""
    if plan.filters:
        return plan.filters
    if plan.dimension and len(plan.values) == 1:
        return [{"column": plan.dimension, "op": "==", "value": plan.values[0]}]
    return []


def _asks_amount(part: str, zh: bool) -> bool:
    """Whether a part asks an amount, not a count: how much, a total or an average (多少 asks both in Chinese)."""
    return any(cue.search(part) for cue in (HOW_MUCH, TOTAL, MEAN_WORDS)) or (zh and bool(HOW_MANY.search(part)))


def _with_later_measure(
    view: TurnView,
    messages: list[Message],
    datasets: list[dict[str, Any]],
    zh: bool,
    parts: list[str],
    plans: list[Plan],
    at: int,
    supplied: set[int],
) -> Plan:
    """A part whose measure is no word of its own, planned again with the measure a later part names
    ("哪个月打上来的鱼最多？那个月总共多少公斤？": the month caught most of what the second part counts in
    kilograms): the parts of one message are about one thing, and the later part's words say which
    number, where the earlier part's would leave a default or a question; a measure this turn chose for a
    later part (_amount_of_rows) is no word of it. The plan as it was otherwise."""
    plan = plans[at]
    if _names_a_measure(plan):
        return plan
    later_plans = (later for i, later in enumerate(plans) if i > at and i not in supplied)
    named = (later.metric for later in later_plans if later.metric and _names_a_measure(later))
    if (measure := next(named, None)) is None:
        return plan
    return plan_turn(replace(view, question=f"{parts[at]} ({measure})"), messages, datasets, zh)


def _groups(plan: Plan) -> object:
    """What a plan groups by: its grouping column, or, for periods made from a date (a date_part column,
    named in the question's language), the date and the part ("申请日期", "year_month")."""
    made = next(
        (
            (tuple(s.arguments.get("columns") or ()), s.arguments.get("part"))
            for s in plan.steps
            if s.tool == "derive_column"
            and s.arguments.get("kind") == "date_part"
            and s.arguments.get("new_column_name") == plan.dimension
        ),
        None,
    )
    return made or plan.dimension


def _counts_rows(plan: Plan) -> bool:
    """Whether a plan counts rows, overall or per group or period (a count, totals with no number: "how
    many requests came in each month")."""
    return plan.metric is None and plan.kind in ("count", "total")


def _names_anything(plan: Plan) -> bool:
    """Whether the question's own words chose any of the plan's columns or values (not defaults), or
    the plan is a count or a derived quantity of its own."""
    if plan.kind in ("count", "date_gap", "per_unit", "period", *DATA_TASK_KINDS):
        return True  # a calendar period ("哪个月最忙") is named by its period word, not by a column's name
    sources = plan.provenance.sources if plan.provenance else []
    return any(s.how in _NAMED for s in sources)


def _names_a_measure(plan: Plan) -> bool:
    """Whether the question's own words chose the plan's measure (not a default), or the plan needs none
    (a count, a derived quantity)."""
    if plan.metric is None or plan.kind in ("count", "date_gap", "per_unit", *DATA_TASK_KINDS):
        return True
    sources = plan.provenance.sources if plan.provenance else []
    return any(s.role == "outcome" and s.how in _NAMED for s in sources)
