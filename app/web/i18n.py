"""UI strings in English and Chinese. Answers and reports are translated by the agent, not here."""

from __future__ import annotations

import re

from app.translations import CATALOG, LANGS

# The pages' strings: the catalog's plain keys (app/translations.py holds every translation)
STRINGS: dict[str, dict[str, str]] = {k: v for k, v in CATALOG.items() if "." not in k}


def t(key: str, lang: str = "en", **values: object) -> str:
    """The UI string `key` in `lang` (English when missing), with `{name}` placeholders filled."""
    entry = STRINGS.get(key)
    if entry is None:
        return key
    text = entry.get(lang) or entry["en"]
    return text.format(**values) if values else text


def cleaning_text(action: str, lang: str) -> str:
    """A cleaning step of the reader in the page's language (the reader logs them in English)."""
    if (entry := CATALOG.get(f"cleaning.{action}")) is not None:
        return entry.get(lang) or entry["en"]
    if (missing := re.fullmatch(r"read '(.*)' as missing", action or "", flags=re.S)) is not None:
        entry = CATALOG["cleaning.read as missing"]
        return (entry.get(lang) or entry["en"]).format(value=missing.group(1))
    return action


def normalize_lang(value: str | None) -> str | None:
    """'zh-CN', 'zh_TW', 'ZH' → 'zh'; 'en-GB' → 'en'; anything else → None."""
    if not value:
        return None
    head = value.strip().lower().replace("_", "-").split("-")[0]
    return head if head in LANGS else None


def from_accept_language(header: str | None) -> str | None:
    """The first supported language of an Accept-Language header, by quality."""
    if not header:
        return None
    ranked = []
    for i, part in enumerate(header.split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        ranked.append((-quality, i, tag))
    for _, _, tag in sorted(ranked):
        if lang := normalize_lang(tag):
            return lang
    return None


# What each step is called on the page: a non-expert reads "Comparing groups", not compare_groups.
TOOL_LABELS: dict[str, dict[str, str]] = {
    k.removeprefix("tool."): v for k, v in CATALOG.items() if k.startswith("tool.")
}


def tool_label(name: str, lang: str) -> str:
    """The step's name for people; unknown tools fall back to their name with spaces."""
    labels = TOOL_LABELS.get(name)
    return labels[lang if lang in LANGS else "en"] if labels else name.replace("_", " ")


def tool_labels(lang: str) -> dict[str, str]:
    return {name: tool_label(name, lang) for name in TOOL_LABELS}
