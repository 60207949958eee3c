"""Asking a question from the page, and the run view (full page or the `_run.html` fragment)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response
from markupsafe import Markup
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.agent.clarify import answer_question, resume_after_answer
from app.agent.evidence import evidence_dict
from app.agent.tasks import task_dict
from app.db.models import Event, Evidence, Question, Report, Run, Task, Workspace
from app.reports.builder import HARNESS_TOOLS, is_harness_tool
from app.reports.report_parts import reproduction_summary
from app.reports.safe_markdown import render_markdown
from app.runs import ACTIVE_STATUSES, TooManyRuns
from app.web.deps import (
    CommittingRoute,
    DbSessionDep,
    PageDep,
    RunDep,
    RunServiceDep,
    SettingsDep,
    WorkspaceDep,
    wants_partial,
)
from app.web.i18n import t

router = APIRouter(tags=["pages"], route_class=CommittingRoute)

ACTIVE = ACTIVE_STATUSES
# Markdown comes as a zip with its figures/ beside it: a lone .md file's images would not open elsewhere.
DOWNLOADS = (("HTML", "html"), ("PDF", "pdf"), ("Word", "docx"), ("Markdown (.zip)", "zip"), ("JSON", "json"))


@router.post("/workspaces/{ws}/ask", name="ask")
def ask(request: Request, workspace: WorkspaceDep, session: DbSessionDep, runs: RunServiceDep, settings: SettingsDep,
        page: PageDep, text: Annotated[str, Form(max_length=4000)] = "") -> Response:
    target = request.url_for("workspace_page", ws=workspace.id)
    if not text.strip():
        return RedirectResponse(target, status_code=303)
    try:
        run = runs.create(session, workspace, text.strip(), question_language(session, workspace.id, text, page.lang))
    except TooManyRuns as exc:
        from app.web.workspaces import workspace_context

        context = workspace_context(session, settings, workspace, page.lang,
                                    ask_error=t("too_many_runs", page.lang, n=exc.limit), asked=text)
        return page.render("workspace.html", context, status_code=429)
    session.commit()  # the worker thread reads the run in its own session
    runs.submit(run.id)
    return RedirectResponse(f"{target}?run={run.id}#run", status_code=303)


def question_language(session: Session, workspace_id: str, text: str, ui_lang: str) -> str:
    """The language of a question asked on the page: its own words decide, not the column names in it
    ("Does 收入 differ by 地区?" on the English page is English); with nothing else to go by, the page's.
    The answer, its clarification questions and the report follow it."""
    from app.agent.prompts import detect_language
    from app.workspaces import active_datasets

    names = sorted({str(c.get("name") or "") for d in active_datasets(session, workspace_id)
                    for c in (d.info or {}).get("columns", [])}, key=len, reverse=True)
    words = text
    for name in names:
        if name.strip():
            words = words.replace(name, " ")
    return detect_language(words, ui_lang)


@router.post("/runs/{run_id}/answer", name="answer_question")
def answer(request: Request, run: RunDep, session: DbSessionDep, runs: RunServiceDep,
           question_id: Annotated[str, Form(max_length=100)] = "",
           answer: Annotated[list[str], Form()] = []) -> Response:  # noqa: B006 (FastAPI form default)
    """The run panel's question form: store the answer (a confirmed definition), resume the run."""
    question = session.get(Question, question_id)
    values = [a.strip() for a in answer if a and a.strip()]
    if question is not None and question.run_id == run.id and question.answer is None and values:
        answer_question(session, question, values if question.kind == "multi" else values[0])
        resume_after_answer(session, runs, run)  # clarify.py
    target = request.url_for("workspace_page", ws=run.workspace_id)
    return RedirectResponse(f"{target}?run={run.id}#run", status_code=303)


@router.get("/runs/{run_id}", name="run_page")
def run_page(request: Request, run: RunDep, session: DbSessionDep, settings: SettingsDep,
             page: PageDep) -> Response:
    if wants_partial(request):
        return page.render("_run.html", {"current": run_context(session, run, page.lang)})
    from app.web.workspaces import workspace_context  # the two views share the page

    workspace = session.get(Workspace, run.workspace_id)
    return page.render("workspace.html", workspace_context(session, settings, workspace, page.lang, run.id))


# --- gathering what the run panel shows -----------------------------------------------------
def run_context(session: Session, run: Run, lang: str) -> dict[str, Any]:
    events = list(session.scalars(select(Event).where(Event.run_id == run.id).order_by(Event.id)))
    steps = steps_from_events(events)
    report = session.scalars(select(Report).where(Report.run_id == run.id)
                             .order_by(Report.created_at.desc())).first()
    unverified = list((report.content or {}).get("unverified_numbers", [])) if report else []
    state = run.state or {}
    verification = state.get("verification") or {}
    return {
        "run": run,
        "analysis_plan": state.get("plan"),
        "checks": {r["evidence_id"]: r["status"] for r in verification.get("results", []) if r.get("evidence_id")},
        "checks_status": verification.get("status"),
        "active": run.status in ACTIVE,
        "steps": steps,
        "quiet_tools": sorted(HARNESS_TOOLS),
        "figures": [f for step in steps for f in step["figures"]],
        "tasks": [task_dict(t) for t in session.scalars(select(Task).where(Task.run_id == run.id)
                                                         .order_by(Task.created_at)) if t.status != "deleted"],
        "evidence": [evidence_dict(e) for e in session.scalars(select(Evidence).where(Evidence.run_id == run.id)
                                                                .order_by(Evidence.created_at))],
        "question": open_question(session, run.id),
        "answer_html": answer_html(run.answer, unverified, t("unverified", lang)) if run.answer else None,
        "unverified": unverified,
        # a run that had no data to read has nothing to download or share
        "has_report": report is not None and bool((report.content or {}).get("datasets")),
        "reproduction": reproduction_summary(report.content or {}, lang) if report is not None else None,
        "downloads": DOWNLOADS,
        "last_event_id": events[-1].id if events else 0,
        "elapsed_s": elapsed_seconds(run),
    }


def open_question(session: Session, run_id: str) -> Question | None:
    return session.scalars(select(Question).where(Question.run_id == run_id, Question.answer.is_(None))
                           .order_by(Question.created_at.desc())).first()


def steps_from_events(events: list[Event]) -> list[dict[str, Any]]:
    """Analysis steps in order: started ones run until their `tool_finished` arrives. Harness
    tools (tasks, evidence) are left out: the plan and the evidence cards show what they did."""
    steps: dict[str, dict[str, Any]] = {}
    for event in events:
        data = event.data or {}
        if is_harness_tool(str(data.get("tool", ""))):
            continue
        key = str(data.get("id") or event.id)
        if event.kind == "tool_started":
            steps[key] = {"id": key, "tool": data.get("tool", ""), "running": True, "ok": None,
                          "interpretation": "", "error": None, "figures": []}
        elif event.kind == "tool_finished":
            step = steps.setdefault(key, {"id": key, "tool": data.get("tool", "")})
            step.update(running=False, ok=bool(data.get("ok")), interpretation=data.get("interpretation") or "",
                        error=error_text(data.get("error")), figures=list(data.get("figures") or []))
    return list(steps.values())


def error_text(error: Any) -> str | None:
    if not error:
        return None
    if isinstance(error, dict):
        return " ".join(str(error.get(k)) for k in ("message", "hint") if error.get(k)) or str(error)
    return str(error)


def elapsed_seconds(run: Run) -> int:
    start, end = _aware(run.created_at), _aware(run.finished_at) or datetime.now(timezone.utc)
    return max(0, int((end - start).total_seconds())) if start else 0


def _aware(moment: datetime | None) -> datetime | None:
    # SQLite hands back naive datetimes; they were written in UTC.
    if moment is not None and moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment


# --- the answer: model text is escaped before markdown, so it can never inject HTML ---------
def answer_html(text: str, unverified: list[str] | None = None, note: str = "") -> Markup:
    return render_markdown(text, images="local", mark=unverified or [], mark_title=note)
