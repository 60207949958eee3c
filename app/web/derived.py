"""Where a table an analysis made comes from, as the pages and the API tell it: the table it was
made from, the step that made it and the question (run) it answered. Read from what the rows
record (the lineage in app.workspaces, the run's `dataset_version` event), never from its name."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Dataset, Event, Run
from app.web.i18n import TOOL_LABELS
from app.workspaces import derived_parent, is_derived, lineage_root


def derived_origin(session: Session, dataset: Dataset) -> dict[str, Any] | None:
    """None for an upload (and its versions); for a derived table: `source` (the upload's file
    name, or the name of the derived table it was made from), `dataset` (the source's dataset
    name, None once removed), `tool` (None when the step does not name one), `step` (the tool's
    own one-line description), `run_id` and `question` (None when no run recorded it)."""
    if not is_derived(session, dataset):
        return None
    root = lineage_root(session, dataset)
    parent = derived_parent(session, dataset)
    if parent is None:  # the source table has been removed since: the file it all came from
        source = dataset.file_name
    else:
        source = parent.name if is_derived(session, parent) else parent.file_name
    tool, detail = step_parts(root.step or "")
    run = making_run(session, root)
    return {
        "source": source,
        "dataset": parent.name if parent is not None else None,
        "tool": tool,
        "step": detail,
        "run_id": run.id if run else None,
        "question": run.question if run else None,
    }


def step_parts(step: str) -> tuple[str | None, str]:
    """A data tool's step reads 'group_aggregate: sum of Revenue by Region (…)': the tool and the rest."""
    name, colon, rest = step.partition(":")
    if colon and name.strip() in TOOL_LABELS:
        return name.strip(), rest.strip()
    return None, step.strip()


def making_run(session: Session, root: Dataset) -> Run | None:
    """The run that stored this table: its `dataset_version` event names the table at version 1
    (RunService.store_table). A name freed by a removal can be used again; the latest event is the
    table that holds the name now."""
    events = session.scalars(
        select(Event)
        .join(Run, Run.id == Event.run_id)
        .where(Run.workspace_id == root.workspace_id, Event.kind == "dataset_version")
        .order_by(Event.id.desc())
    )
    for event in events:
        data = event.data or {}
        if data.get("name") == root.name and data.get("version") == 1:
            return session.get(Run, event.run_id)
    return None
