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
from app.ingest import early_parse
from app.ingest.early_parse import typed_options
from app.ingest.errors import IngestError
from app.ingest.raw import RawBook, RawSheet
from app.ingest.sniff import encrypted, sniff_format
from app.ingest.table import HEAD_ROWS
from app.ingest.textfiles import read_text
from app.ingest.textvalues import regex_hits, text_array
from app.ingest.warnings_text import warning
from app.ingest.xlsxstream import ROW_SLACK, head_cells

# fastexcel/calamine log every dtype fallback as a warning; our own cleaning log covers that.
for _logger in ("fastexcel", "calamine"):
    logging.getLogger(_logger).setLevel(logging.ERROR)

PLAIN_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$")


# --- entry point ----------------------------------------------------------------------------


def read_book(path: Path, settings: Settings, head_rows: int = HEAD_ROWS) -> RawBook:
    """Sheets with their first rows and a loader for the rest: nothing big is parsed yet."""
    if not path.is_file():
        raise IngestError(
            "file_not_found",
            f"The file '{path.name}' could not be found.",
            "Check the file name and folder.",
            f"找不到文件“{path.name}”。",
            "请检查文件名和所在的文件夹。",
        )
    size = path.stat().st_size
    if size == 0:
        raise IngestError(
            "empty_file",
            "The file is empty.",
            "Check that the upload finished.",
            "文件是空的。",
            "请确认文件已经完整上传。",
        )
    if size > settings.max_upload_mb * 1024 * 1024:
        raise IngestError(
            "too_large",
            f"The file is {size / 1048576:.0f} MB; the limit is {settings.max_upload_mb} MB.",
            "Split the file or remove columns and rows you do not need.",
            f"这个文件有 {size / 1048576:.0f} MB，超过了 {settings.max_upload_mb} MB 的上限。",
            "请把文件拆开，或删掉用不到的行和列。",
        )
    fmt = sniff_format(path, settings)
    if fmt in {"csv", "tsv", "txt"}:
        return read_text(path, fmt, settings, head_rows)
    return read_excel(path, fmt, settings, head_rows)


# --- Excel and OpenDocument -----------------------------------------------------------------


def _wrap_excel_error(exc: BaseException) -> IngestError:
    text = str(exc)
    if "password" in text.lower() or "encrypt" in text.lower():
        return encrypted()
    if "limit exceeded" in text.lower() or "too large" in text.lower():
        return IngestError(
            "too_large",
            "The workbook declares more cells than Verity can safely read.",
            "Open it in Excel, delete unused rows and columns, and save again.",
            "这个工作簿声明的单元格数量超出了 Verity 能安全读取的范围。",
            "请用 Excel 打开，删掉用不到的行和列，再重新保存。",
        )
    return IngestError(
        "corrupt_file",
        "The workbook is damaged or uses a structure Verity cannot read.",
        "Open it in Excel or LibreOffice and save it again as .xlsx.",
        "这个工作簿已损坏，或用了 Verity 读不了的结构。",
        "请用 Excel 或 WPS 打开，重新另存为 .xlsx 文件。",
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


def _cells_limit(name: str, rows: int, cols: int, settings: Settings) -> IngestError | None:
    """Why the sheet is beyond the limits (raised only if it is the sheet chosen), or None."""
    hint, hint_zh = "Split the data or remove unused rows and columns.", "请把数据拆开，或删掉用不到的行和列。"
    if rows > settings.max_rows + ROW_SLACK or cols > settings.max_columns:
        return IngestError(
            "too_large",
            f"The sheet '{name}' has {rows:,} rows and {cols:,} columns; the limits are "
            f"{settings.max_rows:,} rows and {settings.max_columns:,} columns.",
            hint,
            f"工作表“{name}”有 {rows:,} 行、{cols:,} 列，超过了上限（最多 {settings.max_rows:,} 行、"
            f"{settings.max_columns:,} 列）。",
            hint_zh,
        )
    if rows * cols > settings.max_cells:
        return IngestError(
            "too_large",
            f"The sheet '{name}' has {rows:,} rows x {cols:,} columns = {rows * cols:,} cells; the "
            f"limit is {settings.max_cells:,} cells.",
            hint,
            f"工作表“{name}”有 {rows:,} 行 × {cols:,} 列，共 {rows * cols:,} 个单元格，超过了 "
            f"{settings.max_cells:,} 个单元格的上限。",
            hint_zh,
        )
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
            warnings.append(warning("unreadable_sheet", sheet=name))
    if not sheets and warnings:
        raise IngestError(
            "corrupt_file",
            "None of the sheets in this workbook could be read.",
            "Open it in Excel or LibreOffice and save it again as .xlsx.",
            "这个工作簿里的工作表一个都读不出来。",
            "请用 Excel 或 WPS 打开，重新另存为 .xlsx 文件。",
        )
    return RawBook(fmt, sheets, warnings)


def _read_sheet(reader, name: str, settings: Settings, head_rows: int) -> RawSheet:
    """Any format calamine reads: the head as text (one parse), typed data rows on demand."""
    sheet = _guard(
        reader.load_sheet,
        name,
        header_row=None,
        skip_rows=0,
        dtypes="string",
        whitespace_as_null=True,
        n_rows=head_rows,
    )
    total, width = sheet.total_height, sheet.width
    hidden = str(getattr(sheet, "visible", "visible")).lower() != "visible"
    too_large = _cells_limit(name, total, width, settings)
    head = pd.DataFrame() if too_large else _to_object_grid(_guard(sheet.to_pandas))

    def load_body(first: int, n: int | None) -> pd.DataFrame:
        return _load_typed(reader, name, first, n)

    return RawSheet(
        name, head, total, width, complete=total <= head_rows, hidden=hidden, load_body=load_body, too_large=too_large
    )


def _to_object_grid(df: pd.DataFrame) -> pd.DataFrame:
    df = df.astype(object)
    df.columns = range(df.shape[1])
    df.index = range(len(df))
    return df.where(df.notna(), None)


def _read_xlsx_streaming(
    path: Path, fmt: str, reader, names: list[str], settings: Settings, head_rows: int
) -> RawBook | None:
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
        if too_large is None and not head.complete:
            # Row numbers are not bounded by the bytes (`<row r="104800013">` is 20 of them): look
            # for the first row past the limit, and stop there.
            beyond = book.row_beyond(entry, settings.max_rows + ROW_SLACK)
            if beyond is not None:
                n_rows = beyond
                too_large = _cells_limit(entry.name, n_rows, n_cols, settings)
        state = {"offset": None}

        def load_body(
            first: int, n: int | None, _name=entry.name, _grid=grid, _dim=head.dimension, _state=state
        ) -> pd.DataFrame:
            df = _load_typed(reader, _name, first, n, early=early_parse.claim(path, _name, first, n))
            if _state["offset"] is None:
                _state["offset"] = _column_offset(df, _grid, first, _dim)
            df.columns = [c + _state["offset"] for c in range(df.shape[1])]
            return df

        def load_merges(_entry=entry) -> list:
            return book.merges(_entry)

        sheets.append(
            RawSheet(
                entry.name,
                grid,
                n_rows,
                n_cols,
                complete=head.complete,
                hidden=entry.hidden,
                load_body=load_body,
                load_merges=load_merges,
                too_large=too_large,
            )
        )
    return RawBook(fmt, sheets, [], date1904=book.date1904)


def _head_grid(rows: dict[int, dict[int, object]], head_rows: int) -> pd.DataFrame:
    cells = head_cells(rows, head_rows)
    return pd.DataFrame(cells, dtype=object) if cells else pd.DataFrame()


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
        extra = grid.iloc[rows, :off].notna().to_numpy().sum() if off else 0
        score = (head_present == body_present).mean() - extra
        if score > best_score:
            best, best_score = off, score
    return best


def _load_typed(reader, name: str, first: int, n: int | None, early=None) -> pd.DataFrame:
    """Data rows with native types (one calamine parse, or the early parse's batch when it read
    these rows: app.ingest.early_parse). Mixed columns come back as text, and fastexcel writes
    their numbers with 9 decimals; those columns are re-read as floats to keep full precision (a
    second parse, only when such a value exists)."""
    import fastexcel

    kw = typed_options(first, n)
    try:
        batch = early if early is not None else reader.load_sheet(name, **kw)
        df = batch.to_pandas(split_blocks=True)  # no copy into 2-D blocks
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
            floats = reader.load_sheet(
                name, dtypes=dict.fromkeys(shortened, "float"), use_columns=shortened, **kw
            ).to_pandas()
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
