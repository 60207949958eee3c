"""What a new user sees of the built-in analyst's answers (issue 24 points 4 and 6, issue 28 point 1):
a table an earlier question made is a result, never profiled or offered as data to the next question;
dates read as people write them for their period (May 2024 / 2024年5月; a day 5 Mar 2024 / 2024年3月5日);
a step's text names a measure in plain words, not a tool's column key ("销售额_sum")."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from openpyxl import Workbook
from sqlalchemy import select

from app.db.models import Dataset, Event, Run, ToolCall
from app.evaluation.runner import settle
from tests.factories import setup, start_run

STORES = {"东门店": 1.0, "西门店": 1.6, "南门店": 0.7}


def monthly_workbook(path: Path) -> Path:
    """Three stores over twelve months of 2024 (a real date on the 1st of each month); May sells most,
    西门店 takes the most money."""
    book = Workbook()
    sheet = book.active
    sheet.append(["月份", "门店", "销售额"])
    for month in range(1, 13):
        for store, scale in STORES.items():
            sheet.append(
                [datetime(2024, month, 1), store, round((1000 + (500 if month == 5 else 10 * month)) * scale, 1)]
            )
    book.save(path)
    return path


def ask(service, db, ws: str, question: str) -> tuple[Run, list[ToolCall], list[str]]:
    """A real built-in run: the run, its tool calls and the interpretations its steps showed."""
    run_id = start_run(service, ws, question)
    settle(service, run_id, {})
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run is not None and run.status == "done", run and run.error
        calls = list(s.scalars(select(ToolCall).where(ToolCall.run_id == run_id).order_by(ToolCall.created_at)))
        shown = [
            str((e.data or {}).get("interpretation") or "")
            for e in s.scalars(select(Event).where(Event.run_id == run_id, Event.kind == "tool_finished"))
        ]
        s.expunge_all()
    return run, calls, shown


def test_a_table_an_earlier_question_made_is_not_profiled_or_offered_as_data(tmp_path: Path) -> None:
    settings, db, service, ws = setup(tmp_path, monthly_workbook(tmp_path / "门店月度.xlsx"))
    first, _, _ = ask(service, db, ws, "哪个门店的销售额合计最高？")
    with db.session() as s:
        made = [d.name for d in s.scalars(select(Dataset).where(Dataset.workspace_id == ws, Dataset.active))]
    assert len(made) == 2, made  # the first question kept a table of its own (a result, listed and downloadable)
    second, calls, _ = ask(service, db, ws, "哪个月的销售额最高？")
    profiled = [c.arguments for c in calls if c.tool == "profile_dataset"]
    assert profiled and all(not a.get("dataset") or a["dataset"] == made[0] for a in profiled), profiled
    assert "使用的数据" not in (second.answer or "")  # one table of data: no "which table" line
    assert all(made[1] not in str(c.arguments) for c in calls), [c.arguments for c in calls]
