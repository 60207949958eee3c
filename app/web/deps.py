"""Shared request dependencies as `Annotated` aliases, and the page renderer views use."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import Depends, HTTPException, Request
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates
from sqlalchemy.orm import Session

from app.config import Settings
from app.db.models import Base, Dataset, KnowledgeEntry, ReportShare, Run, User, Workspace
from app.ingest.errors import IngestError
from app.runs import RunService
from app.users import API, SESSION, Account, auth_required, user_for_secret
from app.web.i18n import from_accept_language, normalize_lang

RowT = TypeVar("RowT", bound=Base)
LANG_COOKIE = "lang"
LANG_COOKIE_MAX_AGE = 365 * 24 * 3600


class ApiError(Exception):
    """A user-facing error of the JSON API: `{"error": {"category", "message", "hint"}}`, plus the Chinese
    `message_zh` and `hint_zh` where the error has them (a file Verity cannot read)."""

    def __init__(
        self, status_code: int, category: str, message: str, hint: str = "", *, message_zh: str = "", hint_zh: str = ""
    ):
        super().__init__(message)
        self.status_code, self.category, self.message, self.hint = status_code, category, message, hint
        self.message_zh, self.hint_zh = message_zh, hint_zh

    @classmethod
    def from_ingest(cls, status_code: int, error: IngestError) -> ApiError:
        return cls(
            status_code, error.category, error.message, error.hint, message_zh=error.message_zh, hint_zh=error.hint_zh
        )

    def response(self) -> JSONResponse:
        body: dict[str, Any] = {"category": self.category, "message": self.message}
        if self.hint:
            body["hint"] = self.hint
        if self.message_zh:
            body["message_zh"] = self.message_zh
        if self.hint_zh:
            body["hint_zh"] = self.hint_zh
        return JSONResponse({"error": body}, status_code=self.status_code)


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


def get_db_session(request: Request) -> Iterator[Session]:
    """One session per request, committed when the view returns (before the response is sent,
    so a redirect or a background run never reads uncommitted state)."""
    with request.app.state.db.session() as session:
        yield session


class CommittingRoute(APIRoute):
    """Every route of the app: a view that runs in a worker thread commits its session in that same
    thread when it returns. Otherwise the commit would wait for the response's validation, which
    needs another thread of the server's pool: with every thread held by a request waiting for the
    one SQLite writer, the writer could never commit (requests failed with "database is locked")."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any):
        if not inspect.iscoroutinefunction(endpoint):
            endpoint = committing(endpoint)
        super().__init__(path, endpoint, **kwargs)


def committing(view: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(view)  # FastAPI reads the view's own signature through __wrapped__
    def run(*args: Any, **kwargs: Any) -> Any:
        result = view(*args, **kwargs)
        for value in kwargs.values():
            if isinstance(value, Session):
                value.commit()
        return result

    return run


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


# --- who is asking, and what they may see (SPEC §7) --------------------------------------------
SESSION_COOKIE = "verity_session"
# Reachable without signing in: the health check, the ways to sign in, and shared report links
# (their secret is the permission; app/web/shares.py).
PUBLIC_PATHS = frozenset({"/healthz", "/login", "/signup", "/api/auth/token"})
PUBLIC_PREFIXES = ("/shared/",)


class NotSignedIn(Exception):
    """The request needs a signed-in user (main.py answers 401 to the API, a redirect to pages)."""

    def __init__(self, bad_token: bool = False):
        super().__init__("bad token" if bad_token else "not signed in")
        self.bad_token = bad_token


def signed_in_user(request: Request, session: Session) -> User | None:
    """The user of the bearer token or the session cookie. A bearer token that is not valid is an
    error even where signing in is optional: a script should not silently act as nobody."""
    header = request.headers.get("authorization", "")
    if header[:7].lower() == "bearer ":
        user = user_for_secret(session, header[7:].strip(), kind=API)
        if user is None:
            raise NotSignedIn(bad_token=True)
        return user
    return user_for_secret(session, request.cookies.get(SESSION_COOKIE), kind=SESSION)


def authorize(request: Request, session: DbSessionDep, settings: SettingsDep) -> None:
    """Runs before every route (an app-wide dependency), so no route can forget it: finds the user,
    refuses anonymous requests in multi-user mode, and answers 404 for a workspace or run in the
    path that belongs to someone else (404, not 403: others' ids are not confirmed to exist)."""
    user = signed_in_user(request, session)
    request.state.user = Account.of(user) if user else None
    path = request.url.path
    if user is None and auth_required(settings) and path not in PUBLIC_PATHS and not path.startswith(PUBLIC_PREFIXES):
        raise NotSignedIn()
    owner = user.id if user else None
    params = request.path_params
    if "ws" in params:
        workspace = session.get(Workspace, params["ws"])
        if workspace is None or workspace.owner != owner:
            raise HTTPException(404, "workspace not found")
        if "dataset_id" in params:
            _in_workspace(session.get(Dataset, params["dataset_id"]), workspace, Dataset.__tablename__)
        if "entry_id" in params:
            _in_workspace(session.get(KnowledgeEntry, params["entry_id"]), workspace, KnowledgeEntry.__tablename__)
    if "run_id" in params:
        run = session.get(Run, params["run_id"])
        if run is None or run.workspace.owner != owner:
            raise HTTPException(404, "run not found")
        if "share_id" in params:
            share = session.get(ReportShare, params["share_id"])
            if share is None or share.run_id != run.id:
                raise HTTPException(404, "share not found")


def _in_workspace(row: Dataset | KnowledgeEntry | None, workspace: Workspace, table: str) -> None:
    if row is None or row.workspace_id != workspace.id:
        raise HTTPException(404, f"{table} entry not found")


def get_current_user(request: Request) -> Account | None:
    return getattr(request.state, "user", None)


CurrentUserDep = Annotated[Account | None, Depends(get_current_user)]


def owner_of(user: Account | None) -> str | None:
    """What `Workspace.owner` holds for this user (None: the local single-user mode)."""
    return user.id if user else None


def found(session: Session, model: type[RowT], key: str, what: str) -> RowT:
    """The row of `model` with this key, or 404 "`what` not found". For the ids in the path,
    `authorize` has checked the owner already; the row may still have gone since."""
    row = session.get(model, key)
    if row is None:
        raise HTTPException(404, f"{what} not found")
    return row


def get_workspace(ws: str, session: DbSessionDep) -> Workspace:
    return found(session, Workspace, ws, "workspace")  # ownership was checked by `authorize`


def get_run(run_id: str, session: DbSessionDep) -> Run:
    return found(session, Run, run_id, "run")  # ownership was checked by `authorize`


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
