"""Signing in and out, signing up, and API tokens (multi-user mode, SPEC §7).

Pages: /login, /signup, /logout, /account. API: POST /api/auth/token trades an e-mail address and
password for an API token (`Authorization: Bearer vt_...`), for scripts without a browser.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel, Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.config import Settings
from app.db.models import User, Workspace
from app.users import (
    API,
    SESSION,
    Account,
    AccountError,
    api_tokens,
    auth_required,
    check_password,
    create_user,
    delete_account,
    issue_token,
    revoke_api_token,
    revoke_secret,
    set_password,
    token_for_secret,
)
from app.web.deps import (
    SESSION_COOKIE,
    ApiError,
    CommittingRoute,
    CurrentUserDep,
    DbSessionDep,
    NotSignedIn,
    PageDep,
    SettingsDep,
)
from app.web.i18n import t
from app.web.pages import workspace_busy
from app.web.throttle import AuthThrottle, Throttled

router = APIRouter(tags=["accounts"], route_class=CommittingRoute)


class TokenIn(BaseModel):
    email: str = Field(..., max_length=320)
    password: str = Field(..., max_length=1000)
    name: str = Field("", max_length=200)


def throttle(request: Request) -> AuthThrottle:
    state = request.app.state
    if getattr(state, "auth_throttle", None) is None:
        state.auth_throttle = AuthThrottle(state.settings)
    return state.auth_throttle


def client_of(request: Request) -> str:
    """The peer address; uvicorn replaces it with X-Forwarded-For only when the peer is a trusted
    proxy (`proxy_headers`, `forwarded_allow_ips`; app/main.py `server_options`)."""
    return request.client.host if request.client else "?"


def verify_login(request: Request, session: Session, email: str, password: str) -> User:
    """check_password behind the throttle (app/web/throttle.py); AccountError("auth_throttled")
    while it holds for this address."""
    guard = throttle(request)
    try:
        attempt = guard.begin_signin(session, email, client_of(request))
    except Throttled as refused:
        minutes = max(1, round(refused.wait_s / 60))
        raise AccountError("auth_throttled", f"Too many failed sign-ins; try again in {minutes} min.") from None
    user = check_password(session, email, password)  # a wrong password leaves the attempt counted
    guard.succeeded(session, attempt)
    return user


def safe_next(target: str | None) -> str:
    """Only a path on this site: `next=//evil.example` must not send a user elsewhere."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"


def signup_allowed(session: Session, settings: Settings) -> bool:
    return settings.signup == "open" or not session.scalar(select(func.count()).select_from(User))


def signed_in(request: Request, session: Session, settings: Settings, user: User, target: str) -> Response:
    _, secret = issue_token(session, user.id, SESSION, lifetime=timedelta(days=settings.session_days))
    response = RedirectResponse(safe_next(target), status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        secret,
        max_age=settings.session_days * 86_400,
        httponly=True,
        samesite="lax",
        secure=cookie_is_secure(request, settings),
    )
    return response


def cookie_is_secure(request: Request, settings: Settings) -> bool:
    """`Secure` (sent back only over https) when the public address is https, or the request came
    over https: directly, or through a trusted proxy whose X-Forwarded-Proto uvicorn believed
    (`proxy_headers`, `forwarded_allow_ips`)."""
    public_https = (settings.public_url or "").strip().lower().startswith("https://")
    return public_https or request.url.scheme == "https"


@router.get("/login", name="login")
def login_page(session: DbSessionDep, settings: SettingsDep, page: PageDep, next: str = "/") -> Response:
    return page.render(
        "login.html", {"mode": "login", "next": safe_next(next), "can_signup": signup_allowed(session, settings)}
    )


@router.post("/login", name="login_submit")
def login_submit(
    request: Request,
    session: DbSessionDep,
    settings: SettingsDep,
    page: PageDep,
    email: Annotated[str, Form(max_length=320)],
    password: Annotated[str, Form(max_length=1000)],
    next: Annotated[str, Form()] = "/",
) -> Response:
    try:
        user = verify_login(request, session, email, password)
    except AccountError as exc:
        return page.render(
            "login.html",
            {
                "mode": "login",
                "next": safe_next(next),
                "email": email,
                "error": t(exc.key, page.lang),
                "can_signup": signup_allowed(session, settings),
            },
            status_code=429 if exc.key == "auth_throttled" else 400,
        )
    return signed_in(request, session, settings, user, next)


@router.get("/signup", name="signup")
def signup_page(session: DbSessionDep, settings: SettingsDep, page: PageDep, next: str = "/") -> Response:
    if not signup_allowed(session, settings):
        return page.render(
            "login.html",
            {
                "mode": "login",
                "next": safe_next(next),
                "can_signup": False,
                "error": t("auth_signup_closed", page.lang),
            },
            status_code=403,
        )
    return page.render("login.html", {"mode": "signup", "next": safe_next(next), "can_signup": True})


@router.post("/signup", name="signup_submit")
def signup_submit(
    request: Request,
    session: DbSessionDep,
    settings: SettingsDep,
    page: PageDep,
    email: Annotated[str, Form(max_length=320)],
    password: Annotated[str, Form(max_length=1000)],
    name: Annotated[str, Form(max_length=200)] = "",
    next: Annotated[str, Form()] = "/",
) -> Response:
    if not signup_allowed(session, settings):
        return page.render(
            "login.html",
            {
                "mode": "login",
                "next": safe_next(next),
                "can_signup": False,
                "error": t("auth_signup_closed", page.lang),
            },
            status_code=403,
        )

    def refused(key: str, status_code: int) -> Response:
        context = {"mode": "signup", "next": safe_next(next), "email": email, "name": name, "can_signup": True}
        return page.render("login.html", {**context, "error": t(key, page.lang)}, status_code=status_code)

    guard = throttle(request)
    try:
        attempt = guard.begin_signup(session, client_of(request))
    except Throttled:
        return refused("auth_signup_throttled", 429)
    try:
        user = create_user(session, email, password, name)
    except AccountError as exc:
        if exc.key != "auth_email_taken":  # a typo made no account; probing for taken addresses counts
            guard.forget(session, attempt)
        return refused(exc.key, 400)
    return signed_in(request, session, settings, user, next)


@router.post("/logout", name="logout")
def logout(request: Request, session: DbSessionDep, settings: SettingsDep) -> Response:
    revoke_secret(session, request.cookies.get(SESSION_COOKIE))
    return signed_out(settings)


def signed_out(settings: Settings) -> Response:
    """Where a browser goes once its session is gone: the sign-in page, or home in local mode."""
    response = RedirectResponse("/login" if auth_required(settings) else "/", status_code=303)
    response.delete_cookie(SESSION_COOKIE)
    return response


@router.get("/account", name="account")
def account_page(session: DbSessionDep, page: PageDep, user: CurrentUserDep) -> Response:
    if user is None:
        raise NotSignedIn()
    return page.render("account.html", account_context(session, user))


@router.post("/account/tokens", name="create_api_token")
def create_api_token(
    session: DbSessionDep, page: PageDep, user: CurrentUserDep, name: Annotated[str, Form(max_length=200)] = ""
) -> Response:
    if user is None:
        raise NotSignedIn()
    _, secret = issue_token(session, user.id, API, name=name or "API token")
    # The secret is shown this once: only its hash is kept.
    return page.render("account.html", {**account_context(session, user), "new_token": secret}, status_code=201)


@router.post("/account/password", name="change_password")
def change_password(
    request: Request,
    session: DbSessionDep,
    page: PageDep,
    user: CurrentUserDep,
    current: Annotated[str, Form(max_length=1000)],
    new: Annotated[str, Form(max_length=1000)],
) -> Response:
    if user is None:
        raise NotSignedIn()
    try:
        account = verify_login(request, session, user.email, current)
        this_browser = token_for_secret(session, request.cookies.get(SESSION_COOKIE))
        set_password(session, account, new, keep_token_id=this_browser.id if this_browser else None)
    except AccountError as exc:
        return page.render(
            "account.html", {**account_context(session, user), "password_error": t(exc.key, page.lang)}, status_code=400
        )
    return page.render("account.html", {**account_context(session, user), "password_changed": True})


@router.post("/account/delete", name="delete_account")
def delete_account_page(
    request: Request,
    session: DbSessionDep,
    settings: SettingsDep,
    page: PageDep,
    user: CurrentUserDep,
    password: Annotated[str, Form(max_length=1000)],
) -> Response:
    """Delete the account and all its workspaces: confirmed by the password (SPEC §7)."""
    if user is None:
        raise NotSignedIn()
    try:
        account = verify_login(request, session, user.email, password)
    except AccountError as exc:
        return page.render(
            "account.html", {**account_context(session, user), "delete_error": t(exc.key, page.lang)}, status_code=400
        )
    owned = session.scalars(select(Workspace).where(Workspace.owner == user.id))
    if any(workspace_busy(session, w) for w in owned):
        return page.render(
            "account.html",
            {**account_context(session, user), "delete_error": t("delete_ws_busy", page.lang)},
            status_code=409,
        )
    delete_account(session, settings, account)
    return signed_out(settings)


@router.post("/account/tokens/{token_id}/revoke", name="revoke_api_token")
def revoke_token(token_id: str, session: DbSessionDep, user: CurrentUserDep) -> Response:
    if user is None:
        raise NotSignedIn()
    revoke_api_token(session, user.id, token_id)
    return RedirectResponse("/account", status_code=303)


def account_context(session: Session, user: Account) -> dict[str, Any]:
    return {"user": user, "tokens": api_tokens(session, user.id)}


@router.post("/api/auth/token", status_code=201)
def api_token(request: Request, body: TokenIn, session: DbSessionDep) -> dict[str, str]:
    try:
        user = verify_login(request, session, body.email, body.password)
    except AccountError as exc:
        if exc.key == "auth_throttled":
            raise ApiError(
                429, "rate_limited", str(exc), "Wait, then check the e-mail address and the password."
            ) from exc
        raise ApiError(401, "unauthorized", str(exc), "Check the e-mail address and the password.") from exc
    token, secret = issue_token(session, user.id, API, name=body.name or "API token")
    return {"token": secret, "id": token.id, "user": user.email}
