"""Which roles the question gives the columns, beyond its keywords (zh/en). Pure functions, easy
to test:

- which column a regression explains ("what drives X", "影响X的因素") and which columns are its
  predictors ("on A, B and C", "用A和B来…");
- which category values the question names ("new and returning customers" → Customer Type);
- how far ahead a forecast should go ("the next three months", "未来3个月") and at which period.

What the data profile shows is read in profile_reading.py.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any, NamedTuple

from app.understanding import vocabulary
from app.understanding.column_forms import (
    bracketed_name,
    head_word_mentions,
    initials_mentions,
    joined_mentions,
    leading_word_mentions,
    money_column,
    unit_mentions,
    yes_no_mentions,
    zh_head_mentions,
    zh_leading_mentions,
    zh_part_mentions,
)
from app.understanding.everyday_words import CONDITION_WORDS, MONEY_WORDS, is_condition_word
from app.understanding.period_groups import period_group_places
from app.understanding.profile_reading import GROUPING, LOOKUP_LEVELS, NUMERIC
from app.understanding.spelling import text_variants
from app.understanding.text import COUNT_WORDS_EN, DEGREES, MERGED_HEADER, header_leaf, tokens, word_forms
from app.understanding.value_matching import (
    inflected_at,
    romanized_at,
    value_forms,
    zh_single_value_at,
    zh_yes_no_mark,
)
from app.understanding.weekdays import day_at
from app.understanding.wide_pairs import marked_pairs
from app.understanding.words import (
    SYNONYMS,
    core_name,
    is_function_word,
    loose_mentions,
    name_words,
    spread_mentions,
    stem,
    value_words,
    words_at,
)

_FILE = "roles"  # vocabulary/roles.toml: the words; the patterns with structure stay here

# --- columns named in the question, with their positions ------------------------------------------
Span = tuple[int, int, str]  # start, end, column name


class Mention(NamedTuple):
    """Where a column is named and how: `kind` is one of MATCH_KINDS."""

    start: int
    end: int
    name: str
    kind: str


# How a column can be named, strongest first: its name (or its other spelling: colour/color), the
# core of a yes/no name written as a question, a synonym or everyday word, a stem or abbreviation,
# a partial form (column_forms); last, a phrase the rules left unmatched that the embedding matcher
# places (role_sources.semantic_mentions). Each later kind only claims text no earlier one has. The
# weak kinds are taken without asking, but the reading says they were assumed, never checked.
MATCH_KINDS = ("name", "spelling", "yes-no", "synonym", "loose", "partial", "semantic")
WEAK_KINDS = frozenset({"partial", "semantic"})


def column_spans(question: str, columns: list[dict[str, Any]], synonyms: dict[str, tuple[str, ...]]) -> list[Span]:
    """Where each column is named, in question order (see `column_mentions`)."""
    return [(m.start, m.end, m.name) for m in column_mentions(question, columns, synonyms)]


def column_mentions(
    question: str, columns: list[dict[str, Any]], synonyms: dict[str, tuple[str, ...]]
) -> list[Mention]:
    """Where each column is named and how, in question order. Longest names claim their text first,
    so 'Unit Price' is not also read as 'Price'; then the weaker kinds of MATCH_KINDS in turn."""
    text = question.lower()
    found: list[Mention] = []
    longest_first = sorted(columns, key=lambda c: -len(c["name"]))
    for col in longest_first:
        _claim(text, col["name"].lower(), col["name"], found, "name")
    for col in sorted(columns, key=lambda c: -len(core_name(c["name"]))):  # without its unit: "Delivery Time"
        _claim(text, core_name(col["name"]).lower(), col["name"], found, "name")
    # a merged header's leaf, also without its unit: 销售额 of "销售情况 / 销售额（元）"
    leaves = {(form, name) for leaf, name in header_leaves(columns) for form in (leaf, core_name(leaf)) if form}
    for leaf, name in sorted(leaves, key=lambda s: (-len(s[0]), s)):
        _claim(text, leaf.lower(), name, found, "name")
    seconds = [(second, col["name"]) for col in columns if (second := bracketed_name(col["name"]))]
    for second, name in sorted(seconds, key=lambda s: -len(s[0])):  # "GDP per capita": Economy (GDP per Capita)
        _claim(text, second.lower(), name, found, "name")
    for col in longest_first:  # colour/color; "overtime" for Over Time
        for variant in [*text_variants(col["name"]), *joined_name(col["name"])]:
            _claim(text, variant, col["name"], found, "spelling")
    for col in longest_first:
        _take(yes_no_mentions(question, col["name"]), col["name"], found, "yes-no")
    # everyday words, the longest first ("年龄段" is Age Group before "年龄" is Age); of columns sharing
    # a word, the one more of whose name the question uses ("longest petals": Petal.Length).
    # Measured and not kept (wip/read12): the listed words read the other way across languages (an English
    # key naming a Chinese column whose whole name is one of its words: "category" → 品类, "store" → 门店,
    # where the key names one column only). It reached 品类 for "Which category sold more?", won no training
    # task, lost one (tasks workspace_unclear_asks: "store" → 门店 picked the book surely, the scope was not
    # asked) and a fact of a sealed set (holdout12, 79 → 78 /133).
    # A merged header's group word is no part of a column's name: "成绩" of "成绩 / 数学" names the group,
    # not its first leaf, so the words and partial forms below read each column by its spoken name. A leaf
    # said with its group word ("数学成绩", "math score") is the leaf; a group word alone names no column.
    # Unless the leaves are a pair's markers ("Typing Speed / Before", "/ After"): there the group is the
    # measure, and the markers the question says pick its side (reading.marked_sides).
    spoken = spoken_names(columns)
    paired = _group_measures(columns)
    ranked = sorted(columns, key=lambda c: -_words_named(question, spoken[c["name"]]))
    words = [
        (word, rank, col["name"])
        for rank, col in enumerate(ranked)
        for key, listed in synonyms.items()
        if synonym_key_fits(key, col["name"] if col["name"] in paired else spoken[col["name"]])
        for word in listed
    ]
    if money := money_column(columns):  # "收的钱" → Total Charge (£): the table's one column in money
        rank = next(i for i, c in enumerate(ranked) if c["name"] == money)
        words += [(word, rank, money) for word in MONEY_WORDS]
    compounds = _chinese_vocabulary_places(text, synonyms)
    inflected = _inflected_places(text)
    for word, _, name in sorted(words, key=lambda w: (-len(w[0]), w[1])):
        own = {w.lower() for w, _, n in words if n == name}
        if word.isascii():
            _claim(text, word.lower(), name, found, "synonym")
            _take(inflected.get(word.lower(), ()), name, found, "synonym")  # heavier: heavy
            continue
        places = [(m.start(), m.end()) for m in re.finditer(re.escape(word.lower()), text)]
        _take([p for p in places if not _inside_other_word(p, compounds, own)], name, found, "synonym")
    # a period the question goes through ("每个月", "each month", "monthly") names its column (月份, Month,
    # a column of 1月..6月) as the grouping where it names no other: its words are an everyday name of that
    # column. Beside a grouping it names ("每个月各套餐的…占比") the period stays the analyst's (totals.each_period)
    _take_period_group(text, columns, found)
    # stems read what a person calls a column: a merged header's leaf ("Hours Out" of "Time / Hours Out"), whose
    # group word is no part of its name (the question need not say "time")
    for col in longest_first:  # stems and abbreviations: "survive", "birth weight"
        said = spoken[col["name"]]
        _take([*loose_mentions(question, said), *spread_mentions(question, said)], col["name"], found, "loose")
    names = [spoken[c["name"]] for c in columns]
    said_values = _value_places(text, columns)
    for col in longest_first:  # partial forms, last: "blood pressure" → Systolic BP, "blue-collar" → bluecol
        if col.get("type") == "identifier":  # "员工" is the rows (男员工), not a partial name of 员工编号
            continue
        name = spoken[col["name"]]  # "各班" → 班级 of "基本信息 / 班级"
        places = [
            *initials_mentions(question, name, names),
            *joined_mentions(question, name),
            *leading_word_mentions(question, name, names),
            *zh_leading_mentions(question, name, names, col.get("type") in NUMERIC),
            *head_word_mentions(question, name, names),
            *zh_part_mentions(question, name, names),
            *unit_mentions(question, name, names),
            *zh_head_mentions(question, name, names, col.get("type") in NUMERIC),
        ]
        # a piece of a value the question names is that value: "不施肥" is 肥料's, not 施肥量 (kg/亩)
        kept = [(a, b) for a, b in places if not any(s <= a and b <= e for s, e in said_values)]
        _take(kept, col["name"], found, "partial")
    # a header written inside a longer value the question writes out ("东门店" holds 门店) is that value's
    found = [
        m for m in found if not any(a <= m.start and m.end <= b and b - a > m.end - m.start for a, b in said_values)
    ]
    found = _without_verb_of_a_unit(question, _without_rows_words(question, sorted(found)), columns)
    return _without_scene_names(question, _condition_before_name(question, found, columns, synonyms), columns)


def _group_measures(columns: list[dict[str, Any]]) -> set[str]:
    """The columns of a marked pair (wide_pairs.marked_pairs): their shared part, a merged header's group
    word among them, is what they measure, so it names them."""
    numbers = [
        c["name"] for c in columns if MERGED_HEADER in c["name"] and c.get("type") in NUMERIC and not c.get("pii")
    ]
    return {name for earlier, later, _ in marked_pairs(numbers) for name in (earlier, later)}


def _take_period_group(text: str, columns: list[dict[str, Any]], found: list[Mention]) -> None:
    """The column of the period the question goes through, as a synonym mention, where no grouping is named.
    A named number with a few values (`coded`: 销量 of 51..60 on a small sheet) is no such grouping: the
    question's period word says how to group, and the number is more likely what it adds up."""
    kinds = {c["name"]: c for c in columns}
    if not any(m.name in kinds and _named_grouping(kinds[m.name]) for m in found):
        for start, end, name in period_group_places(text, columns):
            _take([(start, end)], name, found, "synonym")


def _named_grouping(column: dict[str, Any]) -> bool:
    """Whether a named column certainly groups rows: a category or a yes/no column, not a coded number."""
    return column["type"] in GROUPING or bool(column.get("binary"))


def _inflected_places(text: str) -> dict[str, list[tuple[int, int]]]:
    """Where each English word of the text stands that is not its own dictionary form, by that form
    (heavier → heavy, earned → earn): a listed word is found in all its forms (text.lemma)."""
    places: dict[str, list[tuple[int, int]]] = {}
    for token in tokens(text):
        if not token.is_cjk and token.lemma != token.word:
            places.setdefault(token.lemma, []).append((token.start, token.end))
    return places


def _chinese_vocabulary_places(text: str, synonyms: dict[str, tuple[str, ...]]) -> list[tuple[int, int, str]]:
    """Where the question writes any Chinese word of the vocabulary, whatever the columns."""
    listed = {w.lower() for words in synonyms.values() for w in words if not w.isascii()}
    return [(m.start(), m.end(), w) for w in listed for m in re.finditer(re.escape(w), text)]


def _inside_other_word(place: tuple[int, int], compounds: list[tuple[int, int, str]], own: set[str]) -> bool:
    """Whether a Chinese word's place lies inside a longer vocabulary word for another column: "人口" in
    "失业人口" (the unemployed) is not the Population column, though that table has no unemployed column."""
    start, end = place
    return any(s <= start and end <= e and e - s > end - start and w not in own for s, e, w in compounds)


# "Windy days", "hot months": the plural of a time unit after a word that names a column is the
# rows described by it, not the Day or Month column ("Do windy days have less ozone?" is not about
# the day of the month). The units are the English periods below (days, weeks …) and the other rows_units.
_ROWS_UNITS = re.compile(
    rf"(?:{'|'.join(unit for unit in vocabulary.keys(_FILE, 'periods') if unit.isascii())})s"
    rf"|{vocabulary.word_alternation(_FILE, 'rows_units')}",
    re.I,
)


def _without_verb_of_a_unit(question: str, found: list[Mention], columns: list[dict[str, Any]]) -> list[Mention]:
    """ "每个月卖了多少杯" on 杯数 and 销售额: the amount is asked in cups (unit_mentions: the unit a column counts
    in, after 多少/几), so the verb right before the question word (卖了, read as 销售额 by its words) says what
    was done, not a second number (two numbers named read as a relationship)."""
    numbers = {str(c["name"]) for c in columns if c.get("type") in NUMERIC}
    spoken = spoken_names(columns)
    asked = [
        (start, name)
        for name in numbers
        for start, _ in unit_mentions(question, spoken[name], [spoken[n] for n in numbers])
    ]
    before = {
        (m.start, m.end, m.name)
        for m in found
        for start, name in asked
        if m.name in numbers and m.name != name and _ZH_HOW_MUCH_BEFORE.fullmatch(question[m.end : start])
    }
    return [m for m in found if (m.start, m.end, m.name) not in before]


# what stands between a verb and the unit it asks an amount in: 了, then 多少 or 几 ("卖了多少杯", "卖几杯")
_ZH_HOW_MUCH_BEFORE = re.compile(r"\s*[了过]?\s*(?:多少|几)\s*")


def _without_rows_words(question: str, found: list[Mention]) -> list[Mention]:
    kept: list[Mention] = []
    for mention in found:
        said = question[mention.start : mention.end]
        describes = kept and not question[kept[-1].end : mention.start].strip()
        if describes and _ROWS_UNITS.fullmatch(said) and mention.name != kept[-1].name:
            continue
        kept.append(mention)
    return kept


# "the weather is hot", "天气很热": a linking word at most between a category's name and a condition word
_INTENSIFIERS_EN = "|".join(re.escape(word) + r"\s+" for word in vocabulary.words(_FILE, "intensifiers_en"))
_GAP_AFTER = re.compile(
    rf"\s*(?:(?:{vocabulary.alternation(_FILE, 'linking_en')})\s+)?(?:{_INTENSIFIERS_EN})?"
    rf"|\s*(?:{vocabulary.word_alternation(_FILE, 'intensifiers_zh')})?\s*",
    re.I,
)


def _without_scene_names(question: str, found: list[Mention], columns: list[dict[str, Any]]) -> list[Mention]:
    """ "天气热的时候，冰淇淋卖得多吗？" on a sheet with 天气 (晴/雨/多云) and 气温: "热" is about 气温. A category
    named just before an everyday condition word (hot, cold, windy: CONDITION_WORDS) of a numeric column,
    or just after one ("hot weather", "热天气"), only sets the scene; the number is what the question asks
    about. Kept when the word is one of the category's own values (天气 = 热/冷)."""
    kinds = {c["name"]: c for c in columns}
    dropped = set()
    for first, second in zip(found, found[1:]):
        gap = question[first.end : second.start]
        if _GAP_AFTER.fullmatch(gap) and _sets_scene(question, first, second, kinds):
            dropped.add(first)
        elif not gap.strip() and _sets_scene(question, second, first, kinds):
            dropped.add(second)
    return [m for m in found if m not in dropped]


def _condition_before_name(
    question: str, found: list[Mention], columns: list[dict[str, Any]], synonyms: dict[str, tuple[str, ...]]
) -> list[Mention]:
    """ "热天气卖得多吗": the condition word 热天 runs into the category's name 天气, which claimed the text first;
    the word is read for its numeric column (气温) in place of the category (kept when it is one of the
    category's values)."""
    kinds = {c["name"]: c for c in columns}
    text = question.lower()
    for at, mention in enumerate(found):
        category = kinds.get(mention.name)
        if not (category and category["type"] in GROUPING and mention.kind == "name"):
            continue
        for word in CONDITION_WORDS:
            start = text.rfind(word, 0, mention.start + 1)
            if word.isascii() or start < 0 or not start < mention.start < start + len(word) <= mention.end:
                continue
            number = next(
                (
                    c["name"]
                    for c in columns
                    if c["type"] in NUMERIC
                    and not c.get("pii")
                    and any(word in words for key, words in synonyms.items() if synonym_key_fits(key, c["name"]))
                ),
                None,
            )
            if number and not any(str(v) in word for v in category.get("values") or []):
                return sorted([*found[:at], Mention(start, start + len(word), number, "synonym"), *found[at + 1 :]])
    return found


def _sets_scene(question: str, scene: Mention, said: Mention, kinds: dict[str, dict[str, Any]]) -> bool:
    """Whether a category's mention is the scene of a numeric column's condition word."""
    category, number = kinds.get(scene.name), kinds.get(said.name)
    word = question[said.start : said.end].lower()
    return bool(
        category
        and number
        and category["type"] in GROUPING
        and number["type"] in NUMERIC
        and said.kind == "synonym"
        and is_condition_word(word)
        and not any(_find_word(word, str(v).lower(), own=False) >= 0 for v in category.get("values") or [])
    )


def header_leaves(columns: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(leaf, column) for each column under a merged group header ("销售情况 / 销售额"): the leaf is the
    column's own name. A leaf two columns share ("2023 / 销售额", "2024 / 销售额") names neither alone."""
    leaves = [(header_leaf(c["name"]), c["name"]) for c in columns if MERGED_HEADER in c["name"]]
    counts = Counter(leaf for leaf, _ in leaves)
    return [(leaf, name) for leaf, name in leaves if leaf and counts[leaf] == 1]


def spoken_names(columns: list[dict[str, Any]]) -> dict[str, str]:
    """What a person calls each column: under a merged group header its leaf ("销售额", not "销售情况 /
    销售额"), unless another column shares the leaf or is called so (then the whole path tells them apart)."""
    names = {str(c["name"]) for c in columns}
    leaf_of = {name: leaf for leaf, name in header_leaves(columns) if leaf not in names}
    return {str(c["name"]): leaf_of.get(str(c["name"]), str(c["name"])) for c in columns}


def tables_spoken_names(tables: Iterable[list[dict[str, Any]]]) -> dict[str, str]:
    """`spoken_names` over several tables' columns: a name two tables say differently keeps its path."""
    said: dict[str, str] = {}
    for columns in tables:
        for name, spoken in spoken_names(columns).items():
            said[name] = spoken if said.get(name, spoken) == spoken else name
    return said


def in_spoken_names(text: str, spoken: dict[str, str]) -> str:
    """`text` with each column's full name written as people say it (`spoken_names`): "东门 的 销售情况 /
    销售额 合计最高" → "东门 的 销售额 合计最高". Only names that differ from their spoken form (a merged
    header's path) are replaced, the longest first, so one path inside another is not cut in two."""
    for name in sorted((n for n, said in spoken.items() if said != n), key=len, reverse=True):
        text = text.replace(name, spoken[name])
    return text


def joined_name(name: str) -> list[str]:
    """A name of several English words written as one ("Over Time" → overtime), when long enough to
    be a word of its own."""
    parts = name_words(name)
    joined = "".join(parts)
    return [joined] if len(parts) >= 2 and name.isascii() and joined.isalpha() and len(joined) >= 6 else []


def _value_places(text: str, columns: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """Where the question writes a category value of two characters or more, as it is written."""
    places = []
    for column in columns:
        for value in column.get("values") or []:
            value = str(value).strip().lower()
            if len(value) >= 2 and not value.isdigit():
                places += [(m.start(), m.end()) for m in re.finditer(re.escape(value), text)]
    return places


def _take(places: Iterable[tuple[int, int]], name: str, found: list[Mention], kind: str) -> None:
    for start, end in places:
        if not any(m.start < end and start < m.end for m in found):
            found.append(Mention(start, end, name, kind))


def match_kinds(mentions: list[Mention]) -> dict[str, str]:
    """Each named column with the strongest kind of mention it got."""
    kinds: dict[str, str] = {}
    for m in mentions:
        if m.name not in kinds or MATCH_KINDS.index(m.kind) < MATCH_KINDS.index(kinds[m.name]):
            kinds[m.name] = m.kind
    return kinds


def _words_named(question: str, name: str) -> int:
    """How many words of a column's name the question uses (stems): ranks columns sharing a synonym."""
    asked = {stem(w) for _, _, w in words_at(question)}
    lowered = question.lower()
    return sum(
        stem(w) in asked or any(word in lowered for word in SYNONYMS.get(w, ()) if not word.isascii())
        for w in name_words(name)
    )


def synonym_key_fits(key: str, name: str) -> bool:
    """A synonym key names a column when it is part of its name; a short key ("ed", "wt") only as a
    whole word of it, so "ed" is not read inside "married"."""
    lowered = name.lower()
    if len(key) <= 3 and key.isascii():  # or R's short abbreviations: "alc" in alcgp, "age" in agegp
        # R's group codes add a letter or two: alcgp, agegp ("len" is not a short form of "length")
        return key in name_words(name) or (
            len(key) == 3 and any(w.startswith(key) and len(w) - 3 <= 2 for w in name_words(name))
        )
    at = lowered.find(key)
    return at >= 0 and not _NEGATED.search(lowered[:at])  # "employ" is not in "Unemployed"


_NEGATED = re.compile(rf"(?:{vocabulary.word_alternation(_FILE, 'negating_prefixes')})$")


def _claim(text: str, needle: str, name: str, found: list[Mention], kind: str) -> None:
    """Claim each place the needle appears; an English needle only as whole words ("ht" is not
    inside "weight", "low" not inside "lower"), plurals allowed. A needle longer than the text is not
    in it: its pattern is never built (a column name of 100,000 letters cost a run seconds of
    regular-expression compiling per question; issue 25)."""
    if not needle or len(needle) > len(text):
        return
    pattern = re.escape(needle)
    if needle.isascii() and re.match(r"\w", needle):
        plural = (
            "(?:s|es)?" if not needle.endswith("y") else "(?:s|es)?|" + re.escape(needle[:-1]) + "ies"
        )  # categories
        pattern = rf"(?<![a-z0-9])(?:{pattern}{plural})(?![a-z0-9])"
    _take(((m.start(), m.end()) for m in re.finditer(pattern, text)), name, found, kind)


# --- the measure a superlative is about -----------------------------------------------------------
# "件数最少", "销售额最高", "the fewest units", "the most revenue": the measure right next to the
# superlative is the one ranked, whatever else the question names ("卖出去的件数最少" ranks units, not sales).
_SUPERLATIVE_MARKS_ZH = "|".join(map(re.escape, vocabulary.characters(_FILE, "superlative_marks_zh")))
_SUPERLATIVE_AFTER_ZH = re.compile(rf"^\s*(?:[)）])?\s*(?:{_SUPERLATIVE_MARKS_ZH})")


def _superlatives_en() -> list[str]:
    """The English superlatives and comparatives of amount: each positive's two degrees (lemminflect:
    high → higher, highest) and the words listed as they are (less, least), longest first."""
    positives = vocabulary.words(_FILE, "superlatives_en", "positives")
    degrees = {form for word in positives for form in word_forms(word, DEGREES)[1:]}
    return sorted(degrees | set(vocabulary.words(_FILE, "superlatives_en")), key=len, reverse=True)


@cache
def _superlative_before_en() -> re.Pattern[str]:
    """A superlative (and a statistic) right before the measure; built on first use (lemminflect loads then)."""
    return re.compile(
        rf"\b(?:{'|'.join(_superlatives_en())})"
        rf"(?:\s+(?:{vocabulary.word_alternation(_FILE, 'statistics_en')}))?\s+$",
        re.I,
    )


def superlative_measure(question: str, spans: list[Span], measures: list[str]) -> str | None:
    """The one measure a superlative sits next to, when exactly one does."""
    text = question.lower()
    near = {
        name
        for start, end, name in spans
        if name in measures
        and (_SUPERLATIVE_AFTER_ZH.match(text[end:]) or _superlative_before_en().search(text[:start]))
    }
    return near.pop() if len(near) == 1 else None


# --- regression roles: the target and its predictors ----------------------------------------------
# A cue before the target ("what drives X") or after it ("X depends on"), per language. A few
# filler words may sit between a cue and the column ("drives the monthly revenue", "预测未来3个月的营业额").
_BEFORE_EN = re.compile(
    rf"\b(?:{vocabulary.alternation(_FILE, 'target_cues_before_en')})"
    rf"(?:\s+(?!(?:{vocabulary.word_alternation(_FILE, 'filler_stops_en')})\b)[a-z'-]+){{0,3}}\s+$"
)
_AFTER_EN = re.compile(rf"^\s+(?:{vocabulary.alternation(_FILE, 'target_cues_after_en')})")
_BEFORE_ZH = re.compile(
    rf"(?:{vocabulary.word_alternation(_FILE, 'target_cues_before_zh')})[^，,。？?！!；;、和与及]{{0,8}}$"
)
# and gates.toml's Chinese phrases of importance after them (影响最大, 最重要, 最关键)
_IMPORTANCE_ZH = [p for p in vocabulary.words("gates", "importance", "patterns") if not p.isascii()]
_AFTER_ZH = re.compile(
    rf"^\s*(?:的)?(?:主要)?(?:{'|'.join([*map(re.escape, vocabulary.words(_FILE, 'target_cues_after_zh')), *_IMPORTANCE_ZH])})"
)
# "广告费用对营业额的影响"
_AROUND_ZH = (re.compile(r"对\s*$"), re.compile(rf"^\s*的?(?:{vocabulary.word_alternation(_FILE, 'effect_words_zh')})"))
# Words that introduce the predictors: "on A and B", "with", "using", "from"; "用A和B来…", "根据", "基于".
_PREDICTOR_CUE = re.compile(
    rf"\b(?:{vocabulary.word_alternation(_FILE, 'predictor_cues_en')})\b|{vocabulary.word_alternation(_FILE, 'predictor_cues_zh')}"
)


@dataclass
class Roles:
    """What a regression question asks: the column to explain and the columns to explain it by."""

    target: str | None = None
    predictors: list[str] = field(default_factory=list)


def regression_roles(question: str, columns: list[dict[str, Any]], spans: list[Span]) -> Roles:
    """The target is the numeric column a cue points at; the predictors are the columns named after
    a predictor cue (numbers, and categories a regression can turn into dummies)."""
    text = question.lower()
    kinds = {c["name"]: c for c in columns if not c.get("pii")}
    numeric = [s for s in spans if kinds.get(s[2], {}).get("type") in NUMERIC]
    target = next((name for start, end, name in numeric if _is_target(text, start, end)), None)
    if target is None:
        return Roles()
    cue = next(
        (m.start() for m in _PREDICTOR_CUE.finditer(text) if not any(s <= m.start() < e for s, e, _ in spans)), None
    )
    predictors = [
        name
        for start, _, name in spans
        if name != target
        and cue is not None
        and start > cue
        and (kinds.get(name, {}).get("type") in NUMERIC or _groupable(kinds.get(name)))
    ]
    return Roles(target, list(dict.fromkeys(predictors)))


# A name given in brackets after the everyday words for it: "对氨气损失量（stack.loss）影响最大"
_GLOSSED = (re.compile(r"[^\s，,。？?！!；;、（(]{1,12}\s*[（(]\s*$"), re.compile(r"^\s*[)）]"))


def _is_target(text: str, start: int, end: int) -> bool:
    before, after = text[:start], text[end:]
    if _GLOSSED[0].search(before) and _GLOSSED[1].match(after):
        before, after = _GLOSSED[0].sub("", before), _GLOSSED[1].sub("", after)
    return bool(
        _BEFORE_EN.search(before)
        or _BEFORE_ZH.search(before)
        or _AFTER_EN.match(after)
        or _AFTER_ZH.match(after)
        or (_AROUND_ZH[0].search(before) and _AROUND_ZH[1].match(after))
    )


def _groupable(column: dict[str, Any] | None, most: int = 30) -> bool:
    return column is not None and groups_rows(column) and 2 <= (column.get("levels") or 0) <= most


def groups_rows(column: dict[str, Any]) -> bool:
    """Whether a column can split rows into groups: a category, yes/no, or a numeric code (read_profile)."""
    return column["type"] in GROUPING or bool(column.get("binary") or column.get("coded"))


# --- category values named in the question ----------------------------------------------------------
# Level values that are everyday words in questions would pick a column by accident: the function words
# (words.is_function_word: a, the, in, not, all) and those roles.toml common_values lists.
_COMMON = set(vocabulary.words(_FILE, "common_values"))


def named_values(question: str, columns: list[dict[str, Any]], spans: list[Span]) -> tuple[str | None, list[str]]:
    """The grouping column whose level values the question mentions (case-insensitive), and those
    values in question order. Text that names a column is not read as a value. The column with the
    most values mentioned wins; (None, []) when no value is mentioned. Columns of up to LOOKUP_LEVELS
    levels count: naming two cities of forty asks to compare those two."""
    raw = question.lower()
    text = _blank(raw, spans)
    best: tuple[str | None, list[str]] = (None, [])
    for col in columns:
        if not _groupable(col, LOOKUP_LEVELS) or col.get("pii"):
            continue
        values = [str(v) for v in col.get("values") or []]
        levels = int(col.get("levels") or len(values))
        hits = sorted(
            (pos, value)
            for value in values
            if (pos := _find_value(text, value, raw, values, levels)) >= 0
            or (pos := _capitals_at(question, value)) >= 0
        )
        hits = sorted(
            {
                *hits,
                *_codes_after_name(question, col, spans),
                *_codes_after_gloss(question, col),
                *_mark_before_name(question, col, spans),
            }
        )
        if len(hits) > len(best[1]):
            best = (col["name"], [value for _, value in hits])
    return best


_CODE_AFTER = re.compile(r"\s*(?:类型|型|组|type|group|no\.?|#)?\s*([A-Za-z0-9]{1,2})(?![A-Za-z0-9])")
_CODE_MORE = re.compile(r"\s*(?:和|与|跟|、|,|，|and|or|vs\.?|versus)\s*([A-Za-z0-9]{1,2})(?![A-Za-z0-9])", re.I)


def _codes_after_name(question: str, column: dict[str, Any], spans: list[Span]) -> list[tuple[int, str]]:
    """Short codes written right after the column's name ("spray C", "羊毛类型A和B", "Dept A or B"): a
    letter alone is too common a word to read anywhere else."""
    values = {str(v): str(v) for v in column.get("values") or [] if len(str(v)) <= 2}
    found: list[tuple[int, str]] = []
    for _, end, name in spans:
        if name != column["name"] or not values:
            continue
        at, match = end, _CODE_AFTER.match(question, end)
        while match and match.group(1) in values:
            found.append((match.start(1), values[match.group(1)]))
            at = match.end()
            match = _CODE_MORE.match(question, at)
    return found


def _mark_before_name(question: str, column: dict[str, Any], spans: list[Span]) -> list[tuple[int, str]]:
    """A yes/no answer of a column holding only such answers, written right before the column's name:
    有 of "有电梯的房子" over 电梯 = 有/无 (the column names the thing, its values say whether it is there).
    The answer alone is everywhere in a question (value_matching: never read by itself)."""
    values = [str(v).strip() for v in column.get("values") or []]
    if len(values) != 2 or not all(zh_yes_no_mark(v) for v in values):
        return []
    return [
        (start - 1, question[start - 1])
        for start, _, name in spans
        if name == column["name"] and start and question[start - 1] in values
    ]


_WORD_THEN_CODE = re.compile(r"\b([A-Za-z]{3,})\s+(?:no\.?\s*|#\s*)?([A-Za-z0-9]{1,2})(?![A-Za-z0-9])")


def _codes_after_gloss(question: str, column: dict[str, Any]) -> list[tuple[int, str]]:
    """Values written as a code and the Chinese column name's own character ("2班" of 班级, "3店" of 门店),
    named in English as the column's word and the code ("just for class 2", "store 3 and 5"): the word
    glosses the column's name (bilingual: class → 班级) and the code is what is left of exactly one
    value without the name's characters."""
    name = header_leaf(str(column["name"]))
    if not any("\u4e00" <= c <= "\u9fff" for c in name):
        return []
    codes: dict[str, str | None] = {}
    for value in map(str, column.get("values") or []):
        code = "".join(c for c in value if c not in name).strip(" -_#")
        if code != value and re.fullmatch(r"[A-Za-z0-9]{1,2}", code):
            codes[code.lower()] = None if code.lower() in codes else value  # two values of one code: neither
    if not codes:
        return []
    from app.understanding.bilingual import strength  # the dictionary loads only when a code is written

    found: list[tuple[int, str]] = []
    for match in _WORD_THEN_CODE.finditer(question):
        first = codes.get(match.group(2).lower())
        if first is None or strength(match.group(1), name) < 1.0:
            continue
        found.append((match.start(2), first))
        more = _CODE_MORE.match(question, match.end())
        while more and (then := codes.get(more.group(1).lower())):  # "class 1 and 3"
            found.append((more.start(1), then))
            more = _CODE_MORE.match(question, more.end())
    return found


def _capitals_at(question: str, value: str) -> int:
    """Where the question writes a value of capitals as the value does ("IT", "HR", "US"): lowered, it is a
    pronoun or a function word ("it", "us") and never read as a value, but its capitals say it is the name."""
    if not (value.isascii() and value.isalpha() and value.isupper() and len(value) >= 2):
        return -1
    match = re.search(rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])", question)
    return match.start() if match and not question.isupper() else -1


def value_position(text: str, value: str, values: list[str] | None = None, levels: int = 0) -> int:
    """Where the (lower-case) text names a category value of a column, by itself or an everyday word; -1 if not."""
    return _find_value(text, value, "", values or [], levels)


def _blank(text: str, spans: list[Span]) -> str:
    for start, end, _ in spans:
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _find_value(text: str, value: str, raw: str = "", values: list[str] | None = None, levels: int = 0) -> int:
    """Where the question names a value, by itself or by an everyday word for it ("women" → female). A
    phrase of several words ("first class") is looked for in the `raw` text too, where a column word
    inside it ("class") is not blanked out. Then its everyday forms (value_matching): "rainy" for
    Rain, "smoker" for Smokers, 男生 for 男 (a column's `values` and `levels` say when a one-character
    value may be read); a weekday in any of its forms ("周一" for 星期一: weekdays); a place or name in the
    other script (value_matching.romanized_at), or in the other language by a dictionary word that is
    the value (bilingual.glossed_value_at: 暖气 for Heating)."""
    found = [
        _find_word(raw if raw and re.search(r"[\s-]", word) else text, word, own=i == 0)
        for i, word in enumerate(value_words(value))
    ]
    found += [_find_word(text, form, own=False) for form in value_forms(value)]
    found += [inflected_at(text, value), zh_single_value_at(text, value, values or [], levels), day_at(text, value)]
    if not any(f >= 0 for f in found):  # the value in the other script: 杭州 for Hangzhou, "Chengdu" for 成都
        found.append(romanized_at(text, value))
    if not any(f >= 0 for f in found):  # the value in the other language: 暖气 for Heating (bilingual)
        from app.understanding.bilingual import glossed_value_at  # the dictionary loads only for such a pair

        found.append(glossed_value_at(text, value))
    return min((f for f in found if f >= 0), default=-1)


def _find_word(text: str, word: str, own: bool = True) -> int:
    if (len(word) < 2 and (own or word.isascii())) or (own and (word in _COMMON or is_function_word(word))):
        return -1
    if word.isascii():  # whole words, plurals too: "returning customers", "stores"
        # ASCII word edges: a Chinese character next to it ("处理组trt1的") is not part of the word
        match = re.search(rf"(?<![A-Za-z0-9_-]){re.escape(word)}(?:s|es)?(?![A-Za-z0-9_-])", text)
        return match.start() if match else -1
    return text.find(word)


# --- the forecast horizon ----------------------------------------------------------------------------
# A period's words and its letter: the horizon's unit ("the next 3 months", "未来3个月")
UNITS = {entry.key: entry.text("period") for entry in vocabulary.entries(_FILE, "periods")}
ORDER = "DWMQY"
DAYS = {"D": 1.0, "W": 7.0, "M": 30.4375, "Q": 91.3125, "Y": 365.25}
GRAINS = {entry.key: entry.text("period") for entry in vocabulary.entries(_FILE, "grains")}
_EN_NUMBERS = COUNT_WORDS_EN | {"a": 1, "an": 1}
_N_EN = r"(\d+|" + "|".join(_EN_NUMBERS) + r")"
_UNITS_EN = "|".join(re.escape(unit) for unit in UNITS if unit.isascii())  # day|week|month|quarter|year
_UNITS_ZH = "|".join(re.escape(unit) for unit in UNITS if not unit.isascii())
_UNIT_EN = rf"({_UNITS_EN})s?"
_HORIZON_EN = (
    re.compile(rf"\b(?:next|coming|following|upcoming)\s+(?:{_N_EN}\s+)?{_UNIT_EN}\b"),
    re.compile(rf"\b{_N_EN}[\s-]+{_UNIT_EN}\s+(?:ahead|out|forward|forecast|into the future)\b"),
    re.compile(rf"\bforecast(?:ing)?\s+(?:for\s+)?(?:the\s+)?{_N_EN}\s+{_UNIT_EN}\b"),
)
_HORIZON_ZH = re.compile(
    r"(?:未来|接下来|之后|今后|往后|(?<![一以如])下)\s*(\d+|[一二两三四五六七八九十]+)?\s*个?\s*"
    rf"({_UNITS_ZH})"
)
# Common phrases without a number: next year, half a year.
_HORIZON_WORDS = {
    entry.key: (entry.integer("count"), entry.text("period")) for entry in vocabulary.entries(_FILE, "horizon_words")
}
MIN_PERIODS = 10  # the forecast tool needs 8 periods; two spare for partial first and last periods


def forecast_request(question: str) -> tuple[int, str] | None:
    """How far ahead the question asks: (number, period D/W/M/Q/Y), or None when it does not say.
    "How many calls a day over the next two weeks" asks for 14 days, not 2 weekly totals."""
    request = _horizon(question.lower())
    if request and _PER_DAY.search(question) and request[1] in ("W", "M"):
        return round(request[0] * (7 if request[1] == "W" else 30)), "D"
    return request


_PER_DAY = vocabulary.regex(_FILE, "per_day", re.I)


def _horizon(text: str) -> tuple[int, str] | None:
    for pattern in _HORIZON_EN:
        if match := pattern.search(text):
            return _en_number(match.group(1)), UNITS[match.group(2)]
    if match := _HORIZON_ZH.search(text):
        n = _zh_number(match.group(1)) if match.group(1) else 1
        return (n, UNITS[match.group(2)]) if n else None
    return next((found for word, found in _HORIZON_WORDS.items() if word in text), None)


# A horizon after "following"/"之后" is read as such once a forecast is asked for, but does not by
# itself put a question in the future ("活动之后一周的销量", "the following month"); nor do the bare
# phrases ("过去半年" is the past half year).
_AFTER = vocabulary.regex(_FILE, "after_words")


def asks_ahead(question: str) -> bool:
    """Whether the question names a horizon ahead: "the next 10 days", "3 months ahead", "下周", "未来3个月"."""
    text = question.lower()
    return any(
        not _AFTER.match(match.group(0)) for pattern in (*_HORIZON_EN, _HORIZON_ZH) for match in pattern.finditer(text)
    )


def _en_number(word: str | None) -> int:
    if not word:
        return 1
    return int(word) if word.isdigit() else _EN_NUMBERS[word]


def _zh_number(word: str) -> int | None:
    """Digits, or Chinese numerals up to 99 (三, 十二, 二十四); 两 is two."""
    if word.isdigit():
        return int(word)
    digits = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"两": 2}
    if "十" not in word:
        return digits.get(word) if len(word) == 1 else None
    tens, _, ones = word.partition("十")
    if (tens and tens not in digits) or (ones and ones not in digits):
        return None
    return (digits[tens] if tens else 1) * 10 + (digits[ones] if ones else 0)


def forecast_arguments(request: tuple[int, str], grain: str | None, span_days: float | None) -> dict[str, Any]:
    """The forecast tool's horizon (and freq when it differs from the data's own period). The asked
    period is used when the data are at least that fine and long enough for it (a forecast needs
    ~10 periods of history); else the next finer one, down to the data's own period, with the
    horizon converted ("next quarter" on one year of daily rows → 3 months)."""
    n, unit = request
    own = GRAINS.get((grain or "").split(" ")[0])
    finest = ORDER.index(own) if own else 0
    freq = own or "D"
    for candidate in reversed(ORDER[finest : ORDER.index(unit) + 1]):
        if span_days is None or span_days / DAYS[candidate] >= MIN_PERIODS:
            freq = candidate
            break
    # enough periods to cover what was asked (6 weeks → 2 months), without the calendar's slack
    # turning 3 months into 14 weeks
    horizon = max(1, math.ceil(n * DAYS[unit] / DAYS[freq] - 0.2))
    return {"horizon": horizon} if freq == own else {"horizon": horizon, "freq": freq}
