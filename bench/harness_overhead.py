"""Harness overhead per round, excluding the model and the tools (target: median < 10 ms).

    python bench/harness_overhead.py                  # 200-message history, 40 rounds
    python bench/harness_overhead.py --history 400 --rounds 60

A real turn is prepared by `RunService.prepare_turn` (intent, toolbox, system prompt with trust
tiers, context window) on a real workspace with a SQLite database on disk; its history is then
filled to `--history` messages (tool calls with 1-6 KB results, questions and answers). The real
`run_turn` loop runs with a model that answers instantly with one tool call per round. A round is
the time from one model request to the next; the model's time and the tools' time inside it are
subtracted, leaving what the harness itself does: protocol healing, tool exposure, budget checks,
context assembly and compaction, the budget table, tracing and persistence (messages, tool calls,
events, trace files).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.agent.loop import run_turn  # noqa: E402
from app.agent.model.interface import ModelReply, ToolCallRequest  # noqa: E402
from app.agent.recorder import RunRecorder  # noqa: E402
from app.agent.tracing import trace_dir  # noqa: E402
from app.config import Settings  # noqa: E402
from app.db.models import Run  # noqa: E402
from app.db.session import open_database  # noqa: E402
from app.runs import RunService  # noqa: E402
from app.workspaces import add_dataset, create_workspace  # noqa: E402

TOOLS = ("describe_columns", "summary_statistics", "list_datasets")


class InstantModel:
    """Answers at once: one tool call per round for `rounds` rounds, then the final answer."""

    kind = name = "bench"

    def __init__(self, rounds: int):
        self.rounds, self.calls, self.starts, self.spent = rounds, 0, [], []
        self.cpu_starts, self.cpu_spent = [], []

    def complete(self, messages, tools):
        start, cpu = time.perf_counter(), time.thread_time()
        self.starts.append(start)
        self.cpu_starts.append(cpu)
        self.calls += 1
        if self.calls > self.rounds or not tools:
            reply = ModelReply("The mean of value is 50.2 (n = 300).")
        else:
            name = (
                TOOLS[self.calls % len(TOOLS)]
                if any(t["function"]["name"] == TOOLS[0] for t in tools)
                else tools[0]["function"]["name"]
            )
            arguments = {"columns": ["value"]} if name == "describe_columns" else {}
            reply = ModelReply(None, [ToolCallRequest(f"bench_{self.calls}", name, arguments, json.dumps(arguments))])
        self.spent.append(time.perf_counter() - start)
        self.cpu_spent.append(time.thread_time() - cpu)
        return reply


def history(n: int) -> list[dict]:
    """n messages of an earlier analysis: tool calls with sizeable results, questions, answers."""
    messages, i = [], 0
    while len(messages) < n:
        i += 1
        if i % 7 == 0:
            messages += [
                {"role": "user", "content": f"Question {i}: how does value differ by group {i}?"},
                {"role": "assistant", "content": f"Group {i} differs: F = {i * 1.7:.2f}, p = 0.0{i % 9}."},
            ]
            continue
        call_id = f"h{i}"
        body = "\n".join(
            f"row {r}: group={r % 5} value={r * 1.37:.3f} conclusion: increase of {r % 11}%"
            for r in range(20 + (i * 37) % 120)
        )
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "describe_columns", "arguments": '{"columns": ["value"]}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": f"[data_profile]\n{body}"},
        ]
    return (
        messages[:n]
        if messages[n - 1]["role"] != "assistant" or not messages[n - 1].get("tool_calls")
        else messages[: n - 1]
    )


def warm_up() -> None:
    """One-time costs (loading the BPE tables, about 5 s on first use) are not per-round costs."""
    try:
        from app.agent.model.tokens import count_tokens
    except ImportError:
        return
    count_tokens("warm up")


def measure(history_size: int, rounds: int) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="verity-overhead-"))
    settings = Settings(
        _env_file=None,
        data_dir=folder,
        llm_model="builtin",
        tool_budget_interactive=10_000,
        tool_budget_analysis=10_000,
        tool_budget_deep=10_000,
        max_rounds=10_000,
    )
    db = open_database(settings)
    warm_up()
    csv = folder / "data.csv"
    csv.write_text("group,value\n" + "\n".join(f"g{r % 5},{r * 1.37:.3f}" for r in range(300)), encoding="utf-8")
    model = InstantModel(rounds)
    service = RunService(db, settings, lambda *_: model)
    with db.session() as session:
        workspace = create_workspace(session, "bench")
        add_dataset(session, settings, workspace, csv, "data.csv")
        run = Run(
            workspace_id=workspace.id, question="Analyse value by group in depth and write a report", language="en"
        )
        session.add(run)
        session.commit()
        recorder = RunRecorder(session, workspace.id, run.id, trace_dir(settings, workspace.id, run.id))
        turn = service.prepare_turn(session, run, recorder)
        turn.messages[1:1] = history(history_size - len(turn.messages))
        tool_time: list[tuple[float, float]] = []
        tool_cpu: list[tuple[float, float]] = []
        execute = turn.toolbox.execute

        def timed_execute(call):
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return execute(call)
            finally:
                tool_time.append((start, time.perf_counter() - start))
                tool_cpu.append((cpu, time.thread_time() - cpu))

        turn.toolbox.execute = timed_execute
        run_turn(turn)
    wall = harness_per_round(model.starts, model.spent, tool_time)
    cpu = harness_per_round(model.cpu_starts, model.cpu_spent, tool_cpu)
    return {
        "history": history_size,
        "rounds": len(wall),
        "messages_at_end": len(turn.messages),
        "wall": summary(wall),
        "cpu": summary(cpu),
        "tool_ms_median": statistics.median([d * 1000 for _, d in tool_time] or [0]),
    }


def harness_per_round(starts: list[float], model: list[float], tools: list[tuple[float, float]]) -> list[float]:
    """ms per round (model request to model request) minus the model's and the tools' share."""
    rounds = []
    for k in range(len(starts) - 1):
        inside = sum(d for s, d in tools if starts[k] <= s < starts[k + 1])
        rounds.append((starts[k + 1] - starts[k] - model[k] - inside) * 1000)
    return sorted(rounds)


def summary(values: list[float]) -> dict[str, float]:
    return {
        "median": statistics.median(values),
        "p95": values[min(len(values) - 1, round(0.95 * (len(values) - 1)))],
        "max": values[-1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--history", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    result = measure(args.history, args.rounds)
    print(
        f"history {result['history']} messages, {result['rounds']} rounds "
        f"({result['messages_at_end']} messages at the end)"
    )
    print(f"{'harness ms/round':<26}{'median':>10}{'p95':>10}{'max':>10}")
    for label, key in (("wall clock", "wall"), ("CPU (this thread)", "cpu")):
        row = result[key]
        print(f"{label:<26}{row['median']:>10.2f}{row['p95']:>10.2f}{row['max']:>10.2f}")
    print(
        f"(model and tools excluded; a tool call took {result['tool_ms_median']:.2f} ms median) target: wall "
        "median < 10 ms: "
        + (
            "PASS"
            if result["wall"]["median"] < 10
            else "OVER TARGET (a busy machine inflates wall time; the CPU row is the harness's own work)"
        )
    )


if __name__ == "__main__":
    main()
