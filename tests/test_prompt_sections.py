"""The intent chooses the system prompt's sections: a greeting carries no data or evidence rules."""

from app.agent.model.interface import ModelReply
from tests.factories import SAMPLES, setup, start_run
from tests.fakes import ScriptedModel


def first_system_prompt(tmp_path, question):
    model = ScriptedModel([ModelReply("ok")])
    settings, db, service, ws = setup(tmp_path, SAMPLES / "retail_sales.xlsx", lambda *_: model)
    service.execute(start_run(service, ws, question))
    return model.requests[0]["messages"][0]["content"], model.requests[0]["tools"]


def test_a_greeting_gets_a_short_prompt_and_no_tools(tmp_path):
    prompt, tools = first_system_prompt(tmp_path, "你好")
    assert tools == []
    assert 'source="workspace-datasets"' not in prompt and "record_evidence" not in prompt
    assert "Chinese" in prompt


def test_an_analysis_gets_data_planning_and_evidence_rules(tmp_path):
    prompt, tools = first_system_prompt(tmp_path, "Does revenue differ by region?")
    assert 'source="workspace-datasets"' in prompt and "Revenue (number" in prompt
    assert "record_evidence" in prompt and "task_create" in prompt
    assert "Priority of instructions" in prompt or "priority" in prompt.lower()
    assert tools


def test_the_model_is_told_the_sheet_read_and_the_files_other_sheets():
    """A question may name another sheet of the book ("只看二店的"): the model is told which sheet each table is
    and which sheets of its file were not loaded, so it can say so rather than answer about the wrong one."""
    from app.agent.context.tiers import data_block

    block = data_block(
        [
            {"name": "stores", "sheet": "一店", "other_sheets": ["二店"], "rows": 18, "columns": []},
            {"name": "b", "rows": 3},
        ]
    )
    assert (
        "- stores (sheet 一店; other sheets of its file, not loaded (select_sheet reads one, with preview=true only looks): 二店): 18 rows"
        in block
    )
    assert "- b: 3 rows" in block
