"""analysis.py: a script that re-runs every analysis tool call of a report on the uploaded data.

    python analysis.py                      # the files where Verity stored them (or next to the script)
    python analysis.py sales.xlsx other.csv # other copies, in the order of DATASETS
"""

from __future__ import annotations

import pprint
from typing import Any, Iterable

from app.reports.builder import is_harness_tool


def dataset_sources(datasets: Iterable[Any]) -> list[dict[str, Any]]:
    """`to_analysis_script`'s datasets from Dataset rows (the workspace's active datasets)."""
    out, seen = [], set()
    for d in datasets:
        if d.name in seen:
            continue
        seen.add(d.name)
        out.append({"name": d.name, "file": d.file_name, "sheet": d.sheet, "original_path": d.original_path})
    return out


def _comment(text: str) -> str:
    return "\n".join("#   " + line for line in str(text or "").splitlines()) or "#"


def _literal(value: Any) -> str:
    return pprint.pformat(value, width=100, sort_dicts=False)


_BODY = '''

def _load(argv: list[str]) -> dict[str, Any]:
    """Read each uploaded file with Verity's reader (the same cleaning as in the app)."""
    given = argv[1:]
    here = Path(__file__).resolve().parent
    frames: dict[str, Any] = {}
    for i, source in enumerate(DATASETS):
        path = Path(given[i]) if i < len(given) else Path(source["original_path"] or source["file"])
        if not path.exists() and (here / source["file"]).exists():
            path = here / source["file"]
        if not path.exists():
            sys.exit(f"error: data file not found: {path} (pass its path as argument {i + 1})")
        frames[source["name"]] = load_table(path, sheet=source["sheet"]).frame
        print(f"loaded {source['name']}: {path} ({len(frames[source['name']])} rows)")
    return frames


def _call(tool: str, data: Any, arguments: dict[str, Any]) -> Any:
    reserved = {"name", "data", "ctx", "language", "figures_dir"} & set(arguments)
    if not reserved:
        return run_tool(tool, data, language=LANGUAGE, figures_dir=FIGURES, **arguments)
    spec = REGISTRY.get(tool)  # an argument shadows run_tool's own parameters: call the tool directly
    ctx = ToolContext(language=LANGUAGE, figures_dir=FIGURES)
    kwargs = {k: v for k, v in arguments.items() if k != "dataset"}
    if spec is not None and spec.needs_data:
        kwargs["data"] = data
    return spec.func(ctx=ctx, **kwargs) if "ctx" in inspect.signature(spec.func).parameters else spec.func(**kwargs)


def main(argv: list[str] | None = None) -> int:
    frames = _load(sys.argv if argv is None else argv)
    active = DATASETS[-1]["name"] if DATASETS else None
    failures = 0
    for call_id, tool, arguments in CALLS:
        spec = REGISTRY.get(tool)
        if spec is not None and spec.multi_data:
            data = frames
        else:
            data = frames.get(arguments.get("dataset") or active)
        shown = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
        print(f"\\n=== {call_id}: {tool}({shown})")
        result = _call(tool, data, dict(arguments))
        if not result.ok:
            failures += 1
            print(f"[failed] {result.error}")
            continue
        print(result.text)
        if result.interpretation:
            print(result.interpretation)
        for figure in result.figures:
            print(f"[figure] {figure}")
        derived = (result.payload or {}).get("dataset_name") or arguments.get("output_name") or arguments.get("new_name")
        if result.table is not None and derived:
            frames[str(derived)] = result.table
    print(f"\\n{len(CALLS) - failures} of {len(CALLS)} tool calls re-run.")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
'''


def to_analysis_script(report: dict[str, Any], datasets: list[dict[str, Any]]) -> str:
    """The text of analysis.py: loads the data and re-runs each successful analysis tool call."""
    calls = [(c["id"], c["tool"], dict(c.get("arguments") or {})) for c in report.get("tool_calls", [])
             if c.get("ok") and not is_harness_tool(c.get("tool", ""))]
    sources = [{"name": str(d.get("name") or d.get("file") or f"data_{i}"), "file": str(d.get("file") or ""),
                "sheet": d.get("sheet"), "original_path": str(d.get("original_path") or d.get("file") or "")}
               for i, d in enumerate(datasets, start=1)]
    language = report.get("language") if report.get("language") in ("zh", "en") else "en"
    usage = " ".join(s["file"] or s["name"] for s in sources)
    header = f'''#!/usr/bin/env python3
"""Re-run the analysis of a Verity report, step by step, on the uploaded data.

Usage: python analysis.py [DATA_FILE ...]
Data files default to where Verity stored the uploads (or files of the same name next to this script).
Needs Verity installed (`pip install verity`), which provides `app.ingest` and `analysis_tools`.
"""
# Question:
{_comment(report.get("question", ""))}
# Run: {str(report.get("run_id", "")).replace(chr(10), " ")}  Created: {str(report.get("created_at", "")).replace(chr(10), " ")}
# Example: python analysis.py {usage.replace(chr(10), " ")}

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

from analysis_tools import REGISTRY, ToolContext, run_tool
from app.ingest.pipeline import load_table

LANGUAGE = {language!r}
FIGURES = Path(__file__).resolve().parent / "rerun_figures"

# The uploaded files, in the order of the command-line arguments.
DATASETS: list[dict[str, Any]] = {_literal(sources)}

# The analysis tool calls of the run, in order: (original call id, tool, arguments).
CALLS: list[tuple[str, str, dict[str, Any]]] = {_literal(calls)}
'''
    return header + _BODY
