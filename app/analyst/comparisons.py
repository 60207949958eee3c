"""Steps that compare a number between groups: across all the groups of a column, or just the two
values the question names (`add_compare_steps`); and what sets groups against each other in a
question, as against merely mentioning one (`GROUPS_COMPARED`)."""

from __future__ import annotations

import re

from app.analyst.steps import Arguments, Column, Plan, Step
from app.understanding.language import local_text as _t

# groups set against each other ("more for women than for men", "哪个班进步更大"), not a group's mere mention
GROUPS_COMPARED = re.compile(
    r"\b(?:more|less|fewer|than|vs|versus|between|differ\w*|which|compar\w*|bigger|smaller|larger|"
    r"greater|faster|slower|higher|lower|each|every|per)\b|by \w|更|比|哪|不同|差异|区别|各|每|按",
    re.I,
)


def add_compare_steps(
    plan: Plan, columns: list[Column], metric: str, dimension: str, values: list[str], zh: bool
) -> None:
    """Compare the metric across the dimension's groups; when the question names exactly two of
    its values (and the column has more), just those two."""
    levels = next(c.get("levels", 0) for c in columns if c["name"] == dimension)
    arguments: Arguments = {"value_column": metric, "group_column": dimension}
    if len(values) == 2 and levels > 2:
        arguments["groups"] = values
        subject = _t(zh, f"Compare {metric}: {values[0]} vs {values[1]}", f"比较{values[0]}与{values[1]}的{metric}")
    else:
        subject = _t(zh, f"Compare {metric} across {dimension}", f"比较不同{dimension}的{metric}")
    tool = "compare_two_groups" if levels == 2 or "groups" in arguments else "compare_groups"
    plan.steps.append(Step(tool, arguments, subject))
    plan.steps.append(Step("plot_bar", {"x_column": dimension, "y_column": metric, "agg": "mean"}, evidence=False))
