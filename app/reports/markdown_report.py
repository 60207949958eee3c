"""report.json as Markdown: the portable, diff-friendly rendering."""

from __future__ import annotations

from typing import Any

from app.reports.first_pages import FirstPages, first_pages
from app.reports.i18n import label, labels
from app.reports.report_parts import (
    args_text,
    evidence_numbers,
    figure_numbers_by_evidence,
    format_value,
    guidance_facts,
    in_sheet_words,
    meta_items,
    plan_facts,
    reading_mark,
    report_language,
    reproduction_summary,
    supports_suffix,
    task_status,
    verification_summary,
)
from app.reports.safe_markdown import neutralize_markdown


def to_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown text. Answers, claims and captions come from the model and the data, so
    raw HTML and dangerous link targets are neutralised in the text itself (a viewer that renders
    HTML shows them as text)."""
    lang = report_language(report)
    report = in_sheet_words(report)  # metric names in the sheet's words
    layout = first_pages(report)
    report = layout.with_figures_in_order(report)  # the answer's charts are figures 1, 2, ...
    L = labels(lang)
    numbers = evidence_numbers(report)
    # First the answer as a manager reads it ...
    out = _header(report, L, lang)
    if layout.last_recorded:  # the charts and table below are not the answer's own: said before them
        out += [f"_{layout.last_recorded}_", ""]
    out += _figures(report, L, numbers, range(layout.body_figures))
    out += _results(layout, L)
    out += _caveats(report, layout, L)
    # ... then everything behind it, under a heading no reader can miss
    out += ["---", "", f"## {L['appendix']}", "", f"_{L['appendix_intro']}_", ""]
    out += _evidence(report, L, lang, numbers)
    rest = range(layout.body_figures, len(report.get("figures") or []))
    if rest:
        out += [f"### {L['other_figures'] if layout.body_figures else L['figures']}", ""]
    out += _figures(report, L, numbers, rest)
    out += _how(report, L, lang)
    return neutralize_markdown("\n".join(out).rstrip()) + "\n"


def _md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _header(report: dict[str, Any], L: dict[str, str], lang: str) -> list[str]:
    meta = meta_items(report, L, lang, dataset_prefix=f"{L['datasets']}: ")
    return [
        f"# {L['title']}",
        "",
        f"**{L['question']}:** {report.get('question', '')}",
        "",
        f"_{' · '.join(meta)}_",
        "",
        f"## {L['answer']}",
        "",
        (report.get("answer") or "").strip(),
        "",
        *_reading(report, L),
    ]


def _reading(report: dict[str, Any], L: dict[str, str]) -> list[str]:
    """The reading's mark under the answer: named by the question, or assumed (and what)."""
    mark = reading_mark(report, L)
    if mark is None:
        return []
    _, text, unsaid = mark
    return [f"_{text}_" + "".join(f" {neutralize_markdown(a)}" for a in unsaid), ""]


def _results(layout: FirstPages, L: dict[str, str]) -> list[str]:
    """The answer's result as a small table, then how sure it is, in one line."""
    out: list[str] = []
    if layout.results:
        out += [f"### {L['results']}", ""]
        for rows in layout.results:
            out += ["| " + " | ".join(_md_cell(c) for c in rows[0]) + " |", "|" + "---|" * len(rows[0])]
            out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows[1:]] + [""]
        if layout.results_note:
            out += [f"_{layout.results_note}_", ""]
    if layout.how_sure:
        out += [f"**{L['how_sure']}:** {layout.how_sure}", ""]
    return out


def _caveats(report: dict[str, Any], layout: FirstPages, L: dict[str, str]) -> list[str]:
    out: list[str] = []
    if report.get("unverified_numbers"):
        out += [
            f"> **{L['unverified_title']}:** {L['unverified_text']}",
            "> " + ", ".join(f"`{n}`" for n in report["unverified_numbers"]),
            "",
        ]
    if report.get("warnings"):
        out += [f"### {L['warnings']}", ""] + [f"- {w}" for w in report["warnings"]] + [""]
    if layout.caveats:
        out += [f"### {L['caveats']}", ""] + [f"- {x}" for x in layout.caveats] + [""]
    return out


def _evidence(report: dict[str, Any], L: dict[str, str], lang: str, numbers: dict[str, int]) -> list[str]:
    out = [f"### {L['evidence']}", ""]
    if not report.get("evidence"):
        out += [L["no_evidence"], ""]
    figures_by_evidence = figure_numbers_by_evidence(report.get("figures", []))
    for item in report.get("evidence", []):
        out += _evidence_item(item, L, lang, numbers, figures_by_evidence.get(item["id"], []))
    return out


def _evidence_item(
    item: dict[str, Any], L: dict[str, str], lang: str, numbers: dict[str, int], figure_numbers: list[int]
) -> list[str]:
    out = [
        f"#### E{numbers[item['id']]}. {item.get('claim', '')}",
        "",
        f"- **{L['confidence']}:** {label(item.get('confidence', 'medium'), lang)}",
        f"- **{L['method']}:** {item.get('method', '')}",
    ]
    if item.get("result_summary"):
        out.append(f"- **{L['result']}:** {item['result_summary']}")
    if item.get("sample_size") is not None:
        out.append(f"- **{L['sample_size']}:** {item['sample_size']}")
    if item.get("limitations"):
        out.append(f"- **{L['limitations']}:** " + "; ".join(item["limitations"]))
    out.append(f"- **{L['based_on']}:** " + ", ".join(f"`{c}`" for c in item.get("tool_call_ids", [])))
    if figure_numbers:
        out.append(f"- **{L['figures']}:** " + ", ".join(f"{L['figure']} {n}" for n in figure_numbers))
    out.append("")
    if item.get("metrics"):
        out += [f"| {L['metric']} | {L['value']} |", "|---|---|"]
        out += [f"| {_md_cell(k)} | {_md_cell(format_value(v))} |" for k, v in item["metrics"].items()]
        out.append("")
    return out


def _figures(report: dict[str, Any], L: dict[str, str], numbers: dict[str, int], which: range) -> list[str]:
    """The figures numbered in `which` (0-based positions in the report's figures)."""
    out: list[str] = []
    figures = report.get("figures") or []
    for index in which:
        figure, n = figures[index], index + 1
        caption = figure.get("caption") or ""
        out += [
            f"![{L['figure']} {n}: {caption}]({figure.get('path', '')})",
            "",
            f"*{L['figure']} {n}. {caption}*" + supports_suffix(figure, L, numbers),
            "",
        ]
    return out


def _how(report: dict[str, Any], L: dict[str, str], lang: str) -> list[str]:
    out = [f"### {L['how']}", ""]
    facts = plan_facts(report, L)
    if facts:
        out += [f"#### {L['analysis_plan']}", ""] + [f"- **{k}:** {v}" for k, v in facts] + [""]
    guidance = guidance_facts(report, L)
    if guidance:
        out += [f"#### {L['guidance']}", "", L["guidance_note"], ""] + [f"- **{k}:** {v}" for k, v in guidance] + [""]
    checks = verification_summary(report, L)
    if checks:
        text, rows = checks
        out += [f"#### {L['verification']}", "", text, ""]
        if rows:
            out += ["| " + " | ".join(rows[0]) + " |", "|---|---|---|"]
            out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows[1:]] + [""]
    reproduced = reproduction_summary(report, lang)
    if reproduced:
        out += [f"#### {reproduced[0]}", "", reproduced[1], ""]
    if report.get("method_notes"):
        out += [f"**{L['methods_used']}:** " + "; ".join(report["method_notes"]), ""]
    if report.get("tools_used"):
        out += [f"**{L['tools_used']}:** " + ", ".join(f"`{t}`" for t in report["tools_used"]), ""]
    out += [f"#### {L['plan']}", ""]
    if report.get("tasks"):
        for task in report["tasks"]:
            mark = "x" if task.get("status") == "completed" else " "
            out.append(f"- [{mark}] {task.get('subject', '')} — {task_status(task, lang)}")
    else:
        out.append(L["no_plan"])
    out.append("")
    if report.get("tool_calls"):
        out += [
            f"#### {L['tool_calls']}",
            "",
            f"| {L['id']} | {L['tool']} | {L['arguments']} | {L['status']} | {L['duration']} |",
            "|---|---|---|---|---|",
        ]
        for call in report["tool_calls"]:
            out.append(
                f"| `{call['id']}` | {call['tool']} | {_md_cell(args_text(call.get('arguments', {})))} | "
                f"{L['ok'] if call.get('ok') else L['failed']} | {format_value(call.get('duration_ms'))} |"
            )
        out.append("")
    return out
