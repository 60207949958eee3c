"""run_python latency: a warm, pre-imported parent per workspace vs a fresh sandboxed process.

    python bench/sandbox.py [--fresh 3] [--warm 20] [--mode auto]

"fresh" starts a new sandbox (same isolation, same pre-imports: pandas, numpy, scipy,
statsmodels, sklearn, matplotlib) and runs the same code in it, which is what every call would
cost without the warm parent. Target: the warm trivial call is at least 20x faster.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sandbox import LaunchSpec, Limits, SandboxPool, detect_isolation  # noqa: E402

TRIVIAL = "print(1 + 1)"
GROUPBY = ("out = big.groupby(['region', 'product'])['revenue'].agg(['sum', 'mean', 'count'])\n"
           "print(out.shape, round(float(out['sum'].sum()), 2))")


def dataset(folder: Path, rows: int = 100_000) -> Path:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"region": rng.choice(["north", "south", "east", "west"], rows),
                          "product": rng.choice([f"p{i}" for i in range(50)], rows),
                          "revenue": rng.gamma(2.0, 50.0, rows).round(2), "units": rng.integers(1, 20, rows)})
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fresh", type=int, default=3, help="fresh sandboxes per case")
    parser.add_argument("--warm", type=int, default=20, help="warm calls per case")
    parser.add_argument("--mode", default="auto", help="sandbox mode: auto, bwrap, unshare, unsafe")
    args = parser.parse_args()
    isolation = detect_isolation(args.mode)
    if not isolation.available:
        raise SystemExit(f"no sandbox: {isolation.reason}")
    root = Path(tempfile.mkdtemp(prefix="verity-bench-sandbox-"))
    data = {"big": dataset(root)}
    spec = LaunchSpec("bench", root / "files", root / "scratch", mode=args.mode)
    rows = []
    warm_pool = SandboxPool()
    try:
        timed(warm_pool, spec, TRIVIAL, data)  # start the warm parent (not measured)
        for name, code in (("trivial call", TRIVIAL), ("100k-row groupby", GROUPBY)):
            warm = [timed(warm_pool, spec, code, data) for _ in range(args.warm)]
            fresh = []
            for _ in range(args.fresh):
                pool = SandboxPool()
                try:
                    other = LaunchSpec(f"bench-fresh-{name[:3]}-{len(fresh)}", spec.data_root,
                                       root / f"scratch-fresh-{name[:3]}-{len(fresh)}", mode=args.mode)
                    fresh.append(timed(pool, other, code, data))
                finally:
                    pool.close()
            rows.append((name, statistics.median(warm), statistics.median(fresh)))
    finally:
        warm_pool.close()
    print(f"isolation: {isolation.kind}; median of {args.warm} warm calls and {args.fresh} fresh sandboxes")
    print(f"{'case':<20} {'warm (ms)':>10} {'fresh (ms)':>11} {'fresh/warm':>11}")
    for name, warm, fresh in rows:
        print(f"{name:<20} {warm * 1000:>10.1f} {fresh * 1000:>11.1f} {fresh / warm:>10.1f}x")
    trivial = rows[0]
    verdict = "OK" if trivial[2] / trivial[1] >= 20 else "BELOW TARGET"
    print(f"target: warm trivial call >= 20x faster than a fresh sandboxed process: {verdict}")


if __name__ == "__main__":
    main()
