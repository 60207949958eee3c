"""Shorter forms a question uses for a column's name (zh/en), read from the name's structure:

- a yes/no column named as a question ("是否使用优惠券", "Used Coupon", "refunded (Y/N)") is named by
  its core noun ("用了优惠券", "coupons", "退款率", "refund rate");
- a name with an abbreviation in it ("Systolic BP") by the words the abbreviation stands for
  ("blood pressure": their initials);
- a name joined from hyphenated words ("bluecol") by those words ("blue-collar");
- a name of several words by its first word when no other column shares it ("overall score" →
  Overall Satisfaction), or alone when the rest only says the quantity its bracketed unit measures
  ("wait" → Wait time (min));
- a name with a second name in brackets ("Economy (GDP per Capita)") by that second name
  (`bracketed_name`, as good as the name itself).

The first is as good as the name; the others are partial matches, claimed last (roles).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from app.understanding import vocabulary
from app.understanding.everyday_words import MONEY_PIECES
from app.understanding.text import HAN_RUN, header_leaf, is_cjk, lemma, tagged_words
from app.understanding.words import NAME_BRACKET, STOP, core_name, name_words, stem, words_at

_FILE = "name_forms"  # vocabulary/name_forms.toml


# --- yes/no columns named as questions ---------------------------------------------------------------
_ZH_ASKING = re.compile(rf"^(?:{vocabulary.alternation(_FILE, 'zh_asking')})")
_ZH_FLAG_TAIL = re.compile(r"[（(]\s*(?:是\s*/\s*否|有\s*/\s*无|y\s*/\s*n|0\s*/\s*1)\s*[)）]$", re.I)
# Verbs a yes/no name puts before its noun ("是否使用优惠券"): a question may use another verb or none.
_ZH_VERB = re.compile(rf"^(?:{vocabulary.word_alternation(_FILE, 'zh_verbs')})")
_EN_ASKING = set(vocabulary.words(_FILE, "en_asking"))
_EN_FLAG = set(vocabulary.words(_FILE, "en_flags"))


def _among(words: set[str], word: str) -> bool:
    """Whether an English word is one of a set as written or by its dictionary form (hours → hour, was →
    be): the sets of name_forms.toml list each word once, in its dictionary form."""
    return word in words or lemma(word) in words


def yes_no_core(name: str) -> list[str]:
    """The core of a yes/no column's name written as a question: Chinese text pieces ("使用优惠券",
    "优惠券") or English words (["coupon"]); empty when the name is not shaped like a question."""
    text = name.strip()
    if not text.isascii():
        core = _ZH_FLAG_TAIL.sub("", text).strip()
        asked = _ZH_ASKING.match(core)
        if not asked and core == text:
            return []
        core = core[asked.end() :] if asked else core
        noun = _ZH_VERB.sub("", core)
        return [piece for piece in dict.fromkeys((core, noun)) if len(piece) >= 2]
    words = name_words(text)
    core_words = [w for w in words if w not in _EN_FLAG]
    leads = bool(core_words) and _among(_EN_ASKING, core_words[0])
    if leads:
        core_words = core_words[1:]
    if not (leads or len(core_words) < len(words)) or not core_words:
        return []
    return core_words


def yes_no_mentions(question: str, name: str) -> Iterator[tuple[int, int]]:
    """Where the question names a yes/no column by the core of its question-shaped name."""
    core = yes_no_core(name)
    if not core:
        return
    if not name.isascii():
        text = question.lower()
        found = False
        for piece in core:  # the fuller piece first
            for match in re.finditer(re.escape(piece.lower()), text):
                found = True
                yield match.start(), match.end()
        if not found and (loose := _reworded(text, core[0])):
            yield loose
        return
    wanted = [stem(w) for w in core if w not in STOP]
    words = words_at(question)
    for i in range(len(words) - len(wanted) + 1):
        window = words[i : i + len(wanted)]
        if wanted and all(stem(w) == want and len(want) >= 3 for (_, _, w), want in zip(window, wanted, strict=True)):
            yield window[0][0], window[-1][1]


def _reworded(text: str, core: str) -> tuple[int, int] | None:
    """Where a long Chinese core is said with a word moved or put in ("愿意把公司推荐给朋友" for
    是否愿意推荐公司给朋友): most of its two-character pieces within one clause of the question."""
    pairs = [core[i : i + 2] for i in range(len(core) - 1)]
    if len(core) < 5:
        return None
    for clause in re.finditer(r"[^，,。？?！!；;]+", text):
        places = [clause.start() + at for pair in pairs if (at := clause.group(0).find(pair)) >= 0]
        if len(places) >= 3 and len(places) >= 0.6 * len(pairs):
            return min(places), max(places) + 2
    return None


# --- partial names: abbreviations, joined words, a distinctive first word ------------------------------
# Words that say what kind of thing a name is, not which: "Customer Type" is not the customer.
_KIND_WORDS = set(vocabulary.words(_FILE, "kind_words"))
# Plain words for "the number measured", which a question puts after a name's first word in place of
# the rest of it ("overall score", "service rating").
_MEASURE_WORDS = set(vocabulary.words(_FILE, "measure_words"))
# Units and counts a name may end in after what it measures ("Exercise Hours", "Order Amount").
# The English units of time (roles.toml periods: day, week, month, quarter, year) are unit and generic words too.
_TIME_UNITS = {unit for unit in vocabulary.keys("roles", "periods") if unit.isascii()}
_UNIT_WORDS = set(vocabulary.words(_FILE, "unit_words")) | _TIME_UNITS
_GENERIC = set(vocabulary.words(_FILE, "generic")) | _TIME_UNITS


def initials_mentions(question: str, name: str, others: list[str]) -> Iterator[tuple[int, int]]:
    """Where consecutive question words are the initials of an abbreviation inside a longer name:
    "blood pressure" → Systolic BP, "body mass index" → BMI Score. Only when no other column holds
    the same abbreviation (Systolic BP and Diastolic BP: the question does not say which)."""
    parts = name_words(core_name(name))
    if len(parts) < 2:
        return  # a one-word name is read by words.abbreviates
    tokens = [p for p in parts if p.isalpha() and 2 <= len(p) <= 4 and p not in STOP]
    words = words_at(question)
    for token in tokens:
        if any(token in name_words(other) for other in others if other != name):
            continue
        size = len(token)
        for i in range(len(words) - size + 1):
            phrase = [w for _, _, w in words[i : i + size]]
            if "".join(w[0] for w in phrase) == token and not any(w in STOP or len(w) < 3 for w in phrase):
                yield words[i][0], words[i + size - 1][1]


def joined_mentions(question: str, name: str) -> Iterator[tuple[int, int]]:
    """Where two consecutive question words make a one-word name, one whole and the other cut short:
    "blue-collar" → bluecol, "white collar" → whitecollar."""
    parts = name_words(name)
    if len(parts) != 1 or not parts[0].isalpha() or len(parts[0]) < 6:
        return
    joined = parts[0]
    words = words_at(question)
    for (start, _, first), (_, end, second) in zip(words, words[1:], strict=False):
        if first in STOP or second in STOP or len(first) < 3 or len(second) < 3:
            continue
        whole_then_cut = (
            joined.startswith(first) and len(joined) - len(first) >= 3 and second.startswith(joined[len(first) :])
        )
        cut_then_whole = (
            joined.endswith(second) and len(joined) - len(second) >= 3 and first.startswith(joined[: -len(second)])
        )
        if whole_then_cut or cut_then_whole:
            yield start, end


def leading_word_mentions(question: str, name: str, others: list[str]) -> Iterator[tuple[int, int]]:
    """Where the question uses the first word of a longer name that no other column's name holds,
    followed by a plain word for a measurement ("overall score" → Overall Satisfaction), inside a list
    of such words, or alone when the rest of the name is only a unit or count ("exercise" → Exercise
    Hours). Not when the rest of the name says what kind of thing it is ("Customer Type" is not a
    customer rating)."""
    parts = name_words(core_name(name))
    if len(parts) < 2 or parts[0] in STOP or len(parts[0]) < 4 or not parts[0].isalpha():
        return
    lead = stem(parts[0])
    if any(lead in {stem(w) for w in name_words(other)} for other in others if other != name):
        return
    words = words_at(question)
    if any(_among(_KIND_WORDS, p) for p in parts[1:]):
        if all(_among(_KIND_WORDS, p) for p in parts[1:]):  # "kinds of film", "film types" → Film Type
            yield from _kinds_of(question, words, lead)
        return
    for (start, gap, word), (resume, end, after) in zip(words, words[1:], strict=False):
        if (
            stem(word) == lead
            and _among(_MEASURE_WORDS, after)
            and not _among(_GENERIC, parts[0])
            and not question[gap:resume].strip()
        ):  # "overall score", not "staff, value"
            yield start, end
    if all(_among(_WHEN_WORDS, p) for p in parts[1:]):  # "Visits Last Month", "Sales This Year": the first word is it
        for start, end, word in words:
            if stem(word) == lead and not _among(_GENERIC, parts[0]):
                yield start, end
    for start, end, word in words:  # a list of the things rated: "cleanliness, staff, value and Wi-Fi"
        if stem(word) == lead and not _among(_NEVER_LISTED, parts[0]) and _listed(question, start, end):
            yield start, end
    unit_words = _UNIT_WORDS | (_UNIT_QUANTITIES if bracket_unit(name) else set())  # "Wait time (min)"
    if not _among(_GENERIC, parts[0]) and all(_among(_MEASURE_WORDS | unit_words, p) for p in parts[1:]):
        for start, end, word in words:
            if stem(word) == lead:
                yield start, end


def _kinds_of(question: str, words: list[tuple[int, int, str]], lead: str) -> Iterator[tuple[int, int]]:
    """Where the question says a kind of the thing a name's first word is, with a word for a kind (name_forms
    kind_words) before "of" it or right after it: "three kinds of film", "which film types" (Film Type)."""
    for i, (start, end, word) in enumerate(words):
        if stem(word) != lead:
            continue
        before = [w for w in words[max(0, i - 3) : i] if w[2] not in ("the", "a", "an")]
        if len(before) >= 2 and before[-1][2] == "of" and _among(_KIND_WORDS, before[-2][2]):
            yield before[-2][0], end
        elif (
            i + 1 < len(words) and _among(_KIND_WORDS, words[i + 1][2]) and not question[end : words[i + 1][0]].strip()
        ):
            yield start, words[i + 1][1]


# Units and scales a name's bracket may hold ("(min)", "(thousands)", "(USD)"), and the quantity such a unit
# measures ("Wait time (min)": the unit says it is a time).
CURRENCY_UNITS = frozenset(vocabulary.words(_FILE, "currency_units"))
_BRACKET_UNITS = set(vocabulary.words(_FILE, "bracket_units")) | _UNIT_WORDS | CURRENCY_UNITS
_UNIT_QUANTITIES = set(vocabulary.words(_FILE, "unit_quantities"))


def _bracket(name: str) -> str | None:
    """What the bracket at the end of a name holds ("min" of "Wait time (min)"), or None."""
    found = NAME_BRACKET.search(name.strip())
    return found.group(1).strip() if found else None


def bracketed_name(name: str) -> str | None:
    """The second name a column's name gives in brackets ("GDP per Capita" of "Economy (GDP per
    Capita)", "Life Expectancy" of "Health (Life Expectancy)"), when it is words and not a unit or a
    scale ("(min)", "(thousands)", "(Y/N)", "(1-5)"): a question may use either name. English only."""
    inner = _bracket(name)
    if not inner or not inner.isascii() or core_name(name) == name:
        return None
    content = [w for w in name_words(inner) if w.isalpha() and w not in STOP and not _among(_BRACKET_UNITS, w)]
    if not any(len(w) >= 3 for w in content) or sum(map(len, content)) < 4:
        return None
    return inner


def money_unit(name: str) -> bool:
    """Whether a name's bracket gives a currency ("Total Charge (£)", "收费（元）", "Fee (USD)"): a currency
    sign (Unicode category Sc) or a listed currency (name_forms.toml currency_units), alone in the bracket."""
    inner = (_bracket(name) or "").strip()
    signs = inner.replace(" ", "")
    return bool(signs) and (
        all(unicodedata.category(ch) == "Sc" for ch in signs) or inner.lower().strip(". ") in CURRENCY_UNITS
    )


def money_column(columns: list[dict[str, Any]]) -> str | None:
    """The table's one number column measured in money (money_unit), or None when it has none or several
    (a price and a total in £: the everyday word "money" does not say which)."""
    found = [str(c["name"]) for c in columns if c.get("type") in ("number", "integer") and money_unit(str(c["name"]))]
    return found[0] if len(found) == 1 else None


def money_taken_column(columns: list[dict[str, Any]]) -> str | None:
    """The column of the money the rows took in, for an amount asked of rows with no column named ("how
    much did they bring in", "那些一共多少钱"): the one number column whose name (its leaf) holds a piece of a
    money concept (everyday_words.MONEY_PIECES: Rental Fee ($), 营业额(元), not Deposit Kept ($)), else the
    table's one money column (money_column). None when neither says which."""
    numbers = [str(c["name"]) for c in columns if c.get("type") in ("number", "integer")]
    named = [name for name in numbers if any(_holds_piece(header_leaf(name), piece) for piece in MONEY_PIECES)]
    return named[0] if len(named) == 1 else money_column(columns)


def _holds_piece(name: str, piece: str) -> bool:
    """Whether a name holds a concept's piece: inside it for Chinese, at a word's start for English (fee: Fees)."""
    if any(is_cjk(c) for c in piece):
        return piece in name
    return re.search(rf"\b{re.escape(piece)}", name, re.I) is not None


# A scale in a name's bracket: two whole numbers joined by a dash or a tilde ("Satisfaction (1-5)",
# "客户评分(1-5)", "评分（0～10）").
_SCALE = re.compile(r"^(\d{1,3})\s*[-‐–—~～]\s*(\d{1,3})$")


def declared_scale(name: str) -> tuple[int, int] | None:
    """The rating scale a name's bracket declares ("客户评分(1-5)" → (1, 5)), or None. The header says what
    the values may be, beyond those that occur: a 1-5 score whose answers were all 2 to 5 is still a
    rating of five points, a measurement to average, not four codes."""
    found = _SCALE.match(_bracket(name) or "")
    if not found:
        return None
    low, high = int(found.group(1)), int(found.group(2))
    return (low, high) if low < high else None


def bracket_unit(name: str) -> bool:
    """Whether a name ends in a bracket giving its unit or scale ("Wait time (min)", "Fee (£)")."""
    inner = _bracket(name)
    return bool(inner) and bracketed_name(name) is None


# The rest of a name that only says over which period the first word was counted
_WHEN_WORDS = set(vocabulary.words(_FILE, "when_words")) | _TIME_UNITS | set(vocabulary.keys("roles", "grains"))
# A list names the columns it lists by their first words, but these say too little on their own.
_NEVER_LISTED = set(vocabulary.words(_FILE, "never_listed"))
_LIST_BEFORE = re.compile(r"(?:,|、|，|\band|\bor)\s*$", re.I)
_LIST_AFTER = re.compile(r"^\s*(?:,|、|，|and\b|or\b)", re.I)


def _listed(question: str, start: int, end: int) -> bool:
    """The word at start:end is inside a list: a comma or "and" right before it and right after it
    ("cleanliness, staff, breakfast"). A list's first and last items need no help: "Hi, staff …" is
    no list."""
    return bool(_LIST_BEFORE.search(question[:start]) and _LIST_AFTER.match(question[end:]))


# "多少升", "几公斤": the amount asked for, in a unit
_ZH_HOW_MUCH = re.compile(r"(?:多少|几)\s*$")


def counted_unit(name: str) -> str:
    """The unit a Chinese name counts in: its bracket's (销量（箱）: 箱), or the thing a two-character
    "…数" counts (杯数: cups, 人数: people, 次数: times — the character before 数, "number of"). ""."""
    unit = (_bracket(name) or "").strip()
    core = NAME_BRACKET.sub("", name).strip()
    if not unit and len(core) == 2 and core[1] == "数" and is_cjk(core[0]):
        unit = core[0]
    return unit if unit and all(is_cjk(ch) for ch in unit) else ""


def counts_things(name: str) -> bool:
    """Whether a Chinese name is a number of things, which add up: a two-character "…数" that CC-CEDICT reads
    as a number or a count, or does not hold (人数 "number of people", 件数 "item count", 杯数) — not a word
    of its own (分数 "score", 岁数 "age", 系数); or a bracket of one measure word (销量（箱）) — not a unit of
    weight or length (体重（公斤）is a level)."""
    from app.understanding.bilingual import dictionary_senses, is_classifier

    leaf = header_leaf(name)
    unit = counted_unit(leaf)
    if not unit:
        return False
    if _bracket(leaf):
        return len(unit) == 1 and is_classifier(unit)
    senses = dictionary_senses(NAME_BRACKET.sub("", leaf).strip())
    return not senses or senses[0][:1] == ("number",) or senses[0][-1:] == ("count",)


@lru_cache(maxsize=4096)  # asked of each number column by totals.additive, several times a plan
def names_things_en(name: str) -> bool:
    """Whether an English name says a number of things by a plural noun at its head or its end (Copies,
    Tickets Sold, Seats Booked): English marks a count of things by its plural, as Chinese marks one by …数
    (counts_things). Plural by the English dictionary (lemminflect's noun lemma differs from the word:
    copies → copy), so "Status" or "Sales Tax" is no plural; a bracketed unit is left out (Weight (lbs))."""
    from app.understanding.english_dictionary import lemminflect

    words = name_words(core_name(header_leaf(name)).lower())
    if not words:
        return False
    try:
        all_lemmas = lemminflect().getAllLemmas
    except ImportError:  # pragma: no cover - a dependency; kept working without it
        return False
    for word in dict.fromkeys([words[0], words[-1]]):
        nouns = all_lemmas(word).get("NOUN", ())
        if nouns and word not in nouns and len(word) > 3:
            return True
    return False


def counted_by_word(word: str, columns: list[dict[str, Any]]) -> str | None:
    """The one number column that counts things in the unit an English word names, by CC-CEDICT's one-word
    senses of its measure word ("cups" → 杯数 by 杯 "cup", "boxes" → 销量（箱） by 箱 "box"): "how many cups" asks
    that column's total across languages, not a count of rows. None when no column, or several, count so."""
    from app.understanding.bilingual import dictionary_senses

    said = lemma(word.strip().split()[-1].lower()) if word.strip() else ""
    if not said.isascii() or not said.isalpha():
        return None
    found = []
    for column in columns:
        name = str(column["name"])
        if column.get("type") not in ("number", "integer") or not counts_things(name):
            continue
        unit = counted_unit(header_leaf(name))
        if any(sense == (said,) for sense in dictionary_senses(unit)):
            found.append(name)
    return found[0] if len(found) == 1 else None


def unit_mentions(question: str, name: str, others: list[str]) -> Iterator[tuple[int, int]]:
    """Where the question asks an amount in the unit a Chinese name counts in and no other column does:
    "烧掉多少升油" → 耗油量（升）, "多少公斤" → 渔获量 (公斤), "卖了多少杯" → 杯数."""
    unit = counted_unit(name)
    if not unit or any(counted_unit(o) == unit for o in others if o != name):
        return
    for match in re.finditer(re.escape(unit), question):
        if _ZH_HOW_MUCH.search(question[: match.start()]):
            yield match.start(), match.end()


# --- a Chinese name by its leading word ------------------------------------------------------------
# A Chinese name is often "what + which measure": 数学成绩, 销售金额, 班级. A question says the "what"
# and its own measure word ("数学平均分", "哪两个班"): the part before the measure names the column
# when no other column holds it.
_ZH_MEASURE_TAIL = re.compile(rf"(?:{vocabulary.word_alternation(_FILE, 'zh_measure_tail')})$")
# A one-character lead (班 of 班级) only after a counter ("哪两个班", "每个班", "各班") and never a
# unit of time ("每个月" is not 月级).
_ZH_COUNTED = re.compile(rf"(?:{'|'.join(map(re.escape, vocabulary.characters(_FILE, 'zh_counted')))})$")
_ZH_TIME_CHARS = set(vocabulary.characters(_FILE, "zh_time_chars"))


# A noun written with its measure word after it (地块, 车辆, 房间, 店铺): a question counts it with the
# measure word first ("哪三块地", "几辆车").
_ZH_CLASSIFIERS = set(vocabulary.characters(_FILE, "zh_classifiers"))
_ZH_COUNTER = re.compile(r"(?:[\d一二两三四五六七八九十几每哪各这那])[家间所座位个]")


def zh_leading_mentions(question: str, name: str, others: list[str], numeric: bool) -> Iterator[tuple[int, int]]:
    """Where the question uses a Chinese name's leading word: "数学平均分" → 数学成绩, "哪两个班" → 班级,
    "哪三块地" → 地块."""
    core = name.strip()
    if len(core) == 2 and core[1] in _ZH_CLASSIFIERS and is_cjk(core[0]):
        for match in re.finditer(re.escape(core[1] + core[0]), question):
            yield match.start(), match.end()
    if len(core) == 2 and is_cjk(core[1]) and core[1] not in _ZH_TIME_CHARS and not numeric:
        # a two-character name by its last character, counted: "三家店", "每家店" → 门店; "各个班" → 班级 is below.
        # The things counted are a grouping's rows, never a number: "3个学生" is no 数学
        for match in _ZH_COUNTER.finditer(question):
            if question.startswith(core[1], match.end()) and not any(core[1] in o for o in others if o != name):
                yield match.end(), match.end() + 1
    lead = _ZH_MEASURE_TAIL.sub("", name.strip())
    if lead == name.strip() or not lead or not all(is_cjk(ch) for ch in lead):
        return
    if any(lead in other for other in others if other != name):
        return
    for match in re.finditer(re.escape(lead), question):
        if len(lead) >= 2 or (lead not in _ZH_TIME_CHARS and _ZH_COUNTED.search(question[: match.start()])):
            yield match.start(), match.end()


def head_word_mentions(question: str, name: str, others: list[str]) -> Iterator[tuple[int, int]]:
    """Where the question uses the last word of a longer English name, its head noun, when no other
    column's name holds it: "satisfaction" → Customer Satisfaction, "income" → Household Income. Not
    a plain word any column may end in ("Order Amount" is not named by "amount")."""
    parts = [p for p in name_words(core_name(name)) if not p.isdigit()]
    if len(parts) < 2 or not name.isascii():
        return
    head = parts[-1]
    if head in STOP or _among(_GENERIC | _KIND_WORDS, head) or len(head) < 4 or not head.isalpha():
        return
    target = stem(head)
    if any(target in {stem(w) for w in name_words(other)} for other in others if other != name):
        return
    adjective = head[:-2] if head.endswith("ly") and len(head) >= 7 else None  # "Works Remotely" ← "remote"
    for start, end, word in words_at(question):
        if stem(word) == target or word == adjective:
            yield start, end


# jieba's tags of a noun standing on its own: a common noun, a verb used as a noun (打的分: 分/vn), a noun
# morpheme. Not a verb (按地区分: 分/v) nor a measure word after a number (5分: the value, not the column);
# a measure word right after 的 has no number to count and is a noun (给的分: 分/q).
_NOUN_TAGS = frozenset({"n", "vn", "ng"})
_MEASURE_TAG, _OF_TAG = "q", "uj"


def zh_head_mentions(question: str, name: str, others: list[str], numeric: bool) -> Iterator[tuple[int, int]]:
    """Where the question uses the last character of a Chinese number's name, its head, as a noun of
    its own: "打的分" → 客户评分(1-5), "水果价" → 单价. A Chinese compound is right-headed (评分 is a kind of
    分, 单价 a kind of 价), so its head says what the column measures; it names the column only when no
    other column's name holds that character. A number only: a one-character noun beside a category
    is its rows ("哪个人"), and a grouping name is read by its leading word (zh_leading_mentions)."""
    core = header_leaf(core_name(name))
    runs = HAN_RUN.findall(core)
    if not numeric or not runs or len("".join(runs)) < 2 or not core.endswith(runs[-1]) or yes_no_core(name):
        return
    head = runs[-1][-1]
    if any(head in other for other in others if other != name):
        return
    tagged = tagged_words(question)
    for at, (word, tag, start, end) in enumerate(tagged):
        after_of = at > 0 and tagged[at - 1][1] == _OF_TAG
        if word == head and (tag in _NOUN_TAGS or (tag == _MEASURE_TAG and after_of)):
            yield start, end


# Pieces of Chinese names that say what kind of number or thing it is, not which: 平均温度 is not named
# by "平均" (any average), 订单编号 not by "编号".
_ZH_GENERIC = set(vocabulary.words(_FILE, "zh_generic"))


def zh_part_mentions(question: str, name: str, others: list[str]) -> Iterator[tuple[int, int]]:
    """Where the question writes part of a Chinese name that no other column's name holds: its start
    or end of two characters or more ("满意度" → 客户满意度, "广告" → 广告费用), or three or more from
    anywhere in it ("满意度" → 客户满意度评分). The longest such piece first."""
    runs = HAN_RUN.findall(name)
    if not runs or yes_no_core(name):  # "是否会员" is named by its core (yes_no_mentions), not "是否会"
        return
    text = question.lower()
    whole = "".join(runs)
    for size in range(len(whole) - 1, 1, -1):
        for at in range(len(whole) - size + 1):
            piece = whole[at : at + size]
            edge = at == 0 or at + size == len(whole)
            if not (edge or size >= 3) or piece in _ZH_GENERIC or any(g == piece for g in _ZH_GENERIC):
                continue
            if any(piece in other for other in others if other != name):
                continue
            for match in re.finditer(re.escape(piece), text):
                yield match.start(), match.end()
