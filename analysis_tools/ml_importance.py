"""Which columns a model relies on: permutation importance on held-out rows, with the direction of
each numeric feature's effect read from a small partial-dependence check."""

from __future__ import annotations

import warnings
from typing import Literal

import numpy as np
import pandas as pd

from .base import ToolContext, ToolError, ToolResult, tagged_text
from .common import clean_metrics, column_kind, fmt_num, require_numeric
from .ml_common import SEED, build_design, check_features, design_notes, drop_constant, preprocessor, require_min_rows
from .ml_models import _drop_rare, class_labels, forest_model, holdout, model_label, positive_class

_PD_ROWS = 2000  # rows used to read the direction of an effect


def feature_importance(
    data: pd.DataFrame,
    target_column: str,
    feature_columns: list[str] | None = None,
    task: Literal["auto", "regression", "classification"] = "auto",
    top: int = 10,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Rank which columns matter most for predicting a target (permutation importance on held-out rows), with the direction of each effect where it can be read.

    Args:
        target_column: The column to predict (numeric for regression, categorical for classification).
        feature_columns: Candidate columns; omit to use every usable column.
        task: auto decides from the target (categorical or few values -> classification); or force one.
        top: How many top features to describe (1-50).
    """
    from sklearn.inspection import permutation_importance
    from sklearn.pipeline import Pipeline

    ctx = ctx or ToolContext()
    classification = _is_classification(data, target_column, task)
    target = class_labels(data, target_column, ctx) if classification else require_numeric(data, target_column, ctx)
    design = build_design(data, check_features(data, target_column, feature_columns, ctx), ctx, target)
    if design.y.nunique() < 2:
        raise ToolError(
            "constant_column",
            ctx.t(
                f"{target_column!r} has a single value; nothing can be explained.",
                f"{target_column!r} 只有一个取值，无可解释。",
            ),
            hint=ctx.t("Choose a target that varies.", "请选择有变化的目标列。"),
            column=target_column,
        )
    rare = _drop_rare(design, ctx) if classification else []
    require_min_rows(len(design.X), ctx)
    constant = drop_constant(design, ctx)
    X_train, X_test, y_train, y_test = holdout(design, 0.25, ctx, stratify=classification)
    name, forest = forest_model(len(design.X), classification)
    model = Pipeline([("prep", preprocessor(design.numeric, design.categorical, scale=False)), ("model", forest)])
    scoring = "balanced_accuracy" if classification else "r2"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X_train, y_train)
        baseline: float  # the model's score on the test rows: R² here, balanced accuracy below
        if not classification:
            baseline = float(model.score(X_test, y_test))
        perm = permutation_importance(model, X_test, y_test, scoring=scoring, n_repeats=5, random_state=SEED)
    if classification:
        from sklearn.metrics import balanced_accuracy_score

        baseline = float(balanced_accuracy_score(y_test, model.predict(X_test)))
    pos = (
        positive_class(sorted(design.y.unique(), key=str), design.y.value_counts())
        if classification and design.y.nunique() == 2
        else None
    )
    rows = []
    for i, col in enumerate(design.features):
        rows.append(
            {
                "feature": col,
                "importance": float(perm.importances_mean[i]),
                "importance_sd": float(perm.importances_std[i]),
                **_direction(model, X_test, col, design.numeric, classification, pos),
            }
        )
    table = pd.DataFrame(rows).sort_values("importance", ascending=False, ignore_index=True)
    positive_total = float(table["importance"].clip(lower=0).sum())
    table["share_pct"] = table["importance"].clip(lower=0) / positive_total * 100 if positive_total > 0 else 0.0
    top = int(min(max(top, 1), 50))
    return _result(table, top, baseline, scoring, name, target_column, design, constant, rare, len(X_test), pos, ctx)


def _is_classification(data: pd.DataFrame, target: str, task: str) -> bool:
    if task != "auto":
        return task == "classification"
    kind = column_kind(data[target])
    return kind in ("category", "boolean") or (kind == "integer" and data[target].nunique() <= 10)


def _direction(
    model, X_test: pd.DataFrame, col: str, numeric: list[str], classification: bool, pos: str | None
) -> dict:
    """How the prediction moves when the feature goes from low (10th pct) to high (90th pct), others fixed."""
    if classification and pos is None:
        return {"direction": "mixed"}  # several classes: no single direction
    sample = X_test.sample(min(len(X_test), _PD_ROWS), random_state=SEED)

    def mean_prediction(frame: pd.DataFrame) -> float:
        if classification:
            classes = list(model.classes_)
            return float(model.predict_proba(frame)[:, classes.index(pos)].mean())
        return float(np.mean(model.predict(frame)))

    if col in numeric:
        low, high = np.percentile(X_test[col], [10, 90])
        if low == high:
            return {"direction": "flat"}
        effect = mean_prediction(sample.assign(**{col: high})) - mean_prediction(sample.assign(**{col: low}))
        return {
            "direction": "up" if effect > 0 else "down" if effect < 0 else "flat",
            "effect_low_to_high": effect,
            "low_value": float(low),
            "high_value": float(high),
        }
    levels = X_test[col].value_counts().index[:30]
    means = {lvl: mean_prediction(sample.assign(**{col: lvl})) for lvl in levels}
    best = max(means, key=means.__getitem__)
    return {
        "direction": "by_category",
        "highest_category": str(best),
        "effect_low_to_high": means[best] - min(means.values()),
    }


def _direction_words(row: pd.Series, target: str, pos: str | None, ctx: ToolContext) -> str:
    what = ctx.t(f"the chance of '{pos}'", f"“{pos}”的概率") if pos else target
    d = row.get("direction")
    if d in ("up", "down"):
        up = d == "up"
        return ctx.t(
            f"higher {row['feature']} goes with {'higher' if up else 'lower'} {what} "
            f"({fmt_num(row['effect_low_to_high'])} from {fmt_num(row['low_value'])} to {fmt_num(row['high_value'])})",
            f"{row['feature']} 越高，{what}越{'高' if up else '低'}"
            f"（从 {fmt_num(row['low_value'])} 到 {fmt_num(row['high_value'])} 变化 {fmt_num(row['effect_low_to_high'])}）",
        )
    if d == "by_category":
        return ctx.t(
            f"{what} is highest when {row['feature']} = {row['highest_category']}",
            f"{row['feature']} = {row['highest_category']} 时{what}最高",
        )
    return ctx.t("direction differs by class", "方向因类别而异")


def _result(
    table: pd.DataFrame,
    top: int,
    baseline: float,
    scoring: str,
    model_name: str,
    target: str,
    design,
    constant: list[str],
    rare: list[str],
    n_test: int,
    pos: str | None,
    ctx: ToolContext,
) -> ToolResult:
    shown = table.head(top)
    metrics: dict = {
        "n": len(design.X),
        "n_test": n_test,
        "n_features": len(table),
        "baseline_score": baseline,
        "score_name": scoring,
        "model": model_name,
        "top_feature": str(table.loc[0, "feature"]),
    }
    for _, row in table.iterrows():
        metrics[f"importance.{row['feature']}"] = row["importance"]
        metrics[f"share_pct.{row['feature']}"] = row["share_pct"]
        metrics[f"direction.{row['feature']}"] = row.get("direction", "")
    lines = [
        ctx.t(
            f"{i + 1}. {r['feature']}: score drops by {fmt_num(r['importance'], 3)} when shuffled "
            f"({r['share_pct']:.0f}% of the total) — {_direction_words(r, target, pos, ctx)}",
            f"{i + 1}. {r['feature']}：打乱后得分下降 {fmt_num(r['importance'], 3)}（占总量 {r['share_pct']:.0f}%）—— "
            f"{_direction_words(r, target, pos, ctx)}",
        )
        for i, r in shown.iterrows()
    ]
    useless = table.loc[table["importance"] <= 0, "feature"].tolist()
    first = shown.iloc[0]
    top3 = shown["feature"].head(3).tolist()
    interpretation = ctx.t(
        f"{first['feature']} matters most for predicting {target} ({first['share_pct']:.0f}% of the model's predictive power), "
        f"followed by {', '.join(top3[1:]) or 'nothing else of note'}; {_direction_words(first, target, pos, ctx)}.",
        f"预测 {target} 时最重要的是 {first['feature']}（占模型预测能力的 {first['share_pct']:.0f}%），"
        f"其次是 {'、'.join(top3[1:]) or '无'}；{_direction_words(first, target, pos, ctx)}。",
    )
    assumptions = design_notes(design, constant, ctx)
    if rare:
        assumptions.append(
            ctx.t(
                f"Classes with fewer than 3 rows were left out: {rare[:10]}.", f"少于 3 行的类别已排除：{rare[:10]}。"
            )
        )
    limitations = assumptions + [
        ctx.t(
            "Correlated columns share importance: if two columns carry the same information, each can look less important.",
            "相关的列会分摊重要性：两列信息相同时，各自看起来都不那么重要。",
        ),
        ctx.t(
            "Importance shows what the model uses, not what causes the outcome.", "重要性说明模型用了什么，不代表因果。"
        ),
    ]
    if baseline < 0.3:
        limitations.append(
            ctx.t(
                f"The model itself is weak (held-out {scoring} {fmt_num(baseline, 3)}), so its importances are rough.",
                f"模型本身较弱（留出集 {scoring} {fmt_num(baseline, 3)}），重要性只是粗略参考。",
            )
        )
    if useless:
        lines.append(ctx.t(f"No measurable contribution: {useless[:10]}.", f"没有可测的贡献：{useless[:10]}。"))
    method = ctx.t(
        f"Permutation importance: a {model_label(model_name, ctx)} is trained on 75% of the rows; each column is shuffled "
        f"5 times on the held-out 25% and the drop in {scoring} is measured. Direction: average prediction at the "
        "column's 10th vs 90th percentile (others unchanged).",
        f"置换重要性：用 75% 的数据训练{model_label(model_name, ctx)}，在留出的 25% 上将每列打乱 5 次，测量 {scoring} 的下降。"
        "方向：该列取第 10 与第 90 百分位时（其他列不变）的平均预测之差。",
    )
    text = tagged_text(
        data_profile=ctx.t(
            f"{len(design.X)} complete rows, {len(table)} features; held-out {scoring} {fmt_num(baseline, 3)}.",
            f"{len(design.X)} 行完整数据，{len(table)} 个特征；留出集 {scoring} {fmt_num(baseline, 3)}。",
        ),
        method=method,
        assumptions=assumptions,
        insights=lines,
        conclusion=ctx.t(f"Top features: {top3}.", f"最重要的特征：{top3}。"),
        interpretation=interpretation,
    )
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=len(design.X),
        limitations=limitations,
        table=table,
        payload={"ranking": table["feature"].tolist()},
    )
