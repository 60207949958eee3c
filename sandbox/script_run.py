"""One whole Python script in the sandbox: how the server runs a report's analysis.py ("Check every
number", `verity analyze`), which re-runs model-written run_python code and so must be held exactly as
run_python is.

The same isolation as a warm parent (`launch.build_command`, bubblewrap or the `unshare` fallback with
`nsroot`): no network; own pid, mount, ipc and uts namespaces; the system libraries, the interpreter, its
site-packages and Verity's packages read-only; the data files read-only at their own paths and nothing
else of the host; one private writable folder at /scratch (the script, its figures): the host's
`scratch` itself, or, with `scratch_mb`, a size-limited file system in memory the host folder is copied
into and that the host reads afterwards through a descriptor sent to it; /tmp a small tmpfs; a clean environment. Inside, `main` (started as
`python -I -S -c ...`) builds the unshare filesystem view when asked, becomes an unprivileged user
(root host) or drops every capability (user namespace), installs the seccomp filter, sets the address
space and CPU limits, and starts the script in a child, whose exit it passes on (128 + signal when a
signal ended it, as a pid-1 process cannot be killed by its own signal).

Standard library only; no web or agent imports.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox.launch import INSIDE_PACKAGE_ROOT, INSIDE_SCRATCH, _parents, _python_paths, _system_binds, sandbox_env
from sandbox.procs import reap_until

if TYPE_CHECKING:  # annotations only
    from sandbox.host import Isolation

SCRIPT_UID = 199_999  # the user a script runs as on a root host (below the workspaces' users, `launch`)
INSIDE_INPUT = "/opt/verity-input"  # the host's script folder, read-only, when /scratch is in memory


@dataclass
class ScriptJob:
    """What to run: `script` (a file in `scratch`, run there), its arguments, the host folders of the
    Python packages it imports (each mounted read-only at /opt/verity/<name>), the data files it reads
    (read-only, at their own paths) and the limits (0: none)."""

    scratch: Path
    script: str
    args: list[str] = field(default_factory=list)
    packages: list[Path] = field(default_factory=list)
    data_files: list[Path] = field(default_factory=list)
    memory_mb: int = 0
    cpu_s: int = 0
    tmp_mb: int = 256
    environment: dict[str, str] = field(default_factory=dict)
    # > 0: /scratch is a tmpfs of this size (the host folder `scratch` is only read, at INSIDE_INPUT,
    # and copied in), and `scratch_socket` (a descriptor the command inherits) receives a descriptor
    # of that /scratch, through which the host reads what the script left once it has ended: a
    # script cannot fill the host's disk, and the host never opens the folder by a path.
    scratch_mb: int = 0
    scratch_socket: int | None = None


def prepare_scratch(scratch: Path) -> None:
    """The script's folder belongs to the user it runs as (on a root host), and to no one else."""
    os.chmod(scratch, 0o700)
    if os.geteuid() == 0:
        for folder, _dirs, files in os.walk(scratch):
            for name in [folder, *(os.path.join(folder, f) for f in files)]:
                os.lchown(name, SCRIPT_UID, SCRIPT_UID)


def script_command(job: ScriptJob, isolation: Isolation) -> tuple[list[str], dict[str, str], str | None]:
    """The command line and environment that run `job` under `isolation` (bwrap or unshare), and the
    empty folder the unshare root was mounted on (the host removes it afterwards; None for bwrap)."""
    if isolation.kind not in ("bwrap", "unshare") or not isolation.binary:
        raise ValueError(f"no sandbox to run a script in: {isolation.kind}")
    executable, python_dirs, site = _python_paths()
    root = os.geteuid() == 0
    system, links = _system_binds()
    packages = [(str(p.resolve()), f"{INSIDE_PACKAGE_ROOT}/{p.name}") for p in job.packages]
    data = [(str(p.resolve()), str(p.resolve())) for p in job.data_files if p.is_file()]
    read_only = system + [(d, d) for d in python_dirs] + packages + data
    in_memory = job.scratch_mb > 0
    if in_memory:
        read_only.append((str(job.scratch.resolve()), INSIDE_INPUT))
    env = {
        **sandbox_env(INSIDE_SCRATCH),
        "MPLCONFIGDIR": f"{INSIDE_SCRATCH}/.matplotlib",
        "PYTHONPATH": os.pathsep.join([INSIDE_PACKAGE_ROOT, *site]),
        "PYTHONNOUSERSITE": "1",
        **job.environment,
    }
    inner = {
        "argv": [executable, "-S", "-B", f"{INSIDE_SCRATCH}/{job.script}", *job.args],
        "env": env,
        "cwd": INSIDE_SCRATCH,
        "memory_mb": job.memory_mb,
        "cpu_s": job.cpu_s,
        "uid": SCRIPT_UID if root else None,
        "copy_in": INSIDE_INPUT if in_memory else None,
        "scratch_socket": job.scratch_socket if in_memory else None,
    }
    boot = [
        executable,
        "-I",
        "-S",
        "-B",
        "-c",
        "import sys; sys.path[:0] = %r; from sandbox import script_run; script_run.main(sys.argv[1])",
    ]
    if isolation.kind == "bwrap":
        command = [
            isolation.binary,
            "--die-with-parent",
            "--new-session",
            "--unshare-net",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
        ]
        if root:  # enough to become SCRIPT_UID, then nothing (a uid change clears the capabilities)
            command += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:
            command += ["--unshare-user", "--uid", "65534", "--gid", "65534", "--disable-userns", "--cap-drop", "ALL"]
        command += ["--perms", "1777", "--size", str(job.tmp_mb * 1024 * 1024), "--tmpfs", "/tmp"]
        made: set[str] = {"/tmp"}
        for _source, dest in read_only + [("", INSIDE_SCRATCH)]:
            command += _parents(dest, made)
        for source, dest in read_only:
            command += ["--ro-bind", source, dest]
        for target, link in links:
            command += ["--symlink", target, link]
        if in_memory:  # a size-limited file system in memory that the script's user may write to
            command += ["--perms", "1777", "--size", str(job.scratch_mb * 1024 * 1024), "--tmpfs", INSIDE_SCRATCH]
        else:
            command += ["--bind", str(job.scratch), INSIDE_SCRATCH]
        command += [
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--remount-ro",
            "/",
            "--chdir",
            "/",
            "--clearenv",
        ]  # the script's user enters /scratch
        boot[-1] %= ([INSIDE_PACKAGE_ROOT],)
        return command + boot + [json.dumps(inner)], {}, None
    new_root = tempfile.mkdtemp(prefix="verity-nsroot-")
    os.chmod(new_root, 0o755)
    inner["nsroot"] = {
        "root": new_root,
        "chdir": "/",
        "tmpfs": [["/tmp", job.tmp_mb, "1777"]] + ([[INSIDE_SCRATCH, job.scratch_mb, "1777"]] if in_memory else []),
        "binds": [[s, d, True] for s, d in read_only]
        + ([] if in_memory else [[str(job.scratch), INSIDE_SCRATCH, False]]),
        "symlinks": [[t, link] for t, link in links],
    }
    command = [isolation.binary, "--net", "--pid", "--mount", "--ipc", "--uts", "--fork", "--kill-child"]
    if not root:
        command += ["--user", "--map-root-user"]
    # the sandbox package is imported from its host path, before the new root exists
    boot[-1] %= ([str(Path(__file__).resolve().parent.parent)],)
    return command + boot + [json.dumps(inner)], {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, new_root


# ----------------------------------------------------------------------------- inside the sandbox
def main(spec_json: str) -> None:
    spec = json.loads(spec_json)
    from sandbox import caps, seccomp

    if spec.get("nsroot"):
        from sandbox import nsroot

        nsroot.enter(spec["nsroot"])
    if os.geteuid() == 0 and spec.get("uid") is not None:  # a root host: become the script's user
        os.setgroups([])
        os.setresgid(spec["uid"], spec["uid"], spec["uid"])
        os.setresuid(spec["uid"], spec["uid"], spec["uid"])
        if os.getuid() == 0 or os.geteuid() == 0:
            raise SystemExit("could not drop privileges")
    else:  # one uid in a user namespace: keep no capability, not even across exec
        caps.drop_all()
    if spec.get("copy_in"):  # as the script's user: its files are its own, in the size-limited /scratch
        _copy_in(spec["copy_in"], spec["cwd"])
    if spec.get("scratch_socket") is not None:
        _send_scratch(int(spec["scratch_socket"]), spec["cwd"])
    status = seccomp.install() if seccomp.supported() else "unsupported"
    if status not in ("on", "unsupported"):
        raise SystemExit(f"the seccomp filter could not be installed: {status}")
    os.umask(0o077)
    pid = os.fork()
    if pid == 0:
        try:
            _limits(int(spec.get("memory_mb") or 0), int(spec.get("cpu_s") or 0))
            os.chdir(spec["cwd"])
            os.execve(spec["argv"][0], spec["argv"], spec["env"])
        finally:
            os._exit(127)
    sys.exit(_exit_code(pid))


def _copy_in(source: str, target: str) -> None:
    """The host's script folder (the script, the font cache) copied into the in-memory /scratch."""
    import shutil

    for name in os.listdir(source):
        path = os.path.join(source, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.copytree(path, os.path.join(target, name), symlinks=True)
        elif os.path.isfile(path) and not os.path.islink(path):
            shutil.copyfile(path, os.path.join(target, name))


def _send_scratch(channel: int, folder: str) -> None:
    """A descriptor of /scratch to the host (SCM_RIGHTS), then the channel closed: nothing started
    after this, the script included, holds it. The host reads /scratch through it once the sandbox
    has ended (an open descriptor keeps the file system)."""
    import socket

    scratch = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        with socket.socket(fileno=channel) as sock:
            socket.send_fds(sock, [b"s"], [scratch])
    finally:
        os.close(scratch)


def _limits(memory_mb: int, cpu_s: int) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if memory_mb > 0:
        memory = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    if cpu_s > 0:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 5))


def _exit_code(pid: int) -> int:
    """Reap every process (this may be pid 1) until the script ends; its exit status, or 128 + signal."""
    status = reap_until(pid)
    if status is None:
        return 1
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
