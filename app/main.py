"""The web application: routers, templates, static files, lifespan and plain-language errors.

Run it with `verity serve`, or `uvicorn app.main:create_app --factory --http
app.web.slow_clients:TimedHTTPProtocol` (the slow-client timeouts `verity serve` sets; README).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar, cast
from urllib.parse import urlencode, urlsplit

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from sqlalchemy.exc import SQLAlchemyError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ExceptionHandler

from app.config import Settings, get_settings
from app.db.session import open_database
from app.faults import fault_of
from app.ingest.readserver import start_read_server
from app.ingest.warnings_text import warning_in
from app.paths import asset_dir
from app.reports.safe_markdown import markdown_snippet
from app.runs import RunService, default_model
from app.storage import node_files
from app.understanding import NO_FILTER
from app.users import auth_required
from app.web import (
    api,
    auth,
    chat,
    context,
    datasets,
    docs,
    files,
    knowledge,
    reports,
    reread,
    rules,
    shares,
    traces,
    workspaces,
)
from app.web.background import stop_background_pools
from app.web.body_limit import BodyClass, BodyLimit
from app.web.deps import PUBLIC_PATHS, PUBLIC_PREFIXES, ApiError, NotSignedIn, authorize, resolve_lang, signed_in_user
from app.web.i18n import cleaning_text, t, tool_label, tool_labels
from app.web.security import CrossSiteGuard, HostGuard, SecurityHeaders
from app.web.slow_clients import timed_protocol
from app.web.text_input import check_text_input

log = logging.getLogger(__name__)

TEMPLATES_DIR = asset_dir("templates")  # in the package of a wheel, else the checkout's
STATIC_DIR = asset_dir("static")
ROUTERS = (
    auth.router,
    workspaces.router,
    files.router,
    datasets.router,
    chat.router,
    reread.router,
    reports.router,
    api.router,
    context.router,
    rules.router,
    knowledge.router,
    shares.router,
    traces.router,
    docs.router,
)


def sweep_runs(service: RunService, stop: threading.Event) -> None:
    """Every lease_ttl_s: runs in this server's threads mode whose node died are marked interrupted
    (RunService.sweep), as a starting server does with those it finds (`recover`)."""
    suspects: set[str] = set()
    while not stop.wait(service.settings.lease_ttl_s):
        try:
            ended, suspects = service.sweep(suspects)
            if ended:
                log.warning("marked %d run(s) of a server that stopped as interrupted", ended)
        except Exception:  # the database is away: the next sweep tries again
            log.exception("sweeping runs of stopped servers failed")


def pass_on_stops(service: RunService, stop: threading.Event) -> None:
    """Every worker_heartbeat_s while runs execute in this server's threads: a Stop pressed on another
    server (recorded on the run's row) reaches the run here (RunService.pass_on_stop_requests)."""
    while not stop.wait(service.settings.worker_heartbeat_s):
        try:
            service.pass_on_stop_requests()
        except Exception:  # the database is away: the next round tries again
            log.exception("passing on stop requests failed")


def create_app(settings: Settings | None = None, model_factory=None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(application: FastAPI) -> AsyncIterator[None]:
        db = open_database(settings)
        node_files(settings)  # this node's files (the object store and its cache), known from the start
        service = RunService(db, settings, model_factory or default_model)
        recovered = service.recover()
        if recovered:
            log.info("marked %d unfinished runs as interrupted", recovered)
        application.state.db, application.state.runs = db, service
        db.progress.listen()  # progress pages hear of news from every node (app/db/progress.py)
        sweeping = threading.Event()
        if settings.run_executor == "threads":  # runs of a server that died, found by the others
            threading.Thread(target=sweep_runs, args=(service, sweeping), name="verity-run-sweep", daemon=True).start()
            threading.Thread(
                target=pass_on_stops, args=(service, sweeping), name="verity-run-stops", daemon=True
            ).start()
        # Uploads are read in children of the read server (app.ingest.bounded); start it now, aside.
        threading.Thread(target=start_read_server, name="verity-read-server-start", daemon=True).start()
        try:
            yield
        finally:
            sweeping.set()
            stop_background_pools(application)
            service.shutdown()
            db.close()

    # Before every route: text no database can store is refused (text_input.py), then `authorize`
    # checks sign-in where required and ownership of the workspace or run named in the path (SPEC §7).
    # The API docs are routes of app/web/docs.py (behind `authorize`), not FastAPI's public ones.
    application = FastAPI(
        title="Verity",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        dependencies=[Depends(check_text_input), Depends(authorize)],
    )
    application.state.settings = settings
    application.state.templates = make_templates()
    application.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    for router in ROUTERS:
        application.include_router(router)
    install_error_handlers(application)
    application.add_middleware(
        BodyLimit,
        routes=lambda: application.routes,
        upload_bytes=settings.max_upload_mb * 1024 * 1024,
        request_bytes=int(settings.max_request_mb * 1024 * 1024),
        refuse=body_refusal,
        sign_in_gate=upload_sign_in_gate,
    )
    trusted = tuple(o.strip() for o in settings.trusted_origins.split(",") if o.strip())
    application.add_middleware(CrossSiteGuard, refuse=cross_site_refusal, trusted_origins=trusted)
    allowed_names = served_host_names(settings)
    if allowed_names is not None:
        application.add_middleware(HostGuard, refuse=unknown_host_refusal, allowed_names=allowed_names)
    application.add_middleware(SecurityHeaders)  # outermost: refusals get the headers too
    return application


# `uvicorn.run("app.main:app", factory=True)` works as well as `app.main:create_app`.
app = create_app


def server_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's options from the settings (`verity serve`). uvicorn's own default believes
    X-Forwarded-For from 127.0.0.1, so any local client could pick its address and dodge the
    sign-in throttle; here the headers count only when a proxy is configured. The HTTP protocol
    adds read timeouts for slow clients (app/web/slow_clients.py)."""
    return {
        "proxy_headers": settings.proxy_headers,
        "forwarded_allow_ips": settings.forwarded_allow_ips,
        "server_header": False,
        # Header and body read timeouts: uvicorn's own protocols wait for a slow client forever.
        "http": timed_protocol(settings),
    }


def served_host_names(settings: Settings) -> frozenset[str] | None:
    """The host names besides localhost and IP addresses that a server without sign-in answers to
    (app/web/security.py: DNS rebinding); None when every name is served (sign-in, or `*`)."""
    names = {n.strip().lower() for n in settings.allowed_hosts.split(",") if n.strip()}
    if auth_required(settings) or "*" in names:
        return None
    if settings.public_url:
        names.add((urlsplit(settings.public_url).hostname or "").lower())
    names.add(settings.host.strip("[]").lower())
    return frozenset(names - {""})


def make_templates() -> Jinja2Templates:
    templates = Jinja2Templates(directory=TEMPLATES_DIR)
    templates.env.globals["t"] = t
    templates.env.globals["NO_FILTER"] = NO_FILTER  # the filter chip's "keep every row" (the page words it)
    templates.env.globals["tool_label"] = tool_label
    templates.env.globals["tool_labels"] = tool_labels
    templates.env.globals["cleaning_text"] = cleaning_text
    templates.env.globals["warning_text"] = warning_in
    templates.env.filters["num"] = format_number
    templates.env.filters["markdown_snippet"] = markdown_snippet
    return templates


def format_number(value: Any) -> str:
    """Metrics for people: 4 significant digits, small p-values as '< 0.001'."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "" if value is None else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if value != value:  # NaN
        return "—"
    if 0 < abs(value) < 0.001:
        return "< 0.001" if value > 0 else f"{value:.2e}"
    return f"{value:,.4g}" if abs(value) < 1e6 else f"{value:,.0f}"


# --- errors: a non-expert never sees a traceback --------------------------------------------
def is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/") or request.url.path == "/healthz"


CATEGORY_BY_STATUS = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    415: "unsupported_format",
    422: "invalid_request",
}


def error_page(request: Request, status_code: int, message_key: str, detail: str = "") -> Response:
    settings: Settings = request.app.state.settings
    lang = resolve_lang(request, settings)
    context = {"lang": lang, "status_code": status_code, "message": t(message_key, lang), "detail": detail}
    return request.app.state.templates.TemplateResponse(request, "error.html", context, status_code=status_code)


def api_error(status_code: int, category: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"category": category, "message": message}}, status_code=status_code)


async def on_api_error(request: Request, exc: ApiError) -> Response:
    if is_api(request):
        return exc.response()
    return error_page(request, exc.status_code, "error_bad_request", exc.message)


async def on_not_signed_in(request: Request, exc: NotSignedIn) -> Response:
    if is_api(request):
        message = (
            "This API token is not valid (revoked or mistyped)."
            if exc.bad_token
            else "Sign in first: this server is shared, so each request must say who is asking."
        )
        return JSONResponse(
            {
                "error": {
                    "category": "unauthorized",
                    "message": message,
                    "hint": "Send 'Authorization: Bearer <token>'; create a token on the "
                    "account page or with POST /api/auth/token.",
                }
            },
            status_code=401,
            headers={"WWW-Authenticate": "Bearer"},
        )
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse("/login?" + urlencode({"next": target}), status_code=303)


async def on_http_error(request: Request, exc: StarletteHTTPException) -> Response:
    if is_api(request):
        category = CATEGORY_BY_STATUS.get(exc.status_code, "http_error")
        return api_error(exc.status_code, category, str(exc.detail))
    key = "error_not_found" if exc.status_code == 404 else "error_bad_request"
    return error_page(request, exc.status_code, key)


async def on_validation_error(request: Request, exc: RequestValidationError) -> Response:
    problems = "; ".join(f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg')}" for e in exc.errors())
    if is_api(request):
        return api_error(400, "invalid_request", problems or "invalid request")
    return error_page(request, 400, "error_bad_request")


async def on_unexpected_error(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    if is_api(request):
        return api_error(500, "internal_error", "Verity hit an unexpected problem; please try again.")
    return error_page(request, 500, "error_internal")


def cross_site_refusal(request: Request, reason: str) -> Response:
    log.warning("refused a cross-site %s %s (%s)", request.method, request.url.path, reason)
    if is_api(request):
        return JSONResponse(
            {
                "error": {
                    "category": "cross_site_request",
                    "message": "Another site tried to send this request in your name; it was refused.",
                    "hint": "Use Verity's own pages, or send an API token "
                    "('Authorization: Bearer <token>') from a script.",
                }
            },
            status_code=403,
        )
    return error_page(request, 403, "error_cross_site")


def unknown_host_refusal(request: Request, name: str) -> Response:
    log.warning("refused a request for host %r (not this server's name; set allowed_hosts to serve it)", name)
    message = (
        f"This Verity server does not answer to the name '{name}'. Open it by the address it "
        f"prints at start-up (e.g. http://127.0.0.1:8000)."
    )
    if is_api(request):
        return JSONResponse(
            {
                "error": {
                    "category": "unknown_host",
                    "message": message,
                    "hint": "To reach it by this name, add it to VERITY_ALLOWED_HOSTS (or set VERITY_PUBLIC_URL).",
                }
            },
            status_code=400,
        )
    return error_page(request, 400, "error_unknown_host", name)


def body_refusal(request: Request, limit: BodyClass) -> Response:
    """413 for a body over its route's limit (app/web/body_limit.py), in the app's error shape."""
    settings: Settings = request.app.state.settings
    if limit.kind == "upload":
        message = f"The file is larger than {settings.max_upload_mb} MB."
        hint = "Split the file, or remove sheets and columns you do not need."
    else:
        message = f"The request body is larger than {settings.max_request_mb:g} MB."
        hint = "Send less at once: upload data as a file, and keep notes and messages short."
    log.warning(
        "refused a %s body over %d bytes on %s %s", limit.kind, limit.max_bytes, request.method, request.url.path
    )
    if is_api(request):
        return JSONResponse({"error": {"category": "too_large", "message": message, "hint": hint}}, status_code=413)
    return error_page(request, 413, "error_too_large", message)


async def upload_sign_in_gate(request: Request) -> Response | None:
    """Before an upload's body is read: the 401 (or sign-in redirect) that `authorize` would give
    once it had been, for a request with no valid session or token; None lets it in. The lookup
    runs in a worker thread (a database query must not hold the event loop)."""
    settings: Settings = request.app.state.settings
    path = request.url.path
    if not auth_required(settings) or path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES):
        return None

    def refusal() -> NotSignedIn | None:
        with request.app.state.db.session() as session:
            try:
                return None if signed_in_user(request, session) is not None else NotSignedIn()
            except NotSignedIn as exc:
                return exc

    refused = await run_in_threadpool(refusal)
    return None if refused is None else await on_not_signed_in(request, refused)


API_FAULT_MESSAGES = {
    "disk_full": (
        ("The disk of the Verity server is full, so nothing new could be saved. What was saved before is safe."),
        "Ask the administrator to free some space, then try again.",
    ),
    "database_unavailable": ("Verity's database did not answer. Nothing was lost.", "Try again in a moment."),
    "storage_unavailable": (
        "Verity's file store did not answer, so a file could not be read or kept. Nothing was lost.",
        "Try again in a moment; if it goes on, ask the administrator to check the object store.",
    ),
    "invalid_request": (
        ("The request contains a value that cannot be stored (a character or a number out of range)."),
        "Check the text and numbers you sent, then try again.",
    ),
}


async def on_machine_fault(request: Request, exc: Exception) -> Response:
    """A full disk, a lost database connection, a value no database can hold (app/faults.py):
    a plain error with a category; anything else goes on to the internal-error handler."""
    fault = fault_of(exc)
    if fault is None:
        raise exc
    log.warning("%s on %s %s: %s", fault.category, request.method, request.url.path, exc)
    if is_api(request):
        message, hint = API_FAULT_MESSAGES[fault.category]
        lang = resolve_lang(request, request.app.state.settings)
        if lang == "zh":
            message, hint = t(fault.message_key, "zh"), ""
        return JSONResponse(
            {"error": {"category": fault.category, "message": message, "hint": hint}}, status_code=fault.status
        )
    return error_page(request, fault.status, fault.message_key)


ExcT = TypeVar("ExcT", bound=Exception)


def on_error(application: FastAPI, kind: type[ExcT], handler: Callable[[Request, ExcT], Awaitable[Response]]) -> None:
    """add_exception_handler, typed: Starlette calls a handler only with exceptions of the class it
    was registered for, but types every handler as taking any Exception (Kludex/starlette#2417);
    here the class and the handler's argument must agree."""
    application.add_exception_handler(kind, cast(ExceptionHandler, handler))


def install_error_handlers(application: FastAPI) -> None:
    for kind in (OSError, SQLAlchemyError, UnicodeEncodeError, OverflowError):
        on_error(application, kind, on_machine_fault)
    on_error(application, ApiError, on_api_error)
    on_error(application, NotSignedIn, on_not_signed_in)
    on_error(application, StarletteHTTPException, on_http_error)
    on_error(application, RequestValidationError, on_validation_error)
    on_error(application, Exception, on_unexpected_error)
