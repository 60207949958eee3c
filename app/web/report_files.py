"""A stored report as files next to the workspace's data, which its downloads and shared copies are made from."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

from app.config import Settings
from app.db.models import Report
from app.reports import render
from app.storage import node_files


def report_folder(report: Report, settings: Settings) -> Path:
    """The report as files next to the workspace's data: figures/ copied in, PDF and Word written once.

    The figure paths in report.json name files under the data dir as the server saw it (often relative
    to its working directory); every download is made from this folder, whose figures/ travel with it."""
    return settings.workspace_dir(report.workspace_id) / "reports" / report.id / "files"


def portable_content(report: Report, settings: Settings) -> dict[str, Any]:
    """report.json whose figure paths are `figures/NAME` inside report_folder (copied there on first use).

    The figures are looked up by key in this node's cache and fetched from the store when another
    node made them (a report made on A and downloaded on B has every figure); the report's own copies
    are handed to the store."""
    located = copy.deepcopy(report.content or {})
    files = node_files(settings)
    figures_dir = settings.workspace_dir(report.workspace_id) / "figures"
    own_dir = report_folder(report, settings) / "figures"  # copied when the report was made (runs.finish)
    for figure in located.get("figures", []):
        name = Path(str(figure.get("path") or "")).name
        if not name or name.startswith("."):
            continue
        # the report's own copy first: the workspace's figures/ is pruned to its budget
        found = next((f for f in (files.local(files.key_of(d / name)) for d in (own_dir, figures_dir)) if f), None)
        if found is not None:
            figure["path"] = str(found.resolve())
    portable = render.portable_report(located, report_folder(report, settings))
    if files.store.remote:  # the report's own figures kept for good, whichever node copied them
        files.saved_folder(own_dir)
    return portable


def binary_file_path(report: Report, settings: Settings, fmt: str) -> Path:
    """Where the PDF or Word file of the report's current content is kept. The name carries a digest of
    the content: a report changed later (the number check's verdict) gets a new file, so no node serves
    a stale copy from its cache, and every node serves the same bytes."""
    digest = hashlib.sha256(json.dumps(report.content or {}, sort_keys=True, default=str).encode()).hexdigest()
    return report_folder(report, settings) / f"report-{digest[:16]}.{fmt}"
