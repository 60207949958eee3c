"""What stays in the context when a tool output leaves it (SPEC §4 levels 1 and 2).

Tool outputs are tagged text (`[method]`, `[metrics]`, `[interpretation]` ...). A shortened output
keeps its head and its closing summary sections; a compact preview keeps the structured tags and
the conclusion lines (a number next to words such as significant / increase / 显著 / 下降), which is
what the rest of an analysis leans on.
"""

from __future__ import annotations

import re

TAG_LINE = re.compile(r"^\[([A-Za-z_]+)\]\s*$", re.M)
# Sections worth keeping in a compact preview, in the order they are kept.
KEEP_TAGS = (
    "conclusion",
    "insights",
    "evidence",
    "data_profile",
    "dataset",
    "method",
    "interpretation",
    "metrics",
    "summary",
    "figures",
    "error",
    "warning",
)
# Sections that close an output (tool_message_content appends them): kept when the head is cut.
TAIL_TAGS = ("interpretation", "metrics", "figures", "dataset", "conclusion", "insights")
CONCLUSION_WORDS = re.compile(
    r"conclu|significan|increas|decreas|differ|higher|lower|declin|grow|rose|fell|drop|correlat|predict|"
    r"accuracy|r²|r\^2|r_squared|p\s*[=<>]|p-value|effect|average|mean|median|total|"
    r"结论|发现|显著|增加|下降|上升|减少|提高|降低|增长|差异|相关|平均|准确率",
    re.I,
)
DIGIT = re.compile(r"\d")
REFERENCE = re.compile(r'read_tool_output\(id="([^"]+)"')
COMPACTED = "[compacted tool result"
PERSISTED = "<persisted-output"


def sections(text: str) -> list[tuple[str | None, str]]:
    """Split tagged text into (tag, body) pairs; text before the first tag has tag None."""
    out: list[tuple[str | None, str]] = []
    matches = list(TAG_LINE.finditer(text))
    if not matches or matches[0].start() > 0:
        out.append((None, text[: matches[0].start() if matches else len(text)].strip("\n")))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        out.append((match.group(1).lower(), text[match.end() : end].strip("\n")))
    return [(tag, body) for tag, body in out if tag or body]


def clip(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a line end when one is near."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    if cut < limit * 0.6:
        cut = max(limit - 1, 0)
    return text[:cut].rstrip() + "…"


def conclusion_lines(text: str, limit: int = 8) -> list[str]:
    """Lines that state a finding with a number, e.g. "Revenue increased 12% (p = 0.003)"."""
    found: list[str] = []
    for line in text.splitlines():
        line = line.strip(" -*\t")
        if line and DIGIT.search(line) and CONCLUSION_WORDS.search(line) and line not in found:
            found.append(clip(line, 240))
            if len(found) >= limit:
                break
    return found


def shorten(text: str, limit: int) -> str:
    """The head of `text` plus its closing summary sections, in at most `limit` characters."""
    if len(text) <= limit:
        return text
    tail = [f"[{tag}]\n{clip(body, max(limit // 6, 80))}" for tag, body in sections(text) if tag in TAIL_TAGS and body]
    tail_text = clip("\n\n".join(tail), limit // 2) if tail else ""
    marker = "\n…\n"
    head = clip(text, max(limit - len(tail_text) - len(marker) - 1, 0))
    if tail_text and tail_text.split("\n", 1)[0] not in head:
        head = head + marker + tail_text
    return head[:limit]


def compact_preview(text: str, output_id: str, tool: str = "", limit: int = 800) -> str:
    """Level 2: what stays of an old tool result — tags, conclusion lines and the way back."""
    head = f'{COMPACTED} {tool or "tool"}: full output with read_tool_output(id="{output_id}")]'
    if text.lstrip().startswith("{"):  # a structured error: short and all of it matters
        return head + "\n" + clip(text, max(limit - len(head), 0))
    kept: list[str] = []
    by_tag = {}
    for tag, body in sections(_strip_wrappers(text)):
        if tag in KEEP_TAGS and tag not in by_tag:
            by_tag[tag] = body
    bodies: set[str] = set()
    for tag in KEEP_TAGS:
        body = by_tag.get(tag, "").strip()
        if body and body not in bodies:  # tools often repeat a line under two tags
            bodies.add(body)
            kept.append(f"[{tag}]\n{clip(body, 200 if tag != 'conclusion' else 400)}")
    lines = [line for line in conclusion_lines(text) if not any(line in block for block in kept)]
    if lines:
        kept.append("[key lines]\n" + "\n".join(f"- {line}" for line in lines))
    if not kept:
        kept.append(clip(text, 200))
    return clip(head + "\n" + "\n".join(kept), limit)


def reference_of(text: str | None) -> str | None:
    """The persisted-output id a shortened or compacted message points to."""
    match = REFERENCE.search(text or "")
    if match:
        return match.group(1)
    match = re.search(r'<persisted-output id="([^"]+)"', text or "")
    return match.group(1) if match else None


def _strip_wrappers(text: str) -> str:
    """The level-1 wrapper and its trailing reference line (the compact preview has its own)."""
    text = re.sub(r"</?persisted-output[^>]*>", "", text)
    return re.sub(r"^(?:The full output \(|\[truncated\] ).*$", "", text, flags=re.M)
