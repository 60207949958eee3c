"""The escape suite, continued: the writable space (a symlink swapped in for a folder leads the
host nowhere, filling it is a clear error) and many workspaces (a bounded number of warm
sandboxes). Under both isolations, like tests/test_sandbox_escape.py, whose fixtures these tests
share."""

from __future__ import annotations

import os
import time

import pytest

from sandbox import get_pool
from tests.test_sandbox_escape import TRY, _host_pids_of, close_sandboxes_afterwards, env, mode, probe, still_works  # noqa: F401

pytestmark = pytest.mark.timeout(120)


# ----------------------------------------------------------------------------- scratch
SWAP = (
    TRY
    + """
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
"""
)


def test_scratch_swapped_for_a_symlink_never_leads_the_host_outside(env, tmp_path):  # noqa: F811
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
    clean = probe(
        env, "import os, json\nprint(json.dumps({'calls': os.listdir('/scratch/calls'), 'tmp': os.listdir('/tmp')}))"
    )
    assert clean["tmp"] == [] and len(clean["calls"]) == 1  # emptied after each call: only this call's folder
    still_works(env)


# ----------------------------------------------------------------------------- disk
def test_filling_the_disk_stops_at_the_writable_space_limit(env):  # noqa: F811
    settings = env.settings.model_copy(update={"sandbox_scratch_mb": 16})
    host_free = os.statvfs(env.data_dir).f_bavail * os.statvfs(env.data_dir).f_frsize
    fill = env.run(
        "i = 0\nwhile True:\n    open(f'part{i}', 'wb').write(b'x' * (2 * 1024 * 1024))\n    i += 1",
        settings=settings,
        workspace_id="wsfill" + env.ws_a[-3:],
        datasets={},
    )
    # Reason: /scratch is a 16 MB file system in memory (ENOSPC), whatever the number of files.
    assert fill.error["error"] == "limit_exceeded" and fill.error["limit"] == "scratch", fill.error
    tmp = env.run(
        "i = 0\nwhile True:\n    open(f'/tmp/p{i}', 'wb').write(b'x' * (1024 * 1024))\n    i += 1",
        settings=settings,
        workspace_id="wsfill" + env.ws_a[-3:],
        datasets={},
    )
    assert tmp.error["error"] == "limit_exceeded" and tmp.error["limit"] == "scratch", tmp.error
    after = env.run(
        "import os\nprint(sorted(os.listdir('.')), os.listdir('/tmp'), os.listdir('/scratch/calls'))",
        settings=settings,
        workspace_id="wsfill" + env.ws_a[-3:],
        datasets={},
    )
    # both emptied after the call: the next one works, with only its own captured output
    assert "['stderr.txt', 'stdout.txt'] [] ['call_" in after.text, after.text
    # the host's disk did not take the writes (a margin for everything else on this machine)
    assert os.statvfs(env.data_dir).f_bavail * os.statvfs(env.data_dir).f_frsize > host_free - 12 * 1024 * 1024
    get_pool().close("wsfill" + env.ws_a[-3:])


# ----------------------------------------------------------------------------- many workspaces
@pytest.mark.slow
@pytest.mark.timeout(600)  # three sandboxes start, and the suite's two again afterwards
def test_many_workspaces_keep_a_bounded_number_of_warm_sandboxes(env):  # noqa: F811
    from sandbox.launch import sandbox_uid

    settings = env.settings.model_copy(update={"sandbox_max_warm": 2})
    names = [
        f"wsmany{i}{env.ws_a[3:9]}{env.ws_a[-3:]}" for i in range(3)
    ]  # [3:9]: the per-process tag (test_sandbox.WS_A)
    for name in names:
        result = env.run("print('ok')", settings=settings, workspace_id=name, datasets={})
        assert result.ok, result.error
    pool = get_pool()
    # Reason: an LRU cap on warm sandboxes; a new workspace closes the least recently used one.
    assert len(pool.parents) <= 2 and names[-1] in pool.parents and names[0] not in pool.parents
    for _ in range(100):  # the closed one's processes are killed; on a loaded machine they take a moment to go
        alive = {name for name in names if _host_pids_of(sandbox_uid(name))}
        if names[0] not in alive:
            break
        time.sleep(0.05)
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


# ----------------------------------------------------------------------------- figures on the host
def _host_bytes(paths) -> int:
    return sum(os.stat(p).st_size for p in paths)


def _figures_run(env, code: str, call_id: str, figures_dir, settings=None):  # noqa: F811
    """run_python in a workspace of its own, drawing into `figures_dir` (the suite's other tests
    keep theirs)."""
    from analysis_tools import ToolContext
    from app.agent.run_scope import RunScope
    from app.agent.tools.toolbox import HARNESS_REGISTRY

    ctx = ToolContext(
        figures_dir=figures_dir,
        call_id=call_id,
        scope=RunScope(workspace_id="wsfig" + env.ws_a[-3:], settings=settings or env.settings, dataset_paths={}),
    )
    return HARNESS_REGISTRY.run("run_python", None, ctx, code=code)


def test_hard_linked_figures_reach_the_host_once(env, tmp_path):  # noqa: F811
    """Real code (no forged reply): a 2 MB a.png and 19 hard links to it, every one named *.png,
    which the call's figure scan lists; the host copies the file once (issue 25: 20 copies before)."""
    code = (
        "import os\nopen('a.png', 'wb').write(os.urandom(2 * 1024 * 1024))\n"
        "for i in range(19):\n    os.link('a.png', f'b{i}.png')\nprint('linked')"
    )
    result = _figures_run(env, code, "links", tmp_path / "figures")
    assert result.ok, result.error
    assert len(result.figures) == 1 and _host_bytes(result.figures) == 2 * 1024 * 1024, result.figures
    kept = env.settings.workspace_dir("wsfig" + env.ws_a[-3:]) / "scratch" / "calls"  # the kept calls
    assert _host_bytes(kept.rglob("*.png")) == 2 * 1024 * 1024
    get_pool().close("wsfig" + env.ws_a[-3:])


def test_a_workspace_keeps_its_figures_within_their_budget(env, tmp_path):  # noqa: F811
    """Call after call of 2 MB of figures: the workspace's figures/ stays within figures_keep_mb (the
    oldest go first, the newest stays); before, figures/ was never pruned."""
    settings = env.settings.model_copy(update={"figures_keep_mb": 3})
    code = "import os\nfor i in range(2):\n    open(f'f{i}.png', 'wb').write(os.urandom(1024 * 1024))\nprint('drawn')"
    made, figures_dir = [], tmp_path / "figures"
    for n in range(5):
        result = _figures_run(env, code, f"budget{n}", figures_dir, settings)
        assert result.ok, result.error
        made += result.figures
    on_disk = [p for p in figures_dir.iterdir() if p.is_file()]
    assert _host_bytes(on_disk) <= 4 * 1024 * 1024, sorted(p.name for p in on_disk)
    assert os.path.exists(made[-1]) and not os.path.exists(made[0])  # the newest stays, the oldest went
    get_pool().close("wsfig" + env.ws_a[-3:])
