"""The question's language in the texts the reading makes (labels of derived groups)."""

from __future__ import annotations

import re


def local_text(zh: bool, en: str, zh_text: str) -> str:
    return zh_text if zh else en


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
_PATH_SEPARATOR = re.compile(r"\s*/\s*")  # a merged group header's path: "销售情况 / 销售额"


def question_language(text: str, column_names: list[str], default: str) -> str:
    """The language a question is written in, "en" or "zh": its own words decide, not the data's.
    Column names (and each part of a merged header's path, "销售额" of "销售情况 / 销售额") are taken
    out first; then a Chinese character counts against an English word, so the sentence's frame wins
    over a store or product named in the other script ("and only for A店?" is English, "Online 和
    Store 的 Revenue 哪个高？" Chinese). With nothing left to go by, or an even count, the page's."""
    names = {n.strip() for name in column_names for n in (name, *_PATH_SEPARATOR.split(name)) if n.strip()}
    words = text or ""
    for name in sorted(names, key=len, reverse=True):
        words = words.replace(name, " ")
    chinese, english = len(_CJK.findall(words)), len(_LATIN_WORD.findall(words))
    if chinese == english:
        return default
    return "zh" if chinese > english else "en"
