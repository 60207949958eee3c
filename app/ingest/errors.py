"""The one exception ingestion raises for bad input, carrying a contract error category."""

from __future__ import annotations

# The categories of CONTRACT.md ("Error categories for bad input"); nothing else may be raised.
CATEGORIES = (
    "unsupported_format",
    "corrupt_file",
    "encrypted_file",
    "empty_file",
    "too_large",
    "no_table_found",
    "encoding_error",
)


class IngestError(Exception):
    """A file Verity cannot read, explained in plain language for a non-expert."""

    def __init__(self, category: str, message: str, hint: str = "") -> None:
        if category not in CATEGORIES:
            raise ValueError(f"unknown ingest error category: {category!r}")
        super().__init__(f"{category}: {message}")
        self.category = category
        self.message = message
        self.hint = hint

    def __reduce__(self):  # picklable, so a reading child process can hand it back as it is
        return (IngestError, (self.category, self.message, self.hint))

    def as_dict(self) -> dict:
        return {"category": self.category, "message": self.message, "hint": self.hint}
