"""A yes/no outcome's rate (survived, admitted, bought again): compared across the groups of a column
(a proportion test per grouping, and across every group of the column one group was taken from),
the overall rate of a count table, or the outcome's breakdown."""

from __future__ import annotations

from app.analyst.steps import Arguments, Column, Plan, Step, weighted_arguments
from app.understanding.language import local_text as _t
from app.understanding.profile_reading import NUMERIC


def rate_steps(plan: Plan, outcome: str, columns: list[Column], zh: bool) -> None:
    """The steps for the rate of `outcome`, by the plan's grouping when it has one."""
    plan.kind = "proportion"
    if plan.dimension:
        _rates_by_group(plan, outcome, plan.dimension, columns, zh)
    elif plan.weights or plan.failures:  # a count table: the overall rate, each row weighed by its counts
        arguments: Arguments = {
            "value_column": outcome,
            **({"success_value": plan.success} if plan.success else {}),
            **({"failures_column": plan.failures} if plan.failures else {}),
        }
        plan.steps.append(
            Step(
                "proportion_test",
                arguments | weighted_arguments(plan),
                _t(zh, f"The {outcome} rate", f"{outcome}比例"),
            )
        )
    else:
        plan.steps.append(Step("value_counts", {"column": outcome}, _t(zh, f"{outcome} breakdown", f"{outcome}分布")))


def _rates_by_group(plan: Plan, outcome: str, dimension: str, columns: list[Column], zh: bool) -> None:
    subject = _t(zh, f"Compare the {outcome} rate across {dimension}", f"比较不同{dimension}的{outcome}比例")
    arguments: Arguments = {"value_column": outcome, "group_column": dimension}
    if plan.success:
        arguments["success_value"] = plan.success
    if plan.failures:  # counts of both outcomes on each row (ncases, ncontrols)
        arguments["failures_column"] = plan.failures
    plan.steps.append(Step("proportion_test", arguments | weighted_arguments(plan), subject))
    if plan.whole:  # and across every group of the column the one group was taken from
        subject = _t(zh, f"Compare the {outcome} rate across {plan.whole}", f"比较不同{plan.whole}的{outcome}比例")
        plan.steps.append(
            Step("proportion_test", arguments | {"group_column": plan.whole} | weighted_arguments(plan), subject)
        )
    if not plan.failures and next((c["type"] for c in columns if c["name"] == outcome), None) in NUMERIC:
        # 0/1: the mean is the rate
        plan.steps.append(Step("plot_bar", {"x_column": dimension, "y_column": outcome, "agg": "mean"}, evidence=False))
