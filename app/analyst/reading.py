"""Whether the built-in analyst's reading of the question was named by the question or assumed
(issue 24 point 5: the badge covers the reading).

"Checked" (the evidence card's mark) is about the arithmetic: the numbers of a claim are the ones its
analysis returned. Whether the analysis is about what the question asked is a separate matter, and gets
its own mark. A reading is *assumed* when a column of one of the roles a reader checks first (the
measure, the groups, the filter) came from

- a default (`How` "default"): the question names nothing for the role and a convenient column was
  taken, or
- a weak match (`roles.WEAK_KINDS`): the question names only part of the column's name ("partial": 销售
  of the merged-header group 销售情况 taking its first leaf 销量; "pass" of n_passed), or the embedding
  matcher placed a phrase the rules left unmatched ("semantic": "money" for Revenue ($)), which the
  sentence says was matched by meaning.

"loose" (a stem or abbreviation of the whole name, every character of a Chinese name in order) reads
every part of the name, so it counts as named, like a synonym, a named value and the user's own answer
("answer"). Dates and a regression's other factors are not in the mark: a trend has one date column,
and "what drives X" takes the other numbers by design.

The table is part of the reading too, when the workspace holds several (dataset_choice): a table
picked by words that lead the next table by less than a listed word's weight (a near-tie, a tie
broken by meaning or by a unit, no fit at all) is assumed (`table_assumed`), and the answer says so
and names the other tables.

An assumed reading lowers the evidence to medium confidence (never "high confidence · checked"), and
the answer says what it assumed and which other columns could have filled the role.

The reading can also be changed (issue 24 point 4): the answer opens with it in one sentence
(`read_as`: "Read as: the total 销售额 by 门店"), and report.json lists each role (`plan_reading`: the
measure, the groups, the filter, the kind of answer, the N of a ranking) with how it was chosen and the
other values the re-run would plan with. The page shows each as a chip; a choice becomes the answer to
a clarification on the role's topic (`pinned_answer`), which the re-run reads like any answer.
"""

from __future__ import annotations

import re
from typing import Any

from app.analyst.period_totals import period_label, period_reading
from app.analyst.role_question import candidates, topic
from app.analyst.scope import describe_condition
from app.analyst.steps import Plan
from app.understanding.dataset_choice import Choice
from app.understanding.kinds import MEAN_WORDS, asks_group_averages
from app.understanding.named_months import relative_period
from app.understanding.role_sources import NO_FILTER, Provenance, Source
from app.understanding.roles import WEAK_KINDS

READ_ROLES = ("outcome", "group", "filter")  # the measure, the groups, the filter
MAX_OTHERS = 3  # other readings offered per assumed role


def assumed_sources(provenance: Provenance | None) -> list[Source]:
    """The sources of the plan's measure, groups and filter that the question did not name: a default
    or a weak (partial) match."""
    if provenance is None:
        return []
    return [s for s in provenance.sources if s.role in READ_ROLES and (s.default or s.how in WEAK_KINDS)]


def reading_assumed(provenance: Provenance | None) -> bool:
    """Whether the plan's reading rests on an assumption (see the module's docstring)."""
    return bool(assumed_sources(provenance))


_ROLE_NAMES = {  # role -> (English with its verb, its pronoun, Chinese), as the "Assumed:" sentence names it
    "outcome": ("the measure is", "it", "度量"),
    "group": ("the groups are", "them", "分组"),
    "filter": ("the filter is", "it", "筛选条件"),
}


def assumed_lines(provenance: Provenance | None, metric: str | None, zh: bool) -> list[str]:
    """One sentence per assumed role: what was assumed, why, and the other readings the data offers
    ("Assumed: the measure is **销量** — the question names no column for it. Other reading: 销售额.")."""
    lines = []
    for source in assumed_sources(provenance):
        used = ("、" if zh else ", ").join(f"**{c}**" for c in source.columns[:4])
        en_role, pronoun, zh_role = _ROLE_NAMES[source.role]
        if zh:
            line = f"假定：{zh_role}为 {used}——{_why_zh(source)}。"
        else:
            line = f"Assumed: {en_role} {used} — {_why_en(source, pronoun)}."
        others = _other_readings(source, provenance, metric)
        if others:
            listed = ("、" if zh else ", ").join(others)
            line += f"另一种解读：{listed}。" if zh else f" Other reading: {listed}."
        lines.append(line)
    return lines


def _why_en(source: Source, pronoun: str) -> str:
    """Why the role is assumed, in English: nothing named it, its columns were matched by meaning (the
    embedding matcher, kind "semantic"), or the question names only part of the column's name."""
    if source.default:
        return f"the question names no column for {pronoun}"
    if source.how == "semantic":
        quoted = ", ".join(f"'{p}'" for p in source.phrases)
        return f"matched by meaning to {quoted}" if quoted else "matched by meaning to the question's words"
    return "the question names only part of the column's name"


def _why_zh(source: Source) -> str:
    """`_why_en` in Chinese."""
    if source.default:
        return "问题没有指明这一列"
    if source.how == "semantic":
        quoted = "、".join(f"“{p}”" for p in source.phrases)
        return f"按词义与{quoted}匹配" if quoted else "按词义与问题中的词语匹配"
    return "问题只提到了列名的一部分"


def _other_readings(source: Source, provenance: Provenance | None, metric: str | None) -> list[str]:
    """Columns that could fill the role instead, as role_question would offer them (a filter has none:
    its values were read from the question)."""
    if provenance is None or source.role not in ("outcome", "group"):
        return []
    found, _ = candidates(source.role, provenance.columns, metric if source.role == "group" else None)
    return [c["name"] for c in found if c["name"] not in source.columns][:MAX_OTHERS]


# what the answer took, why, and the other reading, by the kind it did not take (Plan.kind_default):
# "mean" when it totalled an additive number per group, "total" when it compared the groups' averages
_KIND_READINGS = {
    "mean": (
        ("is the **total** {m} per {g}", ", and {m} adds up", "the average {m} per {g}"),
        ("为各 {g} 的 **{m} 总和**", " {m} 是可以相加的量", "各 {g} 的平均 {m}"),
    ),
    "total": (
        (
            "compares the **average** {m} per {g}",
            "; rows without dates may be repeated measurements",
            "the total {m} per {g}",
        ),
        ("比较各 {g} 的 **平均 {m}**", "没有日期的行可能是重复的测量", "各 {g} 的 {m} 总和"),
    ),
}
# the kind chip of the other reading, offered first
_OTHER_CHIP = {"mean": "compare", "total": "total"}


def kind_assumption(plan: Plan, zh: bool) -> str:
    """The "Assumed:" sentence of a kind of answer the question did not say (`Plan.kind_default`) where it
    asked for neither a total nor an average of an additive number per group ("which store has the
    highest sales"): the total when the rows are in periods (a store's months add up to its sales), the
    average when they are in none (they may be repeated measurements), with the other as the other
    reading; "" otherwise.

    It marks the reading assumed and lowers the badge like an assumed measure does (evidence._confidence):
    the two readings quote different numbers (a store's 12,096 against its 2,016 a month) and may crown
    different groups (one open all year, one open a few good months), so "high confidence" would vouch
    for a choice the question did not make. The sentence says why this kind was taken, so a reader sees
    that it is the usual reading, and the kind chip offers the other in one click."""
    if plan.kind_default not in _KIND_READINGS or not plan.metric or not plan.dimension or plan.goal:
        return ""
    english, chinese = _KIND_READINGS[plan.kind_default]
    taken, why, other = (part.format(m=plan.metric, g=plan.dimension) for part in (chinese if zh else english))
    if zh:
        return f"假定：结果{taken}——问题没有说是总和还是平均值，而{why}。另一种解读：{other}。"
    return f"Assumed: the answer {taken} — the question says neither total nor average{why}. Other reading: {other}."


def says_the_defaults(provenance: Provenance | None) -> bool:
    """Whether the "Assumed:" sentences say all that role_question.defaults_sentence would: no words of
    the question went unmatched (that sentence quotes them) and every default is a measure or groups
    (not a date or a regression's factors, which the mark leaves out)."""
    if provenance is None or provenance.unmatched:
        return False
    return all(s.role in READ_ROLES for s in provenance.defaults())


def table_assumed(choice: Choice | None) -> bool:
    """Whether the table the plan reads was assumed: the workspace holds other tables the user gave,
    and neither the user nor a clear lead of the question's words chose it (Choice.sure)."""
    return choice is not None and bool(choice.others) and not choice.sure


def table_line(choice: Choice | None, zh: bool) -> str:
    """The "Assumed:" sentence of an assumed table ("Assumed: the table is **merged2** — the question's
    words fit retail_sales nearly as well. Other reading: retail_sales."); "" for a table chosen surely."""
    if choice is None or choice.dataset is None or not table_assumed(choice):
        return ""
    name, others = str(choice.dataset.get("name")), choice.others[:MAX_OTHERS]
    fits = {str(f.dataset.get("name")): f.score for f in choice.fits}
    best_other = max((fits.get(o, 0) for o in others), default=0)
    listed = ("、" if zh else ", ").join(others)
    if fits.get(name, 0) == 0:
        why = ("问题中的词与哪个表格的列都对不上", "the question's words match no table's columns")
    elif best_other == 0:
        why = ("问题只是部分地或按词义提到了它的列", "the question names its columns only partly or by meaning")
    elif choice.lead == 0:
        why = (f"问题中的词与 {listed} 同样对得上", f"the question's words fit {listed} as well")
    else:
        why = (f"问题中的词与 {listed} 也几乎同样对得上", f"the question's words fit {listed} nearly as well")
    if zh:
        return f"假定：表格为 **{name}**——{why[0]}。另一种解读：{listed}。"
    return f"Assumed: the table is **{name}** — {why[1]}. Other reading: {listed}."


def named_sheets(question: str, dataset: dict[str, Any] | None) -> list[str]:
    """The other sheets of the table's file the question names ("只看二店的" where the book has a sheet
    二店 beside the one read): names of two characters or more, found as written, that are not also a
    value of one of the table's columns (there the question names a group, not a sheet)."""
    if not dataset:
        return []
    text = question.casefold()
    values = {str(v).casefold() for c in dataset.get("columns", []) for v in c.get("values") or []}
    return [name for name in dataset.get("other_sheets") or [] if _names(text, name) and name.casefold() not in values]


def sheet_line(question: str, choice: Choice | None, zh: bool) -> str:
    """The "Assumed:" sentence of a question that names another sheet of the file than the one the answer
    read: the answer is not about what was asked, and the reading must not pass for the question's own
    (the page's sheet buttons switch the table to that sheet in one click); "" otherwise."""
    dataset = choice.dataset if choice is not None else None
    if not (sheets := named_sheets(question, dataset)) or dataset is None:
        return ""
    read, named = dataset.get("sheet") or dataset.get("name"), ("、" if zh else ", ").join(sheets)
    if zh:
        return (
            f"假定：用的是工作表 **{read}**——问题提到的 {named} 是这个文件的另一个工作表，本回答没有用到它。"
            f"另一种解读：在数据区点选工作表 {named}，再问一次。"
        )
    return (
        f"Assumed: the sheet read is **{read}** — the question names {named}, another sheet of this file, which "
        f"this answer did not use. Other reading: choose the sheet {named} under the data, then ask again."
    )


def reading_record(
    provenance: Provenance | None, metric: str | None, zh: bool, choice: Choice | None = None
) -> dict[str, Any]:
    """The reading's mark (report.json's `reading`): {"status": "named" | "assumed", "assumed": [the
    answer's "Assumed:" sentences, the table's and the sheet's among them]}; `plan_reading` adds what the
    page's chips need."""
    lines = assumed_lines(provenance, metric, zh)
    if table := table_line(choice, zh):
        lines.append(table)
    if provenance is not None and (sheet := sheet_line(provenance.question, choice, zh)):
        lines.append(sheet)
    return {"status": "assumed" if lines else "named", "assumed": lines}


# --- the reading as the user can change it (issue 24 point 4) -------------------------------------
# The kinds a chip offers: a handful the built-in analyst plans from a few words of the question.
# A chip's choice reaches the analyst as the user's confirmed goal for the question (topic
# `goal.<key>`, the clarification path), so it is the words the question reader already reads.
KIND_CHOICES = ("total", "top", "share", "trend", "compare")
# A chip's goal overrides the question's own kind and N (plan._special_steps reads `Plan.goal` first):
# "top 3" on a "top 2" question ranks three, "share" on a "total" question plans the shares.
KIND_GOALS = {  # kind -> (English, Chinese) goal words the chip records; {n}: the N of a top-N
    "total": ("total", "总和"),
    "top": ("top {n}", "前{n}名"),
    "share": ("share", "占比"),
    "trend": ("trend over time", "随时间的趋势"),
    "compare": ("compare", "比较"),
}
N_CHOICES = (3, 5, 10)
MAX_OPTIONS = 6  # other columns a measure or groups chip offers


def chip_goal(goal: str | None) -> tuple[str, int] | None:
    """The kind (and the N of a top N; 0 for the others) a chip recorded as the question's goal
    (`goal_words`, either language); None for a goal in the user's own words (a clarification)."""
    for kind, templates in KIND_GOALS.items():
        for template in templates:
            pattern = re.escape(template).replace(re.escape("{n}"), r"(\d+)")
            if match := re.fullmatch(pattern, (goal or "").strip(), re.I):
                return kind, int(match.group(1)) if match.groups() else 0
    return None


def chip_kind(plan: Plan) -> str | None:
    """The plan's kind as a chip names it; None for a kind the chips do not offer (a data task, a
    regression, a paired test: changing those in one click would not be the same question)."""
    tools = {s.tool for s in plan.steps if s.task}
    if plan.kind in ("total", "top", "share"):
        return plan.kind
    if plan.kind == "rank" and plan.top and not plan.dimension:  # the top N rows (rankings._top_rows)
        return "top"
    if plan.kind == "standard" and tools & {"time_series_trend", "forecast", "seasonal_decompose"}:
        return "trend"
    if tools & MODEL_TOOLS:  # "what drives price": the groups compared beside it are not the answer
        return None
    if plan.kind == "standard" and plan.dimension and tools & {"compare_groups", "compare_two_groups"}:
        return None if describe_leads(plan) else "compare"
    return None


def describe_leads(plan: Plan) -> bool:
    """Whether the description of the measure answers the question: it asks for the average ("what is
    the average satisfaction?") and names no grouping, so the comparison across the grouping the analyst
    chose only supports it (the answer leads with the average, and the reading says so)."""
    provenance = plan.provenance
    return bool(
        provenance
        and MEAN_WORDS.search(provenance.question)
        and not group_named(plan)
        and any(s.tool == "describe_columns" and s.task for s in plan.steps)
    )


def group_named(plan: Plan) -> bool:
    """Whether the question's words (or the user) chose the grouping, not a default."""
    sources = plan.provenance.sources if plan.provenance else []
    return any(s.role == "group" and not s.default for s in sources)


MODEL_TOOLS = {"linear_regression", "logistic_regression", "train_regression_model", "feature_importance"}


def analysis_kind(plan: Plan) -> str:
    """What the plan answers when no chip kind names it: what drives the measure (a model), how it
    moves with the other numbers (correlations), how it differs between groups, or a summary."""
    tools = {s.tool for s in plan.steps if s.task}
    if tools & MODEL_TOOLS:
        return "drivers"
    if plan.dimension and tools & {"proportion_test", "chi_square_test", "compare_groups", "compare_two_groups"}:
        return "differs"
    if "correlation_analysis" in tools:
        return "relationship"
    return "summary"


def kind_options(kind: str, columns: list[dict[str, Any]]) -> list[str]:
    """The kinds a chip offers instead of `kind`: every other kind the chips name (a chosen kind
    overrides the question's own), a trend only when the data has dates."""
    dated = any(c.get("type") == "datetime" for c in columns)
    return [k for k in KIND_CHOICES if k != kind and (k != "trend" or dated)]


def goal_words(kind: str, n: int, zh: bool) -> str:
    """The goal a kind chip (or an N chip: kind "top") records for the question."""
    english, chinese = KIND_GOALS[kind]
    return (chinese if zh else english).format(n=n)


def _how(source: Source | None) -> str:
    if source is None or source.default or source.how in WEAK_KINDS:
        return "assumed"
    return "answer" if source.how == "answer" else "named"


def plan_reading(plan: Plan, zh: bool) -> dict[str, Any]:
    """The whole reading as report.json records it: the mark (`reading_record`), the question's key
    (its clarification topics are filed under it), the sentence the answer opens with (`read_as`) and
    one entry per role the user can change: {role: measure | group | filter | kind | n, value, how:
    named | assumed | answer, options: [other values]}."""
    provenance = plan.provenance
    record = reading_record(provenance, plan.metric, zh, plan.choice)
    if assumed_kind := kind_assumption(plan, zh):  # the kind of answer was a default: the reading is assumed
        record = {"status": "assumed", "assumed": [*record["assumed"], assumed_kind]}
    sources = {s.role: s for s in provenance.sources} if provenance else {}
    columns = provenance.columns if provenance else []
    roles: list[dict[str, Any]] = []
    if chip := table_chip(plan):  # first: every other role is read in the table
        roles.append(chip)
    if plan.metric:
        found, _ = candidates("outcome", columns, None)
        options = [c["name"] for c in found if c["name"] != plan.metric][:MAX_OPTIONS]
        roles.append({"role": "measure", "value": plan.metric, "how": _how(sources.get("outcome")), "options": options})
    kind = chip_kind(plan)
    if plan.dimension and (kind or analysis_kind(plan) == "differs"):  # groups that the answer compares
        found, _ = candidates("group", columns, plan.metric)
        options = [c["name"] for c in found if c["name"] != plan.dimension][:MAX_OPTIONS]
        roles.append({"role": "group", "value": plan.dimension, "how": _how(sources.get("group")), "options": options})
    filters = filter_text(plan, zh)
    if chip := filter_chip(plan, columns):  # one value of one column kept, or the user's "no filter"
        how = "answer" if plan.filter_pinned else _how(sources.get("filter"))
        roles.append({"role": "filter", "value": filters or NO_FILTER, "how": how, **chip})
    elif filters:  # several conditions, a cut on a number: shown, not offered (one click would not undo them)
        roles.append({"role": "filter", "value": filters, "how": _how(sources.get("filter")), "options": []})
    n = plan.top[0] if plan.top else 0
    chose = plan.goal[0] if plan.goal else None  # the kind a chip chose: the user's answer
    if kind:
        how = "answer" if chose == kind else "assumed" if assumed_kind else "named"
        options = kind_options(kind, columns)
        if assumed_kind:  # the other reading first: the averages compared, or the totals
            options = sorted(options, key=lambda k: k != _OTHER_CHIP[str(plan.kind_default)])
        roles.append({"role": "kind", "value": kind, "how": how, "options": options})
    if kind == "top" and n:
        how = "answer" if chose == "top" else "named"
        roles.append({"role": "n", "value": str(n), "how": how, "options": [str(o) for o in N_CHOICES if o != n]})
    return {
        **record,
        "key": provenance.key if provenance else "",
        "read_as": read_as(plan, kind, n, filters, zh),
        "roles": roles,
    }


def table_chip(plan: Plan) -> dict[str, Any] | None:
    """The table chip when the workspace holds several tables the user gave: {role: table, value: the
    table read, how, options: the other tables, best fit first}; never a table an analysis made (a
    `_summary`: dataset_choice.uploads). A choice answers the question's scope (`scope.<key>`), which
    holds for that question only (dataset_choice.answered_dataset)."""
    choice = plan.choice
    if choice is None or choice.dataset is None or not choice.others:
        return None
    how = "answer" if choice.how == "answer" else "assumed" if table_assumed(choice) else "named"
    return {"role": "table", "value": str(choice.dataset.get("name")), "how": how, "options": choice.others}


# --- the filter chip --------------------------------------------------------------------------------
# "Only for 东门": the chip offers the column's other values (the most frequent first, as the profile
# and value lookups list them) and no filter at all; a choice is the answer on the question's filter role
# (`role.<key>.filter`, as the measure's and the groups' chips answer theirs: role_question.role_answers),
# which turn_plan reads (`pinned_filter`).
MAX_FILTER_VALUES = 12
_NO_FILTER_WORDS = ("no filter on {column}", "不按 {column} 筛选")  # English, Chinese: the recorded answer


def filter_chip(plan: Plan, columns: list[dict[str, Any]]) -> dict[str, Any] | None:
    """{column, options} of the filter chip: when the plan keeps the rows of one value of one category
    column (or the user chose no filter on it), the column's other values and "no filter"; None for
    any other filter (several conditions, a cut on a number, values left out)."""
    kept = [c for c in plan.filters if c["op"] == "=="]
    if len(plan.filters) == 1 and len(kept) == 1:
        column, value = str(kept[0]["column"]), str(kept[0]["value"])
    elif not plan.filters and plan.filter_pinned:
        column, value = plan.filter_pinned, NO_FILTER
    else:
        return None
    summary = next((c for c in columns if c["name"] == column), None)
    if summary is None or summary.get("type") not in ("category", "text"):  # a named value, not a yes/no or a number
        return None
    values = [str(v) for v in summary.get("values") or [] if str(v) not in (value, NO_FILTER)]
    options = values[:MAX_FILTER_VALUES] + ([NO_FILTER] if value != NO_FILTER else [])
    return {"column": column, "options": options} if values or value != NO_FILTER else None


def filter_answer(column: str, value: str, zh: bool) -> str:
    """The answer a filter chip records: "门店 = 西门", or no filter on the column in words."""
    if value == NO_FILTER:
        return _NO_FILTER_WORDS[1 if zh else 0].format(column=column)
    return f"{column} = {value}"


def pinned_filter(answer: str | None, columns: list[dict[str, Any]]) -> tuple[str, str | None] | None:
    """(column, the value to keep; None: no filter) a filter chip recorded (`filter_answer`, either
    language); None for no answer or one that names no column of the table."""
    text = (answer or "").strip()
    for name in sorted((str(c["name"]) for c in columns), key=len, reverse=True):  # longest first: 门店 before 店
        if text.startswith(f"{name} = "):
            return name, text[len(name) + 3 :]
        if text in (w.format(column=name) for w in _NO_FILTER_WORDS):
            return name, None
    return None


def filter_text(plan: Plan, zh: bool) -> str:
    """The plan's filters as the answer says them ("Channel = Online, 月份 in 2024"); a period the question
    named relative to the data's last date with what it was taken as ("日期 在 去年 = 2023 年")."""
    question = plan.provenance.question if plan.provenance else ""
    relative = relative_period(question) if question else None
    used = " ".join(str(v) for s in plan.steps for v in s.arguments.values()).lower()
    relative = None if relative and relative.said.lower() in used else relative  # a column's name: "Visits Last Month"
    shown = []
    for condition in plan.filters:
        text = describe_condition(condition, zh)
        before, joint, taken = text.partition(" 在 " if zh else " in ")
        if relative and condition["op"] == "between" and taken:  # "日期 在 去年 = 2023 年"
            text, relative = f"{before}{joint}{relative.said} = {taken}", None
        shown.append(text)
    return ("，" if zh else ", ").join(shown)


READ_AS = ("Read as: ", "理解为：")  # how the read-as sentence begins, English and Chinese


def past_the_reading(answer: str) -> str:
    """The answer after its opening read-as paragraph (the headline comes next); the answer itself
    when it does not open with one (a model's answer)."""
    text = answer.lstrip()
    if text.lower().startswith(tuple(p.lower() for p in READ_AS)):  # any case: the evaluation lowers it
        return text.split("\n\n", 1)[1] if "\n\n" in text else ""
    return answer


def read_as(plan: Plan, kind: str | None, n: int, filters: str, zh: bool) -> str:
    """One plain sentence of how the question was read ("Read as: the total 销售额 by 门店";
    "理解为：按 门店 计算 销售额 的总和"); "" when the plan has no measure to speak of (a data task). A
    sheet opens it ("理解为：在工作表 二店 中，按 …") where the sheet is part of what was read: the question
    named it (the analyst turned there: sheet_turn), or the book has other sheets laid out alike (a sheet per
    shop), where the table stays at the sheet an earlier question turned to and the answer must say which."""
    sentence = _read_plan(plan, kind, n, filters, zh)
    dataset = plan.choice.dataset if plan.choice is not None else None
    question = plan.provenance.question if plan.provenance is not None else ""
    if not sentence or not dataset or not dataset.get("other_sheets"):
        return sentence
    if not dataset.get("sheets_alike") and not _names(question, dataset.get("sheet")):
        return sentence
    opening = READ_AS[1] if zh else READ_AS[0]
    on_sheet = f"在工作表 {dataset['sheet']} 中，" if zh else f"on sheet {dataset['sheet']}, "
    return opening + on_sheet + sentence[len(opening) :]


def _names(question: str, sheet: Any) -> bool:
    """Whether the question names the sheet as written (a name of two characters or more; a name in letters
    as a whole word: the sheet "Total" is not named by "totals")."""
    if not isinstance(sheet, str) or len(sheet.strip()) < 2:
        return False
    if sheet.isascii():
        return re.search(rf"(?<![A-Za-z0-9]){re.escape(sheet.strip())}(?![A-Za-z0-9])", question, re.I) is not None
    return sheet.casefold() in question.casefold()


def _read_plan(plan: Plan, kind: str | None, n: int, filters: str, zh: bool) -> str:
    m, g = plan.metric, period_label(plan, zh) or plan.dimension
    if not m and g and plan.kind == "share":  # each value's share of the rows (totals.share_steps, no measure)
        return _read_as_sentence(f"各 {g} 占行数的比例" if zh else f"each {g}'s share of the rows", filters, zh)
    if plan.kind == "span":  # date_span: how many calendar periods the dates cover (its task says so)
        subject = next((s.task for s in plan.steps if s.tool == "group_aggregate" and s.task), "")
        return _read_as_sentence(subject if zh else subject[:1].lower() + subject[1:], filters, zh)
    if plan.kind == "count" and not m:  # data_tasks.count_plan: the rows counted, per group when it names one
        return _read_as_sentence(_counted(plan, zh), filters, zh)
    if not m:
        return ""
    aggregate = next(
        (s.arguments.get("agg") for s in plan.steps if s.tool in ("group_aggregate", "rank_values")), "sum"
    )
    mean, bottom = aggregate == "mean", bool(plan.top and plan.top[1])
    if said := period_reading(plan, zh):  # "the month with the highest total …", "the total … of each month"
        return _read_as_sentence(said, filters, zh)
    extreme_zh, extreme_en = ("最低", "lowest") if bottom else ("最高", "highest")
    # the numbers a relationship is read with: by name when few (the ones the question named, or a small table's)
    related: list[Any] = next(
        (s.arguments.get("columns", [])[1:] for s in plan.steps if s.tool == "correlation_analysis"), []
    )
    named = 1 <= len(related) <= 3
    o_en = ", ".join(map(str, related)) if named else "the other numbers"
    o_zh = "、".join(map(str, related)) if named else "其他数值"
    # each kind's sentence, English and Chinese
    by_kind: dict[str, tuple[str, str]] = {
        "total": (f"the total {m} by {g}", f"按 {g} 计算 {m} 的总和") if g else (f"the total {m}", f"{m} 的总和"),
        "top": (
            f"the {'bottom' if bottom else 'top'} {n} {g} by {'average' if mean else 'total'} {m}",
            f"按 {m} {'平均值' if mean else '总和'}{extreme_zh}的 {n} 个 {g}",
        )
        if g
        else (f"the {n} rows with the {extreme_en} {m}", f"{m} {extreme_zh}的 {n} 行"),
        "share": (f"each {g}'s share of {m}", f"各 {g} 占 {m} 的比重") if g else (f"what makes up {m}", f"{m} 的构成"),
        "trend": (f"how {m} moves over time", f"{m} 随时间的变化"),
        "compare": (f"{m} compared across {g} (averages)", f"比较不同 {g} 的 {m}（平均值）"),
    }
    if plan.provenance and asks_group_averages(plan.provenance.question):  # the averages are the answer
        by_kind["compare"] = (f"the average {m} of each {g}", f"各 {g} 的 {m} 平均值")
    by_analysis: dict[str, tuple[str, str]] = {
        "drivers": (f"what drives {m}", f"哪些因素影响 {m}"),
        "differs": (f"how {m} differs across {g}", f"{m} 在不同 {g} 之间的差异"),
        "relationship": (f"how {m} moves with {o_en}", f"{m} 与 {o_zh} 的关系"),
    }
    if plan.kind == "proportion" and any(s.tool in ("proportion_test", "value_counts") for s in plan.steps if s.task):
        # the rate of a yes/no outcome, per group or over the rows kept (rates.rate_steps); of one value of a
        # many-valued column when the question named it ("orders that are online": Channel = Online)
        outcome_rate = f"the share of {m} = {plan.success}" if plan.success else f"the {m} rate"
        event = f"{m} = {plan.success}" if plan.success else m
        by_kind["proportion"] = (
            (f"{outcome_rate} by {g}", f"各 {g} 的 {event} 比例") if g else (outcome_rate, f"{event} 的比例")
        )
        kind = kind or "proportion"
    if plan.kind == "per_unit" and (rate := _rate_made(plan)):
        # a rate made for the question (data_tasks.per_unit_plan): what it is per, not "a summary" of its top
        whole = any(s.tool == "group_aggregate" and not s.arguments.get("group_columns") for s in plan.steps)
        by_kind["per_unit"] = (
            (f"{rate} by {g}", f"按 {g} 计算 {rate}")
            if g
            else (f"{rate} (total over total)", f"{rate}（合计之比）")
            if whole
            else (f"the average {rate}", f"{rate} 的平均值")
        )
        kind = "per_unit"
    if plan.kind == "passing":  # scope.passing_steps: the things the rows past a cut hold
        by_kind["passing"] = (f"which {g} the rows kept hold", f"保留的行中有哪些 {g}")
        kind = "passing"
    if kind is None and describe_leads(plan):  # the average asked for, the groups only beside it
        by_kind["average"] = (f"the average {m}", f"{m} 的平均值")
        kind = "average"
    english, chinese = (
        by_kind.get(kind or "") or by_analysis.get(analysis_kind(plan)) or (f"a summary of {m}", f"{m} 的概况")
    )
    return _read_as_sentence(chinese if zh else english, filters, zh)


def _counted(plan: Plan, zh: bool) -> str:
    """What a count counts: the rows; those with the values named, or with a yes/no column's yes (its no when
    the words negate it: Plan.counted_no), in the sheet's own words; or each group's."""
    group, values = plan.dimension, [str(v) for v in plan.values]
    words = plan.sheet_words.get(group or "")
    if group and words and not values:
        values = [words.get("false" if plan.counted_no else "true") or ("False" if plan.counted_no else "True")]
    if group and values:
        named = ("、" if zh else ", ").join(values)
        return f"{group} 为 {named} 的行数" if zh else f"the number of rows with {group} = {named}"
    if group:
        return f"每个 {group} 的行数" if zh else f"the number of rows for each {group}"
    return "行数" if zh else "the number of rows"


def _rate_made(plan: Plan) -> str | None:
    """The name of the rate a per-unit plan divides out: its last derived column (the ones before it, the
    days of each row's span, are what the rate divides by)."""
    made = [str(s.arguments.get("new_column_name") or "") for s in plan.steps if s.tool == "derive_column"]
    return made[-1] if made and made[-1] else None


def _read_as_sentence(text: str, filters: str, zh: bool) -> str:
    """The read-as sentence: its opening, what was read, the rows kept, its full stop."""
    if zh:
        return f"{READ_AS[1]}{text}" + (f"（只含 {filters}）" if filters else "") + "。"
    return f"{READ_AS[0]}{text}" + (f" (only rows with {filters})" if filters else "") + "."


# --- a chip's choice as the user's answer ---------------------------------------------------------
_PIN_QUESTIONS = {  # role -> (English, Chinese): the clarification a chip's choice answers
    "table": ("Which table should I analyse?", "要分析哪个表格？"),
    "measure": ("Which column is the measure?", "度量是哪一列？"),
    "group": ("Which column are the groups?", "按哪一列分组？"),
    "kind": ("What should the answer be?", "想要哪种结果？"),
    "n": ("How many should the ranking show?", "排名显示前几名？"),
    "filter": ("Which rows should the answer keep?", "只看哪些行？"),
}


def pinned_answer(reading: dict[str, Any], role: str, value: str, zh: bool) -> dict[str, str] | None:
    """A chip's choice as the answer to a clarification (issue 24 point 4): {topic, question, answer},
    so the re-run reads it the way it reads any answer (the measure and the groups: the role's topic
    `role.<key>.<role>`, role_question, the filter's too; the kind and N: the question's goal `goal.<key>`, whose words
    the question reader reads with the question). None when the run's reading did not offer `value`
    for `role` (only what the page showed can be chosen)."""
    roles = {r.get("role"): r for r in reading.get("roles") or [] if isinstance(r, dict)}
    key = str(reading.get("key") or "")
    offered = roles.get(role)
    if not key or offered is None or value not in (offered.get("options") or []):
        return None
    english, chinese = _PIN_QUESTIONS.get(role, ("", ""))
    question = chinese if zh else english
    if role == "measure":
        return {"topic": topic(key, "outcome"), "question": question, "answer": value}
    if role == "group":
        return {"topic": topic(key, "group"), "question": question, "answer": value}
    if role == "table":  # the scope gate's own topic and answer: the table's name
        return {"topic": f"scope.{key}", "question": question, "answer": value}
    if role == "filter" and offered.get("column"):
        return {
            "topic": topic(key, "filter"),
            "question": question,
            "answer": filter_answer(str(offered["column"]), value, zh),
        }
    n = int(roles["n"]["value"]) if "n" in roles and str(roles["n"].get("value")).isdigit() else N_CHOICES[0]
    if role == "kind" and value in KIND_GOALS:
        return {"topic": f"goal.{key}", "question": question, "answer": goal_words(value, n, zh)}
    if role == "n" and value.isdigit():
        return {"topic": f"goal.{key}", "question": question, "answer": goal_words("top", int(value), zh)}
    return None
