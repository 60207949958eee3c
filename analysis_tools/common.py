"""Helpers shared by the analysis tools: column kinds, numeric coercion, number formatting and
plain-language wording of p-values (zh/en)."""

from __future__ import annotations

import functools
import math
import re
import threading
import warnings
import weakref
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from app.ingest.identifiers import is_identifier_name

from .base import ToolContext, ToolError

_TRUE_FALSE = {"true", "false", "yes", "no", "y", "n", "t", "f", "是", "否", "对", "错"}
_NUMBER_JUNK = re.compile(r"[,\s¥$€£%，]")


# ---------------------------------------------------------------- column kinds


# column_kind of Arrow-backed columns (text, mostly), by the Arrow array that holds the values: a
# ChunkedArray never changes (pandas replaces it when a cell is set), so the same array object has the
# same kind. Text columns are the slow ones to classify (a million free-text comments: about a second),
# and one run asks for the kinds of the same columns many times (the profile, numeric_columns of each
# tool). Numpy-backed columns can be changed in place and are quick to classify: never cached.
_KINDS: dict[tuple[int, str, str], tuple[weakref.ref[Any], str]] = {}
_KINDS_LOCK = threading.Lock()
_KINDS_MAX = 4096


def column_kind(series: pd.Series) -> str:
    """One of number, integer, datetime, category, text, boolean, identifier (from dtype + values)."""
    values = getattr(series.array, "_pa_array", None)
    if values is None:
        return _column_kind(series)
    key = (id(values), str(series.name), str(series.dtype))
    with _KINDS_LOCK:
        found = _KINDS.get(key)
    if found is not None and found[0]() is values:
        return found[1]
    kind = _column_kind(series)
    try:
        held = weakref.ref(values, functools.partial(_forget_kind, key))
    except TypeError:  # an array that cannot be referenced weakly: not cached
        return kind
    with _KINDS_LOCK:
        if len(_KINDS) >= _KINDS_MAX:
            _KINDS.clear()
        _KINDS[key] = (held, kind)
    return kind


def _forget_kind(key: tuple[int, str, str], _gone: object = None) -> None:
    with _KINDS_LOCK:
        _KINDS.pop(key, None)


def _column_kind(series: pd.Series) -> str:
    s = series.dropna()
    n = len(s)
    if pd.api.types.is_bool_dtype(series.dtype):
        return "boolean"
    if pd.api.types.is_datetime64_any_dtype(series.dtype) or isinstance(series.dtype, pd.PeriodDtype):
        return "datetime"
    if pd.api.types.is_numeric_dtype(series.dtype):
        if n == 0:
            return "number"
        values = s.to_numpy(dtype=float)
        # every value 0 or 1 (a comparison per value: np.unique sorted a million of them, and a set of
        # its result was built, for each numeric column)
        if n >= 2 and bool(((values == 0.0) | (values == 1.0)).all()) and s.nunique() == 2:
            return "boolean"
        integral = bool(np.all(np.isfinite(values)) and np.all(values == np.round(values)))
        if integral and _looks_like_identifier(series.name, s):
            return "identifier"
        return "integer" if integral else "number"
    if n == 0:
        return "text"
    strings = s.astype(str).str.strip()
    unique = strings.nunique()  # (counted once: each count hashes every value)
    if unique <= 2 and set(strings.str.lower().unique()[:10]) <= _TRUE_FALSE:
        return "boolean"
    sample = strings.sample(min(n, 300), random_state=0) if n > 300 else strings
    parsed = pd.to_numeric(sample.str.replace(_NUMBER_JUNK, "", regex=True), errors="coerce")
    if parsed.notna().mean() >= 0.95:
        valid = parsed.dropna().to_numpy(dtype=float)
        return "integer" if np.all(valid == np.round(valid)) else "number"
    if _parses_as_dates(sample):
        return "datetime"
    # values distinct once stripped are distinct as they are (stripping only makes values equal)
    if _looks_like_identifier(series.name, s, distinct=n if unique == n else None):
        return "identifier"
    mean_len = float(sample.str.len().mean())
    if unique <= max(20, 0.05 * n) or (unique / n < 0.5 and mean_len <= 30):
        return "category"
    return "text"


def _looks_like_identifier(name: Any, s: pd.Series, distinct: int | None = None) -> bool:
    """`distinct`: s.nunique() where the caller knows it already."""
    n = len(s)
    if n < 10 or (s.nunique() if distinct is None else distinct) != n:
        return False
    if is_identifier_name(name):
        return True
    if pd.api.types.is_numeric_dtype(s.dtype):
        return False  # numbers count as ids only by their name
    strings = s.astype(str)
    return bool(strings.str.len().mean() <= 40)  # unique short labels (names, codes)


def _parses_as_dates(sample: pd.Series) -> bool:
    has_sep = sample.str.contains(r"\d{1,4}[-/.年]\d{1,2}", regex=True).mean() >= 0.9
    if not has_sep:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            parsed = pd.to_datetime(sample, errors="coerce", format="mixed")
        except (ValueError, TypeError):
            return False
    return bool(parsed.notna().mean() >= 0.9)


def column_role(kind: str, series: pd.Series, distinct: int | None = None) -> str:
    """How an analyst would use a column: metric, dimension, time, id or text. `distinct`: the
    column's number of distinct values, where the caller has counted them."""
    if kind in ("number",):
        return "metric"
    if kind == "integer":
        return "dimension" if (series.nunique(dropna=True) if distinct is None else distinct) <= 10 else "metric"
    if kind in ("category", "boolean"):
        return "dimension"
    return {"datetime": "time", "identifier": "id"}.get(kind, "text")


def numeric_columns(df: pd.DataFrame) -> list[str]:
    """Columns that hold numbers (or number-like text), excluding identifiers and booleans."""
    return [str(c) for c in df.columns if column_kind(df[c]) in ("number", "integer")]


# ---------------------------------------------------------------- numeric coercion


def coerce_numeric(series: pd.Series) -> tuple[pd.Series, int]:
    """Numbers as float (NaN where missing or not a number) and how many non-missing values failed."""
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.astype(float), 0
    if pd.api.types.is_numeric_dtype(series.dtype):
        out = pd.to_numeric(series, errors="coerce").astype(float)
        return out.where(np.isfinite(out)), 0
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return pd.Series(np.nan, index=series.index), int(series.notna().sum())
    if len(series) >= _FACTORIZE_FROM and pd.api.types.is_string_dtype(series.dtype) and series.dtype != object:
        return _coerce_distinct(series)
    out, failing = _coerce_text(series)
    return out, int(failing.sum())


# From this many values a string column is converted one distinct value at a time (postcodes, amounts
# typed as text: a million values, a few thousand distinct). Only string dtypes: an object column may
# hold 1 and 1.0 and True, which factorize takes for one value but which convert differently.
_FACTORIZE_FROM = 10_000


def _coerce_distinct(series: pd.Series) -> tuple[pd.Series, int]:
    """coerce_numeric of a string column, each distinct value converted once (the same numbers)."""
    codes, distinct = pd.factorize(series, use_na_sentinel=True)
    values, failing = _coerce_text(pd.Series(distinct, dtype=series.dtype))
    present = codes >= 0
    out = np.full(len(series), np.nan)
    out[present] = values.to_numpy(dtype=float)[codes[present]]
    failed = int(np.bincount(codes[present], minlength=len(distinct))[failing.to_numpy(dtype=bool)].sum())
    return pd.Series(out, index=series.index, name=series.name), failed


def _coerce_text(series: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Text as numbers (NaN where not a number), and which non-empty values failed."""
    text = series.astype("string").str.strip()
    cleaned = text.str.replace(_NUMBER_JUNK, "", regex=True)
    out = pd.to_numeric(cleaned, errors="coerce").astype(float)
    out = out.where(np.isfinite(out))
    return out, (text.notna() & (text != "") & out.isna()).fillna(False)


def require_numeric(data: pd.DataFrame, column: str, ctx: ToolContext, min_share: float = 0.9) -> pd.Series:
    """The column as floats, or a `wrong_column_type` error naming numeric columns."""
    series = data[column]
    values, failed = coerce_numeric(series)
    present = int(series.notna().sum())
    kind = column_kind(series)
    if present and (values.notna().sum() / present < min_share or kind == "datetime"):
        suitable = [c for c in numeric_columns(data) if c != column][:12]
        raise ToolError(
            "wrong_column_type",
            ctx.t(
                f"Column {column!r} is not numeric (it looks like {kind}).",
                f"列 {column!r} 不是数值列（看起来是 {kind}）。",
            ),
            hint=ctx.t(
                f"Use a numeric column, e.g. {suitable}." if suitable else "Convert the column to numbers first.",
                f"请改用数值列，例如 {suitable}。" if suitable else "请先把该列转换为数值。",
            ),
            column=column,
            suitable_columns=suitable,
        )
    return values


def check_n(n: int, minimum: int, what: str, ctx: ToolContext) -> None:
    if n < minimum:
        raise ToolError(
            "insufficient_data",
            ctx.t(
                f"Only {n} usable rows for {what}; at least {minimum} are needed.",
                f"{what} 只有 {n} 行可用数据，至少需要 {minimum} 行。",
            ),
            hint=ctx.t("Use more data, fewer filters, or another column.", "请使用更多数据、放宽筛选或换一列。"),
        )


# ---------------------------------------------------------------- numbers for humans


def py(value: Any) -> Any:
    """numpy scalars -> Python int/float (NaN stays float)."""
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return float(value)
    return value


def fmt_num(x: Any, digits: int = 4) -> str:
    """A number as a person would write it: 1,234,568 / 12.35 / 0.0123 / 1.2e-08."""
    if x is None:
        return "—"
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(x):
        return "NA"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if x == 0:
        return "0"
    ax = abs(x)
    if ax >= 1e15 or ax < 1e-4:
        return f"{x:.{max(digits - 1, 1)}e}"
    if ax >= 10**digits:
        return f"{x:,.0f}"
    decimals = max(digits - 1 - int(math.floor(math.log10(ax))), 0)
    text = f"{x:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


TABLE_DIGITS = 6  # significant figures of a number in a printed table (512.3292 -> 512.329, not 512.3)


def fmt_cell(x: Any) -> str:
    """A number in a printed table: six significant figures, without thousands separators (a column of
    figures is read back as numbers, by people and programs)."""
    return fmt_num(x, TABLE_DIGITS).replace(",", "")


def frame_text(frame: pd.DataFrame, max_rows: int | None = None, index: bool = False) -> str:
    """A table as text: floats to six significant figures (fmt_cell), the first `max_rows` rows."""
    shown = frame if max_rows is None else frame.head(max_rows)
    formatters = {
        column: fmt_cell
        for column in shown.columns
        if pd.api.types.is_float_dtype(shown[column].dtype) and not pd.api.types.is_bool_dtype(shown[column].dtype)
    }
    with pd.option_context("display.max_columns", 14, "display.width", 180, "display.max_colwidth", 30):
        return shown.to_string(index=index, formatters=formatters)


def fmt_p(p: float) -> str:
    """p = 0.016 / p < 0.001."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "p = NA"
    if p < 0.001:
        return "p < 0.001"
    return f"p = {p:.3f}" if p < 0.1 else f"p = {p:.2f}"


def significance_word(p: float, alpha: float, ctx: ToolContext) -> str:
    """'statistically significant' / 'not statistically significant' in the user's language."""
    if p < alpha:
        return ctx.t("statistically significant", "具有统计显著性")
    return ctx.t("not statistically significant", "没有统计显著性")


def p_sentence(p: float, alpha: float, ctx: ToolContext, what: str = "difference") -> str:
    """A plain-language sentence on what the p-value means."""
    ptxt = fmt_p(p)
    what_zh = {"difference": "差异", "relationship": "关联", "effect": "影响"}.get(what, what)
    article = "an" if what[:1].lower() in "aeiou" else "a"
    if p < alpha:
        return ctx.t(
            f"{article} {what} this large would rarely happen by chance ({ptxt}).",
            f"这么大的{what_zh}很少会只是偶然造成的（{ptxt}）。",
        )
    return ctx.t(
        f"{article} {what} like this could easily happen by chance ({ptxt}), so it is not convincing evidence.",
        f"这样的{what_zh}完全可能只是偶然（{ptxt}），不能作为可靠证据。",
    )


def effect_label(value: float, kind: str, ctx: ToolContext) -> str:
    """Conventional size label for d (Cohen), r (correlation/rank-biserial) or eta2."""
    a = abs(value) if value == value else 0.0
    cuts = {"d": (0.2, 0.5, 0.8), "r": (0.1, 0.3, 0.5), "eta2": (0.01, 0.06, 0.14)}[kind]
    labels = ctx.t("negligible|small|medium|large", "可忽略|小|中等|大").split("|")
    idx = sum(a >= c for c in cuts)
    return labels[idx]


def dropped_note(dropped: int, ctx: ToolContext) -> str:
    if not dropped:
        return ""
    return ctx.t(
        f"{dropped} rows with missing or non-numeric values were left out.", f"有 {dropped} 行因缺失或非数值被排除。"
    )


def clean_metrics(metrics: dict[str, Any]) -> dict[str, Any]:
    """Flat str -> int|float|str with plain Python types (NaN/inf kept out)."""
    out: dict[str, Any] = {}
    for key, value in metrics.items():
        value = py(value)
        if value is None:
            continue
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, float) and not math.isfinite(value):
            continue
        if not isinstance(value, (int, float, str)):
            value = str(value)
        out[str(key)] = value
    return out


# A calendar period as the tools write it: date_part's year, month, quarter, week and date (2024, 2024-03,
# 2024-Q1, 2024-W05, 2024-03-05) and a day grouped as it is (2024-03-05 00:00:00). Labels of one shape
# sort in time order as text; not any four digits (a code such as 1001), and no 13th month.
_PERIOD_LABEL = re.compile(
    r"(?:19|20)\d{2}(?:-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|[12]\d|3[01])(?: 00:00:00)?)?|-Q[1-4]|-W[0-5]\d)?"
)


def periods_in_time_order(labels: Iterable[str]) -> list[str] | None:
    """`labels` in time order when every one is a calendar period as the tools write it, all of one shape
    (months, quarters …); None otherwise (groups have no time order)."""
    labels = list(labels)
    shapes = {re.sub(r"\d", "0", text) for text in labels}
    if not labels or len(shapes) != 1 or not all(_PERIOD_LABEL.fullmatch(text) for text in labels):
        return None
    return sorted(labels)


def label(value: Any) -> str:
    """A group/category value as a clean label (1.0 -> '1')."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def two_pass_mean(a: np.ndarray, axis: int = 0):
    """Column means (or the mean of a vector) accurate to the last digits (NIST StRD):
    the second pass removes the rounding of the first."""
    m = np.mean(a, axis=axis)
    return m + np.mean(a - m, axis=axis)
