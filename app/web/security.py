"""The web edge: cross-site request refusal (CSRF) and the security headers of every response.

CSRF by Fetch metadata and Origin, the way datasette and Go's `http.CrossOriginProtection` do it,
so no form needs a token:
- `Sec-Fetch-Site` (sent by every current browser): only `same-origin` and `none` (the user typed
  the address or used a bookmark) may change state. `same-site` is refused too: a page on another
  port of the same host is same-site, and the local no-sign-in app must not take its posts.
- without it, `Origin` must name this server (its Host header, or one of `trusted_origins`).
- with neither, the client is not a browser (curl, a script): nothing to protect against.
Bearer-token calls are exempt: a browser cannot add an Authorization header to a cross-site request
without a CORS preflight, which this app never grants.

DNS rebinding is the one way around that on a server without sign-in: a page on evil.example whose
name is re-pointed at 127.0.0.1 is same-origin with itself and reads the local app. Its requests
carry `Host: evil.example`, so without sign-in only host names known to be this server are served
(HostGuard). IP literals always pass: a browser sends one only when the user typed that address.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
ALLOWED_FETCH_SITES = frozenset({"same-origin", "none"})
DEFAULT_PORTS = {"http": "80", "https": "443"}

# The app's pages: scripts and styles from /static only (no inline script, no inline style),
# images from this site (charts) or data: URLs; nothing may frame them.
PAGE_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
# A self-contained report (HTML download, /shared/ link): its own inline stylesheet and embedded
# charts, no script at all, nothing loaded from anywhere, no forms.
REPORT_CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    (b"content-security-policy", PAGE_CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


def cross_site_reason(method: str, headers: Headers, trusted_origins: frozenset[str] = frozenset()) -> str | None:
    """Why this request must be refused as cross-site, or None when it may go on."""
    if method in SAFE_METHODS or headers.get("authorization", "")[:7].lower() == "bearer ":
        return None
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None:
        return None if fetch_site.lower() in ALLOWED_FETCH_SITES else f"Sec-Fetch-Site: {fetch_site}"
    origin = headers.get("origin")
    if origin is None:
        return None
    if origin_key(origin) in trusted_origins or same_host(origin, headers.get("host", "")):
        return None
    return f"Origin: {origin}"


def origin_key(origin: str) -> str:
    """`scheme://host:port`, lower-case, with the default port spelt out (for `trusted_origins`)."""
    parts = urlsplit(origin.strip().lower())
    if not parts.scheme or not parts.hostname:
        return origin.strip().lower()
    port = str(parts.port) if parts.port else DEFAULT_PORTS.get(parts.scheme, "")
    return f"{parts.scheme}://{parts.hostname}:{port}"


def same_host(origin: str, host: str) -> bool:
    """Whether the Origin names the host and port this request was sent to (`null` never does)."""
    try:
        parts = urlsplit(origin.strip().lower())
        target = urlsplit("//" + host.strip().lower())
        origin_port = str(parts.port or DEFAULT_PORTS.get(parts.scheme, ""))
        host_port = str(target.port or DEFAULT_PORTS.get(parts.scheme, ""))
    except ValueError:  # a malformed port
        return False
    return bool(parts.hostname) and parts.hostname == target.hostname and origin_port == host_port


class CrossSiteGuard:
    """Refuses state-changing requests that another site made the browser send (module docstring)."""

    def __init__(self, app: ASGIApp, refuse: Callable[[Request, str], Response], trusted_origins: tuple[str, ...] = ()):
        self.app, self.refuse = app, refuse
        self.trusted = frozenset(origin_key(o) for o in trusted_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            reason = cross_site_reason(scope["method"], Headers(scope=scope), self.trusted)
            if reason is not None:
                await self.refuse(Request(scope), reason)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def unknown_host(host_header: str, allowed_names: frozenset[str]) -> str | None:
    """The host name of a Host header this server does not answer to (module docstring), else None."""
    if not host_header:  # not a browser: HTTP/1.0 clients may omit it
        return None
    name = (urlsplit("//" + host_header.strip()).hostname or "").lower()
    if name == "localhost" or name.endswith(".localhost") or name in allowed_names or is_ip_address(name):
        return None
    return name


def is_ip_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name.split("%")[0])  # an IPv6 literal may carry a zone (%eth0)
    except ValueError:
        return False
    return True


class HostGuard:
    """Serves only requests whose Host names this server (DNS rebinding, module docstring)."""

    def __init__(self, app: ASGIApp, refuse: Callable[[Request, str], Response], allowed_names: frozenset[str]):
        self.app, self.refuse, self.allowed = app, refuse, allowed_names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            name = unknown_host(Headers(scope=scope).get("host", ""), self.allowed)
            if name is not None:
                await self.refuse(Request(scope), name)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class SecurityHeaders:
    """Adds the security headers to every response; a response that set its own policy (a report,
    the API docs) keeps it."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(name, value) for name, value in SECURITY_HEADERS if name not in present]
                message["headers"] = list(message.get("headers", [])) + extra
            await send(message)

        await self.app(scope, receive, send_with_headers)
