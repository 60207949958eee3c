"""Read-only links to one run's report, for people without an account (SPEC §7: sharing outside
the workspace needs explicit confirmation).

The link's secret is shown on the page that made it (for a few minutes, in this browser only) and
only its SHA-256 is kept, like API tokens. `GET /shared/{secret}` is the one page `authorize` lets through without signing in; it serves the self-contained HTML
report, not the workspace: no data, no other runs, no way in.
"""

from __future__ import annotations

import secrets
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Report, ReportShare, Run
from app.reports import render
from app.users import is_loopback, secret_digest
from app.web.deps import ApiError, CommittingRoute, DbSessionDep, PageDep, RunDep, found
from app.web.report_files import portable_content, report_folder
from app.web.security import REPORT_CSP

router = APIRouter(tags=["shares"], route_class=CommittingRoute)
SHARED_PREFIX = "/shared/"
# The shared page is a report, not an app page: no indexing, no referrer, no caching by proxies.
SHARED_HEADERS = {
    "X-Robots-Tag": "noindex, nofollow",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "private, no-store",
    "Content-Security-Policy": REPORT_CSP,
}


def run_report(session: Session, run: Run) -> Report:
    report = session.scalars(select(Report).where(Report.run_id == run.id).order_by(Report.created_at.desc())).first()
    if report is None:
        raise ApiError(404, "no_report", "This analysis has no report yet.", "Share it once it has finished.")
    return report


def create_share(session: Session, run: Run) -> tuple[ReportShare, str]:
    run_report(session, run)  # nothing to share before there is a report
    secret = secrets.token_urlsafe(24)
    share = ReportShare(workspace_id=run.workspace_id, run_id=run.id, token_hash=secret_digest(secret))
    session.add(share)
    session.flush()
    return share, secret


def shares_of(session: Session, run: Run) -> list[ReportShare]:
    return list(
        session.scalars(select(ReportShare).where(ReportShare.run_id == run.id).order_by(ReportShare.created_at))
    )


def share_base(request: Request) -> str:
    """Where others reach this Verity: the configured public_url, else the address this browser used."""
    configured = request.app.state.settings.public_url
    return (configured or str(request.base_url)).rstrip("/")


def share_link(request: Request, secret: str) -> str:
    return share_base(request) + SHARED_PREFIX + secret


def reach_warning(request: Request) -> str | None:
    """Why others may not open the link: it names this computer, or (no public_url set) the server
    listens on loopback only. None when the link should work for others."""
    if is_loopback(urlsplit(share_base(request)).hostname or "localhost"):
        return "share_loopback_link"
    server = request.scope.get("server") or (None, None)
    if not request.app.state.settings.public_url and is_loopback(server[0] or "localhost"):
        return "share_loopback_server"
    return None


def share_dict(share: ReportShare) -> dict[str, Any]:
    return {"id": share.id, "run_id": share.run_id, "created_at": share.created_at.isoformat(), "views": share.views}


# --- pages ----------------------------------------------------------------------------------
# A new link is shown on the page the confirming post redirects to (post/redirect/get), so that the
# page's EN/中文 links, which are GETs, keep it: the secret rides for a few minutes in a cookie that
# only this browser holds and only this page reads (the database keeps its digest alone).
NEW_LINK_COOKIE = "verity_new_share"
NEW_LINK_SHOWN_S = 600


@router.get("/runs/{run_id}/share", name="share_page")
def share_page(request: Request, run: RunDep, session: DbSessionDep, page: PageDep) -> Response:
    """What becomes visible to anyone with a link, the confirming button, and a link just made."""
    run_report(session, run)
    context: dict[str, Any] = {"run": run, "shares": shares_of(session, run), "reach_warning": reach_warning(request)}
    if secret := new_link_secret(request, session, run):
        context["link"] = share_link(request, secret)
    return page.render("share.html", context)


@router.post("/runs/{run_id}/share", name="share_report")
def share_report(
    request: Request, run: RunDep, session: DbSessionDep, confirm: Annotated[str, Form()] = ""
) -> Response:
    """The confirming post makes the link; any post lands on the share page (a GET)."""
    response = RedirectResponse(request.url_for("share_page", run_id=run.id), status_code=303)
    if confirm == "yes":
        share, secret = create_share(session, run)
        response.set_cookie(
            NEW_LINK_COOKIE,
            f"{share.id}:{secret}",
            max_age=NEW_LINK_SHOWN_S,
            path=f"/runs/{run.id}/share",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
    return response


def new_link_secret(request: Request, session: Session, run: Run) -> str | None:
    """The secret of a link this browser made for this run in the last minutes, while it stands."""
    share_id, _, secret = request.cookies.get(NEW_LINK_COOKIE, "").partition(":")
    share = session.get(ReportShare, share_id) if share_id and secret else None
    if share is None or share.run_id != run.id or share.token_hash != secret_digest(secret):
        return None
    return secret


@router.post("/runs/{run_id}/shares/{share_id}/revoke", name="revoke_share")
def revoke_share_page(request: Request, run: RunDep, share_id: str, session: DbSessionDep) -> Response:
    session.delete(session.get(ReportShare, share_id))  # `authorize` checked it is this run's
    return RedirectResponse(
        f"{request.url_for('workspace_page', ws=run.workspace_id)}?run={run.id}#run", status_code=303
    )


@router.get(SHARED_PREFIX + "{secret}", name="shared_report")
def shared_report(request: Request, secret: str, session: DbSessionDep) -> Response:
    share = session.scalar(select(ReportShare).where(ReportShare.token_hash == secret_digest(secret[:200])))
    run = session.get(Run, share.run_id) if share is not None else None
    if share is None or run is None:
        raise HTTPException(404, "This link does not exist or was revoked.")
    share.views += 1
    report = run_report(session, run)
    settings = request.app.state.settings
    page = render.to_html(portable_content(report, settings), base_dir=report_folder(report, settings))
    return Response(page.encode("utf-8"), media_type="text/html; charset=utf-8", headers=SHARED_HEADERS)


# --- JSON API -------------------------------------------------------------------------------
@router.get("/api/runs/{run_id}/shares")
def api_shares(run: RunDep, session: DbSessionDep) -> dict[str, Any]:
    return {"shares": [share_dict(s) for s in shares_of(session, run)]}


@router.post("/api/runs/{run_id}/shares", status_code=201)
def api_share(request: Request, run: RunDep, session: DbSessionDep, confirm: bool = False) -> dict[str, Any]:
    if not confirm:
        raise ApiError(
            409,
            "confirmation_required",
            "Anyone with the link will be able to read this report.",
            "Repeat with ?confirm=true to create the link.",
        )
    share, secret = create_share(session, run)
    return {**share_dict(share), "url": share_link(request, secret)}


@router.delete("/api/runs/{run_id}/shares/{share_id}")
def api_revoke_share(run: RunDep, share_id: str, session: DbSessionDep) -> dict[str, Any]:
    share = found(session, ReportShare, share_id, "share")  # as `authorize` says
    session.delete(share)
    return {"revoked": share_dict(share)}
