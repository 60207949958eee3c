"""Issue 23 point 4: the answer checker works with the model. Unbacked numbers go back to the model once
before the answer is final; correct restatements are accepted; a failed number fails that number, not
the claim; confidence is not lowered for a well-powered null or for periods built from many rows; the
hypotheses are worded for the kind of test. Expected values come from scipy/pandas directly."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
from scipy import stats
from sqlalchemy import select

from analysis_tools import ToolContext
from analysis_tools.stats_distribution import normality_test
from analysis_tools.timeseries import time_series_trend
from app.agent.model.interface import ModelReply
from app.agent.policy.answer_check import RECHECK_LIMIT
from app.agent.policy.claims import verify_evidence
from app.agent.policy.hypotheses import hypothesis_set, synthesis_policy
from app.agent.tools.evidence import downgrade_confidence
from app.db.models import Event, Evidence, Report, Run, ToolCall
from app.numbers import unverified_numbers
from tests.factories import reference, setup, start_run
from tests.fakes import ScriptedModel, call

PLANT = reference("rdatasets/PlantGrowth.csv")
IRIS = reference("rdatasets/iris.csv")
ANOVA = call("compare_groups", "c1", value_column="weight", group_column="group", method="anova")


def plant_f() -> float:
    """The one-way ANOVA F of PlantGrowth, from scipy."""
    frame = pd.read_csv(PLANT)
    return float(stats.f_oneway(*[g["weight"] for _, g in frame.groupby("group")]).statistic)


def run_with(tmp_path, replies, question="Does weight differ by group?"):
    model = ScriptedModel(replies)
    _settings, db, service, ws = setup(tmp_path, PLANT, lambda *_: model)
    run_id = start_run(service, ws, question)
    service.execute(run_id)
    with db.session() as s:
        run = s.get(Run, run_id)
        report = s.scalars(select(Report).where(Report.run_id == run_id)).one().content
        events = [
            e.data for e in s.scalars(select(Event).where(Event.run_id == run_id, Event.kind == "answer_recheck"))
        ]
        return run.answer, run.state, report, events, model


# --- 1. the model gets one turn with its unbacked numbers ------------------------------------------------
def test_unbacked_numbers_go_back_to_the_model_once_and_its_revision_is_the_answer(tmp_path):
    f = plant_f()
    wrong = f"The groups differ (F = {f + 0.05:.2f})."
    right = f"The groups differ (F = {f:.2f})."
    answer, state, report, events, model = run_with(
        tmp_path, [ModelReply(None, [ANOVA]), ModelReply(wrong), ModelReply(right)]
    )
    note = model.requests[2]["messages"][-1]
    assert note["role"] == "user" and f"{f + 0.05:.2f}" in note["content"] and len(note["content"]) <= RECHECK_LIMIT
    assert f"{f:.4g}" in note["content"]  # why: the nearest value the outputs show
    assert events == [{"numbers": [f"{f + 0.05:.2f}"], "note": note["content"]}]
    assert answer == right and report["unverified_numbers"] == []
    assert state["verification"]["final"]["unverified_numbers"] == []


def test_the_recheck_happens_once_and_what_is_still_unbacked_is_marked(tmp_path):
    f = plant_f()
    wrong = f"The groups differ (F = {f + 1:.2f})."
    answer, _state, report, events, model = run_with(
        tmp_path, [ModelReply(None, [ANOVA]), ModelReply(wrong), ModelReply(wrong), ModelReply("never asked")]
    )
    assert len(model.requests) == 3 and len(events) == 1
    assert f"{f + 1:.2f} ⚠" in answer and report["unverified_numbers"] == [f"{f + 1:.2f}"]


def test_no_recheck_when_every_number_is_backed(tmp_path):
    f = plant_f()
    _answer, _state, _report, events, model = run_with(
        tmp_path, [ModelReply(None, [ANOVA]), ModelReply(f"The groups differ (F = {f:.2f}).")]
    )
    assert events == [] and len(model.requests) == 2


# --- 2. restatements ------------------------------------------------------------------------------------
def test_r_squared_from_a_reported_r():
    frame = pd.read_csv(reference("rdatasets/mtcars.csv"))
    r = stats.pearsonr(frame["mpg"], frame["wt"]).statistic
    shown = [f"Pearson r = {r:.4f}"]
    assert unverified_numbers(f"r² = {r * r:.2f}: weight explains most of the variation.", shown, []) == []
    assert unverified_numbers(f"r² = {r * r + 0.05:.2f}.", shown, []) == [f"{r * r + 0.05:.2f}"]


def test_a_rounded_bound_from_a_count():
    assert unverified_numbers("We asked over 300 people.", ["n = 336"], []) == []
    assert unverified_numbers("We asked over 300 people.", ["n = 436"], []) == ["300"]  # not just any larger
    assert unverified_numbers("Fewer than 50 stores reported.", ["stores: 47"], []) == []


def test_a_slope_restated_in_seconds_from_minutes():
    minutes = stats.linregress(np.arange(10), 5 + 0.0125 * np.arange(10)).slope  # minutes per year
    shown = [f"slope = {minutes:.4f} minutes per year"]
    assert unverified_numbers(f"Waits grow by {minutes * 60:.2f} seconds a year.", shown, []) == []
    assert unverified_numbers(f"Waits grow by {minutes * 60 + 1:.2f} seconds a year.", shown, []) != []


def test_thousand_is_the_columns_unit_not_a_multiplier():
    mean = float(pd.Series([510.2, 514.9, 511.8]).mean())
    shown = [f"Population (thousands): mean {mean:.4f}"]
    assert unverified_numbers(f"The average is {mean:.0f} thousand people.", shown, []) == []
    assert unverified_numbers(f"The average is {mean:.0f} thousand people.", [f"Population: mean {mean:.4f}"], []) == [
        f"{mean:.0f} thousand"
    ]


def test_a_money_value_rounded_to_three_significant_figures():
    mean = float(np.mean([12_201.5, 12_488.3, 12_347.2]))
    shown = [f"Revenue mean {mean:.2f}"]
    rounded = f"{float(f'{mean:.3g}'):,.0f}"
    assert unverified_numbers(f"Revenue averages ${rounded} a month.", shown, []) == []
    assert unverified_numbers(f"Revenue averages {rounded} units a month.", shown, []) == [rounded]


def test_nineteen_times_out_of_twenty_is_the_95_percent_level():
    assert unverified_numbers("Intervals built this way hold the true mean 19 times out of 20.", ["mean 4.2"], []) == []
    assert unverified_numbers("19 stores out of 20 grew.", ["mean 4.2"], []) == ["19 stores out of 20"]


def test_bin_labels_from_printed_edges():
    values = pd.Series([4.45, 4.6, 4.9, 5.0, 5.3])
    printed = pd.cut(values, bins=[4.4, 4.9, 5.4]).value_counts().sort_index().to_string()
    assert "(4.4, 4.9]" in printed
    assert unverified_numbers("Most flowers fall in 4.5–4.9.", [printed], []) == []
    assert unverified_numbers("Most flowers fall in 4.6–4.9.", [printed], []) == ["4.6"]


def test_the_row_count_of_the_dataset_backs_a_claim():
    tool = ToolCall(id="c1", tool="describe_columns", arguments={}, result_text="mean 14.2", metrics={"mean": 14.2})
    item = Evidence(id="e1", claim="Over 100 years the mean is 14.2", method="describe", metrics={"mean": 14.2})
    assert verify_evidence(item, [tool])["status"] != "passed"  # not in the cited output
    assert verify_evidence(item, [tool], dataset_rows=[100])["status"] == "passed"


def partly_backed_claim():
    """Evidence whose F is in the ANOVA's output and whose "12.5% heavier" is in no output."""
    return call(
        "record_evidence",
        "e1",
        claim=f"Weight differs by group (F = {plant_f():.2f}, 12.5% heavier)",
        method="one-way ANOVA",
        tool_call_ids=["c1"],
        sample_size=30,
    )


# --- 3. a failed number fails that number --------------------------------------------------------------
def test_a_claim_with_one_wrong_number_is_partly_verified(tmp_path):
    f, claim = plant_f(), partly_backed_claim()
    _answer, state, _report, _events, _model = run_with(
        tmp_path, [ModelReply(None, [ANOVA]), ModelReply(None, [claim]), ModelReply(f"Weight differs (F = {f:.2f}).")]
    )
    result = state["verification"]["results"][0]
    assert result["status"] == "partly_verified"
    assert {n["number"]: n["status"] for n in result["numbers"]} == {f"{f:.2f}": "verified", "12.5%": "failed"}
    assert state["synthesis_policy"]["recommendations"] == "allowed"


def test_only_the_recommendation_that_uses_an_unbacked_number_is_removed(tmp_path):
    f = plant_f()
    text = (
        f"Weight differs by group (F = {f:.2f}).\n\n### Recommendations\n\n"
        "- Switch to treatment 2 for 37.5% more yield.\n- Keep weighing each group every month."
    )
    answer, state, _report, _events, _model = run_with(
        tmp_path, [ModelReply(None, [ANOVA]), ModelReply(text), ModelReply(text)]
    )
    assert "37.5%" not in answer.split("**Limitation")[0] and "Keep weighing each group" in answer
    assert state["verification"]["final"]["recommendations_removed"] is True


# --- 4. confidence --------------------------------------------------------------------------------------
def test_a_well_powered_null_keeps_high_confidence():
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 1, 100), rng.normal(0.02, 1, 100)
    p = float(stats.ttest_ind(a, b, equal_var=False).pvalue)
    assert p >= 0.05
    assert downgrade_confidence("high", 200, {"p_value": p}, ["observational"], "Welch t-test") == ("high", [])
    level, reasons = downgrade_confidence("high", 40, {"p_value": p}, ["observational"], "Welch t-test")
    assert level == "medium" and reasons == ["result not statistically significant"]


def test_a_monthly_trend_on_thousands_of_rows_is_not_a_small_sample():
    days = pd.date_range("2023-01-01", periods=366, freq="D")
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"date": np.repeat(days, 12), "sales": rng.normal(100, 10, 366 * 12)})
    assert len(frame) == 4392
    result = time_series_trend(frame, "date", "sales", freq="M", agg="mean", plot=False, ctx=ToolContext())
    months = int(result.metrics["n_periods"])
    assert months < 30
    calls = [SimpleNamespace(metrics=result.metrics)]
    level, reasons = downgrade_confidence("high", months, {}, ["seasonality"], "Mann-Kendall trend test", calls)
    assert "sample size below 30" not in reasons
    assert downgrade_confidence("high", months, {}, ["x"], "Mann-Kendall trend test")[1] == ["sample size below 30"]
    # nor is a null trend on them thin evidence (the policy's "small sample and null")
    p = stats.kendalltau(np.arange(months), frame.set_index("date")["sales"].resample("MS").mean()).pvalue
    assert p >= 0.05
    tool = ToolCall(id="c1", tool="time_series_trend", arguments={}, result_text=result.text, metrics=result.metrics)
    item = Evidence(id="e1", claim="Sales show no clear monthly trend", method="Mann-Kendall", sample_size=months)
    checked = verify_evidence(item, [tool])
    assert checked["status"] == "passed", checked["issues"]
    assert synthesis_policy([checked], {"primary": None})["evidence_thin"] is False


# --- 5. hypotheses by the kind of test ------------------------------------------------------------------
def test_a_normality_test_has_no_groups_in_its_hypotheses():
    frame = pd.read_csv(IRIS)
    result = normality_test(frame, "Sepal.Length", ctx=ToolContext())
    w = stats.shapiro(frame["Sepal.Length"]).statistic
    tool = ToolCall(id="c1", tool="normality_test", arguments={}, result_text=result.text, metrics=result.metrics)
    item = Evidence(id="e1", claim=f"Sepal length departs from normal (W = {w:.3f})", method="Shapiro-Wilk test")
    checked = verify_evidence(item, [tool])
    assert checked["status"] == "passed", checked["issues"]
    hypotheses = hypothesis_set([checked], None, "Does sepal length differ from a normal distribution?", "en")
    statements = " ".join(h["statement"] for h in hypotheses["all"][1:])
    assert hypotheses["all"] and "group" not in statements.lower()
    # a comparison of groups keeps the groups' wording
    compared = {**checked, "test_kind": None, "p_value": 0.01}
    assert "groups" in hypothesis_set([compared], None, "Does weight differ by group?", "en")["all"][1]["statement"]


def test_partly_verified_is_labelled_in_both_languages_on_the_panel_and_in_the_report(tmp_path):
    from fastapi.testclient import TestClient

    from app.main import create_app
    from app.reports.html_report import to_html
    from app.translations import CATALOG

    f, claim = plant_f(), partly_backed_claim()
    model = ScriptedModel([ModelReply(None, [ANOVA]), ModelReply(None, [claim]), ModelReply(f"F = {f:.2f}.")])
    settings, db, service, ws = setup(tmp_path, PLANT, lambda *_: model)
    run_id = start_run(service, ws, "Does weight differ by group?")
    service.execute(run_id)
    with db.session() as s:
        report = s.scalars(select(Report).where(Report.run_id == run_id)).one().content
    assert report["evidence"][0]["verification"]["status"] == "partly_verified"
    assert CATALOG["report.check_partly_verified"]["en"] in to_html(report)
    with TestClient(create_app(settings)) as client:
        for lang in ("en", "zh"):
            page = client.get(f"/runs/{run_id}?partial=1&lang={lang}").text
            assert f"data-check>{CATALOG['check_partly_verified'][lang]}</span>" in page
            assert CATALOG["checks_partly_verified"][lang] in page


def test_the_word_files_say_why_and_their_patterns_compile():
    import re

    from app.agent.policy.hypotheses import test_kinds
    from app.numbers import number_words

    for name, section in number_words().items():
        assert len(str(section.get("why", "")).split()) >= 2, name
        for key, value in section.items():
            pattern = value.get("pattern") if isinstance(value, dict) else value
            if key != "why" and isinstance(pattern, str):
                re.compile(pattern)
    for kind in test_kinds():
        assert len(kind["why"].split()) >= 2 and re.compile(kind["pattern"])
        assert kind["alternative"]["en"] and kind["alternative"]["zh"] and kind["baseline"]["zh"]
