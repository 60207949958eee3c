"""run_python: the model's escape hatch when no catalog tool fits (SPEC §7).

The code runs in the workspace's warm sandbox (`sandbox` package): its own process tree, no
network, the datasets read-only, a scratch folder, CPU/wall/memory/process/file/output limits.
The tool's description says how the code is isolated (once, not in every result); figures come back as figures, saved tables as
artefacts (summarised in the text), errors as structured tool errors.

What it takes from the run's scope (`run_scope.py`): `workspace_id`; `settings` (falls back to
`get_settings()`); the datasets either as `dataset_paths` ({name: working-copy path}) or from
`session` (the workspace's active datasets).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from analysis_tools import ToolContext, ToolError, ToolResult
from app.agent.run_scope import run_scope
from app.config import Settings, get_settings
from app.workspaces import active_datasets, prune_figures, working_files
from sandbox import LaunchSpec, Limits, RunOutcome, SandboxUnavailable, detect_isolation, get_pool

log = logging.getLogger(__name__)
MAX_TABLE_PREVIEW = 1_500


def run_python(code: str, ctx: ToolContext | None = None) -> ToolResult:
    """Run Python code on the workspace's datasets, in an isolated sandbox (its own processes and
    files, no network). Use it only when no other tool fits.

    Available without importing: `datasets` (dict name -> pandas DataFrame; each dataset is also a
    variable when its name is an identifier), `pd`, `np`, `plt` (matplotlib, Agg), `scipy`, `stats`
    (scipy.stats), `sm` / `smf` (statsmodels api / formula api), `sklearn`. Columns arrive with numpy
    dtypes that statsmodels and sklearn take: a yes/no or whole-number column with missing values is
    float (True = 1.0, missing = NaN), so filter it with `df[df.col == 1]`. Print what you need to
    see (print summaries, not whole tables). Save charts with `save_figure(fig, "name")` (or
    plt.savefig("name.png")) and result tables with `save_table(df, "name")`; set a JSON-able
    `result` variable for key numbers. Each call starts from a clean interpreter (nothing is kept
    between calls); the datasets are read-only copies; only the current folder is writable. No
    network and nothing can be installed. Limits: CPU time, wall time, memory, processes, writable
    space and output size; a long output comes back as a preview, readable in full with
    read_tool_output. Background processes are stopped when the call ends.

    Args:
        code: Python source to run. Errors come back with the line of your code and a hint.
    """
    ctx = ctx or ToolContext()
    settings = _settings(ctx)
    workspace_id = run_scope(ctx, missing_ok=True).workspace_id
    if not workspace_id:
        raise ToolError(
            "sandbox_unavailable",
            "run_python needs a workspace.",
            retryable=False,
            hint="Use the analysis tools instead.",
        )
    isolation = detect_isolation(settings.sandbox_mode)
    if not isolation.available:
        raise ToolError(
            "sandbox_unavailable",
            f"Python cannot run here: {isolation.reason}.",
            retryable=False,
            isolation=isolation.kind,
            hint="Use the analysis tools instead; an administrator can install bubblewrap.",
        )
    workspace = Path(settings.workspace_dir(workspace_id))
    spec = LaunchSpec(
        workspace_id,
        workspace / "files",
        workspace / "scratch",
        mode=settings.sandbox_mode,
        scratch_mb=settings.sandbox_scratch_mb,
    )
    limits = Limits(
        cpu_s=settings.sandbox_cpu_s,
        wall_s=settings.sandbox_wall_s,
        memory_mb=settings.sandbox_memory_mb,
        max_procs=settings.sandbox_max_procs,
        max_files=settings.sandbox_max_files,
        max_output_chars=settings.sandbox_max_output_chars,
        file_mb=settings.sandbox_max_file_mb,
        scratch_mb=settings.sandbox_scratch_mb,
        reply_mb=settings.sandbox_max_reply_mb,
        call_files_mb=settings.sandbox_call_files_mb,
    )
    pool = get_pool(
        settings.sandbox_idle_s, settings.sandbox_max_warm, settings.sandbox_warm_memory_mb, settings.sandbox_keep_mb
    )
    try:
        outcome = pool.run(spec, code, _dataset_paths(ctx, workspace_id), limits, call_id=_call_id(ctx))
    except SandboxUnavailable as exc:
        log.warning("run_python in workspace %s: %s", workspace_id, exc)
        raise ToolError(
            "sandbox_unavailable",
            f"Python cannot run here: {_no_host_paths(str(exc), settings)}",
            retryable=False,
            isolation=isolation.kind,
            hint="Use the analysis tools instead.",
        ) from None
    # The isolation is described once, in the tool's description; each result carries it only in its payload.
    if not outcome.ok:
        error = dict(outcome.error or {"error": "python_error", "message": "The code failed."})
        error.setdefault("retryable", error.get("error") == "python_error")
        if error.get("fault") == "harness":
            error["hint"] = (
                "Not a fault of your code: the sandbox could not read the data, also after a retry in a fresh "
                "sandbox. Use the analysis tools for this step."
            )
        if outcome.stdout.get("text"):
            error["stdout"] = outcome.stdout["text"][-2_000:]
        if outcome.stderr.get("text") and error.get("error") != "python_error":
            error["stderr"] = outcome.stderr["text"][-1_000:]
        if outcome.stopped_processes:
            error["background_processes"] = _stopped_note(outcome.stopped_processes)
        result = ToolResult.failure(error)
        result.payload = {"isolation": outcome.isolation, "retried": outcome.retried}
        return result
    return _success(outcome, ctx)


def _stopped_note(count: int) -> str:
    return (
        f"The code left {count} background process{'es' if count != 1 else ''} running; "
        f"{'they were' if count != 1 else 'it was'} stopped when the call ended (nothing outlives a call: "
        "finish the work inside the call)."
    )


def _no_host_paths(text: str, settings: Settings) -> str:
    """The model never sees where the server keeps its files."""
    for root in {str(Path(settings.data_dir).resolve()), str(settings.data_dir)}:
        text = text.replace(root, "<data>")
    return text


def _success(outcome: RunOutcome, ctx: ToolContext) -> ToolResult:
    parts: list[str] = []
    stdout, stderr = outcome.stdout, outcome.stderr
    if stdout.get("text"):
        parts.append(f"[stdout]\n{stdout['text'].rstrip()}")
    if stderr.get("text"):
        parts.append(f"[stderr]\n{stderr['text'].rstrip()[-2_000:]}")
    if outcome.stopped_processes:
        parts.append("[sandbox] " + _stopped_note(outcome.stopped_processes))
    if outcome.result is not None:
        import json

        parts.append("[result]\n" + json.dumps(outcome.result, ensure_ascii=False, default=str)[:4_000])
    for table in outcome.tables:
        parts.append(
            f"[table {table['name']}] {table['rows']} rows x {len(table['columns'])} columns "
            f"(saved as {Path(table['parquet']).name})\n{table['preview'][:MAX_TABLE_PREVIEW]}"
        )
    figures, captions = [], []
    for figure in outcome.figures:
        source = Path(figure["path"])
        if not source.is_file():
            continue
        target = ctx.figure_path(f"python_{source.stem}")
        shutil.copyfile(source, target)
        figures.append(str(target))
        captions.append(figure.get("caption") or source.stem)
    if figures and ctx.figures_dir is not None:  # the workspace's figures held to their budget, like its calls
        prune_figures(ctx.figures_dir, _settings(ctx))
    if not stdout.get("text") and outcome.result is None and not outcome.tables and not figures:
        parts.append("(the code printed nothing: print() the values you need)")
    # the code's own numbers only: the sandbox's time (payload) is no result, and a claim citing the call must
    # not carry it into its evidence, where the check would re-compute a timing (it never reproduces)
    metrics: dict[str, Any] = {}
    if isinstance(outcome.result, dict):
        metrics.update(
            {
                k: v
                for k, v in outcome.result.items()
                if isinstance(k, str)
                and isinstance(v, (int, float, str))
                and not isinstance(v, bool)
                and len(str(v)) < 200
            }
        )
    return ToolResult(
        text="\n\n".join(parts),
        figures=figures,
        captions=captions,
        metrics=metrics,
        method="Python code (sandboxed)",
        payload={
            "isolation": outcome.isolation,
            "retried": outcome.retried,
            "stdout_truncated": bool(stdout.get("truncated")),
            "stopped_processes": outcome.stopped_processes,
            "tables": outcome.tables,
            "result": outcome.result,
            "warm": outcome.warm,
            "sandbox_ms": outcome.duration_ms,
            "figures": [dict(f, copied_to=t) for f, t in zip(outcome.figures, figures)],
        },
    )


def _settings(ctx: ToolContext) -> Settings:
    settings = run_scope(ctx, missing_ok=True).settings
    if settings is None:
        settings = get_settings()
    return settings


def _dataset_paths(ctx: ToolContext, workspace_id: str) -> dict[str, Path]:
    scope = run_scope(ctx, missing_ok=True)
    if scope.dataset_paths is not None:
        return {name: Path(p) for name, p in scope.dataset_paths.items()}
    session = scope.session
    if session is None:
        return {}
    return working_files(_settings(ctx), active_datasets(session, workspace_id))  # from this node's cache


def _call_id(ctx: ToolContext) -> str | None:
    if not ctx.call_id:
        return None
    import re
    import uuid

    return re.sub(r"[^\w-]+", "_", str(ctx.call_id))[:40] + "_" + uuid.uuid4().hex[:6]
