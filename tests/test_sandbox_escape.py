"""The escape suite: every attempt is blocked or harmless, for a stated reason, and the next call
still works. Every test runs under both isolations, bubblewrap and the `unshare` fallback (a mode
that is not available here is skipped, with its reason)."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
import uuid
from pathlib import Path

import pytest

from sandbox import detect_isolation, get_pool
from sandbox.launch import _python_paths
from tests.conftest import IN_CI
from tests.test_sandbox import MODE, SALES, make_env

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module", autouse=True)
def close_sandboxes_afterwards():
    yield
    get_pool().close()  # the warm parents are not left running for the rest of the test session


@pytest.fixture(scope="module", params=["bwrap", "unshare"])
def mode(request):
    return require_mode(request.param)


def require_mode(mode: str) -> str:
    """The isolation mode, or a skip when it cannot run here (in CI a failure: both must run)."""
    found = detect_isolation(mode)
    if not found.available:
        if IN_CI:
            pytest.fail(f"CI=true, but the {mode} sandbox cannot run here: {found.reason}")
        pytest.skip(f"{mode} is not available here: {found.reason}")
    return mode


@pytest.fixture
def env(tmp_path_factory, mode):
    # the suite's own environment for `auto` is reused when `auto` is this mode (one sandbox less)
    return make_env(tmp_path_factory, MODE if detect_isolation(MODE).kind == mode else mode)


def probe(env, code: str, **kwargs) -> dict:
    """Run code that prints one JSON line of findings; return the findings."""
    result = env.run(code, **kwargs)
    assert result.ok, result.error
    line = [ln for ln in result.text.splitlines() if ln.startswith("{")][-1]
    return json.loads(line)


def _uid_of(pid: str) -> int | None:
    """The real uid (from status: /proc/<pid> itself belongs to root when a process is not dumpable)."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            return next(int(line.split()[1]) for line in handle if line.startswith("Uid:"))
    except (OSError, StopIteration, ValueError):
        return None


def _host_pids_of(uid: int) -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and _uid_of(p) == uid]


def _ppid(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def still_works(env) -> None:
    result = env.run("print('healthy', sales.shape, sales.revenue.sum())")
    assert result.ok, result.error
    assert f"healthy (100, 3) {SALES.revenue.sum()}" in result.text


TRY = """
import json, os, errno
def attempt(fn):
    try:
        value = fn()
        return "ALLOWED: " + repr(value)[:80]
    except BaseException as e:
        return f"{type(e).__name__}:{errno.errorcode.get(getattr(e, 'errno', None) or 0, '')}"
"""


# ----------------------------------------------------------------------------- reading
def test_host_secrets_are_not_in_the_filesystem_view(env):
    found = probe(
        env,
        TRY
        + f"""
print(json.dumps({{
    "shadow": attempt(lambda: open("/etc/shadow").read()),
    "etc": os.path.exists("/etc"),
    "root_home": sorted(os.listdir("/root")) if os.path.isdir("/root") else None,
    "database": attempt(lambda: open({str(env.db_path)!r}, "rb").read()),
    "data_dir": os.path.exists({str(env.data_dir)!r}),
    "other_workspace": attempt(lambda: open({str(env.other_secret)!r}).read()),
    "data": sorted(os.listdir("/data")),
    "top": sorted(os.listdir("/")),
}}))""",
    )
    # Reason: none of these files is mounted into the sandbox at all.
    assert found["shadow"] == "FileNotFoundError:ENOENT" and found["etc"] is False
    assert found["database"] == "FileNotFoundError:ENOENT" and found["data_dir"] is False
    assert found["other_workspace"] == "FileNotFoundError:ENOENT"
    assert found["data"] == ["d1"]  # only this workspace's dataset folder
    # The interpreter's own folders are mounted wherever it lives (a venv under /srv, /home, /root ...):
    # their top-level folder shows, holding that path only.
    _, python_dirs, _ = _python_paths()
    interpreter_tops = {Path(d).parts[1] for d in python_dirs if len(Path(d).parts) > 1}
    assert (
        set(found["top"])
        <= {
            "data",
            "scratch",
            "tmp",
            "proc",
            "dev",
            "usr",
            "lib",
            "lib64",
            "lib32",
            "libx32",
            "opt",
            "root",
            "bin",
            "home",
        }
        | interpreter_tops
    )
    if found["root_home"] is not None:  # the interpreter may live under /root: nothing else of it
        assert found["root_home"] == [".pyenv"]
    still_works(env)


def test_the_environment_secrets_do_not_reach_the_sandbox(env, monkeypatch):
    monkeypatch.setenv("VERITY_LLM_API_KEY", "sk-fake-verity-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-openai-secret")
    get_pool().close(env.ws_a)  # the next parent starts while the secrets are in the host environment
    if os.geteuid() == 0:  # closing a sandbox leaves no process of its user behind
        from sandbox.launch import sandbox_uid

        for _ in range(100):  # the sandbox's processes die with bwrap (PR_SET_PDEATHSIG)
            left = [p for p in os.listdir("/proc") if p.isdigit() and _uid_of(p) == sandbox_uid(env.ws_a)]
            if not left:
                break
            time.sleep(0.05)
        assert left == []
    found = probe(
        env,
        """
import os, json, glob
leaks = []
for path in glob.glob("/proc/*/environ"):
    try:
        data = open(path, "rb").read()
    except OSError:
        continue
    if b"sk-fake" in data:
        leaks.append(path)
print(json.dumps({"keys": sorted(k for k in os.environ if k.startswith(("VERITY", "OPENAI"))),
                  "leaks": leaks, "path": os.environ.get("PATH")}))""",
    )
    # Reason: the sandbox starts with a clean environment (bwrap --clearenv / env={...}).
    assert found == {"keys": [], "leaks": [], "path": "/nonexistent"}
    still_works(env)


# ----------------------------------------------------------------------------- writing
def test_nothing_outside_scratch_can_be_written_and_the_data_is_read_only(env):
    before = hashlib.sha256(env.sales_path.read_bytes()).hexdigest()
    working = "/data/d1/working_v1.parquet"
    found = probe(
        env,
        TRY
        + f"""
print(json.dumps({{
    "overwrite": attempt(lambda: open({working!r}, "r+b").write(b"x")),
    "truncate": attempt(lambda: open({working!r}, "wb")),
    "delete": attempt(lambda: os.remove({working!r})),
    "chmod": attempt(lambda: os.chmod({working!r}, 0o777)),
    "new_data_file": attempt(lambda: open("/data/d1/evil.parquet", "wb")),
    "usr": attempt(lambda: open("/usr/lib/evil", "w")),
    "package": attempt(lambda: open("/opt/verity/sandbox/worker.py", "a")),
    "root_fs": attempt(lambda: open("/evil", "w")),
    "host_path": attempt(lambda: open({str(env.data_dir / "evil")!r}, "w")),
    "scratch": attempt(lambda: open("ok.txt", "w").write("fine")),
    "mounts": {{line.split()[4]: line.split()[5].split(",") for line in open("/proc/self/mountinfo")}},
}}))""",
    )
    # Reason: the data, the interpreter and the root are read-only mounts (EROFS) whose files the
    # sandbox user does not own either (EACCES/EPERM); host paths are simply not mounted.
    for key in ("overwrite", "truncate", "delete", "chmod", "new_data_file", "usr", "package", "root_fs"):
        assert found[key] in ("OSError:EROFS", "PermissionError:EACCES", "PermissionError:EPERM"), (key, found)
    mounts = found["mounts"]
    for path in ("/data", "/usr/lib", "/"):
        assert "ro" in mounts[path], (path, mounts[path])
    assert "rw" in mounts["/scratch"] and "rw" in mounts["/tmp"]
    # set-uid helpers under /usr/lib give nothing: every mount is nosuid (and no_new_privs is set)
    assert all(
        "nosuid" in options for path, options in mounts.items() if path.startswith(("/usr", "/data", "/scratch"))
    )
    assert found["host_path"] in ("FileNotFoundError:ENOENT", "OSError:EROFS")
    assert found["scratch"] == "ALLOWED: 4"
    assert hashlib.sha256(env.sales_path.read_bytes()).hexdigest() == before
    assert not (env.data_dir / "evil").exists()
    still_works(env)


# ----------------------------------------------------------------------------- network
def test_no_socket_can_be_opened_loopback_included(env):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    port = listener.getsockname()[1]
    abstract = f"\0verity-test-{uuid.uuid4().hex}"
    unix_listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix_listener.bind(abstract)
    unix_listener.listen(5)
    try:
        found = probe(
            env,
            TRY
            + f"""
import socket
def tcp(family=socket.AF_INET, host="127.0.0.1"):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect((host, {port}))
def unix():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect({abstract!r})
print(json.dumps({{
    "tcp_loopback": attempt(tcp),
    "tcp6": attempt(lambda: tcp(socket.AF_INET6, "::1")),
    "udp": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)),
    "netlink": attempt(lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)),
    "packet": attempt(lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW)),
    "dns": attempt(lambda: socket.getaddrinfo("example.com", 80)),
    "unix_abstract": attempt(unix),
    "interfaces": sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else [],
}}))""",
        )
        accepted = []
        for sock in (listener, unix_listener):  # a connection would wait in the backlog
            sock.setblocking(False)
            try:
                accepted.append(sock.accept())
            except BlockingIOError:
                pass
    finally:
        listener.close()
        unix_listener.close()
    # Reason: seccomp denies every socket family but AF_UNIX (EACCES at socket()), and the
    # sandbox has its own network namespace, so even AF_UNIX abstract names on the host are absent.
    for key in ("tcp_loopback", "tcp6", "udp", "netlink", "packet"):
        assert found[key] == "PermissionError:EACCES", (key, found)
    assert found["dns"].startswith("gaierror") or found["dns"].startswith("PermissionError")
    assert found["unix_abstract"] == "ConnectionRefusedError:ECONNREFUSED"
    assert accepted == []
    still_works(env)


# ----------------------------------------------------------------------------- resources
@pytest.mark.slow
def test_a_fork_bomb_hits_the_process_limit(env):
    result = env.run("import os\nwhile True:\n    os.fork()")
    # Reason: RLIMIT_NPROC for the sandbox user (fork fails with EAGAIN); leftovers are killed.
    assert result.error["error"] == "limit_exceeded" and result.error["limit"] == "processes", result.error
    found = probe(env, "import os, json\nprint(json.dumps({'procs': [p for p in os.listdir('/proc') if p.isdigit()]}))")
    assert len(found["procs"]) <= 4  # sandbox init, the zygote, the warm parent, this call
    still_works(env)


@pytest.mark.slow
def test_a_memory_bomb_hits_the_memory_limit(env):
    big = env.run("x = bytearray(8 * 1024 ** 3)")
    growing = env.run("chunks = []\nwhile True:\n    chunks.append(' ' * 10 ** 7)")
    # Reason: RLIMIT_AS (the warm interpreter's size + sandbox_memory_mb): MemoryError.
    for result in (big, growing):
        assert result.error["error"] == "limit_exceeded" and result.error["limit"] == "memory", result.error
    still_works(env)


@pytest.mark.slow
def test_an_infinite_loop_hits_the_cpu_then_the_wall_limit(env):
    # A generous wall limit so that the CPU limit is what stops the loop even on a busy machine.
    spin = env.run(
        "while True:\n    pass", settings=env.settings.model_copy(update={"sandbox_cpu_s": 2, "sandbox_wall_s": 60.0})
    )
    # Reason: RLIMIT_CPU (SIGXCPU after sandbox_cpu_s).
    assert spin.error["error"] == "limit_exceeded" and spin.error["limit"] == "cpu", spin.error
    sleep = env.run("import time\ntime.sleep(600)", settings=env.settings.model_copy(update={"sandbox_wall_s": 2.0}))
    # Reason: the wall-time limit (the parent kills the call; the host would kill the parent).
    assert sleep.error["error"] == "limit_exceeded" and sleep.error["limit"] == "wall", sleep.error
    still_works(env)


def test_huge_output_hits_the_output_limit_and_the_parent_is_recycled(env):
    still_works(env)
    before = get_pool().parents[env.ws_a]
    generation, pid = before.hello["generation"], before.hello["pid"]
    result = env.run("while True:\n    print('x' * 1000)")
    # Reason: RLIMIT_FSIZE on the captured stdout (EFBIG); the head is kept.
    assert result.error["error"] == "limit_exceeded" and result.error["limit"] == "output", result.error
    assert "xxxxxxxx" in result.error["stdout"]
    still_works(env)
    after = get_pool().parents[env.ws_a]
    # the same sandbox, but a fresh parent forked by the zygote
    assert after is before and after.hello["generation"] > generation and after.hello["pid"] != pid


# ----------------------------------------------------------------------------- processes and C
def test_shell_and_subprocess_are_harmless(env):
    found = probe(
        env,
        TRY
        + """
import subprocess, sys
def child_python():
    done = subprocess.run([sys.executable, "-c", "import os; print(os.path.exists('/etc/shadow'), os.getuid())"],
                          capture_output=True, text=True, timeout=20)
    return done.stdout.strip()
print(json.dumps({
    "system": os.system("cat /etc/shadow"),
    "sh": os.path.exists("/bin/sh"),
    "subprocess": attempt(lambda: subprocess.run(["cat", "/etc/shadow"], capture_output=True)),
    "child_python": child_python(),
    "uid": os.getuid(),
    "status": {k: v.strip() for k, v in (l.split(":", 1) for l in open("/proc/self/status"))
               if k in ("CapEff", "CapPrm", "NoNewPrivs", "Seccomp")},
}))""",
    )
    # Reason: no shell or other binaries are mounted (only the interpreter); a child interpreter
    # is inside the same namespaces and limits; no capabilities, no_new_privs and seccomp are set.
    assert found["system"] != 0 and found["sh"] is False
    assert found["subprocess"] == "FileNotFoundError:ENOENT"
    assert found["child_python"].startswith("False ")
    assert found["status"]["CapEff"] == "0000000000000000" and found["status"]["CapPrm"] == "0000000000000000"
    assert found["status"]["NoNewPrivs"] == "1" and found["status"]["Seccomp"] == "2"
    if os.geteuid() == 0:
        assert found["uid"] != 0
    still_works(env)


def test_ctypes_cannot_escape_the_namespaces(env):
    found = probe(
        env,
        TRY
        + """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def call(fn, *args):
    rc = fn(*args)
    return rc, errno.errorcode.get(ctypes.get_errno(), "")
print(json.dumps({
    "unshare_user": call(libc.unshare, 0x10000000),
    "mount": call(libc.mount, b"tmpfs", b"/tmp", b"tmpfs", 0, None),
    "setns": call(libc.setns, 0, 0),
    "ptrace": call(libc.ptrace, 16, 1, 0, 0),
    "setuid0": call(libc.setuid, 0),
}))""",
    )
    # Reason: seccomp denies unshare/mount/setns/ptrace (EPERM); no capability allows setuid(0).
    for key in ("unshare_user", "mount", "setns", "ptrace", "setuid0"):
        assert found[key] == [-1, "EPERM"], (key, found)
    crash = env.run("import ctypes\nctypes.string_at(0)")
    # Reason: a crash only kills this call's child; the parent is replaced and the next call works.
    assert crash.error["error"] == "python_error" and "SIGSEGV" in crash.error["message"], crash.error
    still_works(env)


def test_a_call_cannot_reach_the_parent_or_the_host_channel(env):
    found = probe(
        env,
        TRY
        + """
import os
fds = sorted(int(f) for f in os.listdir("/proc/self/fd"))
parent = os.getppid()
print(json.dumps({
    "fds": fds,
    "parent_mem": attempt(lambda: open(f"/proc/{parent}/mem", "rb")),
    "kill_parent": attempt(lambda: os.kill(parent, 0)),
}))""",
    )
    # Reason: the child closes the socketpair to the host (only stdio and its result pipe stay
    # open) and the parent is not dumpable, so /proc/<parent>/mem is out of reach.
    assert len(found["fds"]) <= 5, found
    assert found["parent_mem"] == "PermissionError:EACCES"
    still_works(env)
