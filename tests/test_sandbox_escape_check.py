"""The escape suite, the number check (issue 25): the model's run_python code, re-run by the report's
analysis.py inside the sandbox, cannot write the check's verdict (forge), flood the server with its
output, fill the host's disk (its scratch is a file system in memory), make the host copy anything
but its own regular .png files (symlinks, FIFOs; once per file, however many hard links name it) or
hold the check thread. Through the real generated analysis.py, under bwrap and unshare."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from app.reports.reproduce import MAX_CHARTS, Limits, check_analysis_script, copy_charts, host_verdict
from app.reports.script import report_numbers, to_analysis_script
from tests.test_sandbox_escape import require_mode

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(params=["bwrap", "unshare"])
def mode(request):
    return require_mode(request.param)  # in CI both must run (the escape suite)


def analysis_script(folder: Path, code: str, metrics: dict | None = None) -> Path:
    """The analysis.py of a report whose one step is run_python `code`; its evidence holds
    `metrics` (none: a report with 0 evidence numbers)."""
    report = {
        "question": "q",
        "run_id": "r1",
        "tool_calls": [{"id": "c1", "tool": "run_python", "arguments": {"code": code}, "ok": True}],
        "evidence": [{"metrics": metrics or {}, "tool_call_ids": ["c1"]}],
    }
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "analysis.py"
    script.write_text(to_analysis_script(report, []), encoding="utf-8")
    return script, report


FORGE = r"""
import json, os
forged = json.dumps({"status": "passed", "matched": 999, "differing": 0, "not_recomputed": 0,
                     "failed_calls": 0}).encode()
open("/scratch/summary.json", "wb").write(forged)
for fd in range(3, 256):  # every descriptor this code holds
    try:
        os.write(fd, forged)
    except OSError:
        pass
parent = os.getppid()  # analysis.py's own process, which holds the summary pipe
for fd in range(3, 64):
    try:
        with open(f"/proc/{parent}/fd/{fd}", "wb") as pipe:
            pipe.write(forged)
    except OSError:
        pass
result = {"total": 42}
"""


def test_a_forged_summary_never_becomes_the_verdict(tmp_path, mode):
    script, report = analysis_script(tmp_path / "zero", FORGE)
    outcome = check_analysis_script(script, Limits(timeout_s=120), sandbox_mode=mode)
    # Reason: the summary comes on a pipe only analysis.py's own process holds; the model's code
    # runs in a forked child that closed it, and the parent is not dumpable (/proc/<ppid>/fd).
    assert outcome.summary is not None, (script.parent / "analysis_output.txt").read_text()[-3000:]
    assert outcome.summary["matched"] != 999 and outcome.summary["status"] == "failed", outcome.summary
    # a report with 0 evidence numbers never passes, whatever the counts say
    assert (
        host_verdict(
            {"status": "passed", "matched": 999, "differing": 0, "not_recomputed": 0, "failed_calls": 0},
            len(report_numbers(report)),
        )["status"]
        == "failed"
    )


def test_the_check_output_is_bounded(tmp_path, mode):
    script, _ = analysis_script(
        tmp_path / "flood", "import sys\nfor _ in range(40):\n    sys.stdout.write('A' * 1_000_000)\n"
    )
    check_analysis_script(script, Limits(timeout_s=120, output_mb=1), sandbox_mode=mode)
    kept = script.parent / "analysis_output.txt"
    # Reason: the host reads the output as it comes and keeps its head and tail (output_mb).
    assert kept.stat().st_size < 1_100_000 and "output truncated: " in kept.read_text(encoding="utf-8")


CHARTS = r"""
import os, shutil
here = os.getcwd()  # rerun_figures/c1
png = b"\x89PNG\r\n\x1a\n" + b"x" * 1_000_000
open("a.png", "wb").write(png)
for n in range(19):
    os.link("a.png", f"link{n}.png")
os.mkfifo("fifo.png")
os.symlink(SECRET, "secret.png")
os.mkdir("deeper")
os.symlink(os.path.dirname(SECRET), "deeper/folder")
"""


def test_only_regular_charts_are_copied_once_each(tmp_path, mode):
    secret = tmp_path / "private" / "other_workspace_chart.png"
    secret.parent.mkdir()
    secret.write_bytes(b"\x89PNG private chart of another workspace")
    script, _ = analysis_script(tmp_path / "charts", f"SECRET = {str(secret)!r}\n" + CHARTS)
    check_analysis_script(script, Limits(timeout_s=120), sandbox_mode=mode, data_files=[secret])
    copied = sorted(p.relative_to(script.parent) for p in (script.parent / "rerun_figures").rglob("*") if p.is_file())
    # Reason: files are opened O_NOFOLLOW|O_NONBLOCK and checked regular with fstat; an inode is
    # copied once, whatever its names (20 links to 1 MB were 20 MB on the host).
    assert copied == [Path("rerun_figures/c1/a.png")], copied
    assert not any(b"private chart" in p.read_bytes() for p in (script.parent / "rerun_figures").rglob("*.png"))


def test_a_linked_figures_folder_is_not_followed(tmp_path):
    """The script replaced its whole rerun_figures by a link to another workspace's charts."""
    private = tmp_path / "other" / "figures"
    private.mkdir(parents=True)
    (private / "chart.png").write_bytes(b"\x89PNG private")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    os.symlink(private.parent, scratch / "rerun_figures")
    assert copy_charts(scratch / "rerun_figures", tmp_path / "report" / "rerun_figures") == 0
    assert not (tmp_path / "report" / "rerun_figures").exists()


SWAP = r"""
import os, shutil
os.chdir("/scratch")
shutil.rmtree("/scratch/rerun_figures", ignore_errors=True)
os.symlink(PRIVATE, "/scratch/rerun_figures")  # the host's path of another workspace's charts
result = {"total": 42}
"""


def test_a_figures_folder_swapped_for_a_link_inside_the_sandbox_is_not_followed(tmp_path, mode):
    """The checked code itself replaces its rerun_figures by a link to another workspace's charts
    (readable inside the sandbox too, as a data file): the host copies nothing through it."""
    private = tmp_path / "other" / "figures"
    private.mkdir(parents=True)
    (private / "chart.png").write_bytes(b"\x89PNG private chart of another workspace")
    script, _ = analysis_script(tmp_path / "swap", f"PRIVATE = {str(private)!r}\n" + SWAP)
    outcome = check_analysis_script(
        script, Limits(timeout_s=120), sandbox_mode=mode, data_files=[private / "chart.png"]
    )
    assert outcome.summary is not None, (script.parent / "analysis_output.txt").read_text()[-3000:]
    # Reason: the host opens rerun_figures relative to the sandbox's /scratch with O_NOFOLLOW (before:
    # shutil copied through the link from the host's scratch folder).
    kept = script.parent / "rerun_figures"
    assert not kept.exists() or not any(p.is_file() for p in kept.rglob("*")), sorted(kept.rglob("*"))
    assert (private / "chart.png").read_bytes().endswith(b"another workspace")  # untouched


FILL = r"""
import os
written, made = 0, []
for folder in ("/scratch", os.getcwd()):
    try:
        while written < 96 * 1024 * 1024:
            made.append(os.path.join(folder, f"fill{written}.bin"))
            with open(made[-1], "wb") as out:
                out.write(b"x" * (4 * 1024 * 1024))
            written += 4 * 1024 * 1024
    except OSError as exc:
        os.write(1, f"STOPPED {type(exc).__name__} {exc.errno}\n".encode())  # the check's own output
os.write(1, f"WRITTEN {written}\n".encode())
size = os.statvfs("/scratch")
os.write(1, f"SCRATCH {size.f_blocks * size.f_frsize}\n".encode())
for path in made:  # room again for the call's own reply
    if os.path.exists(path):
        os.unlink(path)
result = {"total": 42}
"""


def test_the_check_cannot_fill_the_host_disk(tmp_path, mode):
    """Code that writes without end into the check's scratch folder stops at its size with a clear
    error: /scratch is a file system in memory of limits.scratch_mb, not a host folder (before: a
    folder in the host's /tmp, every byte written)."""
    script, _ = analysis_script(tmp_path / "fill", FILL)
    check_analysis_script(script, Limits(timeout_s=120, scratch_mb=16), sandbox_mode=mode)
    output = (script.parent / "analysis_output.txt").read_text(encoding="utf-8")
    written = [int(line.split()[1]) for line in output.splitlines() if line.startswith("WRITTEN")]
    assert written and written[-1] <= 16 * 1024 * 1024, output[-2000:]
    assert "STOPPED OSError 28" in output, output[-2000:]  # ENOSPC: a clear error for the code
    assert f"SCRATCH {16 * 1024 * 1024}" in output, output[-2000:]  # its own 16 MB file system


def test_the_real_numbers_and_charts_still_come_back_from_the_scratch_in_memory(tmp_path, mode):
    """What the code computes is still checked (its own reply pipe is the one thing it can spoil: writing on
    every descriptor, as FORGE does, fails its own call; here it only writes the forged summary.json into its
    scratch and tries the parent's descriptors), and its chart and the verdict come back from /scratch, a file
    system in memory of limits.scratch_mb. One check for both (each is a sandboxed run of analysis.py)."""
    honest = FORGE.replace("for fd in range(3, 256)", "for fd in []")
    drawn = honest + "open('chart.png', 'wb').write(b'\\x89PNG chart')\n"
    script, report = analysis_script(tmp_path / "drawn", drawn, metrics={"total": 42})
    outcome = check_analysis_script(script, Limits(timeout_s=120, scratch_mb=16), sandbox_mode=mode)
    assert outcome.summary is not None, (script.parent / "analysis_output.txt").read_text()[-3000:]
    verdict = host_verdict(outcome.summary, len(report_numbers(report)))
    assert verdict == {"status": "passed", "matched": 1, "differing": 0, "not_recomputed": 0, "failed_calls": 0}
    assert [p.name for p in (script.parent / "rerun_figures").rglob("*.png")] == ["chart.png"]


HOLD = r"""
import os, subprocess, sys
for place in ("/scratch/summary.json", "/scratch/.matplotlib/fontlist-v390.json", "/scratch/rerun_figures/x.png"):
    os.makedirs(os.path.dirname(place), exist_ok=True)
    if os.path.exists(place):
        os.unlink(place)
    os.mkfifo(place)
os.makedirs("/scratch/rerun_figures/wide", exist_ok=True)
for n in range(20_000):  # a wide folder of empty "charts"
    open(f"/scratch/rerun_figures/wide/{n}.png", "wb").close()
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"], start_new_session=True)  # lingers
result = {"total": 42}
"""


def test_a_check_cannot_hold_the_check_thread(tmp_path, mode):
    """FIFOs where the host reads (the old summary file, the font cache, a chart), a folder of 20,000
    entries and a process left behind: the check ends on its own and the host copies a bounded number
    of charts (before: the FIFO at summary.json blocked the check thread, and every workspace's
    checks behind it, forever)."""
    cache = tmp_path / "font-cache"
    script, _ = analysis_script(tmp_path / "hold", HOLD)
    started = time.monotonic()
    done = threading.Event()
    worker = threading.Thread(
        target=lambda: (
            check_analysis_script(script, Limits(timeout_s=90), cache_dir=cache, sandbox_mode=mode),
            done.set(),
        ),
        daemon=True,
    )
    worker.start()
    assert done.wait(150), "the check never ended"
    assert time.monotonic() - started < 120
    copied = list((script.parent / "rerun_figures").rglob("*.png"))
    assert len(copied) <= MAX_CHARTS and all(p.is_file() for p in copied)
    # the font cache kept is matplotlib's own list, never the FIFO planted beside it
    assert [p.name for p in cache.glob("fontlist-*")] != ["fontlist-v390.json"]
    assert all(p.is_file() and not p.is_fifo() for p in cache.iterdir())
