"""The font a PDF report is set in: SimHei (from mplfonts) so Chinese renders, Helvetica otherwise.

Characters SimHei lacks are wrapped in Helvetica <font> tags rather than printed as boxes.
"""

from __future__ import annotations

import html
from pathlib import Path

from app.reports.text_blocks import inline_runs

_PDF_FONT: str | None = None
_PDF_GLYPHS: set[int] | None = None


def cjk_font_path() -> Path | None:
    """SimHei from the mplfonts package (covers Chinese and Latin)."""
    try:
        import mplfonts
    except ImportError:
        return None
    folder = Path(mplfonts.__file__).parent / "fonts"
    for name in ("SimHei.ttf",):
        if (folder / name).is_file():
            return folder / name
    return None


def pdf_font() -> str:
    """Register (once) and name the font for every paragraph style."""
    global _PDF_FONT
    if _PDF_FONT:
        return _PDF_FONT
    from reportlab.lib.fonts import addMapping
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    font = cjk_font_path()
    if font is None:
        _PDF_FONT = "Helvetica"
        return _PDF_FONT
    pdfmetrics.registerFont(TTFont("VeritySimHei", str(font)))
    for bold in (0, 1):
        for italic in (0, 1):
            addMapping("VeritySimHei", bold, italic, "VeritySimHei")
    _PDF_FONT = "VeritySimHei"
    return _PDF_FONT


def _pdf_glyphs() -> set[int]:
    """Code points the CJK font covers (characters outside it are drawn with Helvetica)."""
    global _PDF_GLYPHS
    if _PDF_GLYPHS is None:
        _PDF_GLYPHS = set()
        font = cjk_font_path()
        if font is not None:
            try:
                from fontTools.ttLib import TTFont as FontFile

                _PDF_GLYPHS = set(FontFile(str(font), lazy=True).getBestCmap())
            except Exception:  # fontTools ships with matplotlib; without it nothing is substituted
                _PDF_GLYPHS = set()
    return _PDF_GLYPHS


def pdf_fallback(markup: str) -> str:
    glyphs = _pdf_glyphs()
    if not glyphs or _PDF_FONT == "Helvetica":
        return markup
    return "".join(ch if ord(ch) < 128 or ord(ch) in glyphs else f'<font name="Helvetica">{ch}</font>' for ch in markup)


def pdf_inline(text: str) -> str:
    """Inline markdown as reportlab paragraph markup, with everything else escaped."""
    parts = []
    for style, chunk in inline_runs(text):
        chunk = html.escape(chunk, quote=False)
        if style == "b":
            chunk = f"<b>{chunk}</b>"
        elif style == "i":
            chunk = f"<i>{chunk}</i>"
        elif style == "code":
            chunk = f"<font color='#333366'>{chunk}</font>"
        parts.append(chunk)
    return "".join(parts)
