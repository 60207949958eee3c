"""The vocabulary of the clarification gates (gates.py): metric families and their words, goal
cues, period and method patterns, identifier-like names — and the word matching they use."""

from __future__ import annotations

import re
from typing import Iterable


def normalise(text: str) -> str:
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return " ".join(re.sub(r"[^\w\u4e00-\u9fff]+|_", " ", text.lower()).split())


def word_set(text: str) -> set[str]:
    return {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in normalise(text).split()}


def has_word(words: Iterable[str], text: str) -> bool:
    norm, tokens = normalise(text), word_set(text)
    for word in words:
        if word.isascii():
            if (" " in word and word in norm) or word in tokens:
                return True
        elif word in text:
            return True
    return False


# A family of metric columns: the words that refer to it; `generic` words name the family, not a
# specific column (a column called just "revenue" is not named exactly when "revenue_net" exists).
FAMILIES: dict[str, dict[str, tuple[str, ...]]] = {
    "revenue": {
        "words": (
            "revenue",
            "sale",
            "gmv",
            "turnover",
            "income",
            "amount",
            "takings",
            "收入",
            "营收",
            "营业额",
            "销售额",
            "金额",
            "流水",
            "成交额",
            "gmv",
        ),
        "generic": (
            "revenue",
            "sale",
            "turnover",
            "income",
            "amount",
            "takings",
            "收入",
            "营收",
            "营业额",
            "销售额",
            "金额",
            "流水",
            "成交额",
        ),
    },
    "orders": {"words": ("order", "订单", "单量"), "generic": ("order", "count", "订单", "单量")},
    "users": {
        "words": ("user", "customer", "member", "buyer", "用户", "客户", "会员", "买家"),
        "generic": ("user", "customer", "member", "buyer", "count", "用户", "客户", "会员", "买家"),
    },
}
HINTS = {
    "net": ("after discounts, refunds or returns", "扣除折扣、退款或退货后"),
    "gross": ("before any deductions", "未扣除任何费用前"),
    "gmv": (
        "gross merchandise value: every order placed, before cancellations and refunds",
        "成交总额：所有下单金额，未扣除取消和退款",
    ),
    "tax": ("tax-related", "与税有关"),
    "active": ("only active ones", "仅活跃的"),
    "new": ("only new ones", "仅新增的"),
}

GOAL_CUES = {
    "trend": r"trend|over time|change|growth|grow|monthly|weekly|by month|per month|趋势|变化|增长|走势|按月|每月",
    "compare": r"differ|compar|\bvs\b|versus|between|\bby\b|across|higher|lower|best|worst|most|least|rank|top|"
    r"which|差异|区别|比较|对比|不同|之间|哪个|哪些|最高|最低|排名",
    "attribution": r"driv|explain|factor|why|impact|affect|influenc|attribut|contribut|caus|predict|"
    r"驱动|因素|原因|为什么|影响|归因|贡献|导致|预测",
    "retention": r"retention|retain|churn|come back|return(?:ing)? customer|cohort|留存|流失|复购|回访",
    "funnel": r"funnel|conversion|convert|drop.?off|漏斗|转化",
    "overview": r"overview|summar|describe|distribution|typical|average|mean|median|how (?:is|are|did|does) .+ "
    r"(?:doing|performing|going)|how many|how much|what is|what's|total|correlat|relat|associat|"
    r"forecast|概况|总体|描述|分布|平均|多少|总共|总计|相关|关系|表现|怎么样|如何",
}
VAGUE = re.compile(
    r"^\s*(?:please\s+|can you\s+|could you\s+)?(?:analy[sz]e|analysis of|look (?:at|into)|"
    r"dig into|check(?: out)?|investigate|explore|study|examine|tell me about|what about|"
    r"请?(?:帮我)?(?:分析|看看|看一下|研究|查看|了解一下))",
    re.I,
)

PERIOD_COMPARE = re.compile(
    r"year[- ]over[- ]year|\byoy\b|month[- ]over[- ]month|\bmom\b|week[- ]over[- ]week|quarter[- ]over[- ]quarter|"
    r"(?:compar\w*|vs\.?|versus|than|against|relative) (?:to |with )?(?:the )?(?:last|previous|prior|same)\b|"
    r"(?:last|previous|prior) (?:year|month|quarter|week|period)\b.*\b(?:vs|versus|compar\w*|than)|"
    r"before and after|同比|环比|比上|较上|相比上|与上|和上|跟上|比去年|较去年|与去年|和去年|前后对比|上期",
    re.I,
)
EXPLICIT_PERIOD = re.compile(
    r"\b(?:19|20)\d{2}\b|\bq[1-4]\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\d{4}-\d{1,2}|"
    r"\d{1,2}月|第?[一二三四1-4]季度|\blast \d+ (?:days|weeks|months)\b|最近\d+天",
    re.I,
)

METHODS: dict[str, tuple[str, tuple[str, str], tuple[str, str]]] = {
    # kind -> (pattern, (en what, zh what), (en risk, zh risk))
    "causal": (
        r"\bcaus\w*|because of|effect of|导致|因果|造成|引起",
        ("a cause-and-effect conclusion", "因果结论"),
        (
            "Your data is observational: it can show that things move together, not that one causes the other.",
            "这是观察数据：只能说明两者一起变化，不能证明谁导致谁。",
        ),
    ),
    "forecast": (
        r"forecast\w*|predict\w* (?:the )?(?:next|future|coming)|next (?:month|quarter|year|week)|"
        r"\bfuture\b|预测|预估|未来|下个月|明年",
        ("a forecast", "预测"),
        (
            "A forecast assumes the past pattern continues; it comes with a range, not a promise.",
            "预测假设过去的规律会延续；结果是一个区间，不是保证。",
        ),
    ),
    # (not "treatment": treated groups are everyday data, e.g. PlantGrowth's trt1/trt2)
    "experiment": (
        r"a/b|\bab test|experiment|control group|实验|ab测试|a/b测试",
        ("an experiment evaluation", "实验效果评估"),
        (
            "This treats the groups as a fair experiment (random assignment, same period).",
            "这要求分组是公平的实验（随机分配、同一时期）。",
        ),
    ),
    "attribution": (
        r"attribut\w*|归因|contribution of each|which channel (?:drove|brought)",
        ("an attribution", "归因分析"),
        (
            "Attribution splits credit by a rule; different rules give different answers.",
            "归因按某种规则分配功劳，规则不同，结果不同。",
        ),
    ),
    "retention": (
        r"retention|retain|churn|cohort|留存|流失|复购",
        ("a retention analysis", "留存分析"),
        (
            "Retention depends on the window: who counts as 'came back' within how many days.",
            "留存取决于时间窗口：多少天内回来才算留存。",
        ),
    ),
}
# A bare "预测"/"predict" is a forecast unless the question asks what drives or explains something
# and names no future ("哪些因素能预测营业额" is a model of drivers, "预测营业额" a forecast).
DRIVER_WORDS = r"driv|factor|explain|why|affect|influenc|depend|驱动|因素|原因|为什么|影响|取决|解释"
FUTURE_WORDS = (
    r"forecast\w*|next (?:month|quarter|year|week)|\bfuture\b|upcoming|\bahead\b|"
    r"未来|下个?月|下个?季度|下周|明年|今后|接下来|预报"
)
INFERENTIAL = ("compare", "trend", "attribution", "retention", "funnel")
ID_LIKE = re.compile(
    r"(?:^|[\s_\-])(?:id|code|no|num|zip|postcode|postal|sku|ean|upc)$|^(?:id|no)[\s_\-]|"
    r"编号|代码|代号|工号|邮编|号码|单号|序号",
    re.I,
)
