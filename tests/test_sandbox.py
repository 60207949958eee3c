"""run_python in the sandbox: real code, artefacts, output capture, structured errors, clean calls.

One warm parent per workspace is reused by every test here and in test_sandbox_escape.py (the
pool is process-wide and the environment below is built once per session and isolation mode).
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from analysis_tools import ToolContext, ToolResult
from app.agent.run_scope import RunScope
from app.agent.tools.toolbox import HARNESS_REGISTRY
from app.config import Settings
from sandbox import detect_isolation, get_pool
from sandbox import host as sandbox_host

pytestmark = pytest.mark.timeout(120)

# Unique per test process: a workspace's sandbox user is derived from its id (sandbox_uid), and the
# escape tests find the warm parent by that user; two xdist workers (or two checkouts' test runs on
# one machine) with the same ids would see each other's parents. The tag sits in the middle, where
# make_env's mode suffix does not cut it off; the ids keep their length (19).
_TAG = secrets.token_hex(3)
WS_A, WS_B = f"wsa{_TAG}aaaaaaaaaa", f"wsb{_TAG}bbbbbbbbbb"
# The suite runs against what `auto` finds; VERITY_TEST_SANDBOX_MODE=unshare checks the fallback.
MODE = os.environ.get("VERITY_TEST_SANDBOX_MODE", "auto")
SALES = pd.DataFrame(
    {
        "region": ["north", "south", "east", "west"] * 25,
        "revenue": [float(i % 7 + 1) * 10 for i in range(100)],
        "units": list(range(100)),
    }
)


@dataclass
class SandboxEnv:
    settings: Settings
    data_dir: Path
    sales_path: Path
    other_secret: Path
    db_path: Path
    figures_dir: Path
    ws_a: str = WS_A
    ws_b: str = WS_B

    def ctx(
        self,
        workspace_id: str | None = None,
        call_id: str = "call",
        settings: Settings | None = None,
        datasets: dict | None = None,
    ) -> ToolContext:
        paths = {"sales": self.sales_path} if datasets is None else datasets
        return ToolContext(
            figures_dir=self.figures_dir,
            call_id=call_id,
            scope=RunScope(
                workspace_id=workspace_id or self.ws_a, settings=settings or self.settings, dataset_paths=paths
            ),
        )

    def run(self, code: str, **kwargs) -> ToolResult:
        return HARNESS_REGISTRY.run("run_python", None, self.ctx(**kwargs), code=code)


_ENVS: dict[str, SandboxEnv] = {}


def make_env(tmp_path_factory: pytest.TempPathFactory, mode: str = MODE) -> SandboxEnv:
    """Two workspaces (A with a dataset, B with a secret), an app database; built once per mode
    (each mode has its own workspaces, so both keep a warm sandbox)."""
    if mode in _ENVS:
        return _ENVS[mode]
    base = tmp_path_factory.mktemp(f"sandbox-{mode}")
    data_dir = base / "runtime"
    settings = Settings(
        _env_file=None,
        data_dir=data_dir,
        llm_model="builtin",
        sandbox_mode=mode,
        sandbox_cpu_s=3,
        sandbox_wall_s=6.0,
        sandbox_memory_mb=400,
        sandbox_max_procs=32,
        sandbox_max_files=64,
        sandbox_max_output_chars=2_000,
        sandbox_max_file_mb=4,
        sandbox_idle_s=600.0,
        sandbox_scratch_mb=64,
    )
    suffix = "" if mode == MODE else mode[:3]
    ws_a, ws_b = WS_A[: len(WS_A) - len(suffix)] + suffix, WS_B[: len(WS_B) - len(suffix)] + suffix
    folder = settings.workspace_dir(ws_a) / "files" / "d1"
    folder.mkdir(parents=True)
    sales_path = folder / "working_v1.parquet"
    SALES.to_parquet(sales_path)
    (folder / "sales.csv").write_text(SALES.to_csv(index=False))
    other = settings.workspace_dir(ws_b) / "files" / "d2"
    other.mkdir(parents=True)
    SALES.to_parquet(other / "working_v1.parquet")
    secret = other / "secret.txt"
    secret.write_text("TOP-SECRET-OF-WORKSPACE-B")
    db_path = data_dir / "verity.db"
    with sqlite3.connect(db_path) as db:
        db.execute("create table secrets (value text)")
        db.execute("insert into secrets values ('SECRET-IN-THE-APP-DATABASE')")
    _ENVS[mode] = SandboxEnv(settings, data_dir, sales_path, secret, db_path, base / "figures", ws_a, ws_b)
    return _ENVS[mode]


@pytest.fixture(scope="session")
def isolation():
    found = detect_isolation(MODE)
    if not found.available:
        pytest.skip(f"no sandbox here: {found.reason}")
    return found


@pytest.fixture
def env(tmp_path_factory, isolation) -> SandboxEnv:
    return make_env(tmp_path_factory)


def stdout_of(result: ToolResult) -> str:
    assert result.ok, result.error
    return result.text.split("[stdout]", 1)[1] if "[stdout]" in result.text else ""


# ----------------------------------------------------------------------------- real code
def test_groupby_on_a_dataset_says_which_isolation(env, isolation):
    result = env.run("print(sales.groupby('region')['revenue'].sum().to_dict())\nprint(datasets['sales'].shape)")
    assert result.ok, result.error
    expected = SALES.groupby("region")["revenue"].sum().to_dict()
    assert str(expected) in result.text and "(100, 3)" in result.text
    assert "[sandbox] isolation" not in result.text  # the isolation is in the tool's description, not each result
    assert isolation.kind in ("bwrap", "unshare")
    assert result.payload["isolation"] == isolation.kind


def test_figures_come_back_as_artefacts(env):
    result = env.run(
        "fig, ax = plt.subplots()\n"
        "ax.bar(sales.region.unique(), sales.groupby('region').revenue.sum())\n"
        "ax.set_title('Revenue by region')\n"
        "save_figure(fig, 'by_region')\n"
        "plt.figure(); plt.plot([1, 2, 3]); plt.savefig('line.png')",
        call_id="fig",
    )
    assert result.ok, result.error
    assert len(result.figures) == 2
    for path in result.figures:
        assert Path(path).parent == env.figures_dir and Path(path).read_bytes()[:4] == b"\x89PNG"
    assert "Revenue by region" in result.captions


def test_open_figures_are_kept_without_savefig(env):
    result = env.run("plt.plot(sales.units, sales.revenue)\nplt.show()")
    assert result.ok and len(result.figures) == 1


def test_tables_come_back_as_artefacts(env):
    result = env.run(
        "summary = sales.groupby('region').agg(total=('revenue', 'sum'), n=('units', 'size'))\n"
        "save_table(summary, 'by_region')\n"
        "result = {'regions': len(summary), 'total': float(summary.total.sum())}"
    )
    assert result.ok, result.error
    table = result.payload["tables"][0]
    saved = pd.read_parquet(table["parquet"])
    assert list(saved.columns) == ["region", "total", "n"] and len(saved) == 4
    assert Path(table["csv"]).is_file()
    assert "[table by_region] 4 rows x 3 columns" in result.text
    assert result.metrics["regions"] == 4 and result.metrics["total"] == pytest.approx(SALES.revenue.sum())


def test_long_stdout_keeps_head_and_tail_and_names_no_host_path(env):
    result = env.run("for i in range(20000):\n    print('line', i)\nsave_table(sales.head(3), 'few')")
    assert result.ok, result.error
    assert "output truncated" in result.text and "line 0\n" in result.text and "line 19999" in result.text
    assert len(result.text) < 4_000 and result.payload["stdout_truncated"]
    # what the model reads names no folder of the server (the context cascade keeps long results)
    assert str(env.data_dir) not in result.text and "(saved as few.parquet)" in result.text


def test_errors_name_the_line_and_the_columns(env):
    result = env.run("total = 0\nfor r in ['x']:\n    total += sales['revnue'].sum()\n")
    assert not result.ok
    error = result.error
    assert error["error"] == "python_error" and error["message"] == "KeyError: 'revnue'"
    assert error["line"] == 3 and error["code_line"] == "total += sales['revnue'].sum()"
    assert error["did_you_mean"] == ["revenue"] and "revenue" in error["hint"] and "units" in error["hint"]
    assert "where" in error and error["retryable"] is True


def test_syntax_and_name_errors(env):
    syntax = env.run("x = (1,\ny = 2")
    assert syntax.error["error"] == "python_error" and syntax.error["line"] in (1, 2)
    name = env.run("print(slaes.shape)")
    assert name.error["line"] == 1 and "sales" in name.error["did_you_mean"]


def test_each_call_starts_clean(env):
    first = env.run(
        "leak = 42\nsales['revenue'] = 0\npd.LEAK = 1\nopen('/tmp/leftover', 'w').write('x')\nimport json\nprint('set')"
    )
    assert first.ok, first.error
    second = env.run(
        "import os\nprint('leak' in globals(), hasattr(pd, 'LEAK'), 'json' in globals(), "
        "os.path.exists('/tmp/leftover'), sales.revenue.sum())"
    )
    assert f"False False False False {SALES.revenue.sum()}" in stdout_of(second)


def test_the_warm_parent_has_no_threads_and_serves_one_workspace(env):
    env.run("print(1)")
    env.run("print(1)", workspace_id=env.ws_b, datasets={})
    pool = get_pool()
    a, b = pool.parents[env.ws_a], pool.parents[env.ws_b]
    assert a is not b and a.proc.pid != b.proc.pid
    assert a.hello["threads"] == 1 and a.hello["zygote_threads"] == 1 and a.hello["seccomp"] == "on", a.hello
    if os.geteuid() == 0:  # per workspace: a parent user, and another user for the calls' code
        uids = {a.hello["uid"], a.hello["call_uid"], b.hello["uid"], b.hello["call_uid"]}
        assert len(uids) == 4 and 0 not in uids
    # the other workspace's sandbox does not see workspace A's data
    listing = env.run("import os\nprint(sorted(os.listdir('/data')))", workspace_id=env.ws_b, datasets={})
    assert "['d2']" in stdout_of(listing)


def test_a_warm_call_is_fast(env):
    env.run("print(1)")
    result = env.run("print(sales.revenue.mean())")
    assert result.payload["warm"] and result.payload["sandbox_ms"] < 2_000
    assert "sandbox_ms" not in result.metrics  # a timing, not a number of the analysis


def test_off_and_missing_isolation_are_refused(env, monkeypatch):
    off = env.run("print(1)", settings=env.settings.model_copy(update={"sandbox_mode": "off"}))
    assert off.error["error"] == "sandbox_unavailable"
    missing = sandbox_host.Isolation("bwrap", False, "not installed")
    monkeypatch.setattr(
        sandbox_host, "probe", lambda kind: missing if kind != "off" else sandbox_host.Isolation("none", False, "off")
    )
    refused = env.run("print(1)", settings=env.settings.model_copy(update={"sandbox_mode": "auto"}))
    assert refused.error["error"] == "sandbox_unavailable" and "unsafe" in refused.error["message"]


@pytest.mark.slow
def test_unshare_fallback_isolates_too(env):
    if not sandbox_host.probe("unshare").available:
        pytest.skip("unshare namespaces are not available here")
    settings = env.settings.model_copy(update={"sandbox_mode": "unshare"})
    code = (
        "import os, socket\nprint(os.path.exists('/etc/shadow'), os.path.exists(%r), sorted(os.listdir('/data')))\n"
        "try:\n    socket.socket()\nexcept OSError as e:\n    print('socket', e.errno)\n"
        "print(sales.shape)" % str(env.db_path)
    )
    result = env.run(code, settings=settings, workspace_id="wsunshare")
    # the unshare workspace has its own (empty) data folder: the dataset is not under it
    assert result.error["error"] == "sandbox_unavailable"
    folder = env.settings.workspace_dir("wsunshare") / "files" / "d9"
    folder.mkdir(parents=True, exist_ok=True)
    SALES.to_parquet(folder / "working_v1.parquet")
    result = env.run(
        code, settings=settings, workspace_id="wsunshare", datasets={"sales": folder / "working_v1.parquet"}
    )
    assert result.ok, result.error
    assert result.payload["isolation"] == "unshare"
    assert "False False ['d9']" in result.text and "socket 13" in result.text and "(100, 3)" in result.text
    # the empty host folder the new root was mounted on is gone once the sandbox is up
    parent = get_pool().parents["wsunshare"]
    assert parent.nsroot_path and not os.path.exists(parent.nsroot_path)
    get_pool().close("wsunshare")


def test_datasets_come_from_the_workspace_in_the_session(env, tmp_path):
    """The harness path: the run scope carries the session and the workspace id (and the settings)."""
    from app.db.session import open_database
    from tests.factories import make_settings, workspace_with

    settings = make_settings(tmp_path, sandbox_mode=MODE)
    db = open_database(settings)
    source = tmp_path / "Retail Sales.csv"
    SALES.to_csv(source, index=False)
    workspace_id = workspace_with(db, settings, source)
    try:
        with db.session() as session:
            ctx = ToolContext(
                figures_dir=tmp_path / "figures",
                call_id="h1",
                scope=RunScope(session=session, workspace_id=workspace_id, settings=settings),
            )
            result = HARNESS_REGISTRY.run(
                "run_python", None, ctx, code="print(sorted(datasets), retail_sales.revenue.sum())"
            )
        assert result.ok, result.error
        assert f"['retail_sales'] {int(SALES.revenue.sum())}" in result.text
    finally:
        get_pool().close(workspace_id)


def test_a_big_array_result_is_cut_before_it_is_converted():
    """`result = big_array` keeps the first 1000 values; converting all of them first (tolist of
    the whole array) cost one Python object per element and could exhaust the child's memory."""
    import tracemalloc

    import numpy as np

    from sandbox import worker_child

    worker_child.MODULES.update(pd=pd, np=np)
    assert worker_child._jsonable(np.arange(5)) == [0, 1, 2, 3, 4]
    assert worker_child._jsonable(np.array(7)) == 7
    wide = worker_child._jsonable(np.zeros((3000, 4)))
    assert len(wide) == 250 and len(wide[0]) == 4  # whole rows, at most 1000 values
    big = np.arange(5_000_000)
    tracemalloc.start()
    try:
        head = worker_child._jsonable(big)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert head == list(range(1000))
    assert peak < 5_000_000  # converting the whole array first: ~180 MB of Python ints


def test_an_installed_polars_stays_out_of_the_zygote_but_a_call_may_import_it(env):
    """statsmodels imports polars when it is installed, and polars starts threads (its own and
    jemalloc's): the zygote must fork without any (test above), yet one call's code may use polars."""
    pytest.importorskip("polars")
    result = env.run("import polars as pl\nprint(pl.DataFrame({'a': [1, 2]}).height)")
    assert stdout_of(result).strip() == "2", result
