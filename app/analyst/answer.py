"""The built-in analyst's answer, conclusions first: the finding that answers the question (in bold),
the data it used and how it was chosen, the columns it used that the question did not name, the
supporting findings, what could not be done, and the caveats (the question's notes, the workspace
rules, how far the inference carries); then a line that says what the built-in analyst is."""

from __future__ import annotations

import re
from dataclasses import replace

from app.analyst.derived_answers import count_headline, per_unit_headline, row_rate_note, whole_rate_headline
from app.analyst.findings import finding
from app.analyst.reading import (
    MODEL_TOOLS,
    assumed_lines,
    chip_kind,
    describe_leads,
    filter_text,
    kind_assumption,
    read_as,
    says_the_defaults,
    sheet_line,
    table_line,
)
from app.analyst.role_question import defaults_sentence
from app.analyst.scope import describe_condition
from app.analyst.sheet_words import as_people_write
from app.analyst.steps import DATA_TASK_KINDS, Plan, Step
from app.analyst.turn_state import TurnView

HONESTY = {
    "en": "_Built-in analyst (no language model): standard analyses chosen from the column types "
    "and the words of your question._",
    "zh": "_内置分析器（未使用大语言模型）：根据列类型和问题中的关键词选择标准分析。_",
}


def small_talk(has_data: bool, zh: bool) -> str:
    """The reply to a greeting, or to anything before a spreadsheet is uploaded."""
    if not has_data:
        return (
            "请先上传一个表格（Excel 或 CSV），然后用一句话告诉我您想了解什么。"
            if zh
            else "Please upload a spreadsheet (Excel or CSV) first, then tell me in one sentence what you want to know."
        )
    return (
        "您好！告诉我您想从数据中了解什么，例如“不同地区的销售额有差异吗？”"
        if zh
        else 'Hello! Tell me what you want to learn from your data, e.g. "Does revenue differ by region?"'
    )


def write_answer(plan: Plan, view: TurnView, many: bool, zh: bool) -> str:
    """Conclusions first: how the question was read, then the finding that answers it (one per part
    of a compound question, in the question's order), then the supporting ones."""
    parts = plan.parts or [plan]
    answered = [_findings(part, _part_view(part, view, plan), zh) for part in parts]
    leads = [found[0] for found, _ in answered]
    supporting = [f for found, _ in answered for f in found[1:] if f not in leads]
    failures = list(dict.fromkeys(f for _, failed in answered for f in failed))
    # how each part was read comes first (issue 24 point 4): the page's chips change each of its roles
    reads = [
        read_as(part, chip_kind(part), part.top[0] if part.top else 0, filter_text(part, zh), zh) for part in parts
    ]
    lines: list[str] = []
    if len(parts) > 1 and len(set(reads)) == len(reads):
        # a compound question: each part's reading just above its own answer, so the two pair up
        lines += [plan.lead, ""] if plan.lead else []
        for read, lead in zip(reads, leads, strict=True):
            lines += [read, ""] if read else []
            lines += [f"**{lead}**", ""]
    else:
        lines += [line for read in dict.fromkeys(reads) if read for line in (read, "")]
        lines += [plan.lead, ""] if plan.lead else []
        for lead in leads:  # each part's answer a paragraph of its own
            lines += [f"**{lead}**", ""]
    if used := data_used(plan, many, zh):
        lines += [used, ""]
    for part in parts:
        assumed = assumed_lines(part.provenance, part.metric, zh)  # the reading's assumptions, and the other readings
        defaults = defaults_sentence(part.provenance, zh)
        if not (assumed and says_the_defaults(part.provenance)) and defaults and defaults not in lines:
            lines += [defaults, ""]  # columns the question did not name, and the words that matched none
        if assumed and not set(assumed) <= set(lines):
            lines += [*assumed, ""]
        if (kind := kind_assumption(part, zh)) and kind not in lines:  # a total or an average not asked for
            lines += [kind, ""]
    if (table := table_line(plan.choice, zh)) and table not in lines:  # the table itself was assumed
        lines += [table, ""]
    question = plan.provenance.question if plan.provenance else ""
    if (sheet := sheet_line(question, plan.choice, zh)) and sheet not in lines:  # it names another sheet
        lines += [sheet, ""]
    if supporting:
        lines += ["### 其他发现" if zh else "### Supporting findings", ""]
        lines += [f"- {f}" for f in dict.fromkeys(supporting)] + [""]
    if failures:
        lines += [
            ("以下分析未能完成：" if zh else "These analyses could not be completed: ") + "; ".join(failures),
            "",
        ]
    caveats = [*plan.notes, *_rule_notes(plan, zh), *dict.fromkeys(n for part in parts for n in _scope_notes(part, zh))]
    caveats += _left_out_notes(plan, view, zh)
    caveats = _without_repeats(caveats)
    if caveats:
        lines += ["### 注意" if zh else "### Caveats", ""] + [f"- {n}" for n in caveats]
    lines += ["", HONESTY["zh" if zh else "en"]]
    return spaced_latin("\n".join(lines)) if zh else "\n".join(lines)


# A Latin letter touching a Chinese character, either side ("按Plan分组", "各Plan之间"): Chinese typesetting puts
# a space between the two scripts, as the answer's own sentences already do around the names they fill in.
_SCRIPTS_TOUCH = re.compile(r"(?<=[\u3400-\u9fff])(?=[A-Za-z])|(?<=[A-Za-z])(?=[\u3400-\u9fff])")


def spaced_latin(text: str) -> str:
    """`text` with a space wherever a Latin letter and a Chinese character touch: "按 Plan 分组"."""
    return _SCRIPTS_TOUCH.sub(" ", text)


def _left_out_notes(plan: Plan, view: TurnView, zh: bool) -> list[str]:
    """The groups a comparison left out of its test, each of one value only (compare_groups): the answer
    says which, since its averages and its p value are of the other groups alone."""
    notes = []
    for step in plan.steps:
        result = view.result(step.tool, step.arguments) if step.task and step.tool == "compare_groups" else None
        left_out = [str(g) for g in (result.details.get("left_out_groups") or [])] if result and result.ok else []
        if left_out:
            listed = ("、" if zh else ", ").join(left_out[:10]) + ("…" if len(left_out) > 10 else "")
            group = step.arguments.get("group_column")
            notes.append(
                f"{group} 中的 {listed} 只有 1 行数据，没有纳入比较。"
                if zh
                else f"{listed} of {group} {'has' if len(left_out) == 1 else 'have'} one row only and "
                "could not be compared: the comparison is of the other groups."
            )
    return list(dict.fromkeys(notes))


def _without_repeats(notes: list[str]) -> list[str]:
    """The notes in order, less one another note already says in full (two parts of a compound
    question each add the scope note; one of them also says correlation is not causation)."""
    kept = list(dict.fromkeys(notes))
    return [n for n in kept if not any(n != other and n.rstrip("。.") in other for other in kept)]


def _part_view(part: Plan, view: TurnView, plan: Plan) -> TurnView:
    """The turn as one part of a compound question sees it: its own question, for its headline's words."""
    if part is plan or part.provenance is None or not part.provenance.question:
        return view
    return replace(view, question=part.provenance.question)


def _findings(plan: Plan, view: TurnView, zh: bool) -> tuple[list[str], list[str]]:
    """The findings of the task steps, the one that answers the question kind first (never none: a
    sentence says no conclusion could be drawn), and the tasks whose analysis failed."""
    findings, failures = [], []
    # a prep step (the month column a which-month ranking reads, a filter) is how, not what: its tool
    # summary ("Added column Month (year_month(月份))") says nothing to the reader once an analysis answers
    analyses = any(s.task and not s.prep for s in plan.steps)
    for step in sorted((s for s in plan.steps if s.task), key=lambda s: _order(s, plan)):
        result = view.result(step.tool, step.arguments)
        quiet = step.prep and analyses
        text = finding(step, result, zh, plan, view.question) if result and result.ok and not quiet else ""
        if result and result.ok and plan.kind == "count":
            text = count_headline(step, result, plan, zh) or text
            text = as_people_write(text, zh, plan.sheet_words, {str(step.arguments.get("column"))}, plan.grain)
        if text and plan.kind == "per_unit":  # a rate: say how it was computed
            if step.tool == "rank_values":
                text = per_unit_headline(step, result, plan, zh) or text  # type: ignore[arg-type]
            elif step.tool == "describe_columns":
                whole = whole_rate_headline(step, result, plan, zh) if result else None
                text = whole or text.rstrip("。.") + row_rate_note(zh) + ("。" if zh else ".")
        if text:
            findings.append(text)
        elif result and not result.ok and step.task:
            failures.append(step.task)
    if not findings:
        findings = ["现有数据无法得出可靠结论。" if zh else "No reliable conclusion could be drawn from this data."]
    return findings, failures


def data_used(plan: Plan, many: bool, zh: bool) -> str:
    """Which dataset answered (when the workspace has several, or a filter narrowed it), and how it was chosen."""
    if not (many or plan.filters) or not plan.dataset:
        return ""
    choice = plan.choice
    filters = ", ".join(describe_condition(c, zh) for c in plan.filters)
    filters = as_people_write(filters, zh, plan.sheet_words, {c["column"] for c in plan.filters}, plan.grain)
    text = f"使用的数据：**{plan.dataset}**" if zh else f"Data used: **{plan.dataset}**"
    if filters:
        text += f"（只含 {filters}）" if zh else f" (only rows with {filters})"
    how = choice.how if choice else ""
    # the words that fit the table taken (the best fit by score may be another table it won over on a tie)
    chosen = choice.dataset.get("name") if choice and choice.dataset else None
    fit = next((f for f in choice.fits if f.dataset.get("name") == chosen), None) if choice else None
    if how == "words" and fit is not None:
        matched = [*fit.columns, *fit.values][:4]
        if matched:
            text += (
                f"，因为问题提到了 {'、'.join(matched)}。"
                if zh
                else f", because the question names {', '.join(matched)}."
            )
    elif how == "answer":
        text += "，按您的选择。" if zh else ", as you chose."
    elif how in ("tie", "none"):
        text += (
            "；问题中的词无法确定用哪个表格，请确认这是您想要的。"
            if zh
            else "; the question's words did not settle which table to use, so check this is the one you meant."
        )
    return text


# The answers a reader might take as cause and effect: how two things move together, what drives a
# number. A total, a ranking or a data task claims nothing of the kind.
RELATION_TOOLS = ("correlation_analysis", "linear_regression", "chi_square_test")

FACT_KINDS = (
    *DATA_TASK_KINDS,
    "total",
    "top",
    "share",
    "rank",
    "date_gap",
    "per_unit",
    "count",
    "span",
)  # what the data says, nothing inferred


def _scope_notes(plan: Plan, zh: bool) -> list[str]:
    """Correlation is not causation for a relationship or drivers answer (what answers the question
    first); how far any inference carries, except for facts about the data (totals, rankings, data tasks)."""
    if plan.kind in FACT_KINDS:
        return []
    leading = min((s for s in plan.steps if s.task), key=lambda s: _order(s, plan), default=None)
    if plan.kind in ("relationship", "association") or (leading and leading.tool in RELATION_TOOLS):
        return [
            "相关不代表因果；结论基于上传的数据，不一定适用于其他时期或人群。"
            if zh
            else "Correlation is not causation; conclusions hold for the uploaded data and may not carry over "
            "to other periods or people."
        ]
    return [
        "结论基于上传的数据，不一定适用于其他时期或人群。"
        if zh
        else "Conclusions hold for the uploaded data and may not carry over to other periods or people."
    ]


def _order(step: Step, plan: Plan) -> int:
    """Where a step's finding goes: the one that answers the question kind first. "What is the average
    order value?" asks for the average itself: with no grouping named, the description leads, not a
    comparison across a grouping the analyst chose (reading.describe_leads)."""
    if step.tool == "describe_columns" and describe_leads(plan):
        return 0
    if step.tool in MODEL_TOOLS:  # "which affects it most": the model weighs them all; a comparison supports it
        return 0
    if step.tool == "group_aggregate":
        return 0 if plan.kind in ("total", "top") else 6
    if step.tool == "plot_pie":
        return 0
    return ANSWER_ORDER.get(step.tool, 9)


def _rule_notes(plan: Plan, zh: bool) -> list[str]:
    notes = []
    for rule, applied in plan.rules:
        if applied:
            notes.append(
                f"已按工作区规则执行：“{rule.rstrip('.。')}”。"
                if zh
                else f"Workspace rule applied: “{rule.rstrip('.。')}”."
            )
        else:
            notes.append(
                f"未能自动执行工作区规则：“{rule}”（内置分析器无法理解这条规则）。"
                if zh
                else f"Workspace rule not applied: “{rule}” (the built-in analyst cannot carry it out)."
            )
    return notes


# The finding that answers the question leads. A forecast step is planned only for a forecast
# question, and then the forecast is the answer and the trend its support.
ANSWER_ORDER = {
    "clean_data": 0,
    "rank_values": 0,
    "forecast": 0,
    "seasonal_decompose": 0,
    "time_series_trend": 1,
    "compare_groups": 1,
    "compare_two_groups": 1,
    "proportion_test": 1,
    "paired_test": 1,
    "linear_regression": 2,
    "correlation_analysis": 3,
    "describe_columns": 4,
    "value_counts": 5,
    "filter_rows": 8,
}
