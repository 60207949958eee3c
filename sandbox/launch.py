"""Building the command that starts one warm parent: the bwrap or `unshare` argv, the read-only
mounts (interpreter, shared libraries, the package, the data) and the clean environment.

Standard library only; no web or agent imports.
"""

from __future__ import annotations

import json
import os
import sys
import sysconfig
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox.host import SandboxUnavailable

if TYPE_CHECKING:  # annotations only
    from sandbox.host import Isolation

PACKAGE_DIR = Path(__file__).resolve().parent
INSIDE_PACKAGE_ROOT = "/opt/verity"
INSIDE_DATA = "/data"
INSIDE_SCRATCH = "/scratch"
SANDBOX_UID_BASE = 200_000  # per-workspace users when the host runs as root
SANDBOX_UID_SPAN = 100_000  # parent users 200000-299999, call users 300000-399999


def sandbox_uid(workspace_id: str) -> int:
    """The workspace's parent user: the warm parent (zygote and server) runs as this user."""
    return SANDBOX_UID_BASE + zlib.crc32(workspace_id.encode()) % SANDBOX_UID_SPAN


def call_uid(workspace_id: str) -> int:
    """The workspace's call user: the code of every call runs as this user, which cannot signal,
    trace or write to the parent user's processes."""
    return sandbox_uid(workspace_id) + SANDBOX_UID_SPAN


# Prefixes that hold far more than one interpreter (all of /usr/bin, every /usr/local program): never bound
# whole. An interpreter installed there (Debian's python3 in /usr; the official python image's in /usr/local)
# has its own files bound instead: the executable, its standard library, its site-packages, its libpython.
SYSTEM_PREFIXES = frozenset({"/", "/usr", "/usr/local"})


def _python_paths() -> tuple[str, list[str], list[str]]:
    """The interpreter, the folders and files it needs (read-only) and its library path."""
    executable = os.path.realpath(sys.executable)
    paths = sysconfig.get_paths()
    prefixes = {os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix)}
    folders = prefixes - SYSTEM_PREFIXES
    library = [os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib") if paths.get(k)]
    site = [os.path.realpath(paths[k]) for k in ("purelib", "platlib") if paths.get(k)]
    site += _system_site_packages()
    dynload = os.path.join(os.path.realpath(paths["platstdlib"]), "lib-dynload") if paths.get("platstdlib") else None
    if dynload and os.path.isdir(dynload):
        library.append(dynload)
    bound = folders | {source for source, _ in _system_binds()[0]}  # what the sandbox shows anyway
    for item in library + site:
        if not _inside(item, bound):
            folders.add(item)
            bound.add(item)
    # the interpreter's folder, unless it is a system one (/usr/bin, /usr/local/bin): then the file alone
    program_dir = os.path.dirname(executable)
    if not _inside(executable, bound):
        folders.add(executable if os.path.dirname(program_dir) in SYSTEM_PREFIXES else program_dir)
    # a shared libpython outside the system's library folders (the official image's /usr/local/lib, found
    # through the executable's $ORIGIN/../lib run path): there is no ld.so.cache in the sandbox
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        libdir, soname = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")
        libpython = os.path.realpath(os.path.join(str(libdir), str(soname))) if libdir and soname else ""
        if libpython and os.path.isfile(libpython) and not _inside(libpython, folders | bound):
            folders.add(libpython)
    return executable, sorted(folders), list(dict.fromkeys(site))


def _inside(path: str, folders: set[str]) -> bool:
    """Whether `path` is one of `folders` or lies under one."""
    return any(path == f or path.startswith(f.rstrip(os.sep) + os.sep) for f in folders)


def _system_site_packages() -> list[str]:
    """The base interpreter's site-packages when the virtualenv was made with
    --system-site-packages: the sandbox starts Python with -S, so nothing adds them by itself, and
    a venv like that imports pandas and the rest from there."""
    if sys.prefix == sys.base_prefix:
        return []
    try:
        config = Path(sys.prefix, "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    included = any(
        key.strip().lower() == "include-system-site-packages" and value.strip().lower() == "true"
        for key, _, value in (line.partition("=") for line in config.splitlines())
    )
    if not included:
        return []
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}
    paths = sysconfig.get_paths(vars=base)
    return [os.path.realpath(paths[k]) for k in ("purelib", "platlib") if paths.get(k) and os.path.isdir(paths[k])]


def _system_binds() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Shared libraries the interpreter links against (read-only) and the /lib symlinks."""
    binds, links = [], []
    for folder in ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libx32", "/usr/share/zoneinfo"):
        if os.path.isdir(folder):
            binds.append((folder, folder))
    for top in ("/lib", "/lib64", "/lib32", "/libx32"):
        if os.path.islink(top):
            links.append((os.readlink(top), top))
        elif os.path.isdir(top):
            binds.append((top, top))
    return binds, links


THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "BLIS_NUM_THREADS": "1",
    "ARROW_DEFAULT_MEMORY_POOL": "system",
    "JE_ARROW_MALLOC_CONF": "background_thread:false",
    "MPLBACKEND": "Agg",
}


def sandbox_env(home: str) -> dict[str, str]:
    """The whole environment of the sandbox: no VERITY_*, OPENAI_* or any other host variable."""
    return {
        "PATH": "/nonexistent",
        "HOME": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "MPLCONFIGDIR": f"{home}/.matplotlib",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "PYTHONIOENCODING": "utf-8",
        **THREAD_ENV,
    }


@dataclass
class LaunchSpec:
    """One workspace's sandbox: its data (mounted read-only), the host folder where the outputs of
    past calls are kept (never mounted: the sandbox writes only to its own in-memory /scratch and
    /tmp, `scratch_mb` each) and the isolation mode."""

    workspace_id: str
    data_root: Path
    scratch_root: Path
    mode: str = "auto"
    scratch_mb: int = 256
    # In a user namespace (how an unprivileged host runs it; None: when the host is not root). There
    # one uid is all there is, so each call gets its own pid namespace instead of its own user.
    user_namespace: bool | None = None

    def key(self) -> tuple:
        return (
            self.workspace_id,
            str(self.data_root),
            str(self.scratch_root),
            self.mode,
            self.scratch_mb,
            self.in_user_namespace,
        )

    @property
    def in_user_namespace(self) -> bool:
        return os.geteuid() != 0 if self.user_namespace is None else self.user_namespace


def build_command(spec: LaunchSpec, isolation: Isolation, fd: int) -> tuple[list[str], dict[str, str], dict]:
    """The command line, environment and worker spec that start one warm parent."""
    executable, python_dirs, site = _python_paths()
    root = not spec.in_user_namespace  # privileged: two users per workspace; else a pid namespace per call
    worker: dict[str, Any] = {
        "fd": fd,
        "seccomp": isolation.kind in ("bwrap", "unshare"),
        "pidns": isolation.kind in ("bwrap", "unshare"),
    }
    if isolation.kind == "unsafe":
        live = spec.scratch_root / "live"  # no isolation: the calls write to a host folder
        worker["scratch"] = str(live)
        package_root = str(PACKAGE_DIR.parent)
        env = sandbox_env(str(live))
        return _python_command(executable, [package_root], site, worker), env, worker
    worker["scratch"] = INSIDE_SCRATCH
    binary = isolation.binary
    if binary is None:  # probe() gives every bwrap or unshare isolation that can run its binary
        raise SandboxUnavailable(isolation.reason or f"no {isolation.kind} binary to start the sandbox with")
    if root:  # the parent and each call's code run as two different unprivileged users
        worker["uid"] = worker["gid"] = sandbox_uid(spec.workspace_id)
        worker["call_uid"] = worker["call_gid"] = call_uid(spec.workspace_id)
    else:  # one uid: each call in a pid namespace of its own, where the parent does not exist
        worker["call_pidns"] = True
    env = sandbox_env(INSIDE_SCRATCH)
    size = str(spec.scratch_mb * 1024 * 1024)
    system, links = _system_binds()
    read_only = (
        system
        + [(d, d) for d in python_dirs]
        + [(str(PACKAGE_DIR), f"{INSIDE_PACKAGE_ROOT}/sandbox"), (str(spec.data_root), INSIDE_DATA)]
    )
    if isolation.kind == "bwrap":
        command = [
            binary,
            "--die-with-parent",
            "--new-session",
            "--unshare-net",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
        ]
        if root:  # privileged bwrap; the worker drops to its own users before importing anything
            # (CAP_CHOWN to make the scratch folders, CAP_SETPCAP to empty the bounding set; the
            # worker keeps only CAP_SETUID, CAP_SETGID and CAP_KILL: sandbox.caps)
            caps = ("CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_CHOWN", "CAP_SETPCAP")
            command += ["--cap-drop", "ALL"] + [arg for cap in caps for arg in ("--cap-add", cap)]
        else:  # CAP_SYS_ADMIN of the sandbox's own user namespace, for the calls' pid namespaces
            command += [
                "--unshare-user",
                "--uid",
                "65534",
                "--gid",
                "65534",
                "--disable-userns",
                "--cap-drop",
                "ALL",
                "--cap-add",
                "CAP_SYS_ADMIN",
            ]
        # /tmp first: binds of an interpreter or virtualenv that lives under /tmp go on top of it.
        # /scratch and /tmp are size-limited file systems in memory: a call cannot fill a disk.
        command += ["--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
        made: set[str] = {"/tmp"}
        for _source, dest in read_only:
            command += _parents(dest, made)
        for source, dest in read_only:
            command += ["--ro-bind", source, dest]
        for target, link in links:
            command += ["--symlink", target, link]
        command += [
            "--perms",
            "0755",
            "--size",
            size,
            "--tmpfs",
            INSIDE_SCRATCH,
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--remount-ro",
            "/",
            "--chdir",
            "/",
            "--clearenv",
        ]
        for key, value in env.items():
            command += ["--setenv", key, value]
        command += _python_command(executable, [INSIDE_PACKAGE_ROOT], site, worker)
        return command, env, worker
    # unshare: namespaces from util-linux, the filesystem view built by sandbox.nsroot. The empty
    # folder the new root is mounted on is removed by the host once the sandbox is up.
    new_root = tempfile.mkdtemp(prefix="verity-nsroot-")
    os.chmod(new_root, 0o755)
    worker["nsroot"] = {
        "root": new_root,
        "chdir": "/",
        "tmpfs": [["/tmp", spec.scratch_mb, "1777"], [INSIDE_SCRATCH, spec.scratch_mb, "0755"]],
        "binds": [[s, d, True] for s, d in read_only],
        "symlinks": [[t, link] for t, link in links],
    }
    command = [binary, "--net", "--pid", "--mount", "--ipc", "--uts", "--fork", "--kill-child"]
    if not root:
        command += ["--user", "--map-root-user"]
    command += _python_command(executable, [str(PACKAGE_DIR.parent), INSIDE_PACKAGE_ROOT], site, worker)
    return command, env, worker


def _parents(dest: str, made: set[str]) -> list[str]:
    """bwrap copies the mode of the host's parent folders (/root is 0700): create them 0755."""
    args = []
    parts = Path(dest).parent.parts[1:]
    current = ""
    for part in parts:
        current += "/" + part
        if current not in made:
            made.add(current)
            args += ["--perms", "0755", "--dir", current]
    return args


def _python_command(executable: str, package_roots: list[str], site: list[str], worker: dict) -> list[str]:
    # -I: no user site, no PYTHON* variables; -S: no .pth files (e.g. editable installs of the app);
    # the package roots and site-packages are put on the path explicitly. In unshare mode the
    # package is imported from its host path before the new root exists, from /opt/verity after.
    boot = (
        f"import sys; sys.path[:0] = {package_roots!r}; sys.path += {site!r}; "
        "from sandbox import worker; worker.main(sys.argv[1])"
    )
    return [executable, "-I", "-S", "-B", "-c", boot, json.dumps(worker)]
