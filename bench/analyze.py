"""`verity analyze` end to end at 10k and 1M rows: time, CPU, peak memory, and where the time goes.

    python bench/analyze.py                             # 10k and 1M rows, 1 round each
    python bench/analyze.py --base /work/main           # another checkout beside it, ratios vs that base
    python bench/analyze.py --rows 10000 --rounds 3     # one size, median of 3
    python bench/analyze.py --profile                   # also one cProfile run per size: the phases
    python bench/analyze.py --upload                    # issue 27 point 2: the upload request's time

Issue 27 point 3: the analysis.py check reuses what the run already has (the working copy instead of
reading the upload again, the run's data profile where no number rests on it), and each report file is
written once. Targets: 1M rows <= 25 s, the fixed cost (the 10k-row run, where nearly all of the time
does not depend on the rows) <= 5 s. Every run is a whole fresh process with a data dir of its own,
the built-in analyst and the question "Does revenue differ by region?" (metric answered up front), on
bench/scale.py's 20-column sales CSV; base and this checkout take turns within each round so that a
busy machine slows both alike. CPU is the user + system seconds of the whole process tree (the read
and the analysis.py check run in child processes): on a shared machine it is the steadier figure.
The load average is printed before and after: read the figures with it. Each run has a fresh data
dir, but with DATA_DIR/cache kept from a warm-up run (as a user's data dir keeps it between runs).

--profile: the main process under cProfile (children not included: the read's and the check's own
work shows as the time waited for them), its cumulative time per phase.
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from scale import build_csv  # noqa: E402 - the same file

# scale.py's measuring wrapper, which also counts the sandboxed analysis.py check: bubblewrap starts it
# in a pid namespace and exits without reaping it, so its CPU never reached the wrapper's
# RUSAGE_CHILDREN (the figures before 2026-12-06's wip/fixed left the check's 2-4 s out). As a
# child subreaper the wrapper inherits such orphans and reaps them, and their time is counted.
_WRAP = r"""
import ctypes, json, os, resource, subprocess, sys, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
t = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
wall = time.perf_counter() - t
while True:  # orphans of the process tree (the sandbox's), reaped so that their time is counted
    try:
        os.waitpid(-1, 0)
    except ChildProcessError:
        break
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "rss_mb": use.ru_maxrss / 1024, "cpu": use.ru_utime + use.ru_stime,
                  "rc": proc.returncode, "out": proc.stdout.decode(errors="replace")[-400:],
                  "err": proc.stderr.decode(errors="replace")[-400:]}))
"""

QUESTION = "Does revenue differ by region?"
ANSWER = "metric=Revenue"  # the sheet has Revenue and "Amount (text)": answered up front, no prompt
TARGET_1M_S, TARGET_FIXED_S = 25.0, 5.0
# Phases of a run, by the function whose cumulative time is the phase (main process).
PHASES = [
    ("read the upload (child)", "workspaces.py", "add_dataset"),
    ("agent run", "runs.py", "execute"),
    ("  of which tool calls", "registry.py", "run"),
    ("  of which question reading", "intent.py", "classify_run"),
    ("analysis.py check (sandbox)", "reproduce.py", "check_analysis_script"),
    ("analysis.py check (sandbox)", "reproduce.py", "finish"),
    ("report files", "files.py", "write_report_files"),
    ("  of which Word", "docx_report.py", "to_docx"),
    ("  of which PDF", "pdf_report.py", "to_pdf"),
]


# The wall and CPU time of each phase without a profiler (cProfile slows Python-heavy code several
# times, the question reading most): `verity analyze` run in-process with the phases' functions wrapped
# by a clock; the seconds go to the file named by VERITY_BENCH_PHASES as [wall, cpu] (CPU: this
# process's, every thread). Names a checkout lacks are skipped. At exit it also writes the process's
# own CPU and its reaped children's (the read): what the tree used beyond both is the sandboxed check.
# Each function is wrapped when its module is first imported (a finder on sys.meta_path), not by
# importing the modules up front: the command imports them when and where it does (a checkout may
# load the agent in a thread while the upload is read), as it does for a user.
_TIMED = r"""
import atexit, functools, importlib, importlib.abc, importlib.machinery, json, os, resource, sys, time
start, start_cpu = time.perf_counter(), time.process_time()
spent = {}
def timed(label, module, owner, name):
    try:
        holder = importlib.import_module(module)
        holder = getattr(holder, owner) if owner else holder
        real = getattr(holder, name)
    except (ImportError, AttributeError):
        return
    @functools.wraps(real)
    def clocked(*args, **kwargs):
        t, c = time.perf_counter(), time.process_time()
        try:
            return real(*args, **kwargs)
        finally:
            wall, cpu = spent.get(label, (0.0, 0.0))
            spent[label] = (wall + time.perf_counter() - t, cpu + time.process_time() - c)
    setattr(holder, name, clocked)
pending = {}
for label, module, owner, name in json.loads(os.environ["VERITY_BENCH_TIMED"]):
    pending.setdefault(module, []).append((label, owner, name))
class WrapOnImport(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        entries = pending.pop(fullname, None)
        if entries is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return spec
        real = spec.loader.exec_module
        def exec_module(module):
            real(module)
            for label, owner, name in entries:
                timed(label, fullname, owner, name)
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, WrapOnImport())
import app.cli
spent["imports (cli)"] = (time.perf_counter() - start, time.process_time() - start_cpu)
def save():
    spent["whole process"] = (time.perf_counter() - start, time.process_time())
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent["children reaped (the read)"] = (0.0, children.ru_utime + children.ru_stime)
    with open(os.environ["VERITY_BENCH_PHASES"], "w") as out:
        json.dump(spent, out)
atexit.register(save)
sys.argv = ["verity", *sys.argv[1:]]
sys.exit(app.cli.main())
"""
TIMED = [
    ("read the upload (child)", "app.workspaces", None, "add_dataset"),
    ("agent run", "app.runs", "RunService", "execute"),
    ("  question reading", "app.runs", None, "classify_run"),
    ("  tool calls", "analysis_tools.registry", "Registry", "run"),
    ("analysis.py check (sandbox)", "app.reports.reproduce", None, "check_analysis_script"),
    # a check started before the run (its sandbox imports meanwhile): the wait for it once the script is
    # sent (where it falls back to check_analysis_script, that time is counted twice)
    ("analysis.py check (sandbox)", "app.reports.reproduce", "EarlyCheck", "finish"),
    ("report files", "app.reports.render", None, "write_report_files"),
    ("  Word", "app.reports.files", None, "to_docx"),
    ("  PDF", "app.reports.files", None, "to_pdf"),
]


CHILDREN = "children reaped (the read)"


def _pair(value: float | list[float] | None) -> tuple[float, float]:
    """A phase's (wall, cpu): a checkout from before the CPU column wrote the wall alone."""
    if value is None:
        return (0.0, 0.0)
    if isinstance(value, (int, float)):
        return (float(value), float("nan"))
    return (float(value[0]), float(value[1]))


# --profile: the main process under cProfile, in-process. `python -m cProfile` writes its file after the
# program returns, which `verity analyze` never does (it ends through app.process_exit.exit_now, whose
# os._exit skips the interpreter's end): the profile is written by an exit handler instead, which exit_now
# runs (registered before the command's own, so it runs after them, as the interpreter's end would).
_PROFILED = r"""
import atexit, cProfile, os, sys
profiler = cProfile.Profile()
def save():
    profiler.disable()
    profiler.dump_stats(os.environ["VERITY_BENCH_PROFILE"])
atexit.register(save)
profiler.enable()
import app.cli
sys.argv = ["verity", *sys.argv[1:]]
sys.exit(app.cli.main())
"""


def command(path: Path, out: Path, profile: Path | None = None) -> list[str]:
    run = ["-c", _PROFILED] if profile else ["-c", _TIMED]
    return [sys.executable, *run, "analyze", str(path), "--question", QUESTION, "--answer", ANSWER, "--out", str(out)]


# DATA_DIR/cache (the question reading's example vectors, the tool catalog's vectors) as a user's data
# dir keeps it between runs: copied into each run's fresh data dir and back (one per checkout).
CACHES = Path(tempfile.gettempdir()) / "verity-analyze-bench-caches"


def run_once(checkout: Path, path: Path, profile: Path | None = None) -> dict:
    data_dir = Path(tempfile.mkdtemp(prefix="verity-analyze-bench-"))
    kept = CACHES / checkout.resolve().as_posix().strip("/").replace("/", "_")
    if kept.is_dir():
        shutil.copytree(kept, data_dir / "cache")
    out = data_dir / "report"
    phases_file = data_dir / "phases.json"
    env = dict(
        os.environ,
        PYTHONPATH=str(checkout),
        VERITY_DATA_DIR=str(data_dir),
        VERITY_BENCH_PHASES=str(phases_file),
        VERITY_BENCH_TIMED=json.dumps(TIMED),
        VERITY_BENCH_PROFILE=str(profile or ""),
    )
    args = [*command(path, out, profile), "--no-input"]
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _WRAP, *args], capture_output=True, text=True, cwd=checkout, env=env
        )
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        result["checked"] = next((line for line in result["out"].splitlines() if line.startswith("analysis.py")), "")
        result["phases"] = json.loads(phases_file.read_text()) if phases_file.exists() else {}
        if (data_dir / "cache").is_dir():
            shutil.copytree(data_dir / "cache", kept, dirs_exist_ok=True)
        return result
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def phases(profile: Path) -> list[tuple[str, float]]:
    stats = pstats.Stats(str(profile)).stats  # type: ignore[attr-defined]
    found: dict[str, float] = {}
    total = max(entry[3] for entry in stats.values())
    for label, file, function in PHASES:
        cumulative = sum(v[3] for (f, _line, name), v in stats.items() if f.endswith(file) and name == function)
        found[label] = found.get(label, 0.0) + cumulative
    found["whole process"] = total
    return list(found.items())


def largest(profile: Path, count: int) -> list[tuple[float, int, str]]:
    """The functions with the most time of their own (not their callees'): where a phase's time goes."""
    stats = pstats.Stats(str(profile)).stats  # type: ignore[attr-defined]
    found = sorted(
        ((v[2], v[1], f"{Path(f).name}:{line}({name})") for (f, line, name), v in stats.items()), reverse=True
    )
    return found[:count]


def upload_timing(rows: int) -> dict:
    """Issue 27 point 2 in this process: the CSV uploaded through the API (in-process client, the
    default VERITY_UPLOAD_WAIT_S of 1 s): how long the request took (receiving the body included),
    what it answered, the progress seen while polling, and how long until the dataset was ready."""
    import time

    os.environ.pop("VERITY_UPLOAD_WAIT_S", None)
    os.environ.setdefault("VERITY_ALLOWED_HOSTS", "testserver")  # the in-process client's host name
    sys.path.insert(0, str(REPO))
    from fastapi.testclient import TestClient

    import app.web.api as api
    from app.config import Settings
    from app.main import create_app

    # the request's own work, apart from receiving the body (the in-process client encodes and the
    # server parses the multipart body first: over a network that is the transfer's time)
    held: dict[str, float] = {}
    for name in ("ingest_upload", "answer_when_read"):
        real = getattr(api, name)

        def clocked(*args, _real=real, _name=name, **kwargs):
            t = time.perf_counter()
            try:
                return _real(*args, **kwargs)
            finally:
                held[_name] = held.get(_name, 0.0) + time.perf_counter() - t

        setattr(api, name, clocked)
    path = build_csv(rows)
    folder = Path(tempfile.mkdtemp(prefix="verity-upload-bench-"))
    try:
        settings = Settings(_env_file=None, data_dir=folder, llm_model="builtin", max_upload_mb=1024)
        with TestClient(create_app(settings)) as client:
            ws = client.post("/api/workspaces", json={"name": "bench"}).json()["id"]
            start = time.perf_counter()
            with path.open("rb") as handle:
                answer = client.post(f"/api/workspaces/{ws}/files", files={"file": (path.name, handle)})
            request_s = time.perf_counter() - start
            dataset = answer.json()["dataset"]
            seen = []
            while dataset["status"] == "loading":
                time.sleep(0.25)
                dataset = client.get(f"/api/workspaces/{ws}/datasets/{dataset['id']}").json()["dataset"]
                if dataset.get("progress") and dataset["progress"] not in seen:
                    seen.append(dataset["progress"])
            return {
                "request_s": request_s,
                "stored_s": held.get("ingest_upload", 0.0),
                "waited_s": held.get("answer_when_read", 0.0),
                "answered": answer.json()["dataset"]["status"],
                "ready_s": time.perf_counter() - start,
                "status": dataset["status"],
                "rows": dataset.get("rows"),
                "progress": seen,
            }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def print_profiles(sizes: list[int], checkouts: dict[str, Path]) -> None:
    for rows in sizes:
        for name, checkout in checkouts.items():
            profile = Path(tempfile.mkdtemp(prefix="verity-analyze-prof-")) / "run.prof"
            run_once(checkout, build_csv(rows), profile)
            if not profile.exists():
                print(f"{rows:,} rows, {name}: no profile written")
                continue
            print(f"{rows:,} rows, {name}: cumulative seconds under cProfile (load {os.getloadavg()[0]:.1f})")
            for label, seconds in phases(profile):
                print(f"  {label:<30} {seconds:7.2f}")
            print("  the largest own times (tottime, s):")
            for seconds, calls, where in largest(profile, 10):
                print(f"    {seconds:6.2f} {calls:>8,}  {where}")
            shutil.rmtree(profile.parent, ignore_errors=True)
    print()


def print_uploads(sizes: list[int]) -> int:
    print(f"load average {os.getloadavg()[0]:.1f}; upload through the API, VERITY_UPLOAD_WAIT_S 1 s")
    for rows in sizes:
        u = upload_timing(rows)
        shown = ", ".join(f"{p['stage']} {p['rows']:,} rows {p['percent']}%" for p in u["progress"])
        mine = u["stored_s"] + u["waited_s"]  # the request's own time once its body is in
        good = mine <= 1.2  # "about a second"
        print(
            f"{'PASS' if good else 'FAIL'}  {rows:>9,} rows: request {u['request_s']:.2f} s, of which after the body "
            f"{mine:.2f} s (storing {u['stored_s']:.2f} s, waiting {u['waited_s']:.2f} s); answered "
            f"{u['answered']}; {u['status']} with {u['rows']:,} rows after {u['ready_s']:.2f} s; progress seen: "
            f"{shown or 'none (read within the wait)'}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, action="append", help="row counts (default 10k and 1M)")
    ap.add_argument("--rounds", type=int, default=1, help="runs per checkout and size (median shown)")
    ap.add_argument("--base", type=Path, help="another checkout (e.g. main before the change): ratios vs it")
    ap.add_argument("--profile", action="store_true", help="one cProfile run per checkout and size: the phases")
    ap.add_argument("--upload", action="store_true", help="only the upload's request time (issue 27 point 2)")
    args = ap.parse_args(argv)
    if args.upload:
        return print_uploads(sorted(args.rows or [10_000, 1_000_000]))
    sizes = sorted(args.rows or [10_000, 1_000_000])
    checkouts = {"verity": REPO} | ({"base": args.base.resolve()} if args.base else {})
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start")
    header = f"{'rows':>10} {'checkout':<8} {'wall s':>7} {'cpu s':>7} {'peak MB':>8} {'vs base':>8}  check"
    print(header)
    print("-" * len(header))
    for checkout in checkouts.values():  # the first run of a data dir fills its cache: not measured
        run_once(checkout, build_csv(min(sizes)))
    results: dict[int, dict[str, dict]] = {}
    for rows in sizes:
        path = build_csv(rows)
        runs: dict[str, list[dict]] = {name: [] for name in checkouts}
        for _ in range(args.rounds):
            for name, checkout in checkouts.items():
                runs[name].append(run_once(checkout, path))
        results[rows] = {}
        for name, rs in runs.items():
            results[rows][name] = {
                "wall": statistics.median(r["wall"] for r in rs),
                "cpu": statistics.median(r["cpu"] for r in rs),
                "rss_mb": max(r["rss_mb"] for r in rs),
                "ok": all(r["rc"] == 0 for r in rs),
                "checked": rs[-1]["checked"],
                "err": rs[-1]["err"].strip().splitlines()[-1:] if rs[-1]["rc"] else [],
                "phases": {
                    k: [statistics.median(_pair(r["phases"].get(k))[i] for r in rs) for i in (0, 1)]
                    for k in rs[-1]["phases"]
                },
                # the tree's CPU beyond the main process and the children it reaped: the sandboxed check
                "sandboxed": statistics.median(
                    r["cpu"] - _pair(r["phases"].get("whole process"))[1] - _pair(r["phases"].get(CHILDREN))[1]
                    for r in rs
                )
                if all("whole process" in r["phases"] for r in rs)
                else None,
            }
        base = results[rows].get("base")
        for name, r in results[rows].items():
            ratio = f"{r['wall'] / base['wall']:.2f}x" if base and name != "base" else "-"
            status = r["checked"] or ("FAILED " + " ".join(r["err"]) if not r["ok"] else "")
            print(
                f"{rows:>10,} {name:<8} {r['wall']:>7.2f} {r['cpu']:>7.2f} {r['rss_mb']:>8.0f} {ratio:>8}  {status[:70]}"
            )
    print(f"load average {os.getloadavg()[0]:.1f} at the end\n")
    labels = list(dict.fromkeys(["imports (cli)", *(t[0] for t in TIMED), "whole process"]))
    columns = [(rows, name) for rows in sizes for name in checkouts]
    print(
        "where the time goes: wall / CPU seconds of the main process, median (the read and the check are"
        " child processes: their wall is the main process waiting; their CPU is in the last rows)"
    )
    print(f"{'phase':<30}" + "".join(f"{f'{rows // 1000}k {name}':>16}" for rows, name in columns))
    for label in labels:
        cells = [results[rows][name]["phases"].get(label) for rows, name in columns]
        print(f"{label:<30}" + "".join(f"{'-' if c is None else f'{c[0]:.2f} / {c[1]:.2f}':>16}" for c in cells))
    cells = [results[rows][name]["phases"].get(CHILDREN) for rows, name in columns]
    print(f"{'CPU of the read (child)':<30}" + "".join(f"{'-' if c is None else f'{c[1]:.2f}':>16}" for c in cells))
    cells = [results[rows][name]["sandboxed"] for rows, name in columns]
    print(f"{'CPU of the check (sandboxed)':<30}" + "".join(f"{'-' if c is None else f'{c:.2f}':>16}" for c in cells))
    print()
    if args.profile:
        print_profiles(sizes, checkouts)
    mine = {rows: results[rows]["verity"] for rows in sizes}
    if 1_000_000 in mine:
        r = mine[1_000_000]
        good = r["ok"] and r["wall"] <= TARGET_1M_S
        print(f"{'PASS' if good else 'FAIL'}  1,000,000 rows: analyze {r['wall']:.2f} s (target <= {TARGET_1M_S:g} s)")
    small = min(sizes)
    if small <= 10_000:
        r = mine[small]
        good = r["ok"] and r["wall"] <= TARGET_FIXED_S
        print(
            f"{'PASS' if good else 'FAIL'}  fixed cost ({small:,} rows): analyze {r['wall']:.2f} s "
            f"(target <= {TARGET_FIXED_S:g} s)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
