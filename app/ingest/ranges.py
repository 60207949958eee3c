"""Estimates written with their range in one cell, "298[110-510]" or "1 234 (1 100-1 400)" (as WHO and
GBD tables publish them): the column becomes the estimate as a number, and two new columns next to it
hold the range's low and high ends, so the estimate can be summed and compared like any number.

Detection reads a sample of the column's first values; only a column whose sample is mostly such
cells is read in full, once per distinct value (the regular expression runs in Arrow's C++)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

_NUMBER = r"[+-]?\d[\d ,]*(?:\.\d+)?"  # digits grouped by spaces or commas: "1 234 567", "1,234"
RANGE_CELL = (
    rf"^\s*(?P<estimate>{_NUMBER})\s*[\[(]\s*(?P<low>{_NUMBER})\s*(?:-|–|—|,|;|to)\s*(?P<high>{_NUMBER})\s*[\])]\s*$"
)
_PLAIN = rf"^\s*{_NUMBER}\s*$"
_DIGIT = r"\d"
SAMPLE_ROWS = 1000  # the first rows looked at to decide; the rest of the column is read only if they qualify
SAMPLE_VALUES = 200
MIN_SHARE = 0.5  # of the sample's present values written as "estimate[low-high]"
PARSE_SHARE = 0.95  # of the column's present values that must be a range, a plain number or a non-number note


def low_high_names(name: str, taken: set[str]) -> tuple[str, str]:
    """The two new columns' names, "<name> (low)" and "<name> (high)", kept clear of existing names."""
    low, high = f"{name} (low)", f"{name} (high)"
    k = 2
    while low in taken or high in taken:
        low, high, k = f"{name} (low {k})", f"{name} (high {k})", k + 1
    return low, high


def _as_text(values: pd.Series) -> pa.Array:
    return pa.array([None if v is None or v != v else str(v) for v in values], type=pa.large_string())


def _numbers(texts: pa.Array) -> np.ndarray:
    """'1 234,5'-free numbers: spaces and commas are digit grouping here, never decimal marks."""
    cleaned = pc.replace_substring_regex(texts, r"[ ,]", "")
    return pd.to_numeric(pd.Series(cleaned.to_pylist(), dtype=object), errors="coerce").to_numpy(
        dtype="float64", copy=True
    )


def might_hold_ranges(col: pd.Series) -> bool:
    """Whether the column's first values are mostly "estimate[low-high]" cells (a cheap sample test)."""
    if (
        pd.api.types.is_numeric_dtype(col)
        or pd.api.types.is_datetime64_any_dtype(col)
        or pd.api.types.is_bool_dtype(col)
    ):
        return False
    head = col.iloc[:SAMPLE_ROWS].dropna().iloc[:SAMPLE_VALUES]
    if head.empty:
        return False
    sample = _as_text(head)
    hits = pc.sum(pc.cast(pc.match_substring_regex(sample, RANGE_CELL), pa.int64())).as_py() or 0
    return hits >= MIN_SHARE * len(sample)


def split_ranges(col: pd.Series) -> tuple[pd.Series, pd.Series, pd.Series, int] | None:
    """(estimate, low, high, how many cells had a range) as numbers, or None when the column is not
    such a column after all: fewer than PARSE_SHARE of its present values are a range, a plain number
    or a note without digits ("No data", read as missing)."""
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    texts = _as_text(pd.Series(np.asarray(uniques, dtype=object)))
    occ = np.bincount(codes[codes >= 0], minlength=len(texts))
    parts = pc.extract_regex(texts, RANGE_CELL)
    is_range = np.asarray(parts.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    plain = np.asarray(pc.match_substring_regex(texts, _PLAIN).to_numpy(zero_copy_only=False), dtype=bool)
    no_digits = ~np.asarray(pc.match_substring_regex(texts, _DIGIT).to_numpy(zero_copy_only=False), dtype=bool)
    present = int(occ.sum())
    if present == 0 or occ[is_range | plain | no_digits].sum() < PARSE_SHARE * present:
        return None
    estimate, low, high = (np.full(len(texts), np.nan) for _ in range(3))
    if is_range.any():
        estimate = _numbers(pc.if_else(is_range, parts.field("estimate"), None))
        low = _numbers(pc.if_else(is_range, parts.field("low"), None))
        high = _numbers(pc.if_else(is_range, parts.field("high"), None))
    estimate[plain] = _numbers(texts.filter(pa.array(plain)))

    def rows(per_value: np.ndarray) -> pd.Series:
        out = per_value[np.where(codes >= 0, codes, 0)] if len(per_value) else np.full(len(codes), np.nan)
        return pd.Series(np.where(codes >= 0, out, np.nan), dtype="float64")

    return rows(estimate), rows(low), rows(high), int(occ[is_range].sum())


def split_range_columns(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[dict]]:
    """The frame with each "estimate[low-high]" column split into the estimate and two new columns
    right after it, and one cleaning entry per split column."""
    candidates = [name for name in frame.columns if might_hold_ranges(frame[name])]
    if not candidates:
        return frame, []
    columns: dict[str, pd.Series] = {}
    log: list[dict] = []
    taken = set(map(str, frame.columns))
    for name in frame.columns:
        split = split_ranges(frame[name]) if name in candidates else None
        if split is None:
            columns[name] = frame[name].reset_index(drop=True)
            continue
        estimate, low, high, n = split
        low_name, high_name = low_high_names(str(name), taken)
        taken |= {low_name, high_name}
        columns[name], columns[low_name], columns[high_name] = estimate, low, high
        log.append(
            {
                "column": name,
                "action": "split estimate and range",
                "count": n,
                "message": f"{name}: {n:,} values written as 'estimate[low-high]' read as the estimate; "
                f"the range is in the new columns '{low_name}' and '{high_name}'",
            }
        )
    return pd.DataFrame(columns, index=range(len(frame))), log
