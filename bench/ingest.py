"""Ingestion benchmark: Verity's `load_table` vs `pandas.read_excel` (openpyxl and calamine engines).

    python bench/ingest.py                 # 10k, 100k and 500k rows x 20 columns
    python bench/ingest.py --rows 10000    # one size only
    python bench/ingest.py --repeat 5      # runs per measurement (default 3; the median is shown)

Workbooks are written once with xlsxwriter (constant-memory mode), and each also as CSV (read by
Verity and, for scale, by pandas.read_csv's C parser, which does no cleaning), cached under
/tmp/verity-bench. Every measurement runs in a fresh subprocess so its peak memory (ru_maxrss, the
whole process: Python, pandas, Arrow buffers and the Rust reader) is its own; times are wall-clock
seconds of the read call only (imports excluded). Each measurement is repeated (`--repeat`) and the
median is shown, because one run on a shared virtual machine can be 30% off either way; the
ratios are medians over medians, measured in the same run. pandas+openpyxl is skipped at 500k rows: it takes
minutes and several GB there. Needs `pip install xlsxwriter python-calamine`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("VERITY_BENCH_DIR", "/tmp/verity-bench"))
SIZES = [10_000, 100_000, 500_000]
OPENPYXL_MAX_ROWS = 100_000

COLUMNS = [
    "Order ID",
    "Date",
    "Region",
    "Store",
    "Product",
    "Units",
    "Unit Price",
    "Revenue",
    "Cost",
    "Discount",
    "Customer Age",
    "Rating",
    "Returned",
    "Channel",
    "Amount (text)",
    "Share",
    "Postcode",
    "Comment",
    "Latitude",
    "Updated",
]


def build(rows: int) -> Path:
    """A realistic 20-column sales sheet: a title row, native numbers/dates, and text that needs
    cleaning (thousands separators, percentages, zero-padded codes)."""
    path = CACHE / f"sales_{rows}.xlsx"
    if path.exists():
        return path
    import random

    import xlsxwriter

    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.xlsx")
    rng = random.Random(rows)
    wb = xlsxwriter.Workbook(str(tmp), {"constant_memory": True})
    ws = wb.add_worksheet("Sales")
    date_fmt = wb.add_format({"num_format": "yyyy-mm-dd"})
    ts_fmt = wb.add_format({"num_format": "yyyy-mm-dd hh:mm"})
    ws.write_row(0, 0, ["Sales export"])
    ws.write_row(2, 0, COLUMNS)
    regions = ["East", "West", "North", "South", "Central"]
    stores = [f"Store {i:02d}" for i in range(50)]
    products = [f"Product {i:03d}" for i in range(200)]
    channels = ["online", "shop", "phone"]
    words = "fast delivery good price late broken nice packaging would buy again ok".split()
    start = datetime(2023, 1, 1)
    for i in range(rows):
        units = rng.randint(1, 40)
        price = round(rng.uniform(2, 300), 2)
        revenue = round(units * price, 2)
        ws.write_row(
            i + 3,
            0,
            [
                f"ORD-{i:07d}",
                None,
                rng.choice(regions),
                rng.choice(stores),
                rng.choice(products),
                units,
                price,
                revenue,
                round(revenue * rng.uniform(0.4, 0.8), 2),
                round(rng.uniform(0, 0.3), 3),
                rng.randint(18, 80),
                rng.randint(1, 5),
                rng.random() < 0.05,
                rng.choice(channels),
                f"{revenue:,.2f}",
                f"{rng.uniform(0, 100):.1f}%",
                f"{rng.randint(0, 99999):06d}",
                " ".join(rng.choices(words, k=rng.randint(2, 6))),
                round(rng.uniform(20, 45), 6),
                None,
            ],
        )
        ws.write_datetime(i + 3, 1, start + timedelta(days=rng.randint(0, 700)), date_fmt)
        ws.write_datetime(i + 3, 19, start + timedelta(minutes=rng.randint(0, 1_000_000)), ts_fmt)
    wb.close()
    tmp.rename(path)
    return path


def build_csv(workbook: Path) -> Path:
    """The same sheet saved as CSV (title and blank row included), for the CSV rows of the table."""
    path = workbook.with_suffix(".csv")
    if not path.exists():
        import fastexcel

        frame = fastexcel.read_excel(str(workbook)).load_sheet(0, header_row=None).to_pandas()
        frame.to_csv(path.with_suffix(".tmp"), index=False, header=False)
        path.with_suffix(".tmp").rename(path)
    return path


# --- measurements (each in its own process) ---------------------------------------------------

_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {repo!r})
kind, path = sys.argv[1], sys.argv[2]
if kind == "verity":
    from app.ingest.pipeline import load_table
    fn = lambda: load_table(path).frame
elif kind == "bounded":  # what an upload does: the same read in a forked child with limits
    from app.ingest.bounded import load_table_bounded
    fn = lambda: load_table_bounded(path).frame
elif kind == "preview":
    from app.ingest.pipeline import preview_table
    fn = lambda: preview_table(path, rows=20)
elif kind in ("openpyxl", "calamine"):
    import pandas as pd
    fn = lambda: pd.read_excel(path, engine=kind, header=2)
elif kind == "read_csv":  # the C parser alone: no header search, no types beyond numbers, no cleaning
    import pandas as pd
    fn = lambda: pd.read_csv(path, header=2)
else:
    raise SystemExit(kind)
import fastexcel, pyarrow.compute, python_calamine, openpyxl  # imports are not part of a read
t = time.perf_counter()
out = fn()
seconds = time.perf_counter() - t
rows = len(out) if hasattr(out, "__len__") and not isinstance(out, dict) else len(out.get("preview", []))
peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
print(json.dumps({{"seconds": seconds, "rss_mb": peak / 1024,
                  "rows": rows}}))
"""


def measure(kind: str, path: Path, repeat: int = 1, timeout: float = 1800) -> dict | None:
    """The median time (and the largest peak memory) of `repeat` fresh processes."""
    runs = []
    for _ in range(repeat):
        one = _measure_once(kind, path, timeout)
        if one is None:
            return None
        runs.append(one)
    return {
        "seconds": statistics.median(r["seconds"] for r in runs),
        "rss_mb": max(r["rss_mb"] for r in runs),
        "rows": runs[0]["rows"],
        "all": [round(r["seconds"], 2) for r in runs],
    }


def _measure_once(kind: str, path: Path, timeout: float) -> dict | None:
    code = _CHILD.format(repo=str(REPO))
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code, kind, str(path)], capture_output=True, text=True, timeout=timeout, cwd=REPO
        )
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0:
        print(f"  {kind} failed: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def baseline_rss() -> float:
    """Memory of the interpreter with pandas imported, to show what each reader adds."""
    code = "import resource, pandas, fastexcel; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, action="append", help="row counts (default 10k, 100k, 500k)")
    ap.add_argument("--repeat", type=int, default=3, help="fresh-process runs per measurement (median shown)")
    args = ap.parse_args(argv)
    sizes = args.rows or SIZES
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; files cached in {CACHE}")
    print(f"interpreter + pandas + fastexcel alone: {baseline_rss():.0f} MB peak RSS\n")
    header = f"{'rows':>8} {'reader':<18} {'read s':>8} {'peak MB':>8} {'vs openpyxl':>12} {'vs calamine':>12}"
    print(header)
    print("-" * len(header))
    for rows in sizes:
        t = time.perf_counter()
        path = build(rows)
        if time.perf_counter() - t > 1:
            print(f"(built {path.name}: {path.stat().st_size / 1e6:.1f} MB in {time.perf_counter() - t:.0f} s)")
        results = {
            "verity load_table": measure("verity", path, args.repeat),
            "pandas+calamine": measure("calamine", path, args.repeat),
            "pandas+openpyxl": measure("openpyxl", path, args.repeat) if rows <= OPENPYXL_MAX_ROWS else None,
        }
        opx, cal = results["pandas+openpyxl"], results["pandas+calamine"]
        for name, res in results.items():
            if res is None:
                note = "skipped (minutes, GBs)" if name == "pandas+openpyxl" and rows > OPENPYXL_MAX_ROWS else "failed"
                print(f"{rows:>8} {name:<18} {note:>17}")
                continue
            r_opx = f"{opx['seconds'] / res['seconds']:.1f}x" if opx else "-"
            r_cal = f"{cal['seconds'] / res['seconds']:.1f}x" if cal else "-"
            print(
                f"{rows:>8} {name:<18} {res['seconds']:>8.2f} {res['rss_mb']:>8.0f} {r_opx:>12} {r_cal:>12}"
                f"   runs: {', '.join(f'{x:.2f}' for x in res['all'])}"
            )
        csv_path = build_csv(path)
        for label, kind, file, note in (
            ("verity in a child", "bounded", path, "(fork + copy back)"),
            ("verity csv", "verity", csv_path, "(same table as CSV)"),
            ("pandas read_csv", "read_csv", csv_path, "(same table as CSV)"),
            ("verity preview", "preview", path, "(first 20 rows)"),
        ):
            res = measure(kind, file, args.repeat)
            if res:
                print(
                    f"{rows:>8} {label:<18} {res['seconds']:>8.2f} {res['rss_mb']:>8.0f} {note:>25}"
                    f"   runs: {', '.join(f'{x:.2f}' for x in res['all'])}"
                )
        print()
    print("ratios: how many times faster Verity's full load (type inference and cleaning included) is")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
