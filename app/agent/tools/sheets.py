"""`select_sheet`: switch a workbook dataset to another sheet of the kept original upload."""

from __future__ import annotations

import pandas as pd

from analysis_tools import ToolContext, ToolError, ToolResult
from app.agent.run_scope import need_context, run_scope
from app.ingest.bounded import load_table_bounded
from app.ingest.errors import IngestError
from app.workspaces import active_datasets, cached_file, derived_parent, is_derived, sheet_summary


def select_sheet(
    sheet: str, dataset: str | None = None, preview: bool = False, ctx: ToolContext | None = None
) -> ToolResult:
    """Read another sheet of an uploaded workbook; it becomes a new version of the dataset.

    Args:
        sheet: Name of the sheet to read (see the sheets listed by list_datasets or the preview).
        dataset: Dataset name; defaults to the active dataset.
        preview: Only look at the sheet's first rows (a notes or definitions sheet); the dataset keeps
            the sheet it has.
    """
    scope = run_scope(ctx)
    ctx = need_context(ctx)
    settings = scope.need_settings()
    datasets = {d.name: d for d in active_datasets(scope.need_session(), scope.need_workspace_id())}
    source = datasets.get(dataset or ctx.dataset_name or "")
    if source is None:
        raise ToolError("dataset_not_found", f"There is no dataset named {dataset!r}.", available=list(datasets))
    session = scope.need_session()
    if is_derived(session, source):  # its file is the upload's: a sheet of it is not this table
        parent = derived_parent(session, source)
        raise ToolError(
            "derived_table",
            ctx.t(
                f"{source.name!r} is a table an analysis made, not a workbook.",
                f"{source.name!r} 是分析生成的表，不是工作簿。",
            ),
            hint=ctx.t(
                f"Call select_sheet on the upload it came from ({parent.name!r})."
                if parent
                else "Call select_sheet on the uploaded workbook.",
                f"请对它的来源上传文件（{parent.name!r}）调用 select_sheet。"
                if parent
                else "请对上传的工作簿调用 select_sheet。",
            ),
        )
    sheets = [s["name"] for s in source.info.get("sheets", [])]
    try:
        table = load_table_bounded(cached_file(settings, source.original_path), sheet=sheet, settings=settings)
    except IngestError as err:
        raise ToolError(err.category, err.message, hint=f"Sheets in this file: {sheets}", available=sheets) from None
    info = table.info
    # what the built-in analyst knows of a table, for the sheet (its levels and grain): it plans on it next
    summary = sheet_summary(source, sheet, table)
    columns = ", ".join(f"{c['name']} ({c['type']})" for c in info["columns"])
    metrics = {"n_rows": info["rows"], "n_columns": len(info["columns"])}
    if preview:  # a look, not a switch: no table, so the dataset stays on its sheet
        return ToolResult(
            text=ctx.t(
                f"[data_profile]\nSheet '{sheet}' of {source.file_name} (not selected; {source.name!r} keeps its "
                f"sheet): {info['rows']} rows; columns: {columns}\n[preview]\n{_first_rows(table.frame)}",
                f"[data_profile]\n{source.file_name} 的工作表“{sheet}”（仅预览，{source.name!r} 仍用原工作表）："
                f"{info['rows']} 行；列：{columns}\n[preview]\n{_first_rows(table.frame)}",
            ),
            metrics=metrics,
            payload={"step": f"looked at sheet {sheet!r}", "info": info, "summary": summary},
        )
    text = ctx.t(
        f"[data_profile]\nSheet '{sheet}' of {source.file_name}: {info['rows']} rows; columns: {columns}",
        f"[data_profile]\n{source.file_name} 的工作表“{sheet}”：{info['rows']} 行；列：{columns}",
    )
    return ToolResult(
        text=text,
        table=table.frame,
        metrics=metrics,
        payload={"step": f"selected sheet {sheet!r}", "info": info, "summary": summary},
    )


def _first_rows(frame: pd.DataFrame, rows: int = 10) -> str:
    with pd.option_context("display.max_columns", 60, "display.width", 200, "display.max_colwidth", 60):
        return str(frame.head(rows).to_string())
