"""Claim verification after tool rounds, the hypothesis set and synthesis policy, the final-answer check."""

import pytest
from sqlalchemy import select

from app.agent.model.interface import ModelReply
from app.agent.policy.answer_check import strip_recommendations
from app.agent.policy.claim_wording import causal_claims, named_tests, significance_claims
from app.db.models import Event, Report, Run
from app.numbers import unverified_numbers
from app.web.run_panel import answer_html
from tests.factories import SAMPLES, reference, setup, start_run
from tests.fakes import ScriptedModel, call

PLANT = "rdatasets/PlantGrowth.csv"


def run_with(tmp_path, replies, question="Does weight differ by group?"):
    model = ScriptedModel(replies)
    settings, db, service, ws = setup(tmp_path, reference(PLANT), lambda *_: model)
    run_id = start_run(service, ws, question)
    service.execute(run_id)
    return db, run_id, model


def verification_events(db, run_id):
    with db.session() as s:
        return [
            e.data
            for e in s.scalars(
                select(Event).where(Event.run_id == run_id, Event.kind == "verification").order_by(Event.id)
            )
        ]


def harness_blocks(model):
    return [
        m["content"]
        for r in model.requests
        for m in r["messages"]
        if m["role"] == "user" and "harness-verification" in (m.get("content") or "")
    ]


def claim_result(db, run_id):
    with db.session() as s:
        run = s.get(Run, run_id)
        return run.state["verification"]["results"], run.state["synthesis_policy"], run.state["hypotheses"], run.answer


def test_a_wrong_number_is_caught_and_recommendations_are_removed(tmp_path):
    db, run_id, model = run_with(
        tmp_path,
        [
            ModelReply(
                None, [call("compare_groups", "c1", value_column="weight", group_column="group", method="anova")]
            ),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "c2",
                        claim="Weight differs by group (F = 5.9)",  # its only number is wrong: the claim fails
                        method="one-way ANOVA",
                        tool_call_ids=["c1"],
                        sample_size=30,
                    )
                ],
            ),
            ModelReply(
                "Weight differs between groups (F = 4.85, p = 0.016).\n\n### Recommendations\n\n"
                "- Switch every plant to treatment 2.\n\n### Caveats\n\n- Small groups."
            ),
        ],
    )
    results, policy, hypotheses, answer = claim_result(db, run_id)
    assert results[0]["status"] == "failed" and results[0]["issues"][0]["kind"] == "number"
    assert "5.9" in results[0]["issues"][0]["detail"]
    assert policy["verification"] == "failed" and policy["recommendations"] == "suppressed"
    assert policy["wording"] == "hedged"
    assert hypotheses["primary"]["status"] == "inconclusive"
    # injected into the next round as a harness block
    blocks = harness_blocks(model)
    assert blocks and "FAILED" in blocks[0] and "5.9" in blocks[0] and "recommendations suppressed" in blocks[0]
    assert model.requests[2]["messages"][-1]["content"] == blocks[0]
    # the final answer: a visible limitation, no recommendations, the caveats kept
    assert "Limitation" in answer and "Switch every plant" not in answer and "### Recommendations" not in answer
    assert "Small groups" in answer
    events = verification_events(db, run_id)
    assert events[0]["status"] == "failed" and events[-1]["final"] is True
    with db.session() as s:
        report = s.scalars(select(Report).where(Report.run_id == run_id)).one().content
    assert report["verification"]["status"] == "failed" and report["evidence"][0]["verification"]["status"] == "failed"
    assert any("failed verification" in w for w in report["warnings"])


def test_correct_numbers_pass_and_the_hypothesis_is_supported(tmp_path):
    db, run_id, model = run_with(
        tmp_path,
        [
            ModelReply(
                None, [call("compare_groups", "c1", value_column="weight", group_column="group", method="anova")]
            ),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "c2",
                        claim="Weight differs by group (F = 4.85, p = 0.016); trt2 averages 5.53, trt1 4.66",
                        method="one-way ANOVA",
                        tool_call_ids=["c1"],
                        sample_size=30,
                        limitations=["small groups"],
                        confidence="high",
                    )
                ],
            ),
            ModelReply(
                "Weight differs between groups: F = 4.846, p = 0.016.\n\n### Recommendations\n\n- Look at trt2."
            ),
        ],
    )
    results, policy, hypotheses, answer = claim_result(db, run_id)
    assert results[0]["status"] == "passed", results[0]["issues"]
    assert hypotheses["primary"]["status"] == "supported" and hypotheses["baseline"]["status"] == "unsupported"
    assert policy["verification"] == "passed"
    assert "Limitation" not in answer and "Look at trt2" in answer


def test_a_causal_claim_from_a_correlation_is_caught(tmp_path):
    db, run_id, _ = run_with(
        tmp_path,
        [
            ModelReply(None, [call("correlation_analysis", "c1", columns=["weight", "rownames"])]),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "c2",
                        claim="A higher row number causes heavier plants (r = 0.291)",
                        method="Pearson correlation",
                        tool_call_ids=["c1"],
                        sample_size=30,
                    )
                ],
            ),
            ModelReply("Row number drives weight."),
        ],
        question="Is weight related to rownames?",
    )
    results, policy, _, answer = claim_result(db, run_id)
    kinds = [i["kind"] for i in results[0]["issues"]]
    assert "causal" in kinds and "number" not in kinds
    assert policy["verification"] == "failed" and "Limitation" in answer


def test_a_misnamed_test_is_caught(tmp_path):
    db, run_id, model = run_with(
        tmp_path,
        [
            ModelReply(
                None, [call("compare_groups", "c1", value_column="weight", group_column="group", method="kruskal")]
            ),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "c2",
                        claim="An ANOVA shows weight differs by group (p = 0.018)",
                        method="one-way ANOVA",
                        tool_call_ids=["c1"],
                        sample_size=30,
                    )
                ],
            ),
            ModelReply("Weight differs by group (p = 0.018)."),
        ],
    )
    results, *_ = claim_result(db, run_id)
    issues = [i for i in results[0]["issues"] if i["kind"] == "test_name"]
    assert issues and "ANOVA" in issues[0]["detail"] and "Kruskal" in issues[0]["detail"]
    assert "Kruskal" in harness_blocks(model)[0]


def test_significant_with_a_large_p_value_is_caught(tmp_path):
    db, run_id, _ = run_with(
        tmp_path,
        [
            ModelReply(None, [call("correlation_analysis", "c1", columns=["weight", "rownames"])]),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "c2",
                        claim="Weight is significantly correlated with row number (r = 0.291)",
                        method="Pearson correlation",
                        tool_call_ids=["c1"],
                        sample_size=30,
                    )
                ],
            ),
            ModelReply("Weight rises with row number."),
        ],
        question="Is weight related to rownames?",
    )
    results, policy, hypotheses, _ = claim_result(db, run_id)
    assert [i["kind"] for i in results[0]["issues"]] == ["significance"]
    assert "0.119" in results[0]["issues"][0]["detail"]


def test_negated_and_hedged_wording_passes(tmp_path):
    db, run_id, _ = run_with(
        tmp_path,
        [
            ModelReply(None, [call("correlation_analysis", "c1", columns=["weight", "rownames"])]),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "c2",
                        claim="Weight is not significantly correlated with row number (r = 0.291, "
                        "p = 0.12); this does not mean that row number causes weight",
                        method="Pearson correlation",
                        tool_call_ids=["c1"],
                        sample_size=30,
                        limitations=["weak"],
                    ),
                    call(
                        "record_evidence",
                        "c3",
                        claim="体重与行号没有显著相关（r = 0.29）；相关不代表行号导致体重变化。",
                        method="皮尔逊相关",
                        tool_call_ids=["c1"],
                        sample_size=30,
                    ),
                ],
            ),
            ModelReply("No clear relationship (r = 0.29, p = 0.12)."),
        ],
        question="Is weight related to rownames?",
    )
    results, policy, hypotheses, answer = claim_result(db, run_id)
    assert [r["status"] for r in results] == ["passed", "passed"], [r["issues"] for r in results]
    assert hypotheses["primary"]["status"] == "unsupported" and hypotheses["baseline"]["status"] == "supported"
    assert policy["verification"] == "passed" and "Limitation" not in answer


def test_unverified_numbers_in_the_final_answer_are_listed_marked_and_limited(tmp_path):
    db, run_id, _ = run_with(
        tmp_path,
        [
            ModelReply(
                None, [call("compare_groups", "c1", value_column="weight", group_column="group", method="anova")]
            ),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "c2",
                        claim="Weight differs by group (F = 4.85, p = 0.016)",
                        method="one-way ANOVA",
                        tool_call_ids=["c1"],
                        sample_size=30,
                    )
                ],
            ),
            ModelReply(
                "Weight differs by group (F = 4.85); treatment 2 adds 37.5% to the yield.\n\n"
                "**Recommendations:**\n- Use treatment 2 everywhere: 37.5% more yield.\n- Keep weighing by group."
            ),
            # the answer check sends 37.5% back once (answer_recheck); the model keeps its answer
            ModelReply(
                "Weight differs by group (F = 4.85); treatment 2 adds 37.5% to the yield.\n\n"
                "**Recommendations:**\n- Use treatment 2 everywhere: 37.5% more yield.\n- Keep weighing by group."
            ),
        ],
    )
    with db.session() as s:
        report = s.scalars(select(Report).where(Report.run_id == run_id)).one().content
        run = s.get(Run, run_id)
        assert run.state["verification"]["final"]["unverified_numbers"] == ["37.5%"]
    assert report["unverified_numbers"] == ["37.5%"]
    # a failed number fails that number: only the recommendation that uses it goes
    assert "Limitation" in report["answer"] and "everywhere" not in report["answer"]
    assert "Keep weighing by group" in report["answer"]
    assert '<mark class="unverified"' in str(answer_html(report["answer"], report["unverified_numbers"], "x"))


def test_the_limitation_is_in_the_users_language(tmp_path):
    db, run_id, _ = run_with(
        tmp_path,
        [
            ModelReply(
                None, [call("compare_groups", "c1", value_column="weight", group_column="group", method="anova")]
            ),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "c2",
                        claim="不同组的体重有显著差异（F = 6.2）",
                        method="单因素方差分析",
                        tool_call_ids=["c1"],
                        sample_size=30,
                    )
                ],
            ),
            ModelReply("不同组的体重有显著差异（F = 4.85）。\n\n### 建议\n\n- 全部改用处理二。"),
        ],
        question="不同组的体重有差异吗？",
    )
    results, _, _, answer = claim_result(db, run_id)
    assert results[0]["status"] == "failed"
    assert "局限" in answer and "全部改用" not in answer


def test_the_builtin_analyst_passes_verification_on_the_sample(tmp_path):
    settings, db, service, ws = setup(tmp_path, SAMPLES / "retail_sales.xlsx")
    run_id = start_run(service, ws, "Does revenue differ by region?")
    service.execute(run_id)
    with db.session() as s:
        run = s.get(Run, run_id)
        report = s.scalars(select(Report).where(Report.run_id == run_id)).one().content
        assert run.status == "done"
        assert run.state["plan"]["question_type"] == "comparison" and run.state["plan"]["metrics"] == ["Revenue"]
    assert report["verification"]["status"] == "passed", report["evidence"]
    assert report["unverified_numbers"] == [] and report["analysis_plan"]["goal"]
    assert all(e["verification"]["status"] == "passed" for e in report["evidence"])


# --- the wording rules, in zh and en -------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, flagged",
    [
        ("Discounts cause higher revenue", True),
        ("Advertising drives sales", True),
        ("Sales rose because of the campaign", True),
        ("广告投入导致销售增长", True),
        ("折扣引起了退货率上升", True),
        ("Correlation is not causation: a third factor may drive both", False),
        ("This does not mean that ads cause sales", False),
        ("相关不代表广告导致销售增长", False),
        ("如此稳定的趋势很少是偶然造成的", False),
    ],
)
def test_causal_wording(text, flagged):
    assert bool(causal_claims(text)) is flagged


@pytest.mark.parametrize(
    "text, flagged",
    [
        ("The difference is significant", True),
        ("Revenue is statistically significantly higher in the East", True),
        ("不同地区的销售额差异显著", True),
        ("The difference is not significant", False),
        ("The difference is not statistically significant", False),
        ("There is no significant difference", False),
        ("The result is insignificant", False),
        ("a non-significant result", False),
        ("差异不显著", False),
        ("两组之间没有显著差异", False),
        ("at the 5% significance level", False),
    ],
)
def test_significance_wording(text, flagged):
    assert bool(significance_claims(text)) is flagged


def test_test_names():
    assert named_tests("A Mann-Whitney U test (instead of a t-test) was used") == ["Mann-Whitney U test"]
    assert named_tests("Welch's t-test") == ["t-test"] and named_tests("用t检验比较两组") == ["t-test"]
    assert named_tests("Kruskal-Wallis 检验") == ["Kruskal-Wallis test"] and named_tests("方差分析") == ["ANOVA"]


@pytest.mark.parametrize(
    "written, value",
    [
        ("1.2万", 12034.0),
        ("45%", 0.4512),
        ("12,345", 12345.2),
        ("3.4k", 3412.0),
        ("1.2 million", 1_204_000.0),
        ("2.5亿", 250_100_000.0),
        ("0.29", 0.2905),
        ("-3.5", -3.49),
    ],
)
def test_the_shared_number_matcher_tolerates_units(written, value):
    assert unverified_numbers(f"The value is {written}.", [], [value]) == []


def test_the_shared_number_matcher_reads_units_in_tool_text():
    assert unverified_numbers("Revenue is 1,200,000.", ["total revenue 1.2M"], []) == []
    assert unverified_numbers("Revenue is 1.3 million.", ["total revenue 1.2M"], []) == ["1.3 million"]


def test_strip_recommendations_keeps_the_rest():
    text = (
        "**Finding.**\n\n## Recommendations\n- do A\n- do B\n\n## Caveats\n- small n\n\n"
        "建议：扩大样本。\n- We recommend more data.\nLast line."
    )
    out, removed = strip_recommendations(text)
    assert removed and "do A" not in out and "small n" in out and "扩大样本" not in out
    assert "We recommend" not in out and "Last line." in out
