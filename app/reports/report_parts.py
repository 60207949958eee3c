"""Pieces of a report that every rendering (Markdown, HTML, Word, PDF) words the same way.

Keeping them here means the four formats cannot drift apart on what a fact, caption or table row says.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.reports.i18n import label
from app.translations import CATALOG
from app.understanding import NO_FILTER

CONFIDENCE_COLOURS = {"high": "#1e7b3a", "medium": "#b26a00", "low": "#b3261e"}


def report_language(report: dict[str, Any]) -> str:
    return "zh" if report.get("language") == "zh" else "en"


# Width and height in millimetres. Every format of one report is on the same paper (issue 28).
PAPER_MM = {"A4": (210.0, 297.0), "Letter": (215.9, 279.4)}


def paper_size(report: dict[str, Any]) -> tuple[float, float]:
    """The report's paper: `paper` when the report names one, else by its language — A4 for Chinese
    (China's standard), Letter for English (Verity's English is US English; its dates and words too)."""
    named = str(report.get("paper") or "")
    return PAPER_MM.get(named) or PAPER_MM["A4" if report_language(report) == "zh" else "Letter"]


def in_sheet_words(report: dict[str, Any]) -> dict[str, Any]:
    """The report as its renderings show it: the names of the evidence's metrics with a yes/no group in the
    sheet's own words ("n.否", not "n.False") and dates as people write them, as the answer does
    (app/analyst/sheet_words.py). The stored report keeps the tools' own keys."""
    from app.analyst import as_people_write, shared_grain  # the analyst's module: only once a report is drawn

    words = {
        str(c.get("name")): dict(c["words"])
        for d in report.get("datasets") or []
        for c in d.get("columns") or []
        if isinstance(c, dict) and c.get("words")
    }
    zh = report_language(report) == "zh"
    grain = shared_grain(d for d in report.get("datasets") or [] if isinstance(d, dict))

    def shown(value: Any) -> Any:  # a date label among the numbers ("rank.1.label": "2024-12-01 00:00:00")
        return as_people_write(value, zh, words, None, grain) if isinstance(value, str) else value

    def worded(text: str) -> str:
        return as_people_write(text, zh, words, None, grain)

    evidence = [
        {
            **item,
            "metrics": {metric_name_shown(str(k), worded): shown(v) for k, v in item["metrics"].items()},
            TOOLS_ROW_LABELS: tools_row_labels(item["metrics"], worded),
        }
        if isinstance(item.get("metrics"), dict)
        else item
        for item in report.get("evidence") or []
    ]
    return {**report, "evidence": evidence}


# An evidence item's rows as the tool labelled them, by the label shown ({"2024年3月": "2024-03"}): what a
# table of calendar periods is put in time order by (app.analyst.in_time_order), never the shown words.
TOOLS_ROW_LABELS = "tools_row_labels"


def tools_row_labels(metrics: Mapping[str, Any], shown: Callable[[str], str]) -> dict[str, str]:
    """Each row of `stat.row` metrics as shown (`shown`, as metric_name_shown words it) → the tool's own label."""
    rows = (str(key).partition(".")[2] for key in metrics)
    return {shown(row): row for row in rows if row}


def metric_name_shown(name: str, shown: Callable[[str], str]) -> str:
    """A metric's name with its row worded as the answer words it: "forecast.2025-01" → "forecast.2025年1月"
    / "forecast.Jan 2025", "mean.2024-03-05" → "mean.5 Mar 2024". The row after the first dot is worded on
    its own (as_people_write leaves a date glued to "forecast." alone: it would be part of a longer code)."""
    stat, dot, row = name.partition(".")
    return shown(stat) + dot + shown(row) if dot else shown(name)


def format_value(value: Any) -> str:
    """Numbers as a reader wants them: 4 significant digits for floats, separators for ints."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "—"
        if value == int(value) and abs(value) < 1e15:
            return format_value(int(value))
        if abs(value) >= 1e5 or abs(value) < 1e-3:
            return f"{value:.3g}"
        return f"{value:.4g}"
    if value is None:
        return "—"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def args_text(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in (arguments or {}).items())


def figure_file(path: str, base_dir: Path | None) -> Path | None:
    """The figure's image on disk (relative paths resolved against base_dir), or None when it is gone."""
    if not path:
        return None
    candidate = Path(path)
    if not candidate.is_absolute() and base_dir is not None:
        candidate = Path(base_dir) / candidate
    return candidate if candidate.is_file() else None


def evidence_numbers(report: dict[str, Any]) -> dict[str, int]:
    return {item["id"]: n for n, item in enumerate(report.get("evidence", []), start=1)}


def figure_numbers_by_evidence(figures: list[dict[str, Any]]) -> dict[str, list[int]]:
    """Evidence id -> the 1-based numbers of the figures that support it."""
    numbers: dict[str, list[int]] = {}
    for n, figure in enumerate(figures, start=1):
        if figure.get("evidence_id"):
            numbers.setdefault(figure["evidence_id"], []).append(n)
    return numbers


def task_status(task: dict[str, Any], language: str) -> str:
    text = label(task.get("status") or "pending", language)
    if task.get("status") == "completed" and task.get("completed_by") in ("evidence", "model"):
        text += f" ({label('completed_by_' + task['completed_by'], language)})"
    return text


def model_text(report: dict[str, Any], language: str) -> str:
    model = report.get("model") or {}
    if model.get("kind") == "builtin":
        return label("builtin", language)
    return f"{model.get('name', '')} ({model.get('kind', '')})"


def readable_time(iso: str) -> str:
    """report.json's ISO timestamp as people read it: '2024-05-01 12:00 UTC' (the text itself if it
    is not a timestamp, so a hand-edited report still renders)."""
    try:
        moment = datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        return str(iso)
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M") + (" UTC" if moment.tzinfo is not None else "")


def meta_items(report: dict[str, Any], L: dict[str, str], language: str, dataset_prefix: str = "") -> list[str]:
    """Model, generation time and datasets: the small print under the question."""
    meta = [f"{L['model']}: {model_text(report, language)}"]
    if report.get("created_at"):
        meta.append(f"{L['generated']}: {readable_time(report['created_at'])}")
    for dataset in report.get("datasets", []):
        sheet = f" [{dataset['sheet']}]" if dataset.get("sheet") else ""
        meta.append(f"{dataset_prefix}{dataset.get('file')}{sheet}, {dataset.get('rows')} {L['rows_unit']}")
    return meta


def evidence_facts(item: dict[str, Any], L: dict[str, str], figure_numbers: list[int]) -> list[tuple[str, str]]:
    """(label, text) lines describing one evidence item, as Word and PDF list them."""
    facts = [(L["method"], item.get("method") or "—")]
    if item.get("result_summary"):
        facts.append((L["result"], item["result_summary"]))
    facts.append((L["sample_size"], format_value(item.get("sample_size"))))
    if item.get("limitations"):
        facts.append((L["limitations"], "; ".join(item["limitations"])))
    facts.append((L["based_on"], ", ".join(item.get("tool_call_ids", []))))
    if figure_numbers:
        facts.append((L["figures"], ", ".join(f"{L['figure']} {n}" for n in figure_numbers)))
    return facts


def metric_rows(item: dict[str, Any], L: dict[str, str], pairs: int = 1) -> list[list[str]]:
    """The evidence's metrics as a table (header first), `pairs` measure/value pairs to a row: two pairs
    halve the length of the appendix's long tables (a correlation matrix, a forecast's periods)."""
    cells = [[str(k), format_value(v)] for k, v in item["metrics"].items()]
    pairs = max(1, min(pairs, len(cells)))
    rows = [sum(cells[n : n + pairs], []) for n in range(0, len(cells), pairs)]
    return [[L["metric"], L["value"]] * pairs] + rows


def supports_suffix(figure: dict[str, Any], L: dict[str, str], numbers: dict[str, int]) -> str:
    """' — Supports E2' when the figure backs an evidence item, else ''."""
    if figure.get("evidence_id") in numbers:
        return f" — {L['supports']} E{numbers[figure['evidence_id']]}"
    return ""


def figure_caption(figure: dict[str, Any], n: int, L: dict[str, str], numbers: dict[str, int]) -> str:
    return f"{L['figure']} {n}. {figure.get('caption', '')}" + supports_suffix(figure, L, numbers)


def task_rows(report: dict[str, Any], L: dict[str, str], language: str) -> list[list[str]]:
    """The plan as a table (header first)."""
    return [["#", L["task"], L["status"]]] + [
        [str(n), t.get("subject", ""), task_status(t, language)] for n, t in enumerate(report["tasks"], start=1)
    ]


def tool_call_rows(report: dict[str, Any], L: dict[str, str]) -> list[list[str]]:
    """The tool calls as a table (header first)."""
    return [[L["id"], L["tool"], L["arguments"], L["status"], L["duration"]]] + [
        [
            c["id"],
            c.get("tool", ""),
            args_text(c.get("arguments", {})),
            L["ok"] if c.get("ok") else L["failed"],
            format_value(c.get("duration_ms")),
        ]
        for c in report["tool_calls"]
    ]


def plan_facts(report: dict[str, Any], L: dict[str, str]) -> list[tuple[str, str]]:
    """The recorded analysis plan as (label, text) pairs; empty when none was recorded."""
    plan = report.get("analysis_plan") or {}
    if not plan:
        return []
    kind = str(plan.get("question_type") or "")
    facts = [(L["goal"], str(plan.get("goal") or "")), (L["question_type"], L.get(f"question_type_{kind}", kind))]
    for key, name in (("metrics", "plan_metrics"), ("dimensions", "plan_dimensions")):
        if plan.get(key):
            facts.append((L[name], ", ".join(map(str, plan[key]))))
    if plan.get("method_plan"):
        facts.append((L["method_plan"], "; ".join(f"{n}. {m}" for n, m in enumerate(plan["method_plan"], start=1))))
    if plan.get("limitations"):
        facts.append((L["plan_limitations"], "; ".join(map(str, plan["limitations"]))))
    return facts


def verification_summary(report: dict[str, Any], L: dict[str, str]) -> tuple[str, list[list[str]]] | None:
    """What the claim checks found, and the hypotheses as a table (header first); None when the
    checks did not run."""
    check = report.get("verification") or {}
    if check.get("status") not in ("passed", "failed", "partly_verified"):
        return None
    text = L[f"verification_{check['status']}"]
    rows = [[L["hypotheses"], "", L["status"]]] + [
        [
            str(h.get("statement") or ""),
            L.get(h.get("role"), h.get("role") or ""),
            L.get(h.get("status"), h.get("status") or ""),
        ]
        for h in check.get("hypotheses") or []
    ]
    return text, rows if len(rows) > 1 else []


def reproduction_summary(report: dict[str, Any], language: str) -> tuple[str, str, bool] | None:
    """(heading, sentence, passed) from the recorded run of analysis.py; None when it did not run
    (the report then says nothing about reproduction)."""
    check = report.get("reproduction") or {}
    if check.get("status") == "passed" and check.get("matched"):
        return label("reproduction", language), label("reproduction_passed", language).format(n=check["matched"]), True
    if check.get("status") == "failed":
        bad = int(check.get("differing") or 0)
        text = label("reproduction_failed", language).format(
            bad=bad, total=bad + int(check.get("matched") or 0), failures=int(check.get("failed_calls") or 0)
        )
        return label("reproduction_title_failed", language), text, False
    return None


def guidance_facts(report: dict[str, Any], L: dict[str, str]) -> list[tuple[str, str]]:
    """What the analysis was told besides the data, as (label, text) pairs: each workspace rule,
    confirmed definition, reference passage and earlier finding; empty when there was none."""
    guidance = report.get("guidance") or {}
    facts = [(L["guidance_rule"], rule) for rule in guidance.get("rules") or []]
    facts += [(L["guidance_definition"], d) for d in guidance.get("definitions") or []]
    stale = (f"[{label('stale_finding', 'en')}]", f"[{L['stale_finding']}]")
    for key, name in (("knowledge", "guidance_knowledge"), ("memory", "guidance_memory")):
        facts += [
            (f"{L[name]} ({item.get('source', '')})", str(item.get("text") or "").replace(*stale))
            for item in guidance.get(key) or []
        ]
    return facts


def reading_mark(report: dict[str, Any], L: dict[str, str]) -> tuple[str, str, list[str]] | None:
    """The reading's own mark (issue 24), apart from the arithmetic's check: (status, its label, what was
    assumed that the answer does not already say); None when the run did not record its reading."""
    reading = report.get("reading")
    if not isinstance(reading, dict) or reading.get("status") not in ("named", "assumed"):
        return None
    status = str(reading["status"])
    answer = str(report.get("answer") or "")
    unsaid = [str(a) for a in reading.get("assumed") or [] if str(a) not in answer]
    read_as = str(reading.get("read_as") or "")
    if read_as and read_as not in answer:
        unsaid.insert(0, read_as)
    if roles := reading_roles(reading, str(report.get("language") or "en")):
        unsaid.append(roles)
    return status, L[f"reading_{status}"], unsaid


def reading_roles(reading: dict[str, Any], language: str) -> str:
    """The roles of the reading in one line, as the page's chips show them ("Measure: 销售额 (your
    choice) · Groups: 门店 · Answer: total"); "" when the run recorded none."""

    def word(key: str) -> str:
        entry = CATALOG.get(key) or {}
        return entry.get(language) or entry.get("en") or key

    parts = []
    for role in reading.get("roles") or []:
        if not isinstance(role, dict) or not role.get("value"):
            continue
        value = word(f"reading_kind_{role['value']}") if role.get("role") == "kind" else str(role["value"])
        if role.get("role") == "filter" and role.get("value") == NO_FILTER:  # the user chose to keep every row
            value = word("reading_no_filter")
        how = f" ({word('reading_how_' + role['how'])})" if role.get("how") in ("assumed", "answer") else ""
        parts.append(f"{word('reading_role_' + str(role.get('role')))}{'：' if language == 'zh' else ': '}{value}{how}")
    return " · ".join(parts)
