"""Personal data is masked in everything the model sees; data tools make new, reversible versions."""

import json
import re

import pandas as pd

from analysis_tools import Registry, ToolContext, ToolResult, make_tool
from app.agent.model.interface import ModelReply
from app.agent.policy.privacy import PiiMasker
from app.agent.recorder import RunRecorder
from app.agent.tools.toolbox import FULL_REGISTRY, DatasetCatalog, Toolbox
from app.db.models import Dataset, Workspace
from app.workspaces import activate_version, active_datasets, add_version, dataset_versions, load_frame
from tests.factories import setup, start_run
from tests.fakes import ScriptedModel, call

PEOPLE = pd.DataFrame(
    {
        "姓名": ["张三", "李四", "王五", "赵六"] * 10,
        "手机": ["13812345678", "13987654321", "15011112222", "18633334444"] * 10,
        "Region": ["East", "West", "East", "North"] * 10,
        "Amount": [120.5, 80.0, 99.9, 150.0] * 10,
    }
)


def people_csv(tmp_path):
    path = tmp_path / "people.csv"
    PEOPLE.to_csv(path, index=False)
    return path


def test_masker_replaces_known_values_and_patterns():
    masker = PiiMasker.from_frames({"p": {"姓名": "name", "手机": "phone"}}, {"p": PEOPLE})
    text = masker.mask("Top customer 张三 (13812345678), also 李四; call 13500001111; mail a.b@c.com")
    assert "张三" not in text and "13812345678" not in text and "13500001111" not in text
    assert "姓名_001" in text and "姓名_002" in text and "a.b@c.com" not in text  # pseudonyms, in order seen
    assert re.search(r"\(phone_[0-9a-f]{6}\)", text) and re.search(r"mail email_[0-9a-f]{6}$", text)
    assert masker.mask(text) == text  # masking masked text changes nothing
    assert masker.unmask(text) == "Top customer 张三 (13812345678), also 李四; call 13500001111; mail a.b@c.com"


def test_masker_leaves_numbers_alone_without_phone_columns():
    masker = PiiMasker.from_frames({}, {})
    text = '{"sum": 15234567890, "mean": 13812345678.5, "id": 110101199003071235}'
    assert masker.mask(text) == text  # no phone column, and that ID fails its checksum


def test_the_model_never_sees_personal_values(tmp_path):
    model = ScriptedModel(
        [
            ModelReply(None, [call("preview_data", "c1", rows=5), call("value_counts", "c2", column="姓名")]),
            ModelReply("done"),
        ]
    )
    settings, db, service, ws = setup(tmp_path, people_csv(tmp_path), lambda *_: model)
    service.execute(start_run(service, ws, "who buys most?"))
    seen = json.dumps(model.requests, ensure_ascii=False)
    for raw in ("张三", "李四", "13812345678", "15011112222"):
        assert raw not in seen
    assert "姓名_001" in seen  # the values are there, as pseudonyms


def drop_first_row(data: pd.DataFrame, ctx: ToolContext) -> ToolResult:
    """Drop the first row (a test data tool)."""
    return ToolResult(text="dropped", table=data.iloc[1:].reset_index(drop=True), payload={"step": "dropped row 1"})


def test_data_tool_output_is_a_new_reversible_version(tmp_path):
    settings, db, service, ws = setup(tmp_path, people_csv(tmp_path))
    with db.session() as session:
        run = service.create(session, session.get(Workspace, ws), "clean it")
        recorder = RunRecorder(session, ws, run.id)
        original = active_datasets(session, ws)[0]
        catalog = DatasetCatalog({original.name: lambda: load_frame(original, settings)}, active=original.name)
        registry = FULL_REGISTRY.extend(Registry([make_tool(drop_first_row, "data")]))
        store = lambda *args: service.store_table(session, recorder, ws, *args)  # noqa: E731
        toolbox = Toolbox(catalog, ToolContext(), registry=registry, store_table=store)
        result = toolbox.execute(call("drop_first_row", "c1"))
        assert result.ok and result.payload["dataset_name"] == original.name
        assert len(catalog.get(None)) == len(PEOPLE) - 1  # later tools read the new version
        versions = dataset_versions(session, original)
        assert [v.version for v in versions] == [1, 2] and versions[1].step == "dropped row 1"
        assert [d.version for d in active_datasets(session, ws)] == [2]
        activate_version(session, versions[0])  # back to the original
        assert [d.version for d in active_datasets(session, ws)] == [1]
        assert len(load_frame(session.get(Dataset, versions[0].id), settings)) == len(PEOPLE)


def test_summary_tables_become_new_datasets(tmp_path):
    settings, db, service, ws = setup(tmp_path, people_csv(tmp_path))
    with db.session() as session:
        source = active_datasets(session, ws)[0]
        summary = PEOPLE.groupby("Region", as_index=False)["Amount"].mean()
        derived = add_version(
            session, settings, source, summary, "group_aggregate: mean Amount by Region", "people_summary"
        )
        assert derived.name == "people_summary" and derived.version == 1 and derived.parent_id == source.id
        assert {d.name for d in active_datasets(session, ws)} == {"people", "people_summary"}
        assert [c["type"] for c in derived.info["columns"]] == ["category", "number"]


def test_result_tables_of_read_only_data_tools_are_not_versions(tmp_path):
    model = ScriptedModel(
        [
            ModelReply(None, [call("value_counts", "c1", column="Region")]),
            ModelReply(None, [call("describe_columns", "c2", columns=["Amount"])]),
            ModelReply("ok"),
        ]
    )
    settings, db, service, ws = setup(tmp_path, people_csv(tmp_path), lambda *_: model)
    service.execute(start_run(service, ws, "how many per region?"))
    assert '"error"' not in model.requests[2]["messages"][-1]["content"]  # Amount is still there
    with db.session() as session:
        assert [d.version for d in active_datasets(session, ws)] == [1]
