"""A report as a folder: report.json, every rendering, the figures and (optionally) analysis.py."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path
from typing import Any

from app.reports.docx_report import to_docx
from app.reports.html_report import to_html
from app.reports.markdown_report import to_markdown
from app.reports.pdf_report import to_pdf
from app.reports.report_parts import figure_file


def portable_report(report: dict[str, Any], out_dir: str | Path) -> dict[str, Any]:
    """Copy the figures into out_dir/figures/ and return a copy of the report that points there."""
    folder = Path(out_dir) / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    portable = copy.deepcopy(report)
    used: dict[str, str] = {}  # resolved source path -> file name in figures/
    for figure in portable.get("figures", []):
        source = figure_file(figure.get("path", ""), None)
        if source is None:
            continue
        key = str(source.resolve())
        if key not in used:
            used[key] = _copy_figure(source, folder, set(used.values()))
        figure["path"] = f"figures/{used[key]}"
    return portable


def _copy_figure(source: Path, folder: Path, taken: set[str]) -> str:
    """Copy one figure into folder under a safe name no other figure uses; returns that name."""
    name = re.sub(r"[^\w.-]+", "_", source.name) or "figure.png"
    stem, suffix = Path(name).stem, Path(name).suffix or ".png"
    n = 1
    while name in taken:
        n += 1
        name = f"{stem}_{n}{suffix}"
    if source.resolve() != (folder / name).resolve():
        shutil.copyfile(source, folder / name)
    return name


def write_report_files(
    report: dict[str, Any], out_dir: str | Path, datasets: list[dict[str, Any]] | None = None
) -> dict[str, Path]:
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
        written["analysis"] = write_analysis_script(portable, out, datasets)
    return written


def write_analysis_script(report: dict[str, Any], out_dir: str | Path, datasets: list[dict[str, Any]]) -> Path:
    """analysis.py alone (what `verity analyze` checks before it writes the other files, once)."""
    from app.reports.script import to_analysis_script

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "analysis.py"
    path.write_text(to_analysis_script(portable_report(report, out), datasets), encoding="utf-8")
    return path
