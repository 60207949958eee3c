"""run_python and file reading under their resource bounds, in one run: three tables.

    python bench/sandbox.py [--fresh 3] [--warm 20] [--mode auto] [--workspaces 1,10,50]
                            [--max-warm 8] [--upload-mb 190] [--uploads 4] [--skip-uploads]

1. Latency: a warm, pre-imported parent per workspace vs a fresh sandboxed process (same
   isolation, same pre-imports: pandas, numpy, scipy, statsmodels, sklearn, matplotlib), which is
   what every call would cost without the warm parent. Target: the warm trivial call is at least
   50x faster.
2. Memory: the PSS of all warm sandboxes after a call in each of N workspaces (N = 1, 10, 50),
   with the cap in force (`sandbox_max_warm`, `sandbox_warm_memory_mb`), and without a cap for
   comparison (small N only: uncapped, 50 sandboxes would hold ~10 GB).
3. Uploads: the peak RSS of the reading processes while several big single-line CSV uploads are
   read at once, for read budgets of 1, 2 and 4 reads (`parse_total_memory_mb` //
   `parse_memory_mb`): the peak follows the budget, not the number of uploads.

The numbers are ratios against a baseline measured in the same run; on a busy machine they are
noisy (repeat, and read the ratios).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.config import Settings
from app.ingest.bounded import load_table_bounded
from app.ingest.errors import IngestError
from app.ingest.readserver import read_server
from sandbox import LaunchSpec, Limits, SandboxPool, detect_isolation
from sandbox.procs import children_of, tree

TRIVIAL = "print(1 + 1)"
GROUPBY = (
    "out = big.groupby(['region', 'product'])['revenue'].agg(['sum', 'mean', 'count'])\n"
    "print(out.shape, round(float(out['sum'].sum()), 2))"
)


def dataset(folder: Path, rows: int = 100_000) -> Path:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "region": rng.choice(["north", "south", "east", "west"], rows),
            "product": rng.choice([f"p{i}" for i in range(50)], rows),
            "revenue": rng.gamma(2.0, 50.0, rows).round(2),
            "units": rng.integers(1, 20, rows),
        }
    )
    path = folder / "files" / "d1" / "working_v1.parquet"
    path.parent.mkdir(parents=True)
    frame.to_parquet(path)
    return path


def timed(pool: SandboxPool, spec: LaunchSpec, code: str, data: dict) -> float:
    started = time.perf_counter()
    outcome = pool.run(spec, code, data, Limits())
    elapsed = time.perf_counter() - started
    if not outcome.ok:
        raise SystemExit(f"bench call failed: {outcome.error}")
    return elapsed


# --- 1. latency -----------------------------------------------------------------------------------
def latency(root: Path, mode: str, warm_n: int, fresh_n: int) -> list[tuple[str, float, float]]:
    data = {"big": dataset(root)}
    spec = LaunchSpec("bench", root / "files", root / "scratch", mode=mode)
    rows = []
    warm_pool = SandboxPool()
    try:
        timed(warm_pool, spec, TRIVIAL, data)  # start the warm parent (not measured)
        for name, code in (("trivial call", TRIVIAL), ("100k-row groupby", GROUPBY)):
            warm = [timed(warm_pool, spec, code, data) for _ in range(warm_n)]
            fresh = []
            for _ in range(fresh_n):
                pool = SandboxPool()
                try:
                    other = LaunchSpec(
                        f"bench-fresh-{name[:3]}-{len(fresh)}",
                        spec.data_root,
                        root / f"scratch-fresh-{name[:3]}-{len(fresh)}",
                        mode=mode,
                    )
                    fresh.append(timed(pool, other, code, data))
                finally:
                    pool.close()
            rows.append((name, statistics.median(warm), statistics.median(fresh)))
    finally:
        warm_pool.close()
    return rows


# --- 2. memory of many workspaces ---------------------------------------------------------------
def warm_memory(root: Path, mode: str, counts: list[int], max_warm: int, memory_mb: int) -> list[tuple]:
    rows = []
    for capped in (True, False):
        limit = max(counts) if capped else min(max(counts), 10)
        pool = SandboxPool(max_warm=max_warm if capped else 10_000, memory_mb=memory_mb if capped else 10**9)
        try:
            done = 0
            for n in sorted(c for c in counts if c <= limit):
                while done < n:
                    spec = LaunchSpec(f"bench-ws{done}", root / "files", root / f"scratch-ws{done}", mode=mode)
                    timed(pool, spec, TRIVIAL, {})
                    done += 1
                pool.enforce_memory()
                stats = pool.stats()
                processes = sum(len(tree(p.proc.pid)) for p in list(pool.parents.values()))
                rows.append(("cap" if capped else "no cap", n, stats["warm"], processes, stats["memory_mb"]))
        finally:
            pool.close()
    return rows


# --- 3. concurrent uploads ----------------------------------------------------------------------
def single_line_csv(folder: Path, mb: int) -> Path:
    path = folder / f"one_line_{mb}mb.csv"
    chunk = b"12345.678," * 100_000  # 1 MB, no newline anywhere
    with open(path, "wb") as handle:
        for _ in range(mb):
            handle.write(chunk)
    return path


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as handle:
            return next(int(line.split()[1]) for line in handle if line.startswith("VmRSS:")) / 1024
    except (OSError, StopIteration, ValueError):
        return 0.0


def uploads(root: Path, path: Path, count: int, budgets: list[int], parse_mb: int) -> list[tuple]:
    server = read_server()  # started once, outside the measurement
    rows = []
    for reads in budgets:
        settings = Settings(
            _env_file=None,
            data_dir=root / f"runtime-{reads}",
            parse_memory_mb=parse_mb,
            parse_total_memory_mb=parse_mb * reads,
        )
        outcomes: list[str] = []

        def read(settings: Settings = settings, outcomes: list[str] = outcomes) -> None:
            try:
                load_table_bounded(path, settings=settings)
                outcomes.append("read")
            except IngestError as exc:
                outcomes.append(exc.category)

        threads = [threading.Thread(target=read) for _ in range(count)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        peak, most = 0.0, 0
        while any(t.is_alive() for t in threads):
            children = children_of(server.process.pid)
            peak = max(peak, sum(_rss_mb(c) for c in children))
            most = max(most, len(children))
            time.sleep(0.02)
        rows.append((reads, count, most, peak, time.perf_counter() - started, sorted(set(outcomes))))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fresh", type=int, default=3, help="fresh sandboxes per case")
    parser.add_argument("--warm", type=int, default=20, help="warm calls per case")
    parser.add_argument("--mode", default="auto", help="sandbox mode: auto, bwrap, unshare, unsafe")
    parser.add_argument("--workspaces", default="1,10,50", help="numbers of workspaces for the memory table")
    parser.add_argument("--max-warm", type=int, default=Settings(_env_file=None).sandbox_max_warm)
    parser.add_argument("--warm-memory-mb", type=int, default=Settings(_env_file=None).sandbox_warm_memory_mb)
    parser.add_argument("--upload-mb", type=int, default=190)
    parser.add_argument("--uploads", type=int, default=4)
    parser.add_argument("--parse-memory-mb", type=int, default=Settings(_env_file=None).parse_memory_mb)
    parser.add_argument("--skip-uploads", action="store_true")
    args = parser.parse_args()
    isolation = detect_isolation(args.mode)
    if not isolation.available:
        raise SystemExit(f"no sandbox: {isolation.reason}")
    root = Path(tempfile.mkdtemp(prefix="verity-bench-sandbox-"))

    rows = latency(root, args.mode, args.warm, args.fresh)
    print(
        f"1. run_python latency; isolation: {isolation.kind}; median of {args.warm} warm calls and "
        f"{args.fresh} fresh sandboxes"
    )
    print(f"{'case':<20} {'warm (ms)':>10} {'fresh (ms)':>11} {'fresh/warm':>11}")
    for name, warm, fresh in rows:
        print(f"{name:<20} {warm * 1000:>10.1f} {fresh * 1000:>11.1f} {fresh / warm:>10.1f}x")
    verdict = "OK" if rows[0][2] / rows[0][1] >= 50 else "BELOW TARGET"
    print(f"target: warm trivial call >= 50x faster than a fresh sandboxed process: {verdict}\n")

    counts = [int(n) for n in args.workspaces.split(",")]
    memory = warm_memory(root, args.mode, counts, args.max_warm, args.warm_memory_mb)
    print(
        f"2. warm sandboxes after one call in each of N workspaces (cap: {args.max_warm} sandboxes, "
        f"{args.warm_memory_mb} MB)"
    )
    print(f"{'pool':<8} {'N':>4} {'warm':>5} {'processes':>10} {'PSS (MB)':>9}")
    for kind, n, warm, processes, pss in memory:
        print(f"{kind:<8} {n:>4} {warm:>5} {processes:>10} {pss:>9.0f}")
    print()

    if args.skip_uploads:
        return
    path = single_line_csv(root, args.upload_mb)
    results = uploads(root, path, args.uploads, [1, 2, args.uploads], args.parse_memory_mb)
    print(
        f"3. {args.uploads} concurrent {args.upload_mb} MB single-line CSV uploads (parse_memory_mb "
        f"{args.parse_memory_mb}; the budget allows this many reads at once)"
    )
    print(f"{'reads at once':>13} {'uploads':>8} {'readers seen':>13} {'peak RSS (MB)':>14} {'time (s)':>9}  outcome")
    for reads, count, most, peak, seconds, outcome in results:
        print(f"{reads:>13} {count:>8} {most:>13} {peak:>14.0f} {seconds:>9.1f}  {', '.join(outcome)}")


if __name__ == "__main__":
    main()
