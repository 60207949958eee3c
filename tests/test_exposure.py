"""Lazy tool exposure: per-turn starters (core + the common tools of the intent's groups; the question's
words pick no tools), situational harness tools, tool_search (zh/en) exposing the tools it
found, exposure that only grows within a turn (a stable, cacheable prefix), phase pruning, refusal of
unexposed tools, and the size of the schemas sent compared with the full catalog."""

import json
import re

import pytest

from analysis_tools import Registry, ToolContext, ToolResult, make_tool
from app.agent.model.interface import ToolCallRequest
from app.agent.model.openai_compatible import OpenAICompatibleModel
from app.agent.policy.intent import LEAN_STARTERS, STARTERS, classify
from app.agent.tools.exposure import DETAILED_MATCHES, SITUATIONAL, Exposure, rank_tools, schema_chars
from app.agent.tools.toolbox import FULL_REGISTRY, DatasetCatalog, Toolbox
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
REGISTRY = FULL_REGISTRY.extend(
    Registry(
        [
            make_tool(probe_forecast, "timeseries"),
            make_tool(probe_trend, "timeseries"),
            make_tool(probe_cluster_segments, "ml"),
        ]
    )
)


def toolbox_for(question: str, registry: Registry = REGISTRY, has_history: bool = False, focus: bool = True) -> Toolbox:
    intent = classify(question, has_history=has_history)
    return Toolbox(
        DatasetCatalog(),
        ToolContext(),
        registry=registry,
        groups=set(intent.groups),
        pruned=set(intent.pruned),
        scope=intent.scope,
        focus=focus,
    )


def via(call_id: str, name: str, arguments: dict) -> ToolCallRequest:
    """A call_tool call, as a model sends it for a tool tool_search found."""
    arguments = {"name": name, "arguments": arguments}
    return ToolCallRequest(call_id, "call_tool", arguments, json.dumps(arguments))


def names(schemas) -> set[str]:
    return {s["function"]["name"] for s in schemas}


def group_names(*groups: str, registry: Registry = REGISTRY) -> set[str]:
    return {t.name for t in registry if t.group in groups}


# --- per-turn starters -------------------------------------------------------------------------
def starters(*groups: str, registry: Registry = REGISTRY) -> set[str]:
    """core (less its situational tools) + the lean starter tools of the other groups."""
    return (group_names("core", registry=registry) - set(SITUATIONAL)) | {
        t.name for t in registry if t.group in groups and t.name in LEAN_STARTERS.get(t.group, ())
    }


def test_each_intent_starts_with_core_and_the_starters_of_its_groups():
    core = group_names("core") - set(SITUATIONAL)
    assert toolbox_for("你好").schemas() == []  # a greeting is offered no tools at all
    assert names(toolbox_for("What is a p-value?").schemas()) == core
    # a turn about one group (data preparation) sees it whole
    assert names(toolbox_for("clean the data").schemas()) == core | group_names("data")
    # an analysis starts with the same lean array whatever its words name (the model reads the question)
    for question in ("Does revenue differ by region?", "不同地区的收入有差异吗？", "sales trend over time"):
        assert names(toolbox_for(question).schemas()) == starters("stats", "plot"), question
    assert names(toolbox_for("Analyse revenue across our regions").schemas()) == starters("stats", "plot")
    assert names(toolbox_for("why is that?", has_history=True).schemas()) == starters("stats", "plot")
    # many-step work starts with every group's starters
    for question in ("a full report please", "build a churn model"):
        assert names(toolbox_for(question).schemas()) == starters("data", "stats", "ml", "timeseries", "plot")
    assert "tool_search" in names(toolbox_for("clean the data").schemas())
    # the first request is narrow: an analysis turn does not see the rarer tools of its groups
    analysis = names(toolbox_for("不同地区的收入有差异吗？").schemas())
    assert {"curve_fit", "paired_test", "plot_pie", "plot_heatmap"}.isdisjoint(analysis)


def test_the_questions_words_pick_no_tools_and_tool_search_finds_them():
    def first(question):
        return names(toolbox_for(question, registry=FULL_REGISTRY).schemas())

    # the tools a question names are not listed by its words: the model finds them by what they do
    named = {
        "Is revenue normal? Run a Shapiro-Wilk test.": ("normality test", "normality_test"),
        "Which orders are outliers by the IQR rule?": ("outliers", "outlier_detection"),
        "Add a new column with the revenue per unit ratio and average it": ("new column", "derive_column"),
    }
    plain = first("Does revenue differ by region?")
    for question, (query, tool) in named.items():
        assert tool not in first(question) and tool not in plain
        box = toolbox_for(question, registry=FULL_REGISTRY)
        box.schemas()
        found = box.execute(call("tool_search", "s1", query=query))
        assert tool in found.payload["tools"] and box.exposure.is_offered(tool), question
    # a one-statistic question starts narrow: a description, not every comparison and chart
    single = first("What is the mean revenue?")
    assert "describe_columns" in single and {"compare_groups", "linear_regression", "plot_bar"}.isdisjoint(single)
    assert first("你好") == set()  # a greeting still gets no tools


def test_situational_tools_become_callable_when_they_can_act():
    box = toolbox_for("Does revenue differ by region?", registry=FULL_REGISTRY)
    listed = names(box.schemas())
    assert {"task_update", "task_list", "retract_evidence", "read_tool_output"}.isdisjoint(listed)
    assert not box.exposure.is_offered("task_update")
    box.exposure.enable("tasks")
    assert {"task_update", "task_get", "task_list"} <= {n for n in SITUATIONAL if box.exposure.is_offered(n)}
    assert names(box.schemas()) == listed  # callable, but the tools array stays as it was
    assert not box.exposure.is_offered("read_tool_output")


def test_the_builtin_analysts_tools_are_offered_in_analysis_turns():
    plan_tools = {
        "describe_columns",
        "compare_groups",
        "compare_two_groups",
        "correlation_analysis",
        "linear_regression",
        "plot_histogram",
        "plot_bar",
        "plot_scatter",
        "profile_dataset",
        "task_create",
        "record_evidence",
    }
    for question in ("Does weight differ by group?", "不同地区的收入有差异吗？", "what explains revenue?"):
        # runs.py turns focus off for the built-in analyst: it plans every standard analysis and chart
        assert plan_tools <= names(toolbox_for(question, registry=FULL_REGISTRY, focus=False).schemas()), question
    # a tool its plan needs beyond the starters it finds by name (rounds.searches), callable at once
    box = toolbox_for("how many orders per region?", registry=FULL_REGISTRY, focus=False)
    box.schemas()
    for tool in ("value_counts", "time_series_trend", "plot_line"):
        found = box.execute(call("tool_search", f"s_{tool}", query=tool, limit=1))
        assert found.payload["tools"] == [tool] and box.exposure.is_offered(tool)


def test_a_toolbox_without_an_intent_exposes_everything():
    box = Toolbox(DatasetCatalog(), ToolContext(), registry=REGISTRY)
    assert names(box.schemas()) == {t.name for t in REGISTRY}


def test_calls_to_unexposed_tools_are_refused_and_never_executed():
    EXECUTED.clear()
    box = toolbox_for("clean the data")
    box.schemas()
    for name in ("probe_forecast", "probe_cluster_segments"):
        result = box.execute(call(name, f"c_{name}"))
        assert not result.ok and result.error["error"] == "tool_not_exposed" and result.error["retryable"] is False
    assert EXECUTED == []
    assert box.execute(call("no_such_tool", "x")).error["error"] == "unknown_tool"
    # a tool of an exposed group that is not among the starters is refused too
    analysis = toolbox_for("不同地区的收入有差异吗？")
    analysis.schemas()
    refused = analysis.execute(call("paired_test", "p1"))
    assert refused.error["error"] == "tool_not_exposed" and "tool_search" in refused.error["hint"]


def test_a_greeting_turn_refuses_every_tool():
    box = toolbox_for("thanks")
    assert box.schemas() == []
    assert box.execute(call("list_datasets", "c1")).error["error"] == "tool_not_exposed"


# --- tool_search ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "query, expected",
    [
        ("相关", "correlation_analysis"),
        ("correlation", "correlation_analysis"),
        ("预测", "forecast"),
        ("forecast next month", "forecast"),
        ("差异", "compare_groups"),
        ("比较两组", "compare_two_groups"),
        ("趋势", "trend"),
        ("回归", "linear_regression"),
        ("聚类", "cluster"),
        ("segment customers", "cluster"),
        ("清洗", "clean_data"),
        ("透视", "pivot_table"),
        ("pivot", "pivot_table"),
        ("散点图", "plot_scatter"),
        ("卡方", "chi_square_test"),
    ],
)
def test_tool_search_understands_zh_and_en(query, expected):
    # among the matches tool_search returns by default (each with its full schema)
    found = [t.name for t in rank_tools(REGISTRY, query, DETAILED_MATCHES)]
    assert any(expected in name for name in found), (query, found)


def test_a_query_that_names_a_tool_finds_it_first_without_the_model():
    """The built-in analyst searches by name (rounds.searches): the name decides, and no query is embedded."""
    from app.agent.tools.tool_ranking import query_vector

    before = query_vector.cache_info()
    for tool in FULL_REGISTRY:
        if tool.name != "tool_search":
            for query in (tool.name, tool.name.replace("_", " ").upper()):
                assert [t.name for t in rank_tools(FULL_REGISTRY, query, 1)] == [tool.name], query
    after = query_vector.cache_info()
    assert (after.hits, after.misses) == (before.hits, before.misses)
    assert rank_tools(FULL_REGISTRY, "  ", 3) == []


def test_tool_search_reaches_across_languages_without_a_word_list():
    """Chinese and everyday wordings that share no word with any tool's text (nor with tool_ranking's
    table of Chinese terms) find it by meaning."""
    for query, expected in (
        ("去除重复行", "clean_data"),
        ("两个因素的交互作用", "two_way_anova"),
        ("各步骤的转化率", "funnel_analysis"),
        ("is revenue going up", "time_series_trend"),
        ("group similar rows together", "cluster_segments"),
    ):
        assert expected in [t.name for t in rank_tools(FULL_REGISTRY, query, DETAILED_MATCHES)], query


def test_a_plain_description_of_a_tools_job_finds_it():
    """What a model types for proportion_test's job ("compare yes/no rate between two groups") found the
    compare_* tools and not it: its description now says its job in those plain words (yes/no rate, share,
    two or more groups), no search rule added."""
    for query in ("compare yes/no rate between two groups", "does the share of defective items differ by factory"):
        assert "proportion_test" in [t.name for t in rank_tools(FULL_REGISTRY, query, DETAILED_MATCHES)], query


def test_the_catalogs_vectors_are_kept_on_disk_and_read_by_a_new_process(tmp_path, monkeypatch):
    import numpy as np

    from app.agent.tools import tool_ranking

    path = tmp_path / "cache" / "tool_vectors.npz"
    monkeypatch.setattr(tool_ranking, "cache_file", lambda: path)
    monkeypatch.setattr(tool_ranking, "packaged_file", lambda: tmp_path / "none.npz")
    monkeypatch.setattr(tool_ranking, "_known", None)  # a process that has seen no vector yet
    texts = ["plot box: Draw box plots of a numeric column.", "forecast: Forecast a time series."]
    first = tool_ranking.catalog_vectors(texts)
    assert first.shape == (2, 384) and np.allclose(np.linalg.norm(first, axis=1), 1, atol=1e-3)
    written = path.stat().st_mtime_ns
    monkeypatch.setattr(tool_ranking, "_known", None)  # a new process: reads them, embeds nothing, writes nothing
    assert np.array_equal(tool_ranking.catalog_vectors(texts), first) and path.stat().st_mtime_ns == written
    # a changed description is embedded again and joins the file; the others are kept
    tool_ranking.catalog_vectors([texts[0], "forecast: Forecast a time series for the coming periods."])
    with np.load(path) as stored:
        assert len(stored["keys"]) == 3


def test_the_packaged_vectors_cover_the_catalog_so_a_fresh_install_embeds_nothing():
    # fails when a tool's name, description or keywords change: rebuild with
    # `python bench/tool_search.py --build-vectors` (a stale file would cost a fresh install ~10-40 s)
    from app.agent.tools import tool_ranking

    ranking = tool_ranking.CatalogRanking([t for t in FULL_REGISTRY if t.name != "tool_search"])
    packaged = tool_ranking._read(tool_ranking.packaged_file())
    missing = [t[:40] for t in ranking.texts + ranking.briefs if tool_ranking.text_key(t) not in packaged]
    assert not missing, f"stale packaged tool vectors for: {missing}"


def test_tool_search_makes_the_tools_it_found_callable_at_once_through_call_tool():
    EXECUTED.clear()
    box = toolbox_for("Does revenue differ by region?")
    first = box.schemas()
    assert "probe_forecast" not in names(first) and "call_tool" in names(first)
    refused = box.execute(via("f0", "probe_forecast", {}))
    assert refused.error["error"] == "tool_not_exposed" and "tool_search" in refused.error["hint"] and EXECUTED == []
    result = box.execute(call("tool_search", "s1", query="预测 future values", limit=8))
    assert (
        result.ok
        and "probe_forecast (timeseries)" in result.text
        and "probe_forecast" in result.payload["exposed_tools"]
    )
    assert "timeseries" in result.payload["exposed_groups"] and "tool_search its name" not in result.text
    assert "call_tool" in result.text
    assert box.execute(via("f1", "probe_forecast", {"periods": 2})).ok
    assert EXECUTED == ["probe_forecast"]
    assert not box.execute(via("t1", "probe_trend", {})).ok or "probe_trend" in result.payload["tools"]
    for _ in range(6):  # the tools array never changes within the run
        assert box.schemas() == first


def test_a_searched_tool_stays_callable_and_searching_again_exposes_nothing_new():
    box = toolbox_for("Does revenue differ by region?")
    box.schemas()
    box.execute(call("tool_search", "s1", query="cluster segments"))
    assert all(box.exposure.is_offered("probe_cluster_segments") for _ in range(5))
    again = box.execute(call("tool_search", "s2", query="cluster segments"))
    assert again.payload["exposed_tools"] == [] and "call_tool" in again.text


def test_a_group_used_brings_its_starters_and_nothing_decays():
    box = Toolbox(DatasetCatalog(), ToolContext(), registry=FULL_REGISTRY, groups={"core", "stats", "plot"})
    first = box.schemas()
    box.execute(call("tool_search", "s1", query="feature_importance"))
    box.execute(via("f1", "feature_importance", {}))  # no data: fails, but it was called
    ml_starters = {t.name for t in FULL_REGISTRY if t.group == "ml" and t.name in STARTERS["ml"]}
    for _ in range(6):
        assert box.schemas() == first
        assert all(box.exposure.is_offered(n) for n in ml_starters | {"feature_importance"})
    assert json.dumps(box.exposure.snapshot())


def test_tool_search_shows_the_full_description_of_its_best_matches():
    box = toolbox_for("Does revenue differ by region?", registry=FULL_REGISTRY)
    box.schemas()
    text = box.execute(call("tool_search", "s1", query="normality test shapiro")).text
    tool = FULL_REGISTRY.get("normality_test")
    assert " ".join(tool.description.split()) in text  # the schema sends only the first sentence
    for name, prop in tool.parameters["properties"].items():
        assert f"- {name}:" in text and (prop.get("description") or "") in text


def test_a_preparation_turn_lists_no_statistics_yet_the_kind_refuses_none():
    """The kind is a guess: it picks the listing, never what a model that names a common tool may call
    ("Describe the weight column" read as preparation must still describe it)."""
    EXECUTED.clear()
    box = toolbox_for("清洗一下数据，去掉重复行")
    offered = names(box.schemas())
    assert not offered & group_names("stats", "ml") and "clean_data" in offered
    assert box.exposure.is_offered("describe_columns") and box.exposure.is_offered("correlation_analysis")
    assert not box.exposure.is_offered("probe_cluster_segments")  # no kind starts with it: found first
    result = box.execute(call("tool_search", "s1", query="correlation and clustering"))
    assert result.payload["refused_groups"] == [] and "probe_cluster_segments" in result.payload["tools"]
    assert box.execute(call("probe_cluster_segments", "c1")).ok and EXECUTED == ["probe_cluster_segments"]
    assert names(box.schemas()) == offered  # the tools array stays as it was
    # an analysis turn lists no data tools, yet the select_sheet a model names for "use the notes sheet" runs
    assert toolbox_for("Does revenue differ by region?").exposure.is_offered("select_sheet")


def test_only_the_users_own_restrictions_refuse_a_group():
    EXECUTED.clear()
    box = toolbox_for("Compare revenue by region, but build no models")
    box.schemas()
    assert not box.exposure.is_offered("train_classifier") and box.exposure.is_offered("compare_groups")
    refused = box.execute(call("probe_cluster_segments", "c1"))
    assert refused.error["error"] == "tool_not_exposed" and "rules out" in refused.error["hint"]
    assert EXECUTED == []


def test_exposure_snapshot_is_json():
    exposure = Exposure(REGISTRY, {"core", "stats"})
    first = exposure.next_request()
    exposure.request_tools({"plot_pie"})
    snapshot = json.loads(json.dumps(exposure.snapshot()))
    assert snapshot["added"] == ["plot_pie"] and exposure.is_offered("plot_pie")
    assert exposure.upcoming() == first == exposure.next_request()


def test_schemas_are_compact_and_say_what_the_shared_vocabulary_does_not():
    from analysis_tools.registry import _ASIDE, ARGUMENT_CHARS, BRIEF_CHARS, VOCABULARY

    for tool in FULL_REGISTRY:
        function = tool.schema()["function"]
        parameters = function["parameters"]
        assert parameters is tool.schema()["function"]["parameters"]  # built once (trace encoder reuse)
        assert set(parameters["properties"]) == set(tool.parameters["properties"])
        assert parameters.get("required", []) == tool.parameters["required"]
        assert len(function["description"]) <= max(BRIEF_CHARS, len(tool.short)), tool.name
        whole = " ".join(tool.description.split())
        shown = function["description"].removesuffix("…")
        if not tool.short:  # a written short description, or the first sentence cut at a word boundary
            assert whole.startswith(shown) and not whole[len(shown) :][:1].isalnum(), tool.name  # never mid-word
        for name, prop in parameters["properties"].items():
            described = prop.get("description") or ""
            if name in VOCABULARY or (prop.get("enum") and not described):
                continue  # explained once in the system prompt, or the enum says it
            assert described, (tool.name, name)
            # complete but short: the whole first sentence, never cut (over ARGUMENT_CHARS without its asides)
            assert not described.endswith("…") and described[-1] in '.)"', (tool.name, name, described)
            source = " ".join(tool.parameters["properties"][name]["description"].split())
            # asides dropped (a formula's parenthesis, "(new - old) / old", is not one)
            assert len(described) <= ARGUMENT_CHARS or not _ASIDE.search(described), (tool.name, name)
            assert set(re.findall(r"\w+", described)) <= set(re.findall(r"\w+", source)), (tool.name, name)
            assert prop.get("default", 0) not in ("", None), (tool.name, name)
    # validation still reads the full parameters
    assert FULL_REGISTRY.get("task_create").parameters["properties"]["description"]["default"] == ""
    # run_python's description is whole sentences, not cut mid-word
    brief = FULL_REGISTRY.get("run_python").schema()["function"]["description"]
    assert brief.endswith(".") and "datasets[name]" in brief


# --- the measure: schema characters per request ----------------------------------------------------
def test_lazy_exposure_sends_a_fraction_of_the_catalog(capsys):
    full = schema_chars(REGISTRY)
    sizes = {}
    for label, question in (
        ("chat", "你好"),
        ("consult", "What is a p-value?"),
        ("data_prep", "clean the data"),
        ("followup", "why is that?"),
        ("analysis", "不同地区的收入有差异吗？"),
        ("analysis+data", "Does revenue differ by region?"),
        ("deep:model", "build a churn model"),
        ("deep:report", "a full report please"),
    ):
        box = toolbox_for(question, has_history=True)
        box.schemas()
        sizes[label] = schema_chars(box.exposure.tools())
    with capsys.disabled():
        print(f"\nschema characters per first request (full catalog {full}, {len(REGISTRY)} tools):")
        for label, size in sizes.items():
            print(f"  {label:14} {size:7} ({size / full:.0%})")
    assert sizes["chat"] == 0 and sizes["consult"] < 0.2 * full and sizes["data_prep"] < 0.4 * full
    assert sizes["analysis"] < 0.4 * full and sizes["deep:model"] < 0.5 * full and sizes["deep:report"] < 0.6 * full


# --- end to end through the real openai client --------------------------------------------------
def test_first_analysis_request_offers_only_core_and_intent_groups(tmp_path):
    script = [
        completion(tool_calls=[{"id": "a1", "name": "tool_search", "arguments": '{"query": "趋势"}'}]),
        completion(tool_calls=[{"id": "a2", "name": "pca_analysis", "arguments": "{}"}]),  # no kind starts with it
        completion("Weight differs by group."),
    ]
    with FakeOpenAIServer(script) as server:
        settings, db, service, ws = setup(
            tmp_path,
            reference("rdatasets/PlantGrowth.csv"),
            lambda s, *_: OpenAICompatibleModel(s),
            llm_model="fake-model",
            llm_base_url=server.base_url,
            llm_api_key="k",
        )
        run_id = start_run(service, ws, "Does weight differ by group?")
        service.execute(run_id)
    assert len(server.requests) == 3
    first = {t["function"]["name"] for t in server.requests[0]["tools"]}
    lean_core = {"record_evidence", "run_python", "tool_search", "call_tool"}  # the rest via call_tool
    assert first == {
        n
        for n in starters("stats", "plot", registry=FULL_REGISTRY)
        if FULL_REGISTRY.get(n).group != "core" or n in lean_core
    }  # a lean array: the rest of core stays callable through call_tool, the other tools one tool_search away
    assert not first & group_names("ml", "timeseries", registry=FULL_REGISTRY)
    with db.session() as s:
        assert s.get(Run, run_id).intent == "analysis"
        refused = s.get(ToolCall, (run_id, "a2"))
        assert not refused.ok and refused.error["error"] in ("tool_not_exposed", "unknown_tool")
    assert server.requests[1]["tools"] == server.requests[0]["tools"]


# --- the stable prefix: provider prompt caches hit -------------------------------------------------
def test_the_stable_prefix_is_byte_identical_across_rounds(tmp_path):
    from app.agent.model.interface import ModelReply
    from tests.fakes import ScriptedModel

    model = ScriptedModel(
        [
            ModelReply(None, [call("describe_columns", "r1", columns=["weight"])]),
            ModelReply(None, [call("compare_groups", "r2", value_column="weight", group_column="group")]),
            ModelReply(None, [call("tool_search", "r3", query="normality test")]),
            ModelReply(None, [via("r4", "normality_test", {"value_column": "weight"})]),
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "r5",
                        claim="Weight differs by group",
                        method="one-way ANOVA",
                        tool_call_ids=["r2"],
                    )
                ],
            ),
            ModelReply("Weight differs by group."),
        ]
    )
    _settings, _db, service, ws = setup(tmp_path, reference("rdatasets/PlantGrowth.csv"), lambda *_: model)
    service.execute(start_run(service, ws, "Does weight differ by group?"))

    def dumps(value):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    assert len(model.requests) == 6
    assert len({dumps(r["messages"][0]) for r in model.requests}) == 1  # the system prompt never changes
    assert len({dumps(r["tools"]) for r in model.requests}) == 1  # nor the tools array, whatever was found
    assert "normality_test" not in names(model.requests[0]["tools"])
    seen = next(m for m in model.requests[4]["messages"] if m.get("tool_call_id") == "r4")["content"]
    assert "Shapiro" in seen or "normal" in seen.lower()  # call_tool ran the tool tool_search found


# --- a lean first request (issue 15: <= 12,000 characters with schemas, on real questions) ---------
def test_the_first_request_of_a_realistic_question_is_lean(tmp_path):
    """A long question over a 15-column table: the first request, as the client sends it."""
    from app.agent.model.interface import ModelReply
    from tests.fakes import ScriptedModel

    model = ScriptedModel([ModelReply("Rooms and the lower-status share matter most.")])
    _settings, _db, service, ws = setup(tmp_path, reference("rdatasets/MASS_Boston.csv"), lambda *_: model)
    service.execute(
        start_run(
            service,
            ws,
            (
                "Which neighbourhood factors are most strongly associated with the median home value (medv)? I care about "
                "rooms, crime, the pupil-teacher ratio and the lower-status share; how much does one extra room add once the "
                "others are held fixed?"
            ),
        )
    )
    request = model.requests[0]
    body = {"model": "m", "messages": request["messages"], "tools": request["tools"]}
    size = len(json.dumps(body, ensure_ascii=False, separators=(",", ":")))
    assert size <= 8_000, size  # issue 23: the first request <= 8,000 characters


def test_a_pointer_to_a_saved_output_comes_with_read_tool_output(tmp_path):
    """A result shortened on its way to the model names read_tool_output: that request offers it.
    Here the tool's text is short but the message (text + metrics) is over the limit."""
    from app.agent.model.interface import ModelReply
    from tests.fakes import ScriptedModel

    model = ScriptedModel(
        [
            ModelReply(None, [call("describe_columns", "c1", columns=["mpg", "wt", "hp"])]),
            ModelReply("The mean mpg is 20.09."),
        ]
    )
    _settings, _db, service, ws = setup(
        tmp_path, reference("rdatasets/mtcars.csv"), lambda *_: model, tool_result_truncate_chars=400
    )
    service.execute(start_run(service, ws, "Describe mpg, wt and hp across the cars."))
    second = model.requests[1]
    pointer = [m for m in second["messages"] if "read_tool_output" in str(m.get("content") or "")]
    assert pointer, "the result should have been shortened"
    assert second["tools"] == model.requests[0]["tools"]  # the array stays; read_tool_output is callable by name
    with _db.session() as s:
        assert s.get(Run, s.query(Run).one().id).status == "done"


def test_tool_search_reaches_the_model_whole(tmp_path):
    """Every match with its whole description (not the docstring's first line), and the result is not
    truncated on its way to the model however many matches it lists."""
    from app.agent.model.interface import ModelReply
    from tests.fakes import ScriptedModel

    model = ScriptedModel(
        [ModelReply(None, [call("tool_search", "s1", query="plot box chart outliers", limit=8)]), ModelReply("Done.")]
    )
    _settings, _db, service, ws = setup(tmp_path, reference("rdatasets/mtcars.csv"), lambda *_: model)
    service.execute(start_run(service, ws, "Does mpg differ by cyl?"))
    seen = next(m["content"] for m in model.requests[1]["messages"] if m.get("role") == "tool")
    assert "[truncated]" not in seen and "read_tool_output" not in seen
    listed = [line[2:].split(" ", 1)[0] for line in seen.split("\n") if line.startswith("- ")]
    assert len(listed) == 8
    for name in listed:
        assert " ".join(FULL_REGISTRY.get(name).description.split()) in seen, name


def test_tool_search_returns_callable_tools_with_their_schemas():
    """tool_search returns at most `limit` tools (3 by default), each with its full schema and
    callable at once: no second search is needed."""
    box = toolbox_for("What is the mean revenue?", registry=FULL_REGISTRY)
    before = box.schemas()
    result = box.execute(call("tool_search", "s1", query="compare two groups"))
    listed = result.payload["tools"]
    assert len(listed) == 3 and "compare_two_groups" in listed
    assert all(box.exposure.is_offered(n) for n in listed) and box.schemas() == before
    assert "tool_search its name first" not in result.text
    for name in listed:
        for argument in FULL_REGISTRY.get(name).parameters["properties"]:
            assert f"- {argument}:" in result.text


# --- issue 23: a prefix that stays ---------------------------------------------------------------
def wire_size(request: dict) -> int:
    body = {"model": "m", "messages": request["messages"], "tools": request["tools"]}
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")))


def test_every_request_of_a_run_repeats_the_previous_one_as_its_prefix(tmp_path):
    """tool_search, call_tool, record_evidence and the answer: the tools and the system prompt are the
    same on every request and each request's messages extend the previous request's messages."""
    from app.agent.model.interface import ModelReply
    from tests.fakes import ScriptedModel

    model = ScriptedModel(
        [
            ModelReply(None, [call("tool_search", "s1", query="outliers")]),
            ModelReply(None, [via("c1", "outlier_detection", {"value_column": "mpg", "method": "iqr"})]),
            ModelReply(None, [call("outlier_detection", "c2", value_column="hp")]),  # found: callable by name too
            ModelReply(
                None,
                [
                    call(
                        "record_evidence",
                        "e1",
                        claim="mpg has 1 IQR outlier",
                        method="IQR fences",
                        tool_call_ids=["c1"],
                    )
                ],
            ),
            ModelReply("mpg has one outlier by the IQR rule."),
        ]
    )
    _settings, db, service, ws = setup(tmp_path, reference("rdatasets/mtcars.csv"), lambda *_: model)
    run_id = start_run(service, ws, "How many mpg outliers are there by the IQR rule?")
    service.execute(run_id)
    requests = model.requests
    assert len(requests) == 5

    def dumps(value):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    assert len({dumps(r["tools"]) for r in requests}) == 1
    assert len({dumps(r["messages"][0]) for r in requests}) == 1
    for before, after in zip(requests, requests[1:]):
        assert dumps(after["messages"][: len(before["messages"])]) == dumps(before["messages"])
        assert len(after["messages"]) > len(before["messages"])
    assert wire_size(requests[0]) <= 8_000  # a single-statistic question's first request
    with db.session() as s:
        outliers = s.get(ToolCall, (run_id, "c1"))
        assert outliers.tool == "outlier_detection" and outliers.ok  # call_tool ran the tool found, under its id
        assert s.get(ToolCall, (run_id, "c2")).ok
        assert s.get(Run, run_id).status == "done"


def test_a_tool_neither_listed_nor_found_is_refused_with_a_hint():
    EXECUTED.clear()
    box = toolbox_for("What is the mean revenue?")
    box.schemas()
    for refused in (box.execute(call("probe_trend", "t1")), box.execute(via("t2", "probe_trend", {}))):
        assert refused.error["error"] == "tool_not_exposed"
        assert "tool_search" in refused.error["hint"] and "call_tool" in refused.error["hint"]
    assert EXECUTED == []
    bad = box.execute(ToolCallRequest("t3", "call_tool", {"arguments": {}}, "{}"))
    assert bad.error["error"] == "invalid_arguments"


def test_a_single_statistic_question_lists_a_minimal_set():
    listed = names(
        toolbox_for("Perform a Shapiro-Wilk test on mpg and report the p-value.", registry=FULL_REGISTRY).schemas()
    )
    # the harness's four and a description; the test itself is one tool_search away
    assert listed == {"record_evidence", "run_python", "tool_search", "call_tool", "describe_columns"}


@pytest.mark.parametrize("dates", [True, False])
def test_time_series_tools_are_offered_only_with_a_date_column(tmp_path, dates):
    from app.agent.model.interface import ModelReply
    from tests.fakes import ScriptedModel

    path = tmp_path / "sales.csv"
    days = [f"2024-{m:02d}-{d:02d}" for m in range(1, 13) for d in (1, 15)]
    rows = [(day if dates else str(i), 100 + 3 * i + (i % 4)) for i, day in enumerate(days)]
    path.write_text(("date" if dates else "order") + ",revenue\n" + "\n".join(f"{a},{b}" for a, b in rows) + "\n")
    model = ScriptedModel([ModelReply("Revenue rose.")])
    _settings, _db, service, ws = setup(tmp_path, path, lambda *_: model)
    service.execute(start_run(service, ws, "Forecast revenue for the next three months."))  # deep: every group
    offered = names(model.requests[0]["tools"])
    timeseries = group_names("timeseries", registry=FULL_REGISTRY)
    assert bool(offered & timeseries) is dates, offered


def test_metrics_are_not_repeated_when_the_text_shows_them():
    from app.agent.tools.toolbox import tool_message_content

    result = ToolResult(
        text="[data_profile]\nmpg  n 32  mean 20.09  max 33.9\n[evidence] recorded abc123",
        metrics={"n": 32, "mean": 20.090625, "max": 33.9, "evidence_id": "abc123", "duration_ms": 4},
    )
    content = tool_message_content(result)
    metrics = json.loads(content.split("[metrics]\n", 1)[1])
    # more precision where the text rounds (6 significant figures, as tables print); nothing shown twice
    assert metrics == {"mean": 20.0906}


def test_metrics_named_after_the_number_are_not_repeated():
    from app.agent.tools.toolbox import tool_message_content

    result = ToolResult(
        text="[insights]\n- 9 high and 0 low outliers.",
        metrics={"n_high": 9, "n_low": 0, "share": 0.008604206500956023},
    )
    metrics = json.loads(tool_message_content(result).split("[metrics]\n", 1)[1])
    assert metrics == {"share": 0.00860421}


def test_the_catalogs_chinese_words_are_read_when_a_query_may_meet_them() -> None:
    # an English query ranks the catalog by its Latin words alone, without jieba's dictionary; the
    # scores are those of the catalog read whole (every Chinese word read first)
    from app.agent.tools.tool_ranking import SEARCH_TOOL, CatalogRanking

    tools = [t for t in FULL_REGISTRY if t.name != SEARCH_TOOL]
    lazy, whole = CatalogRanking(tools), CatalogRanking(tools)
    whole._read_chinese()
    for query in ("compare groups", "outliers by region", "which store sold most", "p-value"):
        assert lazy.lexical_scores(query).tolist() == whole.lexical_scores(query).tolist(), query
    assert lazy._with_han  # not read yet
    for query in ("top 5", "排名最高", "2024 dates", "去除重复行"):  # a digit of 2024年1月5日, Chinese words
        assert lazy.lexical_scores(query).tolist() == whole.lexical_scores(query).tolist(), query
    assert not lazy._with_han
    assert lazy.rarity == whole.rarity and lazy.keyword_words == whole.keyword_words


def test_a_resumed_turn_keeps_the_tools_it_already_ran_callable():
    """A clarification pause rebuilds the turn in a new process; the tools the turn already ran, by name or
    through call_tool, stay callable by their exact names (the first process's note_call died with it), while
    a call that failed makes nothing callable."""
    from app.agent.tools.results import CallResults

    records = CallResults()
    records.keep("a", ToolResult(text="ran"))
    records.keep("b", ToolResult(text="ran"))
    records.keep("c", ToolResult.failure({"error": "tool_not_exposed", "message": "no"}))
    opening = [
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "a", "function": {"name": "paired_test", "arguments": "{}"}},
                {"id": "b", "function": {"name": "call_tool", "arguments": json.dumps({"name": "probe_forecast"})}},
                {"id": "c", "function": {"name": "probe_cluster_segments", "arguments": "{}"}},
            ],
        }
    ]
    assert records.called_before(opening) == ["paired_test", "probe_forecast"]
    analysis = toolbox_for("不同地区的收入有差异吗？")
    analysis.schemas()
    analysis.exposure.request_tools(records.called_before(opening))
    again = analysis.execute(call("paired_test", "p2"))  # refused before the turn's calls were read back
    assert (again.error or {}).get("error") != "tool_not_exposed"
