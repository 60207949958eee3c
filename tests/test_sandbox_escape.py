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


def still_works(env) -> None:
    result = env.run("print('healthy', sales.shape, sales.revenue.sum())")
    assert result.ok, result.error
    assert f"healthy (100, 3) {SALES.revenue.sum()}" in result.text


TRY = '''
import json, os, errno
def attempt(fn):
    try:
        value = fn()
        return "ALLOWED: " + repr(value)[:80]
    except BaseException as e:
        return f"{type(e).__name__}:{errno.errorcode.get(getattr(e, 'errno', None) or 0, '')}"
'''


# ----------------------------------------------------------------------------- reading
def test_host_secrets_are_not_in_the_filesystem_view(env):
    found = probe(env, TRY + f'''
print(json.dumps({{
    "shadow": attempt(lambda: open("/etc/shadow").read()),
    "etc": os.path.exists("/etc"),
    "root_home": sorted(os.listdir("/root")) if os.path.isdir("/root") else None,
    "database": attempt(lambda: open({str(env.db_path)!r}, "rb").read()),
    "data_dir": os.path.exists({str(env.data_dir)!r}),
    "other_workspace": attempt(lambda: open({str(env.other_secret)!r}).read()),
    "data": sorted(os.listdir("/data")),
    "top": sorted(os.listdir("/")),
}}))''')
    # Reason: none of these files is mounted into the sandbox at all.
    assert found["shadow"] == "FileNotFoundError:ENOENT" and found["etc"] is False
    assert found["database"] == "FileNotFoundError:ENOENT" and found["data_dir"] is False
    assert found["other_workspace"] == "FileNotFoundError:ENOENT"
    assert found["data"] == ["d1"]  # only this workspace's dataset folder
    assert set(found["top"]) <= {"data", "scratch", "tmp", "proc", "dev", "usr", "lib", "lib64", "lib32", "libx32",
                                 "opt", "root", "bin", "home"}
    if found["root_home"] is not None:  # the interpreter may live under /root: nothing else of it
        assert found["root_home"] == [".pyenv"]
    still_works(env)


def test_the_environment_secrets_do_not_reach_the_sandbox(env, monkeypatch):
    monkeypatch.setenv("VERITY_LLM_API_KEY", "sk-fake-verity-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-openai-secret")
    get_pool().close(env.ws_a)  # the next parent starts while the secrets are in the host environment
    if os.geteuid() == 0:  # closing a sandbox leaves no process of its user behind
        from sandbox.host import sandbox_uid

        for _ in range(100):  # the sandbox's processes die with bwrap (PR_SET_PDEATHSIG)
            left = [p for p in os.listdir("/proc") if p.isdigit() and _uid_of(p) == sandbox_uid(env.ws_a)]
            if not left:
                break
            time.sleep(0.05)
        assert left == []
    found = probe(env, '''
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
                  "leaks": leaks, "path": os.environ.get("PATH")}))''')
    # Reason: the sandbox starts with a clean environment (bwrap --clearenv / env={...}).
    assert found == {"keys": [], "leaks": [], "path": "/nonexistent"}
    still_works(env)


# ----------------------------------------------------------------------------- writing
def test_nothing_outside_scratch_can_be_written_and_the_data_is_read_only(env):
    before = hashlib.sha256(env.sales_path.read_bytes()).hexdigest()
    working = "/data/d1/working_v1.parquet"
    found = probe(env, TRY + f'''
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
}}))''')
    # Reason: the data, the interpreter and the root are read-only mounts (EROFS) whose files the
    # sandbox user does not own either (EACCES/EPERM); host paths are simply not mounted.
    for key in ("overwrite", "truncate", "delete", "chmod", "new_data_file", "usr", "package", "root_fs"):
        assert found[key] in ("OSError:EROFS", "PermissionError:EACCES", "PermissionError:EPERM"), (key, found)
    mounts = found["mounts"]
    for path in ("/data", "/usr/lib", "/"):
        assert "ro" in mounts[path], (path, mounts[path])
    assert "rw" in mounts["/scratch"] and "rw" in mounts["/tmp"]
    # set-uid helpers under /usr/lib give nothing: every mount is nosuid (and no_new_privs is set)
    assert all("nosuid" in options for path, options in mounts.items() if path.startswith(("/usr", "/data", "/scratch")))
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
        found = probe(env, TRY + f'''
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
}}))''')
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
    spin = env.run("while True:\n    pass", settings=env.settings.model_copy(update={"sandbox_cpu_s": 2,
                                                                                   "sandbox_wall_s": 60.0}))
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
    found = probe(env, TRY + '''
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
}))''')
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
    found = probe(env, TRY + '''
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
}))''')
    # Reason: seccomp denies unshare/mount/setns/ptrace (EPERM); no capability allows setuid(0).
    for key in ("unshare_user", "mount", "setns", "ptrace", "setuid0"):
        assert found[key] == [-1, "EPERM"], (key, found)
    crash = env.run("import ctypes\nctypes.string_at(0)")
    # Reason: a crash only kills this call's child; the parent is replaced and the next call works.
    assert crash.error["error"] == "python_error" and "SIGSEGV" in crash.error["message"], crash.error
    still_works(env)


def test_a_call_cannot_reach_the_parent_or_the_host_channel(env):
    found = probe(env, TRY + '''
import os
fds = sorted(int(f) for f in os.listdir("/proc/self/fd"))
parent = os.getppid()
print(json.dumps({
    "fds": fds,
    "parent_mem": attempt(lambda: open(f"/proc/{parent}/mem", "rb")),
    "kill_parent": attempt(lambda: os.kill(parent, 0)),
}))''')
    # Reason: the child closes the socketpair to the host (only stdio and its result pipe stay
    # open) and the parent is not dumpable, so /proc/<parent>/mem is out of reach.
    assert len(found["fds"]) <= 5, found
    assert found["parent_mem"] == "PermissionError:EACCES"
    still_works(env)


# ----------------------------------------------------------------------------- the warm parent
KILL_EVERYTHING = TRY + '''
import signal
me, parent = os.getpid(), os.getppid()
others = sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != me)
def pidfd_kill():
    fd = os.pidfd_open(parent)
    signal.pidfd_send_signal(fd, signal.SIGKILL)
found = {"parent": attempt(lambda: os.kill(parent, signal.SIGKILL)),
         "others": {str(p): attempt(lambda p=p: os.kill(p, signal.SIGKILL)) for p in others},
         # (a group outside the pid namespace reads as 0, and killpg(0) would be this call's own)
         "group": attempt(lambda: os.getpgid(parent) and os.killpg(os.getpgid(parent), signal.SIGKILL)),
         "pidfd": attempt(pidfd_kill),
         "everyone": attempt(lambda: os.kill(-1, signal.SIGKILL))}
print(json.dumps(found))
'''


@pytest.mark.skipif(os.geteuid() != 0, reason="the parent and the calls run as two users only when the host is root")
def test_a_call_cannot_signal_its_parent_or_any_sandbox_process(env):
    still_works(env)
    before = dict(get_pool().parents[env.ws_a].hello)
    found = probe(env, KILL_EVERYTHING)
    # Reason: the call runs as the workspace's call user; the parent, the zygote and the sandbox's
    # init belong to other users, and the kernel refuses signals across users (no CAP_KILL left).
    assert found["parent"] == "PermissionError:EPERM", found
    assert set(found["others"].values()) == {"PermissionError:EPERM"}, found
    assert found["pidfd"] == "PermissionError:EPERM", found
    # kill(-1) (and killpg of group 1, which is the same call) reports success when every target
    # refused: what counts is that the parent, the zygote and init are all still there.
    assert found["group"] in ("ALLOWED: None", "ALLOWED: 0", "PermissionError:EPERM"), found
    assert found["everyone"] in ("ALLOWED: None", "ProcessLookupError:ESRCH"), found
    after = get_pool().parents[env.ws_a].hello
    assert (after["pid"], after["generation"]) == (before["pid"], before["generation"])  # the same parent
    still_works(env)


def _host_pids_of(uid: int) -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and _uid_of(p) == uid]


@pytest.mark.skipif(os.geteuid() != 0, reason="finds the parent by its user")
def test_a_parent_that_dies_during_a_call_is_reported_as_a_crash_never_as_output(env):
    """The host matches replies to calls: the new parent's hello is not this call's output, and
    the orphaned call is stopped before the new parent serves."""
    import threading

    from sandbox.host import call_uid, sandbox_uid

    still_works(env)
    outcome: dict = {}
    code = ("import time\nopen('/tmp/started', 'w').close()\ntime.sleep(4)\n"
            "open('/scratch/calls/survived', 'w').close()\nprint('FINISHED')")
    thread = threading.Thread(target=lambda: outcome.update(result=env.run(code)))
    thread.start()
    parent_uid, child_uid = sandbox_uid(env.ws_a), call_uid(env.ws_a)
    for _ in range(200):  # the call's child is running: the parent is the parent user's process above it
        children = _host_pids_of(child_uid)
        if children:
            break
        time.sleep(0.02)
    assert children, "the call did not start"
    parents = {int(Path(f"/proc/{c}/stat").read_text().rsplit(")", 1)[1].split()[1]) for c in children}
    parents = [p for p in parents if _uid_of(str(p)) == parent_uid]
    assert len(parents) == 1
    os.kill(parents[0], 9)  # what a crash of the warm parent looks like (a call cannot do this)
    thread.join(60)
    result = outcome["result"]
    assert not result.ok and result.error["error"] == "sandbox_error", result.error
    assert "stopped while running this code" in result.error["message"] and "FINISHED" not in result.text
    time.sleep(0.5)
    assert _host_pids_of(child_uid) == []  # the orphaned call was stopped by the zygote
    check = probe(env, "import os, json, time\ntime.sleep(0.2)\n"
                       "print(json.dumps({'survived': os.path.exists('/scratch/calls/survived')}))")
    assert check == {"survived": False}
    still_works(env)


def _ppid(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


@pytest.mark.skipif(os.geteuid() != 0, reason="finds the parent by its user")
def test_a_parent_that_died_between_calls_is_replaced_and_the_next_call_runs(env):
    from sandbox.host import sandbox_uid

    still_works(env)
    before = get_pool().parents[env.ws_a].hello["generation"]
    ours = _host_pids_of(sandbox_uid(env.ws_a))
    parents = [p for p in ours if _ppid(p) in ours]  # the zygote's child, also of the parent user
    assert len(parents) == 1
    os.kill(parents[0], 9)
    time.sleep(1.0)  # the zygote starts a new parent, which says hello before any call is sent
    still_works(env)  # that hello is not taken for the answer (or the crash) of this call
    assert get_pool().parents[env.ws_a].hello["generation"] > before


# ----------------------------------------------------------------------------- scratch
SWAP = TRY + '''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
RENAME_EXCHANGE, AT_FDCWD = 2, -100
def exchange(a, b):
    if libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return "swapped"
here = os.getcwd()
plt.plot([1, 2, 3]); save_figure(name="bait")
save_table(datasets["sales"].head(2), "bait")
found = {
    "link_in_scratch": attempt(lambda: os.symlink(VICTIM, "/scratch/evil")),
    "swap_scratch": attempt(lambda: exchange("/scratch/calls", "/scratch/.matplotlib")),
    "rename_scratch": attempt(lambda: os.rename("/scratch/calls", "/scratch/gone")),
    "link_in_calls": attempt(lambda: os.symlink(VICTIM, "/scratch/calls/evil")),
    "swap_call_folder": attempt(lambda: exchange(here, "/scratch/calls/evil")),
    "link_in_tmp": attempt(lambda: os.symlink(VICTIM, "/tmp/evil")),
    "victim_visible": os.path.exists(VICTIM),
}
result = found  # (stdout is read back by its path, which now leads nowhere)
'''


def test_scratch_swapped_for_a_symlink_never_leads_the_host_outside(env, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    for i in range(1000):
        (victim / f"f{i}.txt").write_text("precious")
    (victim / "bait.png").write_bytes(b"NOT A FIGURE")
    for attempt_no in range(8):
        result = env.run(f"VICTIM = {str(victim)!r}\n" + SWAP, call_id=f"swap{attempt_no}")
        assert result.ok, result.error
        found = result.payload["result"]
        # Reason: /scratch itself belongs to root (the call cannot rename or add entries there);
        # the call's own folder can be swapped for a link, but the host opens every folder below
        # the sandbox's root with O_NOFOLLOW and never follows it: the bait is not collected.
        assert found["link_in_scratch"] == "PermissionError:EACCES", found
        assert found["swap_scratch"] == "PermissionError:EACCES" and found["rename_scratch"] == "PermissionError:EACCES"
        assert found["swap_call_folder"] == "ALLOWED: 'swapped'" and found["victim_visible"] is False, found
        assert result.ok and result.figures == [] and result.payload["tables"] == [], result.text
    assert len(list(victim.iterdir())) == 1001 and (victim / "f999.txt").read_text() == "precious"
    assert (victim / "bait.png").read_bytes() == b"NOT A FIGURE"
    clean = probe(env, "import os, json\nprint(json.dumps({'calls': os.listdir('/scratch/calls'), "
                       "'tmp': os.listdir('/tmp')}))")
    assert clean["tmp"] == [] and len(clean["calls"]) == 1  # emptied after each call: only this call's folder
    still_works(env)


# ----------------------------------------------------------------------------- nothing outlives a call
LINGER = '''
import os, subprocess, sys, time
# a session leader with its own process group, and a double-forked daemon
subprocess.Popen([sys.executable, "-c", "import time\\nwhile True:\\n    open('/tmp/alive-1', 'w').close()\\n"
                  "    time.sleep(0.05)"], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            open("/tmp/alive-2", "w").close()
            time.sleep(0.05)
    os._exit(0)
deadline = time.time() + 50
while not all(os.path.exists(f"/tmp/alive-{i}") for i in (1, 2)) and time.time() < deadline:
    time.sleep(0.05)
print("started", sorted(f for f in os.listdir("/tmp") if f.startswith("alive")))
'''


def test_background_processes_are_stopped_and_the_model_is_told(env):
    result = env.run(LINGER, settings=env.settings.model_copy(update={"sandbox_wall_s": 60.0}))
    # Reason: the call runs in the sandbox's pid namespace; when it returns, the parent kills every
    # process there but init, the zygote and itself, whatever process group or session it made.
    assert result.ok, result.error
    assert "started ['alive-1', 'alive-2']" in result.text
    # (2, or 3 when the daemon's short-lived middle process has not quite exited yet)
    assert result.payload["stopped_processes"] in (2, 3)
    assert (f"left {result.payload['stopped_processes']} background processes running; they were stopped when "
            "the call ended") in result.text
    found = probe(env, "import os, json, time\ntime.sleep(0.3)\n"
                       "print(json.dumps({'procs': [p for p in os.listdir('/proc') if p.isdigit()], "
                       "'tmp': os.listdir('/tmp')}))")
    assert len(found["procs"]) <= 4 and found["tmp"] == []  # init, zygote, parent, this call; nothing written
    still_works(env)


def test_a_call_that_exits_while_its_background_process_holds_the_pipe_ends_at_once(env):
    result = env.run("import os, subprocess, sys\n"
                     "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\nos._exit(3)")
    # Reason: the parent watches the child's exit (pidfd), not only the end of the result pipe
    # the background process still holds: the call ends as what it is, not at the wall-time limit.
    assert result.error["error"] == "python_error" and "status 3" in result.error["message"], result.error
    assert "left 1 background process running" in result.error["background_processes"]
    still_works(env)


# ----------------------------------------------------------------------------- disk
def test_filling_the_disk_stops_at_the_writable_space_limit(env):
    settings = env.settings.model_copy(update={"sandbox_scratch_mb": 16})
    host_free = os.statvfs(env.data_dir).f_bavail * os.statvfs(env.data_dir).f_frsize
    fill = env.run("i = 0\nwhile True:\n    open(f'part{i}', 'wb').write(b'x' * (2 * 1024 * 1024))\n    i += 1",
                   settings=settings, workspace_id="wsfill" + env.ws_a[-3:], datasets={})
    # Reason: /scratch is a 16 MB file system in memory (ENOSPC), whatever the number of files.
    assert fill.error["error"] == "limit_exceeded" and fill.error["limit"] == "scratch", fill.error
    tmp = env.run("i = 0\nwhile True:\n    open(f'/tmp/p{i}', 'wb').write(b'x' * (1024 * 1024))\n    i += 1",
                  settings=settings, workspace_id="wsfill" + env.ws_a[-3:], datasets={})
    assert tmp.error["error"] == "limit_exceeded" and tmp.error["limit"] == "scratch", tmp.error
    after = env.run("import os\nprint(sorted(os.listdir('.')), os.listdir('/tmp'), os.listdir('/scratch/calls'))",
                    settings=settings, workspace_id="wsfill" + env.ws_a[-3:], datasets={})
    # both emptied after the call: the next one works, with only its own captured output
    assert "['stderr.txt', 'stdout.txt'] [] ['call_" in after.text, after.text
    # the host's disk did not take the writes (a margin for everything else on this machine)
    assert os.statvfs(env.data_dir).f_bavail * os.statvfs(env.data_dir).f_frsize > host_free - 12 * 1024 * 1024
    get_pool().close("wsfill" + env.ws_a[-3:])


# ----------------------------------------------------------------------------- many workspaces
@pytest.mark.slow
def test_many_workspaces_keep_a_bounded_number_of_warm_sandboxes(env):
    from sandbox.host import sandbox_uid

    settings = env.settings.model_copy(update={"sandbox_max_warm": 2})
    names = [f"wsmany{i}{env.ws_a[-3:]}" for i in range(4)]
    for name in names:
        result = env.run("print('ok')", settings=settings, workspace_id=name, datasets={})
        assert result.ok, result.error
    pool = get_pool()
    # Reason: an LRU cap on warm sandboxes; a new workspace closes the least recently used one.
    assert len(pool.parents) <= 2 and names[-1] in pool.parents and names[0] not in pool.parents
    alive = {name for name in names if _host_pids_of(sandbox_uid(name))}
    assert alive <= set(pool.parents) and names[0] not in alive
    # and a memory budget: above it the least recently used idle sandboxes are closed
    stats = pool.stats()
    assert stats["warm"] == len(pool.parents) and stats["memory_mb"] > 10
    pool.configure(memory_mb=1)
    try:
        pool.enforce_memory()
        assert pool.parents == {} and pool.stats()["memory_mb"] == 0
    finally:
        pool.configure(max_warm=8, memory_mb=4096)
    for _ in range(100):
        if not any(_host_pids_of(sandbox_uid(name)) for name in names):
            break
        time.sleep(0.05)
    assert not any(_host_pids_of(sandbox_uid(name)) for name in names)
    still_works(env)
