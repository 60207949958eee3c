"""Issue 23 point 2: with a model configured, the model reads the question. The rule reading is one
short hint line (the columns and values the words match, no list of words that matched nothing, no
nudge to ask), and the rule gates do not ask before the model's first request — except the metric
gate over near-identical columns. The matching finds a second name in brackets and a plain word for
a name carrying its unit, and not a column word inside a longer word for something else."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.agent.context.question_reading import question_reading
from app.agent.model.interface import ModelReply
from app.agent.policy.gates import GateInput, check_gates
from app.db.models import Question, Run
from app.understanding.roles import column_mentions
from app.understanding.words import SYNONYMS
from tests.factories import setup, start_run
from tests.fakes import ScriptedModel, call
from tests.test_clarify import SHOP, shop_frame


@pytest.fixture
def shop(tmp_path):
    """The shop table of test_clarify (revenue, revenue_net and gmv: near-identical metrics) as a file."""
    path = tmp_path / "shop.csv"
    shop_frame().to_csv(path, index=False)
    return path


def dataset(name: str, *columns: tuple[str, str]) -> dict:
    return {"name": name, "rows": 100, "columns": [{"name": c, "type": t} for c, t in columns]}


HAPPINESS = dataset(
    "happiness",
    ("Country", "category"),
    ("Happiness Score", "number"),
    ("Economy (GDP per Capita)", "number"),
    ("Health (Life Expectancy)", "number"),
    ("Population (thousands)", "number"),
    ("Price (USD)", "number"),
)
CLINIC = dataset("clinic", ("Department", "category"), ("Wait time (min)", "number"), ("Satisfaction", "integer"))


def named(question: str, data: dict) -> set[str]:
    return {m.name for m in column_mentions(question, data["columns"], SYNONYMS)}


def content_lines(block: str) -> list[str]:
    """The hint's own lines."""
    return [line for line in block.splitlines() if line.strip()]


# --- the hint -----------------------------------------------------------------------------------------
def test_the_hint_is_one_line_of_matches_without_unmatched_words_or_a_nudge_to_ask():
    block = question_reading(
        "Calculate the mean wait using python's built in functions and assess it with a shapiro wilk test", [CLINIC]
    )
    (line,) = content_lines(block)
    assert "Wait time (min)" in line
    for said in ("calculate", "assess", "shapiro", "python", "match no column", "ask"):
        assert said not in line.lower(), line


def test_words_naming_nothing_give_no_hint_and_no_question_to_ask():
    store = dataset("shop", ("Revenue", "number"))
    survey = dataset("survey", ("Overall Satisfaction", "number"), ("Team", "category"))
    assert question_reading("Does blood pressure differ by age?", [survey, store]) == ""
    (line,) = content_lines(question_reading("Does blood pressure differ by team?", [survey, store]))
    assert "survey: Team" in line and "blood pressure" not in line and "ask" not in line.lower()


def test_several_datasets_each_say_what_matched_on_one_line():
    plant = dataset("plantgrowth", ("weight", "number"), ("group", "category"))
    (line,) = content_lines(question_reading("Does the economy explain the weight?", [HAPPINESS, plant]))
    assert "happiness: Economy (GDP per Capita)" in line and "plantgrowth: weight" in line


# --- the matching -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "question, column",
    [
        ("Is GDP per capita related to the happiness score?", "Economy (GDP per Capita)"),
        ("Does the economy explain happiness?", "Economy (GDP per Capita)"),
        ("What is the average life expectancy?", "Health (Life Expectancy)"),
    ],
)
def test_a_second_name_in_brackets_names_its_column(question, column):
    assert column in named(question, HAPPINESS)


def test_a_unit_or_scale_in_brackets_is_no_name():
    said = named("Show the thousands of dollars in USD", HAPPINESS)
    assert not said & {"Population (thousands)", "Price (USD)"}


@pytest.mark.parametrize("question", ["How long do patients wait by department?", "What is the mean wait?"])
def test_a_plain_word_names_a_column_named_with_its_unit(question):
    assert "Wait time (min)" in named(question, CLINIC)


def test_the_quantity_before_a_unit_is_read_only_when_the_name_carries_the_unit():
    """ "Order time" with no unit may be a timestamp: "order" alone does not name it."""
    assert named("How many orders were there?", dataset("shop", ("Order time", "datetime"))) == set()


def test_a_column_word_inside_a_longer_word_for_something_else_names_nothing():
    """失业人口 (the unemployed) names no Population column, even when the table has no unemployed column.
    (人口 reached the English header Population only by a synonym fitted to eval datasets, gone in
    issue 24: 人口 alone now names it no more than 失业人口 does, and the analyst asks.)"""
    data = dataset("labour", ("Region", "category"), ("Population (thousands)", "number"))
    assert named("哪个地区的失业人口最多？", data) == {"Region"}
    assert named("哪个地区的人口最多？", data) == {"Region"}


# --- the gates with a model ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "question",
    [
        "Analyse revenue_net",  # goal gate
        "Forecast revenue_net for next month",  # method gate
        "Is revenue_net up compared to last month?",  # window gate
        "Is there a significant difference?",  # the metric gate's guess from an inferential goal
    ],
)
def test_with_a_model_only_the_metric_gate_runs_before_it_reads_the_question(question):
    assert check_gates(GateInput(question, [SHOP])) is not None  # the built-in analyst asks
    assert check_gates(GateInput(question, [SHOP], model_reads=True)) is None


def test_the_metric_gate_among_near_identical_columns_still_asks_with_a_model():
    found = check_gates(GateInput("how is revenue doing?", [SHOP], model_reads=True))
    assert found is not None and found.topic == "metric"


def test_a_question_the_rule_gates_would_ask_about_goes_to_the_model_first(tmp_path, shop):
    model = ScriptedModel(
        [ModelReply(None, [call("describe_columns", "c1", columns=["revenue_net"])]), ModelReply("Forecast done.")]
    )
    settings, db, service, ws = setup(tmp_path, shop, lambda *_: model)
    run_id = start_run(service, ws, "Forecast revenue_net for next month")
    service.execute(run_id)
    assert model.requests, "the model was never asked"
    with db.session() as s:
        assert s.get(Run, run_id).status == "done"
        assert s.scalars(select(Question).where(Question.run_id == run_id)).all() == []


def test_with_a_model_the_metric_gate_asks_before_the_first_request(tmp_path, shop):
    model = ScriptedModel([ModelReply("never used")])
    settings, db, service, ws = setup(tmp_path, shop, lambda *_: model)
    run_id = start_run(service, ws, "how is revenue doing?")
    service.execute(run_id)
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "waiting" and run.state["waiting"]["call_id"] == "gate-metric"
    assert not [r for r in model.requests if r["tools"]]  # no analysis request went out before the question


def test_two_initials_are_no_hint_but_the_short_name_itself_is():
    """The words "Shapiro-Wilk test" hold the initials of `wt`: a loose match of a two-letter name tells a
    model nothing; the name itself still counts."""
    mtcars = {"name": "mtcars", "columns": [{"name": c, "type": "number"} for c in ("mpg", "wt", "hp")]}
    (line,) = content_lines(question_reading("Perform a Shapiro-Wilk test on mpg and report the p-value.", [mtcars]))
    assert line.endswith(": mpg."), line
    assert question_reading("Is wt related to mpg?", [mtcars]).endswith(": wt, mpg.")
