"""Model-written Markdown never carries markup or script: not in the HTML of the page and the report
(markdown-it-py with HTML off, then nh3), and not in report.md's text (neutralised, then checked by
a Markdown renderer with HTML on)."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from app.reports.markdown_report import to_markdown
from app.reports.safe_markdown import markdown_is_safe, neutralize_markdown, render_markdown

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<div>\nblock <iframe src=//evil.example></iframe>\n</div>",
    "[a](javascript:alert(1))",
    "[b](JaVaScRiPt:alert(1))",
    "[c](&#106;avascript:alert(1))",
    "[d]( <javascript:alert(1)>)",
    "[e](data:text/html;base64,PHNjcmlwdD4=)",
    "[f](vbscript:msgbox(1))",
    "[g]\n\n[g]: javascript:alert(1)",
    "[h](\njavascript:alert(1))",
    "<javascript:alert(1)>",
    "![i](javascript:alert(1))",
    '<a href="javascript:alert(1)">x</a>',
    "<!-- hidden --> <?php x ?>",
]


def rendered_with_html_on(text: str) -> str:
    """What a Markdown viewer that lets HTML through would make of the text (markdown-it's own link
    check turned off, so a dangerous target would show)."""
    md = MarkdownIt("commonmark", {"html": True})
    md.validateLink = lambda url: True
    return md.render(text)


def tags_only(page: str) -> str:
    """The tags and attributes of an HTML page, without its text (where escaped markup may be shown)."""
    return re.sub(r">[^<]*<", "><", page)


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_text_is_neutralised(text):
    safe = neutralize_markdown(f"Intro\n\n{text}\n\nOutro")
    assert markdown_is_safe(safe)
    page = rendered_with_html_on(safe)
    assert not re.search(r"<(script|img\b(?! src=\"#\")|iframe|div|a href=\"(?!#))", page, re.IGNORECASE), page
    assert "javascript:" not in tags_only(page).lower()
    assert "Intro" in safe and "Outro" in safe


@pytest.mark.parametrize("text", HOSTILE)
def test_html_rendering_has_no_markup_from_the_text(text):
    for images in ("alt", "local"):
        page = str(render_markdown(text, images=images))
        assert not re.search(r"<(script|iframe|div|img)\b", page), page
        assert not re.search(r"\son\w+=", tags_only(page)) and "javascript:" not in tags_only(page).lower()


def test_ordinary_markdown_is_left_alone():
    text = (
        "## Findings\n\n1. Revenue is **12.3%** higher (p < 0.05, n = 240).\n2. See [the method](https://"
        "example.com/a_(b)) and <https://example.com>.\n\n| a | b |\n|---|--:|\n| 1 | `<x>` |\n\n"
        "```\n<script>kept in code</script>\n```\n\n![Figure 1](figures/fig_1.png)"
    )
    # links are written as text, the address in a code span (issue 25); the rest is left as it is
    assert neutralize_markdown(text) == text.replace(
        "[the method](https://example.com/a_(b)) and <https://example.com>",
        "the method (`https://example.com/a_(b)`) and `https://example.com`",
    )
    page = str(render_markdown(text, images="local", heading_floor=3, mark=["12.3%"], mark_title="check"))
    assert "<h3>Findings</h3>" in page and '<mark class="unverified" title="check">12.3%</mark>' in page
    # links are shown as text (issue 25): the label, then the target
    assert "the method (https://example.com/a_(b))" in page and "<a " not in page
    assert "<table>" in page and "<code>&lt;x&gt;</code>" in page and "&lt;script&gt;kept in code" in page
    assert '<span class="img-alt">[Figure 1]</span>' in page  # not a path on this site
    assert '<img src="/workspaces/w/figures/f.png" alt="f">' in str(
        render_markdown("![f](/workspaces/w/figures/f.png)", images="local")
    )
    assert "img-alt" in str(render_markdown("![f](/workspaces/w/figures/f.png)", images="alt"))


def test_report_md_carries_no_raw_html_or_dangerous_links():
    report = {
        "question": "<script>q()</script>",
        "language": "en",
        "answer": "Revenue differs. <script>alert(1)</script> [more](javascript:alert(2))",
        "evidence": [
            {
                "id": "e1",
                "claim": "<img src=x onerror=alert(3)>",
                "method": "t-test",
                "metrics": {"p<script>": 0.01},
                "limitations": ["<b>small</b>"],
                "tool_call_ids": ["c1"],
                "confidence": "low",
            }
        ],
        "figures": [{"path": "figures/f.png", "caption": "<svg onload=alert(4)>"}],
        "warnings": ["[w](javascript:alert(5))"],
        "tasks": [],
        "tool_calls": [],
    }
    text = to_markdown(report)
    assert markdown_is_safe(text)
    assert "<script" not in text and "<img" not in text and "<svg" not in text and "javascript:" not in text
    assert "Revenue differs." in text and "![Figure 1: &lt;svg onload=alert(4)>](figures/f.png)" in text
