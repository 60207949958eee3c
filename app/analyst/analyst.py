"""The built-in analyst: a deterministic planner behind the ChatModel interface (SPEC §10).

It runs when no language model is configured. It sees exactly what a model sees (the messages
and the tool results) and answers with tool calls, so every analysis goes through the same
registry, budgets, evidence and reports as with a real model. It is honest about what it is.

A turn has five rounds: a look at the data (profile), plan (tasks), analyses, evidence, answer.
The plan is made after the profile because the question may name what only the data shows: the
values of a category ("new and returning customers") and how long the dates run (roles, profile_reading).
A category with more values than the profile lists is counted too (value_counts, found by
tool_search when the turn does not offer it: one more round), so any of its values can be named.

It reads what the tools returned as data (analysis_tools.ResultRecord, through the lookup the run
hands it: `results`), never from the text a model is shown, which the harness shortens.
"""

from __future__ import annotations

import json
import re
from typing import Any

from analysis_tools import ResultLookup, ResultRecord
from analysis_tools.common import fmt_num
from analysis_tools.tables import table_name
from analysis_tools.ts_common import FREQ_WORDS
from app.agent.model.interface import ModelReply, ToolCallRequest
from app.analyst.definitions import confirmed_definitions
from app.analyst.headlines import (
    change_headline,
    dedupe_headline,
    derive_headline,
    drivers_headline,
    extreme_headline,
    missing_headline,
    named_group_headline,
    paired_headline,
    proportion_headline,
    rank_headline,
    relationship_headline,
    share_headline,
    total_headline,
    two_group_headline,
    wide_paired_headline,
)
from app.analyst.plan import GREETING, Plan, Step, _t, plan_reading
from app.analyst.plan_record import plan_arguments
from app.analyst.provenance import settle_sources
from app.analyst.role_question import defaults_sentence, role_question, stood_in
from app.analyst.scope import apply_rules, chain_filters, describe_condition, filtered_name, workspace_rules
from app.analyst.steps import DATA_TASK_KINDS
from app.understanding.kinds import asks_extreme, earlier_questions
from app.understanding.profile_reading import read_profile, read_values, value_lookups
from app.understanding.reading import read_question
from app.understanding.small_talk import is_small_talk
from app.understanding.words import code_word

HONESTY = {
    "en": "_Built-in analyst (no language model): standard analyses chosen from the column types "
    "and the words of your question._",
    "zh": "_内置分析器（未使用大语言模型）：根据列类型和问题中的关键词选择标准分析。_",
}


ASK = "ask_user_question"  # the clarification tool: a question to the user, the same for a model
MAX_PROFILED = 5  # datasets looked at before planning (the newest ones)


class BuiltinAnalyst:
    kind = "builtin"
    name = "builtin"

    def __init__(self, datasets: list[dict[str, Any]], language: str = "en", results: ResultLookup | None = None):
        self.datasets = datasets
        self.language = language
        self.results: ResultLookup = results or _no_results  # call id -> what the tool returned (app/runs.py)
        self._counter = 0
        self._answers: dict[str, str] = {}  # the user's answers (ask_user_question's messages), as first seen

    @property
    def zh(self) -> bool:
        return self.language == "zh"

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        turn = _current_turn(messages)
        question = turn[0]["content"] if turn else ""
        calls = {c["id"]: c for m in turn if m["role"] == "assistant" for c in m.get("tool_calls") or []}
        answers = self._first_seen_answers(turn)
        results = {m["tool_call_id"]: r for m in turn if m["role"] == "tool" and (r := self.results(m["tool_call_id"]))}
        if GREETING.match(question) or is_small_talk(question) or not self.datasets:
            return ModelReply(self._small_talk(question))
        offered = {t["function"]["name"] for t in tools}
        if looks := self._looks(offered, calls):
            return self._reply(looks)  # look at the data before planning, as an analyst would
        plan = self._plan(question, messages, calls, answers, results)
        if (ask := role_question(plan.provenance, plan.metric, self.zh)) and ASK in offered and not _asked(ask, calls):
            return self._reply([(ASK, ask)])  # a variable the question names that no column matched (role_question)
        if searches := self._searches(plan, offered, calls):
            return self._reply(searches)  # the tools the plan needs that this turn does not offer yet
        return self._next_round(question, plan, offered, calls, results)

    def _seen(self, dataset: dict[str, Any], calls: dict, results: dict[str, ResultRecord]) -> dict[str, Any]:
        """A dataset summary with what this turn's profile and value lookups showed of it."""
        name = dataset.get("name") if self._many else None
        return read_values(
            read_profile(dataset, _profile_of(calls, results, name)), _lookups_of(dataset, calls, results, name)
        )

    @property
    def _many(self) -> bool:
        return len(self.datasets) > 1

    def _plan(
        self,
        question: str,
        messages: list[dict[str, Any]],
        calls: dict,
        answers: dict[str, str],
        results: dict[str, ResultRecord],
    ) -> Plan:
        """Which dataset (dataset_choice: the question's words, or the user's scope answer), what the
        question asks (a follow-up inherits the previous question and its filters), and the workspace
        rules the plan can apply."""
        confirmed = {**confirmed_definitions(messages), **turn_answers(calls, answers)}  # the user's answers
        seen = [self._seen(ds, calls, results) for ds in self.datasets]
        reading = read_question(question, seen, earlier_questions(messages), confirmed, self.zh)
        chain, dataset = reading.chain, reading.dataset
        plan = plan_reading(reading)
        plan.dataset, plan.choice = dataset.get("name"), reading.choice
        conditions = [] if plan.derived else [*plan.filters, *chain_filters(chain, dataset)]
        target = plan.derived or plan.dataset  # a prep step's new version (one group against the others)
        if conditions and plan.kind not in DATA_TASK_KINDS:
            target = filtered_name(str(plan.dataset), conditions)
            plan.filters = conditions
            if plan.dimension in {c["column"] for c in conditions}:  # "East only": nothing left to compare by
                plan.steps = [
                    s
                    for s in plan.steps
                    if plan.dimension not in (s.arguments.get("group_column"), s.arguments.get("x_column"))
                ]
            if target not in {d.get("name") for d in self.datasets}:
                described = ", ".join(f"{c['column']} {c['op']} {c['value']}" for c in conditions)
                plan.steps.insert(
                    1,
                    Step(
                        "filter_rows",
                        {"conditions": conditions, "output": target},
                        _t(self.zh, f"Keep only {described}", f"只保留 {described}"),
                        prep=True,
                    ),
                )
        else:
            plan.filters = []
        apply_rules(plan, workspace_rules(messages), self.zh)
        makes_tables = any(s.tool == "group_aggregate" for s in plan.steps)  # its output becomes the newest table
        if self._many or makes_tables or plan.derived or (conditions and plan.kind not in DATA_TASK_KINDS):
            for step in plan.steps:
                source = plan.dataset if step.prep or step.tool == "profile_dataset" else target
                step.arguments = {"dataset": source, **step.arguments}
        plan.analysed = target
        settle_sources(plan.provenance, plan)  # role_sources: the roles the narrowed plan still fills
        return plan

    def _searches(self, plan: Plan, offered: set[str], calls: dict) -> list[tuple[str, dict[str, Any]]]:
        """tool_search for the planned tools this turn does not offer (once per tool)."""
        if "tool_search" not in offered:
            return []
        searched = {
            json.loads(c["function"]["arguments"]).get("query")
            for c in calls.values()
            if c["function"]["name"] == "tool_search"
        }
        missing = dict.fromkeys(
            s.tool for s in plan.steps if s.task and s.tool not in offered and s.tool not in searched
        )
        return [("tool_search", {"query": tool, "limit": 1}) for tool in missing]

    def _looks(self, offered: set[str], calls: dict) -> list[tuple[str, dict[str, Any]]]:
        """Before the plan (no task yet): the profile of each dataset, and the value counts of the
        categories it lists only in part; when value_counts is not offered, a tool_search for it first (once)."""
        called = {c["function"]["name"] for c in calls.values()}
        if "task_create" in called:
            return []
        looks: list[tuple[str, dict[str, Any]]] = []
        for dataset in self.datasets[-MAX_PROFILED:]:
            arguments = {"dataset": dataset["name"]} if self._many else {}
            if "profile_dataset" in offered and _find_result("profile_dataset", arguments, calls, {})[0] is None:
                looks.append(("profile_dataset", arguments))
        missing = [
            ({"dataset": ds["name"], **arguments} if self._many else arguments)
            for ds in self.datasets[-MAX_PROFILED:]
            for arguments in value_lookups(ds)
        ]
        missing = [a for a in missing if _find_result("value_counts", a, calls, {})[0] is None]
        if missing and "value_counts" in offered:
            looks += [("value_counts", arguments) for arguments in missing]
        elif missing and "tool_search" in offered and "tool_search" not in called:
            looks.append(("tool_search", {"query": "value_counts", "limit": 1}))
        return looks

    def _next_round(
        self, question: str, plan: Plan, offered: set[str], calls: dict, results: dict[str, ResultRecord]
    ) -> ModelReply:
        """Tasks (with the plan), then the analyses, then evidence, then the answer."""
        called = {c["function"]["name"] for c in calls.values()}
        analyses = [s for s in plan.steps if s.tool in offered and s.tool != "profile_dataset"]
        analysed = any(_find_result(s.tool, s.arguments, calls, results)[0] for s in analyses)
        if offered and "task_create" not in called and not analysed:
            tasks = [
                ("task_create", {"subject": s.task, "expected_output": s.task, "required_capability": s.tool})
                for s in plan.steps
                if s.task and "task_create" in offered
            ]
            if tasks and "record_analysis_plan" in offered:  # the plan first, as a model would (SPEC §8)
                tasks.insert(0, ("record_analysis_plan", plan_arguments(question, plan, self.zh)))
            if tasks:
                return self._reply(tasks)
        prep = [s for s in analyses if s.prep and _find_result(s.tool, s.arguments, calls, results)[0] is None]
        if prep:  # a filter first: the analyses read its output
            return self._reply([(s.tool, s.arguments) for s in prep])
        main = [s for s in analyses if not s.prep]
        if main and not any(_find_result(s.tool, s.arguments, calls, results)[0] for s in main):
            return self._reply([(s.tool, s.arguments) for s in main])
        if offered and "record_evidence" in offered and "record_evidence" not in called:
            evidence = self._evidence_calls(plan, calls, results)
            if evidence:
                return self._reply(evidence)
        return ModelReply(self._answer(question, plan, calls, results))

    def _first_seen_answers(self, turn: list[dict[str, Any]]) -> dict[str, str]:
        """This turn's answers to ask_user_question by call id, as first seen. An answer is the
        user's words, which the harness writes into the conversation (no tool result holds them);
        later rounds may see the message as a compact preview, but the plan must stay the same."""
        asked = {
            c["id"]
            for m in turn
            if m["role"] == "assistant"
            for c in m.get("tool_calls") or []
            if c["function"]["name"] == ASK
        }
        ids = [m["tool_call_id"] for m in turn if m["role"] == "tool" and m["tool_call_id"] in asked]
        for m in turn:
            if m["role"] == "tool" and m["tool_call_id"] in asked:
                self._answers.setdefault(m["tool_call_id"], m.get("content") or "")
        return {call_id: self._answers[call_id] for call_id in ids}

    # --- rounds ------------------------------------------------------------------------------
    def _reply(self, calls: list[tuple[str, dict[str, Any]]]) -> ModelReply:
        requests = []
        for name, arguments in calls:
            self._counter += 1
            requests.append(ToolCallRequest(f"call_builtin_{self._counter}_{name}", name, arguments))
        return ModelReply(None, requests, "tool_calls")

    def _evidence_calls(
        self, plan: Plan, calls: dict, results: dict[str, ResultRecord]
    ) -> list[tuple[str, dict[str, Any]]]:
        out = []
        for step in plan.steps:
            if not step.task:
                continue
            call_id, result = _find_result(step.tool, step.arguments, calls, results)
            if not result or not result.ok:
                continue
            metrics = {k: v for k, v in result.metrics.items() if isinstance(v, (int, float, str))}
            n = metrics.get("n") or metrics.get("n_rows")
            out.append(
                (
                    "record_evidence",
                    {
                        "claim": _reading(step, result, self.zh, plan) or step.task,
                        "method": result.method or step.tool,
                        "tool_call_ids": [call_id],
                        "result_summary": _summary(metrics),
                        "metrics": metrics,
                        "sample_size": int(n) if isinstance(n, (int, float)) else None,
                        "limitations": _limitations(step.tool, self.zh),
                        "confidence": "medium"
                        if stood_in(plan.provenance)
                        else "high",  # columns guessed for named words
                    },
                )
            )
        return out

    # --- answers -----------------------------------------------------------------------------
    def _small_talk(self, question: str) -> str:
        if not self.datasets:
            return (
                "请先上传一个表格（Excel 或 CSV），然后用一句话告诉我您想了解什么。"
                if self.zh
                else "Please upload a spreadsheet (Excel or CSV) first, then tell me in one sentence what you want to know."
            )
        return (
            "您好！告诉我您想从数据中了解什么，例如“不同地区的销售额有差异吗？”"
            if self.zh
            else 'Hello! Tell me what you want to learn from your data, e.g. "Does revenue differ by region?"'
        )

    def _answer(self, question: str, plan: Plan, calls: dict, results: dict[str, ResultRecord]) -> str:
        """Conclusions first: the finding that answers the question, then the supporting ones."""
        findings, failures = [], []
        for step in sorted((s for s in plan.steps if s.task), key=lambda s: _order(s, plan)):
            _, result = _find_result(step.tool, step.arguments, calls, results)
            text = _finding(step, result, self.zh, plan, question) if result and result.ok else ""
            if text:
                findings.append(text)
            elif result and not result.ok:
                failures.append(step.task)
        if not findings:
            findings = [
                "现有数据无法得出可靠结论。" if self.zh else "No reliable conclusion could be drawn from this data."
            ]
        lines = ([plan.lead, ""] if plan.lead else []) + [f"**{findings[0]}**", ""]
        if used := self._data_used(plan):
            lines += [used, ""]
        if defaults := defaults_sentence(plan.provenance, self.zh):  # columns the question did not name
            lines += [defaults, ""]
        if len(findings) > 1:
            lines += ["### 其他发现" if self.zh else "### Supporting findings", ""]
            lines += [f"- {f}" for f in findings[1:]] + [""]
        if failures:
            lines += [
                ("以下分析未能完成：" if self.zh else "These analyses could not be completed: ") + "; ".join(failures),
                "",
            ]
        caveats = [*plan.notes, *_rule_notes(plan, self.zh), *_scope_notes(plan, self.zh)]
        if caveats:
            lines += ["### 注意" if self.zh else "### Caveats", ""] + [f"- {n}" for n in caveats]
        lines += ["", HONESTY["zh" if self.zh else "en"]]
        return "\n".join(lines)

    def _data_used(self, plan: Plan) -> str:
        """Which dataset answered (when the workspace has several, or a filter narrowed it), and how it was chosen."""
        if not (self._many or plan.filters) or not plan.dataset:
            return ""
        zh, choice = self.zh, plan.choice
        filters = ", ".join(describe_condition(c, zh) for c in plan.filters)
        text = f"使用的数据：**{plan.dataset}**" if zh else f"Data used: **{plan.dataset}**"
        if filters:
            text += f"（只含 {filters}）" if zh else f" (only rows with {filters})"
        how = getattr(choice, "how", "")
        if how == "words" and choice.fits:
            matched = [*choice.fits[0].columns, *choice.fits[0].values][:4]
            if matched:
                text += (
                    f"，因为问题提到了 {'、'.join(matched)}。"
                    if zh
                    else f", because the question names {', '.join(matched)}."
                )
        elif how == "answer":
            text += "，按您的选择。" if zh else ", as you chose."
        elif how in ("tie", "none"):
            text += (
                "；问题中的词无法确定用哪个表格，请确认这是您想要的。"
                if zh
                else "; the question's words did not settle which table to use, so check this is the one you meant."
            )
        return text


# The answers a reader might take as cause and effect: how two things move together, what drives a
# number. A total, a ranking or a data task claims nothing of the kind.
RELATION_TOOLS = ("correlation_analysis", "linear_regression", "chi_square_test")
FACT_KINDS = (*DATA_TASK_KINDS, "total", "top", "share", "rank")  # what the data says, nothing inferred


def _scope_notes(plan: Plan, zh: bool) -> list[str]:
    """Correlation is not causation for a relationship or drivers answer (what answers the question
    first); how far any inference carries, except for facts about the data (totals, rankings, data tasks)."""
    if plan.kind in FACT_KINDS:
        return []
    leading = min((s for s in plan.steps if s.task), key=lambda s: _order(s, plan), default=None)
    if plan.kind in ("relationship", "association") or (leading and leading.tool in RELATION_TOOLS):
        return [
            "相关不代表因果；结论基于上传的数据，不一定适用于其他时期或人群。"
            if zh
            else "Correlation is not causation; conclusions hold for the uploaded data and may not carry over "
            "to other periods or people."
        ]
    return [
        "结论基于上传的数据，不一定适用于其他时期或人群。"
        if zh
        else "Conclusions hold for the uploaded data and may not carry over to other periods or people."
    ]


def _order(step: Step, plan: Plan) -> int:
    """Where a step's finding goes: the one that answers the question kind first."""
    if step.tool == "group_aggregate":
        return 0 if plan.kind in ("total", "top") else 6
    if step.tool == "plot_pie":
        return 0
    return ANSWER_ORDER.get(step.tool, 9)


def _rule_notes(plan: Plan, zh: bool) -> list[str]:
    notes = []
    for rule, applied in plan.rules:
        if applied:
            notes.append(
                f"已按工作区规则执行：“{rule.rstrip('.。')}”。"
                if zh
                else f"Workspace rule applied: “{rule.rstrip('.。')}”."
            )
        else:
            notes.append(
                f"未能自动执行工作区规则：“{rule}”（内置分析器无法理解这条规则）。"
                if zh
                else f"Workspace rule not applied: “{rule}” (the built-in analyst cannot carry it out)."
            )
    return notes


# The finding that answers the question leads. A forecast step is planned only for a forecast
# question, and then the forecast is the answer and the trend its support.
ANSWER_ORDER = {
    "clean_data": 0,
    "rank_values": 0,
    "forecast": 0,
    "seasonal_decompose": 0,
    "time_series_trend": 1,
    "compare_groups": 1,
    "compare_two_groups": 1,
    "proportion_test": 1,
    "paired_test": 1,
    "linear_regression": 2,
    "correlation_analysis": 3,
    "describe_columns": 4,
    "value_counts": 5,
    "filter_rows": 8,
}


def _finding(step: Step, result: ResultRecord, zh: bool, plan: Plan | None = None, question: str = "") -> str:
    """The step's plain-language reading, with group averages for comparisons."""
    text = _reading(step, result, zh, plan, question)
    means = {
        k.split(".", 1)[1]: v
        for k, v in result.metrics.items()
        if k.startswith("mean.") and isinstance(v, (int, float))
    }
    every_mean_said = all(fmt_num(v) in text for v in means.values())  # named_group_headline lists them all
    if step.tool in ("compare_groups", "compare_two_groups") and means and not every_mean_said:
        ranked = sorted(means.items(), key=lambda kv: -kv[1])
        group = step.arguments.get("group_column", "")
        listed = ("，" if zh else ", ").join(
            f"{_named(g, group, question, zh)} {fmt_num(v)}" for g, v in ranked
        )  # 862,332
        text += f"（各组平均值：{listed}）" if zh else f" (averages: {listed})"
    return text


def _versus_value(column: str) -> str | None:
    """The named group of a "<column>: <value> or others" column (versus_rest.rest_column), or of the
    weekend days against the weekdays (weekdays.weekend_column)."""
    match = re.search(r"[:：]\s*(.+?)\s*(?:or others|或其他|or weekdays|或工作日)$", column)
    return match.group(1) if match else None


def _named(value: str, column: str, question: str, zh: bool) -> str:
    """A group as the question called it too: "f（前驱）" when it asked about 前驱 (drv = f)."""
    word = code_word(value, column, question)
    return value if not word else f"{value}（{word}）" if zh else f"{value} ({word})"


def _reading(step: Step, result: ResultRecord, zh: bool, plan: Plan | None = None, question: str = "") -> str:
    """What a result says, in plain words that answer the question (headlines.py), else the
    tool's own interpretation: a regression names its strongest factor with its effect in units, a
    forecast gives every period with its interval, a rate comparison the rates, totals the shares."""
    headline = None
    arguments, metrics = step.arguments, result.metrics
    if step.tool == "linear_regression":
        headline = drivers_headline(arguments["target_column"], metrics, zh)
    elif step.tool == "forecast":
        headline = forecast_headline(arguments["value_column"], metrics, zh)
    elif step.tool == "proportion_test" and arguments.get("group_column"):
        outcome = arguments.get("success_value") or arguments["value_column"]  # "the Admitted rate"
        if failures := arguments.get("failures_column"):  # "the ncases/(ncases+ncontrols) rate"
            outcome = f"{outcome}/({outcome}+{failures})"
        first = plan is not None and plan.whole and arguments["group_column"] != plan.whole  # one group vs the others
        headline = proportion_headline(
            outcome, arguments["group_column"], metrics, zh, _versus_value(arguments["group_column"]) if first else None
        )
    elif step.tool == "group_aggregate" and arguments.get("value_columns"):
        headline = total_headline(
            arguments["value_columns"][0],
            arguments["group_columns"][0],
            metrics,
            zh,
            plan.top if plan and plan.kind == "top" else None,
            arguments.get("agg", "sum"),
        )
    elif step.tool == "rank_values" and "group_column" not in arguments:
        headline = rank_headline(arguments["value_column"], metrics, arguments.get("order") == "smallest", zh)
    elif step.tool == "paired_test" and "x_column" in arguments:  # two columns on each row (wide_pairs)
        headline = wide_paired_headline(arguments["x_column"], arguments["y_column"], metrics, zh)
    elif step.tool == "paired_test":
        groups = _pair_labels(result)
        headline = paired_headline(arguments.get("value_column") or arguments.get("x_column", ""), metrics, groups, zh)
    elif step.tool == "plot_pie" and arguments.get("value_column"):
        headline = share_headline(arguments["value_column"], arguments["group_column"], metrics, zh)
    elif step.tool == "correlation_analysis" and plan is not None and plan.kind == "relationship":
        target, *predictors = arguments["columns"]
        headline = relationship_headline(predictors[0], target, metrics, zh, plan.words) if predictors else None
    elif step.tool == "derive_column" and plan is not None and plan.kind == "derive":
        source = plan.dataset
        table = table_name(source, step.tool, arguments.get("output", "")) if source else None
        headline = derive_headline(arguments, metrics, table, source, zh)
    elif step.tool == "clean_data" and arguments.get("drop_missing_in") and not arguments.get("drop_duplicates"):
        headline = missing_headline(arguments["drop_missing_in"], metrics, plan.dataset if plan else None, zh)
    elif step.tool == "clean_data":
        headline = dedupe_headline(metrics, plan.dataset if plan else None, zh)
    elif (
        step.tool in ("compare_groups", "compare_two_groups")
        and plan is not None
        and plan.kind == "change"
        and (parts := re.fullmatch(r"(.+) - (.+)", arguments["value_column"]))
    ):
        headline = change_headline(parts.group(1), parts.group(2), metrics, zh)
    elif step.tool == "compare_two_groups" and "groups" not in arguments:
        first = plan is not None and plan.whole and arguments["group_column"] != plan.whole  # one group vs the others
        lead = (
            plan.values[0] if plan and plan.values else _versus_value(arguments["group_column"]) if first else None
        ) or _extreme_group(metrics, asks_extreme(question))
        headline = two_group_headline(arguments["value_column"], arguments["group_column"], metrics, lead, zh)
    elif (
        step.tool == "compare_groups"
        and plan is not None
        and len(plan.values) == 1
        and arguments.get("group_column") == plan.dimension
    ):  # "rainy days": that group, against the others
        headline = named_group_headline(
            arguments["value_column"], arguments["group_column"], metrics, plan.values[0], zh
        )
    elif step.tool == "compare_groups" and (extreme := asks_extreme(question)):
        headline = extreme_headline(
            arguments["value_column"], arguments["group_column"], metrics, extreme == "least", zh
        )
    return headline or result.interpretation or result.conclusion


def _extreme_group(metrics: dict[str, Any], extreme: str | None) -> str | None:
    """The group with the highest (or, for "least", the lowest) average: it leads a "which … most" answer."""
    means = {k.split(".", 1)[1]: v for k, v in metrics.items() if k.startswith("mean.") and isinstance(v, (int, float))}
    if not (extreme and means):
        return None
    return (min if extreme == "least" else max)(means, key=lambda g: means[g])


def _pair_labels(result: ResultRecord) -> tuple[str, str] | None:
    """The two conditions of a paired test, from its profile ("difference = group 1 - group 2: …")."""
    match = re.search(r"(?:difference|差值|差)\s*=\s*(.+?)\s+-\s+(.+?)\s*[:：]", result.profile)
    return (match.group(1).strip(), match.group(2).strip()) if match else None


FORECAST_LISTED = 6  # periods listed one by one; a longer forecast shows its first three and its last


def forecast_headline(metric: str, metrics: dict[str, Any], zh: bool) -> str | None:
    """'Forecast of Revenue for the next 3 months: 2025-01 about 2,251,578 (95% interval 1,980,447 to
    2,559,829), 2025-02 …; about 7,391,592 in total. When this method forecast the last 3 stretches of
    known history, it was off by 6.2% on average (MAE 166,296).' From the forecast tool's metrics
    (forecast./lower./upper. per period, horizon, freq); None when they are missing."""
    labels = [k.split(".", 1)[1] for k in metrics if k.startswith("forecast.")]
    if not labels or "horizon" not in metrics or metrics.get("freq") not in FREQ_WORDS:
        return None
    h, (unit_en, unit_zh) = int(metrics["horizon"]), FREQ_WORDS[metrics["freq"]]
    level = f"{metrics.get('interval_level', 0.95) * 100:.0f}%"
    shown = labels if len(labels) <= FORECAST_LISTED else [*labels[:3], None, labels[-1]]
    periods = [_forecast_period(label, metrics, level, zh) if label else "…" for label in shown]
    excluded, last = metrics.get("excluded_periods"), metrics.get("last_period")
    if excluded and zh:
        left_out = f"{excluded} 的数据不完整，已排除；预测从最后一个完整的{unit_zh}（{last}）之后开始。"
    elif excluded:
        left_out = (
            f"{excluded} is only partly covered by the data, so it was left out; the forecast starts after the "
            f"last complete {unit_en} ({last}). "
        )
    else:
        left_out = ""
    if zh:
        span = f"未来 {h} {'个' if unit_zh in ('月', '季度') else ''}{unit_zh}"
        total = f"；合计约 {fmt_num(metrics['forecast_total'])}" if h > 1 and "forecast_total" in metrics else ""
        return f"{left_out}{metric} {span}的预测：{'，'.join(periods)}{total}。{_backtest(metrics, zh)}"
    span = f"the next {h} {unit_en}s" if h > 1 else f"the next {unit_en}"
    total = f"; about {fmt_num(metrics['forecast_total'])} in total" if h > 1 and "forecast_total" in metrics else ""
    return f"{left_out}Forecast of {metric} for {span}: {', '.join(periods)}{total}. {_backtest(metrics, zh)}"


def _forecast_period(label: str, metrics: dict[str, Any], level: str, zh: bool) -> str:
    value, low, high = (metrics.get(f"{k}.{label}") for k in ("forecast", "lower", "upper"))
    bounded = all(isinstance(v, (int, float)) and v == v for v in (low, high))  # v == v: not NaN
    if zh:
        interval = f"（{level} 区间 {fmt_num(low)} 至 {fmt_num(high)}）" if bounded else ""
        return f"{label} 约 {fmt_num(value)}{interval}"
    interval = f" ({level} interval {fmt_num(low)} to {fmt_num(high)})" if bounded else ""
    return f"{label} about {fmt_num(value)}{interval}"


def _backtest(metrics: dict[str, Any], zh: bool) -> str:
    """How far off the method was on known history, as the forecast tool says it."""
    mape, mae, folds = metrics.get("backtest_mape"), metrics.get("backtest_mae"), metrics.get("backtest_folds")
    if not (isinstance(mape, (int, float)) and mape == mape and folds):
        return (
            "历史数据太少，无法回测预测准确度；请仅作粗略参考。"
            if zh
            else "There was too little history to backtest the forecast; treat it as rough."
        )
    if zh:
        return f"用该方法预测最近 {folds} 段已知历史时，平均误差为 {mape:.1f}%（MAE {fmt_num(mae)}）。"
    return (
        f"When this method forecast the last {folds} stretches of known history, it was off by {mape:.1f}% "
        f"on average (MAE {fmt_num(mae)})."
    )


def _profile_of(calls: dict, results: dict[str, ResultRecord], dataset: str | None = None) -> str | None:
    """The profile this turn's profile_dataset call (of `dataset`, when several) showed, if it ran."""
    return next(
        (
            results[i].profile
            for i, c in calls.items()
            if c["function"]["name"] == "profile_dataset"
            and i in results
            and json.loads(c["function"]["arguments"] or "{}").get("dataset") == dataset
        ),
        None,
    )


def _lookups_of(
    dataset: dict[str, Any], calls: dict, results: dict[str, ResultRecord], name: str | None = None
) -> dict[str, dict[str, Any]]:
    """The metrics of this turn's value lookups (see _looks) by column, those that worked. Only the
    lookups: a value_counts the plan itself runs must not change the plan that made it."""
    found = {}
    for arguments in value_lookups(dataset):
        arguments = {"dataset": name, **arguments} if name else arguments
        _, result = _find_result("value_counts", arguments, calls, results)
        if result and result.ok:
            found[arguments["column"]] = result.metrics
    return found


def _current_turn(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages from the last real user message on (harness notes are not questions)."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m["role"] == "user" and not (m.get("content") or "").startswith("[harness]"):
            return messages[i:]
    return []


def _asked(arguments: dict[str, Any], calls: dict) -> bool:
    """Whether this turn already asked the question on that topic (never twice)."""
    return any(
        c["function"]["name"] == ASK
        and json.loads(c["function"]["arguments"] or "{}").get("topic") == arguments["topic"]
        for c in calls.values()
    )


def turn_answers(calls: dict, answers: dict[str, str]) -> dict[str, str]:
    """topic -> answer of this turn's answered questions (the resumed turn's ask_user_question
    messages), so the answer is followed even before it shows among the confirmed definitions."""
    found = {}
    for call_id, call in calls.items():
        text = answers.get(call_id) or ""
        if call["function"]["name"] == ASK and text.startswith("[answer]\n"):
            topic = json.loads(call["function"]["arguments"] or "{}").get("topic")
            if topic:
                found[str(topic)] = text[len("[answer]\n") :].split("\n", 1)[0].strip()
    return found


def _find_result(
    tool: str, arguments: dict, calls: dict, results: dict[str, ResultRecord]
) -> tuple[str | None, ResultRecord | None]:
    for call_id, call in calls.items():
        if call["function"]["name"] == tool and json.loads(call["function"]["arguments"]) == arguments:
            return call_id, results.get(call_id)
    return None, None


def _summary(metrics: dict[str, Any]) -> str:
    keys = ("statistic", "f_statistic", "r", "r_squared", "p_value", "effect_size", "n", "mean_difference")
    parts = [_pair(k, metrics[k]) for k in keys if k in metrics]
    if not parts:
        parts = [_pair(k, v) for k, v in list(metrics.items())[:6]]
    return ", ".join(parts)


def _pair(key: str, value: Any) -> str:
    """'p_value < 0.001', 'r = 0.8332': for people, never 1.6e-310."""
    if key.startswith("p_value") and isinstance(value, float) and value < 0.001:
        return f"{key} < 0.001"
    return f"{key} = {_fmt(value)}"


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return fmt_num(value)
    return str(value)


def _limitations(tool: str, zh: bool) -> list[str]:
    common = ["基于观察数据，不能证明因果关系" if zh else "Observational data: does not establish cause and effect"]
    if tool in ("compare_groups", "compare_two_groups"):
        common.append(
            "组间其他差异（如时间、渠道）可能影响结果"
            if zh
            else "Other differences between the groups (time, channel, mix) may contribute"
        )
    if tool == "correlation_analysis":
        common.append(
            "相关系数只衡量线性（或单调）关系" if zh else "Correlation only measures linear (or monotonic) association"
        )
    return common


def _no_results(call_id: str) -> ResultRecord | None:
    """The lookup of an analyst no run handed one: it has seen no tool results (a greeting)."""
    return None
