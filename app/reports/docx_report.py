"""report.json as a Word document (python-docx, imported only when a document is written)."""

from __future__ import annotations

from copy import deepcopy
from pathlib import Path
from typing import Any

from app.reports.first_pages import FirstPages, caveat_text, first_pages
from app.reports.i18n import label, labels
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
from app.reports.text_blocks import inline_runs, markdown_blocks

_STYLES_WITH_CJK = ("Normal", "Title", "Heading 1", "Heading 2", "Heading 3", "List Bullet", "List Number")
_MUTED = "5B6475"
_CAVEAT = "B26A00"


def to_docx(report: dict[str, Any], path: str | Path, base_dir: str | Path | None = None) -> Path:
    _require_python_docx()
    lang = report_language(report)
    report = in_sheet_words(report)  # metric names in the sheet's words
    layout = first_pages(report)
    report = layout.with_figures_in_order(report)  # the answer's charts are figures 1, 2, ...
    L = labels(lang)
    numbers = evidence_numbers(report)
    doc = _new_document(paper_size(report))
    base = Path(base_dir) if base_dir is not None else Path(path).parent
    # First the answer as a manager reads it (one or two pages) ...
    _add_header(doc, report, L, lang)
    doc.add_heading(L["answer"], level=1)
    _add_markdown(doc, report.get("answer", ""))
    if mark := reading_mark(report, L):  # the reading's own mark, apart from the arithmetic's check
        doc.add_paragraph().add_run(" ".join([mark[1], *mark[2]])).italic = True
    if layout.last_recorded:  # the charts and table below are not the answer's own: said before them
        _coloured(doc.add_paragraph().add_run(layout.last_recorded), _MUTED)
    _add_figures(doc, report, L, numbers, base, range(layout.body_figures), width_cm=14)
    _add_results(doc, layout, L)
    _add_caveats(doc, report, layout, L)
    # ... then, on a page of its own, everything behind it
    doc.add_page_break()
    doc.add_heading(L["appendix"], level=0)
    _coloured(doc.add_paragraph().add_run(L["appendix_intro"]), _MUTED)
    _add_evidence(doc, report, L, lang, numbers)
    rest = range(layout.body_figures, len(report.get("figures") or []))
    if rest:
        doc.add_heading(L["other_figures"] if layout.body_figures else L["figures"], level=1)
    _add_figures(doc, report, L, numbers, base, rest, width_cm=13)
    _add_how(doc, report, L, lang)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(str(path))
    return path


def _require_python_docx() -> None:
    try:
        import docx  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise RuntimeError("Word export needs the python-docx package (pip install python-docx).") from exc


def _new_document(paper_mm: tuple[float, float]) -> Any:
    from docx import Document
    from docx.oxml.ns import qn
    from docx.shared import Cm, Mm, Pt

    doc = Document()
    for section in doc.sections:  # python-docx's template is Letter: the same paper as the PDF instead
        section.page_width, section.page_height = Mm(paper_mm[0]), Mm(paper_mm[1])
        section.left_margin = section.right_margin = section.top_margin = section.bottom_margin = Cm(2)
    for style_name in _STYLES_WITH_CJK:
        try:
            style = doc.styles[style_name]
        except KeyError:
            continue
        rpr = style.element.get_or_add_rPr()
        fonts = rpr.find(qn("w:rFonts"))
        if fonts is None:
            fonts = rpr.makeelement(qn("w:rFonts"), {})
            rpr.append(fonts)
        fonts.set(qn("w:eastAsia"), "SimHei")  # Chinese text; Word falls back when it is not installed
    doc.styles["Normal"].font.size = Pt(10.5)
    return doc


def _coloured(run: Any, hex_colour: str) -> Any:
    from docx.shared import RGBColor

    run.font.color.rgb = RGBColor.from_string(hex_colour.upper())
    return run


def _add_runs(paragraph: Any, text: str) -> None:
    for style, chunk in inline_runs(text):
        _run_style(paragraph.add_run(chunk), style)


def _run_style(run: Any, style: str) -> None:
    """A run of inline markdown's `style` ("b", "i", "code" or plain)."""
    run.bold = style == "b"
    run.italic = style == "i"
    if style == "code":
        run.font.name = "Consolas"


def _add_labelled(doc: Any, key: str, value: str) -> None:
    """A paragraph 'key: value' with the key in bold."""
    p = doc.add_paragraph()
    p.add_run(f"{key}: ").bold = True
    p.add_run(value)


def _add_table(doc: Any, rows: list[list[str]], header: bool = True) -> None:
    """A grid in 8.5 pt with no space around its lines, as the PDF sets its tables: the appendix's
    statistics and tool calls stay a few pages, not twenty."""
    from docx.shared import Pt

    if not rows:
        return
    width = max(len(r) for r in rows)
    table = doc.add_table(rows=len(rows), cols=width)
    table.style = "Table Grid"
    # python-docx finds where each property goes among every element the schema allows after it (about a
    # millisecond a property): a cell's paragraph and each kind of run get their properties made once,
    # by the same calls, and the next ones get a copy of the same elements
    made: dict[
        tuple[str | None, bool] | None, Any
    ] = {}  # (inline style or None: the cell's empty run, bold) -> w:rPr; None -> w:pPr
    # each row's own cells (a new table has no merged cells: one per column): table.cell(r, c) builds
    # the list of every cell of the table for each call, seconds for the appendix's long tables
    for r, (row, table_row) in enumerate(zip(rows, table.rows, strict=True)):
        bold = header and r == 0
        for c, cell in enumerate(table_row.cells):
            cell.text = ""  # one paragraph with one empty run
            paragraph = cell.paragraphs[0]
            if None in made:
                paragraph._p.insert(0, deepcopy(made[None]))
            else:
                paragraph.paragraph_format.space_before = paragraph.paragraph_format.space_after = Pt(0)
                made[None] = paragraph._p.pPr
            runs: list[tuple[str | None, Any]] = [(None, run) for run in paragraph.runs]
            runs += [(style, paragraph.add_run(chunk)) for style, chunk in inline_runs(row[c] if c < len(row) else "")]
            for style, run in runs:
                kind = (style, bold)
                if kind in made:
                    run._r.insert(0, deepcopy(made[kind]))
                    continue
                if style is not None:
                    _run_style(run, style)
                run.font.size = Pt(8.5)
                run.bold = run.bold or bold
                made[kind] = run._r.rPr
    doc.add_paragraph()


def _add_markdown(doc: Any, text: str) -> None:
    from docx.shared import Inches

    for kind, value in markdown_blocks(text):
        if kind == "heading":
            doc.add_heading(value[1], level=min(value[0] + 1, 4))
        elif kind == "bullet":
            _add_runs(doc.add_paragraph(style="List Bullet"), value)
        elif kind == "numbered":
            _add_runs(doc.add_paragraph(), f"{value[0]}. {value[1]}")
        elif kind == "table":
            _add_table(doc, value)
        elif kind == "code":
            doc.add_paragraph().add_run(value).font.name = "Consolas"
        elif kind == "quote":
            p = doc.add_paragraph()
            _add_runs(p, value)
            p.paragraph_format.left_indent = Inches(0.3)
        else:
            _add_runs(doc.add_paragraph(), value)


def _picture_size(file: Path, width_cm: float, unit: Any) -> dict[str, Any]:
    """`width_cm` wide, unless that makes the picture taller than 8 cm: a tall chart is set by its
    height, so that the answer and its chart share a page."""
    from PIL import Image

    with Image.open(file) as image:
        w, h = image.size
    if w and h * width_cm / w > 8:
        return {"height": unit(8)}
    return {"width": unit(width_cm)}


def _add_header(doc: Any, report: dict[str, Any], L: dict[str, str], lang: str) -> None:
    from docx.shared import Pt

    doc.add_heading(L["title"], level=0)
    _add_labelled(doc, L["question"], report.get("question", ""))
    small = _coloured(doc.add_paragraph().add_run(" · ".join(meta_items(report, L, lang))), _MUTED)
    small.font.size = Pt(9)


def _add_results(doc: Any, layout: FirstPages, L: dict[str, str]) -> None:
    """The answer's result as a small table, then how sure it is, in one line."""
    if layout.results:
        doc.add_heading(L["results"], level=2)
        for rows in layout.results:
            _add_table(doc, rows)
        if layout.results_note:
            _coloured(doc.add_paragraph().add_run(layout.results_note), _MUTED)
    if layout.how_sure:
        _add_labelled(doc, L["how_sure"], layout.how_sure)


def _add_caveats(doc: Any, report: dict[str, Any], layout: FirstPages, L: dict[str, str]) -> None:
    if report.get("unverified_numbers"):
        doc.add_heading(L["unverified_title"], level=2)
        p = doc.add_paragraph(L["unverified_text"] + " ")
        _coloured(p.add_run(", ".join(report["unverified_numbers"])), _CAVEAT).bold = True
    if report.get("warnings"):
        doc.add_heading(L["warnings"], level=2)
        for w in report["warnings"]:
            doc.add_paragraph(w, style="List Bullet")
    if layout.caveats:  # one paragraph, not a list under a heading: the first page has little room
        _add_labelled(doc, L["caveats"], caveat_text(layout.caveats, report_language(report)))


def _add_evidence(doc: Any, report: dict[str, Any], L: dict[str, str], lang: str, numbers: dict[str, int]) -> None:
    doc.add_heading(L["evidence"], level=1)
    if not report.get("evidence"):
        doc.add_paragraph(L["no_evidence"])
    figures_by_evidence = figure_numbers_by_evidence(report.get("figures", []))
    for item in report.get("evidence", []):
        doc.add_heading(f"E{numbers[item['id']]}. {item.get('claim', '')}", level=2)
        conf = item.get("confidence", "medium")
        p = doc.add_paragraph()
        p.add_run(f"{L['confidence']}: ").bold = True
        colour = CONFIDENCE_COLOURS.get(conf, CONFIDENCE_COLOURS["medium"]).lstrip("#")
        _coloured(p.add_run(label(conf, lang)), colour).bold = True
        for key, value in evidence_facts(item, L, figures_by_evidence.get(item["id"], [])):
            _add_labelled(doc, key, str(value))
        if item.get("metrics"):
            _add_table(doc, metric_rows(item, L, pairs=2))


def _add_figures(
    doc: Any,
    report: dict[str, Any],
    L: dict[str, str],
    numbers: dict[str, int],
    base: Path,
    which: range,
    width_cm: float,
) -> None:
    """The figures numbered in `which` (0-based positions in the report's figures)."""
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.shared import Cm

    figures = report.get("figures") or []
    for index in which:
        figure, n = figures[index], index + 1
        file = figure_file(figure.get("path", ""), base)
        if file is not None:
            try:
                doc.add_picture(str(file), **_picture_size(file, width_cm, Cm))
                doc.paragraphs[-1].alignment = WD_ALIGN_PARAGRAPH.CENTER
            except Exception:  # noqa: BLE001 - an unreadable image must not lose the report
                doc.add_paragraph(str(figure.get("path")))
        cap = doc.add_paragraph()
        cap.add_run(figure_caption(figure, n, L, numbers)).italic = True
        cap.alignment = WD_ALIGN_PARAGRAPH.CENTER


def _add_how(doc: Any, report: dict[str, Any], L: dict[str, str], lang: str) -> None:
    doc.add_heading(L["how"], level=1)
    facts = plan_facts(report, L)
    if facts:
        doc.add_heading(L["analysis_plan"], level=2)
        for key, value in facts:
            _add_labelled(doc, key, value)
    guidance = guidance_facts(report, L)
    if guidance:
        doc.add_heading(L["guidance"], level=2)
        doc.add_paragraph(L["guidance_note"])
        for key, value in guidance:
            _add_labelled(doc, key, value)
    checks = verification_summary(report, L)
    if checks:
        doc.add_heading(L["verification"], level=2)
        doc.add_paragraph(checks[0])
        if checks[1]:
            _add_table(doc, checks[1])
    reproduced = reproduction_summary(report, lang)
    if reproduced:
        doc.add_heading(reproduced[0], level=2)
        doc.add_paragraph(reproduced[1])
    if report.get("method_notes"):
        _add_labelled(doc, L["methods_used"], "; ".join(report["method_notes"]))
    if report.get("tools_used"):
        _add_labelled(doc, L["tools_used"], ", ".join(report["tools_used"]))
    doc.add_heading(L["plan"], level=2)
    if report.get("tasks"):
        _add_table(doc, task_rows(report, L, lang))
    else:
        doc.add_paragraph(L["no_plan"])
    if report.get("tool_calls"):
        doc.add_heading(L["tool_calls"], level=2)
        _add_table(doc, tool_call_rows(report, L))
