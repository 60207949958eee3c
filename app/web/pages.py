"""What the pages show, shared by the feature routers (none of which imports another): the workspace
page's context, the views of a dataset (page and API), and whether a workspace is busy."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.analyst import rows_in_own_words
from app.config import Settings
from app.db.models import Dataset, Run, Workspace
from app.ingest.pipeline import LoadedTable
from app.knowledge import entries
from app.runs import BUSY_STATUSES
from app.web.derived import derived_origin
from app.web.run_panel import run_context
from app.web.suggest import suggest_questions
from app.workspaces import (
    DAMAGED,
    FAILED,
    LOADING,
    READY,
    dataset_status,
    dataset_versions,
    listed_datasets,
    readable_frame,
)


def workspace_context(
    session: Session,
    settings: Settings,
    workspace: Workspace,
    lang: str,
    selected_run_id: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Everything the workspace page shows: data previews, suggestions, runs, the open run."""
    listed = listed_datasets(session, workspace.id)
    views = [full_view(session, settings, d) for d in listed]
    files = [v["file"] for v in views if not v["origin"]]
    for view in views:  # two sheets of one workbook are two tables: each card says its sheet
        if not view["origin"] and view["sheet"] and files.count(view["file"]) > 1:
            view["title"] = f"{view['file']} · {view['sheet']}"
    # Suggestions come from what the user uploaded, not from the tables an analysis derived from it
    # ("Revenue_sum by Region"); the same file uploaded twice counts once.
    datasets = [d for d, view in zip(listed, views) if dataset_status(d) == READY and not view["origin"]]
    uploaded = list({(d.file_name, d.sheet): d for d in reversed(datasets)}.values())[::-1]
    runs = list(session.scalars(select(Run).where(Run.workspace_id == workspace.id).order_by(Run.created_at.desc())))
    selected = next((r for r in runs if r.id == selected_run_id), runs[0] if runs else None)
    return {
        "workspace": workspace,
        "datasets": views,
        # the user's own files stay on top; the tables analyses made are grouped after them
        "uploads": [v for v in views if not v["origin"]],
        "derived": [v for v in views if v["origin"]],
        "loading": [d.file_name for d in listed if dataset_status(d) == LOADING],
        "suggestions": suggest_questions(
            [d.info.get("columns", []) for d in uploaded], lang, names=display_names(uploaded)
        ),
        "runs": runs,
        "current": run_context(session, selected, lang, settings) if selected else None,
        "run_selected": selected is not None and selected.id == selected_run_id,  # the page is the run's: titled by it
        "knowledge": entries(session, workspace.id),
        **extra,
    }


def display_names(datasets: list[Dataset]) -> list[str]:
    """How the page names each dataset: its file, or (two tables from one file) the table's own name."""
    files = [d.file_name for d in datasets]
    return [d.file_name if files.count(d.file_name) == 1 else d.name for d in datasets]


def full_view(session: Session, settings: Settings, dataset: Dataset) -> dict[str, Any]:
    versions = version_entries(session, dataset) if dataset_status(dataset) == READY else []
    return {
        **dataset_view(dataset, settings.preview_rows),
        "versions": versions,
        "origin": derived_origin(session, dataset),
    }


def dataset_view(dataset: Dataset, rows: int, preview: list[dict] | None = None) -> dict[str, Any]:
    """A dataset as the preview partial shows it (the first rows are read back, masked). A dataset
    still being read shows the preview of its first rows kept in its info (already masked)."""
    if preview is None and dataset_status(dataset) == READY:
        preview = read_preview(dataset, rows)
    elif preview is None:
        preview = list((dataset.info or {}).get("preview") or [])[:rows]
    info = dataset.info or {}  # reading the preview may have found the working copy damaged
    columns = info.get("columns", [])
    status = dataset_status(dataset)
    preview = rows_in_own_words(preview, columns)  # a yes/no cell as the sheet writes it (是/否)
    return {
        "id": dataset.id,
        "workspace_id": dataset.workspace_id,
        "name": dataset.name,
        "file": dataset.file_name,
        "sheet": dataset.sheet,
        "rows": dataset.rows,
        "info": info,
        "columns": columns,
        "preview": preview if status != DAMAGED else [],
        "masked": [c for c in columns if c.get("pii")],
        "status": status,
        "error": info.get("error") if status in (FAILED, DAMAGED) else None,
        "origin": None,  # an upload; full_view says where a table an analysis made comes from
    }


def read_preview(dataset: Dataset, rows: int) -> list[dict]:
    """The first rows of the working copy, masked ([] when it is missing or damaged: then marked)."""
    pii = {c["name"]: c["pii"] for c in (dataset.info or {}).get("columns", []) if c.get("pii")}
    if not dataset.working_path:
        return []
    frame = readable_frame(dataset)
    if frame is None:
        return []
    return LoadedTable(frame=frame.head(rows), info=dataset.info, pii=pii).preview(rows)


def version_entries(session: Session, dataset: Dataset) -> list[dict[str, Any]]:
    return [
        {"id": v.id, "version": v.version, "step": v.step, "rows": v.rows, "active": v.active, "sheet": v.sheet}
        for v in dataset_versions(session, dataset)
    ]


def analysis_running(session: Session, workspace: Workspace) -> bool:
    return (
        session.scalars(select(Run.id).where(Run.workspace_id == workspace.id, Run.status.in_(BUSY_STATUSES))).first()
        is not None
    )


def workspace_busy(session: Session, workspace: Workspace) -> bool:
    """An analysis or a background file read is working on the workspace's files right now."""
    return analysis_running(session, workspace) or any(
        dataset_status(d) == LOADING for d in listed_datasets(session, workspace.id)
    )


def dataset_body(session: Session, dataset: Dataset, rows: int) -> dict[str, Any]:
    """A dataset in the JSON API: inspect --json plus its identity, and `derived_from` (null for an
    upload; for a table an analysis made: the source, the step and the run that made it)."""
    view = dataset_view(dataset, rows)
    info = {k: v for k, v in (dataset.info or {}).items() if k not in ("loader", "requested_sheet")}
    return {
        **info,
        "preview": view["preview"],
        "id": dataset.id,
        "name": dataset.name,
        "version": dataset.version,
        "status": dataset_status(dataset),
        "rows": dataset.rows,
        "derived_from": derived_origin(session, dataset),
    }
