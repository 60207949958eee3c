"""What the built-in analyst decides to compute: the standard analyses that fit the column types
and the question's keywords (zh/en). Pure functions over dataset summaries, easy to test."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from app.agent.builtin_reading import (GROUPING, NUMERIC, asks_ahead, column_spans, forecast_arguments,
                                       forecast_request, named_values, regression_roles)

METRIC_HINTS = ("revenue", "sales", "amount", "profit", "income", "price", "cost", "score", "satisfaction",
                "营业额", "销售额", "收入", "金额", "利润", "成本", "价格", "得分", "满意")

KEYWORDS = {
    "compare": ("differ", "difference", "compare", "comparison", " vs", "versus", "between", "by ", "across",
                "higher", "lower", "差异", "区别", "比较", "对比", "不同", "之间", "各", "哪个"),
    "correlate": ("correlat", "relationship", "related", "relate", "associat", "link", "impact", "affect",
                  "相关", "关系", "关联", "影响"),
    "regress": ("driver", "drive", "factor", "explain", "regress", "model", "驱动", "因素", "回归", "解释"),
    # "predict"/"预测" alone is either: a regression ("predict revenue from units") or a forecast
    # ("预测营业额"); see `asks_for`.
    "predict": ("predict", "预测"),
    "trend": ("trend", "over time", "change over", "changed over", "monthly", "by month", "per month", "growth",
              "趋势", "随时间", "变化", "每月", "按月", "增长", "走势"),
    # The future: a horizon ahead ("next 6 weeks", "下周": asks_ahead) or one of these words.
    "forecast": ("forecast", "future", "next month", "next quarter", "next year", "next week", "upcoming",
                 "未来", "下个月", "下月", "下个季度", "下季度", "明年", "今后", "接下来", "预报"),
    # What makes a question about the future also ask for a regression: its drivers or factors.
    # ("determine"/"决定" are left out: "determine next month's revenue" asks for a forecast.)
    "drivers": ("driver", "drive", "factor", "explain", "regress", "affect", "influenc", "depend", "why",
                "驱动", "因素", "解释", "回归", "影响", "取决", "原因", "为什么"),
    "distribution": ("distribution", "spread", "typical", "average", "mean", "median", "summary", "overview",
                     "分布", "平均", "中位", "概况", "总体", "描述"),
}
# Words a question may use for a column named in the other language.
SYNONYMS = {
    "revenue": ("收入", "营收", "营业额", "销售额"), "sales": ("销售", "销量", "销售额"), "region": ("地区", "区域", "大区"),
    "channel": ("渠道",), "category": ("品类", "类别"), "price": ("价格", "单价"), "units": ("数量", "件数"),
    "discount": ("折扣",), "date": ("日期", "时间"), "city": ("城市",), "gender": ("性别",), "age": ("年龄",),
    "satisfaction": ("满意度", "满意"), "customer": ("客户", "顾客"), "store": ("门店", "店铺"),
    "营业额": ("revenue", "sales"), "门店": ("store", "shop"), "广告费用": ("advertising", "ads", "ad spend"),
    "订单数": ("orders",), "月份": ("month",), "退货率": ("return rate", "returns"), "员工数": ("staff", "employees"),
    "客单价": ("basket", "average order"),
}
GREETING = re.compile(r"^\s*(hi|hello|hey|thanks|thank you|你好|您好|谢谢|嗨)[\s!！。.,，]*$", re.I)


@dataclass
class Step:
    """One planned tool call and the task it serves."""

    tool: str
    arguments: dict[str, Any]
    task: str | None = None  # subject of the task it completes (None: supporting step)
    evidence: bool = True


@dataclass
class Plan:
    metric: str | None
    dimension: str | None
    steps: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def wants(question: str, kind: str) -> bool:
    text = f" {question.lower()} "
    return any(word in text for word in KEYWORDS[kind])


@dataclass(frozen=True)
class Asks:
    """Whether a question asks for a forecast, a regression, or both."""

    forecast: bool
    regression: bool


def asks_for(question: str, has_date: bool, predictors_named: bool) -> Asks:
    """Forecast or regression, as the question's words decide. "预测"/"predict" is both a forecasting
    and a modelling word, so:
    - a question about the future (a horizon, 未来/明年/next month/forecast ...) is a forecast; it is
      also a regression only when it asks for drivers or factors, or names predictors ("with A and B");
    - otherwise "predict" alone is a forecast when the data have dates and the question neither asks
      for factors nor names predictors ("预测营业额"), else a regression ("哪些因素能预测营业额",
      "用广告费用来预测营业额"); the other modelling words (drivers, explain, regress) are a regression."""
    future = wants(question, "forecast") or asks_ahead(question)
    drivers = wants(question, "drivers") or predictors_named
    if future:
        return Asks(forecast=True, regression=drivers)
    forecast = wants(question, "predict") and has_date and not drivers and not wants(question, "regress")
    regression = wants(question, "regress") or (wants(question, "predict") and not forecast)
    return Asks(forecast=forecast, regression=regression)


def mentioned_columns(question: str, columns: list[dict[str, Any]]) -> list[str]:
    """Columns named in the question, longest names first (so 'Unit Price' beats 'Price')."""
    text = question.lower()
    found = []
    for col in sorted(columns, key=lambda c: -len(c["name"])):
        name = col["name"].lower()
        if name and name in text and not any(name in f.lower() for f in found):
            found.append(col["name"])
    for col in columns:  # then names the question uses in the other language
        words = [w for key, values in SYNONYMS.items() if key in col["name"].lower() for w in values]
        if col["name"] not in found and any(w in text for w in words):
            found.append(col["name"])
    return found


def choose_metric(columns: list[dict[str, Any]], named: list[str]) -> str | None:
    numeric = [c["name"] for c in columns if c["type"] in NUMERIC and not c.get("pii")]
    for name in named:
        if name in numeric:
            return name
    for hint in METRIC_HINTS:
        for name in numeric:
            if hint in name.lower():
                return name
    return numeric[0] if numeric else None


def choose_dimension(columns: list[dict[str, Any]], named: list[str], implied: str | None = None) -> str | None:
    """A grouping column the question names, else the one whose values it names ("new and returning
    customers" → Customer Type), else the first with few levels."""
    groupable = [c for c in columns if c["type"] in GROUPING and 2 <= (c.get("levels") or 0) <= 30
                 and not c.get("pii")]
    for name in named:
        if any(c["name"] == name for c in groupable):
            return name
    if implied:
        return implied
    few = [c for c in groupable if c.get("levels", 0) <= 12]
    return (few or groupable or [{"name": None}])[0]["name"]


def other_numeric(columns: list[dict[str, Any]], metric: str | None, limit: int = 6) -> list[str]:
    return [c["name"] for c in columns if c["type"] in NUMERIC and c["name"] != metric and not c.get("pii")][:limit]


def plan_analysis(question: str, dataset: dict[str, Any], zh: bool, confirmed: dict[str, str] | None = None) -> Plan:
    """Profile, then the analyses that fit the columns and the question (and the user's confirmed
    definitions: the chosen metric, the goal, columns that are labels — see `apply_confirmed`).
    Column summaries may carry the values and date spans the profile showed (read_profile)."""
    question, columns, chosen = apply_confirmed(question, dataset["columns"], confirmed or {})
    named, spans = mentioned_columns(question, columns), column_spans(question, columns, SYNONYMS)
    roles = regression_roles(question, columns, spans)
    dated = any(c["type"] == "datetime" and not c.get("pii") for c in columns)
    asks = asks_for(question, dated, bool(roles.predictors))
    implied, values = named_values(question, columns, spans)
    # The metric the question asks about ("what drives revenue") beats the longest column it names.
    metric = chosen or roles.target or choose_metric(columns, named)
    dimension = choose_dimension(columns, named, implied)
    plan = Plan(metric, dimension, [Step("profile_dataset", {}, evidence=False)])
    if metric is None:
        plan.notes.append("没有数值列，只能做描述。" if zh else "No numeric column: only a description is possible.")
        if dimension:
            plan.steps.append(Step("value_counts", {"column": dimension}, _t(zh, f"{dimension} breakdown", f"{dimension}分布")))
            plan.steps.append(Step("plot_bar", {"x_column": dimension}, evidence=False))
        return plan
    plan.steps.append(Step("describe_columns", {"columns": [metric]}, _t(zh, f"Describe {metric}", f"描述{metric}")))
    plan.steps.append(Step("plot_histogram", {"value_column": metric}, evidence=False))
    over_time = add_time_steps(plan, question, asks.forecast, dataset.get("grain"), columns, metric, zh)
    specific = wants(question, "correlate") or asks.regression or over_time
    if dimension and (wants(question, "compare") or not specific):
        add_compare_steps(plan, columns, metric, dimension, values if dimension == implied else [], zh)
    numeric = other_numeric(columns, metric, 50)
    chosen_predictors = [n for n in roles.predictors if roles.target == metric]
    others = ([n for n in chosen_predictors if n in numeric] or [n for n in named if n != metric and n in numeric]
              or other_numeric(columns, metric))
    if others:
        subject = _t(zh, f"Relationship of {metric} with other numbers", f"{metric}与其他数值的关系")
        plan.steps.append(Step("correlation_analysis", {"columns": [metric, *others]}, subject))
        plan.steps.append(Step("plot_scatter", {"x_column": others[0], "y_column": metric}, evidence=False))
    features = chosen_predictors or others  # the predictors the question names, else the other numbers
    if features and asks.regression:
        subject = _t(zh, f"What explains {metric}", f"哪些因素解释{metric}")
        plan.steps.append(Step("linear_regression", {"target_column": metric, "feature_columns": features[:5]}, subject))
    return plan


def add_compare_steps(plan: Plan, columns: list[dict[str, Any]], metric: str, dimension: str, values: list[str],
                      zh: bool) -> None:
    """Compare the metric across the dimension's groups; when the question names exactly two of
    its values (and the column has more), just those two."""
    levels = next(c.get("levels", 0) for c in columns if c["name"] == dimension)
    arguments = {"value_column": metric, "group_column": dimension}
    if len(values) == 2 and levels > 2:
        arguments["groups"] = values
        subject = _t(zh, f"Compare {metric}: {values[0]} vs {values[1]}", f"比较{values[0]}与{values[1]}的{metric}")
    else:
        subject = _t(zh, f"Compare {metric} across {dimension}", f"比较不同{dimension}的{metric}")
    tool = "compare_two_groups" if levels == 2 or "groups" in arguments else "compare_groups"
    plan.steps.append(Step(tool, arguments, subject))
    plan.steps.append(Step("plot_bar", {"x_column": dimension, "y_column": metric, "agg": "mean"}, evidence=False))


def apply_confirmed(question: str, columns: list[dict[str, Any]],
                    confirmed: dict[str, str]) -> tuple[str, list[dict[str, Any]], str | None]:
    """What clarification settled (clarify.py, gates.py): the metric the user chose, the goal they
    picked for this question (its words join the question) and numeric columns they called labels."""
    from app.agent.gates import question_key

    labels = {topic.split(".", 1)[1] for topic, answer in confirmed.items()
              if topic.startswith("field.") and re.match(r"an identifier|标识", answer, re.I)}
    columns = [{**c, "type": "identifier"} if c["name"] in labels else c for c in columns]
    numeric = {c["name"] for c in columns if c["type"] in NUMERIC}
    goal = confirmed.get(f"goal.{question_key(question)}")
    if goal:
        question = f"{question} ({goal})"
    chosen = next((answer for topic, answer in confirmed.items() if topic.startswith("metric") and answer in numeric
                   and (topic == "metric" or topic.split(".", 1)[-1] in question.lower())), None)
    return question, columns, chosen


def add_time_steps(plan: Plan, question: str, forecast: bool, grain: str | None, columns: list[dict[str, Any]],
                   metric: str, zh: bool) -> bool:
    """Trend (and forecast, when `asks_for` says so) steps when the question is about time and there
    is a date column. The forecast goes as far ahead as the question asks ("the next three months");
    the tool's default (one seasonal cycle) when it does not say."""
    column = next((c for c in columns if c["type"] == "datetime" and not c.get("pii")), None)
    date = column["name"] if column else None
    if date is None or not (wants(question, "trend") or forecast):
        return False
    subject = _t(zh, f"How {metric} changes over time", f"{metric}随时间的变化")
    plan.steps.append(Step("time_series_trend", {"date_column": date, "value_column": metric}, subject))
    plan.steps.append(Step("plot_line", {"x_column": date, "y_column": metric}, evidence=False))
    if forecast:
        subject = _t(zh, f"Forecast {metric}", f"预测{metric}")
        arguments = {"date_column": date, "value_column": metric}
        if request := forecast_request(question):
            arguments.update(forecast_arguments(request, grain, column.get("span_days")))
        plan.steps.append(Step("forecast", arguments, subject))
    return True


def _t(zh: bool, en: str, zh_text: str) -> str:
    return zh_text if zh else en
