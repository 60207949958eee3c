"""Comparing two or more groups: one-way ANOVA, Welch ANOVA or Kruskal-Wallis, with post-hoc pairs."""

from __future__ import annotations

import math
from typing import Any, Literal, NotRequired, TypedDict

import numpy as np
import pandas as pd
from scipy import stats as sps

from .base import ToolContext, ToolError, ToolResult, tagged_text
from .common import clean_metrics, dropped_note, effect_label, fmt_num, fmt_p, p_sentence, significance_word
from .stats_groups import (
    SMALL_GROUP,
    AssumptionChecks,
    accurate_mean,
    check_assumptions,
    rank_test_reason,
    split_groups,
)


def one_way_anova(parts: dict[str, np.ndarray]) -> dict[str, float]:
    """Classical one-way ANOVA with centred sums of squares (NIST StRD accurate)."""
    allv = np.concatenate(list(parts.values()))
    grand = accurate_mean(allv)
    means = {g: accurate_mean(x) for g, x in parts.items()}
    ss_within = float(sum(np.sum((x - means[g]) ** 2) for g, x in parts.items()))
    ss_between = float(sum(len(x) * (means[g] - grand) ** 2 for g, x in parts.items()))
    k, n = len(parts), len(allv)
    dfb, dfw = k - 1, n - k
    f = (ss_between / dfb) / (ss_within / dfw) if ss_within > 0 else float("inf")
    p = float(sps.f.sf(f, dfb, dfw)) if math.isfinite(f) else 0.0
    return {
        "f_statistic": f,
        "p_value": p,
        "df_between": dfb,
        "df_within": dfw,
        "ss_between": ss_between,
        "ss_within": ss_within,
        "r_squared": ss_between / (ss_between + ss_within),
        "grand_mean": grand,
    }


def welch_anova(parts: dict[str, np.ndarray]) -> dict[str, float]:
    """Welch's heteroscedastic one-way ANOVA."""
    n = np.array([len(x) for x in parts.values()], dtype=float)
    m = np.array([accurate_mean(x) for x in parts.values()])
    v = np.array([x.var(ddof=1) for x in parts.values()])
    w = n / v
    mw = np.sum(w * m) / np.sum(w)
    k = len(n)
    a = np.sum(w * (m - mw) ** 2) / (k - 1)
    lam = np.sum((1 - w / w.sum()) ** 2 / (n - 1))
    f = a / (1 + 2 * (k - 2) / (k**2 - 1) * lam)
    dfw = (k**2 - 1) / (3 * lam)
    return {
        "f_statistic": float(f),
        "p_value": float(sps.f.sf(f, k - 1, dfw)),
        "df_between": k - 1,
        "df_within": float(dfw),
    }


def _auto_method(checks: AssumptionChecks, parts: dict[str, np.ndarray], alpha: float) -> str:
    """What 'auto' runs: ranks for skewed or small non-normal groups, Welch when variances differ, else ANOVA."""
    if checks.wants_rank_test(min(len(x) for x in parts.values())):
        return "kruskal"
    if checks.levene_p == checks.levene_p and checks.levene_p < alpha:
        return "welch_anova"
    return "anova"


def _comparable_groups(
    parts: dict[Any, np.ndarray], group_column: str, ctx: ToolContext
) -> tuple[dict[Any, np.ndarray], list[Any]]:
    """The groups a comparison can test, and those it leaves out: a group of one value has no spread
    to compare, and is left out (and said) while two groups or more remain (one Non-binary respondent
    among a city's 69 stopped the whole comparison). Errors where nothing can be compared."""
    parts = {g: x for g, x in parts.items() if len(x)}
    if len(parts) < 2:
        raise ToolError(
            "wrong_group_count",
            ctx.t(
                f"{group_column!r} has fewer than two groups with data.", f"{group_column!r} 中有数据的分组少于两个。"
            ),
            hint=ctx.t("Choose a column with at least two groups.", "请选择至少有两个分组的列。"),
        )
    if len(parts) > 100:
        raise ToolError(
            "wrong_column_type",
            ctx.t(
                f"{group_column!r} has {len(parts)} groups, too many to compare.",
                f"{group_column!r} 有 {len(parts)} 个分组，太多无法比较。",
            ),
            hint=ctx.t("Use a categorical column with fewer levels.", "请使用水平更少的分类列。"),
        )
    small_groups = [g for g, x in parts.items() if len(x) < 2]
    left_out = small_groups if len(parts) - len(small_groups) >= 2 else []
    parts = {g: x for g, x in parts.items() if g not in left_out}
    if small_groups and not left_out:
        raise ToolError(
            "insufficient_data",
            ctx.t(
                f"Group(s) {small_groups[:10]} have fewer than 2 values.", f"分组 {small_groups[:10]} 的数据少于 2 个。"
            ),
            hint=ctx.t("Filter those groups out or merge them.", "请过滤或合并这些分组。"),
        )
    return parts, left_out


def compare_groups(
    data: pd.DataFrame,
    value_column: str,
    group_column: str,
    method: Literal["auto", "anova", "welch_anova", "kruskal"] = "auto",
    alpha: float = 0.05,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Test whether a numeric value differs across two or more groups (one-way ANOVA, Welch ANOVA or Kruskal-Wallis), with Tukey post-hoc comparisons when significant.

    Args:
        value_column: The numeric column to compare (e.g. sales).
        group_column: The categorical column defining the groups (e.g. region).
        method: auto checks normality and equal variances and picks anova, welch_anova or kruskal; or force one.
        alpha: Significance level, usually 0.05.
    """
    ctx = ctx or ToolContext()
    parts, dropped = split_groups(data, value_column, group_column, ctx)
    parts, left_out = _comparable_groups(parts, group_column, ctx)
    parts, offset, precision_note = guard_precision(parts, ctx)
    checks = check_assumptions(parts, alpha)
    levene_p, non_normal = checks.levene_p, checks.non_normal
    chosen = _auto_method(checks, parts, alpha) if method == "auto" else method
    classic = one_way_anova(parts)
    n = sum(len(x) for x in parts.values())
    k = len(parts)
    metrics: dict = {
        "n": n,
        "k_groups": k,
        "ss_between": classic["ss_between"],
        "ss_within": classic["ss_within"],
        "r_squared": classic["r_squared"],
        "effect_size": classic["r_squared"],
        "effect_size_name": "eta_squared",
        "levene_p": levene_p,
        "alpha": alpha,
        "method": chosen,
    }
    for g, x in parts.items():
        metrics[f"mean.{g}"] = accurate_mean(x) + offset
        metrics[f"n.{g}"] = len(x)
    checks.add_metrics(metrics)
    if chosen == "kruskal":
        h, p = sps.kruskal(*parts.values())
        eps2 = (h - k + 1) / (n - k)
        metrics.update(
            statistic=float(h),
            p_value=float(p),
            df_between=k - 1,
            effect_size=float(eps2),
            effect_size_name="epsilon_squared_h",
        )
        stat_line = f"H = {fmt_num(h, 5)}, df = {k - 1}"
        method_text = ctx.t(
            "Kruskal-Wallis rank test (does not assume normality).", "Kruskal-Wallis 秩检验（不要求正态）。"
        )
    else:
        if chosen == "welch_anova" and any(np.ptp(x) == 0 for x in parts.values()):
            chosen = metrics["method"] = "anova"  # Welch weights are undefined for a constant group
        res = classic if chosen == "anova" else welch_anova(parts)
        metrics.update(
            f_statistic=res["f_statistic"],
            statistic=res["f_statistic"],
            p_value=res["p_value"],
            df_between=res["df_between"],
            df_within=res["df_within"],
        )
        stat_line = f"F({res['df_between']}, {fmt_num(res['df_within'], 5)}) = {fmt_num(res['f_statistic'], 6)}"
        method_text = (
            ctx.t("One-way ANOVA (centred sums of squares).", "单因素方差分析（中心化平方和）。")
            if chosen == "anova"
            else ctx.t(
                "Welch one-way ANOVA (does not assume equal variances).", "Welch 单因素方差分析（不要求方差相等）。"
            )
        )
    p = metrics["p_value"]
    posthoc, pair_lines = _posthoc(parts, chosen, alpha, ctx) if p < alpha and k <= 15 else ([], [])
    assumptions = checks.lines(ctx, ctx.t("Normality not testable.", "无法检验正态性。"))
    ranks = chosen == "kruskal"  # a rank test compares typical values (medians), not averages
    limitations = [
        ctx.t(
            "Shows whether values tend to be higher in some groups, not why.",
            "只说明某些组的数值是否普遍更高，不说明原因。",
        )
        if ranks
        else ctx.t("Shows whether group averages differ, not why.", "只说明各组均值是否不同，不说明原因。")
    ]
    if method == "auto" and chosen == "kruskal":
        assumptions.append(rank_test_reason(checks, ctx))
    if precision_note:
        assumptions.append(precision_note)
        limitations.append(
            ctx.t(
                "The values have more significant digits than float64 (and spreadsheets such as Excel) store "
                "exactly; after a spreadsheet only about 4 digits of F and R² are reliable.",
                "数值的有效数字多于 float64（以及 Excel 等电子表格）能精确存储的位数；经过电子表格后 F 与 R² 只有约 4 位可靠。",
            )
        )
        metrics["precision_warning"] = 1
        metrics["offset"] = offset
    if left_out:
        metrics["left_out_groups"] = len(left_out)
        limitations.append(
            ctx.t(
                f"Left out of the test: {', '.join(map(str, left_out[:10]))} (one value only).",
                f"未纳入检验：{'、'.join(map(str, left_out[:10]))}（只有 1 个值）。",
            )
        )
    if chosen == "anova" and levene_p == levene_p and levene_p < alpha:
        limitations.append(
            ctx.t(
                "Variances differ between groups; Welch ANOVA would be safer.", "各组方差不等，Welch 方差分析更稳妥。"
            )
        )
    if chosen != "kruskal" and non_normal and min(len(x) for x in parts.values()) < SMALL_GROUP:
        limitations.append(
            ctx.t(
                f"Groups {non_normal} are not normal with small samples; consider kruskal.",
                f"分组 {non_normal} 非正态且样本小，可考虑 kruskal。",
            )
        )
    means = {g: metrics[f"mean.{g}"] for g in parts}
    medians = {g: float(np.median(x)) + offset for g, x in parts.items()}
    if ranks:
        metrics.update({f"median.{g}": m for g, m in medians.items()})
    centre = medians if ranks else means
    top, bottom = max(centre, key=centre.__getitem__), min(centre, key=centre.__getitem__)
    profile = "\n".join(
        f"{g}: n={len(x)}, mean {fmt_num(means[g])}, sd {fmt_num(x.std(ddof=1))}" for g, x in parts.items()
    )
    if dropped:
        profile += "\n" + dropped_note(dropped, ctx)
    # The effect size printed is the one reported in the metrics: epsilon² beside the rank test
    # (same conventional cuts as eta²), eta² beside an ANOVA.
    eff = metrics["effect_size"]
    size = f"{'ε²' if chosen == 'kruskal' else 'eta²'} = {fmt_num(eff, 3)}"
    conclusion = ctx.t(
        f"{stat_line}, {fmt_p(p)} — {significance_word(p, alpha, ctx)}; {size} ({effect_label(eff, 'eta2', ctx)}).",
        f"{stat_line}，{fmt_p(p)} —— {significance_word(p, alpha, ctx)}；{size}（{effect_label(eff, 'eta2', ctx)}）。",
    )
    if ranks:
        insights = [
            ctx.t(
                f"Highest median: {top} ({fmt_num(medians[top])}); lowest: {bottom} ({fmt_num(medians[bottom])}).",
                f"中位数最高：{top}（{fmt_num(medians[top])}）；最低：{bottom}（{fmt_num(medians[bottom])}）。",
            ),
            ctx.t(
                f"The grouping accounts for about {max(eff, 0.0) * 100:.1f}% of the variation in the ranks of {value_column} (ε²).",
                f"分组约解释了 {value_column} 秩次 {max(eff, 0.0) * 100:.1f}% 的变化（ε²）。",
            ),
        ] + pair_lines
        interpretation = ctx.t(
            f"{value_column} tends to differ between groups of {group_column} (highest median {top}, lowest {bottom}); "
            if p < alpha
            else f"{value_column} looks similar across groups of {group_column}; ",
            f"各 {group_column} 组的 {value_column} 普遍高低不同（中位数 {top} 最高，{bottom} 最低）；"
            if p < alpha
            else f"各 {group_column} 组的 {value_column} 看起来差不多；",
        ) + p_sentence(p, alpha, ctx)
    else:
        insights = [
            ctx.t(
                f"Highest average: {top} ({fmt_num(means[top])}); lowest: {bottom} ({fmt_num(means[bottom])}).",
                f"均值最高：{top}（{fmt_num(means[top])}）；最低：{bottom}（{fmt_num(means[bottom])}）。",
            ),
            ctx.t(
                f"The grouping explains {classic['r_squared'] * 100:.1f}% of the variation in {value_column}.",
                f"分组解释了 {value_column} {classic['r_squared'] * 100:.1f}% 的变化。",
            ),
        ] + pair_lines
        interpretation = ctx.t(
            f"Average {value_column} differs between groups of {group_column} (highest {top}, lowest {bottom}); "
            if p < alpha
            else f"Average {value_column} looks similar across groups of {group_column}; ",
            f"各 {group_column} 组的平均 {value_column} 存在差异（{top} 最高，{bottom} 最低）；"
            if p < alpha
            else f"各 {group_column} 组的平均 {value_column} 看起来差不多；",
        ) + p_sentence(p, alpha, ctx)
    if dropped:
        interpretation += " " + dropped_note(dropped, ctx)
    text = tagged_text(
        data_profile=profile,
        method=method_text,
        assumptions=assumptions,
        insights=insights,
        conclusion=conclusion,
        interpretation=interpretation,
    )
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=interpretation,
        method=method_text,
        sample_size=n,
        limitations=limitations,
        table=pd.DataFrame(posthoc) if posthoc else None,
        payload={
            "posthoc": posthoc,
            "dropped_rows": dropped,
            "effect_size": eff,
            "significant": p < alpha,
            "left_out_groups": [str(g) for g in left_out],  # one value only: not in the test (the answer says so)
        },
    )


_MAGNITUDE_RATIO = 1e8  # |mean| / sd above this: the data's digits exceed what float64 keeps for the spread
_DECIMAL_MAX_ROWS = 200_000


def guard_precision(parts: dict[str, np.ndarray], ctx: ToolContext) -> tuple[dict[str, np.ndarray], float, str]:
    """Shift data whose magnitude dwarfs its spread (NIST SmLs07-09: 1000000000000.4 ...) to deviations
    from a round offset, and say so.

    float64 holds ~15.9 significant digits; 1000000000000.4 already uses 14 of them, so the deviations
    that ANOVA works on keep only ~3 digits. The shortest decimal that round-trips a float (its repr) is
    the number as it was written in the file; subtracting the offset in decimal arithmetic recovers
    the deviations exactly when the values were written with <= 15 significant digits, and equals plain
    float subtraction otherwise (so it never loses anything). Above `_DECIMAL_MAX_ROWS` rows the
    (exact, Sterbenz) float subtraction is used."""
    allv = np.concatenate(list(parts.values()))
    sd = float(np.std(allv))
    centre = float(accurate_mean(allv))
    if sd == 0 or abs(centre) / sd <= _MAGNITUDE_RATIO:
        return parts, 0.0, ""
    offset = float(np.round(np.median(allv)))
    if len(allv) <= _DECIMAL_MAX_ROWS:
        from decimal import Decimal

        base = Decimal(repr(offset))
        shifted = {g: np.array([float(Decimal(repr(float(v))) - base) for v in x]) for g, x in parts.items()}
        how = ctx.t(
            "deviations recovered from each value's shortest decimal form", "偏差按每个值的最短十进制形式精确还原"
        )
    else:
        shifted = {g: x - offset for g, x in parts.items()}
        how = ctx.t("deviations computed in float64", "偏差在 float64 中计算")
    digits = int(math.log10(abs(centre) / sd)) + 1
    note = ctx.t(
        f"The values are huge relative to their spread (|mean| / sd = {fmt_num(abs(centre) / sd, 3)}: about {digits} constant "
        f"leading digits), beyond float64's precision for the differences; the analysis used deviations from "
        f"{fmt_num(offset, 16)} ({how}).",
        f"数值相对其波动极大（|均值| / 标准差 = {fmt_num(abs(centre) / sd, 3)}：约 {digits} 位相同的前导数字），"
        f"超出 float64 区分差异的精度；分析使用相对 {fmt_num(offset, 16)} 的偏差（{how}）。",
    )
    return shifted, offset, note


class PostHocPair(TypedDict):
    group_a: str
    group_b: str
    difference: float  # group_a - group_b: of the medians after Kruskal-Wallis, else of the means
    p_adj: float
    ci_low: NotRequired[float]  # Tukey HSD's family-wise interval of the difference
    ci_high: NotRequired[float]
    test: str


def _posthoc(
    parts: dict[str, np.ndarray], chosen: str, alpha: float, ctx: ToolContext
) -> tuple[list[PostHocPair], list[str]]:
    """Tukey HSD for the ANOVAs, Holm-adjusted Mann-Whitney pairs after Kruskal-Wallis."""
    names = list(parts)
    pairs: list[PostHocPair] = []
    if chosen == "kruskal":
        raw = []
        for i in range(len(names)):
            for j in range(i + 1, len(names)):
                raw.append((names[i], names[j], float(sps.mannwhitneyu(parts[names[i]], parts[names[j]]).pvalue)))
        order = np.argsort([r[2] for r in raw])
        adjusted, running = [0.0] * len(raw), 0.0
        for rank, idx in enumerate(order):
            running = max(running, min(1.0, (len(raw) - rank) * raw[idx][2]))
            adjusted[idx] = running
        for (a, b, _), padj in zip(raw, adjusted):
            pairs.append(
                {
                    "group_a": a,
                    "group_b": b,
                    "difference": float(np.median(parts[a]) - np.median(parts[b])),
                    "p_adj": padj,
                    "test": "mann-whitney (holm)",
                }
            )
    else:
        from statsmodels.stats.multicomp import pairwise_tukeyhsd

        endog = np.concatenate([parts[g] for g in names])
        codes = np.repeat(np.arange(len(names)), [len(parts[g]) for g in names])
        res = pairwise_tukeyhsd(endog, codes, alpha=alpha)  # the intervals are (1 - alpha) family-wise
        for row, (i, j) in enumerate((i, j) for i in range(len(names)) for j in range(i + 1, len(names))):
            # statsmodels reports mean(j) - mean(i); flip to group_a - group_b
            pairs.append(
                {
                    "group_a": names[i],
                    "group_b": names[j],
                    "difference": float(-res.meandiffs[row]),
                    "p_adj": float(res.pvalues[row]),
                    "ci_low": float(-res.confint[row, 1]),
                    "ci_high": float(-res.confint[row, 0]),
                    "test": "tukey hsd",
                }
            )
    # The rank test's pairs differ in medians, Tukey's in means: say which.
    what_en, what_zh = ("median difference", "中位数之差") if chosen == "kruskal" else ("mean difference", "均值之差")
    lines = [
        ctx.t(
            f"{q['group_a']} vs {q['group_b']}: {what_en} {fmt_num(q['difference'])}, adjusted {fmt_p(q['p_adj'])}"
            f"{' (significant)' if q['p_adj'] < alpha else ''}",
            f"{q['group_a']} 对比 {q['group_b']}：{what_zh} {fmt_num(q['difference'])}，校正后 {fmt_p(q['p_adj'])}"
            f"{'（显著）' if q['p_adj'] < alpha else ''}",
        )
        for q in pairs[:15]
    ]
    return pairs, lines
