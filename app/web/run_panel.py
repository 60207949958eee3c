"""What the run panel shows (`_run.html`, in the workspace page or alone): the steps, the plan, the
evidence, the open question, the answer and the report's downloads, gathered from the run's records."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from markupsafe import Markup
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.agent import evidence_dict, task_dict, unmasked
from app.analyst import as_people_write, shared_grain, sheet_words_of
from app.config import Settings
from app.db.models import Event, Evidence, Question, Report, Run, Task, ToolCall
from app.db.pseudonyms import workspace_book
from app.reports.builder import HARNESS_TOOLS, is_harness_tool, reading_entry
from app.reports.report_parts import TOOLS_ROW_LABELS, metric_name_shown, reproduction_summary, tools_row_labels
from app.reports.safe_markdown import render_markdown
from app.runs import ACTIVE_STATUSES
from app.understanding import in_spoken_names, tables_spoken_names
from app.web.answer_result import answer_result
from app.web.i18n import t
from app.web.number_check import check_view

ACTIVE = ACTIVE_STATUSES
# Markdown comes as a zip with its figures/ beside it: a lone .md file's images would not open elsewhere.
DOWNLOADS = (("HTML", "html"), ("PDF", "pdf"), ("Word", "docx"), ("Markdown (.zip)", "zip"), ("JSON", "json"))


def run_context(session: Session, run: Run, lang: str, settings: Settings | None = None) -> dict[str, Any]:
    """The panel's content; with `settings`, the steps, plan, tasks and evidence show the real values
    in place of the pseudonyms the model wrote (the owner's page; the records keep them, privacy.py)."""
    context = _run_context(session, run, lang)
    if settings is not None:
        keys = ("analysis_plan", "reading", "steps", "figures", "tasks", "evidence", "calls")
        shown = {key: context[key] for key in keys}
        if question := context["question"]:  # the options a model wrote name pseudonyms: the user picks real ones
            shown["question"] = {
                name: getattr(question, name) for name in ("id", "kind", "question", "options", "reason")
            }
        context.update(
            unmasked(shown, workspace_book(session, settings, run.workspace_id))
        )  # the book read once a render
    # the answer card's table, chart and "how sure", from the evidence its headline states (real values)
    context["result"] = (
        answer_result(
            context["evidence"],
            run.answer,
            context["calls"],
            context["steps"],
            lang,
            context["checks"],
            context["reading"],
            spoken_in(session, run),
        )
        if run.answer
        else None
    )
    return context


def _run_context(session: Session, run: Run, lang: str) -> dict[str, Any]:
    events = list(session.scalars(select(Event).where(Event.run_id == run.id).order_by(Event.id)))
    in_own_words = sheet_words_shown(session, run)
    in_page_words = sheet_words_shown(session, run, lang)  # the evidence's row names, as the page's language says them
    # a merged header's column by its leaf ("销售额", not "销售情况 / 销售额"), as the answer and the card say it
    spoken = spoken_in(session, run)
    steps = [
        {
            **step,
            "interpretation": in_spoken_names(in_own_words(step.get("interpretation") or ""), spoken),
            "figures": [
                {**f, "caption": in_spoken_names(str(f.get("caption") or ""), spoken)}
                for f in step.get("figures") or []
            ],
        }
        for step in steps_from_events(events)
    ]
    report = session.scalars(select(Report).where(Report.run_id == run.id).order_by(Report.created_at.desc())).first()
    unverified = list((report.content or {}).get("unverified_numbers", [])) if report else []
    state = run.state or {}
    headline, more = split_answer(run.answer or "")
    verification = state.get("verification") or {}
    return {
        "run": run,
        "analysis_plan": state.get("plan"),
        "reading": reading_entry(state),  # named by the question or assumed: its own mark, apart from "checked"
        "checks": {r["evidence_id"]: r["status"] for r in verification.get("results", []) if r.get("evidence_id")},
        "checks_status": verification.get("status"),
        "active": run.status in ACTIVE,
        "steps": steps,
        "quiet_tools": sorted(HARNESS_TOOLS),
        "figures": [f for step in steps for f in step["figures"]],
        "tasks": [
            task_dict(t)
            for t in session.scalars(select(Task).where(Task.run_id == run.id).order_by(Task.created_at))
            if t.status != "deleted"
        ],
        "evidence": [
            {
                **item,
                # the rows' dates as the answer words them ("2025年1月", not "2025-01"): the card's table too
                "metrics": {
                    metric_name_shown(str(k), in_page_words): in_page_words(v) if isinstance(v, str) else v
                    for k, v in (item.get("metrics") or {}).items()
                },
                TOOLS_ROW_LABELS: tools_row_labels(item.get("metrics") or {}, in_page_words),
            }
            for item in (
                evidence_dict(e)
                for e in session.scalars(
                    select(Evidence).where(Evidence.run_id == run.id).order_by(Evidence.created_at)
                )
            )
        ],
        # the analyses' arguments by call id: the column a result's rows are the values of
        "calls": {
            call_id: {"tool": tool, "arguments": arguments or {}}
            for call_id, tool, arguments in session.execute(  # not the results' texts: only what names the rows
                select(ToolCall.id, ToolCall.tool, ToolCall.arguments).where(ToolCall.run_id == run.id)
            )
        },
        "question": open_question(session, run.id),
        # the headline (with the reading) apart from the supporting findings and caveats: the card puts
        # the result's chart and table between them
        "answer_html": answer_html(headline, unverified, t("unverified", lang)) if headline else None,
        "answer_more_html": answer_html(more, unverified, t("unverified", lang)) if more else None,
        "unverified": unverified,
        # a run that had no data to read has nothing to download or share
        "has_report": report is not None and bool((report.content or {}).get("datasets")),
        "reproduction": reproduction_summary(report.content or {}, lang) if report is not None else None,
        "number_check": check_view(session, run, lang),
        "downloads": DOWNLOADS,
        "last_event_id": events[-1].id if events else 0,
        "elapsed_s": elapsed_seconds(run),
        "elapsed_label": elapsed_label(elapsed_seconds(run), lang),
    }


def open_question(session: Session, run_id: str) -> Question | None:
    return session.scalars(
        select(Question)
        .where(Question.run_id == run_id, Question.answer.is_(None))
        .order_by(Question.created_at.desc())
    ).first()


def spoken_in(session: Session, run: Run) -> dict[str, str]:
    """Each column of the workspace's tables → what people call it (a merged header's leaf, "销售额" for
    "销售情况 / 销售额"), as the analyst's answer names it."""
    from app.workspaces import active_datasets

    return tables_spoken_names((d.info or {}).get("columns") or [] for d in active_datasets(session, run.workspace_id))


def sheet_words_shown(session: Session, run: Run, lang: str | None = None) -> Callable[[str], str]:
    """Text of the run's steps and evidence as the answer words it: True/False of a yes/no column in the
    sheet's own words (是/否) and dates as people write them (app/analyst/sheet_words.py), in `lang`
    (else the run's language)."""
    from app.workspaces import active_datasets

    infos = [d.info or {} for d in active_datasets(session, run.workspace_id)]
    words, zh = sheet_words_of(c for info in infos for c in info.get("columns", [])), (lang or run.language) == "zh"
    grain = shared_grain(infos)  # a monthly table's dates as months ("May 2024", not "2024-05-01")
    return lambda text: as_people_write(text, zh, words, None, grain) if text else text


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
            steps[key] = {
                "id": key,
                "tool": data.get("tool", ""),
                "running": True,
                "ok": None,
                "interpretation": "",
                "error": None,
                "figures": [],
            }
        elif event.kind == "tool_finished":
            step = steps.setdefault(key, {"id": key, "tool": data.get("tool", "")})
            step.update(
                running=False,
                ok=bool(data.get("ok")),
                interpretation=data.get("interpretation") or "",
                error=error_text(data.get("error")),
                figures=list(data.get("figures") or []),
            )
    return list(steps.values())


def error_text(error: Any) -> str | None:
    if not error:
        return None
    if isinstance(error, dict):
        return " ".join(str(error.get(k)) for k in ("message", "hint") if error.get(k)) or str(error)
    return str(error)


def elapsed_seconds(run: Run) -> float:
    """Seconds from the run's start to its end (or now, while it runs)."""
    start, end = _aware(run.created_at), _aware(run.finished_at) or datetime.now(UTC)
    return max(0.0, (end - start).total_seconds()) if start else 0.0


def elapsed_label(seconds: float, lang: str) -> str:
    """How long a run took, as the panel shows it: whole seconds ("12 s"), and under a second in words
    of the page's language ("<1 s", "不到 1 秒"), not "0 s" (static/app.js's formatSeconds counts on alike)."""
    return t("elapsed_under_second", lang) if seconds < 1 else f"{int(seconds)} s"


def _aware(moment: datetime | None) -> datetime | None:
    # SQLite hands back naive datetimes; they were written in UTC.
    if moment is not None and moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment


# --- the answer: model text is escaped before markdown, so it can never inject HTML ---------
def split_answer(text: str) -> tuple[str, str]:
    """The answer's opening (the reading and the headline) and the rest from its first section heading
    on (supporting findings, caveats); an answer without a heading is all opening."""
    lines = text.split("\n")
    at = next((n for n, line in enumerate(lines) if n > 0 and re.match(r"#{1,6} ", line)), len(lines))
    bold = next((n for n, line in enumerate(lines[:at]) if "**" in line), None)
    if bold is not None:  # the headline's paragraph ends at the first blank line after it
        at = next((n for n in range(bold, at) if not lines[n].strip()), at)
    return "\n".join(lines[:at]).strip(), "\n".join(lines[at:]).strip()


def answer_html(text: str, unverified: list[str] | None = None, note: str = "") -> Markup:
    return render_markdown(text, images="local", mark=unverified or [], mark_title=note)
