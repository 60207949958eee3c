"""What one call produced, as the host sees it: every file name the sandbox reports is checked to
be a plain file directly in the call's folder before it becomes a host path.

Standard library only; no web or agent imports.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class RunOutcome:
    """What one run_python call produced, with host paths for every artefact."""

    ok: bool
    isolation: str
    error: dict | None = None
    stdout: dict = field(default_factory=dict)
    stderr: dict = field(default_factory=dict)
    figures: list[dict] = field(default_factory=list)   # {"path": host path, "caption": ...}
    tables: list[dict] = field(default_factory=list)    # {"name", "parquet", "csv", "rows", "columns", "preview"}
    result: Any = None
    call_dir: Path | None = None
    duration_ms: float = 0.0
    warm: bool = False
    datasets: dict = field(default_factory=dict)
    seccomp: str = "off"

    def as_dict(self) -> dict:
        data = asdict(self)
        data["call_dir"] = str(self.call_dir) if self.call_dir else None
        return data


def _crashed(reply: dict) -> bool:
    """The child died (signal, os._exit) rather than finishing: the parent is replaced too."""
    return reply.get("exit_status") not in (0, None)


def _prune_calls(folder: Path, keep: int) -> None:
    """Scratch is cleaned: only the newest `keep` call folders (outputs, tables) are kept."""
    try:
        if folder.is_symlink() or not folder.is_dir():
            return
        entries = []
        for entry in os.scandir(folder):
            try:
                entries.append((entry.stat(follow_symlinks=False).st_mtime, entry))
            except OSError:
                pass
    except OSError:
        return
    if len(entries) <= keep:
        return
    entries.sort(key=lambda item: item[0])
    for _, entry in entries[: len(entries) - keep]:
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)  # never follows symlinks inside
            else:
                os.unlink(entry.path)
        except OSError:
            pass


def _artefact(call_dir: Path, name: Any) -> Path | None:
    """A file the sandbox reports, only when it is a regular file directly in the call folder and
    no part of its path below the (host-made) scratch root is a symlink the sandbox planted."""
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name in (".", "..") or "\0" in name:
        return None
    path = call_dir / name
    try:
        if os.path.realpath(path) != str(path) or not stat.S_ISREG(os.lstat(path).st_mode):
            return None
    except OSError:
        return None
    return path


def _host_stream(stream: dict | None, call_dir: Path) -> dict:
    stream = dict(stream or {})
    stream.setdefault("text", "")
    stream["truncated"] = bool(stream.get("truncated"))
    path = _artefact(call_dir, stream.get("file"))
    stream["path"] = str(path) if path else None
    return stream
