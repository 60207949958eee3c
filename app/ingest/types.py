"""Infer one contract type per column and convert the column to it, logging every cleaning step.

Types: number, integer, datetime, category, text, boolean, identifier. Text that hides numbers
("1,234", "¥56", "12%") or dates ("2024年1月5日") is converted, and each conversion is recorded
as {"column", "action", "count"} so the user can see what was changed and why.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from analysis_tools.common import is_identifier_name

MISSING_MARKERS = {"", "—", "–", "-", "--", "n/a", "na", "null", "none", "nan", "#n/a", "无", "缺失", "空", "/"}
_NUM = re.compile(r"^\(?([+\-−]?)\s*([¥$€£]|RMB|CNY|USD)?\s*([+\-−]?)(\d{1,3}(,\d{3})+|\d+)?(\.\d+)?\s*(%|元)?\)?$")
_PLAIN_FLOAT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_PHONE = re.compile(r"^(\+?86[\s-]?)?1[3-9]\d{9}$|^0\d{2,3}-?\d{7,8}$")
_DATE_PATTERNS = [
    (re.compile(r"^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?$"), "ymd"),
    (re.compile(r"^(\d{4})年(\d{1,2})月(\d{1,2})日?(?:\s*(\d{1,2})[:：](\d{2})(?:[:：](\d{2}))?)?$"), "ymd"),
    (re.compile(r"^(\d{4})[-/](\d{1,2})$"), "ym"),
    (re.compile(r"^(\d{4})年(\d{1,2})月$"), "ym"),
]
BOOL_WORDS = {"true": True, "false": False}
CATEGORY_MAX_UNIQUE = 50
PARSE_SHARE = 0.95  # share of non-missing values that must parse before a column changes type


def _na(value) -> bool:
    """Missing, whatever pandas used to store it (None, NaN, NA, NaT)."""
    return value is None or (not isinstance(value, str) and bool(pd.isna(value)))


def infer_and_convert(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str], list[dict]]:
    out, types, log = {}, {}, []
    for name in frame.columns:
        series, kind, steps = convert_column(name, frame[name])
        out[name], types[name] = series, kind
        log.extend({"column": name, "action": action, "count": int(count)} for action, count in steps if count)
    return pd.DataFrame(out, index=range(len(frame))), types, log


def convert_column(name: str, col: pd.Series) -> tuple[pd.Series, str, list[tuple[str, int]]]:
    col = col.reset_index(drop=True)
    id_named = is_identifier_name(name)
    if pd.api.types.is_bool_dtype(col):
        return col.astype("boolean"), "boolean", []
    if pd.api.types.is_datetime64_any_dtype(col):
        return col, "datetime", []
    if pd.api.types.is_timedelta64_dtype(col):
        return _as_text(col.astype(str).where(col.notna(), None)), "text", []
    if pd.api.types.is_numeric_dtype(col):
        return _numeric_result(col.astype("float64"), id_named, [])
    return _convert_text(col, id_named)


def _convert_text(col: pd.Series, id_named: bool):
    values = col.astype(object).where(col.notna(), None)
    values = values.map(lambda v: None if _na(v) else v if isinstance(v, (bool, int, float)) else str(v).strip())
    steps: list[tuple[str, int]] = []
    values = _blank_missing_markers(values, steps)
    present = values.dropna()
    if present.empty:
        return _as_text(values), "text", steps

    texts = present.astype(str)
    if _looks_like_identifier(texts, id_named):
        return _as_text(values.map(lambda v: None if _na(v) else str(v))), "identifier", steps
    lowered = texts.str.lower()
    if lowered.isin(BOOL_WORDS).all():
        return values.map(lambda v: None if _na(v) else BOOL_WORDS[str(v).lower()]).astype("boolean"), "boolean", steps

    numeric, num_steps = _parse_numbers(values)
    if numeric.notna().sum() >= PARSE_SHARE * len(present):
        leftover = int(len(present) - numeric.notna().sum())
        return _numeric_result(numeric, id_named, steps + num_steps + [("non-numeric values read as missing", leftover)])

    dates, date_steps = _parse_dates(values)
    if dates.notna().sum() >= PARSE_SHARE * len(present):
        leftover = int(len(present) - dates.notna().sum())
        return dates, "datetime", steps + date_steps + [("values that are not dates read as missing", leftover)]

    n_unique = texts.nunique()
    if n_unique <= CATEGORY_MAX_UNIQUE and n_unique <= max(2, 0.5 * len(present)):
        return _as_text(values), "category", steps
    return _as_text(values), "text", steps


def _blank_missing_markers(values: pd.Series, steps: list) -> pd.Series:
    is_marker = values.map(lambda v: isinstance(v, str) and v.lower() in MISSING_MARKERS)
    for marker, count in values[is_marker].value_counts().items():
        if marker != "":
            steps.append((f"read '{marker}' as missing", int(count)))
    return values.where(~is_marker, None)


def _looks_like_identifier(texts: pd.Series, id_named: bool) -> bool:
    digits = texts.str.fullmatch(r"\d+")
    if id_named and texts.nunique() > CATEGORY_MAX_UNIQUE / 2:
        return True
    if id_named and not digits.all():
        return True  # codes such as "ORD-00017" or "A12"
    if digits.all() and texts.str.match(r"0\d").any() and texts.str.len().nunique() == 1 and len(texts) > 1:
        return True  # zero-padded codes: numbers would lose the padding
    if texts.str.match(_PHONE).mean() >= 0.9:
        return True
    return bool(digits.all() and (texts.str.len() >= 12).all())  # ID/card numbers overflow floats


def _parse_numbers(values: pd.Series) -> tuple[pd.Series, list[tuple[str, int]]]:
    counts = {"thousands": 0, "currency": 0, "percent": 0}
    parsed = values.map(lambda v: _parse_number(v, counts))
    steps = [
        ("parsed thousands separators", counts["thousands"]),
        ("removed currency symbols", counts["currency"]),
        ("converted percentages to fractions", counts["percent"]),
    ]
    return pd.to_numeric(parsed, errors="coerce").astype("float64"), steps


def _parse_number(value, counts: dict) -> float | None:
    if _na(value):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = str(value).replace("\u00a0", "").replace(" ", "").replace("，", ",")
    if _PLAIN_FLOAT.match(text):
        return float(text)
    m = _NUM.match(text)
    if not m or not (m.group(4) or m.group(6)):
        return None
    sign = -1.0 if (m.group(1) or m.group(3)) in ("-", "−") or (text.startswith("(") and text.endswith(")")) else 1.0
    digits = (m.group(4) or "0").replace(",", "") + (m.group(6) or "")
    number = sign * float(digits)
    counts["thousands"] += "," in (m.group(4) or "")
    counts["currency"] += bool(m.group(2)) or m.group(7) == "元"
    if m.group(7) == "%":
        counts["percent"] += 1
        number /= 100.0
    return number


def _parse_dates(values: pd.Series) -> tuple[pd.Series, list[tuple[str, int]]]:
    non_iso = 0

    def parse(v):
        nonlocal non_iso
        if _na(v):
            return None
        text = str(v)
        for pattern, kind in _DATE_PATTERNS:
            m = pattern.match(text)
            if not m:
                continue
            parts = [int(g) if g else 0 for g in m.groups()]
            year, month, day = parts[0], parts[1], parts[2] if kind == "ymd" else 1
            hour, minute, second = (parts[3:6] + [0, 0, 0])[:3] if kind == "ymd" else (0, 0, 0)
            try:
                stamp = pd.Timestamp(year, month, day, hour, minute, second)
            except ValueError:
                return None
            non_iso += not re.match(r"^\d{4}-\d{2}-\d{2}", text)
            return stamp
        return None

    parsed = pd.to_datetime(values.map(parse), errors="coerce")
    return parsed, [("parsed dates written as text", non_iso)]


def _numeric_result(num: pd.Series, id_named: bool, steps: list) -> tuple[pd.Series, str, list]:
    present = num.dropna()
    integral = bool(len(present)) and bool(np.all(np.isfinite(present)) and (present % 1 == 0).all())
    if integral:
        text = num.map(lambda v: None if pd.isna(v) else str(int(v)))
        # Phone and card numbers typed into Excel as numbers are still identifiers, not quantities.
        if id_named or _looks_like_identifier(text.dropna(), False):
            return _as_text(text), "identifier", steps
    if integral and present.abs().max() < 2**53:
        return (num.astype("int64") if num.notna().all() else num.astype("Int64")), "integer", steps
    return num.astype("float64"), "number", steps


def _as_text(values: pd.Series) -> pd.Series:
    return values.astype("str").where(values.notna(), None) if len(values) else values.astype("str")
