"""Lint and type checks against a baseline that only shrinks.

    python .ci/baseline.py ruff            # fail when a file has more findings of a rule than the baseline
    python .ci/baseline.py mypy            # the same for mypy's error codes
    python .ci/baseline.py ruff --update   # write the baseline again, never letting a count grow
    python .ci/baseline.py mypy --update --accept-new   # also take in new findings (see below)

The tree had findings before the checks existed; they are recorded in .ci/baseline/{ruff,mypy}.json
as counts per (file, rule) — counts, not line numbers, so code that moves within a file (or is
edited around) does not trip the check, while a new finding of a rule in a file does. The check
prints what it found for each (file, rule) that grew. Fix the new finding (the usual answer), or,
when the finding is deliberate, add a `# noqa: RULE` / `# type: ignore[code]` with the reason.

`--update` lowers the counts after findings were fixed (the check says when it can). It refuses a
count that grows; `--accept-new` overrides that, for the cases where the findings did not really
grow: code moved to another file, or a file renamed. Say why in the commit message.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE_DIR = ROOT / ".ci" / "baseline"
MYPY_LINE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?:\d+:)? error: (?P<message>.*?)\s+\[(?P<code>[a-z-]+)\]$")

Finding = tuple[str, str, str]  # file, rule, "line: message"


def ruff_findings() -> list[Finding]:
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--output-format", "json", "--no-fix", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"ruff failed to run:\n{proc.stderr}")
    found = []
    for item in json.loads(proc.stdout or "[]"):
        path = Path(item["filename"]).resolve().relative_to(ROOT).as_posix()
        found.append((path, item["code"] or "syntax", f"{item['location']['row']}: {item['message']}"))
    return found


def mypy_findings() -> list[Finding]:
    # the files and options are in pyproject.toml ([tool.mypy])
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--no-pretty",
            "--show-error-codes",
            "--no-error-summary",
            "--show-column-numbers",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"mypy failed to run:\n{proc.stdout}\n{proc.stderr}")
    found = []
    for line in proc.stdout.splitlines():
        match = MYPY_LINE.match(line.strip())
        if match:
            found.append((Path(match["file"]).as_posix(), match["code"], f"{match['line']}: {match['message']}"))
    return found


TOOLS = {"ruff": ruff_findings, "mypy": mypy_findings}


def counts(findings: list[Finding]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (path, rule), n in sorted(Counter((f, r) for f, r, _ in findings).items()):
        out.setdefault(path, {})[rule] = n
    return out


def grown(current: dict[str, dict[str, int]], baseline: dict[str, dict[str, int]]) -> list[tuple[str, str, int, int]]:
    return [
        (path, rule, n, baseline.get(path, {}).get(rule, 0))
        for path, rules in current.items()
        for rule, n in rules.items()
        if n > baseline.get(path, {}).get(rule, 0)
    ]


def shrunk(current: dict[str, dict[str, int]], baseline: dict[str, dict[str, int]]) -> int:
    return sum(
        max(0, n - current.get(path, {}).get(rule, 0)) for path, rules in baseline.items() for rule, n in rules.items()
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tool", choices=sorted(TOOLS))
    parser.add_argument("--update", action="store_true", help="write the baseline (counts may only go down)")
    parser.add_argument("--accept-new", action="store_true", help="with --update: let counts grow (moved code)")
    args = parser.parse_args(argv)
    path = BASELINE_DIR / f"{args.tool}.json"
    baseline = json.loads(path.read_text()) if path.exists() else {}
    findings = TOOLS[args.tool]()
    current = counts(findings)
    more = grown(current, baseline)
    total, base_total = len(findings), sum(sum(r.values()) for r in baseline.values())
    if args.update:
        if more and not args.accept_new:
            report_growth(args.tool, more, findings)
            print("not written: counts may only go down (--accept-new for moved code; see the docstring)")
            return 1
        BASELINE_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
        print(f"{args.tool}: baseline written, {total} finding(s) (was {base_total})")
        return 0
    if more:
        report_growth(args.tool, more, findings)
        return 1
    fixed = shrunk(current, baseline)
    print(
        f"{args.tool}: {total} finding(s), none beyond the baseline ({base_total})"
        + (f"; {fixed} fixed — run `python .ci/baseline.py {args.tool} --update` to lock that in" if fixed else "")
    )
    return 0


def report_growth(tool: str, more: list[tuple[str, str, int, int]], findings: list[Finding]) -> None:
    print(f"{tool}: new findings beyond the baseline (.ci/baseline/{tool}.json):")
    for path, rule, n, allowed in more:
        print(f"  {path} {rule}: {n} (baseline {allowed})")
        for where in sorted((w for f, r, w in findings if (f, r) == (path, rule)), key=lambda w: int(w.split(":")[0])):
            print(f"    {path}:{where}")


if __name__ == "__main__":
    sys.exit(main())
