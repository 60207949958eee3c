"""What the group-comparison tests share: splitting a value column by group, the assumption checks
(Shapiro-Wilk per group, Levene across groups) and how those checks are reported."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pandas as pd
from scipy import stats as sps

from .base import ToolContext, ToolError
from .common import column_kind, fmt_p, label, require_numeric, two_pass_mean

SMALL_GROUP = 30  # below this per-group size, non-normality switches to a rank test
# |adjusted skewness| at or above this is "highly skewed" (Bulmer 1979): the mean is pulled by a long tail,
# so even large groups are compared by a rank test (the mean of such a group is not its typical value)
HIGH_SKEW = 1.0
_SKEW_MIN_N = 8  # fewer values give too noisy a skewness to act on
_SHAPIRO_MAX = 5000


def split_groups(
    data: pd.DataFrame, value_column: str, group_column: str, ctx: ToolContext, wanted: list[str] | None = None
) -> tuple[dict[str, np.ndarray], int]:
    """Numeric values per group label (missing dropped) and how many rows were dropped."""
    values = require_numeric(data, value_column, ctx)
    groups = data[group_column]
    if column_kind(groups) in ("number",) and groups.nunique() > 20:
        raise ToolError(
            "wrong_column_type",
            ctx.t(
                f"{group_column!r} is a continuous number, not a grouping column.",
                f"{group_column!r} 是连续数值，不是分组列。",
            ),
            hint=ctx.t(
                "Use a categorical column or correlation_analysis.", "请使用分类列，或改用 correlation_analysis。"
            ),
            column=group_column,
        )
    keep = values.notna() & groups.notna()
    dropped = int((~keep).sum())
    labels = groups[keep].map({v: label(v) for v in groups[keep].unique()})
    vals = values[keep]
    out: dict[str, np.ndarray] = {}
    for name in sorted(labels.unique(), key=_sort_key):
        out[name] = vals[labels == name].to_numpy(dtype=float)
    if wanted:
        out = _only_wanted(out, wanted, group_column, ctx)
    return out, dropped


PartT = TypeVar("PartT")  # what a group's label leads to (its values; None where only the labels matter)


def _only_wanted(parts: dict[str, PartT], wanted: list[str], group_column: str, ctx: ToolContext) -> dict[str, PartT]:
    wanted = [label(w) for w in wanted]
    missing = [w for w in wanted if w not in parts]
    if missing:
        from .registry import suggest

        raise ToolError(
            "value_not_found",
            ctx.t(f"Group(s) {missing} do not occur in {group_column!r}.", f"{group_column!r} 中没有分组 {missing}。"),
            hint=ctx.t(f"Groups present: {list(parts)[:20]}", f"现有分组：{list(parts)[:20]}"),
            did_you_mean=suggest(missing[0], list(parts)),
        )
    return {w: parts[w] for w in wanted}


def _sort_key(v: str):
    try:
        return (0, float(v), v)
    except ValueError:
        return (1, 0.0, v)


def accurate_mean(x: np.ndarray) -> float:
    return float(two_pass_mean(x))


@dataclass
class AssumptionChecks:
    normal_p: dict[str, float]  # Shapiro-Wilk p per testable group
    levene_p: float  # NaN when not testable
    non_normal: list[str]  # groups whose normality is rejected at alpha
    skewed: list[str]  # groups whose |adjusted skewness| is at least HIGH_SKEW

    def wants_rank_test(self, smallest_group: int) -> bool:
        """Whether 'auto' should compare ranks: a small non-normal group, or any clearly skewed group."""
        return bool(self.non_normal and smallest_group < SMALL_GROUP) or bool(self.skewed)

    def add_metrics(self, metrics: dict) -> None:
        for g, p in self.normal_p.items():
            metrics[f"shapiro_p.{g}"] = p

    def lines(self, ctx: ToolContext, untestable: str) -> list[str]:
        """The assumptions as reported; `untestable` is said when no group could be tested for normality."""
        normality = (
            ctx.t(
                "Normality (Shapiro-Wilk): " + ", ".join(f"{g} {fmt_p(p)}" for g, p in self.normal_p.items()),
                "正态性（Shapiro-Wilk）：" + "，".join(f"{g} {fmt_p(p)}" for g, p in self.normal_p.items()),
            )
            if self.normal_p
            else untestable
        )
        return [
            normality,
            ctx.t(
                f"Equal variances (Levene): {fmt_p(self.levene_p)}.", f"方差齐性（Levene）：{fmt_p(self.levene_p)}。"
            ),
        ]


def rank_test_reason(checks: AssumptionChecks, ctx: ToolContext) -> str:
    """Why 'auto' compared ranks: the skewed groups (their mean is not a typical value) or small non-normal ones."""
    if checks.skewed:
        return ctx.t(
            f"Group(s) {checks.skewed} are clearly skewed (|skewness| ≥ {HIGH_SKEW:g}): a few extreme values pull "
            "the mean, so a rank test was used.",
            f"分组 {checks.skewed} 明显偏斜（|偏度| ≥ {HIGH_SKEW:g}）：少数极端值拉动均值，因此改用秩检验。",
        )
    return ctx.t(
        f"Group(s) {checks.non_normal} are not normal and samples are small, so a rank test was used.",
        f"分组 {checks.non_normal} 不服从正态且样本较小，因此改用秩检验。",
    )


def check_assumptions(parts: dict[str, np.ndarray], alpha: float) -> AssumptionChecks:
    normal_p = _normality(parts)
    return AssumptionChecks(
        normal_p, _levene(parts), [g for g, p in normal_p.items() if p < alpha], _skewed_groups(parts)
    )


def _skewed_groups(groups: dict[str, np.ndarray]) -> list[str]:
    out = []
    for name, x in groups.items():
        if len(x) >= _SKEW_MIN_N and np.ptp(x) > 0:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                skew = float(sps.skew(x, bias=False))
            if abs(skew) >= HIGH_SKEW:
                out.append(name)
    return out


def _normality(groups: dict[str, np.ndarray]) -> dict[str, float]:
    out = {}
    for name, x in groups.items():
        if 3 <= len(x) <= _SHAPIRO_MAX and np.ptp(x) > 0:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out[name] = float(sps.shapiro(x).pvalue)
    return out


def _levene(groups: dict[str, np.ndarray]) -> float:
    arrays = [x for x in groups.values() if len(x) >= 2]
    if len(arrays) < 2 or all(np.ptp(x) == 0 for x in arrays):
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(sps.levene(*arrays, center="median").pvalue)
