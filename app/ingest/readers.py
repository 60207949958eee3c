"""Low-level readers: turn a file into raw sheet grids, whatever its real format.

A grid is a DataFrame of strings (NaN for empty cells) with positional columns, where grid row i
is sheet row i + 1. Header detection and typing happen later (table.py, types.py), so nothing
here guesses at the meaning of cells. Excel sheets also get a `load_typed` callback that re-reads
the data rows with fastexcel's own cell types, so numbers and dates keep full precision.
"""

from __future__ import annotations

import logging
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from app.config import Settings
from app.ingest.errors import IngestError
from app.ingest.raw import RawBook, RawSheet
from app.ingest.table import HEAD_ROWS
from app.ingest.textfiles import read_text
from app.ingest.textvalues import regex_hits, text_array

EXCEL_EXTS = {".xlsx", ".xlsm", ".xlsb", ".xls", ".ods"}
TEXT_EXTS = {".csv", ".tsv", ".txt"}
SUPPORTED = "Excel (.xlsx, .xlsm, .xlsb, .xls), OpenDocument (.ods) or text (.csv, .tsv, .txt)"

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ZIP_MAGIC = b"PK\x03\x04"
# Files people rename to .xlsx by mistake: say what they really are.
FOREIGN_MAGIC = {
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"%PDF": "a PDF document",
    b"\x1f\x8b": "a gzip archive",
    b"Rar!": "a RAR archive",
    b"7z\xbc\xaf": "a 7-Zip archive",
}
# fastexcel/calamine log every dtype fallback as a warning; our own cleaning log covers that.
for _logger in ("fastexcel", "calamine"):
    logging.getLogger(_logger).setLevel(logging.ERROR)

# Parts smaller than this are never refused for their ratio (tiny repetitive XML compresses well).
RATIO_FLOOR_BYTES = 8 * 1024 * 1024
# The parse cost of a suspicious part, in XML tags: a cell with a value is <c><v>..</v></c>.
ELEMENTS_PER_CELL = 4
PLAIN_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$")


# --- format sniffing ------------------------------------------------------------------------


def sniff_format(path: Path, settings: Settings | None = None) -> str:
    """Return the real format key from magic bytes, the extension only breaking ties."""
    ext = path.suffix.lower()
    if ext not in EXCEL_EXTS | TEXT_EXTS:
        raise IngestError(
            "unsupported_format",
            f"Verity cannot read '{ext or 'files without an extension'}' files.",
            f"Save the data as {SUPPORTED}.",
        )
    with path.open("rb") as fh:
        head = fh.read(8)
    if not head:
        raise IngestError("empty_file", "The file is empty.", "Check that the upload finished.")
    for magic, what in FOREIGN_MAGIC.items():
        if head.startswith(magic):
            raise IngestError(
                "unsupported_format",
                f"This file is {what}, not a spreadsheet, although its name ends in '{ext}'.",
                f"Upload the original spreadsheet as {SUPPORTED}.",
            )
    if head.startswith(OLE_MAGIC):
        return _sniff_ole(path, ext)
    if head.startswith(ZIP_MAGIC):
        return _sniff_zip(path, ext, settings)
    if ext in EXCEL_EXTS and not _looks_like_text(path):
        raise IngestError(
            "corrupt_file",
            f"The file ends in '{ext}' but its contents are not a spreadsheet Verity recognises.",
            "Open it in Excel or LibreOffice and save it again.",
        )
    # Text saved with an Excel extension (common with exported reports) is still read as text.
    return ext.lstrip(".") if ext in TEXT_EXTS else "csv"


def _sniff_ole(path: Path, ext: str) -> str:
    # Office encrypts xlsx/xlsb by wrapping them in an OLE container with these streams; the
    # directory can sit anywhere in the file, so search all of it (size is capped by then).
    data = path.read_bytes()
    if any(name.encode("utf-16-le") in data for name in ("EncryptedPackage", "EncryptionInfo")):
        raise _encrypted()
    return "xls"  # a legacy workbook, whatever its extension says


def _sniff_zip(path: Path, ext: str, settings: Settings | None = None) -> str:
    try:
        with zipfile.ZipFile(path) as zf:
            names = {n.replace("\\", "/").lstrip("/") for n in zf.namelist()}
            if settings is not None:
                check_zip_limits(zf, settings)
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError) as exc:
        raise IngestError(
            "corrupt_file", "The file is damaged: it could not be opened as a workbook.",
            "Open it in Excel or LibreOffice and save it again.",
        ) from exc
    if "xl/workbook.bin" in names:
        return "xlsb"
    if "content.xml" in names and "mimetype" in names:
        return "ods"
    # Any Office Open XML package; the workbook part may sit outside xl/ (minimal writers do that).
    if "[Content_Types].xml" in names or any(n.startswith("xl/") for n in names):
        return "xlsm" if ext == ".xlsm" else "xlsx"
    raise IngestError(
        "unsupported_format", "This file is a zip archive, not a spreadsheet.",
        f"Unzip it and upload the spreadsheet inside ({SUPPORTED}).",
    )


def check_zip_limits(package: zipfile.ZipFile | list[zipfile.ZipInfo], settings: Settings) -> None:
    """Zip bombs: the central directory says how big every part becomes once decompressed, so a
    workbook that unpacks beyond `max_uncompressed_mb` is refused before any reader inflates a byte
    of it. A high compression ratio alone is no proof: text cells of 32k repeated characters pack
    several hundred times and are genuine. A part that packs suspiciously well (over 8 MB, ratio
    above `max_compression_ratio`) is inflated once, in a stream, and its parse cost counted: more
    XML elements than four per allowed cell (`max_cells`) is refused; fewer is read as usual, by a
    reader that has its own time and memory limits (app.ingest.bounded)."""
    infos = package.infolist() if isinstance(package, zipfile.ZipFile) else list(package)
    total = sum(max(0, i.file_size) for i in infos)
    if total > settings.max_uncompressed_mb * 1024 * 1024:
        raise IngestError(
            "too_large",
            f"The workbook unpacks to {total / 1048576:,.0f} MB; the limit is {settings.max_uncompressed_mb} MB.",
            "Delete unused sheets, rows and columns, or split the workbook.",
        )
    if len(infos) > 10_000:
        raise IngestError("too_large", f"The workbook holds {len(infos):,} parts.", "Save it again from Excel.")
    for info in infos:
        ratio = info.file_size / max(1, info.compress_size)
        if info.file_size <= RATIO_FLOOR_BYTES or ratio <= settings.max_compression_ratio:
            continue
        limit = ELEMENTS_PER_CELL * settings.max_cells
        if not isinstance(package, zipfile.ZipFile):  # only the directory: the ratio is all there is
            elements = limit + 1
        else:
            elements = _xml_elements(package, info, limit)
        if elements > limit:
            raise IngestError(
                "too_large",
                f"Part '{info.filename}' of the workbook expands {ratio:,.0f} times when unpacked, into more "
                f"than {limit:,} XML elements (the limit is {ELEMENTS_PER_CELL} per cell of {settings.max_cells:,} "
                "cells); files like this are used to exhaust memory.",
                "If the file is genuine, open it in Excel, delete unused rows and columns, and save again.",
            )


def _xml_elements(package: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> int:
    """The number of XML tags in one part, inflated in 1 MB chunks (memory stays flat); counting
    stops above `limit`. A part that cannot be inflated counts as over the limit."""
    count = 0
    try:
        with package.open(info) as stream:
            while chunk := stream.read(1 << 20):
                count += chunk.count(b"<")
                if count > limit:
                    break
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError):
        return limit + 1
    return count


def _looks_like_text(path: Path) -> bool:
    sample = path.read_bytes()[:4096]
    return b"\x00" not in sample or sample[:2] in (b"\xff\xfe", b"\xfe\xff")


def _encrypted() -> IngestError:
    return IngestError(
        "encrypted_file", "The workbook is protected with a password, so Verity cannot read it.",
        "Open it in Excel, remove the password (File > Info > Protect Workbook), save, and upload again.",
    )


# --- entry point ----------------------------------------------------------------------------


def read_book(path: Path, settings: Settings, head_rows: int = HEAD_ROWS) -> RawBook:
    """Sheets with their first rows and a loader for the rest: nothing big is parsed yet."""
    if not path.is_file():
        raise IngestError("corrupt_file", f"The file '{path.name}' could not be found.", "")
    size = path.stat().st_size
    if size == 0:
        raise IngestError("empty_file", "The file is empty.", "Check that the upload finished.")
    if size > settings.max_upload_mb * 1024 * 1024:
        raise IngestError(
            "too_large", f"The file is {size / 1048576:.0f} MB; the limit is {settings.max_upload_mb} MB.",
            "Split the file or remove columns and rows you do not need.",
        )
    fmt = sniff_format(path, settings)
    if fmt in {"csv", "tsv", "txt"}:
        return read_text(path, fmt, settings, head_rows)
    return read_excel(path, fmt, settings, head_rows)


# --- Excel and OpenDocument -----------------------------------------------------------------


def _wrap_excel_error(exc: BaseException) -> IngestError:
    text = str(exc)
    if "password" in text.lower() or "encrypt" in text.lower():
        return _encrypted()
    if "limit exceeded" in text.lower() or "too large" in text.lower():
        return IngestError(
            "too_large", "The workbook declares more cells than Verity can safely read.",
            "Open it in Excel, delete unused rows and columns, and save again.",
        )
    return IngestError(
        "corrupt_file", "The workbook is damaged or uses a structure Verity cannot read.",
        "Open it in Excel or LibreOffice and save it again as .xlsx.",
    )


def _guard(fn, *args, **kwargs):
    """Call into fastexcel, turning its errors (and Rust panics, which are BaseExceptions) into IngestError."""
    try:
        return fn(*args, **kwargs)
    except (KeyboardInterrupt, SystemExit, MemoryError):
        raise
    except IngestError:
        raise
    except BaseException as exc:  # noqa: BLE001 - pyo3 PanicException derives from BaseException
        raise _wrap_excel_error(exc) from None


def _cells_limit(name: str, rows: int, cols: int, settings: Settings) -> str | None:
    if rows > settings.max_rows + 1000 or cols > settings.max_columns:
        return (f"sheet '{name}' has {rows:,} rows and {cols:,} columns; the limits are "
                f"{settings.max_rows:,} rows and {settings.max_columns:,} columns")
    if rows * cols > settings.max_cells:
        return (f"sheet '{name}' has {rows:,} rows x {cols:,} columns = {rows * cols:,} cells; the limit is "
                f"{settings.max_cells:,} cells")
    return None


def read_excel(path: Path, fmt: str, settings: Settings, head_rows: int = HEAD_ROWS) -> RawBook:
    import fastexcel

    reader = _guard(fastexcel.read_excel, str(path))
    names = _guard(lambda: list(reader.sheet_names))
    if fmt in ("xlsx", "xlsm"):
        try:
            book = _read_xlsx_streaming(path, fmt, reader, names, settings, head_rows)
            if book is not None:
                return book
        except IngestError:
            raise
        except Exception:  # noqa: BLE001 - anything unusual: calamine reads it the slow way
            pass
    sheets, warnings = [], []
    for name in names:
        try:
            sheets.append(_read_sheet(reader, name, settings, head_rows))
        except IngestError as exc:
            if exc.category == "encrypted_file":
                raise
            # One unreadable sheet (a chart sheet, a damaged one) should not lose the others.
            warnings.append(f"sheet '{name}' could not be read and was skipped")
    if not sheets and warnings:
        raise IngestError(
            "corrupt_file", "None of the sheets in this workbook could be read.",
            "Open it in Excel or LibreOffice and save it again as .xlsx.",
        )
    return RawBook(fmt, sheets, warnings)


def _read_sheet(reader, name: str, settings: Settings, head_rows: int) -> RawSheet:
    """Any format calamine reads: the head as text (one parse), typed data rows on demand."""
    sheet = _guard(reader.load_sheet, name, header_row=None, skip_rows=0, dtypes="string",
                   whitespace_as_null=True, n_rows=head_rows)
    total, width = sheet.total_height, sheet.width
    hidden = str(getattr(sheet, "visible", "visible")).lower() != "visible"
    too_large = _cells_limit(name, total, width, settings)
    head = pd.DataFrame() if too_large else _to_object_grid(_guard(sheet.to_pandas))

    def load_body(first: int, n: int | None) -> pd.DataFrame:
        return _load_typed(reader, name, first, n)

    return RawSheet(name, head, total, width, complete=total <= head_rows, hidden=hidden,
                    load_body=load_body, too_large=too_large)


def _to_object_grid(df: pd.DataFrame) -> pd.DataFrame:
    df = df.astype(object)
    df.columns = range(df.shape[1])
    df.index = range(len(df))
    return df.where(df.notna(), None)


def _read_xlsx_streaming(path: Path, fmt: str, reader, names: list[str], settings: Settings,
                         head_rows: int) -> RawBook | None:
    """xlsx/xlsm: heads, visibility and merged ranges straight from the package (xlsxstream)."""
    from app.ingest.xlsxstream import XlsxBook

    zf = zipfile.ZipFile(path)
    book = XlsxBook(zf)
    if [s.name for s in book.sheets] != names:
        zf.close()
        return None
    sheets = []
    for entry in book.sheets:
        head = book.head(entry, head_rows)
        grid = _head_grid(head.rows, head_rows)
        if head.complete:
            n_rows = len(grid)
            n_cols = grid.shape[1]
        else:
            # The declared dimension can be missing or a lie (A1:XFD1048576 over a few cells); a
            # stored cell takes at least ~12 bytes of XML, which bounds what can really be there.
            max_cells = max(1, entry.xml_size // 12)
            n_cols = max(1, grid.shape[1])
            n_rows = max(len(grid), max_cells // n_cols)
            if head.dimension:
                dim_rows, dim_cols = head.dimension[2] + 1, head.dimension[3] + 1
                if dim_rows * dim_cols <= max_cells:
                    n_rows, n_cols = dim_rows, max(dim_cols, grid.shape[1])
                else:
                    n_rows = min(dim_rows, n_rows)
        too_large = _cells_limit(entry.name, n_rows, n_cols, settings)
        state = {"offset": None}

        def load_body(first: int, n: int | None, _name=entry.name, _grid=grid, _dim=head.dimension,
                      _state=state) -> pd.DataFrame:
            df = _load_typed(reader, _name, first, n)
            if _state["offset"] is None:
                _state["offset"] = _column_offset(df, _grid, first, _dim)
            df.columns = [c + _state["offset"] for c in range(df.shape[1])]
            return df

        def load_merges(_entry=entry) -> list:
            return book.merges(_entry)

        sheets.append(RawSheet(entry.name, grid, n_rows, n_cols, complete=head.complete, hidden=entry.hidden,
                               load_body=load_body, load_merges=load_merges, too_large=too_large))
    return RawBook(fmt, sheets, [], date1904=book.date1904)


def _head_grid(rows: dict[int, dict[int, object]], head_rows: int) -> pd.DataFrame:
    if not rows:
        return pd.DataFrame()
    height = min(head_rows, max(rows) + 1)
    width = max(max(cells) for cells in rows.values()) + 1 if rows else 0
    data = [[None] * width for _ in range(height)]
    for r, cells in rows.items():
        if r < height:
            for c, v in cells.items():
                if isinstance(v, str):
                    v = v.strip() or None
                data[r][c] = v
    return pd.DataFrame(data, dtype=object)


def _column_offset(df: pd.DataFrame, grid: pd.DataFrame, first: int, dimension) -> int:
    """calamine's frame starts at the first used column; the streamed head counts from column A.
    Find the shift by matching which cells are filled in the rows both have."""
    filled_cols = [c for c in grid.columns if grid[c].notna().any()]
    max_shift = min(filled_cols) if filled_cols else 0
    candidates = list(dict.fromkeys(([dimension[1]] if dimension else []) + list(range(max_shift + 1))))
    rows = [r for r in range(first, min(len(grid), first + len(df), first + 12))]
    if not rows:
        return candidates[0] if candidates else 0
    body_present = df.iloc[[r - first for r in rows]].notna().to_numpy()
    best, best_score = candidates[0], -1.0
    for off in candidates:
        head_present = np.zeros_like(body_present)
        for j in range(df.shape[1]):
            if j + off < grid.shape[1]:
                head_present[:, j] = grid.iloc[rows, j + off].notna().to_numpy()
        extra = grid.iloc[rows, : off].notna().to_numpy().sum() if off else 0
        score = (head_present == body_present).mean() - extra
        if score > best_score:
            best, best_score = off, score
    return best


def _load_typed(reader, name: str, first: int, n: int | None) -> pd.DataFrame:
    """Data rows with native types (one calamine parse). Mixed columns come back as text, and
    fastexcel writes their numbers with 9 decimals; those columns are re-read as floats to keep
    full precision (a second parse, only when such a value exists)."""
    import fastexcel

    # eager: one Arrow record batch straight from the reader, without the lazy sheet object in between
    kw = dict(header_row=None, skip_rows=first, n_rows=n, schema_sample_rows=None, whitespace_as_null=True,
              eager=True)
    try:
        df = reader.load_sheet(name, **kw).to_pandas(split_blocks=True)  # no copy into 2-D blocks
    except (KeyboardInterrupt, SystemExit, MemoryError):
        raise
    except BaseException:  # noqa: BLE001 - type combinations calamine cannot unify, Rust panics
        df = _guard(lambda: reader.load_sheet(name, dtypes="string", **kw).to_pandas(split_blocks=True))
    df.columns = range(df.shape[1])
    shortened = []
    for i in df.columns:
        col = df[i]
        if pd.api.types.is_string_dtype(col) and col.dtype != object:
            texts = text_array(col)
            # ".123456789" is the shortest such text: most text columns are ruled out by their length
            if (pc.max(pc.utf8_length(texts)).as_py() or 0) >= 10 and regex_hits(texts, _NINE_DECIMALS).any():
                shortened.append(i)
    if shortened:
        try:
            floats = reader.load_sheet(name, dtypes={i: "float" for i in shortened}, use_columns=shortened,
                                       **kw).to_pandas()
            floats.columns = shortened
            for i in shortened:
                is_num = df[i].str.fullmatch(PLAIN_NUMBER.pattern.strip("^$"), na=False) & floats[i].notna()
                df[i] = df[i].where(~is_num, floats[i].map(repr, na_action="ignore"))
        except (KeyboardInterrupt, SystemExit, MemoryError):
            raise
        except BaseException:  # noqa: BLE001
            pass
    _ = fastexcel
    return df


_NINE_DECIMALS = r"^-?\d*\.\d{9}$"
