"""Which passages of the workspace knowledge a turn sees: BM25 over paragraph-sized passages, the terms
being the words of app.understanding.text (jieba for Chinese, with the words inside a long word;
English words by their dictionary form).

When all the knowledge fits the budget it is all injected, in order; otherwise the passages most
relevant to the question are, up to the budget, still in document order.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from typing import Protocol

from app.agent.context.tiers import Item
from app.understanding.text import inner_words, tokens

PASSAGE_CHARS = 700
_SENTENCE_END = re.compile(r"(?<=[。！？；.!?;])\s*")
STOPWORDS = frozenset(
    "a an and are as at be by do does did for from has have how i in is it its of on or our so that the this "
    "to was we were what when which who why will with you your per vs".split()
)


class Entry(Protocol):
    """A piece of workspace knowledge (app.db.models.KnowledgeEntry, or any object with these two)."""

    @property
    def title(self) -> str: ...

    @property
    def text(self) -> str: ...


def terms(text: str) -> list[str]:
    """Search terms: the text's words (app.understanding.text.tokens): English ones as their dictionary
    form (returns → return) without function words, Chinese ones with the shorter words inside them
    ("销售额口径" → 销售, 销售额, 口径), numbers as they are."""
    found: list[str] = []
    for token in tokens(text):
        if token.is_cjk:
            found += inner_words(token.word)
        elif token.word not in STOPWORDS and (len(token.word) > 1 or token.word.isdigit()):
            found.append(token.lemma)
    return found


def passages(text: str, size: int = PASSAGE_CHARS) -> list[str]:
    """Paragraph-sized pieces: blank lines split, a heading stays with what follows it, short
    paragraphs are merged, and a long one is cut at sentence ends."""
    pieces: list[str] = []
    for block in re.split(r"\n\s*\n", text.strip()):
        block = block.strip()
        if not block:
            continue
        if len(block) <= size:
            pieces.append(block)
            continue
        current = ""
        for sentence in _SENTENCE_END.split(block):
            if current and len(current) + len(sentence) > size:
                pieces.append(current.strip())
                current = ""
            current += sentence if not current or current.endswith(("\n", " ")) else " " + sentence
        if current.strip():
            pieces.append(current.strip())
    merged: list[str] = []
    for piece in pieces:
        heading = merged and merged[-1].lstrip().startswith("#") and "\n" not in merged[-1].strip()
        if merged and (heading or len(merged[-1]) + len(piece) < size // 2):
            merged[-1] = f"{merged[-1]}\n{piece}"
        else:
            merged.append(piece)
    return merged


def bm25(docs: list[list[str]], query: list[str], k1: float = 1.2, b: float = 0.75) -> list[float]:
    if not docs:
        return []
    n, avg = len(docs), sum(map(len, docs)) / len(docs) or 1.0
    df = Counter(term for doc in docs for term in set(doc))
    scores = []
    for doc in docs:
        counts, length = Counter(doc), len(doc)
        score = 0.0
        for term in set(query):
            if term in counts:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                tf = counts[term]
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg))
        scores.append(score)
    return scores


def relevant_knowledge(entries: Iterable[Entry], question: str, budget_chars: int) -> tuple[Item, ...]:
    """Knowledge items for a turn (entries have `.title` and `.text`): everything when it fits
    the budget, else the passages most relevant to the question."""
    found = [(entry.title, passage) for entry in entries for passage in passages(entry.text)]
    if not found or budget_chars <= 0:
        return ()
    fits = sum(len(p) for _, p in found) <= budget_chars
    chosen = range(len(found)) if fits else best_passages(found, question, budget_chars)
    return tuple(Item(found[i][0], "knowledge", " ".join(found[i][1].split())) for i in chosen)


def best_passages(found: list[tuple[str, str]], query: str, budget_chars: int, limit: int | None = None) -> list[int]:
    """Indices of the passages that match `query` best, as many as fit `budget_chars` (and
    `limit`), returned in document order. A passage's title counts as part of it."""
    scores = bm25([terms(f"{title} {p}") for title, p in found], terms(query))
    picked: list[int] = []
    used = 0
    for i in sorted(range(len(found)), key=lambda i: -scores[i]):
        if scores[i] <= 0 or (limit is not None and len(picked) >= limit):
            break
        if used + len(found[i][1]) <= budget_chars:
            picked.append(i)
            used += len(found[i][1])
    return sorted(picked)
