"""Prompt tokens per request: the harness's context cascade vs a naive baseline (SPEC §4, issue 5).

A scripted 40-step analysis session over three datasets (retail orders, a survey, monthly store
operations in Chinese) runs through the real harness: RunService, intent, lazy tool exposure,
the real analysis tools (large previews, charts), and the context cascade. The scripted model
calls `tool_search` when a tool it wants is not offered, as a real model would.

The baseline is the same conversation sent naively: every tool schema with every request and
every tool output kept raw (the full text the tools produced, read back from the database).
Both are counted with the same BPE tokenizer (bpe-openai, o200k_base).

    python bench/context_tokens.py            # prints the table
Targets: harness mean ≤ 35% of the baseline's; no harness request over the turn's budget.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
warnings.filterwarnings("ignore")

from sqlalchemy import select  # noqa: E402

from app.agent.context import summary  # noqa: E402
from app.agent.context.compaction import token_budget  # noqa: E402
from app.agent.context.previews import conclusion_lines  # noqa: E402
from app.agent.model.interface import ModelReply, ToolCallRequest  # noqa: E402
from app.agent.model.tokens import count_messages, count_tools  # noqa: E402
from app.agent.tools.toolbox import FULL_REGISTRY  # noqa: E402
from app.db.models import Message, Run, ToolCall  # noqa: E402

R, S, M = "retail_sales", "customer_survey", "monthly_operations"
QUESTION = (
    "Analyse my three files: what drives retail revenue (region, channel, category, discount), "
    "how satisfied survey customers are, and how the stores' monthly turnover develops."
)
STEPS: list[tuple[str, dict]] = [
    ("list_datasets", {}),
    ("preview_data", {"dataset": R, "rows": 100}),
    ("profile_dataset", {"dataset": R}),
    ("preview_data", {"dataset": S, "rows": 100}),
    ("profile_dataset", {"dataset": S}),
    ("preview_data", {"dataset": M, "rows": 100}),
    ("profile_dataset", {"dataset": M}),
    ("pivot_table", {"dataset": R, "index_column": "Date", "columns_column": "Region", "value_column": "Revenue"}),
    ("describe_columns", {"dataset": R}),
    ("run_python", {"code": "print(retail_sales.groupby(['Date', 'Region'])['Revenue'].sum().unstack().to_string())"}),
    ("compare_groups", {"dataset": R, "value_column": "Revenue", "group_column": "Region"}),
    ("plot_box", {"dataset": R, "value_column": "Revenue", "group_column": "Region"}),
    ("run_python", {"code": "print(retail_sales.sort_values('Revenue', ascending=False).head(120).to_string())"}),
    ("compare_groups", {"dataset": R, "value_column": "Revenue", "group_column": "Channel"}),
    (
        "group_aggregate",
        {"dataset": R, "group_columns": ["Region", "Channel", "Category"], "value_columns": ["Revenue", "Units"]},
    ),
    ("pivot_table", {"dataset": R, "index_column": "Category", "columns_column": "Region", "value_column": "Revenue"}),
    ("correlation_analysis", {"dataset": R, "columns": ["Revenue", "Units", "Unit Price", "Discount"]}),
    ("group_aggregate", {"dataset": R, "group_columns": ["Date", "Channel"], "value_columns": ["Revenue"]}),
    (
        "linear_regression",
        {"dataset": R, "target_column": "Revenue", "feature_columns": ["Units", "Unit Price", "Discount"]},
    ),
    ("record_evidence", {"claim": "Revenue differs by region", "method": "ANOVA", "tool_call_ids": ["s11"]}),
    ("time_series_trend", {"dataset": R, "date_column": "Date", "value_column": "Revenue", "freq": "W"}),
    ("plot_line", {"dataset": R, "x_column": "Date", "y_column": "Revenue", "freq": "week"}),
    ("feature_importance", {"dataset": R, "target_column": "Revenue"}),
    (
        "train_regression_model",
        {"dataset": R, "target_column": "Revenue", "feature_columns": ["Units", "Unit Price", "Discount"]},
    ),
    (
        "anomaly_detection",
        {"dataset": R, "columns": ["Revenue", "Units", "Discount"], "top": 100, "id_column": "Order ID"},
    ),
    ("compare_groups", {"dataset": S, "value_column": "Satisfaction", "group_column": "City"}),
    ("chi_square_test", {"dataset": S, "x_column": "Gender", "y_column": "Would Buy Again"}),
    ("preview_data", {"dataset": S, "rows": 100}),
    ("plot_histogram", {"dataset": S, "value_column": "Satisfaction"}),
    (
        "run_python",
        {"code": "print(customer_survey[['Respondent ID', 'City', 'Satisfaction', 'Comment']].to_string())"},
    ),
    ("cluster_segments", {"dataset": S, "columns": ["Age", "Satisfaction", "Ease of Use"], "k": 3}),
    ("record_evidence", {"claim": "Satisfaction differs by city", "method": "ANOVA", "tool_call_ids": ["s25"]}),
    ("preview_data", {"dataset": M, "rows": 100}),
    ("time_series_trend", {"dataset": M, "date_column": "月份", "value_column": "营业额", "freq": "M"}),
    ("compare_groups", {"dataset": M, "value_column": "营业额", "group_column": "门店"}),
    ("plot_line", {"dataset": M, "x_column": "月份", "y_column": "营业额", "group_column": "门店"}),
    ("correlation_analysis", {"dataset": M, "columns": ["营业额", "订单数", "客单价", "广告费用"]}),
    ("forecast", {"dataset": M, "date_column": "月份", "value_column": "营业额", "horizon": 6}),
    ("record_evidence", {"claim": "Turnover grows", "method": "trend", "tool_call_ids": ["s33"]}),
    (
        "group_aggregate",
        {
            "dataset": S,
            "group_columns": ["City", "Age Group", "Gender"],
            "value_columns": ["Satisfaction", "Ease of Use"],
        },
    ),
]


class ReplayModel:
    """Plays STEPS one per request; asks tool_search for a tool that is not offered."""

    kind = "scripted"
    name = "bench-replay"

    def __init__(self):
        self.step = 0
        self.requests: list[dict] = []
        self.summaries: list[int] = []

    def complete(self, messages, tools):
        if not tools and messages and messages[0].get("content") == summary.SUMMARY_PROMPT:
            self.summaries.append(count_messages(messages))
            lines = conclusion_lines(messages[-1]["content"], 40)  # a model keeps the findings
            return ModelReply("## Conclusions\n" + "\n".join(f"- {line}" for line in lines))
        self.requests.append({"messages": [dict(m) for m in messages], "tools": list(tools)})
        if self.step >= len(STEPS) or not tools:
            return ModelReply("Summary of the findings (see the evidence cards).")
        name, arguments = STEPS[self.step]
        offered = {t["function"]["name"] for t in tools}
        if name not in offered and "tool_search" in offered:
            return ModelReply(None, [ToolCallRequest(f"q{self.step}", "tool_search", {"query": name})])
        self.step += 1
        return ModelReply(None, [ToolCallRequest(f"s{self.step}", name, arguments)])


def run_session(tmp: Path):
    from app.db.session import open_database
    from app.runs import RunService
    from app.workspaces import add_dataset, create_workspace
    from tests.factories import SAMPLES, make_settings

    settings = make_settings(tmp, tool_budget_analysis=200, tool_budget_deep=200, tool_budget_interactive=200)
    db = open_database(settings)
    model = ReplayModel()
    service = RunService(db, settings, lambda *_: model)
    with db.session() as session:
        workspace = create_workspace(session, "bench")
        for name in ("retail_sales.xlsx", "customer_survey.xlsx", "monthly_operations.xlsx"):
            add_dataset(session, settings, workspace, SAMPLES / name, name)
        run = service.create(session, workspace, QUESTION)
        run_id = run.id
    turn_budget = {}
    prepare = service.prepare_turn

    def spy(session, run, recorder):  # remember the turn's token budget (threshold × intent ratio)
        turn = prepare(session, run, recorder)
        turn_budget["tokens"] = token_budget(turn)
        return turn

    service.prepare_turn = spy
    service.execute(run_id)
    return db, run_id, model, turn_budget["tokens"]


def baseline_requests(db, run_id: str, model: ReplayModel) -> list[int]:
    """The same conversation sent naively: all schemas, raw tool outputs, nothing compacted."""
    all_tools = [t.schema() for t in FULL_REGISTRY]
    with db.session() as session:
        rows = list(session.scalars(select(Message).where(Message.run_id == run_id).order_by(Message.id)))
        raw = {c.id: c.result_text for c in session.scalars(select(ToolCall).where(ToolCall.run_id == run_id))}
        status = session.get(Run, run_id).status
    assert status == "done", status
    prefix = model.requests[0]["messages"]  # system prompt, intent guidance, earlier turns, the question
    log = [
        {
            "role": m.role,
            "content": raw.get(m.tool_call_id, m.content) if m.role == "tool" else m.content,
            **({"tool_calls": m.tool_calls} if m.tool_calls else {}),
            **({"tool_call_id": m.tool_call_id} if m.tool_call_id else {}),
        }
        for m in rows[1:]
    ]  # after the question
    counts, history = [], []
    for message in log + [None]:
        if message is None or message["role"] == "assistant":
            counts.append(count_messages(prefix + history, all_tools))
        if message is not None:
            history.append(message)
    return counts[: len(model.requests)]


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        db, run_id, model, budget = run_session(Path(tmp))
        harness = [count_messages(r["messages"], r["tools"]) for r in model.requests]
        baseline = baseline_requests(db, run_id, model)
        tool_calls = sum(1 for r in model.requests[1:])
    print(f"{'req':>4} {'harness':>9} {'baseline':>9} {'ratio':>6}")
    for i, (h, b) in enumerate(zip(harness, baseline), 1):
        print(f"{i:>4} {h:>9,} {b:>9,} {h / b:>6.0%}")
    mean_h, mean_b = statistics.mean(harness), statistics.mean(baseline)
    ratio = mean_h / mean_b
    print(f"\nrequests: {len(harness)} (tool calls: {tool_calls}, {len(STEPS)} scripted steps + tool_search)")
    print(f"mean prompt tokens: harness {mean_h:,.0f}  baseline {mean_b:,.0f}  ratio {ratio:.1%} (target ≤ 35%)")
    print(f"max prompt tokens:  harness {max(harness):,}  baseline {max(baseline):,}  turn budget {budget:,}")
    h_tools = statistics.mean(count_tools(r["tools"]) for r in model.requests)
    b_tools = count_tools([t.schema() for t in FULL_REGISTRY])
    print(
        f"  of which tool schemas: harness {h_tools:,.0f} (lazy exposure)  baseline {b_tools:,}; "
        f"messages only: harness {mean_h - h_tools:,.0f}  baseline {mean_b - b_tools:,.0f}  "
        f"ratio {(mean_h - h_tools) / (mean_b - b_tools):.1%}"
    )
    print(f"summary requests: {len(model.summaries)} ({sum(model.summaries):,} tokens; not in the means)")
    total_h = sum(harness) + sum(model.summaries)
    print(
        f"total incl. summaries: harness {total_h:,}  baseline {sum(baseline):,}  ratio {total_h / sum(baseline):.1%}"
    )
    ok = ratio <= 0.35 and max(harness) <= budget
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
