"""Issue 27 point 3: Verity's own analysis.py check reuses what the run already has, and still
re-computes every number it reports as reproduced.

- `--working NAME PATH`: the table as Verity's reader made it (the Parquet working copy) instead of
  reading the upload again;
- `--reuse-profiles`: a data profile no reported number cites is the run's own (it is not computed
  again); a profile a number cites is re-computed and compared like every other call;
- column kinds of Arrow-backed columns are remembered per Arrow array (arrays never change), and a
  column given new values is classified again;
- the check's sandbox starts before its script exists (`start_early_check`: imports and reads ahead while the
  agent runs) and runs the script sent later to the same outcome as the ordinary check.

The scripts are the real analysis.py, run as a user runs them (tests/test_reproduce.py's helpers)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from analysis_tools.common import _column_kind, column_kind
from app.ingest.pipeline import save_working_copy
from app.paths import REPO_ROOT
from app.reports.reproduce import Limits, check_analysis_script, start_early_check
from tests.test_reproduce import model_evidence, report, run_script, sales_frame, welch_f, write_case
from tests.test_sandbox_escape import require_mode

pytestmark = pytest.mark.timeout(180)


def with_profiles(content: dict, rows: int) -> dict:
    """The report with two profiles of the data: one no number cites, one that E3's row count cites."""
    calls = [
        {"id": "call_profile_seen", "tool": "profile_dataset", "arguments": {"dataset": "sales"}, "ok": True},
        {"id": "call_profile_cited", "tool": "profile_dataset", "arguments": {"dataset": "sales"}, "ok": True},
    ]
    cited = {"claim": "The table has its rows.", "tool_call_ids": ["call_profile_cited"], "metrics": {"n_rows": rows}}
    return {**content, "tool_calls": calls + content["tool_calls"], "evidence": [*content["evidence"], cited]}


def test_the_check_reads_the_working_copy_not_the_upload(tmp_path):
    frame = sales_frame()
    content = report(model_evidence(frame, welch_f(frame)))
    script = write_case(tmp_path / "case", content)
    working = save_working_copy(frame, tmp_path / "store" / "working_v1.parquet")
    (tmp_path / "case" / "sales.csv").unlink()  # the upload is not there: only the working copy can be read

    done = run_script_with(script, "--working", "sales", str(working))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"loaded sales: {working} (120 rows)" in done.stdout
    assert "✓ Reproduced: all 3 numbers match the report." in done.stdout

    alone = run_script(script)  # a user's run reads the upload, which is missing here: it says so
    assert alone.returncode != 0 and "data file 'sales.csv' not found" in alone.stderr


def test_an_uncited_profile_is_reused_and_a_cited_one_recomputed(tmp_path):
    frame = sales_frame()
    content = with_profiles(report(model_evidence(frame, welch_f(frame))), rows=len(frame))
    script = write_case(tmp_path / "case", content)

    done = run_script_with(script, "--reuse-profiles")
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "=== call_profile_seen: profile_dataset (not re-run: no number of the report rests on it" in out
    assert "=== call_profile_cited: profile_dataset(dataset='sales')" in out  # re-run: E3 rests on it
    assert "✓  E3 n_rows: 120" in out and "3 of 4 tool calls re-run." in out
    assert "✓ Reproduced: all 4 numbers match the report." in out

    everything = run_script(script)  # without the flag (a user's own run) every call is re-run
    assert everything.returncode == 0 and "4 of 4 tool calls re-run." in everything.stdout

    wrong = with_profiles(report(model_evidence(frame, welch_f(frame))), rows=len(frame) + 1)
    done = run_script_with(write_case(tmp_path / "wrong", wrong), "--reuse-profiles")
    assert done.returncode == 1 and "✗  E3 n_rows: report 121" in done.stdout  # a cited profile is checked


def run_script_with(script: Path, *args: str) -> subprocess.CompletedProcess:
    """analysis.py with Verity's own check's options (tests/test_reproduce.py's `run_script` plus args)."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "MPLBACKEND": "Agg"}
    return subprocess.run(
        [sys.executable, script.name, *args], cwd=script.parent, env=env, capture_output=True, text=True, timeout=150
    )


def test_column_kinds_are_remembered_per_arrow_array_and_redone_for_new_values():
    frame = pd.DataFrame(
        {
            "code": pd.array([f"{i:04d}" for i in range(200)], dtype="str"),
            "shop": pd.array(["East", "West"] * 100, dtype="str"),
        }
    )
    assert column_kind(frame["code"]) == _column_kind(frame["code"]) == "integer"
    assert column_kind(frame["code"]) == "integer"  # the same array: remembered
    frame["code"] = pd.array([f"note {i} about the order" for i in range(200)], dtype="str")
    assert column_kind(frame["code"]) == _column_kind(frame["code"]) == "identifier"  # unique labels now
    frame.loc[0:199, "shop"] = "yes"
    frame.loc[0:99, "shop"] = "no"
    assert column_kind(frame["shop"]) == _column_kind(frame["shop"]) == "boolean"
    renamed = frame["shop"].rename("other name")  # the name is part of what decides (identifier names)
    assert column_kind(renamed) == _column_kind(renamed)


def test_the_question_readings_example_vectors_are_kept_between_processes(tmp_path, monkeypatch):
    """intent.py's example questions are embedded once per data dir (a new process reads them back):
    the vectors read back are the ones embedded; another list of texts is embedded anew and replaces
    the file."""
    from app.agent.policy import kept_vectors as kept
    from app.config import get_settings
    from app.understanding import semantic

    monkeypatch.setenv("VERITY_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()  # made by the app at start; a process without one keeps nothing (verity eval)
    get_settings.cache_clear()
    texts = ["How did revenue change by month?", "不同地区的收入有差异吗？"]
    first = kept.kept_vectors("examples", texts, query=True)
    assert first.shape == (2, 384)

    def no_model(*_args, **_kwargs):
        raise AssertionError("embedded again instead of read back")

    monkeypatch.setattr(semantic, "embed", no_model)
    again = kept.kept_vectors("examples", texts, query=True)
    assert again.dtype == first.dtype and (again == first).all()

    monkeypatch.undo()
    monkeypatch.setenv("VERITY_DATA_DIR", str(tmp_path / "data"))
    other = kept.kept_vectors("examples", [*texts, "Which store sells the most?"], query=True)
    assert other.shape == (3, 384) and (other[:2] - first).max() < 1e-5
    assert len(list((tmp_path / "data" / "cache").glob("examples-*.npy"))) == 1  # the old list's file is gone
    get_settings.cache_clear()


@pytest.mark.parametrize("mode", ["bwrap", "unshare"])
def test_an_early_check_runs_the_script_sent_later_to_the_same_outcome(tmp_path, mode):
    require_mode(mode)
    frame = sales_frame()
    working = save_working_copy(frame, tmp_path / "store" / "working_v1.parquet")
    data = tmp_path / "upload" / "sales.csv"
    data.parent.mkdir()
    frame.to_csv(data, index=False)
    limits = Limits(timeout_s=150)
    # started before the script exists (as `verity analyze` starts it before the agent runs)
    early = start_early_check(limits, None, [data], mode, {"sales": working})
    assert early is not None
    content = report(model_evidence(frame, welch_f(frame)))
    script = write_case(tmp_path / "early", content)
    outcome = early.finish(script, limits, None, [data], {"sales": working})
    printed = (script.parent / "analysis_output.txt").read_text(encoding="utf-8")
    assert outcome.summary is not None and outcome.summary["status"] == "passed", printed
    assert f"loaded sales: {working} (120 rows)" in printed  # the working copy the sandbox read ahead
    assert "✓ Reproduced: all 3 numbers match the report." in printed

    ordinary = write_case(tmp_path / "ordinary", content)
    same = check_analysis_script(ordinary, limits, None, [data], mode, {"sales": working})
    assert same == outcome
    assert (ordinary.parent / "analysis_output.txt").read_text(encoding="utf-8") == printed


@pytest.mark.parametrize("mode", ["bwrap", "unshare"])
def test_an_early_check_for_other_inputs_or_cancelled_runs_nothing_of_its_own(tmp_path, mode):
    require_mode(mode)
    frame = sales_frame()
    working = save_working_copy(frame, tmp_path / "store" / "working_v1.parquet")
    limits = Limits(timeout_s=150)
    content = report(model_evidence(frame, welch_f(frame)))

    # the run's tables changed: the script is checked the ordinary way (here: reading the upload)
    script = write_case(tmp_path / "changed", content)
    early = start_early_check(limits, None, [], mode, {"sales": working})
    assert early is not None
    outcome = early.finish(script, limits, None, [script.parent / "sales.csv"], {})
    printed = (script.parent / "analysis_output.txt").read_text(encoding="utf-8")
    assert outcome.summary is not None and outcome.summary["status"] == "passed", printed
    assert f"loaded sales: {script.parent / 'sales.csv'} (120 rows)" in printed
    assert not early.running

    # nothing to check (the run stopped): the sandbox is stopped, its script never sent
    early = start_early_check(limits, None, [], mode, {"sales": working})
    assert early is not None and early.running
    early.cancel()
    assert not early.running
    early.cancel()  # twice is harmless


def test_a_big_text_columns_numbers_and_profile_are_those_of_the_value_by_value_reading():
    """coerce_numeric converts a big string column one distinct value at a time, and profile_dataset counts
    duplicates as the reader does: the same numbers as converting every value and DataFrame.duplicated."""
    import numpy as np

    from analysis_tools import ToolContext, run_tool
    from analysis_tools.common import _coerce_text, coerce_numeric

    typed = [" 1,200 ", "3.5", "abc", "", "¥40", None, "1e3", "-0", "inf", "12%", "9007199254740993", " "]
    rng = np.random.default_rng(0)
    column = pd.Series(rng.choice(np.array(typed, dtype=object), 30_000), dtype="str", name="amount")
    numbers, failed = coerce_numeric(column)
    each, failing = _coerce_text(column)
    assert numbers.equals(each) and numbers.name == "amount" and failed == int(failing.sum()) > 0

    frame = pd.DataFrame({"amount": column, "n": rng.integers(0, 3, len(column))})
    profile = run_tool("profile_dataset", frame, ctx=ToolContext())
    assert profile.metrics["duplicate_rows"] == int(frame.duplicated().sum()) > 0


def test_a_service_that_keeps_frames_reads_each_working_copy_once_and_gives_each_turn_its_own(tmp_path, monkeypatch):
    """`verity analyze` resumes a run paused for a question in the same process: its RunService keeps the
    tables (kept_frames) instead of reading each working copy again, and what one turn does to its table
    never reaches the next turn's."""
    import app.workspaces as workspaces
    from app.runs import RunService
    from app.workspaces import active_datasets
    from tests.factories import SAMPLES, setup

    _settings, db, service, workspace_id = setup(tmp_path, SAMPLES / "retail_sales.xlsx")
    reads = []
    real = workspaces.read_working_copy
    monkeypatch.setattr(workspaces, "read_working_copy", lambda path: reads.append(path) or real(path))
    with db.session() as session:
        (dataset,) = active_datasets(session, workspace_id)
        fresh = service.turn_frame(dataset)  # (kept_frames unset: the server's way, read every time)
        assert service.turn_frame(dataset) is not fresh and len(reads) == 2
        service = RunService(db, _settings, keep_frames=True)  # `verity analyze`'s service
        first = service.turn_frame(dataset)
        first["added by a tool"] = 1
        first.iloc[0, 0] = None
        second = service.turn_frame(dataset)
    assert len(reads) == 3  # one read for both turns
    assert "added by a tool" not in second.columns and second.equals(fresh)


def test_work_given_to_while_reading_runs_in_the_parent_while_its_forked_child_reads(tmp_path):
    """`verity analyze` imports the agent while the upload is read: the one-threaded CLI forks the read,
    and the parent runs the work meanwhile (once), not in a thread (a process with two threads must not
    fork: it would read through the read server instead)."""
    code = f"""
import os, sys, threading
from app.ingest.bounded import load_table_bounded, while_reading
from tests.factories import SAMPLES, make_settings
from pathlib import Path
ran = []
settings = make_settings(Path({str(tmp_path)!r}))
with while_reading(lambda reading: ran.append((os.getpid(), threading.active_count()))):
    first = load_table_bounded(SAMPLES / "retail_sales.xlsx", settings=settings)
    second = load_table_bounded(SAMPLES / "retail_sales.xlsx", settings=settings)
after = load_table_bounded(SAMPLES / "retail_sales.xlsx", settings=settings)
print(ran == [(os.getpid(), 1)], len(first.frame), first.frame.equals(second.frame), first.frame.equals(after.frame))
"""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    assert done.stdout.split() == ["True", "1200", "True", "True"], done.stdout + done.stderr


def test_work_given_to_while_reading_can_tell_when_the_read_has_ended(tmp_path):
    """`verity analyze` imports the agent while the upload is read only as long as the read goes on (then
    it starts its check's sandbox, whose files the read made): `reading()` is true while the forked child
    reads and false once it has ended, and the child is still reaped and its table returned."""
    code = f"""
import time
from app.ingest.bounded import load_table_bounded, while_reading
from tests.factories import SAMPLES, make_settings
from pathlib import Path
seen = []
def work(reading):
    seen.append(reading())
    deadline = time.monotonic() + 60
    while reading() and time.monotonic() < deadline:
        time.sleep(0.01)
    seen.append(reading())
with while_reading(work):
    table = load_table_bounded(SAMPLES / "retail_sales.xlsx", settings=make_settings(Path({str(tmp_path)!r})))
print(seen, len(table.frame))
"""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    assert done.stdout.split() == ["[True,", "False]", "1200"], done.stdout + done.stderr


def test_analyze_starts_its_checks_sandbox_once_the_files_exist_before_the_rest_of_the_agent(tmp_path, monkeypatch):
    """`verity analyze` starts the check's sandbox (its imports: ~1.5 s of CPU on the other core) as soon as
    the upload is read and stored, before it imports what the read's time left over and creates the run."""
    import app.cli as cli
    import app.reports.reproduce as reproduce
    from app.config import get_settings
    from app.runs import RunService
    from tests.factories import SAMPLES

    class Stop(Exception):
        pass

    order: list[str] = []

    def early(limits, fonts, data_files, sandbox_mode, working):
        order.append(f"check started with {sorted(p.name for p in [*data_files, *working.values()])}")

    def load(reading=lambda: True):
        order.append("rest of the agent imported")

    def create(*args, **kwargs):
        order.append("run created")
        raise Stop

    monkeypatch.setattr(reproduce, "start_early_check", early)
    monkeypatch.setattr(cli, "_load_the_agent", load)
    monkeypatch.setattr(RunService, "create", create)
    monkeypatch.setenv("VERITY_DATA_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("VERITY_LLM_MODEL", "builtin")
    get_settings.cache_clear()
    with pytest.raises(Stop):
        cli.main(["analyze", str(SAMPLES / "retail_sales.xlsx"), "--no-input", "--out", str(tmp_path / "r")])
    assert order[-3:] == [
        "check started with ['retail_sales.xlsx', 'working_v1.parquet']",
        "rest of the agent imported",
        "run created",
    ]
