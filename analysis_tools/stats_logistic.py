"""Logistic regression for a yes/no outcome (statsmodels Logit), reported as odds ratios."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from scipy import stats as sps

from .base import ToolContext, ToolError, ToolResult, tagged_text
from .common import check_n, clean_metrics, dropped_note, fmt_num, fmt_p, numeric_columns, p_sentence
from .stats_categorical import binary_values
from .stats_models import _design


def logistic_regression(
    data: pd.DataFrame,
    target_column: str,
    feature_columns: list[str],
    success_value: str | None = None,
    alpha: float = 0.05,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Model a yes/no outcome (bought, churned, defaulted) from features with logistic regression: odds ratios with confidence intervals, p-values, pseudo R² and accuracy.

    Args:
        target_column: The binary outcome column (0/1, yes/no, or two labels; the second label in sorted order is the event unless success_value says otherwise).
        feature_columns: Columns used to explain the outcome; text columns become dummy variables (first level is the reference).
        success_value: The value of the target that counts as the event (e.g. "churned").
        alpha: Significance level for the coefficient tests.
    """
    ctx = ctx or ToolContext()
    features = [f for f in dict.fromkeys(feature_columns) if f != target_column]
    if not features:
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                "Give at least one feature column different from the target.", "请至少给出一个不同于目标列的特征列。"
            ),
            hint=ctx.t(f"Candidates: {numeric_columns(data)[:10]}", f"候选列：{numeric_columns(data)[:10]}"),
        )
    y_all, event = binary_values(data, target_column, success_value, ctx, second_level=True)
    design, terms, notes, _references = _design(data, features, target_column, ctx)
    frame = pd.concat([y_all.rename("__y__"), design], axis=1).dropna()
    dropped = len(data) - len(frame)
    n = len(frame)
    check_n(n, len(terms) + 2, ctx.t("this logistic regression", "这个逻辑回归"), ctx)
    y = frame["__y__"].to_numpy(dtype=float)
    events = int(y.sum())
    if events == 0 or events == n:
        raise ToolError(
            "constant_column",
            ctx.t(
                f"{target_column!r} has only one outcome in the usable rows; there is nothing to model.",
                f"{target_column!r} 在可用行中只有一种结果，无法建模。",
            ),
            hint=ctx.t("Check the target column or success_value.", "请检查目标列或 success_value。"),
            column=target_column,
        )
    X = frame[terms].to_numpy(dtype=float)
    constant = [t for t, col in zip(terms, X.T) if np.ptp(col) == 0]
    if constant:
        raise ToolError(
            "constant_column",
            ctx.t(f"Feature(s) {constant} are constant.", f"特征 {constant} 是常数。"),
            hint=ctx.t("Remove them and retry.", "请去掉它们后重试。"),
        )
    fit = _fit(X, y, terms, ctx)
    return _result(fit, X, y, terms, target_column, event, alpha, dropped, notes, ctx)


def _fit(X: np.ndarray, y: np.ndarray, terms: list[str], ctx: ToolContext):
    import statsmodels.api as sm

    exog = sm.add_constant(X, has_constant="add")
    if np.linalg.matrix_rank(exog) < exog.shape[1]:
        raise ToolError(
            "collinear_features",
            ctx.t(
                "Some features are exact combinations of others, so their effects cannot be separated.",
                "部分特征与其他特征完全共线，无法分离影响。",
            ),
            hint=ctx.t("Remove a redundant feature and retry.", "请去掉冗余特征后重试。"),
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = sm.Logit(y, exog).fit(method="newton", maxiter=100, tol=1e-12, disp=False)
        except (np.linalg.LinAlgError, ValueError) as exc:
            raise ToolError(
                "fit_failed",
                ctx.t(f"The logistic model could not be fitted ({exc}).", f"逻辑回归无法拟合（{exc}）。"),
                hint=ctx.t("Use fewer features or more rows.", "请减少特征或增加数据。"),
            ) from None
    separated = any("separation" in str(w.message).lower() for w in caught)
    probs = fit.predict(exog)
    if separated or np.all((probs < 1e-8) | (probs > 1 - 1e-8)) or not np.all(np.isfinite(fit.bse)):
        raise ToolError(
            "perfect_separation",
            ctx.t(
                "A feature (or combination) predicts the outcome perfectly, so the odds ratios are infinite and cannot be estimated.",
                "某个特征（或组合）能完全预测结果，优势比为无穷大，无法估计。",
            ),
            hint=ctx.t(
                "Remove the feature that gives the answer away, or describe the split with value_counts.",
                "请去掉“泄露答案”的特征，或用 value_counts 描述这种划分。",
            ),
        )
    return fit


def _result(
    fit,
    X: np.ndarray,
    y: np.ndarray,
    terms: list[str],
    target: str,
    event: str,
    alpha: float,
    dropped: int,
    notes: list[str],
    ctx: ToolContext,
) -> ToolResult:
    n = len(y)
    names = ["const"] + terms
    coef, se = np.asarray(fit.params), np.asarray(fit.bse)
    z = coef / se
    pvals = 2 * sps.norm.sf(np.abs(z))
    zcrit = sps.norm.ppf(1 - 0.05 / 2)
    probs = np.asarray(fit.predict())
    accuracy = float(np.mean((probs >= 0.5) == (y == 1)))
    auc = _auc(probs, y)
    metrics: dict = {
        "method": "logit",
        "n": n,
        "events": int(y.sum()),
        "event": event,
        "pseudo_r_squared": float(fit.prsquared),
        "log_likelihood": float(fit.llf),
        "llr_p_value": float(fit.llr_pvalue),
        "p_value": float(fit.llr_pvalue),
        "aic": float(fit.aic),
        "accuracy": accuracy,
        "auc": auc,
        "effect_size": auc,
        "effect_size_name": "auc",
    }
    rows = []
    for i, name in enumerate(names):
        odds, low, high = math.exp(coef[i]), math.exp(coef[i] - zcrit * se[i]), math.exp(coef[i] + zcrit * se[i])
        metrics.update(
            {
                f"coef.{name}": coef[i],
                f"se.{name}": se[i],
                f"z.{name}": z[i],
                f"p_value.{name}": pvals[i],
                f"odds_ratio.{name}": odds,
                f"or_ci_low.{name}": low,
                f"or_ci_high.{name}": high,
            }
        )
        rows.append(
            {
                "term": name,
                "coef": coef[i],
                "se": se[i],
                "z": z[i],
                "p_value": pvals[i],
                "odds_ratio": odds,
                "or_ci_low": low,
                "or_ci_high": high,
            }
        )
    insights = []
    for row in rows[1:]:
        change = (row["odds_ratio"] - 1) * 100
        insights.append(
            ctx.t(
                f"{row['term']}: each one-unit increase multiplies the odds of {target} = {event} by {fmt_num(row['odds_ratio'], 4)} "
                f"({'+' if change >= 0 else ''}{fmt_num(change, 3)}%; 95% CI {fmt_num(row['or_ci_low'], 4)} to {fmt_num(row['or_ci_high'], 4)}; {fmt_p(row['p_value'])}).",
                f"{row['term']}：每增加 1 个单位，{target} = {event} 的优势（odds）乘以 {fmt_num(row['odds_ratio'], 4)}"
                f"（{'+' if change >= 0 else ''}{fmt_num(change, 3)}%；95% 置信区间 {fmt_num(row['or_ci_low'], 4)} 至 {fmt_num(row['or_ci_high'], 4)}；{fmt_p(row['p_value'])}）。",
            )
        )
    insights.extend(notes)
    insights.append(
        ctx.t(
            f"The model classifies {accuracy:.0%} of rows correctly at a 50% cut-off; AUC = {fmt_num(auc, 3)} (0.5 = guessing, 1 = perfect).",
            f"以 50% 为界，模型正确分类了 {accuracy:.0%} 的行；AUC = {fmt_num(auc, 3)}（0.5 为瞎猜，1 为完美）。",
        )
    )
    events = int(y.sum())
    epv = min(events, n - events) / max(len(terms), 1)
    assumptions = [
        ctx.t(
            f"{min(events, n - events)} cases in the rarer outcome for {len(terms)} term(s) ({fmt_num(epv, 3)} per term; 10+ is comfortable).",
            f"较少一类结果有 {min(events, n - events)} 个，对应 {len(terms)} 个项（每项 {fmt_num(epv, 3)} 个；10 个以上较稳妥）。",
        ),
        ctx.t(
            "The log-odds are assumed to change linearly with each numeric feature.",
            "假设对数优势随每个数值特征线性变化。",
        ),
    ]
    limitations = [ctx.t("Association, not cause and effect.", "只说明关联，不说明因果。")]
    if epv < 10:
        limitations.append(
            ctx.t(
                "Few events per feature: coefficients may be unstable and odds ratios exaggerated.",
                "每个特征对应的事件较少：系数可能不稳定，优势比可能被夸大。",
            )
        )
    strongest = max(range(1, len(names)), key=lambda i: abs(z[i]))
    interpretation = ctx.t(
        f"Of the features, {names[strongest]} is the clearest signal for {target} = {event}: "
        f"each one-unit increase multiplies the odds by {fmt_num(rows[strongest]['odds_ratio'], 3)}; "
        + p_sentence(pvals[strongest], alpha, ctx, "effect"),
        f"在各特征中，{names[strongest]} 对 {target} = {event} 的信号最明确：每增加 1 个单位，优势乘以 "
        f"{fmt_num(rows[strongest]['odds_ratio'], 3)}；" + p_sentence(pvals[strongest], alpha, ctx, "effect"),
    )
    if dropped:
        interpretation += " " + dropped_note(dropped, ctx)
    coef_block = "\n".join(
        f"{r['term']:<20} coef {fmt_num(r['coef'], 6):>12}  se {fmt_num(r['se'], 4):>10}  OR {fmt_num(r['odds_ratio'], 4):>10}  {fmt_p(r['p_value'])}"
        for r in rows
    )
    method = ctx.t(
        f"Logistic regression (maximum likelihood, Newton), event = {target} == {event}; Wald z-tests and 95% odds-ratio intervals.",
        f"逻辑回归（最大似然，牛顿法），事件 = {target} == {event}；Wald z 检验与 95% 优势比区间。",
    )
    profile = ctx.t(f"n = {n}, {events} events ({events / n:.1%}).", f"n = {n}，事件 {events} 个（{events / n:.1%}）。")
    if dropped:
        profile += " " + dropped_note(dropped, ctx)
    conclusion = ctx.t(
        f"Likelihood-ratio test {fmt_p(fit.llr_pvalue)}; McFadden pseudo R² = {fmt_num(fit.prsquared, 4)}.\n{coef_block}",
        f"似然比检验 {fmt_p(fit.llr_pvalue)}；McFadden 伪 R² = {fmt_num(fit.prsquared, 4)}。\n{coef_block}",
    )
    # the overall fit first: when a long result is shortened, its head is what stays
    overall_fit = ctx.t(
        f"McFadden pseudo R² = {fmt_num(fit.prsquared, 6)}, likelihood-ratio χ²({fmt_num(fit.df_model)}) = "
        f"{fmt_num(fit.llr, 6)}, {fmt_p(fit.llr_pvalue)}, AUC = {fmt_num(auc, 4)}, n = {n} ({int(y.sum())} events).",
        f"McFadden 伪 R² = {fmt_num(fit.prsquared, 6)}，似然比 χ²({fmt_num(fit.df_model)}) = {fmt_num(fit.llr, 6)}，"
        f"{fmt_p(fit.llr_pvalue)}，AUC = {fmt_num(auc, 4)}，n = {n}（事件 {int(y.sum())} 个）。",
    )
    text = tagged_text(
        overall_fit=overall_fit,
        data_profile=profile,
        method=method,
        assumptions=assumptions,
        insights=insights,
        conclusion=conclusion,
        interpretation=interpretation,
    )
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=n,
        limitations=limitations,
        table=pd.DataFrame(rows),
        payload={"dropped_rows": dropped, "event": event},
    )


def _auc(probs: np.ndarray, y: np.ndarray) -> float:
    """Area under the ROC curve via the rank-sum (Mann-Whitney) identity; ties count half."""
    ranks = sps.rankdata(probs)
    pos = y == 1
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
