"""Descriptive statistics and the two-group test (t-tests, Mann-Whitney U).

The k-group tests (the one-way ANOVA family) are in `stats_anova`."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats as sps

from .base import ToolContext, ToolError, ToolResult, tagged_text
from .common import (
    check_n,
    clean_metrics,
    dropped_note,
    effect_label,
    fmt_cell,
    fmt_num,
    fmt_p,
    numeric_columns,
    p_sentence,
    require_numeric,
    significance_word,
)
from .stats_groups import SMALL_GROUP, accurate_mean, check_assumptions, rank_test_reason, split_groups

# ---------------------------------------------------------------- describe

MAX_TEXT_COLUMNS = 20  # text columns summarised when describe_columns is asked for everything
SKEW_DEFINITIONS = {  # which skewness describe_columns reports, by ddof (the same convention as the std)
    1: (
        "adjusted Fisher-Pearson G1 (bias-corrected, as Excel SKEW and SPSS)",
        "校正的 Fisher-Pearson 偏度 G1（与 Excel SKEW、SPSS 相同）",
    ),
    0: (
        "population Fisher-Pearson g1 (third standardised moment, as Excel SKEW.P)",
        "总体 Fisher-Pearson 偏度 g1（三阶标准矩，与 Excel SKEW.P 相同）",
    ),
}


def describe_columns(
    data: pd.DataFrame, columns: list[str] | None = None, ddof: Literal[0, 1] = 1, ctx: ToolContext | None = None
) -> ToolResult:
    """Summary statistics of numeric columns: count, missing, mean, std, min, quartiles, max and skewness; text columns get their count, missing values and most common value.

    Args:
        columns: Columns to describe; omit to describe every numeric column (and count the missing values of the others).
        ddof: 1 = sample std and adjusted skewness G1 (default); 0 = population std and skewness g1.
    """
    ctx = ctx or ToolContext()
    ddof = 0 if int(ddof) == 0 else 1
    numeric = set(numeric_columns(data))
    chosen = list(dict.fromkeys(columns)) if columns else [c for c in data.columns if c in numeric]
    if not chosen:
        raise ToolError(
            "wrong_column_type",
            ctx.t("The dataset has no numeric columns.", "数据集中没有数值列。"),
            hint=ctx.t("Use value_counts for categorical columns.", "分类列请用 value_counts。"),
        )
    others = [c for c in chosen if c not in numeric and not _mostly_numbers(data[c])]
    text_columns = others if columns else [c for c in data.columns if c not in numeric][:MAX_TEXT_COLUMNS]
    chosen = [c for c in chosen if c not in others]
    rows, metrics, insights = [], {}, []
    for col in chosen:
        values = require_numeric(data, col, ctx)
        clean = values.dropna().to_numpy(dtype=float)
        row = {"column": col, "n": len(clean), "missing": int(values.isna().sum())}
        skew = float("nan")
        if len(clean):
            q1, med, q3 = np.percentile(clean, [25, 50, 75])
            skew = float(sps.skew(clean, bias=ddof == 0)) if len(clean) > 2 and clean.std() > 0 else float("nan")
            row.update(
                mean=clean.mean(),
                std=clean.std(ddof=ddof) if len(clean) > ddof else float("nan"),
                min=clean.min(),
                q1=q1,
                median=med,
                q3=q3,
                max=clean.max(),
                skew=skew,
            )
        rows.append(row)
        for key, value in row.items():
            if key != "column":
                metrics[f"{col}.{key}"] = value
        if skew == skew and abs(skew) > 1:
            insights.append(
                ctx.t(
                    f"{col} is strongly skewed (skew {fmt_num(skew, 3)}); the median ({fmt_num(row['median'])}) describes a typical value better than the mean ({fmt_num(row['mean'])}).",
                    f"{col} 分布明显偏斜（偏度 {fmt_num(skew, 3)}），中位数（{fmt_num(row['median'])}）比均值（{fmt_num(row['mean'])}）更能代表典型值。",
                )
            )
        if row["missing"]:
            insights.append(
                ctx.t(f"{col} has {row['missing']} missing values.", f"{col} 有 {row['missing']} 个缺失值。")
            )
    texts = [_text_summary(data[c], c, metrics) for c in text_columns]
    table = pd.DataFrame(rows)
    # six significant figures (fmt_cell): a mean of 512.3292 reads 512.329, which a question asking for
    # two decimals can be answered from
    header = f"{'column':<20} {'n':>7} {'miss':>6} {'mean':>12} {'std':>12} {'min':>12} {'median':>12} {'max':>12} {'skew':>7}"
    lines = (
        [header]
        + [
            f"{str(r['column'])[:20]:<20} {r['n']:>7} {r['missing']:>6} {fmt_cell(r.get('mean')):>12} {fmt_cell(r.get('std')):>12} "
            f"{fmt_cell(r.get('min')):>12} {fmt_cell(r.get('median')):>12} {fmt_cell(r.get('max')):>12} {fmt_num(r.get('skew'), 3):>7}"
            for r in rows
        ]
        if rows
        else []
    )
    if texts:
        lines += [
            ctx.t("text columns (n, missing, distinct, most common):", "文本列（n、缺失、不同值、最常见）："),
            *texts,
        ]
    n = len(data)
    metrics["n"] = n
    metrics["ddof"] = ddof
    skew_name = SKEW_DEFINITIONS[ddof][1 if ctx.zh else 0]
    metrics["skew_definition"] = SKEW_DEFINITIONS[ddof][0]
    interpretation = _describe_reading(rows, texts, text_columns, metrics, ctx)
    method = ctx.t(
        f"Descriptive statistics ({'sample' if ddof else 'population'} std, ddof={ddof}; skewness: {skew_name}); "
        "missing values ignored per column.",
        f"描述统计（{'样本' if ddof else '总体'}标准差 ddof={ddof}；偏度：{skew_name}）；各列分别忽略缺失值。",
    )
    text = tagged_text(data_profile="\n".join(lines), method=method, insights=insights, interpretation=interpretation)
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=interpretation,
        method="descriptive statistics",
        sample_size=n,
        table=table,
        limitations=[ctx.t("Descriptions only; no test of differences.", "仅为描述，不检验差异。")],
    )


def _mostly_numbers(series: pd.Series) -> bool:
    """A column stored as text that holds numbers ("1,200") is described as numbers."""
    present = series.dropna()
    return (
        bool(len(present))
        and pd.to_numeric(present.astype(str).str.replace(",", ""), errors="coerce").notna().mean() >= 0.9
    )


def _text_summary(series: pd.Series, column: str, metrics: dict) -> str:
    """One line for a text column: count, missing (blank text counts as missing), distinct, most common."""
    text = series.astype("string").str.strip()
    missing = int((text.isna() | (text == "")).sum())
    present = text[text.notna() & (text != "")]
    top = present.value_counts().head(1)
    metrics.update(
        {f"{column}.n": int(len(present)), f"{column}.missing": missing, f"{column}.distinct": int(present.nunique())}
    )
    common = f", {top.index[0]!s:.30} ×{int(top.iloc[0])}" if len(top) else ""
    return f"- {column}: {len(present)}, {missing} missing, {present.nunique()} distinct{common}"


def _describe_reading(rows: list[dict], texts: list[str], text_columns: list, metrics: dict, ctx: ToolContext) -> str:
    """Lead with the typical value and the range a shop owner recognises; mention the others by count."""
    if not rows:
        first = text_columns[0]
        return ctx.t(
            f"{first} has {metrics[f'{first}.missing']} missing values and {metrics[f'{first}.distinct']} distinct values.",
            f"{first} 有 {metrics[f'{first}.missing']} 个缺失值、{metrics[f'{first}.distinct']} 个不同取值。",
        )
    first = rows[0]
    reading = ctx.t(
        f"{first['column']} averages {fmt_num(first.get('mean'))}; the typical (median) value is "
        f"{fmt_num(first.get('median'))}, ranging from {fmt_num(first.get('min'))} to {fmt_num(first.get('max'))}.",
        f"{first['column']} 的平均值为 {fmt_num(first.get('mean'))}，中位数（典型值）为 {fmt_num(first.get('median'))}，"
        f"范围从 {fmt_num(first.get('min'))} 到 {fmt_num(first.get('max'))}。",
    )
    more = len(rows) - 1 + len(texts)
    if more:
        reading += ctx.t(f" ({more} more column(s) in the table.)", f"（表中另有 {more} 列。）")
    return reading


# ---------------------------------------------------------------- two groups


def size_insight(higher: str, significant: bool, effect: float, kind: str, ctx: ToolContext) -> str:
    """What the difference means, worded by its effect size (Cohen's conventions, `effect_label`),
    not by the p-value alone: with many rows a negligible difference is significant too."""
    size = effect_label(effect, kind, ctx)
    if not significant:
        return ctx.t(
            f"{higher} has the higher average, but the difference is within what chance produces.",
            f"{higher} 组平均值更高，但这一差异在偶然波动范围内。",
        )
    if size in (ctx.t("negligible", "可忽略"), ctx.t("small", "小")):
        return ctx.t(
            f"{higher} has the higher average; the difference is unlikely to be chance, but its effect size "
            f"is {size}: judge whether a gap this size matters in practice before acting on it.",
            f"{higher} 组平均值更高；差异不太可能是偶然，但效应量{size}：先判断这么大的差距在实际中是否重要，再据此行动。",
        )
    return ctx.t(
        f"{higher} has the higher average; the difference is unlikely to be chance and its effect size is {size}.",
        f"{higher} 组平均值更高；差异不太可能是偶然，效应量{size}。",
    )


def compare_two_groups(
    data: pd.DataFrame,
    value_column: str,
    group_column: str,
    method: Literal["auto", "welch", "student", "mannwhitney"] = "auto",
    alpha: float = 0.05,
    groups: list[str] | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Test whether a numeric value differs between two groups (t-test or Mann-Whitney U, chosen by checking assumptions), with effect size and confidence interval.

    Args:
        value_column: The numeric column to compare (e.g. revenue).
        group_column: The column that splits rows into exactly two groups (e.g. A/B variant).
        method: auto checks normality (Shapiro) and equal variances (Levene) and picks Welch t or Mann-Whitney; or force welch, student or mannwhitney.
        alpha: Significance level, usually 0.05.
        groups: The two group values to compare when the column has more than two.
    """
    ctx = ctx or ToolContext()
    parts, dropped = split_groups(data, value_column, group_column, ctx, groups)
    if len(parts) != 2:
        raise ToolError(
            "wrong_group_count",
            ctx.t(
                f"{group_column!r} has {len(parts)} groups; this test needs exactly two.",
                f"{group_column!r} 有 {len(parts)} 个分组，此检验需要恰好两个。",
            ),
            hint=ctx.t(
                f"Pass groups=[two of {list(parts)[:10]}] or use compare_groups.",
                f"请用 groups 参数指定其中两个（{list(parts)[:10]}），或改用 compare_groups。",
            ),
            groups=list(parts)[:50],
        )
    (ga, a), (gb, b) = parts.items()
    check_n(min(len(a), len(b)), 2, ctx.t("each group", "每个分组"), ctx)
    checks = check_assumptions(parts, alpha)
    levene_p, non_normal = checks.levene_p, checks.non_normal
    chosen = method
    if method == "auto":
        chosen = "mannwhitney" if checks.wants_rank_test(min(len(a), len(b))) else "welch"
    na, nb = len(a), len(b)
    ma, mb = accurate_mean(a), accurate_mean(b)
    va, vb = a.var(ddof=1), b.var(ddof=1)
    diff = ma - mb
    pooled_sd = math.sqrt(((na - 1) * va + (nb - 1) * vb) / (na + nb - 2))
    cohen_d = diff / pooled_sd if pooled_sd > 0 else float("nan")
    hedges_g = cohen_d * (1 - 3 / (4 * (na + nb) - 9))
    df: float
    if chosen == "student":
        df = na + nb - 2
        se = pooled_sd * math.sqrt(1 / na + 1 / nb)
    else:
        se = math.sqrt(va / na + vb / nb)
        df = (
            (va / na + vb / nb) ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
            if se > 0
            else float("nan")
        )
    tcrit = sps.t.ppf(1 - 0.025, df) if df == df else float("nan")
    ci_low, ci_high = diff - tcrit * se, diff + tcrit * se
    metrics: dict = {
        "n": na + nb,
        f"n.{ga}": na,
        f"n.{gb}": nb,
        f"mean.{ga}": ma,
        f"mean.{gb}": mb,
        f"median.{ga}": float(np.median(a)),
        f"median.{gb}": float(np.median(b)),
        f"std.{ga}": math.sqrt(va),
        f"std.{gb}": math.sqrt(vb),
        "mean_difference": diff,
        "ci_low": ci_low,
        "ci_high": ci_high,
        "levene_p": levene_p,
        "alpha": alpha,
    }
    checks.add_metrics(metrics)
    if chosen == "mannwhitney":
        res = sps.mannwhitneyu(a, b, alternative="two-sided")
        stat, p = float(res.statistic), float(res.pvalue)
        effect = 2 * stat / (na * nb) - 1  # rank-biserial, > 0 when the first group tends to be larger
        metrics.update(
            statistic=stat, p_value=p, effect_size=effect, effect_size_name="rank_biserial", method="mannwhitney"
        )
        effect_text = ctx.t(
            f"rank-biserial r = {fmt_num(effect, 3)} ({effect_label(effect, 'r', ctx)})",
            f"秩二列相关 r = {fmt_num(effect, 3)}（{effect_label(effect, 'r', ctx)}）",
        )
        method_text = ctx.t(
            "Mann-Whitney U test (two-sided), a rank test that does not assume normality.",
            "Mann-Whitney U 检验（双侧），不要求正态分布的秩检验。",
        )
    else:
        if se == 0:
            raise ToolError(
                "insufficient_data",
                ctx.t("Both groups have no spread; a t-test is undefined.", "两组数据都没有波动，无法做 t 检验。"),
                hint=ctx.t("Check the value column.", "请检查数值列。"),
            )
        stat = diff / se
        p = float(2 * sps.t.sf(abs(stat), df))
        metrics.update(
            statistic=stat,
            p_value=p,
            df=df,
            effect_size=cohen_d,
            effect_size_name="cohen_d",
            hedges_g=hedges_g,
            method=chosen,
        )
        effect_text = ctx.t(
            f"Cohen's d = {fmt_num(cohen_d, 3)} ({effect_label(cohen_d, 'd', ctx)}), Hedges' g = {fmt_num(hedges_g, 3)}",
            f"Cohen's d = {fmt_num(cohen_d, 3)}（{effect_label(cohen_d, 'd', ctx)}），Hedges' g = {fmt_num(hedges_g, 3)}",
        )
        method_text = (
            ctx.t(
                "Welch two-sample t-test (does not assume equal variances).", "Welch 双样本 t 检验（不要求方差相等）。"
            )
            if chosen == "welch"
            else ctx.t(
                "Student two-sample t-test (assumes equal variances).", "Student 双样本 t 检验（假设方差相等）。"
            )
        )
    assumptions = checks.lines(ctx, ctx.t("Normality not testable (too few or constant values).", "无法检验正态性。"))
    limitations: list[str] = []
    if method == "auto" and chosen == "mannwhitney":
        assumptions.append(rank_test_reason(checks, ctx))
    elif non_normal:
        msg = ctx.t(
            f"Group(s) {non_normal} deviate from normality; with {min(na, nb)}+ rows per group the t-test is still reasonable.",
            f"分组 {non_normal} 偏离正态；每组至少 {min(na, nb)} 行，t 检验仍大致可靠。",
        )
        (assumptions if chosen != "student" and min(na, nb) >= SMALL_GROUP else limitations).append(msg)
    if chosen == "student" and levene_p == levene_p and levene_p < alpha:
        limitations.append(
            ctx.t(
                "Variances differ (Levene) but the Student test assumes they are equal; Welch would be safer.",
                "方差不等（Levene），但 Student 检验假设方差相等；Welch 检验更稳妥。",
            )
        )
    if min(na, nb) < 10:
        limitations.append(
            ctx.t(
                "Small groups: the test has little power to detect modest differences.",
                "分组样本量小，检验力较弱，难以发现较小差异。",
            )
        )
    limitations.append(ctx.t("Shows whether the groups differ, not why.", "只说明两组是否不同，不说明原因。"))
    higher = ga if diff > 0 else gb
    sig = p < alpha
    interpretation = ctx.t(
        f"{value_column} averages {fmt_num(ma)} for {ga} and {fmt_num(mb)} for {gb}: {higher} is {fmt_num(abs(diff), 3)} higher; "
        + p_sentence(p, alpha, ctx),
        f"{ga} 的平均 {value_column} 为 {fmt_num(ma)}，{gb} 为 {fmt_num(mb)}：{higher} 高 {fmt_num(abs(diff), 3)}；"
        + p_sentence(p, alpha, ctx),
    )
    if dropped:
        interpretation += " " + dropped_note(dropped, ctx)
    profile = ctx.t(
        f"{value_column} by {group_column}: {ga} n={na}, mean {fmt_num(ma)}; {gb} n={nb}, mean {fmt_num(mb)}.",
        f"{value_column} 按 {group_column} 分组：{ga} n={na}，均值 {fmt_num(ma)}；{gb} n={nb}，均值 {fmt_num(mb)}。",
    )
    if dropped:
        profile += " " + dropped_note(dropped, ctx)
    stat_line = (
        f"U = {fmt_num(stat, 6)}" if chosen == "mannwhitney" else f"t = {fmt_num(stat, 5)}, df = {fmt_num(df, 5)}"
    )
    conclusion = ctx.t(
        f"{stat_line}, {fmt_p(p)} — {significance_word(p, alpha, ctx)} at alpha = {alpha}. "
        f"Mean difference {fmt_num(diff)} (95% CI {fmt_num(ci_low)} to {fmt_num(ci_high)}); {effect_text}.",
        f"{stat_line}，{fmt_p(p)} —— 在 alpha = {alpha} 下{significance_word(p, alpha, ctx)}。"
        f"均值差 {fmt_num(diff)}（95% 置信区间 {fmt_num(ci_low)} 至 {fmt_num(ci_high)}）；{effect_text}。",
    )
    insights = [size_insight(higher, sig, metrics["effect_size"], "r" if chosen == "mannwhitney" else "d", ctx)]
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
        sample_size=na + nb,
        limitations=limitations,
        payload={"groups": [ga, gb], "dropped_rows": dropped, "significant": sig},
    )
