"""Infer one contract type per column and convert the column to it, logging every cleaning step.

Types: number, integer, datetime, category, text, boolean, identifier. Text that hides numbers
("1,234", "¥56", "12%", "(300)", "１２３", "3.5万") or dates ("2024年1月5日", "05.01.2024") is
converted, and each conversion is recorded as {"column", "action", "count", "message"} so the user
can see what was changed and why.

Everything is vectorised: a text column is factorised, the regular expressions run once per
*distinct* value (a 500k-row column of 200 product names costs 200 matches), and the results are
mapped back through the codes. Counts are weighted by how often each distinct value occurs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from analysis_tools.common import is_identifier_name
from app.ingest.table import cell_text

MISSING_MARKERS = {"", "—", "——", "–", "-", "--", "---", "n/a", "na", "n.a.", "null", "none", "nan", "#n/a",
                   "#null!", "#value!", "#div/0!", "#ref!", "无", "缺失", "空", "/", "?", "？", "不详", "暂无", "未知"}
_FULLWIDTH = str.maketrans("０１２３４５６７８９，．％－＋（）￥：／　", "0123456789,.%-+()¥:/ ")
_NUM = re.compile(
    r"^(?P<open>[(（])?\s*(?P<sign1>[+\-−])?\s*(?P<cur>[¥$€£]|RMB|CNY|USD|US\$|HK\$)?\s*(?P<sign2>[+\-−])?\s*"
    r"(?P<num>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:[eE](?P<exp>[+\-]?\d+))?\s*"
    r"(?P<unit>万亿|亿|万|千|百万|千万|[kKmMbB]|bn)?\s*(?P<pct>%|‰)?\s*(?P<cur2>元|块|美元|RMB|CNY|USD)?\s*"
    r"(?P<close>[)）])?$"
)
UNITS = {"万亿": 1e12, "亿": 1e8, "千万": 1e7, "百万": 1e6, "万": 1e4, "千": 1e3,
         "k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "b": 1e9, "B": 1e9, "bn": 1e9}
_TIME = r"(?:[ T]+(?P<H>\d{1,2})[:：](?P<Mi>\d{2})(?:[:：](?P<S>\d{2})(?:\.\d+)?)?)?"
DATE_STYLES = [  # (label shown to the user, pattern with named groups y, m, d)
    ("2024-01-05", re.compile(r"^(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})" + _TIME + r"$")),
    ("2024/1/5", re.compile(r"^(?P<y>\d{4})/(?P<m>\d{1,2})/(?P<d>\d{1,2})" + _TIME + r"$")),
    ("2024.1.5", re.compile(r"^(?P<y>\d{4})\.(?P<m>\d{1,2})\.(?P<d>\d{1,2})" + _TIME + r"$")),
    ("2024年1月5日", re.compile(r"^(?P<y>\d{4})\s*年\s*(?P<m>\d{1,2})\s*月\s*(?P<d>\d{1,2})\s*[日号]?" + _TIME + r"$")),
    ("05.01.2024", re.compile(r"^(?P<d>\d{1,2})\.(?P<m>\d{1,2})\.(?P<y>\d{4})" + _TIME + r"$")),
    ("01/05/2024", re.compile(r"^(?P<m>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{4})" + _TIME + r"$")),
    ("2024-01", re.compile(r"^(?P<y>\d{4})[-/](?P<m>\d{1,2})$")),
    ("2024年1月", re.compile(r"^(?P<y>\d{4})\s*年\s*(?P<m>\d{1,2})\s*月$")),
]
BOOL_WORDS = {"true": True, "false": False, "yes": True, "no": False, "y": True, "n": False,
              "是": True, "否": False, "对": True, "错": False, "t": True, "f": False}
_PLAIN = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_PHONE = re.compile(r"^(?:\+?86[\s-]?)?1[3-9]\d{9}$|^0\d{2,3}-?\d{7,8}$")
_DATE_NAME = re.compile(r"date|time|day|日期|时间|時間|timestamp|(^|_)dt$|_at$|生日|出生", re.I)
CATEGORY_MAX_UNIQUE = 50
PARSE_SHARE = 0.95  # share of non-missing values that must parse before a column changes type
EXCEL_SERIAL_RANGE = (18264, 73051)  # 1950-01-01 .. 2099-12-31 as 1900-system serials


@dataclass
class Step:
    action: str
    count: int
    message: str


def infer_and_convert(frame: pd.DataFrame, date1904: bool = False) -> tuple[pd.DataFrame, dict[str, str], list[dict]]:
    out, types, log = {}, {}, []
    for name in frame.columns:
        series, kind, steps = convert_column(name, frame[name], date1904=date1904)
        out[name], types[name] = series, kind
        log.extend({"column": name, "action": s.action, "count": int(s.count), "message": f"{name}: {s.message}"}
                   for s in steps if s.count)
    return pd.DataFrame(out, index=range(len(frame))), types, log


def convert_column(name: str, col: pd.Series, date1904: bool = False) -> tuple[pd.Series, str, list[Step]]:
    col = col.reset_index(drop=True)
    id_named = is_identifier_name(name)
    if col.dtype == object:
        col = _native_if_uniform(col)
    if pd.api.types.is_bool_dtype(col):
        return col.astype("boolean"), "boolean", []
    if pd.api.types.is_datetime64_any_dtype(col):
        return _datetime(col), "datetime", []
    if pd.api.types.is_timedelta64_dtype(col):
        return _as_text(col.astype(str).where(col.notna(), None)), "text", []
    if pd.api.types.is_numeric_dtype(col):
        num = col.astype("float64")
        if _DATE_NAME.search(str(name)) and not id_named:
            dates = _excel_serials(num, date1904)
            if dates is not None:
                n = int(dates.notna().sum())
                return dates, "datetime", [Step("converted Excel date serial numbers to dates", n,
                                                f"{n:,} Excel date serial numbers (like 45296) converted to dates")]
        return _numeric_result(num, id_named, [])
    return _convert_text(name, col, id_named)


def _native_if_uniform(col: pd.Series) -> pd.Series:
    """Object columns holding native cells (floats, datetimes, bools) become typed; mixed ones text."""
    present = col.dropna()
    if present.empty:
        return col
    kinds = present.map(type).value_counts()
    kind_names = {t.__name__ for t in kinds.index}
    if kind_names <= {"float", "int"}:
        return pd.to_numeric(col, errors="coerce")
    if kind_names <= {"bool"}:
        return col.astype("boolean")
    if kind_names <= {"datetime", "Timestamp"}:
        return pd.to_datetime(col, errors="coerce")
    if kind_names <= {"str"}:
        return col
    return col.map(_cell_text, na_action="ignore")


def _leftover(stripped, occ, unparsed, action: str, noun: str) -> list["Step"]:
    """The values a mostly-numeric (or mostly-date) column could not read: logged, never dropped silently."""
    index = np.flatnonzero(unparsed)
    count = int(occ[index].sum())
    if not count:
        return []
    examples = ", ".join(f"'{stripped[i]}'" for i in index[:3])
    return [Step(action, count, f"{count:,} values that are not {noun} read as missing ({examples})")]


def _cell_text(value) -> str:
    """A non-missing cell of a mixed column as text (strings kept exactly as typed)."""
    return value if isinstance(value, str) else cell_text(value)


def _datetime(col: pd.Series) -> pd.Series:
    if getattr(col.dt, "tz", None) is not None:
        col = col.dt.tz_localize(None)
    return col.astype("datetime64[ns]") if col.dtype != "datetime64[ns]" else col


def _excel_serials(num: pd.Series, date1904: bool) -> pd.Series | None:
    present = num.dropna()
    lo, hi = EXCEL_SERIAL_RANGE
    if date1904:
        lo, hi = lo - 1462, hi - 1462
    if present.empty or not present.between(lo, hi).all():
        return None
    origin = pd.Timestamp("1904-01-01") if date1904 else pd.Timestamp("1899-12-30")
    return origin + pd.to_timedelta(num.round(6), unit="D").dt.round("s")


# --- text columns ---------------------------------------------------------------------------


def _convert_text(name: str, col: pd.Series, id_named: bool):
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    if len(uniques) == 0:
        return _as_text(pd.Series([None] * len(col), dtype=object)), "text", []
    occ = np.bincount(codes[codes >= 0], minlength=len(uniques)).astype(np.int64)
    raw_uniques = [str(v) for v in np.asarray(uniques, dtype=object)]
    stripped = [v.replace("\u3000", " ").strip() for v in raw_uniques]
    lowered = [v.lower() for v in stripped]
    steps: list[Step] = []

    # Missing markers
    is_marker = np.fromiter((v in MISSING_MARKERS for v in lowered), dtype=bool, count=len(lowered))
    for i in np.flatnonzero(is_marker):
        if stripped[i] != "":
            steps.append(Step(f"read '{stripped[i]}' as missing", int(occ[i]),
                              f"{int(occ[i]):,} '{stripped[i]}' read as missing"))
    keep = ~is_marker
    n_present = int(occ[keep].sum())
    safe = np.where(codes >= 0, codes, 0)
    gone = (codes < 0) | ~keep[safe]

    def expand(values) -> np.ndarray:
        out = np.asarray(values, dtype=object)[safe] if len(values) else np.full(len(codes), None, dtype=object)
        out[gone] = None
        return out

    # Text that needs no cleaning keeps its original (Arrow) column: no copy, no conversion.
    untouched = not is_marker.any() and all(a == b for a, b in zip(stripped, raw_uniques))

    def text_result() -> pd.Series:
        if untouched and col.dtype != object:
            return col
        return _as_text(pd.Series(expand(stripped)))

    if n_present == 0:
        return _as_text(pd.Series(expand(stripped))), "text", steps
    present_idx = np.flatnonzero(keep)
    present_text = pd.Series([stripped[i] for i in present_idx], dtype="str")  # Arrow: regex in C++
    present_w = occ[present_idx]

    if _looks_like_identifier(present_text, present_w, id_named):
        return text_result(), "identifier", steps

    # Booleans: every value is a yes/no word (TRUE/FALSE, Y/N, 是/否 ...)
    if all(lowered[i] in BOOL_WORDS for i in present_idx):
        mapped = [BOOL_WORDS.get(v) for v in lowered]
        result = pd.Series(expand(mapped)).astype("boolean")
        words = "/".join(dict.fromkeys(present_text.tolist()))[:40]
        return result, "boolean", steps + [Step("read yes/no words as booleans", n_present,
                                                f"{n_present:,} values '{words}' read as yes/no")]

    parsed = _parse_numbers(stripped, occ, keep, n_present)
    if parsed is not None:
        numbers, num_steps, ok = parsed
        extra = _leftover(stripped, occ, keep & ~ok, "non-numeric values read as missing", "numbers")
        num = numbers[safe]
        num[gone] = np.nan
        return _numeric_result(pd.Series(num, dtype="float64"), id_named, steps + num_steps + extra)

    parsed_dates = _parse_dates(stripped, occ, keep, n_present)
    if parsed_dates is not None:
        dates, date_steps, ok = parsed_dates
        extra = _leftover(stripped, occ, keep & ~ok, "values that are not dates read as missing", "dates")
        arr = dates[safe]
        arr[gone] = np.datetime64("NaT")
        return pd.Series(arr, dtype="datetime64[ns]"), "datetime", steps + date_steps + extra

    result = text_result()
    n_unique = len(present_idx)
    if n_unique <= CATEGORY_MAX_UNIQUE and n_unique <= max(2, 0.5 * n_present) and present_text.str.len().max() <= 60:
        return result, "category", steps
    return result, "text", steps


def rx(values: pd.Series, pattern: str) -> np.ndarray:
    """Regex match of each value (RE2 through Arrow: C++ speed); missing values never match."""
    arr = pa.array(values.tolist() if values.dtype == object else values.array, type=pa.large_string()) \
        if values.dtype == object else pa.array(values.array)
    hit = pc.match_substring_regex(arr, pattern)
    return np.asarray(hit.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


def _looks_like_identifier(texts: pd.Series, weights: np.ndarray, id_named: bool) -> bool:
    """`texts` are the distinct present values (weights: how often each occurs)."""
    digits = rx(texts, r"^\d+$")
    if id_named and len(texts) > CATEGORY_MAX_UNIQUE / 2:
        return True
    if id_named and not digits.all():
        return True  # codes such as "ORD-00017" or "A12"
    if digits.all() and weights.sum() > 1:
        lengths = texts.str.len()
        if rx(texts, r"^0\d").any() and lengths.nunique() == 1:
            return True  # zero-padded codes: numbers would lose the padding
        if (lengths >= 12).all():
            return True  # ID/card numbers overflow floats
    phone = rx(texts, _PHONE.pattern)
    return bool(weights[phone].sum() >= 0.9 * weights.sum())


_FLAGS = ("thousands", "currency", "percent", "paren", "unit", "fullwidth")


def _number_of(text: str):
    """(value, flags, unit) for one distinct text, or None when it is not a number."""
    normal = text.translate(_FULLWIDTH)
    compact = re.sub(r"[\s\u00a0]+", "", normal)
    m = _NUM.match(compact)
    if not m or (m.group("open") is None) != (m.group("close") is None):
        return None
    # Decimal arithmetic, so "7.25%" is 0.0725 and "0.00015万" is 1.5, not 1.4999999999999998.
    value = Decimal(m.group("num").replace(",", ""))
    if m.group("exp"):
        value = value.scaleb(int(m.group("exp")))
    unit = m.group("unit")
    if unit:
        value *= Decimal(int(UNITS[unit]))
    pct = m.group("pct")
    if pct:
        value /= 100 if pct == "%" else 1000
    value = float(value)
    paren = m.group("open") is not None
    if paren or m.group("sign1") in ("-", "−") or m.group("sign2") in ("-", "−"):
        value = -abs(value)
    if not np.isfinite(value):
        return None
    flags = ("," in m.group("num"), bool(m.group("cur") or m.group("cur2")), bool(pct), paren, bool(unit),
             normal != text)
    return value, flags, unit


def _parse_numbers(stripped: list[str], occ: np.ndarray, keep: np.ndarray, n_present: int):
    """Numbers for every distinct text, or None when fewer than PARSE_SHARE of the values are
    numbers. Plain numbers go through pandas' C parser; only the rest meet the regular expression,
    and a sample of them decides early whether the column can be numeric at all."""
    need = PARSE_SHARE * n_present
    present = np.flatnonzero(keep)
    if len(present) > 400:
        # A sample of distinct values decides cheaply whether a column can be numeric at all.
        sample = present[:200]
        hits = [i for i in sample if _PLAIN.match(stripped[i]) or _number_of(stripped[i]) is not None]
        if len(hits) < 0.5 * len(sample):
            return None
    values = pd.to_numeric(pd.Series(stripped, dtype=object), errors="coerce").to_numpy(dtype="float64", copy=True)
    ok = np.isfinite(values) & keep
    counts = dict.fromkeys(_FLAGS, 0)
    # Thousands separators alone ("1,234.50"), the commonest case, without the general expression.
    todo = np.flatnonzero(keep & ~ok)
    if len(todo):
        cand = pd.Series([stripped[i] for i in todo], dtype="str")
        plain_commas = rx(cand, r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
        if plain_commas.any():
            idx = todo[plain_commas]
            values[idx] = pd.to_numeric(cand[plain_commas].str.replace(",", "", regex=False)).to_numpy(dtype="float64")
            ok[idx] = True
            counts["thousands"] += int(occ[idx].sum())
    need = PARSE_SHARE * n_present
    rest = np.flatnonzero(keep & ~ok)
    rest_w = int(occ[rest].sum())
    if int(occ[ok].sum()) + rest_w < need:
        return None
    units: list[str] = []
    if len(rest):
        sample = rest[:200]
        hits = [i for i in sample if _number_of(stripped[i]) is not None]
        sample_w, hit_w = int(occ[sample].sum()), int(occ[hits].sum()) if hits else 0
        if int(occ[ok].sum()) + hit_w + (rest_w - sample_w) < need:
            return None
        for i in rest:
            got = _number_of(stripped[i])
            if got is None:
                continue
            values[i], flags, unit = got
            ok[i] = True
            for name, flag in zip(_FLAGS, flags):
                if flag:
                    counts[name] += int(occ[i])
            if unit and unit not in units:
                units.append(unit)
    if int(occ[ok].sum()) < need:
        return None
    values[~ok] = np.nan
    c = counts
    steps = [
        Step("parsed thousands separators", c["thousands"], f"{c['thousands']:,} values parsed from text with thousands separators"),
        Step("removed currency symbols", c["currency"], f"{c['currency']:,} currency signs removed"),
        Step("converted percentages to fractions", c["percent"], f"{c['percent']:,} percentages converted to fractions (12% → 0.12)"),
        Step("read parentheses as negative numbers", c["paren"], f"{c['paren']:,} numbers in parentheses read as negative"),
        Step("expanded number units", c["unit"], f"{c['unit']:,} values with units ({'/'.join(units)}) multiplied out"),
        Step("converted full-width digits", c["fullwidth"], f"{c['fullwidth']:,} values written with full-width characters (１２３) converted"),
    ]
    return values, steps, ok


def _date_of(text: str):
    normal = text.translate(_FULLWIDTH)
    for label, pattern in DATE_STYLES:
        m = pattern.match(normal)
        if not m:
            continue
        g = m.groupdict()
        try:
            stamp = np.datetime64(datetime(int(g["y"]), int(g["m"]), int(g.get("d") or 1), int(g.get("H") or 0),
                                           int(g.get("Mi") or 0), int(g.get("S") or 0)), "ns")
        except (ValueError, OverflowError):
            return None
        return stamp, label
    return None


def _parse_dates(stripped: list[str], occ: np.ndarray, keep: np.ndarray, n_present: int):
    need = PARSE_SHARE * n_present
    present = np.flatnonzero(keep)
    if len(present) > 400:
        sample = present[:200]
        if sum(_date_of(stripped[i]) is not None for i in sample) < 0.5 * len(sample):
            return None
    series = pd.Series(stripped, dtype=object)
    out = pd.to_datetime(series, format="%Y-%m-%d", errors="coerce").to_numpy(dtype="datetime64[ns]", copy=True)
    ok = ~np.isnat(out) & keep
    used: list[str] = ["2024-01-05"] if ok.any() else []
    rest = np.flatnonzero(keep & ~ok)
    rest_w = int(occ[rest].sum())
    if len(rest):
        sample = rest[:200]
        hits = [i for i in sample if _date_of(stripped[i]) is not None]
        sample_w, hit_w = int(occ[sample].sum()), int(occ[hits].sum()) if hits else 0
        if int(occ[ok].sum()) + hit_w + (rest_w - sample_w) < need:
            return None
        for i in rest:
            got = _date_of(stripped[i])
            if got is not None:
                out[i], label = got
                ok[i] = True
                if label not in used:
                    used.append(label)
    n = int(occ[ok].sum())
    if n < need:
        return None
    return out, [Step("parsed dates written as text", n, f"{n:,} dates written as text parsed ({', '.join(used)})")], ok


def _numeric_result(num: pd.Series, id_named: bool, steps: list) -> tuple[pd.Series, str, list]:
    values = num.to_numpy(dtype="float64", na_value=np.nan)
    finite = values[np.isfinite(values)]
    integral = finite.size > 0 and finite.size == np.count_nonzero(~np.isnan(values)) and bool(np.all(finite % 1 == 0))
    if integral:
        big = np.abs(finite).max()
        # Phone and card numbers typed into Excel as numbers are still identifiers, not quantities.
        phones = (finite >= 1.3e10) & (finite < 2e10)
        if id_named or big >= 1e11 and np.all(np.abs(finite) >= 1e11) or phones.mean() >= 0.9:
            text = pd.Series(values).astype("Int64").astype(str).where(~np.isnan(values), None)
            return _as_text(text), "identifier", steps
        if big < 2**53:
            ints = pd.Series(values)
            return (ints.astype("int64") if not np.isnan(values).any() else ints.astype("Int64")), "integer", steps
    return pd.Series(values, dtype="float64"), "number", steps


def _as_text(values: pd.Series) -> pd.Series:
    """Text with missing as NA, in pandas' string dtype."""
    return pd.Series(values, dtype=object).astype("str")
