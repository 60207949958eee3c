"""Model-written Markdown, safe wherever it goes.

As HTML (`render_markdown`): markdown-it-py with raw HTML turned off (a `<script>` in the text is
shown as text), links shown as text (`label (target)`, never clickable: an answer's facts come from
the data, so a link in it came from the data or was made up, and a planted "sign in again" link must
not be one click away; issue 25), images either dropped to their alt text (a
self-contained report loads nothing) or allowed from this site only (the live page); then nh3
cleans the result against an allowlist, so nothing outside it can pass even if a rule above missed.

As Markdown text (`neutralize_markdown`, for report.md): raw HTML is escaped and dangerous link
targets are replaced, so a Markdown viewer that renders HTML shows it as text; markdown-it-py then
checks that no HTML and no unsafe link is left.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Literal
from urllib.parse import unquote

import nh3
from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup

SAFE_SCHEMES = ("http:", "https:", "mailto:")
ALLOWED_TAGS = {
    "p",
    "br",
    "hr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "strong",
    "em",
    "del",
    "s",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "a",
    "img",
    "span",
    "mark",
}
ALLOWED_ATTRIBUTES = {
    "a": {"href"},
    "img": {"src", "alt"},
    "span": {"class"},
    "mark": {"class", "title"},
    "ol": {"start"},
    "code": {"class"},
}


def _parser(html_blocks: bool) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": html_blocks}).enable(["table", "strikethrough"])
    md.validateLink = lambda url: True  # type: ignore[method-assign]  # judged below (`safe_link`)
    return md


_RENDER = _parser(html_blocks=False)
_CHECK = _parser(html_blocks=True)


def render_markdown(
    text: str,
    *,
    images: Literal["alt", "local"] = "alt",
    heading_floor: int | None = None,
    mark: Iterable[str] = (),
    mark_title: str = "",
) -> Markup:
    """Convert; `mark` lists numbers to highlight (e.g. unverified ones)."""
    tokens = _RENDER.parse(text or "")
    numbers = sorted({str(n) for n in mark if str(n).strip()}, key=len, reverse=True)
    for token in tokens:
        if token.type in ("heading_open", "heading_close") and heading_floor:
            token.tag = f"h{max(heading_floor, min(int(token.tag[1]) + 1, 6))}"
        children = token.children or []
        for index, child in enumerate(children):
            _make_safe(children, index, child, images)
        if children:
            token.children = _links_as_text(children)
        if numbers and token.children:
            token.children = [piece for child in token.children for piece in _marked(child, numbers, mark_title)]
    rendered = _RENDER.renderer.render(tokens, _RENDER.options, {})
    return Markup(
        nh3.clean(
            rendered,
            tags=ALLOWED_TAGS,
            attributes=ALLOWED_ATTRIBUTES,
            url_schemes={s.rstrip(":") for s in SAFE_SCHEMES},
            link_rel="noopener noreferrer",
        )
    )


def markdown_snippet(text: str, length: int = 180) -> str:
    """The words of a Markdown text without its markup (no `**`, `###`), shortened to about `length`
    characters at a word: a one-line preview of an answer."""
    words = " ".join(render_markdown(text).striptags().split())
    if len(words) <= length:
        return words
    return words[:length].rsplit(" ", 1)[0].rstrip(",;:") + " …"


_SCHEME = re.compile(r"^[a-z][a-z0-9+.\-]*:")


def safe_link(url: str) -> bool:
    """http(s) or mailto, or a reference without a scheme (a fragment, a path on this site, a file
    beside the report) that does not leave for another host (`//host`)."""
    target = re.sub(r"[\x00-\x20\x7f]", "", html.unescape(unquote(url or ""))).lower()
    if _SCHEME.match(target):
        return target.startswith(SAFE_SCHEMES)
    return not target.startswith(("//", "\\", "/\\")) and "\\" not in target


def _is_local(url: str) -> bool:
    return url.startswith("/") and not url.startswith("//") and "\\" not in url


def _make_safe(children: list[Token], index: int, token: Token, images: str) -> None:
    if token.type == "link_open" and not safe_link(str(token.attrGet("href") or "")):
        token.attrs.pop("href", None)
    elif token.type == "image":
        src = str(token.attrGet("src") or "")
        if images == "alt" or not (_is_local(src) and safe_link(src)):
            alt = Token("html_inline", "", 0, content=f'<span class="img-alt">[{html.escape(token.content)}]</span>')
            children[index] = alt


def _links_as_text(children: list[Token]) -> list[Token]:
    """Each link's tags dropped: its label stays, followed by its target in brackets as plain text
    (once, when the label is the target itself: an autolink)."""
    out: list[Token] = []
    targets: list[tuple[str, int]] = []  # (href, where its label starts in `out`)
    for child in children:
        if child.type == "link_open":
            targets.append((str(child.attrGet("href") or ""), len(out)))
        elif child.type == "link_close" and targets:
            href, start = targets.pop()
            label = "".join(t.content for t in out[start:] if t.type in ("text", "code_inline"))
            if href and label.strip() != href and unquote(label.strip()) != unquote(href):
                out.append(_text(f" ({href})"))
        else:
            out.append(child)
    return out


def _marked(token: Token, numbers: list[str], title: str) -> list[Token]:
    """A text token split so each listed number sits in a <mark> (code is left alone)."""
    if token.type != "text" or not token.content:
        return [token]
    pattern = re.compile("|".join(rf"(?<![\w.]){re.escape(n)}(?![\w]|\.\d)" for n in numbers))
    pieces, last = [], 0
    for match in pattern.finditer(token.content):
        pieces.append(_text(token.content[last : match.start()]))
        pieces.append(
            Token(
                "html_inline",
                "",
                0,
                content=f'<mark class="unverified" title="{html.escape(title)}">{html.escape(match.group(0))}</mark>',
            )
        )
        last = match.end()
    if not pieces:
        return [token]
    return [*pieces, _text(token.content[last:])]


def _text(content: str) -> Token:
    return Token("text", "", 0, content=content)


# --- the .md text itself ----------------------------------------------------------------------
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
_AUTOLINK = re.compile(r"<(?:https?://|mailto:)[^\s<>]*>", re.IGNORECASE)
_INLINE_TARGET = re.compile(r"(\]\(\s*)(<[^>]*>|(?:[^\s()]|\([^\s()]*\))+)")  # one level of (balanced) parens
_REFERENCE = re.compile(r"^(\s{0,3}\[[^\]]+\]:\s*)(<[^>]*>|\S+)", re.MULTILINE)
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def neutralize_markdown(text: str) -> str:
    """Markdown text with raw HTML escaped (`<script>` → `&lt;script>`), links written as text (the
    label, then the address in a code span: never clickable, issue 25) and dangerous image targets
    (`javascript:`, `data:`, ...) replaced by `#`, outside code blocks and code spans. Ordinary
    Markdown, `p < 0.05` and images are left as they are."""
    out, fence = [], None
    for line in (text or "").split("\n"):
        opened = _FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)[0]
        elif fence is not None:
            if opened and opened.group(1)[0] == fence:
                fence = None
        else:
            line = _neutralize_line(line)
        out.append(line)
    result = "\n".join(out)
    return result if markdown_is_safe(result) else _escape_everything(result)


# An inline link (not an image) and an autolink: written as text, the address in a code span, which
# no Markdown viewer makes clickable (GitHub links bare addresses, not code).
_INLINE_LINK = re.compile(r"(?<![!\\])\[([^\]\n]*)\]\(\s*(<[^>]*>|(?:[^\s()]|\([^\s()]*\))+)(?:\s+\"[^\"]*\")?\s*\)")


def _link_as_text(match: re.Match) -> str:
    label, target = match.group(1), match.group(2).strip("<>").replace("`", "%60")
    if not target or not safe_link(target):  # javascript:, data:, ...: not even as text
        return label
    return f"{label} (`{target}`)" if label.strip() != target else f"`{target}`"


def _autolink_as_text(match: re.Match) -> str:
    return "`" + match.group(0)[1:-1].replace("`", "%60") + "`"


def _neutralize_line(line: str) -> str:
    parts = re.split(r"(`+[^`]*`+)", line)  # code spans stay as written: they render as text
    for n in range(0, len(parts), 2):
        parts[n] = _AUTOLINK.sub(_autolink_as_text, _INLINE_LINK.sub(_link_as_text, parts[n]))
    parts = re.split(r"(`+[^`]*`+)", "".join(parts))  # the addresses are code spans now
    for n in range(0, len(parts), 2):
        part = _REFERENCE.sub(_safe_target, _INLINE_TARGET.sub(_safe_target, parts[n]))
        keep = {m.start() for m in _AUTOLINK.finditer(part)}
        parts[n] = "".join(
            "&lt;" if c == "<" and i not in keep and _TAG_START.match(part, i) else c for i, c in enumerate(part)
        )
    return "".join(parts)


def _safe_target(match: re.Match) -> str:
    target = match.group(2).strip("<>")
    return match.group(0) if safe_link(target) or not target else match.group(1) + "#"


def markdown_is_safe(text: str) -> bool:
    """No raw HTML and no link or image to an unsafe target, as a Markdown renderer with HTML on sees it."""
    for token in _CHECK.parse(text):
        if token.type == "html_block":
            return False
        for child in token.children or []:
            if child.type == "html_inline":
                return False
            if child.type in ("link_open", "image"):
                target = str(child.attrGet("href") or child.attrGet("src") or "")
                if not safe_link(target):
                    return False
    return True


def _escape_everything(text: str) -> str:
    """The last resort for text the rules above could not make safe: every `<` and `[` escaped."""
    return text.replace("<", "&lt;").replace("[", "\\[")
