"""Find the table inside a sheet: the header row(s), the data rows, the real columns.

Spreadsheets made by people carry titles, blank spacer rows, group headers over two rows, merged
cells, notes and totals around the data; this module decides which rows and columns are the table.

It works in two steps so a big sheet is never scanned cell by cell in Python:

1. `detect_layout(head, merges)` looks only at the first rows of the sheet (`HEAD_ROWS`): the
   header row below any title/notes rows, a second header row (a group row such as "2024" merged
   over "Revenue | Cost" gives "2024 / Revenue", "2024 / Cost"), merged header cells filled, and
   unique, readable names.
2. `extract.extract_table(body, layout)` takes the data rows (read with native types) and,
   vectorised, drops blank rows and columns, fills vertically merged cells, and removes
   totals/subtotals rows and the notes under the table, reporting each in a warning.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

HEAD_ROWS = 64
HEADER_SCAN_ROWS = 30
# Values that read as numbers or dates are data, not column labels.
_NUMBERISH = re.compile(r"^[\s(+\-−]*[¥$€£]?\s*[\d.,]+\s*%?\)?$")
_DATEISH = re.compile(r"^\d{4}([-/.年]\d{1,2})([-/.月]\d{1,2}日?)?([ T]\d{1,2}:\d{2}(:\d{2})?)?$")
_YEAR = re.compile(r"^(19|20)\d{2}(\.0)?$")
MAX_MERGES = 20_000
_PLAIN_DATES = (datetime, date, time, timedelta)


@dataclass
class TableLayout:
    header_rows: list[int]  # 0-based sheet rows holding the column names (empty: no header)
    data_start: int  # 0-based sheet row of the first data row
    col_idx: list[int]  # sheet columns (positions in the grid) that are part of the table
    names: list[str]  # unique, non-empty column names, one per col_idx
    n_rows_estimate: int = 0  # data rows (exact when the whole sheet was seen)
    exact: bool = False
    warnings: list[str] = field(default_factory=list)

    @property
    def header_row(self) -> int | None:
        """1-based sheet row number where the column names start, as the contract reports it."""
        return None if not self.header_rows else self.header_rows[0] + 1

    @property
    def n_rows(self) -> int:
        return self.n_rows_estimate

    @property
    def n_cols(self) -> int:
        return len(self.col_idx)


def is_missing(value) -> bool:
    """None, NaN, NaT and pd.NA, as `pd.isna` says of one cell. Python's own cell types are
    answered without pandas (the early parse's layout runs before pandas is imported)."""
    if value is None:
        return True
    if isinstance(value, (str, bool, int)) or type(value) in _PLAIN_DATES:  # not subclasses: pd.NaT is one
        return False
    if isinstance(value, float):
        return math.isnan(value)
    import pandas as pd  # NaT, NA, numpy scalars: only a process that has pandas meets them

    return bool(pd.isna(value))


def cell_text(value) -> str | None:
    """A cell as the text a person sees; None for empty."""
    if is_missing(value):
        return None
    if isinstance(value, str):
        text = value.strip()
        return text or None
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if hasattr(value, "isoformat"):
        text = value.isoformat(sep=" ") if hasattr(value, "hour") else value.isoformat()
        return text[:-9] if text.endswith(" 00:00:00") else text
    return str(value)


def _is_label(text: str | None) -> bool:
    if not text:
        return False
    return not _NUMBERISH.match(text) and not _DATEISH.match(text)


def _label_count(cells: list) -> int:
    """Labels in a row; a run of distinct years (a wide 'Year, 2000, 2001, ...' header) counts too."""
    labels = sum(_is_label(v) for v in cells)
    years = [v for v in cells if v and _YEAR.match(v)]
    if len(years) >= 2 and len(set(years)) == len(years):
        labels += len(years)
    return labels


# --- step 1: layout from the first rows ----------------------------------------------------------


def detect_layout(
    head: pd.DataFrame,
    merges: list[tuple[int, int, int, int]] | None = None,
    total_rows: int | None = None,
    complete: bool = True,
) -> TableLayout:
    """`head`: the first sheet rows (index = 0-based sheet row, columns = sheet column positions)."""
    if head.empty:
        return TableLayout([], 0, [], [], 0, True)
    return layout_of_cells(
        head.to_numpy(dtype=object).tolist(), list(head.index), list(head.columns), merges, total_rows, complete
    )


def layout_of_cells(
    cells: list[list[Any]],
    rows: list[int],
    columns: list[int],
    merges: list[tuple[int, int, int, int]] | None = None,
    total_rows: int | None = None,
    complete: bool = True,
) -> TableLayout:
    """`detect_layout` on the head as plain rows of cells (`rows`: their 0-based sheet rows,
    `columns`: the sheet column of each position); needs no pandas."""
    if not rows or not columns:
        return TableLayout([], 0, [], [], 0, True)
    values = [[cell_text(v) for v in row] for row in cells]
    nonblank = [rows[i] for i in range(len(rows)) if any(v is not None for v in values[i])]
    if not nonblank:
        return TableLayout([], 0, [], [], 0, complete)
    pos = {r: i for i, r in enumerate(rows)}
    t = {r: list(values[pos[r]]) for r in nonblank[: HEADER_SCAN_ROWS + 50]}
    width = {r: sum(v is not None for v in cells) for r, cells in t.items()}
    merges = merges or []

    header = _find_header(t, width, nonblank)
    header_rows: list[int] = []
    if header is not None:
        header_rows = [header]
        up = _group_row_above(t, width, header, merges, columns)
        if up is not None:
            header_rows = [up, header]
        else:
            down = _second_header_row(t, width, header, nonblank, merges, columns)
            if down is not None:
                header_rows = [header, down]
    data_start = header_rows[-1] + 1 if header_rows else nonblank[0]

    col_pos = {c: j for j, c in enumerate(columns)}
    data_rows = [i for i, r in enumerate(rows) if r >= data_start]
    used = [
        c
        for c in columns
        if any(values[i][col_pos[c]] is not None for i in data_rows) or any(t[r][col_pos[c]] for r in header_rows)
    ]
    names = header_names(t, header_rows, used, col_pos, merges)
    n_rows = sum(1 for r in nonblank if r >= data_start)
    return TableLayout(header_rows, data_start, used, names, n_rows, complete)


def _find_header(t: dict, width: dict, nonblank: list[int]) -> int | None:
    """The first row that is mostly labels, about as wide as the rows below it, and followed by data."""
    scan = nonblank[:HEADER_SCAN_ROWS]
    for pos, r in enumerate(scan):
        below = [width[k] for k in nonblank[pos + 1 : pos + 21] if k in width]
        typical = sorted(below)[len(below) // 2] if below else width[r]
        labels = _label_count(t[r])
        # A title row has one cell over a wide table; a header covers most of the data's width.
        if width[r] >= max(1, 0.6 * typical) and labels >= 0.7 * width[r]:
            if width[r] == 1 and typical > 1:
                continue
            return r
        if labels < 0.5 * width[r] and width[r] >= 0.6 * typical:
            break  # reached data without seeing a header: the sheet has none
    return None


def _spans(merges, row: int) -> list[tuple[int, int, int, int]]:
    return [m for m in merges if m[0] <= row <= m[2] and m[3] > m[1]]


def _group_row_above(t, width, header, merges, columns) -> int | None:
    """A sparser row of labels right above the header, spread over it by merged cells ("2024" over
    "Revenue | Cost"): the upper half of a two-row header."""
    up = header - 1
    if up not in t or width[up] < 2 or width[up] >= width[header]:
        return None
    if _label_count(t[up]) < width[up]:
        return None
    # Each group label sits over the header: above a column name, or spread over some by a merge.
    cols = list(columns)
    over = 0
    for j, v in enumerate(t[up]):
        if not v:
            continue
        c = cols[j]
        span = next((m for m in merges if m[0] == up and m[1] == c), None)
        covered = range(j, j + 1) if span is None else [cols.index(x) for x in range(span[1], span[3] + 1) if x in cols]
        vertical = any(m[0] == up and m[1] == c and m[2] >= header for m in merges)
        if vertical or any(t[header][k] for k in covered):
            over += 1
    if over < max(2, 0.75 * width[up]):
        return None
    if _spans(merges, up):
        return up
    if merges:
        return None  # merge information is known and says this row spans nothing
    return up if _blank_right_of_labels(t[up], t[header]) else None


def _second_header_row(t, width, header, nonblank, merges, columns) -> int | None:
    """A row of labels right below the header that the header groups (the lower half)."""
    low = header + 1
    if low not in t or width[low] < 2 or low == nonblank[-1]:
        return None
    if _label_count(t[low]) < 0.8 * width[low]:
        return None
    grouped = bool(_spans(merges, header)) or (not merges and _blank_right_of_labels(t[header], t[low]))
    if not grouped:
        return None
    # Labels are not repeated below in their column; category values are.
    below = [r for r in nonblank if r > low][:20]
    repeats = sum(1 for j, v in enumerate(t[low]) if v and any(t[r][j] == v for r in below if r in t))
    return low if repeats <= 0.3 * width[low] else None


def _blank_right_of_labels(upper: list, lower: list) -> bool:
    """Each label in `upper` is followed by blank cells that have a label below them."""
    found = False
    for j, v in enumerate(upper):
        if v and j + 1 < len(upper) and upper[j + 1] is None and lower[j + 1]:
            found = True
    return found


def header_names(t: dict, header_rows: list[int], used: list, col_pos: dict, merges) -> list[str]:
    if not header_rows:
        return make_unique_names([None] * len(used), positions=list(used), default_prefix="Column")
    grid = {r: list(t[r]) for r in header_rows}
    # Merged header cells: the value of the top-left cell covers the whole range.
    for r0, c0, r1, c1 in merges[:MAX_MERGES]:
        if r0 in grid and c0 in col_pos:
            value = grid[r0][col_pos[c0]]
            for r in range(r0, r1 + 1):
                if r not in grid:
                    continue
                for c in range(c0, c1 + 1):
                    j = col_pos.get(c)
                    if j is not None and grid[r][j] is None and (r == r0 or len(header_rows) > 1):
                        grid[r][j] = value if r == r0 else None
    if len(header_rows) > 1 and not merges:
        # No merge information (xls, ods, csv): a group label covers the blank cells to its right.
        upper, lower = grid[header_rows[0]], grid[header_rows[-1]]
        last = None
        for j in range(len(upper)):
            if upper[j] is not None:
                last = upper[j]
            elif last is not None and lower[j] is not None:
                upper[j] = last
            else:
                last = None
    raw = []
    for c in used:
        parts: list[str] = []
        for r in header_rows:
            v = grid[r][col_pos[c]]
            if v and (not parts or parts[-1] != v):
                parts.append(v)
        raw.append(" / ".join(parts) if parts else None)  # understanding.text.MERGED_HEADER reads it back
    return make_unique_names(raw, positions=list(used), default_prefix="Unnamed")


def make_unique_names(raw: list, positions: list[int] | None = None, default_prefix: str = "Unnamed") -> list[str]:
    """Column names that are non-empty and unique: blanks become 'Unnamed 3', repeats 'x_2'."""
    positions = positions if positions is not None else list(range(len(raw)))
    names: list[str] = []
    seen: set[str] = set()
    for value, pos in zip(raw, positions):
        name = cell_text(value) or ""
        name = " ".join(name.split())
        name = name or f"{default_prefix} {pos + 1}"
        candidate, k = name, 2
        while candidate in seen:
            candidate, k = f"{name}_{k}", k + 1
        seen.add(candidate)
        names.append(candidate)
    return names
