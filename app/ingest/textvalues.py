"""Read numbers and dates out of the distinct texts of a column, logging what each reading took.

`Distinct` holds a text column's distinct values as Arrow strings (trimmed, with how often each
occurs), so the common cases run in Arrow's C++ kernels once per distinct value: plain numbers
are a regular expression and a cast, "1,234.50" one more, ISO dates one strptime. Only what is
left ("¥56", "12%", "(300)", "１２３", "3.5万", "2024年1月5日") meets the Python expressions below,
and a sample of it first decides whether the column can be numeric or dated at all.
"""

from __future__ import annotations

import re
import warnings
import weakref
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

PARSE_SHARE = 0.95  # share of non-missing values that must parse before a column changes type
SAMPLE = 200  # distinct values tried before a whole column is attempted
_FULLWIDTH = str.maketrans("０１２３４５６７８９，．％－＋（）￥：／　", "0123456789,.%-+()¥:/ ")
_NUM = re.compile(
    r"^(?P<open>[(（])?\s*(?P<sign1>[+\-−])?\s*(?P<cur>[¥$€£]|RMB|CNY|USD|US\$|HK\$)?\s*(?P<sign2>[+\-−])?\s*"
    r"(?P<num>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:[eE](?P<exp>[+\-]?\d+))?\s*"
    r"(?P<unit>万亿|亿|万|千|百万|千万|[kKmMbB]|bn)?\s*(?P<pct>%|‰)?\s*(?P<cur2>元|块|美元|RMB|CNY|USD)?\s*"
    r"(?P<close>[)）])?$"
)
UNITS = {
    "万亿": 1e12,
    "亿": 1e8,
    "千万": 1e7,
    "百万": 1e6,
    "万": 1e4,
    "千": 1e3,
    "k": 1e3,
    "K": 1e3,
    "m": 1e6,
    "M": 1e6,
    "b": 1e9,
    "B": 1e9,
    "bn": 1e9,
}
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
PLAIN_NUMBER = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
THOUSANDS = r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$"
SIMPLE_NUMBER = f"(?:{PLAIN_NUMBER})|(?:{THOUSANDS})"
ISO_DATE = r"^\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?$"  # with or without a time
_FLAGS = ("thousands", "currency", "percent", "paren", "unit", "fullwidth")


@dataclass
class Step:
    action: str
    count: int
    message: str
    words: dict[str, str] | None = None  # a yes/no column's own words for yes and no ("true": "是")


class Distinct:
    """A text column's distinct values: `codes` maps each row to one (-1 for missing), `occ` says
    how often each occurs, `text` is each value trimmed (ideographic spaces read as spaces)."""

    def __init__(self, codes: np.ndarray, raw: pa.Array):
        self.codes = codes
        self.raw = raw
        present = codes >= 0
        self.occ = np.bincount(codes if present.all() else codes[present], minlength=len(raw)).astype(np.int64)
        # Ideographic spaces read as spaces, then trimmed; the values as they are (no two copies of
        # 300k texts) when none starts or ends with white space and none holds an ideographic one.
        plain = pa.types.is_string(raw.type) or pa.types.is_large_string(raw.type)
        if len(raw) and (not plain or may_need_trim(raw) or pc.any(pc.match_substring(raw, "\u3000")).as_py()):
            self.text = pc.utf8_trim_whitespace(pc.replace_substring(raw, "\u3000", " "))
        else:
            self.text = raw
        self.keep = np.ones(len(raw), dtype=bool)  # False: a missing marker

    @classmethod
    def of(cls, col: pd.Series) -> Distinct:
        codes, uniques = pd.factorize(col, use_na_sentinel=True)
        if uniques.dtype == object:
            raw = pa.array([str(v) for v in np.asarray(uniques, dtype=object)], type=pa.large_string())
        else:
            raw = pa.array(uniques.array)
        return cls(np.asarray(codes), raw)

    def __len__(self) -> int:
        return len(self.raw)

    @cached_property
    def values(self) -> np.ndarray:
        """The trimmed texts as Python strings, for the few steps that need Python."""
        return self.text.to_numpy(zero_copy_only=False)

    @cached_property
    def lowered(self) -> pa.Array:
        return pc.utf8_lower(self.text)

    def weight(self, mask_or_index) -> int:
        return int(self.occ[mask_or_index].sum())

    def match(self, pattern: str, where: np.ndarray | None = None) -> np.ndarray:
        """Which distinct values match (RE2, in C++); only those in `where` are tried."""
        if where is None or where.all():
            return regex_hits(self.text, pattern)
        hit = np.zeros(len(self), dtype=bool)
        idx = np.flatnonzero(where)
        if len(idx):
            hit[idx] = regex_hits(self.text.take(pa.array(idx)), pattern)
        return hit

    def expand(self, per_value: np.ndarray, missing) -> np.ndarray:
        """One entry per row from one per distinct value; missing rows and markers get `missing`."""
        safe = np.where(self.codes >= 0, self.codes, 0)
        out = per_value[safe] if len(per_value) else np.full(len(self.codes), missing, dtype=per_value.dtype)
        out[(self.codes < 0) | ~self.keep[safe]] = missing
        return out

    def expand_text(self) -> pd.Series:
        """The trimmed text of every row (Arrow take), markers and missing cells as NA."""
        safe = np.where(self.codes >= 0, self.codes, 0)
        gone = (self.codes < 0) | ~self.keep[safe]
        return pd.Series(self.text.take(pa.array(safe, mask=gone)), dtype="str")


# A text column's distinct values, where the type inference found them and kept the column as it was
# (types._convert_text): keyed by the column's Arrow data (the ChunkedArray a pandas "str" column holds,
# which the frame built from it shares), dropped with it. Only columns with few distinct values for
# their rows are kept here (a search over them is a search over every cell, at a fraction of the cost).
_DISTINCT_TEXTS: dict[int, tuple[weakref.ref, pa.Array]] = {}


def _arrow_data(col: pd.Series) -> pa.ChunkedArray | None:
    data = col.array.__arrow_array__() if hasattr(col.array, "__arrow_array__") else None
    return data if isinstance(data, pa.ChunkedArray) else None


def remember_distinct(col: pd.Series, texts: pa.Array) -> None:
    """Note that every present cell of `col` (as it is now, Arrow-backed) is one of `texts`."""
    data = _arrow_data(col)
    if data is None:
        return
    key = id(data)

    def forget(_ref: weakref.ref) -> None:
        _DISTINCT_TEXTS.pop(key, None)

    _DISTINCT_TEXTS[key] = (weakref.ref(data, forget), texts)


def known_distinct(col: pd.Series) -> pa.Array | None:
    """The distinct texts `remember_distinct` noted for this column's data, or None."""
    data = _arrow_data(col)
    entry = _DISTINCT_TEXTS.get(id(data)) if data is not None else None
    return entry[1] if entry is not None and entry[0]() is data else None


def text_array(col: pd.Series) -> pa.Array:
    """A text (or mixed) column as an Arrow string array, without a copy when it already is one;
    cells of a mixed column that are not text become their str()."""
    if col.dtype == object or not pd.api.types.is_string_dtype(col):
        col = col.astype("str")
    return pa.array(col.array)


def regex_hits(texts: pa.Array, pattern: str) -> np.ndarray:
    """Which cells match (RE2, in C++); missing cells never do."""
    return np.asarray(
        pc.match_substring_regex(texts, pattern).fill_null(False).to_numpy(zero_copy_only=False), dtype=bool
    )


def any_cell_may_match(texts: pa.Array | pa.ChunkedArray, pattern: str) -> bool:
    """Whether some cell may match `pattern` (unanchored): one RE2 search over each chunk's
    characters end to end (its buffer as it is, no copy) instead of a search per cell, a
    hundredth of the time. Cells run together there, so a match may span two of them: a True
    says only "search the cells"; a False is certain."""
    chunks = texts.chunks if isinstance(texts, pa.ChunkedArray) else [texts]
    for chunk in chunks:
        if not (pa.types.is_large_string(chunk.type) or pa.types.is_string(chunk.type)):
            return True
        if len(chunk) == chunk.null_count:
            continue
        offsets = np.frombuffer(
            chunk.buffers()[1],
            dtype=np.int64 if pa.types.is_large_string(chunk.type) else np.int32,
            count=chunk.offset + len(chunk) + 1,
        )
        start, end = (int(x) for x in offsets[[chunk.offset, chunk.offset + len(chunk)]])
        if end <= start:
            continue
        run = pa.Array.from_buffers(
            pa.large_string(),
            1,
            [
                None,
                pa.py_buffer(np.array([0, end - start], dtype=np.int64)),
                chunk.buffers()[2].slice(start, end - start),
            ],
        )
        try:
            if pc.match_substring_regex(run, pattern)[0].as_py():
                return True
        except Exception:  # noqa: BLE001 - a pattern RE2 cannot take: search every cell
            return True
    return False


def _sample(texts: pa.Array) -> pa.Array:
    """Up to SAMPLE present values from the top of a column (copies a few hundred, never all)."""
    return texts.slice(0, 4 * SAMPLE).drop_null().slice(0, SAMPLE)


def plain_numbers(col: pd.Series) -> tuple[np.ndarray, int] | None:
    """A text column holding only plain numbers ("12", "-3.5", "1e6") or numbers with thousands
    separators ("1,234.50"), as in most CSV files and exports, read in one cast without the
    per-distinct-value path: (values, how many had separators). None when anything else is in it
    (missing markers, currency, units, or zero-padded codes such as "007", which stay text).
    The whole-column checks are Arrow aggregates, which skip missing cells."""
    raw = text_array(col)
    head = pc.utf8_trim_whitespace(_sample(raw))  # most text columns end here
    if len(head) == 0 or not pc.all(pc.match_substring_regex(head, SIMPLE_NUMBER)).as_py():
        return None
    cast = _cast_whole(raw)
    if isinstance(cast, np.ndarray):
        return cast, 0
    if cast == _LEADING_ZERO:
        return None  # a code such as "007" (trimmed, the cell starts so too)
    texts = pc.utf8_trim_whitespace(raw)
    if not pc.all(pc.match_substring_regex(texts, SIMPLE_NUMBER)).as_py():
        return None
    if any_leading_zero(texts):
        return None
    separated = int(pc.sum(pc.match_substring(texts, ",")).as_py() or 0)
    if separated:
        texts = pc.replace_substring(texts, ",", "")
    return to_float(texts), separated


_LEADING_ZERO = "leading zero"


def _cast_whole(raw: pa.Array) -> np.ndarray | str | None:
    """The common case of `plain_numbers` in one cast and one anchored match: every cell a plain
    number, untrimmed (Arrow's cast refuses spaces, separators, currency and units), finite
    (the cast also reads "nan" and "inf", which SIMPLE_NUMBER does not) and without a leading zero.
    None when not so: the full checks decide; _LEADING_ZERO when a cell starts with one, which
    settles it (the column is no numbers)."""
    try:
        values = pc.cast(raw, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if any_leading_zero(raw):
        return _LEADING_ZERO
    numbers = values.to_numpy(zero_copy_only=False).astype("float64", copy=False)  # missing: NaN
    finite = np.isfinite(numbers)
    if not finite.all():
        present = np.asarray(pc.is_valid(values).to_numpy(zero_copy_only=False), dtype=bool)
        if not finite[present].all():
            return None
    return numbers


def iso_datetimes(col: pd.Series) -> tuple[np.ndarray, int] | None:
    """A text column holding only ISO dates ("2024-01-05", "2024-01-05 07:30"), as exports write
    them, read in one cast: (datetime64[ns] values, how many). None when anything else is in it
    (missing markers, other layouts, an impossible date): `parse_dates` decides. Arrow's ISO parser
    is stricter than pandas' (two-digit fields, no 24:00, years it can hold in nanoseconds), and
    where it reads a value it reads the same instant, so the answer is the one `parse_dates` gives."""
    raw = text_array(col)
    head = _sample(raw)
    if len(head) == 0 or not pc.all(pc.match_substring_regex(head, ISO_DATE)).as_py():
        return None
    try:
        stamps = pc.cast(raw, pa.timestamp("ns"))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if not pc.all(pc.match_substring_regex(raw, ISO_DATE)).as_py():
        return None
    years = pc.min_max(pc.year(stamps))
    low, high = years["min"].as_py(), years["max"].as_py()
    if low is None or low < 1678 or high > 2261:  # what `parse_dates` keeps
        return None
    values = stamps.to_numpy(zero_copy_only=False).astype("datetime64[ns]", copy=False)
    return values, len(raw) - raw.null_count


def padded_codes(col: pd.Series) -> bool:
    """Codes written with leading zeros ("007", "013722"): all digits, all one length (2 or more),
    some starting with 0. Read as numbers they would lose the padding, so they stay as they are
    (the rule `types._looks_like_identifier` applies to distinct values), checked in Arrow."""
    raw = text_array(col)
    head = _sample(raw)
    if len(head) < 2 or not pc.all(pc.match_substring_regex(head, r"^\d+$")).as_py():
        return False
    if not all_digits(raw):
        return False
    shortest, longest = pc.min_max(pc.utf8_length(raw)).values()
    return shortest.as_py() == longest.as_py() >= 2 and pc.any(pc.starts_with(raw, "0")).as_py()


_DIGITS = np.zeros(256, dtype=bool)
_DIGITS[list(b"0123456789")] = True
LEADING_ZERO = r"^[+-]?0\d"  # a cell written with a leading zero ("007", "-01"): a code, not a number


def string_buffers(block: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """A string array's offsets (one per cell and one past the last, counted in the data buffer)
    and the bytes of its cells end to end, as numpy views; None when the cells hold no bytes."""
    _, offsets_buf, data_buf = block.buffers()
    if data_buf is None or len(block) == 0:
        return None
    width = np.int64 if pa.types.is_large_string(block.type) else np.int32
    offsets = np.frombuffer(offsets_buf, dtype=width)[block.offset : block.offset + len(block) + 1]
    low, high = int(offsets[0]), int(offsets[-1])
    if high == low:
        return None
    return offsets, np.frombuffer(data_buf, dtype=np.uint8)[low:high]


def _chunks(texts: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    return texts.chunks if isinstance(texts, pa.ChunkedArray) else [texts]


def _nulls_hold_bytes(chunk: pa.Array, offsets: np.ndarray) -> bool:
    """Whether some missing cell's slot holds bytes (Arrow allows it; no reader here writes it):
    the buffer tests would read them as a cell, so the regular expression decides instead."""
    if not chunk.null_count:
        return False
    missing = ~np.asarray(chunk.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    return bool((np.diff(offsets)[missing] > 0).any())


def any_leading_zero(texts: pa.Array | pa.ChunkedArray) -> bool:
    """Whether some cell starts with a leading zero as LEADING_ZERO says ("007", "-01"), from the
    cells' own buffers in numpy (a regular expression per cell costs ten times as much: 0.09 ->
    0.02 s for a million zero-padded codes)."""
    for chunk in _chunks(texts):
        if pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type):
            buffers = string_buffers(chunk)
            if buffers is None:
                continue
            offsets, data = buffers
            if not _nulls_hold_bytes(chunk, offsets):
                if _leading_zero_bytes(offsets, data):
                    return True
                continue
        if pc.any(pc.match_substring_regex(chunk, LEADING_ZERO)).as_py():
            return True
    return False


def _leading_zero_bytes(offsets: np.ndarray, data: np.ndarray) -> bool:
    low = int(offsets[0])
    starts = offsets[:-1] - low
    # An empty cell's "first byte" is the next cell's (or past the end: `take` clips the position):
    # its length rules it out below, as it does a cell's second and third bytes where it is shorter.
    first = data.take(starts, mode="clip")
    candidates = np.flatnonzero((first == ord("0")) | (first == ord("+")) | (first == ord("-")))
    if len(candidates) == 0:
        return False
    starts = starts[candidates]
    lengths = (offsets[1:] - offsets[:-1])[candidates]
    first, second, third = first[candidates], data.take(starts + 1, mode="clip"), data.take(starts + 2, mode="clip")
    signed = (first == ord("+")) | (first == ord("-"))
    zero = np.where(
        signed,
        (second == ord("0")) & _DIGITS[third] & (lengths >= 3),
        (first == ord("0")) & _DIGITS[second] & (lengths >= 2),
    )
    return bool(zero.any())


def all_digits(texts: pa.Array | pa.ChunkedArray) -> bool:
    r"""Whether every present cell is ASCII digits only (r"^\d+$", RE2's \d being ASCII), from the
    cells' own buffers in numpy: every byte a digit and no present cell empty. False when no cell is
    present, as the regular expression's pc.all (null there) is taken."""
    if len(texts) == texts.null_count:
        return False
    for chunk in _chunks(texts):
        if pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type):
            buffers = string_buffers(chunk)
            present = len(chunk) - chunk.null_count
            if buffers is None:
                if present:
                    return False  # present cells, all empty
                continue
            offsets, data = buffers
            if not _nulls_hold_bytes(chunk, offsets):
                if not _DIGITS[data].all():
                    return False
                lengths = np.diff(offsets)
                if chunk.null_count:
                    lengths = lengths[np.asarray(chunk.is_valid().to_numpy(zero_copy_only=False), dtype=bool)]
                if (lengths == 0).any():
                    return False
                continue
        if not pc.all(pc.match_substring_regex(chunk, r"^\d+$")).as_py():
            return False
    return True


def to_float(texts: pa.Array) -> np.ndarray:
    """Arrow's cast (the same values Python's float() reads), pandas' parser where it refuses."""
    try:
        return pc.cast(texts, pa.float64()).to_numpy(zero_copy_only=False).astype("float64", copy=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pd.to_numeric(pd.Series(texts.to_pylist(), dtype=object), errors="coerce").to_numpy("float64")


def number_of(text: str):
    """(value, flags, unit) for one distinct text, or None when it is not a number."""
    normal = text.translate(_FULLWIDTH)
    compact = re.sub(r"[\s\u00a0]+", "", normal)
    m = _NUM.match(compact)
    if not m or (m.group("open") is None) != (m.group("close") is None):
        return None
    # Decimal arithmetic, so "7.25%" is 0.0725 and "0.00015万" is 1.5, not 1.4999999999999998.
    exact = Decimal(m.group("num").replace(",", ""))
    if m.group("exp"):
        exact = exact.scaleb(int(m.group("exp")))
    unit = m.group("unit")
    if unit:
        exact *= Decimal(int(UNITS[unit]))
    pct = m.group("pct")
    if pct:
        exact /= 100 if pct == "%" else 1000
    value = float(exact)
    paren = m.group("open") is not None
    if paren or m.group("sign1") in ("-", "−") or m.group("sign2") in ("-", "−"):
        value = -abs(value)
    if not np.isfinite(value):
        return None
    flags = (
        "," in m.group("num"),
        bool(m.group("cur") or m.group("cur2")),
        bool(pct),
        paren,
        bool(unit),
        normal != text,
    )
    return value, flags, unit


def _rest_can_reach(d: Distinct, ok: np.ndarray, reads, need: float) -> tuple[bool, np.ndarray]:
    """Whether the values not read yet could still lift the column to `need`, judged by trying
    `reads` on a sample of them; also returns those values' positions."""
    rest = np.flatnonzero(d.keep & ~ok)
    sample = rest[:SAMPLE]
    hit_w = sum(int(d.occ[i]) for i in sample if reads(d.values[i]) is not None)
    return d.weight(ok) + hit_w + d.weight(rest) - d.weight(sample) >= need, rest


def mostly_unreadable(d: Distinct, reads, also: str | None = None) -> bool:
    """A sample of the distinct values decides cheaply that a column cannot be numeric (or dated)."""
    present = np.flatnonzero(d.keep)
    if len(present) <= 2 * SAMPLE:
        return False
    sample = present[:SAMPLE]
    in_sample = np.zeros(len(d), dtype=bool)
    in_sample[sample] = True
    quick = d.match(also, where=in_sample) if also else np.zeros(len(d), dtype=bool)
    # the sample's texts alone (d.values would make a Python string of every distinct value)
    texts = d.text.take(pa.array(sample)).to_pylist()
    hits = sum(1 for i, text in zip(sample, texts) if quick[i] or reads(text) is not None)
    return hits < 0.5 * len(sample)


def parse_numbers(d: Distinct, n_present: int):
    """(numbers per distinct value, steps, which parsed), or None when fewer than PARSE_SHARE of
    the values are numbers."""
    need = PARSE_SHARE * n_present
    if mostly_unreadable(d, number_of, also=PLAIN_NUMBER):
        return None
    values = np.full(len(d), np.nan)
    counts = dict.fromkeys(_FLAGS, 0)
    plain = d.match(PLAIN_NUMBER, where=d.keep)
    if plain.any():
        values[plain] = to_float(d.text.filter(pa.array(plain)))
    ok = np.isfinite(values) & d.keep
    commas = d.match(THOUSANDS, where=d.keep & ~ok)  # "1,234.50", the commonest case, in C++ too
    if commas.any():
        values[commas] = to_float(pc.replace_substring(d.text.filter(pa.array(commas)), ",", ""))
        ok |= commas & np.isfinite(values)
        counts["thousands"] += d.weight(ok & commas)
    reachable, rest = _rest_can_reach(d, ok, number_of, need)
    if not reachable:
        return None
    units: list[str] = []
    for i in rest:
        got = number_of(d.values[i])
        if got is None:
            continue
        values[i], flags, unit = got
        ok[i] = True
        for name, flag in zip(_FLAGS, flags):
            if flag:
                counts[name] += int(d.occ[i])
        if unit and unit not in units:
            units.append(unit)
    if d.weight(ok) < need:
        return None
    values[~ok] = np.nan
    c = counts
    steps = [
        Step(
            "parsed thousands separators",
            c["thousands"],
            f"{c['thousands']:,} values parsed from text with thousands separators",
        ),
        Step("removed currency symbols", c["currency"], f"{c['currency']:,} currency signs removed"),
        Step(
            "converted percentages to fractions",
            c["percent"],
            f"{c['percent']:,} percentages converted to fractions (12% → 0.12)",
        ),
        Step(
            "read parentheses as negative numbers",
            c["paren"],
            f"{c['paren']:,} numbers in parentheses read as negative",
        ),
        Step("expanded number units", c["unit"], f"{c['unit']:,} values with units ({'/'.join(units)}) multiplied out"),
        Step(
            "converted full-width digits",
            c["fullwidth"],
            f"{c['fullwidth']:,} values written with full-width characters (１２３) converted",
        ),
    ]
    return values, steps, ok


def date_of(text: str):
    normal = text.translate(_FULLWIDTH)
    for label, pattern in DATE_STYLES:
        m = pattern.match(normal)
        if not m:
            continue
        g = m.groupdict()
        try:
            stamp = np.datetime64(
                datetime(
                    int(g["y"]),
                    int(g["m"]),
                    int(g.get("d") or 1),
                    int(g.get("H") or 0),
                    int(g.get("Mi") or 0),
                    int(g.get("S") or 0),
                ),
                "ns",
            )
        except (ValueError, OverflowError):
            return None
        return stamp, label
    return None


def parse_dates(d: Distinct, n_present: int, share: float = PARSE_SHARE, slashes_read_apart: bool = False):
    """(dates per distinct value, steps, which parsed), or None when fewer than `share` parse.
    `slashes_read_apart`: the caller has taken day-first slash dates out of `d.keep` to read them itself."""
    need = share * n_present
    if mostly_unreadable(d, date_of) or (not slashes_read_apart and _day_first_slashes(d)):
        return None  # day-first "13/01/2020" is read by parse_dates_by_format, whole column one way
    out = np.full(len(d), np.datetime64("NaT"), dtype="datetime64[ns]")
    iso = d.match(ISO_DATE, where=d.keep)
    if iso.any():  # pandas' ISO-8601 parser, vectorised; what it cannot read meets date_of below
        stamps = pd.to_datetime(pd.Series(d.text.filter(pa.array(iso)), dtype="str"), format="ISO8601", errors="coerce")
        stamps = stamps.where(stamps.dt.year.between(1678, 2261))  # what datetime64[ns] can hold
        out[iso] = stamps.to_numpy(dtype="datetime64[ns]")
    ok = ~np.isnat(out) & d.keep
    used: list[str] = ["2024-01-05"] if ok.any() else []
    reachable, rest = _rest_can_reach(d, ok, date_of, need)
    if not reachable:
        return None
    for i in rest:
        got = date_of(d.values[i])
        if got is not None:
            out[i], label = got
            ok[i] = True
            if label not in used:
                used.append(label)
    n = d.weight(ok)
    if n < need:
        return None
    return out, [Step("parsed dates written as text", n, f"{n:,} dates written as text parsed ({', '.join(used)})")], ok


_FIRST_FORMS_SHARE = 0.5  # a column typed several ways: the layouts DATE_STYLES reads hold at least this share


def parse_dates_in_forms(d: Distinct, n_present: int):
    """Dates typed several ways in one column (date cells, "2024-05-08", "May 10, 2024"): the layouts
    `parse_dates` reads, then the rest in the one layout `parse_dates_by_format` finds for them; together at
    least PARSE_SHARE of the values, else None. Each value is read by one layout only: the rest's layout is
    chosen on the rest, where a tie between two readings still leaves the column text. Day-first slash dates
    ("13/01/2024" beside "2024-01-05") are all left to that one layout: the first pass would read "03/01/2024" as
    March, so it never sees them."""
    kept = d.keep
    day_first = _day_first_slashes(d)
    if day_first:
        d.keep = kept & ~d.match(_SLASHES, where=kept)
    try:
        first = parse_dates(d, n_present, share=_FIRST_FORMS_SHARE, slashes_read_apart=day_first)
    finally:
        d.keep = kept
    if first is None:
        return None
    out, steps, ok = first
    d.keep = kept & ~ok
    try:
        rest = parse_dates_by_format(d, d.weight(d.keep)) if d.keep.any() else None
    finally:
        d.keep = kept
    if rest is None:
        return None
    more, more_steps, more_ok = rest
    out[more_ok] = more[more_ok]
    ok = ok | more_ok
    if d.weight(ok) < PARSE_SHARE * n_present:
        return None
    return out, steps + more_steps, ok


_SLASHES = r"^\s*(?P<first>\d{1,2})/(?P<second>\d{1,2})/\d{2,4}"
# tried besides pandas' guess: two-digit years (guess_datetime_format reads none) and both slash orders
_EXTRA_FORMATS = ("%m/%d/%y", "%d/%m/%y", "%m/%d/%Y", "%d/%m/%Y", "%d-%m-%Y", "%d.%m.%y", "%b %Y", "%B %Y")
_GUESSED = 20  # sample values whose format pandas guesses
_PROBE = 10  # sample values every candidate format is tried on before the whole sample


def _day_first_slashes(d: Distinct) -> bool:
    """Whether slash dates put the day first: some first field is above 12 and no second field is."""
    parts = pc.extract_regex(d.text, _SLASHES)
    valid = parts.is_valid()
    if not pc.any(valid).as_py():
        return False
    first = pc.cast(parts.field("first").filter(valid), pa.int64()).to_numpy()
    second = pc.cast(parts.field("second").filter(valid), pa.int64()).to_numpy()
    return bool((first > 12).any() and not (second > 12).any())


def parse_dates_by_format(d: Distinct, n_present: int):
    """Dates in a layout DATE_STYLES lacks ("Jan 5, 2024", "22-Jan-2020", "1/22/20", day-first
    "13/01/2020"): (dates per distinct value, steps, which parsed), or None. Candidate formats come
    from a sample; the one that reads the most of it wins, and a tie between formats that read the
    sample differently (01/02/2020: January or February?) is ambiguous, so the column stays text."""
    from pandas.tseries.api import guess_datetime_format

    present = np.flatnonzero(d.keep)
    sample = present[:SAMPLE]
    texts = [str(t) for t in d.text.take(pa.array(sample)).to_pylist()]  # not d.values: all 200k of them
    if not may_be_formatted_dates(texts):
        return None
    with warnings.catch_warnings():  # pandas warns when a guess contradicts dayfirst: both are tried anyway
        warnings.simplefilter("ignore")
        formats = dict.fromkeys(
            f for t in texts[:_GUESSED] for first in (False, True) if (f := guess_datetime_format(t, dayfirst=first))
        )
    formats.update(dict.fromkeys(_EXTRA_FORMATS))
    weights = d.occ[sample]
    series = pd.Series(texts, dtype=object)
    probe = series.iloc[:_PROBE]  # a cheap first cut: most text columns are no dates at all
    candidates = [f for f in formats if np.count_nonzero(~np.isnat(_dates_in(probe, f))) >= 0.5 * len(probe)]
    best: list[tuple[int, str, np.ndarray]] = []
    for fmt in candidates:
        stamps = _dates_in(series, fmt)
        got = int(weights[~np.isnat(stamps)].sum())
        if got >= PARSE_SHARE * weights.sum():
            best.append((got, fmt, stamps))
    if not best:
        return None
    best.sort(key=lambda b: -b[0])
    top = [b for b in best if b[0] == best[0][0]]
    if any(not np.array_equal(top[0][2], other[2]) for other in top[1:]):
        return None  # two readings of the same values: ambiguous
    fmt = top[0][1]
    out = np.full(len(d), np.datetime64("NaT"), dtype="datetime64[ns]")
    out[present] = _dates_in(pd.Series(d.text.take(pa.array(present)).to_pylist(), dtype=object), fmt)
    ok = ~np.isnat(out) & d.keep
    n = d.weight(ok)
    if n < PARSE_SHARE * n_present:
        return None
    return (
        out,
        [
            Step(
                "parsed dates written as text",
                n,
                f"{n:,} dates written as text parsed (like '{texts[0]}', read as {fmt})",
            )
        ],
        ok,
    )


def may_be_formatted_dates(sample: list[str]) -> bool:
    """Whether the first distinct values of a column (`parse_dates_by_format`'s sample) can be
    dates in some layout at all: every one has a digit and at most 40 characters."""
    return bool(sample) and all(any(ch.isdigit() for ch in t) and len(t) <= 40 for t in sample)


def _dates_in(texts: pd.Series, fmt: str) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stamps = pd.to_datetime(texts.str.strip(), format=fmt, errors="coerce")
    if getattr(stamps.dt, "tz", None) is not None:
        stamps = stamps.dt.tz_convert(None)
    stamps = stamps.where(stamps.dt.year.between(1678, 2261))
    return stamps.to_numpy(dtype="datetime64[ns]")


def leftover(d: Distinct, unparsed: np.ndarray, action: str, noun: str) -> list[Step]:
    """The values a mostly-numeric (or mostly-date) column could not read: logged, never dropped silently."""
    index = np.flatnonzero(unparsed)
    count = d.weight(index)
    if not count:
        return []
    examples = ", ".join(f"'{d.values[i]}'" for i in index[:3])
    return [Step(action, count, f"{count:,} values that are not {noun} read as missing ({examples})")]


def may_need_trim(texts: pa.Array | pa.ChunkedArray) -> bool:
    """Whether some cell of a text column may start or end with white space (`_may_need_trim`)."""
    for chunk in texts.chunks if isinstance(texts, pa.ChunkedArray) else [texts]:
        if not pa.types.is_large_string(chunk.type):
            chunk = chunk.cast(pa.large_string())
        if _may_need_trim(chunk):
            return True
    return False


# What a white-space character (str.isspace, the characters utf8_trim_whitespace trims) looks like at
# either end of a cell in UTF-8: one ASCII byte (tab, LF, VT, FF, CR, the separators 0x1c-0x1f,
# space), or the sequence of U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F
# or U+3000, whose lead bytes are 0xC2, 0xE1, 0xE2, 0xE3.
_ASCII_WS = np.zeros(256, dtype=bool)
_ASCII_WS[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True
_FIRST = _ASCII_WS.copy()
_FIRST[[0xC2, 0xE1, 0xE2, 0xE3]] = True
_WIDE_ENDS = {
    bytes([0xC2, 0x85]),
    bytes([0xC2, 0xA0]),
    bytes([0xE1, 0x9A, 0x80]),
    *(bytes([0xE2, 0x80, b]) for b in (*range(0x80, 0x8B), 0xA8, 0xA9, 0xAF)),
    bytes([0xE2, 0x81, 0x9F]),
    bytes([0xE3, 0x80, 0x80]),
}
_WIDE_LAST = np.zeros(256, dtype=bool)
_WIDE_LAST[[end[-1] for end in _WIDE_ENDS]] = True
_WIDE_TWO = np.array([int.from_bytes(end, "big") for end in _WIDE_ENDS if len(end) == 2])
_WIDE_THREE = np.array([int.from_bytes(end, "big") for end in _WIDE_ENDS if len(end) == 3])


def _may_need_trim(chunk: pa.Array) -> bool:
    """Whether some cell of a string array may start or end with white space: a lookup of its first
    and last byte on the array's own buffers (a regular expression over every cell costs as much
    as trimming), the last three bytes compared only where the last could end a wide space."""
    _, offsets_buf, data_buf = chunk.buffers()
    if data_buf is None or len(chunk) == 0:
        return False
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[chunk.offset : chunk.offset + len(chunk) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8)
    if len(data) == 0:
        return False
    # An empty cell's "first byte" is the next cell's and its "last" the previous one's: looked up
    # all the same (no filtering copy), at worst a column is trimmed for nothing. The positions are
    # clipped to the buffer by `take` (half the time of clipping them in arrays of their own first).
    last = data.take(offsets[1:] - 1, mode="clip")
    if _FIRST.take(data.take(offsets[:-1], mode="clip")).any() or _ASCII_WS.take(last).any():
        return True
    # The last two and three bytes of the cells whose last byte can end a wide space, as numbers
    # (a cell in Chinese often ends so: 是 is E6 98 AF), compared with the wide spaces' in numpy.
    wide = _WIDE_LAST.take(last)
    if not wide.any():
        return False
    ends = np.maximum(offsets[1:][wide], 1)
    b1, b2 = data[ends - 1].astype(np.int64), data[np.maximum(ends - 2, 0)].astype(np.int64)
    b3 = data[np.maximum(ends - 3, 0)].astype(np.int64)
    two = np.isin((b2 << 8) | b1, _WIDE_TWO) & (ends >= 2)
    three = np.isin((b3 << 16) | (b2 << 8) | b1, _WIDE_THREE) & (ends >= 3)
    return bool(two.any() or three.any())
