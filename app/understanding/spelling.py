"""British and American spellings of the same word (colour/color, organise/organize, centre/center):
a question written in one names a column or value written in the other. Structural rules on word
endings, not a word list; a variant nobody writes ("doctour") is harmless, as it is only looked for.
"""

from __future__ import annotations

import re

# (British ending, American ending), each allowing the usual suffixes after it. The part before the
# ending must be at least three letters (two before -tre/-bre: metre, fibre), so "four", "hour",
# "rise" and "size" are left alone.
_ENDINGS: tuple[tuple[str, str], ...] = (
    ("our", "or"),  # colour, behaviour, labour, flavour
    ("is", "iz"),  # organise, organisation, recognised (before e/ed/es/ing/ation)
    ("ys", "yz"),  # analyse, paralyse
    ("tre", "ter"),  # centre, metre, litre, theatre
    ("bre", "ber"),  # fibre, calibre
    ("ogue", "og"),  # catalogue, dialogue
)
_AFTER = {
    "our": r"(s|ed|ing|ite|ites|ful|less|able|hood)?",
    "or": r"(s|ed|ing|ite|ites|ful|less|able|hood)?",
    "is": r"(e|es|ed|ing|ation|ations|er|ers)",
    "iz": r"(e|es|ed|ing|ation|ations|er|ers)",
    "ys": r"(e|es|ed|ing|er|ers)",
    "yz": r"(e|es|ed|ing|er|ers)",
    "tre": r"(s|d)?",
    "ter": r"(s|ed)?",
    "bre": r"(s)?",
    "ber": r"(s)?",
    "ogue": r"(s)?",
    "og": r"(s)?",
}


def word_variants(word: str) -> set[str]:
    """The other spellings of one lower-case word: colour → color, color → colour, analyse → analyze."""
    found: set[str] = set()
    for british, american in _ENDINGS:
        for have, other in ((british, american), (american, british)):
            least = 2 if have in ("tre", "ter", "bre", "ber") else 3  # metre, fibre
            match = re.fullmatch(rf"([a-z]{{{least},}}?){have}{_AFTER[have]}", word)
            if match:
                found.add(match.group(1) + other + (match.group(2) or ""))
    found.discard(word)
    return found


def text_variants(text: str) -> set[str]:
    """The other spellings of a name or value, every word that has one swapped ("Favourite Colour" →
    "favorite color"): lower case; empty when no word has another spelling."""
    lowered = text.lower()
    words = re.findall(r"[a-z]+", lowered)
    swapped = lowered
    for word in sorted(set(words), key=len, reverse=True):
        others = word_variants(word)
        if others:
            swapped = re.sub(rf"(?<![a-z]){word}(?![a-z])", sorted(others)[0], swapped)
    return {swapped} - {lowered}
