"""The workspace rules file (like AGENTS.md): metric definitions and preferences, injected into
every turn at the project-rules trust tier (app/agent/context/tiers.py). View and edit it on the
workspace page (a form) or through the JSON API."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel, Field

from app.web.deps import CommittingRoute, DbSessionDep, WorkspaceDep

router = APIRouter(tags=["rules"], route_class=CommittingRoute)
MAX_RULES_CHARS = 20_000


class RulesIn(BaseModel):
    rules: str = Field("", max_length=MAX_RULES_CHARS)


def normalize_rules(text: str) -> str:
    return "\n".join(line.rstrip() for line in (text or "").replace("\r\n", "\n").strip().splitlines())


@router.post("/workspaces/{ws}/rules", name="save_rules")
def save_rules(
    request: Request,
    workspace: WorkspaceDep,
    session: DbSessionDep,
    rules: Annotated[str, Form(max_length=MAX_RULES_CHARS)] = "",
) -> Response:
    workspace.rules = normalize_rules(rules)
    target = request.url_for("workspace_page", ws=workspace.id)
    return RedirectResponse(f"{target}?rules=saved#rules", status_code=303)


@router.get("/api/workspaces/{ws}/rules")
def api_get_rules(workspace: WorkspaceDep) -> dict[str, Any]:
    return {"workspace_id": workspace.id, "rules": workspace.rules or ""}


@router.put("/api/workspaces/{ws}/rules")
def api_put_rules(body: RulesIn, workspace: WorkspaceDep, session: DbSessionDep) -> dict[str, Any]:
    workspace.rules = normalize_rules(body.rules)
    return {"workspace_id": workspace.id, "rules": workspace.rules}
