"""Users and capabilities inside the sandbox (root host only), with ctypes: the warm parent and a
call's child run under two different uids, so nothing a call runs can signal, trace or write to
the process that serves the workspace.

- the zygote starts as root (bwrap with a few capabilities, or `unshare`), prepares the scratch
  folder, then becomes the workspace's *parent user* keeping only CAP_SETUID, CAP_SETGID (to
  start calls as the call user) and CAP_KILL (to stop what a call leaves behind);
- a call's child becomes the workspace's *call user* and drops every capability.

The kernel allows a signal only between processes of the same user (or with CAP_KILL), so the
call user can reach its own processes and nothing else. In a user namespace (unprivileged host)
there is one uid only: each call gets a pid namespace of its own instead (worker_parent), and
drops every capability (`drop_all`). Standard library + ctypes only.
"""

from __future__ import annotations

import ctypes
import os

CAP_CHOWN, CAP_KILL, CAP_SETGID, CAP_SETUID = 0, 5, 6, 7
PARENT_CAPS = (CAP_SETUID, CAP_SETGID, CAP_KILL)
_VERSION_3 = 0x20080522
PR_SET_KEEPCAPS, PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 8, 24, 47, 4
PR_SET_DUMPABLE = 4

_libc = ctypes.CDLL(None, use_errno=True)


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def set_caps(effective: tuple[int, ...], permitted: tuple[int, ...] | None = None) -> None:
    """Set this process's effective and permitted capabilities (inheritable: none)."""
    permitted = effective if permitted is None else permitted
    header = _Header(_VERSION_3, 0)
    data = (_Data * 2)()
    for cap in effective:
        data[cap // 32].effective |= 1 << (cap % 32)
    for cap in permitted:
        data[cap // 32].permitted |= 1 << (cap % 32)
    _check(_libc.capset(ctypes.byref(header), data), "capset")


def drop_bounding_except(keep: tuple[int, ...]) -> None:
    """Remove every other capability from the bounding set (needs CAP_SETPCAP; bwrap has already
    limited the set when the sandbox has no CAP_SETPCAP, so failures are ignored)."""
    last = _last_cap()
    for cap in range(last + 1):
        if cap not in keep:
            _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)


def _last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return 40


def become_parent_user(uid: int, gid: int) -> None:
    """Root -> the parent user, keeping only PARENT_CAPS (effective and permitted)."""
    drop_bounding_except(PARENT_CAPS)
    _check(_libc.prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0), "keepcaps")
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    _check(_libc.prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0), "keepcaps")
    set_caps(PARENT_CAPS)
    if os.getuid() == 0 or os.geteuid() == 0:
        raise SystemExit("could not drop privileges")


def become_call_user(uid: int, gid: int) -> None:
    """The parent user -> the call user, with no capability left at all."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    set_caps(())
    if os.getuid() != uid or os.geteuid() != uid:
        raise SystemExit("could not become the call user")


def drop_all() -> None:
    """No capability left (a call in a user namespace, where the parent held CAP_SYS_ADMIN)."""
    drop_bounding_except(())
    set_caps(())


def not_dumpable() -> None:
    """No process of the same user may ptrace this one or open its /proc files (mem, fd)."""
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
