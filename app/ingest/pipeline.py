"""Public ingestion API: file -> cleaned, typed table + the contract's `inspect` description.

    table = load_table("sales.xlsx")          # LoadedTable
    table.frame                               # real values, typed
    table.info                                # inspect --json without "preview"
    table.preview(20)                         # masked, JSON-safe rows
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from app.config import Settings, get_settings
from app.ingest.errors import IngestError
from app.ingest.pii import detect_injection, detect_pii, mask_frame
from app.ingest.readers import RawSheet, read_book
from app.ingest.table import TableLayout, detect_layout
from app.ingest.types import infer_and_convert


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
    book = read_book(path, settings)
    layouts = [(raw, detect_layout(raw.grid)) for raw in book.sheets]
    raw, layout = _select_sheet(layouts, sheet, path)
    if raw.too_large:
        raise IngestError("too_large", f"The {raw.too_large}.", "Split the data or remove unused rows and columns.")
    if layout.n_rows > settings.max_rows or layout.n_cols > settings.max_columns:
        raise IngestError(
            "too_large",
            f"The table has {layout.n_rows} rows and {layout.n_cols} columns; the limits are "
            f"{settings.max_rows} rows and {settings.max_columns} columns.",
            "Split the data or remove unused rows and columns.",
        )

    frame = _extract(raw, layout)
    frame, types, cleaning = infer_and_convert(frame)
    pii = detect_pii(frame)
    warnings = list(book.warnings) + layout.warnings + detect_injection(frame)
    info = {
        "file": path.name,
        "format": book.format,
        "sheets": [{"name": r.name, "rows": lay.n_rows, "columns": lay.n_cols} for r, lay in layouts],
        "selected_sheet": raw.name,
        "header_row": layout.header_row,
        "rows": int(len(frame)),
        "columns": [
            {"name": name, "type": types[name], "missing": int(frame[name].isna().sum()), "pii": pii.get(name)}
            for name in frame.columns
        ],
        "cleaning": cleaning,
        "warnings": warnings,
    }
    return LoadedTable(frame=frame, info=info, pii=pii)


def inspect_file(path: str | Path, sheet: str | None = None, rows: int = 20, settings: Settings | None = None) -> dict:
    table = load_table(path, sheet=sheet, settings=settings)
    return {**table.info, "preview": table.preview(rows)}


def _select_sheet(layouts: list[tuple[RawSheet, TableLayout]], sheet: str | None, path: Path):
    names = [raw.name for raw, _ in layouts]
    if sheet is not None:
        for raw, layout in layouts:
            if raw.name == sheet:
                if layout.n_cols == 0 or layout.n_rows == 0:
                    raise _no_table(f"The sheet '{sheet}' has no table with data rows.", names)
                return raw, layout
        raise _no_table(f"There is no sheet named '{sheet}' in {path.name}.", names)
    # A sheet flagged too large has no grid, but it is still the user's biggest table.
    candidates = [(r, lay) for r, lay in layouts if (lay.n_rows and lay.n_cols) or r.too_large]
    if not candidates:
        raise _no_table(f"No table with data was found in {path.name}.", names)
    return max(candidates, key=lambda rl: (bool(rl[0].too_large), rl[1].n_rows * rl[1].n_cols))


def _no_table(message: str, names: list[str]) -> IngestError:
    listed = ", ".join(f"'{n}'" for n in names) or "none"
    return IngestError("no_table_found", message, f"Sheets in this file: {listed}.")


def _extract(raw: RawSheet, layout: TableLayout) -> pd.DataFrame:
    """The table's cells: natively typed when the reader can re-read the rows, else the text grid."""
    first, last = layout.row_idx[0], layout.row_idx[-1]
    typed = raw.load_typed(first, last - first + 1) if raw.load_typed else None
    if typed is not None:
        rows = [i - first for i in layout.row_idx]
        part = typed.iloc[rows, layout.col_idx]
    else:
        part = raw.grid.iloc[layout.row_idx, layout.col_idx]
    part = part.reset_index(drop=True)
    part.columns = layout.names
    return part


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
