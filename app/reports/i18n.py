"""The labels of the report pages and documents, in English and Chinese."""

from __future__ import annotations

from app.translations import CATALOG

# The catalog's entries the answer card shares with the report: the same words on the page and in every
# download (the label of a result the answer does not state)
SHARED_WITH_CARD = ("result_last_recorded",)
# The catalog's `report.` entries (app/translations.py holds every translation)
LABELS: dict[str, dict[str, str]] = {
    k.removeprefix("report."): v for k, v in CATALOG.items() if k.startswith("report.")
} | {k: CATALOG[k] for k in SHARED_WITH_CARD}


def label(key: str, language: str) -> str:
    entry = LABELS.get(key)
    if entry is None:
        return key
    return entry.get(language) or entry["en"]


def labels(language: str) -> dict[str, str]:
    """All labels in one language (what the templates use)."""
    language = language if language in ("en", "zh") else "en"
    return {key: label(key, language) for key in LABELS}
