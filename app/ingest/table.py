"""Find the table inside a raw sheet grid: the header row, the data rows, the real columns.

Spreadsheets made by people carry titles, blank spacer rows, notes and totals around the data;
this module decides which rows and columns are the table so the analysis sees only the data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

# Values that read as numbers or dates are data, not column labels.
_NUMBERISH = re.compile(r"^[\s(+\-−]*[¥$€£]?\s*[\d.,]+\s*%?\)?$")
_DATEISH = re.compile(r"^\d{4}([-/.年]\d{1,2})([-/.月]\d{1,2}日?)?([ T]\d{1,2}:\d{2}(:\d{2})?)?$")
_TOTAL = re.compile(r"^\s*(grand\s+)?(total|totals|sum|合计|总计|小计|總計|合計)\s*[:：]?\s*$", re.I)
_YEAR = re.compile(r"^(19|20)\d{2}(\.0)?$")
HEADER_SCAN_ROWS = 30


@dataclass
class TableLayout:
    header_idx: int | None      # grid row of the column names; None when the sheet has no header
    row_idx: list[int]          # grid rows that hold data (blank rows and totals excluded)
    col_idx: list[int]          # grid columns that are part of the table
    names: list[str]            # unique, non-empty column names, one per col_idx
    warnings: list[str] = field(default_factory=list)

    @property
    def header_row(self) -> int | None:
        """1-based sheet row number of the header, as the contract reports it."""
        return None if self.header_idx is None else self.header_idx + 1

    @property
    def n_rows(self) -> int:
        return len(self.row_idx)

    @property
    def n_cols(self) -> int:
        return len(self.col_idx)


def _blank(value) -> bool:
    return value is None or (not isinstance(value, str) and pd.isna(value))


def _is_label(value) -> bool:
    if _blank(value):
        return False
    text = str(value).strip()
    return bool(text) and not _NUMBERISH.match(text) and not _DATEISH.match(text)


def _label_count(cells: list) -> int:
    """Labels in a row; a run of distinct years (a wide 'Year, 2000, 2001, ...' header) counts too."""
    labels = sum(_is_label(v) for v in cells)
    years = [str(v).strip() for v in cells if not _blank(v) and _YEAR.match(str(v).strip())]
    if len(years) >= 2 and len(set(years)) == len(years):
        labels += len(years)
    return labels


def detect_layout(grid: pd.DataFrame) -> TableLayout:
    if grid.empty:
        return TableLayout(None, [], [], [])
    filled = grid.map(lambda v: not _blank(v)).to_numpy(dtype=bool)
    nonblank_rows = [i for i in range(len(grid)) if filled[i].any()]
    col_idx = [j for j in range(grid.shape[1]) if filled[:, j].any()]
    if not nonblank_rows or not col_idx:
        return TableLayout(None, [], [], [])

    header_idx = _find_header(grid, filled, nonblank_rows)
    start = nonblank_rows[0] if header_idx is None else header_idx + 1
    row_idx = [i for i in nonblank_rows if i >= start]
    # Columns that are blank in both header and data do not exist; titles above the header don't count.
    used = [j for j in col_idx if filled[row_idx, j].any() or (header_idx is not None and filled[header_idx, j])]
    warnings: list[str] = []
    row_idx = _drop_totals_row(grid, row_idx, used, warnings)
    names = make_unique_names(
        [grid.iat[header_idx, j] if header_idx is not None else None for j in used],
        positions=used,
        default_prefix="Unnamed" if header_idx is not None else "Column",
    )
    return TableLayout(header_idx, row_idx, used, names, warnings)


def _find_header(grid: pd.DataFrame, filled, nonblank_rows: list[int]) -> int | None:
    """The first row that is mostly labels, about as wide as the rows below it, and followed by data."""
    scan = nonblank_rows[:HEADER_SCAN_ROWS]
    widths = {i: int(filled[i].sum()) for i in nonblank_rows[: HEADER_SCAN_ROWS + 50]}
    for pos, i in enumerate(scan):
        below = [widths[k] for k in nonblank_rows[pos + 1 : pos + 21] if k in widths]
        typical = sorted(below)[len(below) // 2] if below else widths[i]
        labels = _label_count(list(grid.iloc[i]))
        # A title row has one cell over a wide table; a header covers most of the data's width.
        if widths[i] >= max(1, 0.6 * typical) and labels >= 0.7 * widths[i]:
            if widths[i] == 1 and typical > 1:
                continue
            return i
        if labels < 0.5 * widths[i] and widths[i] >= 0.6 * typical:
            break  # reached data without seeing a header: the sheet has none
    return None


def _drop_totals_row(grid: pd.DataFrame, row_idx: list[int], cols: list[int], warnings: list[str]) -> list[int]:
    if len(row_idx) < 3:
        return row_idx
    last = row_idx[-1]
    first_cell = next((grid.iat[last, j] for j in cols if not _blank(grid.iat[last, j])), None)
    if first_cell is not None and _TOTAL.match(str(first_cell)):
        warnings.append(f"row {last + 1} looks like a totals row and was excluded")
        return row_idx[:-1]
    return row_idx


def make_unique_names(raw: list, positions: list[int] | None = None, default_prefix: str = "Unnamed") -> list[str]:
    """Column names that are non-empty and unique: blanks become 'Unnamed 3', repeats 'x_2'."""
    positions = positions if positions is not None else list(range(len(raw)))
    names: list[str] = []
    seen: set[str] = set()
    for value, pos in zip(raw, positions):
        name = "" if _blank(value) else " ".join(str(value).split())
        if name.endswith(".0") and name[:-2].isdigit():
            name = name[:-2]  # a year typed as a number, e.g. 2024.0
        name = name or f"{default_prefix} {pos + 1}"
        candidate, k = name, 2
        while candidate in seen:
            candidate, k = f"{name}_{k}", k + 1
        seen.add(candidate)
        names.append(candidate)
    return names
