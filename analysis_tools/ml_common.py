"""What the machine-learning tools share: choosing and checking feature columns, building the
feature matrix (numbers scaled, categories one-hot encoded inside an sklearn pipeline, so every
importance and prediction is about the user's original columns), row sampling for large data and
the holdout split."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .base import ToolContext, ToolError
from .common import coerce_numeric, column_kind, fmt_num, label, numeric_columns

SEED = 42  # every split, forest and permutation uses it: the same data gives the same answer
MAX_MODEL_ROWS = 100_000  # model fitting above this samples rows (stated in the limitations)
MAX_LEVELS = 30  # a categorical feature with more levels is refused (one-hot would explode)
MIN_ROWS = 20
_FEATURE_KINDS = ("number", "integer", "boolean", "category")


@dataclass
class Design:
    """The modelling table: features as the user named them, the target, and what was dropped."""

    X: pd.DataFrame
    y: pd.Series
    numeric: list[str]
    categorical: list[str]
    dropped: int
    sampled_from: int | None = None

    @property
    def features(self) -> list[str]:
        return self.numeric + self.categorical


def as_labels(series: pd.Series) -> pd.Series:
    """Category values as clean strings (1.0 -> "1"), missing kept missing; mapped per unique value (fast)."""
    return series.map({v: label(v) for v in series.dropna().unique()}).astype(object)


def default_features(data: pd.DataFrame, exclude: list[str]) -> list[str]:
    """Every numeric or low-cardinality categorical column except the excluded ones (no ids, text, dates)."""
    out = []
    for col in data.columns:
        name = str(col)
        if name in exclude:
            continue
        kind = column_kind(data[col])
        if kind in ("number", "integer", "boolean") or (kind == "category" and data[col].nunique() <= MAX_LEVELS):
            out.append(name)
    return out


def split_kinds(data: pd.DataFrame, features: list[str], ctx: ToolContext) -> tuple[list[str], list[str]]:
    """Numeric and categorical features; a text, id or date column gets a wrong_column_type error."""
    numeric, categorical = [], []
    for col in features:
        kind = column_kind(data[col])
        if kind not in _FEATURE_KINDS:
            raise ToolError(
                "wrong_column_type",
                ctx.t(
                    f"Column {col!r} looks like {kind}, which a model cannot use as a feature.",
                    f"列 {col!r} 看起来是 {kind}，不能作为模型特征。",
                ),
                hint=ctx.t(
                    "Leave it out of feature_columns (ids, free text and dates are not features).",
                    "请从 feature_columns 中去掉它（编号、自由文本和日期不能作为特征）。",
                ),
                column=col,
                suitable_columns=default_features(data, [col])[:12],
            )
        if kind in ("number", "integer") or (kind == "boolean" and pd.api.types.is_numeric_dtype(data[col].dtype)):
            numeric.append(col)
        elif data[col].nunique() > MAX_LEVELS:
            raise ToolError(
                "wrong_column_type",
                ctx.t(
                    f"Column {col!r} has {data[col].nunique()} categories, too many for a model feature (max {MAX_LEVELS}).",
                    f"列 {col!r} 有 {data[col].nunique()} 个类别，作为特征太多（最多 {MAX_LEVELS} 个）。",
                ),
                hint=ctx.t("Group rare categories first, or leave the column out.", "请先合并少见类别，或去掉该列。"),
                column=col,
            )
        else:
            categorical.append(col)
    return numeric, categorical


def build_design(
    data: pd.DataFrame,
    features: list[str],
    ctx: ToolContext,
    target: pd.Series | None = None,
    max_rows: int = MAX_MODEL_ROWS,
) -> Design:
    """Features (numeric as float, categories as strings) with incomplete rows dropped, sampled if large."""
    numeric, categorical = split_kinds(data, features, ctx)
    cols = {}
    for col in numeric:
        cols[col] = coerce_numeric(data[col])[0]
    for col in categorical:
        cols[col] = as_labels(data[col])
    X = pd.DataFrame(cols, index=data.index)
    keep = X.notna().all(axis=1)
    if target is not None:
        keep &= target.notna()
    dropped = int((~keep).sum())
    X = X[keep]
    y = target[keep] if target is not None else pd.Series(np.zeros(len(X)), index=X.index)
    sampled_from = None
    if len(X) > max_rows:
        sampled_from = len(X)
        X = X.sample(max_rows, random_state=SEED)
        y = y.loc[X.index]
    return Design(X, y, numeric, categorical, dropped, sampled_from)


def check_features(data: pd.DataFrame, target: str | None, features: list[str] | None, ctx: ToolContext) -> list[str]:
    """The features to use: as given (minus the target) or every usable column."""
    chosen = [f for f in dict.fromkeys(features)] if features else default_features(data, [target] if target else [])
    chosen = [f for f in chosen if f != target]
    if not chosen:
        raise ToolError(
            "wrong_column_type",
            ctx.t("No usable feature columns (numeric or categorical).", "没有可用的特征列（数值或分类）。"),
            hint=ctx.t(
                "Pass feature_columns with numeric or categorical columns.",
                "请在 feature_columns 中指定数值列或分类列。",
            ),
            available=[str(c) for c in data.columns][:60],
        )
    return chosen


def drop_constant(design: Design, ctx: ToolContext) -> list[str]:
    """Remove features with a single value (they carry no information); the error when none is left."""
    constant = [c for c in design.features if design.X[c].nunique() <= 1]
    if constant:
        design.X = design.X.drop(columns=constant)
        design.numeric = [c for c in design.numeric if c not in constant]
        design.categorical = [c for c in design.categorical if c not in constant]
    if not design.features:
        raise ToolError(
            "constant_column",
            ctx.t(
                f"Every feature is constant ({constant}); nothing can be learned.",
                f"所有特征都是常数（{constant}），无法建模。",
            ),
            hint=ctx.t("Choose columns that vary.", "请选择有变化的列。"),
        )
    return constant


def preprocessor(numeric: list[str], categorical: list[str], scale: bool = True):
    """Scaling for numbers, one-hot for categories; the pipeline keeps the user's column names."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    parts = []
    if numeric:
        parts.append(("num", StandardScaler() if scale else "passthrough", numeric))
    if categorical:
        parts.append(("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), categorical))
    return ColumnTransformer(parts)


def require_min_rows(n: int, ctx: ToolContext, minimum: int = MIN_ROWS, what: str = "a model") -> None:
    if n < minimum:
        raise ToolError(
            "insufficient_data",
            ctx.t(
                f"Only {n} complete rows; {what} needs at least {minimum}.",
                f"只有 {n} 行完整数据，{what}至少需要 {minimum} 行。",
            ),
            hint=ctx.t(
                "Use fewer feature columns (each missing value drops a row) or more data.",
                "请减少特征列（任一缺失值都会去掉该行）或使用更多数据。",
            ),
        )


def design_notes(design: Design, constant: list[str], ctx: ToolContext) -> list[str]:
    """Data-preparation facts the reader should know (dropped rows, sampling, constant features)."""
    notes = []
    if design.dropped:
        notes.append(
            ctx.t(
                f"{design.dropped} rows with missing values were left out.", f"有 {design.dropped} 行因含缺失值被排除。"
            )
        )
    if design.sampled_from:
        notes.append(
            ctx.t(
                f"A random sample of {len(design.X):,} of {design.sampled_from:,} rows was used to keep it fast.",
                f"为保证速度，从 {design.sampled_from:,} 行中随机抽取 {len(design.X):,} 行建模。",
            )
        )
    if constant:
        notes.append(ctx.t(f"Constant columns {constant} were ignored.", f"常数列 {constant} 已被忽略。"))
    return notes


def numeric_matrix(
    data: pd.DataFrame, columns: list[str] | None, ctx: ToolContext, minimum: int, what: str
) -> tuple[pd.DataFrame, int]:
    """Numeric columns (given or all) as floats with incomplete rows dropped; constant columns refused."""
    chosen = list(dict.fromkeys(columns)) if columns else numeric_columns(data)
    if len(chosen) < 1:
        raise ToolError(
            "wrong_column_type",
            ctx.t("The dataset has no numeric columns.", "数据集中没有数值列。"),
            hint=ctx.t("Convert columns to numbers first (convert_types).", "请先用 convert_types 转换为数值。"),
        )
    from .common import require_numeric

    frame = pd.DataFrame({c: require_numeric(data, c, ctx) for c in chosen}, index=data.index)
    complete = frame.dropna()
    dropped = len(frame) - len(complete)
    require_min_rows(len(complete), ctx, minimum, what)
    constant = [c for c in chosen if complete[c].nunique() <= 1]
    if constant:
        raise ToolError(
            "constant_column",
            ctx.t(
                f"Column(s) {constant} have a single value and carry no information.",
                f"列 {constant} 只有一个取值，没有信息量。",
            ),
            hint=ctx.t("Leave them out of columns.", "请从 columns 中去掉这些列。"),
            columns=constant,
        )
    return complete, dropped


def describe_level(z: float, ctx: ToolContext) -> str:
    """A standardized difference in words (segment profiles, anomalies)."""
    if z >= 1.0:
        return ctx.t("very high", "很高")
    if z >= 0.4:
        return ctx.t("high", "偏高")
    if z <= -1.0:
        return ctx.t("very low", "很低")
    if z <= -0.4:
        return ctx.t("low", "偏低")
    return ctx.t("typical", "一般")


def value_phrase(col: str, value: float, z: float, ctx: ToolContext) -> str:
    return ctx.t(
        f"{describe_level(z, ctx)} {col} ({fmt_num(value)})", f"{col}{describe_level(z, ctx)}（{fmt_num(value)}）"
    )
