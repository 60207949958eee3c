"""Everyday words for concepts any spreadsheet may hold (zh/en): "older" asks about age, "earn" about
income or wage, "贵" about price, "busier" about visits. A small table of common language, not
of one dataset's columns (vocabulary/everyday_concepts.toml): each concept lists pieces of column
names (as words.SYNONYMS keys: a piece of the name, lower case) and the words a question uses for it.

The table is kept small by general rules rather than by listing forms: English words are listed as
their lemma (roles.column_mentions also finds a word by its dictionary form: heavier → heavy), a
concept's Chinese pieces are words for it too, and a Chinese adjective of degree is listed once and
said after each mark of degree (重 → 更重, 最重, 越重).
"""

from __future__ import annotations

from app.understanding import vocabulary
from app.understanding.text import is_cjk, lemma

# The Chinese marks of degree a one-character adjective follows (更重, 最重, 越重): roles.toml.
DEGREE_MARKS = vocabulary.characters("roles", "superlative_marks_zh")


def _concept_words(entry: vocabulary.Entry) -> tuple[str, ...]:
    """A concept's words: those listed, its Chinese pieces (all its pieces where pieces_are_words is set),
    each degree adjective after each mark."""
    pieces = entry.strings("pieces")
    degree = entry.strings("degree") if "degree" in entry.fields else ()
    chinese_pieces = [
        piece for piece in pieces if any(is_cjk(c) for c in piece) or entry.fields.get("pieces_are_words") is True
    ]
    said_by_degree = [mark + adjective for adjective in degree for mark in DEGREE_MARKS]
    return tuple(dict.fromkeys((*entry.strings("words"), *chinese_pieces, *said_by_degree)))


# (column-name pieces, question words), one pair per concept: vocabulary/everyday_concepts.toml (its
# notes say which pieces and words may be added).
CONCEPTS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = tuple(
    (entry.strings("pieces"), _concept_words(entry)) for entry in vocabulary.entries("everyday_concepts", "concepts")
)


# The words of the concepts marked `currency` (money): they also name a table's one column measured in money,
# whatever its name (column_forms.money_column: "Total Charge (£)", "收费（元）").
MONEY_WORDS: tuple[str, ...] = tuple(
    word
    for entry in vocabulary.entries("everyday_concepts", "concepts")
    if entry.fields.get("currency") is True
    for word in _concept_words(entry)
)


# The column-name pieces of the concepts marked `currency` (fee, revenue, amount, 营业额): a column so named holds
# money the rows took in (column_forms.money_taken_column), where a price or a deposit kept is money of another kind.
MONEY_PIECES: tuple[str, ...] = tuple(
    piece
    for entry in vocabulary.entries("everyday_concepts", "concepts")
    if entry.fields.get("currency") is True
    for piece in entry.strings("pieces")
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


# The words that ask how long something took ("how long", "多久"): in a question of the days between two dates
# they ask for that gap (app.analyst.data_tasks.date_gap_plan), not for a duration column of the table.
DURATION_WORDS = frozenset(word for pieces, words in CONCEPTS if pieces[0] == "duration" for word in words)


def is_condition_word(said: str) -> bool:
    """Whether a word the question says is a condition word, as written or by its lemma (colder: cold)."""
    said = said.lower()
    return said in CONDITION_WORDS or lemma(said) in CONDITION_WORDS
