"""`verity eval [--only ID]... [--json] [--baseline FILE | --save-baseline FILE]`.

Runs the task set with whatever model `verity analyze` would use (the built-in analyst unless
VERITY_LLM_* configure one), in a temporary data folder so the user's workspaces are never
touched, prints the table (or one JSON object) and compares with the baseline.
Exit codes: 0 all tasks done and no regression, 1 a regression or a task not done, 2 bad
arguments (unknown task id, unreadable task or baseline file).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path
from typing import Any

from app.evaluation.compare import (
    DEFAULT_BASELINE,
    BaselineError,
    compare,
    load_baseline,
    save_baseline,
    score_line,
    table,
    totals,
)
from app.evaluation.tasks import DEFAULT_TASKS, TaskFileError, load_tasks

EXIT_OK, EXIT_REGRESSION, EXIT_BAD_ARGS = 0, 1, 2


def add_eval_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "eval",
        help="Run the evaluation task set and compare it with the baseline.",
        description="Runs the task set with the configured model (the built-in analyst when none is). Exit code 0: "
        "all tasks done, no regression; 1: a regression or a task not done; 2: bad arguments.",
    )
    parser.add_argument("--only", action="append", default=[], metavar="ID", help="run only this task (repeatable)")
    parser.add_argument(
        "--tasks",
        type=Path,
        default=DEFAULT_TASKS,
        help="task file (default data/eval/tasks.json); its relative "
        "file paths are read from the file's own folder (the checkout's sets: from the repository root)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="baseline to compare with (default data/eval/baseline.json, when it exists)",
    )
    parser.add_argument(
        "--save-baseline",
        type=Path,
        default=None,
        metavar="FILE",
        help="write these results as the new baseline instead of comparing",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="keep the runs (database, traces, figures) here instead of a temporary folder",
    )
    parser.set_defaults(func=eval_command)
    return parser


def eval_command(args: argparse.Namespace) -> int:
    try:
        tasks = load_tasks(args.tasks, args.only or None)
        baseline_path = args.baseline or DEFAULT_BASELINE
        if args.baseline is not None and not args.baseline.exists():
            raise BaselineError(f"baseline not found: {args.baseline}")
        baseline = None if args.save_baseline else load_baseline(baseline_path)
    except (TaskFileError, BaselineError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_ARGS
    logging.basicConfig(level=logging.CRITICAL)  # a run's failure is its task's reason, not a log trace
    results, model = execute(tasks, args.workdir, files_root(args.tasks))
    total = totals(results)
    comparison = compare(results, baseline) if baseline is not None else None
    if comparison is not None and baseline is not None and baseline.get("model") not in (None, model):
        comparison["notes"].append(f"the baseline was made with {baseline['model']}; this run used {model}")
    if args.save_baseline:
        try:
            save_baseline(args.save_baseline, results, model)
        except OSError as exc:
            print(f"error: cannot write baseline {args.save_baseline}: {exc}", file=sys.stderr)
            return EXIT_BAD_ARGS
    ok = total["done"] == total["tasks"] and not (comparison and comparison["regressions"])
    if args.json:
        print(
            json.dumps(
                {
                    "model": model,
                    "tasks": results,
                    "totals": total,
                    "ok": ok,
                    "baseline": {"path": shown(baseline_path), **comparison} if comparison else None,
                    "saved_baseline": shown(args.save_baseline) if args.save_baseline else None,
                },
                ensure_ascii=False,
                indent=2,
            )
        )
    else:
        print(report_text(model, results, total, comparison, baseline_path, args.save_baseline))
    return EXIT_OK if ok else EXIT_REGRESSION


def files_root(task_file: Path) -> Path:
    """What a task's relative file paths are relative to: the repository root for the checkout's own
    sets (data/eval/*.json name "data/samples/…" and "data/reference/…"), else the task file's folder, so
    a user's own set works wherever Verity is installed (a wheel has no repository root)."""
    from app.paths import REPO_ROOT

    folder = Path(task_file).resolve().parent
    return REPO_ROOT if folder == (REPO_ROOT / "data" / "eval").resolve() else folder


def execute(tasks: list, workdir: Path | None, root: Path | None = None) -> tuple[list[dict[str, Any]], str]:
    """Run the tasks with the configured model in a data folder of their own; relative file paths
    are read from `root` (files_root)."""
    from app.config import get_settings
    from app.evaluation.runner import run_tasks

    base = get_settings()
    model = f"{'builtin' if base.use_builtin else 'openai-compatible'}:{base.llm_model}"
    print(f"Evaluating {len(tasks)} task(s) with {model}", file=sys.stderr)

    def progress(i: int, n: int, result: dict[str, Any]) -> None:  # stderr: --json keeps stdout clean
        print(
            f"[{i}/{n}] {result['id']}: {result['status']}, {'right' if result['fully_right'] else 'not right'}, "
            f"facts {result['facts_found']}/"
            f"{result['facts_total']}, {result['wall_s']:.1f} s",
            file=sys.stderr,
            flush=True,
        )

    with tempfile.TemporaryDirectory(prefix="verity-eval-") as scratch:
        folder = workdir or Path(scratch)
        # the eval's own SQLite database, even where the app's database is a shared server
        settings = base.model_copy(update={"data_dir": folder, "database_url": None})
        if root is None:
            return run_tasks(tasks, settings, progress=progress), model
        return run_tasks(tasks, settings, root=root, progress=progress), model


def shown(path: Path) -> str:
    """A path as the user would type it: relative to the current folder when it is inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def report_text(
    model: str,
    results: list[dict[str, Any]],
    total: dict[str, Any],
    comparison: dict | None,
    baseline_path: Path,
    saved: Path | None,
) -> str:
    lines = [f"Model: {model}", "", table(results, total), "", score_line(total)]
    unfinished = [r["id"] for r in results if r["status"] != "done"]
    if unfinished:
        lines.append(f"NOT DONE {len(unfinished)} task(s): {', '.join(unfinished)}")
    if saved:
        lines.append(f"Baseline saved to {shown(saved)}")
    elif comparison is None:
        lines.append(f"No baseline at {shown(baseline_path)}; save one with --save-baseline {shown(baseline_path)}")
    else:
        lines += [f"note: {n}" for n in comparison["notes"]]
        lines += [f"REGRESSION {r}" for r in comparison["regressions"]]
        if not comparison["regressions"]:
            lines.append(f"No regressions against {shown(baseline_path)}")
    return "\n".join(lines)
