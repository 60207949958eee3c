"""Downloads of the latest report of a workspace (or of one run with `?run=`)."""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session, object_session

from app.agent import unmasked
from app.config import Settings
from app.db.models import Report, Run, Workspace
from app.db.pseudonyms import workspace_book
from app.reports import render
from app.storage import node_files
from app.web.deps import ApiError, CommittingRoute, DbSessionDep, RunDep, SettingsDep, WorkspaceDep
from app.web.number_check import start_check
from app.web.report_files import binary_file_path, portable_content, report_folder
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
    "zip": "application/zip",
}
FORMATS = ("html", "md", "json", "pdf", "docx", "zip")
BINARY_WRITERS: dict[str, Callable] = {"pdf": render.to_pdf, "docx": render.to_docx}


def latest_report(session: Session, workspace_id: str, run_id: str | None = None) -> Report:
    query = select(Report).where(Report.workspace_id == workspace_id)
    if run_id:
        query = query.where(Report.run_id == run_id)
    report = session.scalars(query.order_by(Report.created_at.desc(), Report.id)).first()
    if report is None:
        raise ApiError(
            404,
            "no_report",
            "There is no report yet: ask a question and let the analysis finish.",
            "Reports are written when a run finishes.",
        )
    return report


def attachment(filename: str) -> dict[str, str]:
    """A download under `filename`: the UTF-8 name (RFC 6266) for browsers, an ASCII one for the rest."""
    if filename.isascii():
        return {"Content-Disposition": f'attachment; filename="{filename}"'}
    return {
        "Content-Disposition": f"attachment; filename=\"{_ascii_fallback(filename)}\"; filename*=utf-8''{quote(filename)}"
    }


def _ascii_fallback(filename: str) -> str:
    """What is left in ASCII, with `report` before it when no word is (a Chinese workspace and question)."""
    stem, _, ext = filename.rpartition(".")
    kept = re.sub(r"\s*-[\s-]*", "-", stem.encode("ascii", "ignore").decode()).strip("- ")
    return f"{kept if re.search('[A-Za-z]', kept) else f'report-{kept}'.rstrip('-')}.{ext}"


# Characters no file system or browser keeps in a file name, and the punctuation a question ends on.
_NOT_IN_NAMES = re.compile(r'[\\/:*?"<>|\x00-\x1f？！。，、；：“”‘’（）()\[\]{}]+')
NAME_PART_CHARS = 40  # a question longer than this is cut at a word (the name stays readable in a folder)


def download_name(session: Session, report: Report, fmt: str) -> str:
    """`门店销售-哪个门店的销售额最高-2026-12-01.pdf`: the workspace, the question and the report's day, so
    that downloads of several questions do not all arrive as report.pdf (issue 28)."""
    workspace = session.get(Workspace, report.workspace_id)
    run = session.get(Run, report.run_id) if report.run_id else None
    parts = [_name_part(workspace.name if workspace else ""), _name_part(run.question if run else "")]
    parts.append(report.created_at.strftime("%Y-%m-%d"))
    return "-".join(part for part in parts if part) + f".{fmt}"


def _name_part(text: str) -> str:
    first_sentence = re.split(r"(?<=[?？!！。])|(?<=\.)\s", (text or "").strip(), maxsplit=1)[0]
    words = _NOT_IN_NAMES.sub(" ", first_sentence).split()
    part = ""
    for word in words:
        joined = f"{part} {word}".strip()
        if len(joined) > NAME_PART_CHARS:
            return part or word[:NAME_PART_CHARS]
        part = joined
    return part


def text_response(text: str, fmt: str, filename: str) -> Response:
    headers = attachment(filename)
    if fmt == "html":  # the self-contained report: its own inline styles, no script (app/web/security.py)
        headers["Content-Security-Policy"] = REPORT_CSP
    return Response(text.encode("utf-8"), media_type=MEDIA_TYPES[fmt], headers=headers)


def owners_copy(content: dict[str, Any], report: Report, settings: Settings) -> dict[str, Any]:
    """The report as its owner reads it: the pseudonyms of personal data (kept in the stored report,
    which share links serve) replaced by the real values again (privacy.py)."""
    session = object_session(report)  # the request's, which read the report
    if session is None:
        raise LookupError(f"report {report.id} was not read through a database session")
    return unmasked(content, workspace_book(session, settings, report.workspace_id))


def owners_content(report: Report, settings: Settings) -> dict[str, Any]:
    return owners_copy(portable_content(report, settings), report, settings)


def binary_file(report: Report, fmt: str, settings: Settings) -> Path:
    """PDF and Word files are written once per report, with their figures embedded (downloads of
    the owner only: a share link serves the HTML page)."""
    folder = report_folder(report, settings)
    path = binary_file_path(report, settings, fmt)
    files = node_files(settings)
    if files.local(files.key_of(path)) is None:  # written by no node yet (else fetched: the same bytes)
        content = owners_content(report, settings)
        try:
            BINARY_WRITERS[fmt](content, path, base_dir=folder)
            files.saved(path)
        except RuntimeError as exc:  # the renderer's library is missing
            raise ApiError(
                501,
                "format_unavailable",
                f"{fmt.upper()} reports are not available here: {exc}",
                "Download the HTML or Word version instead.",
            ) from exc
    return path


def markdown_bundle(report: Report, settings: Settings) -> bytes:
    """report.md with its figures/ in one zip, so the Markdown's images work wherever it is unpacked."""
    content = owners_content(report, settings)
    folder = report_folder(report, settings)
    buffer = io.BytesIO()
    # dated by the report, not by the clock or a file's copy on this node: every node, every time, the same bytes
    made = report.created_at or datetime(1980, 1, 1)
    stamp = (max(made.year, 1980), made.month, made.day, made.hour, made.minute, made.second)

    def member(name: str) -> zipfile.ZipInfo:
        info = zipfile.ZipInfo(name, date_time=stamp)
        info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
        return info

    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr(member("report/report.md"), render.to_markdown(content))
        for name in sorted(
            {Path(f["path"]).name for f in content.get("figures", []) if (folder / str(f.get("path", ""))).is_file()}
        ):
            bundle.writestr(member(f"report/figures/{name}"), (folder / "figures" / name).read_bytes())
    return buffer.getvalue()


@router.get("/api/workspaces/{ws}/report.{fmt}", name="report_file")
def report_file(
    fmt: str, workspace: WorkspaceDep, session: DbSessionDep, settings: SettingsDep, run: str | None = None
) -> Response:
    if fmt not in FORMATS:
        raise ApiError(404, "not_found", f"Unknown report format '{fmt}'.", "Use html, md, zip, json, pdf or docx.")
    report = latest_report(session, workspace.id, run)
    filename = download_name(session, report, fmt)
    if fmt == "json":
        content = owners_copy(report.content or {}, report, settings)
        return text_response(json.dumps(content, ensure_ascii=False, indent=2, default=str), fmt, filename)
    if fmt == "md":  # images as figures/NAME: the zip carries them
        return text_response(render.to_markdown(owners_content(report, settings)), fmt, filename)
    if fmt == "zip":
        return Response(markdown_bundle(report, settings), media_type=MEDIA_TYPES[fmt], headers=attachment(filename))
    if fmt == "html":
        return text_response(
            render.to_html(owners_content(report, settings), base_dir=report_folder(report, settings)), fmt, filename
        )
    return FileResponse(binary_file(report, fmt, settings), media_type=MEDIA_TYPES[fmt], headers=attachment(filename))


@router.get("/api/workspaces/{ws}/analysis.py", name="analysis_script")
def analysis_script(
    workspace: WorkspaceDep, session: DbSessionDep, settings: SettingsDep, run: str | None = None
) -> Response:
    from app.reports.script import dataset_sources, to_analysis_script

    report = latest_report(session, workspace.id, run)
    datasets = dataset_sources(active_datasets(session, workspace.id), session)
    content = owners_copy(report.content or {}, report, settings)  # the code filters on the real values
    return text_response(to_analysis_script(content, datasets), "py", "analysis.py")


@router.post("/runs/{run_id}/check-numbers", name="check_numbers")
def check_numbers(request: Request, run: RunDep, session: DbSessionDep, settings: SettingsDep) -> Response:
    """Start running the report's analysis.py on the stored uploads, as `verity analyze` does, in the
    background (app/web/number_check.py): the page says "checking…" and then the outcome, which goes into
    the report; only then do its renderings say "Reproduced by analysis.py". A click while a check runs
    starts nothing. The script re-runs the catalog's analysis tools only (the model's own code, run_python,
    stays in its sandbox: the script cannot run it and counts it as not re-run)."""
    start_check(request.app, session, settings, run, latest_report(session, run.workspace_id, run.id))
    target = request.url_for("workspace_page", ws=run.workspace_id)
    return RedirectResponse(f"{target}?run={run.id}#reproduction", status_code=303)
