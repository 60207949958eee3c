"""run_python works on every call of a run, under bubblewrap and under the `unshare` fallback,
wherever the interpreter and its libraries live (a virtualenv under /tmp included); a failure to
read the data is retried once in a fresh sandbox and, when it persists, reported to the model as
the harness's fault.

The model is scripted; everything else is the product path: the agent loop, the toolbox,
run_python, the warm sandbox pool and the host's cleaning of the sandbox after each call.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from analysis_tools import ToolContext, ToolResult
from app.agent.model.interface import ModelReply
from app.agent.run_scope import RunScope
from app.agent.tools.toolbox import HARNESS_REGISTRY, tool_message_content
from app.config import Settings
from sandbox import get_pool
from sandbox.warm import WarmParent
from tests.factories import REPO, reference, setup, start_run
from tests.fakes import ScriptedModel, call
from tests.test_sandbox_escape import require_mode

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]

PLANT = "rdatasets/PlantGrowth.csv"
MARKER_MODULE = "verity_tmp_marker"  # a module only the virtualenv under /tmp holds

READ = """
frame = list(datasets.values())[0]
print("call {n} rows", len(frame), "weight_sum", round(float(frame["weight"].sum()), 6))
"""
FIVE_CALLS = [
    READ.format(n=1) + "open('/tmp/left_by_call_1.txt', 'w').write('x')\n",
    "raise ValueError('a deliberate failure in call 2')\n",
    READ.format(n=3) + "import os\nprint('left over from call 1:', os.path.exists('/tmp/left_by_call_1.txt'))\n",
    "name = list(datasets)[0]\n" + READ.format(n=4).replace("list(datasets.values())[0]", "datasets[name]"),
    READ.format(n=5) + "print('group means', frame.groupby('group')['weight'].mean().round(6).to_dict())\n",
]


def five_call_run(base: Path, mode: str, preamble: str = "") -> list[str]:
    """A scripted model asks for five run_python calls in one run (the second raises); returns
    what the model read back from each, in order."""
    model = ScriptedModel(
        [ModelReply(None, [call("run_python", f"py{i}", code=preamble + code)]) for i, code in enumerate(FIVE_CALLS)]
        + [ModelReply("Done.")]
    )
    settings, _db, service, ws = setup(base, reference(PLANT), lambda *_: model, sandbox_mode=mode, sandbox_wall_s=60.0)
    try:
        run_id = start_run(service, ws, "What is the mean weight of each group?")
        service.execute(run_id)
    finally:
        get_pool().close(ws)
    # the isolation is told once, in run_python's description, the same in every request
    described = [
        t["function"]["description"] for t in model.requests[0]["tools"] if t["function"]["name"] == "run_python"
    ]
    assert described and "isolated sandbox (no network, read-only data" in described[0]
    messages = model.requests[-1]["messages"]
    seen = {m.get("tool_call_id"): m["content"] for m in messages if m.get("role") == "tool"}
    return [seen.get(f"py{i}", "") for i in range(len(FIVE_CALLS))]


def check_five(contents: list[str]) -> None:
    """Every call but the raising one read the data; the raising one is the code's own error."""
    plant = pd.read_csv(reference(PLANT))  # the expected numbers straight from the file
    total = round(float(plant["weight"].sum()), 6)
    for n in (1, 3, 4, 5):
        assert f"call {n} rows {len(plant)} weight_sum {total}" in contents[n - 1], contents[n - 1]
    failure = json.loads(contents[1])
    assert failure["error"] == "python_error" and "deliberate failure in call 2" in failure["message"]
    assert "fault" not in failure  # the code's own exception: nothing to do with the harness
    assert "left over from call 1: False" in contents[2]  # /tmp is still emptied after each call
    means = {g: round(float(v), 6) for g, v in plant.groupby("group")["weight"].mean().items()}
    assert f"group means {means}" in contents[4]
    for content in contents:
        assert "[sandbox] isolation" not in content  # the isolation is told once, in the tool's description


@pytest.mark.parametrize("mode", ["bwrap", "unshare"])
def test_five_run_python_calls_in_one_run_all_read_the_data(tmp_path, mode):
    require_mode(mode)
    check_five(five_call_run(tmp_path, mode))


@pytest.fixture(scope="module")
def venv_under_tmp():
    """A virtualenv under /tmp (--system-site-packages: the analysis stack comes from the base
    interpreter) holding one module of its own, as a quick try often sets Verity up."""
    folder = Path(tempfile.mkdtemp(prefix="verity-venv-", dir="/tmp"))
    folder.chmod(0o755)  # as `python -m venv` makes it: the sandbox's users may read it
    try:
        subprocess.run(
            [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(folder)],
            check=True,
            capture_output=True,
            timeout=120,
        )
        python = folder / "bin" / "python"
        site = subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        Path(site, f"{MARKER_MODULE}.py").write_text("WHERE = 'the virtualenv under /tmp'\n")
        stack = subprocess.run(
            [python, "-c", "import pandas, pyarrow, matplotlib, scipy, statsmodels, sklearn, sqlalchemy, fastapi"],
            capture_output=True,
            text=True,
        )
        if stack.returncode != 0:  # the test's own interpreter is itself a venv: its packages are not the base's
            pytest.skip(f"a --system-site-packages venv of {sys.executable} lacks the stack: {stack.stderr[-300:]}")
        yield python
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("mode", ["bwrap", "unshare"])
def test_five_calls_when_the_interpreter_lives_under_tmp(venv_under_tmp, mode):
    """Verity itself runs from the virtualenv under /tmp: every call imports the venv's own module
    and reads the data (from the second call on, the host's cleaning of /tmp detached the venv)."""
    require_mode(mode)
    base = Path(tempfile.mkdtemp(prefix="verity-calls-"))
    script = (
        "import json, sys\nfrom pathlib import Path\nfrom tests.test_sandbox_calls import five_call_run\n"
        "print('CONTENTS' + json.dumps(five_call_run(Path(sys.argv[1]), sys.argv[2], sys.argv[3])))"
    )
    preamble = f"import {MARKER_MODULE}\nprint('marker', {MARKER_MODULE}.WHERE)\n"
    try:
        done = subprocess.run(
            [venv_under_tmp, "-c", script, str(base), mode, preamble],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            capture_output=True,
            text=True,
            timeout=240,
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("CONTENTS")]
    assert lines, done.stderr[-3000:]
    contents = json.loads(lines[-1][len("CONTENTS") :])
    check_five(contents)
    for n in (1, 3, 4, 5):
        assert "marker the virtualenv under /tmp" in contents[n - 1], contents[n - 1]


WIPE = """
import json, os, sys
from sandbox.nsroot import MS_BIND, _mount
from sandbox.results import open_dir, wipe
base = sys.argv[1]
scratch, kept = base + "/scratch", base + "/kept"
os.makedirs(scratch)
os.makedirs(kept)
_mount("tmpfs", scratch, "tmpfs", 0, "size=8m")
for name in ("python3", "site.py"):
    open(os.path.join(kept, name), "w").write("keep me")
os.makedirs(scratch + "/venv_parent/venv")
_mount(kept, scratch + "/venv_parent/venv", None, MS_BIND)  # writable: only the wipe's care keeps it
open(scratch + "/left.txt", "w").write("x")
os.makedirs(scratch + "/folder/inner")
open(scratch + "/folder/inner/file", "w").write("x")
os.symlink(kept, scratch + "/link_to_kept")
deep = scratch + "/deep"
for _ in range(210):
    deep += "/d"
os.makedirs(deep)
fd = open_dir(scratch)
wipe(fd)
os.close(fd)
depth, walk = 0, scratch + "/deep"
while os.path.isdir(walk):
    depth, walk = depth + 1, walk + "/d"
print(json.dumps({"kept": sorted(os.listdir(kept)), "left": sorted(os.listdir(scratch)),
                  "venv": sorted(os.listdir(scratch + "/venv_parent/venv")), "deep_left": depth}))
"""


def test_emptying_the_scratch_never_enters_a_mount_inside_it(tmp_path):
    """The host's cleaning of /tmp: a folder mounted inside it (the interpreter's, bound there) is
    neither entered nor removed, a symlink is removed, not followed, and the walk is bounded."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("util-linux unshare is not installed")
    done = subprocess.run(
        [unshare, "--user", "--map-root-user", "--mount", sys.executable, "-c", WIPE, str(tmp_path)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0 and "Operation not permitted" in done.stderr and "unshare" in done.stderr:
        pytest.skip(f"no user namespaces here: {done.stderr[-200:]}")
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["kept"] == ["python3", "site.py"]  # nothing removed through the mount
    assert found["venv"] == ["python3", "site.py"]  # and the mount is still there
    # what the calls left is gone; the mount's parent stays (it is not empty), the too-deep rest stays
    assert found["left"] == ["deep", "venv_parent"]
    assert found["deep_left"] > 0


# ----------------------------------------------------------------------------- failed reads
def _context(base: Path, mode: str, datasets: dict[str, Path]) -> ToolContext:
    settings = Settings(_env_file=None, data_dir=base / "runtime", llm_model="builtin", sandbox_mode=mode)
    return ToolContext(
        figures_dir=base / "figures",
        call_id="py1",
        scope=RunScope(workspace_id=WORKSPACE, settings=settings, dataset_paths=datasets),
    )


WORKSPACE = "wsreadfailuresxxxxx"


def _workspace_files(base: Path) -> Path:
    settings = Settings(_env_file=None, data_dir=base / "runtime", llm_model="builtin")
    folder = settings.workspace_dir(WORKSPACE) / "files" / "d1"
    folder.mkdir(parents=True)
    return folder


def _run(ctx: ToolContext, code: str) -> ToolResult:
    try:
        return HARNESS_REGISTRY.run("run_python", None, ctx, code=code)
    finally:
        get_pool().close(WORKSPACE)


@pytest.mark.parametrize("code", ["print(len(broken))", "frame = datasets['broken']\nprint(len(frame))"])
def test_data_that_cannot_be_read_is_retried_once_then_reported_as_the_harness_fault(tmp_path, code):
    require_mode("auto")
    path = _workspace_files(tmp_path) / "working_v1.parquet"
    path.write_bytes(b"not a parquet file at all")
    result = _run(_context(tmp_path, "auto", {"broken": path}), code)
    assert not result.ok
    seen = json.loads(tool_message_content(result))  # what the model reads
    assert seen["error"] == "dataset_unreadable" and seen["dataset"] == "broken"
    assert seen["fault"] == "harness" and seen["retried"] is True
    assert "Not a fault of your code" in seen["hint"]
    assert result.payload["retried"] is True


def test_a_read_that_fails_once_succeeds_in_the_fresh_sandbox(tmp_path, monkeypatch):
    """The first sandbox cannot read the file; by the time the fresh one reads it again it can."""
    require_mode("auto")
    path = _workspace_files(tmp_path) / "working_v1.parquet"
    path.write_bytes(b"not yet a parquet file")
    frame = pd.DataFrame({"weight": [4.17, 5.58, 5.18, 6.11]})
    close = WarmParent.close
    repaired: list[bool] = []

    def close_then_repair(parent: WarmParent) -> None:
        close(parent)
        if not repaired:  # the failed sandbox is gone: the working copy is whole again
            frame.to_parquet(path)
            repaired.append(True)

    monkeypatch.setattr(WarmParent, "close", close_then_repair)
    result = _run(_context(tmp_path, "auto", {"plants": path}), "print('total', round(plants.weight.sum(), 6))")
    assert result.ok, result.error
    assert f"total {round(float(frame.weight.sum()), 6)}" in result.text
    assert result.payload["retried"] is True and repaired == [True]
