"""Step 2 of finding the table (table.py has step 1, the layout): the data rows, vectorised.

Blank rows and columns are dropped, vertically merged cells filled, and totals/subtotals rows
(合计/小计/总计/Total/Subtotal) and the notes under the table removed, each reported in a warning.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from app.ingest.table import MAX_MERGES, TableLayout, cell_text, is_missing
from app.ingest.textcolumns import TextReading
from app.ingest.textvalues import any_cell_may_match, regex_hits, text_array
from app.ingest.warnings_text import warning

# A totals/subtotals label: "Total", "Grand total", "Subtotal", "合计", "华东小计", "总计：" ...
TOTAL_PATTERN = (
    r"^\s*(?:(?:grand|sub)[\s\-]?)?(?:total|totals|sum)\b.{0,20}$"
    r"|^.{0,12}(?:合计|总计|小计|總計|合計|小計|共计|汇总)\s*[:：]?.{0,12}$"
)
# What every match of TOTAL_PATTERN holds (a column without any of these needs no search per cell).
TOTAL_WORDS = "(?i)total|sum|合计|总计|小计|總計|合計|小計|共计|汇总"
_NOTE_START = re.compile(
    r"^\s*(注|备注|说明|附注|数据来源|来源|资料来源|制表|填表|审核|单位[:：]|note|notes|source|"
    r"prepared|\*|※|\(\d\)|（\d）|\d[.、)]\s)",
    re.I,
)


# The attribute a reader sets on a body whose text cells are trimmed and whose blank cells are missing.
TRIMMED = "verity_trimmed"


class TextNeeded(Exception):
    """A rule needs the text of a cell that the typed pass read as a number or a date (a short row
    under the table, a totals label after a number): the caller reads the body again as text."""


@dataclass
class Extracted:
    frame: pd.DataFrame
    sheet_rows: np.ndarray  # 1-based sheet row of each frame row
    warnings: list[str]
    cleaning: list[dict]
    # columns the text reader typed while reading, by name: how (textcolumns.TextReading), for the kept rows
    readings: dict[str, TextReading] = field(default_factory=dict)


def extract_table(
    body: pd.DataFrame, layout: TableLayout, merges=None, readings: Mapping[int, TextReading] | None = None
) -> Extracted:
    """`body`: the sheet rows from `layout.data_start` on (index 0 = that row), columns = sheet
    column positions. Returns the table with blank rows, totals and notes removed. `readings`: the
    columns a text file's reader typed (by position); raises TextNeeded when a rule needs the text
    of one of their cells."""
    readings = dict(readings or {})
    typed = set(readings)
    warnings: list[str] = []
    cleaning: list[dict] = []
    # A text file's cells come trimmed, blank ones missing (textfiles): nothing left to trim or test.
    trimmed = bool(body.attrs.get(TRIMMED))
    body = body.reset_index(drop=True)
    # Which cells hold something; for a text file's body, whose blank cells are missing, asked of
    # each column when needed (a frame of 20 million flags was the peak of a million-row read).
    present = None if trimmed else _present(body)
    cols, names = _columns(body, layout, present)
    if cols != list(body.columns):
        body = body.reindex(columns=cols)
        if present is not None:
            present = present.reindex(columns=cols, fill_value=False)

    if merges:
        if present is None:
            present = body.notna()
        filled = _fill_vertical_merges(body, present, layout.data_start, merges)
        for c, n in filled.items():
            cleaning.append(
                {
                    "column": names[c],
                    "action": "filled merged cells",
                    "count": n,
                    "message": f"{names[c]}: {n:,} cells of merged ranges filled with the merged value",
                }
            )
        if filled:
            present = _present(body)

    keep = _any_present(body) if present is None else present.any(axis=1).to_numpy().copy()
    blank = ~keep
    sheet_rows = np.arange(len(body)) + layout.data_start + 1

    totals = _totals_mask(body, cols[:3], trimmed) & keep
    if totals.any():
        idx = np.flatnonzero(totals)
        labels = _first_text(body.iloc[idx], cols[:3], typed)
        for i, label in list(zip(idx, labels))[:5]:
            warnings.append(warning("totals_row", row=sheet_rows[i], label=label))
        if len(idx) > 5:
            warnings.append(warning("more_totals_rows", count=len(idx) - 5))
        keep &= ~totals

    keep &= ~_exclude_averages(body, cols[:3], keep, sheet_rows, warnings, cleaning, trimmed, readings)

    notes = _trailing_notes(body, present, keep, len(cols), typed)
    if notes:
        first_note = notes[0]
        label = _first_text(body.iloc[[first_note]], cols)[0]
        warnings.append(
            warning("note_row", row=sheet_rows[first_note], label=_short(label))
            if len(notes) == 1
            else warning("note_rows", first=sheet_rows[notes[0]], last=sheet_rows[notes[-1]], label=_short(label))
        )
        keep[notes] = False

    if keep.any():
        last = int(np.flatnonzero(keep)[-1])
        inner_blank = int(blank[: last + 1].sum())
        if inner_blank:
            warnings.insert(0, warning("blank_rows", count=inner_blank) if inner_blank > 1 else warning("blank_row"))
    everything = bool(keep.all())
    frame = (body if everything else body.loc[keep]).reset_index(drop=True)
    frame.columns = [names[c] for c in cols]
    kept_readings = {
        names[c]: r if everything or r.separated is None else replace(r, separated=r.separated[keep])
        for c, r in readings.items()
        if c in names
    }
    return Extracted(frame, sheet_rows[keep], warnings, cleaning, kept_readings)


def _columns(body: pd.DataFrame, layout: TableLayout, present: pd.DataFrame | None) -> tuple[list, dict]:
    """The table's columns, those the header names plus any that only have data further down
    ("Unnamed 7"), and their names by position."""
    extra = [
        c
        for c in body.columns
        if c not in set(layout.col_idx) and (body[c].notna() if present is None else present[c]).any()
    ]
    cols = sorted(set(layout.col_idx) | set(extra))
    names = dict(zip(layout.col_idx, layout.names))
    if extra:
        taken = set(layout.names)
        for c in extra:
            name, k = f"Unnamed {c + 1}", 2
            while name in taken:
                name, k = f"Unnamed {c + 1}_{k}", k + 1
            taken.add(name)
            names[c] = name
    return cols, names


def _any_present(body: pd.DataFrame) -> np.ndarray:
    """Rows with some cell not missing (a body whose blank cells are missing), column by column."""
    rows = np.zeros(len(body), dtype=bool)
    for c in body.columns:
        rows |= body[c].notna().to_numpy()
    return rows


def _present(body: pd.DataFrame) -> pd.DataFrame:
    """Which cells hold something: not missing, and text that is not only spaces."""
    out = body.notna()
    for c in body.columns:
        col = body[c]
        if col.dtype == object or pd.api.types.is_string_dtype(col):
            texts = text_array(col)
            blank = pc.or_(pc.equal(pc.utf8_length(texts), 0), pc.utf8_is_space(texts))
            out[c] = out[c].to_numpy() & ~blank.fill_null(True).to_numpy(zero_copy_only=False)
    return out


def _totals_mask(body: pd.DataFrame, label_cols: list, trimmed: bool = False) -> np.ndarray:
    mask = np.zeros(len(body), dtype=bool)
    for c in label_cols:
        col = body[c]
        if col.dtype == object or pd.api.types.is_string_dtype(col):
            if not any_cell_may_match(text_array(col), TOTAL_WORDS):
                continue  # no cell says total, sum, 合计 ...: none is a totals label
            mask |= regex_hits(_stripped(col, trimmed), "(?i)" + TOTAL_PATTERN)
    return mask


def _stripped(col: pd.Series, trimmed: bool):
    texts = text_array(col)
    return texts if trimmed else pc.utf8_trim_whitespace(texts)


def _average_labels() -> tuple[str, ...]:
    """The labels of a row of averages (summary_rows.toml, each with why it is there)."""
    with open(Path(__file__).with_name("summary_rows.toml"), "rb") as handle:
        return tuple(str(w).lower() for w in tomllib.load(handle)["averages"]["words"])


AVERAGE_PATTERN = r"^\s*(?:" + "|".join(re.escape(w) for w in _average_labels()) + r")\s*(?:值|分)?\s*[:：.]?\s*$"
TAIL_ROWS = 3  # a row of averages closes the table: at most this many present rows (totals, notes) follow it


def _exclude_averages(
    body: pd.DataFrame,
    label_cols: list,
    keep: np.ndarray,
    sheet_rows: np.ndarray,
    warnings: list,
    cleaning: list,
    trimmed: bool = False,
    readings: Mapping[int, TextReading] | None = None,
) -> np.ndarray:
    """The rows of averages to exclude, each reported in a warning and the cleaning log."""
    readings = readings or {}
    averages = _averages_mask(body, label_cols, keep, trimmed, readings)
    if averages.any():
        idx = np.flatnonzero(averages)
        labels = _first_text(body.iloc[idx], label_cols, set(readings))
        for i, label in zip(idx, labels):
            warnings.append(warning("averages_row", row=sheet_rows[i], label=label))
        cleaning.append(
            {
                "column": None,
                "action": "excluded a row of averages",
                "count": len(idx),
                "message": f"{len(idx)} row(s) of averages below the data ('{labels[0]}') excluded, like a totals row",
            }
        )
    return averages


def _averages_mask(
    body: pd.DataFrame,
    label_cols: list,
    keep: np.ndarray,
    trimmed: bool = False,
    readings: Mapping[int, TextReading] | None = None,
) -> np.ndarray:
    """Rows of averages (平均分, Average, Mean): a label cell that says only that, once in its column,
    among the last rows of the table. A column where the word is one of many values is a category."""
    mask = np.zeros(len(body), dtype=bool)
    kept = np.flatnonzero(keep)
    if len(kept) < 3:
        return mask
    last = kept[-(TAIL_ROWS + 1) :]
    tail = set(last.tolist())
    for c in label_cols:
        col = body[c]
        if col.dtype == object or pd.api.types.is_string_dtype(col):
            # The one row of averages must be among the last rows: a column none of whose last rows
            # says so has none, found on those few cells instead of a search of the whole column.
            if not regex_hits(_stripped(col.iloc[last], trimmed), "(?i)" + AVERAGE_PATTERN).any():
                continue
            hits = regex_hits(_stripped(col, trimmed), "(?i)" + AVERAGE_PATTERN) & keep
            if hits.sum() == 1 and int(np.flatnonzero(hits)[0]) in tail and _holds_averages(body, hits, keep, readings):
                mask |= hits
    return mask


def _holds_averages(
    body: pd.DataFrame, row: np.ndarray, keep: np.ndarray, readings: Mapping[int, TextReading] | None = None
) -> bool:
    """Whether the row's numbers are the averages of the other rows' (to the rounding a sheet shows):
    at least half of its numeric cells, and at least one. A rating "Average" among the data is not.
    The numbers are those the cells' text says: a typed column's numbers written with separators
    ("1,234") and its dates count as no number, as their text does."""
    others = keep & ~row
    checked = matched = 0
    for c in body.columns:
        cells = body[c].to_numpy()
        reading = (readings or {}).get(c)
        if reading is not None:
            if reading.kind != "number":
                continue
            if reading.separated is not None:
                cells = np.where(reading.separated, np.nan, cells)
        value = pd.to_numeric(pd.Series(cells[row]), errors="coerce").iloc[0]
        numbers = pd.to_numeric(pd.Series(cells[others]), errors="coerce").dropna()
        if pd.isna(value) or len(numbers) < 2:
            continue
        mean = float(numbers.mean())
        checked += 1
        matched += abs(float(value) - mean) <= max(0.01 * abs(mean), 0.051)  # shown to one decimal, or 1%
    return checked > 0 and 2 * matched >= checked


def _first_text(rows: pd.DataFrame, cols: list, typed: set | frozenset = frozenset()) -> list[str]:
    """Each row's first text among `cols`; TextNeeded when that is a typed cell (its text is not kept)."""
    out = []
    for _, row in rows.iterrows():
        found = ""
        for c in cols:
            if c in typed and not is_missing(row[c]):
                raise TextNeeded(f"column {c}")
            if text := cell_text(row[c]):
                found = text
                break
        out.append(found)
    return out


def _trailing_notes(
    body: pd.DataFrame,
    present: pd.DataFrame | None,
    keep: np.ndarray,
    n_cols: int,
    typed: set | frozenset = frozenset(),
) -> list[int]:
    """Rows at the bottom that hold a sentence or two, not data: '注：…', 'Source: …'. A short row
    with a cell of a typed column needs that cell's text (TextNeeded)."""
    if n_cols < 2:
        return []
    kept = np.flatnonzero(keep)
    if len(kept) < 2:
        return []
    pres = None if present is None else present.to_numpy()
    notes: list[int] = []
    for pos in range(len(kept) - 1, max(-1, len(kept) - 30), -1):
        i = kept[pos]
        filled = np.flatnonzero(body.iloc[i].notna().to_numpy() if pres is None else pres[i])
        if len(filled) > max(1, n_cols // 3):
            break
        if typed and any(body.columns[j] in typed for j in filled):
            raise TextNeeded(f"row {i}")
        values = [body.iat[i, j] for j in filled]
        if not all(isinstance(v, str) for v in values):
            break
        text = " ".join(v.strip() for v in values)
        prev = kept[pos - 1] if pos > 0 else -1
        gap = prev >= 0 and i - prev > 1
        if not (_NOTE_START.match(text) or (len(filled) == 1 and (gap or len(text) >= 25))):
            break
        notes.append(i)
    if len(notes) >= len(kept) - 1:
        return []  # the whole table would go: these are data after all
    return sorted(notes)


def _fill_vertical_merges(body: pd.DataFrame, present: pd.DataFrame, data_start: int, merges) -> dict:
    """Cells inside a merged range that spans rows of the data take the range's value ("华东"
    merged over four rows belongs to all four)."""
    counts: dict = {}
    n = len(body)
    cols = set(body.columns)
    for r0, c0, r1, c1 in merges[:MAX_MERGES]:
        if r1 <= r0 or r0 < data_start:
            continue
        top, bottom = r0 - data_start, min(r1 - data_start, n - 1)
        if top >= n:
            continue
        for c in range(c0, c1 + 1):
            if c not in cols or not present.at[top, c]:
                continue
            value = body.at[top, c]
            for r in range(top + 1, bottom + 1):
                if not present.at[r, c]:
                    if body[c].dtype != object and not isinstance(value, (int, float)):
                        body[c] = body[c].astype(object)
                    body.at[r, c] = value
                    counts[c] = counts.get(c, 0) + 1
    return counts


def _short(text, limit: int = 50) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
