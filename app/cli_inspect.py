"""`verity inspect FILE [--sheet NAME] [--rows N] [--json] [--lang zh|en]`: what Verity reads from a file."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.ingest.errors import IngestError

TYPE_BADGES = {
    "number": "[number]",
    "integer": "[integer]",
    "datetime": "[date/time]",
    "category": "[category]",
    "text": "[text]",
    "boolean": "[yes/no]",
    "identifier": "[id]",
}


def add_inspect_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("inspect", help="Show what Verity reads from a file, without analysing it.")
    parser.add_argument("file", help="spreadsheet or CSV file")
    parser.add_argument("--sheet", default=None, help="sheet to read (default: the largest table)")
    parser.add_argument("--rows", type=int, default=None, help="preview rows (default 20)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (the external contract)")
    parser.add_argument(
        "--lang", choices=("zh", "en"), default=None, help="language of error messages (default: VERITY_LANG)"
    )
    parser.set_defaults(func=inspect_command)
    return parser


def inspect_command(args) -> int:
    # Imported here, not at the top: `verity --help` and the other commands do not read files. The
    # read runs in a child process that imports pandas itself, so this process never does.
    from app.ingest.bounded import inspect_bounded
    from app.ingest.errors import IngestError

    rows = args.rows if getattr(args, "rows", None) is not None else _default_rows()
    try:
        result = inspect_bounded(args.file, sheet=getattr(args, "sheet", None), rows=rows)
    except IngestError as exc:
        print_ingest_error(exc, getattr(args, "lang", None) or _default_lang())
        return 2
    if getattr(args, "json", False):
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(render_summary(result))
    return 0


def _default_rows() -> int:
    from app.config import get_settings

    return get_settings().preview_rows


def _default_lang() -> str:
    from app.config import get_settings

    return get_settings().lang


def print_ingest_error(error: IngestError, lang: str) -> None:
    """Bad input on stderr: `error: <category>: <message>` (the contract's prefix) and the hint, in `lang`
    (English where an error carries no Chinese)."""
    print(f"error: {error.category}: {error.message_in(lang)}", file=sys.stderr)
    if error.hint_in(lang):
        print(f"hint: {error.hint_in(lang)}", file=sys.stderr)


def render_summary(result: dict) -> str:
    lines = [f"{result['file']} ({result['format']})"]
    if len(result["sheets"]) > 1:
        lines.append("Sheets:")
        for sheet in result["sheets"]:
            mark = "*" if sheet["name"] == result["selected_sheet"] else " "
            hidden = " (hidden)" if sheet.get("hidden") else ""
            lines.append(f"  {mark} {sheet['name']}{hidden}: {sheet['rows']} rows x {sheet['columns']} columns")
    rows = result.get("header_rows") or []
    if len(rows) > 1:
        header = f"header on rows {rows[0]}-{rows[-1]}"
    else:
        header = f"header on row {result['header_row']}" if result["header_row"] else "no header row found"
    lines.append(f"Sheet '{result['selected_sheet']}': {result['rows']} rows, {header}")
    lines.append("Columns:")
    width = max((len(c["name"]) for c in result["columns"]), default=0)
    for col in result["columns"]:
        extra = [f"{col['missing']} missing"] if col["missing"] else []
        if col["pii"]:
            extra.append(f"personal data ({col['pii']}), masked")
        badge = TYPE_BADGES.get(col["type"], col["type"])
        lines.append(f"  {col['name']:<{width}}  {badge:<12} {', '.join(extra)}".rstrip())
    if result["cleaning"]:
        lines.append("Cleaning:")
        lines += [f"  {_cleaning_line(c)}" for c in result["cleaning"]]
    if result["warnings"]:
        lines.append("Warnings:")
        lines += [f"  ! {w}" for w in result["warnings"]]
    if result["preview"]:
        lines.append(f"First {len(result['preview'])} rows:")
        lines += _table([c["name"] for c in result["columns"]], _in_own_words(result))
    return "\n".join(lines)


def _cleaning_line(entry: dict) -> str:
    """One cleaning step in words; a step about whole rows (exact duplicates) names no column."""
    if entry.get("message"):
        return str(entry["message"])
    unit = "cells" if entry.get("column") else "rows"
    text = f"{entry['action']} ({entry['count']} {unit})"
    return f"{entry['column']}: {text}" if entry.get("column") else text[0].upper() + text[1:]


def _in_own_words(result: dict) -> list[dict]:
    """The preview's yes/no cells as the sheet writes them (是/否, Y/N: the column's "words"), not
    True/False; the JSON keeps the booleans. (Not app.analyst.sheet_words: inspect stays light.)"""
    own = {c["name"]: c["words"] for c in result["columns"] if c.get("words")}
    return [
        {n: own[n].get("true" if v else "false", v) if n in own and isinstance(v, bool) else v for n, v in row.items()}
        for row in result["preview"]
    ]


def _table(names: list[str], rows: list[dict], max_width: int = 18) -> list[str]:
    def cell(value) -> str:
        text = "" if value is None else str(value)
        return text if len(text) <= max_width else text[: max_width - 1] + "…"

    cells = [[cell(n) for n in names]] + [[cell(r.get(n)) for n in names] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(names))]
    out = ["  " + "  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells]
    out.insert(1, "  " + "  ".join("-" * w for w in widths))
    return out
