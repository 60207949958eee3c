"""Shared request dependencies as `Annotated` aliases, and the page renderer views use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Iterator

from fastapi import Depends, HTTPException, Request
from fastapi.responses import JSONResponse, Response
from fastapi.templating import Jinja2Templates
from sqlalchemy.orm import Session

from app.config import Settings
from app.db.models import Run, Workspace
from app.runs import RunService
from app.web.i18n import from_accept_language, normalize_lang

LANG_COOKIE = "lang"
LANG_COOKIE_MAX_AGE = 365 * 24 * 3600


class ApiError(Exception):
    """A user-facing error of the JSON API: `{"error": {"category", "message", "hint"}}`."""

    def __init__(self, status_code: int, category: str, message: str, hint: str = ""):
        super().__init__(message)
        self.status_code, self.category, self.message, self.hint = status_code, category, message, hint

    def response(self) -> JSONResponse:
        body: dict[str, Any] = {"category": self.category, "message": self.message}
        if self.hint:
            body["hint"] = self.hint
        return JSONResponse({"error": body}, status_code=self.status_code)


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


def get_db_session(request: Request) -> Iterator[Session]:
    """One session per request, committed when the view returns (before the response is sent,
    so a redirect or a background run never reads uncommitted state)."""
    with request.app.state.db.session() as session:
        yield session


def get_run_service(request: Request) -> RunService:
    return request.app.state.runs


def get_templates(request: Request) -> Jinja2Templates:
    return request.app.state.templates


SettingsDep = Annotated[Settings, Depends(get_settings)]
DbSessionDep = Annotated[Session, Depends(get_db_session, scope="function")]
RunServiceDep = Annotated[RunService, Depends(get_run_service)]
TemplatesDep = Annotated[Jinja2Templates, Depends(get_templates)]


def resolve_lang(request: Request, settings: Settings) -> str:
    """`?lang=`, else the `lang` cookie, else a Chinese browser → zh, else the configured default."""
    for value in (request.query_params.get("lang"), request.cookies.get(LANG_COOKIE)):
        if lang := normalize_lang(value):
            return lang
    if from_accept_language(request.headers.get("accept-language")) == "zh":
        return "zh"
    return settings.lang


def get_lang(request: Request, settings: SettingsDep) -> str:
    return resolve_lang(request, settings)


LangDep = Annotated[str, Depends(get_lang)]


def get_workspace(ws: str, session: DbSessionDep) -> Workspace:
    workspace = session.get(Workspace, ws)
    if workspace is None:
        raise HTTPException(404, "workspace not found")
    return workspace


def get_run(run_id: str, session: DbSessionDep) -> Run:
    run = session.get(Run, run_id)
    if run is None:
        raise HTTPException(404, "run not found")
    return run


WorkspaceDep = Annotated[Workspace, Depends(get_workspace)]
RunDep = Annotated[Run, Depends(get_run)]


@dataclass
class Page:
    """Renders a template with the UI language; remembers an explicit `?lang=` in a cookie."""

    request: Request
    templates: Jinja2Templates
    lang: str

    def render(self, name: str, context: dict[str, Any] | None = None, status_code: int = 200) -> Response:
        ctx = {"lang": self.lang, **(context or {})}
        response = self.templates.TemplateResponse(self.request, name, ctx, status_code=status_code)
        if normalize_lang(self.request.query_params.get("lang")):
            response.set_cookie(LANG_COOKIE, self.lang, max_age=LANG_COOKIE_MAX_AGE, samesite="lax")
        return response


def get_page(request: Request, templates: TemplatesDep, lang: LangDep) -> Page:
    return Page(request, templates, lang)


PageDep = Annotated[Page, Depends(get_page)]


def wants_partial(request: Request) -> bool:
    """Fetches from app.js ask for fragments (`?partial=1` or the X-Requested-With header)."""
    return request.query_params.get("partial") == "1" or request.headers.get("x-requested-with") == "fetch"
