"""Personal data never reaches the model (SPEC §7): tools compute on the real values locally,
and everything they return is masked before it enters the conversation.

Two nets: the distinct values of the columns ingestion marked as personal are replaced by their
masks wherever they occur, and text that *looks* like a phone number, e-mail, ID-card or bank-card
number is masked whatever column it came from.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from app.ingest.pii import id_card_valid, mask_value

# Digit patterns also match big totals in tool output (15234567890 could be revenue), so the
# phone and bank-card nets are cast only in workspaces that hold such columns, and ID numbers
# must pass their checksum.
_PATTERNS = {
    "email": re.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+"),
    "id_card": re.compile(r"(?<![\d.])\d{17}[\dXx](?![\d.])"),
    "bank_card": re.compile(r"(?<![\d.])\d{16,19}(?![\d.])"),
    "phone": re.compile(r"(?<![\d.])1[3-9]\d{9}(?![\d.])"),
}
ALWAYS = ("email", "id_card")
MAX_EXACT_VALUES = 20_000  # beyond this, a column's values are masked by pattern only


@dataclass
class PiiMasker:
    replacements: dict[str, str] = field(default_factory=dict)
    kinds: set[str] = field(default_factory=set)
    _exact: re.Pattern[str] | None = None

    @classmethod
    def from_frames(cls, pii_columns: dict[str, dict[str, str]], frames: dict[str, pd.DataFrame]) -> "PiiMasker":
        """`pii_columns`: dataset name -> {column: kind}, as ingestion detected them."""
        replacements: dict[str, str] = {}
        for name, columns in pii_columns.items():
            frame = frames.get(name)
            for column, kind in columns.items():
                if frame is None or column not in frame.columns:
                    continue
                values = frame[column].dropna().astype(str).str.strip().unique()
                if len(values) > MAX_EXACT_VALUES:
                    continue
                replacements.update({v: mask_value(v, kind) for v in values if len(v) >= 2})
        kinds = {kind for columns in pii_columns.values() for kind in columns.values()}
        masker = cls({k: v for k, v in replacements.items() if k != v}, kinds)
        if masker.replacements:
            alternatives = sorted(masker.replacements, key=len, reverse=True)
            masker._exact = re.compile("|".join(map(re.escape, alternatives)))
        return masker

    def mask(self, text: str) -> str:
        if not text:
            return text
        if self._exact is not None:
            text = self._exact.sub(lambda m: self.replacements[m.group(0)], text)
        for kind, pattern in _PATTERNS.items():
            if kind in ALWAYS or kind in self.kinds:
                text = pattern.sub(self._replacement(kind), text)
        return text

    def _replacement(self, kind: str) -> Callable[[re.Match[str]], str]:
        """What a match of `kind` becomes (a function per kind binds the loop's kind)."""
        return lambda match: self._mask_match(match.group(0), kind)

    @staticmethod
    def _mask_match(value: str, kind: str) -> str:
        if kind == "id_card" and not id_card_valid(value):
            return value
        return mask_value(value, kind)
