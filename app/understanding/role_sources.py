"""Where each column of the built-in analyst's plan came from (issue 14).

A plan fills roles: the number it analyses (outcome; also the measure a ranking sorts by), the
groups it compares, the factors of a regression, the dates of a trend. Each column got there from
the question's words (its name, an everyday word for it, part of its name, one of its values), from
the user's answer to a clarification, or by default: the analyst picked a convenient column because
the question named nothing for that role. A default is fine when the question names no variable
("Summarise this file"); when it does name one that no column matched ("rainy days"), the numbers
would be right about the wrong thing, so the analyst asks (role_question.py).

Pure functions over the plan, the question and the column summaries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from app.understanding import vocabulary
from app.understanding.bilingual import is_row_word_zh, senses
from app.understanding.column_forms import counted_by_word
from app.understanding.gate_words import FAMILIES, has_word
from app.understanding.general_words import analysis_words, is_general_en, is_row_word
from app.understanding.kinds import NUMBER_CUT, moves_together
from app.understanding.named_months import named_months, recent_stretch
from app.understanding.profile_reading import NUMERIC
from app.understanding.roles import Mention, Span, named_values, value_position
from app.understanding.segment import whole_words
from app.understanding.text import (
    AUXILIARIES,
    HAN_RUN,
    MERGED_HEADER,
    closed_class_spans,
    header_leaf,
    is_cjk,
    split_unit,
    tagged_words,
)
from app.understanding.words import STOP, core_name, name_words, stem, value_words, words_at

# roles.MATCH_KINDS (how the words name a column), then a named value, the user's answer, a default
How = Literal["name", "spelling", "yes-no", "synonym", "loose", "partial", "semantic", "value", "answer", "default"]
Role = Literal["outcome", "group", "predictors", "date", "filter"]
# The filter role's value when the user chose to keep every row (the filter chip's "no filter"): one marker
# for the analyst's reading, the page's chips and the reports, each of which says it in its own language.
NO_FILTER = "(none)"


@dataclass(frozen=True)
class Source:
    """One role of a plan, its columns, and how the question (or the user, or a default) chose them."""

    role: Role
    columns: tuple[str, ...]
    how: How
    phrases: tuple[str, ...] = ()  # the question's words that named the columns ("money"), where a match did

    @property
    def default(self) -> bool:
        return self.how == "default"


@dataclass
class Provenance:
    """What a plan knows of its own choices: each role's source, the question's words no column or
    value matched, and the key of the question (its clarification topics are `role.<key>.<role>`)."""

    key: str
    question: str = ""
    sources: list[Source] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)  # phrases, in question order
    answered: dict[str, str] = field(default_factory=dict)  # role -> the user's answer (a column or not)
    columns: list[dict[str, Any]] = field(default_factory=list)  # the dataset's columns, as the plan saw them
    asks_groups: bool = False  # the question asks to split the rows into groups (app.analyst.plan.asks_for_groups)

    def defaults(self) -> list[Source]:
        return [s for s in self.sources if s.default]


def part_named(question: str, name: str) -> bool:
    """Whether the question uses one word of a column's name of several ("pass" of n_passed), by its stem,
    or three Chinese characters in a row of it ("测评分数" for 培训后测评分)."""
    parts = {stem(w) for w in name_words(name) if len(w) >= 3 and w not in STOP}
    if len(name_words(name)) > 1 and any(stem(w) in parts for _, _, w in words_at(question) if w not in STOP):
        return True
    return any(
        run[i : i + 3] in question for run in HAN_RUN.findall(name) if len(run) >= 3 for i in range(len(run) - 2)
    )


def same_family(question: str, name: str) -> bool:
    """Whether the question uses a word of a column's metric family (gate_words: revenue, orders, users)."""
    return any(has_word(f["words"], question) and has_word(f["words"], name) for f in FAMILIES.values())


def family_words(columns: list[dict[str, Any]]) -> list[str]:
    """The words of the metric families the numeric columns belong to: they name those columns."""
    numeric = [c["name"] for c in columns if c["type"] in NUMERIC]
    return [w for f in FAMILIES.values() if any(has_word(f["words"], n) for n in numeric) for w in f["words"]]


# --- the question's words that name nothing ------------------------------------------------------
# Words of an analysis question that are not variables: what kind of answer it wants, how things
# compare or move, time units, quantities and everyday verbs (vocabulary/unmatched_words.toml). The
# stems are compared too.
_FILE = "unmatched_words"
# The things a table's rows are: "Do older patients …", "each order": the rows, not a variable to look for
# (general_words.is_row_word); but "top 5 customers", "which customers" ranks them, so there they are
# content (a column to find).
ZH_ROW_WORDS = vocabulary.words(_FILE, "zh_row_words")
_ZH_RANKS_ROWS = re.compile(r"(?:哪些|哪几|哪位|哪个|前\s*[\d一二三四五六七八九十]+\s*[名位个]?|最\S{0,3}的)$")
_RANKS_ROWS = re.compile(r"(?:\btop|\bbottom|\bwhich|\bbest|\bworst|\d+)\s+(?:\w+\s+)?$")

# Particles are cut out wherever they are; other single characters (天, 高, 多) only when they are a
# whole fragment (inside a word they are content: 下雨天).
_ZH_PARTICLES = set(vocabulary.characters(_FILE, "zh_particles"))
_ZH_COMPARED = set(vocabulary.characters(_FILE, "zh_compared"))  # and a modal before the verb: 生意会（变差）
GENERAL_ZH = sorted(
    dict.fromkeys(
        [
            *vocabulary.words(_FILE, "general_zh"),
            *analysis_words("zh"),  # the gates' words of analysis, the units of time: not listed again
            *vocabulary.words(_FILE, "interrogatives_zh"),
            *_ZH_PARTICLES,
        ]
    ),
    key=len,
    reverse=True,
)
# Numbers with their counting word or unit: 三个月, 前5名, 2024年.
_ZH_COUNT = re.compile(
    r"[\d一二两三四五六七八九十百千万几]+\s*(?:个)?(?:月|年|周|天|日|季度|星期|名|位|家|种|次|人|元|倍|%|"
    r"块|套|件|单|笔|份|只|台|辆|间|张|项|分|条|本|家店)?"
)
_JOINERS = set(vocabulary.words(_FILE, "joiners"))


def unmatched_words(
    question: str,
    columns: list[dict[str, Any]],
    spans: list[Span],
    extra: tuple[str, ...] = (),
    used: tuple[str, ...] = (),
) -> list[str]:
    """The question's content words that name no column and no value, as phrases in question order
    ("boys and girls", "rainy", "下雨天生意"): stop words, question-type words, units, numbers, the
    words of `extra` (the dataset's name) and a word of the name of a column the plan `used` ("pass"
    of n_passed) are not content."""
    text = _blank_named(question.lower(), columns, spans)
    for cut in NUMBER_CUT.finditer(text):  # "超过100", "over 50": a cut's comparison word and number name nothing
        for group in ("pre", "n1", "n2", "post"):  # (what stands between, "1克拉以上", may name its column)
            if cut.group(group):
                start, end = cut.span(group)
                text = text[:start] + " " * (end - start) + text[end:]
    if any(c.get("type") == "datetime" for c in columns) and (months := named_months(text) or recent_stretch(text)):
        start, end = months.span  # "in March", "3月份", "最近三个月": the dates' filter (time_steps.time_filter)
        text = text[:start] + " " * (end - start) + text[end:]
    ids = tuple(c["name"] for c in columns if c.get("type") == "identifier")  # "Member ID": the rows are members
    # "calls" is the rows of a call log (and a word of its file's name), but a variable to find when
    # columns are named with it (Calls Received, Calls Answered); the identifier's own name is no such column
    # ("walks" of Walk ID are the rows, though its name has the word)
    named_parts = {stem(w) for c in columns if c["name"] not in ids for w in name_words(c["name"]) if len(w) >= 3}
    for word in (*extra, *ids):  # the dataset's name, and its words ("cafe_sales": cafe, sales)
        for part in {word, *re.split(r"[\W_]+", word)}:
            if len(part) >= 3 and (part in ids or stem(part.lower()) not in named_parts):
                text = _blank_word(text, part.lower())
    parts = {stem(w) for name in used for w in name_words(name) if len(w) >= 3}  # "pass" of n_passed
    # a row word a Chinese header is called in English names that column, as a word of an English header does
    # (not a word of the file's name: "park" of car_park_tickets stays the data's name beside 停车 "to park")
    glossed = _glossed_names(columns)
    phrases: list[str] = []
    current: list[str] = []
    pending: str | None = None
    for start, _, word in _hyphened(text, words_at(text)):
        if word in _JOINERS and current:
            pending = word
            continue
        rows = (
            is_row_word(word)
            and not _RANKS_ROWS.search(question.lower()[:start])
            and stem(word) not in named_parts | glossed
        )
        if _content_compound(word) and stem(word) not in parts and not rows:
            current += [pending, word] if pending else [word]
        elif current:
            phrases.append(" ".join(current))
            current = []
        pending = None
    if current:
        phrases.append(" ".join(current))
    # the identifier's words ("walk" of Walk ID) name the rows in a Chinese word too: 遛狗, to walk a dog
    id_stems = {
        stem(w)
        for name in ids
        for w in name_words(name)
        if len(w) >= 3 and stem(w) not in named_parts and not is_general_en(w)
    }
    text = _without_zh_rows(text, frozenset(id_stems))
    whole = question.lower()  # the blanked text keeps every offset: its words are the question's
    chinese = _content_zh(text, whole if len(whole) == len(text) else text)
    return phrases + [p for p in chinese if not _rest_of_partial_name(whole, p, spans)]


def _glossed_names(columns: list[dict[str, Any]]) -> set[str]:
    """What the Chinese headers are called in English, by the dictionary: each one-word sense of a word of the
    header (会员 "member"), as a stem. A row word that is a header's own name in the other language names that
    column ("members" on a log with a 会员 是/否 column says whether the buyer was one), as it does when the
    header is written in English (Member ID)."""
    from app.understanding.bilingual import chinese_words, senses

    found: set[str] = set()
    for column in columns:
        for word in chinese_words(column["name"]):
            found |= {w for sense in senses(word) if len(sense) == 1 for w in sense}
    return found


def _without_zh_rows(text: str, id_stems: frozenset[str] = frozenset()) -> str:
    """The text with the Chinese words for what its rows are blanked out: the listed ones (男员工, 大家),
    any noun whose dictionary sense is a row word (受访者: respondent; bilingual.is_row_word_zh) and any word
    a sense of which has a word of the rows' identifier (`id_stems`: 遛狗, to walk a dog, on a sheet numbered by
    Walk ID), but not where they are ranked (哪些顾客, 前5名顾客: a column to find)."""
    places = [(m.start(), m.end()) for word in ZH_ROW_WORDS for m in re.finditer(word, text)]
    if HAN_RUN.search(text):
        for word, tag, start, end in tagged_words(text):
            # a noun (购买, to purchase, is a verb); "会员和非会员": a word set against its own negation is an
            # attribute to compare, not the rows
            if tag.startswith("n") and len(word) >= 2 and is_row_word_zh(word) and f"非{word}" not in text:
                places.append((start, end))
            elif id_stems and len(word) >= 2 and any(sense & id_stems for sense in senses(word)):
                places.append((start, end))
    for start, end in places:
        if not _ZH_RANKS_ROWS.search(text[:start]):
            text = text[:start] + " " * (end - start) + text[end:]
    return text


def semantic_mentions(
    question: str, columns: list[dict[str, Any]], mentions: list[Mention], extra: tuple[str, ...] = ()
) -> list[Mention]:
    """The mentions with, for each phrase of the question the rules left unmatched, the column it
    means by the embedding matcher (semantic.py) when that is confident: a "semantic" mention, weak
    (the reading says it was assumed). Cross-language too: "score in English" reaches 英语. The
    model is only consulted when some phrase is left, so a question the rules read fully costs nothing."""
    spans = [(m.start, m.end, m.name) for m in mentions]
    by_value, _ = named_values(question, columns, spans)
    named = {m.name for m in mentions} | ({by_value} if by_value else set())
    phrases = unmatched_words(question, columns, spans, extra, tuple(named))
    if not phrases:
        return mentions
    from app.understanding import semantic  # the model's module: only when a phrase is left

    text, found, taken = question.lower(), list(mentions), set(named)
    # "how many children", "多少个孩子": the thing counted names the rows, not a column to measure — unless it is
    # what a column counts, said in the other language ("how many cups" of 杯数: its total)
    left = []
    for phrase in phrases:
        at = text.find(phrase)
        if at >= 0 and not _counted(text[:at], text[at + len(phrase) :]):
            left.append(phrase)
        elif at >= 0 and (counted := counted_by_word(phrase, columns)) and counted not in taken:
            found = [m for m in found if not _verb_of_the_count(text, at + len(phrase), m, columns)]
            found.append(Mention(at, at + len(phrase), counted, "semantic"))
            taken.add(counted)
    left = [p for p in left if not _group_of_named(p, named)]
    for phrase in list(left):
        if owned := _owned_mention(question, columns, found, phrase):
            replaced, mention = owned
            found = [m for m in found if m != replaced] + [mention]
            taken = (taken - ({replaced.name} if replaced else set())) | {mention.name}
            left.remove(phrase)
    while left:  # a column taken leaves the race: "class" may lead once 英语 went to "english"
        names = semantic.candidate_columns(question, columns, taken)
        # a phrase that runs two columns' words together (部门离职) is read word by word
        left = [part for p in left for part in (semantic.compound_parts(p, names) or [p])]
        sure = [(p, best) for p in left if (best := semantic.best_column(p, names)) and not _shares_word(p, best)]
        if not sure:
            break
        phrase, best = sure[0]
        at = text.find(phrase)
        taken.add(best)
        found.append(Mention(at, at + len(phrase), best, "semantic"))
        left.remove(phrase)
    if left and moves_together(question):
        found = _quantities_together(question, columns, found, taken, left)
    return sorted(found)


def _verb_of_the_count(text: str, after: int, mention: Mention, columns: list[dict[str, Any]]) -> bool:
    """Whether a number column's mention is the main verb of the clause that asks "how many <things>" ("how many
    cups did we sell": sell, read as 销售额 by its words, says what was done to the cups, not a second number)."""
    kinds = {c["name"]: c for c in columns}
    if kinds.get(mention.name, {}).get("type") not in NUMERIC or mention.start < after:
        return False
    between = re.findall(r"[a-z']+", text[after : mention.start])
    return (
        2 <= len(between) <= 4 and between[0] in AUXILIARIES
    )  # an auxiliary and its subject: "did we", "have the stalls"


def _group_of_named(phrase: str, named: set[str]) -> bool:
    """Whether a phrase holds the merged group header of a column the question names by its leaf
    ("早班产奶量": 早班 names "产奶量（升） / 早班", and 产奶量 is its group): the phrase says which group the
    named column is in, not another column. Without this, the sibling leaf (晚班) wins the phrase alone
    once the named one has left the race."""
    said = phrase.lower()
    for name in named:
        if MERGED_HEADER not in name:
            continue
        group, _ = split_unit(name.rsplit(MERGED_HEADER, 1)[0])
        if group and group in said:
            return True
    return False


def _rest_of_partial_name(text: str, phrase: str, spans: list[Span]) -> bool:
    """Whether a Chinese phrase is the rest of a column's name said in other words, right where the name has
    it: "付款方式" against 支付方式, whose 方式 the rules read as a partial name; 付款 stands where the name has
    支付, so the question says the one column in its own words, and 付款 names no second one (by meaning it
    was as near 会员). The same after a partial name that opens the column's name."""
    at = text.find(phrase)
    if at < 0 or not all(is_cjk(c) for c in phrase):
        return False
    for start, end, name in spans:
        said, leaf = text[start:end], core_name(header_leaf(name)).lower()
        if len(leaf) > len(said) and (
            (at + len(phrase) == start and leaf.endswith(said)) or (at == end and leaf.startswith(said))
        ):
            return True
    return False


def _measurement(column: dict[str, Any]) -> bool:
    """A number that is measured (not an identifier, a yes/no, a code or personal data)."""
    plain = not (column.get("binary") or column.get("coded") or column.get("pii"))
    return column["type"] in NUMERIC and column["type"] != "identifier" and plain


def _quantities_together(
    question: str, columns: list[dict[str, Any]], found: list[Mention], taken: set[str], left: list[str]
) -> list[Mention]:
    """A question that asks whether two quantities rise together ("开的里程越多，收的钱是不是也越多",
    "do the trips that burn more diesel come back with more fish") relates two measurements: a phrase
    left unmatched there is placed among the measurements alone (semantic.assumed_column), not among
    every column, where a name or a date crowds the lead ("fish" is as near 船名 as 渔获量). Until two
    measurements are named; each is weak ("semantic": the reading says it was assumed)."""
    from app.understanding import semantic  # only for a phrase left unmatched

    kinds = {c["name"]: c for c in columns}
    measured = {m.name for m in found if m.name in kinds and _measurement(kinds[m.name])}
    text = question.lower()
    while left and len(measured) < 2:
        names = [n for n in semantic.candidate_columns(question, columns, taken) if _measurement(kinds[n])]
        placed = [(p, best) for p in left if (best := semantic.assumed_column(p, names))]
        if not placed:
            break
        phrase, best = max(placed, key=lambda pair: pair[1].score)
        at = text.find(phrase)
        found = [*found, Mention(at, at + len(phrase), best.name, "semantic")]
        measured.add(best.name)
        taken.add(best.name)
        left.remove(phrase)
    return found


# a count's cue right before a phrase, with a Chinese measure word between ("多少个", "how many")
_HOW_MANY_BEFORE = re.compile(
    rf"(?:{vocabulary.alternation('question_kinds', 'how_many')})\s*[个位名件家趟只条次]?\s*$", re.I
)


def _owned_mention(
    question: str, columns: list[dict[str, Any]], found: list[Mention], phrase: str
) -> tuple[Mention | None, Mention] | None:
    """A phrase the rules left unmatched that says whose the next word is ("kids' tickets", "the guests'
    rating"), read with that word: the whole phrase's column by meaning when it is confident ("kids'
    tickets" is Tickets Sold / Children, where "kids" alone is as near to Cinema). (the mention of the
    word it replaces, or None, and the new one); None when the phrase is no possessive or no column is sure."""
    from app.understanding import semantic  # only for a phrase left unmatched

    text = question.lower()
    at = text.find(phrase)
    mark = _POSSESSIVE_AFTER.match(text[at + len(phrase) :]) if at >= 0 else None
    word = re.match(r"\s*[a-z]+", text[at + len(phrase) + mark.end() :]) if mark else None
    if mark is None or word is None:
        return None
    end = at + len(phrase) + mark.end() + word.end()
    thing = next((m for m in found if at < m.start < end and m.kind != "semantic"), None)
    others = {m.name for m in found if m is not thing}
    best = semantic.best_column(question[at:end], semantic.candidate_columns("", columns, others))
    if best is None or (thing is not None and best == thing.name):
        return None
    return thing, Mention(at, max(end, thing.end if thing else end), best, "semantic")


# an English possessive right after a phrase ("kids' tickets", "the driver's time"): the phrase says whose,
# the noun after it is the thing
_POSSESSIVE_AFTER = re.compile(r"^(?:'s?|’s?)(?!\w)")


def counted_measure(question: str, spans: list[tuple[int, int, str]], measures: list[str]) -> str | None:
    """The one measure a count's cue stands right before ("how many kids' tickets did we sell": the
    tickets the kids bought, not the sales a verb named), when exactly one does."""
    text = question.lower()
    near = {name for start, _, name in spans if name in measures and _counted(text[:start])}
    return near.pop() if len(near) == 1 else None


def _counted(before: str, after: str = "") -> bool:
    """Whether a phrase starting after `before` (and followed by `after`) is the thing a count asks about
    ("how many orders"); not a possessive ("how many kids' tickets": tickets are counted, of the kids)."""
    return bool(_HOW_MANY_BEFORE.search(before)) and not _POSSESSIVE_AFTER.match(after)


def _shares_word(phrase: str, name: str) -> bool:
    """Whether the phrase has a word of the column's name (by stem) that the rules saw and still did
    not take as naming it ("top 5 customers" is not Customer Type): the matcher does not overrule them."""
    named = {stem(w) for w in name_words(name) if len(w) >= 3}
    return any(stem(w) in named for w in name_words(phrase) if len(w) >= 3)


def _content_en(word: str) -> bool:
    return len(word) >= 3 and not word[0].isdigit() and not is_general_en(word)


def _hyphened(text: str, found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The words with a hyphenated compound as one word ("grown-ups", "e-mail"): its pieces are no words
    of their own, and a question asked about "ups" would be about a fragment."""
    joined: list[tuple[int, int, str]] = []
    for start, end, word in found:
        if joined and text[joined[-1][1] : start] == "-":
            first, _, before = joined.pop()
            joined.append((first, end, f"{before}-{word}"))
        else:
            joined.append((start, end, word))
    return joined


def _content_compound(word: str) -> bool:
    """A content word; a hyphenated compound is one when a piece of it is ("grown-ups"; not "year-on-year")."""
    return any(_content_en(piece) for piece in word.split("-")) if "-" in word else _content_en(word)


def _content_zh(text: str, words_of: str) -> list[str]:
    """The Chinese phrases of `text` that name no column, each made of whole words of `words_of` (the
    unblanked text, same offsets): a piece cut inside a word (共收 of 一共收了) keeps only its whole words."""
    found = []
    closed = closed_class_spans(words_of)  # 哪个, 的, 之间, 多少: grammar, by the part-of-speech tagger
    for start, end in closed:
        text = text[:start] + " " * (end - start) + text[end:]
    for run_match in HAN_RUN.finditer(text):
        run = run_match.group(0)
        pieces = [run]
        for word in GENERAL_ZH:
            if len(word) == 1 and word not in _ZH_PARTICLES:
                continue  # a bare 天/高/多 is removed only as a fragment of its own (below)
            pieces = [p for piece in pieces for p in piece.split(word)]
        pieces = [p for piece in pieces for p in _ZH_COUNT.sub(" ", piece).split()]  # after 一下/一直/统一
        # a comparison's adjective after the noun: 比非会员高
        pieces = [p[:-1] if len(p) >= 3 and p[-1] in _ZH_COMPARED else p for p in pieces]
        at = 0
        for piece in pieces:
            begin = run.index(piece, at)
            at = begin + len(piece)
            span = whole_words(words_of, run_match.start() + begin, run_match.start() + at)
            phrase = text[span[0] : span[1]] if span else ""
            if len(phrase) >= 2 and phrase not in GENERAL_ZH:
                found.append(phrase)
    return found


def _blank_named(text: str, columns: list[dict[str, Any]], spans: list[Span]) -> str:
    """The text with the columns it names and every value it names (any column's) blanked out."""
    for start, end, _ in spans:
        text = text[:start] + " " * (end - start) + text[end:]
    for word in sorted(family_words(columns), key=len, reverse=True):
        text = _blank_word(text, word.lower())
    for column in columns:
        values = [str(v) for v in column.get("values") or []]
        for value in values:
            for word in value_words(value):
                text = _blank_word(text, word.lower())
            for _ in range(4):  # its everyday forms too (value_matching): "rainy" for Rain, 男生 for 男
                at = value_position(text, value, values, int(column.get("levels") or 0))
                if at < 0:
                    break
                end = at + max(1, len(re.match(r"[a-z0-9'-]*", text[at:]).group(0)))  # type: ignore[union-attr]
                text = text[:at] + " " * (end - at) + text[end:]
    return text


def _blank_word(text: str, word: str) -> str:
    if len(word) < 2 and word.isascii() or word in STOP:
        return text
    pattern = rf"(?<![a-z0-9]){re.escape(word)}(?:s|es)?(?![a-z0-9])" if word.isascii() else re.escape(word)
    return re.sub(pattern, lambda m: " " * len(m.group(0)), text)
