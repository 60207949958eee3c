"""A small markdown reader for Word and PDF: headings, lists, tables, quotes, code, paragraphs and
bold/italic/code runs. Those formats cannot take HTML, so the answer is rebuilt from these blocks."""

from __future__ import annotations

import re
from typing import Any

_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*(\d+)[.)]\s+(.*)$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
# `_x_` is emphasis only at word edges: snake_case names such as p_value stay as they are
_INLINE = re.compile(r"(\*\*[^*]+\*\*|__[^_]+__|`[^`]+`|\*[^*\s][^*]*\*|(?<![\w\\])_[^_\s](?:[^_]*[^_\s])?_(?!\w))")
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~])")
_LINK = re.compile(r"\[([^\]]*)\]\(([^)]*)\)")


def markdown_blocks(text: str) -> list[tuple[str, Any]]:
    """('heading', (level, text)), ('bullet', text), ('numbered', (n, text)), ('table', rows), ('para', text)."""
    blocks: list[tuple[str, Any]] = []
    lines = (text or "").replace("\r\n", "\n").split("\n")
    para: list[str] = []

    def flush() -> None:
        if para:
            blocks.append(("para", " ".join(s.strip() for s in para)))
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip().startswith("|"):
            flush()
            rows, i = _table(lines, i)
            blocks.append(("table", rows))
            continue
        if line.strip().startswith("```"):
            flush()
            code, i = _fenced_code(lines, i)
            blocks.append(("code", code))
        elif block := _line_block(line):
            flush()
            blocks.append(block)
        elif line.strip():
            para.append(line)
        else:
            flush()
        i += 1
    flush()
    return blocks


def _line_block(line: str) -> tuple[str, Any] | None:
    """The block a single line makes on its own (heading, list item, quote), or None."""
    if m := _HEADING.match(line):
        return "heading", (len(m.group(1)), m.group(2).strip())
    if m := _BULLET.match(line):
        return "bullet", m.group(1).strip()
    if m := _NUMBERED.match(line):
        return "numbered", (int(m.group(1)), m.group(2).strip())
    if line.lstrip().startswith(">"):
        return "quote", line.lstrip()[1:].strip()
    return None


def _fenced_code(lines: list[str], start: int) -> tuple[str, int]:
    """The code after the fence at `start`, and the index of its closing fence (or the end)."""
    i = start + 1
    code = []
    while i < len(lines) and not lines[i].strip().startswith("```"):
        code.append(lines[i])
        i += 1
    return "\n".join(code), i


def _table(lines: list[str], start: int) -> tuple[list[list[str]], int]:
    """The cells of the pipe table at `start` (rule lines dropped), and the index after it."""
    i = start
    rows = []
    while i < len(lines) and lines[i].strip().startswith("|"):
        if not _TABLE_RULE.match(lines[i]):
            rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
        i += 1
    return rows, i


def inline_runs(text: str) -> list[tuple[str, str]]:
    """Split inline markdown into (style, text) runs; style is '', 'b', 'i' or 'code'."""
    runs = []
    for part in _INLINE.split(text or ""):
        if not part:
            continue
        if (part.startswith("**") and part.endswith("**")) or (part.startswith("__") and part.endswith("__")):
            runs.append(("b", part[2:-2]))
        elif part.startswith("`") and part.endswith("`") and len(part) > 1:
            runs.append(("code", part[1:-1]))
        elif part[0] in "*_" and part.endswith(part[0]) and len(part) > 2:
            runs.append(("i", part[1:-1]))
        else:
            runs.append(("", _ESCAPED.sub(r"\1", _LINK.sub(r"\1 (\2)", part))))
    return runs
