"""The "compact conversation" button (SPEC §4 level 4): summarise the workspace's conversation
now, and ask a run in flight to compact its own context at its next round."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy import select

from app.agent import OutputStore, compact_workspace, request_compaction
from app.db.models import Run
from app.runs import ACTIVE_STATUSES, earlier_exchanges
from app.web.deps import CommittingRoute, DbSessionDep, SettingsDep, WorkspaceDep

router = APIRouter(tags=["pages"], route_class=CommittingRoute)
ACTIVE = ACTIVE_STATUSES


@router.post("/workspaces/{ws}/compact", name="compact_workspace")
def compact(request: Request, workspace: WorkspaceDep, session: DbSessionDep, settings: SettingsDep) -> Response:
    live = session.scalars(select(Run).where(Run.workspace_id == workspace.id, Run.status.in_(ACTIVE))).first()
    if live is not None:
        request_compaction(workspace.id, "user")
    result = compact_workspace(
        session,
        OutputStore.of(settings, workspace.id),
        workspace.id,
        earlier_exchanges(session, workspace.id, live.id if live else ""),
        keep=settings.context_keep_messages,
    )
    session.commit()
    target = request.url_for("workspace_page", ws=workspace.id)
    return RedirectResponse(f"{target}?compacted={result['compacted']}", status_code=303)
