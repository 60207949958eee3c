"""Small talk: a greeting, thanks or pleasantry and nothing else, in Chinese or English."""

from __future__ import annotations

import re

from app.understanding import vocabulary
from app.understanding.text import closed_class_spans

# The phrases of small talk (vocabulary/small_talk.toml), the longest first.
SMALL_TALK = sorted(vocabulary.words("small_talk", "phrases"), key=len, reverse=True)


_PUNCT = re.compile(r"[\s!！。.,，~～?？:：;；、'\"“”‘’()（）\-—_*…]+|[\U0001F300-\U0001FAFF\u2600-\u27BF]")


# --- rules --------------------------------------------------------------------------------------
def is_small_talk(text: str) -> bool:
    """A greeting, thanks or pleasantry and nothing else ("你好", "thanks a lot!", "hi there")."""
    rest = _PUNCT.sub(" ", (text or "").lower()).strip()
    if not rest or len(rest) > 40:
        return False
    while rest:
        for phrase in SMALL_TALK:
            if rest.startswith(phrase) and (
                not phrase.isascii() or len(rest) == len(phrase) or not rest[len(phrase)].isalnum()
            ):
                rest = rest[len(phrase) :].strip()
                break
        else:
            # a Chinese pronoun, particle or adverb around the phrase (谢谢你啊, 好的哦): a closed class
            closed = closed_class_spans(rest)
            if not (closed and closed[0][0] == 0):
                return False
            rest = rest[closed[0][1] :].strip()
    return True
