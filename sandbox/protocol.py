"""Length-prefixed JSON messages over the socketpair between the host and the warm parent.

Standard library only: this module is imported inside the sandbox before anything else.
"""

from __future__ import annotations

import json
import socket
import struct

_HEADER = struct.Struct("!I")
MAX_MESSAGE = 64 * 1024 * 1024


def reply_bytes(limits: dict) -> int:
    """The largest message read from a call (`Limits.reply_mb`; never above the channel's own bound)."""
    return min(MAX_MESSAGE - (1 << 20), max(1, int(limits.get("reply_mb") or 4)) * 1024 * 1024)


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


def recv(sock: socket.socket, max_size: int = MAX_MESSAGE) -> dict:
    """One message, refused (the channel is then unusable) when its header announces more than
    `max_size` bytes: nothing of it is read or parsed."""
    (size,) = _HEADER.unpack(_read_exact(sock, _HEADER.size))
    if size > max_size:
        raise ChannelClosed(f"message too large ({size} bytes)")
    return json.loads(_read_exact(sock, size).decode("utf-8"))
