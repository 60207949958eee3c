"""The fonts a PDF report is set in: Latin text in Helvetica (its bold and italic too), and each run
of characters Helvetica cannot draw (Chinese, Japanese ...) in SimHei from mplfonts, by <font> tags.

SimHei draws Latin letters too, but as a Chinese font's Latin: an English report set wholly in it
reads badly (issue 28), so only the runs that need it switch.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Iterator
from contextlib import contextmanager
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


LATIN_FONT = "Helvetica"
CJK_FONT = "VeritySimHei"


def pdf_font() -> str:
    """The paragraph styles' font (Latin); registers the CJK font once for the runs that need it."""
    global _PDF_FONT
    if _PDF_FONT:
        return LATIN_FONT
    from reportlab.lib.fonts import addMapping
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    font = cjk_font_path()
    if font is None:
        _PDF_FONT = LATIN_FONT
        return LATIN_FONT
    pdfmetrics.registerFont(TTFont(CJK_FONT, str(font)))
    for bold in (0, 1):
        for italic in (0, 1):
            addMapping(CJK_FONT, bold, italic, CJK_FONT)
    _PDF_FONT = CJK_FONT
    return LATIN_FONT


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
            except Exception:  # noqa: BLE001 - fontTools ships with matplotlib; without it nothing is substituted
                _PDF_GLYPHS = set()
    return _PDF_GLYPHS


def load_pdf_fonts() -> None:
    """What every PDF needs before its first paragraph: the CJK font registered (pdf_font) and the
    characters it covers read (_pdf_glyphs), about 0.4 s of CPU. Best effort: a missing reportlab or an
    unreadable font is met again, and reported, where to_pdf needs them."""
    try:  # in a thread: anything raised here would print a traceback on the user's terminal
        pdf_font()
        _pdf_glyphs()
    except Exception:  # noqa: BLE001 - see above
        return


@contextmanager
def fonts_loading() -> Iterator[None]:
    """Within the block, a thread loads the PDF's fonts (load_pdf_fonts); they are loaded when it ends.
    `verity analyze` waits in such a block for its analysis.py check, which runs on the other core and
    leaves this process idle: the report files, written once the check's verdict is in, then start
    with the fonts ready instead of loading them after the wait."""
    thread = threading.Thread(target=load_pdf_fonts, name="verity-pdf-fonts", daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join()


def _latin(ch: str) -> bool:
    """Helvetica, one of PDF's standard fonts, draws the Windows-1252 characters (Latin-1, “ ” – € ...)."""
    try:
        ch.encode("cp1252")
    except UnicodeEncodeError:
        return False
    return True


def pdf_fallback(markup: str) -> str:
    """Paragraph markup with each run of characters Helvetica lacks set in the CJK font (where it has them)."""
    glyphs = _pdf_glyphs()
    if not glyphs or _PDF_FONT != CJK_FONT:
        return markup
    out: list[str] = []
    run: list[str] = []
    for ch in markup:
        if not _latin(ch) and ord(ch) in glyphs:
            run.append(ch)
            continue
        if run:
            out.append(f'<font name="{CJK_FONT}">{"".join(run)}</font>')
            run = []
        out.append(ch)
    if run:
        out.append(f'<font name="{CJK_FONT}">{"".join(run)}</font>')
    return "".join(out)


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
