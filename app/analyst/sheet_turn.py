"""A question that names another sheet of a table's workbook ("只看二店的…" where the upload was read at
一店): the analyst turns to that sheet first, with select_sheet, as a person clicks the sheet's tab, and
plans on the sheet the question is about. The turn's table summaries then describe that sheet, so the
reading neither answers about the sheet read before nor marks the answer as about another sheet."""

from __future__ import annotations

from typing import Any

from app.analyst.reading import named_sheets
from app.analyst.rounds import ToolCalls
from app.analyst.turn_state import TurnView, arguments_of, tool_of

SELECT_SHEET = "select_sheet"


def sheet_turns(datasets: list[dict[str, Any]], view: TurnView) -> ToolCalls:
    """The select_sheet call of the one sheet the question names, once a turn, where that sheet is laid out
    like the one read (as many columns: a sheet per shop or month); none when it names none, several (which
    one is the user's to say), or a sheet of another kind (a "Summary" or "Notes" sheet named by a word the
    question uses for itself): the answer then says which sheet it read, as an assumed reading."""
    if SELECT_SHEET in view.called:
        return []
    for dataset in datasets:
        if len(sheets := named_sheets(view.question, dataset)) == 1 and sheets[0] in (
            dataset.get("sheets_alike") or []
        ):
            return [(SELECT_SHEET, {"sheet": sheets[0], "dataset": dataset["name"]})]
    return []


def at_selected_sheets(datasets: list[dict[str, Any]], view: TurnView) -> list[dict[str, Any]]:
    """The turn's table summaries with each table this turn turned to another sheet described at that
    sheet: its columns, rows and the book's other sheets (the one read before among them)."""
    turned = {}
    for call_id, call in view.calls.items():
        record = view.results.get(call_id)
        arguments = arguments_of(call)
        if tool_of(call) == SELECT_SHEET and record is not None and record.ok and not arguments.get("preview"):
            turned[str(arguments.get("dataset"))] = record.details.get("summary") or {}
    return [{**d, **turned[d["name"]], "name": d["name"]} if turned.get(d["name"]) else d for d in datasets]
