"""Designed comparisons: paired measurements (paired t / Wilcoxon signed-rank) and two-way ANOVA."""

from __future__ import annotations

import math
import warnings
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
    fmt_num,
    fmt_p,
    p_sentence,
    require_numeric,
    significance_word,
    two_pass_mean,
)
from .stats_categorical import labels_of
from .stats_groups import SMALL_GROUP, _only_wanted

# ---------------------------------------------------------------- paired


def paired_test(
    data: pd.DataFrame,
    x_column: str | None = None,
    y_column: str | None = None,
    value_column: str | None = None,
    group_column: str | None = None,
    id_column: str | None = None,
    method: Literal["auto", "t", "wilcoxon"] = "auto",
    alpha: float = 0.05,
    groups: list[str] | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Compare two measurements on the same subjects (before/after, two conditions): paired t-test or Wilcoxon signed-rank, chosen by the normality of the differences, with effect size and confidence interval.

    Args:
        x_column: Wide form: the first measurement (e.g. sales_before); the difference is x - y.
        y_column: Wide form: the second measurement on the same row (e.g. sales_after).
        value_column: Long form: the numeric measurement column.
        group_column: Long form: the column saying which of the two conditions a row belongs to.
        id_column: Long form: the subject id that pairs the two rows.
        method: auto (paired t unless the differences are non-normal in a small sample, then Wilcoxon), t or wilcoxon.
        alpha: Significance level, usually 0.05.
        groups: Long form: the two conditions to compare when the group column has more; the difference is first - second.
    """
    ctx = ctx or ToolContext()
    if x_column and y_column:
        a, b = require_numeric(data, x_column, ctx), require_numeric(data, y_column, ctx)
        keep = a.notna() & b.notna()
        d = (a[keep] - b[keep]).to_numpy(dtype=float)
        names, dropped = (x_column, y_column), int((~keep).sum())
    elif value_column and group_column and id_column:
        d, names, dropped = _long_differences(data, value_column, group_column, id_column, groups, ctx)
    else:
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                "Give x_column and y_column (two measurements per row), or value_column, group_column and id_column (one row per measurement).",
                "请给出 x_column 和 y_column（每行两次测量），或 value_column、group_column 和 id_column（每次测量一行）。",
            ),
            hint=ctx.t(
                "Wide: x_column='before', y_column='after'. Long: value_column='extra', group_column='group', id_column='ID'.",
                "宽格式：x_column='before', y_column='after'；长格式：value_column='extra', group_column='group', id_column='ID'。",
            ),
        )
    n = len(d)
    check_n(n, 2, ctx.t("a paired test (pairs)", "配对检验（配对数）"), ctx)
    if np.ptp(d) == 0:
        raise ToolError(
            "constant_column",
            ctx.t(
                f"Every pair differs by exactly {fmt_num(d[0])}; a test of the difference is undefined.",
                f"每一对的差值都正好是 {fmt_num(d[0])}，无法检验差异。",
            ),
            hint=ctx.t("Check that the two measurements are the right columns.", "请确认两次测量的列是否正确。"),
        )
    normal_p = float("nan")
    if 3 <= n <= 5000:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            normal_p = float(sps.shapiro(d).pvalue)
    chosen = method
    if method == "auto":
        chosen = "wilcoxon" if normal_p == normal_p and normal_p < alpha and n < SMALL_GROUP else "t"
    mean_d = float(np.mean(d))
    sd_d = float(np.std(d, ddof=1))
    se = sd_d / math.sqrt(n)
    tcrit = float(sps.t.ppf(0.975, n - 1))
    metrics: dict = {
        "n": n,
        "mean_difference": mean_d,
        "median_difference": float(np.median(d)),
        "sd_difference": sd_d,
        "ci_low": mean_d - tcrit * se,
        "ci_high": mean_d + tcrit * se,
        "shapiro_p_difference": normal_p,
        "alpha": alpha,
        "method": chosen,
        "n_positive": int(np.sum(d > 0)),
        "n_negative": int(np.sum(d < 0)),
    }
    if chosen == "t":
        t = mean_d / se
        p = float(2 * sps.t.sf(abs(t), n - 1))
        dz = mean_d / sd_d
        metrics.update(statistic=t, p_value=p, df=n - 1, effect_size=dz, effect_size_name="cohen_dz")
        stat_line = f"t = {fmt_num(t, 5)}, df = {n - 1}"
        effect_text = f"Cohen's d_z = {fmt_num(dz, 3)} ({effect_label(dz, 'd', ctx)})"
        method_text = ctx.t("Paired t-test on the differences (two-sided).", "对差值做配对 t 检验（双侧）。")
    else:
        nonzero = d[d != 0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # as R's wilcox.test: exact below 50 pairs without ties or zeros, else normal approximation
            # with continuity correction (tie-corrected variance)
            ties = len(np.unique(np.abs(nonzero))) < len(nonzero)
            exact = len(nonzero) < 50 and not ties and len(nonzero) == n
            res = sps.wilcoxon(nonzero, method="exact" if exact else "asymptotic", correction=not exact)
        ranks = sps.rankdata(np.abs(nonzero))
        w_plus, w_minus = float(ranks[nonzero > 0].sum()), float(ranks[nonzero < 0].sum())
        r = (w_plus - w_minus) / (w_plus + w_minus)
        p = float(res.pvalue)
        metrics.update(
            statistic=w_plus,
            p_value=p,
            effect_size=r,
            effect_size_name="rank_biserial",
            zero_differences=int(n - len(nonzero)),
        )
        stat_line = f"V = {fmt_num(w_plus, 6)}"
        effect_text = ctx.t(
            f"matched-pairs rank-biserial r = {fmt_num(r, 3)} ({effect_label(r, 'r', ctx)})",
            f"配对秩二列相关 r = {fmt_num(r, 3)}（{effect_label(r, 'r', ctx)}）",
        )
        method_text = ctx.t(
            f"Wilcoxon signed-rank test on the differences ({'exact' if exact else 'normal approximation with continuity correction'}; "
            "does not assume normality; zero differences dropped, as R's wilcox.test).",
            f"对差值做 Wilcoxon 符号秩检验（{'精确' if exact else '连续性校正的正态近似'}；不要求正态；与 R 的 wilcox.test 一样排除差值为 0 的配对）。",
        )
    assumptions = [
        ctx.t(
            f"Normality of the differences (Shapiro-Wilk): {fmt_p(normal_p)}.",
            f"差值正态性（Shapiro-Wilk）：{fmt_p(normal_p)}。",
        )
        if normal_p == normal_p
        else ctx.t("Normality of the differences not testable.", "无法检验差值正态性。")
    ]
    if method == "auto" and chosen == "wilcoxon":
        assumptions.append(
            ctx.t(
                "Differences are not normal and pairs are few, so the rank test was used.",
                "差值不服从正态且配对较少，因此改用秩检验。",
            )
        )
    limitations = [
        ctx.t(
            "Pairs must be the same subject measured twice; the test says whether values changed, not why.",
            "配对必须是同一对象的两次测量；检验只说明是否变化，不说明原因。",
        )
    ]
    if n < 10:
        limitations.append(ctx.t("Few pairs: only large changes can be detected.", "配对较少：只能发现较大的变化。"))
    direction = ctx.t("higher" if mean_d > 0 else "lower", "更高" if mean_d > 0 else "更低")
    interpretation = ctx.t(
        f"On average {names[0]} is {fmt_num(abs(mean_d))} {direction} than {names[1]} for the same subject "
        f"({names[0]} is higher in {metrics['n_positive']} of {n} pairs); " + p_sentence(p, alpha, ctx),
        f"对同一对象而言，{names[0]} 平均比 {names[1]} {direction} {fmt_num(abs(mean_d))}"
        f"（{n} 对中有 {metrics['n_positive']} 对 {names[0]} 更高）；" + p_sentence(p, alpha, ctx),
    )
    if dropped:
        interpretation += " " + dropped_note(dropped, ctx)
    conclusion = ctx.t(
        f"{stat_line}, {fmt_p(p)} — {significance_word(p, alpha, ctx)}. Mean difference {fmt_num(mean_d)} "
        f"(95% CI {fmt_num(metrics['ci_low'])} to {fmt_num(metrics['ci_high'])}); {effect_text}.",
        f"{stat_line}，{fmt_p(p)} —— {significance_word(p, alpha, ctx)}。平均差 {fmt_num(mean_d)}"
        f"（95% 置信区间 {fmt_num(metrics['ci_low'])} 至 {fmt_num(metrics['ci_high'])}）；{effect_text}。",
    )
    profile = ctx.t(
        f"{n} pairs; difference = {names[0]} - {names[1]}: mean {fmt_num(mean_d)}, sd {fmt_num(sd_d)}.",
        f"{n} 对；差值 = {names[0]} - {names[1]}：均值 {fmt_num(mean_d)}，标准差 {fmt_num(sd_d)}。",
    )
    text = tagged_text(
        data_profile=profile + (" " + dropped_note(dropped, ctx) if dropped else ""),
        method=method_text,
        assumptions=assumptions,
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
        payload={"dropped_rows": dropped, "pair": list(names), "significant": p < alpha},
    )


def _long_differences(
    data: pd.DataFrame, value_column: str, group_column: str, id_column: str, groups: list[str] | None, ctx: ToolContext
) -> tuple[np.ndarray, tuple[str, str], int]:
    values = require_numeric(data, value_column, ctx)
    frame = pd.DataFrame({"v": values, "g": data[group_column], "id": data[id_column]}).dropna()
    dropped = len(data) - len(frame)
    frame["g"] = labels_of(frame["g"])
    frame["id"] = labels_of(frame["id"])
    present = sorted(frame["g"].unique(), key=_level_key)
    if groups:
        present = list(_only_wanted({g: None for g in present}, groups, group_column, ctx))
    if len(present) != 2:
        raise ToolError(
            "wrong_group_count",
            ctx.t(
                f"{group_column!r} has {len(present)} conditions; a paired test needs exactly two.",
                f"{group_column!r} 有 {len(present)} 个条件，配对检验需要恰好两个。",
            ),
            hint=ctx.t(f"Pass groups=[two of {present[:10]}].", f"请用 groups 指定其中两个（{present[:10]}）。"),
            groups=present[:50],
        )
    frame = frame[frame["g"].isin(present)]
    duplicated = frame.duplicated(["id", "g"])
    if duplicated.any():
        example = frame.loc[duplicated, "id"].iloc[0]
        raise ToolError(
            "duplicate_ids",
            ctx.t(
                f"Subject {example!r} has more than one {present[0]}/{present[1]} row; pairs must be one-to-one.",
                f"对象 {example!r} 在同一条件下有多行；配对必须一一对应。",
            ),
            hint=ctx.t(
                "Aggregate to one row per subject and condition first (group_aggregate).",
                "请先按对象和条件汇总成一行（group_aggregate）。",
            ),
        )
    wide = frame.pivot(index="id", columns="g", values="v")
    complete = wide.dropna()
    dropped += int(wide.notna().sum().sum() - 2 * len(complete))  # rows whose partner is missing
    d = (complete[present[0]] - complete[present[1]]).to_numpy(dtype=float)
    return d, (f"{group_column} {present[0]}", f"{group_column} {present[1]}"), dropped


def _level_key(v: str):
    try:
        return (0, float(v), v)
    except ValueError:
        return (1, 0.0, v)


# ---------------------------------------------------------------- two-way ANOVA


def two_way_anova(
    data: pd.DataFrame,
    value_column: str,
    factor_columns: list[str],
    interaction: bool = True,
    alpha: float = 0.05,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Test how two categorical factors (and their interaction) affect a numeric value: two-way ANOVA with type II sums of squares, partial eta squared and cell means.

    Args:
        value_column: The numeric column to explain (e.g. sales).
        factor_columns: Exactly two categorical columns (e.g. ["region", "promotion"]).
        interaction: Whether to test whether the effect of one factor depends on the other.
        alpha: Significance level, usually 0.05.
    """
    ctx = ctx or ToolContext()
    factors = list(dict.fromkeys(factor_columns))
    if len(factors) != 2 or value_column in factors:
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                "factor_columns must name exactly two different categorical columns (not the value column).",
                "factor_columns 必须是两个不同的分类列（不能是数值列本身）。",
            ),
            hint=ctx.t("For one factor use compare_groups.", "只有一个因素时请用 compare_groups。"),
        )
    values = require_numeric(data, value_column, ctx)
    frame = pd.DataFrame({"v": values, "a": data[factors[0]], "b": data[factors[1]]}).dropna()
    dropped = len(data) - len(frame)
    frame["a"], frame["b"] = labels_of(frame["a"]), labels_of(frame["b"])
    check_n(len(frame), 4, ctx.t("a two-way ANOVA", "双因素方差分析"), ctx)
    for key, name in (("a", factors[0]), ("b", factors[1])):
        levels = frame[key].nunique()
        if levels < 2 or levels > 50:
            raise ToolError(
                "wrong_group_count",
                ctx.t(
                    f"{name!r} has {levels} levels; a factor needs 2 to 50.",
                    f"{name!r} 有 {levels} 个水平，因素需要 2 到 50 个。",
                ),
                hint=ctx.t("Choose a categorical column with a few levels.", "请选择水平较少的分类列。"),
                column=name,
            )
    if np.ptp(frame["v"].to_numpy()) == 0:
        raise ToolError(
            "constant_column",
            ctx.t(f"{value_column!r} is constant.", f"{value_column!r} 是常数。"),
            hint=ctx.t("Choose a value column that varies.", "请选择有变化的数值列。"),
            column=value_column,
        )
    cells = frame.groupby(["a", "b"])["v"].agg(["count", "mean", "std"])
    notes = []
    full = frame["a"].nunique() * frame["b"].nunique()
    if interaction and (len(cells) < full or cells["count"].max() < 2):
        interaction = False
        notes.append(
            ctx.t(
                "Some factor combinations are empty or have a single row, so the interaction cannot be tested; an additive model was fitted.",
                "部分因素组合没有数据或只有一行，无法检验交互作用，改用可加模型。",
            )
        )
    table = _anova_table(frame, interaction)
    return _two_way_result(table, cells, frame, factors, value_column, interaction, alpha, dropped, notes, ctx)


def _anova_table(frame: pd.DataFrame, interaction: bool) -> pd.DataFrame:
    """Type II sums of squares from residual sums of squares of nested models, all O(n) and vectorised:
    SS(A | B) = RSS(B) - RSS(A + B), SS(B | A) = RSS(A) - RSS(A + B), SS(AB) = RSS(A + B) - RSS(A * B).
    RSS(A), RSS(B) and RSS(A * B) are within-group sums of squares; RSS(A + B) solves the small normal
    equations built from cell counts, with one step of iterative refinement. The response is centred first."""
    y = frame["v"].to_numpy(dtype=float)
    y = y - float(two_pass_mean(y))
    a, levels_a = pd.factorize(frame["a"])
    b, levels_b = pd.factorize(frame["b"])
    na, nb = len(levels_a), len(levels_b)
    cells = a * nb + b
    rss_a, rss_b = _within(y, a)[0], _within(y, b)[0]
    rss_full, resid_full = _within(y, cells)
    resid_add = _additive_residuals(y, a, b, na, nb)
    rss_add = float(resid_add @ resid_add)
    n = len(y)
    if interaction:
        terms = {
            "C(a)": (rss_b - rss_add, na - 1),
            "C(b)": (rss_a - rss_add, nb - 1),
            "C(a):C(b)": (rss_add - rss_full, (na - 1) * (nb - 1)),
        }
        rss, df_resid, resid = rss_full, n - len(np.unique(cells)), resid_full
    else:
        terms = {"C(a)": (rss_b - rss_add, na - 1), "C(b)": (rss_a - rss_add, nb - 1)}
        rss, df_resid, resid = rss_add, n - na - nb + 1, resid_add
    rows = {}
    for name, (ss, df) in terms.items():
        ss = max(ss, 0.0)
        f = (ss / df) / (rss / df_resid) if rss > 0 and df_resid > 0 else float("nan")
        rows[name] = {
            "sum_sq": ss,
            "df": float(df),
            "F": f,
            "PR(>F)": float(sps.f.sf(f, df, df_resid)) if f == f else float("nan"),
        }
    rows["Residual"] = {"sum_sq": rss, "df": float(df_resid), "F": float("nan"), "PR(>F)": float("nan")}
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.attrs["resid"] = resid
    return out


def _within(y: np.ndarray, codes: np.ndarray) -> tuple[float, np.ndarray]:
    """Residual sum of squares (and residuals) around group means."""
    counts = np.bincount(codes)
    means = np.bincount(codes, weights=y) / np.maximum(counts, 1)
    resid = y - means[codes]
    resid = resid - (np.bincount(codes, weights=resid) / np.maximum(counts, 1))[codes]  # second pass
    return float(resid @ resid), resid


def _additive_residuals(y: np.ndarray, a: np.ndarray, b: np.ndarray, na: int, nb: int) -> np.ndarray:
    """Residuals of y ~ A + B (treatment coding) from the (na + nb - 1)-square normal equations."""
    counts = np.bincount(a * nb + b, minlength=na * nb).reshape(na, nb).astype(float)
    xtx = np.zeros((na + nb - 1, na + nb - 1))
    xtx[0, 0] = counts.sum()
    xtx[0, 1:na] = xtx[1:na, 0] = counts.sum(axis=1)[1:]
    xtx[0, na:] = xtx[na:, 0] = counts.sum(axis=0)[1:]
    xtx[1:na, 1:na] = np.diag(counts.sum(axis=1)[1:])
    xtx[na:, na:] = np.diag(counts.sum(axis=0)[1:])
    xtx[1:na, na:] = counts[1:, 1:]
    xtx[na:, 1:na] = counts[1:, 1:].T

    def xty(r: np.ndarray) -> np.ndarray:
        return np.concatenate(
            [[r.sum()], np.bincount(a, weights=r, minlength=na)[1:], np.bincount(b, weights=r, minlength=nb)[1:]]
        )

    def fitted(beta: np.ndarray) -> np.ndarray:
        alpha = np.concatenate([[0.0], beta[1:na]])
        gamma = np.concatenate([[0.0], beta[na:]])
        return beta[0] + alpha[a] + gamma[b]

    beta = np.linalg.lstsq(xtx, xty(y), rcond=None)[0]
    resid = y - fitted(beta)
    beta = beta + np.linalg.lstsq(xtx, xty(resid), rcond=None)[0]  # iterative refinement
    return y - fitted(beta)


def _two_way_result(
    table: pd.DataFrame,
    cells: pd.DataFrame,
    frame: pd.DataFrame,
    factors: list[str],
    value_column: str,
    interaction: bool,
    alpha: float,
    dropped: int,
    notes: list[str],
    ctx: ToolContext,
) -> ToolResult:
    term_names = {"C(a)": factors[0], "C(b)": factors[1], "C(a):C(b)": f"{factors[0]}:{factors[1]}"}
    ss_within, df_within = float(table.loc["Residual", "sum_sq"]), float(table.loc["Residual", "df"])
    n = len(frame)
    metrics: dict = {
        "n": n,
        "df_within": df_within,
        "ss_within": ss_within,
        "alpha": alpha,
        "method": "two_way_anova_type2",
        "interaction_tested": int(interaction),
    }
    rows, lines = [], []
    for raw, name in term_names.items():
        if raw not in table.index:
            continue
        ss, df, f, p = (float(table.loc[raw, c]) for c in ("sum_sq", "df", "F", "PR(>F)"))
        peta = ss / (ss + ss_within) if ss + ss_within > 0 else float("nan")
        metrics.update(
            {
                f"f_statistic.{name}": f,
                f"p_value.{name}": p,
                f"df.{name}": df,
                f"ss.{name}": ss,
                f"partial_eta_squared.{name}": peta,
            }
        )
        rows.append({"term": name, "df": df, "sum_sq": ss, "f_statistic": f, "p_value": p, "partial_eta_squared": peta})
        lines.append(
            ctx.t(
                f"{name}: F({fmt_num(df, 3)}, {fmt_num(df_within, 4)}) = {fmt_num(f, 5)}, {fmt_p(p)}, partial eta² = {fmt_num(peta, 3)} ({effect_label(peta, 'eta2', ctx)}) — {significance_word(p, alpha, ctx)}",
                f"{name}：F({fmt_num(df, 3)}, {fmt_num(df_within, 4)}) = {fmt_num(f, 5)}，{fmt_p(p)}，偏 eta² = {fmt_num(peta, 3)}（{effect_label(peta, 'eta2', ctx)}）—— {significance_word(p, alpha, ctx)}",
            )
        )
    resid = table.attrs["resid"]
    assumptions = list(notes)
    if 3 <= n <= 5000:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sp = float(sps.shapiro(resid).pvalue)
        metrics["shapiro_p_residuals"] = sp
        assumptions.append(
            ctx.t(f"Residual normality (Shapiro-Wilk): {fmt_p(sp)}.", f"残差正态性（Shapiro-Wilk）：{fmt_p(sp)}。")
        )
    groups = [g["v"].to_numpy() for _, g in frame.groupby(["a", "b"]) if len(g) >= 2]
    if len(groups) >= 2:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lp = float(sps.levene(*groups, center="median").pvalue)
        metrics["levene_p"] = lp
        assumptions.append(
            ctx.t(f"Equal variances across cells (Levene): {fmt_p(lp)}.", f"各单元方差齐性（Levene）：{fmt_p(lp)}。")
        )
    balanced = cells["count"].nunique() == 1
    assumptions.append(
        ctx.t(
            "Balanced design (equal cell sizes)."
            if balanced
            else "Unbalanced design: type II sums of squares (each factor adjusted for the other).",
            "平衡设计（各单元样本量相同）。"
            if balanced
            else "非平衡设计：使用 II 型平方和（每个因素都控制另一个因素）。",
        )
    )
    limitations = [
        ctx.t(
            "Shows which factors go with differences in the average, not why.",
            "只说明哪些因素与均值差异有关，不说明原因。",
        )
    ]
    if metrics.get("levene_p", 1) < alpha:
        limitations.append(
            ctx.t(
                "Cell variances differ; F-tests may be unreliable for unbalanced designs.",
                "各单元方差不等；非平衡设计下 F 检验可能不可靠。",
            )
        )
    inter_name = f"{factors[0]}:{factors[1]}"
    inter_sig = interaction and metrics.get(f"p_value.{inter_name}", 1) < alpha
    if inter_sig:
        limitations.append(
            ctx.t(
                "The interaction is significant: a factor's main effect depends on the other factor's level, so read the cell means.",
                "交互作用显著：一个因素的作用取决于另一个因素的水平，请看各组合的均值。",
            )
        )
    sig = [factors[i] for i in (0, 1) if metrics.get(f"p_value.{factors[i]}", 1) < alpha]
    best = cells["mean"].idxmax()
    interpretation = ctx.t(
        (
            f"{' and '.join(sig)} make{'s' if len(sig) == 1 else ''} a real difference to average {value_column}"
            if sig
            else f"Neither {factors[0]} nor {factors[1]} clearly changes average {value_column}"
        )
        + (", and the effect of one depends on the other" if inter_sig else "")
        + f". The highest average is for {factors[0]} = {best[0]} with {factors[1]} = {best[1]} ({fmt_num(cells.loc[best, 'mean'])}).",
        (
            f"{'和'.join(sig)} 对平均 {value_column} 有实际影响"
            if sig
            else f"{factors[0]} 和 {factors[1]} 都没有明显改变平均 {value_column}"
        )
        + ("，并且一个因素的作用取决于另一个" if inter_sig else "")
        + f"。平均值最高的组合是 {factors[0]} = {best[0]}、{factors[1]} = {best[1]}（{fmt_num(cells.loc[best, 'mean'])}）。",
    )
    if dropped:
        interpretation += " " + dropped_note(dropped, ctx)
    cell_lines = [
        f"{factors[0]}={a}, {factors[1]}={b}: n={int(r['count'])}, mean {fmt_num(r['mean'])}"
        for (a, b), r in cells.head(30).iterrows()
    ]
    method = ctx.t(
        "Two-way ANOVA, type II sums of squares (nested least-squares models"
        + (", with interaction)." if interaction else ", additive)."),
        "双因素方差分析，II 型平方和（嵌套最小二乘模型" + ("，含交互作用）。" if interaction else "，可加模型）。"),
    )
    text = tagged_text(
        data_profile="\n".join(cell_lines) + ("\n" + dropped_note(dropped, ctx) if dropped else ""),
        method=method,
        assumptions=assumptions,
        conclusion="\n".join(lines),
        interpretation=interpretation,
    )
    cell_table = cells.reset_index().rename(columns={"a": factors[0], "b": factors[1]})
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=n,
        limitations=limitations,
        table=pd.DataFrame(rows),
        payload={"cell_means": cell_table.to_dict("records"), "dropped_rows": dropped},
    )
