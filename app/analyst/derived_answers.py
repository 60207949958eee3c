"""The answers to derived quantities (data_tasks: a rate per unit of another number), in plain words
with the figures, saying how the rate was computed: each group's total over its total (the standard
for "fuel per 100 km by depot"), or each row's rate averaged."""

from __future__ import annotations

from analysis_tools import ResultRecord
from analysis_tools.common import fmt_num
from app.analyst.steps import Plan, Step


def per_unit_headline(step: Step, result: ResultRecord, plan: Plan, zh: bool) -> str | None:
    """The rate of each group, highest first, from the summary's rate column (group_aggregate's metrics
    `<rate>_sum.<group>`: one row per group, so the sum is the group's rate)."""
    name, group = step.arguments["value_columns"][0], step.arguments["group_columns"][0]
    prefix = f"{name}_sum."
    rates = {
        k[len(prefix) :]: float(v) for k, v in result.metrics.items() if k.startswith(prefix) and k != f"{prefix}total"
    }
    if not rates:
        return None
    ranked = sorted(rates.items(), key=lambda kv: -kv[1])
    top, bottom = _parts(step)
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


def row_rate_note(zh: bool) -> str:
    """How a rate without groups was computed."""
    return "（逐行计算比值后取平均）" if zh else " (each row's rate, averaged)"


def _parts(step: Step) -> tuple[str, str]:
    """The numerator and denominator of the summary's rate: its other value columns, without `_sum`."""
    columns = step.arguments["value_columns"][1:3]
    return tuple(c.removesuffix("_sum") for c in columns)  # type: ignore[return-value]
