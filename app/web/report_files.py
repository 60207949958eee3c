"""A stored report as files next to the workspace's data, which its downloads and shared copies are made from."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from app.config import Settings
from app.db.models import Report
from app.reports import render


def report_folder(report: Report, settings: Settings) -> Path:
    """The report as files next to the workspace's data: figures/ copied in, PDF and Word written once.

    The figure paths in report.json name files under the data dir as the server saw it (often relative
    to its working directory); every download is made from this folder, whose figures/ travel with it."""
    return settings.workspace_dir(report.workspace_id) / "reports" / report.id / "files"


def portable_content(report: Report, settings: Settings) -> dict[str, Any]:
    """report.json whose figure paths are `figures/NAME` inside report_folder (copied there on first use)."""
    located = copy.deepcopy(report.content or {})
    figures_dir = settings.workspace_dir(report.workspace_id) / "figures"
    own_dir = report_folder(report, settings) / "figures"  # copied when the report was made (runs.finish)
    for figure in located.get("figures", []):
        name = Path(str(figure.get("path") or "")).name
        # the report's own copy first: the workspace's figures/ is pruned to its budget
        found = next((f for f in (own_dir / name, figures_dir / name) if name and f.is_file()), None)
        if found is not None:
            figure["path"] = str(found.resolve())
    return render.portable_report(located, report_folder(report, settings))
