"""Where each column of the built-in analyst's plan came from, recorded on the plan
(app.understanding.role_sources holds the types and the question-side reading: the words that
name nothing)."""

from __future__ import annotations

from app.analyst.steps import DATA_TASK_KINDS, Column, Plan
from app.understanding.role_sources import How, Provenance, Role, Source, part_named, same_family
from app.understanding.roles import Mention, match_kinds, named_values


def plan_roles(plan: Plan) -> list[tuple[Role, str]]:
    """(role, column) for every column the plan's analyses use, in step order, once each. A
    supporting correlation with "the other numbers" is by design all of them: not a role."""
    found: list[tuple[Role, str]] = []

    def add(role: Role, *names: object) -> None:
        for name in names:
            if isinstance(name, str) and name and (role, name) not in found:
                found.append((role, name))

    for step in plan.steps:
        if not step.task:
            continue
        a = step.arguments
        if step.tool in ("compare_groups", "compare_two_groups", "proportion_test", "plot_pie"):
            add("outcome", a.get("value_column"))
            add("group", a.get("group_column"))
        elif step.tool == "paired_test":
            add("outcome", a.get("value_column"), a.get("x_column"), a.get("y_column"))
            add("group", a.get("group_column"))
        elif step.tool == "group_aggregate":
            add("outcome", *(a.get("value_columns") or []))
            add("group", *(a.get("group_columns") or []))
        elif step.tool in ("rank_values", "time_series_trend", "forecast", "seasonal_decompose"):
            add("outcome", a.get("value_column"))
            add("group", a.get("group_column"))  # the groups a ranking ranks ("the 3 depots with …")
            add("date", a.get("date_column"))
        elif step.tool == "describe_columns":
            add("outcome", *(a.get("columns") or []))
        elif step.tool == "value_counts":
            add("group" if a.get("column") == plan.dimension else "outcome", a.get("column"))
        elif step.tool == "linear_regression":
            add("outcome", a.get("target_column"))
            add("predictors", *(a.get("feature_columns") or []))
        elif step.tool == "correlation_analysis" and plan.kind == "relationship":
            columns = a.get("columns") or []
            add("outcome", *columns[:1])
            add("predictors", *columns[1:])
        elif step.tool == "chi_square_test":
            add("group", a.get("x_column"), a.get("y_column"))
    return found


def read_sources(
    plan: Plan,
    question: str,
    columns: list[Column],
    mentions: list[Mention],
    chosen: str | None,
    answered: dict[str, str],
) -> list[Source]:
    """Each role's columns with how they were chosen (one Source per role and way of choosing)."""
    if plan.kind in DATA_TASK_KINDS:  # a data task the question spelt out: no role is guessed
        return []
    known = {c["name"] for c in columns}
    kinds = match_kinds(mentions)
    spans = [(m.start, m.end, m.name) for m in mentions]
    valued = {c["name"] for c in columns if named_values(question, [c], spans)[0]}
    picked = set(answered.values()) | ({chosen} if chosen else set())
    grouped: dict[tuple[Role, How], list[str]] = {}
    for role, name in plan_roles(plan):
        if name in picked:
            how: How = "answer"
        elif name in kinds:
            how = kinds[name]  # type: ignore[assignment]  # one of MATCH_KINDS
        elif name in valued or name not in known:  # a column the plan made from a named value ("East or others")
            how = "value"
        elif role == "outcome" and same_family(question, name):  # "销售额" for 营业额, "sales" for Revenue
            how = "synonym"
        elif part_named(question, name):  # "pass rate" for n_passed
            how = "partial"
        elif plan.kind == "paired" and role == "outcome" and any(n in kinds for r, n in plan_roles(plan) if r == role):
            how = "partial"  # the partner of a measurement the question named: "the other hand" (wide_pairs)
        else:
            how = "default"
        grouped.setdefault((role, how), []).append(name)
    said = {m.name: question[m.start : m.end] for m in reversed(mentions)}  # the first words naming each column
    return [
        Source(role, tuple(names), how, tuple(dict.fromkeys(said[n] for n in names if n in said)))
        for (role, how), names in grouped.items()
    ]


def settle_sources(provenance: Provenance | None, plan: Plan) -> None:
    """After the analyst narrowed the plan (a follow-up's filter, "East only" dropping the comparison by
    Region): the roles its steps still use, and the filter's columns, which the question's words name."""
    if provenance is None:
        return
    used = set(plan_roles(plan))
    kept = [
        Source(s.role, tuple(c for c in s.columns if (s.role, c) in used), s.how, s.phrases) for s in provenance.sources
    ]
    provenance.sources = [s for s in kept if s.columns]
    if filtered := tuple(dict.fromkeys(str(c["column"]) for c in plan.filters)):
        provenance.sources.append(Source("filter", filtered, "value"))
