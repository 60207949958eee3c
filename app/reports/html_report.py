"""report.json as one self-contained HTML page (templates/report.html).

Everything that comes from data or from the model is escaped: the answer's markdown is converted
only after raw HTML in it is neutralised, and links are rebuilt with safe targets only.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader
from markupsafe import Markup

from app.reports.first_pages import first_pages
from app.reports.i18n import label, labels
from app.reports.report_parts import (
    CONFIDENCE_COLOURS,
    args_text,
    evidence_numbers,
    figure_file,
    figure_numbers_by_evidence,
    format_value,
    guidance_facts,
    in_sheet_words,
    model_text,
    readable_time,
    reading_mark,
    report_language,
    reproduction_summary,
    task_status,
)
from app.reports.safe_markdown import render_markdown

_ENV = Environment(
    loader=PackageLoader("app.reports", "templates"), autoescape=True, trim_blocks=True, lstrip_blocks=True
)
_MIME_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".svg": "image/svg+xml",
    ".gif": "image/gif",
    ".webp": "image/webp",
}


def answer_html(text: str) -> Markup:
    """The answer under the report's own h2 sections; a self-contained page loads no images."""
    return render_markdown(text, images="alt", heading_floor=3)


def _data_uri(path: Path) -> str:
    mime = _MIME_TYPES.get(path.suffix.lower(), "image/png")
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def to_html(report: dict[str, Any], base_dir: str | Path | None = None) -> str:
    """A self-contained page: inline CSS, figures as data URIs, nothing fetched from anywhere.

    Relative figure paths are resolved against `base_dir` (the folder of report.json).
    """
    lang = report_language(report)
    report = in_sheet_words(report)  # metric names in the sheet's words
    layout = first_pages(report)
    report = layout.with_figures_in_order(report)  # the answer's charts are figures 1, 2, ...
    numbers = evidence_numbers(report)
    figures = _figures(report, Path(base_dir) if base_dir is not None else None, numbers)
    return _ENV.get_template("report.html").render(
        report=report,
        L=labels(lang),
        lang=lang,
        answer=answer_html(report.get("answer", "")),
        reading=reading_mark(report, labels(lang)),
        model_text=model_text(report, lang),
        evidence=_evidence(report, lang, figures),
        figures=figures,
        body_figures=layout.body_figures,
        results=layout.results,
        results_note=layout.results_note,
        last_recorded=layout.last_recorded,
        how_sure=layout.how_sure,
        caveats=layout.caveats,
        tasks=_tasks(report, lang, numbers),
        calls=_calls(report),
        guidance=guidance_facts(report, labels(lang)),
        reproduced=reproduction_summary(report, lang),
        created=readable_time(report.get("created_at") or ""),
    )


def _figures(report: dict[str, Any], base: Path | None, numbers: dict[str, int]) -> list[dict[str, Any]]:
    figures = []
    for figure in report.get("figures", []):
        file = figure_file(figure.get("path", ""), base)
        figures.append(
            {
                **figure,
                "src": _data_uri(file) if file else None,
                "evidence_number": numbers.get(figure.get("evidence_id")),
            }
        )
    return figures


def _evidence(report: dict[str, Any], lang: str, figures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    tools = {c["id"]: c.get("tool") for c in report.get("tool_calls", [])}
    figures_by_evidence = figure_numbers_by_evidence(figures)
    evidence = []
    for item in report.get("evidence", []):
        conf = item.get("confidence") if item.get("confidence") in CONFIDENCE_COLOURS else "medium"
        evidence.append(
            {
                **item,
                "colour": CONFIDENCE_COLOURS[conf],
                "confidence_label": label(conf, lang),
                "sample_size_text": format_value(item.get("sample_size")),
                "metric_rows": [(k, format_value(v)) for k, v in (item.get("metrics") or {}).items()],
                "figures": figures_by_evidence.get(item["id"], []),
                "calls": [{"id": c, "tool": tools.get(c)} for c in item.get("tool_call_ids", [])],
            }
        )
    return evidence


def _tasks(report: dict[str, Any], lang: str, numbers: dict[str, int]) -> list[dict[str, Any]]:
    return [
        {**t, "status_text": task_status(t, lang), "evidence_number": numbers.get(t.get("evidence_id"))}
        for t in report.get("tasks", [])
    ]


def _calls(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            **c,
            "args": args_text(c.get("arguments", {})),
            "duration": format_value(c.get("duration_ms")),
            "error": (c.get("error") or {}).get("message") or (c.get("error") or {}).get("error"),
        }
        for c in report.get("tool_calls", [])
    ]
