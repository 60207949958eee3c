"""Infer one contract type per column and convert the column to it, logging every cleaning step.

Types: number, integer, datetime, category, text, boolean, identifier. Text that hides numbers
("1,234", "¥56", "12%", "(300)", "１２３", "3.5万") or dates ("2024年1月5日", "05.01.2024") is
converted, and each conversion is recorded as {"column", "action", "count", "message"} so the user
can see what was changed and why.

Everything is vectorised: a text column is factorised, trimming, missing markers and the regular
expressions run once per *distinct* value in Arrow's kernels (a 500k-row column of 200 product
names costs 200 matches), and the results are mapped back through the codes (textvalues.Distinct).
Counts are weighted by how often each distinct value occurs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from app.ingest.identifiers import is_identifier_name
from app.ingest.ranges import split_range_columns
from app.ingest.table import cell_text
from app.ingest.textcolumns import TextReading
from app.ingest.textvalues import (
    PLAIN_NUMBER,
    SAMPLE,
    Distinct,
    Step,
    all_digits,
    date_of,
    iso_datetimes,
    leftover,
    may_be_formatted_dates,
    may_need_trim,
    mostly_unreadable,
    number_of,
    padded_codes,
    parse_dates,
    parse_dates_by_format,
    parse_dates_in_forms,
    parse_numbers,
    plain_numbers,
    regex_hits,
    remember_distinct,
    text_array,
)

MISSING_MARKERS = (
    "",
    "—",
    "——",
    "–",
    "-",
    "--",
    "---",
    "n/a",
    "na",
    "n.a.",
    "null",
    "none",
    "nan",
    "#n/a",
    "#null!",
    "#value!",
    "#div/0!",
    "#ref!",
    "无",
    "缺失",
    "空",
    "/",
    "?",
    "？",
    "不详",
    "暂无",
    "未知",
)
_MARKERS = pa.array(MISSING_MARKERS)
_MARKER_CHARS = max(len(m) for m in MISSING_MARKERS)
ANSWER_WORDS = ("none", "无")  # markers that are a real answer among a category's levels
BOOL_WORDS = {
    "true": True,
    "false": False,
    "yes": True,
    "no": False,
    "y": True,
    "n": False,
    "是": True,
    "否": False,
    "对": True,
    "错": False,
    "t": True,
    "f": False,
}
_BOOL_TEXTS = pa.array(list(BOOL_WORDS))
_BOOL_CHARS = max(len(w) for w in BOOL_WORDS)
_PHONE = re.compile(r"^(?:\+?86[\s-]?)?1[3-9]\d{9}$|^0\d{2,3}-?\d{7,8}$")
_DATE_NAME = re.compile(r"date|time|day|日期|时间|時間|timestamp|(^|_)dt$|_at$|生日|出生", re.I)
CATEGORY_MAX_UNIQUE = 50
PARALLEL_CELLS = 400_000  # tables at least this big convert their columns in two threads ...
# ... up to this size: two text columns converted at once hold both columns' intermediate copies, the
# peak of a million-row read (130 MB more), so bigger tables convert one column at a time.
SERIAL_CELLS = 8_000_000
EXCEL_SERIAL_RANGE = (18264, 73051)  # 1950-01-01 .. 2099-12-31 as 1900-system serials


def infer_and_convert(
    frame: pd.DataFrame,
    date1904: bool = False,
    on_column: Callable[[float], None] | None = None,
    readings: Mapping[str, TextReading] | None = None,
    one_column_at_a_time_when_big: bool = True,
) -> tuple[pd.DataFrame, dict[str, str], list[dict]]:
    """The typed table, each column's type and the cleaning log. `frame` is emptied as its columns
    are converted (each text column's memory is freed once its typed column exists: a big table
    is never held twice), so the caller must not use it afterwards. `on_column(fraction done)` is
    told after each column (a background read's progress, app.ingest.progress). `readings`: the
    columns a text file's reader already typed (by name), whose type and log follow from how.
    `one_column_at_a_time_when_big`: tables of SERIAL_CELLS or more convert their columns one at a
    time (a text file's read peaks here); a workbook's peak is calamine's parse (its grid of every
    cell, gone by now), far above two columns' copies, so its reader passes False."""
    readings = readings or {}
    types: dict[str, str] = {}
    source = frame
    frame, log = drop_row_number_column(frame, readings)
    frame, split_log = split_range_columns(frame)
    log.extend(split_log)
    n_rows = len(frame)
    names = list(frame.columns)
    # The columns by position (names can repeat in a frame a caller built), and no frame holding them.
    columns: dict[int, pd.Series] = {i: frame.iloc[:, i] for i in range(len(names))}
    parallel = PARALLEL_CELLS <= frame.size and (frame.size < SERIAL_CELLS or not one_column_at_a_time_when_big)
    if source is not frame:
        source.drop(columns=source.columns, inplace=True)
    frame.drop(columns=frame.columns, inplace=True)
    del frame, source

    finished = iter(range(1, len(names) + 1))  # columns done so far, in whatever order threads finish

    def convert(i: int) -> tuple[pd.Series, str, list[Step]]:
        reading = readings.get(names[i])
        if reading is not None:
            converted = _convert_read(names[i], columns.pop(i), reading)
        else:
            converted = convert_column(names[i], columns.pop(i), date1904=date1904)
        if on_column is not None:
            on_column(next(finished) / len(names))
        return converted

    if parallel:
        # Arrow's kernels (factorising, trimming, regular expressions, casts) release the GIL, so a
        # second thread converts other columns meanwhile; results keep the column order.
        with ThreadPoolExecutor(2, thread_name_prefix="verity-types") as pool:
            converted = list(pool.map(convert, range(len(names))))
    else:
        converted = [convert(i) for i in range(len(names))]
    out: dict[str, pd.Series] = {}
    for name, (series, kind, steps) in zip(names, converted):
        out[name], types[name] = series, kind
        log.extend(
            {"column": name, "action": s.action, "count": int(s.count), "message": f"{name}: {s.message}"}
            | ({"words": s.words} if s.words else {})
            for s in steps
            if s.count
        )
    # copy=False: the columns as they are, never consolidated into 2-D blocks (a copy of every number)
    return pd.DataFrame(out, index=range(n_rows), copy=False), types, log


_ROW_NUMBER_NAME = re.compile(r"^(?:Unnamed[:\s_]*\d+)?$", re.I)  # what pandas or a blank header cell leaves


def drop_row_number_column(
    frame: pd.DataFrame, readings: Mapping[str, TextReading] | None = None
) -> tuple[pd.DataFrame, list[dict]]:
    """A first column with no real name ("Unnamed: 0", "Unnamed 1", blank) holding 0..n-1 or 1..n is the
    row index a program wrote along with the data (pandas' to_csv): not data, so it is dropped. Text
    with thousands separators ("1,000") is no row number, read from text or typed while read."""
    if len(frame.columns) < 2 or len(frame) < 2:
        return frame, []
    name = frame.columns[0]
    if not _ROW_NUMBER_NAME.match(str(name)):
        return frame, []
    reading = (readings or {}).get(name)
    if reading is not None and (reading.kind != "number" or reading.separated is not None and reading.separated.any()):
        return frame, []
    values = _as_floats(frame[name])
    if values is None:
        return frame, []
    steps = np.arange(len(values), dtype="float64")
    if not (np.array_equal(values, steps) or np.array_equal(values, steps + 1)):
        return frame, []
    entry = {
        "column": name,
        "action": "dropped a row-number column",
        "count": len(frame),
        "message": f"{name}: a column without a name holding only the row numbers "
        f"({int(values[0])}..{int(values[-1])}) was dropped; it is the index a program saved with the data",
    }
    return frame.iloc[:, 1:], [entry]


def _as_floats(col: pd.Series) -> np.ndarray | None:
    """The column as floats, or None when some value is no number (Arrow's cast: a 200k-row text column
    in milliseconds, where pandas' to_numeric takes a tenth of a second)."""
    if pd.api.types.is_numeric_dtype(col):
        return col.to_numpy(dtype="float64", na_value=np.nan)
    try:
        return pc.cast(text_array(col), pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None


def _convert_read(name: str, col: pd.Series, reading: TextReading) -> tuple[pd.Series, str, list[Step]]:
    """What `_convert_text` gives the text of a column the typed pass read (textcolumns.TextReading):
    plain numbers as `plain_numbers` reads them, ISO dates as `iso_datetimes` does. Never an
    ID-named column (the reader keeps those as text); a column with nothing in it is text."""
    col = col.reset_index(drop=True)
    if not col.notna().any():
        return convert_column(name, pd.Series([None] * len(col), dtype="str"))
    if reading.kind == "iso":
        return _datetime(col), "datetime", [_iso_step(int(col.notna().sum()))]
    separated = int(reading.separated.sum()) if reading.separated is not None else 0
    return _numeric_result(col.astype("float64"), False, _separator_steps(separated))


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
                return (
                    dates,
                    "datetime",
                    [
                        Step(
                            "converted Excel date serial numbers to dates",
                            n,
                            f"{n:,} Excel date serial numbers (like 45296) converted to dates",
                        )
                    ],
                )
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


def _cell_text(value) -> str | None:
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


def _separator_steps(separated: int) -> list[Step]:
    """The cleaning log's line for numbers written with thousands separators, when there were any."""
    if not separated:
        return []
    return [
        Step(
            "parsed thousands separators", separated, f"{separated:,} values parsed from text with thousands separators"
        )
    ]


def _convert_text(name: str, col: pd.Series, id_named: bool):
    if not id_named and col.dtype != object and (simple := plain_numbers(col)) is not None:
        numbers, separated = simple
        return _numeric_result(pd.Series(numbers, dtype="float64"), id_named, _separator_steps(separated))
    if col.dtype != object and (_clean_identifiers(col) if id_named else padded_codes(col)):
        return col, "identifier", []
    if not id_named and col.dtype != object and (iso := iso_datetimes(col)) is not None:
        stamps, n = iso  # what parse_dates gives such a column, without a Python string per value
        return pd.Series(stamps, dtype="datetime64[ns]"), "datetime", [_iso_step(n)]
    if not id_named and col.dtype != object and _settled_free_text(col):
        return col, "text", []
    d = Distinct.of(col)
    if len(d) == 0:
        return _as_text(pd.Series([None] * len(col), dtype=object)), "text", []
    # Missing markers ("—", "N/A", "无" ...), each logged with how often it occurred.
    d.keep = ~_markers(d)
    steps = [
        Step(f"read '{d.values[i]}' as missing", int(d.occ[i]), f"{int(d.occ[i]):,} '{d.values[i]}' read as missing")
        for i in np.flatnonzero(~d.keep)
        if d.values[i] != ""
    ]
    n_present = d.weight(d.keep)
    # Text that needs no cleaning keeps its original (Arrow) column: no copy, no conversion.
    untouched = bool(d.keep.all()) and d.text.equals(d.raw) and col.dtype != object

    def text_result() -> pd.Series:
        return _kept(col, d) if untouched else d.expand_text()

    if n_present == 0:
        return d.expand_text(), "text", steps
    present = pa.array(d.keep)
    present_text = pd.Series(d.text if d.keep.all() else d.text.filter(present), dtype="str")
    present_w = d.occ[d.keep]

    if _looks_like_identifier(present_text, present_w, id_named):
        return text_result(), "identifier", steps

    # Booleans: every value is a yes/no word (TRUE/FALSE, Y/N, 是/否 ...)
    if (
        _at_most_chars(d.text, _BOOL_CHARS, present)
        and pc.all(pc.is_in(d.lowered.filter(present), value_set=_BOOL_TEXTS)).as_py()
    ):
        meanings = [BOOL_WORDS.get(v) for v in d.lowered.to_pylist()]
        # Per row from per distinct value as flags (an object array of a million True/False/None
        # cast to "boolean" costs ten times as much); markers, missing and non-words are NA.
        unknown = d.expand(np.array([m is None for m in meanings], dtype=bool), True)
        truth = d.expand(np.array([m is True for m in meanings], dtype=bool), False)
        result = pd.Series(pd.arrays.BooleanArray(truth, unknown))
        words = "/".join(dict.fromkeys(present_text.tolist()))[:40]
        read = Step(
            "read yes/no words as booleans",
            n_present,
            f"{n_present:,} values '{words}' read as yes/no",
            sheet_words(present_text.tolist(), present_w),
        )
        return result, "boolean", [*steps, read]

    parsed = parse_numbers(d, n_present)
    if parsed is not None:
        numbers, num_steps, ok = parsed
        extra = leftover(d, d.keep & ~ok, "non-numeric values read as missing", "numbers")
        num = pd.Series(d.expand(numbers, np.nan), dtype="float64")
        return _numeric_result(num, id_named, steps + num_steps + extra)

    parsed_dates = (
        parse_dates(d, n_present) or parse_dates_by_format(d, n_present) or parse_dates_in_forms(d, n_present)
    )
    if parsed_dates is not None:
        dates, date_steps, ok = parsed_dates
        extra = leftover(d, d.keep & ~ok, "values that are not dates read as missing", "dates")
        stamps = d.expand(dates, np.datetime64("NaT"))
        return pd.Series(stamps, dtype="datetime64[ns]"), "datetime", steps + date_steps + extra

    if _is_category(present_text, present_w, n_present):
        if answers := _answer_levels(d):  # "None" is how much someone exercises, not a gap
            d.keep[answers] = True
            said = {str(d.values[i]) for i in answers}
            steps = [s for s in steps if not any(s.action == f"read '{v}' as missing" for v in said)]
            return d.expand_text(), "category", steps
        return text_result(), "category", steps
    return text_result(), "text", steps


DISTINCT_NOTED = 1 << 16


def _kept(col: pd.Series, d: Distinct) -> pd.Series:
    """A text column kept as it is; where it has few distinct values for its rows, they are noted
    with it for the checks that search every cell (pii.detect_injection searches them instead).
    At most DISTINCT_NOTED of them, so that what is kept beside a frame stays small."""
    if len(d) <= DISTINCT_NOTED and len(d) * 4 <= len(col):
        remember_distinct(col, d.raw)
    return col


# The rows whose distinct values `_settled_free_text` looks at: grown eightfold until they hold more than
# 2 * SAMPLE distinct values, up to a quarter of the column (past that, factorising it whole costs little more).
FREE_TEXT_HEAD = 4096
_PHONE_LENGTHS = (10, 15)  # the shortest and longest text _PHONE matches ("0101234567", "+86 13812345678")


def _settled_free_text(col: pd.Series) -> bool:
    """Whether `_convert_text` would keep this text column as it is, as "text" with nothing logged,
    decided without factorising it whole: the distinct values of free text (comments, names,
    addresses) run to hundreds of thousands in a big file, and factorising them was a tenth of a
    million-row read. Every test of the distinct-value path is made, on the whole column where it
    counts cells and on the distinct values of its first rows where it looks only at the first
    SAMPLE of them (which are the whole column's first SAMPLE, distinct values coming in the order
    they first appear); anything the full path could read otherwise answers False, and it decides.

    The whole column: no cell to trim and no ideographic space (its distinct texts are its cells),
    no missing marker, and too few cells of a phone number's length for a column of phones. The
    head: more than 2 * SAMPLE distinct values (no category; the samples are taken), one longer
    than a yes/no word, one that is not all digits (no zero-padded or long codes), and samples that
    are mostly neither numbers nor dates in any layout."""
    if not isinstance(col.dtype, pd.StringDtype):
        return False  # text as the readers give it (a categorical's values could come in another order)
    head = _head_distinct(col)
    if head is None:
        return False
    # The head's tests first: they cost little, and a column of numbers or dates written as text
    # ("85.5%", "1.234,5") fails them before the whole column is searched (~35 ms a million cells).
    if pc.max(pc.utf8_length(head.text)).as_py() <= _BOOL_CHARS or all_digits(head.text):
        return False
    if not (mostly_unreadable(head, number_of, also=PLAIN_NUMBER) and mostly_unreadable(head, date_of)):
        return False
    texts = text_array(col)
    if may_need_trim(texts) or pc.any(pc.match_substring(texts, "\u3000")).as_py():
        return False
    lengths = pc.utf8_length(texts)
    short = texts.filter(pc.less_equal(lengths, _MARKER_CHARS))
    if len(short) and pc.any(pc.is_in(pc.utf8_lower(short), value_set=_MARKERS)).as_py():
        return False
    low, high = _PHONE_LENGTHS
    phone_long = pc.sum(pc.and_(pc.greater_equal(lengths, low), pc.less_equal(lengths, high))).as_py() or 0
    if phone_long >= 0.9 * (len(texts) - texts.null_count):
        return False
    return not may_be_formatted_dates(head.text.slice(0, SAMPLE).to_pylist())


def _head_distinct(col: pd.Series) -> Distinct | None:
    """The distinct values of the column's first rows once they number more than 2 * SAMPLE (None
    when a quarter of the column does not hold that many)."""
    rows = FREE_TEXT_HEAD
    while True:
        head = Distinct.of(col.iloc[:rows])
        if len(head) > 2 * SAMPLE:
            return head
        if rows >= len(col) // 4:
            return None
        rows *= 8


def _markers(d: Distinct) -> np.ndarray:
    """Which distinct values are missing markers ("—", "N/A", "无" ...): only values as short as a
    marker are lowered and looked up (lowering keeps the number of characters), not 300k texts."""
    short = np.flatnonzero(pc.less_equal(pc.utf8_length(d.text), _MARKER_CHARS).to_numpy(zero_copy_only=False))
    out = np.zeros(len(d), dtype=bool)
    if len(short):
        lowered = pc.utf8_lower(d.text.take(pa.array(short)))
        out[short] = pc.is_in(lowered, value_set=_MARKERS).to_numpy(zero_copy_only=False)
    return out


def _at_most_chars(texts: pa.Array, limit: int, where: pa.Array) -> bool:
    """Whether every text where `where` holds has at most `limit` characters."""
    longest = pc.max(pc.utf8_length(texts.filter(where) if not pc.all(where).as_py() else texts)).as_py()
    return longest is None or longest <= limit


def _iso_step(n: int) -> Step:
    """The cleaning-log entry `parse_dates` writes for a column of ISO dates."""
    return Step("parsed dates written as text", n, f"{n:,} dates written as text parsed (2024-01-05)")


def sheet_words(texts: list[str], counts: np.ndarray) -> dict[str, str]:
    """How the sheet itself writes yes and no in a yes/no column: the most frequent spelling of each
    ("true": "是", "false": "否"), so that answers show 是/否 rather than True/False. A side the column
    never holds is left out."""
    best: dict[str, tuple[int, str]] = {}
    for text, count in zip(texts, counts):
        meaning = BOOL_WORDS.get(text.strip().lower())
        if meaning is None:
            continue
        key = "true" if meaning else "false"
        if key not in best or int(count) > best[key][0]:
            best[key] = (int(count), text.strip())
    return {key: text for key, (_, text) in best.items()}


def _is_category(present_text: pd.Series, weights: np.ndarray, n_present: int) -> bool:
    n_unique = len(weights)
    return bool(
        n_unique <= CATEGORY_MAX_UNIQUE and n_unique <= max(2, 0.5 * n_present) and present_text.str.len().max() <= 60
    )


def _answer_levels(d: Distinct) -> list[int]:
    """Values read as missing that are really one of the column's answers: in a column of a few
    levels, "None" / "无" is a choice ("How much do you exercise? None"), never a gap. The
    placeholders (N/A, NULL, —, 不详) stay missing everywhere."""
    lowered = d.lowered.to_pylist()
    return [int(i) for i in np.flatnonzero(~d.keep) if lowered[i] in ANSWER_WORDS]


def _clean_identifiers(col: pd.Series) -> bool:
    """An ID-named column with many distinct values (the rule `_looks_like_identifier` applies)
    and nothing to clean: no missing markers, no spaces to trim. Checked on the whole column in
    Arrow, without factorising 100k order numbers only to keep them as they are."""
    texts = text_array(col)
    if pc.count_distinct(texts.slice(0, 1000)).as_py() <= CATEGORY_MAX_UNIQUE / 2:
        return False
    # The cells change when trimmed, or when an ideographic space inside one is read as a space:
    # tested without the two copies where no cell starts or ends with white space and none holds one.
    if may_need_trim(texts) or pc.any(pc.match_substring(texts, "\u3000")).as_py():
        trimmed = pc.utf8_trim_whitespace(pc.replace_substring(texts, "\u3000", " "))
        if not trimmed.equals(texts):
            return False
    # Only cells as short as a missing marker can be one (lowering keeps the number of characters).
    short = texts.filter(pc.less_equal(pc.utf8_length(texts), _MARKER_CHARS))
    return not pc.any(pc.is_in(pc.utf8_lower(short), value_set=_MARKERS)).as_py()


def _looks_like_identifier(texts: pd.Series, weights: np.ndarray, id_named: bool) -> bool:
    """`texts` are the distinct present values (weights: how often each occurs)."""
    if id_named and len(texts) > CATEGORY_MAX_UNIQUE / 2:
        return True
    arrow = text_array(texts)
    digits = regex_hits(arrow, r"^\d+$")
    if id_named and not digits.all():
        return True  # codes such as "ORD-00017" or "A12"
    if digits.all() and weights.sum() > 1:
        lengths = texts.str.len()
        if regex_hits(arrow, r"^0\d").any() and lengths.nunique() == 1:
            return True  # zero-padded codes: numbers would lose the padding
        if (lengths >= 12).all():
            return True  # ID/card numbers overflow floats
    phone = regex_hits(arrow, _PHONE.pattern)
    return bool(weights[phone].sum() >= 0.9 * weights.sum())


def _numeric_result(num: pd.Series, id_named: bool, steps: list) -> tuple[pd.Series, str, list]:
    values = num.to_numpy(dtype="float64", na_value=np.nan)
    # Whole numbers tested by trunc, not x % 1 (a tenth of the time), and on the values themselves
    # when all are finite (no copy of a million values); the extremes settle most of the rest. The
    # first values first: a column of fractions shows one there, without a truncated copy of it all.
    is_finite = np.isfinite(values)
    finite = values if is_finite.all() else values[is_finite]
    head = finite[:1024]
    integral = (
        finite.size > 0
        and finite.size == np.count_nonzero(~np.isnan(values))
        and bool(np.array_equal(np.trunc(head), head))
        and bool(np.array_equal(np.trunc(finite), finite))
    )
    if integral:
        low, high = float(finite.min()), float(finite.max())
        big = max(-low, high)
        # Above 2**53 a float no longer holds every whole number: such values are measurements
        # (1.2e20), never codes someone typed, and they overflow an integer cast.
        long_codes = big < 2**53 and (low >= 1e11 or high <= -1e11 or bool(np.all(np.abs(finite) >= 1e11)))
        # Phone and card numbers typed into Excel as numbers are still identifiers, not quantities:
        # 90% of them in [1.3e10, 2e10), which the extremes rule out when both lie outside it on one side.
        phones = (
            not (high < 1.3e10 or low >= 2e10)
            and np.count_nonzero((finite >= 1.3e10) & (finite < 2e10)) / finite.size >= 0.9
        )
        if id_named or long_codes or phones:
            return _as_text(_whole_number_text(values)), "identifier", steps
        if big < 2**53:
            ints = pd.Series(values)
            return (ints.astype("int64") if not np.isnan(values).any() else ints.astype("Int64")), "integer", steps
    return pd.Series(values, dtype="float64"), "number", steps


def _whole_number_text(values: np.ndarray) -> pd.Series:
    """Whole numbers as their digits ("13812345678", never "1.38e10"); missing stays missing.
    Python ints carry any size, so a huge value never fails an int64 cast."""
    if np.all(np.abs(values[~np.isnan(values)]) < 2**63):
        return pd.Series(values).astype("Int64").astype(str).where(~np.isnan(values), None)
    return pd.Series([None if np.isnan(v) else str(int(v)) for v in values], dtype=object)


def _as_text(values: pd.Series) -> pd.Series:
    """Text with missing as NA, in pandas' string dtype."""
    return pd.Series(values, dtype=object).astype("str")
