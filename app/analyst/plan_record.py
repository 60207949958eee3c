"""The built-in analyst's record_analysis_plan arguments, from its plan."""

from __future__ import annotations

from app.analyst.reading import plan_reading
from app.analyst.steps import Arguments, Plan

# --- the built-in analyst's plan -----------------------------------------------------------------
_TYPE_BY_TOOL = {
    "compare_groups": "comparison",
    "compare_two_groups": "comparison",
    "time_series_trend": "trend",
    "forecast": "forecast",
    "linear_regression": "relationship",
    "correlation_analysis": "relationship",
    "value_counts": "description",
    "describe_columns": "description",
    "proportion_test": "comparison",
    "paired_test": "comparison",
    "group_aggregate": "comparison",
    "clean_data": "data_quality",
    "seasonal_decompose": "trend",
}


_TYPE_ORDER = ("data_quality", "forecast", "trend", "comparison", "relationship", "description")


def plan_arguments(question: str, plan: Plan, zh: bool) -> Arguments:
    """record_analysis_plan arguments for the built-in analyst's plan (steps.Plan)."""
    kinds = {_TYPE_BY_TOOL.get(s.tool) for s in plan.steps if s.task}
    question_type = next((k for k in _TYPE_ORDER if k in kinds), "description")
    reading = plan_reading(plan, zh)
    limitation = "观察数据：不能证明因果关系" if zh else "Observational data: cannot establish cause and effect"
    return {
        "goal": question.strip() or ("描述数据" if zh else "Describe the data"),
        "question_type": question_type,
        "metrics": [plan.metric] if plan.metric else [],
        "dimensions": [plan.dimension] if plan.dimension else [],
        "method_plan": [f"{s.task} ({s.tool})" for s in plan.steps if s.task],
        "limitations": [limitation, *plan.notes],
        "assumptions": reading["assumed"],  # [] : named by the question
        "reading": {k: reading[k] for k in ("key", "read_as", "roles")},  # the page's chips (issue 24 point 4)
    }
