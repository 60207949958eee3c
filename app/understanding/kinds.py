"""The kinds of question a non-expert asks beyond "compare" and "trend" (issue 14), as the built-in
analyst reads them (zh/en): totals and shares per group, top/bottom N, paired designs, data tasks
(remove duplicates) — and follow-ups that narrow the previous question ("and only for online
orders?"). Pure functions over the question text; the analyst's plan turns them into steps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from app.numbers import number_words
from app.understanding import vocabulary
from app.understanding.text import COUNT_WORDS_EN, COUNT_WORDS_ZH, split_unit, tagged_words

_FILE = "question_kinds"  # vocabulary/question_kinds.toml: the words; the patterns with structure stay here


TOTAL = vocabulary.regex(
    _FILE,
    "total",
    re.I,
    # 总 before what is added up ("总消费", "总花费", "总成本"); not 总体/总结/总是/总之/总部/总监/总经理/总统
    total_before_noun=r"总(?!体|结|是|之|部|监|经理|统|的来说|共计?)(?=[\u4e00-\u9fff])",
)
_TOP_EN = re.compile(
    r"\b(top|bottom|best|worst|largest|biggest|smallest|highest|lowest)\s+(\d+|" + "|".join(COUNT_WORDS_EN) + r")\b",
    re.I,
)
# A count starts where a number starts (not after a digit): in a long run of digits, a search would
# otherwise try the count from every digit, each try reading to the run's end (seconds for a few
# thousand digits); a match found is the same, it can only begin at the first digit.
_ZH_COUNT = r"((?<!\d)\d+|[一二两三四五六七八九十])"
# "前5名", "倒数3", and a superlative before or after the count: "金额最高的五个订单", "五个最贵的订单"
_TOP_ZH = re.compile(
    rf"(?:排名前|前|后|倒数)\s*{_ZH_COUNT}\s*(?:名|个|位|家|种)?|"
    rf"(?P<super>最[\u4e00-\u9fff]{{1,2}}?)的\s*{_ZH_COUNT}|{_ZH_COUNT}\s*[个位名家种趟件款只条笔单]?\s*(?P<super_after>最[\u4e00-\u9fff]{{1,2}})"
)
# "the five most expensive orders", "the 3 cheapest": a count, then a superlative (most/least, or an
# English word in -est whose lemma differs: cheapest → cheap, not interest or forest)
_COUNT_SUPERLATIVE = re.compile(r"\b(\d+|" + "|".join(COUNT_WORDS_EN) + r")\s+(most|least|[a-z]+est)\b", re.I)


# A count of rows to rank has a few digits; a longer run of them is no count (and past 4,300 digits
# int() refuses it: a hostile question must not stop the run)
MAX_COUNT_DIGITS = 6


def _count(n: str, words: dict[str, int], default: int | None = None) -> int | None:
    """The count a question's number or number word says; None for a number too long to be a count."""
    if n.isdigit():
        return int(n) if len(n) <= MAX_COUNT_DIGITS else None
    return words.get(n, default)


def _count_superlative(question: str) -> tuple[int, bool] | None:
    from app.understanding.text import lemma

    for match in _COUNT_SUPERLATIVE.finditer(question):
        n, word = match.group(1).lower(), match.group(2).lower()
        if word in ("most", "least") or lemma(word) != word:
            rest = question[match.start(2) : match.end(2) + 24]
            count = _count(n, COUNT_WORDS_EN)
            return (count, bool(LEAST.match(rest)) or word == "least") if count else None
    return None


PAIRED = vocabulary.regex(
    _FILE,
    "paired",
    re.I,
    same_subjects=r"\bsame\s+(?:\d+\s+|ten\s+|\w+\s+)?(?:patients|people|subjects|persons|participants|students|"
    r"customers|stores|shops|animals|children|individuals|users|employees|cars)\b",
    same_people_zh=r"同样(?:这|的)?\s*\d*\s*[个位名]?(?:病人|患者|人|受试者)",
    same_counted_zh=r"相同的(?:\d+|[一二两三四五六七八九十]+)?(?:个|位|名)?(?:病人|患者|人|受试者|学生|客户|门店)",
)
DEDUPE = vocabulary.regex(_FILE, "dedupe", re.I)
FILTER_CUE = vocabulary.regex(_FILE, "filter_cue", re.I)
NEGATION = vocabulary.regex(_FILE, "negation", re.I)
FOLLOWUP = re.compile(rf"^\s*(?:{vocabulary.alternation(_FILE, 'followup_openers')})", re.I)
MOST = vocabulary.regex(_FILE, "most", re.I)
LEAST = vocabulary.regex(_FILE, "least", re.I)
HOW_MANY = vocabulary.regex(_FILE, "how_many", re.I)  # "how many", "多少": a count asked
# an amount asked of a measure ("how much revenue"): English grammar's other degree question beside "how many"
# (多少 asks both in Chinese)
HOW_MUCH = re.compile(r"\bhow\s+much\b", re.I)
# "how much did we bill", "how much do they spend": the amount of what people did, which adds up over the rows
# even when the measure is a price each row has ("how much is the price" asks its level; "how much did the price
# change" names no one who did anything)
AMOUNT_DONE = re.compile(r"\bhow\s+much\s+(?:do|does|did)\s+(?:we|they|you|i|he|she|people)\b", re.I)


def asks_total(question: str) -> bool:
    return bool(TOTAL.search(question))


# "which three brands … the best", "哪三家门店…最多": a number of things, and a superlative
# ("which one", "哪一个" ask for the single highest group: the comparison's own reading answers that)
_WHICH_N = re.compile(
    r"\bwhich\s+(\d+|"
    + "|".join(w for w in COUNT_WORDS_EN if w != "one")
    + r")\b|哪\s*(\d+|[二两三四五六七八九十])\s*(?:个|家|位|种|款|名|类|所|只)?",
    re.I,
)


# "the five customers …", "the 3 stores that …": a definite count of things (not "the 3 of us", "the 5%")
_THE_N_THINGS = re.compile(r"\bthe\s+(\d+|" + "|".join(COUNT_WORDS_EN) + r")\s+(?!of\b|percent\b|per\b)[a-z]{3,}", re.I)


def asks_top(question: str, measure: str | None = None) -> tuple[int, bool] | None:
    """(N, bottom) for "top 5 customers", "worst 3 stores", "前5名", "which three … the best"; None when
    the question asks no top N. A superlative of speed says the end by the measure ("the three quickest"
    by a time: the bottom three)."""
    top = _top_n(question)
    if top and (speed := speed_extreme(question, measure)):
        return top[0], speed == "least"
    return top


def _top_n(question: str) -> tuple[int, bool] | None:
    if (match := _WHICH_N.search(question)) and (extreme := asks_extreme(question)):
        n = (match.group(1) or match.group(2)).lower()
        count = _count(n, COUNT_WORDS_EN) or _count(n, COUNT_WORDS_ZH, 3)
        return (count, extreme == "least") if count else None
    if match := _TOP_EN.search(question):
        word, n = match.group(1).lower(), match.group(2).lower()
        count = _count(n, COUNT_WORDS_EN)
        return (count, word in ("bottom", "worst", "smallest", "lowest")) if count else None
    if counted := _count_superlative(question):
        return counted
    if (match := _THE_N_THINGS.search(question)) and (extreme := asks_extreme(question)):
        n = match.group(1).lower()  # "the five customers with the highest fee": a count of things, a superlative
        count = _count(n, COUNT_WORDS_EN)
        return (count, extreme == "least") if count else None
    if match := _TOP_ZH.search(question):
        n = next(g for g in (match.group(1), match.group(3), match.group(4)) if g)
        superlative = match.group("super") or match.group("super_after") or ""
        bottom = match.group(0).startswith(("后", "倒数")) or bool(superlative and LEAST.search(superlative))
        count = _count(n, COUNT_WORDS_ZH, 5)
        return (count, bottom) if count else None
    return None


def asks_paired(question: str) -> bool:
    return bool(PAIRED.search(question))


def asks_dedupe(question: str) -> bool:
    return bool(DEDUPE.search(question))


SPEED = vocabulary.regex(_FILE, "speed", re.I)


def unit_seconds(unit: str) -> float | None:
    """Seconds in one unit of time written in either language ("hours", "min", "小时", "天"), by the
    time units app.numbers converts between (seconds to weeks); None when it is no unit of time."""
    lengths = [v for v in number_words()["time_units"].values() if isinstance(v, dict)]
    return next((float(v["length"]) for v in lengths if re.fullmatch(v["pattern"], unit.strip(), re.I)), None)


def measured_in_time(measure: str | None) -> bool:
    """Whether a number column is a length of time by the unit in its header: "Delivery Time (min)",
    "用时（小时）"."""
    unit = split_unit(measure)[1] if measure else None
    return bool(unit and unit_seconds(unit))


def speed_extreme(question: str, measure: str | None = None) -> str | None:
    """ "most" or "least" for a superlative of speed, by what the measure is: on a length of time the
    quickest is the least time and the slowest the most; on any other number (a speed, a rate) the
    fastest is the most. None without a superlative of speed."""
    said = SPEED.search(question)
    if said is None:
        return None
    slow = bool(LEAST.search(said.group(0)))  # its own end, in speed
    return "most" if slow == measured_in_time(measure) else "least"


def asks_extreme(question: str, measure: str | None = None) -> str | None:
    """ "most" or "least" when the question asks which group is highest or lowest (of the measure, when
    known: "the quickest" by a time in minutes is the lowest)."""
    if speed := speed_extreme(question, measure):
        return speed
    if LEAST.search(question):
        return "least"
    if MOST.search(question):
        return "most"
    return None


# A question that asks for the numbers themselves: "what is …", "show/list …", "how much/many", 多少, 几 — not
# whether they differ ("is revenue different …", "有差别吗") nor which group leads (asks_extreme)
_VALUE_ASKED = re.compile(r"^\W*(?:what|show|list|give|tell)\b|几", re.I)


def asks_values(question: str) -> bool:
    """Whether the question asks for numbers ("what is…", "多少"), not yes or no."""
    return bool(_VALUE_ASKED.search(question) or HOW_MANY.search(question) or HOW_MUCH.search(question))


def asks_group_averages(question: str) -> bool:
    """Whether the question asks for each group's average as numbers ("每个科室的平均费用是多少？", "what is the
    average fee per doctor?"): the averages answer it; whether the groups differ only supports them."""
    return bool(MEAN_WORDS.search(question)) and asks_values(question) and not asks_extreme(question)


# --- follow-ups ----------------------------------------------------------------------------------
def is_followup(question: str) -> bool:
    """A short message that continues the previous question: "and only for online orders?", "那只看华东呢？";
    not one that asks a question of its own after its opening clause ("Just for class 2: average English
    score?", "只看二店，每月销售额是多少？": the filter, then what to compute)."""
    words = len(question.split()) if question.isascii() else len(question) // 3
    opens = FOLLOWUP.search(question) or _OPENING_FILTER.match(question)
    return bool(opens) and words <= 10 and not _asks_after_opening(question)


# A message that opens with a filter word ("only …", "just for …", "只看…", "其中女生呢") narrows the
# previous question: the filter words are the follow-up openers too, so they are listed once (filter_cue)
_OPENING_FILTER = re.compile(rf"\s*(?:{FILTER_CUE.pattern})", re.I)


# The marks that end an opening clause ("only for East:", "只看二店，"), and how many words after one make a
# question of its own (fewer are a tail of the follow-up: "…, please", "…，呢")
_OPENING_END = re.compile(r"[,，:：;；]")
_OWN_QUESTION_WORDS = 3


def _asks_after_opening(question: str) -> bool:
    """Whether the text after the message's first clause mark is a question of its own: three words or
    more (by the segmenter for Chinese), the closing mark aside."""
    parts = _OPENING_END.split(question, maxsplit=1)
    if len(parts) < 2:
        return False
    words = [w for w, _, _, _ in tagged_words(parts[1]) if re.search(r"\w", w)]
    return len(words) >= _OWN_QUESTION_WORDS


@dataclass
class Chain:
    """A question read with the previous ones it continues: the root question (what to analyse)
    and the parts that narrow it (filters)."""

    root: str
    narrowing: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join([self.root, *self.narrowing])


def question_chain(question: str, earlier: list[str]) -> Chain:
    """The question with the earlier ones it continues (most recent last in `earlier`): a follow-up
    inherits the previous question's variables and its filters."""
    parts = [question]
    for previous in reversed(earlier):
        if not is_followup(parts[0]):
            break
        parts.insert(0, previous)
    root, rest = parts[0], parts[1:]
    return Chain(root, rest)


def earlier_questions(messages: list[dict[str, Any]]) -> list[str]:
    """The user's earlier questions in the conversation (harness notes are not questions)."""
    questions = [
        m.get("content") or ""
        for m in messages
        if m.get("role") == "user" and not (m.get("content") or "").startswith("[harness]")
    ]
    return questions[:-1]


RATE = vocabulary.regex(_FILE, "rate", re.I)
SHARE = vocabulary.regex(_FILE, "share", re.I)
SHARE_VERBS = frozenset(vocabulary.words(_FILE, "share_verbs"))
_CLAUSE_ENDS = frozenset("，,。？?！!；;：:")


def writes_share_verb(text: str) -> bool:
    """Whether a share's verb (SHARE_VERBS: 占) is written in the text at all: where it is not, no word of
    the text can be one, and the part-of-speech tagger need not read it."""
    return any(verb in text for verb in SHARE_VERBS)


def share_of_whole(question: str) -> bool:
    """Whether a Chinese question asks what part of a whole something makes up by its grammar: a verb of
    making up a part (占) with an amount after it in the same clause, a numeral word by jieba's
    part-of-speech tagger (多少, 几成, 百分之几, 多大): "三个片区各占百分之多少", "满场的场次大概占几成",
    "分别占总数的多少" — however the amount is asked."""
    if not writes_share_verb(question):  # a tagged word is a piece of the text: no verb, no tagger (~0.3 s to load)
        return False
    words = tagged_words(question)
    for at, (word, tag, _, _) in enumerate(words):
        if word not in SHARE_VERBS or not tag.startswith("v"):
            continue
        for later, later_tag, _, _ in words[at + 1 :]:
            if later in _CLAUSE_ENDS:
                break
            if _amount(later, later_tag):
                return True
    return False


def _amount(word: str, tag: str) -> bool:
    """Whether a word says or asks an amount: a numeral word by jieba's tagger (多少, 几成, 一半), or a
    set phrase with a numeral inside it (百分之几: 几)."""
    return tag.startswith("m") or (
        len(word) > 1 and any(t.startswith("m") for c in word for _, t, _, _ in tagged_words(c))
    )


def asks_share(question: str) -> bool:
    """A share of the whole asked: its words (SHARE: "what share", 占比, 百分比) or its grammar (share_of_whole)."""
    return bool(SHARE.search(question)) or share_of_whole(question)


def asks_rate(question: str) -> bool:
    """A rate or a part of the whole asked (RATE's words, or a share by its grammar: 满场的场次占几成)."""
    return bool(RATE.search(question)) or share_of_whole(question)


SLOPE = vocabulary.regex(_FILE, "slope", re.I)

MORE_MORE = re.compile(
    r"越.{1,20}越|\bthe (?:more|less|higher|lower|bigger|larger|smaller|greater|longer|shorter|older|"
    r"heavier)\b.{1,40}\bthe (?:more|less|higher|lower|bigger|larger|smaller|greater|longer|shorter|"
    r"fewer|heavier|lighter|faster|slower)\b",
    re.I,
)


# "the windier it is, the lower the ozone": any two comparatives (the first is what the second follows)
THE_ER = re.compile(r"\bthe (?:more|less|[a-z]+er)\b.{1,40}\bthe (?:more|less|fewer|[a-z]+er)\b", re.I)

_COMPARATIVE = (
    r"(?:more|less|fewer|higher|lower|bigger|larger|smaller|greater|longer|shorter|older|heavier|faster|slower)"
)
# "Do the trips that burn more diesel come back with more fish?", "do stores with more staff sell more": a
# comparative inside a clause that picks out rows (that, who, with, where, when), then another after it,
# in one sentence: two quantities said to rise together, as "the more …, the more …" says it
_RELATIVE_MORE = re.compile(
    rf"\b(?:that|who|which|with|where|when|whose)\b[^?.!;]{{0,40}}?\b{_COMPARATIVE}\s+[a-z][^?.!;]{{1,60}}?\b{_COMPARATIVE}\b",
    re.I,
)


def moves_together(question: str) -> bool:
    """Whether the question asks if two quantities rise or fall together ("越…越", "the more …, the more …",
    "do the trips that burn more diesel come back with more fish")."""
    return bool(MORE_MORE.search(question) or THE_ER.search(question) or _RELATIVE_MORE.search(question))


MEAN_WORDS = vocabulary.regex(_FILE, "mean_words", re.I)
# One unit of what the rows count ("per order", "每单", "人均"): the average of a group's rows, not their
# total. A grouping column after the word ("per customer type", "每个地区") is a breakdown instead. The English
# word after "per" is a unit when it is one of the things rows often are, in any form (counts_rows); the
# Chinese ones are the row words of unmatched_words.toml and the units beside them.
UNITS_EN = frozenset(vocabulary.words(_FILE, "units_en"))
_UNITS_ZH = "|".join(
    map(re.escape, (*vocabulary.words("unmatched_words", "zh_row_words"), *vocabulary.words(_FILE, "units_zh")))
)
PER_UNIT = re.compile(
    rf"\b(?:per|each|every)\s+(?P<unit>[a-z]+)\b|"
    rf"(?:每(?:个|位|名)?)(?P<unit_zh>单|笔|次|户|张|{_UNITS_ZH})|人均|单均|笔均|户均|客单价",
    re.I,
)
FILTER_TASK = re.compile(
    rf"^\s*(?:please\s+)?(?:{vocabulary.alternation(_FILE, 'filter_task_en')})"
    rf"|^\s*(?:请)?(?:{vocabulary.alternation(_FILE, 'filter_task_zh')})",
    re.I,
)
# "5 or more", "3 and up": after the number, and inclusive (the words of a number's cut stay with its pattern)
_OR_ABOVE = r"(?:or|and) (?:more|above|higher|greater|over|up|bigger|larger)"
_OR_BELOW = r"(?:or|and) (?:less|below|lower|fewer|under|smaller)"
# "deeper than 300", "cheaper than 50": a comparative before "than" (below for these words of less)
_LESS_THAN = (
    r"(?:less|fewer|lower|smaller|shorter|lighter|cheaper|younger|shallower|slower|narrower|thinner|earlier) than"
)
_MORE_THAN = r"\b(?!(?:less|fewer|lower|smaller|shorter|lighter|cheaper|younger|shallower|slower|narrower|thinner|earlier)\b)[a-z]+er than"
_ABOVE = rf"{_OR_ABOVE}|over|above|more than|{_MORE_THAN}|at least|>=?|以上|超过|大于|高于|不少于|不低于|及以上"
_BELOW = rf"{_OR_BELOW}|under|below|{_LESS_THAN}|at most|<=?|以下|低于|小于|不超过|不高于|及以下"
# Each branch starts only where a word or a number starts (\b, (?<![\d.])): from every position inside a long run
# of letters or digits the search backtracked over the rest of it, quadratic in hostile text (a 4,000-digit
# question took 5 s).
NUMBER_CUT = re.compile(
    rf"(?P<pre>{_ABOVE}|{_BELOW})\s*(?P<n1>-?\d+(?:\.\d+)?)|"
    rf"(?<![\d.])(?P<n2>-?\d+(?:\.\d+)?)\s*(?:[^\d\s，,。？?]{{0,4}}?|[a-z]{{1,14}})\s*(?P<post>{_ABOVE}|{_BELOW})",
    re.I,
)
YEAR = re.compile(r"(?<!\d)((?:19|20)\d{2})\s*(?:年|\b)")


def number_cut(question: str) -> tuple[str, float] | None:
    """("> ", 1.0) for "1克拉以上", "over 1 carat"; ("<", 3.0) for "below 3". None when no cut is named."""
    match = NUMBER_CUT.search(question)
    if not match:
        return None
    word = (match.group("pre") or match.group("post")).lower()
    value = float(match.group("n1") or match.group("n2"))
    above = re.fullmatch(_ABOVE, word, re.I) is not None
    inclusive = (
        word in (">=", "<=", "at least", "at most", "不少于", "不低于", "不超过", "不高于", "及以上", "及以下")
        or re.fullmatch(f"{_OR_ABOVE}|{_OR_BELOW}", word) is not None
    )
    return (">=" if inclusive else ">") if above else ("<=" if inclusive else "<"), value


# A trend question without the word: a direction over a span of time ("has the flow been going down
# over the years", "这些年就业人数是不是一直在增加").
DIRECTION = vocabulary.regex(_FILE, "direction", re.I)
TIME_SPAN = vocabulary.regex(
    _FILE,
    "time_span",
    re.I,
    unit_after_unit=r"\b(year|quarter|month|week) (?:after|by|on|over) \1\b",  # year after year
    since_year=r"\bsince \d{4}",
)
TIME_UNITS = vocabulary.regex(_FILE, "time_units", re.I)


def asks_direction_over_time(question: str) -> bool:
    """ "Is X rising over the years?", "一直在增加吗": a direction of change, or a span of years."""
    return bool(TIME_SPAN.search(question) or (DIRECTION.search(question) and TIME_UNITS.search(question)))


SEASON = vocabulary.regex(_FILE, "season", re.I)
DERIVE = vocabulary.regex(
    _FILE,
    "derive",
    re.I,
    add_column=r"^\s*(?:please\s+)?(?:add|create|make|compute|calculate|derive)\b.{0,20}\b(?:column|field|variable)\b",
)
EACH = vocabulary.regex(_FILE, "each", re.I)
DIFFERENCE = vocabulary.regex(
    _FILE,
    "difference",
    re.I,
    minus_sign=r"\w\s+-\s+\w",  # "a - b"
    bare_jian=r"(?<![增缩削])减(?![少小轻低弱慢肥价速去])",  # not inside 增减, 减少, 减肥 ...
)
# a data task: remove the rows where a column (or any) has no value; a new version of the table
DROP_MISSING = re.compile(
    r"^\s*(?:please\s+|(?:can|could|would) you(?: please)?\s+|let'?s\s+|i (?:want|need) to\s+)?"
    r"(?:drop|remove|delete|exclude|discard|get rid of|filter out|throw out|take out)\b.{0,60}"
    r"(?:\bmissing\b|\bempty\b|\bblank\b|\bnull\b|\bna\b|\bnan\b|\bno (?:[\w.]+ ){0,2}(?:values?|data|readings?|entry)\b|\bwithout (?:a )?value)|"
    r"(?:删掉|删除|去掉|去除|剔除|排除|丢掉|不要).{0,20}(?:为空|是空|空白|空值|缺失|没有值|没值|无值|NA|空的)|"
    r"(?:为空|是空|空白|空值|缺失|没有值|没值|无值)的?(?:行|记录|数据)?.{0,4}(?:删掉|删除|去掉|去除|剔除)",
    re.I,
)
