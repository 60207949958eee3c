"""The question's language in the texts the reading makes (labels of derived groups)."""

from __future__ import annotations


def local_text(zh: bool, en: str, zh_text: str) -> str:
    return zh_text if zh else en
