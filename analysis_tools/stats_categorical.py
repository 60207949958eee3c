"""Categorical data: chi-square test of independence (Fisher for small 2x2 tables) and proportion tests."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats as sps

from .base import ToolContext, ToolError, ToolResult, tagged_text
from .common import clean_metrics, dropped_note, effect_label, fmt_num, fmt_p, label, p_sentence, significance_word

_MAX_LEVELS = 50
_YES = {"1", "1.0", "true", "yes", "y", "t", "是", "对", "成功", "success"}
_NO = {"0", "0.0", "false", "no", "n", "f", "否", "错", "失败", "failure"}


def labels_of(series: pd.Series, clean=None) -> pd.Series:
    """Each value as a clean label (1.0 -> "1"), computed once per distinct value (fast on 1M rows)."""
    clean = clean or label
    uniques = series.dropna().unique()
    return series.map({u: clean(u) for u in uniques})


def wilson_interval(successes: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval (what R's prop.test gives without continuity correction)."""
    if n == 0:
        return float("nan"), float("nan")
    z = sps.norm.ppf(1 - (1 - confidence) / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def binary_values(
    data: pd.DataFrame, column: str, success_value: str | None, ctx: ToolContext, second_level: bool = False
) -> tuple[pd.Series, str]:
    """1.0 for success, 0.0 otherwise, NaN where missing; and the success label.

    Success is `success_value` when given; else 1/true/yes; else (with `second_level`) the second of
    two sorted levels, as R's glm does. Anything else is an `ambiguous_outcome` error."""
    series = data[column]
    present = series.dropna()
    labels = labels_of(present, lambda v: label(v).strip())
    levels = sorted(labels.unique(), key=str)
    if success_value is not None:
        wanted = label(success_value).strip()
        if wanted not in levels:
            from .registry import suggest

            raise ToolError(
                "value_not_found",
                ctx.t(f"{wanted!r} does not occur in {column!r}.", f"{column!r} 中没有 {wanted!r}。"),
                hint=ctx.t(f"Values present: {levels[:20]}", f"现有取值：{levels[:20]}"),
                did_you_mean=suggest(wanted, levels),
            )
        success = wanted
    elif len(levels) <= 2 and {lv.lower() for lv in levels} <= _YES | _NO:
        success = next((lv for lv in levels if lv.lower() in _YES), "1")
    elif len(levels) == 2 and second_level:
        success = levels[1]
    else:
        raise ToolError(
            "ambiguous_outcome" if len(levels) == 2 else "wrong_column_type",
            ctx.t(
                f"{column!r} has {len(levels)} values {levels[:8]}; say which one counts as success.",
                f"{column!r} 有 {len(levels)} 种取值 {levels[:8]}，请指定哪个算“成功”。",
            ),
            hint=ctx.t(
                f"Pass success_value, e.g. success_value={levels[0]!r}." if levels else "The column is empty.",
                f"请传入 success_value，例如 success_value={levels[0]!r}。" if levels else "该列为空。",
            ),
            column=column,
            values=levels[:20],
        )
    out = pd.Series(np.nan, index=series.index)
    out[present.index] = (labels == success).astype(float)
    return out, success


def _clean_label(value) -> str | None:
    if value is None or (isinstance(value, float) and value != value) or value is pd.NA or value is pd.NaT:
        return None
    text = label(value).strip()
    return text or None


def row_weights(data: pd.DataFrame, weight_column: str | None, ctx: ToolContext) -> pd.Series:
    """How many cases each row stands for: 1 each, or a count table's frequency column (Freq, n, count),
    which must hold non-negative whole numbers; a missing frequency counts as 0."""
    if not weight_column:
        return pd.Series(1.0, index=data.index)
    weights = pd.to_numeric(data[weight_column], errors="coerce").fillna(0.0)
    if (weights < 0).any() or not np.allclose(weights, np.round(weights)):
        raise ToolError(
            "wrong_column_type",
            ctx.t(
                f"{weight_column!r} is not a count: weights must be whole numbers of at least 0.",
                f"{weight_column!r} 不是计数列：权重必须是不小于 0 的整数。",
            ),
            hint=ctx.t(
                "Pass the column that says how many cases each row stands for (e.g. Freq).",
                "请传入表示每行代表多少个案的列（如 Freq）。",
            ),
            column=weight_column,
        )
    return weights.astype(float)


def _table(
    data: pd.DataFrame, x_column: str, y_column: str, ctx: ToolContext, weight_column: str | None = None
) -> tuple[pd.DataFrame, int]:
    # blank cells are missing values too (spreadsheets leave them empty)
    frame = pd.DataFrame(
        {
            "r": labels_of(data[x_column], _clean_label),
            "c": labels_of(data[y_column], _clean_label),
            "w": row_weights(data, weight_column, ctx),
        }
    ).dropna()
    dropped = len(data) - len(frame)
    rows, cols = frame["r"].rename(x_column), frame["c"].rename(y_column)
    for name, values in ((x_column, rows), (y_column, cols)):
        levels = values.nunique()
        if levels < 2:
            raise ToolError(
                "constant_column" if len(values) else "insufficient_data",
                ctx.t(
                    f"{name!r} has {levels} distinct value(s) after dropping missing rows; a table needs at least two.",
                    f"去掉缺失后 {name!r} 只有 {levels} 种取值，列联表至少需要两种。",
                ),
                hint=ctx.t("Choose a column with at least two categories.", "请选择至少有两个类别的列。"),
                column=name,
            )
        if levels > _MAX_LEVELS:
            raise ToolError(
                "wrong_column_type",
                ctx.t(
                    f"{name!r} has {levels} distinct values, too many for a contingency table.",
                    f"{name!r} 有 {levels} 种取值，太多，无法做列联表。",
                ),
                hint=ctx.t("Use a categorical column (or group the values first).", "请使用分类列（或先把取值分组）。"),
                column=name,
            )
    if weight_column:  # a count table: each row stands for its frequency's worth of cases
        table = pd.crosstab(rows, cols, values=frame["w"], aggfunc="sum").fillna(0.0)
        return table.loc[table.sum(axis=1) > 0, table.sum(axis=0) > 0], dropped
    return pd.crosstab(rows, cols), dropped


def chi_square_test(
    data: pd.DataFrame,
    x_column: str,
    y_column: str,
    alpha: float = 0.05,
    weight_column: str | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Test whether two categorical columns are related (chi-square test of independence; Fisher's exact test for a 2x2 table with small expected counts), with Cramér's V.

    Args:
        x_column: The categorical column for the table rows (e.g. customer segment).
        y_column: The categorical column for the table columns (e.g. whether they bought).
        alpha: Significance level, usually 0.05.
        weight_column: For a count table (one row per combination): the column saying how many cases each row stands for (e.g. Freq, n, count).
    """
    ctx = ctx or ToolContext()
    table, dropped = _table(data, x_column, y_column, ctx, weight_column)
    observed = table.to_numpy(dtype=float)
    n = int(observed.sum())
    r, c = observed.shape
    chi2, p_chi, dof, expected = sps.chi2_contingency(observed, correction=False)
    min_expected = float(expected.min())
    small_share = float(np.mean(expected < 5))
    cramers_v = math.sqrt(chi2 / (n * (min(r, c) - 1)))
    metrics = {
        "n": n,
        "rows": r,
        "columns": c,
        "chi_square": chi2,
        "df": dof,
        "p_value_chi_square": p_chi,
        "min_expected": min_expected,
        "share_expected_below_5": small_share,
        "effect_size": cramers_v,
        "effect_size_name": "cramers_v",
        "cramers_v": cramers_v,
        "alpha": alpha,
    }
    assumptions = [
        ctx.t(
            f"Smallest expected count {fmt_num(min_expected, 3)}; {small_share:.0%} of cells expect fewer than 5.",
            f"最小期望频数 {fmt_num(min_expected, 3)}；{small_share:.0%} 的单元格期望频数小于 5。",
        )
    ]
    limitations = [
        ctx.t(
            "Shows whether the two are related, not why or in which direction causally.",
            "只说明两者是否相关，不说明原因。",
        )
    ]
    if r == 2 and c == 2 and min_expected < 5:
        odds, p = sps.fisher_exact(observed)
        stat, method = float(odds), "fisher"
        metrics.update(odds_ratio=stat)
        method_text = ctx.t(
            "Fisher's exact test (2x2 table with expected counts below 5).",
            "Fisher 精确检验（2x2 表且期望频数小于 5）。",
        )
        assumptions.append(
            ctx.t(
                "Expected counts below 5, so the exact test replaced chi-square.",
                "期望频数小于 5，因此用精确检验代替卡方检验。",
            )
        )
    elif r == 2 and c == 2:
        yates, p, _, _ = sps.chi2_contingency(observed, correction=True)
        stat, method = float(yates), "chi_square_yates"
        method_text = ctx.t(
            "Pearson chi-square test with Yates' continuity correction (2x2 table, as R's chisq.test).",
            "带 Yates 连续性校正的 Pearson 卡方检验（2x2 表，与 R 的 chisq.test 一致）。",
        )
    else:
        stat, p, method = float(chi2), float(p_chi), "chi_square"
        method_text = ctx.t("Pearson chi-square test of independence.", "Pearson 卡方独立性检验。")
        if small_share > 0.2:
            limitations.append(
                ctx.t(
                    "More than 20% of cells expect fewer than 5 counts, so the p-value is approximate; merge rare categories.",
                    "超过 20% 的单元格期望频数小于 5，p 值只是近似；请合并稀少类别。",
                )
            )
    metrics.update(statistic=stat, p_value=float(p), method=method)
    cells = _driving_cells(observed, expected, table, n)
    insights = [
        ctx.t(
            f"{a} × {b}: {int(o)} observed vs {fmt_num(e, 3)} expected ({'more' if o > e else 'fewer'} than if unrelated).",
            f"{a} × {b}：观测 {int(o)}，期望 {fmt_num(e, 3)}（比无关联时{'多' if o > e else '少'}）。",
        )
        for a, b, o, e in cells
    ]
    insights.append(
        ctx.t(
            f"Cramér's V = {fmt_num(cramers_v, 3)} ({effect_label(cramers_v, 'r', ctx)} association).",
            f"Cramér's V = {fmt_num(cramers_v, 3)}（{effect_label(cramers_v, 'r', ctx)}关联）。",
        )
    )
    related = p < alpha
    interpretation = ctx.t(
        f"{x_column} and {y_column} {'are related' if related else 'look unrelated'}: "
        + p_sentence(p, alpha, ctx, "relationship"),
        f"{x_column} 与 {y_column} {'存在关联' if related else '看起来没有关联'}："
        + p_sentence(p, alpha, ctx, "relationship"),
    )
    if related and cells:
        a, b, o, e = cells[0]
        interpretation += ctx.t(
            f" The biggest gap: {a} with {b} ({int(o)} seen, {fmt_num(e, 3)} expected).",
            f" 差距最大的是 {a} 与 {b}（实际 {int(o)}，预期 {fmt_num(e, 3)}）。",
        )
    if dropped:
        interpretation += ctx.t(
            f" {dropped} rows with a missing value were left out.", f" 有 {dropped} 行因缺失值被排除。"
        )
    stat_line = f"odds ratio = {fmt_num(stat, 4)}" if method == "fisher" else f"X² = {fmt_num(stat, 5)}, df = {dof}"
    conclusion = ctx.t(
        f"{stat_line}, {fmt_p(p)} — {significance_word(p, alpha, ctx)}.",
        f"{stat_line}，{fmt_p(p)} —— {significance_word(p, alpha, ctx)}。",
    )
    profile = f"{x_column} × {y_column} ({r}x{c}, n = {n})\n" + table.to_string()
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
        table=table.reset_index(),
        payload={"dropped_rows": dropped, "significant": related},
    )


def _driving_cells(observed: np.ndarray, expected: np.ndarray, table: pd.DataFrame, n: int) -> list[tuple]:
    """The cells with the largest adjusted standardized residuals (which combinations drive the result)."""
    row_share = observed.sum(axis=1, keepdims=True) / n
    col_share = observed.sum(axis=0, keepdims=True) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        adjusted = (observed - expected) / np.sqrt(expected * (1 - row_share) * (1 - col_share))
    order = np.argsort(-np.nan_to_num(np.abs(adjusted)), axis=None)[:3]
    out = []
    for flat in order:
        i, j = divmod(int(flat), observed.shape[1])
        if abs(adjusted[i, j]) >= 2:
            out.append((table.index[i], table.columns[j], observed[i, j], expected[i, j]))
    return out


# ---------------------------------------------------------------- proportions


def proportion_test(
    data: pd.DataFrame,
    value_column: str,
    group_column: str | None = None,
    success_value: str | None = None,
    p0: float = 0.5,
    alpha: float = 0.05,
    weight_column: str | None = None,
    failures_column: str | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Test a success rate (conversion, churn, defect rate), the share of yes answers in a yes/no column: one proportion against a target value, or whether the rate differs between groups (z / chi-square test, Wilson confidence intervals).

    Args:
        value_column: The yes/no column whose rate is tested (e.g. converted); 1/true/yes count as success unless success_value says otherwise.
        group_column: Optional column splitting rows into groups whose rates are compared (e.g. A/B variant).
        success_value: The value that counts as success when the column is not plain yes/no (e.g. "churned").
        p0: The rate to test against when there is no group column (e.g. 0.05 for a 5% target).
        alpha: Significance level, usually 0.05.
        weight_column: For a count table (one row per combination): the column saying how many cases each row stands for (e.g. Freq, n, count).
        failures_column: For counts of both outcomes on each row (e.g. ncases and ncontrols): value_column is then the number of successes and this column the number of failures.
    """
    ctx = ctx or ToolContext()
    if not 0 < p0 < 1:
        raise ToolError(
            "invalid_arguments",
            ctx.t("p0 must be between 0 and 1 (a rate, e.g. 0.05).", "p0 必须在 0 和 1 之间（如 0.05）。"),
            hint=ctx.t("Write percentages as fractions: 5% -> 0.05.", "百分比请写成小数：5% -> 0.05。"),
        )
    if failures_column:  # each row counts successes and failures: one row per outcome, weighed by its count
        successes, failures = row_weights(data, value_column, ctx), row_weights(data, failures_column, ctx)
        outcome = pd.Series(np.r_[np.ones(len(data)), np.zeros(len(data))])
        weights = pd.Series(np.r_[successes.to_numpy(), failures.to_numpy()])
        success = value_column
        data = pd.concat([data, data], ignore_index=True)
    else:
        outcome, success = binary_values(data, value_column, success_value, ctx)
        weights = row_weights(data, weight_column, ctx)
    if group_column is None:
        return _one_proportion(outcome, weights, value_column, success, p0, alpha, ctx)
    return _group_proportions(outcome, weights, data[group_column], value_column, group_column, success, alpha, ctx)


def _one_proportion(
    outcome: pd.Series, weights: pd.Series, column: str, success: str, p0: float, alpha: float, ctx: ToolContext
) -> ToolResult:
    present = outcome.notna()
    x, w = outcome[present], weights[present]
    n, k = int(round(float(w.sum()))), float((x * w).sum())
    if n < 1:
        raise ToolError(
            "insufficient_data",
            ctx.t(f"{column!r} has no usable values.", f"{column!r} 没有可用值。"),
            hint=ctx.t("Choose another column.", "请换一列。"),
        )
    phat = k / n
    z = (phat - p0) / math.sqrt(p0 * (1 - p0) / n)
    p = float(2 * sps.norm.sf(abs(z)))
    low, high = wilson_interval(k, n)
    h = 2 * math.asin(math.sqrt(phat)) - 2 * math.asin(math.sqrt(p0))
    metrics = {
        "n": n,
        "successes": int(k),
        "proportion": phat,
        "p0": p0,
        "statistic": z,
        "chi_square": z * z,
        "p_value": p,
        "ci_low": low,
        "ci_high": high,
        "effect_size": h,
        "effect_size_name": "cohen_h",
        "method": "one_proportion_z",
        "alpha": alpha,
    }
    method = ctx.t(
        "One-sample z-test for a proportion (= R prop.test without continuity correction); Wilson 95% interval.",
        "单样本比例 z 检验（即 R prop.test 不做连续性校正）；Wilson 95% 区间。",
    )
    assumptions = [
        ctx.t(
            f"Expected successes {fmt_num(n * p0)} and failures {fmt_num(n * (1 - p0))} (both should be at least 5).",
            f"期望成功 {fmt_num(n * p0)} 次、失败 {fmt_num(n * (1 - p0))} 次（都应至少为 5）。",
        )
    ]
    limitations = []
    if min(n * p0, n * (1 - p0)) < 5:
        exact = float(sps.binomtest(int(k), n, p0).pvalue)
        metrics["p_value_exact"] = exact
        limitations.append(
            ctx.t(
                f"Few expected successes/failures: the exact binomial test gives {fmt_p(exact)}.",
                f"期望成功/失败次数少：精确二项检验给出 {fmt_p(exact)}。",
            )
        )
    interpretation = ctx.t(
        f"The rate of {column} = {success} is {phat:.1%} (95% CI {low:.1%} to {high:.1%}) against a reference of {p0:.1%}; "
        + p_sentence(p, alpha, ctx),
        f"{column} = {success} 的比例为 {phat:.1%}（95% 置信区间 {low:.1%} 至 {high:.1%}），参照值为 {p0:.1%}；"
        + p_sentence(p, alpha, ctx),
    )
    dropped = int((~present).sum())
    if dropped:
        interpretation += " " + dropped_note(dropped, ctx)
    text = tagged_text(
        data_profile=ctx.t(f"{int(k)} of {fmt_num(n)} rows are {success}.", f"{n} 行中有 {int(k)} 行为 {success}。"),
        method=method,
        assumptions=assumptions,
        conclusion=f"z = {fmt_num(z, 5)}, {fmt_p(p)} — {significance_word(p, alpha, ctx)}; Cohen's h = {fmt_num(h, 3)}.",
        interpretation=interpretation,
    )
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=n,
        limitations=limitations,
        payload={"dropped_rows": dropped, "success": success},
    )


def _group_proportions(
    outcome: pd.Series,
    weights: pd.Series,
    groups: pd.Series,
    column: str,
    group_column: str,
    success: str,
    alpha: float,
    ctx: ToolContext,
) -> ToolResult:
    frame = pd.DataFrame({"y": outcome, "g": groups, "w": weights}).dropna()
    dropped = len(outcome) - len(frame)
    frame["g"] = labels_of(frame["g"])
    frame["yw"] = frame["y"] * frame["w"]  # successes: a count table's row stands for w cases
    stats = frame.groupby("g", sort=True)[["yw", "w"]].sum().rename(columns={"yw": "sum", "w": "count"})
    stats = stats[stats["count"] > 0]
    if len(stats) < 2:
        raise ToolError(
            "wrong_group_count",
            ctx.t(
                f"{group_column!r} has fewer than two groups with data.", f"{group_column!r} 中有数据的分组少于两个。"
            ),
            hint=ctx.t(
                "Choose a column with at least two groups, or omit group_column to test one rate.",
                "请选择至少两个分组的列，或省略 group_column 做单比例检验。",
            ),
        )
    if len(stats) > _MAX_LEVELS:
        raise ToolError(
            "wrong_column_type",
            ctx.t(
                f"{group_column!r} has {len(stats)} groups, too many.",
                f"{group_column!r} 有 {len(stats)} 个分组，太多。",
            ),
            hint=ctx.t("Use a column with fewer groups.", "请使用分组更少的列。"),
        )
    k, n = stats["sum"].to_numpy(dtype=float), stats["count"].to_numpy(dtype=float)
    rates = k / n
    pooled = k.sum() / n.sum()
    observed = np.column_stack([k, n - k])
    expected = np.column_stack([n * pooled, n * (1 - pooled)])
    if pooled in (0.0, 1.0):
        raise ToolError(
            "constant_column",
            ctx.t(
                f"Every row has the same outcome in {column!r}; there is no rate difference to test.",
                f"{column!r} 所有行结果都相同，没有比例差异可检验。",
            ),
            hint=ctx.t("Check the column or success_value.", "请检查该列或 success_value。"),
            column=column,
        )
    chi2 = float(np.sum((observed - expected) ** 2 / expected))
    dof = len(stats) - 1
    p = float(sps.chi2.sf(chi2, dof))
    names = [str(g) for g in stats.index]
    metrics: dict = {
        "n": int(n.sum()),
        "k_groups": len(names),
        "chi_square": chi2,
        "df": dof,
        "p_value": p,
        "pooled_proportion": pooled,
        "alpha": alpha,
        "method": "two_proportion_z" if dof == 1 else "k_proportions_chi_square",
    }
    for g, kk, nn, rate in zip(names, k, n, rates):
        low, high = wilson_interval(kk, nn)
        metrics.update(
            {
                f"proportion.{g}": rate,
                f"n.{g}": int(nn),
                f"successes.{g}": int(kk),
                f"ci_low.{g}": low,
                f"ci_high.{g}": high,
            }
        )
    if dof == 1:
        diff = rates[0] - rates[1]
        z = diff / math.sqrt(pooled * (1 - pooled) * (1 / n[0] + 1 / n[1]))
        half = sps.norm.ppf(0.975) * math.sqrt(rates[0] * (1 - rates[0]) / n[0] + rates[1] * (1 - rates[1]) / n[1])
        h = 2 * math.asin(math.sqrt(rates[0])) - 2 * math.asin(math.sqrt(rates[1]))
        metrics.update(
            statistic=z,
            difference=diff,
            ci_low=diff - half,
            ci_high=diff + half,
            effect_size=h,
            effect_size_name="cohen_h",
        )
    else:
        metrics.update(statistic=chi2, effect_size=math.sqrt(chi2 / n.sum()), effect_size_name="cramers_v")
    method = ctx.t(
        "Test of equal proportions (two-proportion z-test / chi-square, = R prop.test without continuity correction); Wilson intervals per group.",
        "比例相等检验（两比例 z 检验 / 卡方，即 R prop.test 不做连续性校正）；各组 Wilson 区间。",
    )
    assumptions = [
        ctx.t(
            f"Smallest expected count {fmt_num(expected.min(), 3)} (should be at least 5).",
            f"最小期望频数 {fmt_num(expected.min(), 3)}（应至少为 5）。",
        )
    ]
    limitations = [ctx.t("Shows whether the rates differ, not why.", "只说明比例是否不同，不说明原因。")]
    if expected.min() < 5:
        limitations.append(
            ctx.t(
                "Small expected counts: the p-value is approximate; chi_square_test uses Fisher's exact test for 2x2 tables.",
                "期望频数小：p 值为近似；2x2 表可用 chi_square_test（Fisher 精确检验）。",
            )
        )
    hi, lo = int(np.argmax(rates)), int(np.argmin(rates))
    interpretation = ctx.t(
        f"The {column} = {success} rate is highest for {names[hi]} ({rates[hi]:.1%}) and lowest for {names[lo]} ({rates[lo]:.1%}); "
        + p_sentence(p, alpha, ctx),
        f"{column} = {success} 的比例在 {names[hi]} 最高（{rates[hi]:.1%}），在 {names[lo]} 最低（{rates[lo]:.1%}）；"
        + p_sentence(p, alpha, ctx),
    )
    if dropped:
        interpretation += " " + dropped_note(dropped, ctx)
    profile = "\n".join(f"{g}: {int(kk)}/{int(nn)} = {rate:.2%}" for g, kk, nn, rate in zip(names, k, n, rates))
    conclusion = f"X² = {fmt_num(chi2, 5)}, df = {dof}, {fmt_p(p)} — {significance_word(p, alpha, ctx)}."
    if dof == 1:
        conclusion += ctx.t(
            f" Difference {names[0]} - {names[1]} = {fmt_num(metrics['difference'], 4)} (95% CI {fmt_num(metrics['ci_low'], 4)} to {fmt_num(metrics['ci_high'], 4)}).",
            f" 差值 {names[0]} - {names[1]} = {fmt_num(metrics['difference'], 4)}（95% 置信区间 {fmt_num(metrics['ci_low'], 4)} 至 {fmt_num(metrics['ci_high'], 4)}）。",
        )
    text = tagged_text(
        data_profile=profile,
        method=method,
        assumptions=assumptions,
        conclusion=conclusion,
        interpretation=interpretation,
    )
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=int(n.sum()),
        limitations=limitations,
        table=stats.reset_index().rename(columns={"g": group_column, "sum": "successes", "count": "n"}),
        payload={"dropped_rows": dropped, "success": success, "significant": p < alpha},
    )
