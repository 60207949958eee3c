"""Correlation: Pearson, Spearman or Kendall for one pair (with a CI) or a whole matrix."""

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
    fmt_num,
    fmt_p,
    numeric_columns,
    require_numeric,
    significance_word,
)


def correlation_analysis(
    data: pd.DataFrame,
    columns: list[str] | None = None,
    x_column: str | None = None,
    y_column: str | None = None,
    method: Literal["pearson", "spearman", "kendall"] = "pearson",
    alpha: float = 0.05,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Measure how strongly numeric columns move together (Pearson, Spearman or Kendall correlation with p-values).

    Give x_column and y_column for one pair (with a 95% confidence interval for Pearson), or a list of
    columns for a correlation matrix. Correlation is not causation.

    Args:
        columns: Columns for a correlation matrix; omit (and omit x/y) to use every numeric column.
        x_column: First column of a single pair.
        y_column: Second column of a single pair.
        method: pearson (linear), spearman (rank, robust to outliers) or kendall (rank, small samples).
        alpha: Significance level for the p-values.
    """
    ctx = ctx or ToolContext()
    if x_column or y_column:
        if not (x_column and y_column):
            raise ToolError(
                "invalid_arguments",
                ctx.t("Give both x_column and y_column.", "请同时给出 x_column 和 y_column。"),
                hint=ctx.t("Or pass columns=[...] for a matrix.", "或用 columns=[...] 计算相关矩阵。"),
            )
        chosen = [x_column, y_column]
    else:
        chosen = list(dict.fromkeys(columns)) if columns else numeric_columns(data)[:30]
    if len(chosen) < 2 or len(set(chosen)) < 2:
        raise ToolError(
            "insufficient_data",
            ctx.t("Correlation needs at least two different numeric columns.", "相关分析至少需要两个不同的数值列。"),
            hint=ctx.t(f"Numeric columns: {numeric_columns(data)[:15]}", f"数值列：{numeric_columns(data)[:15]}"),
        )
    values = pd.DataFrame({c: require_numeric(data, c, ctx) for c in chosen})
    pairs = []
    for i in range(len(chosen)):
        for j in range(i + 1, len(chosen)):
            pairs.append(_pair(values[chosen[i]], values[chosen[j]], chosen[i], chosen[j], method, ctx))
    if len(chosen) == 2:
        return _pair_result(pairs[0], method, alpha, len(data), ctx)
    return _matrix_result(pairs, chosen, method, alpha, len(data), ctx)


def _pair(x: pd.Series, y: pd.Series, a: str, b: str, method: str, ctx: ToolContext) -> dict:
    keep = x.notna() & y.notna()
    xv, yv = x[keep].to_numpy(dtype=float), y[keep].to_numpy(dtype=float)
    n = len(xv)
    check_n(n, 3, f"{a} ~ {b}", ctx)
    if np.ptp(xv) == 0 or np.ptp(yv) == 0:
        return {
            "a": a,
            "b": b,
            "r": float("nan"),
            "p_value": float("nan"),
            "n": n,
            "dropped": int((~keep).sum()),
            "constant": True,
        }
    fn = {"pearson": sps.pearsonr, "spearman": sps.spearmanr, "kendall": sps.kendalltau}[method]
    res = fn(xv, yv)
    r, p = float(res[0]), float(res[1])
    out = {"a": a, "b": b, "r": r, "p_value": p, "n": n, "dropped": int((~keep).sum())}
    if method == "pearson" and n > 3 and abs(r) < 1:
        z, half = math.atanh(r), sps.norm.ppf(0.975) / math.sqrt(n - 3)
        out.update(ci_low=math.tanh(z - half), ci_high=math.tanh(z + half))
    return out


_LOCKSTEP = 0.999  # |r| above this: the two columns are one quantity (a copy, a unit change or a sum of the other)


def _third_factor_note(ctx: ToolContext) -> str:
    """The usual caution for a correlation between separately measured columns."""
    return ctx.t(
        "Correlation is not causation: a third factor may drive both.", "相关不等于因果：可能有第三个因素同时影响二者。"
    )


def causation_note(r: float, a: str, b: str, ctx: ToolContext) -> str:
    """What a correlation of this size does and does not say: near ±1 the columns move in lockstep, which
    real separate measurements almost never do, so one is most likely derived from the other."""
    if r == r and abs(r) > _LOCKSTEP:
        return ctx.t(
            f"{a} and {b} move in lockstep (|r| > {_LOCKSTEP}): they are most likely the same quantity or one is "
            f"computed from the other (a unit conversion, a total, a copy), not two separate measurements where one drives the other.",
            f"{a} 与 {b} 几乎完全同步（|r| > {_LOCKSTEP}）：很可能是同一个量，或其中一个由另一个计算而来（换算单位、合计、副本），"
            "而不是因果关系或第三个因素造成的关联。",
        )
    return _third_factor_note(ctx)


def _strength(r: float, ctx: ToolContext) -> str:
    a = abs(r)
    words = ctx.t("very weak|weak|moderate|strong|very strong", "极弱|弱|中等|强|极强").split("|")
    return words[sum(a >= c for c in (0.2, 0.4, 0.6, 0.8))]


def _pair_result(q: dict, method: str, alpha: float, n_rows: int, ctx: ToolContext) -> ToolResult:
    a, b, r, p, n = q["a"], q["b"], q["r"], q["p_value"], q["n"]
    if q.get("constant"):
        raise ToolError(
            "insufficient_data",
            ctx.t(f"{a} or {b} does not vary, so correlation is undefined.", f"{a} 或 {b} 没有变化，无法计算相关。"),
            hint=ctx.t("Pick columns that vary.", "请选择有变化的列。"),
        )
    direction = ctx.t("rise together" if r > 0 else "move in opposite directions", "同向变化" if r > 0 else "反向变化")
    metrics = {
        "r": r,
        "p_value": p,
        "n": n,
        "effect_size": r,
        "method": method,
        "alpha": alpha,
        f"r.{a}~{b}": r,
        f"p_value.{a}~{b}": p,
    }
    ci = ""
    if "ci_low" in q:
        metrics.update(ci_low=q["ci_low"], ci_high=q["ci_high"])
        ci = ctx.t(
            f", 95% CI {fmt_num(q['ci_low'], 3)} to {fmt_num(q['ci_high'], 3)}",
            f"，95% 置信区间 {fmt_num(q['ci_low'], 3)} 至 {fmt_num(q['ci_high'], 3)}",
        )
    causation = causation_note(r, a, b, ctx)
    interpretation = ctx.t(
        f"{a} and {b} tend to {direction} ({_strength(r, ctx)}, r = {fmt_num(r, 3)}); this {'is unlikely' if p < alpha else 'could well be'} "
        f"a chance pattern ({fmt_p(p)}). {causation}",
        f"{a} 与 {b} 倾向于{direction}（{_strength(r, ctx)}相关，r = {fmt_num(r, 3)}）；这{'不太可能' if p < alpha else '很可能'}只是偶然（{fmt_p(p)}）。{causation}",
    )
    if q["dropped"]:
        interpretation += " " + dropped_note(q["dropped"], ctx)
    method_text = {
        "pearson": ctx.t("Pearson correlation (linear relationship).", "Pearson 相关（线性关系）。"),
        "spearman": ctx.t(
            "Spearman rank correlation (monotonic relationship, robust to outliers).",
            "Spearman 秩相关（单调关系，对异常值稳健）。",
        ),
        "kendall": ctx.t("Kendall rank correlation (tau-b).", "Kendall 秩相关（tau-b）。"),
    }[method]
    conclusion = ctx.t(
        f"r = {fmt_num(r, 4)}{ci}, {fmt_p(p)}, n = {n} — {significance_word(p, alpha, ctx)}.",
        f"r = {fmt_num(r, 4)}{ci}，{fmt_p(p)}，n = {n} —— {significance_word(p, alpha, ctx)}。",
    )
    limitations = [causation]
    if method == "pearson":
        limitations.append(
            ctx.t(
                "Pearson only captures straight-line relationships and is sensitive to outliers.",
                "Pearson 只反映直线关系，且对异常值敏感。",
            )
        )
    text = tagged_text(
        data_profile=ctx.t(f"{a} vs {b}: {n} complete pairs.", f"{a} 与 {b}：{n} 对完整数据。"),
        method=method_text,
        insights=[
            ctx.t(
                f"{_strength(r, ctx).capitalize()} {'positive' if r > 0 else 'negative'} relationship.",
                f"{_strength(r, ctx)}{'正' if r > 0 else '负'}相关。",
            )
        ],
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
        payload={"pairs": [q]},
    )


def _matrix_result(
    pairs: list[dict], cols: list[str], method: str, alpha: float, n_rows: int, ctx: ToolContext
) -> ToolResult:
    matrix = pd.DataFrame(np.eye(len(cols)), index=cols, columns=cols)
    metrics: dict = {"method": method, "alpha": alpha, "n": n_rows, "n_pairs": len(pairs)}
    for q in pairs:
        matrix.loc[q["a"], q["b"]] = matrix.loc[q["b"], q["a"]] = q["r"]
        metrics[f"r.{q['a']}~{q['b']}"] = q["r"]
        metrics[f"p_value.{q['a']}~{q['b']}"] = q["p_value"]
    ranked = sorted((q for q in pairs if q["r"] == q["r"]), key=lambda q: -abs(q["r"]))
    causation = (
        causation_note(ranked[0]["r"], ranked[0]["a"], ranked[0]["b"], ctx) if ranked else _third_factor_note(ctx)
    )
    insights = [
        ctx.t(
            f"{q['a']} ~ {q['b']}: r = {fmt_num(q['r'], 3)} ({_strength(q['r'], ctx)}, {fmt_p(q['p_value'])}, n = {q['n']})",
            f"{q['a']} ~ {q['b']}：r = {fmt_num(q['r'], 3)}（{_strength(q['r'], ctx)}，{fmt_p(q['p_value'])}，n = {q['n']}）",
        )
        for q in ranked[:8]
    ]
    grid = matrix.map(lambda v: fmt_num(v, 3)).to_string()
    if ranked:
        s = ranked[0]
        metrics.update(r=s["r"], p_value=s["p_value"], strongest_pair=f"{s['a']}~{s['b']}")
        interpretation = ctx.t(
            f"The strongest link is between {s['a']} and {s['b']} (r = {fmt_num(s['r'], 3)}, {fmt_p(s['p_value'])}). {causation}",
            f"关联最强的是 {s['a']} 与 {s['b']}（r = {fmt_num(s['r'], 3)}，{fmt_p(s['p_value'])}）。{causation}",
        )
    else:
        interpretation = ctx.t(
            "No correlation could be computed (columns do not vary).", "无法计算相关（列没有变化）。"
        )
    n_sig = sum(q["p_value"] < alpha for q in ranked)
    text = tagged_text(
        data_profile=grid,
        method=ctx.t(
            f"{method.capitalize()} correlation matrix, pairwise complete rows.",
            f"{method} 相关矩阵，按列对使用完整数据。",
        ),
        insights=insights,
        conclusion=ctx.t(
            f"{n_sig} of {len(pairs)} pairs are significant at alpha = {alpha} (not adjusted for multiple testing).",
            f"{len(pairs)} 对中有 {n_sig} 对在 alpha = {alpha} 下显著（未做多重比较校正）。",
        ),
        interpretation=interpretation,
    )
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=interpretation,
        method=f"{method} correlation matrix",
        sample_size=n_rows,
        table=matrix,
        limitations=[
            causation,
            ctx.t(
                "Many pairs tested at once: some may look significant by chance.", "同时检验很多对，部分可能偶然显著。"
            ),
        ],
        payload={"pairs": pairs},
    )
