"""Statistics tools (group `stats`): descriptions, group comparisons, correlation and regression.

The implementations live in `stats_tests` (describe, two-group tests), `stats_anova` (the one-way
ANOVA family), `stats_correlation` and `stats_models` (OLS); this module is the registry's entry point.
"""

from __future__ import annotations

from .stats_anova import compare_groups, one_way_anova, welch_anova
from .stats_categorical import chi_square_test, proportion_test
from .stats_correlation import correlation_analysis
from .stats_design import paired_test, two_way_anova
from .stats_distribution import confidence_interval, normality_test, outlier_detection
from .stats_fit import curve_fit
from .stats_logistic import logistic_regression
from .stats_models import linear_regression, ols_fit
from .stats_tests import compare_two_groups, describe_columns

__all__ = [
    "compare_groups",
    "compare_two_groups",
    "correlation_analysis",
    "describe_columns",
    "linear_regression",
    "ols_fit",
    "one_way_anova",
    "welch_anova",
    "chi_square_test",
    "proportion_test",
    "paired_test",
    "two_way_anova",
    "curve_fit",
    "logistic_regression",
    "confidence_interval",
    "normality_test",
    "outlier_detection",
]
