"""report.json as a PDF (reportlab, imported only when a PDF is written)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from app.reports.first_pages import FirstPages, caveat_text, first_pages
from app.reports.i18n import label, labels
from app.reports.pdf_fonts import pdf_fallback, pdf_font, pdf_inline
from app.reports.report_parts import (
    CONFIDENCE_COLOURS,
    evidence_facts,
    evidence_numbers,
    figure_caption,
    figure_file,
    figure_numbers_by_evidence,
    guidance_facts,
    in_sheet_words,
    meta_items,
    metric_rows,
    paper_size,
    plan_facts,
    reading_mark,
    report_language,
    reproduction_summary,
    task_rows,
    tool_call_rows,
    verification_summary,
)
from app.reports.text_blocks import markdown_blocks

_MUTED = "#5b6475"


def to_pdf(report: dict[str, Any], path: str | Path, base_dir: str | Path | None = None) -> Path:
    try:
        from reportlab.lib.units import cm, mm
        from reportlab.platypus import SimpleDocTemplate
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise RuntimeError("PDF export needs the reportlab package (pip install reportlab).") from exc

    lang = report_language(report)
    report = in_sheet_words(report)  # metric names in the sheet's words
    layout = first_pages(report)
    report = layout.with_figures_in_order(report)  # the answer's charts are figures 1, 2, ...
    L = labels(lang)
    numbers = evidence_numbers(report)
    page = tuple(side * mm for side in paper_size(report))
    story = _Story(lang, page_width=page[0])
    base = Path(base_dir) if base_dir is not None else Path(path).parent
    # First the answer as a manager reads it (one or two pages) ...
    _add_header(story, report, L, lang)
    _add_answer(story, report, L)
    if layout.last_recorded:  # the charts and table below are not the answer's own: said before them
        story.para(layout.last_recorded, story.small)
    _add_figures(story, report, L, numbers, base, range(layout.body_figures), max_height=7 * cm)
    _add_results(story, layout, L)
    _add_caveats(story, report, layout, L)
    # ... then, on a page of its own, everything behind it
    _add_appendix_heading(story, L)
    _add_evidence(story, report, L, lang, numbers)
    rest = range(layout.body_figures, len(report.get("figures") or []))
    if rest:
        story.para(L["other_figures"] if layout.body_figures else L["figures"], story.h[1])
    _add_figures(story, report, L, numbers, base, rest, max_height=7 * cm)
    _add_how(story, report, L, lang)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = SimpleDocTemplate(
        str(path),
        pagesize=page,
        leftMargin=2 * cm,
        rightMargin=2 * cm,
        topMargin=1.8 * cm,
        bottomMargin=1.8 * cm,
        title=L["title"],
        author="Verity",
    )
    doc.build(story.flowables)
    return path


class _Story:
    """The PDF's flowables with the paragraph styles they are set in."""

    def __init__(self, lang: str, page_width: float) -> None:
        from reportlab.lib import colors
        from reportlab.lib.enums import TA_CENTER
        from reportlab.lib.styles import getSampleStyleSheet
        from reportlab.lib.units import cm

        self.font = pdf_font()
        self.wrap = "CJK" if lang == "zh" else None  # Chinese breaks between characters; English between words
        self.sheet = getSampleStyleSheet()
        self.body = self._style("VBody", "BodyText", fontSize=10, leading=14)
        self.small = self._style("VSmall", "BodyText", fontSize=8, leading=11, textColor=colors.HexColor(_MUTED))
        self.cell = self._style("VCell", "BodyText", fontSize=8, leading=10)
        self.caption = self._style(
            "VCaption", "BodyText", fontSize=9, leading=12, alignment=TA_CENTER, textColor=colors.HexColor(_MUTED)
        )
        self.h = {
            0: self._style("VTitle", "Title", fontSize=20, leading=24),
            1: self._style("VH1", "Heading1", fontSize=15, leading=19),
            2: self._style("VH2", "Heading2", fontSize=12.5, leading=16),
            3: self._style("VH3", "Heading3", fontSize=11, leading=14),
        }
        self.caveat = self._style(
            "VCaveat",
            "BodyText",
            fontSize=10,
            leading=14,
            backColor=colors.HexColor("#fff8e1"),
            borderColor=colors.HexColor("#e0a800"),
            borderWidth=0.8,
            borderPadding=6,
        )
        self.width = page_width - 4 * cm
        self.flowables: list[Any] = []

    def _style(self, name: str, parent: str, **kw: Any):
        from reportlab.lib.styles import ParagraphStyle

        extra = {"wordWrap": self.wrap} if self.wrap else {}
        return ParagraphStyle(name, parent=self.sheet[parent], fontName=self.font, **extra, **kw)

    def para(self, text: str, style=None, markup: bool = False) -> None:
        from reportlab.platypus import Paragraph

        self.flowables.append(
            Paragraph(pdf_fallback(text if markup else html.escape(str(text), quote=False)), style or self.body)
        )

    def labelled(self, key: str, value: str) -> None:
        """'key: value' with the key in bold; both escaped."""
        self.para(f"<b>{html.escape(key)}:</b> " + html.escape(value, quote=False), markup=True)

    def bullet(self, text: str) -> None:
        self.para("· " + html.escape(text, quote=False), markup=True)

    def space(self, height: float) -> None:
        from reportlab.platypus import Spacer

        self.flowables.append(Spacer(1, height))

    def table(self, rows: list[list[str]], col_widths: list[float] | None = None) -> None:
        from reportlab.lib import colors
        from reportlab.platypus import Paragraph, Table, TableStyle

        if not rows:
            return
        n = max(len(r) for r in rows)
        data = [
            [Paragraph(pdf_fallback(pdf_inline(r[c])) if c < len(r) else "", self.cell) for c in range(n)] for r in rows
        ]
        # splitInRow: a row taller than a page (a tool call's long arguments on a million-row table)
        # continues on the next page instead of stopping the whole PDF with a LayoutError
        t = Table(data, colWidths=col_widths or [self.width / n] * n, repeatRows=1, splitInRow=1)
        t.setStyle(
            TableStyle(
                [
                    ("GRID", (0, 0), (-1, -1), 0.4, colors.HexColor("#c9ced6")),
                    ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#f0f2f5")),
                    ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ]
            )
        )
        self.flowables.append(t)
        self.space(6)

    def image(self, file: Path, max_height: float) -> None:
        from reportlab.lib.utils import ImageReader
        from reportlab.platypus import Image

        w, hgt = ImageReader(str(file)).getSize()
        scale = min(self.width / w, max_height / hgt, 1.0 if w < self.width else self.width / w)
        self.flowables.append(Image(str(file), width=w * scale, height=hgt * scale))


def _add_header(story: _Story, report: dict[str, Any], L: dict[str, str], lang: str) -> None:
    story.para(L["title"], story.h[0])
    story.para(
        f"<b>{html.escape(L['question'])}:</b> {html.escape(report.get('question', ''), quote=False)}", markup=True
    )
    story.para(" · ".join(meta_items(report, L, lang)), story.small)


def _add_answer(story: _Story, report: dict[str, Any], L: dict[str, str]) -> None:
    story.para(L["answer"], story.h[1])
    for kind, value in markdown_blocks(report.get("answer", "")):
        if kind == "heading":
            story.para(pdf_inline(value[1]), story.h[min(value[0] + 1, 3)], markup=True)
        elif kind == "bullet":
            story.para("· " + pdf_inline(value), markup=True)
        elif kind == "numbered":
            story.para(f"{value[0]}. " + pdf_inline(value[1]), markup=True)
        elif kind == "table":
            story.table(value)
        elif kind == "code":
            story.para(html.escape(value).replace("\n", "<br/>"), story.small, markup=True)
        else:
            story.para(pdf_inline(value), markup=True)
    if mark := reading_mark(report, L):  # the reading's own mark, apart from the arithmetic's check
        story.para(" ".join([f"<i>{html.escape(mark[1])}</i>", *(html.escape(a) for a in mark[2])]), markup=True)


def _add_results(story: _Story, layout: FirstPages, L: dict[str, str]) -> None:
    """The answer's result as a small table, then how sure it is, in one line."""
    from reportlab.platypus import KeepTogether

    if layout.results:
        start = len(story.flowables)
        story.para(L["results"], story.h[2])
        for rows in layout.results:
            story.table(rows)
        if layout.results_note:
            story.para(layout.results_note, story.small)
        story.flowables[start:] = [KeepTogether(story.flowables[start:])]  # no heading alone at a page's foot
    if layout.how_sure:
        story.para(f"<b>{html.escape(L['how_sure'])}:</b> " + html.escape(layout.how_sure, quote=False), markup=True)


def _add_caveats(story: _Story, report: dict[str, Any], layout: FirstPages, L: dict[str, str]) -> None:
    if report.get("unverified_numbers"):
        story.space(8)
        story.para(
            f"<b>{html.escape(L['unverified_title'])}:</b> {html.escape(L['unverified_text'])} <b>"
            + html.escape(", ".join(report["unverified_numbers"]))
            + "</b>",
            story.caveat,
            markup=True,
        )
        story.space(8)
    if report.get("warnings"):
        story.para(L["warnings"], story.h[2])
        for w in report["warnings"]:
            story.bullet(w)
    if layout.caveats:  # one paragraph, not a list under a heading: the first page has little room
        story.labelled(L["caveats"], caveat_text(layout.caveats, report_language(report)))


def _add_appendix_heading(story: _Story, L: dict[str, str]) -> None:
    """The appendix starts a page, under a heading no reader can miss."""
    from reportlab.platypus import PageBreak

    story.flowables.append(PageBreak())
    story.para(L["appendix"], story.h[0])
    story.para(L["appendix_intro"], story.small)


def _add_evidence(story: _Story, report: dict[str, Any], L: dict[str, str], lang: str, numbers: dict[str, int]) -> None:
    story.para(L["evidence"], story.h[1])
    if not report.get("evidence"):
        story.para(L["no_evidence"])
    figures_by_evidence = figure_numbers_by_evidence(report.get("figures", []))
    for item in report.get("evidence", []):
        conf = item.get("confidence", "medium")
        colour = CONFIDENCE_COLOURS.get(conf, CONFIDENCE_COLOURS["medium"])
        story.para(
            f"E{numbers[item['id']]}. " + html.escape(item.get("claim", ""), quote=False), story.h[2], markup=True
        )
        story.para(
            f"<b>{html.escape(L['confidence'])}:</b> <font color='{colour}'><b>{html.escape(label(conf, lang))}"
            f"</b></font>",
            markup=True,
        )
        for key, value in evidence_facts(item, L, figures_by_evidence.get(item["id"], [])):
            story.labelled(key, str(value))
        if item.get("metrics"):
            rows = metric_rows(item, L, pairs=2)
            story.table(rows, [story.width * share for share in (0.3, 0.2, 0.3, 0.2)][: len(rows[0])])


def _add_figures(
    story: _Story,
    report: dict[str, Any],
    L: dict[str, str],
    numbers: dict[str, int],
    base: Path,
    which: range,
    max_height: float,
) -> None:
    """The figures numbered in `which` (0-based positions in the report's figures)."""
    figures = report.get("figures") or []
    for index in which:
        figure, n = figures[index], index + 1
        file = figure_file(figure.get("path", ""), base)
        if file is not None:
            try:
                story.image(file, max_height)
            except Exception:  # an unreadable image must not lose the report
                story.para(str(figure.get("path")), story.small)
        story.para(figure_caption(figure, n, L, numbers), story.caption)
        story.space(8)


def _add_how(story: _Story, report: dict[str, Any], L: dict[str, str], lang: str) -> None:
    story.para(L["how"], story.h[1])
    facts = plan_facts(report, L)
    if facts:
        story.para(L["analysis_plan"], story.h[2])
        for key, value in facts:
            story.labelled(key, value)
    guidance = guidance_facts(report, L)
    if guidance:
        story.para(L["guidance"], story.h[2])
        story.para(L["guidance_note"])
        for key, value in guidance:
            story.labelled(key, value)
    checks = verification_summary(report, L)
    if checks:
        story.para(L["verification"], story.h[2])
        story.para(checks[0])
        if checks[1]:
            story.table(checks[1], [story.width * 0.6, story.width * 0.2, story.width * 0.2])
    reproduced = reproduction_summary(report, lang)
    if reproduced:
        story.para(reproduced[0], story.h[2])
        story.para(reproduced[1])
    if report.get("method_notes"):
        story.labelled(L["methods_used"], "; ".join(report["method_notes"]))
    if report.get("tools_used"):
        story.labelled(L["tools_used"], ", ".join(report["tools_used"]))
    story.para(L["plan"], story.h[2])
    width = story.width
    if report.get("tasks"):
        story.table(task_rows(report, L, lang), [width * 0.08, width * 0.62, width * 0.3])
    else:
        story.para(L["no_plan"])
    if report.get("tool_calls"):
        story.para(L["tool_calls"], story.h[2])
        story.table(tool_call_rows(report, L), [width * 0.18, width * 0.2, width * 0.38, width * 0.1, width * 0.14])
