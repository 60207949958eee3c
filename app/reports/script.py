"""analysis.py: a script that re-runs every analysis tool call of a report on the uploaded data, the
analysis' own Python code (run_python) included (`app.reports.rerun_python`).

    python analysis.py                      # the files beside the script (or where Verity stored them)
    python analysis.py sales.xlsx other.csv # other copies, in the order of DATASETS

It ends by comparing every number of the report's evidence with the numbers its cited calls re-computed,
by value, with the claim check's rule (`app.numbers.reported_value_matches`) (✓/✗). The server runs it
only inside the run_python sandbox (`app.reports.reproduce`).
"""

from __future__ import annotations

import math
import pprint
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypedDict

from app.reports.builder import is_harness_tool
from app.translations import CATALOG

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


class ScriptSource(TypedDict):
    """One dataset as analysis.py's DATASETS lists it."""

    name: str
    file: str
    sheet: str | None
    original_path: str


def dataset_sources(datasets: Iterable[Any], session: Session | None = None) -> list[dict[str, Any]]:
    """`to_analysis_script`'s datasets from Dataset rows (the workspace's active datasets). With the
    `session`, each with the sheet its upload was first read from: a run that turned to another sheet
    (select_sheet) is re-run from the same start, and analysis.py turns to it where the run did."""
    from app.workspaces import lineage_root

    out, seen = [], set()
    for d in datasets:
        if d.name in seen:
            continue
        seen.add(d.name)
        sheet = lineage_root(session, d).sheet if session is not None else d.sheet
        out.append({"name": d.name, "file": d.file_name, "sheet": sheet, "original_path": d.original_path})
    return out


def _comment(text: str) -> str:
    return "\n".join("#   " + line for line in str(text or "").splitlines()) or "#"


def _one_line(text: Any) -> str:
    """Text for the rest of a comment line: every character Python may end a line at (\\r alone, form
    feeds, and what str.splitlines knows) becomes a space, so an uploaded file's name cannot start code."""
    return " ".join(str(text or "").splitlines()).replace("\x0c", " ")


def _literal(value: Any) -> str:
    return pprint.pformat(value, width=100, sort_dicts=False)


_BODY = """

def _find(source: dict[str, Any], given: str | None, index: int) -> Path:
    \"\"\"The data file: the path given, else a file of the same name beside this script or in the current
    folder, else where Verity stored the upload.\"\"\"
    if given:
        return Path(given)
    candidates = [HERE / source["file"], Path.cwd() / source["file"]]
    if source["original_path"]:
        candidates.append(Path(source["original_path"]))
    for path in candidates:
        if source["file"] and path.is_file():
            return path
    tried = ", ".join(str(p) for p in candidates)
    sys.exit(f"error: data file {source['file']!r} not found (looked at: {tried}).\\n"
             f"Put it beside analysis.py, or pass its path: python analysis.py PATH (argument {index + 1}).")


def _load(paths: list[str], working: dict[str, str]) -> dict[str, Any]:
    \"\"\"Read each uploaded file with Verity's reader (the same cleaning as in the app). `working` (from
    `--working NAME PATH`, given by Verity's own check): the table as Verity's reader already made it
    (its Parquet working copy), read instead of the upload.\"\"\"
    frames: dict[str, Any] = {}
    for i, source in enumerate(DATASETS):
        if source["name"] in working:
            path = Path(working[source["name"]])
            frames[source["name"]] = read_working_copy(path)
        else:
            path = _find(source, paths[i] if i < len(paths) else None, i)
            frames[source["name"]] = load_table(path, sheet=source["sheet"]).frame
        print(f"loaded {source['name']}: {path} ({len(frames[source['name']])} rows)")
    return frames


def _sheet(name: str, sheet: str, paths: list[str], working: dict[str, str]) -> Any:
    \"\"\"Another sheet of a dataset's upload, as select_sheet read it in the run: its working copy where
    Verity's check gave it (`--working NAME@SHEET PATH`), else the upload read again at that sheet.\"\"\"
    if f"{name}@{sheet}" in working:
        path = Path(working[f"{name}@{sheet}"])
        frame = read_working_copy(path)
    else:
        index, source = next((i, s) for i, s in enumerate(DATASETS) if s["name"] == name)
        path = _find(source, paths[index] if index < len(paths) else None, index)
        frame = load_table(path, sheet=sheet).frame
    print(f"loaded {name}, sheet {sheet}: {path} ({len(frame)} rows)")
    return frame


def _call(tool: str, data: Any, arguments: dict[str, Any], source: str | None) -> Any:
    ctx = ToolContext(language=LANGUAGE, figures_dir=FIGURES)
    if source is not None and data is not None and not isinstance(data, dict):
        ctx.datasets, ctx.dataset_name = {source: data}, source  # as the run named it
    reserved = {"name", "data", "ctx", "language", "figures_dir"} & set(arguments)
    if not reserved:
        return run_tool(tool, data, ctx=ctx, **arguments)
    spec = REGISTRY.get(tool)  # an argument shadows run_tool's own parameters: call the tool directly
    kwargs = {k: v for k, v in arguments.items() if k != "dataset"}
    if spec is not None and spec.needs_data:
        kwargs["data"] = data
    return spec.func(ctx=ctx, **kwargs) if "ctx" in inspect.signature(spec.func).parameters else spec.func(**kwargs)


def _rerun(
    frames: dict[str, Any], reuse_profiles: bool = False, paths: list[str] | None = None,
    working: dict[str, str] | None = None,
) -> tuple[dict[str, list[float]], dict[str, list[float]], int, int]:
    \"\"\"Re-run every call. Returns the numbers each call re-computed (its text, interpretation and metrics)
    and the numbers of its inputs (its arguments; run_python's code is not an input) by call id, and how
    many calls failed and how many were not re-run. `reuse_profiles` (Verity's own check, `--reuse-profiles`): a data profile that no
    number of the report rests on is the run's own, not computed again (it makes no table; a million-row
    profile takes seconds); a profile a number cites is re-computed like every other call.\"\"\"
    active = DATASETS[-1]["name"] if DATASETS else None
    paths, working = paths or [], working or {}
    cited = {c for _label, call_ids, _key, _value in REPORT_NUMBERS for c in call_ids}
    computed: dict[str, list[float]] = {}
    inputs: dict[str, list[float]] = {}
    failures = reused = 0
    for call_id, tool, arguments in CALLS:
        if reuse_profiles and tool in PROFILES and call_id not in cited:
            print(f"\\n=== {call_id}: {tool} ({TEXT['profile_reused']})")
            reused += 1
            continue
        if tool == "select_sheet":  # the run turned to another sheet of the upload: so does this re-run
            name = str(arguments.get("dataset") or active)
            look = ", preview=True" if arguments.get("preview") else ""
            print(f"\\n=== {call_id}: select_sheet(sheet={arguments.get('sheet')!r}, dataset={name!r}{look})")
            sheet = _sheet(name, str(arguments.get("sheet")), paths, working)
            if not arguments.get("preview"):  # a preview only looked at the sheet: the table stays
                frames[name] = sheet
            computed[call_id] = [float(len(sheet)), float(len(sheet.columns))]
            continue
        if tool == "run_python":  # the model's own code, run as run_python ran it (shown here first)
            print(f"\\n=== {call_id}: run_python, code:\\n" + "\\n".join("    " + line for line in
                                                                        str(arguments.get("code", "")).splitlines()))
            result = run_python_again(call_id, str(arguments.get("code", "")), frames, FIGURES)
        else:
            spec = REGISTRY.get(tool)
            data = frames if spec is not None and spec.multi_data else frames.get(arguments.get("dataset") or active)
            shown = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
            print(f"\\n=== {call_id}: {tool}({shown})")
            result = _call(tool, data, dict(arguments), str(arguments.get("dataset") or active))
        if not result.ok:
            failures += 1
            print(f"[failed] {result.error}")
            continue
        computed[call_id] = backing_values([result.text, result.interpretation], [dict(result.metrics)])
        inputs[call_id] = backing_values([], [{k: v for k, v in arguments.items() if k != "code"}])
        print(result.text)
        if result.interpretation and result.interpretation not in result.text:  # most tools' text holds it
            print(result.interpretation)
        for figure in result.figures:
            print(f"[figure] {figure}")
        # the name the run stored the call's table under: a kept subset (`retail_sales_online`), a renamed
        # or new table, or a new version of the source itself (analysis_tools.tables.table_name)
        source = str(arguments.get("dataset") or active)
        derived = (
            arguments.get("output_name")
            or arguments.get("new_name")
            or table_name(source, tool, str(arguments.get("output") or ""))
            or (result.payload or {}).get("dataset_name")
        )
        if result.table is not None and derived:
            frames[str(derived)] = result.table
    return computed, inputs, failures, reused


def _compare(computed: dict[str, list[float]], inputs: dict[str, list[float]]) -> tuple[int, int, int]:
    \"\"\"Every number of the report's evidence against the numbers its cited calls re-computed, by value
    (✓/✗), with the claim check's rule (app.numbers.reported_value_matches): the same at the precision the
    report gives (36.65 is 36.6492 re-computed; 36.75 is not). A number that only an input of the call
    holds (a threshold) is marked as such. Returns (matched, differing, not re-computed).\"\"\"
    print(f"\\n=== {TEXT['compare']}")
    matched = differing = missing = 0
    for label, call_ids, key, reported in REPORT_NUMBERS:
        rerun = [c for c in call_ids if c in computed]
        if not rerun:
            missing += 1
            print(f"  -  {label} {key}: {reported!r} ({TEXT['not_recomputed']})")
        elif any(reported_value_matches(reported, computed[c]) for c in rerun):
            matched += 1
            print(f"  ✓  {label} {key}: {reported!r}")
        elif any(reported_value_matches(reported, inputs[c]) for c in rerun):
            matched += 1
            print(f"  ✓  {label} {key}: {reported!r} ({TEXT['an_input']})")
        else:
            differing += 1
            closest = _closest(reported, [v for c in rerun for v in computed[c]])
            print(f"  ✗  {label} {key}: {TEXT['report']} {reported!r}, {TEXT['rerun']} {closest}")
    return matched, differing, missing


def _closest(reported: float, values: list[float]) -> str:
    \"\"\"The re-computed number nearest to the reported one (what the reader compares by eye).\"\"\"
    if not values:
        return "-"
    return repr(min(values, key=lambda v: abs(abs(v) - abs(reported))))


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv[1:])
    summary_file = None
    if "--summary" in args:  # used by `verity analyze`: where to write the outcome as JSON
        at = args.index("--summary")
        summary_file = Path(args[at + 1])
        del args[at:at + 2]
    summary_fd = None
    if "--summary-fd" in args:  # used by the server: a pipe it opened, which the re-run code never holds
        at = args.index("--summary-fd")
        summary_fd = int(args[at + 1])
        del args[at:at + 2]
        PARENT_ONLY_FDS.add(summary_fd)
    working: dict[str, str] = {}
    while "--working" in args:  # used by `verity analyze`: a dataset's working copy, --working NAME PATH
        at = args.index("--working")
        working[args[at + 1]] = args[at + 2]
        del args[at:at + 3]
    reuse_profiles = "--reuse-profiles" in args  # used by `verity analyze` (see _rerun)
    if reuse_profiles:
        args.remove("--reuse-profiles")
    computed, inputs, failures, reused = _rerun(_load(args, working), reuse_profiles, args, working)
    matched, differing, missing = _compare(computed, inputs)
    passed = failures == 0 and differing == 0 and matched > 0
    print(f"\\n{len(CALLS) - failures - reused} of {len(CALLS)} tool calls re-run.")
    print(TEXT["passed" if passed else "failed"].format(matched=matched, total=matched + differing,
                                                        missing=missing, failures=failures))
    summary = json.dumps({"status": "passed" if passed else "failed", "matched": matched, "differing": differing,
                          "not_recomputed": missing, "failed_calls": failures})
    if summary_file is not None:
        summary_file.write_text(summary, encoding="utf-8")
    if summary_fd is not None:
        os.write(summary_fd, summary.encode("utf-8"))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
"""

# What analysis.py prints around the comparison, from the catalog's `script.` entries
_TEXT = {
    lang: {k.removeprefix("script."): v[lang] for k, v in CATALOG.items() if k.startswith("script.")}
    for lang in ("en", "zh")
}


def report_numbers(report: dict[str, Any]) -> list[tuple[str, list[str], str, float]]:
    """(evidence label, its tool call ids, metric name, value) for every number of the report's evidence."""
    out = []
    for n, item in enumerate(report.get("evidence", []), start=1):
        for key, value in (item.get("metrics") or {}).items():
            # finite numbers only: nan/inf are not Python literals, and "not a number" is not a number to check
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                out.append((f"E{n}", list(item.get("tool_call_ids") or []), str(key), value))
    return out


def to_analysis_script(report: dict[str, Any], datasets: list[dict[str, Any]]) -> str:
    """The text of analysis.py: loads the data and re-runs each successful analysis tool call."""
    calls = [
        (c["id"], c["tool"], dict(c.get("arguments") or {}))
        for c in report.get("tool_calls", [])
        if c.get("ok") and not is_harness_tool(c.get("tool", ""))
    ]
    sources: list[ScriptSource] = [
        {
            "name": str(d.get("name") or d.get("file") or f"data_{i}"),
            "file": str(d.get("file") or ""),
            "sheet": d.get("sheet"),
            "original_path": str(d.get("original_path") or d.get("file") or ""),
        }
        for i, d in enumerate(datasets, start=1)
    ]
    language = "zh" if report.get("language") == "zh" else "en"
    usage = " ".join(s["file"] or s["name"] for s in sources)
    text = _TEXT[language]
    header = f'''#!/usr/bin/env python3
"""Re-run the analysis of a Verity report, step by step, and check every number against the report.

Usage: python analysis.py [DATA_FILE ...]
The data file is found beside this script (or in the current folder) by its name, or pass its path.
It ends by comparing each number of the report's evidence with the numbers its steps re-computed (✓ the
same at the precision the report gives, ✗ different); the exit status is 0 only when all of them match.
Steps that ran the analysis' own Python code (run_python) run that code again on this computer, as you
run this script: each one is printed before it runs, and is also in the CALLS list below.

Needs Python 3.11+ and Verity's Python packages (`analysis_tools`, `app.ingest`). In a copy of
Verity's source folder:
    python3 -m venv .venv && . .venv/bin/activate && pip install -e .
then run this script with that environment's python.
"""
# Question:
{_comment(report.get("question", ""))}
# Run: {_one_line(report.get("run_id", ""))}  Created: {_one_line(report.get("created_at", ""))}
# Example: python analysis.py {_one_line(usage)}

from __future__ import annotations

import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any

try:
    from analysis_tools import REGISTRY, ToolContext, run_tool
    from analysis_tools.tables import table_name
    from app.ingest.pipeline import load_table, read_working_copy
    from app.numbers import backing_values, reported_value_matches
    from app.reports.rerun_python import PARENT_ONLY_FDS, run_python_again
except ImportError as missing:
    sys.exit(f"analysis.py needs Verity's Python packages ({{missing.name}} is missing). In a copy of Verity's "
             "source folder run: python3 -m venv .venv && . .venv/bin/activate && pip install -e . "
             "and then this script with .venv/bin/python (Python 3.11 or newer).")

LANGUAGE = {language!r}
HERE = Path(__file__).resolve().parent
FIGURES = HERE / "rerun_figures"
TEXT = {_literal(text)}

# Tools that only describe a table (no numbers of their own in a claim unless cited, no new table).
PROFILES = ("profile_dataset",)

# The uploaded files, in the order of the command-line arguments.
DATASETS: list[dict[str, Any]] = {_literal(sources)}

# The analysis tool calls of the run, in order: (original call id, tool, arguments).
CALLS: list[tuple[str, str, dict[str, Any]]] = {_literal(calls)}

# The numbers of the report's evidence: (evidence, the calls that computed it, metric, value).
REPORT_NUMBERS: list[tuple[str, list[str], str, float]] = {_literal(report_numbers(report))}
'''
    return header + _BODY
