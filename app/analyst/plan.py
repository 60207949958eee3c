"""What the built-in analyst decides to compute for one question: a Plan, made from the question's
reading (app.understanding.reading.Reading: the question as the analysis takes it, the dataset, the
columns it names, the user's answers).

In order: a data task the question spells out, or the change of the same subjects between two
times (data_tasks); a design the words and the data show (designs: a wide pair); else the number
and the grouping (column_choice, with the rates of a yes/no outcome), a grouping made for the
question (one group against the others, the weekend against the weekdays), and the analyses its
kind asks for (rates, relationships, paired, rankings, time_steps, totals) or the standard ones:
describe the number, its trend, its comparison across the groups, its correlation with the other
numbers and, for drivers, a regression. The plan records where each of its columns came from
(provenance, role_sources)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from app.analyst.column_choice import (
    choose_dimension,
    choose_metric,
    chosen_metric,
    each_named_first,
    named_longest_first,
    other_numeric,
)
from app.analyst.comparisons import GROUPS_COMPARED, add_compare_steps
from app.analyst.data_tasks import (
    count_plan,
    date_gap_plan,
    dedupe_plan,
    derive_plan,
    filter_conditions,
    filter_plan,
    missing_plan,
    most_rows_plan,
    ordered_names,
    per_pair,
    per_unit_plan,
    repeated_plan,
)
from app.analyst.date_span import date_span_plan
from app.analyst.designs import (
    change_by_group,
    made_weekend_column,
    weekend_by_date,
    weekend_dates,
    weekend_grouping,
    weekend_versus_weekdays,
    wide_pair_plan,
)
from app.analyst.paired import paired_steps
from app.analyst.period_totals import counted_per_period, period_total_steps
from app.analyst.provenance import plan_roles, read_sources
from app.analyst.question_words import Asks, asks_each_group, asks_for, asks_for_groups, asks_trend, wants
from app.analyst.rankings import top_steps, when_steps
from app.analyst.rates import rate_steps
from app.analyst.reading import chip_goal
from app.analyst.relationships import WHICH, relation_steps
from app.analyst.role_question import likely_column, open_role, role_answers, supporting_phrases
from app.analyst.scope import chain_filters, counted_by_cut, cut_only, passing_steps, yes_no_owner
from app.analyst.steps import Column, Plan, Spans, Step, date_column, profile_step
from app.analyst.time_steps import add_time_steps, period_steps, season_steps, time_filter, top_period_steps
from app.analyst.totals import additive, averaged_by_default, share_steps, total_steps
from app.analyst.versus_rest import asks_versus_rest, versus_rest
from app.understanding import semantic  # its model loads on the first phrase, not on import
from app.understanding.count_pairs import count_pair
from app.understanding.everyday_words import DURATION_WORDS
from app.understanding.kinds import (
    DERIVE,
    DROP_MISSING,
    EACH,
    FILTER_TASK,
    RATE,
    SEASON,
    SHARE,
    SHARE_VERBS,
    Chain,
    asks_dedupe,
    asks_rate,
    asks_share,
    asks_top,
    writes_share_verb,
)
from app.understanding.language import local_text as _t
from app.understanding.outcome import Outcome, measure_names, rate_outcome
from app.understanding.profile_reading import NUMERIC, count_weights
from app.understanding.reading import Reading, read_question
from app.understanding.repeated_design import repeated_design
from app.understanding.role_sources import Provenance, Source, counted_measure, same_family, unmatched_words
from app.understanding.roles import Roles, groups_rows, named_values, regression_roles, superlative_measure
from app.understanding.text import closed_class_spans, tagged_words, tokens
from app.understanding.wide_pairs import marked_change, marker_columns, wide_pair
from app.understanding.words import STOP, without_value_words


def plan_reading(reading: Reading) -> Plan:
    """Profile, then the analyses that fit the columns and the question (and the user's confirmed
    definitions: the chosen metric, the goal and the columns that are labels — the reading's `asked`
    and `columns` — and the columns the user named for a role the question's words did not settle:
    role_question). Column summaries may carry the values and date spans the profile showed
    (read_profile). The columns the question names are the reading's mentions. The plan records
    where each of its columns came from (role_sources)."""
    question, dataset, asked, columns = reading.root, reading.dataset, reading.asked, reading.columns
    # the roles a column fills; the filter's answer keeps rows (turn_plan._chip_filter), it names no column
    answered = {
        r: a for r, a in role_answers(reading.confirmed, reading.root_key, dataset["columns"]).items() if r != "filter"
    }
    assumed: dict[str, tuple[str, list[str]]] = {}  # role -> (column, the words it was taken for)
    chosen = chosen_metric(asked, columns, reading.confirmed)
    spans = [(m.start, m.end, m.name) for m in reading.mentions]
    if "outcome" not in answered and not chosen and (yes_no := _yes_no_asked_for(reading, spans)):
        assumed["outcome"] = yes_no  # a rate of something no column is called, on data with one yes/no column
    while True:  # at most once more per role the analyst takes as an assumed reading
        taken = {**answered, **{role: column for role, (column, _) in assumed.items()}}
        plan = _planned(_read(reading, taken))
        plan.provenance = Provenance(
            reading.root_key,
            question,
            read_sources(plan, asked, columns, reading.mentions, chosen, taken),
            unmatched_words(
                question, columns, spans, (str(dataset.get("name") or ""),), tuple(name for _, name in plan_roles(plan))
            ),
            taken,
            columns,
            asks_for_groups(question, columns),
        )
        # a role the question names in words no column matched: the column that stands out is taken as
        # an assumed reading (shown, one click to change); a tie is asked (role_question)
        found = open_role(plan.provenance, plan.metric)
        if found is None or found.role in assumed or (column := likely_column(found)) is None:
            break
        assumed[found.role] = (column, supporting_phrases(found, column))
    plan.provenance.sources = [_assumed(source, assumed) for source in plan.provenance.sources]
    if owner := yes_no_owner(asked, columns, spans):  # "会员的销售额一共是多少": the members' rows (_read)
        plan.filters = [*plan.filters, owner]
    return plan


def _yes_no_asked_for(reading: Reading, spans: Spans) -> tuple[str, list[str]] | None:
    """The yes/no column a rate or a part of the whole is asked of ("how often did each area run out of
    stock", "满场的场次大概占几成") when the question's words name it nowhere — no yes/no column, no
    measurement, no value of a column — but name something no column matched, and the data has exactly
    one yes/no column: the rate of that column is the reading taken (assumed: shown, one click to
    change), not the sum or the share of a number the question never named. With the words that
    named nothing, which it was taken for."""
    question, columns = reading.asked, reading.columns
    if not asks_rate(question):
        return None
    named = ordered_names(spans)
    if measure_names(columns, named) or rate_outcome(question, columns, named, spans):
        return None  # a measurement's rate ("the rate of return"), or a yes/no outcome the words name
    if named_values(question, columns, spans)[1]:
        return None  # a value is named: a group, or one value of many as the event (_value_event)
    yes_no = [c for c in columns if not c.get("pii") and (c["type"] == "boolean" or c.get("binary"))]
    if len(yes_no) > 1:
        return _closest_yes_no(question, columns, spans, [str(c["name"]) for c in yes_no])
    if len(yes_no) != 1:
        return None
    phrases = unmatched_words(question, columns, spans, (str(reading.dataset.get("name") or ""),), tuple(named))
    # "what share of orders", "占孩子人数的比例": the words right after the share's cue are the whole the shares
    # are of (the rows), not an event; a share of the rows by group is no rate (share_steps counts them)
    phrases = [p for p in phrases if not _whole_of_share(question, p)]
    return (str(yes_no[0]["name"]), phrases) if phrases else None


def _closest_yes_no(
    question: str, columns: list[Column], spans: Spans, yes_no: list[str]
) -> tuple[str, list[str]] | None:
    """Of several yes/no columns, the one a rate question's event is said of in words no column is called
    ("how often does each crew have to come back" → Callback Needed, not Paid Late; "有多少比例的订单退了货" →
    退货): the words the question says beyond the columns it names, the rate's cue and the whole the rate is
    of (event_words) are compared in meaning with each yes/no header (semantic.assumed_column: the closest
    must lead the next by ASSUME_LEAD and come within its script's floor); the event is often a verb or a
    clause, which the rules' phrases leave out. None where no such word is said or no column leads."""
    said = event_words(question, columns, spans)
    if not said:
        return None
    found = semantic.assumed_column(said, yes_no, role="outcome")
    return (found.name, [said]) if found else None


def event_words(question: str, columns: list[Column], spans: Spans) -> str:
    """The words of a rate question beyond the columns it names (an identifier's name stays: its word is the
    rows, "visit" of Visit ID), the rate's and the share's cues, the whole a share is of ("share of the
    donors") and the grammar (stop words, Chinese closed-class words, numbers), in question order:
    "" when none is left."""
    ids = {c["name"] for c in columns if c.get("type") == "identifier"}
    text = question
    blanks = [(start, end) for start, end, name in spans if name not in ids]
    blanks += [m.span() for pattern in (RATE, SHARE) for m in pattern.finditer(question)]
    blanks += _rows_of_groups(question, [(start, end) for start, end, name in spans if name not in ids])
    for start, end in blanks:
        text = text[:start] + " " * (end - start) + text[end:]
    closed = closed_class_spans(text)
    kept = [
        t
        for t in tokens(text)
        if t.lemma.lower() not in STOP
        and t.word[0].isalnum()
        and not t.word.isdigit()
        and t.word not in SHARE_VERBS
        and not any(s <= t.start < e for s, e in closed)
        and not _whole_of_share(question, t.word)
    ]
    return ("" if all(t.is_cjk for t in kept) else " ").join(t.word for t in kept)


def _rows_of_groups(question: str, named: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Where a share's verb (占) has a named column before it in its clause, what stands between them, and the
    verb, are the rows each group makes up ("各种血型的献血者各占多少": 献血者 are what 血型's groups divide),
    not an event."""
    if not writes_share_verb(question):
        return []
    found = []
    for word, tag, start, stop in tagged_words(question):
        if word not in SHARE_VERBS or not tag.startswith("v"):
            continue
        ends = [end for _, end in named if end <= start and not _CLAUSE_END.search(question[end:start])]
        if ends:
            found.append((max(ends), stop))
    return found


_CLAUSE_END = re.compile(r"[，,。？?！!；;：:]")


def _whole_of_share(question: str, phrase: str) -> bool:
    """Whether the phrase is the object of a share's cue: only stop words between the cue's end (share of,
    percentage, 占) and the phrase."""
    text = question.lower()
    at = text.find(phrase.lower())
    if at < 0:
        return False
    ends = [m.end() for pattern in (RATE, SHARE) for m in pattern.finditer(text)]
    if writes_share_verb(text):
        ends += [end for word, tag, _, end in tagged_words(text) if word in SHARE_VERBS and tag.startswith("v")]
    return any(
        end <= at and all(w in STOP for w in re.findall(r"\w+", text[end:at])) and at - end <= 12 for end in ends
    )


def _assumed(source: Source, assumed: dict[str, tuple[str, list[str]]]) -> Source:
    """A role's source as the reading shows it: a column the analyst took for words no column
    matched is an assumed reading of those words (kind "semantic", weak), not the user's answer."""
    column, phrases = assumed.get(source.role, ("", []))
    if source.how == "answer" and column in source.columns:
        return Source(source.role, source.columns, "semantic", tuple(phrases))
    return source


def plan_analysis(question: str, dataset: dict[str, Any], zh: bool, confirmed: dict[str, str] | None = None) -> Plan:
    """`plan_reading` of one question (no earlier ones) on one dataset: for tests and scripts."""
    return plan_reading(read_question(question, [dataset], confirmed=confirmed, zh=zh))


@dataclass
class Planning:
    """What the planner has read of one question, which its stages share. `columns` grows with the
    columns a prep step adds (one group against the others); `implied` and `values` (the grouping
    whose values the question names) change when those values name the outcome instead."""

    reading: Reading
    question: str  # the question as the analysis takes it (Reading.asked)
    columns: list[Column]
    spans: Spans  # where it names columns (the reading's mentions)
    named: list[str]  # the columns it names, longest names first
    grouping: list[str]  # the columns that may group: the user's answer for the groups first, then `named`
    chosen: str | None  # the metric the user chose, or named for the outcome
    roles: Roles  # a regression's target and predictors, as the words say
    dated: bool
    implied: str | None
    values: list[str]
    asks: Asks
    kept: set[str]  # the columns the question keeps rows by ("只看会员卡为是的"): filters, not roles
    goal: tuple[str, int] | None = None  # the kind (and N) a reading chip chose: over the question's own

    @property
    def zh(self) -> bool:
        return self.reading.zh

    @property
    def dataset(self) -> dict[str, Any]:
        return self.reading.dataset


def _read(reading: Reading, answered: dict[str, str]) -> Planning:
    question, columns = reading.asked, reading.columns
    names = {c["name"] for c in columns}
    chosen = chosen_metric(question, columns, reading.confirmed)
    chosen = chosen or (answered["outcome"] if answered.get("outcome") in names else None)
    group = answered.get("group") if answered.get("group") in names else None
    spans = [(m.start, m.end, m.name) for m in reading.mentions]
    named = named_longest_first(spans, columns)
    # "where monthly fee > 100, what is the average rating": a number named only in its cut, beside another
    # measure, keeps rows (chain_filters applies the cut): it is neither the measure nor a number related to it
    if cut := cut_only(question, columns, named):
        named = [n for n in named if n != cut]
        spans = [span for span in spans if span[2] != cut]
    roles = regression_roles(question, columns, spans)
    dated = any(c["type"] == "datetime" and not c.get("pii") for c in columns)
    implied, values = named_values(question, columns, spans)
    # a value the question keeps rows by ("只看会员卡为是的，各门店…") filters (scope.chain_filters): where the
    # question names another grouping, the filtered column names neither the groups compared nor the grouping
    filters = chain_filters(Chain(question), reading.dataset, said=reading.said)
    if owner := yes_no_owner(question, columns, spans):  # "会员的销售额一共是多少": one total of the members'
        # rows (plan_reading keeps them), not a total per value of 会员
        filters.append(owner)
        spans = [span for span in spans if span[2] != owner["column"]]
        named = [n for n in named if n != owner["column"]]
    levels = {c["name"]: c.get("levels") or len(c.get("values") or []) for c in columns}
    # leaving out one value of a two-valued column ("没有停车场的") keeps the other: one group, none compared
    kept = {
        c["column"] for c in filters if c["op"] in ("==", "in") or (c["op"] == "!=" and levels.get(c["column"]) == 2)
    }
    if implied in {c["column"] for c in filters if c["op"] in ("!=", "not_in")}:  # "every branch but Market":
        # the values left out are not the groups compared; the column still groups the rest where it is named
        implied, values = (implied if implied in named else None), []
    kinds = {c["name"]: c for c in columns}
    if kept and any(n not in kept and n in kinds and groups_rows(kinds[n]) for n in named):
        implied, values = (None, []) if implied in kept else (implied, values)
        named = [n for n in named if n not in kept]
    # "only events with more than 20 volunteers, how much did they bring in": the number a cut counts keeps
    # rows, it is not the measure (the cut itself is applied with the other filters: scope.chain_filters)
    named = [n for n in named if n != counted_by_cut(question, columns)]
    # the everyday words that name a group ("women" for F) are not the words of what the question asks for
    asks = asks_for(without_value_words(question, values), dated, bool(roles.predictors))
    # the user's answer names the groups first; then a column the question goes through one by one (每家影院)
    ordered = each_named_first(question, spans, named)
    grouping = [group, *ordered] if group else ordered
    goal = chip_goal(reading.confirmed.get(f"goal.{reading.root_key}"))
    return Planning(
        reading, question, columns, spans, named, grouping, chosen, roles, dated, implied, values, asks, kept, goal
    )


def _planned(p: Planning) -> Plan:
    return _task_plan(p) or _design_plan(p) or _analysis_plan(p)


def _task_plan(p: Planning) -> Plan | None:
    """A data task the question spells out (remove the rows with gaps or the duplicates, keep some
    rows, add a column), or the change of the same subjects between two times (repeated_design)."""
    question, columns, spans, zh = p.question, p.columns, p.spans, p.zh
    if DROP_MISSING.search(question):
        return missing_plan(columns, ordered_names(spans), zh)
    if asks_dedupe(question):
        return dedupe_plan(columns, zh)
    if FILTER_TASK.search(question) and (conditions := filter_conditions(question, columns, spans)):
        return filter_plan(conditions, zh)
    # "how long … between signing up and the test? Average days": the words asking how long ask for the gap,
    # they do not name a duration column of the table
    gap_spans = [(a, b, n) for a, b, n in spans if question[a:b].lower() not in DURATION_WORDS]
    if gap := date_gap_plan(question, columns, ordered_names(gap_spans), str(p.dataset.get("name") or ""), zh):
        return gap  # days between two dates, as a new column, then its average (data_tasks)
    if span := date_span_plan(question, columns, spans, p.values, str(p.dataset.get("name") or ""), zh):
        return span  # "how many years of data are there": the calendar periods the dates cover (date_span)
    rows, grain = int(p.dataset.get("rows") or 0), p.dataset.get("grain")
    ranked_by = choose_dimension(columns, p.grouping, p.implied, None)
    name, add_column = str(p.dataset.get("name") or ""), bool(DERIVE.search(question))
    if not add_column and (price := per_unit_plan(question, columns, spans, name, zh, False, ranked_by, True)):
        price.filters = time_filter(question, columns)  # "去年每件卖多少钱": the kept rows' totals (turn_plan)
        return price  # "每件卖多少钱": a price per thing counted, not a count of rows (data_tasks)
    # "每个地点各有几天": each group's count; the grouping no word named stands in (a default, shown and asked
    # or taken for the words: open_role) only where the question asks for groups
    grouping = [*p.grouping, ranked_by] if ranked_by and asks_each_group(question, columns) else p.grouping
    if counted := count_plan(question, columns, spans, rows, zh, grain, grouping) or most_rows_plan(
        question, columns, spans, zh
    ):
        # "how many children", "多少人午睡": a count of rows; "who refers the most households": each group's rows
        # (data_tasks); "how many were hired in 2021": the rows of the time it names
        counted.filters = [*counted.filters, *time_filter(question, columns)]
        return counted
    if DERIVE.search(question):  # two numbers named, or a pair named by its markers ("before minus after")
        measures = measure_names(columns, ordered_names(spans))
        if len(measures) >= 2 or len(measures := marker_columns(question, columns) or measures) >= 2:
            return derive_plan(question, per_pair(question, spans, measures), zh, str(p.dataset.get("name") or ""))
    if rate := per_unit_plan(question, columns, spans, name, zh, add_column, ranked_by):
        return rate  # a rate per unit of another number, as a data step, then answered (data_tasks)
    if design := repeated_design(question, {**p.dataset, "columns": columns}, ordered_names(spans)):
        return repeated_plan(design, zh)
    return None


def _design_plan(p: Planning) -> Plan | None:
    """Two measurements on each row (wide_pairs): tested row by row, or, when the question compares
    groups, their change compared between the groups."""
    question, columns, spans, zh = p.question, p.columns, p.spans, p.zh
    # a grouping counts when its values are named or groups are set against each other: "after the
    # treatment" on a table with a Treatment column names the event, not the groups
    grouped = p.implied or next(
        (
            str(c["name"])
            for c in columns
            if groups_rows(c) and c["name"] in p.named and GROUPS_COMPARED.search(question)
        ),
        None,
    )
    if not grouped and (wide := wide_pair(question, columns, spans)):
        return wide_pair_plan(wide, zh)
    if grouped and (wide := marked_change(question, columns, spans)):
        # "did it drop more for women than for men": the change, group by group
        plan = Plan(None, grouped, [profile_step()], kind="change")
        change = change_by_group(plan, wide, str(p.dataset.get("name")), zh)
        plan.metric, plan.values = change, p.values if grouped == p.implied else []
        add_compare_steps(plan, [*columns, {"name": change, "type": "number"}], change, grouped, plan.values, zh)
        return plan
    return None


def _analysis_plan(p: Planning) -> Plan:
    """The number and the grouping, a grouping made for the question, then the analyses its kind asks
    for, or the standard ones."""
    plan, outcome, dimension = _roles_plan(p)
    dimension = _regrouped(plan, p, dimension)
    if not (p.asks.forecast or asks_trend(p.question)):
        plan.filters = time_filter(p.question, p.columns)
    if not _kind_plan(plan, p, outcome, dimension):
        _standard_steps(plan, p, dimension)
    return plan


def _roles_plan(p: Planning) -> tuple[Plan, str | None, str | None]:
    """The plan's number and grouping, with a yes/no outcome's rate when the question asks for one
    (the outcome is returned too) and a count table's weights; and the grouping chosen."""
    question, columns, named, spans, roles, chosen = p.question, p.columns, p.named, p.spans, p.roles, p.chosen
    # The metric the question asks about ("what drives revenue") beats the longest column it names.
    rate = None if chosen or roles.target else rate_outcome(question, columns, named, spans)
    rate = None if rate and rate.column in p.kept else rate  # "…的比例，只看会员卡为是的": 会员卡 filters
    if rate is None and not (chosen or roles.target):
        rate = _value_event(p)  # "what share of jobs were graded 2": one value of a many-valued column
    if chosen and any(c["name"] == chosen and c["type"] == "boolean" for c in columns):
        rate, chosen = (
            Outcome(chosen),
            None,
        )  # the user's yes/no column ("the allergy rate", "damaged more often"): its rate
    pair = count_pair(columns) if not (rate or chosen or roles.target) and RATE.search(question) else None
    outcome = rate.column if rate else pair[0] if pair else None
    if rate and rate.success:  # its value names the outcome, not a group
        p.implied, p.values = named_values(question, [c for c in columns if c["name"] != outcome], spans)
    measures = measure_names(columns, named)
    ranked = (
        (superlative_measure(question, spans, measures) or counted_measure(question, spans, measures))
        if len(named) > 1
        else None
    )
    metric = chosen or roles.target or outcome or ranked or choose_metric(columns, named, question)
    dimension = choose_dimension(columns, p.grouping, p.implied, metric)
    plan = Plan(metric, dimension, [profile_step()])
    plan.values = p.values if dimension == p.implied else []
    plan.weights, plan.success = count_weights(columns, int(p.dataset.get("rows") or 0)), rate.success if rate else None
    plan.failures = pair[1] if pair else None
    return plan, outcome, dimension


def _regrouped(plan: Plan, p: Planning, dimension: str | None) -> str | None:
    """The grouping a prep step makes for the question (a new two-level column, added to p.columns):
    one named group against all the others, the weekend days against the weekdays; the grouping
    to compare by."""
    question, columns, metric, dataset, zh = p.question, p.columns, plan.metric, str(p.dataset.get("name")), p.zh
    levels = next((c.get("levels") or 0 for c in columns if c["name"] == dimension), 0)
    if dimension and len(plan.values) == 1 and asks_versus_rest(question, plan.values[0]) and levels > 2:
        dimension = versus_rest(plan, dimension, dataset, zh)  # one group against the others
    elif made := made_weekend_column(question, columns, metric):  # a version made for an earlier weekend question
        plan.whole, dimension = made
        plan.dimension, plan.values = dimension, []
        return dimension
    elif days := weekend_grouping(question, columns, dimension, metric):  # the weekend days against the weekdays
        dimension = weekend_versus_weekdays(plan, days, dataset, zh)
    elif date := weekend_dates(question, columns, metric, p.dataset.get("grain")):
        dimension = weekend_by_date(plan, date, dataset, zh)
    else:
        return dimension
    p.columns = [*columns, {"name": dimension, "type": "category", "levels": 2}]
    return dimension


def _shared_measure(p: Planning) -> str | None:
    """The additive number a share question is a share of: the first the question names, else the one whose
    metric family's word it uses ("share of revenue" for 销售额（元）); None when it names none (a share of
    the rows) or the number does not add up (a share of a price or a score means nothing)."""
    measures = [m for m in measure_names(p.columns, p.named) if m not in p.kept]
    if not measures:
        numbers = [c["name"] for c in p.columns if c.get("type") in NUMERIC and not (c.get("binary") or c.get("pii"))]
        measures = [n for n in numbers if same_family(p.question, n)]
        if len(measures) != 1:
            return None
    return measures[0] if additive(measures[0], p.columns) else None


def _value_event(p: Planning) -> Outcome | None:
    """One value of a column with more than two values as the event of a rate or share question ("what
    share of orders were Class 2", "各门店等级为2的订单占多少比例"): the rows with that value against the rest,
    overall or per group. Only where the question names exactly one value of that column and names no
    measure (a share of a measure is each group's part of it: totals.share_steps)."""
    if not (asks_rate(p.question) or asks_share(p.question)) or len(p.values) != 1 or not p.implied:
        return None
    column = next((c for c in p.columns if c["name"] == p.implied), None)
    if column is None or int(column.get("levels") or 0) <= 2 or measure_names(p.columns, p.named):
        return None
    event = Outcome(str(column["name"]), str(p.values[0]))
    # its value names the event, not a group: the groups are another column's, if the question names one
    p.implied, p.values = named_values(p.question, [c for c in p.columns if c["name"] != event.column], p.spans)
    return event


def _kind_plan(plan: Plan, p: Planning, outcome: str | None, dimension: str | None) -> bool:
    """The steps of a question kind with its own analysis: a yes/no outcome's rate, how two numbers
    move together, a paired design, top/bottom N, a peak, a season, shares, totals. False when none
    applies."""
    question, columns, zh = p.question, p.columns, p.zh
    if outcome and p.goal is None and asks_share(question) and (measure := _shared_measure(p)):
        # "what share of revenue comes from members", "会员的销售额占多少比例": the yes/no column owns parts of an
        # additive number, its yes rows' total against the whole (and the rest), not the rate of its rows nor
        # the measure's average compared between its two groups
        plan.metric = measure
        share_steps(plan, question, columns, p.grouping, outcome, zh)
        return True
    group_named = dimension in (*p.grouping, p.implied) or plan.whole is not None
    if outcome and not group_named and not plan.weights and (by := measure_names(columns, p.named)):
        # "did older passengers have a lower chance of survival": the measurement compared between the outcomes
        plan.kind, plan.metric, plan.dimension = "proportion", by[0], outcome
        add_compare_steps(plan, columns, by[0], outcome, [], zh)
        return True
    if outcome and not group_named and not (wants(question, "compare") or EACH.search(question)):
        # "what share would buy again": the overall rate, not split by a group nobody named; "how often did each
        # part of the market run out": per group, the grouping its words name settled like any other (open_role)
        plan.dimension = None
    if outcome:
        rate_steps(plan, outcome, columns, zh)
        return True
    if (
        not p.chosen
        and not p.asks.forecast
        and relation_steps(plan, question, columns, p.spans, p.implied, p.roles, zh, p.asks.regression)
    ):
        return True
    return bool(plan.metric) and _special_steps(plan, p)


def _special_steps(plan: Plan, p: Planning) -> bool:
    """The question kinds a number has its own analysis for (app.understanding.kinds): a paired design,
    top/bottom N, when it peaked, its season, each group's share, totals per group."""
    question, columns, named, zh = p.question, p.columns, p.grouping, p.zh
    rows = int(p.dataset.get("rows") or 0)
    if paired_steps(plan, question, columns, named, rows, zh):
        return True
    if p.goal is None and passing_steps(plan, question, columns, p.named, zh):
        return True  # "销售额超过5000的门店有哪些": the rows past the cut, and which stores they hold
    # a chip's kind overrides the question's own (its N too): "top 3" on "the top 2 stores" ranks three,
    # "share" on a total plans the shares; a question's own kind words are read only when no chip chose
    plan.goal = p.goal
    chose = p.goal[0] if p.goal else None
    top = asks_top(question, plan.metric) if chose in (None, "top") else None
    if chose == "top" and p.goal:
        top = (p.goal[1] or (top[0] if top else 3), bool(top and top[1]))
    date, dimension = date_column(columns), plan.dimension
    grouped = bool(dimension and dimension in named)
    dataset = str(p.dataset.get("name"))
    if top and date and not grouped and top_period_steps(plan, question, date, dataset, columns, top, zh):
        return True  # "订单最多的三个月": the calendar months' totals, the top three
    if top and top_steps(plan, question, columns, named, top, zh, rows, p.spans):
        return True
    if chose not in (None, "share", "total"):
        return False  # a comparison or a trend: the standard analyses
    if (
        chose is None
        and date
        and not grouped
        and period_steps(plan, question, date, str(p.dataset.get("name")), columns, p.dataset.get("grain"), zh)
    ):
        return True  # "哪个月的营业额最高": the calendar months' totals, ranked
    if (
        chose is None
        and date
        and period_total_steps(  # "每个月卖了多少钱": each month's total, in time order
            plan,
            question,
            date,
            str(p.dataset.get("name")),
            columns,
            zh,
            dimension if grouped else None,
            counted_per_period(question, plan.metric, p.chosen, p.named),
            p.dataset.get("grain"),
        )
    ):
        return True
    if chose is None and date and when_steps(plan, question, date, named, top, zh):
        return True
    if chose is None and date and SEASON.search(question) and not grouped:
        season_steps(
            plan, date, zh, columns, str(p.dataset.get("name") or "")
        )  # "每年哪个月最多": the month of the year, from the seasonal pattern
        return True
    if dimension and chose in (None, "share") and asks_share(question):
        # no measure named ("各渠道占订单的比例"): each group's share of the rows, not of a default number
        # (a word of the measure's family names it too: "what share of total sales" is 销售额's share)
        counted = not (p.chosen or plan.metric in p.named or (plan.metric and same_family(question, plan.metric)))
        share_steps(plan, question, columns, named, dimension, zh, counted)
        return True
    return total_steps(plan, question, columns, p.spans, p.dated, zh)


def _standard_steps(plan: Plan, p: Planning, dimension: str | None) -> None:
    """Describe the number; its trend (and forecast) over time; its comparison across the groups when
    the question compares or names the grouping; its correlation with the other numbers and, when the
    question asks for drivers, a regression. Without a number: the grouping's breakdown."""
    metric, zh = plan.metric, p.zh
    if metric is None:
        plan.notes.append("没有数值列，只能做描述。" if zh else "No numeric column: only a description is possible.")
        if dimension:
            plan.steps.append(
                Step("value_counts", {"column": dimension}, _t(zh, f"{dimension} breakdown", f"{dimension}分布"))
            )
            plan.steps.append(Step("plot_bar", {"x_column": dimension}, evidence=False))
        return
    plan.steps.append(Step("describe_columns", {"columns": [metric]}, _t(zh, f"Describe {metric}", f"描述{metric}")))
    plan.steps.append(Step("plot_histogram", {"value_column": metric}, evidence=False))
    over_time = add_time_steps(plan, p.question, p.asks.forecast, p.dataset.get("grain"), p.columns, metric, zh)
    specific = wants(p.question, "correlate") or p.asks.regression or over_time
    # a grouping the question names is compared ("does tension affect breaks"), unless it asks for drivers
    named_group = dimension in p.grouping and not p.asks.regression and not over_time
    if dimension and (wants(p.question, "compare") or not specific or plan.whole or named_group):
        add_compare_steps(plan, p.columns, metric, dimension, p.values if dimension == p.implied else [], zh)
        if averaged_by_default(p.question, p.columns, p.spans, metric):  # the averages were not asked for
            plan.kind_default = "total"
    _relation_of_numbers(plan, p, metric)


def _relation_of_numbers(plan: Plan, p: Planning, metric: str) -> None:
    """The metric's correlation with the predictors the question names (else the numbers it names,
    else the other numbers), and a regression on them when it asks for drivers."""
    zh, roles = p.zh, p.roles
    numeric = other_numeric(p.columns, metric, 50)
    chosen_predictors = [n for n in roles.predictors if roles.target == metric]
    others = (
        [n for n in chosen_predictors if n in numeric]
        or [n for n in p.named if n != metric and n in numeric]
        or other_numeric(p.columns, metric)
    )
    if others:
        named = [n for n in others if n in chosen_predictors or n in p.named]
        if named:  # the numbers the question names are said by name ("营业额与广告费用的关系"), not as "other numbers"
            subject = _t(zh, f"Relationship of {metric} with {', '.join(named)}", f"{metric}与{'、'.join(named)}的关系")
        else:
            subject = _t(zh, f"Relationship of {metric} with other numbers", f"{metric}与其他数值的关系")
        plan.steps.append(Step("correlation_analysis", {"columns": [metric, *others]}, subject))
        plan.steps.append(Step("plot_scatter", {"x_column": others[0], "y_column": metric}, evidence=False))
    features = chosen_predictors or others  # the predictors the question names, else the other numbers
    if p.asks.regression and len(features) < 2 and WHICH.search(p.question):
        # "which matters more, A or B": one factor cannot be ranked, so the other numbers stand beside it
        features = [*features, *(n for n in other_numeric(p.columns, metric) if n not in features)]
    if features and p.asks.regression:
        subject = _t(zh, f"What explains {metric}", f"哪些因素解释{metric}")
        plan.steps.append(
            Step("linear_regression", {"target_column": metric, "feature_columns": features[:5]}, subject)
        )
