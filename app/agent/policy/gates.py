"""The hard clarification gates of SPEC §9: when the harness must ask before any analysis runs.

Pure functions over the question, the dataset summaries (`dataset_summary` shape) and the
topics already answered in the workspace. `check_gates` returns the first gate that fires, or
None. A gate never asks what a tool can compute (ranges, counts, missing values are computed, not
asked) and never asks twice: every gate has a `topic`, and an answered topic never fires again.

Gates, in order: scope (a new file), metric, goal, time window, field semantics, high-risk
method, data quality.

With a language model configured (`GateInput.model_reads`) the model reads the question and asks
through ask_user_question itself when it needs to (issue 23): before its first request only the
deterministic metric gate runs, for a metric word several near-identical columns hold ("revenue"
beside revenue_gross and revenue_net) and none of which the question names. The built-in analyst
(no model) keeps every gate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from app.agent.policy.intent import find_restrictions
from app.understanding.count_pairs import count_pair
from app.understanding.dataset_choice import choose_dataset, describe_fit
from app.understanding.gate_words import (
    DRIVER_WORDS,
    EXPLICIT_PERIOD,
    FAMILIES,
    FUTURE_WORDS,
    GOAL_CUES,
    HINTS,
    ID_LIKE,
    INFERENTIAL,
    METHODS,
    PERIOD_COMPARE,
    VAGUE,
    has_word,
    normalise,
    word_set,
)
from app.understanding.profile_reading import count_weights
from app.understanding.text import header_leaf
from app.understanding.wide_pairs import marker_columns
from app.understanding.words import question_key

NUMERIC = ("number", "integer")
GATED_INTENTS = ("analysis", "deep")


@dataclass
class Gate:
    topic: str
    question: str
    options: list[dict[str, str]] = field(default_factory=list)
    reason: str = ""
    kind: str = "single"

    def as_arguments(self) -> dict[str, Any]:
        """The ask_user_question arguments the harness calls with."""
        return {
            "question": self.question,
            "kind": self.kind,
            "options": self.options,
            "reason": self.reason,
            "topic": self.topic,
        }


@dataclass
class GateInput:
    question: str
    datasets: list[dict[str, Any]]
    answered: dict[str, Any] = field(default_factory=dict)  # topic -> answer (the workspace's)
    intent: str | None = "analysis"
    language: str = "en"
    new_files: list[dict[str, Any]] = field(default_factory=list)  # datasets added since the last analysis
    model_reads: bool = False  # a language model reads the question first: only the metric gate runs
    follows: str = ""  # the question a follow-up continues (its first): a table picked for that one holds here too

    @property
    def zh(self) -> bool:
        return self.language == "zh"

    @cached_property
    def choice(self) -> Any:
        """Which dataset the question is about (dataset_choice): by its words or the scope answer. Read
        once per input: the gates only read it (each gate that looks at `dataset` read every table's
        columns and values against the question again, 5 times a turn)."""
        keys = tuple(dict.fromkeys(question_key(q) for q in (self.question, self.follows) if q))
        return choose_dataset(self.question, self.datasets, self.answered, keys)

    @property
    def dataset(self) -> dict[str, Any]:
        """The dataset the other gates look at: the chosen one (the last one when none is)."""
        return self.choice.dataset or self.datasets[-1]


def _t(zh: bool, en: str, zh_text: str) -> str:
    return zh_text if zh else en


def _option(label: str, description: str) -> dict[str, str]:
    return {"label": label, "description": description}


# --- the gates -------------------------------------------------------------------------------
def check_gates(inp: GateInput) -> Gate | None:
    """The first gate that fires and whose topic was never answered, or None."""
    if inp.intent not in GATED_INTENTS and inp.intent is not None or not inp.datasets:
        return None
    gates = (
        (metric_gate,)
        if inp.model_reads
        else (scope_gate, metric_gate, goal_gate, window_gate, field_gate, method_gate, quality_gate)
    )
    for gate in gates:
        found = gate(inp)
        if found is not None and found.topic not in inp.answered:
            return found
    return None


def goals(question: str) -> set[str]:
    return {goal for goal, pattern in GOAL_CUES.items() if re.search(pattern, question, re.I)}


def _columns(inp: GateInput) -> list[dict[str, Any]]:
    columns: list[dict[str, Any]] = inp.dataset.get("columns", [])  # dataset_summary's column summaries
    return columns


def metric_candidates(columns: list[dict[str, Any]], family: str) -> list[dict[str, Any]]:
    """The numbers whose own header has a word of the family: a merged header's group word ("Sales" of
    "Sales / Drinks Sold" and "Sales / Cash ($)") is the sheet's layout, shared by every leaf under it, and
    makes none of them the family's (text.header_leaf)."""
    words = FAMILIES[family]["words"]
    return [
        c
        for c in columns
        if c["type"] in NUMERIC
        and not c.get("pii")
        and not ID_LIKE.search(c["name"])
        and has_word(words, header_leaf(c["name"]))
    ]


def named_exactly(question: str, candidates: list[dict[str, Any]], family: str) -> list[str]:
    """Candidates the question names precisely: all the words of the column name appear, and the
    name says more than the family's generic word (a column called "revenue" beside "revenue_net")."""
    q_tokens = word_set(question)
    named = [
        c["name"]
        for c in candidates
        if (word_set(leaf) <= q_tokens if (leaf := header_leaf(c["name"])).isascii() else leaf in question)
    ]
    named = [n for n in named if not any(n != m and word_set(n) < word_set(m) for m in named)]
    generic = set(FAMILIES[family]["generic"])
    return [n for n in named if (word_set(n) - generic) or not n.isascii() and n not in generic]


def referenced_families(question: str) -> list[str]:
    return [f for f, spec in FAMILIES.items() if has_word(spec["words"], question)]


def resolved_metric(inp: GateInput) -> str | None:
    """The metric column the question means, when it is settled (named, confirmed or the only one)."""
    columns = _columns(inp)
    numeric = [c["name"] for c in columns if c["type"] in NUMERIC]
    for topic, answer in inp.answered.items():
        if topic.startswith("metric") and isinstance(answer, str) and answer in numeric:
            return answer
    for c in sorted(columns, key=lambda c: -len(c["name"])):
        name: str = c["name"]
        if name in numeric and normalise(leaf := header_leaf(name)) and normalise(leaf) in normalise(inp.question):
            return name
    for family in referenced_families(inp.question):
        candidates = metric_candidates(columns, family)
        if len(candidates) == 1:
            only: str = candidates[0]["name"]
            return only
    return None


def metric_gate(inp: GateInput) -> Gate | None:
    columns, q = _columns(inp), inp.question
    families = referenced_families(q)
    if not families:  # no metric word at all: ambiguous only when the question needs one number
        if inp.model_reads:  # a guess from the question's goal, not a word several columns share: the model reads it
            return None
        named_numeric = [
            c for c in columns if c["type"] in NUMERIC and normalise(header_leaf(c["name"])) in normalise(q)
        ]
        wanted = goals(q)
        if named_numeric or not (wanted & set(INFERENTIAL)) or "overview" in wanted:
            return None
        families = list(FAMILIES)
    for family in families:
        candidates = metric_candidates(columns, family)
        if len(candidates) < 2 or named_exactly(q, candidates, family):
            continue
        names = [c["name"] for c in candidates][:6]
        word = family if family != "revenue" else _t(inp.zh, "revenue", "收入")
        return Gate(
            topic="metric" if family == "revenue" else f"metric.{family}",
            question=_t(
                inp.zh,
                f"Which column should I use for “{word}”? Your data has several that could mean it.",
                f"“{word}”应该用哪一列？数据中有几列都可能表示它。",
            ),
            options=[_option(c["name"], _column_note(c, inp)) for c in candidates[:6]],
            reason=_t(
                inp.zh,
                f"Several columns could be the metric ({', '.join(names)}); the answer depends on which one is meant.",
                f"有几列都可能是要分析的指标（{'、'.join(names)}），结论取决于用哪一列。",
            ),
        )
    return None


def _column_note(column: dict[str, Any], inp: GateInput) -> str:
    words = word_set(column["name"])
    hint = next((HINTS[w][1 if inp.zh else 0] for w in HINTS if w in words), "")
    rows = inp.dataset.get("rows") or 0
    missing = column.get("missing") or 0
    kind = _t(
        inp.zh,
        "whole numbers" if column["type"] == "integer" else "numbers",
        "整数" if column["type"] == "integer" else "数值",
    )
    base = _t(inp.zh, f"{kind}; {missing} of {rows} rows missing", f"{kind}；{rows} 行中缺失 {missing} 行")
    return f"{hint}; {base}" if hint else base


def goal_gate(inp: GateInput) -> Gate | None:
    q = inp.question
    if inp.intent == "deep" or not VAGUE.search(q) or goals(q):
        return None
    columns = _columns(inp)
    has_date = any(c["type"] == "datetime" for c in columns)
    has_groups = any(c["type"] in ("category", "boolean") for c in columns)
    options = []
    if has_date:
        options.append(
            _option(
                _t(inp.zh, "Trend over time", "随时间的趋势"),
                _t(inp.zh, "How it changed month by month", "按月看它如何变化"),
            )
        )
    if has_groups:
        options.append(
            _option(
                _t(inp.zh, "Compare groups", "比较各组差异"),
                _t(inp.zh, "Which group (region, channel, ...) is higher or lower", "哪个组（地区、渠道等）更高或更低"),
            )
        )
    options.append(
        _option(
            _t(inp.zh, "What drives it", "驱动因素"),
            _t(inp.zh, "Which other numbers move with it (attribution)", "哪些其他数值与它一起变化（归因）"),
        )
    )
    options.append(
        _option(
            _t(inp.zh, "Retention", "留存"), _t(inp.zh, "Whether customers come back over time", "客户是否随时间回来")
        )
    )
    options.append(
        _option(
            _t(inp.zh, "Funnel", "漏斗"),
            _t(inp.zh, "How many get from one step to the next", "每一步有多少人进入下一步"),
        )
    )
    options.append(
        _option(
            _t(inp.zh, "Overview", "概况"),
            _t(inp.zh, "Describe the main patterns, no specific goal", "描述主要情况，不针对特定目标"),
        )
    )
    return Gate(
        topic=f"goal.{question_key(q)}",
        question=_t(inp.zh, "What do you want to find out?", "你想了解哪方面？"),
        options=options[:6],
        reason=_t(
            inp.zh,
            "The question does not say whether you want a trend, a comparison, drivers, "
            "retention or a funnel; each needs a different analysis.",
            "问题没有说明要看趋势、对比、驱动因素、留存还是漏斗，它们需要不同的分析。",
        ),
    )


def window_gate(inp: GateInput) -> Gate | None:
    q = inp.question
    if not PERIOD_COMPARE.search(q) or EXPLICIT_PERIOD.search(q):
        return None
    if not any(c["type"] == "datetime" for ds in inp.datasets for c in ds.get("columns", [])):
        return None
    if marker_columns(q, inp.dataset.get("columns", [])):
        return None  # "before and after" names two columns measured on each row (wide_pairs), not two periods
    zh = inp.zh
    return Gate(
        topic=f"window.{question_key(q)}",
        question=_t(zh, "Which periods should I compare?", "要比较哪两个时间段？"),
        options=[
            _option(
                _t(zh, "Last full month vs the month before", "上一个完整月 vs 再前一个月"),
                _t(
                    zh,
                    "Whole calendar months; the unfinished current month is left out",
                    "完整的自然月；不含尚未结束的本月",
                ),
            ),
            _option(
                _t(zh, "Last 30 days vs the 30 days before", "最近30天 vs 之前30天"),
                _t(
                    zh,
                    "Two windows of equal length ending on the last date in the data",
                    "两个等长窗口，截止到数据中的最后日期",
                ),
            ),
            _option(
                _t(zh, "Last full quarter vs the quarter before", "上一个完整季度 vs 再前一个季度"),
                _t(zh, "Whole calendar quarters", "完整的自然季度"),
            ),
            _option(
                _t(zh, "This year so far vs the same period last year", "今年至今 vs 去年同期"),
                _t(zh, "Year over year, same days of the year", "同比：一年中相同的日期"),
            ),
        ],
        reason=_t(
            zh,
            "The question compares periods but does not say which; totals over unequal periods mislead.",
            "问题要比较时间段，但没有说明是哪两个；长度不同的时段直接比总额会误导。",
        ),
    )


def field_gate(inp: GateInput) -> Gate | None:
    q, columns = inp.question, _columns(inp)
    risky = [c for c in columns if c["type"] in NUMERIC and not c.get("pii") and ID_LIKE.search(c["name"])]
    if not risky:
        return None
    wanted = goals(q)
    sweeping = not resolved_metric(inp) or bool(wanted & {"attribution", "overview"})
    for column in risky:
        if f"field.{column['name']}" in inp.answered:
            continue
        if normalise(column["name"]) in normalise(q) or sweeping:
            name, zh = column["name"], inp.zh
            return Gate(
                topic=f"field.{name}",
                question=_t(
                    zh,
                    f"Column “{name}” holds numbers. Is it a label (an ID or code) or a quantity?",
                    f"“{name}”列是数字。它是标签（编号/代码）还是数量？",
                ),
                options=[
                    _option(
                        _t(zh, "An identifier (a label)", "标识（标签）"),
                        _t(
                            zh,
                            "Like a store number or postcode: never add up or average it; use it to group or count",
                            "像门店编号或邮编：不能相加或求平均，只用来分组或计数",
                        ),
                    ),
                    _option(
                        _t(zh, "A quantity", "数量"),
                        _t(zh, "A real amount that can be added up or averaged", "真实的数量，可以相加或求平均"),
                    ),
                ],
                reason=_t(
                    zh,
                    "Treating a code as a number (or the reverse) changes every result that uses it.",
                    "把代码当成数值（或反过来）会改变所有用到它的结果。",
                ),
            )
    return None


def _recorded_outcome(dataset: dict[str, Any], pattern: str) -> bool:
    """Whether the data records the method's outcome row by row: a yes/no column whose name holds the
    method's own word (Churned, 是否流失, Retained). Its rate answers the question; no window to define."""
    return any(
        (c.get("type") == "boolean" or c.get("binary") or c.get("levels") == 2)
        and re.search(pattern, str(c.get("name") or ""), re.I)
        for c in dataset.get("columns") or []
    )


def method_gate(inp: GateInput) -> Gate | None:
    _, text = find_restrictions(inp.question)
    zh = inp.zh
    for kind, (pattern, what, risk) in METHODS.items():
        if not re.search(pattern, text, re.I):
            continue
        if kind == "forecast" and re.search(DRIVER_WORDS, text, re.I) and not re.search(FUTURE_WORDS, text, re.I):
            continue  # "which factors predict revenue": drivers, not the future
        if kind == "retention" and _recorded_outcome(inp.dataset, pattern):
            continue  # "what share churned in each region" on a Churned yes/no column: the sheet says who left
        if kind == "retention":
            return Gate(
                topic="method.retention",
                question=_t(
                    zh,
                    "Within how many days does a customer have to come back to count as retained?",
                    "客户在多少天内回来才算留存？",
                ),
                options=[
                    _option(
                        _t(zh, f"{d} days", f"{d}天"),
                        _t(zh, f"Came back within {d} days of the first purchase", f"首次购买后{d}天内再次购买"),
                    )
                    for d in (7, 30, 90)
                ],
                reason=risk[1 if zh else 0],
            )
        label = what[1 if zh else 0]
        return Gate(
            topic=f"method.{kind}",
            question=_t(zh, f"This needs {label}. {risk[0]} Go ahead?", f"这需要做{label}。{risk[1]}要继续吗？"),
            options=[
                _option(
                    _t(zh, "Go ahead", "继续"),
                    _t(
                        zh,
                        f"Do {label}, with its assumptions and limits stated in the report",
                        f"做{label}，并在报告中写明假设和局限",
                    ),
                ),
                _option(
                    _t(zh, "Describe only", "只做描述"),
                    _t(
                        zh,
                        "Describe what the data shows, without that kind of conclusion",
                        "只描述数据显示的情况，不下这类结论",
                    ),
                ),
            ],
            reason=_t(
                zh,
                f"{label[0].upper() + label[1:]} is a high-risk method; it needs your confirmation.",
                f"{label}是高风险方法，需要你确认。",
            ),
        )
    return None


def quality_gate(inp: GateInput) -> Gate | None:
    ds, zh = inp.dataset, inp.zh
    rows = ds.get("rows") or 0
    wanted = goals(inp.question) & set(INFERENTIAL)
    metric = resolved_metric(inp)
    stop = _option(_t(zh, "Stop here", "先停下"), _t(zh, "I will fix or add data first", "我先修正或补充数据"))
    if metric:
        column = next(c for c in _columns(inp) if c["name"] == metric)
        missing = column.get("missing") or 0
        share = missing / rows if rows else 1.0
        if missing >= rows:
            return Gate(
                topic=f"quality.{metric}",
                question=_t(zh, f"Column “{metric}” is empty. How should I go on?", f"“{metric}”列是空的。怎么继续？"),
                options=[
                    _option(
                        _t(zh, "Describe the rest of the table", "描述表格其他部分"),
                        _t(zh, f"Leave “{metric}” out", f"不使用“{metric}”"),
                    ),
                    stop,
                ],
                reason=_t(zh, "The metric has no values at all.", "该指标完全没有数值。"),
            )
        if share > 0.5:
            pct = round(share * 100)
            return Gate(
                topic=f"quality.{metric}",
                question=_t(
                    zh,
                    f"“{metric}” is missing in {pct}% of rows. How should I treat the gaps?",
                    f"“{metric}”有 {pct}% 的行缺失。缺失值怎么处理？",
                ),
                options=[
                    _option(
                        _t(zh, "Use only rows with a value", "只用有数值的行"),
                        _t(
                            zh,
                            f"{rows - missing} rows; results describe those rows only",
                            f"{rows - missing} 行；结论只代表这些行",
                        ),
                    ),
                    _option(
                        _t(zh, "Treat missing as zero", "缺失按 0 处理"),
                        _t(zh, "Only right when a blank really means none", "只有空白确实表示“没有”时才正确"),
                    ),
                    stop,
                ],
                reason=_t(
                    zh,
                    "More than half of the metric is missing; the result depends on how gaps are treated.",
                    "指标一半以上缺失，结论取决于缺失值的处理方式。",
                ),
            )
    if (
        wanted and 0 < rows < 10 and not (count_weights(_columns(inp), rows) or count_pair(_columns(inp)))
    ):  # rows of counts
        return Gate(
            topic=f"quality.rows.{ds.get('name')}",
            question=_t(
                zh,
                f"The table has only {rows} rows. Comparisons and trends on so few rows are very uncertain. Go on?",
                f"表格只有 {rows} 行，这么少的数据做对比或趋势非常不可靠。要继续吗？",
            ),
            options=[
                _option(
                    _t(zh, "Go on, describe with caution", "继续，谨慎描述"),
                    _t(zh, "Numbers are shown, no firm conclusions", "给出数字，不下确定结论"),
                ),
                stop,
            ],
            reason=_t(zh, "Tiny sample (fewer than 10 rows).", "样本太小（少于 10 行）。"),
        )
    if wanted and len(inp.datasets) > 1:
        grains = {str(grain) for ds in inp.datasets if (grain := ds.get("grain"))}
        if len(grains) > 1 and _mentions_several(inp):
            return Gate(
                topic="quality.grain",
                question=_t(
                    zh,
                    "Your files are at different levels of detail ("
                    + ", ".join(sorted(grains))
                    + "). How should I combine them?",
                    "文件的粒度不同（" + "、".join(sorted(grains)) + "）。怎么合并？",
                ),
                options=[
                    _option(
                        _t(zh, "Roll up to the coarser level", "汇总到较粗的粒度"),
                        _t(zh, "Sum the detailed file up before comparing", "先把细粒度的文件汇总再比较"),
                    ),
                    _option(_t(zh, "Analyse each file separately", "分别分析"), _t(zh, "No combining", "不合并")),
                    stop,
                ],
                reason=_t(zh, "Grain mismatch between files.", "文件之间粒度不一致。"),
            )
    return None


def _mentions_several(inp: GateInput) -> bool:
    return (
        sum(
            1
            for ds in inp.datasets
            if any(normalise(c["name"]) in normalise(inp.question) for c in ds.get("columns", []) if len(c["name"]) > 2)
        )
        > 1
    )


def scope_gate(inp: GateInput) -> Gate | None:
    """Several datasets and the question's words fit two equally, or none: ask which one to use
    (dataset_choice). The options are the datasets' names, so the answer names the dataset."""
    if len(inp.datasets) < 2:
        return None
    choice = inp.choice
    if not choice.ambiguous:
        return None
    zh, key = inp.zh, question_key(inp.question)
    fits = choice.candidates[:6]
    new = [f["name"] for f in inp.new_files]
    if choice.how == "tie":
        names = "、".join(f.dataset["name"] for f in fits) if zh else ", ".join(f.dataset["name"] for f in fits)
        question = _t(
            zh,
            f"Your question fits several tables ({names}). Which one should I analyse?",
            f"你的问题与多个表格都对得上（{names}）。要分析哪一个？",
        )
        reason = _t(
            zh,
            "The question's words match columns in more than one table; the answer depends on which.",
            "问题中的词与不止一个表格的列匹配，结论取决于用哪一个。",
        )
    else:
        question = _t(
            zh,
            "None of your tables has columns that match the question's words. Which one should I analyse?",
            "没有哪个表格的列与问题中的词对得上。要分析哪一个？",
        )
        reason = _t(
            zh,
            "The question names no column of any table"
            + (f"; a new file ({', '.join(new)}) was added" if new else "")
            + ".",
            "问题没有提到任何表格的列" + (f"；新增了文件（{'、'.join(new)}）" if new else "") + "。",
        )
    return Gate(
        topic=f"scope.{key}",
        question=question,
        options=[_option(f.dataset["name"], describe_fit(f, zh)) for f in fits],
        reason=reason,
    )
