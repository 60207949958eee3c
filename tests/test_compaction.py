"""The context cascade (SPEC §4): each level alone, the tools, the budget table, trimming, and a
heavy session after which every tool output is rebuilt byte for byte from disk."""

import json
import re
import threading

import pytest

from analysis_tools import Registry, ToolContext, ToolResult, make_tool
from app.agent.context import summary
from app.agent.context.budget_table import budget_table
from app.agent.context.compaction import (
    ContextWindow,
    compact,
    find_safe_boundary,
    micro_compact,
    shelve_output,
    summarize_history,
    token_budget,
)
from app.agent.context.outputs import OutputStore
from app.agent.context.previews import compact_preview, conclusion_lines
from app.agent.context.tiers import Item, without_block
from app.agent.loop import run_turn
from app.agent.model.interface import ModelReply
from app.agent.model.protocol import heal_protocol
from app.agent.model.tokens import count_messages
from app.agent.policy.budget import TurnBudget
from app.agent.prompts import system_prompt
from app.agent.run_scope import RunScope
from app.agent.tools.context_tools import compact_context, read_tool_output
from app.agent.tools.toolbox import DatasetCatalog, Toolbox, tool_message_content
from app.agent.turn import Turn
from tests.fakes import ScriptedModel, call


class NullRecorder:
    """RunRecorder's interface without a database."""

    trace_dir = None
    run_id = "run"
    workspace_id = "ws"

    def __init__(self):
        self.events = []

    def emit(self, kind, data=None, commit=None):
        self.events.append((kind, data or {}))

    def add_message(self, message):
        pass

    def record_tool_call(self, *args, **kwargs):
        pass


def tagged(body_lines: int, tag_body: str = "Revenue increased 12.5% (p = 0.003), a significant rise.") -> str:
    body = "\r\n".join(f"row {i}: north 1{i}.5 | 南区 {i} | filler text" for i in range(body_lines))
    return (
        f"[method]\nWelch t-test\n\n[data_profile]\n2,000 rows × 12 columns\n\n{body}\n\n"
        f'[interpretation]\n{tag_body}\n\n[metrics]\n{{"t": 3.1, "p_value": 0.003}}'
    )


@pytest.fixture
def window(tmp_path):
    return ContextWindow(OutputStore(tmp_path / "ws"))


def tool_exchange(call_id: str, content: str, name: str = "describe_columns") -> list[dict]:
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": call_id, "content": content},
    ]


# --- level 1 ---------------------------------------------------------------------------------
def test_small_output_is_saved_and_shown_whole(window):
    text = '[metrics]\n{"n": 30}'
    assert shelve_output(window, "c1", "describe_columns", text) == text
    assert window.store.read("c1") == text


def test_medium_output_is_truncated_with_a_reference(window):
    text = tagged(150)
    assert 3_000 < len(text) <= 15_000
    shown = shelve_output(window, "c2", "preview_data", text)
    assert window.store.read("c2") == text  # byte for byte, \r\n included
    assert len(shown) < 3_300 and 'read_tool_output(id="c2"' in shown and "[truncated]" in shown
    assert shown.startswith("[method]\nWelch t-test")
    assert "[interpretation]\nRevenue increased 12.5%" in shown and '"p_value": 0.003' in shown  # the closing sections


def test_huge_output_leaves_only_a_persisted_preview(window):
    text = tagged(1_000)
    assert len(text) > 15_000
    shown = shelve_output(window, "c3", "preview_data", text)
    assert window.store.read("c3") == text
    assert shown.startswith('<persisted-output id="c3"')
    preview = shown.split(">\n", 1)[1].split("\n</persisted-output>")[0]
    assert len(preview) <= 2_000 and "significant rise" in preview


def test_read_backs_are_not_shelved_again(window):
    text = "x" * 20_000
    assert shelve_output(window, "r1", "read_tool_output", text) == text
    assert window.store.read("r1") is None


def test_a_reused_call_id_with_other_content_gets_its_own_file(window):
    first = window.store.save_output("call_0", "first run")
    second = window.store.save_output("call_0", "second run")
    assert first == "call_0" and second == "call_0_2"
    assert window.store.read("call_0") == "first run" and window.store.read("call_0_2") == "second run"
    assert window.store.save_output("../../etc/passwd", "x") == "etc_passwd"


# --- level 2 ---------------------------------------------------------------------------------
def test_compact_preview_keeps_tags_and_conclusion_lines():
    text = (
        "[method]\nOne-way ANOVA\n\n"
        + "\n".join(f"noise line {i}" for i in range(200))
        + "\nConclusion: weight differs by group, F = 4.846, p = 0.016\n结论：B组销售额显著增加 23%\n"
        '[evidence]\nrecorded as ev_1\n\n[metrics]\n{"f_statistic": 4.846}'
    )
    preview = compact_preview(text, "c9", "compare_groups", 800)
    assert len(preview) <= 800 and 'read_tool_output(id="c9")' in preview
    for kept in ("[method]\nOne-way ANOVA", "[evidence]", "[metrics]", "F = 4.846", "显著增加 23%"):
        assert kept in preview
    assert "noise line 100" not in preview


def test_conclusion_lines_need_a_number_and_a_finding_word():
    lines = conclusion_lines("Revenue decreased by 8%\nno number here: significant\n42 rows\n转化率下降 3.2 个百分点")
    assert lines == ["Revenue decreased by 8%", "转化率下降 3.2 个百分点"]


def test_micro_compaction_keeps_the_newest_eight(window):
    messages = [{"role": "system", "content": "rules"}, {"role": "user", "content": "q"}]
    for i in range(12):
        messages += tool_exchange(f"c{i}", tagged(40) + f"\nresult {i}")
    assert micro_compact(messages, window) == 4
    tools = [m for m in messages if m["role"] == "tool"]
    assert all(m["content"].startswith("[compacted tool result") for m in tools[:4])
    assert all(not m["content"].startswith("[compacted") for m in tools[4:])
    assert window.store.read("c0").endswith("result 0")  # persisted before it was replaced
    assert micro_compact(messages, window) == 0  # idempotent
    assert heal_protocol(messages) == []


def test_micro_compaction_points_back_to_the_level_one_file(window):
    original = tagged(1_000)
    messages = tool_exchange("big", shelve_output(window, "big", "preview_data", original))
    for i in range(8):
        messages += tool_exchange(f"s{i}", "short " * 200)
    micro_compact(messages, window)
    assert 'read_tool_output(id="big")' in messages[1]["content"]
    assert window.store.read("big") == original


# --- level 3 ---------------------------------------------------------------------------------
def test_safe_boundary_never_splits_a_call_from_its_results():
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]
    messages.append(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": "t", "arguments": "{}"}} for i in range(5)
            ],
        }
    )
    messages += [{"role": "tool", "tool_call_id": f"c{i}", "content": "r"} for i in range(5)]
    messages += [{"role": "assistant", "content": "answer"}, {"role": "user", "content": "next"}]
    for keep in range(1, 12):
        split = find_safe_boundary(messages, keep)
        if split:
            assert messages[split]["role"] != "tool"
            assert len(messages) - split >= keep
            assert heal_protocol(messages[:1] + messages[split:]) == []
    assert find_safe_boundary(messages, 7) == 2  # moved back to the assistant call
    assert find_safe_boundary(messages, 50) == 0


def long_history(n: int = 30) -> list[dict]:
    messages = [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "Compare revenue by region; I define revenue as net of refunds."},
    ]
    for i in range(n):
        messages += tool_exchange(
            f"c{i}",
            tagged(20, f"Region {i} revenue increased {i}.5% (p = 0.0{i % 9 + 1})"),
            "compare_groups" if i % 2 else "plot_bar",
        )
        messages[-1]["content"] += f"\n[figures]\n- figures/bar_c{i}.png: revenue by region"
    return messages


def test_summary_saves_the_transcript_first_and_keeps_the_recent_ten(window):
    messages = long_history()
    original = json.loads(json.dumps(messages))
    model = ScriptedModel(
        [ModelReply("## Datasets\nsales: 2,000 rows\n## Conclusions\nRegion 3 revenue increased 3.5%")]
    )
    event = summarize_history(messages, window, model, "over_budget")
    transcript = window.store.read(event["transcript"])
    assert [json.loads(line) for line in transcript.splitlines()] == original
    assert messages[0] == original[0]
    assert (
        messages[1]["content"].startswith(summary.MARKER)
        and "Region 3 revenue increased 3.5%" in messages[1]["content"]
    )
    assert messages[2] == {"role": "assistant", "content": summary.ACK}
    assert messages[3:] == original[-10:] and heal_protocol(messages) == []
    request = model.requests[0]
    assert request["tools"] == [] and request["messages"][0]["content"] == summary.SUMMARY_PROMPT
    assert "net of refunds" in request["messages"][1]["content"]
    # numbers survive a paraphrasing model: key lines are appended verbatim
    assert "Region 0 revenue increased 0.5% (p = 0.01)" in messages[1]["content"]


def test_builtin_and_failing_models_get_an_extractive_summary(window):
    class Builtin:
        kind = "builtin"

        def complete(self, messages, tools):
            raise AssertionError("the built-in analyst is never asked to summarise")

    class Broken:
        kind = "openai-compatible"

        def complete(self, messages, tools):
            raise RuntimeError("503")

    for model in (Builtin(), Broken()):
        messages = long_history()
        event = summarize_history(messages, window, model, "test")
        text = messages[1]["content"]
        assert event["summary_by"] == "extractive"
        for fact in (
            "net of refunds",
            "Region 1 revenue increased 1.5%",
            "figures/bar_c2.png",
            "2,000 rows × 12 columns",
        ):
            assert fact in text


def test_a_second_summary_carries_the_first_one_over(window):
    messages = long_history()
    summarize_history(messages, window, None, "first")
    messages += long_history(12)[2:]
    summarize_history(messages, window, None, "second")
    assert "Region 0 revenue increased 0.5%" in messages[1]["content"]
    assert sum(summary.is_summary(m) for m in messages) == 1


def make_turn(window, model=None, messages=None, tools=()) -> Turn:
    registry = Registry(list(tools))
    toolbox = Toolbox(DatasetCatalog(), ToolContext(scope=RunScope(context_window=window)), registry=registry)
    return Turn(
        messages or [{"role": "system", "content": "rules"}, {"role": "user", "content": "q"}],
        model or ScriptedModel(),
        toolbox,
        NullRecorder(),
        TurnBudget(200, 300, 600),
        threading.Event(),
        context=window,
    )


def test_compact_summarises_only_above_the_budget(window):
    turn = make_turn(window, messages=long_history())
    window.threshold_tokens = 10 * count_messages(turn.messages)
    before = [dict(m) for m in turn.messages]
    assert compact(turn) == [] and turn.messages == before  # below the budget: append-only, nothing rewritten
    assert not [e for e in turn.recorder.events if e[0] == "context_compacted"]
    window.threshold_tokens = 3_000  # 0.7 × 3,000 = 2,100 tokens
    done = compact(turn)
    sizes = next(e for e in done if e["level"] == "tokens")
    assert sizes["before"] > sizes["budget"] >= sizes["after"]
    assert any(e["level"] == 3 for e in done) and turn.recorder.events[-1][0] == "context_compacted"
    assert [e for e in turn.recorder.events if e[0] == "context_compacted"] == [turn.recorder.events[-1]]  # one


def test_compact_does_not_assemble_a_request(window, monkeypatch):
    turn = make_turn(window, messages=long_history())
    monkeypatch.setattr(turn.toolbox, "schemas", lambda: pytest.fail("schemas() is once per request"))
    window.threshold_tokens = 3_000
    assert any(e["level"] == 3 for e in compact(turn))


def test_the_budget_follows_the_intent_ratio(window):
    turn = make_turn(window)
    assert token_budget(turn) == 70_000

    class Intent:
        token_ratio = 0.3

    turn.intent = Intent()
    assert token_budget(turn) == 30_000


# --- level 4 and the tools -------------------------------------------------------------------
def test_compact_context_tool_requests_a_summary_next_round(window):
    turn = make_turn(window, messages=long_history())
    result = compact_context("long session", ctx=ToolContext(scope=RunScope(context_window=window)))
    assert result.ok and window.requested == "long session"
    done = compact(turn)
    assert any(e["level"] == 3 and e["reason"] == "long session" for e in done)
    assert window.requested is None


def test_read_tool_output_pages_through_anything_persisted(window):
    text = "".join(f"line {i}\n" for i in range(5_000))
    window.store.save_output("big", text)
    ctx = ToolContext(scope=RunScope(context_window=window))
    parts, offset = [], 0
    while True:
        result = read_tool_output("big", offset=offset, length=12_000, ctx=ctx)
        body = result.text.split("\n", 1)[1]
        part, _, tail = body.rpartition("\n[")
        parts.append(part)
        offset += result.metrics["returned"]
        if "end of output" in tail:
            break
    assert "".join(parts) == text
    transcript = window.store.save_transcript([{"role": "user", "content": "hi"}])
    assert '"content": "hi"' in read_tool_output(transcript, ctx=ctx).text
    missing = Registry([make_tool(read_tool_output, "core")]).run("read_tool_output", None, ctx, id="nope")
    assert not missing.ok and missing.error["error"] == "output_not_found"


# --- budget table and conflict-aware trimming ------------------------------------------------
def test_budget_table_splits_the_request_into_parts(window):
    messages = long_history(8)
    assert summarize_history(messages, window, None, "t")
    messages += [{"role": "user", "content": "Now by channel?"}] + tool_exchange("x1", "[metrics]\n{}")
    tools = [{"type": "function", "function": {"name": "t", "description": "d", "parameters": {}}}]
    table = budget_table(messages, tools, 70_000)
    parts = table["parts"]
    assert all(parts[p] > 0 for p in ("system", "tools", "task", "summaries", "history", "steps"))
    assert table["total"] == count_messages(messages, tools) and table["budget"] == 70_000


def guided_history(conflict: bool) -> list[dict]:
    """long_history with a system prompt that carries knowledge and memory blocks (and a conflict)."""
    knowledge = Item("Finance policy", "knowledge", "Refunds are excluded from revenue. " + "k " * 400)
    memory = Item(
        "2026-11-01 · revenue by region",
        "memory",
        ("Revenue included refunds. " if conflict else "Revenue was flat. ") + "m " * 400,
    )
    prompt = system_prompt([], "en", knowledge=(knowledge,), memory=(memory,))
    assert ('source="conflict-check"' in prompt) is conflict
    return [{"role": "system", "content": prompt}, *long_history()[1:]]


@pytest.mark.parametrize("conflict", [False, True])
def test_over_budget_trimming_is_conflict_aware(window, conflict):
    """Without a conflict old tool results are summarised first and the guidance stays when that
    is enough; with one, memory and knowledge go first and the evidence is kept whole."""
    turn = make_turn(window, messages=guided_history(conflict))
    window.threshold_tokens = 10**6
    micro_compact(turn.messages, window)  # level 2 first: the budget below is measured against what is left after it
    results = [m["content"] for m in turn.messages if m["role"] == "tool"]
    system_tokens = count_messages(turn.messages[:1])
    # A budget that the summary alone can meet, or dropping memory and knowledge alone.
    window.threshold_tokens = int((count_messages(turn.messages) - system_tokens // 2) / 0.7)
    done = compact(turn)
    prompt = turn.messages[0]["content"]
    dropped = [e["dropped"] for e in done if e["level"] == "trim"]
    if conflict:
        assert dropped[:1] == ["memory"] and 'tier="memory"' not in prompt
        assert not any(e["level"] == 3 for e in done)  # the evidence needed to settle it was kept
        assert [m["content"] for m in turn.messages if m["role"] == "tool"] == results
    else:
        assert any(e["level"] == 3 for e in done) and dropped == []
        assert 'tier="memory"' in prompt and 'tier="knowledge"' in prompt
    assert 'tier="data"' in prompt  # the data schema is never trimmed
    sizes = next(e for e in done if e["level"] == "tokens")
    assert sizes["after"] <= sizes["budget"]


def test_without_block_removes_one_tier_only():
    prompt = system_prompt([], "en", knowledge=(Item("a", "knowledge", "K"),), memory=(Item("b", "memory", "M"),))
    assert 'tier="memory"' not in without_block(prompt, "memory") and 'tier="knowledge"' in without_block(
        prompt, "memory"
    )
    assert without_block(prompt, "user") == prompt


# --- nothing is lost -------------------------------------------------------------------------
def blob(size: int, seed: int, ctx: ToolContext = None) -> ToolResult:
    """Return a synthetic tool output of about `size` characters.

    Args:
        size: Characters.
        seed: Varies the text.
    """
    lines = [
        f"[method]\nsynthetic #{seed}",
        "[insights]",
        f"Metric {seed} increased {seed * 1.5:.1f}% (p = 0.0{seed % 9 + 1})",
    ]
    i = 0
    while sum(len(x) + 1 for x in lines) < size:
        lines.append(f"{seed}-{i}\tvalue {i * seed}\t数据 {i}\r")
        i += 1
    return ToolResult(text="\n".join(lines))


class SummarisingScript(ScriptedModel):
    """Scripted turn replies; summary requests are answered without using up the script."""

    def complete(self, messages, tools):
        if not tools and messages and messages[0]["content"] == summary.SUMMARY_PROMPT:
            self.requests.append({"messages": [dict(m) for m in messages], "tools": tools, "summary": True})
            return ModelReply("## Conclusions\n(model summary)")
        return super().complete(messages, tools)


SIZES = (200, 2_900, 3_100, 9_000, 15_500, 40_000, 800, 20_000)


def test_heavy_compaction_loses_nothing(tmp_path):
    window = ContextWindow(OutputStore(tmp_path / "ws"), threshold_tokens=20_000)  # budget 14,000 tokens
    replies, expected = [], {}
    for round_ in range(20):
        calls = [
            call("blob", f"r{round_}c{j}", size=SIZES[(round_ + j) % len(SIZES)], seed=round_ * 3 + j) for j in range(3)
        ]
        replies.append(ModelReply(None, calls))
        for c in calls:
            expected[c.id] = blob(**c.arguments).text
    replies.append(ModelReply("done"))
    model = SummarisingScript(replies)
    turn = make_turn(window, model, tools=[make_tool(blob, "core")])
    assert run_turn(turn) == "done"

    levels = {step["level"] for kind, e in turn.recorder.events if kind == "context_compacted" for step in e["steps"]}
    assert {2, 3} <= levels and window.summaries >= 2
    for call_id, text in expected.items():  # every original output, byte for byte, from disk
        assert window.store.read(call_id) == text, call_id
    transcripts = [i for i in window.store.ids() if i.startswith("transcript_")]
    assert len(transcripts) == window.summaries
    turn_requests = [r for r in model.requests if not r.get("summary")]
    assert len(turn_requests) == 21 and any(r.get("summary") for r in model.requests)
    for request in turn_requests:
        assert heal_protocol([dict(m) for m in request["messages"]]) == []
        assert count_messages(request["messages"], request["tools"]) <= token_budget(turn)


# --- end to end: the real openai client against a local fake server -------------------------
def wide_csv(path):
    header = ",".join(f"column_{j}" for j in range(15))
    rows = [",".join(f"value {i}-{j} lorem ipsum" for j in range(15)) for i in range(150)]
    path.write_text(header + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_turn_persists_large_outputs_and_reads_them_back(tmp_path):
    from sqlalchemy import select

    from app.agent.model.openai_compatible import OpenAICompatibleModel
    from app.db.models import Event, Run, ToolCall
    from tests.factories import setup, start_run
    from tests.fakes import FakeOpenAIServer, completion

    def calls(*items):
        return completion(tool_calls=[{"id": i, "name": n, "arguments": json.dumps(a)} for i, n, a in items])

    script = [
        calls(*[(f"p{i}", "preview_data", {"rows": 100 if i == 0 else 3}) for i in range(10)]),
        calls(("r1", "read_tool_output", {"id": "p0", "offset": 0, "length": 12_000})),
        calls(("r2", "read_tool_output", {"id": "p0", "offset": 12_000, "length": 12_000})),
        completion("The table has 150 rows."),
    ]
    with FakeOpenAIServer(script) as server:
        settings, db, service, ws = setup(
            tmp_path,
            wide_csv(tmp_path / "wide.csv"),
            lambda s, *_: OpenAICompatibleModel(s),
            llm_base_url=server.base_url,
            llm_model="fake-model",
            llm_max_retries=0,
        )
        run_id = start_run(service, ws, "Show me the data")
        service.execute(run_id)
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "done", run.error
        full = s.get(ToolCall, (run_id, "p0")).result_text
        events = [e.data for e in s.scalars(select(Event).where(Event.run_id == run_id, Event.kind == "model_call"))]
    assert len(full) > 15_000
    disk = OutputStore(settings.workspace_dir(ws)).read("p0")
    assert disk == full

    def tool_content(request, call_id):
        return next(m["content"] for m in request["messages"] if m.get("tool_call_id") == call_id)

    second = server.requests[1]
    assert tool_content(second, "p9").startswith("[method]") or len(tool_content(second, "p9")) < 3_000
    p0 = tool_content(second, "p0")  # persisted: a preview and its pointer (no per-request rewriting)
    assert 'read_tool_output(id="p0"' in p0 and len(p0) <= 2_600 and full not in p0
    assert second["tools"] == server.requests[0]["tools"]  # the tools array stays; read_tool_output is callable
    read1, read2 = tool_content(server.requests[2], "r1"), tool_content(server.requests[3], "r2")
    body = lambda text: re.split(r"\n\[(?:more|end of output)\]", text.split("\n", 1)[1])[0]  # noqa: E731
    assert (body(read1) + body(read2)) == full[:24_000]
    assert "[more]" in read1
    table = events[0]["context"]
    assert table["parts"]["tools"] > 0 and table["parts"]["task"] > 0
    assert table["budget"] in (30_000, 70_000)  # threshold × the intent's ratio (data_prep 0.3 when intents exist)
    assert max(e["context"]["total"] for e in events) <= table["budget"]


def test_the_compact_button_summarises_the_workspace_conversation(tmp_path):
    from fastapi.testclient import TestClient

    from app.agent.context.conversation import with_workspace_summary
    from app.db.models import Message, Run
    from app.main import create_app
    from app.runs import earlier_exchanges
    from tests.factories import make_settings

    settings = make_settings(tmp_path)
    with TestClient(create_app(settings)) as client:
        ws = client.post("/api/workspaces", json={"name": "long"}).json()["id"]
        db = client.app.state.db
        with db.session() as s:
            for i in range(8):
                run = Run(workspace_id=ws, question=f"question {i}", status="done")
                s.add(run)
                s.flush()
                s.add(Message(workspace_id=ws, run_id=run.id, role="user", content=f"question {i}"))
                s.add(
                    Message(
                        workspace_id=ws,
                        run_id=run.id,
                        role="assistant",
                        content=f"Answer {i}: revenue increased {i}.5% in region {i}.",
                    )
                )
            s.commit()
        response = client.post(f"/workspaces/{ws}/compact", follow_redirects=False)
        assert response.status_code == 303 and "compacted=6" in response.headers["location"]
        page = client.get(f"/workspaces/{ws}")
        assert "Compact conversation" in page.text
        with db.session() as s:
            history = with_workspace_summary(s, ws, earlier_exchanges(s, ws, "next-run"))
        assert history[0]["content"].startswith(summary.MARKER)
        assert "revenue increased 0.5%" in history[0]["content"] and "question 0" in history[0]["content"]
        assert history[1]["role"] == "assistant" and [m["content"] for m in history[2:]][0] == "question 3"
        assert len(history) == 2 + 10
        transcripts = OutputStore(settings.workspace_dir(ws)).ids()
        assert any(i.startswith("transcript_") for i in transcripts)
        again = client.post(f"/workspaces/{ws}/compact", follow_redirects=False)
        assert "compacted=0" in again.headers["location"]


def test_outputs_written_at_once_by_many_runs_are_all_kept(tmp_path):
    """Runs of one workspace execute side by side and reuse call ids ("call_0"): every text is kept."""
    import threading as _threading

    from app.agent.context.outputs import OutputStore

    store, ids, errors = OutputStore(tmp_path), {}, []

    def write(i: int) -> None:
        try:
            ids[i] = store.save_output("call_0", f"output of run {i % 4}")
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [_threading.Thread(target=write, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert {store.read(ids[i]) for i in range(16)} == {f"output of run {k}" for k in range(4)}
    assert all(store.read(ids[i]) == f"output of run {i % 4}" for i in range(16))
    assert len(store.ids()) == 4 and not list((tmp_path / "tool_outputs").glob(".*.tmp"))


def test_outputs_are_kept_where_hard_links_are_not_supported(tmp_path, monkeypatch):
    import os as _os

    from app.agent.context.outputs import OutputStore

    def no_links(*_args):
        raise PermissionError("hard links not supported")

    monkeypatch.setattr(_os, "link", no_links)
    store = OutputStore(tmp_path)
    first, same, other = (store.save_output("call_0", text) for text in ("a", "a", "b"))
    assert (first, same, other) == ("call_0", "call_0", "call_0_2")
    assert store.read("call_0") == "a" and store.read("call_0_2") == "b"


# --- the results as data beside the text (tools/results.py) -----------------------------------
def test_each_result_is_kept_as_data_in_full_and_read_back_for_a_resumed_turn(window):
    """What a program reads of a result (the built-in analyst) is the whole result, never the shortened
    text; a turn resumed in another process gets it back from the output store, beside the text. A call
    id another run reused keeps each run's own result."""
    from analysis_tools import tagged_text
    from app.agent.tools.results import CallResults

    def result(groups: int) -> ToolResult:
        return ToolResult(
            text=tagged_text(method="One-way ANOVA", data_profile=[f"group {i}: n = 10" for i in range(groups)]),
            interpretation="The groups differ.",
            metrics={f"mean.g{i}": float(i) for i in range(groups)} | {"p_value": 0.01},
        )

    live, messages = CallResults(), []
    for call_id, groups in (("call_0", 3), ("call_1", 150), ("call_2", 400), ("call_0", 4)):  # last: another run's
        made = result(groups)
        record = live.keep(call_id, made)
        shown = shelve_output(window, call_id, "compare_groups", tool_message_content(made), record)
        messages.append({"role": "tool", "tool_call_id": call_id, "content": shown})
    assert "[truncated]" in messages[1]["content"] and messages[2]["content"].startswith("<persisted-output")
    assert len(live("call_2").metrics) == 401  # the text was cut, the record was not
    for run_messages, groups in ((messages[:3], 3), (messages[3:], 4)):
        resumed = CallResults()
        assert resumed.restore(run_messages, window.store) == len(run_messages)
        assert resumed("call_0") == result(groups).record()
    assert resumed("call_9") is None and CallResults().restore(messages, None) == 0
