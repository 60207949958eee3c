"""The raw shape every reader returns: sheets as grids of strings, before any interpretation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import pandas as pd


@dataclass
class RawSheet:
    name: str
    grid: pd.DataFrame
    # (first grid row, number of rows) -> frame of the same width with native cell types, or None.
    load_typed: Callable[[int, int], pd.DataFrame | None] | None = None
    too_large: str | None = None  # why this sheet exceeds the limits; raised only if it is chosen


@dataclass
class RawBook:
    format: str
    sheets: list[RawSheet]
    warnings: list[str] = field(default_factory=list)
