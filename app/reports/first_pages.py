"""What a report's first pages hold, so that a manager reads the answer without the workings (issue 28):
the evidence that carries the headline, the charts drawn for it, its result as a small table, one "how
sure" line and the caveats. Everything else (every evidence item, its statistics, the other charts, the
plan and the tool calls) goes to the appendix; every format (Markdown, HTML, Word, PDF) asks this module,
so they cannot disagree on what comes first. report.json itself keeps everything, unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

# the choice of the answer's evidence and charts is the answer card's too (one choice, one module)
from app.reports.answer_evidence import answer_evidence, answer_figures, last_result
from app.reports.i18n import label
from app.reports.report_parts import TOOLS_ROW_LABELS, format_value, report_language, reproduction_summary
from app.understanding import in_spoken_names, tables_spoken_names

TABLE_ROWS = 12  # rows of the results table before the appendix (all of them are in the appendix)
_CONFIDENCE_ORDER = ("low", "medium", "high")
# Scalar metrics a reader follows without a statistics course, shown when a result has no per-group rows
# (a correlation's r and its interval, a regression's R²). Names follow CONTRACT.md's metric convention.
_READER_SCALARS = ("r", "r_squared", "ci_low", "ci_high", "forecast_total", "n")


@dataclass(frozen=True)
class FirstPages:
    """The layout of one report: which evidence and charts come first, and the summary lines."""

    answer_evidence: list[dict[str, Any]] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)  # every figure, the body's first
    body_figures: int = 0  # how many of `figures` come before the appendix
    results: list[list[list[str]]] = field(default_factory=list)  # small tables, header row first
    results_note: str = ""  # "first 12 of 30 rows" when a table was cut
    how_sure: str = ""
    # when the answer states none of the recorded claims, its charts and table are the last result the
    # run recorded (as on the answer card), and this says so; "" when they are the answer's own
    last_recorded: str = ""
    caveats: list[str] = field(default_factory=list)

    def with_figures_in_order(self, report: dict[str, Any]) -> dict[str, Any]:
        """The report with its figures in reading order (the body's first), so that figure numbers
        run 1, 2, ... through the body and on into the appendix."""
        return {**report, "figures": self.figures}


def first_pages(report: dict[str, Any]) -> FirstPages:
    """The layout of `report` (as its renderings show it: in_sheet_words already applied)."""
    lang = report_language(report)
    evidence = [e for e in report.get("evidence") or [] if isinstance(e, dict)]
    chosen = answer_evidence(str(report.get("answer") or ""), evidence)
    calls = {str(c.get("id")): c for c in report.get("tool_calls") or [] if isinstance(c, dict)}
    figures = [f for f in report.get("figures") or [] if isinstance(f, dict)]
    shown = chosen
    if not chosen:  # the answer states none: the card's choice, the last result recorded, said to be so
        drawn = {str(f.get("tool_call_id")) for f in figures}
        last = last_result(evidence, lambda item: bool(per_row_stats(item)), drawn)
        shown = [last] if last is not None else []
    body = answer_figures(figures, shown, evidence, calls)
    # a merged header's column by its leaf ("销售额", not "销售情况 / 销售额") in the first pages' captions
    # and table headings, as the answer names it; the appendix keeps the full path
    said = tables_spoken_names(d.get("columns") or [] for d in report.get("datasets") or [] if isinstance(d, dict))
    spoken_body = [{**f, "caption": in_spoken_names(str(f.get("caption") or ""), said)} for f in body]
    ordered = spoken_body + [f for f in figures if f not in body]
    tables: list[list[list[str]]] = []
    note = ""
    for item in shown[:2]:
        rows, total = results_table(item, calls, lang)
        rows = [[in_spoken_names(cell, said) for cell in row] for row in rows]  # its numbers name no column
        if rows:
            tables.append(rows)
            if total > len(rows) - 1:
                note = label("results_cut", lang).format(shown=len(rows) - 1, total=total)
    return FirstPages(
        answer_evidence=chosen,
        figures=ordered,
        body_figures=len(body),
        results=tables,
        results_note=note,
        how_sure=how_sure_line(report, shown, lang),
        last_recorded=(
            label("result_last_recorded", lang).format(claim=str(shown[0].get("claim") or "").strip())
            if shown and not chosen
            else ""
        ),
        caveats=[str(x) for x in report.get("limitations") or []],
    )


# --------------------------------------------------------------------------------------------
# The result as a small table
# --------------------------------------------------------------------------------------------


def _is_p_value(stat: str) -> bool:
    """p-values are the appendix's: the "how sure" line says what they mean."""
    return stat == "p_value" or stat.startswith("p_value") or stat.endswith("_p")


def stat_name(stat: str, lang: str) -> str:
    """A metric's name as a reader says it: "mean" -> "Average", "Revenue_sum" -> "Revenue (total)"."""
    if (word := label("stat." + stat, lang)) != "stat." + stat:
        return word
    head, _, tail = stat.rpartition("_")
    if head and (word := label("stat." + tail, lang)) != "stat." + tail:
        return f"{head}（{word}）" if lang == "zh" else f"{head} ({word.lower()})"
    return stat


def results_table(item: dict[str, Any], calls: dict[str, dict[str, Any]], lang: str) -> tuple[list[list[str]], int]:
    """The evidence's result as rows a manager reads (header first) and how many rows there are in all:
    per group, period or column ("mean.East", "forecast.2025-01", "Revenue.median") one row, one column
    per measure; p-values stay in the appendix. Without such rows, the few reader-facing scalars."""
    metrics = item.get("metrics") or {}
    by_stat = per_row_stats(item)
    groups: dict[frozenset[str], list[str]] = {}
    for stat, rows in by_stat.items():
        groups.setdefault(frozenset(rows), []).append(stat)
    if groups:
        row_set, stats = max(groups.items(), key=lambda kv: (len(kv[1]), len(kv[0])))
        order = [r for r in by_stat[stats[0]] if r in row_set]
        from app.analyst import in_time_order  # the analyst's module: only once a report is drawn

        # calendar periods in time order (group_aggregate lists the largest first), the grand total after them
        if (timed := in_time_order((r for r in order if r != "total"), item.get(TOOLS_ROW_LABELS))) is not None:
            order = timed + [r for r in order if r == "total"]
        header = [_row_heading(item, calls, lang)] + [stat_name(s, lang) for s in stats]
        body = [[stat_name(r, lang)] + [reader_number(by_stat[s].get(r)) for s in stats] for r in order]
        return [header] + body[:TABLE_ROWS], len(body)
    scalars = [(k, metrics[k]) for k in _READER_SCALARS if isinstance(metrics.get(k), (int, float))]
    if not scalars:
        return [], 0
    table = [[label("metric", lang), label("value", lang)]] + [
        [stat_name(k, lang), reader_number(v)] for k, v in scalars
    ]
    return table, len(scalars)


def per_row_stats(item: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The evidence's per-row metrics ("mean.East" -> {"mean": {"East": ...}}) of the measures with two
    rows or more, p-values left out: what its results table is made of."""
    by_stat: dict[str, dict[str, Any]] = {}
    for key, value in (item.get("metrics") or {}).items():
        stat, dot, row = str(key).partition(".")
        if dot and row and not _is_p_value(stat) and not isinstance(value, (dict, list)):
            by_stat.setdefault(stat, {})[row] = value
    return {stat: rows for stat, rows in by_stat.items() if len(rows) >= 2}


def reader_number(value: Any) -> str:
    """A number as a table for a manager shows it: 142,515 and 2,251,554 (not 1.43e+05), 311.4, 0.0478."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return format_value(value)
    if not math.isfinite(value):
        return "—"
    size = abs(value)
    if size >= 1000 or value == int(value):
        return f"{value:,.0f}"
    text = f"{value:.1f}" if size >= 100 else f"{value:.2f}" if size >= 1 else f"{value:.3g}"
    return text.rstrip("0").rstrip(".") if "." in text and "e" not in text else text


def _row_heading(item: dict[str, Any], calls: dict[str, dict[str, Any]], lang: str) -> str:
    """The first column's heading: the column that splits the rows (the groups, the dates), when the
    cited call names one."""
    for call_id in item.get("tool_call_ids") or []:
        arguments = (calls.get(call_id) or {}).get("arguments") or {}
        for key in ("group_column", "group_columns", "date_column", "x_column"):
            value = arguments.get(key)
            value = value[0] if isinstance(value, list) and value else value
            if isinstance(value, str) and value:
                return value
    return ""


# --------------------------------------------------------------------------------------------
# How sure, in one line
# --------------------------------------------------------------------------------------------


def _weakest(levels: Iterable[str]) -> str | None:
    known = [level for level in levels if level in _CONFIDENCE_ORDER]
    return min(known, key=_CONFIDENCE_ORDER.index) if known else None


def how_sure_line(report: dict[str, Any], chosen: list[dict[str, Any]], lang: str) -> str:
    """The answer's confidence, whether its claims matched their analyses and whether analysis.py
    re-computed them, in one sentence (the appendix says each at length); "" when none is known."""
    parts: list[str] = []
    confidence = _weakest(str(e.get("confidence") or "") for e in chosen)
    if confidence:
        parts.append(label("how_sure_confidence", lang).format(level=label(confidence, lang)))
    check = report.get("verification") or {}
    if check.get("status") == "passed":
        parts.append(label("how_sure_passed", lang))
    elif check.get("status") in ("failed", "partly_verified"):  # a failure is said in full
        parts.append(label(f"verification_{check['status']}", lang).rstrip("。."))
    reproduction = report.get("reproduction") or {}
    reproduced = reproduction_summary(report, lang)
    if reproduced and reproduced[2]:
        parts.append(label("how_sure_reproduced", lang).format(n=reproduction.get("matched")))
    elif reproduced:
        parts.append(reproduced[1].rstrip("。."))
    if not parts:
        return ""
    return ("；" if lang == "zh" else "; ").join(parts) + ("。" if lang == "zh" else ".")


def caveat_text(caveats: list[str], lang: str) -> str:
    """The caveats as one sentence-list: "Observational data ...; correlation only ..." ."""
    sep = "；" if lang == "zh" else "; "
    text = sep.join(c.strip().rstrip("。.;；") for c in caveats if c.strip())
    return text + ("。" if lang == "zh" else ".") if text else ""
