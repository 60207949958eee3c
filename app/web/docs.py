"""The interactive API documentation (/api/docs) and its schema (/api/openapi.json).

Served by this router rather than by FastAPI's built-in routes so that the app-wide `authorize`
dependency covers them: with sign-in on, only signed-in users read them. `api_docs = false` turns
both off. The docs page gets its own Content-Security-Policy: Swagger UI comes from its CDN and
starts with one inline script, allowed by its hash and nothing else.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

from app.web.deps import CommittingRoute

router = APIRouter(include_in_schema=False, route_class=CommittingRoute)

OPENAPI_URL = "/api/openapi.json"
SWAGGER_CDN = "https://cdn.jsdelivr.net"
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def docs_enabled(request: Request) -> None:
    if not request.app.state.settings.api_docs:
        raise HTTPException(404, "the API documentation is turned off (api_docs)")


@router.get(OPENAPI_URL)
def openapi_schema(request: Request) -> dict[str, Any]:
    docs_enabled(request)
    return request.app.openapi()


@router.get("/api/docs")
def swagger_ui(request: Request) -> HTMLResponse:
    docs_enabled(request)
    page = get_swagger_ui_html(openapi_url=OPENAPI_URL, title=f"{request.app.title} — API")
    hashes = " ".join(f"'sha256-{script_hash(s)}'" for s in _INLINE_SCRIPT.findall(bytes(page.body).decode()))
    page.headers["Content-Security-Policy"] = (
        f"default-src 'none'; script-src {SWAGGER_CDN} {hashes}; style-src {SWAGGER_CDN} 'unsafe-inline'; "
        "img-src 'self' data: https:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )
    return page


def script_hash(source: str) -> str:
    return base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()
