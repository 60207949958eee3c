"""The text of a reference document (.docx, .pdf), read within counted bounds.

A few kilobytes can hold an unbounded amount of work: a .docx whose document.xml packs millions of
empty paragraphs, a PDF whose pages all share one huge content stream. So every read here counts
what it does and stops, with a plain `too_large` error, the moment a count passes its limit:

- .docx: the main part is inflated as a stream (the bytes actually inflated count against
  `max_uncompressed_mb`, whatever the zip directory claims) and parsed as a stream (lxml
  iterparse, finished elements dropped), counting XML elements (`document_max_elements`),
  paragraphs (`document_max_paragraphs`) and characters (`knowledge_max_chars`);
- .pdf: pages (`document_max_pages`), and the content the text extractor would walk, summed over
  the pages *before* any is extracted (`document_max_pdf_content_mb`: a stream shared by 30 pages
  is walked 30 times, so it counts 30 times), then characters.
The caller runs this in a child process with time and memory limits (app.ingest.bounded
`document_text_bounded`): the counts stop the crafted files early and plainly, the child's limits
stop whatever the counts do not foresee.
"""

from __future__ import annotations

import posixpath
import zipfile
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from app.ingest.errors import IngestError

if TYPE_CHECKING:
    from app.config import Settings

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
OFFICE_DOCUMENT = "/officeDocument"
HINT = "Keep the parts the analysis needs (definitions, rules, context), or split the document."
HINT_ZH = "只保留分析需要的部分（定义、规则、背景），或把文档拆开。"


def too_large(what: str, limit: int, what_zh: str) -> IngestError:
    return IngestError(
        "too_large",
        f"The document has more than {limit:,} {what}; the limit for a reference document is {limit:,}.",
        HINT,
        f"这份文档的{what_zh}超过了 {limit:,}，参考文档的上限是 {limit:,}。",
        HINT_ZH,
    )


# --- .docx -------------------------------------------------------------------------------------


class _CountedStream:
    """A file-like view of an inflating zip member that refuses to give more than `limit` bytes."""

    def __init__(self, stream: IO[bytes], limit: int):
        self.stream, self.limit, self.read_bytes = stream, limit, 0

    def read(self, size: int = -1) -> bytes:
        chunk = self.stream.read(size if 0 < size <= 1 << 20 else 1 << 20)
        self.read_bytes += len(chunk)
        if self.read_bytes > self.limit:
            raise too_large("megabytes once unpacked", self.limit // 1048576, "解压后的大小（MB）")
        return chunk


def docx_text(path: Path, settings: Settings) -> str:
    """Paragraphs and table rows ("cell | cell") of a .docx, in document order."""
    from lxml import etree

    with zipfile.ZipFile(path) as package:
        stream = _CountedStream(package.open(_main_part(package)), settings.max_uncompressed_mb * 1048576)
        parser = etree.iterparse(
            stream, events=("start", "end"), resolve_entities=False, no_network=True, huge_tree=False
        )
        lines: list[str] = []
        chars = elements = paragraphs = tables = 0
        for event, element in parser:
            if event == "start":
                elements += 1
                if elements > settings.document_max_elements:
                    raise too_large("XML elements", settings.document_max_elements, "XML 元素数")
                if element.tag == f"{W}tbl":
                    tables += 1
                continue
            tag = element.tag
            if tag == f"{W}p":
                paragraphs += 1
                if paragraphs > settings.document_max_paragraphs:
                    raise too_large("paragraphs", settings.document_max_paragraphs, "段落数")
                if tables:
                    continue  # a cell's paragraph: its row says it
                line = _paragraph_text(element)
            elif tag == f"{W}tr" and tables == 1:
                line = " | ".join(
                    "\n".join(_paragraph_text(p) for p in cell.iter(f"{W}p")).strip()
                    for cell in element.iterchildren(f"{W}tc")
                )
            elif tag == f"{W}tbl":
                tables -= 1
                if tables:
                    continue  # a table inside a cell: its outer row says it
                line = ""  # a blank line after a table
            else:
                continue
            chars += len(line) + 1
            if chars > settings.knowledge_max_chars:
                raise too_large("characters", settings.knowledge_max_chars, "字符数")
            lines.append(line)
            _drop(element)
    return "\n".join(lines)


def _main_part(package: zipfile.ZipFile) -> str:
    """The name of the main document part, from the package relationships (word/document.xml
    in every file Word writes)."""
    from lxml import etree

    try:
        relations = etree.fromstring(package.read("_rels/.rels")[: 1 << 20], etree.XMLParser(resolve_entities=False))
        for relation in relations:
            if str(relation.get("Type", "")).endswith(OFFICE_DOCUMENT):
                return posixpath.normpath(str(relation.get("Target", "")).lstrip("/"))
    except (KeyError, etree.XMLSyntaxError):
        pass
    return "word/document.xml"


def _paragraph_text(paragraph: Any) -> str:
    parts: list[str] = []
    for node in paragraph.iter(f"{W}t", f"{W}tab", f"{W}br", f"{W}cr"):
        if node.tag == f"{W}t":
            parts.append(node.text or "")
        else:
            parts.append("\t" if node.tag == f"{W}tab" else "\n")
    return "".join(parts)


def _drop(element: Any) -> None:
    """Free a finished element and the siblings before it (iterparse keeps the tree otherwise)."""
    element.clear()
    parent = element.getparent()
    if parent is not None:
        while element.getprevious() is not None:
            del parent[0]


# --- .pdf --------------------------------------------------------------------------------------


def pdf_text(reader: Any, settings: Settings) -> str:
    """The text layer of an opened (and decrypted-or-refused) pypdf reader, within the limits."""
    pages = reader.pages
    if len(pages) > settings.document_max_pages:
        raise too_large("pages", settings.document_max_pages, "页数")
    budget = int(settings.document_max_pdf_content_mb * 1048576)
    sizes: dict[int, int] = {}
    content = 0
    for page in pages:
        content += _content_bytes(page, sizes)
        if content > budget:
            raise IngestError(
                "too_large",
                f"Reading the text of this PDF means walking more than {settings.document_max_pdf_content_mb:g} MB "
                "of page content (pages that repeat one large drawing count once per page).",
                "Save or print it again as PDF with text only, or save it as Word.",
                f"读取这份 PDF 的文字需要处理超过 {settings.document_max_pdf_content_mb:g} MB 的页面内容"
                "（多页共用的大段内容每页都要算一次）。",
                "请把它重新保存或打印为只含文字的 PDF，或另存为 Word。",
            )
    texts: list[str] = []
    chars = 0
    for page in pages:
        text = (page.extract_text() or "").strip()
        chars += len(text) + 2
        if chars > settings.knowledge_max_chars:
            raise too_large("characters", settings.knowledge_max_chars, "字符数")
        texts.append(text)
    return "\n\n".join(texts)


def _content_bytes(page: Any, sizes: dict[int, int]) -> int:
    """The decoded bytes of a page's content streams and of the form XObjects it draws (what
    `extract_text` walks), each shared stream measured once (`sizes`) but counted per page."""
    from pypdf.generic import ArrayObject, IndirectObject

    total, pending, seen = 0, [page.get("/Contents"), _forms(page)], set()
    while pending:
        item = pending.pop()
        if isinstance(item, IndirectObject):
            if item.idnum in seen:
                continue
            seen.add(item.idnum)
            key = item.idnum
            item = item.get_object()
        else:
            key = None
        if item is None:
            continue
        if isinstance(item, (ArrayObject, list)):
            pending.extend(item)
            continue
        if hasattr(item, "get_data"):
            if key is None or key not in sizes:
                size = len(item.get_data())
                if key is None:
                    total += size
                    continue
                sizes[key] = size
            total += sizes[key]
            pending.append(_forms(item))
    return total


def _forms(owner: Any) -> list[Any]:
    """The form XObjects named in the resources of a page or form (their content is text too)."""
    try:
        resources = owner.get("/Resources")
        resources = resources.get_object() if resources is not None else None
        xobjects = resources.get("/XObject") if resources is not None else None
        xobjects = xobjects.get_object() if xobjects is not None else None
    except (AttributeError, TypeError):
        return []
    if not xobjects:
        return []
    forms = []
    for reference in xobjects.values():
        target = reference.get_object() if hasattr(reference, "get_object") else reference
        if getattr(target, "get", None) is not None and target.get("/Subtype") == "/Form":
            forms.append(reference)
    return forms
