"""Length-prefixed JSON messages over the socketpair between the host and the warm parent.

Standard library only: this module is imported inside the sandbox before anything else.
"""

from __future__ import annotations

import json
import socket
import struct

_HEADER = struct.Struct("!I")
MAX_MESSAGE = 64 * 1024 * 1024


class ChannelClosed(EOFError):
    """The other end went away."""


def send(sock: socket.socket, message: dict) -> None:
    data = json.dumps(message, ensure_ascii=False, default=str).encode("utf-8")
    sock.sendall(_HEADER.pack(len(data)) + data)


def _read_exact(sock: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ChannelClosed("channel closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def recv(sock: socket.socket) -> dict:
    (size,) = _HEADER.unpack(_read_exact(sock, _HEADER.size))
    if size > MAX_MESSAGE:
        raise ChannelClosed(f"message too large ({size} bytes)")
    return json.loads(_read_exact(sock, size).decode("utf-8"))
