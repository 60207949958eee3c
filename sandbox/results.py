"""What one call produced, as the host sees it, and the host's only ways into the sandbox's files.

The sandbox writes to its own in-memory /scratch; after each call the host copies the outputs it
keeps (figures, saved tables) into a host folder the sandbox never sees, then empties the call's
folder and /tmp. Every step works from directory descriptors opened with O_NOFOLLOW: a name the
sandbox could have replaced by a symlink (even atomically, with renameat2 RENAME_EXCHANGE) is
never followed, so no host file outside the sandbox can be read, written or deleted through it.

Standard library only; no web or agent imports.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # O_NONBLOCK: a FIFO never blocks


@dataclass
class RunOutcome:
    """What one run_python call produced, with host paths (in a host-owned folder) for every artefact."""

    ok: bool
    isolation: str
    error: dict | None = None
    stdout: dict = field(default_factory=dict)  # {"text", "truncated", "bytes"}
    stderr: dict = field(default_factory=dict)
    figures: list[dict] = field(default_factory=list)  # {"path": host path, "caption": ...}
    tables: list[dict] = field(default_factory=list)  # {"name", "parquet", "csv", "rows", "columns", "preview"}
    result: Any = None
    call_dir: Path | None = None  # the host folder holding the kept copies
    duration_ms: float = 0.0
    warm: bool = False
    datasets: dict = field(default_factory=dict)
    seccomp: str = "off"
    stopped_processes: int = 0  # background processes the call left running
    retried: bool = False  # the data could not be read: the call ran again in a fresh sandbox

    def as_dict(self) -> dict:
        data = asdict(self)
        data["call_dir"] = str(self.call_dir) if self.call_dir else None
        return data


def _crashed(reply: dict) -> bool:
    """The child died (signal, os._exit) rather than finishing: the parent is replaced too."""
    return reply.get("exit_status") not in (0, None)


def plain_name(name: Any) -> bool:
    return (
        isinstance(name, str)
        and 0 < len(name) <= 255
        and "/" not in name
        and "\\" not in name
        and "\0" not in name
        and name not in (".", "..")
    )


def open_dir(name: str | Path, dir_fd: int | None = None) -> int:
    """A directory descriptor; never through a symlink (ELOOP/ENOTDIR instead)."""
    return os.open(name, DIR_FLAGS, dir_fd=dir_fd)


@dataclass
class CopyBudget:
    """What one call may still copy out: bytes in all, and the files (inodes) already copied; a file
    that hard links (or the same name twice) name again is copied once and counted once."""

    bytes_left: int
    seen: set[tuple[int, int]] = field(default_factory=set)


def copy_out(dir_fd: int, name: Any, target: Path, max_bytes: int, budget: CopyBudget | None = None) -> Path | None:
    """Copy one regular file named `name` directly in `dir_fd` to the host path `target`, if it is
    at most `max_bytes` (and fits `budget`, and was not copied before under another name); anything
    else (a symlink, a FIFO, a device, a folder, a bigger file) is skipped."""
    if not plain_name(name):
        return None
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        if budget is not None:
            key = (info.st_dev, info.st_ino)
            if key in budget.seen or info.st_size > budget.bytes_left:
                return None
            budget.seen.add(key)
            budget.bytes_left -= info.st_size
        with open(fd, "rb", closefd=False) as source, open(target, "xb") as sink:
            left = max_bytes
            while left > 0 and (chunk := source.read(min(left, 1 << 20))):
                sink.write(chunk)
                left -= len(chunk)
        return target
    except OSError:
        return None
    finally:
        os.close(fd)


MAX_WIPE_DEPTH = 200  # deeper folders stay (in the sandbox's own size-limited memory): no unbounded walk
PATH_FLAGS = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC


def wipe(dir_fd: int) -> None:
    """Remove everything inside the directory `dir_fd` that lies on the same mount, never following
    a symlink. The host calls this from outside the sandbox's mount namespace, where removing a
    folder that is a mount point inside it (an interpreter or virtualenv bound under /tmp) detaches
    that mount from the sandbox: so a mount (another device, or another mount of the same one) is
    neither entered nor removed, and the walk stops at MAX_WIPE_DEPTH."""
    top = os.fstat(dir_fd)
    _empty(dir_fd, top.st_dev, mount_id(dir_fd), 0)


def _empty(dir_fd: int, device: int, mount: int | None, depth: int) -> None:
    try:
        names = os.listdir(dir_fd)
    except OSError:
        return
    for name in names:
        try:
            handle = os.open(name, PATH_FLAGS, dir_fd=dir_fd)  # the entry itself, a symlink too
        except OSError:
            continue
        try:
            info = os.fstat(handle)
            if info.st_dev != device or mount_id(handle) != mount:
                continue  # a mount point (or inside one): it belongs to the sandbox's view, not its scratch
            if stat.S_ISDIR(info.st_mode):
                if depth >= MAX_WIPE_DEPTH:
                    continue
                inner = os.open(".", DIR_FLAGS, dir_fd=handle)  # the very folder checked above
                try:
                    _empty(inner, device, mount, depth + 1)
                finally:
                    os.close(inner)
                os.rmdir(name, dir_fd=dir_fd)  # fails (not empty) where a mount inside it stays
            else:
                os.unlink(name, dir_fd=dir_fd)
        except OSError:
            pass
        finally:
            os.close(handle)


def mount_id(fd: int) -> int | None:
    """The id of the mount a descriptor lies on (/proc/self/fdinfo), None where it cannot be read."""
    try:
        with open(f"/proc/self/fdinfo/{fd}", "rb") as handle:
            for line in handle:
                if line.startswith(b"mnt_id:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def collect(
    scratch_fd: int, call_id: str, reply: dict, target: Path, max_file_bytes: int, max_call_bytes: int | None = None
) -> tuple[list, list]:
    """Copy the figures and tables the reply names out of the call's folder into `target`: each file
    once (hard links and repeated names count once), at most `max_call_bytes` in all (the reply is
    the call's own: it can name one file twenty times)."""
    budget = CopyBudget(max_call_bytes if max_call_bytes is not None else 4 * max_file_bytes)
    figures: list[dict] = []
    tables: list[dict] = []
    if not (reply.get("figures") or reply.get("tables")):
        return figures, tables
    try:
        calls = open_dir("calls", scratch_fd)
    except OSError:
        return figures, tables
    try:
        call = open_dir(call_id, calls)
    except OSError:  # replaced by something that is not a folder: nothing is read from it
        os.close(calls)
        return figures, tables
    try:
        target.mkdir(parents=True, exist_ok=True)
        for figure in reply.get("figures") or []:
            path = copy_out(call, figure.get("file"), target / str(figure.get("file")), max_file_bytes, budget)
            if path:
                figures.append({"path": str(path), "caption": str(figure.get("caption", ""))[:300]})
        for table in reply.get("tables") or []:
            parquet = copy_out(call, table.get("parquet"), target / str(table.get("parquet")), max_file_bytes, budget)
            csv = copy_out(call, table.get("csv"), target / str(table.get("csv")), max_file_bytes, budget)
            if parquet:
                tables.append({**table, "parquet": str(parquet), "csv": str(csv) if csv else None})
    finally:
        os.close(call)
        os.close(calls)
    return figures, tables


def empty_scratch(scratch_fd: int, tmp_fd: int | None) -> None:
    """After a call: its folder (and any other in calls/) and /tmp are emptied."""
    try:
        calls = open_dir("calls", scratch_fd)
    except OSError:
        calls = None
    for fd in (calls, tmp_fd):
        if fd is not None:
            wipe(fd)
    if calls is not None:
        os.close(calls)


def prune_kept(folder: Path, keep: int, max_bytes: int) -> None:
    """The host keeps the newest calls' outputs: at most `keep` call folders and `max_bytes` in
    all, the oldest removed first (the newest always stays)."""
    try:
        top = open_dir(folder)
    except OSError:
        return
    try:
        entries = []
        for name in os.listdir(top):
            try:
                info = os.stat(name, dir_fd=top, follow_symlinks=False)
                entries.append((info.st_mtime, name, _size(top, name, info)))
            except OSError:
                pass
        entries.sort(reverse=True)
        total = 0
        for index, (_, name, size) in enumerate(entries):
            total += size
            if index == 0 or (index < keep and total <= max_bytes):
                continue
            try:
                if stat.S_ISDIR(os.stat(name, dir_fd=top, follow_symlinks=False).st_mode):
                    shutil.rmtree(name, dir_fd=top, ignore_errors=True)
                else:
                    os.unlink(name, dir_fd=top)
            except OSError:
                pass
    finally:
        os.close(top)


def _size(top: int, name: str, info: os.stat_result) -> int:
    if not stat.S_ISDIR(info.st_mode):
        return info.st_size
    total = 0
    try:
        fd = open_dir(name, top)
    except OSError:
        return 0
    try:
        for child in os.listdir(fd):
            try:
                total += os.stat(child, dir_fd=fd, follow_symlinks=False).st_size
            except OSError:
                pass
    finally:
        os.close(fd)
    return total
