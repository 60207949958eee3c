"""The reader's warnings, each written from one template of the catalog (app/translations.py,
`ingest_warning.*`) so that a page can say it in its own language (issue 28: a Chinese page showed
"1 blank row inside the table was skipped").

The stored dataset keeps the English sentence (CONTRACT: `warnings` is a list of strings, and the CLI
prints them); `warning_in` reads a stored sentence back against the same templates and writes it in
the page's language. A sentence no template made (an older upload's) is shown as it is.
"""

from __future__ import annotations

import re
from functools import cache

from app.translations import CATALOG

PREFIX = "ingest_warning."


def warning(key: str, **values: object) -> str:
    """The English warning `key` with its values filled in (what is stored)."""
    return CATALOG[PREFIX + key]["en"].format(**values)


def warning_in(text: str, lang: str) -> str:
    """A stored warning in `lang`: the template that wrote it, in that language, with the same values."""
    if lang == "en":
        return text
    for key, pattern in _patterns():
        if (found := pattern.fullmatch(text)) is not None:
            translated = CATALOG[key].get(lang)
            return translated.format(**found.groupdict()) if translated else text
    return text


@cache
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each template as a pattern; a value is any text, the fixed words around it decide the match."""
    found = []
    for key, entry in CATALOG.items():
        if key.startswith(PREFIX):
            pieces = re.split(r"\{(\w+)\}", entry["en"])
            pattern = "".join(re.escape(piece) if i % 2 == 0 else f"(?P<{piece}>.+?)" for i, piece in enumerate(pieces))
            found.append((key, re.compile(pattern, re.S)))
    # longer templates first: a template with more fixed words is the more specific reading
    return tuple(sorted(found, key=lambda item: -len(CATALOG[item[0]]["en"])))
