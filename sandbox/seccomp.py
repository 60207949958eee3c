"""A small seccomp-BPF filter installed by the warm parent inside the sandbox (x86_64 only).

It is defence in depth on top of the namespaces: it denies creating any socket other than
AF_UNIX (so no IP, netlink or packet socket can even be opened), new namespaces (unshare,
setns, clone with CLONE_NEW*), mounting, ptrace and reading other processes' memory, kernel
keyrings, bpf, perf, userfaultfd, io_uring and module/kexec calls. Standard library only.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct
from typing import TypedDict

AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000

_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000

_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

_OFF_NR, _OFF_ARCH, _OFF_ARG0 = 0, 4, 16
AF_UNIX = 1
CLONE_NEW_FLAGS = 0x7E020080  # NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWTIME


class SyscallTable(TypedDict):
    """System call numbers of one architecture: the ones the filter tests, and those it denies."""

    socket: int
    socketpair: int
    clone: int
    clone3: int
    denied: dict[str, int]


X86_64: SyscallTable = {
    "socket": 41,
    "socketpair": 53,
    "clone": 56,
    "clone3": 435,
    "denied": {
        "ptrace": 101,
        "mount": 165,
        "umount2": 166,
        "pivot_root": 155,
        "chroot": 161,
        "unshare": 272,
        "setns": 308,
        "bpf": 321,
        "perf_event_open": 298,
        "keyctl": 250,
        "add_key": 248,
        "request_key": 249,
        "userfaultfd": 323,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "kexec_load": 246,
        "kexec_file_load": 320,
        "init_module": 175,
        "finit_module": 313,
        "delete_module": 176,
        "reboot": 169,
        "swapon": 167,
        "swapoff": 168,
        "process_vm_readv": 310,
        "process_vm_writev": 311,
        "open_by_handle_at": 304,
        "name_to_handle_at": 303,
        "acct": 163,
        "fsopen": 430,
        "fsmount": 432,
        "move_mount": 429,
        "open_tree": 428,
        "mount_setattr": 442,
    },
}


def _stmt(code: int, k: int) -> tuple:
    return (code, 0, 0, k)


def build_filter() -> list[tuple[int, int, int, int]]:
    """The BPF program as (code, jt, jf, k) tuples."""
    table = X86_64
    deny_eperm = _RET_ERRNO | errno.EPERM
    deny_eacces = _RET_ERRNO | errno.EACCES
    # Layout: header, per-syscall dispatch, then the shared tails at fixed labels.
    dispatch = [
        ("socket", table["socket"]),
        ("socket", table["socketpair"]),
        ("clone", table["clone"]),
        ("enosys", table["clone3"]),
    ] + [("deny", nr) for nr in table["denied"].values()]
    head = [
        _stmt(_LD_W_ABS, _OFF_ARCH),
        ("jeq_arch",),
        _stmt(_LD_W_ABS, _OFF_NR),
        ("jge_x32",),
    ]
    body_len = len(head) + len(dispatch) + 1  # + "allow" after dispatch
    labels = {
        "allow": body_len - 1,
        "deny": body_len,
        "enosys": body_len + 1,
        "socket": body_len + 2,
        "clone": body_len + 6,
    }
    program: list[tuple] = []

    def jump_to(label: str, here: int) -> int:
        offset = labels[label] - here - 1
        if not 0 <= offset < 256:
            raise ValueError("seccomp program too long")
        return offset

    for item in head:
        here = len(program)
        if item == ("jeq_arch",):
            program.append((_JEQ_K, 0, jump_to("deny", here), AUDIT_ARCH_X86_64))
        elif item == ("jge_x32",):
            program.append((_JGE_K, jump_to("deny", here), 0, _X32_BIT))
        else:
            program.append(item)
    for label, nr in dispatch:
        here = len(program)
        program.append((_JEQ_K, jump_to(label, here), 0, nr))
    program.append(_stmt(_RET_K, _RET_ALLOW))  # allow
    program.append(_stmt(_RET_K, deny_eperm))  # deny
    program.append(_stmt(_RET_K, _RET_ERRNO | errno.ENOSYS))  # enosys (clone3: libc falls back to clone)
    program.append(_stmt(_LD_W_ABS, _OFF_ARG0))  # socket: family
    program.append((_JEQ_K, 0, 1, AF_UNIX))
    program.append(_stmt(_RET_K, _RET_ALLOW))
    program.append(_stmt(_RET_K, deny_eacces))
    assert len(program) == labels["clone"]
    program.append(_stmt(_LD_W_ABS, _OFF_ARG0))  # clone: flags
    program.append((_JSET_K, 0, 1, CLONE_NEW_FLAGS))
    program.append(_stmt(_RET_K, deny_eperm))
    program.append(_stmt(_RET_K, _RET_ALLOW))
    return program


def supported() -> bool:
    return platform.system() == "Linux" and platform.machine() in ("x86_64", "AMD64")


def install() -> str:
    """Install the filter on this process (inherited by every child). Returns a status word."""
    if not supported():
        return f"unavailable ({platform.machine()})"
    program = build_filter()
    raw = b"".join(struct.pack("HBBI", *ins) for ins in program)
    buffer = ctypes.create_string_buffer(raw)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = SockFprog(len(program), ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"failed (no_new_privs: errno {ctypes.get_errno()})"
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        return f"failed (errno {ctypes.get_errno()})"
    return "on"
