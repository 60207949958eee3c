"""How long the data runs (issue 24, a new user's trial: "How many years of data are there?", "数据有几年？",
"how many months does it cover"): the question asks how many of a unit of time, names no column but a date
and no value, and the table has dates. Each dated row is put in its calendar period (the date_part column of
time_steps.period_column_step), and the whole table's number of distinct periods, its first and its last are
read back (group_aggregate over all rows: nunique, min, max): "The data covers 4 years: 2021 to 2024".

Told apart from its neighbours by structure: a count of rows names what it counts ("how many days had sales
over 100" names Sales), the days between two dates name or have two date columns (data_tasks.date_gap_plan,
asked first), and an average ("平均几天", "on average how many days") is no span."""

from __future__ import annotations

import re
from typing import Any

from analysis_tools.common import fmt_num
from app.analyst.steps import Column, Plan, Spans, Step, date_column
from app.analyst.time_steps import PERIOD_PARTS, PERIOD_WORDS, period_column_step
from app.understanding.kinds import MEAN_WORDS
from app.understanding.language import local_text as _t

# "how many years", "几年", "多少个月": the degree question straight before a unit of time. A Chinese month or
# week needs its measure word (几个月; 几月 asks which month); 几号 and 哪年 ask which, not how many.
_SPAN_EN = re.compile(r"\bhow\s+many\s+(year|quarter|month|week|day)s\b", re.I)
_SPAN_ZH = re.compile(r"(?<![\d０-９])(?:几|多少)\s*(?:(年)|个\s*(月|季度|星期)|(季度|周|天))")
_UNIT_ZH = {"年": "year", "月": "month", "季度": "quarter", "星期": "week", "周": "week", "天": "day"}


def asks_span(question: str) -> str:
    """The unit of time a question asks how many of ("how many years" → year, "几个月" → month), "" when it
    asks none, or asks an average of one ("平均几天")."""
    if MEAN_WORDS.search(question):
        return ""
    if found := _SPAN_EN.search(question):
        return found.group(1).lower()
    if found := _SPAN_ZH.search(question):
        return _UNIT_ZH[next(g for g in found.groups() if g)]
    return ""


def date_span_plan(
    question: str, columns: list[Column], spans: Spans, values: list[str], dataset: str, zh: bool
) -> Plan | None:
    """The number of calendar periods the table's dates cover, with the first and the last, where the
    question asks how many of a unit of time and names no column but a date (`spans`) and no value
    (`values`); None otherwise."""
    unit = asks_span(question)
    date = date_column(columns)
    dates = {str(c["name"]) for c in columns if c.get("type") == "datetime"}
    if not unit or date is None or values or any(name not in dates for _, _, name in spans):
        return None
    plan = Plan(None, None, [Step("profile_dataset", {}, evidence=False)], kind="span")
    period = period_column_step(plan, date, dataset, columns, unit, zh)
    arguments = {"group_columns": [], "value_columns": [period], "aggregations": ["nunique", "min", "max"]}
    plural, count_zh = PERIOD_WORDS[unit].plural, PERIOD_WORDS[unit].count_zh
    subject = _t(zh, f"How many {plural} {date} covers", f"{date} 覆盖几{count_zh}")
    plan.steps.append(Step("group_aggregate", arguments, subject))
    return plan


def span_headline(plan: Plan, metrics: dict[str, Any], zh: bool) -> str | None:
    """'The data covers 4 years: 2021 to 2024 (144 rows).' / '数据覆盖 4 年：从 2021 到 2024（144 行）。'"""
    step = next((s for s in plan.steps if s.tool == "group_aggregate"), None)
    made = next((s for s in plan.steps if s.tool == "derive_column"), None)
    if step is None or made is None:
        return None
    period = str(step.arguments["value_columns"][0])
    found = {key.split(".", 1)[0]: value for key, value in metrics.items() if key.startswith(f"{period}_")}
    count, first, last = (found.get(f"{period}_{agg}") for agg in ("nunique", "min", "max"))
    if not isinstance(count, (int, float)) or first is None or last is None:
        return None
    unit = next((u for u, part in PERIOD_PARTS.items() if part == made.arguments.get("part")), "")
    if unit not in PERIOD_WORDS:
        return None
    plural, count_zh = PERIOD_WORDS[unit].plural, PERIOD_WORDS[unit].count_zh
    rows = metrics.get("n")
    shown = [_label(first), _label(last)]
    if zh:
        return f"数据覆盖 {fmt_num(count)} {count_zh}：从 {shown[0]} 到 {shown[1]}（{fmt_num(rows)} 行）。"
    return f"The data covers {fmt_num(count)} {plural if count != 1 else plural[:-1]}: {shown[0]} to {shown[1]} ({fmt_num(rows)} rows)."


def _label(value: Any) -> str:
    """A period as the tool wrote it (2021, "2021-03"): a whole number without its decimals."""
    return fmt_num(value).replace(",", "") if isinstance(value, (int, float)) else str(value)
