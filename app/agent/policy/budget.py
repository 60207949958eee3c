"""The turn budget state machine (SPEC §5): every turn ends, within its caps.

Checked before every tool call (`check_call`) and updated after it (`record_result`):
- an identical call (tool name + hash of its canonical JSON arguments) that failed twice is banned
  for the rest of the turn: later attempts are refused with `banned_call`, never executed;
- 3 consecutive errors force convergence (a harness message: stop exploring, answer or ask), and
  twice that many end the tool phase;
- caps on tool calls, run_python calls and wall time (set by the intent);
- a converge message at 75% of the tool budget; at 100% the turn is wrapped up;
- a hard stop after `max_rounds` rounds: "stop now and summarise", then one request without tools.
Messages for the model come out of `start_round`, so they land between rounds, where the
function-calling protocol allows a user message.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from analysis_tools import ToolError, ToolResult

PYTHON_TOOL = "run_python"

STOP_NOW = (
    "[harness] The turn budget is spent ({why}). Stop now and summarise: do not call tools; write the "
    "final answer from the evidence you already have, and say plainly what was not completed."
)
CONVERGE = (
    "[harness] 75% of this turn's tool budget is used ({used} of {cap} tool calls). Stop exploring: "
    "finish the essential analyses, record evidence and answer."
)
CONVERGE_ERRORS = (
    "[harness] The last {n} tool calls failed. Stop exploring: answer with what you have, or ask "
    "the user for what is missing. Do not repeat failing calls."
)


def call_key(name: str, arguments: dict[str, Any] | None, raw: str = "") -> str:
    """Identity of a call: tool name + hash of its canonical JSON arguments."""
    canonical = json.dumps(arguments or {}, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    if not arguments and raw:
        canonical = raw.strip()
    return f"{name}:{hashlib.sha256(canonical.encode()).hexdigest()[:16]}"


@dataclass
class TurnBudget:
    max_tool_calls: int
    max_rounds: int
    wall_time_s: float
    max_python_calls: int = 8
    context_tokens: int | None = None  # threshold × the intent's ratio (used by the context cascade)
    ban_after_failures: int = 2
    converge_after_errors: int = 3
    tool_calls: int = 0
    python_calls: int = 0
    rounds: int = 0
    error_streak: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    warned: bool = False
    error_warned: bool = False
    stopped: str | None = None  # why the tool phase was ended early
    notes: list[str] = field(default_factory=list)  # what was injected, for the trace

    # --- rounds -----------------------------------------------------------------------------
    def start_round(self) -> str | None:
        """Count a round; return the harness message the model must see now, if any."""
        self.rounds += 1
        if self.spent:
            return self._note(STOP_NOW.format(why=self.why_spent()))
        messages = []
        if self.error_streak >= self.converge_after_errors and not self.error_warned:
            self.error_warned = True
            messages.append(CONVERGE_ERRORS.format(n=self.error_streak))
        if not self.warned and self.tool_calls >= 0.75 * self.max_tool_calls:
            self.warned = True
            messages.append(CONVERGE.format(used=self.tool_calls, cap=self.max_tool_calls))
        return self._note("\n\n".join(messages)) if messages else None

    def _note(self, text: str) -> str:
        self.notes.append(text.split(".", 1)[0])
        return text

    @property
    def spent(self) -> bool:
        return self.why_spent() is not None

    def why_spent(self) -> str | None:
        if self.stopped:
            return self.stopped
        if self.rounds > self.max_rounds:
            return f"hard stop after {self.max_rounds} rounds"
        if self.tool_calls >= self.max_tool_calls:
            return f"tool calls: {self.tool_calls} of {self.max_tool_calls}"
        if time.monotonic() - self.started > self.wall_time_s:
            return f"wall time over {self.wall_time_s:.0f} s"
        return None

    # --- the gate before each tool call -----------------------------------------------------
    def allow_tool_call(self) -> bool:
        """Count a call against the tool budget; False when the budget is spent."""
        if self.tool_calls >= self.max_tool_calls:
            return False
        self.tool_calls += 1
        return True

    def check_call(self, name: str, arguments: dict[str, Any] | None = None, raw: str = "") -> ToolError | None:
        """The gate: None lets the call run; otherwise the structured refusal (the call is not executed)."""
        if self.stopped or time.monotonic() - self.started > self.wall_time_s:
            return ToolError(
                "budget_exhausted",
                f"This turn's budget is spent ({self.why_spent()}).",
                hint="Answer with the evidence you have.",
                retryable=False,
            )
        if not self.allow_tool_call():
            return ToolError(
                "budget_exhausted",
                "The tool-call budget of this turn is spent.",
                hint="Answer with the evidence you have.",
                retryable=False,
            )
        key = call_key(name, arguments, raw)
        if self.failures.get(key, 0) >= self.ban_after_failures:
            return ToolError(
                "banned_call",
                f"This exact {name} call failed {self.failures[key]} times and is banned for the rest of this turn.",
                hint="Change the arguments or the method, or answer with what you have.",
                retryable=False,
                tool=name,
            )
        if name == PYTHON_TOOL:
            if self.python_calls >= self.max_python_calls:
                return ToolError(
                    "python_budget_exhausted",
                    f"The run_python budget of this turn ({self.max_python_calls} calls) is spent.",
                    hint="Use the analysis tools, or answer with what you have.",
                    retryable=False,
                )
            self.python_calls += 1
        return None

    def record_result(
        self, name: str, arguments: dict[str, Any] | None, ok: bool, raw: str = "", harness_fault: bool = False
    ) -> None:
        """After a call (executed or refused): failures per identical call, the error streak. A
        failure that is the harness's fault (the sandbox could not read the data, even after a
        retry) says nothing about the model's calls: it neither counts nor breaks the streak."""
        if harness_fault and not ok:
            return
        if ok:
            self.error_streak, self.error_warned = 0, False
            return
        key = call_key(name, arguments, raw)
        self.failures[key] = self.failures.get(key, 0) + 1
        self.error_streak += 1
        if self.error_streak >= 2 * self.converge_after_errors and not self.stopped:
            self.stopped = f"{self.error_streak} tool calls failed in a row"

    def restore(self, snapshot: dict[str, Any] | None) -> "TurnBudget":
        """Continue a paused turn where it stopped: counts, the error streak and banned calls carry
        over (a question to the user must not refill the budget). Wall time starts afresh."""
        if snapshot:
            self.rounds = int(snapshot.get("rounds", 0))
            self.tool_calls = int(snapshot.get("tool_calls", 0))
            self.python_calls = int(snapshot.get("python_calls", 0))
            self.error_streak = int(snapshot.get("error_streak", 0))
            self.failures.update({key: self.ban_after_failures for key in snapshot.get("banned", [])})
        return self

    def snapshot(self) -> dict[str, Any]:
        return {
            "rounds": self.rounds,
            "tool_calls": self.tool_calls,
            "max_tool_calls": self.max_tool_calls,
            "python_calls": self.python_calls,
            "max_python_calls": self.max_python_calls,
            "error_streak": self.error_streak,
            "banned": sorted(k for k, v in self.failures.items() if v >= self.ban_after_failures),
            "elapsed_s": round(time.monotonic() - self.started, 2),
            "spent": self.why_spent(),
            "context_tokens": self.context_tokens,
            "notes": list(self.notes),
        }


def spent_in(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The budget a turn rebuilt from its record had spent (a run taken over from a worker that
    died; a paused turn keeps its own snapshot): a round per model reply, a call per result.
    None for a turn that has not begun."""
    replies = [m for m in messages if m.get("role") == "assistant"]
    if not replies:
        return None
    names = {c["id"]: c["function"]["name"] for m in replies for c in m.get("tool_calls") or []}
    results = [names.get(m.get("tool_call_id") or "") for m in messages if m.get("role") == "tool"]
    return {
        "rounds": len(replies),
        "tool_calls": len(results),
        "python_calls": sum(1 for name in results if name == PYTHON_TOOL),
    }


def budget_for(intent: Any, settings: Any) -> TurnBudget:
    """The turn budget the intent sets (tool calls, run_python calls, wall time, context tokens)."""
    wall = {
        "interactive": settings.turn_wall_time_interactive_s,
        "analysis": settings.turn_wall_time_s,
        "deep": settings.turn_wall_time_deep_s,
    }[intent.tier]
    return TurnBudget(
        intent.tool_budget,
        settings.max_rounds,
        wall,
        intent.python_budget,
        int(settings.context_threshold_tokens * intent.token_budget_ratio),
        settings.ban_after_failures,
        settings.converge_after_errors,
    )


def wrap_up_answer(messages: list[dict[str, Any]], language: str = "en", why: str | None = "budget") -> str:
    """A partial answer from what the turn's tools found, for a model that ended without writing one."""
    start = max(
        (
            i
            for i, m in enumerate(messages)
            if m.get("role") == "user" and not str(m.get("content") or "").startswith("[harness]")
        ),
        default=0,
    )
    findings = []
    for message in messages[start:]:
        if message.get("role") == "tool":
            match = re.search(r"^\[interpretation\]\n(.+?)(?:\n\n|\Z)", str(message.get("content") or ""), re.S | re.M)
            if match and match.group(1).strip() not in findings:
                findings.append(match.group(1).strip())
    zh = language == "zh"
    if why:
        head = (
            "分析在完成前因回合预算用尽而停止。"
            if zh
            else "The analysis stopped before it was finished (the turn's budget ran out)."
        )
    else:
        head = "模型没有写出回答。" if zh else "The model ended the turn without writing an answer."
    if not findings:
        return head + (
            " 尚未得到可靠结果，请换个问法或缩小问题范围。"
            if zh
            else " No reliable result was produced yet; try rephrasing or narrowing the question."
        )
    label = "已得到的结果：" if zh else "What was found so far:"
    return "\n".join([head, "", label, *[f"- {f}" for f in findings[:8]]])


def gated_call(budget: TurnBudget, execute: Callable[[Any], ToolResult], call: Any) -> ToolResult:
    """Run one tool call through the budget gate: refused calls are never executed."""
    raw = call.raw_arguments if call.argument_error else ""
    refused = budget.check_call(call.name, call.arguments, raw)
    result = execute(call) if refused is None else ToolResult.failure(refused.as_dict())
    harness_fault = isinstance(result.error, dict) and result.error.get("fault") == "harness"
    budget.record_result(call.name, call.arguments, result.ok, raw, harness_fault=harness_fault)
    return result


def final_answer(turn: Any, content: str | None) -> str:
    """The model's answer; when it wrote none, a partial answer from what the tools found. The
    budget's final state goes to the trace."""
    turn.recorder.emit("budget", turn.budget.snapshot())
    if content and content.strip():
        return content
    language = getattr(getattr(turn.toolbox, "context", None), "language", "en")
    return wrap_up_answer(turn.messages, language, turn.budget.why_spent())
