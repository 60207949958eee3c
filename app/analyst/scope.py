"""What narrows or shapes the built-in analyst's plan beyond the question's own words (issue 14):
the filters a question or its follow-ups ask for ("and only for online orders?") and the workspace
rules ("always report totals") — applied, or named in the answer as not applied."""

from __future__ import annotations

import itertools
import re
from typing import Any

from app.analyst.question_words import asks_for_groups, wants
from app.analyst.role_question import match_strength
from app.analyst.sheet_words import month_label
from app.analyst.steps import Condition, Plan, Step, YesNoCondition
from app.analyst.totals import NEGATED_BEFORE, add_total_steps
from app.understanding.kinds import (
    FILTER_CUE,
    HOW_MANY,
    MEAN_WORDS,
    NEGATION,
    NUMBER_CUT,
    TOTAL,
    Chain,
    asks_extreme,
    asks_rate,
    asks_share,
    asks_top,
    asks_total,
    number_cut,
)
from app.understanding.language import local_text as _t
from app.understanding.profile_reading import NUMERIC
from app.understanding.roles import column_spans, groups_rows, named_values
from app.understanding.text import AUXILIARIES
from app.understanding.words import SYNONYMS

_RULES_BLOCK = re.compile(r'<context source="workspace-rules" tier="project-rules">\n(.*?)\n</context>', re.S)


def chain_filters(
    chain: Chain,
    dataset: dict[str, Any],
    keep: set[str] | None = None,
    metric: str | None = None,
    compared: str | None = None,
    said: dict[str, str] | None = None,
    ranked: bool = False,
) -> list[Condition]:
    """filter_rows conditions a question and its follow-ups ask for (each follow-up keeps the earlier
    ones' filters): category values named after "only"/"just"/"只看"/"其中" (in a follow-up anywhere;
    in the question itself within the clause the word narrows), and a cut on a number ("orders over
    100", "金额大于100的"). Columns in `keep` are not filtered, nor the compared column (`compared`) where
    the question itself names two of its values; a cut names its number's column next to it, else the
    question's measure (`metric`). `said`: the root question's words for its columns by any match
    (the reading's mentions, by meaning too: "rough seas" for 是否遇到大风浪), for a yes/no column the
    rules alone do not name. `ranked`: the plan lists or ranks the groups of `compared` (months, products),
    so a value of another column named anywhere in the question is the rows it is about, cue or none
    ("北京店哪个月的营业额最高", "top 3 months by orders for 北京店")."""
    columns = [c for c in dataset.get("columns", []) if not c.get("pii") and c["type"] != "boolean"]
    conditions: dict[str, Condition] = {}
    if ranked:
        conditions |= _values_about(chain.root, [c for c in columns if c["name"] != compared])
    for part, reach in [(chain.root, _cue_reach(chain.root)), *((p, _narrowing_reach(p)) for p in chain.narrowing)]:
        for text, by_negation in reach:
            for column, values in _named_value_sets(text, columns):
                if column in (keep or set()):
                    continue
                if part is chain.root and column == compared and len(values) > 1:  # "only North vs South": compared
                    continue
                left_out = [v for v in values if negated(part, v)]
                if by_negation and not left_out:  # a negator narrows only the value right after it ("不是线上的")
                    continue
                conditions[column] = value_condition(column, left_out or values, bool(left_out))
        for text, by_negation in reach:
            condition = yes_no_filter(text, dataset.get("columns", []), part, said if part is chain.root else None)
            if condition and condition["column"] not in (keep or set()) and (not by_negation or condition["negated"]):
                conditions[condition["column"]] = {
                    "column": condition["column"],
                    "op": condition["op"],
                    "value": condition["value"],
                }
        if (cut := number_filter(part, columns, metric, said if part is chain.root else None)) and cut[
            "column"
        ] not in (keep or set()):
            conditions[cut["column"]] = cut
    return list(conditions.values())


def _values_about(question: str, columns: list[dict[str, Any]]) -> dict[str, Condition]:
    """The rows a ranking is about: each column's values the question writes as they are, kept (or, after a
    negator, left out), for columns other than the one ranked. A value reached only by a word's meaning
    ("leave" for 婚假, 年假 and 病假) is no filter without a filter word: it may be the word of the rows."""
    conditions: dict[str, Condition] = {}
    lowered = question.casefold()
    for column, named in _named_value_sets(question, columns):
        if not (values := [v for v in named if str(v).casefold() in lowered]):
            continue
        left_out = [v for v in values if negated(question, v)]
        conditions[column] = value_condition(column, left_out or values, bool(left_out))
    return conditions


def _named_value_sets(text: str, columns: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """Each column whose values the narrowed text names, with those values: "the Luton vans hired from
    York" keeps Van Size = Luton and Branch = York, one condition per column (named_values finds the
    column naming the most values; the next is looked for among the others)."""
    found: list[tuple[str, list[str]]] = []
    spans = column_spans(text, columns, SYNONYMS)
    left = list(columns)
    while (named := named_values(text, left, spans))[0]:
        column, values = named
        found.append((str(column), values))
        left = [c for c in left if c["name"] != column]
        for value in values:  # a value is one column's: the next column is not found by the same words
            text = re.sub(re.escape(value), " " * len(value), text, flags=re.I)
    return found


def value_condition(column: str, values: list[str], left_out: bool) -> Condition:
    """Keep the rows with the named value(s), or, where a negator stands before them, the rows without."""
    if len(values) == 1:
        return {"column": column, "op": "!=" if left_out else "==", "value": values[0]}
    return {"column": column, "op": "not_in" if left_out else "in", "value": values}


# What may stand between a negator and what it negates: spaces, a copula, "have", an article or a
# preposition ("not a", "without the", "不是", "没有", "不含", "not from", "非会员"). Structure words, not vocabulary.
_NEGATED_GAP = (
    r"(?:\s+|(?<![a-z])(?:is|are|was|were|be|been|have|has|had|a|an|the|any|from|in|at|by|of|paid|via)(?![a-z])"
    r"|是|有|为|含|在|属于|包括|来自|被)*"
)
_NEGATED_END = re.compile(rf"(?:{NEGATION.pattern}){_NEGATED_GAP}$", re.I)


def negated(text: str, value: str) -> bool:
    """Whether a negator stands right before the value or column name in the text ("without a loyalty
    card", "not Online", "没有会员卡", "不是线上的", "除了北区以外"): the question leaves those rows out.
    Not where the text names it again without one ("没有会员卡的顾客比有会员卡的消费多吗"): both sides are
    compared, nothing is left out."""
    low, wanted = text.lower(), value.lower()
    found, at = [], low.find(wanted)
    while at >= 0:
        found.append(bool(_NEGATED_END.search(low[:at])))
        at = low.find(wanted, at + 1)
    return any(found) and all(found)


def yes_no_filter(
    text: str, columns: list[dict[str, Any]], whole: str | None = None, said: dict[str, str] | None = None
) -> YesNoCondition | None:
    """A yes/no column a filter word narrows to ("只看会员卡为是的", "only orders with Loyalty card = No"):
    its "no" when the text says the column's own word for no (否, No, N, False), else its "yes"; the other
    one where a negator stands right before the column's name in the whole question ("without a loyalty
    card", "没有会员卡的"; `negated` says so). The value is the sheet's own word, which filter_rows reads as
    true or false. None when no yes/no column is named."""
    booleans = [c for c in columns if c["type"] == "boolean" and not c.get("pii")]
    spans = column_spans(text, booleans, SYNONYMS) or _said_spans(text, booleans, said or {})
    if not spans:
        return None
    start, end, column = spans[0]
    words = next((dict(c.get("words") or {}) for c in booleans if c["name"] == column), {})
    no = str(words.get("false") or "False")
    yes = str(words.get("true") or "True")
    said_no = re.search(rf"(?<![A-Za-z]){re.escape(no)}(?![A-Za-z])", text[end:], re.I) is not None
    left_out = negated(whole or text, text[start:end])
    value = yes if said_no == left_out else no
    return {"column": column, "op": "==", "value": value, "negated": left_out}


def yes_no_owner(question: str, columns: list[dict[str, Any]], spans: list[tuple[int, int, str]]) -> Condition | None:
    """The rows a yes/no column names as the owner of the number a total asks for ("会员的销售额一共是多少",
    "members' spend in total"): the column's yes (its no where a negator stands before it: "非会员的"), kept as a
    filter, so one total is the answer, not a total per value with the highest first. Only for a total asked
    of one number, where the question names the column right before the number (的, 's) and asks for no
    groups (no "each", no comparison); None otherwise."""
    if asks_for_groups(question, columns):
        return None
    kinds = {str(c["name"]): c for c in columns if not c.get("pii")}
    for (start, end, measure), (after, owner_end, name) in itertools.pairwise(sorted(spans)):
        # "how many cups did members buy": the column as the subject of the clause that asks the amount
        between = question[end:after].lower().split()
        if not (
            kinds.get(name, {}).get("type") == "boolean"
            and kinds.get(measure, {}).get("type") in NUMERIC
            and HOW_MANY.search(question[max(0, start - 12) : start])
            and len(between) == 1
            and between[0] in AUXILIARIES
        ):
            continue
        return _owner_value(question, kinds[name], question[after:owner_end])
    if not asks_total(question):
        return None
    for (start, end, name), (after, _, measure) in itertools.pairwise(sorted(spans)):
        if kinds.get(name, {}).get("type") != "boolean" or kinds.get(measure, {}).get("type") not in NUMERIC:
            continue
        if not _OWNED_BY.fullmatch(question[end:after]):
            continue
        return _owner_value(question, kinds[name], question[start:end])
    return None


def _owner_value(question: str, column: dict[str, Any], said: str) -> Condition:
    """The yes/no column's yes as a filter — its no where a negator stands before the words said for it (非会员)."""
    words = dict(column.get("words") or {})
    # a negating prefix the words said carry themselves ("non-members": the span of 会员 takes the whole word), not
    # one that is a word of the column's own name ("in-store" of In Store)
    prefix, _, rest = said.lower().partition("-")
    own = {w.lower() for w in re.findall(r"[A-Za-z]+", str(column["name"]))}
    left_out = negated(question, said) or (
        bool(rest) and bool(NEGATED_BEFORE.match(prefix + "-")) and prefix not in own
    )
    value = str(words.get("false" if left_out else "true") or ("False" if left_out else "True"))
    return {"column": str(column["name"]), "op": "==", "value": value}


# between an owner and what it owns: 的, or an English possessive ("members' spend", "member's")
_OWNED_BY = re.compile(r"\s*(?:的|'s?|’s?)\s*", re.I)


def _said_spans(text: str, columns: list[dict[str, Any]], said: dict[str, str]) -> list[tuple[int, int, str]]:
    """Where the text holds the words the question named a column with (`said`: column → its words), first first."""
    names = {str(c["name"]) for c in columns}
    low = text.lower()
    found = [
        (at, at + len(words), column)
        for column, words in said.items()
        if column in names and words.strip() and (at := low.find(words.lower())) >= 0
    ]
    return sorted(found)


# The marks that end a clause: a filter word narrows what follows it up to the next one.
_CLAUSE = re.compile(r"[,，;；。？?!！]")


def _cue_reach(question: str) -> list[tuple[str, bool]]:
    """The pieces of a question a filter word narrows: the rest of its clause after the word ("only the
    rows where Channel is Online", "只看线上的订单", "其中渠道为线上的"), or the clause before it when the
    word ends the clause ("Online orders only"). A value elsewhere in the question ("is the gap between
    Online and Store just chance?") is a group the question compares, not a filter. A negator narrows
    too (True with the piece), but only to the value or yes/no column right after it."""
    reach: list[tuple[str, bool]] = []
    for clause in _CLAUSE.split(question):
        for cue in FILTER_CUE.finditer(clause):
            after = clause[cue.end() :]
            reach.append((after if after.strip() else clause[: cue.start()], False))
        reach.extend((clause[cue.start() :], True) for cue in NEGATION.finditer(clause))
    return reach


def _narrowing_reach(part: str) -> list[tuple[str, bool]]:
    """A follow-up that narrows ("and only for online orders?", "那不是线上的呢？") is read whole; a
    follow-up without a filter word narrows only by a negated value."""
    return [(part, False)] if FILTER_CUE.search(part) else [(part, True)] if NEGATION.search(part) else []


# How far (characters) a number's cut may stand from the column it cuts ("金额大于100", "price over 50")
_CUT_REACH = 16
# Plain comparison words: a cut with one of these and no column next to it cuts the question's measure
# ("average amount of orders over 100"); a comparative ("older than 30") names a quantity of its own.
_PLAIN_CUT = re.compile(
    r"^(?:over|above|under|below|more than|less than|at least|at most|[<>]=?|以上|以下|超过|大于|小于|高于|低于|不少于"
    r"|不低于|不超过|不高于|及以上|及以下|(?:or|and) (?:more|above|over|less|below|under))$",
    re.I,
)


def number_filter(
    text: str, columns: list[dict[str, Any]], metric: str | None, said: dict[str, str] | None = None
) -> Condition | None:
    """A cut on a number the text names next to a comparison word ("orders over 100", "金额大于100的",
    "price below 20"): on the numeric column named next to it, else, for a plain comparison word, on
    the question's measure. None when the text names no cut or no column to cut. `said`: the reading's
    words for its columns, by meaning too ("超过3小时": 小时 for Hours Out), read beside names and synonyms."""
    match = NUMBER_CUT.search(text)
    cut = number_cut(match.group(0)) if match else None
    if not match or not cut:
        return None
    numeric = [c for c in columns if c["type"] in NUMERIC]
    names = {c["name"] for c in numeric}
    spans = column_spans(text, numeric, SYNONYMS) + _said_spans(text, numeric, said or {})
    near = [(gap, name) for start, end, name in spans if (gap := _gap(match, start, end)) <= _CUT_REACH]
    word = (match.group("pre") or match.group("post")).strip()
    column = min(near)[1] if near else metric if _PLAIN_CUT.match(word) and metric in names else None
    if column is None and not near and metric is None and _PLAIN_CUT.match(word):
        # a count ("households of 5 or more people, who refers the most"): no measure to cut, the number the
        # cut splits, as the words before it say
        column = _splitting(cut[1], numeric, text[: match.start()])
    if column and not _splits(column, cut[1], numeric):
        # "children over 5" where Height is 95-130, "每箱卖价超过80" where the boxes sold run 206-1,035: a cut
        # that keeps every row or none means the column the number splits, the one named by the words next to it
        # (a named column stays where no other one is split: "price over 1,000" may keep no row)
        column = _splitting(cut[1], numeric, text[: match.start()]) or (column if near else None)
    if not column:
        return None
    value = int(cut[1]) if cut[1].is_integer() else cut[1]
    return {"column": column, "op": cut[0], "value": value}


# How far (characters) the counted thing may stand after a cut's number: "20 volunteers", "3个孩子"
_COUNTED_GAP = 2


def counted_by_cut(text: str, columns: list[dict[str, Any]]) -> str | None:
    """The number column a cut counts ("events with more than 20 volunteers", "超过3个孩子的家庭"): named
    right after the cut's number and nowhere else in the text, it says which rows are kept, not what
    is measured. None when the text has no such cut."""
    match = NUMBER_CUT.search(text)
    if not match or not number_cut(match.group(0)):
        return None
    numeric = [c for c in columns if c["type"] in NUMERIC and not c.get("pii")]
    spans = column_spans(text, numeric, SYNONYMS)

    # right after: a space, a measure word or a particle between them ("20 volunteers", "3个孩子"), no clause mark
    def right_after(start: int) -> bool:
        return match.end() <= start <= match.end() + _COUNTED_GAP and not _CLAUSE.search(text[match.end() : start])

    counted = {name for start, _, name in spans if right_after(start)}
    counted -= {name for start, _, name in spans if not right_after(start)}  # named elsewhere too: a role
    return counted.pop() if len(counted) == 1 else None


def cut_column(text: str, columns: list[dict[str, Any]], read: list[tuple[int, int, str]] | None = None) -> str | None:
    """The number column a cut names next to it and nowhere else in the text ("费用超过500元的就诊",
    "where monthly fee > 100"): the column whose rows the cut keeps. None when the text has no cut, or
    names no number next to it, or names the nearest one elsewhere too (then it is also a role). `read`:
    the reading's own spans (by meaning too: "超过3小时" ↔ Hours Out), beside the names and synonyms."""
    match = NUMBER_CUT.search(text)
    if not match or not number_cut(match.group(0)):
        return None
    numeric = [c for c in columns if c["type"] in NUMERIC and not c.get("pii")]
    names = {str(c["name"]) for c in numeric}
    spans = sorted({*column_spans(text, numeric, SYNONYMS), *((a, b, n) for a, b, n in read or () if n in names)})

    def gap(start: int, end: int) -> int:
        between = text[end : match.start()] if end <= match.start() else text[match.end() : start]
        if _CLAUSE.search(between):
            return _CUT_REACH + 1  # in another clause ("…超过80的记录，一共卖出去多少箱"): not the cut's column
        return _gap(match, start, end)

    # the nearest, as number_filter cuts it ("费用超过500元的就诊": 费用, not 就诊时长 after it)
    near = sorted((gap(start, end), name) for start, end, name in spans if gap(start, end) <= _CUT_REACH)
    if not near:
        return None
    column = near[0][1]
    elsewhere = any(name == column and gap(start, end) > _CUT_REACH for start, end, name in spans)
    return None if elsewhere else column  # named elsewhere too: a role


def cut_subject(
    text: str, spans: list[tuple[int, int, str]], columns: list[dict[str, Any]]
) -> list[tuple[int, int, str]]:
    """The spans that name a column of no number right before a number cut ("租船时间超过3小时": 时间 read as
    a date column): a cut keeps the rows of a number, so the words it follows say which number, and they name
    no date or text column to count by, group by or ask the time of. [] where no such span stands there."""
    match = NUMBER_CUT.search(text)
    if not match or not number_cut(match.group(0)):
        return []
    numbers = {str(c["name"]) for c in columns if c["type"] in NUMERIC}
    return [
        (start, end, name)
        for start, end, name in spans
        if name not in numbers and end <= match.start() and not text[end : match.start()].strip()
    ]


def cut_only(text: str, columns: list[dict[str, Any]], named: list[str]) -> str | None:
    """The number column a cut names next to it and nowhere else ("where monthly fee > 100, what share
    churned?", "价格超过100的商品里，评分的平均值"), when the text names another measure or a yes/no column
    besides: it says which rows are kept, the other one is what is measured. None otherwise (a cut on
    the only measure named, "销售额超过5000的门店", keeps it as the measure too)."""
    column = cut_column(text, columns)
    if column is None:
        return None
    kinds = {c["name"]: c for c in columns if not c.get("pii")}
    measured = [
        n
        for n in named
        if n != column and n in kinds and (kinds[n]["type"] in (*NUMERIC, "boolean") or kinds[n].get("binary"))
    ]
    return column if measured else None


def passing_steps(plan: Plan, question: str, columns: list[dict[str, Any]], named: list[str], zh: bool) -> bool:
    """Which things have rows past a cut on the measure ("销售额超过5000的门店有哪些", "which products cost
    more than 100?"): the rows are kept by the cut (chain_filters, a filter_rows step) and the things the
    kept rows hold are listed, with how many rows each. Only when the cut is on the measure, the question
    names what is listed (a grouping or the column naming each row) and asks for nothing else of the
    numbers: no comparison, extreme, top N, average, total, share or rate. False otherwise."""
    cut = number_filter(question, columns, plan.metric)
    if cut is None or cut["column"] != plan.metric or _asks_of_numbers(question):
        return False
    kinds = {c["name"]: c for c in columns if not c.get("pii")}
    listed = next(
        (
            n
            for n in named
            if n in kinds
            and (groups_rows(kinds[n]) or kinds[n]["type"] in ("identifier", "text"))
            and int(kinds[n].get("levels") or 3)
            > 2  # a yes/no or two-valued column is a filter ("有电梯的"), not a list
        ),
        None,
    )
    if listed is None or (kinds[listed]["type"] == "identifier" and HOW_MANY.search(question)):
        # "how many rentals were out for more than 3 hours": the column naming each row counts the rows past
        # the cut (the count plan), it lists no thing
        return False
    plan.kind, plan.dimension, plan.values = "passing", listed, []
    plan.steps = [s for s in plan.steps if s.tool == "profile_dataset"]
    subject = _t(zh, f"Which {listed} the kept rows hold", f"保留的行中有哪些{listed}")
    plan.steps.append(Step("value_counts", {"column": listed, "top": _LISTED_MAX}, subject))
    return True


_LISTED_MAX = 50  # the things listed at most (value_counts sums the rest as "other")


def _asks_of_numbers(question: str) -> bool:
    """Whether a question asks something of the numbers beyond which rows pass: a comparison, an extreme,
    a top N, an average, a total, a share or a rate (the words its own plans are read by)."""
    return bool(
        wants(question, "compare")
        or wants(question, "correlate")
        or asks_extreme(question)
        or asks_top(question)
        or MEAN_WORDS.search(question)
        or TOTAL.search(question)
        or asks_share(question)
        or asks_rate(question)
    )


def _gap(match: re.Match[str], start: int, end: int) -> int:
    """Characters between a cut and a column's name; 0 where the name's words stand around it ("out for more
    than 3 hours" names Hours Out on both sides of the cut)."""
    if start <= match.start() and match.end() <= end:
        return 0
    return min(abs(match.start() - end), abs(start - match.end()))


def _splits(name: str, value: float, numeric: list[dict[str, Any]]) -> bool:
    """Whether a cut at `value` keeps some rows of a column and not all (its profiled range holds the
    value); True when the range is unknown."""
    column = next((c for c in numeric if c["name"] == name), {})
    low, high = column.get("minimum"), column.get("maximum")
    return low is None or high is None or low < value < high


def _splitting(value: float, numeric: list[dict[str, Any]], before: str = "") -> str | None:
    """The one number column a cut at `value` splits, when the question's measure is not one (a whole
    number cuts a whole-number column first: "over 5" of ages, not of amounts; else the one the words
    right `before` the cut share most of its name with); None when it is unclear."""
    known = [c for c in numeric if c.get("minimum") is not None and c.get("maximum") is not None]
    split = [c for c in known if c["minimum"] < value < c["maximum"]]
    if len(split) > 1 and float(value).is_integer():
        split = [c for c in split if c["type"] == "integer"] or split
    if len(split) > 1 and (words := before[-_CUT_REACH:].strip()):
        strengths = sorted(((match_strength(words, str(c["name"])), str(c["name"])) for c in split), reverse=True)
        split = [c for c in split if c["name"] == strengths[0][1]] if strengths[0][0] > strengths[1][0] else split
    return str(split[0]["name"]) if len(split) == 1 else None


def filtered_name(name: str, conditions: list[Condition]) -> str:
    """The name of a filtered copy: retail_sales_online."""
    values = [
        str(c["value"][0])[:4] if c["op"] == "between" and str(c["value"][0])[:4] == str(c["value"][1])[:4] else v
        for c in conditions
        for v in (c["value"] if isinstance(c["value"], list) else [c["value"]])
    ]
    values = list(dict.fromkeys(values))
    if any(c["op"] in ("!=", "not_in") for c in conditions):  # orders_not_market, not orders_market
        values = ["not", *values]
    slug = "_".join(re.sub(r"\W+", "_", str(v).lower()).strip("_") for v in values)[:40] or "subset"
    return f"{name}_{slug}"


def workspace_rules(messages: list[dict[str, Any]]) -> list[str]:
    """The lines of the workspace rules file, as injected into the system prompt (context.py)."""
    system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
    block = _RULES_BLOCK.search(system)
    if not block:
        return []
    lines = [re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip() for line in block.group(1).splitlines()]
    lines = lines[:-1] if len(lines) > 1 else lines  # the tier's closing note is not a rule
    return [line for line in lines if line and not line.startswith("#")]


def apply_rules(plan: Plan, rules: list[str], zh: bool) -> None:
    """Apply the rules the built-in analyst understands (totals per group); record every rule as
    applied or not, so the answer says which ones it could not apply."""
    for rule in rules:
        applied = False
        if TOTAL.search(rule):
            if plan.kind in ("total", "top"):
                applied = True
            elif plan.metric and plan.dimension and plan.kind not in ("dedupe", "proportion"):
                if not any(s.tool == "group_aggregate" for s in plan.steps):
                    add_total_steps(plan, plan.metric, plan.dimension, zh)
                applied = True
        plan.rules.append((rule, applied))


def _month_span(start: str, end: str, zh: bool) -> str:
    """Whole months as people write them ("Mar 2024", "Apr 2024 to Jun 2024", "2024年3月"); "" for other values."""
    if not (re.fullmatch(r"\d{4}-\d{2}", start) and re.fullmatch(r"\d{4}-\d{2}", end)):
        return ""
    first, last = (month_label(int(v[:4]), int(v[5:]), zh) for v in (start, end))
    return first if first == last else f"{first}至{last}" if zh else f"{first} to {last}"


def describe_conditions(conditions: list[Condition], zh: bool) -> str:
    """Conditions as the answer says them ("Channel = Online, 月份 in 2024"; Chinese joined by "，")."""
    return ("，" if zh else ", ").join(describe_condition(c, zh) for c in conditions)


def describe_condition(condition: Condition, zh: bool) -> str:
    """'Channel = Online', '月份 in 2024', 'carat > 1' for the answer."""
    column, op, value = condition["column"], condition["op"], condition["value"]
    if op == "between" and isinstance(value, list) and len(value) == 2:
        start, end = str(value[0]), str(value[1])
        if start[:4] == end[:4] and start.endswith("-01-01") and end.endswith("-12-31"):
            return f"{column} 在 {start[:4]} 年" if zh else f"{column} in {start[:4]}"
        if months := _month_span(start, end, zh):  # "Date in Mar 2024", "Date 在 2024年4月至2024年6月"
            return f"{column} 在 {months}" if zh else f"{column} in {months}"
        return f"{column} 在 {start} 至 {end}" if zh else f"{column} from {start} to {end}"
    if op in ("!=", "not_in"):
        shown = " / ".join(map(str, value)) if isinstance(value, list) else value
        return f"{column} 不是 {shown}" if zh else f"{column} not {shown}"
    if isinstance(value, list):
        return f"{column} = {' / '.join(map(str, value))}"
    return f"{column} {'=' if op == '==' else op} {value}"
