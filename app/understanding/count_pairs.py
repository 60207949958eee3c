"""Grouped counts of both outcomes on each row (issue 14): esoph's ncases and ncontrols, a trial's
successes and failures, a poll's yes and no. The rate a question asks for ("得食道癌的比例", "the
pass rate by school") is then successes / (successes + failures) per group, summed over rows — not the
average of either count. Read from the profile: two whole-number columns, never negative, named as
opposite outcomes."""

from __future__ import annotations

import re
from typing import Any

from app.understanding import vocabulary
from app.understanding.text import lemma

# Opposite outcomes, as the words of count column names say them (the success first), by their lemma
# (cases and case alike: case).
_OPPOSITES = vocabulary.pairs("designs", "opposites")  # vocabulary/designs.toml
_OUTCOMES = frozenset(word for pair in _OPPOSITES for word in pair)
_COUNT_PREFIX = re.compile(r"^(?:n|num|number|no|count|cnt|n_of)[_. ]?(?=\S)|^(?:number|count) of ", re.I)


def _outcome_word(name: str) -> str:
    """'ncases' → 'case', 'n_failures' → 'failure', 'Number of yes' → 'yes' (the outcome's lemma)."""
    word = name.strip().lower()
    for candidate in (word, _COUNT_PREFIX.sub("", word)):
        if lemma(candidate) in _OUTCOMES:
            return lemma(candidate)
    return word


def count_pair(columns: list[dict[str, Any]]) -> tuple[str, str] | None:
    """(successes column, failures column) when the table counts both outcomes on each row."""
    counts = {
        _outcome_word(c["name"]): c["name"]
        for c in columns
        if c["type"] == "integer" and not c.get("pii") and (c.get("minimum") or 0) >= 0
    }
    for success, failure in _OPPOSITES:
        if success in counts and failure in counts:
            return counts[success], counts[failure]
    return None
