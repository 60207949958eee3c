"""The host's view of a sandbox's processes, from /proc: its root folder (so the host reaches the
sandbox's in-memory scratch by descriptor, never by a path the sandbox could redirect) and the
memory (PSS) all its processes use together; and, inside a sandbox, waiting for a child while
reaping the orphans that a pid namespace's init inherits.

Standard library only; no web or agent imports.
"""

from __future__ import annotations

import os


def children_of(pid: int) -> list[int]:
    """Direct children of `pid`."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(p) for p in handle.read().split()]
    except (OSError, ValueError):
        return [p for p, parent in _parents().items() if parent == pid]


def _parents() -> dict[int, int]:
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    found[int(name)] = int(handle.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    return found


def tree(pid: int) -> list[int]:
    """`pid` and all its descendants."""
    parents = _parents()
    found, frontier = [pid], [pid]
    while frontier:
        frontier = [p for p, parent in parents.items() if parent in frontier and p not in found]
        found += frontier
    return found


def pss_kb(pid: int) -> int:
    """Proportional set size: a page shared by n processes counts 1/n for each, so the sum over
    processes is the memory they use together."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def tree_pss_kb(pid: int) -> int:
    return sum(pss_kb(p) for p in tree(pid))


def sandbox_root(outer_pid: int) -> int:
    """A directory descriptor of the sandbox's root folder, from the first process under the
    launcher (bwrap or unshare) that lives in the sandbox's mount namespace. The descriptor stays
    valid as long as the host holds it."""
    host_root = os.stat("/")
    for child in children_of(outer_pid):
        try:
            fd = os.open(f"/proc/{child}/root", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            continue
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) != (host_root.st_dev, host_root.st_ino):
            return fd
        os.close(fd)
    raise OSError(f"no process of the sandbox (launcher pid {outer_pid}) has its own root folder")


def reap_until(pid: int) -> int | None:
    """Wait for the child `pid`, reaping any other child on the way (this process may be its pid
    namespace's init, which inherits orphans); its wait status, or None when there is no child."""
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return None
        except InterruptedError:
            continue
        if done == pid:
            return status
