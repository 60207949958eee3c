"""The escape suite, continued: the warm parent out of a call's reach (it cannot be signalled, and
its death is reported as such), and nothing a call starts outliving it. Under both isolations,
like tests/test_sandbox_escape.py, whose fixtures these tests share."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sandbox import get_pool
from tests.test_sandbox_escape import (  # noqa: F401
    TRY,
    _host_pids_of,
    _ppid,
    _uid_of,
    close_sandboxes_afterwards,
    env,
    mode,
    probe,
    still_works,
)

pytestmark = pytest.mark.timeout(120)


# ----------------------------------------------------------------------------- the warm parent
KILL_EVERYTHING = (
    TRY
    + """
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
"""
)


@pytest.mark.skipif(os.geteuid() != 0, reason="the parent and the calls run as two users only when the host is root")
def test_a_call_cannot_signal_its_parent_or_any_sandbox_process(env):  # noqa: F811
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


@pytest.mark.skipif(os.geteuid() != 0, reason="finds the parent by its user")
def test_a_parent_that_dies_during_a_call_is_reported_as_a_crash_never_as_output(env):  # noqa: F811
    """The host matches replies to calls: the new parent's hello is not this call's output, and
    the orphaned call is stopped before the new parent serves."""
    import threading

    from sandbox.launch import call_uid, sandbox_uid

    still_works(env)
    outcome: dict = {}
    code = (
        "import time\nopen('/tmp/started', 'w').close()\ntime.sleep(4)\n"
        "open('/scratch/calls/survived', 'w').close()\nprint('FINISHED')"
    )
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
    check = probe(
        env,
        "import os, json, time\ntime.sleep(0.2)\n"
        "print(json.dumps({'survived': os.path.exists('/scratch/calls/survived')}))",
    )
    assert check == {"survived": False}
    still_works(env)


@pytest.mark.skipif(os.geteuid() != 0, reason="finds the parent by its user")
def test_a_parent_that_died_between_calls_is_replaced_and_the_next_call_runs(env):  # noqa: F811
    from sandbox.launch import sandbox_uid

    still_works(env)
    before = get_pool().parents[env.ws_a].hello["generation"]
    ours = _host_pids_of(sandbox_uid(env.ws_a))
    parents = [p for p in ours if _ppid(p) in ours]  # the zygote's child, also of the parent user
    assert len(parents) == 1
    os.kill(parents[0], 9)
    time.sleep(1.0)  # the zygote starts a new parent, which says hello before any call is sent
    still_works(env)  # that hello is not taken for the answer (or the crash) of this call
    assert get_pool().parents[env.ws_a].hello["generation"] > before


# ----------------------------------------------------------------------------- nothing outlives a call
LINGER = """
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
"""


def test_background_processes_are_stopped_and_the_model_is_told(env):  # noqa: F811
    result = env.run(LINGER, settings=env.settings.model_copy(update={"sandbox_wall_s": 60.0}))
    # Reason: the call runs in the sandbox's pid namespace; when it returns, the parent kills every
    # process there but init, the zygote and itself, whatever process group or session it made.
    assert result.ok, result.error
    assert "started ['alive-1', 'alive-2']" in result.text
    # (2, or 3 when the daemon's short-lived middle process has not quite exited yet)
    assert result.payload["stopped_processes"] in (2, 3)
    assert (
        f"left {result.payload['stopped_processes']} background processes running; they were stopped when "
        "the call ended"
    ) in result.text
    found = probe(
        env,
        "import os, json, time\ntime.sleep(0.3)\n"
        "print(json.dumps({'procs': [p for p in os.listdir('/proc') if p.isdigit()], "
        "'tmp': os.listdir('/tmp')}))",
    )
    assert len(found["procs"]) <= 4 and found["tmp"] == []  # init, zygote, parent, this call; nothing written
    still_works(env)


def test_a_call_that_exits_while_its_background_process_holds_the_pipe_ends_at_once(env):  # noqa: F811
    result = env.run(
        "import os, subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\nos._exit(3)"
    )
    # Reason: the parent watches the child's exit (pidfd), not only the end of the result pipe
    # the background process still holds: the call ends as what it is, not at the wall-time limit.
    assert result.error["error"] == "python_error" and "status 3" in result.error["message"], result.error
    # The sleeper ends with the call (its pid namespace, or its process group, is killed); whether it
    # is still there to be counted when the parent looks depends on timing (seen absent under load,
    # in unshare mode): when it is counted, the model is told exactly.
    note = result.error.get("background_processes")
    assert note is None or "left 1 background process running" in note, note
    still_works(env)
