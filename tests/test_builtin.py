"""The built-in analyst: what it plans, and a real end-to-end analysis through the harness."""

import functools
import re

import pandas as pd
import pytest
from sqlalchemy import select

from analysis_tools import ResultRecord, ToolResult, tagged_text
from analysis_tools.common import fmt_num
from analysis_tools.core import profile_dataset
from analysis_tools.data import value_counts
from analysis_tools.timeseries_forecast import forecast
from app.analyst import past_the_reading
from app.analyst.analyst import BuiltinAnalyst
from app.analyst.column_choice import mentioned_columns
from app.analyst.headlines import forecast_headline
from app.analyst.plan import plan_analysis, plan_reading
from app.analyst.question_words import asks_for
from app.analyst.sheet_words import as_people_write
from app.db.models import Evidence, Run, Task, ToolCall
from app.evaluation.runner import settle
from app.evaluation.tasks import load_tasks
from app.understanding.profile_reading import read_profile, read_values, value_lookups
from app.understanding.reading import read_question
from app.understanding.roles import asks_ahead, column_spans, forecast_arguments, forecast_request, named_values
from app.understanding.words import SYNONYMS, question_key
from tests.factories import SAMPLES, reference, setup, start_run

SALES = {
    "name": "sales",
    "columns": [
        {"name": "Date", "type": "datetime"},
        {"name": "Order ID", "type": "identifier"},
        {"name": "Region", "type": "category", "levels": 4},
        {"name": "Channel", "type": "category", "levels": 3},
        {"name": "Units", "type": "integer"},
        {"name": "Unit Price", "type": "number"},
        {"name": "Revenue", "type": "number"},
        {"name": "Customer Type", "type": "category", "levels": 2},
    ],
}


def tools_in(plan):
    return [s.tool for s in plan.steps]


def test_plan_compares_the_named_metric_across_the_named_dimension():
    plan = plan_analysis("Does revenue differ by region?", SALES, zh=False)
    assert (plan.metric, plan.dimension) == ("Revenue", "Region")
    step = next(s for s in plan.steps if s.tool == "compare_groups")
    assert step.arguments == {"value_column": "Revenue", "group_column": "Region"}
    assert tools_in(plan)[0] == "profile_dataset"


def test_two_levels_use_the_two_group_test():
    plan = plan_analysis(
        "Do new and returning customers spend different revenue? compare by customer type", SALES, zh=False
    )
    assert plan.dimension == "Customer Type" and "compare_two_groups" in tools_in(plan)


def test_chinese_question_and_regression_keywords():
    columns = {
        "name": "ops",
        "columns": [
            {"name": "月份", "type": "datetime"},
            {"name": "营业额", "type": "number"},
            {"name": "广告费用", "type": "number"},
            {"name": "门店", "type": "category", "levels": 5},
        ],
    }
    plan = plan_analysis("哪些因素能预测营业额？", columns, zh=True)
    assert plan.metric == "营业额"
    assert "linear_regression" in tools_in(plan) and "correlation_analysis" in tools_in(plan)
    assert any("营业额" in (s.task or "") for s in plan.steps)


def test_longest_column_name_wins():
    assert mentioned_columns("what drives unit price?", SALES["columns"]) == ["Unit Price"]


def test_the_plan_is_made_from_the_reading_of_the_question_with_the_users_answers():
    """The reading holds the root question as the analysis takes it (with the goal the user confirmed)
    and the columns it names there; plan_reading plans from exactly that."""
    confirmed = {
        f"goal.{question_key('Look at this table')}": "compare Revenue by Region",
        "field.Units": "an identifier",
    }
    reading = read_question("Look at this table", [SALES], confirmed=confirmed)
    assert reading.asked == "Look at this table (compare Revenue by Region)"
    assert reading.named_columns == ["Revenue", "Region"]
    assert {c["name"]: c["type"] for c in reading.columns}["Units"] == "identifier"  # a label, not a number
    plan = plan_reading(reading)
    assert (plan.metric, plan.dimension) == ("Revenue", "Region") and "compare_groups" in tools_in(plan)
    assert "Units" not in step(plan, "correlation_analysis").arguments["columns"]
    assert tools_in(plan_analysis("Look at this table", SALES, False, confirmed)) == tools_in(plan)


def test_a_result_record_holds_the_sections_of_the_text_as_data():
    result = ToolResult(
        text=tagged_text(method="One-way ANOVA\non 3 groups", conclusion="F(2, 27) = 4.85"),
        interpretation="It differs.",
        metrics={"p_value": 0.01, "duration_ms": 3.0},
        payload={"pair": ["after", "before"]},
    )
    record = result.record()
    assert record == ResultRecord(
        ok=True,
        method="One-way ANOVA",  # its first line, as the answer names it
        interpretation="It differs.",
        conclusion="F(2, 27) = 4.85",
        metrics={"p_value": 0.01},  # the timing is the harness's, not a finding
        details={"pair": ["after", "before"]},
    )
    assert ResultRecord.from_json(record.as_json()) == record
    failed = ToolResult.failure({"error": "column_not_found", "message": "No column x."}).record()
    assert failed.ok is False and failed.error == {"error": "column_not_found", "message": "No column x."}
    masked = ToolResult(text=tagged_text(data_profile="Alice [text, label]"), metrics={"mean.Alice": 2.0})
    assert masked.record(lambda text: text.replace("Alice", "A***")).metrics == {"mean.A***": 2.0}


def test_greeting_costs_one_call_and_no_tools():
    reply = BuiltinAnalyst([SALES]).complete(
        [{"role": "user", "content": "hello"}], tools=[{"function": {"name": "x"}}]
    )
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


# --- what the question asks, read with what the profile shows (roles.py, profile_reading.py) --------------
RETAIL = {
    "name": "retail_sales",
    "grain": "daily (several rows per date)",
    "columns": [
        {"name": "Date", "type": "datetime"},
        {"name": "Order ID", "type": "identifier"},
        {"name": "Region", "type": "category", "levels": 4},
        {"name": "Channel", "type": "category", "levels": 3},
        {"name": "Category", "type": "category", "levels": 5},
        {"name": "Units", "type": "integer"},
        {"name": "Unit Price", "type": "number"},
        {"name": "Revenue", "type": "number"},
        {"name": "Discount", "type": "number"},
        {"name": "Customer Type", "type": "category", "levels": 2},
    ],
}
OPS = {
    "name": "ops",
    "grain": "monthly (several rows per date)",
    "columns": [
        {"name": "月份", "type": "datetime", "span_days": 1430},
        {"name": "门店", "type": "category", "levels": 3, "values": ["上海店", "北京店", "广州店"]},
        {"name": "营业额", "type": "number"},
        {"name": "订单数", "type": "integer"},
        {"name": "客单价", "type": "number"},
        {"name": "员工数", "type": "integer"},
        {"name": "广告费用", "type": "number"},
    ],
}


def retail_frame():
    return pd.read_excel(SAMPLES / "retail_sales.xlsx", header=2, engine="openpyxl")


@functools.cache
def retail_seen():
    """The retail summary as the analyst reads it after its profile_dataset call on the real workbook."""
    return read_profile(RETAIL, profile_dataset(retail_frame()).record().profile)


def step(plan, *tools):
    return next(s for s in plan.steps if s.tool in tools)


def test_the_profile_gives_level_values_and_the_date_span():
    columns = {c["name"]: c for c in retail_seen()["columns"]}
    assert columns["Customer Type"]["values"] == ["Returning", "New"]
    assert set(columns["Region"]["values"]) == {"East", "West", "North", "South"}
    assert columns["Date"]["span_days"] == 365 and "values" not in columns["Revenue"]
    assert read_profile(RETAIL, None) is RETAIL


@pytest.mark.parametrize(
    "question, target, features",
    [
        (
            "What drives revenue? Fit a regression on units, unit price and discount",
            "Revenue",
            ["Units", "Unit Price", "Discount"],
        ),
        ("Revenue depends on what? Regress it on units and discount", "Revenue", ["Units", "Discount"]),
        ("Explain revenue using unit price and region", "Revenue", ["Unit Price", "Region"]),
        ("What drives revenue?", "Revenue", ["Units", "Unit Price", "Discount"]),  # no predictors named: all numbers
        # only predictors named: as before, the longest numeric name is the target
        ("Fit a regression on units, unit price and discount", "Unit Price", ["Discount", "Units"]),
    ],
)
def test_the_regression_explains_the_metric_the_question_asks_about(question, target, features):
    plan = plan_analysis(question, retail_seen(), zh=False)
    regression = step(plan, "linear_regression")
    assert regression.arguments == {"target_column": target, "feature_columns": features}
    assert plan.metric == target


@pytest.mark.parametrize(
    "question, features",
    [
        ("影响营业额的因素有哪些？", ["订单数", "客单价", "员工数", "广告费用"]),
        ("营业额受什么影响？用广告费用和员工数做回归", ["广告费用", "员工数"]),
        ("用广告费用和订单数来预测营业额", ["广告费用", "订单数"]),
    ],
)
def test_chinese_regression_target_and_predictors(question, features):
    regression = step(plan_analysis(question, OPS, zh=True), "linear_regression")
    assert regression.arguments == {"target_column": "营业额", "feature_columns": features}


def test_the_metric_is_what_the_question_asks_about_not_the_longest_name():
    plan = plan_analysis("What is the impact of discount on revenue?", retail_seen(), zh=False)
    assert plan.metric == "Revenue" and step(plan, "correlation_analysis").arguments == {
        "columns": ["Revenue", "Discount"]
    }
    assert plan_analysis("Does discount affect units?", retail_seen(), zh=False).metric == "Units"
    assert plan_analysis("广告费用对营业额的影响有多大？", OPS, zh=True).metric == "营业额"


@pytest.mark.parametrize(
    "question, column, values",
    [
        ("Do new and returning customers differ in revenue?", "Customer Type", ["New", "Returning"]),
        ("Is revenue higher in the EAST than in the west?", "Region", ["East", "West"]),
        ("How much revenue do online orders bring?", "Channel", ["Online"]),
        ("Did the newsletter lift revenue?", None, []),  # "new" only as a whole word
    ],
)
def test_category_values_named_in_the_question(question, column, values):
    columns = retail_seen()["columns"]
    assert named_values(question, columns, column_spans(question, columns, SYNONYMS)) == (column, values)


def test_named_values_choose_the_grouping_and_two_of_many_are_compared_alone():
    plan = plan_analysis("Do new and returning customers differ in revenue?", retail_seen(), zh=False)
    assert step(plan, "compare_groups", "compare_two_groups").arguments == {
        "value_column": "Revenue",
        "group_column": "Customer Type",
    }
    plan = plan_analysis("Is revenue higher in the EAST than in the west?", retail_seen(), zh=False)
    assert step(plan, "compare_groups", "compare_two_groups").arguments == {
        "value_column": "Revenue",
        "group_column": "Region",
        "groups": ["East", "West"],
    }
    assert step(plan, "compare_two_groups").tool == "compare_two_groups"
    zh = plan_analysis("上海店和北京店的营业额有差异吗？", OPS, zh=True)
    assert step(zh, "compare_two_groups").arguments["groups"] == ["上海店", "北京店"]
    # a grouping column the question names still wins
    assert (
        plan_analysis("Does revenue of new customers differ by region?", retail_seen(), zh=False).dimension == "Region"
    )
    # without the values in the summary, "customers" leads to Customer Type by its name: an assumed
    # reading (the page shows it and the other columns), not a default and not a question
    plan = plan_analysis("Do new and returning customers differ in revenue?", SALES, zh=False)
    group = next(s for s in plan.provenance.sources if s.role == "group")
    assert plan.dimension == "Customer Type" and (group.how, group.phrases) == (
        "semantic",
        ("new and returning customers",),
    )


@pytest.mark.parametrize(
    "question, request_",
    [
        ("Forecast revenue for the next three months", (3, "M")),
        ("forecast the next 6 weeks", (6, "W")),
        ("What will revenue be over the next 10 days?", (10, "D")),
        ("Forecast next quarter", (1, "Q")),
        ("a 2-year forecast of revenue", (2, "Y")),
        ("预测未来3个月的营业额", (3, "M")),
        ("预测未来三个月", (3, "M")),
        ("预测未来十二个月", (12, "M")),
        ("接下来两周的销量", (2, "W")),
        ("预测下个季度", (1, "Q")),
        ("预测未来5天", (5, "D")),
        ("Forecast revenue", None),
        ("分析一下月度趋势", None),
    ],
)
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
    assert step(plan, "forecast").arguments == {
        "date_column": "Date",
        "value_column": "Revenue",
        "horizon": 6,
        "freq": "W",
    }
    zh = plan_analysis("预测未来三个月的营业额", OPS, zh=True)
    assert step(zh, "forecast").arguments == {"date_column": "月份", "value_column": "营业额", "horizon": 3}
    default = plan_analysis("Forecast revenue", retail_seen(), zh=False)
    assert step(default, "forecast").arguments == {"date_column": "Date", "value_column": "Revenue"}


# --- the three questions, end to end on the demo workbook ------------------------------------------
class Calls(dict):
    """A run's tool calls by tool name (the last of each), with every call as `every`."""

    def __init__(self, every):
        super().__init__((c.tool, c) for c in every)
        self.every = every


def analyse(tmp_path, question, answers=None, file="retail_sales.xlsx"):
    """A real built-in run on a demo workbook (gate questions answered as `verity eval` does)."""
    settings, db, service, ws = setup(tmp_path, SAMPLES / file)
    run_id = start_run(service, ws, question)
    settle(service, run_id, answers or {})
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "done", run.error
        calls = Calls(list(s.scalars(select(ToolCall).where(ToolCall.run_id == run_id).order_by(ToolCall.created_at))))
        evidence = list(s.scalars(select(Evidence).where(Evidence.run_id == run_id)))
        s.expunge_all()
        return run, calls, evidence


def test_what_drives_revenue_regresses_revenue_on_the_named_predictors(tmp_path):
    import statsmodels.formula.api as smf

    run, calls, evidence = analyse(tmp_path, "What drives revenue? Fit a regression on units, unit price and discount")
    assert calls["linear_regression"].arguments == {
        "target_column": "Revenue",
        "feature_columns": ["Units", "Unit Price", "Discount"],
    }
    fit = smf.ols("Revenue ~ Units + Q('Unit Price') + Discount", data=retail_frame()).fit()
    recorded = next(e.metrics for e in evidence if "coef.Unit Price" in e.metrics)
    assert recorded["r_squared"] == pytest.approx(fit.rsquared, rel=1e-9)
    assert recorded["coef.Unit Price"] == pytest.approx(fit.params["Q('Unit Price')"], rel=1e-6)
    headline = past_the_reading(run.answer).split("\n")[0]
    # plain words first: the strongest factor and its effect in units; the statistics after it
    assert headline.startswith("**The strongest predictor is Unit Price: each 1 more Unit Price goes with 4.426 higher")
    assert f"about {fit.rsquared * 100:.0f}% of the ups and downs in Revenue" in headline
    assert headline.index("strongest predictor") < headline.index("F(3, 1,196)")
    assert "a effect" not in run.answer


def test_new_and_returning_customers_are_compared_by_customer_type(tmp_path):
    run, calls, evidence = analyse(tmp_path, "Do new and returning customers differ in revenue?")
    assert calls["compare_two_groups"].arguments == {"value_column": "Revenue", "group_column": "Customer Type"}
    assert "compare_groups" not in calls
    means = retail_frame().groupby("Customer Type")["Revenue"].mean()
    recorded = next(e.metrics for e in evidence if "mean_difference" in e.metrics)
    assert recorded["mean_difference"] == pytest.approx(means["New"] - means["Returning"], rel=1e-9)
    assert (
        "New" in past_the_reading(run.answer).split("\n")[0]
        and "Returning" in past_the_reading(run.answer).split("\n")[0]
    )


def test_forecast_goes_as_far_as_asked(tmp_path):
    run, calls, evidence = analyse(tmp_path, "Forecast revenue for the next 6 weeks", {"method.forecast": ["Go ahead"]})
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


# --- forecast or regression: "预测"/"predict" is both words (plan.asks_for) -------------------
NO_DATES = {"name": "ops", "columns": [c for c in OPS["columns"] if c["type"] != "datetime"]}


@pytest.mark.parametrize(
    "question, dataset, forecasts, regresses",
    [
        ("预测未来3个月的营业额", OPS, True, False),  # the future: a forecast only
        ("营业额的趋势如何？预测未来三个月的营业额。", OPS, True, False),
        ("Predict revenue for the next 3 months", RETAIL, True, False),
        ("What will revenue be over the next 10 days?", RETAIL, True, False),  # a horizon without "forecast"
        ("预测下周的营业额", OPS, True, False),
        ("预测未来3个月的营业额，哪些因素在驱动它？", OPS, True, True),  # ... and its drivers
        ("What drives revenue, and what will it be next quarter?", RETAIL, True, True),
        ("Forecast revenue for next month using units and discount", RETAIL, True, True),  # predictors named
        ("哪些因素能预测营业额？", OPS, False, True),  # no future: factors make it a regression
        ("用广告费用和订单数来预测营业额", OPS, False, True),  # predictors named
        ("Build a model to predict revenue", RETAIL, False, True),
        ("预测营业额", OPS, True, False),  # "predict" alone on dated data: a forecast
        ("预测营业额", NO_DATES, False, True),  # ... and a regression when there are no dates
        ("活动之后一周的营业额有变化吗？", OPS, False, False),  # "之后一周" is after an event, not ahead
    ],
)
def test_forecast_questions_run_a_regression_only_when_they_ask_for_drivers(question, dataset, forecasts, regresses):
    tools = tools_in(plan_analysis(question, dataset, zh=not question.isascii()))
    assert ("forecast" in tools, "linear_regression" in tools) == (forecasts, regresses)


def test_the_future_is_a_horizon_ahead_or_a_future_word():
    assert asks_ahead("over the next 10 days") and asks_ahead("3 months ahead") and asks_ahead("下周销量")
    assert asks_ahead("未来三个月") and not asks_ahead("活动之后一周") and not asks_ahead("the following month")
    assert not asks_ahead("过去半年的营业额") and not asks_ahead("预测营业额")
    assert asks_for("Forecast revenue", True, False).forecast  # "forecast" is a future word on its own
    assert asks_for("预测营业额", False, False) == asks_for("predict revenue", False, False)


# --- forecast answers lead with the forecast -----------------------------------------------------------
@functools.cache
def ops_forecast(horizon):
    """What the analyst reads of a real forecast of monthly 营业额 (monthly_operations.xlsx)."""
    ops = pd.read_excel(SAMPLES / "monthly_operations.xlsx", engine="openpyxl")
    result = forecast(ops, "月份", "营业额", horizon=horizon, plot=False)
    return result.record().metrics


def test_the_forecast_headline_lists_each_period_with_its_interval():
    metrics = ops_forecast(3)
    months = ["2025-01", "2025-02", "2025-03"]
    assert [k for k in metrics if k.startswith("forecast.")] == [f"forecast.{m}" for m in months]
    zh = forecast_headline("营业额", metrics, zh=True)
    assert zh.startswith("营业额 未来 3 个月的预测：2025-01 约 ")
    for month in months:
        low, value, high = (metrics[f"{k}.{month}"] for k in ("lower", "forecast", "upper"))
        assert low < value < high
        assert f"{month} 约 {fmt_num(value)}（95% 区间 {fmt_num(low)} 至 {fmt_num(high)}）" in zh
    assert f"合计约 {fmt_num(metrics['forecast_total'])}" in zh and f"平均误差为 {metrics['backtest_mape']:.1f}%" in zh
    en = forecast_headline("Revenue", metrics, zh=False)
    assert en.startswith(
        f"Forecast of Revenue for the next 3 months: 2025-01 about {fmt_num(metrics['forecast.2025-01'])} "
        f"(95% interval {fmt_num(metrics['lower.2025-01'])} to {fmt_num(metrics['upper.2025-01'])})"
    )
    long = forecast_headline("营业额", ops_forecast(12), zh=True)  # twelve months: the first three and the last
    assert "2025-03 约" in long and "2025-04" not in long and "…，2025-12 约" in long
    assert forecast_headline("营业额", {"horizon": 3}, zh=True) is None  # no forecast values seen: the tool's reading


def test_a_forecast_question_is_answered_with_the_forecast_then_the_trend(tmp_path):
    run, calls, evidence = analyse(
        tmp_path,
        "营业额的趋势如何？预测未来三个月的营业额。",
        {"method.forecast": ["继续"]},
        file="monthly_operations.xlsx",
    )
    assert "linear_regression" not in calls  # "预测" with a horizon and no factors asked: no regression
    metrics = calls["forecast"].metrics
    ops = pd.read_excel(SAMPLES / "monthly_operations.xlsx", engine="openpyxl")
    assert metrics["last_actual"] == pytest.approx(ops.groupby(ops["月份"].dt.to_period("M"))["营业额"].sum().iloc[-1])
    headline, supporting = past_the_reading(run.answer).split("\n")[0], run.answer.split("### 其他发现", 1)[1]
    # the answer names the months as people write them (issue 24: 2025年2月, not 2025-02)
    assert headline == f"**{as_people_write(forecast_headline('营业额', metrics, zh=True), True, {})}**"
    assert f"2025年2月 约 {fmt_num(metrics['forecast.2025-02'])}（95% 区间" in headline
    trend = next(e.claim for e in evidence if e.metrics.get("trend") == "increasing")
    assert trend.split("；")[0] in supporting.split("\n- ")[1]  # the trend is the first supporting finding


def test_an_english_forecast_question_leads_with_the_forecast_and_runs_no_regression(tmp_path):
    run, calls, evidence = analyse(tmp_path, "Predict revenue for the next 6 weeks", {"method.forecast": ["Go ahead"]})
    assert "linear_regression" not in calls and calls["forecast"].arguments["horizon"] == 6
    first = calls["forecast"].metrics["forecast.2024-12-30"]
    headline = past_the_reading(run.answer).split("\n")[0]
    assert fmt_num(first) in headline and "next 6 weeks" in headline and "trend" not in headline


# --- category values beyond the profile's top five (value lookups) --------------------------------------
@functools.cache
def survey_frame():
    return pd.read_excel(SAMPLES / "customer_survey.xlsx", engine="openpyxl")


def survey_seen(lookups=True):
    """The survey summary as the analyst reads it: after profile_dataset and, when asked, its value lookups."""
    frame = survey_frame()
    columns = [
        {"name": "Respondent ID", "type": "identifier"},
        {"name": "Age", "type": "integer"},
        {"name": "Gender", "type": "category", "levels": 3},
        {"name": "Age Group", "type": "category", "levels": 6},
        {"name": "City", "type": "category", "levels": 6},
        {"name": "Satisfaction", "type": "number"},
        {"name": "Comment", "type": "text", "levels": 268},
    ]
    seen = read_profile({"name": "survey", "columns": columns}, profile_dataset(frame).record().profile)
    if not lookups:
        return seen
    counts = {a["column"]: value_counts(frame, **a).record().metrics for a in value_lookups(seen)}
    return read_values(seen, counts)


def test_columns_with_more_values_than_the_profile_lists_are_looked_up():
    assert value_lookups(survey_seen(lookups=False)) == [
        {"column": "Age Group", "top": 50},
        {"column": "City", "top": 50},
    ]
    assert value_lookups(RETAIL) == []  # every category there has at most five levels: the profile shows them all
    wide = {
        "columns": [
            {"name": "Store", "type": "category", "levels": 60},  # too many to list
            {"name": "Name", "type": "category", "levels": 9, "pii": "name"},
        ]
    }
    assert value_lookups(wide) == []
    cities = {c["name"]: c for c in survey_seen()["columns"]}["City"]["values"]
    assert sorted(cities) == sorted(survey_frame()["City"].unique())  # all six, not the profile's five


def test_a_value_outside_the_profiles_top_five_is_named():
    question = "Is satisfaction higher in Chengdu than in Beijing?"
    assert survey_frame()["City"].value_counts().index[-1] == "Chengdu"  # the least common city: not in the top five
    for seen, expected in (
        (survey_seen(lookups=False), ("City", ["Beijing"])),  # the profile alone
        (survey_seen(), ("City", ["Chengdu", "Beijing"])),
    ):
        columns = seen["columns"]
        assert named_values(question, columns, column_spans(question, columns, SYNONYMS)) == expected
    assert step(plan_analysis(question, survey_seen(), zh=False), "compare_two_groups").arguments == {
        "value_column": "Satisfaction",
        "group_column": "City",
        "groups": ["Chengdu", "Beijing"],
    }


def test_the_analyst_looks_up_the_values_before_it_plans(tmp_path):
    run, calls, evidence = analyse(
        tmp_path, "Is satisfaction higher in Chengdu than in Beijing?", file="customer_survey.xlsx"
    )
    lookups = [c.arguments for c in calls.every if c.tool == "value_counts"]
    assert sorted(lookups, key=str) == [{"column": "Age Group", "top": 50}, {"column": "City", "top": 50}]
    assert calls["compare_two_groups"].arguments["groups"] == ["Chengdu", "Beijing"]
    frame = survey_frame()
    means = frame.groupby("City")["Satisfaction"].mean()
    recorded = next(e.metrics for e in evidence if "mean_difference" in e.metrics)
    assert recorded["mean_difference"] == pytest.approx(means["Chengdu"] - means["Beijing"], rel=1e-9)
    assert "Chengdu" in past_the_reading(run.answer).split("\n")[0]
