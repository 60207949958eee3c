"""The built-in analyst: a deterministic planner behind the ChatModel interface (SPEC §10).

It runs when no language model is configured. It sees exactly what a model sees (the messages
and the tool results) and answers with tool calls, so every analysis goes through the same
registry, budgets, evidence and reports as with a real model. It is honest about what it is.

A turn has four rounds: plan (tasks + profile), analyses, evidence, answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from app.agent.analysis_plan import plan_arguments
from app.agent.builtin_plan import GREETING, Plan, plan_analysis
from app.agent.clarify import confirmed_definitions
from app.agent.intent import is_small_talk
from app.agent.model import ModelReply, ToolCallRequest

HONESTY = {"en": "_Built-in analyst (no language model): standard analyses chosen from the column types "
                 "and the words of your question._",
           "zh": "_内置分析器（未使用大语言模型）：根据列类型和问题中的关键词选择标准分析。_"}


_CUT = re.compile(r"\n\[truncated\][^\n]*\s*$|\n*\[\w+\]…(?=\s*(?:\n\[truncated\]|$))")


def parse_tool_message(content: str) -> dict[str, Any]:
    """Read back what a tool returned: ok, method, interpretation, metrics, figures."""
    content = _CUT.sub("", content)  # a shelved output's harness trailer is not part of the result
    if content.lstrip().startswith("{"):
        try:
            return {"ok": False, "error": json.loads(content)}
        except json.JSONDecodeError:
            pass
    sections = dict(re.findall(r"^\[(\w+)\]\n(.*?)(?=^\[\w+\]\n|\Z)", content, flags=re.S | re.M))
    metrics = {}
    if "metrics" in sections:
        try:
            metrics = json.loads(sections["metrics"].strip())
        except json.JSONDecodeError:
            metrics = {}
    return {"ok": "error" not in sections, "method": sections.get("method", "").strip().split("\n")[0],
            "interpretation": sections.get("interpretation", "").strip(), "metrics": metrics,
            "conclusion": sections.get("conclusion", "").strip(), "limitations": sections.get("assumptions", "").strip()}


class BuiltinAnalyst:
    kind = "builtin"
    name = "builtin"

    def __init__(self, datasets: list[dict[str, Any]], language: str = "en"):
        self.datasets = datasets
        self.language = language
        self._counter = 0

    @property
    def zh(self) -> bool:
        return self.language == "zh"

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        turn = _current_turn(messages)
        question = turn[0]["content"] if turn else ""
        calls = {c["id"]: c for m in turn if m["role"] == "assistant" for c in m.get("tool_calls") or []}
        results = {m["tool_call_id"]: parse_tool_message(m.get("content") or "") for m in turn if m["role"] == "tool"}
        if GREETING.match(question) or is_small_talk(question) or not self.datasets:
            return ModelReply(self._small_talk(question))
        plan = plan_analysis(question, self.datasets[-1], self.zh, confirmed_definitions(messages))  # clarify.py
        offered = {t["function"]["name"] for t in tools}
        called = {c["function"]["name"] for c in calls.values()}
        if offered and "task_create" not in called and "profile_dataset" not in called:
            tasks = [("task_create", {"subject": s.task, "expected_output": s.task, "required_capability": s.tool})
                     for s in plan.steps if s.task and "task_create" in offered]
            if tasks and "record_analysis_plan" in offered:  # the plan first, as a model would (SPEC §8)
                tasks.insert(0, ("record_analysis_plan", plan_arguments(question, plan, self.zh)))
            if tasks:
                return self._reply(tasks)
        if offered and "profile_dataset" not in called:
            return self._reply([(s.tool, s.arguments) for s in plan.steps if s.tool in offered])
        if offered and "record_evidence" in offered and "record_evidence" not in called:
            evidence = self._evidence_calls(plan, calls, results)
            if evidence:
                return self._reply(evidence)
        return ModelReply(self._answer(question, plan, calls, results))

    # --- rounds ------------------------------------------------------------------------------
    def _reply(self, calls: list[tuple[str, dict[str, Any]]]) -> ModelReply:
        requests = []
        for name, arguments in calls:
            self._counter += 1
            requests.append(ToolCallRequest(f"call_builtin_{self._counter}_{name}", name, arguments))
        return ModelReply(None, requests, "tool_calls")

    def _evidence_calls(self, plan: Plan, calls: dict, results: dict) -> list[tuple[str, dict[str, Any]]]:
        out = []
        for step in plan.steps:
            if not step.task:
                continue
            call_id, result = _find_result(step.tool, step.arguments, calls, results)
            if not result or not result.get("ok"):
                continue
            metrics = {k: v for k, v in result["metrics"].items() if isinstance(v, (int, float, str))}
            n = metrics.get("n") or metrics.get("n_rows")
            out.append(("record_evidence", {
                "claim": result["interpretation"] or result["conclusion"] or step.task,
                "method": result["method"] or step.tool, "tool_call_ids": [call_id],
                "result_summary": _summary(metrics), "metrics": metrics,
                "sample_size": int(n) if isinstance(n, (int, float)) else None,
                "limitations": _limitations(step.tool, self.zh), "confidence": "high",
            }))
        return out

    # --- answers -----------------------------------------------------------------------------
    def _small_talk(self, question: str) -> str:
        if not self.datasets:
            return ("请先上传一个表格（Excel 或 CSV），然后用一句话告诉我您想了解什么。" if self.zh else
                    "Please upload a spreadsheet (Excel or CSV) first, then tell me in one sentence what you want to know.")
        return ("您好！告诉我您想从数据中了解什么，例如“不同地区的销售额有差异吗？”" if self.zh else
                "Hello! Tell me what you want to learn from your data, e.g. \"Does revenue differ by region?\"")

    def _answer(self, question: str, plan: Plan, calls: dict, results: dict) -> str:
        """Conclusions first: the finding that answers the question, then the supporting ones."""
        findings, failures = [], []
        for step in sorted((s for s in plan.steps if s.task), key=lambda s: ANSWER_ORDER.get(s.tool, 9)):
            _, result = _find_result(step.tool, step.arguments, calls, results)
            if result and result.get("ok") and (result["interpretation"] or result["conclusion"]):
                findings.append(_finding(step.tool, result, self.zh))
            elif result:
                failures.append(step.task)
        if not findings:
            findings = ["现有数据无法得出可靠结论。" if self.zh else "No reliable conclusion could be drawn from this data."]
        lines = [f"**{findings[0]}**", ""]
        if len(findings) > 1:
            lines += ["### 其他发现" if self.zh else "### Supporting findings", ""]
            lines += [f"- {f}" for f in findings[1:]] + [""]
        if failures:
            lines += [("以下分析未能完成：" if self.zh else "These analyses could not be completed: ") + "; ".join(failures), ""]
        lines += ["### 注意" if self.zh else "### Caveats", ""]
        lines += [f"- {n}" for n in plan.notes]
        lines.append("- 相关不代表因果；结论基于上传的数据，不一定适用于其他时期或人群。" if self.zh else
                     "- Correlation is not causation; conclusions hold for the uploaded data and may not carry over "
                     "to other periods or people.")
        lines += ["", HONESTY["zh" if self.zh else "en"]]
        return "\n".join(lines)


ANSWER_ORDER = {"time_series_trend": 0, "forecast": 0, "compare_groups": 0, "compare_two_groups": 0, "linear_regression": 1, "correlation_analysis": 2,
                "describe_columns": 3, "value_counts": 4}


def _finding(tool: str, result: dict[str, Any], zh: bool) -> str:
    """The tool's plain-language reading, with group averages for comparisons."""
    text = result["interpretation"] or result["conclusion"]
    means = {k.split(".", 1)[1]: v for k, v in result["metrics"].items()
             if k.startswith("mean.") and isinstance(v, (int, float))}
    if tool in ("compare_groups", "compare_two_groups") and means:
        listed = ("，" if zh else ", ").join(f"{g} {_fmt(v)}" for g, v in sorted(means.items(), key=lambda kv: -kv[1]))
        text += f"（各组平均值：{listed}）" if zh else f" (averages: {listed})"
    return text


def _current_turn(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages from the last real user message on (harness notes are not questions)."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m["role"] == "user" and not (m.get("content") or "").startswith("[harness]"):
            return messages[i:]
    return []


def _find_result(tool: str, arguments: dict, calls: dict, results: dict) -> tuple[str | None, dict | None]:
    for call_id, call in calls.items():
        if call["function"]["name"] == tool and json.loads(call["function"]["arguments"]) == arguments:
            return call_id, results.get(call_id)
    return None, None


def _summary(metrics: dict[str, Any]) -> str:
    keys = ("statistic", "f_statistic", "r", "r_squared", "p_value", "effect_size", "n", "mean_difference")
    parts = [f"{k} = {_fmt(metrics[k])}" for k in keys if k in metrics]
    if not parts:
        parts = [f"{k} = {_fmt(v)}" for k, v in list(metrics.items())[:6]]
    return ", ".join(parts)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _limitations(tool: str, zh: bool) -> list[str]:
    common = ["基于观察数据，不能证明因果关系" if zh else "Observational data: does not establish cause and effect"]
    if tool in ("compare_groups", "compare_two_groups"):
        common.append("组间其他差异（如时间、渠道）可能影响结果" if zh else
                      "Other differences between the groups (time, channel, mix) may contribute")
    if tool == "correlation_analysis":
        common.append("相关系数只衡量线性（或单调）关系" if zh else "Correlation only measures linear (or monotonic) association")
    return common
