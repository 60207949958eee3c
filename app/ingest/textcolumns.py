"""The rows of a CSV/TSV file in one columnar pass (pyarrow's CSV reader, C++ and multi-threaded).

Reading a whole text file cell by cell as Python strings was the slow half of a big CSV: a million
rows x 20 columns took 13 s and ten times the file's size in memory. Here the file is read twice,
cheaply, and parsed once:

1. `scan`: one streaming pass over the bytes (8 MB at a time, never the whole file in memory):
   whether they are UTF-8, and how many lines there are (the row limit is checked before any
   parsing; a file past it is refused at once);
2. the head, the first lines, is parsed by the exact reader (textfiles._parse_grid): the layout
   (title rows, header rows, the data's first row) is decided on it as on every sheet;
3. the data rows, from the byte where the data starts, are parsed by pyarrow's streaming reader
   into Arrow string columns, a block at a time (trimmed, empty cells missing: the same cells the
   exact reader gives), which the type inference then converts in Arrow's kernels without a
   Python string per cell;
4. in a big file (TYPED_MIN_BYTES), the columns the header does not name as identifiers are typed
   block by block while every cell of theirs is a plain number or an ISO date, with the same tests
   `textvalues.plain_numbers` and `iso_datetimes` make on a whole column (`read_typed_rows`): their
   text is never held, so a million-row file is read within 3x its size. A column some block
   refuses is read again, alone, as text; a rule of the table's edges that needs a typed cell's
   text (extract.TextNeeded) has the rows read again all as text. Either way the answer is the one
   the text gives. A block is typed by a cast wherever the cast proves what the regular
   expressions would (`_plain_numbers`, `_iso_shaped`).

Anything this pass does not read the way the exact reader does (ragged rows, a quoted value that
spans lines inside the head, UTF-16, lines ended by a lone CR) is left to the exact reader:
`None` from `open_text`, or `NotColumnar` from `read_rows`, and the caller reads the file whole.
Files in another encoding (GB18030, Latin-1 ...) are decoded whole as before and handed to the
columnar pass as UTF-8 bytes.
"""

from __future__ import annotations

import csv
import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from app.ingest.textvalues import (
    ISO_DATE,
    SIMPLE_NUMBER,
    THOUSANDS,
    any_leading_zero,
    may_need_trim,
    string_buffers,
    to_float,
)

CHUNK = 8 << 20  # bytes per read of the streaming scan
HEAD_BYTES = 1 << 20  # the head is looked for in the first megabyte (one line can be longer: then all of it)
BLOCK = 4 << 20  # pyarrow's parse block: big enough for its threads, small enough for the memory
# Files from this size on have their number and date columns typed while they are read (read_typed_rows):
# what keeps a 168 MB file's read within 3x its size (536 -> 480 MB). It is for the memory: block by
# block, the conversions cost about what they cost on whole columns later (1M rows: 3.2 s of CPU
# against 3.0 s), and more on smaller files (100k rows: 0.66 against 0.41 s), so those are read all
# as text first, which every rule sees as it is.
TYPED_MIN_BYTES = 32 << 20
UTF8_BOM = b"\xef\xbb\xbf"
STR = pd.StringDtype("pyarrow", na_value=float("nan"))  # pandas' "str": what the exact reader's columns are


class NotColumnar(Exception):
    """The rows cannot be read column-wise exactly as the exact reader reads them."""


@dataclass
class TextSource:
    """A text file's bytes as UTF-8: the file itself (`data` None) or its transcoding."""

    path: Path
    data: bytes | None  # UTF-8 bytes when the file was in another encoding
    start: int  # the byte where the text starts (after a BOM)
    encoding: str  # as textfiles.decode_bytes names it ("utf-8", "utf-8-sig", "gb18030" ...)
    lines: int  # lines in the text (a last line without a line break counts)

    @property
    def size(self) -> int:
        """Bytes of text."""
        return (len(self.data) if self.data is not None else self.path.stat().st_size) - self.start

    def head_bytes(self, limit: int) -> bytes:
        if self.data is not None:
            return self.data[self.start : self.start + limit]
        with open(self.path, "rb") as handle:
            handle.seek(self.start)
            return handle.read(limit)

    def stream(self, offset: int) -> pa.NativeFile:
        """The bytes from `offset` (counted from `start`) on."""
        if self.data is not None:
            return pa.BufferReader(pa.py_buffer(self.data)[self.start + offset :])
        handle = pa.OSFile(str(self.path), "rb")
        handle.seek(self.start + offset)
        return handle


def scan(path: Path) -> TextSource | None:
    """UTF-8 text (with or without a BOM) and its line count, in one streaming pass; None when the
    bytes are not UTF-8 or the lines are not ended by LF (UTF-16, old Mac files): those are decoded
    whole by textfiles.decode_bytes. The UTF-8 check is Arrow's validation of each chunk (a
    character cut by a chunk's end is checked with the next), as strict as Python's decoder and
    without a decoded copy."""
    newlines = 0
    carriage = False
    last = b""
    pending = b""  # the start of a character the previous chunk ended in
    with open(path, "rb") as handle:
        chunk = handle.read(CHUNK)
        if chunk.startswith((b"\xff\xfe", b"\xfe\xff")) or (
            len(chunk) >= 4 and chunk[1:4:2] == b"\x00\x00" and chunk[0:4:2] != b"\x00\x00"
        ):
            return None  # UTF-16
        start = len(UTF8_BOM) if chunk.startswith(UTF8_BOM) else 0
        chunk = chunk[start:]
        while chunk:
            if pending or not chunk.isascii():  # ASCII is UTF-8: nothing to check
                data = pending + chunk if pending else chunk
                cut = _complete_utf8(data)
                if not _valid_utf8(data[:cut] if cut < len(data) else data):
                    return None
                pending = data[cut:]
            newlines += int(np.count_nonzero(np.frombuffer(chunk, dtype=np.uint8) == 10))  # bytes.count: 3x the time
            carriage = carriage or b"\r" in chunk
            last = chunk[-1:]
            chunk = handle.read(CHUNK)
    if pending:
        return None  # the text ends inside a character
    if carriage and newlines == 0:
        return None  # lines ended by CR alone
    lines = newlines + (1 if last and last != b"\n" else 0)
    return TextSource(path, None, start, "utf-8-sig" if start else "utf-8", lines)


def _complete_utf8(data: bytes) -> int:
    """Where the last whole character of `data` ends: before a lead byte among the last three whose
    sequence is cut short (the rest is checked with the next chunk)."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return len(data)
        if byte >= 0xC0:  # a lead byte: how long its sequence is
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return len(data) - back if need > back else len(data)
    return len(data)  # continuation bytes only: the validation decides


def _valid_utf8(data: bytes) -> bool:
    if not data:
        return True
    text = pa.Array.from_buffers(
        pa.large_string(), 1, [None, pa.py_buffer(np.array([0, len(data)], dtype=np.int64)), pa.py_buffer(data)]
    )
    try:
        text.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def transcoded(path: Path, text: str, encoding: str) -> TextSource | None:
    """A text decoded from another encoding, as UTF-8 bytes for the columnar pass."""
    if "\n" not in text and "\r" in text:
        return None
    data = text.encode("utf-8")
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return TextSource(path, data, 0, encoding, lines)


def head_lines(source: TextSource, rows: int) -> tuple[bytes, list[int], bool]:
    """The first `rows` lines (bytes), the offset where each begins and the one after the last,
    and whether they are the whole text."""
    raw = source.head_bytes(HEAD_BYTES)
    offsets = [0]
    pos = 0
    while len(offsets) <= rows:
        nl = raw.find(b"\n", pos)
        if nl < 0:
            break
        pos = nl + 1
        offsets.append(pos)
    whole = len(raw) < HEAD_BYTES and len(offsets) <= rows
    if whole and pos < len(raw):  # a last line without a line break
        offsets.append(len(raw))
    elif not whole and len(offsets) == 1:  # one line longer than the head bytes: read on to its end
        raw = source.head_bytes(1 << 62)
        nl = raw.find(b"\n")
        offsets.append(len(raw) if nl < 0 else nl + 1)
        whole = offsets[-1] >= len(raw)
    return raw[: offsets[-1]], offsets, whole


def fields_in(line: str, delimiter: str) -> int:
    """How many fields one line holds, quoting respected."""
    return len(next(csv.reader([line], delimiter=delimiter), [""]))


def read_rows(source: TextSource, offset: int, fields: int, delimiter: str) -> list[pd.Series]:
    """The rows from byte `offset` on, each line split into `fields` columns of trimmed text (empty
    cells missing), blank lines as rows of missing cells, as the exact reader gives them. Raises
    NotColumnar when some row has another number of fields (the exact reader pads them)."""
    return read_typed_rows(source, offset, fields, delimiter, typed=set())[0]


def read_typed_rows(
    source: TextSource, offset: int, fields: int, delimiter: str, typed: set[int]
) -> tuple[list[pd.Series], dict[int, TextReading]]:
    """`read_rows` in one streaming pass, a block of rows at a time, with the columns in `typed`
    converted block by block while every cell of theirs is a plain number or an ISO date (the
    readings say which): those columns are never held as text, so a big file is read within a few
    times its size. A column that turns out to hold anything else is read again, alone, as text."""
    names = [str(i) for i in range(fields)]
    columns = [_Column(i in typed, source.lines) for i in range(fields)]
    try:
        for batch in _ahead(_batches(source, offset, delimiter, names, names)):
            for i, column in enumerate(columns):
                column.add(batch.column(i))
            del batch
        again = [names[i] for i, column in enumerate(columns) if column.state == _REFUSED]
        for i in map(int, again):
            columns[i] = _Column(False)
        if again:  # the columns some block refused to type: their text, in a second, narrower pass
            for batch in _ahead(_batches(source, offset, delimiter, names, again)):
                for name in again:
                    columns[int(name)].add(batch.column(name))
                del batch
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OSError) as exc:
        raise NotColumnar(str(exc)) from None
    series: list[pd.Series] = []
    readings: dict[int, TextReading] = {}
    for i in range(fields):
        column = columns[i]
        series.append(column.series())
        if column.reading is not None:
            readings[i] = column.reading
        columns[i] = _Column(False)  # a column's blocks are freed once its series exists
    return series, readings


_END = object()


def _ahead(reader: pcsv.CSVStreamingReader) -> Iterator[pa.RecordBatch]:
    """The reader's batches, each parsed in a thread while the caller types the one before
    (Arrow parses without the GIL; the caller's casts and numpy work take it): on two cores the
    parse and the typing overlap. One batch waits at most, so the text held grows by one block.
    An error of the parse is raised here, in the caller; a caller that stops early stops the
    thread after the batch it is parsing. Where no thread can be started, the caller parses."""
    slot: queue.Queue[object] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def parse() -> None:
        try:
            for batch in reader:
                while not stop.is_set():
                    try:
                        slot.put(batch, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            slot.put(_END)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, who raises it
            if not stop.is_set():
                slot.put(exc)

    thread = threading.Thread(target=parse, name="verity-csv-parse", daemon=True)
    try:
        thread.start()
    except RuntimeError:  # no thread to be had (a limit on the process): parsed here, one after the other
        yield from reader
        return
    try:
        while True:
            item = slot.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
            del item
    finally:
        stop.set()
        while thread.is_alive():  # a parse under way ends, its batch is dropped
            try:
                slot.get(timeout=0.1)
            except queue.Empty:
                pass
        reader.close()


def _batches(
    source: TextSource, offset: int, delimiter: str, names: list[str], include: list[str]
) -> pcsv.CSVStreamingReader:
    """The rows as record batches of text columns (pyarrow's streaming CSV reader, BLOCK bytes at a
    time): trimmed later, empty cells missing, quoting as the exact reader reads it."""
    return pcsv.open_csv(
        source.stream(offset),
        memory_pool=_pool(),
        read_options=pcsv.ReadOptions(column_names=names, block_size=BLOCK, use_threads=True),
        parse_options=pcsv.ParseOptions(
            delimiter=delimiter,
            quote_char='"',
            double_quote=True,
            escape_char=False,
            newlines_in_values=True,
            ignore_empty_lines=False,
        ),
        convert_options=pcsv.ConvertOptions(
            column_types={name: pa.large_string() for name in include},  # what the columns end as: no cast
            include_columns=include,
            null_values=[""],
            strings_can_be_null=True,
            quoted_strings_can_be_null=True,
            # The bytes are UTF-8 already: `scan` validated them, or `transcoded` encoded them from
            # decoded text; checking every cell again cost ~12% of the parse (1.20 -> 1.06 s at 1M rows).
            check_utf8=False,
        ),
    )


@dataclass
class TextReading:
    """How the typed pass read a column: "number" (every cell a plain number, or one with thousands
    separators: `separated` marks those rows, None when there are none) or "iso" (every cell an ISO
    date, with or without a time). What `types._convert_text` gives such a column follows from it."""

    kind: str
    separated: np.ndarray | None = None


_TEXT, _UNDECIDED, _NUMBER, _ISO, _REFUSED = "text", "undecided", "number", "iso", "refused"


class _Column:
    """One column's blocks as the pass reads them: text (trimmed Arrow strings), or, for a column
    that may be typed, numbers or dates for as long as every block converts; a block that does not
    refuses the column (its text is read again afterwards). A column empty so far is undecided.
    Numbers and dates go straight into one array as long as the text has lines (`capacity`, an
    upper bound on the rows): no per-block arrays to join at the end, whose freed memory the
    allocator would keep."""

    def __init__(self, typed: bool, capacity: int = 0):
        self.state = _UNDECIDED if typed else _TEXT
        self.capacity = capacity
        self.blocks: list[pa.Array] = []  # text
        self.values: np.ndarray | None = None  # numbers or dates, rows [0, self.rows)
        self.separated: np.ndarray | None = None  # numbers: rows written with thousands separators
        self.commas: bool | None = None  # numbers: whether the last block's had separators (None: no block yet)
        self.rows = 0

    def add(self, block: pa.Array) -> None:
        if self.state == _REFUSED:
            return
        if self.state == _TEXT:
            self.blocks.append(_trimmed_array(block))
            return
        n = len(block)
        if block.null_count == n:
            if self.state != _UNDECIDED:
                self._put(None, None, n)
            else:
                self.rows += n
            return
        if self.state in (_UNDECIDED, _NUMBER):
            numbers = _plain_numbers(block, probe=self.state == _UNDECIDED, commas=self.commas)
            if numbers is not None:
                self._decide(_NUMBER)
                self.commas = numbers[1] is not None
                self._put(*numbers, n)
                return
        if self.state in (_UNDECIDED, _ISO):
            dates = _iso_dates(block, probe=self.state == _UNDECIDED)
            if dates is not None:
                self._decide(_ISO)
                self._put(dates, None, n)
                return
        if self.state == _UNDECIDED:
            self._decide(_TEXT)
            self.blocks.append(_trimmed_array(block))
        else:
            self.state, self.values, self.separated = _REFUSED, None, None

    def _decide(self, state: str) -> None:
        if self.state != _UNDECIDED:
            return
        empty, self.rows, self.state = self.rows, 0, state
        if state == _TEXT:
            if empty:
                self.blocks.append(pa.nulls(empty, pa.large_string()))
        elif empty:
            self._put(None, None, empty)

    def _put(self, values: np.ndarray | None, separated: np.ndarray | None, n: int) -> None:
        """Rows n more of numbers or dates (None: empty cells)."""
        missing = np.nan if self.state == _NUMBER else np.datetime64("NaT")
        if self.values is None:
            dtype = "float64" if self.state == _NUMBER else "datetime64[ns]"
            self.values = np.empty(max(self.capacity, n), dtype=dtype)
        if self.rows + n > len(self.values):  # more rows than lines counted: never from scan's count
            self.values = np.concatenate([self.values, np.empty(self.rows + n, dtype=self.values.dtype)])
        self.values[self.rows : self.rows + n] = missing if values is None else values
        if separated is not None:
            if self.separated is None:
                self.separated = np.zeros(len(self.values), dtype=bool)
            self.separated[self.rows : self.rows + n] = separated
        self.rows += n

    @property
    def reading(self) -> TextReading | None:
        if self.state == _NUMBER:
            marks = None if self.separated is None else self.separated[: self.rows]
            return TextReading("number", marks)
        return TextReading("iso") if self.state == _ISO else None

    def series(self) -> pd.Series:
        if self.state in (_NUMBER, _ISO):
            values = self.values[: self.rows] if self.values is not None else np.array([], dtype="float64")
            return pd.Series(values, dtype="float64" if self.state == _NUMBER else "datetime64[ns]")
        blocks = self.blocks if self.state == _TEXT else [pa.nulls(self.rows, pa.large_string())]
        column = pa.chunked_array(blocks, type=pa.large_string())
        return pd.Series(column.to_pandas(types_mapper={pa.large_string(): STR}.get), dtype=STR)


_LEADING_ZERO = r"^[+-]?0\d"


def _plain_numbers(
    block: pa.Array, probe: bool = True, commas: bool | None = None
) -> tuple[np.ndarray, np.ndarray | None] | None:
    """A block of a column `textvalues.plain_numbers` reads as numbers: (the numbers, which rows had
    thousands separators or None), or None when some cell is anything else. The same tests on a
    block as plain_numbers makes on the whole column: one cast of plain numbers (finite, without a
    leading zero), else every trimmed cell a number with or without separators.

    Arrow's cast reads exactly what PLAIN_NUMBER matches and, besides, "nan", "inf" and
    "infinity" in any case (tests/test_ingest_columnar.py holds it to that), all of which give a
    value that is not finite: a cast that succeeds with finite values is the regular expression's
    answer without running it (a fifth of the cost). Separators are the same with the commas taken
    out first; anything else goes through the regular expressions as before. `probe`: the
    column's type is not decided yet, so the block's first cells are asked first (a cast that
    fails formats an error per cell: 50 ms for a block of text); a decided column's blocks
    almost always pass and skip that, and are cast at once the way the column's last block was
    (`commas`, `_cast_as_before`)."""
    if probe and not _head_matches(block, SIMPLE_NUMBER):
        return None  # a first cell that is no number refuses the block before anything costs
    if not probe and commas is not None and (as_before := _cast_as_before(block, commas)) is not None:
        return as_before
    # A cast that fails costs a formatted error per cell: tried only on bytes a number is written with.
    plain, with_commas = _number_bytes(block)
    if plain:
        numbers = _finite_cast(block)
        if numbers is not None:
            return None if any_leading_zero(block) else (numbers, None)
    elif with_commas:
        stripped = pc.replace_substring(block, ",", "")
        numbers = _finite_cast(stripped)
        if numbers is not None:  # no white space either: the cells are their trimmed text
            return _separated(block, stripped, numbers)
    texts = _trimmed_array(block)
    if not pc.all(pc.match_substring_regex(texts, SIMPLE_NUMBER)).as_py():
        return None
    if pc.any(pc.match_substring_regex(texts, _LEADING_ZERO)).as_py():
        return None
    separated = np.asarray(pc.match_substring(texts, ",").fill_null(False).to_numpy(zero_copy_only=False), bool)
    if separated.any():
        return to_float(pc.replace_substring(texts, ",", "")), separated
    return to_float(texts), None


def _separated(block: pa.Array, stripped: pa.Array, numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray | None] | None:
    """A block of numbers with thousands separators, cast finite with its commas taken out: the
    numbers and the rows that had commas, or None (a leading zero, commas out of place)."""
    if any_leading_zero(block):
        return None
    separated = np.asarray(
        pc.not_equal(pc.binary_length(stripped), pc.binary_length(block)).fill_null(False), dtype=bool
    )
    # A cell with commas must have them every three digits (THOUSANDS); one without is plain.
    placed = pc.match_substring_regex(block.filter(pa.array(separated)), THOUSANDS)
    return (numbers, separated) if pc.all(placed).as_py() else None


def _cast_as_before(block: pa.Array, commas: bool) -> tuple[np.ndarray, np.ndarray | None] | None:
    """A decided column's block cast as its last block was (with its commas taken out, or as it
    is), without first proving every byte one a number is written with (`_number_bytes`, ~0.15 s
    of CPU at a million rows): a cast that reads finite numbers proves it, so the answer is
    `_plain_numbers`' own. None where that is not certain (the cast fails or reads a value that is
    not finite, a leading zero, no comma where commas were taken out): `_plain_numbers` decides."""
    if not commas:
        numbers = _finite_cast(block)
        return None if numbers is None or any_leading_zero(block) else (numbers, None)
    stripped = pc.replace_substring(block, ",", "")
    numbers = _finite_cast(stripped)
    if numbers is None or pc.equal(pc.sum(pc.binary_length(stripped)), pc.sum(pc.binary_length(block))).as_py():
        return None  # not numbers, or none had a comma: the plain cast's answer, not this one
    return _separated(block, stripped, numbers)


def _finite_cast(texts: pa.Array) -> np.ndarray | None:
    """The cells as float64 (missing ones NaN) when Arrow's cast reads every one as a finite number;
    None otherwise."""
    try:
        values = pc.cast(texts, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    numbers = values.to_numpy(zero_copy_only=False).astype("float64", copy=False)
    finite = np.isfinite(numbers)
    if finite.all() or finite[np.asarray(values.is_valid().to_numpy(zero_copy_only=False), bool)].all():
        return numbers
    return None


def _number_bytes(block: pa.Array) -> tuple[bool, bool]:
    """(whether every byte of the block's cells is one a plain number is written with: digits,
    ".", "e", "E", "+", "-"; whether every one is, or a comma), compared in numpy on the block's own
    buffer (a few vector comparisons: a lookup per byte costs ten times as much)."""
    data = _cell_bytes(block)
    if data is None:
        return True, True
    shifted = data - np.uint8(ord("+"))  # "+" (43) to "9" (57) as 0..14, any other byte wraps past 14
    comma = shifted == 1
    numeric = ((shifted <= 14) & ~comma & (shifted != 4)) | ((data | 32) == ord("e"))  # 4: "/"
    if numeric.all():
        return True, True
    return False, bool((numeric | comma).all()) and bool(comma.any())


def _cell_bytes(block: pa.Array) -> np.ndarray | None:
    """The bytes of a string block's cells, end to end, as a numpy view (None when there are none)."""
    buffers = string_buffers(block)
    return None if buffers is None else buffers[1]


def _iso_dates(block: pa.Array, probe: bool = True) -> np.ndarray | None:
    """A block of a column `textvalues.iso_datetimes` reads as dates: the dates, or None. Tried on
    the cells as they are first (a cell ISO_DATE matches has no space at either end to trim), then
    trimmed. `probe` (the column's type is not decided yet): the block's first cells are asked
    first, since a cast that fails costs a formatted error per cell (50 ms for a block of text)
    and one of them that is no ISO date refuses the block."""
    if probe and not _head_matches(block, ISO_DATE):
        return None
    dates = _iso_cast(block)
    if dates is None and may_need_trim(block):
        dates = _iso_cast(_trimmed_array(block))
    return dates


_HEAD_CELLS = 64  # the first cells of a block asked whether they can be what the whole block must be
# What textvalues.iso_datetimes keeps: years 1678 to 2261, as nanoseconds since the epoch.
_FIRST_NS = int(np.datetime64("1678-01-01T00:00:00", "ns").astype(np.int64))
_PAST_NS = int(np.datetime64("2262-01-01T00:00:00", "ns").astype(np.int64))


def _head_matches(block: pa.Array, pattern: str) -> bool:
    """Whether the block's first cells, trimmed, all match `pattern` (missing ones count as matching)."""
    head = block.slice(0, _HEAD_CELLS)
    return bool(pc.all(pc.match_substring_regex(_trimmed_array(head), pattern)).as_py())


def _iso_cast(texts: pa.Array) -> np.ndarray | None:
    try:
        stamps = pc.cast(texts, pa.timestamp("ns"))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if not _iso_shaped(texts) and not pc.all(pc.match_substring_regex(texts, ISO_DATE)).as_py():
        return None
    bounds = pc.min_max(stamps)
    low, high = bounds["min"], bounds["max"]
    if not low.is_valid or low.value < _FIRST_NS or high.value >= _PAST_NS:
        return None
    values = np.frombuffer(stamps.buffers()[1], dtype="datetime64[ns]")[stamps.offset : stamps.offset + len(stamps)]
    if stamps.null_count:
        values = values.copy()
        values[~np.asarray(stamps.is_valid().to_numpy(zero_copy_only=False), dtype=bool)] = np.datetime64("NaT")
    return values


# ISO_DATE's cells of one width as a template: "d" a digit, "t" a space or T, else that character.
_ISO_TEMPLATES = {10: "dddd-dd-dd", 16: "dddd-dd-ddtdd:dd", 19: "dddd-dd-ddtdd:dd:dd"}


def _iso_shaped(texts: pa.Array) -> bool:
    """Whether every present cell is an ISO date written at full width ("2024-01-05", with
    "07:30" or "07:30:15" and fractions of a second after a space or T): ISO_DATE's match, proved
    on the cells' bytes as one table of equal rows in numpy (the regular expression costs ten
    times as much). False means not proved: the regular expression decides."""
    n = len(texts) - texts.null_count
    buffers = string_buffers(texts)
    if buffers is None or n == 0:
        return False
    offsets, data = buffers
    if len(data) % n:
        return False
    width = len(data) // n
    lengths = np.diff(offsets)
    if texts.null_count:
        valid = np.asarray(texts.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        if not (lengths[valid] == width).all():
            return False
    elif not (lengths == width).all():
        return False
    template = _ISO_TEMPLATES.get(width)
    if template is None and width >= 21:
        template = _ISO_TEMPLATES[19] + "." + "d" * (width - 20)
    if template is None:
        return False
    rows = data.reshape(n, width)
    pattern = np.frombuffer(template.encode(), dtype=np.uint8)
    digit, sep = pattern == ord("d"), pattern == ord("t")
    fixed = ~(digit | sep)
    if not ((rows[:, digit] - np.uint8(ord("0"))) <= 9).all():
        return False
    if not (rows[:, fixed] == pattern[fixed]).all():
        return False
    return bool(np.isin(rows[:, sep], [ord(" "), ord("T")]).all())


def _pool() -> pa.MemoryPool:
    """jemalloc where this pyarrow has it: it hands the parser's freed blocks back to the system,
    where mimalloc (the default) keeps them (a million-row file peaked 200 MB higher)."""
    try:
        return pa.jemalloc_memory_pool()
    except (pa.ArrowNotImplementedError, NotImplementedError):
        return pa.default_memory_pool()


def _trimmed_array(block: pa.Array) -> pa.Array:
    """Cells trimmed of surrounding spaces (as str.strip trims them: ideographic spaces too), blank
    cells missing, as large strings; a block with nothing to trim keeps its buffers."""
    if not pa.types.is_large_string(block.type):
        block = block.cast(pa.large_string())
    if may_need_trim(block):
        block = pc.utf8_trim_whitespace(block)
        block = pc.if_else(pc.equal(pc.utf8_length(block), 0), pa.scalar(None, pa.large_string()), block)
    return block
