"""Render a report.json object as Markdown, a self-contained HTML page, Word and PDF.

This module is the stable entry point; each format lives in its own module:
`markdown_report`, `html_report` (+ templates/report.html), `docx_report`, `pdf_report`, with the
wording they share in `report_parts` and the folder writer in `files`.
"""

from __future__ import annotations

from app.reports.docx_report import to_docx
from app.reports.files import portable_report, write_report_files
from app.reports.html_report import answer_html, to_html
from app.reports.markdown_report import to_markdown
from app.reports.pdf_fonts import cjk_font_path
from app.reports.pdf_report import to_pdf
from app.reports.report_parts import CONFIDENCE_COLOURS, format_value
from app.reports.text_blocks import inline_runs, markdown_blocks

__all__ = [
    "CONFIDENCE_COLOURS",
    "answer_html",
    "cjk_font_path",
    "format_value",
    "inline_runs",
    "markdown_blocks",
    "portable_report",
    "to_docx",
    "to_html",
    "to_markdown",
    "to_pdf",
    "write_report_files",
]
