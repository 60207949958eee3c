"""Render a report.json object as Markdown, a self-contained HTML page, Word and PDF.

Everything that comes from data or from the model is escaped: the answer's markdown is converted
only after raw HTML in it is neutralised, and links are rebuilt with safe targets only.
"""

from __future__ import annotations

import base64
import copy
import html
import json
import math
import re
import shutil
from pathlib import Path
from typing import Any

import markdown as md
from jinja2 import Environment
from markupsafe import Markup

from app.reports.i18n import label, labels

CONFIDENCE_COLOURS = {"high": "#1e7b3a", "medium": "#b26a00", "low": "#b3261e"}


# --------------------------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------------------------

def _lang(report: dict[str, Any]) -> str:
    return report.get("language") if report.get("language") in ("zh", "en") else "en"


def format_value(value: Any) -> str:
    """Numbers as a reader wants them: 4 significant digits for floats, separators for ints."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "—"
        if value == int(value) and abs(value) < 1e15:
            return format_value(int(value))
        if abs(value) >= 1e5 or abs(value) < 1e-3:
            return f"{value:.3g}"
        return f"{value:.4g}"
    if value is None:
        return "—"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _args_text(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in (arguments or {}).items())


def _figure_file(path: str, base_dir: Path | None) -> Path | None:
    if not path:
        return None
    candidate = Path(path)
    if not candidate.is_absolute() and base_dir is not None:
        candidate = Path(base_dir) / candidate
    return candidate if candidate.is_file() else None


def _evidence_numbers(report: dict[str, Any]) -> dict[str, int]:
    return {item["id"]: n for n, item in enumerate(report.get("evidence", []), start=1)}


def _task_status(task: dict[str, Any], language: str) -> str:
    text = label(task.get("status") or "pending", language)
    if task.get("status") == "completed" and task.get("completed_by") in ("evidence", "model"):
        text += f" ({label('completed_by_' + task['completed_by'], language)})"
    return text


def _model_text(report: dict[str, Any], language: str) -> str:
    model = report.get("model") or {}
    if model.get("kind") == "builtin":
        return label("builtin", language)
    return f"{model.get('name', '')} ({model.get('kind', '')})"


# --------------------------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------------------------

def to_markdown(report: dict[str, Any]) -> str:
    lang = _lang(report)
    L = labels(lang)
    numbers = _evidence_numbers(report)
    out = [f"# {L['title']}", "", f"**{L['question']}:** {report.get('question', '')}", ""]
    meta = [f"{L['model']}: {_model_text(report, lang)}"]
    if report.get("created_at"):
        meta.append(f"{L['generated']}: {report['created_at']}")
    for dataset in report.get("datasets", []):
        sheet = f" [{dataset['sheet']}]" if dataset.get("sheet") else ""
        meta.append(f"{L['datasets']}: {dataset.get('file')}{sheet}, {dataset.get('rows')} {L['rows_unit']}")
    out += [f"_{' · '.join(meta)}_", "", f"## {L['answer']}", "", (report.get("answer") or "").strip(), ""]

    if report.get("unverified_numbers"):
        out += [f"> **{L['unverified_title']}:** {L['unverified_text']}",
                "> " + ", ".join(f"`{n}`" for n in report["unverified_numbers"]), ""]
    if report.get("warnings"):
        out += [f"## {L['warnings']}", ""] + [f"- {w}" for w in report["warnings"]] + [""]

    out += [f"## {L['evidence']}", ""]
    if not report.get("evidence"):
        out += [L["no_evidence"], ""]
    figures_by_evidence: dict[str, list[int]] = {}
    for n, figure in enumerate(report.get("figures", []), start=1):
        if figure.get("evidence_id"):
            figures_by_evidence.setdefault(figure["evidence_id"], []).append(n)
    for item in report.get("evidence", []):
        conf = item.get("confidence", "medium")
        out += [f"### E{numbers[item['id']]}. {item.get('claim', '')}", "",
                f"- **{L['confidence']}:** {label(conf, lang)}",
                f"- **{L['method']}:** {item.get('method', '')}"]
        if item.get("result_summary"):
            out.append(f"- **{L['result']}:** {item['result_summary']}")
        if item.get("sample_size") is not None:
            out.append(f"- **{L['sample_size']}:** {item['sample_size']}")
        if item.get("limitations"):
            out.append(f"- **{L['limitations']}:** " + "; ".join(item["limitations"]))
        out.append(f"- **{L['based_on']}:** " + ", ".join(f"`{c}`" for c in item.get("tool_call_ids", [])))
        if item["id"] in figures_by_evidence:
            out.append(f"- **{L['figures']}:** " + ", ".join(f"{L['figure']} {n}" for n in figures_by_evidence[item["id"]]))
        out.append("")
        if item.get("metrics"):
            out += [f"| {L['metric']} | {L['value']} |", "|---|---|"]
            out += [f"| {_md_cell(k)} | {_md_cell(format_value(v))} |" for k, v in item["metrics"].items()]
            out.append("")

    if report.get("figures"):
        out += [f"## {L['figures']}", ""]
        for n, figure in enumerate(report["figures"], start=1):
            caption = figure.get("caption") or ""
            out += [f"![{L['figure']} {n}: {caption}]({figure.get('path', '')})", "",
                    f"*{L['figure']} {n}. {caption}*" + (f" — {L['supports']} E{numbers[figure['evidence_id']]}"
                                                          if figure.get("evidence_id") in numbers else ""), ""]

    out += [f"## {L['how']}", ""]
    if report.get("method_notes"):
        out += [f"**{L['methods_used']}:** " + "; ".join(report["method_notes"]), ""]
    if report.get("tools_used"):
        out += [f"**{L['tools_used']}:** " + ", ".join(f"`{t}`" for t in report["tools_used"]), ""]
    out += [f"### {L['plan']}", ""]
    if report.get("tasks"):
        for task in report["tasks"]:
            mark = "x" if task.get("status") == "completed" else " "
            out.append(f"- [{mark}] {task.get('subject', '')} — {_task_status(task, lang)}")
    else:
        out.append(L["no_plan"])
    out.append("")
    if report.get("tool_calls"):
        out += [f"### {L['tool_calls']}", "", f"| {L['id']} | {L['tool']} | {L['arguments']} | {L['status']} | {L['duration']} |",
                "|---|---|---|---|---|"]
        for call in report["tool_calls"]:
            out.append(f"| `{call['id']}` | {call['tool']} | {_md_cell(_args_text(call.get('arguments', {})))} | "
                       f"{L['ok'] if call.get('ok') else L['failed']} | {format_value(call.get('duration_ms'))} |")
        out.append("")
    if report.get("limitations"):
        out += [f"## {L['all_limitations']}", ""] + [f"- {x}" for x in report["limitations"]] + [""]
    return "\n".join(out).rstrip() + "\n"


def _md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


# --------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------

_SAFE_HREF = re.compile(r"^(https?:|mailto:|#)", re.IGNORECASE)
_A_TAG = re.compile(r"<a\s[^>]*?href=\"([^\"]*)\"[^>]*>", re.IGNORECASE)
_IMG_TAG = re.compile(r"<img\s[^>]*?>", re.IGNORECASE)
_HEADING_TAG = re.compile(r"<(/?)h([1-6])>")
_ALT = re.compile(r"alt=\"([^\"]*)\"", re.IGNORECASE)


def answer_html(text: str) -> Markup:
    """Model markdown to HTML with no raw HTML, no scripts, no remote images, safe links only."""
    neutralised = (text or "").replace("<", "&lt;")
    rendered = md.markdown(neutralised, extensions=["tables", "sane_lists", "fenced_code"], output_format="html")

    def link(match: re.Match) -> str:
        href = html.unescape(match.group(1)).strip()
        if _SAFE_HREF.match(href):
            return f'<a href="{html.escape(href, quote=True)}" rel="noopener noreferrer">'
        return "<a>"

    def image(match: re.Match) -> str:  # a self-contained page loads nothing: keep the alt text
        alt = _ALT.search(match.group(0))
        return f"<span class=\"img-alt\">[{alt.group(1) if alt else ''}]</span>"

    rendered = _HEADING_TAG.sub(lambda m: f"<{m.group(1)}h{max(3, min(int(m.group(2)) + 1, 6))}>", rendered)  # under h2
    rendered = _A_TAG.sub(link, rendered)
    rendered = _IMG_TAG.sub(image, rendered)
    return Markup(rendered)


def _data_uri(path: Path) -> str:
    mime = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".svg": "image/svg+xml",
            ".gif": "image/gif", ".webp": "image/webp"}.get(path.suffix.lower(), "image/png")
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


_CSS = """
:root{--ink:#1d2433;--muted:#5b6475;--line:#e3e6ec;--bg:#f6f7f9;--card:#fff;--accent:#2952cc}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:16px/1.6 -apple-system,BlinkMacSystemFont,"Segoe UI",
"PingFang SC","Hiragino Sans GB","Microsoft YaHei","Noto Sans CJK SC",Roboto,Helvetica,Arial,sans-serif}
main{max-width:980px;margin:0 auto;padding:32px 20px 64px}
h1{font-size:28px;margin:0 0 8px}
h2{font-size:21px;margin:36px 0 12px;padding-bottom:6px;border-bottom:1px solid var(--line)}
h3{font-size:17px;margin:0 0 8px}
.question{font-size:18px;margin:8px 0}
.meta{color:var(--muted);font-size:13px}
.meta span+span:before{content:" · "}
section.answer{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:8px 24px;margin-top:20px}
.answer table,.metrics,.calls,.plan{border-collapse:collapse;width:100%;font-size:14px;margin:8px 0}
.answer th,.answer td,.metrics th,.metrics td,.calls th,.calls td,.plan th,.plan td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
.metrics th,.calls th,.plan th,.answer th{background:#f0f2f5}
.metrics td.num{font-variant-numeric:tabular-nums;text-align:right}
.caveat{background:#fff8e1;border:1px solid #f0c36d;border-left:6px solid #e0a800;border-radius:8px;padding:12px 16px;margin:20px 0}
.caveat code,.unverified{background:#ffe08a;border-radius:4px;padding:0 4px;font-weight:600}
.warnings{background:#fdecea;border:1px solid #f5b7b1;border-radius:8px;padding:12px 16px;margin:20px 0}
.warnings h2,.caveat h2{border:0;margin:0 0 6px;font-size:16px;padding:0}
.cards{display:grid;gap:14px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:16px 20px}
.card .head{display:flex;gap:10px;align-items:flex-start}
.card .num{color:var(--muted);font-weight:700}
.badge{display:inline-block;color:#fff;border-radius:999px;padding:1px 10px;font-size:12px;font-weight:600;white-space:nowrap}
.facts{margin:8px 0;color:var(--ink);font-size:14px}
.facts dt{font-weight:600;color:var(--muted);float:left;clear:left;min-width:120px}
.facts dd{margin:0 0 4px 130px}
.ids code,.calls code{font-size:12px;background:#eef1f6;border-radius:4px;padding:0 4px}
figure{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px;margin:0 0 14px}
figure img{max-width:100%;height:auto;display:block;margin:0 auto}
figcaption{font-size:14px;color:var(--muted);margin-top:6px}
.missing-fig{color:var(--muted);font-style:italic}
details{margin:8px 0}
summary{cursor:pointer;color:var(--accent)}
.status-completed{color:#1e7b3a;font-weight:600}.status-in_progress{color:#2952cc}.status-pending{color:var(--muted)}
.fail{color:#b3261e;font-weight:600}
footer{margin-top:40px;color:var(--muted);font-size:12px}
a{color:var(--accent)}
@media print{body{background:#fff}details{display:block}summary{display:none}.card,figure{break-inside:avoid}}
"""

_TEMPLATE = """<!DOCTYPE html>
<html lang="{{ 'zh-CN' if lang == 'zh' else 'en' }}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>{{ L.title }} — {{ report.question }}</title>
<style>{{ css }}</style>
</head>
<body>
<main>
<header>
  <h1>{{ L.title }}</h1>
  <p class="question"><strong>{{ L.question }}:</strong> {{ report.question }}</p>
  <p class="meta">
    <span>{{ L.model }}: {{ model_text }}</span>
    {% if report.created_at %}<span>{{ L.generated }}: {{ report.created_at }}</span>{% endif %}
    {% for d in report.datasets %}<span>{{ d.file }}{% if d.sheet %} [{{ d.sheet }}]{% endif %}, {{ d.rows }} {{ L.rows_unit }}</span>{% endfor %}
  </p>
</header>

<section class="answer" id="answer">
  <h2>{{ L.answer }}</h2>
  {{ answer }}
</section>

{% if report.unverified_numbers %}
<aside class="caveat" id="unverified">
  <h2>⚠ {{ L.unverified_title }}</h2>
  <p>{{ L.unverified_text }}</p>
  <p>{% for n in report.unverified_numbers %}<code>{{ n }}</code> {% endfor %}</p>
</aside>
{% endif %}

{% if report.warnings %}
<aside class="warnings" id="warnings">
  <h2>{{ L.warnings }}</h2>
  <ul>{% for w in report.warnings %}<li>{{ w }}</li>{% endfor %}</ul>
</aside>
{% endif %}

<section id="evidence">
  <h2>{{ L.evidence }}</h2>
  {% if report.evidence %}<p class="meta">{{ L.evidence_intro }}</p>{% else %}<p>{{ L.no_evidence }}</p>{% endif %}
  <div class="cards">
  {% for e in evidence %}
    <article class="card" id="ev-{{ e.id }}">
      <div class="head">
        <span class="num">E{{ loop.index }}</span>
        <h3>{{ e.claim }}</h3>
        <span class="badge" style="background:{{ e.colour }}" title="{{ L.confidence }}">{{ L.confidence }}: {{ e.confidence_label }}</span>
      </div>
      <dl class="facts">
        <dt>{{ L.method }}</dt><dd>{{ e.method or '—' }}</dd>
        {% if e.result_summary %}<dt>{{ L.result }}</dt><dd>{{ e.result_summary }}</dd>{% endif %}
        <dt>{{ L.sample_size }}</dt><dd>{{ e.sample_size_text }}</dd>
        {% if e.limitations %}<dt>{{ L.limitations }}</dt><dd><ul>{% for x in e.limitations %}<li>{{ x }}</li>{% endfor %}</ul></dd>{% endif %}
        {% if e.figures %}<dt>{{ L.figures }}</dt><dd>{% for n in e.figures %}<a href="#fig-{{ n }}">{{ L.figure }} {{ n }}</a> {% endfor %}</dd>{% endif %}
      </dl>
      {% if e.metric_rows %}
      <details open><summary>{{ L.metrics }}</summary>
        <table class="metrics"><thead><tr><th>{{ L.metric }}</th><th>{{ L.value }}</th></tr></thead><tbody>
        {% for k, v in e.metric_rows %}<tr><td>{{ k }}</td><td class="num">{{ v }}</td></tr>{% endfor %}
        </tbody></table>
      </details>
      {% endif %}
      <p class="ids meta">{{ L.based_on }}: {% for c in e.calls %}<a href="#call-{{ c.id }}"><code>{{ c.id }}</code></a>{% if c.tool %} ({{ c.tool }}){% endif %}{% if not loop.last %}, {% endif %}{% endfor %}</p>
    </article>
  {% endfor %}
  </div>
</section>

{% if figures %}
<section id="figures">
  <h2>{{ L.figures }}</h2>
  {% for f in figures %}
  <figure id="fig-{{ loop.index }}">
    {% if f.src %}<img src="{{ f.src }}" alt="{{ f.caption }}">{% else %}<p class="missing-fig">{{ f.path }}</p>{% endif %}
    <figcaption><strong>{{ L.figure }} {{ loop.index }}.</strong> {{ f.caption }}
      {% if f.evidence_number %} — {{ L.supports }} <a href="#ev-{{ f.evidence_id }}">E{{ f.evidence_number }}</a>{% endif %}
      {% if f.tool_call_id %}<span class="meta"> ({{ L.from_call }} <a href="#call-{{ f.tool_call_id }}"><code>{{ f.tool_call_id }}</code></a>)</span>{% endif %}
    </figcaption>
  </figure>
  {% endfor %}
</section>
{% endif %}

<section id="how">
  <h2>{{ L.how }}</h2>
  {% if report.method_notes %}<p><strong>{{ L.methods_used }}:</strong> {{ report.method_notes|join('; ') }}</p>{% endif %}
  {% if report.tools_used %}<p><strong>{{ L.tools_used }}:</strong> {% for t in report.tools_used %}<code>{{ t }}</code> {% endfor %}</p>{% endif %}
  <h3>{{ L.plan }}</h3>
  {% if tasks %}
  <table class="plan"><thead><tr><th>#</th><th>{{ L.task }}</th><th>{{ L.status }}</th><th>{{ L.evidence }}</th></tr></thead><tbody>
  {% for t in tasks %}<tr><td>{{ loop.index }}</td><td>{{ t.subject }}</td><td class="status-{{ t.status }}">{{ t.status_text }}</td>
    <td>{% if t.evidence_number %}<a href="#ev-{{ t.evidence_id }}">E{{ t.evidence_number }}</a>{% endif %}</td></tr>{% endfor %}
  </tbody></table>
  {% else %}<p class="meta">{{ L.no_plan }}</p>{% endif %}
  {% if report.tool_calls %}
  <details><summary>{{ L.tool_calls }} ({{ report.tool_calls|length }})</summary>
  <table class="calls"><thead><tr><th>{{ L.id }}</th><th>{{ L.tool }}</th><th>{{ L.arguments }}</th><th>{{ L.status }}</th><th>{{ L.duration }}</th></tr></thead><tbody>
  {% for c in calls %}<tr id="call-{{ c.id }}"><td><code>{{ c.id }}</code></td><td>{{ c.tool }}</td><td><code>{{ c.args }}</code></td>
    <td>{% if c.ok %}{{ L.ok }}{% else %}<span class="fail">{{ L.failed }}</span>{% if c.error %}: {{ c.error }}{% endif %}{% endif %}</td><td>{{ c.duration }}</td></tr>{% endfor %}
  </tbody></table>
  </details>
  {% endif %}
  {% if report.datasets %}
  <h3>{{ L.datasets }}</h3>
  {% for d in report.datasets %}
  <details><summary>{{ d.file }}{% if d.sheet %} [{{ d.sheet }}]{% endif %} — {{ d.rows }} {{ L.rows_unit }}, {{ d.columns|length }} {{ L.columns_unit }}</summary>
    <table class="metrics"><tbody>{% for c in d.columns %}<tr><td>{{ c.name }}</td><td>{{ c.type }}</td></tr>{% endfor %}</tbody></table>
  </details>
  {% endfor %}
  {% endif %}
</section>

{% if report.limitations %}
<section id="limitations">
  <h2>{{ L.all_limitations }}</h2>
  <ul>{% for x in report.limitations %}<li>{{ x }}</li>{% endfor %}</ul>
</section>
{% endif %}

<footer>{{ L.footer }}{% if report.run_id %} · {{ L.run }} {{ report.run_id }}{% endif %}</footer>
</main>
</body>
</html>
"""

_ENV = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
_PAGE = _ENV.from_string(_TEMPLATE)


def to_html(report: dict[str, Any], base_dir: str | Path | None = None) -> str:
    """A self-contained page: inline CSS, figures as data URIs, nothing fetched from anywhere.

    Relative figure paths are resolved against `base_dir` (the folder of report.json).
    """
    lang = _lang(report)
    L = labels(lang)
    numbers = _evidence_numbers(report)
    base = Path(base_dir) if base_dir is not None else None
    tools = {c["id"]: c.get("tool") for c in report.get("tool_calls", [])}

    figures = []
    for figure in report.get("figures", []):
        file = _figure_file(figure.get("path", ""), base)
        figures.append({**figure, "src": _data_uri(file) if file else None,
                        "evidence_number": numbers.get(figure.get("evidence_id"))})
    figures_by_evidence: dict[str, list[int]] = {}
    for n, figure in enumerate(figures, start=1):
        if figure.get("evidence_id"):
            figures_by_evidence.setdefault(figure["evidence_id"], []).append(n)

    evidence = []
    for item in report.get("evidence", []):
        conf = item.get("confidence") if item.get("confidence") in CONFIDENCE_COLOURS else "medium"
        evidence.append({**item, "colour": CONFIDENCE_COLOURS[conf], "confidence_label": label(conf, lang),
                         "sample_size_text": format_value(item.get("sample_size")),
                         "metric_rows": [(k, format_value(v)) for k, v in (item.get("metrics") or {}).items()],
                         "figures": figures_by_evidence.get(item["id"], []),
                         "calls": [{"id": c, "tool": tools.get(c)} for c in item.get("tool_call_ids", [])]})
    tasks = [{**t, "status_text": _task_status(t, lang), "evidence_number": numbers.get(t.get("evidence_id"))}
             for t in report.get("tasks", [])]
    calls = [{**c, "args": _args_text(c.get("arguments", {})), "duration": format_value(c.get("duration_ms")),
              "error": (c.get("error") or {}).get("message") or (c.get("error") or {}).get("error")}
             for c in report.get("tool_calls", [])]
    return _PAGE.render(report=report, L=L, lang=lang, css=Markup(_CSS), answer=answer_html(report.get("answer", "")),
                        model_text=_model_text(report, lang), evidence=evidence, figures=figures, tasks=tasks,
                        calls=calls)


# --------------------------------------------------------------------------------------------
# A small markdown reader for Word and PDF (headings, lists, tables, paragraphs, bold/italic/code)
# --------------------------------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*(\d+)[.)]\s+(.*)$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_INLINE = re.compile(r"(\*\*[^*]+\*\*|__[^_]+__|`[^`]+`|\*[^*\s][^*]*\*)")


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
        if not line.strip():
            flush()
        elif line.strip().startswith("```"):
            flush()
            code = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                code.append(lines[i])
                i += 1
            blocks.append(("code", "\n".join(code)))
        elif m := _HEADING.match(line):
            flush()
            blocks.append(("heading", (len(m.group(1)), m.group(2).strip())))
        elif line.strip().startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                if not _TABLE_RULE.match(lines[i]):
                    rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            blocks.append(("table", rows))
            continue
        elif m := _BULLET.match(line):
            flush()
            blocks.append(("bullet", m.group(1).strip()))
        elif m := _NUMBERED.match(line):
            flush()
            blocks.append(("numbered", (int(m.group(1)), m.group(2).strip())))
        elif line.lstrip().startswith(">"):
            flush()
            blocks.append(("quote", line.lstrip()[1:].strip()))
        else:
            para.append(line)
        i += 1
    flush()
    return blocks


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
        elif part.startswith("*") and part.endswith("*") and len(part) > 2:
            runs.append(("i", part[1:-1]))
        else:
            runs.append(("", re.sub(r"\[([^\]]*)\]\(([^)]*)\)", r"\1 (\2)", part)))
    return runs


# --------------------------------------------------------------------------------------------
# Word
# --------------------------------------------------------------------------------------------

def to_docx(report: dict[str, Any], path: str | Path, base_dir: str | Path | None = None) -> Path:
    try:
        from docx import Document
        from docx.enum.text import WD_ALIGN_PARAGRAPH
        from docx.oxml.ns import qn
        from docx.shared import Inches, Pt, RGBColor
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise RuntimeError("Word export needs the python-docx package (pip install python-docx).") from exc

    lang = _lang(report)
    L = labels(lang)
    numbers = _evidence_numbers(report)
    base = Path(base_dir) if base_dir is not None else Path(path).parent
    doc = Document()
    for style_name in ("Normal", "Title", "Heading 1", "Heading 2", "Heading 3", "List Bullet", "List Number"):
        try:
            style = doc.styles[style_name]
        except KeyError:
            continue
        rpr = style.element.get_or_add_rPr()
        fonts = rpr.find(qn("w:rFonts"))
        if fonts is None:
            fonts = rpr.makeelement(qn("w:rFonts"), {})
            rpr.append(fonts)
        fonts.set(qn("w:eastAsia"), "SimHei")  # Chinese text; Word falls back when it is not installed
    doc.styles["Normal"].font.size = Pt(10.5)

    def add_runs(paragraph, text: str) -> None:
        for style, chunk in inline_runs(text):
            run = paragraph.add_run(chunk)
            run.bold = style == "b"
            run.italic = style == "i"
            if style == "code":
                run.font.name = "Consolas"

    def add_table(rows: list[list[str]], header: bool = True) -> None:
        if not rows:
            return
        width = max(len(r) for r in rows)
        table = doc.add_table(rows=len(rows), cols=width)
        table.style = "Table Grid"
        for r, row in enumerate(rows):
            for c in range(width):
                cell = table.cell(r, c)
                cell.text = ""
                add_runs(cell.paragraphs[0], row[c] if c < len(row) else "")
                if header and r == 0:
                    for run in cell.paragraphs[0].runs:
                        run.bold = True
        doc.add_paragraph()

    def add_markdown(text: str) -> None:
        for kind, value in markdown_blocks(text):
            if kind == "heading":
                doc.add_heading(value[1], level=min(value[0] + 1, 4))
            elif kind == "bullet":
                add_runs(doc.add_paragraph(style="List Bullet"), value)
            elif kind == "numbered":
                add_runs(doc.add_paragraph(), f"{value[0]}. {value[1]}")
            elif kind == "table":
                add_table(value)
            elif kind == "code":
                run = doc.add_paragraph().add_run(value)
                run.font.name = "Consolas"
            elif kind == "quote":
                p = doc.add_paragraph()
                add_runs(p, value)
                p.paragraph_format.left_indent = Inches(0.3)
            else:
                add_runs(doc.add_paragraph(), value)

    doc.add_heading(L["title"], level=0)
    p = doc.add_paragraph()
    p.add_run(f"{L['question']}: ").bold = True
    p.add_run(report.get("question", ""))
    meta = [f"{L['model']}: {_model_text(report, lang)}"]
    if report.get("created_at"):
        meta.append(f"{L['generated']}: {report['created_at']}")
    for d in report.get("datasets", []):
        meta.append(f"{d.get('file')}" + (f" [{d['sheet']}]" if d.get("sheet") else "") + f", {d.get('rows')} {L['rows_unit']}")
    small = doc.add_paragraph().add_run(" · ".join(meta))
    small.font.size = Pt(9)
    small.font.color.rgb = RGBColor(0x5B, 0x64, 0x75)

    doc.add_heading(L["answer"], level=1)
    add_markdown(report.get("answer", ""))

    if report.get("unverified_numbers"):
        doc.add_heading(L["unverified_title"], level=2)
        p = doc.add_paragraph(L["unverified_text"] + " ")
        run = p.add_run(", ".join(report["unverified_numbers"]))
        run.bold = True
        run.font.color.rgb = RGBColor(0xB2, 0x6A, 0x00)
    if report.get("warnings"):
        doc.add_heading(L["warnings"], level=2)
        for w in report["warnings"]:
            doc.add_paragraph(w, style="List Bullet")

    doc.add_heading(L["evidence"], level=1)
    if not report.get("evidence"):
        doc.add_paragraph(L["no_evidence"])
    figure_numbers: dict[str, list[str]] = {}
    for n, figure in enumerate(report.get("figures", []), start=1):
        figure_numbers.setdefault(figure.get("evidence_id"), []).append(f"{L['figure']} {n}")
    for item in report.get("evidence", []):
        doc.add_heading(f"E{numbers[item['id']]}. {item.get('claim', '')}", level=2)
        conf = item.get("confidence", "medium")
        p = doc.add_paragraph()
        p.add_run(f"{L['confidence']}: ").bold = True
        badge = p.add_run(label(conf, lang))
        badge.bold = True
        colour = CONFIDENCE_COLOURS.get(conf, CONFIDENCE_COLOURS["medium"]).lstrip("#")
        badge.font.color.rgb = RGBColor.from_string(colour.upper())
        facts = [(L["method"], item.get("method") or "—")]
        if item.get("result_summary"):
            facts.append((L["result"], item["result_summary"]))
        facts.append((L["sample_size"], format_value(item.get("sample_size"))))
        if item.get("limitations"):
            facts.append((L["limitations"], "; ".join(item["limitations"])))
        facts.append((L["based_on"], ", ".join(item.get("tool_call_ids", []))))
        if item["id"] in figure_numbers:
            facts.append((L["figures"], ", ".join(figure_numbers[item["id"]])))
        for key, value in facts:
            p = doc.add_paragraph()
            p.add_run(f"{key}: ").bold = True
            p.add_run(str(value))
        if item.get("metrics"):
            add_table([[L["metric"], L["value"]]] + [[str(k), format_value(v)] for k, v in item["metrics"].items()])

    if report.get("figures"):
        doc.add_heading(L["figures"], level=1)
        for n, figure in enumerate(report["figures"], start=1):
            file = _figure_file(figure.get("path", ""), base)
            if file is not None:
                try:
                    doc.add_picture(str(file), width=Inches(6))
                    doc.paragraphs[-1].alignment = WD_ALIGN_PARAGRAPH.CENTER
                except Exception:  # an unreadable image must not lose the report
                    doc.add_paragraph(str(figure.get("path")))
            caption = f"{L['figure']} {n}. {figure.get('caption', '')}"
            if figure.get("evidence_id") in numbers:
                caption += f" — {L['supports']} E{numbers[figure['evidence_id']]}"
            cap = doc.add_paragraph()
            run = cap.add_run(caption)
            run.italic = True
            cap.alignment = WD_ALIGN_PARAGRAPH.CENTER

    doc.add_heading(L["how"], level=1)
    if report.get("method_notes"):
        p = doc.add_paragraph()
        p.add_run(f"{L['methods_used']}: ").bold = True
        p.add_run("; ".join(report["method_notes"]))
    if report.get("tools_used"):
        p = doc.add_paragraph()
        p.add_run(f"{L['tools_used']}: ").bold = True
        p.add_run(", ".join(report["tools_used"]))
    doc.add_heading(L["plan"], level=2)
    if report.get("tasks"):
        add_table([["#", L["task"], L["status"]]] + [[str(n), t.get("subject", ""), _task_status(t, lang)]
                                                    for n, t in enumerate(report["tasks"], start=1)])
    else:
        doc.add_paragraph(L["no_plan"])
    if report.get("tool_calls"):
        doc.add_heading(L["tool_calls"], level=2)
        add_table([[L["id"], L["tool"], L["arguments"], L["status"], L["duration"]]] +
                  [[c["id"], c.get("tool", ""), _args_text(c.get("arguments", {})), L["ok"] if c.get("ok") else L["failed"],
                    format_value(c.get("duration_ms"))] for c in report["tool_calls"]])
    if report.get("limitations"):
        doc.add_heading(L["all_limitations"], level=1)
        for x in report["limitations"]:
            doc.add_paragraph(x, style="List Bullet")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(str(path))
    return path


# --------------------------------------------------------------------------------------------
# PDF
# --------------------------------------------------------------------------------------------

_PDF_FONT: str | None = None


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


def _pdf_font() -> str:
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


_PDF_GLYPHS: set[int] | None = None


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


def _pdf_fallback(markup: str) -> str:
    glyphs = _pdf_glyphs()
    if not glyphs or _PDF_FONT == "Helvetica":
        return markup
    return "".join(ch if ord(ch) < 128 or ord(ch) in glyphs else f'<font name="Helvetica">{ch}</font>' for ch in markup)


def _pdf_inline(text: str) -> str:
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


def to_pdf(report: dict[str, Any], path: str | Path, base_dir: str | Path | None = None) -> Path:
    try:
        from reportlab.lib import colors
        from reportlab.lib.enums import TA_CENTER
        from reportlab.lib.pagesizes import A4
        from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
        from reportlab.lib.units import cm
        from reportlab.lib.utils import ImageReader
        from reportlab.platypus import Image, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise RuntimeError("PDF export needs the reportlab package (pip install reportlab).") from exc

    lang = _lang(report)
    L = labels(lang)
    numbers = _evidence_numbers(report)
    base = Path(base_dir) if base_dir is not None else Path(path).parent
    font = _pdf_font()
    wrap = "CJK" if lang == "zh" or font != "Helvetica" else None
    sheet = getSampleStyleSheet()

    def style(name: str, parent: str, **kw: Any) -> ParagraphStyle:
        extra = {"wordWrap": wrap} if wrap else {}
        return ParagraphStyle(name, parent=sheet[parent], fontName=font, **extra, **kw)

    body = style("VBody", "BodyText", fontSize=10, leading=14)
    small = style("VSmall", "BodyText", fontSize=8, leading=11, textColor=colors.HexColor("#5b6475"))
    cell = style("VCell", "BodyText", fontSize=8, leading=10)
    caption = style("VCaption", "BodyText", fontSize=9, leading=12, alignment=TA_CENTER,
                    textColor=colors.HexColor("#5b6475"))
    h = {0: style("VTitle", "Title", fontSize=20, leading=24), 1: style("VH1", "Heading1", fontSize=15, leading=19),
         2: style("VH2", "Heading2", fontSize=12.5, leading=16), 3: style("VH3", "Heading3", fontSize=11, leading=14)}
    caveat = style("VCaveat", "BodyText", fontSize=10, leading=14, backColor=colors.HexColor("#fff8e1"),
                   borderColor=colors.HexColor("#e0a800"), borderWidth=0.8, borderPadding=6)
    width = A4[0] - 4 * cm

    story: list[Any] = []

    def para(text: str, st: ParagraphStyle = body, markup: bool = False) -> None:
        story.append(Paragraph(_pdf_fallback(text if markup else html.escape(str(text), quote=False)), st))

    def table(rows: list[list[str]], col_widths: list[float] | None = None) -> None:
        if not rows:
            return
        n = max(len(r) for r in rows)
        data = [[Paragraph(_pdf_fallback(_pdf_inline(r[c])) if c < len(r) else "", cell) for c in range(n)] for r in rows]
        t = Table(data, colWidths=col_widths or [width / n] * n, repeatRows=1)
        t.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.4, colors.HexColor("#c9ced6")),
                               ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#f0f2f5")),
                               ("VALIGN", (0, 0), (-1, -1), "TOP")]))
        story.append(t)
        story.append(Spacer(1, 6))

    def image(file: Path) -> None:
        w, hgt = ImageReader(str(file)).getSize()
        scale = min(width / w, (12 * cm) / hgt, 1.0 if w < width else width / w)
        story.append(Image(str(file), width=w * scale, height=hgt * scale))

    para(L["title"], h[0])
    para(f"<b>{html.escape(L['question'])}:</b> {html.escape(report.get('question', ''), quote=False)}", body, markup=True)
    meta = [f"{L['model']}: {_model_text(report, lang)}"]
    if report.get("created_at"):
        meta.append(f"{L['generated']}: {report['created_at']}")
    for d in report.get("datasets", []):
        meta.append(f"{d.get('file')}" + (f" [{d['sheet']}]" if d.get("sheet") else "") + f", {d.get('rows')} {L['rows_unit']}")
    para(" · ".join(meta), small)

    para(L["answer"], h[1])
    for kind, value in markdown_blocks(report.get("answer", "")):
        if kind == "heading":
            para(_pdf_inline(value[1]), h[min(value[0] + 1, 3)], markup=True)
        elif kind == "bullet":
            para("· " + _pdf_inline(value), body, markup=True)
        elif kind == "numbered":
            para(f"{value[0]}. " + _pdf_inline(value[1]), body, markup=True)
        elif kind == "table":
            table(value)
        elif kind == "code":
            para(html.escape(value).replace("\n", "<br/>"), small, markup=True)
        else:
            para(_pdf_inline(value), body, markup=True)

    if report.get("unverified_numbers"):
        story.append(Spacer(1, 8))
        para(f"<b>{html.escape(L['unverified_title'])}:</b> {html.escape(L['unverified_text'])} <b>"
             + html.escape(", ".join(report["unverified_numbers"])) + "</b>", caveat, markup=True)
        story.append(Spacer(1, 8))
    if report.get("warnings"):
        para(L["warnings"], h[2])
        for w in report["warnings"]:
            para("· " + html.escape(w, quote=False), body, markup=True)

    para(L["evidence"], h[1])
    if not report.get("evidence"):
        para(L["no_evidence"])
    figure_numbers: dict[str, list[str]] = {}
    for n, figure in enumerate(report.get("figures", []), start=1):
        figure_numbers.setdefault(figure.get("evidence_id"), []).append(f"{L['figure']} {n}")
    for item in report.get("evidence", []):
        conf = item.get("confidence", "medium")
        colour = CONFIDENCE_COLOURS.get(conf, CONFIDENCE_COLOURS["medium"])
        para(f"E{numbers[item['id']]}. " + html.escape(item.get("claim", ""), quote=False), h[2], markup=True)
        para(f"<b>{html.escape(L['confidence'])}:</b> <font color='{colour}'><b>{html.escape(label(conf, lang))}</b></font>",
             body, markup=True)
        facts = [(L["method"], item.get("method") or "—")]
        if item.get("result_summary"):
            facts.append((L["result"], item["result_summary"]))
        facts.append((L["sample_size"], format_value(item.get("sample_size"))))
        if item.get("limitations"):
            facts.append((L["limitations"], "; ".join(item["limitations"])))
        facts.append((L["based_on"], ", ".join(item.get("tool_call_ids", []))))
        if item["id"] in figure_numbers:
            facts.append((L["figures"], ", ".join(figure_numbers[item["id"]])))
        for key, value in facts:
            para(f"<b>{html.escape(key)}:</b> {html.escape(str(value), quote=False)}", body, markup=True)
        if item.get("metrics"):
            table([[L["metric"], L["value"]]] + [[str(k), format_value(v)] for k, v in item["metrics"].items()],
                  [width * 0.5, width * 0.5])

    if report.get("figures"):
        para(L["figures"], h[1])
        for n, figure in enumerate(report["figures"], start=1):
            file = _figure_file(figure.get("path", ""), base)
            if file is not None:
                try:
                    image(file)
                except Exception:  # an unreadable image must not lose the report
                    para(str(figure.get("path")), small)
            text = f"{L['figure']} {n}. {figure.get('caption', '')}"
            if figure.get("evidence_id") in numbers:
                text += f" — {L['supports']} E{numbers[figure['evidence_id']]}"
            para(text, caption)
            story.append(Spacer(1, 8))

    para(L["how"], h[1])
    if report.get("method_notes"):
        para(f"<b>{html.escape(L['methods_used'])}:</b> " + html.escape("; ".join(report["method_notes"]), quote=False),
             body, markup=True)
    if report.get("tools_used"):
        para(f"<b>{html.escape(L['tools_used'])}:</b> " + html.escape(", ".join(report["tools_used"]), quote=False),
             body, markup=True)
    para(L["plan"], h[2])
    if report.get("tasks"):
        table([["#", L["task"], L["status"]]] + [[str(n), t.get("subject", ""), _task_status(t, lang)]
                                                for n, t in enumerate(report["tasks"], start=1)],
              [width * 0.08, width * 0.62, width * 0.3])
    else:
        para(L["no_plan"])
    if report.get("tool_calls"):
        para(L["tool_calls"], h[2])
        table([[L["id"], L["tool"], L["arguments"], L["status"], L["duration"]]] +
              [[c["id"], c.get("tool", ""), _args_text(c.get("arguments", {})), L["ok"] if c.get("ok") else L["failed"],
                format_value(c.get("duration_ms"))] for c in report["tool_calls"]],
              [width * 0.18, width * 0.2, width * 0.38, width * 0.1, width * 0.14])
    if report.get("limitations"):
        para(L["all_limitations"], h[1])
        for x in report["limitations"]:
            para("· " + html.escape(x, quote=False), body, markup=True)

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = SimpleDocTemplate(str(path), pagesize=A4, leftMargin=2 * cm, rightMargin=2 * cm, topMargin=2 * cm,
                            bottomMargin=2 * cm, title=L["title"], author="Verity")
    doc.build(story)
    return path


# --------------------------------------------------------------------------------------------
# All files
# --------------------------------------------------------------------------------------------

def portable_report(report: dict[str, Any], out_dir: str | Path) -> dict[str, Any]:
    """Copy the figures into out_dir/figures/ and return a copy of the report that points there."""
    out = Path(out_dir)
    folder = out / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    portable = copy.deepcopy(report)
    used: dict[str, str] = {}
    for figure in portable.get("figures", []):
        source = _figure_file(figure.get("path", ""), None)
        if source is None:
            continue
        key = str(source.resolve())
        if key not in used:
            name = re.sub(r"[^\w.-]+", "_", source.name) or "figure.png"
            stem, suffix = Path(name).stem, Path(name).suffix or ".png"
            n = 1
            while name in used.values():
                n += 1
                name = f"{stem}_{n}{suffix}"
            if source.resolve() != (folder / name).resolve():
                shutil.copyfile(source, folder / name)
            used[key] = name
        figure["path"] = f"figures/{used[key]}"
    return portable


def write_report_files(report: dict[str, Any], out_dir: str | Path,
                       datasets: list[dict[str, Any]] | None = None) -> dict[str, Path]:
    """Write report.json, .md, .html, .docx, .pdf and figures/ (and analysis.py when `datasets` is given).

    Returns {"json", "md", "html", "docx", "pdf", "figures", ["analysis"]} -> path. A format whose
    library is missing is skipped (its key is absent) rather than losing the others.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    portable = portable_report(report, out)
    written: dict[str, Path] = {"figures": out / "figures"}
    written["json"] = out / "report.json"
    written["json"].write_text(json.dumps(portable, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
    written["md"] = out / "report.md"
    written["md"].write_text(to_markdown(portable), encoding="utf-8")
    written["html"] = out / "report.html"
    written["html"].write_text(to_html(portable, base_dir=out), encoding="utf-8")
    for key, writer in (("docx", to_docx), ("pdf", to_pdf)):
        try:
            written[key] = writer(portable, out / f"report.{key}", base_dir=out)
        except RuntimeError:
            continue
    if datasets is not None:
        from app.reports.script import to_analysis_script

        written["analysis"] = out / "analysis.py"
        written["analysis"].write_text(to_analysis_script(portable, datasets), encoding="utf-8")
    return written
