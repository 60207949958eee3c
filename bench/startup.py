"""Start-up cost of the `verity` command, as a user pays it: whole fresh processes, wall clock.

    python bench/startup.py               # 7 rounds (the median is shown)
    python bench/startup.py --rounds 15   # more rounds on a busy machine

Targets (issue #17), measured in the same run against `python -c "import pandas"`:
- `verity --help` answers in at most 0.3 s;
- `verity inspect` of a 100k-row x 20-column workbook, as a whole process, is at least 1.5x
  faster than `python -c "pandas.read_excel(FILE, engine='calamine')"`.

Every command runs once per round and the rounds interleave the commands, so a burst of load
from other processes on a shared machine hits all of them alike; the medians and the ratios
between medians are what to read. Beside the wall clock the table shows each process's CPU time
(user + system, its children included), which a loaded machine disturbs far less: when other
work queues for the cores, wall times stretch (`python -c pass` shows by how much) while CPU
times stay close to an idle machine's. The workbook is bench/ingest.py's (a title row, native
numbers and dates, text needing cleaning), cached under /tmp/verity-bench. Needs
`pip install -e '.[bench]'` (xlsxwriter writes the workbook, python-calamine is pandas' engine).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from ingest import build  # noqa: E402 - bench/ingest.py writes and caches the workbook

HELP_TARGET_S = 0.3
INSPECT_TARGET_RATIO = 1.5


def verity_command() -> list[str]:
    """The installed console script beside this interpreter (what a user runs), else `-m app.cli`."""
    script = shutil.which("verity", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "app.cli"]


def commands(workbook: Path) -> dict[str, list[str]]:
    verity = verity_command()
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import pandas'": [sys.executable, "-c", "import pandas"],
        "verity --help": [*verity, "--help"],
        "pandas.read_excel calamine": [
            sys.executable,
            "-c",
            f"import pandas; pandas.read_excel({str(workbook)!r}, engine='calamine')",
        ],
        "verity inspect --json": [*verity, "inspect", str(workbook), "--json"],
    }


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall-clock and CPU seconds (user + system, waited-for descendants included) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=REPO)
    stderr = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {stderr.decode()[-500:]}")
    return seconds, usage.ru_utime + usage.ru_stime


def measure(cmds: dict[str, list[str]], rounds: int) -> dict[str, list[tuple[float, float]]]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # this checkout, whatever is installed
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cmds}
    for argv in cmds.values():  # warm the page cache and .pyc files; not counted
        run_once(argv, env)
    for _ in range(rounds):
        for name, argv in cmds.items():
            times[name].append(run_once(argv, env))
    return times


def report(times: dict[str, list[tuple[float, float]]]) -> bool:
    wall = {name: statistics.median(w for w, _ in runs) for name, runs in times.items()}
    cpu = {name: statistics.median(c for _, c in runs) for name, runs in times.items()}
    pandas = wall["python -c 'import pandas'"]
    print(f"{'command':<28} {'wall s':>8} {'min':>7} {'max':>7} {'cpu s':>7} {'wall vs import pandas':>22}")
    print("-" * 84)
    for name, runs in times.items():
        walls = [w for w, _ in runs]
        print(
            f"{name:<28} {wall[name]:>8.3f} {min(walls):>7.3f} {max(walls):>7.3f} {cpu[name]:>7.3f} "
            f"{wall[name] / pandas:>21.2f}x"
        )
    help_s = wall["verity --help"]
    ratio = wall["pandas.read_excel calamine"] / wall["verity inspect --json"]
    cpu_ratio = cpu["pandas.read_excel calamine"] / cpu["verity inspect --json"]
    help_ok, inspect_ok = help_s <= HELP_TARGET_S, ratio >= INSPECT_TARGET_RATIO
    print()
    print(
        f"verity --help: {help_s:.3f} s wall, {cpu['verity --help']:.3f} s cpu "
        f"(target <= {HELP_TARGET_S} s): {'met' if help_ok else 'NOT met'}"
    )
    print(
        f"verity inspect: {ratio:.2f}x faster than pandas.read_excel(calamine) as whole processes, wall clock "
        f"({cpu_ratio:.2f}x in cpu time) (target >= {INSPECT_TARGET_RATIO}x): {'met' if inspect_ok else 'NOT met'}"
    )
    return help_ok and inspect_ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7; the median is shown)")
    parser.add_argument("--rows", type=int, default=100_000, help="rows of the workbook (default 100000)")
    args = parser.parse_args(argv)
    workbook = build(args.rows)
    print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f}; {args.rounds} rounds; workbook {workbook} "
        f"({workbook.stat().st_size / 1e6:.1f} MB, {args.rows} rows x 20 columns)\n"
    )
    return 0 if report(measure(commands(workbook), args.rounds)) else 1


if __name__ == "__main__":
    sys.exit(main())
