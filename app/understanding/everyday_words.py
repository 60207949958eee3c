"""Everyday words for concepts any spreadsheet may hold (zh/en): "older" asks about age, "earn" about
income or wage, "贵" about price, "busier" about visits. A small table of common language, not
of one dataset's columns: each concept lists pieces of column names (as words.SYNONYMS
keys: a piece of the name, lower case) and the words a question uses for it.
"""

from __future__ import annotations

# (column-name pieces, question words). A piece longer than three letters is found anywhere in a name,
# so none may sit inside an unrelated word ("fare" in welfare, "dist" in district, "exper" in
# experiment); a three-letter one must start a word of it with at most two letters after. Words are matched as whole English words (plurals allowed)
# or as Chinese text; single Chinese characters are avoided where they sit inside other words
# ("热" in 热门, "快" in 快递).
CONCEPTS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (
        ("age", "年龄", "年纪"),
        (
            "older",
            "oldest",
            "younger",
            "youngest",
            "elderly",
            "how old",
            "年龄",
            "年纪",
            "年长",
            "年轻",
            "岁数",
            "年纪大",
            "岁",
        ),
    ),
    (
        ("weight", "体重", "重量"),
        (
            "heavy",
            "heavier",
            "heaviest",
            "lighter",
            "lightest",
            "weigh",
            "weighs",
            "weighed",
            "体重",
            "重量",
            "更重",
            "最重",
            "更轻",
            "最轻",
        ),
    ),
    (("height", "身高"), ("tall", "taller", "tallest", "身高", "个子", "个头")),
    (
        ("income", "wage", "salary", "salaries", "pay", "earnings", "收入", "工资", "薪"),
        (
            "earn",
            "earns",
            "earned",
            "earning",
            "earnings",
            "paid",
            "salary",
            "salaries",
            "wage",
            "wages",
            "income",
            "收入",
            "工资",
            "薪水",
            "薪资",
            "薪酬",
            "赚",
            "挣",
        ),
    ),
    (
        ("price", "cost", "价格", "售价", "单价", "费用"),
        (
            "cost",
            "costs",
            "costly",
            "expensive",
            "pricier",
            "priciest",
            "cheap",
            "cheaper",
            "cheapest",
            "价格",
            "价钱",
            "售价",
            "贵",
            "便宜",
        ),
    ),
    (
        ("visits", "visitors", "traffic", "footfall", "calls received", "calls", "客流", "访客", "人流", "人次"),
        (
            "busy",
            "busier",
            "busiest",
            "crowded",
            "traffic",
            "footfall",
            "客流",
            "人流",
            "人多",
            "热闹",
            "繁忙",
            "更忙",
            "最忙",
            "客人",
            "来客",
            "顾客多",
            "顾客少",
        ),
    ),
    (
        ("temp", "temperature", "气温", "温度"),
        (
            "hot",
            "hotter",
            "hottest",
            "warm",
            "warmer",
            "warmest",
            "colder",
            "coldest",
            "heat",
            "temperature",
            "气温",
            "温度",
            "炎热",
            "天热",
            "天冷",
            "热天",
            "冷天",
            "更热",
            "最热",
            "更冷",
            "最冷",
            "热的时候",
            "冷的时候",
            "越热",
            "越冷",
        ),
    ),
    (("wind", "风速", "风力"), ("windy", "windier", "windiest", "风速", "风力", "风大", "风小", "刮风")),
    (("distance", "距离"), ("far", "farther", "farthest", "distance", "距离", "多远", "更远", "最远")),
    (
        ("duration", "minutes", "hours", "时长", "用时", "耗时"),
        ("how long", "多久", "多长时间", "时长", "用时", "耗时"),
    ),
    (
        ("speed", "速度", "车速"),
        (
            "fast",
            "faster",
            "fastest",
            "slower",
            "slowest",
            "quicker",
            "quickest",
            "速度",
            "车速",
            "更快",
            "最快",
            "更慢",
            "最慢",
        ),
    ),
    (("length", "长度"), ("long", "longer", "longest", "长度", "更长", "最长")),
    (("width", "宽度"), ("wide", "wider", "widest", "宽度", "更宽", "最宽")),
    (("score", "成绩", "分数", "得分"), ("score", "scores", "marks", "成绩", "分数", "得分")),
    (
        ("sales", "revenue", "销售额", "营业额", "销量"),
        ("sell", "sells", "selling", "sold", "销售", "卖得", "卖出", "卖了", "卖掉", "earn", "earns", "earned", "赚"),
    ),  # a business earns its revenue
    (("fee", "fees", "revenue", "amount", "income", "金额", "费用", "收入", "营业额"), ("money", "takings", "钱")),
    (("yield", "output", "产量", "亩产", "产出"), ("yield", "yields", "output", "产量", "亩产", "收成", "产出")),
    (
        ("units", "quantity", "qty", "件数", "数量"),
        ("件数", "多少件", "几件", "数量", "how many units", "how many items"),
    ),
    # what a customer spends is what the shop takes: a revenue or order-amount column
    (
        ("spend", "spending", "expenditure", "消费", "支出", "revenue", "order amount", "order value", "金额"),
        ("spend", "spends", "spent", "spending", "消费", "花费", "花了", "支出"),
    ),
    (
        ("education", "educ", "schooling", "学历", "教育"),
        ("educated", "schooling", "学历", "教育", "受教育", "文化程度"),
    ),
    (
        ("attrition", "churn", "turnover", "流失", "离职"),
        ("leave", "leaves", "leaving", "quit", "quits", "quitting", "churned", "流失", "离职", "辞职"),
    ),
    (("experience", "tenure", "工龄", "经验"), ("experienced", "experience", "工龄", "经验", "资历")),
)


def concept_synonyms() -> dict[str, tuple[str, ...]]:
    """The concepts as SYNONYMS entries: each column-name piece with the concept's words."""
    table: dict[str, tuple[str, ...]] = {}
    for pieces, words in CONCEPTS:
        for piece in pieces:
            table[piece] = tuple(dict.fromkeys((*table.get(piece, ()), *words)))
    return table


def merged(own: dict[str, tuple[str, ...]], extra: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """Two synonym tables as one, each key's words in order without repeats."""
    table = dict(own)
    for key, words in extra.items():
        table[key] = tuple(dict.fromkeys((*table.get(key, ()), *words)))
    return table


# Conditions a category such as the weather sets the scene for: "天气热的时候", "when the weather is
# hot", "天气风大时". Said right after that category's name, these words are about the number
# (temperature, wind speed), not the category's values (晴/雨/多云).
CONDITION_WORDS = frozenset(word for pieces, words in CONCEPTS if pieces[0] in ("temp", "wind") for word in words)
