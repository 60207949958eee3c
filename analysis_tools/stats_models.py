"""Regression models: ordinary least squares with diagnostics (NIST StRD accurate)."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from .base import ToolContext, ToolError, ToolResult, tagged_text
from .common import (
    check_n,
    clean_metrics,
    coerce_numeric,
    column_kind,
    dropped_note,
    effect_label,
    fmt_num,
    fmt_p,
    label,
    numeric_columns,
    p_sentence,
    require_numeric,
    two_pass_mean,
)
from .registry import suggest

# Extended precision (80-bit on x86-64) keeps ~3 more digits on ill-conditioned designs (Filip);
# above this many n*p^2 operations the LAPACK float64 path is used instead.
_LONGDOUBLE_WORK = 5e6
_MAX_LEVELS = 50
# Durbin-Watson d runs 0..4 with 2 meaning no lag-1 residual autocorrelation (d ~ 2(1 - rho)); the usual
# rule of thumb: 1.5-2.5 is no concern, below 1 (rho above 0.5) or above 3 is strong autocorrelation
_DW_NEAR_TWO = (1.5, 2.5)
_DW_STRONG = (1.0, 3.0)


@dataclass
class OLSFit:
    coef: np.ndarray  # float64, intercept first when fitted
    se: np.ndarray
    resid: np.ndarray
    rss: float
    tss: float
    df_resid: int
    df_model: int
    vif: np.ndarray | None  # per feature (not intercept)
    precision: str


def ols_fit(X: np.ndarray, y: np.ndarray, intercept: bool = True, names: list[str] | None = None) -> OLSFit:
    """Least squares on centred, norm-scaled columns via Householder QR (long double when affordable)."""
    n, p = X.shape
    dtype: type[np.floating[Any]] = np.longdouble if n * max(p, 1) ** 2 <= _LONGDOUBLE_WORK else np.float64
    Xl, yl = X.astype(dtype), y.astype(dtype)
    mean_x = two_pass_mean(Xl) if intercept else np.zeros(p, dtype=dtype)
    mean_y = two_pass_mean(yl) if intercept else dtype(0)
    Xc = Xl - mean_x
    scale = np.sqrt(np.sum(Xc * Xc, axis=0))
    if np.any(scale == 0):
        bad = [names[i] if names else str(i) for i in np.flatnonzero(scale == 0)]
        raise ValueError(f"constant:{bad}")
    Xs = Xc / scale
    yc = yl - mean_y
    R, qty = _qr(Xs, yc)
    diag = np.abs(np.diag(R))
    tol = max(n, p) * np.finfo(dtype).eps * 10 * diag.max()
    if np.any(diag <= tol):
        bad = [names[i] if names else str(i) for i in np.flatnonzero(diag <= tol)]
        raise ValueError(f"collinear:{bad}")
    b = _back_solve(R, qty[:p])
    # one step of iterative refinement with extended-precision residuals
    r = yc - Xs @ b
    b = b + _back_solve(R, _forward_solve(R.T, Xs.T @ r))  # corrected semi-normal equations
    slopes = b / scale
    const = mean_y - np.sum(mean_x * slopes) if intercept else None
    resid = yl - Xl @ slopes - (const if intercept else 0)
    rss = np.sum(resid * resid)
    tss = np.sum((yl - mean_y) ** 2) if intercept else np.sum(yl * yl)
    k = p + (1 if intercept else 0)
    df_resid = n - k
    sigma2 = rss / df_resid if df_resid > 0 else dtype(np.nan)
    Rinv = _back_solve(R, np.eye(p, dtype=dtype))  # (Xs'Xs)^-1 = Rinv Rinv'
    se_slopes = np.sqrt(sigma2 * np.sum(Rinv * Rinv, axis=1)) / scale
    coef, se = slopes, se_slopes
    if intercept:
        w = (mean_x / scale) @ Rinv  # m' D^-1 R^-1
        se_const = np.sqrt(sigma2 * (dtype(1) / n + np.sum(w * w)))
        coef = np.concatenate([[const], slopes])
        se = np.concatenate([[se_const], se_slopes])
    vif = np.sum(Rinv * Rinv, axis=1).astype(float) if intercept and p > 1 else None
    return OLSFit(
        coef.astype(float),
        se.astype(float),
        resid.astype(float),
        float(rss),
        float(tss),
        int(df_resid),
        int(p),
        vif,
        "long double" if dtype is np.longdouble else "float64",
    )


def _qr(A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """R and Q'b of A (n x p, n >= p)."""
    if A.dtype == np.float64:
        Q, R = np.linalg.qr(A, mode="reduced")
        return R, Q.T @ b
    R = A.copy()
    qtb = b.copy()
    n, p = R.shape
    for k in range(p):
        x = R[k:, k]
        normx = np.sqrt(np.sum(x * x))
        if normx == 0:
            continue
        alpha = -normx if x[0] >= 0 else normx
        v = x.copy()
        v[0] -= alpha
        beta = 2 / np.sum(v * v)
        R[k:, k:] -= np.outer(v, beta * (v @ R[k:, k:]))
        qtb[k:] -= v * (beta * (v @ qtb[k:]))
        R[k + 1 :, k] = 0
    return np.triu(R[:p, :p]), qtb


def _back_solve(R: np.ndarray, B: np.ndarray) -> np.ndarray:
    p = R.shape[0]
    X = np.array(B, dtype=R.dtype, copy=True)
    for i in range(p - 1, -1, -1):
        X[i] = (X[i] - R[i, i + 1 :] @ X[i + 1 :]) / R[i, i]
    return X


def _forward_solve(L: np.ndarray, B: np.ndarray) -> np.ndarray:
    p = L.shape[0]
    X = np.array(B, dtype=L.dtype, copy=True)
    for i in range(p):
        X[i] = (X[i] - L[i, :i] @ X[:i]) / L[i, i]
    return X


# ---------------------------------------------------------------- the tool


def linear_regression(
    data: pd.DataFrame,
    target_column: str,
    feature_columns: list[str],
    intercept: bool = True,
    alpha: float = 0.05,
    categorical_columns: list[str] | None = None,
    reference_levels: dict | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Fit an ordinary least squares regression of a numeric target on numeric or categorical features, with diagnostics.

    Reports coefficients with standard errors and p-values, R-squared, the overall F test,
    residual standard error, Durbin-Watson, Breusch-Pagan heteroscedasticity and VIF.
    Categorical features (text, or numeric codes listed in categorical_columns) are one-hot
    encoded against a reference level (the first in sorted order unless reference_levels names
    one); each level's coefficient is its difference from the reference, which the output names.

    Args:
        target_column: The numeric column to explain or predict (e.g. sales).
        feature_columns: One or more columns used as explanatory variables; text columns become dummy variables.
        intercept: Whether to fit an intercept (constant term); keep true unless the line must pass through zero.
        alpha: Significance level for the coefficient tests.
        categorical_columns: Numeric features to treat as categories (codes such as cyl or race).
        reference_levels: Reference level per categorical feature, e.g. {"drv": "f"}.
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
    y_all = require_numeric(data, target_column, ctx)
    design, terms, notes, references = _design(
        data, features, target_column, ctx, categorical_columns, reference_levels
    )
    frame = pd.concat([y_all.rename("__y__"), design], axis=1)
    complete = frame.dropna()
    dropped = len(frame) - len(complete)
    n = len(complete)
    k = len(terms) + (1 if intercept else 0)
    check_n(n, k + 1, ctx.t("this regression", "这个回归"), ctx)
    X = complete[terms].to_numpy(dtype=float)
    y = complete["__y__"].to_numpy(dtype=float)
    try:
        fit = ols_fit(X, y, intercept, terms)
    except ValueError as exc:
        kind, _, bad = str(exc).partition(":")
        raise ToolError(
            "collinear_features" if kind == "collinear" else "constant_column",
            ctx.t(
                f"Feature(s) {bad} are constant or an exact combination of other features, so their effect cannot be separated.",
                f"特征 {bad} 是常数或与其他特征完全共线，无法分离它们的影响。",
            ),
            hint=ctx.t("Remove one of the redundant features and retry.", "请去掉冗余特征后重试。"),
        ) from None
    return _regression_result(fit, terms, complete, target_column, intercept, alpha, dropped, notes, ctx, references)


def _design(
    data: pd.DataFrame,
    features: list[str],
    target: str,
    ctx: ToolContext,
    categorical: list[str] | None = None,
    references: dict | None = None,
) -> tuple[pd.DataFrame, list[str], list[str], dict[str, str]]:
    """Numeric columns as they are; categorical ones (and numeric codes named in `categorical`) as
    dummies against a reference level (the first sorted, or the one `references` names)."""
    parts, terms, notes = [], [], []
    categorical, references = list(categorical or []), dict(references or {})
    for name in [*categorical, *references]:
        if name not in features:
            raise ToolError(
                "invalid_arguments",
                ctx.t(f"{name!r} is not one of the feature columns.", f"{name!r} 不在特征列中。"),
                hint=ctx.t(f"Add it to feature_columns: {features}.", f"请把它加入 feature_columns：{features}。"),
            )
    for col in features:
        series = data[col]
        kind = "category" if col in categorical or col in references else column_kind(series)
        values = coerce_numeric(series)[0] if kind in ("number", "integer", "boolean") else series
        numeric_ok = kind in ("number", "integer", "boolean") and (
            series.notna().sum() == 0 or values.notna().sum() / series.notna().sum() >= 0.9
        )
        if (
            kind == "boolean"
            and not pd.api.types.is_numeric_dtype(series.dtype)
            and not pd.api.types.is_bool_dtype(series.dtype)
        ):
            numeric_ok = False
        if numeric_ok:
            parts.append(values.rename(col))
            terms.append(col)
            continue
        if kind in ("datetime", "identifier", "text") or series.nunique() > _MAX_LEVELS:
            raise ToolError(
                "wrong_column_type",
                ctx.t(
                    f"Feature {col!r} ({kind}) cannot be used in a regression directly.",
                    f"特征 {col!r}（{kind}）不能直接用于回归。",
                ),
                hint=ctx.t(
                    f"Use numeric or categorical features, e.g. {[c for c in numeric_columns(data) if c != target][:10]}.",
                    f"请使用数值或分类特征，例如 {[c for c in numeric_columns(data) if c != target][:10]}。",
                ),
                column=col,
            )
        labels = series.map({v: label(v) for v in series.dropna().unique()})
        levels = sorted(labels.dropna().unique(), key=_level_order)
        if len(levels) < 2:
            raise ToolError(
                "constant_column",
                ctx.t(f"Feature {col!r} has only one value.", f"特征 {col!r} 只有一个取值。"),
                hint=ctx.t("Remove it and retry.", "请去掉它后重试。"),
            )
        if col in references:
            wanted = label(references[col])
            if wanted not in levels:
                raise ToolError(
                    "invalid_arguments",
                    ctx.t(f"{col!r} has no level {wanted!r}.", f"{col!r} 没有取值 {wanted!r}。"),
                    hint=ctx.t(f"Levels: {levels[:20]}", f"取值：{levels[:20]}"),
                    did_you_mean=suggest(wanted, levels),
                )
            levels = [wanted] + [v for v in levels if v != wanted]
        for level in levels[1:]:
            name = f"{col}={level}"
            dummy = (labels == level).astype(float).where(labels.notna())
            parts.append(dummy.rename(name))
            terms.append(name)
        notes.append(
            ctx.t(
                f"{col} is categorical: each level is compared with the reference level {levels[0]!r}.",
                f"{col} 是分类变量：各水平都与参照水平 {levels[0]!r} 比较。",
            )
        )
        references[col] = levels[0]
    return pd.concat(parts, axis=1), terms, notes, references


def durbin_watson_kind(dw: float) -> str:
    """Which way and how strongly the residuals are autocorrelated at lag 1, read from Durbin-Watson d."""
    if dw != dw:
        return "untestable"
    if dw < _DW_STRONG[0]:
        return "strong_positive"
    if dw < _DW_NEAR_TWO[0]:
        return "positive"
    if dw <= _DW_NEAR_TWO[1]:
        return "none"
    return "negative" if dw <= _DW_STRONG[1] else "strong_negative"


def durbin_watson_reading(dw: float, ctx: ToolContext) -> str:
    """The Durbin-Watson line of the assumptions, saying what this value means rather than the rule of thumb."""
    words = {
        "untestable": ("not testable here", "此处无法检验"),
        "strong_positive": (
            "strong positive autocorrelation: neighbouring rows' residuals move together (in time data, a trend "
            "the model misses; otherwise rows ordered by something the model leaves out)",
            "强正自相关：相邻行的残差同向变化（时间数据中是模型漏掉的趋势；否则是行按模型未包含的因素排列）",
        ),
        "positive": ("some positive autocorrelation", "存在一定正自相关"),
        "none": ("close to 2, no sign of autocorrelation", "接近 2，未见自相关"),
        "negative": ("some negative autocorrelation", "存在一定负自相关"),
        "strong_negative": (
            "strong negative autocorrelation: neighbouring residuals alternate in sign",
            "强负自相关：相邻残差正负交替",
        ),
    }[durbin_watson_kind(dw)]
    return ctx.t(
        f"Residual independence: Durbin-Watson = {fmt_num(dw, 3)}, {words[0]} (2 means none; below {_DW_STRONG[0]:g} or above {_DW_STRONG[1]:g} is strong).",
        f"残差独立性：Durbin-Watson = {fmt_num(dw, 3)}，{words[1]}（2 表示无自相关；低于 {_DW_STRONG[0]:g} 或高于 {_DW_STRONG[1]:g} 为强自相关）。",
    )


def _level_order(level: str) -> tuple[int, float, str]:
    """Numeric codes in numeric order (4, 6, 8, 10), then text in alphabetical order."""
    try:
        return (0, float(level), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(level))


def _regression_result(
    fit: OLSFit,
    terms: list[str],
    complete: pd.DataFrame,
    target: str,
    intercept: bool,
    alpha: float,
    dropped: int,
    notes: list[str],
    ctx: ToolContext,
    references: dict[str, str] | None = None,
) -> ToolResult:
    n = len(complete)
    names = (["const"] if intercept else []) + terms
    df_r = fit.df_resid
    tvals = fit.coef / np.where(fit.se > 0, fit.se, np.nan)
    pvals = 2 * sps.t.sf(np.abs(tvals), df_r)
    r2 = 1 - fit.rss / fit.tss if fit.tss > 0 else float("nan")
    adj = 1 - (1 - r2) * (n - (1 if intercept else 0)) / df_r
    rse = math.sqrt(fit.rss / df_r)
    ess = fit.tss - fit.rss
    f_stat = (ess / fit.df_model) / (fit.rss / df_r) if fit.rss > 0 else float("inf")
    f_p = float(sps.f.sf(f_stat, fit.df_model, df_r)) if math.isfinite(f_stat) else 0.0
    dw = float(np.sum(np.diff(fit.resid) ** 2) / fit.rss) if fit.rss > 0 else float("nan")
    bp_p = _breusch_pagan(fit.resid, complete[terms].to_numpy(dtype=float))

    metrics: dict = {
        "method": "ols",
        "n": n,
        "r_squared": r2,
        "adj_r_squared": adj,
        "residual_std_error": rse,
        "f_statistic": f_stat,
        "p_value": f_p,
        "df_model": fit.df_model,
        "df_resid": df_r,
        "durbin_watson": dw,
        "residual_autocorrelation": durbin_watson_kind(dw),
        "breusch_pagan_p": bp_p,
        "effect_size": r2,
    }
    # each coefficient's confidence interval at 1 - alpha (95% by default): "how much, give or take";
    # in the text and the table, not in the metrics (they are printed with every result: kept short)
    ci_level = 1 - alpha
    half = sps.t.ppf(1 - alpha / 2, df_r) * fit.se
    ci_low, ci_high = fit.coef - half, fit.coef + half
    for i, name in enumerate(names):
        metrics[f"coef.{name}"] = fit.coef[i]
        metrics[f"se.{name}"] = fit.se[i]
        metrics[f"t.{name}"] = tvals[i]
        metrics[f"p_value.{name}"] = pvals[i]
    if fit.vif is not None:
        for name, v in zip(terms, fit.vif):
            metrics[f"vif.{name}"] = v
    table = pd.DataFrame(
        {
            "term": names,
            "coef": fit.coef,
            "se": fit.se,
            "t": tvals,
            "p_value": pvals,
            "ci_low": ci_low,
            "ci_high": ci_high,
        }
    )

    # the table's numbers without thousands separators: a column of figures that programs read back
    # (the built-in analyst parses it when the metrics are cut) as well as people
    rows = [
        f"{nm:<24} {fmt_num(c, 6).replace(',', ''):>14} {fmt_num(s, 4).replace(',', ''):>12} "
        f"{fmt_num(t, 4).replace(',', ''):>9} {fmt_p(p):>12}"
        for nm, c, s, t, p in zip(names, fit.coef, fit.se, tvals, pvals)
    ]
    coef_block = "\n".join([f"{'term':<24} {'coef':>14} {'se':>12} {'t':>9} {'p':>12}", *rows])

    profile = ctx.t(
        f"n = {n} complete rows; target {target}; {len(terms)} term(s).",
        f"n = {n} 行完整数据；目标 {target}；{len(terms)} 个项。",
    )
    if dropped:
        profile += " " + dropped_note(dropped, ctx)

    limitations = [ctx.t("Regression shows association, not cause and effect.", "回归只说明关联，不说明因果。")]
    assumptions = [
        durbin_watson_reading(dw, ctx),
        ctx.t(f"Constant variance: Breusch-Pagan {fmt_p(bp_p)}.", f"方差齐性：Breusch-Pagan {fmt_p(bp_p)}。")
        if bp_p == bp_p
        else ctx.t("Constant variance: not testable here.", "方差齐性：此处无法检验。"),
    ]
    if bp_p == bp_p and bp_p < alpha:
        limitations.append(
            ctx.t(
                "Residual spread changes with the features (heteroscedasticity): standard errors and p-values may be off.",
                "残差波动随特征变化（异方差）：标准误和 p 值可能不准。",
            )
        )
    if dw == dw and (dw < _DW_NEAR_TWO[0] or dw > _DW_NEAR_TWO[1]):
        limitations.append(
            ctx.t(
                "Residuals are autocorrelated (Durbin-Watson far from 2): rows are not independent, so standard "
                "errors and p-values are too optimistic.",
                "残差存在自相关（Durbin-Watson 偏离 2）：各行并不独立，标准误和 p 值过于乐观。",
            )
        )
    if fit.vif is not None:
        high = [t for t, v in zip(terms, fit.vif) if v > 10]
        assumptions.append(
            ctx.t(
                "VIF: " + ", ".join(f"{t} {fmt_num(v, 3)}" for t, v in zip(terms, fit.vif)),
                "方差膨胀因子 VIF：" + "，".join(f"{t} {fmt_num(v, 3)}" for t, v in zip(terms, fit.vif)),
            )
        )
        if high:
            limitations.append(
                ctx.t(
                    f"Strong multicollinearity (VIF > 10) for {high}: individual coefficients are unstable.",
                    f"{high} 存在严重多重共线性（VIF > 10），单个系数不稳定。",
                )
            )
    if n < 10 * max(len(terms), 1):
        limitations.append(
            ctx.t("Few rows per feature; estimates may not generalise.", "每个特征对应的数据行较少，结论可能难以推广。")
        )

    references = references or {}
    for column, level in references.items():
        metrics[f"reference.{column}"] = level
    insights = []
    for i, name in enumerate(names):
        if name == "const":
            continue
        direction = ctx.t("higher" if fit.coef[i] > 0 else "lower", "增加" if fit.coef[i] > 0 else "减少")
        sig = pvals[i] < alpha
        column, _, level = name.partition("=")
        low, high = ci_low[i], ci_high[i]
        if low * high > 0:  # one side of zero: the interval of the size, in the direction named with it
            low, high = sorted((abs(low), abs(high)))
            ci = f"{ci_level:.0%} CI {fmt_num(low, 4)} to {fmt_num(high, 4)} {direction}"
        else:  # it spans zero: signed, so "-0.7 to 4.9" reads as either way
            ci = f"{ci_level:.0%} CI {fmt_num(low, 4)} to {fmt_num(high, 4)}"
        if level and column in references:  # a dummy: a difference from the reference level, not a slope
            insights.append(
                ctx.t(
                    f"{column} = {level}: {fmt_num(abs(fit.coef[i]))} {direction} {target} than {column} = "
                    f"{references[column]} (the reference level) ({ci}; {fmt_p(pvals[i])}{'' if sig else ', not significant'}).",
                    f"{column} = {level}：{target} 比参照水平 {column} = {references[column]} 平均{direction} "
                    f"{fmt_num(abs(fit.coef[i]))}（{ci}；{fmt_p(pvals[i])}{'' if sig else '，不显著'}）。",
                )
            )
            continue
        if name in complete.columns and set(np.unique(complete[name].to_numpy(dtype=float))) <= {0.0, 1.0}:
            # a 0/1 column (am, smoker): the difference between its two values, not a "one-unit increase"
            insights.append(
                ctx.t(
                    f"{name} = 1 rather than 0 goes with {fmt_num(abs(fit.coef[i]))} {direction} {target} "
                    f"({ci}; {fmt_p(pvals[i])}{'' if sig else ', not significant'}).",
                    f"{name} = 1 与 {name} = 0 相比，{target} 平均{direction} {fmt_num(abs(fit.coef[i]))}"
                    f"（{ci}；{fmt_p(pvals[i])}{'' if sig else '，不显著'}）。",
                )
            )
            continue
        insights.append(
            ctx.t(
                f"{name}: each one-unit increase goes with {fmt_num(abs(fit.coef[i]))} {direction} {target} ({ci}; {fmt_p(pvals[i])}{'' if sig else ', not significant'}).",
                f"{name}：每增加 1 个单位，{target} 平均{direction} {fmt_num(abs(fit.coef[i]))}（{ci}；{fmt_p(pvals[i])}{'' if sig else '，不显著'}）。",
            )
        )
    if len(names) > 1 + (1 if intercept else 0):
        insights.append(ctx.t("Each coefficient holds the other terms fixed.", "每个系数都是在其他项不变时的效应。"))
    insights.extend(notes)
    insights.append(
        ctx.t(
            f"The model explains {r2 * 100:.1f}% of the variation in {target} (R² = {fmt_num(r2, 4)}, adjusted {fmt_num(adj, 4)}).",
            f"模型解释了 {target} {r2 * 100:.1f}% 的变化（R² = {fmt_num(r2, 4)}，调整后 {fmt_num(adj, 4)}）。",
        )
    )

    strongest = max(
        (i for i, nm in enumerate(names) if nm != "const"), key=lambda i: abs(tvals[i]) if tvals[i] == tvals[i] else -1
    )
    interpretation = ctx.t(
        f"{r2 * 100:.0f}% of the ups and downs in {target} line up with {', '.join(terms)}; "
        f"for {names[strongest]}, {p_sentence(pvals[strongest], alpha, ctx, 'effect')}",
        f"{target} 的变化中约 {r2 * 100:.0f}% 可以由 {'、'.join(terms)} 解释；就 {names[strongest]} 而言，"
        f"{p_sentence(pvals[strongest], alpha, ctx, 'effect')}",
    )
    if dropped:
        interpretation += " " + dropped_note(dropped, ctx)
    method = ctx.t(
        f"Ordinary least squares{'' if intercept else ' without intercept'} "
        f"(QR on centred, scaled columns in {fit.precision}).",
        f"普通最小二乘回归{'' if intercept else '（无截距）'}（中心化、标准化后 QR 分解，{fit.precision} 精度）。",
    )
    conclusion = ctx.t(
        f"F({fit.df_model}, {df_r}) = {fmt_num(f_stat, 5)}, {fmt_p(f_p)}; residual standard error {fmt_num(rse, 5)}.",
        f"F({fit.df_model}, {df_r}) = {fmt_num(f_stat, 5)}，{fmt_p(f_p)}；残差标准误 {fmt_num(rse, 5)}。",
    )
    # the overall fit first: when a long result is shortened, its head (R², F, p, n) is what stays
    overall_fit = ctx.t(
        f"R² = {fmt_num(r2, 6)}, adjusted R² = {fmt_num(adj, 6)}, F({fit.df_model}, {df_r}) = {fmt_num(f_stat, 6)}, "
        f"{fmt_p(f_p)}, n = {n}.",
        f"R² = {fmt_num(r2, 6)}，调整后 R² = {fmt_num(adj, 6)}，F({fit.df_model}, {df_r}) = {fmt_num(f_stat, 6)}，"
        f"{fmt_p(f_p)}，n = {n}。",
    )
    text = tagged_text(
        overall_fit=overall_fit,
        data_profile=profile,
        method=method,
        coefficients=coef_block,
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
        table=table,
        payload={
            "terms": names,
            "dropped_rows": dropped,
            "effect_size_label": effect_label(r2, "eta2", ctx),
            "reference_levels": references,
        },
    )


def _breusch_pagan(resid: np.ndarray, X: np.ndarray) -> float:
    try:
        from statsmodels.stats.diagnostic import het_breuschpagan

        exog = np.column_stack([np.ones(len(X)), X])
        if np.allclose(resid, 0) or len(resid) <= exog.shape[1] + 1:
            return float("nan")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(het_breuschpagan(resid, exog)[1])
    except Exception:  # noqa: BLE001 - a diagnostic must not sink the fit
        return float("nan")
