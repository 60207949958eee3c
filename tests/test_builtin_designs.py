"""Designs the built-in analyst reads from the data and the question (issue 14): two columns measured
on each row (a wide paired design), data tasks done as data operations, averages per row against
totals, and the direction of a relationship in plain words.

Plans are read from small frames through the real profile; the end-to-end runs go through the
harness. Expected numbers are computed here with pandas/scipy, never read from Verity's output.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis_tools.common import fmt_num
from analysis_tools.core import profile_dataset
from app.agent.policy.intent import decide
from app.analyst.plan import plan_analysis
from app.understanding.profile_reading import read_profile
from app.understanding.wide_pairs import marked_pairs, same_scale
from app.workspaces import dataset_summary, describe_columns_of


def seen(frame: pd.DataFrame, name: str = "data") -> dict:
    """The dataset summary as the analyst reads it after its profile_dataset call."""
    dataset = SimpleNamespace(
        name=name, rows=len(frame), file_name=f"{name}.csv", sheet=None, info={"columns": describe_columns_of(frame)}
    )
    return read_profile(dataset_summary(dataset, frame), profile_dataset(frame).record().profile)


def task_steps(question: str, frame: pd.DataFrame) -> list[tuple[str, dict]]:
    zh = any("\u4e00" <= ch <= "\u9fff" for ch in question)
    return [(s.tool, s.arguments) for s in plan_analysis(question, seen(frame), zh).steps if s.task]


RNG = np.random.default_rng(7)
N = 30


def pressure() -> pd.DataFrame:
    before = RNG.normal(150, 12, N).round(0)
    return pd.DataFrame(
        {
            "Sex": RNG.choice(["F", "M"], N),
            "Age": RNG.integers(30, 80, N),
            "Systolic Before": before,
            "Systolic After": (before - RNG.normal(8, 6, N)).round(0),
        }
    )


def pressure_zh() -> pd.DataFrame:
    frame = pressure()
    return pd.DataFrame(
        {
            "性别": frame["Sex"].map({"F": "女", "M": "男"}),
            "年龄": frame["Age"],
            "治疗前血压": frame["Systolic Before"],
            "治疗后血压": frame["Systolic After"],
        }
    )


def hands() -> pd.DataFrame:
    writing = RNG.normal(18.7, 1.8, N).round(1)
    return pd.DataFrame(
        {
            "Sex": RNG.choice(["Female", "Male"], N),
            "Wr.Hnd": writing,
            "NW.Hnd": (writing - RNG.normal(0.2, 0.5, N)).round(1),
            "Height": RNG.normal(172, 9, N).round(1),
        }
    )


def mileage() -> pd.DataFrame:
    city = RNG.integers(11, 28, N)
    return pd.DataFrame(
        {
            "manufacturer": RNG.choice(["audi", "ford", "honda"], N),
            "displ": RNG.uniform(1.6, 5, N).round(1),
            "cty": city,
            "hwy": city + RNG.integers(3, 10, N),
        }
    )


# --- 1. wide paired designs ----------------------------------------------------------------------
PAIRED = [
    ("Did systolic pressure drop after the treatment?", pressure, ("Systolic After", "Systolic Before")),
    ("Is blood pressure lower after than before?", pressure, ("Systolic After", "Systolic Before")),
    ("治疗后血压是不是降了？", pressure_zh, ("治疗后血压", "治疗前血压")),
    ("血压降了吗", pressure_zh, ("治疗后血压", "治疗前血压")),
    (
        "Every patient was measured before and after. Did it come down, and by how much?",
        pressure,
        ("Systolic After", "Systolic Before"),
    ),
    ("Is the writing hand span bigger than the other hand?", hands, ("Wr.Hnd", "NW.Hnd")),
    ("Is NW.Hnd smaller than Wr.Hnd?", hands, ("NW.Hnd", "Wr.Hnd")),
    ("Do cars get more miles per gallon on the highway than in the city?", mileage, ("hwy", "cty")),
    ("Is there a difference between city and highway mileage?", mileage, ("cty", "hwy")),
    ("城市油耗cty比高速hwy低吗？", mileage, ("cty", "hwy")),
    ("Compare hwy and cty", mileage, ("hwy", "cty")),
    ("比较一下cty和hwy", mileage, ("cty", "hwy")),
]


@pytest.mark.parametrize("question, frame, pair", PAIRED)
def test_two_columns_measured_on_each_row_are_compared_row_by_row(question, frame, pair):
    steps = task_steps(question, frame())
    assert steps == [("paired_test", {"x_column": pair[0], "y_column": pair[1], "method": "t"})]


NOT_PAIRED = [
    ("Is the writing hand span related to height?", hands, "correlation_analysis"),
    ("Do systolic before and systolic after move together?", pressure, None),  # no change asked: not a paired test
    ("Is systolic pressure after treatment different between men and women?", pressure, "compare_two_groups"),
    ("Are older patients' systolic pressure higher than younger ones?", pressure, None),
    ("Is displ bigger than cty?", mileage, None),  # litres and miles per gallon: not one scale
    ("The more hwy, the more cty?", mileage, "correlation_analysis"),
    ("Compare hwy across manufacturers", mileage, "compare_groups"),
]


@pytest.mark.parametrize("question, frame, expected", NOT_PAIRED)
def test_other_questions_on_such_tables_are_not_paired(question, frame, expected):
    tools = [tool for tool, _ in task_steps(question, frame())]
    assert "paired_test" not in tools
    if expected:
        assert expected in tools


def test_names_differing_by_a_marker_or_a_number_are_pairs():
    names = [
        "Systolic Before",
        "Systolic After",
        "pressure",
        "pre_score",
        "post_score",
        "Sales 2023",
        "Sales 2024",
        "治疗前血压",
        "治疗后血压",
        "Wr.Hnd",
        "NW.Hnd",
    ]
    assert {(a, b) for a, b, _ in marked_pairs(names)} == {
        ("Systolic Before", "Systolic After"),
        ("pre_score", "post_score"),
        ("Sales 2023", "Sales 2024"),
        ("治疗前血压", "治疗后血压"),
    }


def test_same_scale_needs_overlapping_ranges():
    assert same_scale({"minimum": 11, "maximum": 35}, {"minimum": 12, "maximum": 44})
    assert not same_scale({"minimum": 1.6, "maximum": 7}, {"minimum": 9, "maximum": 35})
    assert not same_scale({"minimum": 0, "maximum": 200}, {"minimum": 150, "maximum": 2000})
    assert not same_scale({"minimum": 1}, {"minimum": 1, "maximum": 3})


def test_a_measure_that_drops_is_not_a_data_task():
    assert decide("Did systolic pressure drop after the treatment?").kind != "data_prep"
    assert decide("Drop the rows where Ozone is missing").kind == "data_prep"
    assert decide("drop duplicates").kind == "data_prep"


@pytest.mark.slow
def test_a_wide_paired_question_runs_a_paired_test_with_a_plain_headline(tmp_path):
    from tests.test_builtin_understanding import Session, call, headline

    frame = pressure()
    path = tmp_path / "pressure.csv"
    frame.to_csv(path, index=False)
    session = Session(tmp_path, path)
    run, calls = session.ask("Did systolic pressure drop after the treatment?")
    test = call(calls, "paired_test")
    difference = frame["Systolic After"] - frame["Systolic Before"]
    assert test.metrics["p_value"] == pytest.approx(
        stats.ttest_rel(frame["Systolic After"], frame["Systolic Before"]).pvalue
    )
    assert not any(c.tool in ("compare_two_groups", "correlation_analysis") for c in calls) and not session.asked
    assert headline(run).startswith(
        f"**On the same {N} rows, Systolic After is on average {fmt_num(-difference.mean())} "
        f"lower than Systolic Before (lower in {int((difference < 0).sum())} of {N} rows)"
    )

    zh = pressure_zh()
    path = tmp_path / "血压.csv"
    zh.to_csv(path, index=False)
    session = Session(tmp_path / "zh", path)
    run, calls = session.ask("治疗后血压是不是降了？")
    assert call(calls, "paired_test").arguments["x_column"] == "治疗后血压"
    drop = (zh["治疗前血压"] - zh["治疗后血压"]).mean()
    assert headline(run).startswith(f"**在同样的 {N} 行上，治疗后血压 平均比 治疗前血压 降低了 {fmt_num(drop)}")


@pytest.mark.slow
def test_a_chinese_before_after_rise_is_said_as_a_rise(tmp_path):
    """A later measurement above its earlier one is said as a change (提高了), the way "有没有提高" asks,
    not only as one column higher than the other."""
    from tests.test_builtin_understanding import Session, call, headline

    rng = np.random.default_rng(11)
    before = rng.normal(60, 8, 40).round(0)
    frame = pd.DataFrame(
        {
            "班级": rng.choice(["一班", "二班"], 40),
            "练习前得分": before,
            "练习后得分": before + rng.normal(5, 3, 40).round(0),
        }
    )
    session = Session(tmp_path, _path(tmp_path, frame, "练习"))
    run, calls = session.ask("练习之后，学生的得分提高了多少？")
    assert call(calls, "paired_test").arguments["x_column"] == "练习后得分"
    gain = (frame["练习后得分"] - frame["练习前得分"]).mean()
    assert gain > 0
    assert headline(run).startswith(f"**在同样的 40 行上，练习后得分 平均比 练习前得分 提高了 {fmt_num(gain)}")


def _path(tmp_path: Path, frame: pd.DataFrame, name: str) -> Path:
    path = tmp_path / f"{name}.csv"
    frame.to_csv(path, index=False)
    return path


# --- 2. data tasks as data operations ------------------------------------------------------------
def ozone() -> pd.DataFrame:
    wind = RNG.uniform(2, 20, N).round(1)
    frame = pd.DataFrame(
        {
            "Ozone": (90 - 3 * wind + RNG.normal(0, 10, N)).round(0),
            "Wind": wind,
            "Temp": RNG.integers(56, 97, N),
            "Month": RNG.choice([5, 6, 7, 8, 9], N),
        }
    )
    frame.loc[[2, 5, 9, 17], "Ozone"] = np.nan
    frame.loc[[4], "Temp"] = np.nan
    return frame


@pytest.mark.parametrize(
    "question, frame, pair",
    [
        ("Add a column with before minus after", pressure, ["Systolic Before", "Systolic After"]),
        ("Add a column: after - before", pressure, ["Systolic After", "Systolic Before"]),
        ("新增一列：治疗前减治疗后", pressure_zh, ["治疗前血压", "治疗后血压"]),
        ("Add a column with hwy minus cty", mileage, ["hwy", "cty"]),
    ],
)
def test_a_new_column_named_by_its_parts_is_derived(question, frame, pair):
    assert task_steps(question, frame()) == [
        (
            "derive_column",
            {"new_column_name": f"{pair[0]} - {pair[1]}", "kind": "difference", "columns": pair, "output": "data"},
        )
    ]


@pytest.mark.parametrize(
    "question, columns",
    [
        ("Drop the rows where Ozone is missing", ["Ozone"]),
        ("Please remove the rows with no Ozone reading", ["Ozone"]),
        ("删掉臭氧为空的行", ["Ozone"]),
        ("把臭氧为空的行删掉", ["Ozone"]),
        ("Remove rows with missing values", ["Ozone", "Temp"]),  # every column with gaps
    ],
)
def test_removing_rows_with_missing_values_is_a_data_operation(question, columns):
    steps = task_steps(question, ozone())
    assert steps == [("clean_data", {"trim_whitespace": False, "drop_duplicates": False, "drop_missing_in": columns})]


def test_an_analysis_that_leaves_out_missing_values_is_still_an_analysis():
    tools = [tool for tool, _ in task_steps("Compare ozone by month, excluding missing values", ozone())]
    assert "clean_data" not in tools and "compare_groups" in tools


@pytest.mark.slow
def test_data_tasks_say_what_they_made(tmp_path):
    from tests.test_builtin_understanding import Session, call, headline

    frame = ozone()
    session = Session(tmp_path, _path(tmp_path, frame, "air"))
    run, calls = session.ask("Drop the rows where Ozone is missing")
    kept = int(frame["Ozone"].notna().sum())
    assert call(calls, "clean_data").metrics["n_rows_after"] == kept
    assert headline(run).startswith(
        f"**Removed {N - kept} rows with no Ozone value: {N} → {kept} rows, saved as a new version of “air”"
    )
    assert max(d.version for d in session.datasets()) == 2
    run, _ = session.ask("删掉臭氧为空的行")  # the new version has none left
    assert headline(run).startswith(f"**“air” 中没有 Ozone 为空的行（共 {kept} 行）")

    blood = pressure_zh()
    session = Session(tmp_path / "zh", _path(tmp_path, blood, "血压"))
    run, calls = session.ask("新增一列：治疗前减治疗后")
    derived = call(calls, "derive_column")
    assert derived.arguments["columns"] == ["治疗前血压", "治疗后血压"]
    drop = blood["治疗前血压"] - blood["治疗后血压"]
    assert headline(run).startswith(
        f"**已为全部 {N} 行新增列“治疗前血压 - 治疗后血压”（治疗前血压 减 治疗后血压），"
        f"保存为“血压”的新版本（原版本仍保留）"
    )
    assert max(d.version for d in session.datasets()) == 2 and len({d.name for d in session.datasets()}) == 1
    assert f"平均 {fmt_num(drop.mean())}" in headline(run)


# --- 3. per-unit averages against totals ---------------------------------------------------------
def orders() -> pd.DataFrame:
    """Many small orders from new customers, a few large ones from returning customers: the totals and
    the averages per order point opposite ways."""
    kinds = ["New"] * 30 + ["Returning"] * 10
    spend = np.concatenate([RNG.normal(20, 4, 30), RNG.normal(50, 8, 10)]).round(2)
    return pd.DataFrame(
        {
            "Date": pd.date_range("2024-01-01", periods=40, freq="D"),
            "Customer Type": kinds,
            "Channel": RNG.choice(["Online", "Store"], 40),
            "Spend": spend,
        }
    )


def aggregated(question: str, frame: pd.DataFrame) -> str | None:
    """How the plan reads each group: 'sum', 'mean' (a comparison of averages or a top list by them)."""
    for tool, arguments in task_steps(question, frame):
        if tool == "group_aggregate":
            return arguments["agg"]
        if tool in ("compare_groups", "compare_two_groups"):
            return "mean"
    return None


@pytest.mark.parametrize(
    "question, agg",
    [
        ("Which customer type spends the most per order?", "mean"),
        ("Which customer type spends the most on each visit?", "mean"),
        ("Which customer type spends the most on average?", "mean"),
        ("哪类顾客平均每单花得最多？", "mean"),
        ("哪类顾客每单消费最高？", "mean"),
        ("人均消费最高的是哪类顾客？", "mean"),
        ("Which customer type spends the most in total?", "sum"),
        ("Which customer type spends the most in all?", "sum"),
        ("哪类顾客一共花得最多？", "sum"),
        ("哪类顾客的消费总额最高？", "sum"),
        ("What is the total spend per customer type?", "sum"),  # "per" a grouping column: a breakdown
        ("每个顾客类型的消费合计是多少？", "sum"),
    ],
)
def test_per_order_is_an_average_and_in_total_a_sum(question, agg):
    assert aggregated(question, orders()) == agg


@pytest.mark.slow
def test_the_average_and_the_total_name_different_leaders(tmp_path):
    from tests.test_builtin_understanding import Session, headline

    frame = orders()
    means, totals = frame.groupby("Customer Type")["Spend"].mean(), frame.groupby("Customer Type")["Spend"].sum()
    assert means.idxmax() == "Returning" and totals.idxmax() == "New"
    session = Session(tmp_path, _path(tmp_path, frame, "orders"))
    run, _ = session.ask("Which customer type spends the most per order?")
    assert headline(run).startswith(f"**Average Spend is higher for Returning: {fmt_num(means['Returning'], 5)}")
    run, _ = session.ask("Which customer type spends the most in total?")
    assert headline(run).startswith(f"**New has the highest total Spend: {fmt_num(totals['New'])}")
    run, _ = session.ask("哪类顾客每单消费最高？")
    assert headline(run).startswith(f"**Returning 的平均 Spend 更高：{fmt_num(means['Returning'], 5)}")


# --- 4. the direction of a relationship in plain words ---------------------------------------------
def test_strength_words_follow_the_size_of_r():
    from app.analyst.headlines import strength

    assert [strength(r, False) for r in (0.1, -0.3, 0.5, -0.7, 0.9)] == [
        "very weak",
        "weak",
        "moderate",
        "strong",
        "very strong",
    ]
    assert strength(-0.65, True) == "强"


def test_the_relationship_headline_says_which_way_in_the_questions_words():
    from app.analyst.headlines import relationship_headline

    metrics = {"r": -0.6012, "p_value": 0.0004, "r.Ozone~Wind": -0.6012, "p_value.Ozone~Wind": 0.0004}
    assert relationship_headline("Wind", "Ozone", metrics, False, {"Wind": "windy days", "Ozone": "ozone"}) == (
        "Higher Wind tends to go with lower Ozone: a strong negative relationship (r = -0.601); a link this strong "
        "would rarely appear by chance (p < 0.001)."
    )
    assert relationship_headline("Wind", "Ozone", metrics, True, {"Wind": "风速", "Ozone": "臭氧"}) == (
        "风速（Wind）越大，臭氧（Ozone）往往越低（强负相关，r = -0.601）；这么强的关联很少会偶然出现（p < 0.001）。"
    )
    weak = {"r.Height~Wr.Hnd": 0.12, "p_value.Height~Wr.Hnd": 0.4}
    assert relationship_headline("Height", "Wr.Hnd", weak, False, {"Wr.Hnd": "writing hand"}) == (
        "Height and writing hand (Wr.Hnd) hardly move together (very weak, r = 0.12); a link like this could easily "
        "appear by chance (p = 0.40), so it is not convincing evidence."
    )
    assert relationship_headline("Height", "Wr.Hnd", {}, False) is None


@pytest.mark.slow
@pytest.mark.parametrize(
    "question, lead",
    [
        (
            "Is ozone lower on windy days?",
            "**Higher Wind tends to go with lower Ozone: a {size} negative relationship (r = {r})",
        ),
        ("The windier it is, the lower the ozone?", "**Higher Wind tends to go with lower Ozone"),
        ("风速越大，臭氧越低吗？", "**风速（Wind）越大，臭氧（Ozone）往往越低（{size_zh}负相关，r = {r}）"),
        ("风力和臭氧有关系吗？", "**风力（Wind）越大，臭氧（Ozone）往往越低"),
    ],
)
def test_a_relationship_answer_leads_with_its_direction(tmp_path, question, lead):
    from app.analyst.headlines import strength
    from tests.test_builtin_understanding import Session, call, headline

    frame = ozone()
    complete = frame.dropna(subset=["Ozone", "Wind"])
    r = stats.pearsonr(complete["Wind"], complete["Ozone"])[0]
    assert r < -0.2
    session = Session(tmp_path, _path(tmp_path, frame, "air"))
    run, calls = session.ask(question)
    assert call(calls, "correlation_analysis").metrics["r"] == pytest.approx(r)
    assert headline(run).startswith(lead.format(size=strength(r, False), size_zh=strength(r, True), r=fmt_num(r, 3)))


def trial() -> pd.DataFrame:
    frame = pressure()
    return frame.assign(
        **{"Patient ID": [f"P{i:03d}" for i in range(N)], "Treatment": RNG.choice(["Drug", "Placebo"], N)}
    )


def scores() -> pd.DataFrame:
    pre = RNG.normal(60, 10, N).round(0)
    return pd.DataFrame(
        {"Class": RNG.choice(["A", "B"], N), "pre_score": pre, "post_score": pre + RNG.normal(5, 4, N).round(0)}
    )


@pytest.mark.parametrize(
    "question, frame, change, group",
    [
        (
            "Did systolic pressure drop more with the drug than with placebo?",
            trial,
            ["Systolic After", "Systolic Before"],
            "Treatment",
        ),
        ("Did scores improve more in class A than class B?", scores, ["post_score", "pre_score"], "Class"),
        (
            "Did systolic pressure drop more for women than for men?",
            pressure,
            ["Systolic After", "Systolic Before"],
            "Sex",
        ),
        ("哪个性别的血压降得更多？", pressure_zh, ["治疗后血压", "治疗前血压"], "性别"),
    ],
)
def test_a_change_asked_group_by_group_is_derived_then_compared(question, frame, change, group):
    steps = task_steps(question, frame())
    name = f"{change[0]} - {change[1]}"
    assert steps[0] == (
        "derive_column",
        {"new_column_name": name, "kind": "difference", "columns": change, "output": "data"},
    )  # a new version, not a second table
    assert steps[1] == ("compare_two_groups", {"value_column": name, "group_column": group})


def test_a_grouping_named_as_an_event_is_not_a_grouping():
    # "after the treatment" on a table with a Treatment column: the change overall
    assert task_steps("Did systolic pressure drop after the treatment?", trial()) == [
        ("paired_test", {"x_column": "Systolic After", "y_column": "Systolic Before", "method": "t"})
    ]
    assert task_steps("Compare systolic before and after", trial())[0][0] == "paired_test"


def test_a_level_compared_between_groups_is_not_a_change():
    steps = task_steps("Is systolic pressure different between men and women?", pressure())
    assert [tool for tool, _ in steps][:2] == ["describe_columns", "compare_two_groups"]
    assert "derive_column" not in [tool for tool, _ in steps]


def test_names_sharing_a_word_keep_their_names_and_two_joined_measures_read_first_to_second():
    from app.analyst.headlines import relationship_headline

    metrics = {"r.Petal.Length~Petal.Width": 0.96, "p_value.Petal.Length~Petal.Width": 1e-9}
    words = {"Petal.Length": "花瓣", "Petal.Width": "宽度"}  # pieces of "花瓣的长度和宽度"
    assert relationship_headline("Petal.Width", "Petal.Length", metrics, True, words).startswith(
        "Petal.Width 越大，Petal.Length 往往越高（极强正相关，r = 0.96）"
    )
    plan = plan_analysis("Is wind and ozone related?", seen(ozone()), False)
    assert plan.steps[1].arguments == {"columns": ["Ozone", "Wind"]}  # Wind first: it is named first


def test_a_superlative_of_one_measurement_is_not_a_paired_question():
    tools = [tool for tool, _ in task_steps("治疗后血压最高是多少？", pressure_zh())]
    assert "paired_test" not in tools
    assert task_steps("治疗后血压比治疗前高吗？", pressure_zh())[0][0] == "paired_test"


def test_a_change_between_groups_is_told_as_changes():
    from app.analyst.headlines import change_headline

    metrics = {"mean.Drug": -3.353, "mean.Placebo": -6.462, "p_value": 0.15}
    assert change_headline("Systolic After", "Systolic Before", metrics, False) == (
        "From Systolic Before to Systolic After, the average change is -6.462 for Placebo and -3.353 for Drug (a "
        "difference of 3.109); a gap like this could easily happen by chance (p = 0.15), so it is not convincing evidence."
    )
    assert change_headline(
        "第二次成绩", "第一次成绩", {"mean.一班": -0.5, "mean.二班": -1.4, "p_value": 0.62}, True
    ) == (
        "从 第一次成绩 到 第二次成绩，二班 平均变化 -1.4，一班 平均变化 -0.5（相差 0.9）；这样的差异很可能只是偶然（p = 0.62），不能作为可靠证据。"
    )
    assert change_headline("a", "b", {"mean.x": 1.0}, False) is None


@pytest.mark.parametrize(
    "question, agg",
    [
        ("哪类顾客的总消费最高？", "sum"),
        ("总体来看，哪类顾客平均消费最高？", "mean"),  # 总体 is "overall", not a total
    ],
)
def test_zong_before_a_measure_is_a_total(question, agg):
    frame = orders().drop(columns="Date")  # no dates: only the words decide
    assert aggregated(question, frame) == agg


def test_the_partner_of_a_named_measurement_is_not_asked_about():
    """ "the other hand" is NW.Hnd: the paired plan stands without a question about which column holds it."""
    from app.analyst.role_question import role_question

    question = (
        "Each student measured the span of their writing hand and of their other hand. Is the writing hand bigger?"
    )
    plan = plan_analysis(question, seen(hands()), zh=False)
    assert plan.kind == "paired" and role_question(plan.provenance, plan.metric, zh=False) is None
