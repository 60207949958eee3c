"""Asking a question from the page, answering the run's question, and the run view (full page or the
`_run.html` fragment, gathered by app/web/run_panel.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy.orm import Session

from app.agent import answer_question, resume_after_answer
from app.db.models import Question
from app.runs import TooManyRuns
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
from app.web.pages import workspace_context
from app.web.run_panel import run_context

router = APIRouter(tags=["pages"], route_class=CommittingRoute)


@router.post("/workspaces/{ws}/ask", name="ask")
def ask(
    request: Request,
    workspace: WorkspaceDep,
    session: DbSessionDep,
    runs: RunServiceDep,
    settings: SettingsDep,
    page: PageDep,
    text: Annotated[str, Form(max_length=4000)] = "",
) -> Response:
    target = request.url_for("workspace_page", ws=workspace.id)
    if not text.strip():
        return RedirectResponse(target, status_code=303)
    try:
        # the page's language is the one its user reads: the question card, the answer and the report
        # follow it, whatever language the question is written in (its words are read either way)
        run = runs.create(session, workspace, text.strip(), page.lang)
    except TooManyRuns as exc:
        context = workspace_context(
            session, settings, workspace, page.lang, ask_error=t("too_many_runs", page.lang, n=exc.limit), asked=text
        )
        return page.render("workspace.html", context, status_code=429)
    session.commit()  # the worker thread reads the run in its own session
    runs.submit(run.id)
    return RedirectResponse(f"{target}?run={run.id}#run", status_code=303)


def question_language(session: Session, workspace_id: str, text: str, default: str) -> str:
    """The language of a question asked through the API (no page to follow): its own words decide, not
    the column names in it ("Does 收入 differ by 地区?" is English); with nothing else to go by, `default`.
    The answer, its clarification questions and the report follow it. On the page, the page's language
    decides (ask, reread): a zh page shows a Chinese card and answer to an English question."""
    from app.understanding import question_language as language_of
    from app.workspaces import active_datasets

    names = [
        str(c.get("name") or "")
        for d in active_datasets(session, workspace_id)
        for c in (d.info or {}).get("columns", [])
    ]
    return language_of(text, names, default)


@router.post("/runs/{run_id}/answer", name="answer_question")
def answer(
    request: Request,
    run: RunDep,
    session: DbSessionDep,
    runs: RunServiceDep,
    question_id: Annotated[str, Form(max_length=100)] = "",
    answer: Annotated[list[str], Form()] = [],  # noqa: B006 (FastAPI form default)
) -> Response:
    """The run panel's question form: store the answer (a confirmed definition), resume the run."""
    question = session.get(Question, question_id)
    values = [a.strip() for a in answer if a and a.strip()]
    if question is not None and question.run_id == run.id and question.answer is None and values:
        answer_question(session, question, values if question.kind == "multi" else values[0])
        resume_after_answer(session, runs, run)  # clarify.py
    target = request.url_for("workspace_page", ws=run.workspace_id)
    return RedirectResponse(f"{target}?run={run.id}#run", status_code=303)


@router.get("/runs/{run_id}", name="run_page")
def run_page(request: Request, run: RunDep, session: DbSessionDep, settings: SettingsDep, page: PageDep) -> Response:
    if wants_partial(request):
        return page.render("_run.html", {"current": run_context(session, run, page.lang, settings)})
    return page.render("workspace.html", workspace_context(session, settings, run.workspace, page.lang, run.id))
