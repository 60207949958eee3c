"""What a new user sees of the built-in analyst's answers (issue 24 points 4 and 6, issue 28 point 1):
a table an earlier question made is a result, never profiled or offered as data to the next question;
dates read as people write them for their period (May 2024 / 2024年5月; a day 5 Mar 2024 / 2024年3月5日);
a step's text names a measure in plain words, not a tool's column key ("销售额_sum")."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import pandas as pd
from openpyxl import Workbook
from sqlalchemy import select

from analysis_tools import run_tool
from app.analyst import as_people_write, shared_grain
from app.db.models import Dataset, Event, Run, ToolCall
from app.evaluation.runner import settle
from app.numbers import answer_numbers
from app.web.run_panel import sheet_words_shown, steps_from_events
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
    """A real built-in run: the run, its tool calls and its steps' text as the page shows it."""
    run_id = start_run(service, ws, question)
    settle(service, run_id, {})
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run is not None and run.status == "done", run and run.error
        calls = list(s.scalars(select(ToolCall).where(ToolCall.run_id == run_id).order_by(ToolCall.created_at)))
        events = list(s.scalars(select(Event).where(Event.run_id == run_id).order_by(Event.id)))
        shown = sheet_words_shown(s, run)
        steps = [shown(step["interpretation"]) for step in steps_from_events(events) if step.get("interpretation")]
        s.expunge_all()
    return run, calls, steps


def test_a_table_an_earlier_question_made_is_not_profiled_or_offered_as_data(tmp_path: Path) -> None:
    settings, db, service, ws = setup(tmp_path, monthly_workbook(tmp_path / "门店月度.xlsx"))
    first, _, steps = ask(service, db, ws, "哪个门店的销售额合计最高？")
    assert any("西门店 的 销售额 合计最高" in s for s in steps) and not any("_sum" in s for s in steps), steps
    with db.session() as s:
        made = [d.name for d in s.scalars(select(Dataset).where(Dataset.workspace_id == ws, Dataset.active))]
    assert len(made) == 2, made  # the first question kept a table of its own (a result, listed and downloadable)
    second, calls, steps = ask(service, db, ws, "哪个月的销售额最高？")
    profiled = [c.arguments for c in calls if c.tool == "profile_dataset"]
    assert profiled and all(not a.get("dataset") or a["dataset"] == made[0] for a in profiled), profiled
    assert steps[0].startswith("数据共 36 行"), steps  # the data, not the first question's 3-row table
    assert "使用的数据" not in (second.answer or "")  # one table of data: no "which table" line
    assert all(made[1] not in str(c.arguments) for c in calls), [c.arguments for c in calls]
    # the month as people write it, in the headline and the steps
    assert "**2024年5月 的 销售额合计最高" in (second.answer or ""), second.answer
    assert not [s for s in steps if re.search(r"\d{4}-\d{2}|_sum|总最高", s)], steps


def test_dates_read_as_people_write_them_for_their_period() -> None:
    # a day as people write it, never the tools' "2024-03-05 00:00:00"
    assert as_people_write("peak on 2024-03-05 00:00:00: 12", False, {}) == "peak on 5 Mar 2024: 12"
    assert as_people_write("最高在 2024-03-05", True, {}) == "最高在 2024年3月5日"
    assert as_people_write("at 2024-03-05 13:30:00", False, {}) == "at 2024-03-05 13:30:00"  # a real time stays
    assert as_people_write("id 2024-03-051 or 2024-02-31", False, {}) == "id 2024-03-051 or 2024-02-31"
    # a monthly table's dates are its months; a quarterly or yearly one's its quarters or years
    assert as_people_write("highest at 2024-05-01 00:00:00", False, {}, grain="monthly") == "highest at May 2024"
    assert as_people_write("最高在 2024-05-01", True, {}, grain="monthly (several rows per date)") == "最高在 2024年5月"
    assert as_people_write("2024-04-01", False, {}, grain="quarterly") == "Q2 2024"
    assert as_people_write("2024-01-01", True, {}, grain="yearly") == "2024年"
    assert shared_grain([{"grain": "monthly"}, {"grain": "monthly (several rows per date)"}, {}]) == "monthly"
    assert shared_grain([{"grain": "monthly"}, {"grain": "daily"}]) is None
    # the number check reads such a day as a date, not as findings ("5" and "2024")
    assert [str(w.value) for w in answer_numbers("highest on 25 Dec 2024: 40,025 (then Mar 3, 2023: 39,666)")] == [
        "40025",
        "39666",
    ]


def test_a_step_names_its_measure_in_plain_words_not_a_column_key() -> None:
    frame = pd.DataFrame({"门店": ["A", "B", "A"], "销售情况 / 销售额（元）": [1.0, 2.0, 3.0]})
    zh = run_tool(
        "group_aggregate", frame, group_columns=["门店"], value_columns=["销售情况 / 销售额（元）"], language="zh"
    )
    assert zh.interpretation == "按 门店 共分为 2 组；门店 = A 的 销售情况 / 销售额（元） 合计最高（4）。"
    en = run_tool(
        "group_aggregate", frame, group_columns=["门店"], value_columns=["销售情况 / 销售额（元）"], agg="mean"
    )
    assert en.interpretation == "2 groups by 门店; 门店 = A has the highest average 销售情况 / 销售额（元） (2)."
    ranked = run_tool("rank_values", frame, value_column="销售情况 / 销售额（元）", group_column="门店", language="zh")
    assert ranked.interpretation.startswith("销售情况 / 销售额（元）合计最高的是 A"), ranked.interpretation


def test_a_report_names_a_monthly_table_s_dates_by_their_month() -> None:
    from app.reports.report_parts import in_sheet_words

    report = {
        "language": "en",
        "datasets": [{"name": "traffic", "grain": "monthly", "columns": [{"name": "Month", "type": "datetime"}]}],
        "evidence": [{"metrics": {"rank.1.label": "2024-12-01 00:00:00", "rank.1.value": 40025.0}}],
    }
    assert in_sheet_words(report)["evidence"][0]["metrics"] == {"rank.1.label": "Dec 2024", "rank.1.value": 40025.0}
