"""Public ingestion API: file -> cleaned, typed table + the contract's `inspect` description.

table = load_table("sales.xlsx")          # LoadedTable
table.frame                               # real values, typed
table.info                                # inspect --json without "preview"
table.preview(20)                         # masked, JSON-safe rows
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from app.config import Settings, get_settings
from app.ingest import progress
from app.ingest.errors import IngestError
from app.ingest.extract import TextNeeded, extract_table
from app.ingest.identifiers import is_identifier_name
from app.ingest.pii import detect_injection, detect_pii, mask_frame
from app.ingest.raw import RawSheet
from app.ingest.readers import read_book
from app.ingest.table import HEAD_ROWS, TableLayout, detect_layout
from app.ingest.textvalues import text_array
from app.ingest.types import infer_and_convert
from app.ingest.warnings_text import warning

# Columns asked whether they never repeat before rows are hashed for duplicates (IDs come first).
UNIQUE_KEY_PROBES = 3


@dataclass
class LoadedTable:
    frame: pd.DataFrame
    info: dict
    pii: dict[str, str] = field(default_factory=dict)

    def preview(self, rows: int = 20) -> list[dict]:
        """First rows with personal data masked, as JSON-safe dicts keyed by column name."""
        masked = mask_frame(self.frame.head(max(0, rows)), self.pii)
        return [
            {name: json_safe(value) for name, value in zip(masked.columns, row)}
            for row in masked.itertuples(index=False, name=None)
        ]


def load_table(path: str | Path, sheet: str | None = None, settings: Settings | None = None) -> LoadedTable:
    path = Path(path)
    settings = settings or get_settings()
    deadline = time.monotonic() + settings.parse_timeout_s
    progress.report("opening", 0, force=True)
    book = read_book(path, settings)
    layouts = [(raw, _layout(raw)) for raw in book.sheets]
    raw, layout = _select_sheet(layouts, sheet, path)
    _check_limits(raw, layout, settings)
    progress.report("rows", 0, force=True)
    if raw.load_merges is not None and raw.merges_found is None:
        # A big sheet: its merged ranges sit after the cell data, so scan for them (zlib, which
        # releases the GIL) while calamine parses the rows; redo the layout if they change it.
        readings: dict = {}
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(_merges, raw)
            body = _body(raw, layout)
            merges = pending.result()
        if merges:
            better = detect_layout(raw.head, merges, raw.n_rows, raw.complete)
            better.n_rows_estimate = layout.n_rows_estimate
            if better.data_start != layout.data_start:
                body = _body(raw, better)
            layouts = [(r, better if r is raw else lay) for r, lay in layouts]
            layout = better
    else:
        merges = _merges(raw)
        body, readings = _typed_body(raw, layout)
    _check_deadline(deadline, settings)
    progress.report("columns", len(body), force=True)
    try:
        extracted = extract_table(body, layout, merges, readings)
    except TextNeeded:  # a rule needs a typed cell's text: the rows again, all as text
        del body
        extracted = extract_table(_body(raw, layout), layout, merges)
    else:
        del body
    rows = len(extracted.frame)
    progress.report("types", rows, force=True)
    frame, types, cleaning = infer_and_convert(
        extracted.frame,
        date1904=book.date1904,
        on_column=lambda done: progress.report("types", rows, done),
        readings=extracted.readings,
    )
    _check_deadline(deadline, settings)
    progress.report("checks", rows, force=True)
    layout.n_rows_estimate, layout.exact = len(frame), True
    return _assemble(path, book, layouts, raw, layout, frame, types, extracted.cleaning + cleaning, extracted.warnings)


def preview_table(path: str | Path, sheet: str | None = None, rows: int = 20, settings: Settings | None = None) -> dict:
    """The inspect-json of the first `rows` data rows, read without parsing the whole sheet.

    For .xlsx/.xlsm only the first rows of the sheet XML are streamed (a 500k-row workbook answers
    in milliseconds); other formats are small enough that a full read is used. Types and cleaning
    are inferred from these rows only, so they can differ from the full read: the answer carries
    `"partial": true` and `rows` is the sheet's row count from its dimension (an estimate that may
    include totals or notes rows). The web shows this first and replaces it by `inspect_file`."""
    path = Path(path)
    settings = settings or get_settings()
    head_rows = max(HEAD_ROWS, rows + 40)
    book = read_book(path, settings, head_rows=head_rows)
    layouts = [(raw, _layout(raw)) for raw in book.sheets]
    raw, layout = _select_sheet(layouts, sheet, path)
    if raw.load_merges is None or raw.complete:
        table = load_table(path, sheet=raw.name, settings=settings)
        return {**table.info, "preview": table.preview(rows), "partial": False}
    _check_limits(raw, layout, settings)
    # Merged ranges are written after all the cells, so finding them means inflating the whole
    # sheet (~0.5 s per 100k rows); a preview of a big sheet does without (its header names then
    # come from the blank-cell rule) and the full read has them.
    big = raw.n_rows * max(1, raw.n_cols) > 400_000
    merges = [] if big else _merges(raw)
    if merges:
        layout = detect_layout(raw.head, merges, raw.n_rows, raw.complete)
    body = raw.head.iloc[layout.data_start :].reset_index(drop=True)
    extracted = extract_table(body, layout, merges)
    frame = extracted.frame.head(rows)
    frame, types, cleaning = infer_and_convert(frame, date1904=book.date1904)
    layout.n_rows_estimate = max(len(frame), raw.n_rows - layout.data_start)
    table = _assemble(path, book, layouts, raw, layout, frame, types, extracted.cleaning + cleaning, extracted.warnings)
    info = {**table.info, "rows": layout.n_rows_estimate}
    return {**info, "preview": table.preview(rows), "partial": True}


def inspect_file(
    path: str | Path, sheet: str | None = None, rows: int = 20, settings: Settings | None = None, loader=None
) -> dict:
    """The contract's `inspect --json`; `loader` reads the table (default `load_table`; the CLI
    passes `bounded.load_table_bounded`)."""
    table = (loader or load_table)(path, sheet=sheet, settings=settings)
    return {**table.info, "preview": table.preview(rows)}


def _layout(raw: RawSheet) -> TableLayout:
    if raw.too_large:
        return TableLayout([], 0, list(range(raw.n_cols)), [], raw.n_rows, False)
    merges = None
    if raw.load_merges is not None and raw.complete:
        merges = _merges(raw)  # the whole sheet is in the head: its merged ranges cost nothing
    layout = detect_layout(raw.head, merges, raw.n_rows, raw.complete)
    if not raw.complete:
        layout.n_rows_estimate = max(layout.n_rows_estimate, raw.n_rows - layout.data_start)
    return layout


def _merges(raw: RawSheet) -> list:
    if raw.load_merges is None:
        return []
    cached = raw.merges_found
    if cached is None:
        try:
            cached = raw.load_merges()
        except Exception:  # noqa: BLE001 - merged cells are a nicety; the table reads without them
            cached = []
        raw.merges_found = cached
    return cached


def _body(raw: RawSheet, layout: TableLayout) -> pd.DataFrame:
    if raw.complete or raw.load_body is None:
        body = raw.head.iloc[layout.data_start :]
        if raw.load_body is None or raw.head.empty:
            return body.reset_index(drop=True)
    body = raw.load_body(layout.data_start, None)
    return body


def _typed_body(raw: RawSheet, layout: TableLayout) -> tuple[pd.DataFrame, dict]:
    """The data rows, a text file's number and date columns typed as they are read (columns the
    header names as identifiers stay text, as types.convert_column keeps them), and how each typed
    column was read; other sheets' rows as `_body` gives them."""
    if raw.load_typed_body is None or raw.head.empty:
        return _body(raw, layout), {}
    may_type = {c for c, name in zip(layout.col_idx, layout.names) if not is_identifier_name(name)}
    return raw.load_typed_body(layout.data_start, may_type)


def _check_limits(raw: RawSheet, layout: TableLayout, settings: Settings) -> None:
    if raw.too_large:
        raise raw.too_large
    if layout.n_rows > settings.max_rows or layout.n_cols > settings.max_columns:
        raise IngestError(
            "too_large",
            f"The table has {layout.n_rows} rows and {layout.n_cols} columns; the limits are "
            f"{settings.max_rows} rows and {settings.max_columns} columns.",
            "Split the data or remove unused rows and columns.",
            f"这张表有 {layout.n_rows} 行、{layout.n_cols} 列，超过了上限（最多 {settings.max_rows} 行、"
            f"{settings.max_columns} 列）。",
            "请把数据拆开，或删掉用不到的行和列。",
        )


def _check_deadline(deadline: float, settings: Settings) -> None:
    if time.monotonic() > deadline:
        raise IngestError(
            "too_large",
            f"Reading this file took longer than {settings.parse_timeout_s:g} seconds.",
            "Split the file or remove the sheets, rows and columns you do not need.",
            f"读取这个文件用了超过 {settings.parse_timeout_s:g} 秒，时间太长了。",
            "请把文件拆开，或删掉用不到的工作表、行和列。",
        )


def duplicate_rows(frame: pd.DataFrame) -> int:
    """Rows that repeat an earlier row in every column. Rows are hashed first (a tenth of the time of
    `DataFrame.duplicated` on a million rows); only rows whose hash repeats are compared exactly."""
    if len(frame) < 2 or len(frame.columns) == 0:
        return 0
    if any(_all_distinct(frame[name]) for name in frame.columns[:UNIQUE_KEY_PROBES]):
        return 0  # an order number or ID column that never repeats: no two rows can be equal
    try:
        hashes = pd.util.hash_pandas_object(frame, index=False)
    except TypeError:  # a cell pandas cannot hash (never from the readers): compare directly
        return int(frame.astype(str).duplicated().sum())
    candidates = hashes.duplicated(keep=False)
    return int(frame[candidates.to_numpy()].duplicated().sum()) if candidates.any() else 0


def _all_distinct(col: pd.Series) -> bool:
    """No value repeats in this column, missing counting as a value (as `duplicated` counts it).
    Only text and integer columns are asked (a hash of each value, a few milliseconds); float
    columns are not, since NaN's equality differs between the two."""
    if not (pd.api.types.is_string_dtype(col) or pd.api.types.is_integer_dtype(col)) or col.dtype == object:
        return False
    if _strictly_increasing(col):
        return True  # order numbers as exported, in order: each above the last, so none repeats
    return bool(col.is_unique)  # nunique(dropna=False) == len: two missing cells are a repeat


def _strictly_increasing(col: pd.Series) -> bool:
    """Every value above the one before (text compared byte by byte), none missing: one pass, where
    hashing a million values costs ten times as much."""
    if len(col) < 2 or col.hasnans:
        return False
    if pd.api.types.is_integer_dtype(col):
        values = col.to_numpy()
        return bool((values[1:] > values[:-1]).all())
    texts = text_array(col)
    return bool(pc.all(pc.less(texts.slice(0, len(texts) - 1), texts.slice(1))).as_py())


def _assemble(path, book, layouts, raw, layout, frame, types, cleaning, warnings) -> LoadedTable:
    pii = detect_pii(frame)
    repeated = duplicate_rows(frame)
    if repeated:  # kept: two equal orders may be real, but a non-expert should know they are there
        cleaning = list(cleaning) + [
            {"column": None, "action": "rows that repeat an earlier row exactly (kept)", "count": repeated}
        ]
    warnings = list(book.warnings) + list(layout.warnings) + list(warnings) + detect_injection(frame)
    # A yes/no column's own words travel with its column (answers show 是/否, not True/False).
    sheet_words = {e["column"]: e["words"] for e in cleaning if e.get("words")}
    cleaning = [{k: v for k, v in e.items() if k != "words"} for e in cleaning]
    if raw.hidden:
        warnings.insert(0, warning("hidden_sheet", sheet=raw.name))
    info = {
        "file": path.name,
        "format": book.format,
        "sheets": [
            {
                "name": r.name,
                "rows": (layout.n_rows if r is raw else lay.n_rows),
                "columns": (len(frame.columns) if r is raw else lay.n_cols),
                "hidden": bool(r.hidden),
            }
            for r, lay in layouts
        ],
        "selected_sheet": raw.name,
        "header_row": layout.header_row,
        "header_rows": [r + 1 for r in layout.header_rows],
        "rows": int(len(frame)),
        "columns": [
            {"name": name, "type": types[name], "missing": int(frame[name].isna().sum()), "pii": pii.get(name)}
            | ({"words": sheet_words[name]} if name in sheet_words and types[name] == "boolean" else {})
            for name in frame.columns
        ],
        "cleaning": cleaning,
        "warnings": warnings,
    }
    return LoadedTable(frame=frame, info=info, pii=pii)


def _select_sheet(layouts: list[tuple[RawSheet, TableLayout]], sheet: str | None, path: Path):
    names = [raw.name for raw, _ in layouts]
    if sheet is not None:
        for raw, layout in layouts:
            if raw.name == sheet:
                if not raw.too_large and (layout.n_cols == 0 or layout.n_rows == 0):
                    raise _no_table(
                        f"The sheet '{sheet}' has no table with data rows.",
                        f"工作表“{sheet}”里没有带数据行的表格。",
                        names,
                    )
                return raw, layout
        raise _no_table(
            f"There is no sheet named '{sheet}' in {path.name}.", f"{path.name} 里没有名为“{sheet}”的工作表。", names
        )
    # A sheet flagged too large has no grid, but it is still the user's biggest table.
    candidates = [(r, lay) for r, lay in layouts if (lay.n_rows and lay.n_cols) or r.too_large]
    if not candidates:
        raise _no_table(
            f"No table with data was found in {path.name}.", f"在 {path.name} 里没有找到带数据的表格。", names
        )
    # The largest table, hidden or not (a hidden sheet often holds the data behind a report); the
    # sheet list says which sheets are hidden and a warning says so when a hidden one is chosen.
    return max(candidates, key=lambda rl: (bool(rl[0].too_large), rl[1].n_rows * rl[1].n_cols))


def _no_table(message: str, message_zh: str, names: list[str]) -> IngestError:
    listed = ", ".join(f"'{n}'" for n in names) or "none"
    listed_zh = "、".join(f"“{n}”" for n in names) or "无"
    return IngestError(
        "no_table_found", message, f"Sheets in this file: {listed}.", message_zh, f"这个文件里的工作表：{listed_zh}。"
    )


def json_safe(value):
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) or math.isinf(value) else float(value)
    if isinstance(value, (pd.Timestamp, datetime)):
        if value.hour == value.minute == value.second == value.microsecond == 0:
            return value.date().isoformat()
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, pd.Timedelta):
        return str(value)
    return str(value)


# --- working copy -------------------------------------------------------------------------------


def save_working_copy(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write the cleaned table as Parquet; the uploaded original is never modified (SPEC §7)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(path, engine="pyarrow", index=False)
    return path


def read_working_copy(path: str | Path) -> pd.DataFrame:
    return pd.read_parquet(Path(path), engine="pyarrow")
