"""Downloads of the latest report of a workspace (or of one run with `?run=`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.config import Settings
from app.db.models import Dataset, Report
from app.reports import render
from app.web.deps import ApiError, CommittingRoute, DbSessionDep, SettingsDep, WorkspaceDep
from app.web.security import REPORT_CSP
from app.workspaces import active_datasets

router = APIRouter(tags=["reports"], route_class=CommittingRoute)

MEDIA_TYPES = {
    "html": "text/html; charset=utf-8",
    "md": "text/markdown; charset=utf-8",
    "json": "application/json",
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "py": "text/x-python; charset=utf-8",
}
BINARY_WRITERS: dict[str, Callable] = {"pdf": render.to_pdf, "docx": render.to_docx}


def latest_report(session: Session, workspace_id: str, run_id: str | None = None) -> Report:
    query = select(Report).where(Report.workspace_id == workspace_id)
    if run_id:
        query = query.where(Report.run_id == run_id)
    report = session.scalars(query.order_by(Report.created_at.desc(), Report.id)).first()
    if report is None:
        raise ApiError(404, "no_report", "There is no report yet: ask a question and let the analysis finish.",
                       "Reports are written when a run finishes.")
    return report


def attachment(filename: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="{filename}"'}


def text_response(text: str, fmt: str, filename: str) -> Response:
    headers = attachment(filename)
    if fmt == "html":  # the self-contained report: its own inline styles, no script (app/web/security.py)
        headers["Content-Security-Policy"] = REPORT_CSP
    return Response(text.encode("utf-8"), media_type=MEDIA_TYPES[fmt], headers=headers)


def binary_file(report: Report, fmt: str, settings: Settings) -> Path:
    """PDF and Word files are written once per report and kept next to the workspace's files."""
    folder = settings.workspace_dir(report.workspace_id) / "reports" / report.id
    path = folder / f"report.{fmt}"
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        try:
            BINARY_WRITERS[fmt](report.content, path)
        except RuntimeError as exc:  # the renderer's library is missing
            raise ApiError(501, "format_unavailable", f"{fmt.upper()} reports are not available here: {exc}",
                           "Download the HTML or Word version instead.") from exc
    return path


@router.get("/api/workspaces/{ws}/report.{fmt}", name="report_file")
def report_file(fmt: str, workspace: WorkspaceDep, session: DbSessionDep, settings: SettingsDep,
                run: str | None = None) -> Response:
    if fmt not in ("html", "md", "json", "pdf", "docx"):
        raise ApiError(404, "not_found", f"Unknown report format '{fmt}'.", "Use html, md, json, pdf or docx.")
    report = latest_report(session, workspace.id, run)
    filename = f"report.{fmt}"
    if fmt == "json":
        return text_response(json.dumps(report.content, ensure_ascii=False, indent=2, default=str), fmt, filename)
    if fmt == "md":
        return text_response(render.to_markdown(report.content), fmt, filename)
    if fmt == "html":
        return text_response(render.to_html(report.content), fmt, filename)
    return FileResponse(binary_file(report, fmt, settings), media_type=MEDIA_TYPES[fmt], filename=filename)


@router.get("/api/workspaces/{ws}/analysis.py", name="analysis_script")
def analysis_script(workspace: WorkspaceDep, session: DbSessionDep, run: str | None = None) -> Response:
    from app.reports.script import to_analysis_script

    report = latest_report(session, workspace.id, run)
    datasets = [script_dataset(d) for d in active_datasets(session, workspace.id)]
    return text_response(to_analysis_script(report.content, datasets), "py", "analysis.py")


def script_dataset(dataset: Dataset) -> dict:
    """How the analysis script finds a dataset: the uploaded original, re-read the same way."""
    return {"name": dataset.name, "file": dataset.file_name, "sheet": dataset.sheet,
            "original_path": dataset.original_path}
