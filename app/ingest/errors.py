"""The one exception ingestion raises for bad input, carrying a contract error category and its
explanation in English and Chinese (the detail is the useful part: sizes, limits, sheet names)."""

from __future__ import annotations

from typing import Any

# The categories of CONTRACT.md ("Error categories for bad input"), plus file_not_found (a path
# that names no file is not a damaged file: issue 28); nothing else may be raised.
CATEGORIES = (
    "unsupported_format",
    "file_not_found",
    "corrupt_file",
    "encrypted_file",
    "empty_file",
    "too_large",
    "no_table_found",
    "encoding_error",
)


class IngestError(Exception):
    """A file Verity cannot read, explained in plain language for a non-expert, in both languages.
    tests/test_ingest_error_text.py checks that every construction in app/ passes the Chinese text."""

    def __init__(self, category: str, message: str, hint: str = "", message_zh: str = "", hint_zh: str = "") -> None:
        if category not in CATEGORIES:
            raise ValueError(f"unknown ingest error category: {category!r}")
        super().__init__(f"{category}: {message}")
        self.category = category
        self.message = message
        self.hint = hint
        self.message_zh = message_zh
        self.hint_zh = hint_zh

    def __reduce__(self):  # picklable, so a reading child process can hand it back as it is
        return (type(self), (self.category, self.message, self.hint, self.message_zh, self.hint_zh))

    def message_in(self, lang: str) -> str:
        """The message in `lang`; English where no Chinese was written."""
        return self.message_zh if lang == "zh" and self.message_zh else self.message

    def hint_in(self, lang: str) -> str:
        return self.hint_zh if lang == "zh" and self.message_zh else self.hint

    def as_dict(self) -> dict[str, Any]:
        """Stored in Dataset.error and returned by the API: `category`, `message`, `hint` (English, the
        contract) and their Chinese `message_zh`, `hint_zh`."""
        return {
            "category": self.category,
            "message": self.message,
            "hint": self.hint,
            "message_zh": self.message_zh,
            "hint_zh": self.hint_zh,
        }
