"""Vectorised parsing of text into numbers, dates and booleans, shared by the data tools and the
plots: values pandas reads directly are taken as they are and only the rest go through the slower
text rules (thousands separators, currency, percent, 万/亿, Chinese dates). The checks are RE2
regex matches and literal replacements on Arrow strings, about a second for a million values."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd

_NUMBER = re.compile(
    r"^(?P<open>\()?(?P<s1>[-+−])?(?P<cur>[¥￥$€£]|RMB|CNY|USD)?(?P<s2>[-+−])?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?P<exp>[eE][-+]?\d+)?"
    r"(?P<unit>万亿|亿|万|千|[kK]|M)?(?P<suf>%|％|‰|元|块)?\)?$"
)
_UNITS = {"万亿": 1e12, "亿": 1e8, "万": 1e4, "千": 1e3, "k": 1e3, "K": 1e3, "M": 1e6}
_PLAIN = r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?"
_CURRENCY = r"[¥￥$€£元块]|RMB|CNY|USD"
_UNIT_SUFFIX = r"(?:万亿|亿|万|千|[kKM])[%％‰元块)]*$"
_BOOL = {
    "true": True,
    "false": False,
    "yes": True,
    "no": False,
    "y": True,
    "n": False,
    "t": True,
    "f": False,
    "1": True,
    "0": False,
    "是": True,
    "否": False,
    "对": True,
    "错": False,
    "有": True,
    "无": False,
}


def parse_numbers(series: pd.Series) -> tuple[pd.Series, dict[str, int]]:
    """Numbers as floats and counts of what was parsed (thousands, currency, percent, units).

    Only whole-string patterns are accepted ("1,2,3" is not 123); the checks are RE2 regex matches
    and literal replacements on Arrow strings, about a second for a million values."""
    notes = {"thousands": 0, "currency": 0, "percent": 0, "units": 0}
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.astype(float), notes
    if pd.api.types.is_numeric_dtype(series.dtype):
        out = pd.to_numeric(series, errors="coerce").astype(float)
        return out.where(np.isfinite(out)), notes
    text = series.astype("string").str.strip()
    out = pd.Series(np.nan, index=series.index, dtype=float)
    plain = text.str.fullmatch(_PLAIN).fillna(False).astype(bool)
    out[plain] = text[plain].astype("float64")
    rest = text.notna() & ~plain & (text != "")
    if rest.any():
        sub = text[rest]
        for junk in (" ", "\u00a0"):
            sub = sub.str.replace(junk, "", regex=False)
        sub = sub.str.replace("，", ",", regex=False).str.replace("−", "-", regex=False)
        ok = sub.str.fullmatch(_NUMBER.pattern).fillna(False).astype(bool)
        sub = sub[ok]
        negative = sub.str.startswith("(") & sub.str.endswith(")")
        core = sub
        for junk in ("(", ")", ",", "¥", "￥", "$", "€", "£", "RMB", "CNY", "USD", "元", "块"):
            core = core.str.replace(junk, "", regex=False)
        scale = pd.Series(1.0, index=core.index)
        for suffix, factor in (("%", 0.01), ("％", 0.01), ("‰", 0.001)):
            hit = core.str.endswith(suffix)
            scale[hit], core = scale[hit] * factor, core.str.removesuffix(suffix)
        notes["percent"] = int((scale != 1.0).sum())
        for unit, factor in _UNITS.items():  # 万亿 before 亿
            hit = core.str.endswith(unit)
            scale[hit], core = scale[hit] * factor, core.where(~hit, core.str.removesuffix(unit))
        value = core.astype("float64") * scale
        out[value.index] = value.where(~negative, -value)
        notes.update(
            thousands=int(sub.str.contains(",", regex=False).sum()),
            currency=int(sub.str.contains(_CURRENCY).sum()),
            units=int(sub.str.contains(_UNIT_SUFFIX).sum()),
        )
    return out.where(np.isfinite(out)), notes


def parse_dates(series: pd.Series) -> pd.Series:
    """Dates (naive timestamps): ISO and common text forms, 2024年1月5日, Excel serials, 20240105."""
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return series.dt.tz_localize(None) if getattr(series.dt, "tz", None) is not None else series
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        values = pd.to_numeric(series, errors="coerce")
        present = values.dropna()
        if len(present) and present.between(19000101, 21001231).all() and (present % 1 == 0).all():
            return pd.to_datetime(values.astype("Int64").astype("string"), format="%Y%m%d", errors="coerce")
        if len(present) and present.between(1, 80000).all():  # Excel's day numbers (1900 date system)
            return pd.to_datetime(values, unit="D", origin="1899-12-30", errors="coerce")
        return pd.Series(pd.NaT, index=series.index, dtype="datetime64[ns]")
    text = series.astype("string").str.strip()
    text = text.str.replace(r"(\d)\s*[年月]\s*", r"\1-", regex=True).str.replace(r"(\d)\s*[日号]", r"\1", regex=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = _to_datetime(text, "ISO8601")
        todo = text.notna() & out.isna()
        if todo.any():
            out[todo] = _to_datetime(text[todo], "mixed")
    return out


def _to_datetime(text: pd.Series, fmt: str) -> pd.Series:
    try:
        out = pd.to_datetime(text, errors="coerce", format=fmt)
    except (ValueError, TypeError):  # mixed time zones: compare in UTC
        out = pd.to_datetime(text, errors="coerce", format=fmt, utc=True)
    if getattr(out.dt, "tz", None) is not None:
        out = out.dt.tz_convert(None)
    return out.astype("datetime64[ns]")


def parse_booleans(series: pd.Series) -> pd.Series:
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.astype("boolean")
    if pd.api.types.is_numeric_dtype(series.dtype):
        return series.map({1: True, 0: False}).astype("boolean")  # 1.0 and 0.0 hash as 1 and 0
    lowered = series.astype("string").str.strip().str.lower()
    return lowered.map(_BOOL).astype("boolean")
