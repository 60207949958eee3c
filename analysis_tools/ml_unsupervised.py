"""Finding structure without a target: customer/product segments (k-means), the main patterns among
many numeric columns (PCA) and unusual rows (isolation forest)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from . import charts
from .base import ToolContext, ToolError, ToolResult, tagged_text
from .common import clean_metrics, dropped_note, fmt_num, label
from .ml_common import SEED, numeric_matrix, value_phrase

_SELECT_ROWS = 10_000  # k is chosen on a sample of this many rows (k-means on all rows afterwards)
_SILHOUETTE_ROWS = 5_000


def _standardize(frame: pd.DataFrame, ddof: int = 0) -> np.ndarray:
    x = frame.to_numpy(dtype=float)
    sd = x.std(axis=0, ddof=ddof)
    return (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


# ---------------------------------------------------------------- k-means segments


def cluster_segments(
    data: pd.DataFrame,
    columns: list[str] | None = None,
    k: int | None = None,
    plot: bool = False,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Split rows into segments of similar rows (k-means on standardized numeric columns; the number of segments is chosen by silhouette unless given), with each segment's size and profile in plain words.

    Args:
        columns: Numeric columns describing each row; omit to use every numeric column.
        k: Number of segments (2-20); omit to choose 2-8 by the silhouette score.
        plot: Also draw the segments on the two main PCA directions.
    """
    from sklearn.cluster import KMeans

    ctx = ctx or ToolContext()
    frame, dropped = numeric_matrix(data, columns, ctx, minimum=10, what=ctx.t("clustering", "聚类"))
    z = _standardize(frame)
    n = len(z)
    rng = np.random.default_rng(SEED)
    sample = z[rng.choice(n, _SELECT_ROWS, replace=False)] if n > _SELECT_ROWS else z
    if k is not None and not 2 <= k <= min(20, n - 1):
        raise ToolError(
            "invalid_arguments",
            ctx.t(f"k must be between 2 and {min(20, n - 1)}.", f"k 必须在 2 到 {min(20, n - 1)} 之间。"),
            hint=ctx.t("Omit k to choose it automatically.", "省略 k 即可自动选择。"),
        )
    candidates = [k] if k else list(range(2, min(8, len(sample) - 1) + 1))
    silhouettes: dict[int, float] = {}
    fitted: dict[int, Any] = {}  # k -> its KMeans
    with threadpool_limits(1):  # OpenMP threads busy-wait on a shared machine; single-threaded k-means is fast here
        _fit_candidates(sample, candidates, silhouettes, fitted)
    if not silhouettes:
        raise ToolError(
            "insufficient_data",
            ctx.t(
                "The rows do not separate into segments (too few distinct values).",
                "这些行无法分成不同的群组（不同取值太少）。",
            ),
            hint=ctx.t("Use more rows or more varied columns.", "请使用更多数据或变化更大的列。"),
        )
    chosen = k or max(silhouettes, key=silhouettes.__getitem__)
    # the sample model is the answer for small data; on large data it seeds one k-means run over all rows
    with threadpool_limits(1):
        model = (
            fitted[chosen]
            if n <= _SELECT_ROWS
            else KMeans(n_clusters=chosen, init=fitted[chosen].cluster_centers_, n_init=1, random_state=SEED).fit(z)
        )
    # Segment 1 is the largest: names do not depend on k-means' arbitrary numbering
    order = pd.Series(model.labels_).value_counts().index.tolist()
    seg = pd.Series(model.labels_, index=frame.index).map({old: i + 1 for i, old in enumerate(order)})
    return _segments_result(frame, seg, chosen, silhouettes, dropped, k is None, plot, ctx)


def _fit_candidates(
    sample: np.ndarray, candidates: list[int], silhouettes: dict[int, float], fitted: dict[int, Any]
) -> None:
    """k-means for each candidate k on the sample, with its silhouette score."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score

    for c in candidates:
        fitted[c] = KMeans(n_clusters=c, n_init=10, random_state=SEED).fit(sample)
        labels = fitted[c].labels_
        if len(set(labels)) < 2:
            continue
        silhouettes[c] = float(
            silhouette_score(sample, labels, sample_size=min(len(sample), _SILHOUETTE_ROWS), random_state=SEED)
        )


def _segments_result(
    frame: pd.DataFrame,
    seg: pd.Series,
    k: int,
    silhouettes: dict,
    dropped: int,
    auto: bool,
    plot: bool,
    ctx: ToolContext,
) -> ToolResult:
    overall_mean, overall_sd = frame.mean(), frame.std(ddof=0).replace(0, np.nan)
    means = frame.groupby(seg).mean()
    sizes = seg.value_counts().sort_index()
    n = len(frame)
    metrics: dict = {"n": n, "k": k, "silhouette": silhouettes.get(k, float("nan")), "n_columns": frame.shape[1]}
    metrics.update({f"silhouette.k{c}": s for c, s in silhouettes.items()})
    lines, rows = [], []
    for s in sizes.index:
        metrics[f"size.{s}"] = int(sizes[s])
        metrics[f"share.{s}"] = sizes[s] / n
        zs = (means.loc[s] - overall_mean) / overall_sd
        for col in frame.columns:
            metrics[f"mean.{s}.{col}"] = means.loc[s, col]
        marked = zs.abs().sort_values(ascending=False).index[:3]
        traits = ", ".join(value_phrase(c, means.loc[s, c], zs[c], ctx) for c in marked)
        lines.append(
            ctx.t(
                f"Segment {s} ({sizes[s]:,} rows, {sizes[s] / n * 100:.0f}%): {traits}",
                f"第 {s} 群（{sizes[s]:,} 行，{sizes[s] / n * 100:.0f}%）：{traits}",
            )
        )
        rows.append(
            {"segment": int(s), "size": int(sizes[s]), "share_pct": sizes[s] / n * 100, **means.loc[s].to_dict()}
        )
    sil = metrics["silhouette"]
    quality = (
        ctx.t("clearly separated", "区分明显")
        if sil >= 0.5
        else ctx.t("moderately separated", "有一定区分")
        if sil >= 0.25
        else ctx.t("only weakly separated (the data may not have natural groups)", "区分较弱（数据可能没有天然分组）")
    )
    interpretation = ctx.t(
        f"The rows fall into {k} segments, {quality}. " + " ".join(f"{ln}." for ln in lines[:4]),
        f"这些行可分为 {k} 个群组，{quality}。" + " ".join(f"{ln}。" for ln in lines[:4]),
    )
    method = ctx.t(
        f"k-means (k = {k}{', chosen by the best silhouette score among 2-8' if auto else ', as requested'}) on "
        f"standardized columns {list(frame.columns)[:12]}; segments numbered from the largest.",
        f"k-means（k = {k}{'，在 2-8 中按轮廓系数最优选择' if auto else '，按要求指定'}），对标准化后的列 {list(frame.columns)[:12]} 聚类；群组按大小编号。",
    )
    assumptions = [
        ctx.t(
            "Columns were standardized so that each counts equally regardless of its unit.",
            "各列已标准化，使不同单位的列权重相同。",
        )
    ]
    if dropped:
        assumptions.append(dropped_note(dropped, ctx))
    limitations = [
        ctx.t(
            "k-means finds round, similar-sized groups; segments are a summary, not a fact about the data.",
            "k-means 倾向于找大小相近的球形群组；群组是一种概括，而非数据的客观事实。",
        )
    ]
    if len(frame) > _SELECT_ROWS and auto:
        limitations.append(
            ctx.t(
                f"k was chosen on a random sample of {_SELECT_ROWS:,} rows.",
                f"k 是在随机抽取的 {_SELECT_ROWS:,} 行上选择的。",
            )
        )
    result = ToolResult(
        metrics=clean_metrics(metrics),
        interpretation=interpretation,
        method=method,
        sample_size=n,
        limitations=limitations,
        table=pd.DataFrame(rows),
        payload={"segment_sizes": {int(s): int(sizes[s]) for s in sizes.index}},
    )
    if plot and frame.shape[1] >= 2:
        _plot_segments(frame, seg, k, result, ctx)
    result.text = tagged_text(
        data_profile=ctx.t(f"{n} rows, {frame.shape[1]} numeric columns.", f"{n} 行，{frame.shape[1]} 个数值列。"),
        method=method,
        assumptions=assumptions,
        insights=lines,
        conclusion=ctx.t(f"{k} segments, silhouette {fmt_num(sil, 3)}.", f"{k} 个群组，轮廓系数 {fmt_num(sil, 3)}。"),
        interpretation=interpretation,
    )
    return result


def _plot_segments(frame: pd.DataFrame, seg: pd.Series, k: int, result: ToolResult, ctx: ToolContext) -> None:
    from sklearn.decomposition import PCA

    keep = frame.sample(min(len(frame), 5000), random_state=SEED).index
    z = _standardize(frame.loc[keep])
    coords = PCA(n_components=2, random_state=SEED).fit_transform(z)
    fig, ax = charts.new_figure()
    charts.set_grid(ax, "both")
    for i, s in enumerate(sorted(seg.unique())):
        mask = (seg.loc[keep] == s).to_numpy()
        ax.scatter(
            coords[mask, 0],
            coords[mask, 1],
            s=14,
            alpha=0.7,
            color=charts.PALETTE[i % len(charts.PALETTE)],
            label=ctx.t(f"Segment {s}", f"第 {s} 群"),
        )
    charts.style_legend(ax)
    charts.set_labels(
        ax,
        ctx.t(f"{k} segments on the two main directions of the data", f"{k} 个群组（数据的两个主方向）"),
        ctx.t("Principal component 1", "主成分 1"),
        ctx.t("Principal component 2", "主成分 2"),
    )
    path = charts.save(fig, ctx.figure_path("segments"))
    result.figures.append(str(path))
    result.captions.append(
        ctx.t(
            f"Scatter of the rows on the first two principal components, coloured by segment ({k} segments).",
            f"各行在前两个主成分上的散点图，按群组着色（{k} 个群组）。",
        )
    )


# ---------------------------------------------------------------- PCA


def pca_analysis(
    data: pd.DataFrame, columns: list[str] | None = None, standardize: bool = True, ctx: ToolContext | None = None
) -> ToolResult:
    """Principal component analysis: how much of the variation among many numeric columns a few combined directions explain, their loadings, and how many components reach 80%.

    Args:
        columns: Numeric columns (at least 2); omit to use every numeric column.
        standardize: Scale each column to unit variance first (recommended when units differ; the correlation-matrix PCA).
    """
    from sklearn.decomposition import PCA

    ctx = ctx or ToolContext()
    frame, dropped = numeric_matrix(data, columns, ctx, minimum=3, what="PCA")
    if frame.shape[1] < 2:
        raise ToolError(
            "invalid_arguments",
            ctx.t("PCA needs at least two numeric columns.", "PCA 至少需要两个数值列。"),
            hint=ctx.t("Pass two or more columns.", "请传入两个或更多列。"),
        )
    # ddof=1 scaling makes the eigenvalues those of the correlation matrix (as R's prcomp(scale. = TRUE))
    x = (
        _standardize(frame, ddof=1)
        if standardize
        else frame.to_numpy(dtype=float) - frame.to_numpy(dtype=float).mean(axis=0)
    )
    pca = PCA(random_state=SEED).fit(x)
    ratio, eig = pca.explained_variance_ratio_, pca.explained_variance_
    cumulative = np.cumsum(ratio)
    k80 = int(np.searchsorted(cumulative, 0.8 - 1e-12) + 1)
    # loadings: components scaled by their sd = correlations of each column with each component (standardized)
    loadings = pca.components_.T * np.sqrt(eig)
    signs = np.where(loadings[np.abs(loadings).argmax(axis=0), np.arange(loadings.shape[1])] < 0, -1.0, 1.0)
    loadings = loadings * signs  # sign convention: the largest loading is positive
    names = [f"PC{i + 1}" for i in range(len(ratio))]
    table = pd.DataFrame(loadings[:, :10], index=list(frame.columns), columns=names[:10])
    metrics: dict = {
        "n": len(frame),
        "n_columns": frame.shape[1],
        "components_for_80": k80,
        "kaiser_components": int(np.sum(eig > 1)) if standardize else None,
    }
    for i, nm in enumerate(names):
        metrics[f"explained_variance_ratio.{nm}"] = ratio[i]
        metrics[f"cumulative.{nm}"] = cumulative[i]
        metrics[f"eigenvalue.{nm}"] = eig[i]
    for nm in names[:3]:
        for col in frame.columns:
            metrics[f"loading.{nm}.{col}"] = table.loc[col, nm] if nm in table else None
    lines = [_component_line(table[nm], nm, ratio[i], ctx) for i, nm in enumerate(names[: min(3, k80 + 1)])]
    interpretation = ctx.t(
        f"The {frame.shape[1]} columns mostly move together: {k80} combined direction(s) capture {cumulative[k80 - 1] * 100:.0f}% "
        f"of their variation. " + lines[0],
        f"这 {frame.shape[1]} 列大多同步变化：{k80} 个综合方向就概括了 {cumulative[k80 - 1] * 100:.0f}% 的变化。"
        + lines[0],
    )
    method = ctx.t(
        f"PCA by singular value decomposition on {'standardized (correlation matrix)' if standardize else 'centred (covariance matrix)'} columns.",
        f"对{'标准化（相关矩阵）' if standardize else '中心化（协方差矩阵）'}的列做奇异值分解的主成分分析。",
    )
    assumptions = [dropped_note(dropped, ctx)] if dropped else []
    if not standardize:
        assumptions.append(
            ctx.t("Not standardized: columns with large units dominate.", "未标准化：数值单位大的列会占主导。")
        )
    text = tagged_text(
        data_profile=ctx.t(f"{len(frame)} rows, {frame.shape[1]} columns.", f"{len(frame)} 行，{frame.shape[1]} 列。"),
        method=method,
        assumptions=assumptions,
        insights=lines,
        conclusion=ctx.t(
            "Variance explained: "
            + ", ".join(f"{nm} {ratio[i] * 100:.1f}%" for i, nm in enumerate(names[:5]))
            + f"; {k80} component(s) reach 80%.",
            "解释方差："
            + "，".join(f"{nm} {ratio[i] * 100:.1f}%" for i, nm in enumerate(names[:5]))
            + f"；{k80} 个主成分达到 80%。",
        ),
        interpretation=interpretation,
    )
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=len(frame),
        table=table.reset_index(names="column"),
        limitations=[
            ctx.t(
                "Components are combinations of columns; they summarise, they do not explain causes.",
                "主成分是各列的组合，用于概括，不解释原因。",
            )
        ],
    )


def _component_line(loadings: pd.Series, name: str, share: float, ctx: ToolContext) -> str:
    strong = loadings[loadings.abs() >= 0.5].sort_values(ascending=False)
    if strong.empty:
        strong = loadings.reindex(loadings.abs().sort_values(ascending=False).index[:3])
    high = [str(c) for c, v in strong.items() if v > 0][:5]
    low = [str(c) for c, v in strong.items() if v < 0][:5]
    contrast = ctx.t(f" against {low}" if low else "", f"，与 {low} 相反" if low else "")
    return ctx.t(
        f"{name} ({share * 100:.0f}% of the variation) is mainly {high}{contrast}.",
        f"{name}（占 {share * 100:.0f}% 的变化）主要由 {high} 构成{contrast}。",
    )


# ---------------------------------------------------------------- anomalies


def anomaly_detection(
    data: pd.DataFrame,
    columns: list[str] | None = None,
    contamination: float | None = None,
    top: int = 10,
    id_column: str | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Find unusual rows across several numeric columns (isolation forest), listing the most unusual ones with their values and what makes them stand out.

    Args:
        columns: Numeric columns to inspect; omit to use every numeric column.
        contamination: Expected share of anomalies (0.001-0.5); omit for automatic.
        top: How many of the most unusual rows to list (1-100).
        id_column: Column that names each row (e.g. order_id) in the list; by default the first identifier-like column, else the row number.
    """
    from sklearn.ensemble import IsolationForest

    ctx = ctx or ToolContext()
    # rows are named by position from 1, as a spreadsheet user counts data rows (and rank_values
    # and outlier_detection do); a derived table's own index may skip or repeat labels
    data = data.reset_index(drop=True)
    frame, dropped = numeric_matrix(data, columns, ctx, minimum=10, what=ctx.t("anomaly detection", "异常检测"))
    if contamination is not None and not 0.001 <= contamination <= 0.5:
        raise ToolError(
            "invalid_arguments",
            ctx.t("contamination must be between 0.001 and 0.5.", "contamination 必须在 0.001 到 0.5 之间。"),
            hint=ctx.t("Omit it for automatic.", "省略即可自动设定。"),
        )
    forest = IsolationForest(
        n_estimators=100, contamination="auto" if contamination is None else contamination, random_state=SEED
    )
    x = frame.to_numpy(dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        forest.fit(x)
        scores = -forest.score_samples(x)  # higher = more unusual
    threshold = float(-forest.offset_)
    if contamination is None:
        # The paper's fixed 0.5 cut flags far too many rows on small tables; also require the score to be an
        # outlier among the scores themselves (boxplot rule).
        q1, q3 = np.percentile(scores, [25, 75])
        threshold = max(threshold, float(q3 + 1.5 * (q3 - q1)))
    flags = np.where(scores > threshold, -1, 1)
    names = _row_names(data, frame, id_column)
    med = np.median(x, axis=0)
    mad = 1.4826 * np.median(np.abs(x - med), axis=0)
    spread = np.where(mad > 0, mad, x.std(axis=0) + 1e-12)
    robust_z = (x - med) / spread
    top = int(min(max(top, 1), 100))
    ranked = np.argsort(-scores)[:top]
    rows, lines = [], []
    for rank, i in enumerate(ranked):
        idx = names[i]
        marked = np.argsort(-np.abs(robust_z[i]))[:2]
        reason = ctx.t(", ", "，").join(value_phrase(frame.columns[j], x[i, j], robust_z[i, j], ctx) for j in marked)
        rows.append(
            {
                "row": idx,
                "anomaly_score": float(scores[i]),
                "flagged": bool(flags[i] == -1),
                "why": reason,
                **frame.iloc[i].to_dict(),
            }
        )
        if rank < 5:
            lines.append(ctx.t(f"Row {label(idx)}: {reason}", f"行 {label(idx)}：{reason}"))
    n_anom = int(np.sum(flags == -1))
    metrics = {
        "n": len(frame),
        "n_anomalies": n_anom,
        "anomaly_share": n_anom / len(frame),
        "n_columns": frame.shape[1],
        "top_row": label(names[ranked[0]]),
        "top_score": float(scores[ranked[0]]),
        "threshold_score": threshold,
    }
    top_text = ctx.t(
        f"The most unusual is row {metrics['top_row']} ({rows[0]['why']}).",
        f"最异常的是行 {metrics['top_row']}（{rows[0]['why']}）。",
    )
    if n_anom:
        interpretation = ctx.t(
            f"{n_anom} of {len(frame):,} rows ({n_anom / len(frame) * 100:.1f}%) look unusual compared with the rest. "
            f"{top_text} Check whether these are errors or genuine special cases.",
            f"{len(frame):,} 行中有 {n_anom} 行（{n_anom / len(frame) * 100:.1f}%）与其他行明显不同。"
            f"{top_text}请核实它们是数据错误还是真实的特殊情况。",
        )
    else:
        interpretation = ctx.t(
            f"No row of {len(frame):,} stands out strongly from the rest. {top_text}",
            f"{len(frame):,} 行中没有明显异常的行。{top_text}",
        )
    method = ctx.t(
        f"Isolation forest (100 trees, contamination {'auto' if contamination is None else contamination}, seed {SEED}) on "
        f"{list(frame.columns)[:12]}; with automatic contamination a row is flagged when its score exceeds 0.5 and is an "
        "outlier among all scores (above Q3 + 1.5 IQR); the reason given per row is the columns furthest from the median "
        "(robust z-score).",
        f"孤立森林（100 棵树，污染率 {'自动' if contamination is None else contamination}，随机种子 {SEED}），列 {list(frame.columns)[:12]}；"
        "自动模式下，得分超过 0.5 且在所有得分中属于离群（高于 Q3 + 1.5 IQR）的行被标记；每行给出的原因是偏离中位数最远的列（稳健 z 分数）。",
    )
    text = tagged_text(
        data_profile=ctx.t(
            f"{len(frame)} rows, {frame.shape[1]} numeric columns."
            + (f" {dropped_note(dropped, ctx)}" if dropped else ""),
            f"{len(frame)} 行，{frame.shape[1]} 个数值列。" + (f" {dropped_note(dropped, ctx)}" if dropped else ""),
        ),
        method=method,
        insights=lines,
        conclusion=ctx.t(f"{n_anom} rows flagged as anomalies.", f"{n_anom} 行被标记为异常。"),
        interpretation=interpretation,
    )
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=len(frame),
        table=pd.DataFrame(rows),
        limitations=[
            ctx.t(
                "Unusual is not wrong: an anomaly may be a data error or a real, important case.",
                "异常不等于错误：可能是数据错误，也可能是真实且重要的情况。",
            ),
            ctx.t("Rows with missing values in these columns were not checked.", "这些列有缺失值的行未被检查。"),
        ],
        payload={"anomaly_rows": [r["row"] for r in rows if r["flagged"]]},
    )


def _row_names(data: pd.DataFrame, frame: pd.DataFrame, id_column: str | None) -> list:
    """How rows are named in the list: the id column, the first identifier-like column, or the row number."""
    from .common import column_kind

    if id_column is None:
        id_column = next(
            (str(c) for c in data.columns if str(c) not in frame.columns and column_kind(data[c]) == "identifier"), None
        )
    if id_column is None:
        return [int(i) + 1 for i in frame.index]
    return [label(v) for v in data.loc[frame.index, id_column]]
