"""The name a data tool's output table is stored under (a new table, or a new version of its source)."""

from __future__ import annotations

# Tools whose output table is a new, differently shaped table rather than a new version of the
# dataset they read (the harness gives it its own name).
NEW_TABLE_TOOLS = {
    "group_aggregate": "summary",
    "pivot_table": "pivot",
    "merge_datasets": "merged",
    "filter_rows": "filtered",
    "derive_column": "derived",
}


# Tools whose output is a side table: kept under its own name for the model to refer to, while the
# active dataset stays what it was (a filtered subset or a summary silently taking the place of the
# data led later analyses onto the wrong rows, issue 23).
SIDE_TABLE_TOOLS = frozenset({"filter_rows", "group_aggregate", "pivot_table"})


def previous_version_name(name: str, version: int) -> str:
    """The name the previous version of a dataset stays reachable under once a new version replaces it."""
    return f"{name}_v{version}"


def table_name(source: str, tool: str, output: str = "") -> str | None:
    """The name a data tool's output table is stored under, or None for a new version of `source`:
    the name the model asked for (`output`), else `<source>_<suffix>` for tools that make another
    table (a filtered subset, a summary), so the original stays reachable under its own name. A
    table already derived that way (`sales_filtered` filtered again) gets a new version instead."""
    output = (output or "").strip()
    if output:
        return None if output == source else output
    suffix = NEW_TABLE_TOOLS.get(tool)
    if suffix is None or source.endswith(f"_{suffix}"):
        return None
    return f"{source}_{suffix}"
