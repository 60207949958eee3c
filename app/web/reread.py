"""Changing how a question was read, in one click (issue 24 point 4): each role of the run's reading
(the measure, the groups, the filter, the kind of answer, the N of a ranking) is a chip on the answer; choosing
another value asks the same question again, in the same workspace, with that role pinned.

The choice travels the way every clarification answer does: an answered Question on the role's topic
(`role.<key>.outcome`, `role.<key>.filter`, `goal.<key>` …) is a confirmed definition of the workspace, which the new run
reads like any other answer (the built-in analyst's plan takes the user's column, "answer"). So the
pin also holds when the same question is asked again, as an answered clarification does."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from app.analyst import pinned_answer
from app.db.models import Question, utcnow
from app.reports.builder import reading_entry
from app.runs import TooManyRuns
from app.web.deps import CommittingRoute, DbSessionDep, PageDep, RunDep, RunServiceDep, SettingsDep
from app.web.i18n import t
from app.web.pages import workspace_context

router = APIRouter(tags=["pages"], route_class=CommittingRoute)


@router.post("/runs/{run_id}/reread", name="reread")
def reread(
    request: Request,
    run: RunDep,
    session: DbSessionDep,
    runs: RunServiceDep,
    settings: SettingsDep,
    page: PageDep,
    role: Annotated[str, Form(max_length=20)] = "",
    value: Annotated[str, Form(max_length=300)] = "",
) -> Response:
    """Ask the run's question again with one role of its reading pinned to the value the user chose;
    then show the new run (it streams like any asked question). A value the reading did not offer
    changes nothing: back to the run as it was."""
    target = request.url_for("workspace_page", ws=run.workspace_id)
    reading = reading_entry(run.state or {}) or {}
    zh = run.language == "zh"
    pin = pinned_answer(reading, role, value.strip(), zh) if run.question else None
    if pin is None:
        return RedirectResponse(f"{target}?run={run.id}#run", status_code=303)
    try:
        # the run it re-reads already answered in the language it was asked in (the page's, when asked
        # on a page): the re-run keeps it, so a chip never switches the answer's language
        again = runs.create(session, run.workspace, run.question or "", run.language or page.lang)
    except TooManyRuns as exc:
        error = t("too_many_runs", page.lang, n=exc.limit)
        context = workspace_context(session, settings, run.workspace, page.lang, run.id, ask_error=error)
        return page.render("workspace.html", context, status_code=429)
    session.add(
        Question(
            workspace_id=run.workspace_id,
            run_id=again.id,
            kind="single",
            question=pin["question"],
            options=[{"label": o, "description": ""} for o in _options(reading, role)],
            reason="",
            topic=pin["topic"],
            answer=pin["answer"],
            answered_at=utcnow(),
        )
    )
    session.commit()  # the worker thread reads the run and the answer in its own session
    runs.submit(again.id)
    return RedirectResponse(f"{target}?run={again.id}#run", status_code=303)


def _options(reading: dict[str, object], role: str) -> list[str]:
    """The values the chip offered: its own and the other ones (the answered question lists them)."""
    for entry in reading.get("roles") or []:  # type: ignore[attr-defined]
        if isinstance(entry, dict) and entry.get("role") == role:
            return [str(entry.get("value") or ""), *[str(o) for o in entry.get("options") or []]]
    return []
