"""Curve fitting: the simple families (linear, power, exponential, logarithmic) and user formulas,
by nonlinear least squares (Levenberg-Marquardt, MINPACK) with a complex-step Jacobian.

Accuracy target: the NIST StRD nonlinear sets of lower and average difficulty from NIST's first
start values (tests/test_nist_nonlinear.py).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats as sps
from scipy.optimize import least_squares

from .base import ToolContext, ToolError, ToolResult, tagged_text
from .common import check_n, clean_metrics, dropped_note, fmt_num, require_numeric
from .stats_formula import Formula, FormulaError, parse_formula

FAMILIES = {
    "linear": "b1 + b2*x",
    "power": "b1*x**b2",
    "exponential": "b1*exp(b2*x)",
    "logarithmic": "b1 + b2*log(x)",
}
_TOL = 1e-15
_MAX_NFEV = 20000


@dataclass
class Fit:
    params: np.ndarray
    se: np.ndarray
    rss: float
    tss: float
    n: int
    nfev: int
    status: int
    resid: np.ndarray  # observed - fitted

    @property
    def df(self) -> int:
        return self.n - len(self.params)

    @property
    def r_squared(self) -> float:
        return 1 - self.rss / self.tss if self.tss > 0 else float("nan")

    @property
    def residual_sd(self) -> float:
        return math.sqrt(self.rss / self.df) if self.df > 0 else float("nan")

    @property
    def aic(self) -> float:
        return self.n * math.log(self.rss / self.n) + 2 * (len(self.params) + 1) if self.rss > 0 else float("-inf")


def fit_formula(formula: Formula, env: dict[str, np.ndarray], y: np.ndarray, start: np.ndarray) -> Fit:
    """Least squares of y ~ formula(env, b) from `start`; raises ValueError when it cannot be fitted."""
    n = len(y)
    y = np.asarray(y, dtype=float)

    def residuals(b: np.ndarray) -> np.ndarray:
        return np.broadcast_to(formula(env, b), (n,)) - y

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not np.all(np.isfinite(residuals(np.asarray(start, dtype=float)))):
            raise ValueError("undefined_at_start")
        res = least_squares(
            residuals,
            np.asarray(start, dtype=float),
            method="lm",
            jac=lambda b: formula.jacobian(env, b, n),
            xtol=_TOL,
            ftol=_TOL,
            gtol=_TOL,
            max_nfev=_MAX_NFEV,
        )
    if not np.all(np.isfinite(res.x)) or not np.all(np.isfinite(res.fun)) or res.status <= 0:
        raise ValueError("no_convergence")
    rss = float(np.sum(res.fun**2))
    mean_y = float(np.mean(y))
    tss = float(np.sum((y - mean_y) ** 2))
    se = _standard_errors(res.jac, rss, n)
    return Fit(res.x.astype(float), se, rss, tss, n, int(res.nfev), int(res.status), -res.fun)


def _standard_errors(jac: np.ndarray, rss: float, n: int) -> np.ndarray:
    """sqrt(diag((J'J)^-1) * s^2), via the SVD of J (no normal equations, so no squared condition)."""
    p = jac.shape[1]
    if n <= p:
        return np.full(p, np.nan)
    _, s, vt = np.linalg.svd(jac, full_matrices=False)
    if s.size == 0 or s[-1] <= s[0] * 1e-15:
        return np.full(p, np.nan)
    cov = (vt.T / s**2) @ vt
    return np.sqrt(np.diag(cov) * rss / (n - p))


def family_start(family: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Start values from the linearised model (log-log for power, log-y for exponential)."""

    def line(u: np.ndarray, v: np.ndarray) -> tuple[float, float]:
        slope, intercept = np.polyfit(u, v, 1)
        return float(intercept), float(slope)

    if family == "linear":
        return np.array(line(x, y))
    if family == "logarithmic":
        return np.array(line(np.log(x), y))
    sign = -1.0 if np.all(y < 0) else 1.0
    positive = sign * y > 0
    if positive.sum() >= 2:
        u = np.log(x[positive]) if family == "power" else x[positive]
        if np.ptp(u) > 0:
            a, b = line(u, np.log(sign * y[positive]))
            return np.array([sign * math.exp(a), b])
    return np.array([float(np.mean(y)) or 1.0, 1.0 if family == "power" else 0.0])


def family_applicable(family: str, x: np.ndarray) -> bool:
    return family not in ("power", "logarithmic") or bool(np.all(x > 0))


# ---------------------------------------------------------------- the tool


def curve_fit(
    data: pd.DataFrame,
    x_column: str,
    y_column: str,
    model: Literal["auto", "linear", "power", "exponential", "logarithmic", "formula"] = "auto",
    formula: str | None = None,
    start: list[float] | None = None,
    feature_columns: list[str] | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Fit a curve y = f(x): linear, power, exponential, logarithmic or your own formula (nonlinear least squares); with model=auto it fits the simple families and says which fits best.

    Args:
        x_column: The numeric predictor column (x), e.g. advertising spend.
        y_column: The numeric response column (y), e.g. sales.
        model: auto (fit linear, power, exponential and logarithmic and pick the best), one of those families, or formula.
        formula: A model formula in x and parameters b1..b9, e.g. "b1*(1-exp(-b2*x))"; allowed: + - * / ** ^, numbers, pi, exp, log, sqrt, sin, cos, tan, arctan, power. Implies model=formula.
        start: Start values for b1..bn of a formula (default 1 for each); good starts matter for hard models.
        feature_columns: Extra predictor columns for a formula with several variables, named x1, x2, ... in the formula in the order given.
    """
    ctx = ctx or ToolContext()
    if formula and model in ("auto", "formula"):
        model = "formula"
    elif model == "formula":
        raise ToolError(
            "invalid_arguments",
            ctx.t("model=formula needs a formula.", "model=formula 需要提供 formula。"),
            hint=ctx.t('Pass formula="b1*(1-exp(-b2*x))" for example.', '例如传入 formula="b1*(1-exp(-b2*x))"。'),
        )
    extra = list(dict.fromkeys(feature_columns or []))
    env, y, dropped = _frame(data, x_column, y_column, extra, ctx)
    x = env["x"]
    if model == "formula":
        parsed = _parse(formula, {"x", *(f"x{i}" for i in range(1, len(extra) + 1))}, ctx)
        fits = {"formula": _run_formula(parsed, env, y, start, ctx)}
        formulas = {"formula": parsed.text}
    else:
        if np.ptp(x) == 0:
            raise ToolError(
                "constant_column",
                ctx.t(
                    f"{x_column!r} has a single value; no curve can be fitted.",
                    f"{x_column!r} 只有一个取值，无法拟合曲线。",
                ),
                hint=ctx.t("Use an x column that varies.", "请使用有变化的 x 列。"),
                column=x_column,
            )
        families = list(FAMILIES) if model == "auto" else [model]
        skipped = [f for f in families if not family_applicable(f, x)]
        if model != "auto" and skipped:
            raise ToolError(
                "invalid_values",
                ctx.t(
                    f"The {model} model needs x > 0, but {x_column!r} has zero or negative values.",
                    f"{model} 模型要求 x > 0，但 {x_column!r} 含有零或负值。",
                ),
                hint=ctx.t(
                    "Filter those rows, or use model=linear or exponential.",
                    "请过滤这些行，或改用 linear / exponential。",
                ),
            )
        fits, formulas = {}, {}
        for family in (f for f in families if f not in skipped):
            parsed = parse_formula(FAMILIES[family])
            try:
                fits[family] = fit_formula(parsed, env, y, family_start(family, x, y))
                formulas[family] = FAMILIES[family]
            except ValueError:
                continue
        if not fits:
            raise ToolError(
                "fit_failed",
                ctx.t("None of the curve families could be fitted to these data.", "所有曲线族都无法拟合这些数据。"),
                hint=ctx.t("Check the columns, or try a formula with start values.", "请检查列，或提供公式和初值。"),
            )
    return _result(fits, formulas, x, x_column, y_column, dropped, ctx)


def _frame(
    data: pd.DataFrame, x_column: str, y_column: str, extra: list[str], ctx: ToolContext
) -> tuple[dict[str, np.ndarray], np.ndarray, int]:
    columns = {"x": require_numeric(data, x_column, ctx), "y": require_numeric(data, y_column, ctx)}
    for i, col in enumerate(extra, 1):
        columns[f"x{i}"] = require_numeric(data, col, ctx)
    frame = pd.DataFrame(columns).dropna()
    dropped = len(data) - len(frame)
    check_n(len(frame), 3, ctx.t("a curve fit", "曲线拟合"), ctx)
    if np.ptp(frame["y"].to_numpy()) == 0:
        raise ToolError(
            "constant_column",
            ctx.t(f"{y_column!r} is constant; there is nothing to fit.", f"{y_column!r} 是常数，没有可拟合的变化。"),
            hint=ctx.t("Use a y column that varies.", "请使用有变化的 y 列。"),
            column=y_column,
        )
    env = {k: frame[k].to_numpy(dtype=float) for k in frame.columns if k != "y"}
    return env, frame["y"].to_numpy(dtype=float), dropped


def _parse(formula: str | None, variables: set[str], ctx: ToolContext) -> Formula:
    try:
        return parse_formula(formula or "", variables)
    except FormulaError as exc:
        raise ToolError(
            "invalid_formula",
            ctx.t(f"The formula cannot be used: {exc}", f"公式无法使用：{exc}"),
            hint=ctx.t(
                'Write it in x and b1..b9, e.g. "b1*(1-exp(-b2*x))".',
                '请用 x 和 b1..b9 书写，例如 "b1*(1-exp(-b2*x))"。',
            ),
        ) from None


def _run_formula(
    parsed: Formula, env: dict[str, np.ndarray], y: np.ndarray, start: list[float] | None, ctx: ToolContext
) -> Fit:
    b0 = np.ones(parsed.n_params) if not start else np.asarray(start, dtype=float)
    if len(b0) != parsed.n_params:
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                f"The formula has {parsed.n_params} parameters but {len(b0)} start values were given.",
                f"公式有 {parsed.n_params} 个参数，但给了 {len(b0)} 个初值。",
            ),
            hint=ctx.t(
                f"Give {parsed.n_params} start values (b1..b{parsed.n_params}).",
                f"请给出 {parsed.n_params} 个初值（b1..b{parsed.n_params}）。",
            ),
        )
    check_n(len(y), parsed.n_params + 1, ctx.t("this formula", "这个公式"), ctx)
    try:
        return fit_formula(parsed, env, y, b0)
    except ValueError as exc:
        undefined = str(exc) == "undefined_at_start"
        raise ToolError(
            "fit_failed",
            ctx.t(
                "The formula is undefined (division by zero, log of a negative, ...) at the start values."
                if undefined
                else "The fit did not converge from these start values.",
                "在初值处公式无定义（除以零、对负数取对数等）。" if undefined else "从这些初值出发拟合没有收敛。",
            ),
            hint=ctx.t(
                "Give start values closer to plausible parameter values (start=[...]).",
                "请给出更接近合理参数值的初值（start=[...]）。",
            ),
        ) from None


def _result(
    fits: dict[str, Fit],
    formulas: dict[str, str],
    x: np.ndarray,
    x_column: str,
    y_column: str,
    dropped: int,
    ctx: ToolContext,
) -> ToolResult:
    best = max(fits, key=lambda k: fits[k].r_squared)
    fit = fits[best]
    names = [f"b{i}" for i in range(1, len(fit.params) + 1)]
    metrics: dict = {
        "model": best,
        "formula": formulas[best],
        "n": fit.n,
        "df": fit.df,
        "n_params": len(names),
        "r_squared": fit.r_squared,
        "residual_std_error": fit.residual_sd,
        "rss": fit.rss,
        "aic": fit.aic,
        "nfev": fit.nfev,
        "effect_size": fit.r_squared,
        "effect_size_name": "r_squared",
    }
    for name, value, se in zip(names, fit.params, fit.se):
        metrics[f"coef.{name}"] = value
        metrics[f"se.{name}"] = se
    if len(fits) > 1:
        metrics["best_model"] = best
        for family, f in fits.items():
            metrics[f"r_squared.{family}"] = f.r_squared
            metrics[f"residual_std_error.{family}"] = f.residual_sd
    table = pd.DataFrame({"term": names, "coef": fit.params, "se": fit.se})
    equation = _equation(best, formulas[best], fit.params)
    profile = ctx.t(
        f"{fit.n} rows of {x_column} (x) and {y_column} (y).", f"{fit.n} 行 {x_column}（x）与 {y_column}（y）。"
    )
    if dropped:
        profile += " " + dropped_note(dropped, ctx)
    coef_lines = [f"{nm} = {fmt_num(v, 8)} (se {fmt_num(s, 4)})" for nm, v, s in zip(names, fit.params, fit.se)]
    insights = [ctx.t(f"Fitted curve: {equation}", f"拟合曲线：{equation}")] + coef_lines
    if len(fits) > 1:
        ranking = sorted(fits, key=lambda k: -fits[k].r_squared)
        insights.append(
            ctx.t("R² by family: ", "各曲线族的 R²：")
            + ", ".join(f"{k} {fmt_num(fits[k].r_squared, 4)}" for k in ranking)
        )
        if len(ranking) > 1 and fits[ranking[0]].r_squared - fits[ranking[1]].r_squared < 0.01:
            insights.append(
                ctx.t(
                    f"{ranking[0]} and {ranking[1]} fit almost equally well; prefer the simpler story.",
                    f"{ranking[0]} 与 {ranking[1]} 拟合几乎一样好，可选更易解释的那个。",
                )
            )
    plain = _plain_reading(best, fit.params, x_column, y_column, ctx)
    interpretation = ctx.t(
        f"{'The ' + best + ' curve fits best' if len(fits) > 1 else 'The fitted curve'}: it explains "
        f"{fit.r_squared * 100:.1f}% of the variation in {y_column}. {plain}",
        f"{'最合适的是 ' + best + ' 曲线' if len(fits) > 1 else '拟合曲线'}：它解释了 {y_column} {fit.r_squared * 100:.1f}% 的变化。{plain}",
    )
    assumptions = _residual_checks(fit, x, ctx)
    limitations = [
        ctx.t(
            "Standard errors assume the model form is right and the errors are independent with constant spread.",
            "标准误假设模型形式正确、误差独立且波动稳定。",
        ),
        ctx.t(
            f"Do not extrapolate far beyond the observed {x_column} range.", f"不要外推到远超观测范围的 {x_column}。"
        ),
    ]
    if not np.all(np.isfinite(fit.se)):
        limitations.append(
            ctx.t(
                "The parameters are not all identifiable at this solution (singular Jacobian): the fit may be stuck; "
                "try other start values or a simpler model.",
                "在此解处参数不可全部识别（雅可比矩阵奇异）：拟合可能陷入停滞，请换初值或更简单的模型。",
            )
        )
    method = ctx.t(
        "Nonlinear least squares (Levenberg-Marquardt, MINPACK) with an exact complex-step Jacobian; "
        "R² = 1 - RSS/TSS on the original scale.",
        "非线性最小二乘（Levenberg-Marquardt，MINPACK），复步长精确雅可比；R² = 1 - RSS/TSS（原始尺度）。",
    )
    conclusion = ctx.t(
        f"{equation}; R² = {fmt_num(fit.r_squared, 5)}, residual SD = {fmt_num(fit.residual_sd, 5)} on {fit.df} df.",
        f"{equation}；R² = {fmt_num(fit.r_squared, 5)}，残差标准差 = {fmt_num(fit.residual_sd, 5)}（自由度 {fit.df}）。",
    )
    # the overall fit first: when a long result is shortened, its head is what stays
    overall_fit = ctx.t(
        f"R² = {fmt_num(fit.r_squared, 6)}, residual SD = {fmt_num(fit.residual_sd, 6)} on {fit.df} df, n = {fit.n}"
        + (f" (best of {len(fits)} families: {best})." if len(fits) > 1 else "."),
        f"R² = {fmt_num(fit.r_squared, 6)}，残差标准差 = {fmt_num(fit.residual_sd, 6)}（自由度 {fit.df}），n = {fit.n}"
        + (f"（{len(fits)} 个曲线族中最优：{best}）。" if len(fits) > 1 else "。"),
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
        sample_size=fit.n,
        limitations=limitations,
        table=table,
        payload={"model": best, "formula": formulas[best], "equation": equation, "dropped_rows": dropped},
    )


def _equation(model: str, formula: str, b: np.ndarray) -> str:
    f = lambda v: fmt_num(v, 5)  # noqa: E731
    return {
        "linear": lambda: f"y = {f(b[0])} + {f(b[1])}·x",
        "power": lambda: f"y = {f(b[0])}·x^{f(b[1])}",
        "exponential": lambda: f"y = {f(b[0])}·exp({f(b[1])}·x)",
        "logarithmic": lambda: f"y = {f(b[0])} + {f(b[1])}·ln(x)",
    }.get(model, lambda: f"y = {formula} with " + ", ".join(f"b{i} = {fmt_num(v, 6)}" for i, v in enumerate(b, 1)))()


def _plain_reading(model: str, b: np.ndarray, x: str, y: str, ctx: ToolContext) -> str:
    """What the parameters mean for a non-expert."""
    if model == "linear":
        return ctx.t(
            f"Each extra unit of {x} goes with about {fmt_num(b[1])} more {y}.",
            f"{x} 每增加 1 个单位，{y} 大约变化 {fmt_num(b[1])}。",
        )
    if model == "power":
        return ctx.t(
            f"Doubling {x} multiplies {y} by about {fmt_num(2 ** b[1], 3)}.",
            f"{x} 翻倍时，{y} 大约变为原来的 {fmt_num(2 ** b[1], 3)} 倍。",
        )
    if model == "exponential":
        pct = (math.exp(b[1]) - 1) * 100 if abs(b[1]) < 50 else float("inf")
        return ctx.t(
            f"Each extra unit of {x} changes {y} by about {fmt_num(pct, 3)}%.",
            f"{x} 每增加 1 个单位，{y} 大约变化 {fmt_num(pct, 3)}%。",
        )
    if model == "logarithmic":
        return ctx.t(
            f"Doubling {x} adds about {fmt_num(b[1] * math.log(2))} to {y} (gains flatten out).",
            f"{x} 翻倍时，{y} 大约增加 {fmt_num(b[1] * math.log(2))}（增长逐渐放缓）。",
        )
    return ""


def _residual_checks(fit: Fit, x: np.ndarray, ctx: ToolContext) -> list[str]:
    """Residual normality (Shapiro-Wilk) and a runs test on residual signs ordered by x: long runs of
    same-sign residuals mean the curve's shape misses a systematic pattern."""
    out = []
    resid = fit.resid
    if not (fit.rss > 0 and fit.n >= 8):
        return [
            ctx.t("Too few rows (or an exact fit) to check the residuals.", "数据太少（或完全拟合），无法检查残差。")
        ]
    if fit.n <= 5000:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = float(sps.shapiro(resid).pvalue)
        out.append(
            ctx.t(
                f"Residual normality (Shapiro-Wilk): p = {fmt_num(p, 3)}.",
                f"残差正态性（Shapiro-Wilk）：p = {fmt_num(p, 3)}。",
            )
        )
    signs = np.sign(resid[np.argsort(x, kind="stable")])
    signs = signs[signs != 0]
    n_pos, n_neg = int(np.sum(signs > 0)), int(np.sum(signs < 0))
    if n_pos and n_neg:
        runs = 1 + int(np.sum(signs[1:] != signs[:-1]))
        n = n_pos + n_neg
        mean = 2 * n_pos * n_neg / n + 1
        var = (mean - 1) * (mean - 2) / (n - 1)
        z = (runs - mean) / math.sqrt(var) if var > 0 else 0.0
        if z < -2:
            out.append(
                ctx.t(
                    f"Residuals run in long same-sign stretches along x (runs test z = {fmt_num(z, 3)}): the curve misses part of the pattern.",
                    f"残差沿 x 出现长串同号（游程检验 z = {fmt_num(z, 3)}）：曲线没有完全抓住规律。",
                )
            )
        else:
            out.append(
                ctx.t(
                    f"No systematic pattern left in the residuals along x (runs test z = {fmt_num(z, 3)}).",
                    f"残差沿 x 没有明显的系统性模式（游程检验 z = {fmt_num(z, 3)}）。",
                )
            )
    return out
