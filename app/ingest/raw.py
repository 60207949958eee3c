"""The raw shape every reader returns: sheets as a head grid plus a loader for the data rows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from app.ingest.errors import IngestError


@dataclass
class RawSheet:
    name: str
    # The first rows of the sheet: index = 0-based sheet row, columns = sheet column positions;
    # native cell values (str, float, datetime, bool) or None.
    head: pd.DataFrame
    n_rows: int = 0  # rows in the sheet (from its dimension; may be an estimate)
    n_cols: int = 0
    complete: bool = True  # the head holds every row of the sheet
    hidden: bool = False
    # (first 0-based sheet row, number of rows or None for all) -> frame with natively typed
    # columns labelled by sheet column position, index 0 = the first row asked for.
    load_body: Callable[[int, int | None], pd.DataFrame] | None = None
    # Text files: (first 0-based sheet row, column positions that may be typed) -> the data rows
    # with those columns read as numbers or dates where every cell is one, and how each was read
    # ({position: textcolumns.TextReading}); `load_body` is the all-text reading.
    load_typed_body: Callable[[int, set[int]], tuple[pd.DataFrame, dict[int, Any]]] | None = None
    # merged ranges as 0-based inclusive (r0, c0, r1, c1) in the same coordinates; None: unknown
    load_merges: Callable[[], list[tuple[int, int, int, int]]] | None = None
    too_large: IngestError | None = None  # why this sheet exceeds the limits; raised only if it is chosen
    # what load_merges found, once it ran (app/ingest/pipeline.py's _merges); None: not yet
    merges_found: list[tuple[int, int, int, int]] | None = field(default=None, init=False, repr=False, compare=False)


@dataclass
class RawBook:
    format: str
    sheets: list[RawSheet]
    warnings: list[str] = field(default_factory=list)
    date1904: bool = False
