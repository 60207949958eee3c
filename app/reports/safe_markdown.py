"""Model-written markdown as HTML that can never inject markup: raw HTML is escaped before the
conversion, links keep safe targets only, and images are either dropped to their alt text (a
self-contained report loads nothing) or allowed from this site only (the live page)."""

from __future__ import annotations

import html
import re
from typing import Iterable, Literal

import markdown
from markupsafe import Markup

_A_TAG = re.compile(r"<a\s[^>]*?href=\"([^\"]*)\"[^>]*>", re.IGNORECASE)
_IMG_TAG = re.compile(r"<img\s[^>]*?>", re.IGNORECASE)
_IMG_SRC = re.compile(r"src=\"([^\"]*)\"", re.IGNORECASE)
_ALT = re.compile(r"alt=\"([^\"]*)\"", re.IGNORECASE)
_HEADING_TAG = re.compile(r"<(/?)h([1-6])>")
_WEB_LINK = re.compile(r"^(https?:|mailto:|#)", re.IGNORECASE)


def render_markdown(text: str, *, images: Literal["alt", "local"] = "alt", heading_floor: int | None = None,
                    mark: Iterable[str] = (), mark_title: str = "") -> Markup:
    """Convert; `mark` lists numbers to highlight (e.g. unverified ones)."""
    source = html.escape(text or "", quote=False)
    source = _mark_numbers(source, mark, mark_title)
    rendered = markdown.markdown(source, extensions=["tables", "sane_lists", "fenced_code"], output_format="html")
    if heading_floor:
        rendered = _HEADING_TAG.sub(lambda m: f"<{m.group(1)}h{max(heading_floor, min(int(m.group(2)) + 1, 6))}>",
                                    rendered)
    rendered = _A_TAG.sub(_safe_link, rendered)
    rendered = _IMG_TAG.sub(_image_alt if images == "alt" else _local_image, rendered)
    return Markup(rendered)


def _mark_numbers(source: str, numbers: Iterable[str], title: str) -> str:
    tag = f'<mark class="unverified" title="{html.escape(title)}">{{}}</mark>'
    for number in sorted({str(n) for n in numbers if str(n).strip()}, key=len, reverse=True):
        pattern = rf"(?<![\w.]){re.escape(html.escape(number, quote=False))}(?![\w]|\.\d)"
        source = re.sub(pattern, lambda m: tag.format(m.group(0)), source)
    return source


def _is_local(url: str) -> bool:
    return url.startswith("/") and not url.startswith("//")


def _safe_link(match: re.Match) -> str:
    href = html.unescape(match.group(1)).strip()
    if _WEB_LINK.match(href) or _is_local(href):
        return f'<a href="{html.escape(href, quote=True)}" rel="noopener noreferrer">'
    return "<a>"


def _image_alt(match: re.Match) -> str:
    alt = _ALT.search(match.group(0))
    return f"<span class=\"img-alt\">[{alt.group(1) if alt else ''}]</span>"


def _local_image(match: re.Match) -> str:
    src = _IMG_SRC.search(match.group(0))
    return match.group(0) if src and _is_local(html.unescape(src.group(1)).strip()) else _image_alt(match)
