"""Plans for data tasks (issue 14): remove duplicates, keep only some rows, add a column — each done
as a data operation that makes a new version — and the change between two times of the same
subjects (a paired test, repeated_design). Pure functions over the question and the column summaries."""

from __future__ import annotations

import itertools
import re
from functools import cache

import pandas as pd

from app.analyst.question_words import asks_each_group, asks_for_groups
from app.analyst.scope import cut_column, cut_subject, value_condition
from app.analyst.steps import Arguments, Column, Condition, Plan, Spans, Step
from app.analyst.vocabulary import period_units
from app.understanding import vocabulary as shared_vocabulary
from app.understanding.bilingual import dictionary_senses, is_classifier, names_a_quantity, strength
from app.understanding.column_forms import money_column, money_unit
from app.understanding.everyday_words import MONEY_PIECES, MONEY_WORDS
from app.understanding.general_words import counts_rows, is_row_word
from app.understanding.kinds import (
    DIFFERENCE,
    EACH,
    HOW_MANY,
    MEAN_WORDS,
    NEGATION,
    PER_UNIT,
    RATE,
    TIME_UNITS,
    YEAR,
    asks_extreme,
    asks_share,
    asks_top,
    number_cut,
    unit_seconds,
)
from app.understanding.language import local_text as _t
from app.understanding.named_months import named_months, recent_stretch
from app.understanding.outcome import measure_names
from app.understanding.profile_reading import NUMERIC, count_weights, is_level
from app.understanding.repeated_design import Repeated
from app.understanding.role_sources import same_family
from app.understanding.roles import UNITS, groups_rows, named_values
from app.understanding.text import english_stop_words, is_cjk, lemma, split_unit, tagged_words, word_spans


def ordered_names(spans: Spans) -> list[str]:
    return list(dict.fromkeys(name for _, _, name in spans))


ROW_NUMBER = re.compile(r"^(?:rownames|row ?names?|row|index|unnamed.*|#|no\.?|序号|行号)$", re.I)


def dedupe_plan(columns: list[Column], zh: bool) -> Plan:
    """A data task: remove duplicate rows, kept as a new version of the dataset. A row-number column
    (R's rownames, a spreadsheet's index) makes every row unique, so it is left out of the comparison."""
    subject = _t(zh, "Remove duplicate rows", "删除重复行")
    arguments: Arguments = {"trim_whitespace": False, "drop_duplicates": True}
    numbering = [c["name"] for c in columns if ROW_NUMBER.match(c["name"].strip())]
    if numbering:
        arguments["ignore_columns"] = numbering
    return Plan(None, None, [Step("clean_data", arguments, subject)], kind="dedupe")


def missing_plan(columns: list[Column], named: list[str], zh: bool) -> Plan:
    """A data task: remove the rows with no value in the columns the question names, else in any column
    the data has gaps in (all of them when the summary does not say), kept as a new version."""
    known = [c for c in columns if not c.get("pii")]
    chosen = named or [c["name"] for c in known if c.get("missing")] or [c["name"] for c in known]
    listed = ", ".join(chosen[:4]) + ("…" if len(chosen) > 4 else "")
    subject = _t(zh, f"Remove the rows with {listed} missing", f"删除 {listed} 为空的行")
    arguments = {"trim_whitespace": False, "drop_duplicates": False, "drop_missing_in": chosen}
    return Plan(None, None, [Step("clean_data", arguments, subject)], kind="drop_missing")


def filter_conditions(question: str, columns: list[Column], spans: Spans) -> list[Condition]:
    """filter_rows conditions a "keep only …" request names: category values ("线上" → Channel ==
    Online) and a cut on a named number ("1克拉以上" → carat > 1)."""
    conditions: list[Condition] = []
    column, values = named_values(question, columns, spans)
    if column:
        conditions.append(
            {"column": column, "op": "==", "value": values[0]}
            if len(values) == 1
            else {"column": column, "op": "in", "value": values}
        )
    cut = number_cut(question)
    kinds = {c["name"]: c for c in columns}  # any named number, codes too ("6 cylinders or fewer")
    measures = measure_names(columns, ordered_names(spans)) or [
        n for n in ordered_names(spans) if kinds.get(n, {}).get("type") in NUMERIC
    ]
    if cut and measures:
        value = int(cut[1]) if cut[1].is_integer() else cut[1]
        conditions.append({"column": measures[0], "op": cut[0], "value": value})
    return conditions


def per_pair(question: str, spans: Spans, measures: list[str]) -> list[str]:
    """[numerator, denominator]: the number named right after "per"/"每" divides the other."""
    each = EACH.search(question)
    if each:
        after = [name for start, _, name in spans if start >= each.start() and name in measures]
        if after:
            return [next(n for n in measures if n != after[0]), after[0]]
    return measures[:2]


def derive_plan(question: str, pair: list[str], zh: bool, dataset: str = "") -> Plan:
    """A data task: a new column from two named numbers — their difference when the question says
    so, else the first per the second ("revenue per unit sold" → Revenue / Units) — in a new version of
    the dataset (`output` is its own name: the table the user asked to change, not a second table)."""
    kind = "difference" if DIFFERENCE.search(question) else "ratio"
    a, b = pair
    name = f"{a} - {b}" if kind == "difference" else f"{a} per {b}"
    subject = _t(zh, f"Add the column {name}", f"新增列 {name}")
    arguments: Arguments = {"new_column_name": name, "kind": kind, "columns": [a, b]}
    if dataset:
        arguments["output"] = dataset
    return Plan(None, None, [Step("derive_column", arguments, subject)], kind="derive")


def repeated_plan(design: Repeated, zh: bool) -> Plan:
    """The change between two times on the same subjects (long format): a paired test, later minus earlier."""
    value, time = design.value, design.time
    subject = _t(
        zh,
        f"Change in {value} from {time} {design.earlier} to {time} {design.later}, subject by subject",
        f"同一{design.subject}从{time} {design.earlier}到{time} {design.later}的{value}变化",
    )
    arguments = {
        "value_column": value,
        "group_column": time,
        "id_column": design.subject,
        "groups": [design.later, design.earlier],
        "method": "t",
    }
    return Plan(
        value,
        time,
        [Step("profile_dataset", {}, evidence=False), Step("paired_test", arguments, subject)],
        kind="paired",
    )


def filter_plan(conditions: list[Condition], zh: bool) -> Plan:
    described = ", ".join(f"{c['column']} {c['op']} {c['value']}" for c in conditions)
    subject = _t(zh, f"Keep only rows with {described}", f"只保留 {described} 的行")
    return Plan(None, None, [Step("filter_rows", {"conditions": conditions}, subject)], kind="filter")


# --- derived quantities: a new column made for the question, then answered (issue 24) -------------
_DAY_UNITS = tuple(k for k, period in UNITS.items() if period == "D")  # day, 天, 日 (roles.toml periods)
_DAYS = re.compile("|".join(rf"\b{re.escape(u)}s?\b" if u.isascii() else re.escape(u) for u in _DAY_UNITS), re.I)
# "from order to delivery", "从下单到送达": the first named date is the start
_FROM_TO = re.compile(r"\bfrom\b.+\bto\b|从.+(?:到|至)", re.I)


# a grouping said with a preposition or a Chinese distributive: "by region", "按地区", "各地区"
_BY_GROUP = re.compile(r"\b(?:by|per|for\s+each|across)\b|按|各", re.I)


def date_gap_plan(question: str, columns: list[Column], named: list[str], dataset: str, zh: bool) -> Plan | None:
    """Days between two dates, as a new column of the dataset (a new version, like an "add a column"
    task), then its average, median and longest (describe_columns) — per group when the question names a
    grouping. Asked with a word for days; the two dates are the date columns the question names by the
    words that tell them apart ("order" ↔ Order Date, "下单" ↔ 下单日期), else the only two the data has
    when the question names no other column ("how many days had sales over 100" counts days instead).
    The later date minus the earlier: the one named first (or first in the sheet) is the start."""
    if not _DAYS.search(question):
        return None
    dates = [str(c["name"]) for c in columns if c.get("type") == "datetime" and not c.get("pii")]
    pair = _date_pair(question, dates, only_dates=not set(named) - set(dates))
    if pair is None:
        return None
    name, derive = _days_step(pair, dataset, zh)
    plan = Plan(name, None, [Step("profile_dataset", {}, evidence=False)], kind="date_gap")
    plan.derived = dataset
    plan.steps.append(derive)
    group = next((c for n in named for c in columns if c["name"] == n and c["name"] not in pair and _groups(c)), None)
    if group and (_BY_GROUP.search(question) or asks_for_groups(question, columns)):
        # "average days from order to delivery by region": each group's mean, highest first. A named column the
        # question does not group by is what the rows are ("how many days before the wedding do couples …")
        plan.dimension = str(group["name"])
        ranked: Arguments = {
            "value_column": name,
            "group_column": plan.dimension,
            "agg": "mean",
            "top": int(group.get("levels") or _MAX_GAP_GROUPS),
            "order": "largest",
        }
        plan.steps.append(
            Step("rank_values", ranked, _t(zh, f"Average {name} by {group['name']}", f"各{group['name']}的平均{name}"))
        )
    describe = _t(zh, f"Average, median and longest {name}", f"{name}的平均值、中位数和最大值")
    plan.steps.append(Step("describe_columns", {"columns": [name]}, describe))
    return plan


_MAX_GAP_GROUPS = 30  # the most groups the days between two dates are averaged over


def _date_pair(question: str, dates: list[str], only_dates: bool) -> tuple[str, str] | None:
    """The two date columns whose gap the question is about, start first: the two it names by the words
    that tell them apart (_named_dates), else the only two the data has when the question names one of them
    ("how many days before the wedding do couples get in touch": Wedding Date, and Enquiry Date the other end)
    or no other column (`only_dates`; "how many days had sales over 100" counts days instead)."""
    found = _named_dates(question, dates)
    pair = found if len(found) == 2 else dates if len(dates) == 2 and (only_dates or len(found) == 1) else []
    return (pair[0], pair[1]) if len(pair) == 2 else None


def _days_step(pair: tuple[str, str], dataset: str, zh: bool) -> tuple[str, Step]:
    """The column of the days from the start to the end of each row (the later date minus the earlier),
    named in the sheet's language, and the prep step that adds it to the dataset (a new version). Asked
    again, the same column is made again, not refused (overwrite)."""
    start, end = pair
    chinese_headers = any(is_cjk(ch) for ch in start + end)
    name = f"从{start}到{end}的天数" if chinese_headers else f"Days from {start} to {end}"
    subject = _t(zh, f"Add the days from {start} to {end}", f"新增列：从{start}到{end}的天数")
    derive: Arguments = {
        "new_column_name": name,
        "expression": f"`{end}` - `{start}`",
        "output": dataset,
        "overwrite": True,
    }
    return name, Step("derive_column", derive, subject, evidence=False, prep=True)


def _groups(column: Column) -> bool:
    """Whether a named column can group the days between two dates: a category of a few values."""
    return groups_rows(column) and 2 <= int(column.get("levels") or 0) <= _MAX_GAP_GROUPS and not column.get("pii")


def _named_dates(question: str, dates: list[str]) -> list[str]:
    """The date columns the question names by the words that tell them apart, in the question's order (one
    or two; none where it names more without a from … to). What all the date columns' names share ("Date", "日期") says what kind of column they are, not which."""
    if len(dates) < 2:
        return []
    folded = question.lower()
    if span := _FROM_TO.search(question):  # "delivery … from order to delivery": the dates after "from"
        folded = folded[span.start() :]
    found: list[tuple[int, str]] = []
    glossed = _glossed_dates(folded, dates)
    for name in dates:
        at = min((folded.find(w) for w in _own_words(name, dates) if w in folded), default=-1)
        if at < 0:
            at = glossed.get(name, -1)
        if at >= 0:
            found.append((at, name))
    if _FROM_TO.search(question) or len(found) <= 2:
        return [name for _, name in sorted(found)]
    return []


def _glossed_dates(text: str, dates: list[str]) -> dict[str, int]:
    """Where the text names each date column in the other language, by the dictionary ("开了发票以后 … 付钱"
    of Invoiced and Paid On: 发票 "invoice", 付钱 "to pay money"): the first word whose gloss the name holds
    whole (bilingual.strength 1), and holds for no other date column — a word glossed by two tells neither."""
    if not any(is_cjk(c) for c in text + "".join(dates)):
        return {}  # one language on both sides: the names' own words say it, and the dictionary stays unread
    found: dict[str, int] = {}
    for start, end in word_spans(text):
        if end - start < 2 or not text[start:end].strip():
            continue
        tied = [name for name in dates if strength(text[start:end], name) >= 1.0]
        if len(tied) == 1:
            found.setdefault(tied[0], start)
    return found


def _own_words(name: str, names: list[str]) -> list[str]:
    """The words of a column name the other names do not share: English words of 3 letters or more
    (their stem: "deliver" for "delivery"/"delivered"), Chinese runs without the characters every name has."""
    others = [n.lower() for n in names if n != name]
    lower = name.lower()
    if lower.isascii():
        shared = set(re.findall(r"[a-z]+", " ".join(others)))
        return [w[:-1] if len(w) > 5 else w for w in re.findall(r"[a-z]{3,}", lower) if w not in shared]
    common = set.intersection(*(set(n) for n in [lower, *others]))
    runs = re.findall("[^" + re.escape("".join(common)) + r"\s()（）]+", lower) if common else [lower]
    return [r for r in runs if len(r) >= 2]


# "per 100 km", "每百公里": the scale a rate is given per (numerals in words are the number system's own)
_SCALE_WORDS = {"hundred": 100, "thousand": 1000, "百": 100, "千": 1000, "万": 10000}
_PER_SCALE = re.compile(r"\s*(\d+(?:\.\d+)?|hundred|thousand|百|千|万)?\s*", re.I)


def per_unit_plan(
    question: str,
    columns: list[Column],
    spans: Spans,
    dataset: str,
    zh: bool,
    add_column: bool = False,
    ranked_by: str | None = None,
    counts_only: bool = False,
) -> Plan | None:
    """A rate per unit of another number ("fuel per 100 km by depot", "每公里成本"): the number named right
    after "per"/"每" (by its name, or by the unit in its brackets: km ↔ Distance (km)) divides another
    named number; the first must be a quantity with its unit in brackets. With a grouping named, the standard rate of a group: its total of the one over its
    total of the other (group_aggregate of both, then the ratio as a column of that summary); without
    one, the rate row by row, averaged (a new column of the dataset, then its description). The groups'
    rates are read back ranked (rank_values, which makes no table). "Km per hour" of a column in minutes
    converts the units (× 60). With `add_column` ("add a column with each delivery's speed in km per
    hour") the rate is only added, row by row, as the data task asks. Per a count of things (销量, Units:
    "每件卖多少钱", "revenue per unit sold") the rate is a price: the totals' ratio, of each group or of the whole
    table; `counts_only` plans only those (asked before a count of rows: "每件卖多少钱" asks no "how many").
    `ranked_by`: the grouping the
    planner would rank by when the question asks which group is highest or lowest and names none ("which
    two kinds of service bring in the most money per hour": its groups' rates, not one average)."""
    # measurements only: "each chick" names a code (an id), not a unit of anything
    numbers = set(measure_names(columns, [str(c["name"]) for c in columns if not c.get("pii")]))
    days_step: Step | None = None  # the column of each row's days, when the rate is per day of a span of dates
    # what a rate is per is a quantity measured in a unit ("Distance (km)", "里程（公里）"), not what the
    # rows count ("each chick", "per customer": the average of the rows, kinds.PER_UNIT)
    measured = {name for name in numbers if split_unit(name)[1] or _counted_in_time(name)}
    # or a count of things (销量, Units, 件数): "每件多少钱", "revenue per unit sold" divide by it (ratio of totals)
    counts = _count_columns(columns, numbers)
    for each in EACH.finditer(question):  # "each delivery's speed in km per hour": the "per" a unit follows
        scale_match = _PER_SCALE.match(question, each.end())
        after = scale_match.end() if scale_match else each.end()
        unit = next((name for start, _, name in spans if after <= start <= after + 1 and name in numbers), None)
        unit = unit or _named_by_unit(question[after:], columns) or _word_names(question[after:], counts)
        unit = unit if unit in measured or unit in counts else None
        scale_word, per_time = (scale_match.group(1) or "").lower() if scale_match else "", ""
        scale = _SCALE_WORDS.get(scale_word) or (float(scale_word) if scale_word else 1.0)
        before = re.findall(r"\w+", question[: each.start()])
        # the number named right before "per" ("revenue per order"), by its unit or by a word for it
        by_unit = (_named_by_unit(before[-1], columns) or _word_names(before[-1], numbers)) if before else None
        by_unit = by_unit if by_unit in numbers else None
        said = frozenset(name for _, _, name in spans)
        timed = _time_column(question[after:], columns, said) if unit is None else None
        named_over = [name for _, _, name in spans if name in numbers and not (timed and name == timed[0])]
        money = _money_asked(question, columns)
        if timed and timed[0] in numbers and (by_unit or named_over or money):
            # "km per hour" of a column in minutes: × 60 (a unit over a unit of time); "money per hour
            # worked" of 时长（小时）: the unit of time in the other language
            unit, factor = timed
            scale, per_time = scale * factor, question[after:].split()[0].strip(".,?!，。？")
        if (
            unit is None
            and timed is None
            and named_over
            and (days := _days_of_span(question, after, columns, dataset, zh))
        ):
            # "the fee per day" of rows that each run from one date to another (a hire, a stay): the days of
            # each row's span, a column made first, are what the rate is per — not each calendar day's total
            days_step, (unit, per_time) = days[1], (days[0], days[2])
        if unit is None and timed is None and not days_step:
            unit = _counted_by_classifier(question, each, spans, counts)  # "每件": the table's one count
        over = _divided(
            unit, [name for _, _, name in spans if name in numbers], columns, numbers, counts, by_unit, money
        )
        if unit is not None and over:
            break
    else:
        return None
    scale = int(scale) if float(scale).is_integer() else scale
    if not unit or not over:
        return None
    top, bottom = over[0], unit
    kinds = {str(c["name"]): c for c in columns}
    group = next((name for _, _, name in spans if kinds.get(name, {}).get("type") not in NUMERIC), None)
    # a grouping no word named stands in where the question asks which group is highest, or for each group
    # ("for each vet" where no column is named vet): the planner's default, shown as an assumed reading
    # — an each-word other than the rate's own per ("每件", "per unit" say what the rate is per, not groups)
    rest = question[: each.start()] + " " + question[each.end() :]
    asks_groups = asks_extreme(question) or asks_top(question) or asks_each_group(rest, columns)
    group = group or (ranked_by if asks_groups else None)
    per = f"{scale} " if scale != 1 else ""
    name = f"{top} per {per_time}" if per_time else f"{top} per {per}{bottom}"  # "Distance (km) per hour"
    if days_step:  # named in the sheet's language, whichever the question was asked in
        name = f"每天{top}" if is_cjk(top[0]) else f"{top} per day"  # "每天租金（元）", "Fee per day"
    elif is_cjk(top[0]) and not per_time and scale == 1:
        name = f"{top} ÷ {bottom}"  # "金额（元） ÷ 时长（小时）": a Chinese sheet's rate without an English "per"
    totals_only = bottom in counts and not per_time and scale == 1  # a price per thing counted: totals over totals
    if counts_only and not totals_only:
        return None
    if totals_only:
        name = f"{top} ÷ {bottom}"  # "销售额 ÷ 销量": what was divided, in either language
    multiply = f" * {scale}" if scale != 1 else ""
    made = [days_step] if days_step else []  # the days of each row's span come first: the rate divides by them
    plan = Plan(top, group, [Step("profile_dataset", {}, evidence=False), *made], kind="per_unit")
    if add_column:
        expression = f"`{top}` / `{bottom}`{multiply}"
        arguments: Arguments = {"new_column_name": name, "expression": expression, "output": dataset}
        return Plan(
            None,
            None,
            [*made, Step("derive_column", arguments, _t(zh, f"Add the column {name}", f"新增列 {name}"))],
            kind="derive",
        )
    if group is None and not totals_only:  # no grouping: each row's rate, then their average
        plan.derived = dataset
        derive = {"new_column_name": name, "expression": f"`{top}` / `{bottom}`{multiply}", "output": dataset}
        subject = _t(zh, f"Add {name}, row by row", f"逐行新增列 {name}")
        plan.steps.append(Step("derive_column", {**derive, "overwrite": True}, subject, evidence=False, prep=True))
        describe = _t(zh, f"Average {name}", f"{name}的平均值")
        plan.steps.append(Step("describe_columns", {"columns": [name]}, describe))
        return plan
    summary = f"{dataset}_summary"  # the name group_aggregate's side table is stored under (analysis_tools.tables)
    # no grouping (a price per thing counted): the whole table's totals, one row ("每件卖多少钱": 销售额 ÷ 销量)
    totals = {
        "dataset": dataset,
        "group_columns": [group] if group else [],
        "value_columns": [top, bottom],
        "agg": "sum",
    }
    plan.steps.append(
        Step("group_aggregate", totals, "", evidence=False, prep=True)  # no task: the rate below answers
    )
    ratio = {
        "dataset": summary,
        "new_column_name": name,
        "expression": f"`{top}_sum` / `{bottom}_sum`{multiply}",
        "output": summary,
        "overwrite": True,
    }
    subject = _t(zh, f"{name}: total {top} over total {bottom}", f"{name}：{top}合计除以{bottom}合计")
    plan.steps.append(Step("derive_column", ratio, subject, evidence=False, prep=True))
    plan.derived = summary
    if group is None:  # the one rate of the whole table: its totals' ratio, read back
        whole = _t(zh, f"{name}: total {top} over total {bottom}", f"{name}：{top}合计除以{bottom}合计")
        plan.steps.append(Step("describe_columns", {"dataset": summary, "columns": [name]}, whole))
        return plan
    rates = {"dataset": summary, "value_column": name, "group_column": group, "agg": "sum", "top": 100}
    plan.steps.append(Step("rank_values", rates, _t(zh, f"{name} by {group}", f"各{group}的{name}")))
    return plan


def _divided(
    unit: str | None,
    named: list[str],
    columns: list[Column],
    numbers: set[str],
    counts: set[str],
    by_unit: str | None,
    money: str | None,
) -> list[str]:
    """What a rate per `unit` divides: the numbers the question names (`named`), else for a count of things
    what else the rows add up ("每件卖多少钱"), else the number whose unit or word is named before "per" ("km
    per hour"), else the money asked of ("how much do we earn per minute": the table's one column in money)."""
    over = [name for name in named if name != unit]
    if not over and unit in counts:
        over = _other_total(columns, numbers, counts, unit)
    for fallback in (by_unit, money if unit is not None else None):
        if not over and fallback and fallback != unit:
            over = [fallback]
    return over


def _count_columns(columns: list[Column], numbers: set[str]) -> set[str]:
    """The numbers that count things (销量, Units, Quantity, 件数): whole numbers, never below 0, not a level
    (a price, a rating), not in money, whose name says it is a quantity or a count (bilingual.names_a_quantity)."""
    return {
        str(c["name"])
        for c in columns
        if c["name"] in numbers
        and c.get("type") == "integer"
        and (c.get("minimum") or 0) >= 0
        and not c.get("binary")
        and not money_unit(str(c["name"]))
        and not is_level(str(c["name"]), columns)
        and names_a_quantity(str(c["name"]))
    }


def _counted_by_classifier(question: str, each: re.Match[str], spans: Spans, counts: set[str]) -> str | None:
    """The count a "每" + measure word asks per ("每件多少钱", "平均每瓶", "每个多少钱"): the table's one count of
    things (_count_columns), where the measure word is no period (每天, 每月), no unit of the rows (每单, 每人:
    kinds.PER_UNIT, their average), goes before no column's name (每个门店: a breakdown by 门店) nor any noun, and
    where the question does not ask about the count itself ("每种的平均销量")."""
    if len(counts) != 1 or PER_UNIT.match(question, each.start()):
        return None
    if counts & {name for _, _, name in spans}:  # "每种的平均销量": the count itself is asked about, per kind
        return None
    at = each.end() + (question[each.end() : each.end() + 1] == "一")  # 每一件
    word = question[at : at + 1]
    if not word or not is_classifier(word) or word in UNITS:
        return None
    if any(start in (at + 1, at + 2) for start, _, _ in spans):  # 每个门店, 每家的门店
        return None
    rest = question[at + 1 :]
    if TIME_UNITS.match(rest) or any(unit_seconds(rest[:k]) for k in (1, 2)):  # 每个月, 每个星期: a period
        return None
    # the measure word stands for the thing ("每件卖多少钱", "每件的售价"): no noun follows it (每家店, 每瓶酒)
    after = next(((tag, start) for _, tag, start, end in tagged_words(question) if end > at + 1), None)
    if after is None or after[1] != at + 1 or after[0].startswith("n"):
        return None
    return next(iter(counts))


def _other_total(columns: list[Column], numbers: set[str], counts: set[str], unit: str) -> list[str]:
    """What a count divides when the question names nothing else: the table's one other number the rows add
    up (not a count, a level or a code: "每件卖多少钱" of 销量 and 销售额 is 销售额); none when there are several."""
    others = [
        str(c["name"])
        for c in columns
        if c["name"] in numbers
        and c["name"] != unit
        and c["name"] not in counts
        and not is_level(str(c["name"]), columns)
    ]
    return others if len(others) == 1 else []


def _counted_in_time(name: str) -> bool:
    """Whether a column's name says it counts a unit of time without brackets ("Hours Open", "Minutes
    Played"): one of its words is a unit of time (kinds.unit_seconds), so "per hour" may divide by it."""
    return any(unit_seconds(word) for word in re.findall(r"[^\W\d_]+", name.lower()))


def _days_of_span(
    question: str, after: int, columns: list[Column], dataset: str, zh: bool
) -> tuple[str, Step, str] | None:
    """Where the rate's "per" is followed by a word for days ("per day", "每天") and each row runs between two
    dates (the table's only two, or two the question names: _date_pair), the column of each row's days (its
    name and the step that adds it) and the word for the day as the question says it. None otherwise: a
    table with one date has no span per row, and "per day" there is each calendar day."""
    word = _DAYS.match(question, after)
    dates = [str(c["name"]) for c in columns if c.get("type") == "datetime" and not c.get("pii")]
    pair = _date_pair(question, dates, only_dates=True) if word else None
    if word is None or pair is None:
        return None
    return (*_days_step(pair, dataset, zh), word.group(0))


def _time_column(text: str, columns: list[Column], named: frozenset[str] = frozenset()) -> tuple[str, float] | None:
    """The number measured in a unit of time, and the factor to the unit of time the text starts with:
    "hour …" of Delivery Time (min) → (Delivery Time (min), 60); of Hours Open, when the question names it
    (`named`), → (Hours Open, 1). Units of time as pandas reads them."""
    word = re.match(r"[a-z]+", text.strip().lower())
    wanted = _duration(word.group(0)) if word else None
    if wanted is None:
        return None
    for column in columns:
        unit = split_unit(str(column["name"]))[1] if column.get("type") in NUMERIC else None
        if unit and (measured := _duration(unit)):
            return str(column["name"]), wanted / measured
    # no unit in brackets: a column the question names whose name says its unit of time as one of its words
    # ("per hour we're open" of Hours Open; never "per day" of an unnamed Days Late)
    for column in (c for c in columns if c["name"] in named):
        name_words = re.findall(r"[a-z]+", str(column["name"]).lower()) if column.get("type") in NUMERIC else []
        units = [measured for word in name_words if len(word) > 2 and (measured := _duration(word))]
        if len(units) == 1:
            return str(column["name"]), wanted / units[0]
    return None


def _duration(unit: str) -> float | None:
    """Seconds in one `unit` of time (hour, min, sec, day …; 小时, 分钟, 天: kinds.unit_seconds, either
    language), None when it is no unit of time."""
    if seconds := unit_seconds(unit):
        return seconds
    try:
        return float(pd.Timedelta(1, unit=unit).total_seconds()) or None
    except (ValueError, TypeError):
        return None


# "how much do we earn", "how much is it": the degree question straight before a verb or a pronoun, with no
# noun of its own ("how much milk" asks an amount of milk)
_HOW_MUCH_VERB = re.compile(
    r"\bhow\s+much\s+(?:do|does|did|is|are|was|were|will|would|can|could|we|they|you|it)\b", re.I
)


def _money_asked(question: str, columns: list[Column]) -> str | None:
    """The table's one column in money (column_forms.money_column) where the question asks "how much" of no
    named thing ("How much do we earn per minute …"), or asks an amount in a word for money, next to 多少 / "how
    much" ("每小时收费多少", "多少钱"). None otherwise."""
    return money_column(columns) if _HOW_MUCH_VERB.search(question) or _money_word_asked(question) else None


def _money_word_asked(question: str) -> bool:
    """Whether the word right before or after the degree question (多少, 几, "how much") means money: a word of
    the currency concepts (everyday_words.MONEY_WORDS: 钱, money), or one CC-CEDICT glosses with one of them or
    with one of their column pieces (收费 "to charge a fee")."""
    words = [word.lower() for word, tag, _, _ in tagged_words(question) if tag != "x" and word.strip()]
    for at, word in enumerate(words):
        if word in ("多少", "几"):  # the word before (收费多少) or after (多少钱)
            near = words[max(at - 1, 0) : at + 2]
        elif word == "much" and at and words[at - 1] == "how":  # the word after ("how much money")
            near = words[at + 1 : at + 2]
        else:
            continue
        if any(_means_money(w) for w in near if w != word):
            return True
    return False


@cache
def _money_words() -> frozenset[str]:
    """The currency concepts' words and column pieces, English ones by their dictionary form (fees → fee)."""
    return frozenset({lemma(w) for w in (*MONEY_WORDS, *MONEY_PIECES) if w.isascii()} | set(MONEY_WORDS))


@cache
def _means_money(word: str) -> bool:
    money = _money_words()
    if word.lower() in money or lemma(word.lower()) in money:
        return True
    return is_cjk(word[0]) and any(money & set(sense) for sense in dictionary_senses(word))


def _word_names(text: str, names: set[str]) -> str | None:
    """The column of `names` the word the text starts with names, by the dictionary's gloss of the name in
    the other language ("order" ↔ 订单数: "per order" of a table that counts its orders in a column) or its
    metric family (gate_words: "orders" ↔ Order Count, "revenue" ↔ 营业额); None when it names none or
    several. Without a count column so named, "per order" is each row's average (kinds.PER_UNIT)."""
    word = re.match(r"[a-z]+|[\u4e00-\u9fff]+", text.strip().lower())
    if word is None or not names:
        return None
    said = word.group(0)
    found = [name for name in names if same_family(said, name) or strength(said, name) >= 1.0]
    return found[0] if len(found) == 1 else None


def _named_by_unit(text: str, columns: list[Column]) -> str | None:
    """The number whose bracketed unit the text starts with ("km …" ↔ Distance (km), "公里" ↔ 里程（公里）)."""
    head = text.strip().lower()
    for column in columns:
        if column.get("type") not in NUMERIC:
            continue
        unit = split_unit(str(column["name"]))[1]
        if (
            unit
            and head.startswith(unit)
            and (len(head) == len(unit) or not head[len(unit)].isalpha() or is_cjk(unit[0]))
        ):
            return str(column["name"])
    return _spelt_unit(head, columns)


def _spelt_unit(head: str, columns: list[Column]) -> str | None:
    """The number whose bracketed unit is a short form of the word the text starts with ("kilometre" ↔
    Distance (km), "kilograms" ↔ Weight (kg)): the unit's letters, two or more, in order in the word, the
    first letters alike — how a unit's symbol is clipped from its name. Of two so clipped (km and kg both
    from "kilogram"), the one whose letters end nearest the word's start (a symbol takes each part's first
    letter: kilo-gram). Not a unit of time (a rate per minute or hour is read by its time column); None
    where two end alike."""
    word = re.match(r"[a-z]+", head)
    if word is None or word.group(0) in _time_words() or lemma(word.group(0)) in _time_words():
        return None
    ends: dict[int, list[str]] = {}
    for column in columns:
        unit = split_unit(str(column["name"]))[1] if column.get("type") in NUMERIC else None
        if unit and len(unit) >= 2 and unit.isalpha() and unit.isascii():
            if (end := _clipped_end(unit, word.group(0))) is not None:
                ends.setdefault(end, []).append(str(column["name"]))
    nearest = ends[min(ends)] if ends else []
    return nearest[0] if len(nearest) == 1 else None


def _clipped_end(short: str, word: str) -> int | None:
    """Where the letters of `short` end in `word` taken in order, each as early as it can (None when `short`
    is not `word` clipped: as long or longer, another first letter, or a letter not found in order)."""
    if len(word) <= len(short) or word[0] != short[0]:
        return None
    at = 0
    for letter in short[1:]:
        at = word.find(letter, at + 1)
        if at < 0:
            return None
    return at


def count_plan(
    question: str,
    columns: list[Column],
    spans: Spans,
    rows: int,
    zh: bool,
    grain: str | None = None,
    grouping: list[str] | None = None,
) -> Plan | None:
    """A count of rows ("一共有多少个孩子？", "how many orders were late?", "每个地点各有几天？"): asked with "how
    many" (asks_how_many) and naming no number (a named number is added up, a rate or a share is a
    proportion, an average a mean) and no time (a number over time is a trend or a forecast) — but a
    number named only by its cut ("费用超过500元的就诊一共有多少次") says which rows are counted, and on a
    table with one row per day "how many days" counts its rows. A count table (a frequency column: each
    row stands for that many cases) is added up by its weights instead (totals).
    The rows with the yes/no column's yes ("多少人午睡" ↔ 午睡 是) — its no where the words negate it
    ("没被批准的申请有多少个") — or with a named value, are counted from that column's counts (value_counts);
    a named grouping (or the one the analyst takes for the words: `grouping`) gives each group's count;
    else the rows."""
    if cut_words := cut_subject(question, spans, columns):  # "租船时间超过3小时": 时间 says which number is cut
        spans = [span for span in spans if span not in cut_words]
        for start, end, _ in cut_words:
            question = question[:start] + " " * (end - start) + question[end:]
    if not _asks_count(question, grain) or count_weights(columns, rows):
        return None
    kinds = {str(c["name"]): c for c in columns if not c.get("pii")}
    cut = cut_column(question, columns, spans)
    named = [n for n in ordered_names(spans) if n in kinds and n != cut]
    if any(kinds[n].get("type") in NUMERIC and not kinds[n].get("binary") for n in named):
        return None  # "how many items did we sell": the number added up (totals)
    if _family_measure(question, kinds, cut):
        return None  # "how many orders did we get" on a column of orders (订单数), named by its family word: its total
    if _asks_in_a_unit(question, [c for n, c in kinds.items() if n != cut and c.get("type") in NUMERIC]):
        return None  # "一共卖出去多少箱": the number counted in boxes (销量（箱）) is added up, not the rows counted
    if any(kinds[n].get("type") == "datetime" and said_as_time(question, spans, n) for n in named):
        return None  # "how many days …": a span of time (date_gap_plan), or a count per period
    implied, values = named_values(question, columns, spans)
    yes_no = [n for n in named if kinds[n].get("type") == "boolean" or kinds[n].get("binary")]
    groups = [n for n in dict.fromkeys([*named, *(grouping or [])]) if n in kinds and groups_rows(kinds[n])]
    negated = bool(yes_no) and _negated(question, [(a, b) for a, b, n in spans if n == yes_no[0]])
    if yes_no and (by := [g for g in groups if g != yes_no[0]]):
        # "how many people left in each department": the rows with the yes (the no, negated) kept, each group's counted
        words = dict(kinds[yes_no[0]].get("words") or {})
        kept = str(words.get("false" if negated else "true") or ("False" if negated else "True"))
        plan = Plan(None, by[0], [Step("profile_dataset", {}, evidence=False)], kind="count")
        plan.filters = [{"column": yes_no[0], "op": "==", "value": kept}]
        subject = _t(zh, f"Count the rows by {by[0]}", f"按{by[0]}统计行数")
        plan.steps.append(Step("value_counts", {"column": by[0]}, subject))
        return plan
    column = yes_no[0] if yes_no else implied if values else groups[0] if groups else None
    plan = Plan(None, column, [Step("profile_dataset", {}, evidence=False)], kind="count")
    called = counted_as(question)
    at = question.lower().find(called)
    taken = [n for start, end, n in spans if at < end and start < at + len(called)]
    if called and at >= 0 and all(kinds.get(n, {}).get("type") == "identifier" for n in taken):
        # a word no column took, or the column naming each row (rentals ↔ Rental No.): the count is said in it
        plan.counted_as = called
    plan.values = list(values) if column == implied else []
    if column is None:
        plan.steps = [Step("profile_dataset", {}, _t(zh, "Count the rows", "统计行数"))]
        return plan
    if yes_no and implied and values and implied != yes_no[0]:  # "how many people left from Sales": among its rows
        plan.filters = [value_condition(implied, values, False)]
    plan.counted_no = negated  # the rows whose yes/no is no are counted (derived_answers.count_headline)
    subject = _t(zh, f"Count the rows by {column}", f"按{column}统计行数")
    plan.steps.append(Step("value_counts", {"column": column}, subject))
    return plan


def most_rows_plan(question: str, columns: list[Column], spans: Spans, zh: bool) -> Plan | None:
    """Which group has the most (or fewest) of what the rows are ("who refers the most households", "which
    branch has the fewest orders"): the question asks for an extreme, names a grouping and no number, and
    names what the rows are in a word no column matched (general_words.counts_rows): each group's rows,
    counted, not a default number's average. None otherwise."""
    if not asks_extreme(question) or asks_share(question) or any(w.search(question) for w in (RATE, MEAN_WORDS)):
        return None
    kinds = {str(c["name"]): c for c in columns if not c.get("pii")}
    cut = cut_column(question, columns)
    named = [n for n in ordered_names(spans) if n in kinds and n != cut]
    if any(kinds[n].get("type") in (*NUMERIC, "datetime", "boolean") or kinds[n].get("binary") for n in named):
        return None
    if _family_measure(question, kinds, cut):
        return None  # "which store has the most orders" on a column of orders (订单数): the totals rank them
    groups = [n for n in named if groups_rows(kinds[n])]
    covered = [(a, b) for a, b, _ in spans]
    words = [m for m in re.finditer(r"[A-Za-z]+", question) if not any(a <= m.start() < b for a, b in covered)]
    if len(groups) != 1 or not any(counts_rows(m.group(0)) for m in words):
        return None
    column = groups[0]
    plan = Plan(None, column, [Step("profile_dataset", {}, evidence=False)], kind="count")
    subject = _t(zh, f"Count the rows by {column}", f"按{column}统计行数")
    plan.steps.append(Step("value_counts", {"column": column}, subject))
    return plan


def _family_measure(question: str, kinds: dict[str, Column], cut: str | None) -> bool:
    """Whether a word of the question names a count column by its metric family (gate_words.FAMILIES: "orders"
    for 订单数): the things counted are in that column, not in the rows. A count: whole numbers, never below
    0, not money nor a level, named as a count (bilingual.names_a_quantity: "how many orders were for Rose" on
    Order Value, an amount, counts the rows)."""
    return any(
        same_family(question, n)
        for n, c in kinds.items()
        if n != cut
        and c.get("type") == "integer"
        and (c.get("minimum") or 0) >= 0
        and not c.get("binary")
        and not money_unit(n)
        and not is_level(n, list(kinds.values()))
        and names_a_quantity(n)
    )


def _asks_in_a_unit(question: str, numbers: list[Column]) -> bool:
    """Whether "how many" asks for a number of a unit a number column counts in ("多少箱" of 销量（箱）, "几箱",
    "how many kg" of Weight (kg)): the word right after the question word is that column's bracketed unit
    (a single unit: 元/箱 is a price per box, not a count of boxes)."""
    units = {unit.lower() for c in numbers if (unit := split_unit(str(c["name"]))[1]) and "/" not in unit}
    if not units:
        return False
    text = question.lower()
    afters = [text[m.end() :].lstrip() for m in HOW_MANY.finditer(text)]
    afters += [word[1:] + text[end:] for word, tag, _, end in tagged_words(text) if tag == "m" and word[:1] == "几"]
    return any(after.startswith(unit) and _ends_word(after, len(unit)) for after in afters for unit in units)


def _ends_word(text: str, at: int) -> bool:
    """Whether a word ends at `at` of the text: its end, a Chinese character, or a letter's plural s then no letter."""
    if at >= len(text) or is_cjk(text[at - 1]):
        return True
    rest = text[at + 1 :] if text[at] == "s" else text[at:]
    return not rest[:1].isalpha()


@cache
def _time_words() -> frozenset[str]:
    """Every name of a unit of time (day, 日期, month, 季度 …: vocabulary.period_units)."""
    return frozenset(word.lower() for names in period_units().values() for word in names)


def said_as_time(question: str, spans: Spans, name: str) -> bool:
    """Whether the question names a date column as a time ("how many days", "就诊日期") — not by the event it
    dates ("一共有多少次就诊？" on 就诊日期: the visits, whose rows are counted)."""
    said = [question[start:end].lower() for start, end, n in spans if n == name]
    return any(TIME_UNITS.search(text) or any(word in text for word in _time_words()) for text in said)


def names_dated_event(question: str, spans: Spans, columns: list[Column]) -> bool:
    """Whether the question names the event a date column dates, not its time ("5次就诊" of 就诊日期, "orders"
    of Order Date): each row is one such event."""
    dates = {str(c["name"]) for c in columns if c.get("type") == "datetime"}
    return any(name in dates and not said_as_time(question, spans, name) for _, _, name in spans)


def _asks_count(question: str, grain: str | None) -> bool:
    """Whether the question asks how many rows: "how many"/"多少" or a Chinese numeral question (几天, 几次),
    and no rate, share, average or time ("how many passengers next year") — "how many days" only where the
    table has one row per day."""
    if not asks_how_many(question) or asks_share(question):
        return False
    if any(w.search(question) for w in (RATE, MEAN_WORDS)) or TIME_UNITS.search(_without_named_times(question)):
        return False
    return not _DAYS.search(question) or grain == "daily"


def _without_named_times(question: str) -> str:
    """The question without the times it names as dates ("2021年", "in March", "最近三个月"): they say which
    rows count (time_steps.time_filter), not a unit of time asked about ("2021年入职了多少人" counts people)."""
    spans = [m.span() for m in YEAR.finditer(question)]
    spans += [found.span for found in (named_months(question), recent_stretch(question)) if found is not None]
    for start, end in sorted(spans, reverse=True):
        question = question[:start] + " " + question[end:]
    return question


def asks_how_many(question: str) -> bool:
    """ "How many" (kinds.HOW_MANY), or a Chinese numeral question: a numeral word the segmenter reads as
    one (tag m) opening with a question word (几天, 几次, 几个: interrogatives_zh's 几) — not after a pronoun
    (tag r), where it is a determiner: 这几种 "these few kinds", 哪几处 "which ones"."""
    if HOW_MANY.search(question):
        return True
    askers = _interrogatives_zh()
    if not any(asker in question for asker in askers):
        return False  # no word can open with one: the tagger (its tables cost ~0.4 s and ~100 MB) not asked
    tagged = tagged_words(question)
    return any(
        tag == "m" and word.startswith(askers) and not (i and tagged[i - 1][1] == "r")
        for i, (word, tag, _, _) in enumerate(tagged)
    )


def counted_as(question: str) -> str:
    """What a "how many" question counts the rows as, in its own words, for the answer to say ("how many
    rentals were out …" → rentals, "有多少单" → 单, "多少个订单" → 个订单): in English the words after "how
    many" up to a function word, through the first plural or thing rows are (general_words.is_row_word);
    in Chinese the measure word after the numeral question (多少单, 几次, 几家: bilingual.is_classifier, or
    a one-character noun) and a noun right after it. "" where the words say no such thing ("how many were
    late", "有多少"): the rows are counted as rows."""
    if found := HOW_MANY.search(question):
        if found.group(0).isascii():
            stop = english_stop_words()
            words = re.findall(r"[A-Za-z][A-Za-z'-]*", question[found.end() :])
            while words[:1] and words[0].lower() in {"of", "the"}:
                words = words[1:]
            said = [w.lower() for w in itertools.takewhile(lambda w: w.lower() not in stop, words)][:3]
            ends = [i for i, w in enumerate(said) if lemma(w) != w or is_row_word(w)]  # "visits cost": visits
            return " ".join(said[: ends[0] + 1]) if ends else ""
    tagged = tagged_words(question) if any(is_cjk(c) for c in question) else ()
    askers = _interrogatives_zh()
    for i, (word, tag, _, _) in enumerate(tagged):
        if tag != "m" or not (word.startswith(askers) or word == "多少"):
            continue
        rest = [(w, t) for w, t, _, _ in tagged[i + 1 : i + 3]]
        if len(word) == 2 and word[0] in askers and is_classifier(word[1]):  # 几个, 几家: the measure word inside
            unit, rest = word[1], [(w, t) for w, t, _, _ in tagged[i + 1 : i + 2]]
        elif rest and len(rest[0][0]) == 1 and (is_classifier(rest[0][0]) or rest[0][1] == "n"):
            unit, rest = rest[0][0], rest[1:]
        else:
            return ""
        noun = rest[0][0] if rest and rest[0][1].startswith("n") and unit != rest[0][0] else ""
        return unit + noun
    return ""


@cache
def _interrogatives_zh() -> tuple[str, ...]:
    return tuple(shared_vocabulary.words("unmatched_words", "interrogatives_zh"))


def _negated(question: str, places: list[tuple[int, int]]) -> bool:
    """Whether a negator (kinds.NEGATION) stands right before one of the places the words name a column
    ("没被批准", "weren't approved", "not approved"): at most two characters between them in Chinese (被,
    有), at most one word in English."""
    for start, _ in places:
        before = question[max(0, start - 12) : start]
        for match in NEGATION.finditer(before):
            gap = before[match.end() :]
            if any(is_cjk(c) for c in match.group(0)):
                if len(gap.strip()) <= 2:
                    return True
            elif len(re.findall(r"\w+", gap)) <= 1:
                return True
    return False
