"""Supervised models: a regression model and a classifier, each comparing a simple linear model with
a tree ensemble, judged on held-out rows (fixed-seed split) and by cross-validation on the rest."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .base import ToolContext, ToolError, ToolResult, tagged_text
from .common import clean_metrics, column_kind, fmt_num, require_numeric
from .ml_common import (
    SEED,
    Design,
    as_labels,
    build_design,
    check_features,
    design_notes,
    drop_constant,
    preprocessor,
    require_min_rows,
)

_FOREST_MAX_ROWS = 20_000  # above this a histogram gradient-boosting model replaces the random forest
_MAX_CLASSES = 20
_POSITIVE = ("1", "1.0", "true", "yes", "y", "t", "是", "positive", "pos")


def forest_model(n: int, classification: bool, balanced: bool = False):
    """Random forest for small data, histogram gradient boosting (fast on millions of rows) above."""
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )

    weight = "balanced" if balanced else None
    if n <= _FOREST_MAX_ROWS:
        if classification:
            return "random_forest", RandomForestClassifier(
                n_estimators=100, random_state=SEED, n_jobs=-1, class_weight=weight
            )
        return "random_forest", RandomForestRegressor(n_estimators=100, random_state=SEED, n_jobs=-1)
    if classification:
        return "gradient_boosting", HistGradientBoostingClassifier(random_state=SEED, class_weight=weight)
    return "gradient_boosting", HistGradientBoostingRegressor(random_state=SEED)


def model_pipelines(design: Design, classification: bool, balanced: bool = False) -> dict:
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.pipeline import Pipeline

    linear = (
        LogisticRegression(max_iter=2000, class_weight="balanced" if balanced else None)
        if classification
        else LinearRegression()
    )
    name, forest = forest_model(len(design.X), classification, balanced)
    return {
        "linear": Pipeline([("prep", preprocessor(design.numeric, design.categorical)), ("model", linear)]),
        name: Pipeline([("prep", preprocessor(design.numeric, design.categorical, scale=False)), ("model", forest)]),
    }


def holdout(design: Design, test_size: float, ctx: ToolContext, stratify: bool = False):
    from sklearn.model_selection import train_test_split

    if not 0.1 <= test_size <= 0.5:
        raise ToolError(
            "invalid_arguments",
            ctx.t("test_size must be between 0.1 and 0.5.", "test_size 必须在 0.1 到 0.5 之间。"),
            hint=ctx.t("Use 0.25 (a quarter of the rows held out).", "建议 0.25（留出四分之一数据）。"),
        )
    return train_test_split(
        design.X, design.y, test_size=test_size, random_state=SEED, stratify=design.y if stratify else None
    )


def _cross_validate(model, X, y, scoring: str, classification: bool) -> np.ndarray:
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score

    if classification:
        folds = int(min(5, y.value_counts().min()))
        cv = StratifiedKFold(n_splits=max(folds, 2), shuffle=True, random_state=SEED)
    else:
        cv = KFold(n_splits=5 if len(y) >= 25 else 3, shuffle=True, random_state=SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cross_val_score(model, X, y, cv=cv, scoring=scoring)


def model_label(name: str, ctx: ToolContext) -> str:
    return {
        "linear": ctx.t("linear model", "线性模型"),
        "random_forest": ctx.t("random forest", "随机森林"),
        "gradient_boosting": ctx.t("gradient boosting", "梯度提升树"),
    }[name]


# ---------------------------------------------------------------- regression


def train_regression_model(
    data: pd.DataFrame,
    target_column: str,
    feature_columns: list[str] | None = None,
    test_size: float = 0.25,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Train a model that predicts a numeric column from other columns: compares a linear model with a random forest / gradient boosting on held-out rows (R², typical error) with cross-validation.

    Args:
        target_column: The numeric column to predict (e.g. price).
        feature_columns: Columns used to predict it (numeric or categorical); omit to use every usable column.
        test_size: Share of rows held out to test the models (0.1-0.5).
    """
    from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

    ctx = ctx or ToolContext()
    target = require_numeric(data, target_column, ctx)
    design = build_design(data, check_features(data, target_column, feature_columns, ctx), ctx, target)
    require_min_rows(len(design.X), ctx)
    if design.y.nunique() <= 1:
        raise ToolError(
            "constant_column",
            ctx.t(
                f"{target_column!r} has a single value; there is nothing to predict.",
                f"{target_column!r} 只有一个取值，没有可预测的内容。",
            ),
            hint=ctx.t("Choose a target that varies.", "请选择有变化的目标列。"),
            column=target_column,
        )
    constant = drop_constant(design, ctx)
    X_train, X_test, y_train, y_test = holdout(design, test_size, ctx)
    metrics: dict = {
        "n": len(design.X),
        "n_train": len(X_train),
        "n_test": len(X_test),
        "n_features": len(design.features),
    }
    scores = {}
    for name, model in model_pipelines(design, classification=False).items():
        cv = _cross_validate(model, X_train, y_train, "r2", classification=False)
        model.fit(X_train, y_train)
        pred = model.predict(X_test)
        train_r2 = r2_score(y_train, model.predict(X_train))
        scores[name] = {
            "r_squared": r2_score(y_test, pred),
            "mae": mean_absolute_error(y_test, pred),
            "rmse": float(np.sqrt(mean_squared_error(y_test, pred))),
            "cv_r_squared": float(cv.mean()),
            "cv_r_squared_sd": float(cv.std()),
            "train_r_squared": train_r2,
        }
        metrics.update({f"{k}.{name}": v for k, v in scores[name].items()})
    best = max(scores, key=lambda k: scores[k]["cv_r_squared"])
    baseline = float(np.mean(np.abs(y_test - y_train.mean())))
    metrics.update(
        scores[best],
        best_model=best,
        baseline_mae=baseline,
        target_mean=float(design.y.mean()),
        mae_improvement_pct=(1 - scores[best]["mae"] / baseline) * 100 if baseline > 0 else float("nan"),
    )
    return _regression_result(metrics, scores, best, target_column, design, constant, ctx)


def _regression_result(
    m: dict, scores: dict, best: str, target: str, design: Design, constant: list[str], ctx: ToolContext
) -> ToolResult:
    other = next(k for k in scores if k != best)
    r2, mae = m["r_squared"], m["mae"]
    quality = ctx.t("good", "较好") if r2 >= 0.7 else ctx.t("moderate", "一般") if r2 >= 0.4 else ctx.t("weak", "较弱")
    interpretation = ctx.t(
        f"On {m['n_test']} rows the model had not seen, the {model_label(best, ctx)} predicted {target} with a typical "
        f"error of {fmt_num(mae)} (always guessing the average would be off by {fmt_num(m['baseline_mae'])}); "
        f"it explains {r2 * 100:.0f}% of the variation in {target} — a {quality} fit.",
        f"在模型未见过的 {m['n_test']} 行上，{model_label(best, ctx)}预测 {target} 的典型误差为 {fmt_num(mae)}"
        f"（如果总是猜平均值，误差为 {fmt_num(m['baseline_mae'])}）；它解释了 {target} {r2 * 100:.0f}% 的变化，拟合{quality}。",
    )
    insights = [
        ctx.t(
            f"{model_label(k, ctx)}: held-out R² {fmt_num(s['r_squared'], 3)}, MAE {fmt_num(s['mae'])}, "
            f"cross-validated R² {fmt_num(s['cv_r_squared'], 3)} ± {fmt_num(s['cv_r_squared_sd'], 2)}",
            f"{model_label(k, ctx)}：留出集 R² {fmt_num(s['r_squared'], 3)}，MAE {fmt_num(s['mae'])}，"
            f"交叉验证 R² {fmt_num(s['cv_r_squared'], 3)} ± {fmt_num(s['cv_r_squared_sd'], 2)}",
        )
        for k, s in scores.items()
    ]
    gap = scores[best]["cv_r_squared"] - scores[other]["cv_r_squared"]
    if best != "linear" and gap > 0.05:
        insights.append(
            ctx.t(
                "The tree model is clearly better: the relationships are not straight lines or involve interactions.",
                "树模型明显更好：变量之间的关系不是简单直线，或存在交互作用。",
            )
        )
    elif abs(gap) <= 0.05:
        insights.append(
            ctx.t(
                "Both models do about as well; the simpler linear model is easier to explain.",
                "两个模型表现相近；线性模型更简单、更容易解释。",
            )
        )
    limitations = design_notes(design, constant, ctx)
    if scores[best]["train_r_squared"] - r2 > 0.2:
        limitations.append(
            ctx.t(
                "The model fits its training rows much better than new rows (overfitting); expect the held-out numbers.",
                "模型在训练数据上明显好于新数据（过拟合）；实际效果以留出集为准。",
            )
        )
    if m["n"] < 100:
        limitations.append(
            ctx.t(
                "Few rows: the held-out score depends a lot on which rows were held out.",
                "数据行较少：留出集得分受划分影响较大。",
            )
        )
    limitations.append(
        ctx.t(
            "Predictions show association, not cause; use feature_importance to see which columns matter.",
            "预测反映的是关联而非因果；可用 feature_importance 查看哪些列重要。",
        )
    )
    method = ctx.t(
        f"Holdout split ({m['n_train']} train / {m['n_test']} test, seed {SEED}) and 5-fold cross-validation "
        f"on the training rows; linear regression vs {model_label(other if best == 'linear' else best, ctx)}; "
        "the model with the better cross-validated R² is reported.",
        f"留出法划分（训练 {m['n_train']} 行 / 测试 {m['n_test']} 行，随机种子 {SEED}），训练集上 5 折交叉验证；"
        f"比较线性回归与{model_label(other if best == 'linear' else best, ctx)}，报告交叉验证 R² 较好的模型。",
    )
    profile = ctx.t(
        f"{m['n']} complete rows, {m['n_features']} features: {design.features[:15]}.",
        f"{m['n']} 行完整数据，{m['n_features']} 个特征：{design.features[:15]}。",
    )
    conclusion = ctx.t(
        f"Best: {model_label(best, ctx)} — held-out R² = {fmt_num(r2, 3)}, MAE = {fmt_num(mae)}, RMSE = {fmt_num(m['rmse'])}.",
        f"最佳：{model_label(best, ctx)} —— 留出集 R² = {fmt_num(r2, 3)}，MAE = {fmt_num(mae)}，RMSE = {fmt_num(m['rmse'])}。",
    )
    text = tagged_text(
        data_profile=profile,
        method=method,
        assumptions=limitations[:-1],
        insights=insights,
        conclusion=conclusion,
        interpretation=interpretation,
    )
    table = pd.DataFrame([{"model": k, **s} for k, s in scores.items()])
    return ToolResult(
        metrics=clean_metrics(m),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=m["n"],
        limitations=limitations,
        table=table,
        payload={"best_model": best, "features": design.features},
    )


# ---------------------------------------------------------------- classification


def class_labels(data: pd.DataFrame, target_column: str, ctx: ToolContext) -> pd.Series:
    """The target as string class labels; a continuous number gets a wrong_column_type error."""
    series = data[target_column]
    kind = column_kind(series)
    n_unique = series.nunique()
    if kind in ("number", "text", "identifier", "datetime") or n_unique > _MAX_CLASSES:
        raise ToolError(
            "wrong_column_type",
            ctx.t(
                f"{target_column!r} has {n_unique} distinct values ({kind}); a classifier needs a few classes.",
                f"{target_column!r} 有 {n_unique} 个不同取值（{kind}），分类模型需要少量类别。",
            ),
            hint=ctx.t("For a numeric target use train_regression_model.", "数值目标请用 train_regression_model。"),
            column=target_column,
        )
    return as_labels(series)


def positive_class(classes: list[str], counts: pd.Series) -> str:
    """The class a precision/recall is about: 1/true/yes when present, else the rarer class."""
    for c in classes:
        if c.strip().lower() in _POSITIVE:
            return c
    return str(counts.idxmin())


def _drop_rare(design: Design, ctx: ToolContext) -> list[str]:
    counts = design.y.value_counts()
    rare = [str(c) for c in counts.index if counts[c] < 3]
    if rare:
        keep = ~design.y.isin(rare)
        design.X, design.y = design.X[keep], design.y[keep]
    if design.y.nunique() < 2:
        raise ToolError(
            "wrong_group_count",
            ctx.t(
                "The target has only one class (with at least 3 rows); there is nothing to tell apart.",
                "目标列只有一个类别（至少 3 行），无法区分。",
            ),
            hint=ctx.t("Choose a target with two or more classes.", "请选择有两个及以上类别的目标列。"),
        )
    return rare


def train_classifier(
    data: pd.DataFrame,
    target_column: str,
    feature_columns: list[str] | None = None,
    test_size: float = 0.25,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Train a model that predicts a category (yes/no or several classes): compares logistic regression with a random forest on held-out rows (accuracy, balanced accuracy, precision/recall/F1, ROC AUC).

    Args:
        target_column: The categorical column to predict (e.g. churned yes/no, species).
        feature_columns: Columns used to predict it (numeric or categorical); omit to use every usable column.
        test_size: Share of rows held out to test the models (0.1-0.5).
    """
    ctx = ctx or ToolContext()
    target = class_labels(data, target_column, ctx)
    design = build_design(data, check_features(data, target_column, feature_columns, ctx), ctx, target)
    if design.y.nunique() < 2:
        raise ToolError(
            "wrong_group_count",
            ctx.t(
                f"{target_column!r} has a single class; there is nothing to tell apart.",
                f"{target_column!r} 只有一个类别，无法区分。",
            ),
            hint=ctx.t("Choose a target with two or more classes.", "请选择有两个及以上类别的目标列。"),
        )
    rare = _drop_rare(design, ctx)
    require_min_rows(len(design.X), ctx)
    constant = drop_constant(design, ctx)
    counts = design.y.value_counts()
    classes = sorted(counts.index, key=str)
    shares = counts / counts.sum()
    imbalanced = bool(shares.min() < 0.2)
    X_train, X_test, y_train, y_test = holdout(design, test_size, ctx, stratify=True)
    binary = len(classes) == 2
    pos = positive_class(classes, counts) if binary else None
    scores, models = {}, model_pipelines(design, classification=True, balanced=imbalanced)
    for name, model in models.items():
        cv = _cross_validate(model, X_train, y_train, "balanced_accuracy", classification=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X_train, y_train)
        scores[name] = {**_class_scores(model, X_test, y_test, pos), "cv_balanced_accuracy": float(cv.mean())}
    best = max(scores, key=lambda k: scores[k]["cv_balanced_accuracy"])
    metrics: dict = {
        "n": len(design.X),
        "n_train": len(X_train),
        "n_test": len(X_test),
        "n_classes": len(classes),
        "n_features": len(design.features),
        "baseline_accuracy": float(shares.max()),
        "majority_class": str(shares.idxmax()),
        "minority_share": float(shares.min()),
        "imbalanced": imbalanced,
        "best_model": best,
        "positive_class": pos,
    }
    for name, s in scores.items():
        metrics.update({f"{k}.{name}": v for k, v in s.items() if k != "confusion"})
    metrics.update({k: v for k, v in scores[best].items() if k != "confusion"})
    for c in classes:
        metrics[f"class_share.{c}"] = float(shares[c])
    return _classifier_result(metrics, scores, best, classes, target_column, design, constant, rare, ctx)


def _class_scores(model, X_test, y_test, pos: str | None) -> dict:
    from sklearn.metrics import (
        accuracy_score,
        balanced_accuracy_score,
        confusion_matrix,
        f1_score,
        precision_score,
        recall_score,
        roc_auc_score,
    )

    pred = model.predict(X_test)
    proba = model.predict_proba(X_test)
    kw = {"pos_label": pos, "average": "binary"} if pos is not None else {"average": "macro"}
    out = {
        "accuracy": accuracy_score(y_test, pred),
        "balanced_accuracy": balanced_accuracy_score(y_test, pred),
        "precision": precision_score(y_test, pred, zero_division=0, **kw),
        "recall": recall_score(y_test, pred, zero_division=0, **kw),
        "f1": f1_score(y_test, pred, zero_division=0, **kw),
    }
    classes = list(model.classes_)
    try:
        if pos is not None:
            out["roc_auc"] = roc_auc_score(y_test == pos, proba[:, classes.index(pos)])
        elif y_test.nunique() == len(classes):
            out["roc_auc"] = roc_auc_score(y_test, proba, multi_class="ovr", labels=classes)
    except ValueError:  # a class absent from the test rows: AUC undefined
        pass
    out["confusion"] = confusion_matrix(y_test, pred, labels=classes).tolist()
    return out


def _classifier_result(
    m: dict,
    scores: dict,
    best: str,
    classes: list[str],
    target: str,
    design: Design,
    constant: list[str],
    rare: list[str],
    ctx: ToolContext,
) -> ToolResult:
    acc, bal = m["accuracy"], m["balanced_accuracy"]
    interpretation = ctx.t(
        f"On {m['n_test']} rows the model had not seen, the {model_label(best, ctx)} got {acc * 100:.0f}% of {target} right "
        f"(always guessing the most common class, {m['majority_class']}, would get {m['baseline_accuracy'] * 100:.0f}%); "
        f"averaged over classes it is right {bal * 100:.0f}% of the time.",
        f"在模型未见过的 {m['n_test']} 行上，{model_label(best, ctx)}对 {target} 的预测准确率为 {acc * 100:.0f}%"
        f"（总是猜最常见的类别 {m['majority_class']} 的准确率为 {m['baseline_accuracy'] * 100:.0f}%）；按类别平均的准确率为 {bal * 100:.0f}%。",
    )
    if m.get("positive_class") is not None:
        p = m["positive_class"]
        interpretation += ctx.t(
            f" It finds {m['recall'] * 100:.0f}% of the '{p}' cases, and {m['precision'] * 100:.0f}% of its '{p}' predictions are right.",
            f" 它找出了 {m['recall'] * 100:.0f}% 的“{p}”，预测为“{p}”的有 {m['precision'] * 100:.0f}% 是对的。",
        )
    insights = []
    for k, s in scores.items():
        auc = f", ROC AUC {fmt_num(s['roc_auc'], 3)}" if "roc_auc" in s else ""
        insights.append(
            ctx.t(
                f"{model_label(k, ctx)}: accuracy {fmt_num(s['accuracy'], 3)}, balanced accuracy {fmt_num(s['balanced_accuracy'], 3)}, "
                f"F1 {fmt_num(s['f1'], 3)}{auc}, cross-validated balanced accuracy {fmt_num(s['cv_balanced_accuracy'], 3)}",
                f"{model_label(k, ctx)}：准确率 {fmt_num(s['accuracy'], 3)}，平衡准确率 {fmt_num(s['balanced_accuracy'], 3)}，"
                f"F1 {fmt_num(s['f1'], 3)}{auc}，交叉验证平衡准确率 {fmt_num(s['cv_balanced_accuracy'], 3)}",
            )
        )
    assumptions = design_notes(design, constant, ctx)
    if rare:
        assumptions.append(
            ctx.t(
                f"Classes with fewer than 3 rows were left out: {rare[:10]}.", f"少于 3 行的类别已排除：{rare[:10]}。"
            )
        )
    if m["imbalanced"]:
        assumptions.append(
            ctx.t(
                f"Classes are imbalanced (smallest class {m['minority_share'] * 100:.0f}% of rows): classes were "
                "weighted as balanced, and balanced accuracy is the fairer score (plain accuracy flatters the majority class).",
                f"类别不平衡（最小类别占 {m['minority_share'] * 100:.0f}%）：已按类别平衡加权，平衡准确率更公平（普通准确率会偏向多数类）。",
            )
        )
    limitations = assumptions + [ctx.t("Predictions show association, not cause.", "预测反映的是关联而非因果。")]
    if m["n"] < 100:
        limitations.append(
            ctx.t(
                "Few rows: the held-out score depends a lot on which rows were held out.",
                "数据行较少：留出集得分受划分影响较大。",
            )
        )
    method = ctx.t(
        f"Stratified holdout ({m['n_train']} train / {m['n_test']} test, seed {SEED}) and stratified cross-validation on the "
        "training rows; logistic regression vs a tree ensemble; the better cross-validated balanced accuracy is reported.",
        f"分层留出法（训练 {m['n_train']} 行 / 测试 {m['n_test']} 行，随机种子 {SEED}），训练集上分层交叉验证；"
        "比较逻辑回归与树模型，报告交叉验证平衡准确率较好的模型。",
    )
    profile = ctx.t(
        f"{m['n']} complete rows, {m['n_classes']} classes {classes[:10]}, {m['n_features']} features.",
        f"{m['n']} 行完整数据，{m['n_classes']} 个类别 {classes[:10]}，{m['n_features']} 个特征。",
    )
    conclusion = ctx.t(
        f"Best: {model_label(best, ctx)} — accuracy {fmt_num(acc, 3)}, balanced accuracy {fmt_num(bal, 3)}, F1 {fmt_num(m['f1'], 3)}"
        + (f", ROC AUC {fmt_num(m['roc_auc'], 3)}." if "roc_auc" in m else "."),
        f"最佳：{model_label(best, ctx)} —— 准确率 {fmt_num(acc, 3)}，平衡准确率 {fmt_num(bal, 3)}，F1 {fmt_num(m['f1'], 3)}"
        + (f"，ROC AUC {fmt_num(m['roc_auc'], 3)}。" if "roc_auc" in m else "。"),
    )
    text = tagged_text(
        data_profile=profile,
        method=method,
        assumptions=assumptions,
        insights=insights,
        conclusion=conclusion,
        interpretation=interpretation,
    )
    confusion = pd.DataFrame(
        scores[best]["confusion"], index=[f"actual {c}" for c in classes], columns=[f"predicted {c}" for c in classes]
    )
    return ToolResult(
        metrics=clean_metrics(m),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=m["n"],
        limitations=limitations,
        table=confusion.reset_index(names="class"),
        payload={"best_model": best, "classes": classes, "confusion": scores[best]["confusion"]},
    )
