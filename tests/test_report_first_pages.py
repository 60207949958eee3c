"""Reports a manager reads (issue 28, point 2): for one question the answer, its chart, a small results
table, one "how sure" line and the caveats come first and fit on one or two pages; the method, the
statistics and the tool calls follow in an appendix under its own heading, and nothing is lost.

The reports are real ones: `verity analyze` on the sample workbook, in English and in Chinese. The
numbers the results table must show are computed here with pandas, not taken from Verity.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from app.reports.first_pages import answer_evidence, answer_figures, first_pages, reader_number
from app.reports.i18n import label
from app.reports.report_parts import in_sheet_words
from tests.factories import SAMPLES
from tests.test_cli import verity

SALES = SAMPLES / "retail_sales.xlsx"
OPERATIONS = SAMPLES / "monthly_operations.xlsx"


@pytest.fixture(scope="module")
def channels(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """An English report on one question: does revenue differ between channels?"""
    tmp_path = tmp_path_factory.mktemp("first-pages-en")
    out = tmp_path / "report"
    done = verity(
        "analyze", SALES, "--question", "Does revenue differ between channels?", "--out", out, tmp_path=tmp_path
    )
    assert done.returncode == 0, done.stderr
    return out, json.loads((out / "report.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def forecast_zh(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A Chinese report whose answer is a forecast: its table is the forecast per period."""
    tmp_path = tmp_path_factory.mktemp("first-pages-zh")
    out = tmp_path / "report"
    done = verity(
        "analyze",
        OPERATIONS,
        "--question",
        "预测未来6个月的营业额",
        "--answer",
        "method.forecast=继续",
        "--no-input",
        "--out",
        out,
        tmp_path=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return out, json.loads((out / "report.json").read_text(encoding="utf-8"))


def _channel_means() -> dict[str, float]:
    frame = pd.read_excel(SALES, sheet_name="Orders 2024", header=2)
    return {str(k): float(v) for k, v in frame.groupby("Channel")["Revenue"].mean().items()}


def _pdf_pages(path: Path) -> list[str]:
    from pypdf import PdfReader

    return [page.extract_text() or "" for page in PdfReader(str(path)).pages]


def _split_pages(pages: list[str], heading: str) -> tuple[list[str], list[str]]:
    """The pages before the appendix heading and the pages from it on."""
    start = next(n for n, text in enumerate(pages) if heading in " ".join(text.split()))  # a heading may wrap
    return pages[:start], pages[start:]


def test_the_pdf_puts_the_answer_its_chart_and_table_on_two_pages_at_most(channels):
    out, report = channels
    pages = _pdf_pages(out / "report.pdf")
    body, appendix = _split_pages(pages, label("appendix", "en"))
    assert 1 <= len(body) <= 2, f"{len(body)} pages before the appendix"
    text = " ".join(body)
    assert "Revenue looks similar across groups of Channel" in text  # the answer
    assert "Figure 1. Bar chart of the mean Revenue for each Channel" in text  # its chart, and only it
    assert "Histogram" not in text and "Scatter" not in text
    assert "How sure:" in text and "Caveats" in text
    for group, mean in _channel_means().items():  # the results table, as pandas computes it
        assert group in text and reader_number(mean) in text, (group, mean)
    assert "call_builtin" not in text and "{" not in text and "p_value" not in text  # no workings
    later = " ".join(appendix)
    assert "Kruskal-Wallis" in later and "p_value" in later and "Tool calls" in later and "call_builtin" in later
    for n, figure in enumerate(report["figures"], start=1):  # nothing lost: every chart is somewhere
        assert f"Figure {n}." in " ".join(pages) and figure["caption"][:40] in " ".join(pages).replace("\n", " ")

    from pypdf import PdfReader

    reader = PdfReader(str(out / "report.pdf"))
    assert sum(len(reader.pages[n].images) for n in range(len(body))) == 1  # the answer's chart, drawn


def test_the_word_file_has_the_same_front_and_appendix(channels):
    from docx import Document

    out, report = channels
    document = Document(str(out / "report.docx"))
    paragraphs = list(document.paragraphs)
    start = next(n for n, p in enumerate(paragraphs) if p.text == label("appendix", "en"))
    body = "\n".join(p.text for p in paragraphs[:start])
    assert "Revenue looks similar across groups of Channel" in body and "How sure: " in body
    assert "call_builtin" not in body and "p_value" not in body
    pictures_before = sum(len(p._element.findall(".//" + _PIC)) for p in paragraphs[:start])
    assert pictures_before == 1 and len(document.inline_shapes) == len(report["figures"])
    tables = document.tables
    results = tables[0]  # the first table is the results table, before the appendix
    assert [c.text for c in results.rows[0].cells] == ["Channel", "Average", "Count", "Median"]
    assert "call_builtin" in "\n".join(c.text for t in tables[1:] for r in t.rows for c in r.cells)
    if shutil.which("soffice"):  # Word's own page count needs a layout engine: LibreOffice's, when installed
        converted = out / "word-as-pdf"
        subprocess.run(
            ["soffice", "--headless", "--convert-to", "pdf", "--outdir", str(converted), str(out / "report.docx")],
            check=True,
            capture_output=True,
            timeout=300,
        )
        body_pages, _ = _split_pages(_pdf_pages(converted / "report.pdf"), label("appendix", "en"))
        assert 1 <= len(body_pages) <= 2


_PIC = "{http://schemas.openxmlformats.org/drawingml/2006/picture}pic"


def test_markdown_and_html_put_the_workings_after_the_appendix_heading(channels):
    out, report = channels
    markdown = (out / "report.md").read_text(encoding="utf-8")
    body, appendix = markdown.split(f"## {label('appendix', 'en')}")
    assert body.count("![Figure") == 1 and "bar_Channel_Revenue" in body
    assert "| Channel | Average | Count | Median |" in body and "**How sure:**" in body
    words = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", body)  # the text, apart from the figures' file names
    assert "call_builtin" not in words and "p_value" not in words
    assert "Kruskal-Wallis" in appendix and "### Tool calls" in appendix.replace("####", "###")
    assert appendix.count("![Figure") == len(report["figures"]) - 1

    page = (out / "report.html").read_text(encoding="utf-8")
    body, appendix = page.split('id="appendix"')
    assert body.count("data:image/png;base64,") == 1 and 'class="results"' in body and 'id="how-sure"' in body
    assert "call_builtin" not in body.split("<main>")[1]
    assert label("appendix", "en") in appendix and 'id="call-' in appendix and "p_value" in appendix


def test_the_chinese_forecast_report_leads_with_the_forecast_per_period(forecast_zh):
    out, report = forecast_zh
    pages = _pdf_pages(out / "report.pdf")
    body, appendix = _split_pages(pages, label("appendix", "zh"))
    assert 1 <= len(body) <= 2, f"{len(body)} pages before the appendix"
    text = " ".join(body)
    forecast = next(e for e in report["evidence"] if "forecast_total" in e["metrics"])
    periods = [k.removeprefix("forecast.") for k in forecast["metrics"] if k.startswith("forecast.")]
    assert len(periods) == 6
    for key in ("forecast", "lower", "upper"):  # the table: every period's forecast and its range
        for period in periods:
            assert reader_number(forecast["metrics"][f"{key}.{period}"]) in text, (key, period)
    assert "预测值" in text and "区间下限" in text and "可信程度" in text and "注意事项与局限" in text
    assert "直方图" not in text  # the histogram nobody asked for waits in the appendix
    assert "call_builtin" not in text and "p_value" not in text
    assert "call_builtin" in " ".join(appendix) and "工具调用" in " ".join(appendix)


def test_both_formats_stay_on_the_languages_paper(forecast_zh):
    from docx import Document
    from pypdf import PdfReader

    out, _ = forecast_zh
    box = PdfReader(str(out / "report.pdf")).pages[0].mediabox
    section = Document(str(out / "report.docx")).sections[0]
    assert round(float(box.width) / 72 * 25.4) == round(section.page_width.mm) == 210  # A4 for Chinese


# --------------------------------------------------------------------------------------------
# How the first pages are chosen, for an answer a language model wrote in its own words
# --------------------------------------------------------------------------------------------


def _evidence(n: int, claim: str, call: str, **metrics: Any) -> dict[str, Any]:
    return {"id": f"e{n}", "claim": claim, "metrics": metrics, "tool_call_ids": [call], "confidence": "high"}


def test_a_model_answer_is_matched_to_its_evidence_by_its_numbers():
    evidence = [
        _evidence(1, "Revenue averages 308.6 (median 178.5).", "c1"),
        _evidence(2, "Online averages 312.6, Store 302.0; p = 0.36.", "c2"),
    ]
    answer = "## Answer\n\nThe channels sell about the same: Online 312.6 a order against Store 302.0.\n\nMore text."
    assert [e["id"] for e in answer_evidence(answer, evidence)] == ["e2"]
    assert answer_evidence("Nothing to match here.", evidence) == []
    assert [e["id"] for e in answer_evidence("Nothing to match here.", evidence[:1])] == ["e1"]


def test_claims_sharing_only_a_p_value_with_the_headline_are_told_apart_by_its_words():
    """The built-in analyst's headline on "哪个门店的销售额最高？" states the group means (not in any claim)
    and p < 0.001, which the comparison and a supporting correlation both report: the comparison of the
    stores answers (and its bar chart leads), not the correlation recorded after it."""
    evidence = [
        _evidence(1, "销售额 的平均值为 1,112，中位数（典型值）为 685。", "c1"),
        _evidence(
            2,
            "各 门店 组的 销售额 普遍高低不同（中位数 东门 最高，南门 最低）；很少会只是偶然造成的（p < 0.001）。",
            "c2",
        ),
        _evidence(3, "销售额 与 销量 倾向于同向变化（极强相关，r = 0.994）；这不太可能只是偶然（p < 0.001）。", "c3"),
    ]
    answer = (
        "**东门 的平均 销售额 最高：2,016（其次 西门 683.7）；南门 在另一端（637）。各门店之间的差异：这样大的差异"
        "很少会偶然出现（p < 0.001）。**\n\n### 其他发现\n\n- " + evidence[2]["claim"]
    )
    assert [e["id"] for e in answer_evidence(answer, evidence)] == ["e2"]
    english = [
        _evidence(1, "Revenue differs across Region (p < 0.001).", "c1"),
        _evidence(2, "Revenue and Units rise together (r = 0.81, p < 0.001).", "c2"),
    ]
    headline = "**East has the highest average Revenue: 467.3; across Region the gap is real (p < 0.001).**"
    assert [e["id"] for e in answer_evidence(headline, english)] == ["e1"]


def test_the_chart_of_the_compared_columns_comes_first_not_the_histogram():
    calls = {
        "c2": {"arguments": {"value_column": "Revenue", "group_column": "Channel"}},
        "p1": {"arguments": {"value_column": "Revenue"}},
        "p2": {"arguments": {"x_column": "Channel", "y_column": "Revenue"}},
        "p3": {"arguments": {"x_column": "Units", "y_column": "Revenue"}},
    }
    figures = [{"path": f"{c}.png", "caption": c, "tool_call_id": c} for c in ("p1", "p2", "p3")]
    chosen = [_evidence(2, "x", "c2")]
    assert [f["tool_call_id"] for f in answer_figures(figures, chosen, chosen, calls)] == ["p2"]
    report = {
        "language": "en",
        "answer": "**x**",
        "evidence": chosen,
        "figures": figures,
        "tool_calls": [{"id": k, **v} for k, v in calls.items()],
    }
    layout = first_pages(report)
    assert layout.body_figures == 1 and [f["tool_call_id"] for f in layout.figures] == ["p2", "p1", "p3"]


def test_the_results_table_is_per_group_without_p_values():
    item = _evidence(
        1,
        "x",
        "c1",
        **{
            "mean.A": 1.5,
            "mean.B": 2.25,
            "n.A": 10,
            "n.B": 12,
            "shapiro_p.A": 0.2,
            "shapiro_p.B": 0.3,
            "p_value": 0.01,
        },
    )
    calls = {"c1": {"arguments": {"group_column": "Team"}}}
    layout = first_pages(
        {"language": "zh", "answer": "**x**", "evidence": [item], "tool_calls": [{"id": "c1", **calls["c1"]}]}
    )
    assert layout.results == [[["Team", "平均值", "数量"], ["A", "1.5", "10"], ["B", "2.25", "12"]]]
    assert "对结论的把握：高" in layout.how_sure


def test_nothing_is_lost_from_report_json(channels):
    """report.json keeps its contract keys and every evidence item; the renderings only reorder."""
    out, report = channels
    for key in ("question", "language", "answer", "model", "datasets", "evidence", "tasks", "figures", "tool_calls"):
        assert key in report
    markdown = (out / "report.md").read_text(encoding="utf-8")
    for n, item in enumerate(report["evidence"], start=1):
        assert f"E{n}. {item['claim'][:40]}" in markdown
    for call in report["tool_calls"]:
        assert call["id"] in markdown
    assert io.BytesIO((out / "report.pdf").read_bytes()).read(4) == b"%PDF"


def test_the_forecast_report_names_its_months_as_the_answer_and_leads_with_history_and_forecast(forecast_zh):
    """The results table words its periods as the answer does ("2025年1月", not "2025-01"), and the chart
    before the appendix is the forecast's own: the history, then the forecast (dashed, labelled)."""
    from app.analyst.sheet_words import month_label

    out, report = forecast_zh
    forecast = next(e for e in report["evidence"] if "forecast_total" in e["metrics"])
    periods = [k.removeprefix("forecast.") for k in forecast["metrics"] if k.startswith("forecast.")]
    worded = [month_label(int(p[:4]), int(p[5:7]), True) for p in periods]
    body, _ = _split_pages(_pdf_pages(out / "report.pdf"), label("appendix", "zh"))
    text = " ".join(" ".join(body).split())
    assert all(month in text for month in worded), worded
    assert not any(period in text for period in periods), "a period as the tool writes it"
    layout = first_pages(in_sheet_words(report))
    assert [row[0] for row in layout.results[0][1:]] == worded
    calls = {c["id"]: c["tool"] for c in report["tool_calls"]}
    assert calls[layout.figures[0]["tool_call_id"]] == "forecast" and layout.body_figures >= 1
    assert any(k.startswith("actual.") for k in forecast["metrics"])  # the history the chart continues


def test_an_english_report_is_on_letter_in_both_formats(channels):
    """One paper size by locale in every format: Letter for English (A4 for Chinese, above)."""
    from docx import Document
    from pypdf import PdfReader

    out, _ = channels
    boxes = {
        (round(float(p.mediabox.width)), round(float(p.mediabox.height)))
        for p in PdfReader(str(out / "report.pdf")).pages
    }
    assert boxes == {(612, 792)}  # 8.5 × 11 in, every page
    sections = Document(str(out / "report.docx")).sections
    assert {(round(s.page_width.inches, 2), round(s.page_height.inches, 2)) for s in sections} == {(8.5, 11.0)}


# --- a model's answer that states none of the recorded claims ---------------------------------------
def test_a_model_answer_that_states_no_recorded_claim_leads_with_the_last_result_as_the_card_does(tmp_path) -> None:
    """A language model records per-channel and then per-region totals and answers in its own words: the
    report's first pages show what the answer card shows, the last result recorded (its table and chart
    before the appendix), said to be so in the report's language; not nothing, not "the answer's" chart."""
    from app.db.models import Report, Run
    from app.reports.markdown_report import to_markdown
    from app.web.run_panel import run_context
    from tests.factories import run_answered_in_own_words

    claim = "East has the highest total Revenue."
    settings, db, run_id = run_answered_in_own_words(tmp_path, claim)
    frame = pd.read_excel(SALES, sheet_name="Orders 2024", header=2)
    totals = frame.groupby("Region")["Revenue"].sum().sort_values(ascending=False)
    with db.session() as session:
        run = session.get(Run, run_id)
        assert run is not None and run.status == "done", run and (run.status, run.error)
        card = run_context(session, run, "en", settings)["result"]
        stored = session.query(Report).filter(Report.run_id == run_id).one().content
    assert len(stored["evidence"]) == 2
    for lang in ("en", "zh"):
        report = in_sheet_words({**stored, "language": lang})
        layout = first_pages(report)
        assert layout.answer_evidence == []  # the answer states none: nothing is called its evidence
        assert layout.last_recorded == label("result_last_recorded", lang).format(claim=claim)
        [table] = layout.results
        assert table[0][0] == "Region"
        shown = {row[0]: row[1] for row in table[1:]}  # the regions' totals (and the report's grand total row)
        assert {k: shown.get(k) for k in totals.index} == {k: reader_number(v) for k, v in totals.items()}
        assert [row[0] for row in card["table"]["rows"]] == list(totals.index)  # the card's result, the same one
    # the label comes before the table in the rendering, and before the appendix
    text = to_markdown(in_sheet_words({**stored, "language": "en"}))
    said = text.index(label("result_last_recorded", "en").format(claim=claim))
    assert said < text.index(f"### {label('results', 'en')}") < text.index(label("appendix", "en"))
