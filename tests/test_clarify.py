"""Clarification (SPEC §9): ask_user_question, the hard gates, confirmed definitions, the CLI."""

import json

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import select

from app.agent.model.interface import ModelReply, ToolCallRequest
from app.agent.policy.clarify import answer_question, normalise_answer
from app.agent.policy.gates import GateInput, check_gates
from app.analyst.definitions import confirmed_definitions
from app.db.models import Event, Message, Question, Run, ToolCall
from tests.factories import SAMPLES, setup, start_run, wait_for_run
from tests.fakes import ScriptedModel, call

RNG = np.random.default_rng(7)
N = 60


def shop_frame(n: int = N) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "date": pd.date_range("2024-01-01", periods=n, freq="D"),
            "region": RNG.choice(["East", "West", "North"], n),
            "revenue": RNG.normal(100, 10, n).round(2),
            "revenue_net": RNG.normal(90, 10, n).round(2),
            "gmv": RNG.normal(120, 10, n).round(2),
        }
    )


def cols(*spec):
    return [{"name": name, "type": kind, "missing": missing, "pii": None} for name, kind, missing in spec]


SHOP = {
    "name": "shop",
    "file": "shop.xlsx",
    "rows": 60,
    "columns": cols(
        ("date", "datetime", 0),
        ("region", "category", 0),
        ("revenue", "number", 0),
        ("revenue_net", "number", 0),
        ("gmv", "number", 0),
    ),
}
RETAIL = {
    "name": "retail_sales",
    "file": "retail_sales.xlsx",
    "rows": 1200,
    "columns": cols(
        ("Date", "datetime", 0),
        ("Order ID", "identifier", 0),
        ("Region", "category", 0),
        ("Channel", "category", 0),
        ("Units", "integer", 0),
        ("Unit Price", "number", 0),
        ("Revenue", "number", 0),
        ("Discount", "number", 0),
    ),
}


def gate(question, dataset=SHOP, **kw):
    return check_gates(GateInput(question=question, datasets=[dataset], **kw))


# --- each gate fires on a crafted dataset/question, and not when the question is clear -------
def test_metric_gate_fires_on_several_revenue_columns():
    found = gate("how is revenue doing?")
    assert found.topic == "metric" and found.kind == "single"
    assert [o["label"] for o in found.options] == ["revenue", "revenue_net", "gmv"]
    assert all(o["description"] for o in found.options)
    assert "gross merchandise" in found.options[2]["description"]


@pytest.mark.parametrize(
    "question",
    [
        "how is revenue_net doing?",
        "How is net revenue doing?",
        "How is gmv doing?",
        "Does revenue_net differ by region?",
    ],
)
def test_metric_gate_does_not_fire_when_the_metric_is_named(question):
    assert gate(question) is None


def test_metric_gate_in_chinese_and_not_on_the_retail_sample():
    assert gate("收入表现怎么样？", language="zh").question.startswith("“收入”应该用哪一列")
    assert gate("Does revenue differ by region?", RETAIL) is None
    assert gate("不同地区的收入有差异吗？", RETAIL, language="zh") is None


# a sheet with a merged header row: "Sales" groups two counts, "Payment" two money columns
MERGED = {
    "name": "kiosk",
    "file": "kiosk.xlsx",
    "rows": 80,
    "columns": cols(
        ("Visit / Kiosk", "category", 0),
        ("Payment / Cash ($)", "number", 0),
        ("Payment / Card ($)", "number", 0),
        ("Sales / Units Sold", "integer", 0),
        ("Sales / Units Returned", "integer", 0),
    ),
}


def test_a_merged_group_word_makes_no_leaf_a_metric_of_its_family():
    # the question names the leaf Units Sold; the group word Sales (a revenue word) is the sheet's layout,
    # shared by both counts under it: neither is a revenue column to ask about
    assert gate("Which kiosk had the most units sold?", MERGED) is None
    # and a revenue word never offers the counts under the group word Sales as its columns
    found = gate("How much revenue did each kiosk bring in?", MERGED)
    assert found is None or not {o["label"] for o in found.options} & {"Sales / Units Sold", "Sales / Units Returned"}


def test_goal_gate_fires_without_a_cue():
    found = gate("Analyse revenue_net")
    assert found.topic.startswith("goal.") and len(found.options) >= 4
    labels = [o["label"] for o in found.options]
    assert "Trend over time" in labels and "Compare groups" in labels and "Retention" in labels
    assert gate("Does revenue_net differ by region?") is None
    assert gate("分析一下revenue_net", language="zh").question == "你想了解哪方面？"


def test_time_window_gate():
    found = gate("Is revenue_net up compared to last month?")
    assert found.topic.startswith("window.") and len(found.options) == 4
    assert gate("Compare revenue_net in January 2024 with February 2024") is None
    assert gate("revenue_net 环比怎么样？", language="zh").topic.startswith("window.")
    assert gate("revenue_net 比上个月涨了吗？", language="zh").topic.startswith("window.")
    # 和/比 + 上 is a period only with the period after it: "北京店和上海店" are two shops (a new user's trial)
    assert not (found := gate("北京店和上海店的revenue_net差多少？", language="zh")) or not found.topic.startswith(
        "window."
    )


def test_before_and_after_columns_are_not_two_periods_to_choose():
    """A table with a date and a measurement taken before and after a treatment on each row: "before
    and after" names the two columns, so no "which periods" question (the plan is a paired test)."""
    clinic = {
        "name": "clinic",
        "file": "clinic.csv",
        "rows": 80,
        "columns": cols(
            ("Patient ID", "identifier", 0),
            ("First Visit", "datetime", 0),
            ("Systolic Before", "integer", 0),
            ("Systolic After", "integer", 0),
        ),
    }
    assert gate("Blood pressure was taken before and after the treatment. Did it come down?", clinic) is None
    assert (
        gate(
            "治疗前后血压有没有变化？",
            {
                **clinic,
                "columns": cols(
                    ("编号", "identifier", 0),
                    ("日期", "datetime", 0),
                    ("治疗前血压", "integer", 0),
                    ("治疗后血压", "integer", 0),
                ),
            },
            language="zh",
        )
        is None
    )
    assert gate("Compare revenue_net before and after the price change", SHOP).topic.startswith("window.")


def test_field_semantics_gate_for_a_numeric_looking_id():
    data = {
        "name": "stores",
        "rows": 200,
        "columns": cols(("store_id", "integer", 0), ("region", "category", 0), ("sales", "number", 0)),
    }
    found = gate("What drives sales?", data)
    assert found.topic == "field.store_id" and "label" in found.question
    assert gate("What drives sales?", data, answered={"field.store_id": "An identifier (a label)"}) is None
    assert gate("Does sales differ by region?", data) is None  # the code plays no part in that answer


def test_high_risk_methods_are_confirmed():
    assert gate("Forecast revenue_net for next month").topic == "method.forecast"
    assert gate("预测revenue_net", language="zh").topic == "method.forecast"
    assert gate("预测未来3个月revenue_net的驱动因素", language="zh").topic == "method.forecast"
    assert gate("哪些因素能预测revenue_net？", language="zh") is None  # drivers, not the future
    assert gate("Which factors predict revenue_net?") is None
    assert gate("Did the discount cause higher revenue_net?").topic == "method.causal"
    assert gate("Evaluate the A/B test on revenue_net").topic == "method.experiment"
    retention = gate("What is the 30-day retention of customers by region?")
    assert retention.topic == "method.retention" and [o["label"] for o in retention.options] == [
        "7 days",
        "30 days",
        "90 days",
    ]
    assert gate("不要做因果，只做描述：各地区的revenue_net有差异吗？", language="zh") is None  # negated: a restriction


def test_data_quality_gates():
    holes = {**SHOP, "columns": cols(("region", "category", 0), ("revenue", "number", 45))}
    found = gate("Does revenue differ by region?", holes)
    assert found.topic == "quality.revenue" and "75%" in found.question
    empty = {**SHOP, "columns": cols(("region", "category", 0), ("revenue", "number", 60))}
    assert "empty" in gate("Does revenue differ by region?", empty).question
    tiny = {**SHOP, "rows": 6, "columns": cols(("region", "category", 0), ("revenue", "number", 0))}
    assert gate("Does revenue differ by region?", tiny).topic.startswith("quality.rows")
    assert gate("Summarise the remarks", tiny) is None


def test_grain_gate_when_tables_at_different_levels_of_detail_are_combined():
    from app.db.models import Dataset
    from app.workspaces import dataset_summary

    orders = shop_frame(90)
    targets = pd.DataFrame(
        {"month": pd.date_range("2024-01-01", periods=12, freq="MS"), "target": np.arange(3000, 4200, 100)}
    )
    summaries = []
    for name, frame in (("orders", orders), ("targets", targets)):
        info = {
            "columns": [
                {"name": c, "type": "datetime" if c in ("date", "month") else "number", "missing": 0}
                for c in frame.columns
            ]
        }
        summaries.append(
            dataset_summary(Dataset(name=name, file_name=f"{name}.csv", rows=len(frame), info=info), frame)
        )
    assert [s["grain"] for s in summaries] == ["daily", "monthly"]
    found = check_gates(GateInput("Is revenue_net above target by region?", summaries))
    assert found.topic == "quality.grain" and "daily, monthly" in found.question
    assert check_gates(GateInput("Does revenue_net differ by region?", summaries)) is None  # one table only


def test_the_gates_read_which_table_once(monkeypatch):
    """The table a question is about is read once per gate input, however many gates look at it (each
    read reads every table's columns and values against the question: ~0.1 s of the fixed cost)."""
    import app.agent.policy.gates as gates

    real, calls = gates.choose_dataset, []

    def counted(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(gates, "choose_dataset", counted)
    inp = GateInput("Does revenue_net differ by region?", [SHOP])
    assert check_gates(inp) is None
    assert inp.dataset["name"] == "shop"
    assert len(calls) == 1  # several gates look at the table


def test_scope_gate_asks_only_when_the_words_cannot_tell_which_table():
    other = {
        "name": "returns",
        "file": "returns.csv",
        "rows": 50,
        "columns": cols(("refund", "number", 0), ("region", "category", 0)),
    }
    new = [{"name": "returns", "file": "returns.csv"}]
    # the words pick the table: revenue_net and region are both in shop, only region in returns
    assert check_gates(GateInput("Does revenue_net differ by region?", [SHOP, other], new_files=new)) is None
    # no column of any table is named: ask, with the tables as the options
    found = check_gates(GateInput("Give me an overview", [SHOP, other], new_files=new))
    assert found.topic.startswith("scope.") and [o["label"] for o in found.options] == ["shop", "returns"]
    # answered: never asked again, and the answer is the table the other gates look at
    answered = {found.topic: "returns"}
    assert GateInput("Give me an overview", [SHOP, other], answered=answered).dataset["name"] == "returns"
    assert check_gates(GateInput("Give me an overview", [SHOP, other], answered=answered)) is None


def test_scope_gate_asks_when_two_tables_fit_equally():
    stores = {
        "name": "stores_2023",
        "file": "stores_2023.xlsx",
        "rows": 40,
        "columns": cols(("region", "category", 0), ("revenue_net", "number", 0)),
    }
    found = check_gates(GateInput("Does revenue_net differ by region?", [SHOP, stores]))
    assert found.topic.startswith("scope.") and [o["label"] for o in found.options] == ["shop", "stores_2023"]
    assert "revenue_net" in found.options[0]["description"]
    # a table and the copies derived from it (shop_online, shop_summary) are not a tie: the original is used
    derived = {**SHOP, "name": "shop_online"}
    assert check_gates(GateInput("Does revenue_net differ by region?", [SHOP, derived])) is None


def test_no_gate_for_chat_or_answered_topics():
    assert gate("how is revenue doing?", intent="chat") is None
    assert gate("how is revenue doing?", answered={"metric": "gmv"}) is None


# --- the harness pauses, stores, resumes ------------------------------------------------------
@pytest.fixture
def shop(tmp_path):
    path = tmp_path / "shop.csv"
    shop_frame().to_csv(path, index=False)
    return path


def test_gate_pauses_the_builtin_and_the_answer_is_used(tmp_path, shop):
    settings, db, service, ws = setup(tmp_path, shop)
    run_id = start_run(service, ws, "how is revenue doing?")
    service.execute(run_id)
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "waiting" and run.state["waiting"]["call_id"] == "gate-metric"
        assert not s.scalars(
            select(ToolCall).where(ToolCall.run_id == run_id, ToolCall.tool != "ask_user_question")
        ).all()
        question = s.scalars(select(Question).where(Question.run_id == run_id)).one()
        assert question.topic == "metric" and question.tool_call_id == "gate-metric"
        assert "question" in [e.kind for e in s.scalars(select(Event).where(Event.run_id == run_id))]
        answer_question(s, question, "2")  # option numbers become labels
        assert question.answer == "revenue_net"
    service.execute(run_id)
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "done" and "revenue_net" in run.answer
        tools = {c.tool: c.arguments for c in s.scalars(select(ToolCall).where(ToolCall.run_id == run_id))}
        assert tools["describe_columns"]["columns"] == ["revenue_net"]
        result = s.scalars(select(Message).where(Message.run_id == run_id, Message.tool_call_id == "gate-metric")).one()
        assert result.content.startswith("[answer]\nrevenue_net")
    # a later turn of the workspace: never asked again, the definition is injected and reused
    again = start_run(service, ws, "Is revenue higher in the East?")
    service.execute(again)
    with db.session() as s:
        assert s.get(Run, again).status == "done"
        assert s.scalars(select(Question).where(Question.run_id == again)).all() == []
        assert "revenue_net" in s.get(Run, again).answer


def test_model_question_pauses_then_resumes_with_the_answer_as_tool_result(tmp_path, shop):
    ask = call(
        "ask_user_question",
        "q1",
        question="Which regions matter?",
        kind="multi",
        reason="scope",
        options=[
            {"label": "East", "description": "eastern stores"},
            {"label": "West", "description": "west"},
            {"label": "North", "description": "north"},
        ],
    )
    model = ScriptedModel(
        [ModelReply(None, [ask, call("describe_columns", "c1", columns=["gmv"])]), ModelReply("Done: East and West.")]
    )
    settings, db, service, ws = setup(tmp_path, shop, lambda *_: model)
    run_id = start_run(service, ws, "Does gmv differ by region?")
    service.execute(run_id)
    with db.session() as s:
        assert s.get(Run, run_id).status == "waiting"
        held = s.get(ToolCall, (run_id, "c1"))
        assert not held.ok and held.error["error"] == "waiting_for_user"  # analysis held back
        question = s.scalars(select(Question).where(Question.run_id == run_id)).one()
        assert question.kind == "multi" and question.tool_call_id == "q1"
        answer_question(s, question, ["East", "west"])
        assert question.answer == ["East", "West"]
    service.execute(run_id)
    last = model.requests[-1]["messages"]
    answer = next(m for m in last if m.get("tool_call_id") == "q1")
    assert answer["content"].startswith("[answer]\nEast, West")
    assert confirmed_definitions(last)[question.topic] == "East, West"  # the user tier, in the system prompt
    assert '<context source="user-confirmed" tier="user">' in last[0]["content"]
    with db.session() as s:
        assert s.get(Run, run_id).status == "done"


def test_a_question_asked_through_call_tool_resumes_with_the_answer_as_its_result(tmp_path, shop):
    """The lean tools array lists ask_user_question only in call_tool's description, so a model asks
    through call_tool: on resume the answer must be that call's result, not the 'the run waits' note."""
    options = [{"label": "East", "description": "eastern stores"}, {"label": "West", "description": "west"}]
    arguments = {"name": "ask_user_question", "arguments": {"question": "Which region?", "options": options}}
    ask = ToolCallRequest("q1", "call_tool", arguments, json.dumps(arguments))
    model = ScriptedModel([ModelReply(None, [ask]), ModelReply("Done: West.")])
    settings, db, service, ws = setup(tmp_path, shop, lambda *_: model)
    run_id = start_run(service, ws, "Does gmv differ by region?")
    service.execute(run_id)
    with db.session() as s:
        assert s.get(Run, run_id).status == "waiting"
        question = s.scalars(select(Question).where(Question.run_id == run_id)).one()
        assert question.tool_call_id == "q1"
        answer_question(s, question, "West")
    service.execute(run_id)
    results = [m for m in model.requests[-1]["messages"] if m.get("tool_call_id") == "q1"]
    assert len(results) == 1 and results[0]["content"].startswith("[answer]\nWest")
    with db.session() as s:
        assert s.get(Run, run_id).status == "done"


def test_ask_user_question_validates_and_never_asks_twice(tmp_path, shop):
    bad = call(
        "ask_user_question", "b1", question="Which?", kind="single", options=[{"label": "only one", "description": "x"}]
    )
    nolabel = call(
        "ask_user_question",
        "b2",
        question="Which?",
        kind="single",
        options=[{"label": " ", "description": "x"}, {"label": "b", "description": "y"}],
    )
    first = call("ask_user_question", "a1", question="Which currency?", kind="text", topic="currency")
    model = ScriptedModel([ModelReply(None, [bad, nolabel]), ModelReply(None, [first]), ModelReply("ok")])
    settings, db, service, ws = setup(tmp_path, shop, lambda *_: model)
    run_id = start_run(service, ws, "Does gmv differ by region?")
    service.execute(run_id)
    with db.session() as s:
        assert s.get(ToolCall, (run_id, "b1")).error["error"] == "invalid_question"
        assert "label" in s.get(ToolCall, (run_id, "b2")).error["message"]
        answer_question(s, s.scalars(select(Question).where(Question.run_id == run_id)).one(), "EUR")
    service.execute(run_id)
    model.replies = [
        ModelReply(
            None, [call("ask_user_question", "a2", question="What currency is it?", kind="text", topic="currency")]
        ),
        ModelReply("ok"),
    ]
    second = start_run(service, ws, "Does gmv differ by region in EUR?")
    service.execute(second)
    with db.session() as s:
        assert s.get(Run, second).status == "done"
        assert s.scalars(select(Question).where(Question.run_id == second)).all() == []
        assert "EUR" in s.get(ToolCall, (second, "a2")).result_text


def test_options_written_as_plain_strings_are_their_labels(tmp_path, shop):
    """A model that writes options as plain strings (["West", "East"]) is not refused a round for it: each string is
    an option's label (a description is asked for in the tool's text, not required)."""
    asked = call("ask_user_question", "p1", question="Which region?", kind="single", options=["West", "East"])
    model = ScriptedModel([ModelReply(None, [asked]), ModelReply("ok")])
    settings, db, service, ws = setup(tmp_path, shop, lambda *_: model)
    run_id = start_run(service, ws, "Does gmv differ by region?")
    service.execute(run_id)
    with db.session() as s:
        question = s.scalars(select(Question).where(Question.run_id == run_id)).one()
        assert [o["label"] for o in question.options] == ["West", "East"]
        assert s.get(Run, run_id).status == "waiting"


def test_normalise_answer():
    q = Question(
        kind="single",
        question="?",
        options=[{"label": "revenue", "description": ""}, {"label": "gmv", "description": ""}],
    )
    assert normalise_answer(q, "2") == "gmv" and normalise_answer(q, "GMV") == "gmv"
    assert normalise_answer(q, "something else") == "something else"
    q.kind = "multi"
    assert normalise_answer(q, "1, gmv") == ["revenue", "gmv"]


# --- the page ---------------------------------------------------------------------------------
def ask_about_the_shop(client, tmp_path) -> str:
    """Upload the shop table and ask a question that needs the metric gate; the run's id."""
    path = tmp_path / "shop.csv"
    shop_frame().to_csv(path, index=False)
    ws = client.post("/api/workspaces", json={"name": "clarify"}).json()["id"]
    with path.open("rb") as fh:
        assert (
            client.post(f"/api/workspaces/{ws}/files", files={"file": ("shop.csv", fh, "text/csv")}).status_code == 201
        )
    return client.post(f"/api/workspaces/{ws}/messages", json={"text": "how is revenue doing?"}).json()["run_id"]


def test_page_shows_the_form_and_the_answer_resumes_the_run(client, tmp_path):
    run_id = ask_about_the_shop(client, tmp_path)
    body = wait_for_run(client, run_id, ("waiting",))
    assert body["question"]["kind"] == "single" and len(body["question"]["options"]) == 3
    page = client.get(f"/runs/{run_id}?partial=1", headers={"X-Requested-With": "fetch"}).text
    assert f'/runs/{run_id}/answer"' in page and page.count('type="radio"') == 3
    assert "gross merchandise value" in page
    posted = client.post(
        f"/runs/{run_id}/answer", data={"question_id": body["question"]["id"], "answer": "gmv"}, follow_redirects=False
    )
    assert posted.status_code == 303 and f"run={run_id}" in posted.headers["location"]
    done = wait_for_run(client, run_id, ("done", "failed"))
    assert done["status"] == "done" and done["question"] is None and "gmv" in done["answer"]


def test_stopping_a_run_that_waits_for_an_answer_ends_it_at_once(client, tmp_path):
    run_id = ask_about_the_shop(client, tmp_path)
    question = wait_for_run(client, run_id, ("waiting",))["question"]
    stopped = client.post(f"/api/runs/{run_id}/interrupt")
    assert stopped.status_code == 202 and stopped.json()["status"] == "interrupted"
    body = client.get(f"/api/runs/{run_id}").json()
    assert body["status"] == "interrupted" and "interrupted" in body["answer"]
    events = [line for line in client.get(f"/api/runs/{run_id}/events").text.splitlines() if line.startswith("event:")]
    assert events[-1] == "event: run_finished"
    # an answer given afterwards is kept as a definition but does not restart the stopped run
    late = client.post(f"/api/runs/{run_id}/answers", json={"question_id": question["id"], "answer": "gmv"})
    assert late.status_code == 202 and late.json()["status"] == "accepted"
    assert client.get(f"/api/runs/{run_id}").json()["status"] == "interrupted"
    assert client.post(f"/api/runs/{run_id}/interrupt").json()["status"] == "interrupted"


# --- the command line -------------------------------------------------------------------------
def test_cli_exits_3_with_questions_json_and_resumes_with_answer(tmp_path, verity_here):
    """`verity analyze` in this process (conftest.verity_here): the exit codes and files are the point."""
    book = tmp_path / "shop.xlsx"
    shop_frame(80).to_excel(book, index=False)
    out = tmp_path / "report"
    done = verity_here("analyze", book, "--question", "how is revenue doing?", "--out", out)
    assert done.returncode == 3, done.stderr
    questions = json.loads((out / "questions.json").read_text())
    assert questions[0]["id"] == "metric" and questions[0]["kind"] == "single"
    assert {o["label"] for o in questions[0]["options"]} == {"revenue", "revenue_net", "gmv"}
    assert all(set(o) == {"label", "description"} for o in questions[0]["options"])
    assert not (out / "report.json").exists()
    again = verity_here(
        "analyze",
        book,
        "--question",
        "how is revenue doing?",
        "--out",
        out,
        "--answer",
        "metric=revenue_net",
    )
    assert again.returncode == 0, again.stderr
    report = json.loads((out / "report.json").read_text())
    assert "revenue_net" in report["answer"] and report["evidence"]
    assert not (out / "questions.json").exists()


def test_cli_prompts_in_a_terminal(tmp_path, monkeypatch):
    from app.cli_questions import settle
    from tests.factories import setup as make

    path = tmp_path / "shop.csv"
    shop_frame().to_csv(path, index=False)
    settings, db, service, ws = make(tmp_path, path)
    run_id = start_run(service, ws, "how is revenue doing?")
    asked = []
    code = settle(service, run_id, {}, True, tmp_path / "out", read=lambda prompt: asked.append(prompt) or "3")
    assert code is None and asked
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "done" and "gmv" in run.answer


def test_retail_sample_needs_no_question(tmp_path):
    settings, db, service, ws = setup(tmp_path, SAMPLES / "retail_sales.xlsx")
    run_id = start_run(service, ws, "Does revenue differ by region?")
    service.execute(run_id)
    with db.session() as s:
        assert s.get(Run, run_id).status == "done"
        assert s.scalars(select(Question)).all() == []


def test_levels_and_grain_are_counted_once_per_dataset_version(tmp_path):
    """dataset_summary keeps what it counted in the dataset's info: a later turn needs no frame."""
    from app.db.models import Dataset
    from app.workspaces import dataset_summary

    frame = shop_frame()
    info = {
        "columns": [
            {"name": c, "type": t, "missing": 0, "pii": None}
            for c, t in (("date", "datetime"), ("region", "category"), ("revenue", "number"))
        ]
    }
    dataset = Dataset(name="shop", file_name="shop.csv", rows=len(frame), info=info)
    first = dataset_summary(dataset, frame)
    assert first["grain"] == "daily" and first["columns"][1]["levels"] == 3
    assert dataset.info["grain"] == "daily" and dataset.info["columns"][1]["levels"] == 3
    assert "levels" not in dataset.info["columns"][2]  # numbers are not counted
    assert dataset_summary(dataset) == first  # no frame: from the info
    frame.loc[:, "region"] = "changed"  # the cache is what is used, not the frame
    assert dataset_summary(dataset, frame)["columns"][1]["levels"] == 3


def test_an_answer_given_under_last_runs_id_settles_the_same_question_asked_in_other_words(tmp_path):
    """`--answer q.1a2b3c4d=gmv` from a run whose model asked "Which column is revenue?": on the re-run the model asks
    "Which number should I analyse?" (another topic, a hash of other words) with the same options; the one unused
    answer that fits its options settles it, and the run finishes without exit 3."""
    from app.cli_questions import settle
    from tests.factories import setup as make

    path = tmp_path / "shop.csv"
    shop_frame().to_csv(path, index=False)
    options = [{"label": "revenue", "description": "net"}, {"label": "gmv", "description": "gross"}]
    asked = call("ask_user_question", "q1", question="Which number should I analyse?", kind="single", options=options)
    model = ScriptedModel([ModelReply(None, [asked]), ModelReply("Analysed gmv.")])
    settings, db, service, ws = make(tmp_path, path, lambda *_: model)
    run_id = start_run(service, ws, "how is revenue doing?")
    # the harness's own gate (topic "metric", the same on every run) takes its answer by its id only
    code = settle(service, run_id, {"metric": ["revenue"], "q.1a2b3c4d": ["gmv"]}, False, tmp_path / "out")
    assert code is None
    with db.session() as s:
        answers = {q.topic: q.answer for q in s.scalars(select(Question).where(Question.run_id == run_id))}
        assert answers == {"metric": "revenue", "q.599ec9d5": "gmv"} and s.get(Run, run_id).status == "done"
