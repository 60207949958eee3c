"""Request bodies are bounded while they arrive, before any route, sign-in check or parser reads them.

A body is counted message by message as the server hands it over (chunked bodies have no
Content-Length to trust), and the request is answered 413 the moment it passes its limit; a
declared Content-Length over the limit is refused before a byte is read. The limit depends on the
route: a route that takes a file (an `UploadFile` parameter) may receive `max_upload_mb` plus room
for the multipart framing; every other route (JSON API calls, page forms, unknown paths) only
`max_request_mb`. The route is found from the path, never from the client's Content-Type, so a
client cannot pick the bigger limit by calling a JSON route "multipart".

An upload to a server with sign-in is checked for a signed-in user before its body is read: an
anonymous 200 MB upload costs the server its headers, not its memory or disk.

Pure ASGI (a BaseHTTPMiddleware would buffer the body it is meant to bound).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from fastapi import params
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Room for the multipart framing around an uploaded file (boundaries, part headers, the other fields).
MULTIPART_ALLOWANCE_BYTES = 1024 * 1024


@dataclass(frozen=True)
class BodyClass:
    """What a route may receive: its kind ("upload" or "request") and the most bytes of body."""

    kind: str
    max_bytes: int


class BodyTooLarge(BaseException):
    """Raised from `receive` when a body passes its limit. A BaseException on purpose: the app's
    handlers of `Exception` (FastAPI's "error parsing the body", the 500 page) must not turn it into
    another answer; BodyLimit catches it and answers 413 itself."""


Refusal = Callable[[Request, BodyClass], Response]
SignInGate = Callable[[Request], Awaitable[Response | None]]


def takes_a_file(route: BaseRoute) -> bool:
    """Whether a route has a file parameter (File/UploadFile), i.e. receives uploads."""
    if not isinstance(route, APIRoute):
        return False
    pending, fields = [route.dependant], []
    while pending:
        dependant = pending.pop()
        fields.extend(dependant.body_params)
        pending.extend(dependant.dependencies)
    return any(isinstance(field.field_info, params.File) for field in fields)


def upload_routes(routes: Sequence[BaseRoute]) -> list[BaseRoute]:
    """The routes that take a file, routers included in the app (FastAPI keeps an included router
    as one entry with its `original_router`; the app includes its routers without a prefix, so
    their routes match the full path) walked through."""
    found, pending = [], list(routes)
    while pending:
        route = pending.pop()
        included = getattr(route, "original_router", None)
        if included is not None:
            pending.extend(included.routes)
        elif takes_a_file(route):
            found.append(route)
    return found


class BodyLimit:
    """Bounds every request body by its route's class (see the module's docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        routes: Callable[[], Sequence[BaseRoute]],
        upload_bytes: int,
        request_bytes: int,
        refuse: Refusal,
        sign_in_gate: SignInGate | None = None,
    ):
        self.app, self.routes, self.refuse, self.sign_in_gate = app, routes, refuse, sign_in_gate
        self.upload = BodyClass("upload", upload_bytes + MULTIPART_ALLOWANCE_BYTES)
        self.request = BodyClass("request", request_bytes)
        self._upload_routes: list[BaseRoute] | None = None  # found on the first request (all routes are in)

    def body_class(self, scope: Scope) -> BodyClass:
        if self._upload_routes is None:
            self._upload_routes = upload_routes(self.routes())
        for route in self._upload_routes:
            if route.matches(scope)[0] is Match.FULL:
                return self.upload
        return self.request

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.body_class(scope)
        declared = _content_length(scope)
        if declared is not None and declared > limit.max_bytes:
            await self._answer(self.refuse(Request(scope), limit), scope, receive, send)
            return
        if limit.kind == "upload" and self.sign_in_gate is not None and declared != 0:
            refused = await self.sign_in_gate(Request(scope))
            if refused is not None:
                await self._answer(refused, scope, receive, send)
                return

        received = 0
        started = False

        async def counted_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit.max_bytes:
                    raise BodyTooLarge()
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, watched_send)
        except BodyTooLarge:
            if started:  # a route that answers while it reads: nothing more can be said
                raise RuntimeError("request body over its limit after the response started") from None
            await self._answer(self.refuse(Request(scope), limit), scope, receive, send)

    @staticmethod
    async def _answer(response: Response, scope: Scope, receive: Receive, send: Send) -> None:
        # The rest of the body is never read: the connection cannot carry another request after it.
        response.headers["connection"] = "close"
        await response(scope, receive, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None
