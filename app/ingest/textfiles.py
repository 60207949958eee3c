"""Reading CSV, TSV and plain-text tables: encoding detection, delimiter sniffing, ragged rows.

The result is a raw grid of strings (None for empty cells), just like a spreadsheet sheet, so
header detection and typing treat text files and workbooks the same way.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd

from app.config import Settings
from app.ingest import textcolumns
from app.ingest.errors import IngestError
from app.ingest.extract import TRIMMED
from app.ingest.raw import RawBook, RawSheet
from app.ingest.warnings_text import warning


def read_text(path: Path, fmt: str, settings: Settings, head_rows: int = 64) -> RawBook:
    """The head parsed exactly (the layout is decided on it), the data rows on demand in one
    columnar pass (app.ingest.textcolumns); a file that pass cannot read as the exact reader
    does is read whole by the exact reader."""
    source = textcolumns.scan(path)
    if source is None:  # not UTF-8: decoded whole, as before, then read from its UTF-8 bytes
        text, encoding = decode_bytes(path.read_bytes())
        _check_not_blank(text)
        source = textcolumns.transcoded(path, text, encoding)
        if source is None:
            return _read_whole(path, fmt, settings, head_rows, _exact_grid(text, fmt, settings), encoding)
        del text
    _check_size(source.lines, 1, settings)  # a file past the row limit is refused before it is parsed
    head_bytes, offsets, whole = textcolumns.head_lines(source, head_rows)
    head_text = head_bytes.decode("utf-8")
    if whole:
        _check_not_blank(head_text)
    delimiter = "\t" if fmt == "tsv" else sniff_delimiter(head_text)
    head_grid = _parse_grid(head_text, delimiter, settings)
    if len(head_grid) != len(offsets) - 1:
        # A quoted value spans lines: rows are not lines, so where the data starts is not known here.
        return _read_whole(path, fmt, settings, head_rows, _exact_grid(None, fmt, settings, path), source.encoding)
    exact: list[pd.DataFrame] = []  # the whole grid, once the exact reader had to read it

    def columnar(first: int, typed: set[int]) -> tuple[pd.DataFrame, dict[int, textcolumns.TextReading]] | None:
        if exact or first + 1 >= len(offsets):
            return None
        line = head_bytes[offsets[first] : offsets[first + 1]].decode("utf-8").rstrip("\r\n")
        try:
            body, readings = _columnar_body(source, offsets[first], line, delimiter, head_grid.shape[1], typed)
        except textcolumns.NotColumnar:
            return None
        _check_cells(first + len(body), body.shape[1], settings)
        return _trimmed(body), readings

    def load_body(first: int, n: int | None) -> pd.DataFrame:
        if not exact:
            if first + 1 >= len(offsets) and whole:
                return _trimmed(head_grid.iloc[first:].reset_index(drop=True))  # no rows after the head
            read = columnar(first, set())
            if read is not None:
                return read[0] if n is None else _trimmed(read[0].iloc[:n])
            exact.append(_exact_grid(None, fmt, settings, path))
        return _trimmed(exact[0].iloc[first : None if n is None else first + n].reset_index(drop=True))

    def load_typed_body(first: int, typed: set[int]) -> tuple[pd.DataFrame, dict[int, textcolumns.TextReading]]:
        if source.size >= textcolumns.TYPED_MIN_BYTES and typed:
            read = columnar(first, typed)
            if read is not None:
                return read
        return load_body(first, None), {}

    head = head_grid.iloc[:head_rows].astype(object)
    head = head.where(head.notna(), None)
    n_rows = max(len(head_grid), source.lines)
    sheet = RawSheet(
        path.stem,
        head,
        n_rows,
        head_grid.shape[1],
        complete=whole,
        load_body=load_body,
        load_typed_body=load_typed_body,
    )
    return RawBook(fmt, [sheet], _encoding_warnings(source.encoding))


def _columnar_body(
    source: textcolumns.TextSource, start: int, first_line: str, delimiter: str, head_width: int, typed: set[int]
) -> tuple[pd.DataFrame, dict[int, textcolumns.TextReading]]:
    """The rows from byte `start` on as a grid like `_parse_grid`'s: as many columns as the whole
    file fills (the head's counted too), str columns, missing for empty cells; the columns in
    `typed` as numbers or dates where the typed pass could read them so (the readings say how)."""
    fields = textcolumns.fields_in(first_line, delimiter)
    if typed:
        columns, readings = textcolumns.read_typed_rows(source, start, fields, delimiter, typed)
    else:
        columns, readings = textcolumns.read_rows(source, start, fields, delimiter), {}
    filled = [i for i, col in enumerate(columns) if col.notna().any()]
    width = max(max(filled, default=-1) + 1, head_width)
    n = len(columns[0]) if columns else 0
    body = {i: columns[i] if i < len(columns) else pd.Series([None] * n, dtype="str") for i in range(width)}
    return pd.DataFrame(body, index=range(n), copy=False), readings  # no copy into 2-D blocks


def _exact_grid(text: str | None, fmt: str, settings: Settings, path: Path | None = None) -> pd.DataFrame:
    """The exact reader: the whole text parsed into a grid of strings at once."""
    if text is None:
        assert path is not None
        text = decode_bytes(path.read_bytes())[0]
    _check_not_blank(text)
    delimiter = "\t" if fmt == "tsv" else sniff_delimiter(text)
    grid = _parse_grid(text, delimiter, settings)
    _check_cells(grid.shape[0], grid.shape[1], settings)
    return grid


def _read_whole(path: Path, fmt: str, settings: Settings, head_rows: int, grid: pd.DataFrame, encoding: str) -> RawBook:
    head = grid.iloc[:head_rows].astype(object)
    head = head.where(head.notna(), None)

    def load_body(first: int, n: int | None) -> pd.DataFrame:
        return _trimmed(grid.iloc[first : None if n is None else first + n].reset_index(drop=True))

    sheet = RawSheet(path.stem, head, len(grid), grid.shape[1], complete=len(grid) <= head_rows, load_body=load_body)
    return RawBook(fmt, [sheet], _encoding_warnings(encoding))


def _trimmed(body: pd.DataFrame) -> pd.DataFrame:
    """Mark a body of this reader's cells: trimmed, blank ones missing (extract then skips that test)."""
    body.attrs[TRIMMED] = True
    return body


def _encoding_warnings(encoding: str) -> list[str]:
    return [] if encoding in ("utf-8", "ascii") else [warning("text_encoding", encoding=encoding)]


def _check_not_blank(text: str) -> None:
    if not text.strip():
        raise IngestError(
            "empty_file",
            "The file contains no data.",
            "Check that the upload finished.",
            "文件里没有任何数据。",
            "请确认文件已经完整上传。",
        )


def _check_cells(rows: int, columns: int, settings: Settings) -> None:
    if rows * columns > settings.max_cells:
        raise IngestError(
            "too_large",
            f"The file has {rows:,} rows x {columns:,} columns; the limit is {settings.max_cells:,} cells.",
            "Split the file or remove the columns you do not need.",
            f"这个文件有 {rows:,} 行、{columns:,} 列，超过了 {settings.max_cells:,} 个单元格的上限。",
            "请把文件拆成几个，或删掉用不到的列。",
        )


def decode_bytes(raw: bytes) -> tuple[str, str]:
    """Decode text by BOM, then UTF-8, then GB18030 for Chinese, then charset-normalizer."""
    if raw.startswith(b"\xef\xbb\xbf"):
        return _decode(raw[3:], "utf-8"), "utf-8-sig"
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return _decode(raw, "utf-16"), "utf-16"
    if len(raw) >= 4 and raw[1:4:2] == b"\x00\x00" and raw[0:4:2] != b"\x00\x00":
        return _decode(raw, "utf-16-le"), "utf-16-le"  # UTF-16 without BOM: ASCII high bytes are 0
    try:
        return raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        text = raw.decode("gb18030")
        if _mostly_cjk(text):
            return text, "gb18030"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(raw[: 1 << 20]).best()
    if best is not None:
        try:
            return raw.decode(best.encoding), best.encoding
        except (UnicodeDecodeError, LookupError):
            pass
    raise IngestError(
        "encoding_error",
        "The text encoding of this file could not be recognised.",
        "Save it from Excel as 'CSV UTF-8 (Comma delimited)' and upload again.",
        "无法识别这个文件的文字编码。",
        "请在 Excel 中另存为“CSV UTF-8（逗号分隔）”，再重新上传。",
    )


def _decode(raw: bytes, encoding: str) -> str:
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise IngestError(
            "encoding_error",
            f"The file claims to be {encoding} text but contains invalid bytes.",
            "Save it from Excel as 'CSV UTF-8 (Comma delimited)' and upload again.",
            f"这个文件标明使用 {encoding} 编码，但其中有无法按这种编码解读的内容。",
            "请在 Excel 中另存为“CSV UTF-8（逗号分隔）”，再重新上传。",
        ) from exc


def _mostly_cjk(text: str) -> bool:
    non_ascii = [c for c in text if ord(c) > 127]
    if not non_ascii:
        return True
    cjk = sum(1 for c in non_ascii if "\u3000" <= c <= "\u9fff" or "\uff00" <= c <= "\uffef")
    return cjk / len(non_ascii) >= 0.9


SNIFF_CHARS = 64 * 1024  # a bounded sample: one line of a file can be the whole file


def sniff_delimiter(text: str) -> str:
    """Pick the delimiter that splits the first lines into the most consistent number of fields."""
    lines = [ln for ln in text[:SNIFF_CHARS].splitlines()[:100] if ln.strip()][:50]
    sample = "\n".join(lines)
    try:
        sniffed = csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        sniffed = None
    best, best_score = ",", 0.0
    for delim in [",", ";", "\t", "|"]:
        counts = [len(r) for r in csv.reader(io.StringIO(sample), delimiter=delim)]
        if not counts:
            continue
        mode = max(set(counts), key=counts.count)
        if mode < 2:
            continue
        score = counts.count(mode) / len(counts) + (0.01 * mode) + (0.05 if delim == sniffed else 0)
        if score > best_score:
            best, best_score = delim, score
    return best


def _parse_grid(text: str, delimiter: str, settings: Settings) -> pd.DataFrame:
    """The text as a grid of trimmed strings (missing for empty cells), one row per line of the
    file, blank lines included, so row numbers match what the user sees in a text editor.

    pandas' C parser reads it into Arrow strings (~50x faster than the csv module, and the type
    inference then runs in Arrow too); ragged rows are padded. It needs the number of columns up
    front: the most delimiters on one line is an upper bound (quoted delimiters only add empty
    columns, dropped after). A quoted value spanning lines can hide fields from that count: the
    parser then refuses and the csv module reads the file instead."""
    width = max((line.count(delimiter) for line in text.splitlines()), default=0) + 1
    _check_size(text.count("\n") + 1, width, settings)
    try:
        grid = pd.read_csv(
            io.StringIO(text),
            sep=delimiter,
            header=None,
            names=range(width),
            index_col=False,
            dtype="str",
            keep_default_na=False,
            na_filter=False,
            skip_blank_lines=False,
            engine="c",
            quotechar='"',
            doublequote=True,
        )
    except (pd.errors.ParserError, ValueError, csv.Error):
        grid = pd.DataFrame(_parse_rows(text, delimiter, settings), dtype="str")
    for c in grid.columns:  # trimmed; empty text is an empty cell (Arrow kernels, per column)
        col = grid[c].str.strip()
        grid[c] = col.where(col.ne("") & col.notna())
    filled = [c for c in grid.columns if grid[c].notna().any()]
    last = max(filled, default=-1)
    grid = grid.loc[:, [c for c in grid.columns if c <= last]]
    grid.columns = range(grid.shape[1])
    return grid


def _check_size(rows: int, columns: int, settings: Settings) -> None:
    if rows > settings.max_rows + 1000:
        raise IngestError(
            "too_large",
            f"The file has more than {settings.max_rows} rows.",
            "Split the file or filter it to the rows you need.",
            f"这个文件超过了 {settings.max_rows} 行的上限。",
            "请把文件拆开，或只保留需要的行。",
        )
    if columns > settings.max_columns:
        raise IngestError(
            "too_large",
            f"The file has more than {settings.max_columns} columns.",
            "Remove the columns you do not need.",
            f"这个文件超过了 {settings.max_columns} 列的上限。",
            "请删掉用不到的列。",
        )


def _parse_rows(text: str, delimiter: str, settings: Settings) -> list[list[str]]:
    """The exact, slower reading (the csv module), for files the C parser refuses."""
    csv.field_size_limit(16 * 1024 * 1024)
    rows = []
    try:
        for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter):
            rows.append(row)
            _check_size(len(rows), len(row), settings)
    except csv.Error as exc:
        raise IngestError(
            "corrupt_file",
            "The text file could not be split into rows and columns.",
            "Check the file in a text editor or re-export it from Excel as CSV.",
            "这个文本文件无法拆分成行和列。",
            "请用文本编辑器检查一下，或从 Excel 重新导出为 CSV。",
        ) from exc
    return rows
