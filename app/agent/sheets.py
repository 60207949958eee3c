"""`select_sheet`: switch a workbook dataset to another sheet of the kept original upload."""

from __future__ import annotations

from pathlib import Path

from analysis_tools import ToolContext, ToolError, ToolResult
from app.agent.run_scope import run_scope
from app.ingest.errors import IngestError
from app.ingest.bounded import load_table_bounded
from app.workspaces import active_datasets


def select_sheet(sheet: str, dataset: str | None = None, ctx: ToolContext = None) -> ToolResult:
    """Read another sheet of an uploaded workbook; it becomes a new version of the dataset.

    Args:
        sheet: Name of the sheet to read (see the sheets listed by list_datasets or the preview).
        dataset: Dataset name; defaults to the active dataset.
    """
    scope = run_scope(ctx)
    settings = scope.need_settings()
    datasets = {d.name: d for d in active_datasets(scope.need_session(), scope.need_workspace_id())}
    source = datasets.get(dataset or ctx.dataset_name or "")
    if source is None:
        raise ToolError("dataset_not_found", f"There is no dataset named {dataset!r}.", available=list(datasets))
    sheets = [s["name"] for s in source.info.get("sheets", [])]
    try:
        table = load_table_bounded(Path(source.original_path), sheet=sheet, settings=settings)
    except IngestError as err:
        raise ToolError(err.category, err.message, hint=f"Sheets in this file: {sheets}", available=sheets) from None
    info = table.info
    columns = ", ".join(f"{c['name']} ({c['type']})" for c in info["columns"])
    text = ctx.t(f"[data_profile]\nSheet '{sheet}' of {source.file_name}: {info['rows']} rows; columns: {columns}",
                 f"[data_profile]\n{source.file_name} 的工作表“{sheet}”：{info['rows']} 行；列：{columns}")
    return ToolResult(text=text, table=table.frame, metrics={"n_rows": info["rows"], "n_columns": len(info["columns"])},
                      payload={"step": f"selected sheet {sheet!r}", "info": info})
