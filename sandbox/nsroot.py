"""The `unshare` fallback's filesystem view, built from inside the new namespaces.

`unshare --net --pid --mount --ipc --uts --fork` gives the worker its own namespaces but the
host's whole filesystem. Before anything else the worker (still root in its mount namespace)
builds a fresh root on a tmpfs with the same read-only/writable bind mounts bubblewrap would
make, pivots into it and detaches the old root; it then drops to the sandbox user. Standard
library + ctypes only.
"""

from __future__ import annotations

import ctypes
import os

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
SYS_PIVOT_ROOT = 155  # x86_64

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    _check(
        _libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
        f"mount {source} on {target}",
    )


def _bind(root: str, source: str, dest: str, read_only: bool, device: bool = False) -> None:
    target = root + dest
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    _mount(source, target, None, MS_BIND | MS_REC)
    _mount(
        None,
        target,
        None,
        MS_BIND | MS_REMOUNT | MS_NOSUID | (0 if device else MS_NODEV) | (MS_RDONLY if read_only else 0),
    )


def enter(spec: dict) -> None:
    """spec: {"root": empty host dir, "binds": [[src, dest, read_only], ...],
    "tmpfs": [[dest, size_mb, mode], ...], "symlinks": [[target, link], ...], "chdir": path}."""
    os.umask(0o022)
    root = spec["root"]
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")
    # The writable places (/tmp, /scratch) first, size-limited and in memory: binds of an
    # interpreter or virtualenv that lives under /tmp go on top of them.
    for dest, size_mb, mode in spec.get("tmpfs", []):
        os.makedirs(root + dest, exist_ok=True)
        _mount("tmpfs", root + dest, "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode},size={int(size_mb)}m")
    for source, dest, read_only in spec["binds"]:
        _bind(root, source, dest, bool(read_only))
    for target, link in spec.get("symlinks", []):
        os.symlink(target, root + link)
    for name in ("null", "zero", "random", "urandom"):
        _bind(root, f"/dev/{name}", f"/dev/{name}", False, device=True)
    os.makedirs(root + "/proc", exist_ok=True)
    _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    os.chdir(root)
    _check(_libc.syscall(SYS_PIVOT_ROOT, b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", MNT_DETACH), "umount old root")
    os.chdir("/")
    _mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(spec.get("chdir", "/"))
