"""Everyday words for concepts any spreadsheet may hold (zh/en): "older" asks about age, "earn" about
income or wage, "贵" about price, "busier" about visits. A small table of common language, not
of one dataset's columns (vocabulary/everyday_concepts.toml): each concept lists pieces of column
names (as words.SYNONYMS keys: a piece of the name, lower case) and the words a question uses for it.
"""

from __future__ import annotations

from app.understanding import vocabulary

# (column-name pieces, question words), one pair per concept: vocabulary/everyday_concepts.toml (its
# notes say which pieces and words may be added).
CONCEPTS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = tuple(
    (entry.strings("pieces"), entry.strings("words")) for entry in vocabulary.entries("everyday_concepts", "concepts")
)


def concept_synonyms() -> dict[str, tuple[str, ...]]:
    """The concepts as SYNONYMS entries: each column-name piece with the concept's words."""
    table: dict[str, tuple[str, ...]] = {}
    for pieces, words in CONCEPTS:
        for piece in pieces:
            table[piece] = tuple(dict.fromkeys((*table.get(piece, ()), *words)))
    return table


def merged(own: dict[str, tuple[str, ...]], extra: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """Two synonym tables as one, each key's words in order without repeats."""
    table = dict(own)
    for key, words in extra.items():
        table[key] = tuple(dict.fromkeys((*table.get(key, ()), *words)))
    return table


# Conditions a category such as the weather sets the scene for: "天气热的时候", "when the weather is
# hot", "天气风大时". Said right after that category's name, these words are about the number
# (temperature, wind speed), not the category's values (晴/雨/多云).
CONDITION_WORDS = frozenset(word for pieces, words in CONCEPTS if pieces[0] in ("temp", "wind") for word in words)
