"""What the built-in analyst does when a role of its plan was filled by default (issue 14, SPEC §9).

- The question names a variable no column matched ("Do rainy days hurt business?") and the plan
  would fill that role by default: it asks, through ask_user_question like every clarification,
  which column is meant (`role_question`); the topic is `role.<question key>.<role>`, the answer
  becomes a confirmed definition and the resumed run reads it back (`role_answers`).
- The question names no variable ("Summarise this file"): the default stands, and the answer says
  in plain words which columns it used and that the question did not name them (`defaults_sentence`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from analysis_tools.common import fmt_num
from app.analyst.sheet_words import own_word
from app.analyst.vocabulary import named_lists, pairs, word_set, words
from app.understanding import semantic  # its model loads on the first phrase, not on import
from app.understanding.gate_words import ID_LIKE
from app.understanding.kinds import LEAST, MOST, RATE, asks_top
from app.understanding.profile_reading import GROUPING, NUMERIC
from app.understanding.role_sources import Provenance, Role, Source
from app.understanding.roles import groups_rows, spoken_names
from app.understanding.text import is_cjk, lemma, tagged_words
from app.understanding.units import names_a_unit, unit_scores
from app.understanding.words import name_words, stem

ASKED_ROLES = ("group", "outcome")  # the roles worth a question; in this order (the groups are what is compared)
MAX_CANDIDATES = 5
NONE_OF_THESE = {language: listed[0] for language, listed in named_lists("none_of_these").items()}
ROLE_WORDS = pairs("role_words")  # role -> how the answer names it (English, Chinese)


def topic(key: str, role: str) -> str:
    return f"role.{key}.{role}"


def role_answers(confirmed: dict[str, str], key: str, columns: list[dict[str, Any]]) -> dict[str, str]:
    """role -> the user's answer to this question's role clarification: the column's own name when
    it names one (any case) or says it as people do (a merged header's leaf: the options and chips
    are offered so), else the answer as given ("None of these": the default stands)."""
    names = {said.lower(): name for name, said in spoken_names(columns).items()}
    names |= {c["name"].lower(): c["name"] for c in columns}
    prefix = f"role.{key}."
    return {
        t[len(prefix) :]: names.get(a.strip().lower(), a.strip()) for t, a in confirmed.items() if t.startswith(prefix)
    }


def candidates(
    role: str, columns: list[dict[str, Any]], metric: str | None, phrases: list[str] | None = None, rate: bool = False
) -> tuple[list[dict[str, Any]], int]:
    """The columns that could fill a role, the ones the question's `phrases` match best first
    (match_strength), then groups (categories first, fewest levels first) or numbers (measurements
    first, then yes/no and code numbers, positions last) — and how many of them are of the kind the
    default is picked from (categories; measurements), when there are any: with one such column
    the default had no real choice."""
    usable = [c for c in columns if not c.get("pii")]
    meaning = _meaning_scores(phrases or [], [c["name"] for c in usable])

    def strength(column: dict[str, Any]) -> float:
        return -max((match_strength(p, column["name"]) for p in phrases or []), default=0.0)

    units = unit_scores(phrases or [], usable) if role != "group" else {}

    def close(column: dict[str, Any]) -> float:  # within a kind, the closest in meaning (or by its unit) first
        return -max(meaning.get(column["name"], 0.0), units.get(column["name"], 0.0))

    if role == "group":
        groups = [c for c in usable if groups_rows(c) and 2 <= (c.get("levels") or 0) <= 30 and c["name"] != metric]
        ranked = sorted(groups, key=lambda c: (strength(c), c["type"] not in GROUPING, close(c), c.get("levels") or 0))
        first = sum(c["type"] in GROUPING for c in ranked)
    else:
        # a rate asked ("the allergy rate"): its outcome is a yes/no column, offered first; otherwise a
        # yes/no column is offered too ("brought back damaged more often": the rate of Damage Reported?)
        # after the measurements, unless the question's words name it
        ranked = sorted(
            (c for c in usable if c["type"] in NUMERIC or c["type"] == "boolean"),
            key=lambda c: (
                not (rate and (c["type"] == "boolean" or c.get("binary"))),
                strength(c),
                not _measured(c),
                _position(c["name"]) or bool(ID_LIKE.search(c["name"])),
                close(c),
            ),
        )
        first = sum(_measured(c) for c in ranked)
    return ranked, first or len(ranked)


def _meaning_scores(phrases: list[str], names: list[str]) -> dict[str, float]:
    """Each column's closeness in meaning to the phrases (semantic.scores); none without phrases,
    so listing the other readings of an assumed role never loads the model."""
    if not phrases or not names:
        return {}
    return semantic.scores(phrases, names)


POSITION_WORDS = word_set("position_words")


def _position(name: str) -> bool:
    """Whether a column's name says it holds a position (latitude, 经度), not an amount."""
    return bool(set(name_words(name)) & POSITION_WORDS) or any(w in name for w in POSITION_WORDS if not w.isascii())


def match_strength(phrase: str, name: str) -> float:
    """How strongly a phrase of the question matches a column's name, 0 to 1: the share of the
    phrase's words whose stem is a word of the name, the share of its Chinese characters the name
    has, or how closely it is spelled like a part of the name (a near spelling only counts from 0.8)."""
    phrase_words = [stem(w) for w in name_words(phrase) if w.isascii() and len(w) >= 3]
    name_stems = {stem(w) for w in name_words(name)}
    shared = sum(w in name_stems for w in phrase_words) / len(phrase_words) if phrase_words else 0.0
    characters = {c for c in phrase if is_cjk(c)}
    common = len(characters & {c for c in name if is_cjk(c)}) / len(characters) if characters else 0.0
    spelled = fuzz.partial_ratio(phrase.lower(), name.lower()) / 100 if len(phrase) >= 3 else 0.0
    return max(shared, common, spelled if spelled >= 0.8 else 0.0)


SETTINGS = 5  # a number with this few distinct values is a setting (a dose of 0.5, 1 or 2), not a measurement


def _measured(column: dict[str, Any]) -> bool:
    """A measurement: not yes/no, not a code, and more than a handful of distinct values."""
    return not (column.get("binary") or column.get("coded")) and not 0 < (column.get("distinct") or 99) <= SETTINGS


@dataclass(frozen=True)
class OpenRole:
    """A role the plan filled by default although the question names something for it: the
    question's words (`asked_about`), the columns that could fill it, best first, and how many of
    them are of the kind a default is picked from."""

    role: str
    asked_about: list[str]
    found: list[dict[str, Any]]
    choices: int
    question: str = ""
    vague: bool = False  # the question names nothing for the role (a bare "best"): asked, never assumed


def open_role(provenance: Provenance | None, metric: str | None) -> OpenRole | None:
    """The first role worth settling (the groups first, unless every unmatched word is a number's
    name): a default the plan could have filled otherwise, for words of the question no column
    matched; None when there is nothing to settle."""
    if provenance is None:
        return None
    names = {c["name"] for c in provenance.columns}
    if any(answer not in names for answer in provenance.answered.values()):
        return None  # told to choose: what is still a default is said in the answer, not asked again
    defaulted = {s.role for s in provenance.defaults()}
    if not provenance.unmatched:
        return _ranked_by_nothing(provenance, defaulted)
    measures = [p for p in provenance.unmatched if measure_like(p) or names_a_unit(p, provenance.columns)]
    others = [p for p in provenance.unmatched if p not in measures]
    # the groups first, unless every unmatched word is a number's name ("the total score", "利润")
    for role in ASKED_ROLES if others else ASKED_ROLES[::-1]:
        if role not in defaulted or role in provenance.answered:
            continue
        if role == "group" and not (others and provenance.asks_groups):
            continue  # groups the question did not ask for, or words that name a number: said in the answer
        asked_about = others if role == "group" else measures or provenance.unmatched
        rate = role == "outcome" and bool(RATE.search(provenance.question))
        found, choices = candidates(role, provenance.columns, metric if role == "group" else None, asked_about, rate)
        if choices >= 2:  # with fewer there is nothing to choose from: the answer says what it used instead
            return OpenRole(role, asked_about, found, choices, provenance.question)
    return None


def _ranked_by_nothing(provenance: Provenance, defaulted: set[Role]) -> OpenRole | None:
    """A ranking that names no number to rank by ("Which event did best?", "哪个阿姨最好？"): its superlative
    (kinds.asks_extreme) says which end, not of what, and with two measurements or more any default is
    a guess at what "best" means: the user is asked, the superlative quoted. Never taken as an assumed
    reading (`vague`): no word of the question points to any one column."""
    if "outcome" not in defaulted or "outcome" in provenance.answered:
        return None
    said = MOST.search(provenance.question) or LEAST.search(provenance.question)
    if not said:
        return None
    word = _superlative_word(provenance.question, said.start(), said.end())
    found, choices = candidates("outcome", provenance.columns, None, [word])
    if sum(_measured(c) for c in found) < 2:
        return None
    return OpenRole("outcome", [word], found, choices, provenance.question, vague=True)


def _superlative_word(question: str, start: int, end: int) -> str:
    """The superlative as the question writes it: the Chinese word holding the match's last character by
    the segmenter ("哪个阿姨最好" → 最好, not the whole 哪…最 the pattern spans), the English match as it is."""
    said = question[start:end]
    if not any(is_cjk(c) for c in said):
        return said
    return next((w for w, _, a, b in tagged_words(question) if a < end <= b), said)


# ASSUME_LEAD and the floors of a reading by meaning: semantic.py (the reading of the question uses them too)
ASSUME_LEAD = semantic.ASSUME_LEAD
FLOOR_SAME_SCRIPT = semantic.FLOOR_SAME_SCRIPT
FLOOR_ACROSS_SCRIPTS = semantic.FLOOR_ACROSS_SCRIPTS


def _floor(phrases: list[str], name: str, role: str) -> float:
    """The least closeness in meaning a header needs to be assumed for the words (same script or not)."""
    chinese_name = any(is_cjk(c) for c in name)
    same = any(any(is_cjk(c) for c in p) == chinese_name for p in phrases)
    return FLOOR_SAME_SCRIPT.get(role, FLOOR_SAME_SCRIPT["group"]) if same else FLOOR_ACROSS_SCRIPTS


def _assumable(open_role: OpenRole) -> list[dict[str, Any]]:
    """The candidates a reading by meaning may take: for a number that is not a rate, the numbers that are
    not yes/no ("the average catch" is no share of trips in rough seas: a yes/no column stays an option
    to choose, not a reading to assume); every candidate otherwise."""
    if open_role.role != "outcome" or RATE.search(open_role.question):
        return open_role.found
    numbers = [c for c in open_role.found if c["type"] != "boolean" and not c.get("binary")]
    return numbers or open_role.found


def likely_column(open_role: OpenRole) -> str | None:
    """The column the analyst takes for an open role without asking (an assumed reading, shown on the
    page with the other columns one click away): the first candidate, when the question's words
    match it more strongly than the next one, or it leads the next in meaning by ASSUME_LEAD and comes
    close enough to the words (_floor); None when the two are tied or all are far, and the user is asked."""
    found, phrases = open_role.found, open_role.asked_about
    if not found or open_role.vague or not _can_rank(open_role):
        return None
    if len(found) == 1:
        return str(found[0]["name"])
    first, second = (max((match_strength(p, c["name"]) for p in phrases), default=0.0) for c in found[:2])
    if first > second:
        return str(found[0]["name"])
    assumable = _assumable(open_role)
    meaning = _meaning_scores(phrases, [c["name"] for c in assumable])
    ranked = sorted(meaning.values(), reverse=True)
    best = max(meaning, key=lambda n: meaning[n]) if meaning else None
    if best is None or len(ranked) < 2 or ranked[0] - ranked[1] < ASSUME_LEAD:
        return None
    taken_for = supporting_phrases(open_role, best)
    if meaning[best] < _floor(taken_for, best, open_role.role):
        return None
    return None if open_role.role == "group" and _values_disagree(taken_for, best, found) else best


# How much closer in meaning another grouping's values must come to the words than the values of the
# column whose name is closest, before that name is no reading to assume: "weekends" is nearest the
# header Weather, but Store's values (Harbour, Station) come closer to it than Sunny or Wet (0.014);
# "film" is nearest the header Cinema, and Drama, Comedy come 0.07 closer than Riverside, Old Town.
# Only the words the column was taken for are compared ("service" for 服务类型, not "worked" of "money per
# hour worked", which the helpers' names 李阿姨, 王阿姨 come closer to).
VALUE_LEAD = 0.01


def _values_disagree(phrases: list[str], best: str, found: list[dict[str, Any]]) -> bool:
    """Whether a grouping taken by its name's meaning alone has values that do not fit the words: another
    grouping's values come closer to them by VALUE_LEAD (semantic.value_closeness). A yes/no column's
    values (是/否, Yes/No) and a number's (ratings 1-5: '4', '5') say nothing of what it is about and are
    not compared."""
    valued = [
        c
        for c in found
        if c.get("values") and c["type"] != "boolean" and not c.get("binary") and c["type"] not in NUMERIC
    ]
    column = next((c for c in valued if c["name"] == best), None)
    if column is None or len(valued) < 2:
        return False
    own = semantic.value_closeness(phrases, [str(v) for v in column["values"]])
    return any(
        semantic.value_closeness(phrases, [str(v) for v in c["values"]]) - own >= VALUE_LEAD
        for c in valued
        if c["name"] != best
    )


def supporting_phrases(open_role: OpenRole, column: str) -> list[str]:
    """The question's words an assumed column was taken for: those it matches best of the candidates
    (by its name's words, else by meaning), so the reading quotes "film" for Film Type, not every
    unmatched word of the question; all of them when none picks it out."""
    names = [str(c["name"]) for c in open_role.found]

    def best_for(phrase: str) -> str | None:
        strengths = {n: match_strength(phrase, n) for n in names}
        if max(strengths.values(), default=0.0) > 0:
            return max(strengths, key=lambda n: strengths[n])
        meaning = _meaning_scores([phrase], names)
        return max(meaning, key=lambda n: meaning[n]) if meaning else None

    return [p for p in open_role.asked_about if best_for(p) == column] or open_role.asked_about


def _can_rank(open_role: OpenRole) -> bool:
    """Whether the first candidate can be what a top-N question ranks: "the top 5 customers" are not
    the 2 values of Customer Type — a column with no more values than N is no assumed reading for it."""
    top = asks_top(open_role.question) if open_role.role == "group" else None
    return top is None or (open_role.found[0].get("levels") or 0) > top[0]


def role_question(provenance: Provenance | None, metric: str | None, zh: bool) -> dict[str, Any] | None:
    """ask_user_question arguments when the question names something no column matched, the plan
    fills a role with a default it could have filled otherwise, and no column stands out (likely_column
    would have taken it); None when there is nothing to ask."""
    if provenance is None or (found_role := open_role(provenance, metric)) is None:
        return None
    role, asked_about, found = found_role.role, found_role.asked_about, found_role.found
    words = _quoted(asked_about, zh)
    if found_role.vague:  # a bare "best": which number it is best by
        question = (
            f"问题里的{words}没有说按哪个数值来比。按哪一列来比？"
            if zh
            else f"Your question asks for the {words} but not by which number. Which column should it be ranked by?"
        )
    elif zh:
        question = f"问题提到了{words}，但没有哪一列叫这个名字。" + (
            f"哪一列能看出{words}？" if role == "group" else f"{words}是哪一列的数值？"
        )
    else:
        question = f"Your question mentions {words}, but no column is called that. " + (
            f"Which column says which rows are {words}?" if role == "group" else f"Which column holds {words}?"
        )
    if zh:
        reason = "不确认的话，分析会自行挑一列：数字可能没错，但说的不是您问的东西。"
        none = "数据里没有这一列：不拿别的列代替"
    else:
        reason = (
            "Without your answer the analysis would pick a column itself: the numbers could be right "
            "but about the wrong thing."
        )
        none = "The data has no such column: no other column stands in for it"
    options = [{"label": c["name"], "description": describe_column(c, zh)} for c in found[:MAX_CANDIDATES]]
    options.append({"label": NONE_OF_THESE["zh" if zh else "en"], "description": none})
    return {
        "question": question,
        "kind": "single",
        "options": options,
        "reason": reason,
        "topic": topic(provenance.key, role),
    }


# The head words of a phrase that names a number (English and Chinese put the head last):
# "science score", "business", "数学成绩", "利润".
MEASURE_EN = word_set("measure_en")
MEASURE_ZH = words("measure_zh")


def measure_like(phrase: str) -> bool:
    """Whether an unmatched phrase names a number rather than groups, by its last word."""
    words = phrase.lower().split()
    if words and words[-1].isascii():
        return words[-1] in MEASURE_EN or lemma(words[-1]) in MEASURE_EN  # scores: score
    return phrase.endswith(MEASURE_ZH)


def declined(provenance: Provenance | None) -> bool:
    """Whether the user answered a role question with "None of these" (any language, any case): no
    column holds what the question names, so no default may stand in for it."""
    if provenance is None:
        return False
    labels = {label.lower() for label in NONE_OF_THESE.values()}
    return any(answer.strip().lower() in labels for answer in provenance.answered.values())


def not_found_answer(provenance: Provenance, zh: bool) -> str:
    """The answer when the user said none of the offered columns is meant: what could not be found,
    and what the data holds instead (its columns, with what each holds)."""
    words = _quoted(provenance.unmatched, zh) or ("问题所说的内容" if zh else "what the question names")
    shown = [c for c in provenance.columns if not c.get("pii")][:12]
    listed = "\n".join(f"- **{c['name']}**: {describe_column(c, zh)}" for c in shown)
    more = len([c for c in provenance.columns if not c.get("pii")]) - len(shown)
    if zh:
        tail = f"\n- 另有 {more} 列" if more > 0 else ""
        return (
            f"数据中找不到{words}对应的列，所以没有拿别的列代替来回答。数据里有这些列：\n{listed}{tail}\n\n"
            "如果其中某一列就是您说的内容，请在问题里直接写出它的列名。"
        )
    tail = f"\n- and {more} more columns" if more > 0 else ""
    return (
        f"I could not find a column for {words} in the data, so I did not answer with another column "
        f"in its place. The data holds these columns:\n{listed}{tail}\n\n"
        "If one of them is what you meant, ask again with its name."
    )


def describe_column(column: dict[str, Any], zh: bool) -> str:
    """'values: sunny, rain, cloudy …' or 'numbers from 3 to 97', for an option; a yes/no column's
    values in the sheet's own words (是、否 or Y, N: the column info keeps them), not True, False."""
    words = {str(k).lower(): str(v) for k, v in (column.get("words") or {}).items()}
    values = [str(own_word(str(v), words)) for v in column.get("values") or []]
    if values:
        more = " …" if len(values) > 4 or (column.get("levels") or 0) > len(values[:4]) else ""
        return ("取值：" if zh else "values: ") + ("、" if zh else ", ").join(values[:4]) + more
    low, high = column.get("minimum"), column.get("maximum")
    if column["type"] in NUMERIC and isinstance(low, (int, float)) and isinstance(high, (int, float)):
        return f"数值，{fmt_num(low)} 至 {fmt_num(high)}" if zh else f"numbers from {fmt_num(low)} to {fmt_num(high)}"
    if column["type"] in NUMERIC:
        return "数值" if zh else "numbers"
    if column["type"] == "datetime":
        return "日期" if zh else "dates"
    levels = column.get("levels")
    return (f"{levels} 个不同取值" if zh else f"{levels} different values") if levels else column["type"]


def defaults_sentence(provenance: Provenance | None, zh: bool) -> str:
    """Which columns the answer used that the question did not name, in plain words; '' when the
    question named them all. A date is worth saying only beside another default."""
    if provenance is None:
        return ""
    used = [s for s in provenance.defaults() if s.role in ROLE_WORDS]
    if not any(s.role != "date" for s in used):
        return ""
    listed = ("、" if zh else ", ").join(_named(s, zh) for s in used)
    # the words that matched nothing are worth naming when a number or the groups stood in for them
    words = _quoted(provenance.unmatched, zh) if any(s.role in ASKED_ROLES for s in used) else ""
    if zh:
        lead = f"问题中的{words}与任何列都对不上，" if words else "问题没有指明这些列，"
        return f"{lead}这里使用了 {listed}；请确认这是您想要的。"
    verb = "matches" if len(provenance.unmatched) == 1 else "match"
    lead = (
        f"Your question mentions {words}, which {verb} no column, so this used "
        if words
        else "Your question did not name these columns, so this used "
    )
    return f"{lead}{listed}: check they are the ones you meant."


def stood_in(provenance: Provenance | None) -> bool:
    """Whether a default stood in for words of the question that matched no column (not asked: no
    other column to choose, or the user let the analyst choose): its evidence is not high confidence."""
    return bool(provenance and provenance.unmatched and any(s.role in ASKED_ROLES for s in provenance.defaults()))


def _named(source: Source, zh: bool) -> str:
    columns = ("、" if zh else ", ").join(f"**{c}**" for c in source.columns[:6])
    en, zh_text = ROLE_WORDS[source.role]
    return f"{columns}（{zh_text}）" if zh else f"{columns} ({en})"


def _quoted(phrases: list[str], zh: bool) -> str:
    return ("、" if zh else ", ").join(f"“{p}”" for p in phrases[:4])
