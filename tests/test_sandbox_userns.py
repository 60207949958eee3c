"""The unprivileged layout (a non-root server, e.g. the Docker image): the sandbox runs in a user
namespace with one uid for all, so a call cannot be kept from the parent by a uid. Each call gets
a pid namespace of its own instead, in which the parent, the zygote and init do not exist. The
same attacks as tests/test_sandbox_escape.py, against that layout (forced here even as root,
`LaunchSpec.user_namespace`), under bubblewrap and unshare."""

from __future__ import annotations

import json

import pytest

from sandbox import LaunchSpec, Limits, SandboxPool
from tests.test_sandbox_escape import require_mode

pytestmark = pytest.mark.timeout(240)

ATTACK = """
import json, os, signal, subprocess, sys
def attempt(fn):
    try:
        return "ALLOWED: " + repr(fn())
    except OSError as exc:
        return type(exc).__name__
me = os.getpid()
others = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
mine = int(os.readlink("/proc/self"))  # this call as the sandbox sees it
def pidfd_kill(pid):
    fd = os.open(f"/proc/{pid}", os.O_RDONLY)
    signal.pidfd_send_signal(fd, signal.SIGKILL)
# (before anything else runs in this namespace: there, any pid but 1, which is this call, is free)
found = {"me": me, "ppid": os.getppid(),
         "kill": {str(p): attempt(lambda p=p: os.kill(p, signal.SIGKILL)) for p in others if p not in (1, mine)},
         "pidfd": {str(p): attempt(lambda p=p: pidfd_kill(p)) for p in others if p != mine},
         "everyone": attempt(lambda: os.kill(-1, signal.SIGKILL)),
         "status": {k: v.strip() for k, v in (line.split(":", 1) for line in open("/proc/self/status"))
                    if k in ("CapEff", "CapPrm", "CapAmb", "NoNewPrivs", "Seccomp")}}
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
print(json.dumps(found))
"""


@pytest.fixture(scope="module", params=["bwrap", "unshare"])
def sandbox(request, tmp_path_factory):
    mode = require_mode(request.param)
    root = tmp_path_factory.mktemp(f"userns-{mode}")
    pool = SandboxPool()
    spec = LaunchSpec(f"wsuserns{mode}", root / "files", root / "scratch", mode=mode, user_namespace=True)
    yield pool, spec
    pool.close()


def run(sandbox, code: str, **limits):
    pool, spec = sandbox
    return pool.run(spec, code, {}, Limits(wall_s=60.0, **limits))


def test_a_call_cannot_reach_its_parent_and_what_it_leaves_is_stopped(sandbox):
    pool, spec = sandbox
    assert run(sandbox, "print('warm')").ok
    before = dict(pool.parents[spec.workspace_id].hello)
    outcome = run(sandbox, ATTACK)
    assert outcome.ok, outcome.error
    found = json.loads(outcome.stdout["text"].strip().splitlines()[-1])
    # Reason: the call is init of its own pid namespace: its parent is outside (ppid 0), no pid the
    # sandbox's /proc shows names a process it can signal (ESRCH), and a pidfd of one is refused
    # (EINVAL: not in the caller's namespace); kill(-1) reaches only its own namespace.
    assert found["me"] == 1 and found["ppid"] == 0
    assert set(found["kill"].values()) == {"ProcessLookupError"}, found
    assert set(found["pidfd"].values()) == {"OSError"}, found
    assert found["everyone"] in ("ALLOWED: None", "ProcessLookupError"), found
    # no capability left in the sandbox's user namespace, and the filter is on in the call
    assert found["status"] == {
        "CapEff": "0000000000000000",
        "CapPrm": "0000000000000000",
        "CapAmb": "0000000000000000",
        "NoNewPrivs": "1",
        "Seccomp": "2",
    }
    # the background process was counted, then stopped with the call's namespace
    assert outcome.stopped_processes == 1
    after = pool.parents[spec.workspace_id].hello
    assert (after["pid"], after["generation"]) == (before["pid"], before["generation"])
    check = run(sandbox, "import os\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))")
    pids = json.loads(check.stdout["text"])
    assert len(pids) <= 5  # init, zygote, parent, this call (and its outer half): the sleeper is gone


def test_limits_and_crashes_read_the_same_in_a_call_namespace(sandbox):
    cpu = run(sandbox, "while True:\n    pass", cpu_s=1)
    # Reason: init of a pid namespace ignores SIGXCPU; RLIMIT_CPU's hard limit (SIGKILL) stops it
    assert cpu.error["error"] == "limit_exceeded" and cpu.error["limit"] == "cpu", cpu.error
    crash = run(sandbox, "import ctypes\nctypes.string_at(0)")
    assert crash.error["error"] == "python_error" and "SIGSEGV" in crash.error["message"], crash.error
    exited = run(sandbox, "import os\nos._exit(3)")
    assert "status 3" in exited.error["message"], exited.error
    ok = run(sandbox, "print(sum(range(10)))")
    assert ok.ok and ok.stdout["text"] == "45\n"


def test_a_swapped_call_folder_is_not_followed(sandbox, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "bait.png").write_bytes(b"NOT A FIGURE")
    code = (
        f"import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nhere = os.getcwd()\n"
        f"plt.plot([1, 2]); save_figure(name='bait')\nos.symlink({str(victim)!r}, '/scratch/calls/evil')\n"
        "assert libc.renameat2(-100, here.encode(), -100, b'/scratch/calls/evil', 2) == 0\nresult = 'swapped'"
    )
    outcome = run(sandbox, code)
    assert outcome.ok and outcome.result == "swapped" and outcome.figures == [], outcome
    assert [p.name for p in victim.iterdir()] == ["bait.png"] and (victim / "bait.png").read_bytes() == b"NOT A FIGURE"
    assert run(sandbox, "import os\nprint(len(os.listdir('/scratch/calls')))").stdout["text"] == "1\n"
