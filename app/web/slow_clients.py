"""Read timeouts for slow clients, in uvicorn's HTTP protocol (issue 25).

uvicorn times out only the idle gap between two requests of a kept-alive connection: a connection
that opens and sends nothing, or sends a header line every few seconds ("slowloris"), or trickles a
body a byte at a time, is held forever, and 500 of them hold 500 connections. The headers are read
before the app sees the request, so no ASGI middleware can time them out; `verity serve` therefore
runs uvicorn with a protocol class made here (`timed_protocol`), the one uvicorn would pick (httptools,
else h11) plus three limits from the settings:

- `http_header_timeout_s`: a request's line and headers must arrive within it, counted from when the
  connection opens or from the first byte of the next request on a kept-alive connection (408, closed);
- `http_body_timeout_s`: the longest pause while a body arrives (closed);
- `http_body_min_bytes_per_s`: once a body has taken longer than `http_body_timeout_s`, its average rate
  must be at least this (closed).

Time spent by the app (reading the body slowly, answering, streaming events) never counts: the clock
runs only while the server waits for the client, and not while uvicorn itself paused reading.
"""

from __future__ import annotations

import asyncio
from typing import Any

from app.config import Settings

REQUEST_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 36\r\nconnection: close\r\n\r\nThe request took too long to arrive."
)


def base_protocol() -> type[asyncio.Protocol]:
    """The protocol uvicorn's `http="auto"` picks: httptools when installed, else h11."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    except ImportError:  # httptools is not installed
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return H11Protocol


def timed_protocol(settings: Settings, base: type[asyncio.Protocol] | None = None) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol with the read timeouts of `settings`, for `uvicorn.Config(http=...)`."""
    parent = base or base_protocol()
    limits = (settings.http_header_timeout_s, settings.http_body_timeout_s)
    return type(
        f"Timed{parent.__name__}",
        (ReadTimeouts, parent),
        {
            "header_s": settings.http_header_timeout_s,
            "body_s": settings.http_body_timeout_s,
            "min_rate": settings.http_body_min_bytes_per_s,
            "tick_s": max(0.05, min(1.0, *(limit / 4 for limit in limits if limit > 0))),
        },
    )


class ReadTimeouts:
    """Mixed into uvicorn's HTTP protocol class. Both uvicorn protocols set `self.cycle` when a
    request's headers are complete, and its `more_body` while the body is still arriving; the
    timeouts read those."""

    header_s, body_s, min_rate, tick_s = 0.0, 0.0, 0.0, 1.0
    # Set by uvicorn's protocol:
    cycle: Any
    flow: Any
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        now = self.loop.time()
        self._seen_cycle: Any = None
        self._headers_since: float | None = now  # a connection that sends nothing is held to it too
        self._last_data = self._body_since = self._last_check = now
        self._body_bytes = 0
        self._tick = self.loop.call_later(self.tick_s, self._check)

    def data_received(self, data: bytes) -> None:
        now = self.loop.time()
        if self._awaiting_request() and self._headers_since is None:
            self._headers_since = now  # the first byte of the next request on a kept connection
        elif self._receiving_body():
            self._body_bytes += len(data)
        self._last_data = now
        super().data_received(data)  # type: ignore[misc]
        if self.cycle is not None and self.cycle is not self._seen_cycle:  # its headers are complete
            self._seen_cycle = self.cycle
            self._headers_since = None
            self._body_since, self._body_bytes = now, 0

    def connection_lost(self, exc: Exception | None) -> None:
        self._tick.cancel()
        super().connection_lost(exc)  # type: ignore[misc]

    def _awaiting_request(self) -> bool:
        return self.cycle is None or bool(self.cycle.response_complete)

    def _in_body(self) -> bool:
        cycle = self.cycle
        return cycle is not None and cycle is self._seen_cycle and cycle.more_body and not cycle.response_complete

    def _receiving_body(self) -> bool:
        # While uvicorn stopped reading (the app is behind), waiting is not the client's fault.
        return self._in_body() and not self.flow.read_paused

    def _check(self) -> None:
        if self.transport.is_closing() or self.transport.get_protocol() is not self:  # closed, or upgraded
            return
        now = self.loop.time()
        if self._in_body() and self.flow.read_paused:  # the paused time does not count
            self._body_since += now - self._last_check
            self._last_data = max(self._last_data, now)
        self._last_check = now
        if self._headers_too_slow(now):
            self.transport.write(REQUEST_TIMEOUT_RESPONSE)
            self.transport.close()
        elif self._body_too_slow(now):
            self.transport.close()  # the app's receive() gets http.disconnect
        else:
            self._tick = self.loop.call_later(self.tick_s, self._check)

    def _headers_too_slow(self, now: float) -> bool:
        since = self._headers_since
        return self.header_s > 0 and self._awaiting_request() and since is not None and now - since > self.header_s

    def _body_too_slow(self, now: float) -> bool:
        if self.body_s <= 0 or not self._receiving_body():
            return False
        took = now - self._body_since
        too_slow = self.min_rate > 0 and took > self.body_s and self._body_bytes / took < self.min_rate
        return too_slow or now - self._last_data > self.body_s


def __getattr__(name: str) -> type[asyncio.Protocol]:
    """`uvicorn ... --http app.web.slow_clients:TimedHTTPProtocol`: the timeouts for uvicorn run by
    hand, from the VERITY_* settings of its environment (`verity serve` passes them itself)."""
    if name == "TimedHTTPProtocol":
        from app.config import get_settings

        return timed_protocol(get_settings())
    raise AttributeError(name)
