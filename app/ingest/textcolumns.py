"""The rows of a CSV/TSV file in one columnar pass (pyarrow's CSV reader, C++ and multi-threaded).

Reading a whole text file cell by cell as Python strings was the slow half of a big CSV: a million
rows x 20 columns took 13 s and ten times the file's size in memory. Here the file is read twice,
cheaply, and parsed once:

1. `scan`: one streaming pass over the bytes (8 MB at a time, never the whole file in memory):
   whether they are UTF-8, and how many lines there are (the row limit is checked before any
   parsing; a file past it is refused at once);
2. the head, the first lines, is parsed by the exact reader (textfiles._parse_grid): the layout
   (title rows, header rows, the data's first row) is decided on it as on every sheet;
3. the data rows, from the byte where the data starts, are parsed by pyarrow into Arrow string
   columns (trimmed, empty cells missing: the same cells the exact reader gives), which the type
   inference then converts in Arrow's kernels without a Python string per cell.

Anything this pass does not read the way the exact reader does (ragged rows, a quoted value that
spans lines inside the head, UTF-16, lines ended by a lone CR) is left to the exact reader:
`None` from `open_text`, or `NotColumnar` from `read_rows`, and the caller reads the file whole.
Files in another encoding (GB18030, Latin-1 ...) are decoded whole as before and handed to the
columnar pass as UTF-8 bytes.
"""

from __future__ import annotations

import codecs
import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

CHUNK = 8 << 20  # bytes per read of the streaming scan
HEAD_BYTES = 1 << 20  # the head is looked for in the first megabyte (one line can be longer: then all of it)
BLOCK = 4 << 20  # pyarrow's parse block: big enough for its threads, small enough for the memory
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
    whole by textfiles.decode_bytes."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    newlines = 0
    carriage = False
    last = b""
    with open(path, "rb") as handle:
        chunk = handle.read(CHUNK)
        if chunk.startswith((b"\xff\xfe", b"\xfe\xff")) or (
            len(chunk) >= 4 and chunk[1:4:2] == b"\x00\x00" and chunk[0:4:2] != b"\x00\x00"
        ):
            return None  # UTF-16
        start = len(UTF8_BOM) if chunk.startswith(UTF8_BOM) else 0
        chunk = chunk[start:]
        while chunk:
            if not (chunk.isascii() and not decoder.getstate()[0]):  # ASCII is UTF-8: nothing to check
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError:
                    return None
            newlines += chunk.count(b"\n")
            carriage = carriage or b"\r" in chunk
            last = chunk[-1:]
            chunk = handle.read(CHUNK)
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return None
    if carriage and newlines == 0:
        return None  # lines ended by CR alone
    lines = newlines + (1 if last and last != b"\n" else 0)
    return TextSource(path, None, start, "utf-8-sig" if start else "utf-8", lines)


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
    names = [str(i) for i in range(fields)]
    try:
        table = pcsv.read_csv(
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
                column_types={name: pa.large_string() for name in names},
                null_values=[""],
                strings_can_be_null=True,
                quoted_strings_can_be_null=True,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OSError) as exc:
        raise NotColumnar(str(exc)) from None
    columns = []
    for _ in range(table.num_columns):
        columns.append(_trimmed(table.column(0)))
        table = table.remove_column(0)  # each raw column is freed once its trimmed text exists
    return columns


def _pool() -> pa.MemoryPool:
    """jemalloc where this pyarrow has it: it hands the parser's freed blocks back to the system,
    where mimalloc (the default) keeps them (a million-row file peaked 200 MB higher)."""
    try:
        return pa.jemalloc_memory_pool()
    except (pa.ArrowNotImplementedError, NotImplementedError):
        return pa.default_memory_pool()


def _trimmed(column: pa.ChunkedArray) -> pd.Series:
    """Cells trimmed of surrounding spaces (as str.strip trims them: ideographic spaces too), blank
    cells missing; a column with nothing to trim keeps its buffers."""
    if any(_may_need_trim(chunk) for chunk in column.chunks):
        column = pc.utf8_trim_whitespace(column)
        column = pc.if_else(pc.equal(pc.utf8_length(column), 0), pa.scalar(None, pa.large_string()), column)
    return pd.Series(column.to_pandas(types_mapper={pa.large_string(): STR}.get), dtype=STR)


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
    # all the same (no filtering copy), at worst a column is trimmed for nothing.
    starts = np.minimum(offsets[:-1], len(data) - 1)
    ends = np.maximum(offsets[1:], 1)
    last = data[ends - 1]
    if _FIRST[data[starts]].any() or _ASCII_WS[last].any():
        return True
    for end in ends[_WIDE_LAST[last]]:
        tail = data[max(0, end - 3) : end].tobytes()
        if tail in _WIDE_ENDS or tail[-2:] in _WIDE_ENDS:
            return True
    return False
