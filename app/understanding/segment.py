"""Phrases of whole words: the segmenter itself lives in app/understanding/text.py (jieba, loaded the
first time a text is segmented: `verity --help` and `inspect` never load its dictionary).

Chinese is written without spaces, so a piece cut out of a question by removing the words around it
can begin or end inside a word (一共收了 → 共收; 每个月 → 个月). A phrase the analyst names back to the
user is made of whole words only (`whole_words`). Without the segmenter (not installed) every run of
Chinese characters counts as one word: the phrase is kept as cut, as before.
"""

from __future__ import annotations

from app.understanding.text import Span, word_spans

__all__ = ["Span", "whole_words", "word_spans"]


def whole_words(text: str, start: int, end: int) -> Span | None:
    """The part of text[start:end] made of whole words: the words cut at either edge are left out,
    and so are single-character words at the edges (a verb or a particle left beside the cut: 占, 收,
    总), which name nothing on their own. None when no word of two characters or more is left."""
    inside = [(s, e) for s, e in word_spans(text) if start <= s and e <= end and text[s:e].strip()]
    while inside and inside[0][1] - inside[0][0] < 2:
        inside.pop(0)
    while inside and inside[-1][1] - inside[-1][0] < 2:
        inside.pop()
    return (inside[0][0], inside[-1][1]) if inside else None
