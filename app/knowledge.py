"""Workspace knowledge: reference notes and documents (a glossary, how the company counts revenue,
what a campaign was). Each turn retrieves the passages relevant to the question
(app/agent/context/retrieval.py) and injects them at the knowledge tier: reference only, weaker than the
user's definitions and the workspace rules (SPEC §6).

Documents are kept as text: .txt/.md (any common encoding), .docx (paragraphs and tables) and
.pdf (its text layer; a scanned PDF has none and is refused with a hint).
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.config import Settings, get_settings
from app.db.models import KnowledgeEntry
from app.ingest.errors import IngestError

DOCUMENT_SUFFIXES = (".txt", ".md", ".markdown", ".docx", ".pdf")
MAX_TITLE = 200


class KnowledgeError(IngestError):
    """A note or document that cannot be kept: a file error of the same categories, with its text and
    hint in English and Chinese (app.ingest.errors)."""


def entries(session: Session, workspace_id: str) -> list[KnowledgeEntry]:
    query = (
        select(KnowledgeEntry).where(KnowledgeEntry.workspace_id == workspace_id).order_by(KnowledgeEntry.created_at)
    )
    return list(session.scalars(query))


def add_entry(
    session: Session, workspace_id: str, title: str, text: str, source: str = "note", max_chars: int = 200_000
) -> KnowledgeEntry:
    text = "\n".join(line.rstrip() for line in (text or "").replace("\r\n", "\n").strip().splitlines())
    if not text:
        raise KnowledgeError(
            "empty_file",
            "There is no text to keep.",
            "Write the note, or choose a document with text in it.",
            "没有可以保存的文字。",
            "请写下笔记，或选择一份有文字的文档。",
        )
    if len(text) > max_chars:
        raise KnowledgeError(
            "too_large",
            f"The text is longer than {max_chars:,} characters.",
            "Keep the parts the analysis needs (definitions, rules, context).",
            f"文字超过了 {max_chars:,} 个字符。",
            "只保留分析需要的部分（定义、规则、背景）。",
        )
    title = " ".join((title or "").split())[:MAX_TITLE] or _first_line(text)
    entry = KnowledgeEntry(workspace_id=workspace_id, title=title, source=source[:500], text=text)
    session.add(entry)
    session.flush()
    return entry


def document_text(path: Path, file_name: str, settings: Settings | None = None) -> str:
    """The text of an uploaded reference document, read within the document limits of `settings`
    (app.ingest.documents). This process does the reading: the web server calls it through
    `app.ingest.bounded.document_text_bounded`, in a child with time and memory limits."""
    settings = settings or get_settings()
    suffix = Path(file_name).suffix.lower()
    if suffix not in DOCUMENT_SUFFIXES:
        raise KnowledgeError(
            "unsupported_format",
            f"'{file_name}' is not a document Verity can read as text.",
            "Use .txt, .md, .docx or .pdf.",
            f"“{file_name}”不是 Verity 能读取文字的文档。",
            "请使用 .txt、.md、.docx 或 .pdf 文件。",
        )
    if suffix == ".docx":
        return _docx_text(path, settings)
    if suffix == ".pdf":
        return _pdf_text(path, file_name, settings)
    from app.ingest.textfiles import decode_bytes  # BOMs, UTF-8, GB18030, then charset-normalizer

    if path.stat().st_size > 4 * settings.knowledge_max_chars + 4:  # 4 bytes hold any character
        raise KnowledgeError(
            "too_large",
            f"'{file_name}' holds more than {settings.knowledge_max_chars:,} characters.",
            "Keep the parts the analysis needs (definitions, rules, context).",
            f"“{file_name}”超过了 {settings.knowledge_max_chars:,} 个字符。",
            "只保留分析需要的部分（定义、规则、背景）。",
        )
    raw = path.read_bytes()
    try:
        text = decode_bytes(raw)[0]
    except IngestError as exc:
        raise KnowledgeError(
            "encoding_error",
            exc.message,
            "Save it as UTF-8 text and add it again.",
            exc.message_zh,
            "请把它另存为 UTF-8 文本后再添加。",
        ) from exc
    if "\x00" in text[:4096]:
        raise KnowledgeError(
            "unsupported_format",
            f"'{file_name}' is not a text file.",
            "Use .txt, .md or .docx.",
            f"“{file_name}”不是文本文件。",
            "请使用 .txt、.md 或 .docx 文件。",
        )
    return text


def _docx_text(path: Path, settings: Settings) -> str:
    import zipfile

    from lxml import etree

    from app.ingest.documents import docx_text
    from app.ingest.sniff import check_zip_limits

    try:
        with zipfile.ZipFile(path) as package:
            check_zip_limits(package, settings)  # what the directory says, before a byte is inflated
        return docx_text(path, settings)  # and what is really inflated, counted while it is
    except IngestError as exc:
        raise KnowledgeError(exc.category, exc.message, exc.hint, exc.message_zh, exc.hint_zh) from exc
    except (
        zipfile.BadZipFile,
        KeyError,
        ValueError,
        OSError,
        EOFError,
        NotImplementedError,
        etree.XMLSyntaxError,
    ) as exc:
        raise KnowledgeError(
            "corrupt_file",
            "This Word document could not be opened (damaged, or protected with a password).",
            "Open it in Word or LibreOffice and save it again as .docx.",
            "这份 Word 文档打不开（已损坏，或设了密码）。",
            "请用 Word 或 LibreOffice 打开，再另存为 .docx。",
        ) from exc


def _pdf_text(path: Path, file_name: str, settings: Settings) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    from app.ingest.documents import pdf_text

    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted:
            raise KnowledgeError(
                "encrypted_file",
                f"'{file_name}' is protected with a password.",
                "Save a copy without the password and add that.",
                f"“{file_name}”设了密码。",
                "请另存一份不带密码的副本，再添加它。",
            )
        text = pdf_text(reader, settings)
    except KnowledgeError:
        raise
    except IngestError as exc:
        raise KnowledgeError(exc.category, exc.message, exc.hint, exc.message_zh, exc.hint_zh) from exc
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise KnowledgeError(
            "corrupt_file",
            f"'{file_name}' could not be read as a PDF.",
            "Open it and save or print it again as PDF, or save it as Word.",
            f"“{file_name}”无法作为 PDF 读取。",
            "请打开它，重新保存或打印为 PDF，或另存为 Word。",
        ) from exc
    if not text.strip():
        raise KnowledgeError(
            "empty_file",
            f"'{file_name}' has no text layer (a scan or images only).",
            "Use a PDF with selectable text, or type the key points as a note.",
            f"“{file_name}”里没有文字层（只是扫描件或图片）。",
            "请使用可以选中文字的 PDF，或把要点写成一条笔记。",
        )
    return text


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0].strip("# ").strip()
    return line[:80] + ("…" if len(line) > 80 else "")
