"""Statistics tools (group `stats`): descriptions, group comparisons, correlation and regression.

The implementations live in `stats_tests` (describe, t-tests, ANOVA family) and `stats_models`
(correlation, OLS); this module is the registry's entry point.
"""

from __future__ import annotations

from .stats_models import correlation_analysis, linear_regression, ols_fit
from .stats_tests import compare_groups, compare_two_groups, describe_columns, one_way_anova, welch_anova

__all__ = ["compare_groups", "compare_two_groups", "correlation_analysis", "describe_columns", "linear_regression",
           "ols_fit", "one_way_anova", "welch_anova"]
