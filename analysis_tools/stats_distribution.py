"""One-column statistics: normality test, outlier detection and confidence intervals."""

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
    fmt_cell,
    fmt_num,
    fmt_p,
    frame_text,
    label,
    require_numeric,
)

_SHAPIRO_MAX = 5000  # Shapiro-Wilk p-values are accurate up to here; D'Agostino K² beyond
_DISCRETE_MAX = 10  # at most this many distinct values (each repeated): a count, rating or code, not a measurement
_BOOTSTRAP_MAX = 10000  # above this the median CI uses order statistics (exact, no resampling)
_BOOTSTRAP_B = 2000
_SEED = 20240601


def numeric_values(
    data: pd.DataFrame, column: str, ctx: ToolContext, minimum: int, what: str, values: pd.Series | None = None
) -> tuple[np.ndarray, int]:
    """The column's non-missing numbers and how many rows were dropped; errors for too few or constant."""
    values = require_numeric(data, column, ctx) if values is None else values
    clean = values.dropna().to_numpy(dtype=float)
    check_n(len(clean), minimum, what, ctx)
    if np.ptp(clean) == 0:
        raise ToolError(
            "constant_column",
            ctx.t(
                f"{column!r} has the same value ({fmt_num(clean[0])}) in every row.",
                f"{column!r} 每一行的值都相同（{fmt_num(clean[0])}）。",
            ),
            hint=ctx.t("Choose a column that varies.", "请选择有变化的列。"),
            column=column,
        )
    return clean, len(values) - len(clean)


def shape_stats(x: np.ndarray) -> tuple[float, float]:
    """Adjusted skewness and excess kurtosis (the G1/G2 of SAS, SPSS and Excel)."""
    if len(x) < 4:
        return float(sps.skew(x, bias=False)) if len(x) == 3 else float("nan"), float("nan")
    return float(sps.skew(x, bias=False)), float(sps.kurtosis(x, bias=False))


# ---------------------------------------------------------------- normality


def normality_test(
    data: pd.DataFrame, value_column: str, alpha: float = 0.05, ctx: ToolContext | None = None
) -> ToolResult:
    """Check whether a numeric column looks normally distributed (bell-shaped): Shapiro-Wilk up to 5,000 rows, D'Agostino-Pearson beyond, with skewness and kurtosis.

    Args:
        value_column: The numeric column to check (e.g. order value).
        alpha: Significance level, usually 0.05.
    """
    ctx = ctx or ToolContext()
    x, dropped = numeric_values(data, value_column, ctx, 3, ctx.t("a normality test", "正态性检验"))
    n = len(x)
    skew, kurt = shape_stats(x)
    distinct = int(len(np.unique(x)))
    discrete = distinct <= _DISCRETE_MAX and n >= 2 * distinct
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if n <= _SHAPIRO_MAX:
            res = sps.shapiro(x)
            method, name = "shapiro", ctx.t("Shapiro-Wilk test", "Shapiro-Wilk 检验")
        else:
            res = sps.normaltest(x)
            method, name = (
                "dagostino",
                ctx.t("D'Agostino-Pearson K² test (skewness + kurtosis)", "D'Agostino-Pearson K² 检验（偏度 + 峰度）"),
            )
        dag_p = float(sps.normaltest(x).pvalue) if 20 <= n <= _SHAPIRO_MAX else float("nan")
    stat, p = float(res.statistic), float(res.pvalue)
    normal = p >= alpha
    metrics = {
        "statistic": stat,
        "p_value": p,
        "n": n,
        "method": method,
        "skewness": skew,
        "excess_kurtosis": kurt,
        "skewness_definition": "adjusted Fisher-Pearson G1",
        "mean": float(np.mean(x)),
        "median": float(np.median(x)),
        "std": float(np.std(x, ddof=1)),
        "normal": int(normal),
        "alpha": alpha,
        "dagostino_p": dag_p,
        "distinct_values": distinct,
        "discrete": int(discrete),
    }
    shape = _shape_words(skew, kurt, ctx)
    if normal:
        reading = ctx.t(
            f"{value_column} looks close enough to a bell curve ({fmt_p(p)}); averages and t-tests describe it well.",
            f"{value_column} 的分布接近钟形曲线（{fmt_p(p)}），用均值和 t 检验来描述是合适的。",
        )
    else:
        reading = ctx.t(
            f"{value_column} is not bell-shaped ({fmt_p(p)}): {shape}. The median describes a typical value better than the mean, "
            f"and rank-based tests are safer for small samples.",
            f"{value_column} 不是钟形分布（{fmt_p(p)}）：{shape}。中位数比均值更能代表典型值，小样本时用秩检验更稳妥。",
        )
    assumptions = [ctx.t("Values are assumed independent (one row per observation).", "假设各行相互独立。")]
    limitations = []
    if discrete:  # said first: it changes what the test can mean at all
        note = ctx.t(
            f"{value_column} is discrete: it takes only {distinct} distinct values, so it cannot be exactly normal "
            "and the test mostly reacts to the ties; judge it by its frequency table (value_counts) instead.",
            f"{value_column} 是离散变量：只有 {distinct} 个不同取值，不可能严格服从正态分布，检验主要反映的是重复值；"
            "请改看其频数表（value_counts）。",
        )
        reading = note + " " + reading
        limitations.append(note)
    if n > 1000:
        limitations.append(
            ctx.t(
                "With many rows the test flags even tiny, harmless departures from normality; judge by skewness and kurtosis too.",
                "行数很多时，检验连微小、无害的偏离也会判为显著；请同时参考偏度与峰度。",
            )
        )
    if n < 20:
        limitations.append(
            ctx.t("Few rows: the test can easily miss non-normality.", "行数较少：检验可能发现不了非正态。")
        )
    profile = ctx.t(
        f"{value_column}: n = {n}, mean {fmt_num(metrics['mean'])}, median {fmt_num(metrics['median'])}, "
        f"skewness {fmt_num(skew, 3)} (adjusted Fisher-Pearson G1, as Excel SKEW), "
        f"excess kurtosis {fmt_num(kurt, 3)} (G2).",
        f"{value_column}：n = {n}，均值 {fmt_num(metrics['mean'])}，中位数 {fmt_num(metrics['median'])}，"
        f"偏度 {fmt_num(skew, 3)}（校正的 Fisher-Pearson G1，同 Excel SKEW），超额峰度 {fmt_num(kurt, 3)}（G2）。",
    )
    if dropped:
        profile += " " + dropped_note(dropped, ctx)
    stat_name = "W" if method == "shapiro" else "K²"
    conclusion = ctx.t(
        f"{stat_name} = {fmt_num(stat, 5)}, {fmt_p(p)}: normality is {'not rejected' if normal else 'rejected'} at alpha = {alpha}.",
        f"{stat_name} = {fmt_num(stat, 5)}，{fmt_p(p)}：在 alpha = {alpha} 下{'不能拒绝' if normal else '拒绝'}正态性。",
    )
    text = tagged_text(
        data_profile=profile,
        method=name,
        assumptions=assumptions,
        insights=[shape],
        conclusion=conclusion,
        interpretation=reading,
    )
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=reading,
        method=name,
        sample_size=n,
        limitations=limitations,
        payload={"dropped_rows": dropped, "normal": normal},
    )


def _shape_words(skew: float, kurt: float, ctx: ToolContext) -> str:
    parts = []
    if skew == skew and abs(skew) >= 0.5:
        parts.append(
            ctx.t(
                "skewed right (a few large values pull the average up)"
                if skew > 0
                else "skewed left (a few small values pull the average down)",
                "右偏（少数大值拉高了均值）" if skew > 0 else "左偏（少数小值拉低了均值）",
            )
        )
    if kurt == kurt and kurt >= 1:
        parts.append(ctx.t("heavy tails (more extreme values than a bell curve)", "厚尾（极端值比钟形曲线多）"))
    elif kurt == kurt and kurt <= -1:
        parts.append(ctx.t("flat, light tails", "平坦、尾部较轻"))
    return ", ".join(parts) if parts else ctx.t("roughly symmetric with normal tails", "大致对称，尾部正常")


# ---------------------------------------------------------------- outliers


def outlier_detection(
    data: pd.DataFrame,
    value_column: str,
    method: Literal["iqr", "mad", "zscore"] = "iqr",
    threshold: float | None = None,
    label_column: list[str] | None = None,
    max_rows: int = 20,
    ddof: Literal[0, 1] = 1,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Find unusually large or small values in a numeric column (IQR fences, robust z-score / MAD, or the classic z-score), with the count, share, the range of the flagged values and the flagged rows.

    Args:
        value_column: The numeric column to scan (e.g. order amount).
        method: The rule for the headline and the rows listed; iqr: outside Q1 - k·IQR, Q3 + k·IQR; mad: robust z from the median absolute deviation; zscore: |x - mean| / sd. All three rules are always counted.
        threshold: k for iqr (default 1.5; 3 = extreme only), the robust-z cut-off for mad (default 3.5) or the |z| cut-off for zscore (default 3).
        label_column: One column or several that name each row (e.g. "Name", or ["Name", "Cabin"]), shown with the flagged rows.
        max_rows: How many flagged rows to list, most extreme first (1-200).
        ddof: The sd of the z-scores; 1: sample sd (default, as pandas .std()); 0: population sd (as numpy .std() and scipy.stats.zscore).
    """
    ctx = ctx or ToolContext()
    values = require_numeric(data, value_column, ctx)
    x, dropped = numeric_values(data, value_column, ctx, 4, ctx.t("outlier detection", "异常值检测"), values)
    k = threshold if threshold is not None and method == "iqr" else 1.5
    zcut = threshold if threshold is not None and method == "mad" else 3.5
    classic_cut = threshold if threshold is not None and method == "zscore" else 3.0
    if k <= 0 or zcut <= 0 or classic_cut <= 0:
        raise ToolError(
            "invalid_arguments",
            ctx.t("threshold must be positive.", "threshold 必须为正数。"),
            hint=ctx.t(
                "Use e.g. 1.5 or 3 for iqr, 3.5 for mad, 3 for zscore.",
                "例如 iqr 用 1.5 或 3，mad 用 3.5，zscore 用 3。",
            ),
        )
    labels = [label_column] if isinstance(label_column, str) else list(label_column or [])
    for name in labels:
        if name not in data.columns:
            raise ToolError(
                "column_not_found",
                ctx.t(f"Column {name!r} does not exist.", f"列 {name!r} 不存在。"),
                column=name,
                hint=ctx.t("Pass columns that name the rows.", "请给出能标识行的列。"),
            )
    q1, median, q3 = np.percentile(x, [25, 50, 75])
    iqr = q3 - q1
    low, high = q1 - k * iqr, q3 + k * iqr
    mad = float(np.median(np.abs(x - median)))
    # robust z (Iglewicz-Hoaglin); when over half the values are equal MAD is 0 and the mean absolute
    # deviation (scaled to match sigma under normality) takes its place
    scale = mad / 0.6744897501960817 if mad > 0 else float(np.mean(np.abs(x - median))) * 1.2533141373155003
    z_all = (values.to_numpy(dtype=float) - median) / scale
    iqr_mask = (values < low) | (values > high)
    mad_mask = pd.Series(np.abs(z_all) > zcut, index=values.index) & values.notna()
    ddof = 0 if int(ddof) == 0 else 1
    mean, sd = float(np.mean(x)), float(np.std(x, ddof=ddof))
    z_classic = (values - mean) / sd if sd > 0 else values * 0.0
    classic_mask = (z_classic.abs() > classic_cut) & values.notna()
    mask = {"iqr": iqr_mask, "mad": mad_mask, "zscore": classic_mask}[method]
    n = len(x)
    count = int(mask.sum())
    limit = max(1, min(int(max_rows), 200))
    # positions, not index labels: rows are numbered from 1 as a spreadsheet user counts data rows
    # (as rank_values and clean_data do), and a derived table's index may repeat labels
    positions = np.flatnonzero(mask.to_numpy())
    distance = np.abs(values.to_numpy(dtype=float)[positions] - median)
    order = positions[np.argsort(-distance, kind="stable")][: max(limit, 10)]
    examples = [
        {
            "row": int(p) + 1,
            "value": float(values.iat[p]),
            "robust_z": float(z_all[p]),
            "z": float(z_classic.iat[p]),
            **({"label": " · ".join(label(data[c].iat[p]) for c in labels)} if labels else {}),
        }
        for p in order
    ]
    metrics = {
        "n": n,
        "method": method,
        "n_outliers": count,
        "share": count / n,
        "n_high": int((mask & (values > median)).sum()),
        "n_low": int((mask & (values < median)).sum()),
        "q1": q1,
        "median": median,
        "q3": q3,
        "iqr": iqr,
        "lower_fence": low,
        "upper_fence": high,
        "mad": mad,
        "mean": mean,
        "std": sd,
        "n_outliers.iqr": int(iqr_mask.sum()),
        "n_outliers.mad": int(mad_mask.sum()),
        "n_outliers.zscore": int(classic_mask.sum()),
        "threshold": {"iqr": k, "mad": zcut, "zscore": classic_cut}[method],
        "ddof": ddof,
    }
    flagged = values[mask]
    if count:  # the range of what was flagged: where the unusual values start and how far they go
        metrics["flagged_min"] = float(flagged.min())
        metrics["flagged_max"] = float(flagged.max())
    for i, ex in enumerate(examples[:5], 1):
        metrics[f"example_{i}"] = ex["value"]
    rule = {
        "iqr": ctx.t(
            f"IQR fences: below {fmt_num(low)} or above {fmt_num(high)} (Q1 - {k}·IQR, Q3 + {k}·IQR).",
            f"IQR 界限：低于 {fmt_num(low)} 或高于 {fmt_num(high)}（Q1 - {k}·IQR，Q3 + {k}·IQR）。",
        ),
        "mad": ctx.t(
            f"Robust z-score |z| > {zcut} with z = 0.6745·(x - median)/MAD (MAD = {fmt_num(mad)}).",
            f"稳健 z 分数 |z| > {zcut}，z = 0.6745·(x - 中位数)/MAD（MAD = {fmt_num(mad)}）。",
        ),
        "zscore": ctx.t(
            f"Classic z-score |z| > {classic_cut} with z = (x - mean)/sd (mean {fmt_num(mean)}, "
            f"{'sample' if ddof else 'population'} sd {fmt_num(sd)}, ddof={ddof}).",
            f"经典 z 分数 |z| > {classic_cut}，z = (x - 均值)/标准差（均值 {fmt_num(mean)}，"
            f"{'样本' if ddof else '总体'}标准差 {fmt_num(sd)}，ddof={ddof}）。",
        ),
    }[method]
    if count:
        shown = ", ".join(fmt_num(e["value"]) for e in examples[:5])
        interpretation = ctx.t(
            f"{count} of {n} values of {value_column} ({count / n:.1%}) are unusually far from the typical value "
            f"{fmt_num(median)} (e.g. {shown}). Check whether they are errors or genuine big cases before averaging.",
            f"{value_column} 的 {n} 个值中有 {count} 个（{count / n:.1%}）明显偏离典型值 {fmt_num(median)}"
            f"（例如 {shown}）。求平均前请确认它们是录入错误还是真实的大额情况。",
        )
    else:
        interpretation = ctx.t(
            f"No unusual values in {value_column}: every value lies within the normal range.",
            f"{value_column} 中没有异常值：所有值都在正常范围内。",
        )
    if dropped:
        interpretation += " " + dropped_note(dropped, ctx)
    others = [m for m in ("iqr", "mad", "zscore") if m != method]
    insights = [
        ctx.t(
            f"{metrics['n_high']} high and {metrics['n_low']} low outliers.",
            f"偏高 {metrics['n_high']} 个，偏低 {metrics['n_low']} 个。",
        ),
        ctx.t(
            "Other rules: " + ", ".join(f"{m} flags {metrics['n_outliers.' + m]}" for m in others) + ".",
            "其他规则：" + "，".join(f"{m} 标记 {metrics['n_outliers.' + m]} 个" for m in others) + "。",
        ),
    ]
    limitations = [
        ctx.t(
            "An outlier is only unusual, not necessarily wrong; never delete values just because they are flagged.",
            "异常值只是“不寻常”，不一定是错误；不要仅因被标记就删除。",
        )
    ]
    if abs(shape_stats(x)[0]) > 1:
        limitations.append(
            ctx.t(
                "The data are strongly skewed, so the long tail produces many flags; consider a log scale.",
                "数据明显偏斜，长尾会产生很多标记；可考虑对数尺度。",
            )
        )
    listed = _flagged_rows(examples[:limit], " · ".join(labels), value_column, count, ctx)
    text = tagged_text(
        data_profile=ctx.t(
            f"{value_column}: n = {n}, Q1 {fmt_num(q1)}, median {fmt_num(median)}, Q3 {fmt_num(q3)}.",
            f"{value_column}：n = {n}，Q1 {fmt_num(q1)}，中位数 {fmt_num(median)}，Q3 {fmt_num(q3)}。",
        ),
        method=rule,
        insights=insights,
        flagged_rows=listed,
        conclusion=ctx.t(f"{count} outliers ({count / n:.1%}).", f"异常值 {count} 个（{count / n:.1%}）。")
        + (
            ctx.t(
                f" Flagged values run from {fmt_cell(metrics['flagged_min'])} to {fmt_cell(metrics['flagged_max'])}.",
                f"被标记的值从 {fmt_cell(metrics['flagged_min'])} 到 {fmt_cell(metrics['flagged_max'])}。",
            )
            if count
            else ""
        ),
        interpretation=interpretation,
    )
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=interpretation,
        method=rule,
        sample_size=n,
        limitations=limitations,
        table=pd.DataFrame(examples) if examples else None,
        payload={"examples": examples, "outlier_rows": [int(p) + 1 for p in positions[:1000]], "dropped_rows": dropped},
    )


def _flagged_rows(examples: list[dict], label_column: str, value_column: str, count: int, ctx: ToolContext) -> str:
    """The flagged rows, most extreme first: row, label, value, classic and robust z (a table as
    frame_text prints every table: columns as wide as their values, not a fixed padding)."""
    if not examples:
        return ""
    table = pd.DataFrame(
        {
            "row": [e["row"] for e in examples],
            **({label_column: [e.get("label", "")[:56] for e in examples]} if label_column else {}),
            str(value_column): [e["value"] for e in examples],
            "z": [round(e["z"], 2) for e in examples],
            "robust_z": [round(e["robust_z"], 2) for e in examples],
        }
    )
    lines = frame_text(table).splitlines()
    if count > len(examples):
        lines.append(
            ctx.t(
                f"... {count - len(examples)} more (max_rows to list more).",
                f"……另有 {count - len(examples)} 行（可调大 max_rows）。",
            )
        )
    return "\n".join(lines)


# ---------------------------------------------------------------- confidence intervals


def confidence_interval(
    data: pd.DataFrame,
    value_column: str,
    statistic: Literal["mean", "median", "proportion"] = "mean",
    confidence: float = 0.95,
    success_value: str | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """A confidence interval (plausible range) for the mean (t-interval), the median (bootstrap) or a proportion (Wilson) of one column.

    Args:
        value_column: The column to summarise (numeric for mean/median; yes/no for proportion).
        statistic: mean (t-interval), median (bootstrap percentile interval, fixed seed; order statistics above 10,000 rows) or proportion (Wilson score interval).
        confidence: Confidence level between 0.5 and 0.999, usually 0.95.
        success_value: For a proportion: the value that counts as success when the column is not plain yes/no.
    """
    ctx = ctx or ToolContext()
    if not 0.5 <= confidence < 1:
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                "confidence must be between 0.5 and 0.999 (e.g. 0.95).",
                "confidence 必须在 0.5 到 0.999 之间（如 0.95）。",
            ),
            hint=ctx.t("Write 95% as 0.95.", "95% 请写成 0.95。"),
        )
    if statistic == "proportion":
        from .stats_categorical import binary_values, wilson_interval

        outcome, success = binary_values(data, value_column, success_value, ctx)
        x = outcome.dropna().to_numpy(dtype=float)
        check_n(len(x), 1, ctx.t("a proportion", "比例"), ctx)
        estimate = float(x.mean())
        low, high = wilson_interval(float(x.sum()), len(x), confidence)
        method = ctx.t(f"Wilson score interval for the share of {success}.", f"{success} 所占比例的 Wilson 得分区间。")
        what = ctx.t(f"share of {value_column} = {success}", f"{value_column} = {success} 的比例")
        dropped, n, se = len(outcome) - len(x), len(x), math.sqrt(estimate * (1 - estimate) / len(x))
    else:
        x, dropped = numeric_values(data, value_column, ctx, 2, ctx.t("a confidence interval", "置信区间"))
        n = len(x)
        if statistic == "mean":
            from .common import two_pass_mean

            estimate = float(two_pass_mean(x))
            se = float(np.std(x, ddof=1) / math.sqrt(n))
            tcrit = float(sps.t.ppf(1 - (1 - confidence) / 2, n - 1))
            low, high = estimate - tcrit * se, estimate + tcrit * se
            method = ctx.t(f"t-interval for the mean (df = {n - 1}).", f"均值的 t 区间（自由度 {n - 1}）。")
        else:
            estimate = float(np.median(x))
            low, high, method = _median_interval(x, confidence, ctx)
            se = float("nan")
        what = ctx.t(
            f"{statistic} of {value_column}", f"{value_column} 的{'均值' if statistic == 'mean' else '中位数'}"
        )
    fmt = (lambda v: f"{v:.1%}") if statistic == "proportion" else fmt_num
    level = f"{confidence:.0%}" if (confidence * 100).is_integer() else f"{confidence:.1%}"
    metrics = {
        "statistic_name": statistic,
        "estimate": estimate,
        "ci_low": low,
        "ci_high": high,
        "confidence": confidence,
        "n": n,
        "se": se,
        "margin_of_error": (high - low) / 2,
    }
    interpretation = ctx.t(
        f"The {what} is {fmt(estimate)}; with {level} confidence the true value lies between {fmt(low)} and {fmt(high)}.",
        f"{what}为 {fmt(estimate)}；有 {level} 的把握认为真实值在 {fmt(low)} 到 {fmt(high)} 之间。",
    )
    if dropped:
        interpretation += " " + dropped_note(dropped, ctx)
    limitations = [
        ctx.t(
            "The interval covers sampling noise only, not bias in how the data were collected.",
            "区间只反映抽样波动，不反映数据收集方式带来的偏差。",
        )
    ]
    assumptions = []
    if statistic == "mean":
        skew = shape_stats(x)[0]
        assumptions.append(
            ctx.t(
                f"t-interval assumes a roughly normal mean; skewness {fmt_num(skew, 3)} with n = {n}.",
                f"t 区间假设均值近似正态；偏度 {fmt_num(skew, 3)}，n = {n}。",
            )
        )
        if abs(skew) > 1 and n < 30:
            limitations.append(
                ctx.t(
                    "Skewed data and few rows: the mean's interval may be off; consider statistic=median.",
                    "数据偏斜且行数少：均值区间可能不准，可考虑 statistic=median。",
                )
            )
    text = tagged_text(
        data_profile=ctx.t(f"{value_column}: n = {n}.", f"{value_column}：n = {n}。")
        + (" " + dropped_note(dropped, ctx) if dropped else ""),
        method=method,
        assumptions=assumptions,
        conclusion=ctx.t(
            f"{statistic} = {fmt_num(estimate, 6)}, {level} CI [{fmt_num(low, 6)}, {fmt_num(high, 6)}].",
            f"{statistic} = {fmt_num(estimate, 6)}，{level} 置信区间 [{fmt_num(low, 6)}, {fmt_num(high, 6)}]。",
        ),
        interpretation=interpretation,
    )
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=n,
        limitations=limitations,
        payload={"dropped_rows": dropped},
    )


def _median_interval(x: np.ndarray, confidence: float, ctx: ToolContext) -> tuple[float, float, str]:
    """Bootstrap percentile interval (fixed seed, so reruns agree); for big samples the distribution-free
    order-statistic interval, which needs no resampling."""
    n = len(x)
    tail = (1 - confidence) / 2
    if n > _BOOTSTRAP_MAX:
        j = max(int(sps.binom.ppf(tail, n, 0.5)), 1)  # 1-based rank of the lower bound; upper is n - j + 1
        ordered = np.partition(x, [j - 1, n - j])
        return (
            float(ordered[j - 1]),
            float(ordered[n - j]),
            ctx.t(
                "Distribution-free interval for the median from order statistics (binomial).",
                "基于次序统计量（二项分布）的中位数无分布区间。",
            ),
        )
    rng = np.random.default_rng(_SEED)
    medians = np.empty(_BOOTSTRAP_B)
    chunk = max(1, 2_000_000 // n)  # bound memory: chunk x n indices at a time
    for start in range(0, _BOOTSTRAP_B, chunk):
        stop = min(start + chunk, _BOOTSTRAP_B)
        medians[start:stop] = np.median(x[rng.integers(0, n, size=(stop - start, n))], axis=1)
    low, high = np.quantile(medians, [tail, 1 - tail])
    return (
        float(low),
        float(high),
        ctx.t(
            f"Bootstrap percentile interval for the median ({_BOOTSTRAP_B} resamples, fixed seed).",
            f"中位数的 Bootstrap 百分位区间（{_BOOTSTRAP_B} 次重抽样，固定随机种子）。",
        ),
    )
