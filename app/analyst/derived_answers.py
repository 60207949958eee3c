"""The answers to derived quantities (data_tasks: a rate per unit of another number), in plain words
with the figures, saying how the rate was computed: each group's total over its total (the standard
for "fuel per 100 km by depot"), or each row's rate averaged."""

from __future__ import annotations

from analysis_tools import ResultRecord
from analysis_tools.common import fmt_num
from app.analyst.scope import describe_conditions
from app.analyst.sheet_words import says_yes
from app.analyst.steps import Plan, Step


def per_unit_headline(step: Step, result: ResultRecord, plan: Plan, zh: bool) -> str | None:
    """The rate of each group, highest first (rank_values over the summary's rate column: one row per
    group, so a group's sum is its rate), with how it was computed."""
    name, group = step.arguments["value_column"], step.arguments["group_column"]
    metrics, ranked = result.metrics, []
    for i in range(1, int(metrics.get("shown") or 0) + 1):
        if f"rank.{i}.label" in metrics:
            ranked.append((str(metrics[f"rank.{i}.label"]), float(metrics[f"rank.{i}.value"])))
    if not ranked:
        return None
    totals = next((s.arguments["value_columns"] for s in plan.steps if s.tool == "group_aggregate"), [name, name])
    top, bottom = totals[0], totals[1]  # what the rate divides: the totals step's two numbers
    listed = ("，" if zh else ", ").join(f"{g} {fmt_num(v)}" for g, v in ranked)
    if zh:
        return (
            f"各{group}的 {name}（{group}内{top}合计除以{bottom}合计）：{listed}；"
            f"最高的是 {ranked[0][0]}（{fmt_num(ranked[0][1])}），最低的是 {ranked[-1][0]}（{fmt_num(ranked[-1][1])}）。"
        )
    return (
        f"{name} by {group} (each {group}'s total {top} over its total {bottom}): {listed}; "
        f"highest {ranked[0][0]} ({fmt_num(ranked[0][1])}), lowest {ranked[-1][0]} ({fmt_num(ranked[-1][1])})."
    )


def whole_rate_headline(step: Step, result: ResultRecord, plan: Plan, zh: bool) -> str | None:
    """The one rate of the whole table (data_tasks.per_unit_plan without groups, per a count of things):
    its totals' ratio, said with the totals it divides ("每件卖多少钱": 销售额合计 ÷ 销量合计)."""
    totals = next((s for s in plan.steps if s.tool == "group_aggregate"), None)
    if totals is None or totals.arguments.get("group_columns"):
        return None
    name = str(step.arguments["columns"][0])
    rate = result.metrics.get(f"{name}.mean")
    if rate is None:
        return None
    top, bottom = totals.arguments["value_columns"][:2]
    if zh:
        return f"{name} 为 {fmt_num(rate)}（{top} 合计除以 {bottom} 合计）。"
    return f"{name} is {fmt_num(rate)} (total {top} over total {bottom})."


def row_rate_note(zh: bool) -> str:
    """How a rate without groups was computed."""
    return "（逐行计算比值后取平均）" if zh else " (each row's rate, averaged)"


def count_headline(step: Step, result: ResultRecord, plan: Plan, zh: bool) -> str | None:
    """The count a "how many" question asks (data_tasks.count_plan): all the rows, the rows with the
    yes/no column's yes or the named values, or each group's rows."""
    metrics = result.metrics
    if step.tool == "profile_dataset":
        rows = metrics.get("n_rows")
        if rows is None:
            return None
        things = plan.counted_as or ("行" if zh else "rows")  # "how many rentals …": 88 rentals
        if plan.filters:  # the rows a cut or a time kept ("how many were hired in 2021"), of all the rows
            kept = describe_conditions(plan.filters, zh)
            total = (plan.choice.dataset or {}).get("rows") if plan.choice is not None else None
            whole = (f"（共 {fmt_num(total)} {things}）" if zh else f" (of {fmt_num(total)} in all)") if total else ""
            return (
                f"{kept} 的有 {fmt_num(rows)} {things}{whole}。"
                if zh
                else f"{fmt_num(rows)} {things} have {kept}{whole}."
            )
        if plan.counted_as:
            return f"共有 {fmt_num(rows)} {things}。" if zh else f"There are {fmt_num(rows)} {things} in all."
        return f"共有 {fmt_num(rows)} 行（条记录）。" if zh else f"There are {fmt_num(rows)} rows in all."
    column, total = step.arguments.get("column"), metrics.get("n")
    counts = {k[len("count.") :]: float(v) for k, v in metrics.items() if k.startswith("count.")}
    if not counts or total is None:
        return None
    if len(counts) == 1 and plan.filters and column in {c["column"] for c in plan.filters}:
        # the rows a filter on the counted column kept ("没被批准的": 是否批准 = 否): one value, its count
        (value, n) = next(iter(counts.items()))
        things = plan.counted_as or ("行" if zh else "rows")
        return (
            f"{column} 为 {value} 的有 {fmt_num(n)} {things}。"
            if zh
            else f"{fmt_num(n)} {things} have {column} = {value}."
        )
    # a yes/no column's yes, or its no where the question negates it ("没被批准的申请有多少个": data_tasks.count_plan)
    wanted = plan.values or ([v for v in counts if says_yes(v) != plan.counted_no] if _yes_no(counts) else [])
    if wanted := [v for v in wanted if v in counts]:
        n = sum(counts[v] for v in wanted)
        shown = "、".join(wanted) if zh else " or ".join(wanted)
        share = n / total * 100 if total else 0.0
        return (
            f"{column} 为 {shown} 的有 {fmt_num(n)} {plan.counted_as or '行'}（共 {fmt_num(total)} {plan.counted_as or '行'}，占 {share:.1f}%）。"
            if zh
            else f"{fmt_num(n)} of {fmt_num(total)} {plan.counted_as or 'rows'} have {column} = {shown} ({share:.1f}%)."
        )
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    listed = ("，" if zh else ", ").join(f"{g} {fmt_num(v)}" for g, v in ranked)
    # the rows a filter kept are what is counted ("how many people left in each department": Left = Yes)
    kept = describe_conditions(plan.filters, zh)
    if zh:
        return f"各{column}" + (f"中 {kept} " if kept else "") + f"的行数：{listed}（共 {fmt_num(total)} 行）。"
    return f"Rows{f' with {kept}' if kept else ''} per {column}: {listed} ({fmt_num(total)} in all)."


def _yes_no(counts: dict[str, float]) -> bool:
    """Whether a column's values are yes and no (是/否, Y/N, True/False)."""
    return len(counts) == 2 and any(says_yes(v) for v in counts)
