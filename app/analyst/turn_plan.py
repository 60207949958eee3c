"""The plan for this turn: the question read against the data the turn has seen (the Reading: which
dataset, by the question's words or the user's scope answer; a follow-up inherits the question it
continues), the plan made from that reading (plan.py), narrowed by the filters the follow-ups ask
for (scope.py), shaped by the workspace rules, and with each step pointed at the table it reads."""

from __future__ import annotations

from typing import Any

from app.analyst.definitions import confirmed_definitions
from app.analyst.plan import plan_reading
from app.analyst.provenance import settle_sources
from app.analyst.rates import rate_steps
from app.analyst.reading import pinned_filter
from app.analyst.role_question import role_answers
from app.analyst.scope import apply_rules, chain_filters, filtered_name, workspace_rules
from app.analyst.sheet_words import percent_columns, sheet_words_of
from app.analyst.steps import DATA_TASK_KINDS, Condition, Plan, Step
from app.analyst.turn_state import Message, TurnView
from app.understanding.kinds import earlier_questions
from app.understanding.language import local_text as _t
from app.understanding.profile_reading import read_profile, read_values
from app.understanding.reading import read_question


def plan_turn(
    view: TurnView,
    messages: list[Message],
    datasets: list[dict[str, Any]],
    zh: bool,
    carried: tuple[Condition, ...] = (),
) -> Plan:
    """Which dataset (dataset_choice: the question's words, or the user's scope answer), what the
    question asks (a follow-up inherits the previous question and its filters), and the workspace
    rules the plan can apply. `carried`: the rows another part of the message is about (compound_turn:
    "…, and how much did they bring in?" asks of the first part's rows)."""
    many = len(datasets) > 1
    confirmed = {**confirmed_definitions(messages), **view.user_answers()}  # the user's answers
    seen = [seen_dataset(view, dataset, many) for dataset in datasets]
    reading = read_question(view.question, seen, earlier_questions(messages), confirmed, zh)
    plan = plan_reading(reading)
    plan.dataset, plan.choice = reading.dataset.get("name"), reading.choice
    chosen = next((d for d in datasets if d.get("name") == plan.dataset), reading.dataset)
    plan.sheet_words = sheet_words_of(chosen.get("columns", []))
    plan.grain = chosen.get("grain")  # a monthly table's dates are said as months (sheet_words.as_people_write)
    plan.percents = percent_columns(reading.dataset.get("columns", []))  # its profile's ranges (read_profile)
    conditions = [
        *carried,  # first: the same rows kept in the same order are the same kept table (one filter step)
        *plan.filters,
        *chain_filters(
            reading.chain,
            reading.dataset,
            metric=plan.metric,
            compared=plan.dimension,
            said=reading.said,
            ranked=groups_one_column(plan),
        ),
    ]
    # a condition the plan and the question's filter words both found ("没被批准的" counted and kept) once
    conditions = list({(c["column"], c["op"], str(c["value"])): c for c in conditions}.values())
    if not reading.chain.narrowing:  # the question itself, not a follow-up narrowing it further
        pinned = role_answers(reading.confirmed, reading.root_key, reading.columns).get("filter")
        conditions = _chip_filter(plan, conditions, pinned, reading.columns)
    # a version made for the question (months, one group against the rest) is made from the kept rows: the
    # filter runs first, whatever the kind (each month's total "only for 东门" is 东门's months)
    if plan.derived:
        # a condition that names the group the version makes ("first class against the others") is that
        # group, not rows to keep; a date range beside periods made from the dates ("2022年哪个月") keeps rows
        made_from = {plan.whole, plan.dimension} | {
            c
            for s in plan.steps
            if s.prep and s.arguments.get("kind") != "date_part"
            for c in s.arguments.get("columns", [])
        }
        conditions = [c for c in conditions if c["column"] not in made_from]
    narrowed = bool(conditions) and plan.kind not in DATA_TASK_KINDS
    if narrowed and plan.derived:
        target = _derived_from_kept(plan, conditions, datasets, zh)
    else:
        named = frozenset(m.name for m in reading.mentions)
        target = _narrowed(plan, conditions, datasets, zh, named) if narrowed else _unfiltered(plan)
    apply_rules(plan, workspace_rules(messages), zh)
    makes_tables = any(s.tool == "group_aggregate" for s in plan.steps)  # its output becomes the newest table
    if many or makes_tables or plan.derived or narrowed:
        for step in plan.steps:
            # the look at the data reads the table as uploaded; a count of the rows ("how many visits over
            # 500": data_tasks.count_plan) counts the kept ones
            looks = step.tool == "profile_dataset" and not (plan.kind == "count" and step.task)
            source = plan.dataset if step.prep or looks else target
            step.arguments = {"dataset": source, **step.arguments}  # a source already set stays
    plan.analysed = target
    settle_sources(plan.provenance, plan)  # role_sources: the roles the narrowed plan still fills
    return plan


# the kinds that total, rank or share out the groups of one column: a value of another column the question
# names is the rows they are about ("东门饮料的销售额一共多少？": 饮料's rows of 东门's total)
_GROUPS_ONE_COLUMN = ("total", "top", "period", "share")


def groups_one_column(plan: Plan) -> bool:
    """Whether the plan totals, ranks or lists the groups of one column (a store's, or the calendar months
    it makes from the dates): a value of another column the question names ("北京店哪个月…", "东门饮料的…")
    is then the rows it is about, not a group compared."""
    return bool(plan.dimension) and plan.kind in _GROUPS_ONE_COLUMN


def _chip_filter(
    plan: Plan, conditions: list[Condition], answer: str | None, columns: list[dict[str, Any]]
) -> list[Condition]:
    """The conditions with the filter chip's choice (reading.pinned_filter) in place of the question's
    own filter on that column: another of its values, or none (every row kept)."""
    pinned = pinned_filter(answer, columns)
    if pinned is None:
        return conditions
    column, value = pinned
    plan.filter_pinned = column
    others = [c for c in conditions if c["column"] != column]
    return others if value is None else [*others, {"column": column, "op": "==", "value": value}]


def seen_dataset(view: TurnView, dataset: dict[str, Any], many: bool) -> dict[str, Any]:
    """A dataset summary with what this turn's profile and value lookups showed of it."""
    name = dataset.get("name") if many else None
    return read_values(read_profile(dataset, view.profile(name)), view.lookups(dataset, name))


def _narrowed(
    plan: Plan,
    conditions: list[Condition],
    datasets: list[dict[str, Any]],
    zh: bool,
    named: frozenset[str] = frozenset(),
) -> str | None:
    """The plan on a filtered copy of its dataset (made first, by a prep step, unless it exists);
    "East only" leaves nothing to compare by Region: those steps go. The copy's name."""
    target = filtered_name(str(plan.dataset), conditions)
    plan.filters = conditions
    # "East only": nothing left to compare by; "each region but East" still compares the others (the
    # question names the regions), "orders not from East" asks about the kept rows alone
    # leaving out one value of a two-valued column ("没有停车场的") keeps the other: one group, none compared
    levels = {
        c["name"]: c.get("levels") for d in datasets if d.get("name") == plan.dataset for c in d.get("columns", [])
    }
    left_out = {
        c["column"] for c in conditions if c["op"] == "not_in" or (c["op"] == "!=" and levels.get(c["column"]) != 2)
    } & named
    if plan.dimension in {c["column"] for c in conditions} - left_out:
        # the correlation with the other numbers was the standard plan's support for the comparison; without
        # it the measure within the filter answers ("the average amount of online orders")
        relating = plan.kind in ("relationship", "association")
        plan.steps = [
            s
            for s in plan.steps
            if plan.dimension not in (s.arguments.get("group_column"), s.arguments.get("x_column"))
            and (relating or s.tool not in ("correlation_analysis", "plot_scatter"))
        ]
        if plan.kind == "proportion" and plan.metric and not any(s.task for s in plan.steps):
            # "And only for the South region?" after the churn rate by region: the rate within the kept rows
            plan.dimension = None
            rate_steps(plan, plan.metric, [], zh)
    if target not in {d.get("name") for d in datasets}:
        described = ", ".join(f"{c['column']} {c['op']} {c['value']}" for c in conditions)
        plan.steps.insert(
            1,
            Step(
                "filter_rows",
                {"conditions": conditions, "output": target},
                _t(zh, f"Keep only {described}", f"只保留 {described}"),
                prep=True,
            ),
        )
    return target


def _derived_from_kept(plan: Plan, conditions: list[Condition], datasets: list[dict[str, Any]], zh: bool) -> str | None:
    """The plan's new version (calendar months) made from the kept rows: the filter first, then the step
    that makes the version reads the filtered copy; the analyses read the version. Its name."""
    kept = _narrowed(plan, conditions, datasets, zh)
    summary = f"{plan.dataset}_summary"  # a rate of totals (data_tasks.per_unit_plan): the kept rows' totals
    if kept and plan.derived == summary and any(s.tool == "group_aggregate" and s.prep for s in plan.steps):
        plan.derived = f"{kept}_summary"  # group_aggregate names its side table after the table it reads
        for step in plan.steps:
            moved = {k: plan.derived for k in ("dataset", "output") if step.arguments.get(k) == summary}
            if step.tool == "group_aggregate" and step.prep:
                moved["dataset"] = kept
            step.arguments = {**step.arguments, **moved}
        return plan.derived
    derived = f"{plan.derived}_{kept[len(str(plan.dataset)) + 1 :]}" if kept else plan.derived
    for step in plan.steps:
        if step.prep and step.arguments.get("output") == plan.derived:
            step.arguments = {"dataset": kept, **step.arguments, "output": derived}
    plan.derived = derived
    return derived


def _unfiltered(plan: Plan) -> str | None:
    """The plan on its dataset, or on the new version its prep step makes (one group against the others)."""
    plan.filters = []
    return plan.derived or plan.dataset
