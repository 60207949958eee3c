"""Reading big tables: `verity inspect` beside pandas, polars and duckdb at 10k / 100k / 1M rows.

    python bench/scale.py                        # CSV at 10k, 100k and 1M rows; 3 rounds each
    python bench/scale.py --rows 100000          # one size only
    python bench/scale.py --rounds 5 --xlsx      # the workbook table too (calamine via pandas, polars)
    python bench/scale.py --base /work/main      # another checkout's inspect beside (before/after)
    python bench/scale.py --xlsx-only            # the workbook table and the refusal, no CSV table
    python bench/scale.py --rows 1000000 --phases --base /work/main   # where inspect's time goes, both

Issue 27's table: every reader runs as a whole fresh process (start-up, imports and the read:
what a user waits for), the tools interleaved round by round so that a busy machine slows them
alike, and the median of the rounds is shown. Peak memory is the largest resident set of any
process of the run (`verity inspect` reads in a forked child; that child is counted). CPU is the
user + system seconds of the whole process tree: on a shared machine it is the steadier figure,
wall time the one the targets are judged on. The fitted growth is a least-squares line through
the sizes measured: microseconds per row and the fixed cost at zero rows.

Verity does more than the others: it finds the header below a title row, infers and converts
every column's type (thousands separators, percentages, zero-padded codes, ISO dates), writes the
cleaning log, and scans for personal data, formula injection and repeated rows. The others read
the same file with its two title lines skipped and their own type inference.

Targets (issue 27): CSV 1M x 20 `inspect` within 2x polars' read in the same run, peak memory
within 3x the file's size; xlsx 1M within 1.0x polars+calamine; a 3 MB workbook whose last row
is numbered 104,800,013 refused as too_large in under a second of CPU. Files are cached under
/tmp/verity-bench. Needs `pip install -e '.[bench]'` (polars, duckdb, python-calamine).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("VERITY_BENCH_DIR", "/tmp/verity-bench"))
SIZES = [10_000, 100_000, 1_000_000]
TITLE_LINES = 2  # "Sales export" and a blank line above the header

# One process per measurement: runs the command, reports wall seconds, the peak RSS of the largest
# process in its tree (RUSAGE_CHILDREN: every descendant waited for) and the tree's CPU seconds.
_WRAP = r"""
import json, resource, subprocess, sys, time
t = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
wall = time.perf_counter() - t
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "rss_mb": use.ru_maxrss / 1024, "cpu": use.ru_utime + use.ru_stime,
                  "rc": proc.returncode, "out": proc.stdout.decode(errors="replace")[-400:],
                  "err": proc.stderr.decode(errors="replace")[-400:]}))
"""

# Where `verity inspect --json` of a CSV spends its time: what the command's process does before it forks
# the reading child, then the child's steps, all in this one process (the child is a fork of it, so the
# steps are the read's path end to end, the fork itself left out). Wall and CPU seconds of the process
# (every thread: Arrow's parse included) per step; a step a checkout does not have is left out.
_PHASES = r"""
import json, pickle, resource, sys, time
steps = []
def timed(name, fn, *args, **kw):
    t, c = time.perf_counter(), time.process_time()
    try:
        return fn(*args, **kw)
    finally:
        steps.append((name, time.perf_counter() - t, time.process_time() - c))
def command():
    import app.cli
    app.cli.build_parser().parse_args(["inspect", "--json", sys.argv[1]])
    import app.ingest.bounded
    from app.config import get_settings
    settings = get_settings()
    pickle.dumps((settings.model_copy(update={"llm_api_key": None}), sys.argv[1]))
    return settings
def imports(settings):
    from app.ingest import child, early_parse
    early_parse.start(sys.argv[1], None, settings)
    early_parse.wait_until_parsing()
    child.import_readers(text=True)
    child.arrow_memory_returned_soon()
t0, c0 = time.perf_counter(), time.process_time()
settings = timed("command: app.cli, settings, request", command)
timed("child: imports (pandas, pyarrow ...)", imports, settings)
from app.ingest import pipeline
def wrap(name, label):
    fn = getattr(pipeline, name, None)
    if fn is not None:
        setattr(pipeline, name, lambda *a, **k: timed(label, fn, *a, **k))
for name, label in [
    ("read_book", "scan, head and layout (read_book)"),
    ("_typed_body", "Arrow parse + typing in blocks"),
    ("extract_table", "extract_table (edges, totals)"),
    ("infer_and_convert", "infer_and_convert (types)"),
    ("detect_pii", "detect_pii"),
    ("duplicate_rows", "duplicate_rows"),
    ("detect_injection", "detect_injection"),
]:
    wrap(name, label)
table = pipeline.load_table(sys.argv[1], settings=settings)
timed("preview, result pickle, JSON", lambda: json.dumps(
    pickle.loads(pickle.dumps({**table.info, "preview": table.preview(20)})), ensure_ascii=False))
steps.append(("total (one process, no fork)", time.perf_counter() - t0, time.process_time() - c0))
print(json.dumps({"steps": steps, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

READERS_CSV = {
    "pandas": "import pandas as pd, sys; pd.read_csv(sys.argv[1], skiprows={skip})",
    "polars": "import polars as pl, sys; pl.read_csv(sys.argv[1], skip_rows={skip})",
    "duckdb": (
        'import duckdb, sys; duckdb.sql("select * from read_csv(\'" + sys.argv[1] + "\', skip={skip})")'
        ".to_arrow_table()"
    ),
}
READERS_XLSX = {
    "pandas+calamine": "import pandas as pd, sys; pd.read_excel(sys.argv[1], engine='calamine', header=2)",
    "polars+calamine": (
        "import polars as pl, sys; pl.read_excel(sys.argv[1], engine='calamine', read_options={{'header_row': 2}})"
    ),
}


# --- the data ---------------------------------------------------------------------------------


def build_csv(rows: int) -> Path:
    """The 20-column sales sheet of bench/ingest.py as a CSV export: a title line, a blank line,
    the header; numbers, ISO dates and timestamps, text that needs cleaning (thousands separators
    in quotes, percentages, zero-padded postcodes), yes/no words and free-text comments."""
    path = CACHE / f"scale_{rows}.csv"
    if path.exists():
        return path
    import numpy as np
    import pandas as pd

    CACHE.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(rows)
    regions = np.array(["East", "West", "North", "South", "Central"])
    stores = np.array([f"Store {i:02d}" for i in range(50)])
    products = np.array([f"Product {i:03d}" for i in range(200)])
    channels = np.array(["online", "shop", "phone"])
    words = np.array("fast delivery good price late broken nice packaging would buy again ok".split())
    units = rng.integers(1, 41, rows)
    price = np.round(rng.uniform(2, 300, rows), 2)
    revenue = np.round(units * price, 2)
    frame = pd.DataFrame(
        {
            "Order ID": [f"ORD-{i:07d}" for i in range(rows)],
            "Date": (np.datetime64("2023-01-01") + rng.integers(0, 700, rows).astype("timedelta64[D]")).astype(str),
            "Region": regions[rng.integers(0, 5, rows)],
            "Store": stores[rng.integers(0, 50, rows)],
            "Product": products[rng.integers(0, 200, rows)],
            "Units": units,
            "Unit Price": price,
            "Revenue": revenue,
            "Cost": np.round(revenue * rng.uniform(0.4, 0.8, rows), 2),
            "Discount": np.round(rng.uniform(0, 0.3, rows), 3),
            "Customer Age": rng.integers(18, 81, rows),
            "Rating": rng.integers(1, 6, rows),
            "Returned": np.where(rng.random(rows) < 0.05, "是", "否"),
            "Channel": channels[rng.integers(0, 3, rows)],
            "Amount (text)": [f"{v:,.2f}" for v in revenue],
            "Share": [f"{v:.1f}%" for v in rng.uniform(0, 100, rows)],
            "Postcode": [f"{v:06d}" for v in rng.integers(0, 100_000, rows)],
            "Comment": [" ".join(words[rng.integers(0, 12, k)]) for k in rng.integers(2, 7, rows)],
            "Latitude": np.round(rng.uniform(20, 45, rows), 6),
            "Updated": (
                np.datetime64("2023-01-01T00:00") + rng.integers(0, 1_000_000, rows).astype("timedelta64[m]")
            ).astype(str),
        }
    )
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as handle:
        handle.write("Sales export\n\n")
        frame.to_csv(handle, index=False)
    tmp.rename(path)
    return path


def build_xlsx(rows: int) -> Path:
    sys.path.insert(0, str(REPO / "bench"))
    from ingest import build  # the same workbook bench/ingest.py reads

    return build(rows)


def build_tall() -> Path:
    """3 MB: a header and 400,000 numbered rows, then a row numbered 104,800,013 (a reader would make
    the sheet that tall); the package is the minimal one tests/test_zip_sizes.py writes."""
    path = CACHE / "tall_104800013.xlsx"
    if path.exists():
        return path
    import zipfile

    ns = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    pkg = "http://schemas.openxmlformats.org/package/2006"
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as package:
        package.writestr(
            "[Content_Types].xml",
            f'<?xml version="1.0"?><Types xmlns="{pkg}/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/xl/workbook.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
            '<Override PartName="/xl/worksheets/sheet1.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>',
        )
        package.writestr(
            "_rels/.rels",
            f'<?xml version="1.0"?><Relationships xmlns="{pkg}/relationships">'
            f'<Relationship Id="rId1" Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        )
        package.writestr(
            "xl/workbook.xml",
            f'<?xml version="1.0"?><workbook xmlns="{ns}" xmlns:r="{rel}"><sheets>'
            '<sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>',
        )
        package.writestr(
            "xl/_rels/workbook.xml.rels",
            f'<?xml version="1.0"?><Relationships xmlns="{pkg}/relationships">'
            f'<Relationship Id="rId1" Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
        )
        with package.open("xl/worksheets/sheet1.xml", "w") as part:
            part.write(f'<?xml version="1.0"?><worksheet xmlns="{ns}"><sheetData>'.encode())
            part.write(b'<row r="1"><c r="A1" t="inlineStr"><is><t>Amount</t></is></c></row>')
            for start in range(2, 400_002, 10_000):
                part.write(
                    "".join(
                        f'<row r="{r}"><c r="A{r}"><v>{r}</v></c></row>' for r in range(start, start + 10_000)
                    ).encode()
                )
            part.write(b'<row r="104800013"><c r="A104800013"><v>1</v></c></row></sheetData></worksheet>')
    tmp.rename(path)
    return path


# --- measuring ----------------------------------------------------------------------------------


def command(tool: str, path: Path) -> list[str]:
    if tool in ("verity", "verity (base)", "verity-refusal"):
        return [sys.executable, "-m", "app.cli", "inspect", "--json", str(path)]
    readers = READERS_XLSX if path.suffix == ".xlsx" else READERS_CSV
    return [sys.executable, "-c", readers[tool].format(skip=TITLE_LINES), str(path)]


def run_once(tool: str, path: Path, env: dict[str, str]) -> dict:
    cwd = REPO
    if tool == "verity (base)":  # the same command in another checkout (--base), for before/after
        cwd = Path(env["VERITY_BASE"])
        env = dict(env, PYTHONPATH=str(cwd))
    proc = subprocess.run(
        [sys.executable, "-c", _WRAP, *command(tool, path)], capture_output=True, text=True, cwd=cwd, env=env
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(tools: list[str], path: Path, rounds: int, env: dict[str, str]) -> dict[str, dict]:
    """Median wall and CPU, largest peak RSS, per tool; the tools take turns within each round."""
    runs: dict[str, list[dict]] = {tool: [] for tool in tools}
    for _ in range(rounds):
        for tool in tools:
            one = run_once(tool, path, env)
            if one["rc"] != 0 and tool != "verity-refusal":
                print(f"  {tool} failed on {path.name}: {one['err'].strip().splitlines()[-1:]}", file=sys.stderr)
            runs[tool].append(one)
    return {
        tool: {
            "wall": statistics.median(r["wall"] for r in rs),
            "cpu": statistics.median(r["cpu"] for r in rs),
            "rss_mb": max(r["rss_mb"] for r in rs),
            "walls": [round(r["wall"], 2) for r in rs],
            "ok": all(r["rc"] == 0 for r in rs),
            "out": rs[-1]["out"] + rs[-1]["err"],
        }
        for tool, rs in runs.items()
    }


def fit(sizes: list[int], values: list[float]) -> tuple[float, float]:
    """Least squares value = fixed + per_row * rows: (fixed, per_row)."""
    n = len(sizes)
    if n < 2:
        return values[0], 0.0
    mx, my = sum(sizes) / n, sum(values) / n
    sxx = sum((x - mx) ** 2 for x in sizes)
    per_row = sum((x - mx) * (y - my) for x, y in zip(sizes, values)) / sxx if sxx else 0.0
    return my - per_row * mx, per_row


def table(kind: str, sizes: list[int], tools: list[str], build, rounds: int, env: dict[str, str]) -> dict:
    header = f"{'file':<22} {'MB':>6} {'tool':<16} {'wall s':>7} {'cpu s':>7} {'peak MB':>8} {'vs polars':>10}  runs"
    print(header)
    print("-" * len(header))
    results: dict[int, dict] = {}
    for rows in sizes:
        path = build(rows)
        size_mb = path.stat().st_size / 1e6
        res = measure(tools, path, rounds, env)
        results[rows] = {"size_mb": size_mb, "tools": res}
        base = res.get("polars") or res.get("polars+calamine")
        for tool, r in res.items():
            ratio = f"{r['wall'] / base['wall']:.2f}x" if base else "-"
            label = f"{kind} {rows:,} rows"
            print(
                f"{label:<22} {size_mb:>6.1f} {tool:<16} {r['wall']:>7.2f} {r['cpu']:>7.2f} {r['rss_mb']:>8.0f} "
                f"{ratio:>10}  {', '.join(f'{w:.2f}' for w in r['walls'])}{'' if r['ok'] else '  FAILED'}"
            )
    if len(sizes) > 1:
        print("\nfitted growth (least squares over the sizes): fixed cost + cost per row")
        for tool in tools:
            fixed, per_row = fit(sizes, [results[s]["tools"][tool]["wall"] for s in sizes])
            mfixed, mper = fit(sizes, [results[s]["tools"][tool]["rss_mb"] for s in sizes])
            print(
                f"  {tool:<16} {fixed:6.2f} s + {per_row * 1e6:6.2f} us/row     "
                f"{mfixed:6.0f} MB + {mper * 1e6:7.1f} bytes/row"
            )
    print()
    return results


def phases(path: Path, checkouts: list[str], rounds: int, env: dict[str, str]) -> None:
    """`_PHASES` for each checkout (this one, and --base), taking turns round by round; medians."""
    runs: dict[str, list[dict]] = {c: [] for c in checkouts}
    for _ in range(rounds):
        for checkout in checkouts:
            cwd = Path(env["VERITY_BASE"]) if checkout == "verity (base)" else REPO
            proc = subprocess.run(
                [sys.executable, "-c", _PHASES, str(path)],
                capture_output=True,
                text=True,
                cwd=cwd,
                env=dict(env, PYTHONPATH=str(cwd)),
            )
            runs[checkout].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    names = list(dict.fromkeys(step[0] for run in runs[checkouts[0]] for step in run["steps"]))
    print(f"where inspect's time goes, {path.name}: wall / CPU seconds, median of {rounds} (one process, no fork)")
    print(f"{'step':<40}" + "".join(f"{c:>20}" for c in checkouts))
    for name in names:
        cells = []
        for checkout in checkouts:
            walls = [sum(s[1] for s in run["steps"] if s[0] == name) for run in runs[checkout]]
            cpus = [sum(s[2] for s in run["steps"] if s[0] == name) for run in runs[checkout]]
            cells.append(f"{statistics.median(walls):>11.2f} / {statistics.median(cpus):5.2f}")
        print(f"{name:<40}" + "".join(f"{cell:>20}" for cell in cells))
    print(f"{'peak MB':<40}" + "".join(f"{max(r['peak_mb'] for r in runs[c]):>20.0f}" for c in checkouts))
    print()


def verdicts(csv: dict | None, xlsx: dict | None, tall: dict | None) -> list[str]:
    lines = []
    if csv:
        rows = max(csv)
        r = csv[rows]
        v, p = r["tools"]["verity"], r["tools"]["polars"]
        ratio = v["wall"] / p["wall"]
        lines.append(
            f"{'PASS' if ratio <= 2.0 else 'FAIL'}  CSV {rows:,} rows: inspect {v['wall']:.2f} s = {ratio:.2f}x polars' "
            f"{p['wall']:.2f} s (target <= 2x; CPU {v['cpu']:.2f} s vs {p['cpu']:.2f} s)"
        )
        mem = v["rss_mb"] / r["size_mb"]
        if rows < 1_000_000:
            lines.append(f"      (the targets are set at 1,000,000 rows; this run's largest is {rows:,})")
        lines.append(
            f"{'PASS' if mem <= 3.0 else 'FAIL'}  CSV {rows:,} rows: peak {v['rss_mb']:.0f} MB = {mem:.2f}x the "
            f"file's {r['size_mb']:.0f} MB (target <= 3x)"
        )
    if xlsx:
        rows = max(xlsx)
        r = xlsx[rows]
        v, p = r["tools"]["verity"], r["tools"]["polars+calamine"]
        ratio = v["wall"] / p["wall"]
        lines.append(
            f"{'PASS' if ratio <= 1.0 else 'FAIL'}  xlsx {rows:,} rows: inspect {v['wall']:.2f} s = {ratio:.2f}x "
            f"polars+calamine's {p['wall']:.2f} s (target <= 1.0x)"
        )
    if tall:
        refused = "too_large" in tall["out"]
        good = refused and tall["cpu"] <= 1.0
        lines.append(
            f"{'PASS' if good else 'FAIL'}  3 MB xlsx claiming 104,800,013 rows: "
            f"{'refused as too_large' if refused else 'NOT refused'} in {tall['wall']:.2f} s wall, "
            f"{tall['cpu']:.2f} s CPU, {tall['rss_mb']:.0f} MB (target: refused, <= 1 s CPU)"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, action="append", help="row counts (default 10k, 100k, 1M)")
    ap.add_argument("--rounds", type=int, default=3, help="fresh-process runs per tool and size (median shown)")
    ap.add_argument("--xlsx", action="store_true", help="also the workbook table (building 1M rows takes minutes)")
    ap.add_argument("--xlsx-only", action="store_true", help="the workbook table (and the refusal) without the CSV one")
    ap.add_argument("--base", type=Path, help="another checkout (e.g. main before a change): its inspect as a row too")
    ap.add_argument("--phases", action="store_true", help="where the largest CSV's inspect spends its time, per step")
    args = ap.parse_args(argv)
    sizes = sorted(args.rows or SIZES)
    env = dict(os.environ, PYTHONPATH=str(REPO), VERITY_DATA_DIR=tempfile.mkdtemp(prefix="verity-scale-"))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.1f}; files in {CACHE}\n")
    base = []
    if args.base:
        env["VERITY_BASE"] = str(args.base.resolve())
        base = ["verity (base)"]
    csv = None
    if not args.xlsx_only:
        csv = table("CSV", sizes, ["verity", *base, "pandas", "polars", "duckdb"], build_csv, args.rounds, env)
        if args.phases:
            phases(build_csv(sizes[-1]), ["verity", *base], args.rounds, env)
    xlsx = None
    if args.xlsx or args.xlsx_only:
        tools = ["verity", *base, "pandas+calamine", "polars+calamine"]
        xlsx = table("xlsx", sizes, tools, build_xlsx, args.rounds, env)
    tall = measure(["verity-refusal"], build_tall(), args.rounds, env)["verity-refusal"]
    for line in verdicts(csv, xlsx, tall):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
