"""Reports: report.json from a real database, and its Markdown/HTML/Word/PDF/script renderings."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

from app.config import Settings
from app.db.models import Dataset, Evidence, Run, Task, ToolCall, Workspace
from app.db.session import open_database
from app.reports.builder import answer_numbers, build_report, unverified_numbers
from app.reports.render import to_docx, to_html, to_markdown, to_pdf, write_report_files
from app.reports.script import to_analysis_script

CLAIM = "East revenue is 12.3% higher than West <script>alert('x')</script>"
ANSWER = """## Summary

1. Revenue in the East is **12.3%** higher than in the West (p = 0.004, n = 240).
2. The average order is 987.6 yuan in every region.

[evidence](javascript:alert(1)) <img src="http://evil.example/x.png"> <b>raw</b>
"""


def _png(path):
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar(["East", "West"], [112.3, 100.0])
    ax.set_title("Revenue by region")
    fig.savefig(path, format="png", dpi=60)
    plt.close(fig)
    return path


def _seed(tmp_path, language="en", claim=CLAIM, answer=ANSWER):
    db = open_database(Settings(data_dir=tmp_path / "data"))
    figure = _png(tmp_path / "revenue_by_region_call_1.png")
    start = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    with db.session() as session:
        ws = Workspace(name="Sales")
        session.add(ws)
        session.flush()
        data_file = tmp_path / "sales.csv"
        rows = [f"East,{110 + i % 5}" for i in range(20)] + [f"West,{100 + i % 5}" for i in range(20)]
        data_file.write_text("region,revenue\n" + "\n".join(rows) + "\n", encoding="utf-8")
        ds = Dataset(
            workspace_id=ws.id,
            name="sales",
            file_name="sales.csv",
            format="csv",
            sheet=None,
            original_path=str(data_file),
            working_path=str(tmp_path / "w.parquet"),
            rows=240,
            info={
                "rows": 240,
                "columns": [
                    {"name": "region", "type": "category", "missing": 0},
                    {"name": "revenue", "type": "number", "missing": 3},
                ],
                "warnings": ["3 cells '—' read as missing"],
            },
        )
        run = Run(
            workspace_id=ws.id,
            question="Does revenue differ by region?",
            language=language,
            status="done",
            answer=answer,
            model_kind="builtin",
            model_name="builtin",
            created_at=start,
            finished_at=start + timedelta(seconds=5),
        )
        session.add_all([ds, run])
        session.flush()
        calls = [
            ToolCall(
                id="call_1",
                run_id=run.id,
                tool="compare_two_groups",
                arguments={"value_column": "revenue", "group_column": "region"},
                ok=True,
                duration_ms=12.5,
                result_text="[insights] East mean 112.3, West mean 100.0; p_value=0.004",
                metrics={"relative_difference": 0.1234, "p_value": 0.004, "n": 240},
                figures=[{"path": str(figure), "caption": "Revenue by region"}],
                created_at=start,
            ),
            ToolCall(
                id="call_2",
                run_id=run.id,
                tool="task_create",
                arguments={"subject": "Compare regions"},
                ok=True,
                duration_ms=1.0,
                result_text="created",
                created_at=start + timedelta(seconds=1),
            ),
            ToolCall(
                id="call_3",
                run_id=run.id,
                tool="correlation_analysis",
                arguments={"x_column": "nope"},
                ok=False,
                duration_ms=2.0,
                result_text="[error] column_not_found",
                error={"error": "column_not_found", "message": "No column 'nope'."},
                created_at=start + timedelta(seconds=2),
            ),
        ]
        session.add_all(calls)
        session.flush()
        evidence = Evidence(
            workspace_id=ws.id,
            run_id=run.id,
            claim=claim,
            method="Welch t-test",
            result_summary="East is higher.",
            metrics={"relative_difference": 0.1234, "p_value": 0.004},
            sample_size=240,
            confidence="high",
            limitations=["Observational data"],
            tool_call_ids=["call_1"],
            created_at=start + timedelta(seconds=3),
        )
        session.add(evidence)
        session.flush()
        session.add_all(
            [
                Task(
                    workspace_id=ws.id,
                    run_id=run.id,
                    subject="Compare regions",
                    status="completed",
                    completed_by="evidence",
                    evidence_id=evidence.id,
                    created_at=start,
                ),
                Task(
                    workspace_id=ws.id,
                    run_id=run.id,
                    subject="Check seasonality",
                    status="pending",
                    created_at=start + timedelta(seconds=1),
                ),
            ]
        )
        session.flush()
        report = build_report(session, run)
        sources = [{"name": ds.name, "file": ds.file_name, "sheet": ds.sheet, "original_path": ds.original_path}]
    return report, sources


@pytest.fixture
def seeded(tmp_path):
    return _seed(tmp_path)


def test_report_has_contract_keys(seeded):
    report, _ = seeded
    json.dumps(report)  # pure data
    assert report["question"] == "Does revenue differ by region?"
    assert report["language"] == "en"
    assert isinstance(report["answer"], str) and "12.3%" in report["answer"]
    assert report["model"] == {"kind": "builtin", "name": "builtin"}
    assert report["datasets"] == [
        {
            "name": "sales",
            "file": "sales.csv",
            "sheet": None,
            "rows": 240,
            "columns": [{"name": "region", "type": "category"}, {"name": "revenue", "type": "number"}],
        }
    ]
    [ev] = report["evidence"]
    for key in ("id", "claim", "method", "metrics", "sample_size", "confidence", "limitations", "tool_call_ids"):
        assert key in ev
    assert ev["confidence"] == "high" and ev["tool_call_ids"] == ["call_1"] and ev["sample_size"] == 240
    assert [t["subject"] for t in report["tasks"]] == ["Compare regions", "Check seasonality"]
    assert set(report["tasks"][0]) >= {"id", "subject", "status", "completed_by"}
    assert report["tasks"][0]["completed_by"] == "evidence"
    [fig] = report["figures"]
    assert fig["caption"] == "Revenue by region" and fig["tool_call_id"] == "call_1" and fig["evidence_id"] == ev["id"]
    assert fig["path"].endswith("revenue_by_region_call_1.png")
    assert [c["id"] for c in report["tool_calls"]] == ["call_1", "call_2", "call_3"]
    for call in report["tool_calls"]:
        assert set(call) >= {"id", "tool", "arguments", "ok", "duration_ms"}
        assert isinstance(call["ok"], bool) and isinstance(call["duration_ms"], float)
    assert isinstance(report["unverified_numbers"], list)
    assert isinstance(report["warnings"], list)
    assert "3 cells '—' read as missing" in report["warnings"]
    assert any("failed" in w for w in report["warnings"])
    assert any("Check seasonality" in w for w in report["warnings"])
    assert report["run_id"] and report["created_at"].startswith("2024-05-01T12:00:05")
    assert report["method_notes"] == ["Welch t-test"]
    assert report["tools_used"] == ["compare_two_groups"]
    assert report["limitations"] == ["Observational data"]


def test_unverified_numbers(seeded):
    report, _ = seeded
    assert "987.6" in report["unverified_numbers"]
    assert "12.3%" not in report["unverified_numbers"]
    assert "0.004" not in report["unverified_numbers"]  # in the tool output
    assert "240" not in report["unverified_numbers"]  # the sample size
    assert "1" not in report["unverified_numbers"] and "2" not in report["unverified_numbers"]


def test_number_matching_rules():
    texts, values = ["mean 1234.46 and 45.2% share"], [{"ratio": 0.4501, "big": 12030, "v": -7.25}]
    answer = (
        "1. In 2023 the mean was 1,234.5 (1,234 rounded), share 45% or 45.2%; 1.2万 orders; "
        "fell by 7.3; p < 0.05; 95% confidence interval; id 3fa9c2b1; 2024-01-15; 3 groups; 555 unknown"
    )
    assert unverified_numbers(answer, texts, values) == ["555"]
    assert [n.text for n in answer_numbers("增长了12.3%，共 77 人")] == ["12.3%", "77"]


def test_html_is_self_contained_and_escaped(seeded):
    report, _ = seeded
    page = to_html(report)
    assert "data:image/png;base64," in page
    assert not re.search(r"<(img|script|link|iframe)\b[^>]*\b(src|href)=\"(?!data:)", page)  # nothing fetched
    assert "<script" not in page and 'href="javascript' not in page
    assert '&lt;img src="http://evil.example/x.png"&gt;' in page  # model HTML shown as text
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert "<b>raw</b>" not in page
    assert "<strong>12.3%</strong>" in page  # the answer's markdown is rendered
    assert "Welch t-test" in page and "Observational data" in page
    assert "987.6" in page.split('id="unverified"')[1]  # the caveat box
    assert 'href="#ev-' in page  # figures link to their evidence
    assert "Conclusions" in page and "Evidence" in page


def test_zh_labels(tmp_path):
    report, _ = _seed(tmp_path, language="zh", answer="东区收入高出 12.3%，平均订单 987.6 元。")
    page = to_html(report)
    assert "结论" in page and "证据" in page and "可信度" in page and "分析过程" in page
    assert report["unverified_numbers"] == ["987.6"]
    assert any("失败" in w for w in report["warnings"])
    assert "## 结论" in to_markdown(report)


def test_markdown_has_evidence(seeded):
    report, _ = seeded
    text = to_markdown(report)
    assert CLAIM.replace("<", "&lt;") in text and "Welch t-test" in text and "relative_difference" in text
    assert "<script" not in text and "javascript:" not in text  # neutralised in the text itself
    assert "987.6" in text.split("## Evidence")[0]  # the caveat comes before the evidence
    # when it was made, as people read a time (report.json keeps the ISO timestamp)
    assert report["created_at"].startswith("2024-05-01T12:00:05")
    for rendered in (text, to_html(report)):
        assert "2024-05-01 12:00" in rendered and "2024-05-01T12:00" not in rendered


def test_docx_and_pdf(seeded, tmp_path):
    report, _ = seeded
    docx_path = to_docx(report, tmp_path / "out" / "report.docx")
    pdf_path = to_pdf(report, tmp_path / "out" / "report.pdf")
    assert pdf_path.read_bytes().startswith(b"%PDF") and pdf_path.stat().st_size > 5000
    assert docx_path.stat().st_size > 10000
    from docx import Document

    doc = Document(str(docx_path))
    text = "\n".join(p.text for p in doc.paragraphs)
    assert CLAIM in text
    assert len(doc.inline_shapes) == 1  # the figure


def test_docx_and_pdf_in_chinese(tmp_path):
    report, _ = _seed(
        tmp_path, language="zh", claim="东区收入比西区高 12.3%", answer="## 结论\n\n- 东区收入高出 **12.3%**。"
    )
    pdf_path = to_pdf(report, tmp_path / "zh.pdf")
    data = pdf_path.read_bytes()
    assert data.startswith(b"%PDF") and b"SimHei" in data  # the CJK font is embedded
    from docx import Document

    doc = Document(str(to_docx(report, tmp_path / "zh.docx")))
    assert any("东区收入比西区高 12.3%" in p.text for p in doc.paragraphs)


def test_every_format_of_a_report_is_on_one_paper_by_its_language(seeded, tmp_path):
    """A4 for a Chinese report, Letter for an English one, in the PDF and the Word file alike;
    English text is set in Helvetica, only Chinese runs in SimHei (issue 28)."""
    import re

    from docx import Document
    from pypdf import PdfReader

    english, _ = seeded
    chinese, _ = _seed(tmp_path / "zh", language="zh", claim="东区收入比西区高 12.3%", answer="东区收入高出 12.3%。")
    for report, (width_mm, height_mm) in ((english, (215.9, 279.4)), (chinese, (210.0, 297.0))):
        name = report["language"]
        page = PdfReader(to_pdf(report, tmp_path / f"{name}.pdf")).pages[0].mediabox
        assert (round(float(page.width) / 72 * 25.4, 1), round(float(page.height) / 72 * 25.4, 1)) == (
            width_mm,
            height_mm,
        )
        section = Document(str(to_docx(report, tmp_path / f"{name}.docx"))).sections[0]
        assert (round(section.page_width.mm, 1), round(section.page_height.mm, 1)) == (width_mm, height_mm)
    english_pdf = (tmp_path / "en.pdf").read_bytes()
    assert b"/Helvetica" in english_pdf
    fonts_used_in_english = set(re.findall(rb"/BaseFont /(\S+)", english_pdf))
    assert all(b"Helvetica" in font for font in fonts_used_in_english), fonts_used_in_english


def test_write_report_files(seeded, tmp_path):
    report, sources = seeded
    out = tmp_path / "verity-report"
    written = write_report_files(report, out, datasets=sources)
    for key in ("json", "md", "html", "docx", "pdf", "analysis"):
        assert written[key].is_file() and written[key].stat().st_size > 0, key
    stored = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert stored["figures"][0]["path"] == "figures/revenue_by_region_call_1.png"
    assert (out / "figures" / "revenue_by_region_call_1.png").is_file()
    assert report["figures"][0]["path"].startswith(str(tmp_path))  # the original is untouched
    assert "data:image/png;base64," in (out / "report.html").read_text(encoding="utf-8")
    assert "](figures/revenue_by_region_call_1.png)" in (out / "report.md").read_text(encoding="utf-8")
    compile((out / "analysis.py").read_text(encoding="utf-8"), "analysis.py", "exec")


def test_analysis_script_compiles(seeded):
    report, sources = seeded
    script = to_analysis_script(report, sources)
    compile(script, "analysis.py", "exec")
    assert "compare_two_groups" in script
    assert "task_create" not in script.split("CALLS")[1]  # harness tools are not re-run
    assert "correlation_analysis" not in script  # failed calls are not re-run
    assert sources[0]["original_path"] in script
    assert "from app.ingest.pipeline import load_table" in script


def test_analysis_script_runs(seeded, tmp_path, monkeypatch, capsys):
    """The script re-runs the tool call (with a stand-in reader while app.ingest.pipeline is absent)."""
    import sys
    import types

    import pandas as pd

    report, sources = seeded
    try:
        import app.ingest.pipeline  # noqa: F401
    except ImportError:
        fake = types.ModuleType("app.ingest.pipeline")
        fake.load_table = lambda path, sheet=None, settings=None: types.SimpleNamespace(
            frame=pd.DataFrame(
                {
                    "region": ["East"] * 20 + ["West"] * 20,
                    "revenue": [110.0 + i % 5 for i in range(20)] + [100.0 + i % 5 for i in range(20)],
                }
            )
        )
        monkeypatch.setitem(sys.modules, "app.ingest.pipeline", fake)
    script = tmp_path / "analysis.py"
    script.write_text(to_analysis_script(report, sources), encoding="utf-8")
    namespace = {"__name__": "analysis", "__file__": str(script)}
    exec(compile(script.read_text(encoding="utf-8"), str(script), "exec"), namespace)
    monkeypatch.chdir(tmp_path)
    assert namespace["main"](["analysis.py"]) == 1  # the seeded report's p-value was made up, not computed
    out = capsys.readouterr().out
    assert "=== call_1: compare_two_groups" in out and "1 of 1 tool calls re-run" in out
    assert "  ✗  E1 p_value: report 0.004, re-run" in out and "✗ Not reproduced" in out
    # each call's reading is printed once (the tool's text already holds its interpretation)
    interpretation = out.split("[interpretation]\n", 1)[1].split("\n", 1)[0]
    assert interpretation and out.count(interpretation) == 1


def test_pdf_and_docx_show_no_markdown_underscores(tmp_path):
    """`_emphasis_` is set in italics in Word and PDF; snake_case metric names keep their underscores."""
    import docx
    from pypdf import PdfReader

    report = {
        "question": "q",
        "language": "en",
        "tasks": [],
        "tool_calls": [],
        "figures": [],
        "answer": "**Revenue differs.**\n\n_Built-in analyst (no language model): standard analyses._\n\n"
        "p_value stays, and so does \\_escaped\\_.",
        "evidence": [],
    }
    pdf_text = "\n".join(page.extract_text() for page in PdfReader(to_pdf(report, tmp_path / "r.pdf")).pages)
    word = docx.Document(str(to_docx(report, tmp_path / "r.docx")))
    word_text = "\n".join(p.text for p in word.paragraphs)
    for text in (pdf_text, word_text):
        assert "Built-in analyst" in text and "_Built" not in text and "analyses._" not in text
        assert "p_value stays" in text and "**" not in text and "\\_" not in text
    italic = [r.text for p in word.paragraphs for r in p.runs if r.italic]
    assert any(t.startswith("Built-in analyst") for t in italic)


def test_analysis_script_keeps_file_names_and_questions_inside_comments(tmp_path):
    """A file name or question with a carriage return (which Python reads as a line end) cannot put code
    into analysis.py: the script the page runs and the user downloads stays exactly its own."""
    import ast

    evil = "a.csv\rimport os; os.system('touch PWNED')\u2028x\x0cy"
    report = {
        "question": "q\rimport sys; sys.exit(7)",
        "language": "en",
        "run_id": "r\r1",
        "created_at": "t",
        "tool_calls": [],
        "evidence": [],
    }
    script = to_analysis_script(report, [{"name": evil, "file": evil, "sheet": None, "original_path": evil}])
    tree = ast.parse(script)
    report["evidence"] = [{"metrics": {"mean": float("nan"), "n": 3}, "tool_call_ids": ["c1"]}]
    compile(to_analysis_script(report, []), "analysis.py", "exec")  # nan is no Python literal: left out
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and getattr(n.func, "attr", "") in ("system", "exit")
        and getattr(getattr(n.func, "value", None), "id", "") in ("os", "sys")
        and n.args
        and isinstance(n.args[0], ast.Constant)
        and n.args[0].value in ("touch PWNED", 7)
    ]
    assert calls == []


def test_a_docx_table_makes_each_kind_of_cell_formatting_once_and_writes_what_python_docx_writes(monkeypatch):
    """_add_table sets a cell's spacing and each kind of run's properties (plain, bold, italic, code; in the
    header row or not) through python-docx once, and gives the next cell or run of that kind a copy: the
    document is byte for byte the one python-docx writes when every cell and run is set one by one."""
    import zipfile
    from io import BytesIO

    from docx import Document
    from docx.shared import Pt
    from docx.text.font import Font

    from app.reports import docx_report
    from app.reports.text_blocks import inline_runs

    cells = ["plain", "**bold** then plain", "*italic*", "`code` and **b**", "中文 **粗体**", ""]
    rows = [["Name", "**Value**", "Note"]] + [[cells[(r + c) % len(cells)] for c in range(3)] for r in range(40)]

    def one_by_one(doc, rows):  # what _add_table wrote before: every property set by python-docx
        table = doc.add_table(rows=len(rows), cols=3)
        table.style = "Table Grid"
        for r, (row, table_row) in enumerate(zip(rows, table.rows, strict=True)):
            for c, cell in enumerate(table_row.cells):
                cell.text = ""
                paragraph = cell.paragraphs[0]
                paragraph.paragraph_format.space_before = paragraph.paragraph_format.space_after = Pt(0)
                for style, chunk in inline_runs(row[c]):
                    run = paragraph.add_run(chunk)
                    run.bold = style == "b"
                    run.italic = style == "i"
                    if style == "code":
                        run.font.name = "Consolas"
                for run in paragraph.runs:
                    run.font.size = Pt(8.5)
                    run.bold = run.bold or r == 0
        doc.add_paragraph()

    def xml(build) -> bytes:
        doc = Document()
        build(doc, rows)
        out = BytesIO()
        doc.save(out)
        return zipfile.ZipFile(out).read("word/document.xml")

    sizes = []
    real = Font.size.fset
    monkeypatch.setattr(
        Font, "size", property(Font.size.fget, lambda font, value: sizes.append(value) or real(font, value))
    )
    made = xml(docx_report._add_table)
    assert 0 < len(sizes) <= 12  # one per kind of run (the cell's empty run, plain, b, i, code; header or not)
    assert made == xml(one_by_one)
    assert len(sizes) > 12 + 2 * 41 * 3  # (one by one: every run of every cell)
