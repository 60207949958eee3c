"""Which dataset of the workspace a question is about (SPEC §9 scope; issue 14).

The question's words are matched against every dataset's column names (with synonyms, stems and
abbreviations: words) and category values ("online orders" → Channel = Online). Each match weighs as
surely as it names (`EVIDENCE`, the grades of roles.MATCH_KINDS: a header written out over a listed
word such as a synonym or translation, over a partial or by-meaning match); a value spelt like the
word the question ranks ("Which store …": the groups compared, ranked_entity) is no evidence of a
filter and does not count. Where the workspace holds several tables, the words the rules leave are placed
in each table by meaning (the embedding and the dictionary: a weak match each), and a word that names a
column in two tables weighs alike in both (`_shared_words_weigh_alike`). The dataset with the most evidence is the one analysed; a lead of less
than one listed word's weight over the next table (`SURE_LEAD`) is a near-tie, and the answer says
the table was assumed (Choice.sure). When two fit equally, or none fits at all, the scope gate asks
(gates.scope_gate) and the answer — a dataset name — is honoured by the harness's gates and by the
built-in analyst alike. Pure functions over dataset summaries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from app.understanding.gate_words import FAMILIES, has_word
from app.understanding.profile_reading import LOOKUP_LEVELS, NUMERIC
from app.understanding.ranked_entity import ranked_spans
from app.understanding.role_sources import unmatched_words
from app.understanding.roles import WEAK_KINDS, Mention, column_mentions, match_kinds, named_values, spoken_names
from app.understanding.units import names_a_unit
from app.understanding.words import SYNONYMS, name_words

GROUPING = ("category", "boolean")
# How a column was named (roles.MATCH_KINDS), by how sure the naming is: written out (the name, its
# other spelling, a yes/no name's core), then by a listed word (a synonym or everyday word, a stem or
# abbreviation); the rest (a partial form, the embedding) is weak.
EXACT_KINDS = frozenset({"name", "spelling", "yes-no"})
LISTED_KINDS = frozenset({"synonym", "loose"})
# How much one match weighs in the choice of a table, by those grades: a header written out (its
# whole path's leaf or name, in any language) 3, a listed word 2, a weak match 1. A category value
# written out weighs as a listed word: it is the data's own spelling, but of a cell, not a header, and
# short values ("Store", "East") turn up in questions by coincidence. The table's own name outweighs
# any few columns.
EVIDENCE = {"exact": 3, "listed": 2, "weak": 1}
VALUE_WEIGHT = EVIDENCE["listed"]
NAMED_WEIGHT = 5 * EVIDENCE["exact"]
# A table picked by words is picked surely when it leads the next table the user gave by at least a
# listed word's weight: an exact header against a synonym in the other table (3 against 2), or a weak
# match against nothing, is a near-tie the answer says it assumed (the reading's mark, not "checked").
SURE_LEAD = EVIDENCE["listed"]


def weight(kind: str | None) -> int:
    """How much a column named this way (roles.MATCH_KINDS) weighs in the choice of a table."""
    if kind in EXACT_KINDS:
        return EVIDENCE["exact"]
    if kind in LISTED_KINDS:
        return EVIDENCE["listed"]
    return EVIDENCE["weak"]


@dataclass
class Fit:
    """How well one dataset fits a question: the columns named, the values named."""

    dataset: dict[str, Any]
    columns: list[str] = field(default_factory=list)
    values: list[str] = field(default_factory=list)
    named: bool = False  # the question names the dataset (or its file) itself
    kinds: dict[str, str] = field(default_factory=dict)  # column → how it was named (roles.MATCH_KINDS)
    words: dict[str, str] = field(default_factory=dict)  # column → the question's word that named it
    # columns named by a listed word that is another table's own header (`_headers_weigh_more`)
    borrowed: set[str] = field(default_factory=set)
    # columns named by a word that names a column of another table too, with the lowest weight the word has
    # in any of them (`_shared_words_weigh_alike`)
    shared: dict[str, int] = field(default_factory=dict)
    mentions: list[Mention] = field(default_factory=list)  # where the question names the columns (the rules')

    @property
    def weak(self) -> list[str]:
        """The columns named only partly ("overall score" for Overall Satisfaction): worth confirming."""
        return [name for name in self.columns if self.kinds.get(name) in WEAK_KINDS]

    @property
    def score(self) -> int:
        """The evidence for the table: each column by how surely it was named (`weight`), each value,
        the table's own name."""
        columns = sum(weight(self.kinds.get(name)) for name in self.columns)
        return columns + VALUE_WEIGHT * len(self.values) + (NAMED_WEIGHT if self.named else 0)

    @property
    def choosing(self) -> int:
        """The score the choice ranks tables by: a column reached by a word another table has as its own
        header (`borrowed`) weighs as a weak match. How sure the choice is stays the plain score's (an exact
        header against a translation is still a near-tie the answer says it assumed)."""
        borrowed = sum(weight(self.kinds.get(n)) - EVIDENCE["weak"] for n in self.borrowed)
        shared = sum(
            max(0, weight(self.kinds.get(n)) - low) for n, low in self.shared.items() if n not in self.borrowed
        )
        return self.score - borrowed - shared

    @property
    def strength(self) -> tuple[int, int, int]:
        """The score, then how much of it the question says outright (a column's own name or spelling,
        a value written out, the table's name), then by a listed word (a synonym, a stem): between two
        tables naming as many columns, the one named exactly is meant ("销售额" over a synonym's 营业额). A column
        named exactly counts twice a value written out: a value may be one many tables share the look of (3月
        of a column of months matches "2022年3月"), a column's own name is the table's."""
        exact = sum(self.kinds.get(name) in EXACT_KINDS for name in self.columns)
        listed = sum(self.kinds.get(name) in LISTED_KINDS for name in self.columns)
        return (self.choosing, 2 * exact + len(self.values) + (5 if self.named else 0), listed)


@dataclass
class Choice:
    """The dataset to analyse, how it was chosen, and whether the scope gate should ask."""

    dataset: dict[str, Any] | None
    how: str  # "only", "words", "answer", "tie", "none"
    fits: list[Fit] = field(default_factory=list)

    @property
    def ambiguous(self) -> bool:
        return self.how in ("tie", "none")

    @property
    def lead(self) -> int:
        """How much more evidence the chosen table has than the best other table the user gave (0 when
        tied; its whole score when it is the only one)."""
        given = uploads(self.fits)
        chosen = next((f for f in given if f.dataset is self.dataset), None)
        if chosen is None:
            return 0
        others = [f.score for f in given if f is not chosen and not _derived_from(f, chosen)]
        return chosen.score - max(others, default=0)

    @property
    def sure(self) -> bool:
        """Whether the table was chosen surely: the only one, the user's answer, or by words that lead
        every other table by at least SURE_LEAD; a near-tie, a tie broken by meaning or by the unit of
        a number, and no fit at all are assumed."""
        if self.how in ("only", "answer"):
            return True
        return self.how == "words" and self.lead >= SURE_LEAD

    @property
    def others(self) -> list[str]:
        """The names of the other tables the user gave, best fit first: what the table could be instead
        (never a table an analysis made); none when the table read is one an analysis made (named by
        the question, or an analysis's own next round reading it)."""
        if self.dataset is None or self.dataset.get("derived"):
            return []
        return [str(f.dataset.get("name")) for f in uploads(self.fits) if f.dataset is not self.dataset]

    @property
    def candidates(self) -> list[Fit]:
        """The datasets the user may pick from: those tied at the top, else all of them; never a table
        an analysis made (a `_summary`, a side table) while there is data the user gave."""
        offered = uploads(self.fits)
        if self.how == "tie":
            best = offered[0].score if offered else 0
            return [f for f in offered if f.score == best]
        return offered


def _derived_from(fit: Fit, chosen: Fit) -> bool:
    """Whether `fit` is a table made from the chosen one (its name and "_…"): not a rival to it."""
    return str(fit.dataset.get("name") or "").startswith(f"{chosen.dataset.get('name')}_")


def uploads(fits: list[Fit]) -> list[Fit]:
    """The fits of the datasets the user gave (not `derived`: made by an analysis), or all when there are none."""
    given = [f for f in fits if not f.dataset.get("derived")]
    return given or fits


def data_tables(datasets: list[dict[str, Any]], question: str = "") -> list[dict[str, Any]]:
    """The tables a question is read against as data: those the user gave, never a table an earlier
    analysis made (a `_summary`, a table by month: `derived`) unless the question names it by its name;
    all of them when the user gave none. The tables an analysis made stay results: listed, downloadable."""
    text = question.lower()
    kept = [d for d in datasets if not d.get("derived") or (str(d.get("name") or "").lower() or "\0") in text]
    return kept if any(not d.get("derived") for d in kept) else datasets


def fit(question: str, dataset: dict[str, Any]) -> Fit:
    columns = [c for c in dataset.get("columns", []) if not c.get("pii")]
    mentions = column_mentions(question, columns, SYNONYMS)
    spans = [(m.start, m.end, m.name) for m in mentions]
    named_columns = list(dict.fromkeys(name for _, _, name in spans))
    # the word the question ranks ("Which store …") names the groups compared, not rows to keep
    ranked = [(start, end, "") for start, end in ranked_spans(question)]
    column, values = named_values(question, columns, [*spans, *ranked])
    text = question.lower()
    own = [str(dataset.get("name") or ""), re.sub(r"\.\w+$", "", str(dataset.get("file") or ""))]
    # a Chinese name has no ASCII words: its empty word list is in every text, so it names nothing
    named = any(
        name and len(name) > 2 and (name.lower() in text or (" ".join(name_words(name)) or "\0") in text)
        for name in own
    )
    words = {m.name: text[m.start : m.end] for m in reversed(mentions)}
    values_said = [f"{column} = {v}" for v in values] if column else []
    return Fit(dataset, named_columns, values_said, named, match_kinds(mentions), words, mentions=mentions)


def _headers_weigh_more(fits: list[Fit]) -> None:
    """A word one table has as a column's own header weighs only as a weak match, in the choice, where another
    table reaches a column by it as a listed word: "营业额" is the operations table's header, and only a synonym of a
    merged book's 销量 (found in a new user's trial, once a book's leaves were read as their own names)."""
    headers = {f.words.get(name) for f in fits for name in f.columns if f.kinds.get(name) in EXACT_KINDS}
    for f in fits:
        f.borrowed = {n for n in f.columns if f.kinds.get(n) in LISTED_KINDS and f.words.get(n) in headers}


def _by_meaning(question: str, fits: list[Fit]) -> None:
    """Each table's fit with the columns the question's other words mean by the embedding matcher and the
    dictionary (semantic.best_column): every word of the question weighs in the choice, not only those the
    rules match. "How many cups did members buy?" over a milk-tea log (杯数, 会员) and a gym's members
    (Member): the rules match "members" in the gym's header only, yet "cups" and "members" both mean columns
    of the tea log. A thing counted ("how many cups") names no column to read, but it says which table holds
    it. A column placed so weighs as a weak match. Where a word means a column of no table at all ("Which
    store made the most profit?" over tables without profit), the question is about something none holds:
    nothing is added, and which table is meant stays the rules' or the user's (the scope gate asks). The
    model is read only where some word is left."""
    text = question.lower()
    placed: dict[int, list[Mention]] = {}
    left: list[tuple[int, int]] = []
    for f in fits:
        columns = [c for c in f.dataset.get("columns", []) if not c.get("pii")]
        added = placed.setdefault(id(f), _by_family(question, columns, f))
        spans = [(m.start, m.end, m.name) for m in [*f.mentions, *added]]
        named = tuple(dict.fromkeys([*f.columns, *(m.name for m in added)]))
        phrases = unmatched_words(question, columns, spans, (str(f.dataset.get("name") or ""),), named)
        if not phrases:
            continue
        from app.understanding import semantic  # the model: only when phrases are left

        names = semantic.candidate_columns(question, columns, set(named))
        for phrase in phrases:
            if (at := text.find(phrase)) < 0:
                continue
            left.append((at, at + len(phrase)))
            # a match is sure by its lead over the table's next column: a table of one column has none, and the
            # floor a lone column must clear takes words near anything ("What stands out here?" → refund)
            if len(names) > 1 and (column := semantic.best_column(phrase, names)) and column not in named:
                added.append(Mention(at, at + len(phrase), column, "semantic"))
    found = [m for f in fits for m in [*f.mentions, *placed.get(id(f), [])]]
    if any(not any(m.start < end and start < m.end for m in found) for start, end in left):
        return
    for f in fits:
        for m in placed.get(id(f), []):
            if m.name not in f.kinds:
                f.columns.append(m.name)
                f.kinds[m.name] = "semantic"
                f.words[m.name] = text[m.start : m.end]
                f.mentions.append(m)


def _by_family(question: str, columns: list[dict[str, Any]], f: Fit) -> list[Mention]:
    """Where a metric family's word of the question names the table's one number column of that family
    (gate_words.FAMILIES: "revenue" for 销售额（元）): the family's words name its columns (role_sources.family_words),
    so they are no word left for the matcher, yet they say which table holds that number."""
    text = question.lower()
    numbers = [c["name"] for c in columns if c.get("type") in NUMERIC]
    found: list[Mention] = []
    for family in FAMILIES.values():
        members = [n for n in numbers if has_word(family["words"], n)]
        said = [w for w in family["words"] if has_word([w], question)]
        if len(members) != 1 or not said or members[0] in f.kinds:
            continue
        at = text.find(said[0].lower())
        # a word the rules already read as another column of the table (营业额 as a synonym of 销量) is that one's
        if at >= 0 and not any(m.start < at + len(said[0]) and at < m.end for m in f.mentions):
            found.append(Mention(at, at + len(said[0]), members[0], "semantic"))
    return found


def _shared_words_weigh_alike(fits: list[Fit]) -> None:
    """A word of the question that names a column in two tables weighs in each as in the one it names least
    surely: it says which column in either table, not which table ("members" is the gym's Member written
    out and the tea log's 会员 by meaning); the question's other words tell the tables apart, and a tie is
    broken by the table named more exactly (Fit.strength). Words are the same where their places overlap. Only
    a match by meaning lowers the other: two matches by the rules weigh by their own grades.
    Every table is weighed so, a table an analysis made too (it must not outweigh the table it was made from)."""
    given = fits
    placed = [(f, m) for f in given for m in f.mentions if m.name in f.kinds]
    for f in given:
        f.shared = {}
        for m in f.mentions:
            # against a match by meaning only: where the rules match the word in both tables, how surely each
            # names it is their own evidence (and a header's word borrowed as a listed one weighs weak there)
            others = [
                weight(g.kinds.get(n.name))
                for g, n in placed
                if g is not f and n.start < m.end and m.start < n.end and g.kinds.get(n.name) == "semantic"
            ]
            if others and m.name in f.kinds:
                low = min(others)
                f.shared[m.name] = min(f.shared.get(m.name, low), low)


def choose_dataset(
    question: str,
    datasets: list[dict[str, Any]],
    answered: dict[str, Any] | None = None,
    key: str | tuple[str, ...] | None = None,
) -> Choice:
    """The dataset the question is about: the user's scope answer for this question (`key`, or each
    of several keys: a follow-up's and its root's) when there is one, else the best fit by words;
    `tie`/`none` when the words cannot tell (the gate asks)."""
    if not datasets:
        return Choice(None, "none")
    fits = [fit(question, d) for d in datasets]
    if len(datasets) > 1 and answered_dataset(datasets, answered or {}, key) is None:
        _by_meaning(question, uploads(fits))
    _headers_weigh_more(fits)
    _shared_words_weigh_alike(fits)
    fits.sort(key=lambda f: -f.choosing)
    if len(datasets) == 1:
        return Choice(datasets[0], "only", fits)
    picked = answered_dataset(datasets, answered or {}, key)
    if picked is not None:
        return Choice(picked, "answer", fits)
    best = fits[0].choosing
    if best == 0:  # nothing fits: the last table the user gave stands in until the gate's answer
        if meant := meaning_fit(question, uploads(fits)):
            return Choice(meant.dataset, "words", fits)
        given = [d for d in datasets if not d.get("derived")] or datasets
        return Choice(given[-1], "none", fits)
    top = [f for f in fits if f.choosing == best]
    if len(top) > 1:
        names = [str(f.dataset.get("name")) for f in top]
        root = min(names, key=len)
        if all(n == root or n.startswith(f"{root}_") for n in names):  # a table and what was derived from it
            return Choice(next(f.dataset for f in top if f.dataset.get("name") == root), "words", fits)
        strongest = max(f.strength for f in top)
        if len(surest := [f for f in top if f.strength == strongest]) == 1:  # one names its columns surer
            return Choice(surest[0].dataset, "words", fits)
        if (
            (meant := unit_fit(question, uploads(surest)))
            or (meant := meaning_fit(question, uploads(surest)))
            or (meant := closeness_fit(question, uploads(surest)))
        ):
            return Choice(meant.dataset, "words", fits)
        return Choice(top[0].dataset, "tie", fits)
    return Choice(top[0].dataset, "words", fits)


def _phrases_left(question: str, fits: list[Fit]) -> list[str]:
    """The question's phrases the rules matched to no column or value of any of the tables."""
    columns = list({c["name"]: c for f in fits for c in f.dataset.get("columns", []) if not c.get("pii")}.values())
    named = {name for f in fits for name in f.columns}
    spans = [(m.start, m.end, m.name) for m in column_mentions(question, columns, SYNONYMS)]
    return unmatched_words(
        question, columns, spans, tuple(str(f.dataset.get("name") or "") for f in fits), tuple(named)
    )


def unit_fit(question: str, fits: list[Fit]) -> Fit | None:
    """The one table a phrase names by the unit of one of its numbers, when the words fit several
    equally: "Which stall sold the most boxes?" over a fruit market's sheet (销量（箱）) and a café's
    (Revenue): "sold" is an everyday word for both, "boxes" is what only the market's 销量 counts. A
    unit is strong evidence, the header's own word for what is counted (units.names_a_unit); phrases
    naming units in two tables leave the choice to the user."""
    if len(fits) < 2:
        return None
    phrases = _phrases_left(question, fits)
    if not phrases:
        return None
    by_unit = [f for f in fits if any(names_a_unit(p, f.dataset.get("columns", [])) for p in phrases)]
    return by_unit[0] if len(by_unit) == 1 else None


def meaning_fit(question: str, fits: list[Fit]) -> Fit | None:
    """The one table a phrase of the question means a column of, by the embedding matcher
    (semantic.py), when the words matched no table or several equally: "Which shops took the most
    money?" over a sales table and a staff table. The phrases the rules left unmatched in every
    table are placed among the columns of all of them together; each must be placed confidently,
    and all in one table only (a phrase no table holds leaves the choice to the user). The fit gains that column, a weak ("semantic") one."""
    if len(fits) < 2:
        return None
    owners: dict[str, list[Fit]] = {}
    for f in fits:
        for column in f.dataset.get("columns", []):
            owners.setdefault(column["name"], []).append(f)
    columns = list({c["name"]: c for f in fits for c in f.dataset.get("columns", []) if not c.get("pii")}.values())
    named = {name for f in fits for name in f.columns}
    spans = [(m.start, m.end, m.name) for m in column_mentions(question, columns, SYNONYMS)]
    phrases = unmatched_words(
        question, columns, spans, tuple(str(f.dataset.get("name") or "") for f in fits), tuple(named)
    )
    if not phrases:
        return None
    from app.understanding import semantic  # the model: only when phrases are left

    names = semantic.candidate_columns(question, columns, named)
    placed = [semantic.best_column(p, names) for p in phrases]
    if None in placed:  # a phrase no table holds ("profit"): which table is meant stays a question
        return None
    meant = {name for name in placed if name}
    tables = {id(owners[name][0]): owners[name][0] for name in meant if len(owners[name]) == 1}
    if len(tables) != 1 or any(len(owners[name]) > 1 for name in meant):
        return None
    (chosen,) = tables.values()
    for name in meant:
        chosen.columns.append(name)
        chosen.kinds[name] = "semantic"
    return chosen


def closeness_fit(question: str, fits: list[Fit]) -> Fit | None:
    """The one table whose less-than-exact matches the whole question is clearly nearer in meaning to,
    by the embedding matcher (semantic.py), when the rules named as many columns as surely in each:
    "Which shop sold the most units?" over a sheet of 销售情况 / 销量 and one of 营业额 ("sold" is an
    everyday word for both; the question is 0.85 from the first, 0.78 from the second). The lead must
    be the matcher's own margin of a confident match (semantic.MIN_SCORE, MIN_MARGIN); closer than
    that ("Which one sold the most?" over 销量（吨） and Revenue) the user is asked."""
    if len(fits) < 2:
        return None
    unsure = [[name for name in f.columns if f.kinds.get(name) not in EXACT_KINDS] for f in fits]
    if not all(unsure):  # a table matched only by exact names: nothing of it to weigh by meaning
        return None
    from app.understanding import semantic  # the model: only for a tie the words left

    near = semantic.scores([question], [name for names in unsure for name in names])
    closeness = sorted(((max(near[n] for n in names), i) for i, names in enumerate(unsure)), reverse=True)
    (best, chosen), (second, _) = closeness[0], closeness[1]
    return fits[chosen] if best >= semantic.MIN_SCORE and best - second >= semantic.MIN_MARGIN else None


def answered_dataset(
    datasets: list[dict[str, Any]], answered: dict[str, Any], key: str | tuple[str, ...] | None
) -> dict[str, Any] | None:
    """The dataset a scope answer names: this question's answer (`scope.<question key>`), else an
    answer to the new-file question (`scope.<dataset>`: "Only the new file (x)", "Only the earlier
    data", a dataset's name). A table picked for another question is that question's choice only:
    a later question is read by its own words."""
    keys = (key,) if isinstance(key, str) else tuple(key or ())
    by_name = {str(d.get("name")): d for d in datasets}
    own = [f"scope.{k}" for k in keys if k]
    topics = own + [t for t in answered if t.startswith("scope.") and t not in own and t[len("scope.") :] in by_name]
    for topic in topics:
        answer = answered.get(topic)
        if isinstance(answer, list):
            answer = answer[0] if answer else None
        if not isinstance(answer, str):
            continue
        text = answer.strip()
        if text in by_name:
            return by_name[text]
        inside = [name for name in by_name if name and name in text]
        if inside:
            return by_name[max(inside, key=len)]
        if re.search(r"earlier|之前", text):
            new = topic.split(".", 1)[1]
            earlier = [d for d in datasets if d.get("name") != new]
            if earlier:
                return earlier[-1]
    return None


def with_values(summary: dict[str, Any], frame: Any) -> dict[str, Any]:
    """A dataset summary with each category column's values (up to LOOKUP_LEVELS), from the frame,
    so questions can be matched by the values they name."""
    if frame is None:
        return summary
    columns = []
    for c in summary.get("columns", []):
        if (
            c["type"] in GROUPING
            and not c.get("pii")
            and c["name"] in getattr(frame, "columns", ())
            and "values" not in c
        ):
            counts = frame[c["name"]].value_counts()
            if len(counts) <= LOOKUP_LEVELS:
                c = {**c, "values": [str(v) for v in counts.index]}
        columns.append(c)
    return {**summary, "columns": columns}


def describe_fit(f: Fit, zh: bool) -> str:
    """One option's description in the scope question: size and what matched."""
    rows = f.dataset.get("rows")
    size = (f"{rows:,} 行" if zh else f"{rows:,} rows") if isinstance(rows, int) else ""
    spoken = spoken_names(f.dataset.get("columns") or [])
    matched = [*(spoken.get(c, c) for c in f.columns), *f.values][:4]
    if matched:
        what = ("匹配：" if zh else "matches: ") + ", ".join(matched)
    else:
        what = "与问题中的词不匹配" if zh else "no column matches the question's words"
    return "; ".join(p for p in (size, what) if p)
