"""Descriptive statistics and group comparisons: describe, two-group tests, one-way ANOVA family."""

from __future__ import annotations

import math
import warnings
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats as sps

from .base import ToolContext, ToolError, ToolResult, tagged_text
from .common import (check_n, clean_metrics, coerce_numeric, column_kind, dropped_note, effect_label,
                     fmt_num, fmt_p, label, numeric_columns, p_sentence, require_numeric, significance_word)

_SMALL = 30          # below this per-group size, non-normality switches to a rank test
_SHAPIRO_MAX = 5000


# ---------------------------------------------------------------- describe

def describe_columns(data: pd.DataFrame, columns: list[str] | None = None, ctx: ToolContext | None = None) -> ToolResult:
    """Summary statistics of numeric columns: count, missing, mean, std, min, quartiles, max and skewness.

    Args:
        columns: Columns to describe; omit to describe every numeric column.
    """
    ctx = ctx or ToolContext()
    chosen = list(dict.fromkeys(columns)) if columns else numeric_columns(data)
    if not chosen:
        raise ToolError("wrong_column_type", ctx.t("The dataset has no numeric columns.", "数据集中没有数值列。"),
                        hint=ctx.t("Use value_counts for categorical columns.", "分类列请用 value_counts。"))
    rows, metrics, insights = [], {}, []
    for col in chosen:
        values = require_numeric(data, col, ctx)
        clean = values.dropna().to_numpy(dtype=float)
        row = {"column": col, "n": len(clean), "missing": int(values.isna().sum())}
        if len(clean):
            q1, med, q3 = np.percentile(clean, [25, 50, 75])
            row.update(mean=clean.mean(), std=clean.std(ddof=1) if len(clean) > 1 else float("nan"),
                       min=clean.min(), q1=q1, median=med, q3=q3, max=clean.max(),
                       skew=float(sps.skew(clean, bias=False)) if len(clean) > 2 and clean.std() > 0 else float("nan"))
        rows.append(row)
        for key, value in row.items():
            if key != "column":
                metrics[f"{col}.{key}"] = value
        skew = row.get("skew", float("nan"))
        if skew == skew and abs(skew) > 1:
            insights.append(ctx.t(f"{col} is strongly skewed (skew {fmt_num(skew, 3)}); the median ({fmt_num(row['median'])}) describes a typical value better than the mean ({fmt_num(row['mean'])}).",
                                  f"{col} 分布明显偏斜（偏度 {fmt_num(skew, 3)}），中位数（{fmt_num(row['median'])}）比均值（{fmt_num(row['mean'])}）更能代表典型值。"))
        if row["missing"]:
            insights.append(ctx.t(f"{col} has {row['missing']} missing values.", f"{col} 有 {row['missing']} 个缺失值。"))
    table = pd.DataFrame(rows)
    header = f"{'column':<20} {'n':>7} {'miss':>6} {'mean':>11} {'std':>11} {'min':>11} {'median':>11} {'max':>11} {'skew':>7}"
    lines = [header] + [
        f"{str(r['column'])[:20]:<20} {r['n']:>7} {r['missing']:>6} {fmt_num(r.get('mean')):>11} {fmt_num(r.get('std')):>11} "
        f"{fmt_num(r.get('min')):>11} {fmt_num(r.get('median')):>11} {fmt_num(r.get('max')):>11} {fmt_num(r.get('skew'), 3):>7}"
        for r in rows]
    n = len(data)
    first = rows[0]
    interpretation = ctx.t(
        f"Summary of {len(rows)} column(s); e.g. {first['column']} averages {fmt_num(first.get('mean'))} with a typical value (median) of {fmt_num(first.get('median'))}.",
        f"共汇总 {len(rows)} 列；例如 {first['column']} 的平均值为 {fmt_num(first.get('mean'))}，典型值（中位数）为 {fmt_num(first.get('median'))}。")
    metrics["n"] = n
    text = tagged_text(data_profile="\n".join(lines), method=ctx.t("Descriptive statistics (sample std, ddof=1; adjusted skewness); missing values ignored per column.",
                                                                   "描述统计（样本标准差 ddof=1，校正偏度）；各列分别忽略缺失值。"),
                       insights=insights, interpretation=interpretation)
    return ToolResult(metrics=clean_metrics(metrics), text=text, interpretation=interpretation,
                      method="descriptive statistics", sample_size=n, table=table,
                      limitations=[ctx.t("Descriptions only; no test of differences.", "仅为描述，不检验差异。")])


# ---------------------------------------------------------------- helpers

def _groups(data: pd.DataFrame, value_column: str, group_column: str, ctx: ToolContext,
            wanted: list[str] | None = None) -> tuple[dict[str, np.ndarray], int]:
    """Numeric values per group label (missing dropped) and how many rows were dropped."""
    values = require_numeric(data, value_column, ctx)
    groups = data[group_column]
    if column_kind(groups) in ("number",) and groups.nunique() > 20:
        raise ToolError("wrong_column_type",
                        ctx.t(f"{group_column!r} is a continuous number, not a grouping column.", f"{group_column!r} 是连续数值，不是分组列。"),
                        hint=ctx.t("Use a categorical column or correlation_analysis.", "请使用分类列，或改用 correlation_analysis。"),
                        column=group_column)
    keep = values.notna() & groups.notna()
    dropped = int((~keep).sum())
    labels = groups[keep].map({v: label(v) for v in groups[keep].unique()})
    vals = values[keep]
    out: dict[str, np.ndarray] = {}
    for name in sorted(labels.unique(), key=_sort_key):
        out[name] = vals[labels == name].to_numpy(dtype=float)
    if wanted:
        wanted = [label(w) for w in wanted]
        missing = [w for w in wanted if w not in out]
        if missing:
            from .registry import suggest
            raise ToolError("value_not_found", ctx.t(f"Group(s) {missing} do not occur in {group_column!r}.",
                                                      f"{group_column!r} 中没有分组 {missing}。"),
                            hint=ctx.t(f"Groups present: {list(out)[:20]}", f"现有分组：{list(out)[:20]}"),
                            did_you_mean=suggest(missing[0], list(out)))
        out = {w: out[w] for w in wanted}
    return out, dropped


def _sort_key(v: str):
    try:
        return (0, float(v), v)
    except ValueError:
        return (1, 0.0, v)


def _normality(groups: dict[str, np.ndarray], alpha: float) -> dict[str, float]:
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


def _accurate_mean(x: np.ndarray) -> float:
    m = x.mean()
    return float(m + (x - m).mean())


# ---------------------------------------------------------------- two groups

def compare_two_groups(data: pd.DataFrame, value_column: str, group_column: str,
                       method: Literal["auto", "welch", "student", "mannwhitney"] = "auto", alpha: float = 0.05,
                       groups: list[str] | None = None, ctx: ToolContext | None = None) -> ToolResult:
    """Test whether a numeric value differs between two groups (t-test or Mann-Whitney U, chosen by checking assumptions), with effect size and confidence interval.

    Args:
        value_column: The numeric column to compare (e.g. revenue).
        group_column: The column that splits rows into exactly two groups (e.g. A/B variant).
        method: auto checks normality (Shapiro) and equal variances (Levene) and picks Welch t or Mann-Whitney; or force welch, student or mannwhitney.
        alpha: Significance level, usually 0.05.
        groups: The two group values to compare when the column has more than two.
    """
    ctx = ctx or ToolContext()
    parts, dropped = _groups(data, value_column, group_column, ctx, groups)
    if len(parts) != 2:
        raise ToolError("wrong_group_count",
                        ctx.t(f"{group_column!r} has {len(parts)} groups; this test needs exactly two.",
                              f"{group_column!r} 有 {len(parts)} 个分组，此检验需要恰好两个。"),
                        hint=ctx.t(f"Pass groups=[two of {list(parts)[:10]}] or use compare_groups.",
                                   f"请用 groups 参数指定其中两个（{list(parts)[:10]}），或改用 compare_groups。"),
                        groups=list(parts)[:50])
    (ga, a), (gb, b) = parts.items()
    check_n(min(len(a), len(b)), 2, ctx.t("each group", "每个分组"), ctx)
    normal_p = _normality(parts, alpha)
    levene_p = _levene(parts)
    non_normal = [g for g, p in normal_p.items() if p < alpha]
    chosen = method
    if method == "auto":
        small = min(len(a), len(b)) < _SMALL
        chosen = "mannwhitney" if non_normal and small else "welch"
    na, nb = len(a), len(b)
    ma, mb = _accurate_mean(a), _accurate_mean(b)
    va, vb = a.var(ddof=1), b.var(ddof=1)
    diff = ma - mb
    pooled_sd = math.sqrt(((na - 1) * va + (nb - 1) * vb) / (na + nb - 2))
    cohen_d = diff / pooled_sd if pooled_sd > 0 else float("nan")
    hedges_g = cohen_d * (1 - 3 / (4 * (na + nb) - 9))
    if chosen == "student":
        df = na + nb - 2
        se = pooled_sd * math.sqrt(1 / na + 1 / nb)
    else:
        se = math.sqrt(va / na + vb / nb)
        df = (va / na + vb / nb) ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1)) if se > 0 else float("nan")
    tcrit = sps.t.ppf(1 - 0.025, df) if df == df else float("nan")
    ci_low, ci_high = diff - tcrit * se, diff + tcrit * se
    metrics: dict = {"n": na + nb, f"n.{ga}": na, f"n.{gb}": nb, f"mean.{ga}": ma, f"mean.{gb}": mb,
                     f"median.{ga}": float(np.median(a)), f"median.{gb}": float(np.median(b)),
                     f"std.{ga}": math.sqrt(va), f"std.{gb}": math.sqrt(vb), "mean_difference": diff,
                     "ci_low": ci_low, "ci_high": ci_high, "levene_p": levene_p, "alpha": alpha}
    for g, p in normal_p.items():
        metrics[f"shapiro_p.{g}"] = p
    if chosen == "mannwhitney":
        res = sps.mannwhitneyu(a, b, alternative="two-sided")
        stat, p = float(res.statistic), float(res.pvalue)
        effect = 2 * stat / (na * nb) - 1           # rank-biserial, > 0 when the first group tends to be larger
        metrics.update(statistic=stat, p_value=p, effect_size=effect, effect_size_name="rank_biserial",
                       method="mannwhitney")
        effect_text = ctx.t(f"rank-biserial r = {fmt_num(effect, 3)} ({effect_label(effect, 'r', ctx)})",
                            f"秩二列相关 r = {fmt_num(effect, 3)}（{effect_label(effect, 'r', ctx)}）")
        method_text = ctx.t("Mann-Whitney U test (two-sided), a rank test that does not assume normality.",
                            "Mann-Whitney U 检验（双侧），不要求正态分布的秩检验。")
    else:
        if se == 0:
            raise ToolError("insufficient_data", ctx.t("Both groups have no spread; a t-test is undefined.", "两组数据都没有波动，无法做 t 检验。"),
                            hint=ctx.t("Check the value column.", "请检查数值列。"))
        stat = diff / se
        p = float(2 * sps.t.sf(abs(stat), df))
        metrics.update(statistic=stat, p_value=p, df=df, effect_size=cohen_d, effect_size_name="cohen_d",
                       hedges_g=hedges_g, method=chosen)
        effect_text = ctx.t(f"Cohen's d = {fmt_num(cohen_d, 3)} ({effect_label(cohen_d, 'd', ctx)}), Hedges' g = {fmt_num(hedges_g, 3)}",
                            f"Cohen's d = {fmt_num(cohen_d, 3)}（{effect_label(cohen_d, 'd', ctx)}），Hedges' g = {fmt_num(hedges_g, 3)}")
        method_text = (ctx.t("Welch two-sample t-test (does not assume equal variances).", "Welch 双样本 t 检验（不要求方差相等）。")
                       if chosen == "welch" else
                       ctx.t("Student two-sample t-test (assumes equal variances).", "Student 双样本 t 检验（假设方差相等）。"))
    assumptions = [ctx.t(f"Normality (Shapiro-Wilk): " + ", ".join(f"{g} {fmt_p(pv)}" for g, pv in normal_p.items()),
                         "正态性（Shapiro-Wilk）：" + "，".join(f"{g} {fmt_p(pv)}" for g, pv in normal_p.items()))
                   if normal_p else ctx.t("Normality not testable (too few or constant values).", "无法检验正态性。"),
                   ctx.t(f"Equal variances (Levene): {fmt_p(levene_p)}.", f"方差齐性（Levene）：{fmt_p(levene_p)}。")]
    limitations = []
    if method == "auto" and chosen == "mannwhitney":
        assumptions.append(ctx.t(f"Group(s) {non_normal} are not normal and samples are small, so a rank test was used.",
                                 f"分组 {non_normal} 不服从正态且样本较小，因此改用秩检验。"))
    elif non_normal:
        msg = ctx.t(f"Group(s) {non_normal} deviate from normality; with {min(na, nb)}+ rows per group the t-test is still reasonable.",
                    f"分组 {non_normal} 偏离正态；每组至少 {min(na, nb)} 行，t 检验仍大致可靠。")
        (assumptions if chosen != "student" and min(na, nb) >= _SMALL else limitations).append(msg)
    if chosen == "student" and levene_p == levene_p and levene_p < alpha:
        limitations.append(ctx.t("Variances differ (Levene) but the Student test assumes they are equal; Welch would be safer.",
                                 "方差不等（Levene），但 Student 检验假设方差相等；Welch 检验更稳妥。"))
    if min(na, nb) < 10:
        limitations.append(ctx.t("Small groups: the test has little power to detect modest differences.",
                                 "分组样本量小，检验力较弱，难以发现较小差异。"))
    limitations.append(ctx.t("Shows whether the groups differ, not why.", "只说明两组是否不同，不说明原因。"))
    higher = ga if diff > 0 else gb
    sig = p < alpha
    interpretation = ctx.t(
        f"Average {value_column} is {fmt_num(ma)} for group {ga} and {fmt_num(mb)} for group {gb} (group {higher} is higher by {fmt_num(abs(diff))}); "
        + p_sentence(p, alpha, ctx),
        f"{ga} 组的平均 {value_column} 为 {fmt_num(ma)}，{gb} 组为 {fmt_num(mb)}（{higher} 组高 {fmt_num(abs(diff))}）；"
        + p_sentence(p, alpha, ctx))
    if dropped:
        interpretation += " " + dropped_note(dropped, ctx)
    profile = ctx.t(f"{value_column} by {group_column}: {ga} n={na}, mean {fmt_num(ma)}; {gb} n={nb}, mean {fmt_num(mb)}.",
                    f"{value_column} 按 {group_column} 分组：{ga} n={na}，均值 {fmt_num(ma)}；{gb} n={nb}，均值 {fmt_num(mb)}。")
    if dropped:
        profile += " " + dropped_note(dropped, ctx)
    stat_line = (f"U = {fmt_num(stat, 6)}" if chosen == "mannwhitney" else f"t = {fmt_num(stat, 5)}, df = {fmt_num(df, 5)}")
    conclusion = ctx.t(f"{stat_line}, {fmt_p(p)} — {significance_word(p, alpha, ctx)} at alpha = {alpha}. "
                       f"Mean difference {fmt_num(diff)} (95% CI {fmt_num(ci_low)} to {fmt_num(ci_high)}); {effect_text}.",
                       f"{stat_line}，{fmt_p(p)} —— 在 alpha = {alpha} 下{significance_word(p, alpha, ctx)}。"
                       f"均值差 {fmt_num(diff)}（95% 置信区间 {fmt_num(ci_low)} 至 {fmt_num(ci_high)}）；{effect_text}。")
    insights = [ctx.t(f"{higher} has the higher average; the difference is {'large enough to act on' if sig else 'within what chance produces'}.",
                      f"{higher} 组平均值更高；这一差异{'足以作为决策依据' if sig else '在偶然波动范围内'}。")]
    text = tagged_text(data_profile=profile, method=method_text, assumptions=assumptions, insights=insights,
                       conclusion=conclusion, interpretation=interpretation)
    return ToolResult(metrics=clean_metrics(metrics), text=text, interpretation=interpretation, method=method_text,
                      sample_size=na + nb, limitations=limitations,
                      payload={"groups": [ga, gb], "dropped_rows": dropped, "significant": sig})


# ---------------------------------------------------------------- k groups

def one_way_anova(parts: dict[str, np.ndarray]) -> dict[str, float]:
    """Classical one-way ANOVA with centred sums of squares (NIST StRD accurate)."""
    allv = np.concatenate(list(parts.values()))
    grand = _accurate_mean(allv)
    means = {g: _accurate_mean(x) for g, x in parts.items()}
    ss_within = float(sum(np.sum((x - means[g]) ** 2) for g, x in parts.items()))
    ss_between = float(sum(len(x) * (means[g] - grand) ** 2 for g, x in parts.items()))
    k, n = len(parts), len(allv)
    dfb, dfw = k - 1, n - k
    f = (ss_between / dfb) / (ss_within / dfw) if ss_within > 0 else float("inf")
    p = float(sps.f.sf(f, dfb, dfw)) if math.isfinite(f) else 0.0
    return {"f_statistic": f, "p_value": p, "df_between": dfb, "df_within": dfw, "ss_between": ss_between,
            "ss_within": ss_within, "r_squared": ss_between / (ss_between + ss_within), "grand_mean": grand}


def welch_anova(parts: dict[str, np.ndarray]) -> dict[str, float]:
    """Welch's heteroscedastic one-way ANOVA."""
    n = np.array([len(x) for x in parts.values()], dtype=float)
    m = np.array([_accurate_mean(x) for x in parts.values()])
    v = np.array([x.var(ddof=1) for x in parts.values()])
    w = n / v
    mw = np.sum(w * m) / np.sum(w)
    k = len(n)
    a = np.sum(w * (m - mw) ** 2) / (k - 1)
    lam = np.sum((1 - w / w.sum()) ** 2 / (n - 1))
    f = a / (1 + 2 * (k - 2) / (k ** 2 - 1) * lam)
    dfw = (k ** 2 - 1) / (3 * lam)
    return {"f_statistic": float(f), "p_value": float(sps.f.sf(f, k - 1, dfw)), "df_between": k - 1,
            "df_within": float(dfw)}


def compare_groups(data: pd.DataFrame, value_column: str, group_column: str,
                   method: Literal["auto", "anova", "welch_anova", "kruskal"] = "auto", alpha: float = 0.05,
                   ctx: ToolContext | None = None) -> ToolResult:
    """Test whether a numeric value differs across two or more groups (one-way ANOVA, Welch ANOVA or Kruskal-Wallis), with Tukey post-hoc comparisons when significant.

    Args:
        value_column: The numeric column to compare (e.g. sales).
        group_column: The categorical column defining the groups (e.g. region).
        method: auto checks normality and equal variances and picks anova, welch_anova or kruskal; or force one.
        alpha: Significance level, usually 0.05.
    """
    ctx = ctx or ToolContext()
    parts, dropped = _groups(data, value_column, group_column, ctx)
    parts = {g: x for g, x in parts.items() if len(x)}
    if len(parts) < 2:
        raise ToolError("wrong_group_count", ctx.t(f"{group_column!r} has fewer than two groups with data.",
                                                    f"{group_column!r} 中有数据的分组少于两个。"),
                        hint=ctx.t("Choose a column with at least two groups.", "请选择至少有两个分组的列。"))
    if len(parts) > 100:
        raise ToolError("wrong_column_type", ctx.t(f"{group_column!r} has {len(parts)} groups, too many to compare.",
                                                    f"{group_column!r} 有 {len(parts)} 个分组，太多无法比较。"),
                        hint=ctx.t("Use a categorical column with fewer levels.", "请使用水平更少的分类列。"))
    small_groups = [g for g, x in parts.items() if len(x) < 2]
    if small_groups:
        raise ToolError("insufficient_data", ctx.t(f"Group(s) {small_groups[:10]} have fewer than 2 values.",
                                                    f"分组 {small_groups[:10]} 的数据少于 2 个。"),
                        hint=ctx.t("Filter those groups out or merge them.", "请过滤或合并这些分组。"))
    normal_p = _normality(parts, alpha)
    levene_p = _levene(parts)
    non_normal = [g for g, p in normal_p.items() if p < alpha]
    chosen = method
    if method == "auto":
        small = min(len(x) for x in parts.values()) < _SMALL
        if non_normal and small:
            chosen = "kruskal"
        elif levene_p == levene_p and levene_p < alpha:
            chosen = "welch_anova"
        else:
            chosen = "anova"
    classic = one_way_anova(parts)
    n = sum(len(x) for x in parts.values())
    k = len(parts)
    metrics: dict = {"n": n, "k_groups": k, "ss_between": classic["ss_between"], "ss_within": classic["ss_within"],
                     "r_squared": classic["r_squared"], "effect_size": classic["r_squared"], "effect_size_name": "eta_squared",
                     "levene_p": levene_p, "alpha": alpha, "method": chosen}
    for g, x in parts.items():
        metrics[f"mean.{g}"] = _accurate_mean(x)
        metrics[f"n.{g}"] = len(x)
    for g, p in normal_p.items():
        metrics[f"shapiro_p.{g}"] = p
    if chosen == "kruskal":
        h, p = sps.kruskal(*parts.values())
        eps2 = (h - k + 1) / (n - k)
        metrics.update(statistic=float(h), p_value=float(p), df_between=k - 1, effect_size=float(eps2),
                       effect_size_name="epsilon_squared_h")
        stat_line = f"H = {fmt_num(h, 5)}, df = {k - 1}"
        method_text = ctx.t("Kruskal-Wallis rank test (does not assume normality).", "Kruskal-Wallis 秩检验（不要求正态）。")
    else:
        if chosen == "welch_anova" and any(np.ptp(x) == 0 for x in parts.values()):
            chosen = metrics["method"] = "anova"   # Welch weights are undefined for a constant group
        res = classic if chosen == "anova" else welch_anova(parts)
        metrics.update(f_statistic=res["f_statistic"], statistic=res["f_statistic"], p_value=res["p_value"],
                       df_between=res["df_between"], df_within=res["df_within"])
        stat_line = f"F({res['df_between']}, {fmt_num(res['df_within'], 5)}) = {fmt_num(res['f_statistic'], 6)}"
        method_text = (ctx.t("One-way ANOVA (centred sums of squares).", "单因素方差分析（中心化平方和）。") if chosen == "anova"
                       else ctx.t("Welch one-way ANOVA (does not assume equal variances).", "Welch 单因素方差分析（不要求方差相等）。"))
    p = metrics["p_value"]
    posthoc, pair_lines = _posthoc(parts, chosen, alpha, ctx) if p < alpha and k <= 15 else ([], [])
    assumptions = [ctx.t("Normality (Shapiro-Wilk): " + ", ".join(f"{g} {fmt_p(v)}" for g, v in normal_p.items()),
                         "正态性（Shapiro-Wilk）：" + "，".join(f"{g} {fmt_p(v)}" for g, v in normal_p.items())) if normal_p
                   else ctx.t("Normality not testable.", "无法检验正态性。"),
                   ctx.t(f"Equal variances (Levene): {fmt_p(levene_p)}.", f"方差齐性（Levene）：{fmt_p(levene_p)}。")]
    limitations = [ctx.t("Shows whether group averages differ, not why.", "只说明各组均值是否不同，不说明原因。")]
    if chosen == "anova" and levene_p == levene_p and levene_p < alpha:
        limitations.append(ctx.t("Variances differ between groups; Welch ANOVA would be safer.", "各组方差不等，Welch 方差分析更稳妥。"))
    if chosen != "kruskal" and non_normal and min(len(x) for x in parts.values()) < _SMALL:
        limitations.append(ctx.t(f"Groups {non_normal} are not normal with small samples; consider kruskal.",
                                 f"分组 {non_normal} 非正态且样本小，可考虑 kruskal。"))
    means = {g: metrics[f"mean.{g}"] for g in parts}
    top, bottom = max(means, key=means.get), min(means, key=means.get)
    profile = "\n".join(f"{g}: n={len(x)}, mean {fmt_num(means[g])}, sd {fmt_num(x.std(ddof=1))}" for g, x in parts.items())
    if dropped:
        profile += "\n" + dropped_note(dropped, ctx)
    eff = metrics["effect_size"]
    conclusion = ctx.t(f"{stat_line}, {fmt_p(p)} — {significance_word(p, alpha, ctx)}; eta² = {fmt_num(classic['r_squared'], 3)} ({effect_label(classic['r_squared'], 'eta2', ctx)}).",
                       f"{stat_line}，{fmt_p(p)} —— {significance_word(p, alpha, ctx)}；eta² = {fmt_num(classic['r_squared'], 3)}（{effect_label(classic['r_squared'], 'eta2', ctx)}）。")
    insights = [ctx.t(f"Highest average: {top} ({fmt_num(means[top])}); lowest: {bottom} ({fmt_num(means[bottom])}).",
                      f"均值最高：{top}（{fmt_num(means[top])}）；最低：{bottom}（{fmt_num(means[bottom])}）。"),
                ctx.t(f"The grouping explains {classic['r_squared'] * 100:.1f}% of the variation in {value_column}.",
                      f"分组解释了 {value_column} {classic['r_squared'] * 100:.1f}% 的变化。")] + pair_lines
    interpretation = ctx.t(f"Average {value_column} differs between groups of {group_column} (highest {top}, lowest {bottom}); "
                           if p < alpha else f"Average {value_column} looks similar across groups of {group_column}; ",
                           f"各 {group_column} 组的平均 {value_column} 存在差异（{top} 最高，{bottom} 最低）；"
                           if p < alpha else f"各 {group_column} 组的平均 {value_column} 看起来差不多；") + p_sentence(p, alpha, ctx)
    if dropped:
        interpretation += " " + dropped_note(dropped, ctx)
    text = tagged_text(data_profile=profile, method=method_text, assumptions=assumptions, insights=insights,
                       conclusion=conclusion, interpretation=interpretation)
    return ToolResult(metrics=clean_metrics(metrics), text=text, interpretation=interpretation, method=method_text,
                      sample_size=n, limitations=limitations,
                      table=pd.DataFrame(posthoc) if posthoc else None,
                      payload={"posthoc": posthoc, "dropped_rows": dropped, "effect_size": eff, "significant": p < alpha})


def _posthoc(parts: dict[str, np.ndarray], chosen: str, alpha: float, ctx: ToolContext) -> tuple[list[dict], list[str]]:
    """Tukey HSD for the ANOVAs, Holm-adjusted Mann-Whitney pairs after Kruskal-Wallis."""
    names = list(parts)
    pairs = []
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
            pairs.append({"group_a": a, "group_b": b, "difference": float(np.median(parts[a]) - np.median(parts[b])),
                          "p_adj": padj, "test": "mann-whitney (holm)"})
    else:
        from statsmodels.stats.multicomp import pairwise_tukeyhsd
        endog = np.concatenate([parts[g] for g in names])
        codes = np.repeat(np.arange(len(names)), [len(parts[g]) for g in names])
        res = pairwise_tukeyhsd(endog, codes, alpha=0.05)
        for row, (i, j) in enumerate((i, j) for i in range(len(names)) for j in range(i + 1, len(names))):
            # statsmodels reports mean(j) - mean(i); flip to group_a - group_b
            pairs.append({"group_a": names[i], "group_b": names[j], "difference": float(-res.meandiffs[row]),
                          "p_adj": float(res.pvalues[row]), "ci_low": float(-res.confint[row, 1]),
                          "ci_high": float(-res.confint[row, 0]), "test": "tukey hsd"})
    lines = [ctx.t(f"{q['group_a']} vs {q['group_b']}: difference {fmt_num(q['difference'])}, adjusted {fmt_p(q['p_adj'])}"
                   f"{' (significant)' if q['p_adj'] < alpha else ''}",
                   f"{q['group_a']} 对比 {q['group_b']}：差值 {fmt_num(q['difference'])}，校正后 {fmt_p(q['p_adj'])}"
                   f"{'（显著）' if q['p_adj'] < alpha else ''}") for q in pairs[:15]]
    return pairs, lines
