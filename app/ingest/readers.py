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

import pandas as pd

from app.config import Settings
from app.ingest.errors import IngestError
from app.ingest.raw import RawBook, RawSheet
from app.ingest.textfiles import read_text

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

PLAIN_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$")


# --- format sniffing ------------------------------------------------------------------------


def sniff_format(path: Path) -> str:
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
        return _sniff_zip(path, ext)
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


def _sniff_zip(path: Path, ext: str) -> str:
    try:
        with zipfile.ZipFile(path) as zf:
            names = {n.replace("\\", "/").lstrip("/") for n in zf.namelist()}
    except (zipfile.BadZipFile, OSError) as exc:
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


def _looks_like_text(path: Path) -> bool:
    sample = path.read_bytes()[:4096]
    return b"\x00" not in sample or sample[:2] in (b"\xff\xfe", b"\xfe\xff")


def _encrypted() -> IngestError:
    return IngestError(
        "encrypted_file", "The workbook is protected with a password, so Verity cannot read it.",
        "Open it in Excel, remove the password (File > Info > Protect Workbook), save, and upload again.",
    )


# --- entry point ----------------------------------------------------------------------------


def read_book(path: Path, settings: Settings) -> RawBook:
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
    fmt = sniff_format(path)
    if fmt in {"csv", "tsv", "txt"}:
        return read_text(path, fmt, settings)
    return read_excel(path, fmt, settings)


# --- Excel and OpenDocument -----------------------------------------------------------------


def _wrap_excel_error(exc: BaseException) -> IngestError:
    text = str(exc)
    if "password" in text.lower() or "encrypt" in text.lower():
        return _encrypted()
    if "limit exceeded" in text.lower():
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
    except BaseException as exc:  # noqa: BLE001 - pyo3 PanicException derives from BaseException
        raise _wrap_excel_error(exc) from None


def read_excel(path: Path, fmt: str, settings: Settings) -> RawBook:
    import fastexcel

    reader = _guard(fastexcel.read_excel, str(path))
    names = _guard(lambda: list(reader.sheet_names))
    sheets, warnings = [], []
    for name in names:
        try:
            sheets.append(_read_sheet(reader, name, settings))
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


def _read_sheet(reader, name: str, settings: Settings) -> RawSheet:
    # skip_rows=0 keeps leading blank rows, so grid row i is sheet row i + 1.
    sheet = _guard(
        reader.load_sheet, name, header_row=None, skip_rows=0, dtypes="string",
        whitespace_as_null=True, n_rows=settings.max_rows + 1000,
    )
    too_large = None
    if sheet.total_height > settings.max_rows + 1000 or sheet.width > settings.max_columns:
        too_large = (
            f"sheet '{name}' has {sheet.total_height} rows and {sheet.width} columns; the limits are "
            f"{settings.max_rows} rows and {settings.max_columns} columns"
        )
        grid = pd.DataFrame()
    else:
        grid = _to_object_grid(_guard(sheet.to_pandas))

    def load_typed(first: int, n: int) -> pd.DataFrame | None:
        return _load_typed(reader, name, first, n, grid.shape[1])

    return RawSheet(name, grid, load_typed, too_large)


def _to_object_grid(df: pd.DataFrame) -> pd.DataFrame:
    df = df.astype(object)
    df.columns = range(df.shape[1])
    return df.where(df.notna(), None)


def _load_typed(reader, name: str, first: int, n: int, width: int) -> pd.DataFrame | None:
    """Re-read data rows with native types; None when fastexcel cannot (mixed dates, cell errors)."""
    try:
        kw = dict(header_row=None, skip_rows=first, n_rows=n, schema_sample_rows=None)
        df = reader.load_sheet(name, **kw).to_pandas()
        if df.shape != (n, width):
            return None
        df.columns = range(width)
        text_cols = [i for i in range(width) if not _is_native(df[i])]
        if text_cols:
            # Mixed columns fall back to strings with ~9 significant digits; recover full precision.
            as_float = reader.load_sheet(name, dtypes={i: "float" for i in text_cols}, **kw).to_pandas()
            as_float.columns = range(width)
            for i in text_cols:
                df[i] = _restore_precision(df[i], as_float[i])
        return df
    except (KeyboardInterrupt, SystemExit, MemoryError):
        raise
    except BaseException:  # noqa: BLE001 - includes Rust panics
        return None


def _is_native(col: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(col) or pd.api.types.is_datetime64_any_dtype(col)


def _restore_precision(text: pd.Series, floats: pd.Series) -> pd.Series:
    # Only decimals can have been shortened; text cells such as "007" must stay as typed.
    out = text.astype(object).where(text.notna(), None)
    for idx, value in text.items():
        if not (isinstance(value, str) and PLAIN_NUMBER.match(value.strip()) and pd.notna(floats[idx])):
            continue
        shown, full = float(value), float(floats[idx])
        if any(c in value for c in ".eE") and abs(shown - full) <= 1e-8 * max(1.0, abs(full)):
            out[idx] = repr(full)
    return out
