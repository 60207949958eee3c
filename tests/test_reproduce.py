"""analysis.py re-runs the model's run_python code and checks every number of the evidence by value, with the
claim check's rule (app.numbers.reported_value_matches); on the server the whole script runs inside the
run_python sandbox (app/reports/reproduce.py, sandbox/script_run.py), in both modes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from app.paths import REPO_ROOT
from app.reports.reproduce import Limits, Outcome, check_analysis_script
from app.reports.script import to_analysis_script
from tests.test_sandbox_escape import require_mode

pytestmark = pytest.mark.timeout(180)

REGIONS = {"East": (460.0, 120.0), "North": (180.0, 40.0), "South": (310.0, 90.0)}


def sales_frame() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    rows = [
        (region, round(float(rng.normal(mean, sd)), 2)) for region, (mean, sd) in REGIONS.items() for _ in range(40)
    ]
    return pd.DataFrame(rows, columns=["region", "revenue"])


def welch_f(frame: pd.DataFrame) -> float:
    """Welch's one-way ANOVA F, from its formula (Welch 1951), independent of the tools."""
    groups = [g.to_numpy() for _, g in frame.groupby("region")["revenue"]]
    n = np.array([len(g) for g in groups])
    means = np.array([g.mean() for g in groups])
    weights = n / np.array([g.var(ddof=1) for g in groups])
    grand = (weights * means).sum() / weights.sum()
    k = len(groups)
    between = (weights * (means - grand) ** 2).sum() / (k - 1)
    correction = 1 + 2 * (k - 2) / (k**2 - 1) * ((1 - weights / weights.sum()) ** 2 / (n - 1)).sum()
    return float(between / correction)


RUN_PYTHON_CODE = """\
totals = sales.groupby("region")["revenue"].sum().sort_values(ascending=False)
print(totals.round(2))
gap = totals.iloc[0] - totals.iloc[1]
result = {"top": totals.index[0], "gap": float(gap)}
"""


def report(evidence: list[dict], code: str = RUN_PYTHON_CODE) -> dict:
    calls = [
        {"id": "call_py", "tool": "run_python", "arguments": {"code": code}, "ok": True},
        {
            "id": "call_cg",
            "tool": "compare_groups",
            "ok": True,
            "arguments": {
                "dataset": "sales",
                "value_column": "revenue",
                "group_column": "region",
                "method": "welch_anova",
            },
        },
        {"id": "call_ev", "tool": "record_evidence", "arguments": {}, "ok": True},
    ]
    return {
        "question": "Which region brings in the most revenue?",
        "language": "en",
        "run_id": "r1",
        "created_at": "now",
        "tool_calls": calls,
        "evidence": evidence,
    }


def model_evidence(frame: pd.DataFrame, welch: float) -> list[dict]:
    """What a model records: its own metric names, rounded to two decimals."""
    totals = frame.groupby("region")["revenue"].sum().sort_values(ascending=False)
    return [
        {
            "claim": "East brings in the most.",
            "tool_call_ids": ["call_py"],
            "metrics": {
                "east_total": round(float(totals["East"]), 2),
                "gap_east_minus_next": round(float(totals.iloc[0] - totals.iloc[1]), 2),
            },
        },
        {"claim": "Revenue differs by region.", "tool_call_ids": ["call_cg"], "metrics": {"welch_F": round(welch, 2)}},
    ]


def write_case(folder: Path, content: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "sales.csv"
    if not data.exists():
        sales_frame().to_csv(data, index=False)
    script = folder / "analysis.py"
    sources = [{"name": "sales", "file": "sales.csv", "sheet": None, "original_path": str(data)}]
    script.write_text(to_analysis_script(content, sources), encoding="utf-8")
    return script


def run_script(script: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "MPLBACKEND": "Agg"}
    return subprocess.run(
        [sys.executable, script.name], cwd=script.parent, env=env, capture_output=True, text=True, timeout=150
    )


def test_run_python_numbers_and_model_named_metrics_are_checked_by_value(tmp_path):
    frame = sales_frame()
    welch = welch_f(frame)
    evidence = model_evidence(frame, welch)
    done = run_script(write_case(tmp_path / "right", report(evidence)))
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "=== call_py: run_python, code:\n    totals = sales.groupby" in out  # the code it runs is shown
    east = evidence[0]["metrics"]["east_total"]
    for line in (f"✓  E1 east_total: {east!r}", "✓  E1 gap_east_minus_next:", f"✓  E2 welch_F: {round(welch, 2)!r}"):
        assert line in out, out
    assert "2 of 2 tool calls re-run." in out and "✓ Reproduced: all 3 numbers match the report." in out

    # a number off in its last reported digit is a difference, whichever call it cites
    wrong = model_evidence(frame, welch)
    wrong[0]["metrics"]["east_total"] = round(east + 0.1, 2)
    wrong[1]["metrics"]["welch_F"] = round(welch + 0.1, 2)
    done = run_script(write_case(tmp_path / "wrong", report(wrong)))
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"✗  E1 east_total: report {round(east + 0.1, 2)!r}" in done.stdout
    assert f"✗  E2 welch_F: report {round(welch + 0.1, 2)!r}" in done.stdout
    assert "✓  E1 gap_east_minus_next:" in done.stdout and "✗ Not reproduced: 1 of 3 numbers match" in done.stdout


def test_a_run_python_call_that_fails_on_rerun_is_a_failed_call(tmp_path):
    frame = sales_frame()
    evidence = model_evidence(frame, welch_f(frame))
    done = run_script(write_case(tmp_path, report(evidence, code="print(sales.no_such_column.sum())")))
    assert done.returncode == 1
    assert "[failed]" in done.stdout and "no_such_column" in done.stdout
    assert "-  E1 east_total:" in done.stdout  # nothing re-computed it: not a match
    assert "1 of 2 tool calls re-run." in done.stdout


ESCAPE_CODE = """\
import json, os
found = {}
for name, path in [("outside", OUTSIDE), ("beside_script", BESIDE), ("data_file", DATA)]:
    try:
        with open(path, "a") as handle:
            handle.write("pwned")
        found[name] = "written"
    except OSError as exc:
        found[name] = type(exc).__name__
try:
    found["other_workspace"] = open(SECRET).read()
except OSError as exc:
    found["other_workspace"] = type(exc).__name__
with open("own_scratch.txt", "w") as handle:  # the private scratch folder is writable
    found["scratch"] = handle.write("fine")
os.symlink(SECRET, "planted.png")  # a link dressed as a chart: never copied out
fig, ax = plt.subplots()
ax.bar(["a", "b"], [1, 2])
save_figure(fig, "bars")
print("FOUND " + json.dumps(found))
totals = sales.groupby("region")["revenue"].sum()
result = {"east": float(totals["East"])}
"""


@pytest.mark.parametrize("mode", ["bwrap", "unshare"])
def test_the_servers_check_runs_the_model_code_inside_the_sandbox(tmp_path, mode):
    require_mode(mode)
    other = tmp_path / "workspaces" / "other" / "files" / "secret.csv"
    other.parent.mkdir(parents=True)
    other.write_text("the other workspace's data", encoding="utf-8")
    outside = tmp_path / "outside.txt"
    check = tmp_path / "workspaces" / "mine" / "check"
    data = check.parent / "files" / "sales.csv"
    data.parent.mkdir(parents=True)
    frame = sales_frame()
    frame.to_csv(data, index=False)
    code = ESCAPE_CODE.replace("OUTSIDE", repr(str(outside))).replace("BESIDE", repr(str(check / "pwned.txt")))
    code = code.replace("DATA", repr(str(data))).replace("SECRET", repr(str(other)))
    east = round(float(frame.groupby("region")["revenue"].sum()["East"]), 2)
    content = report([{"claim": "East", "tool_call_ids": ["call_py"], "metrics": {"east_total": east}}], code)
    check.mkdir(parents=True)
    script = check / "analysis.py"
    sources = [{"name": "sales", "file": "sales.csv", "sheet": None, "original_path": str(data)}]
    script.write_text(to_analysis_script(content, sources), encoding="utf-8")
    before = data.read_bytes()

    outcome = check_analysis_script(
        script, Limits(timeout_s=150, memory_mb=4096, cpu_s=150), data_files=[data], sandbox_mode=mode
    )
    printed = (check / "analysis_output.txt").read_text(encoding="utf-8")
    assert outcome.summary is not None and outcome.summary["status"] == "passed", printed
    found = json.loads(next(line for line in printed.splitlines() if line.startswith("FOUND {"))[6:])
    assert found["scratch"] == 4  # the code ran, in its own writable folder
    assert all(found[name] != "written" for name in ("outside", "beside_script", "data_file")), found
    assert found["other_workspace"] in ("FileNotFoundError", "PermissionError"), found
    assert "the other workspace's data" not in printed
    assert not outside.exists() and not (check / "pwned.txt").exists() and data.read_bytes() == before
    assert not (check / "own_scratch.txt").exists()  # the scratch folder is private
    charts = sorted(p.relative_to(check).as_posix() for p in (check / "rerun_figures").rglob("*"))
    assert charts == ["rerun_figures/call_py", "rerun_figures/call_py/bars.png"]  # only the chart comes out
    assert (check / "rerun_figures/call_py/bars.png").read_bytes().startswith(b"\x89PNG")
    assert f"✓  E1 east_total: {east!r}" in printed


def test_without_a_sandbox_the_server_does_not_run_the_script(tmp_path, monkeypatch):
    import sandbox.host as host

    monkeypatch.setattr(host, "probe", lambda kind: host.Isolation(kind, False, f"{kind} is missing"))
    marker = tmp_path / "ran.txt"
    script = tmp_path / "analysis.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('ran')\n", encoding="utf-8")
    assert check_analysis_script(script, Limits(timeout_s=30)) == Outcome(None, "no_sandbox")
    assert not marker.exists()
    assert "no sandbox can run here" in (tmp_path / "analysis_output.txt").read_text(encoding="utf-8")


def test_the_page_says_plainly_that_the_check_cannot_run_safely():
    from types import SimpleNamespace

    from app.web.number_check import check_view

    run = SimpleNamespace(id="run-no-sandbox", state={"number_check": {"status": "stopped", "reason": "no_sandbox"}})
    assert "cannot be checked safely on this server" in check_view(None, run, "en")["stopped"]
    assert "无法在此服务器上安全地核对数字" in check_view(None, run, "zh")["stopped"]


def test_each_run_python_call_starts_from_clean_library_settings(tmp_path):
    """As in the sandbox (a fresh child per call), one call's pandas/numpy settings do not change what the
    next one prints."""
    frame = sales_frame()
    east = round(float(frame.groupby("region")["revenue"].sum()["East"]), 2)
    calls = [
        {
            "id": "call_a",
            "tool": "run_python",
            "ok": True,
            "arguments": {"code": "pd.set_option('display.precision', 0)\nnp.set_printoptions(precision=0)\nprint(1)"},
        },
        {
            "id": "call_b",
            "tool": "run_python",
            "ok": True,
            "arguments": {"code": "print(sales.groupby('region')['revenue'].sum().round(2).to_frame())"},
        },
    ]
    content = {
        "question": "q",
        "language": "en",
        "tool_calls": calls,
        "evidence": [{"claim": "East", "tool_call_ids": ["call_b"], "metrics": {"east_total": east}}],
    }
    done = run_script(write_case(tmp_path, content))
    assert done.returncode == 0 and f"✓  E1 east_total: {east!r}" in done.stdout, done.stdout + done.stderr


def test_a_kept_subset_is_what_the_later_calls_re_run_on(tmp_path):
    """filter_rows keeps its rows as a side table (`sales_big`, issue 23); the aggregate that read it
    in the run re-runs on those rows, not on the whole file (it re-ran on all 120 rows before)."""
    frame = sales_frame()
    kept = frame[frame["revenue"] > 300]
    totals = kept.groupby("region")["revenue"].sum()  # pandas alone, independent of the tools
    calls = [
        {
            "id": "call_f",
            "tool": "filter_rows",
            "ok": True,
            "arguments": {
                "dataset": "sales",
                "conditions": [{"column": "revenue", "op": ">", "value": 300}],
                "output": "sales_big",
            },
        },
        {
            "id": "call_g",
            "tool": "group_aggregate",
            "ok": True,
            "arguments": {"dataset": "sales_big", "group_columns": ["region"], "value_columns": ["revenue"]},
        },
    ]
    evidence = [
        {
            "claim": "East brings in the most of the big orders.",
            "tool_call_ids": ["call_g"],
            "metrics": {"n": len(kept), "revenue_sum.East": round(float(totals["East"]), 2)},
        }
    ]
    content = {**report(evidence), "tool_calls": calls}
    done = run_script(write_case(tmp_path, content))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"✓  E1 n: {len(kept)}" in done.stdout and "✓ Reproduced: all 2 numbers match" in done.stdout


def sheet_turn_script(tmp_path, book, question: str, sheet_arguments: dict, west: float):
    """analysis.py of a run on a book of shop sheets read at 一店: a select_sheet call, then the model's code
    totalling 西门's 销量, recorded as evidence."""
    code = 'result = {"west": float(stores.groupby("门店")["销量"].sum()["西门"])}\n'
    content = {
        "question": question,
        "language": "zh",
        "run_id": "r1",
        "created_at": "now",
        "tool_calls": [
            {"id": "call_sheet", "tool": "select_sheet", "arguments": sheet_arguments, "ok": True},
            {"id": "call_py", "tool": "run_python", "arguments": {"code": code}, "ok": True},
        ],
        "evidence": [{"claim": f"西门 {west:g}", "tool_call_ids": ["call_py"], "metrics": {"west": west}}],
    }
    folder = tmp_path / "check"
    folder.mkdir()
    script = folder / "analysis.py"
    sources = [{"name": "stores", "file": "stores.xlsx", "sheet": "一店", "original_path": str(book)}]
    script.write_text(to_analysis_script(content, sources), encoding="utf-8")
    return script


def test_a_turn_to_another_sheet_is_re_run_where_the_run_made_it(tmp_path):
    """Found with a model in the loop: "只看二店的…" on a book of a sheet per shop; the model called
    select_sheet(二店) and answered right, but analysis.py knew no select_sheet, re-ran the model's code on
    一店 and called the report's every number "not reproduced". It now reads the sheet where the run did:
    the upload again at that sheet, or the working copy Verity's check hands it as NAME@SHEET."""
    from app.ingest.pipeline import load_table, save_working_copy

    first = pd.DataFrame({"门店": ["东门", "西门"] * 3, "销量": [1, 2, 3, 4, 5, 6]})
    second = pd.DataFrame({"门店": ["东门", "西门"] * 3, "销量": [10, 20, 30, 40, 50, 70]})
    book = tmp_path / "stores.xlsx"
    with pd.ExcelWriter(book) as writer:
        first.to_excel(writer, sheet_name="一店", index=False)
        second.to_excel(writer, sheet_name="二店", index=False)
    west = float(second.loc[second["门店"] == "西门", "销量"].sum())  # 130, from the sheet itself
    script = sheet_turn_script(
        tmp_path, book, "只看二店的，西门的销量一共多少？", {"sheet": "二店", "dataset": "stores"}, west
    )
    done = run_script(script)  # standalone: the upload read again, at 一店 first, then at 二店
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "sheet 二店" in done.stdout and "130" in done.stdout
    # Verity's own check: the working copies of both sheets, the upload not read at all
    copies = {}
    for sheet in ("一店", "二店"):
        copies[sheet] = tmp_path / f"{sheet}.parquet"
        save_working_copy(load_table(book, sheet=sheet).frame, copies[sheet])
    book.rename(tmp_path / "gone.xlsx")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "MPLBACKEND": "Agg"}
    args = ["--working", "stores", str(copies["一店"]), "--working", "stores@二店", str(copies["二店"])]
    done = subprocess.run(
        [sys.executable, script.name, *args], cwd=script.parent, env=env, capture_output=True, text=True, timeout=150
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_a_look_at_another_sheet_leaves_the_table_where_it_was(tmp_path):
    """select_sheet(preview=True) only looked at a sheet; the re-run keeps computing on the run's table."""
    first = pd.DataFrame({"门店": ["东门", "西门"] * 3, "销量": [1, 2, 3, 4, 5, 6]})
    book = tmp_path / "stores.xlsx"
    with pd.ExcelWriter(book) as writer:
        first.to_excel(writer, sheet_name="一店", index=False)
        pd.DataFrame({"说明": ["销量 = 件数"]}).to_excel(writer, sheet_name="说明", index=False)
    west = float(first.loc[first["门店"] == "西门", "销量"].sum())  # 12, from the sheet itself
    script = sheet_turn_script(
        tmp_path, book, "西门的销量一共多少？", {"sheet": "说明", "dataset": "stores", "preview": True}, west
    )
    done = run_script(script)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "preview=True" in done.stdout and "sheet 说明" in done.stdout, done.stdout[-2000:]
    assert "✓  E1 west: 12.0" in done.stdout and "已复现" in done.stdout  # on 一店, not the notes sheet


def test_verity_analyze_checks_a_run_that_turned_to_another_sheet(tmp_path, verity_here):
    """The same through `verity analyze` with a model (a fake OpenAI-compatible server): the model finds
    select_sheet, reads 二店, computes on it and records the number; the check reproduces it. The command
    runs in this process (`app.cli.main`, what `python -m app.cli` calls): what is looked at is its report
    and its check, which runs analysis.py in a process of its own all the same; `python -m app.cli
    analyze` itself runs in tests/test_cli.py."""

    from tests.fakes import FakeOpenAIServer, completion

    second = pd.DataFrame({"门店": ["东门", "西门"] * 3, "销量": [10, 20, 30, 40, 50, 70]})
    book = tmp_path / "stores.xlsx"
    with pd.ExcelWriter(book) as writer:
        # 一店 the bigger sheet: the one an upload is first read from
        pd.DataFrame({"门店": ["东门", "西门"] * 5, "销量": range(10)}).to_excel(writer, sheet_name="一店", index=False)
        second.to_excel(writer, sheet_name="二店", index=False)
    west = int(second.loc[second["门店"] == "西门", "销量"].sum())
    code = (
        'west = int(datasets["stores"].groupby("门店")["销量"].sum()["西门"])\nprint(west)\nresult = {"west": west}\n'
    )
    steps = [
        ("tool_search", {"query": "read another sheet of the workbook"}),
        ("select_sheet", {"sheet": "二店", "dataset": "stores"}),
        ("run_python", {"code": code}),
        (
            "record_evidence",
            {"claim": f"二店的西门销量合计 {west} 件", "method": "按门店求和", "tool_call_ids": ["c2"]},
        ),
    ]

    def answer(body):
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        if done < len(steps):
            name, arguments = steps[done]
            return completion(None, [{"id": f"c{done}", "name": name, "arguments": json.dumps(arguments)}])
        return completion(f"二店的西门销量合计 {west} 件。")

    with FakeOpenAIServer(answer) as server:
        question = "只看二店的，西门的销量一共多少？"
        args = ["analyze", str(book), "--question", question, "--out", str(tmp_path / "out"), "--no-input"]
        env = {"VERITY_LLM_BASE_URL": server.base_url, "VERITY_LLM_API_KEY": "k", "VERITY_LLM_MODEL": "fake-model"}
        done = verity_here(*args, cwd=REPO_ROOT, **env)
    assert "0 differ" in done.stdout and "passed" in done.stdout, done.stdout[-1500:]
    output = (tmp_path / "out" / "analysis_output.txt").read_text(encoding="utf-8")
    assert "(10 rows)" in output and "sheet 二店" in output  # read at 一店 first, as the run was, then at 二店
    assert "'sheet': '一店'" in (tmp_path / "out" / "analysis.py").read_text(encoding="utf-8")
