"""Reference documents are read within bounds (app/ingest/documents.py, in a child process from
app/ingest/bounded.py): crafted files a few kilobytes long are refused in seconds, plainly.
The hostile files are built here, small on disk."""

from __future__ import annotations

import time
import zipfile
import zlib
from pathlib import Path

import pytest

from app.config import Settings
from app.ingest.bounded import document_text_bounded
from app.knowledge import KnowledgeError
from tests.test_web import new_workspace

pytestmark = pytest.mark.slow  # a server, a run or a child per test: handed out early (tests/conftest.py)

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def docx_with_paragraphs(path: Path, paragraphs: int, text: str = "") -> Path:
    """A minimal .docx whose body holds `paragraphs` paragraphs (written as a stream: 3M of them pack
    into ~20 KB)."""
    run = f"<w:r><w:t>{text}</w:t></w:r>" if text else ""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as package:
        package.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.'
            'wordprocessingml.document.main+xml"/></Types>',
        )
        package.writestr(
            "_rels/.rels",
            '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
            'officeDocument" Target="word/document.xml"/></Relationships>',
        )
        with package.open("word/document.xml", "w") as part:
            part.write(f'<?xml version="1.0"?><w:document xmlns:w="{W_NS}"><w:body>'.encode())
            step = min(paragraphs, 10_000)
            block = f"<w:p>{run}</w:p>".encode() * step
            for _ in range(paragraphs // step):
                part.write(block)
            part.write(b"</w:body></w:document>")
    return path


def pdf_sharing_one_stream(path: Path, pages: int, operators: int) -> Path:
    """A PDF whose `pages` pages all draw one content stream of `operators` text operators
    (1.4 MB of content packs into a few KB)."""
    content = zlib.compress(b"BT /F1 1 Tf 0 0 Td (a) Tj ET\n" * operators, 9)
    kids = " ".join(f"{5 + n} 0 R" for n in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content + b"\nendstream",
    ]
    objects += [
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 3 0 R >> >> >>"
        for _ in range(pages)
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path


@pytest.fixture()
def settings(tmp_path) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path / "data", llm_model="builtin")


def test_a_docx_of_three_million_paragraphs_is_refused_in_seconds(tmp_path, settings):
    path = docx_with_paragraphs(tmp_path / "many.docx", 3_000_000)
    assert path.stat().st_size < 100_000
    started = time.monotonic()
    with pytest.raises(KnowledgeError) as caught:
        document_text_bounded(path, path.name, settings)
    assert caught.value.category == "too_large" and "paragraphs" in caught.value.message
    assert caught.value.hint and caught.value.hint_zh
    assert time.monotonic() - started < 15


def test_a_pdf_whose_pages_share_one_big_stream_is_refused_before_extracting(tmp_path, settings):
    path = pdf_sharing_one_stream(tmp_path / "shared.pdf", pages=30, operators=48_000)
    assert path.stat().st_size < 20_000
    started = time.monotonic()
    with pytest.raises(KnowledgeError) as caught:
        document_text_bounded(path, path.name, settings)
    assert caught.value.category == "too_large" and "page content" in caught.value.message
    assert time.monotonic() - started < 15


def test_the_reading_child_is_stopped_at_its_time_limit(tmp_path):
    path = pdf_sharing_one_stream(tmp_path / "slow.pdf", pages=30, operators=48_000)
    lax = Settings(_env_file=None, data_dir=tmp_path / "data", document_max_pdf_content_mb=1000, document_timeout_s=1.0)
    started = time.monotonic()
    with pytest.raises(KnowledgeError) as caught:
        document_text_bounded(path, path.name, lax)
    assert caught.value.category == "too_large" and "longer than 1 seconds" in caught.value.message
    assert "Word" not in caught.value.hint and caught.value.hint  # a document's hint, not a spreadsheet's
    assert time.monotonic() - started < 10


def test_documents_within_the_limits_are_read_in_the_child(tmp_path, settings):
    path = docx_with_paragraphs(tmp_path / "fine.docx", 5_000, text="Revenue is net of refunds.")
    text = document_text_bounded(path, path.name, settings)
    assert text.count("Revenue is net of refunds.") == 5_000
    pdf = pdf_sharing_one_stream(tmp_path / "small.pdf", pages=2, operators=3)
    assert document_text_bounded(pdf, pdf.name, settings).count("a") >= 2


def test_the_api_refuses_a_hostile_document_plainly(client, tmp_path):
    ws = new_workspace(client)
    path = docx_with_paragraphs(tmp_path / "many.docx", 3_000_000)
    started = time.monotonic()
    response = client.post(f"/api/workspaces/{ws}/knowledge/files", files={"file": ("many.docx", path.read_bytes())})
    assert response.status_code == 413 and response.json()["error"]["category"] == "too_large"
    assert response.json()["error"]["hint"] and time.monotonic() - started < 15
    assert client.get(f"/api/workspaces/{ws}/knowledge").json()["knowledge"] == []
