"""report.json for a finished run (CONTRACT.md "report.json"): the answer, the evidence behind it,
the plan, the figures, the tool calls, and the numbers in the answer that nothing backs.

The result is plain JSON data (no numpy types, no datetimes): it is stored in `Report.content`,
written as report.json and rendered by `app.reports.render`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Dataset, Evidence, Run, Task, ToolCall
from app.ingest.warnings_text import warning_in
from app.numbers import Written, answer_numbers, backing_values, unverified_numbers  # noqa: F401 (re-exported)
from app.translations import CATALOG
from app.workspaces import active_datasets

# Tools of the harness itself: they plan, record and navigate, they do not analyse data.
HARNESS_TOOLS = frozenset(
    {
        "task_create",
        "task_update",
        "task_get",
        "task_list",
        "record_evidence",
        "retract_evidence",
        "record_analysis_plan",
        "ask_user_question",
        "tool_search",
        "call_tool",
        "search_knowledge",
        "compact_context",
        "read_tool_output",
        "list_datasets",
    }
)


def is_harness_tool(name: str) -> bool:
    return name in HARNESS_TOOLS or name.startswith("task_")


# --------------------------------------------------------------------------------------------
# JSON hygiene
# --------------------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """A JSON-serialisable copy: numpy scalars to Python, NaN/inf to None, tuples to lists."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [plain(v) for v in value]
    if isinstance(value, datetime):
        return _iso(value)
    if hasattr(value, "item") and callable(value.item):  # numpy / pandas scalars
        try:
            return plain(value.item())
        except (TypeError, ValueError):
            pass
    if hasattr(value, "tolist"):
        return plain(value.tolist())
    return str(value)


def _iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    if moment.tzinfo is None:  # SQLite hands back naive datetimes: they were stored as UTC
        moment = moment.replace(tzinfo=UTC)
    return moment.isoformat()


# --------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------

_TEXT = {k.removeprefix("report_note."): v for k, v in CATALOG.items() if k.startswith("report_note.")}


def _t(key: str, language: str, **fields: Any) -> str:
    entry = _TEXT[key]
    return (entry.get(language) or entry["en"]).format(**fields)


def dataset_entry(dataset: Dataset) -> dict[str, Any]:
    info = dataset.info or {}
    return {
        "name": dataset.name,
        "file": dataset.file_name,
        "sheet": dataset.sheet,
        "rows": int(dataset.rows or 0),
        "columns": [
            # a yes/no column's own words (是/否): the renderings show its groups so (in_sheet_words)
            {"name": str(c.get("name")), "type": c.get("type")} | ({"words": c["words"]} if c.get("words") else {})
            for c in info.get("columns", [])
            if isinstance(c, dict)
        ],
    } | ({"grain": info["grain"]} if info.get("grain") else {})  # a monthly table's dates as months (in_sheet_words)


def evidence_entry(item: Evidence) -> dict[str, Any]:
    return plain(
        {
            "id": item.id,
            "claim": item.claim,
            "method": item.method or "",
            "result_summary": item.result_summary or "",
            "metrics": dict(item.metrics or {}),
            "sample_size": item.sample_size,
            "confidence": item.confidence or "medium",
            "limitations": [str(x) for x in (item.limitations or [])],
            "tool_call_ids": [str(x) for x in (item.tool_call_ids or [])],
        }
    )


def task_entry(task: Task) -> dict[str, Any]:
    return {
        "id": task.id,
        "subject": task.subject,
        "status": task.status,
        "completed_by": task.completed_by,
        "evidence_id": task.evidence_id,
        "result_summary": task.result_summary,
        "confidence": task.confidence,
        "blocked_by": [str(x) for x in (task.blocked_by or [])],
    }


def tool_call_entry(call: ToolCall) -> dict[str, Any]:
    entry = {
        "id": call.id,
        "tool": call.tool,
        "arguments": plain(dict(call.arguments or {})),
        "ok": bool(call.ok),
        "duration_ms": float(call.duration_ms or 0.0),
    }
    if not call.ok and call.error:
        entry["error"] = plain({k: call.error.get(k) for k in ("error", "message") if k in call.error})
    return entry


def figure_entries(calls: list[ToolCall], evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    cited_by: dict[str, str] = {}
    for item in evidence:
        for call_id in item["tool_call_ids"]:
            cited_by.setdefault(call_id, item["id"])
    figures = []
    for call in calls:
        for figure in call.figures or []:
            if isinstance(figure, str):
                figure = {"path": figure, "caption": ""}
            if not isinstance(figure, dict) or not figure.get("path"):
                continue
            entry = {"path": str(figure["path"]), "caption": str(figure.get("caption") or ""), "tool_call_id": call.id}
            if call.id in cited_by:
                entry["evidence_id"] = cited_by[call.id]
            figures.append(entry)
    return figures


def _dataset_backing(datasets: list[Dataset]) -> list[Any]:
    """Facts known from ingestion: row counts, column statistics (not the cell preview)."""
    values: list[Any] = []
    for dataset in datasets:
        info = dataset.info or {}
        values.append(dataset.rows)
        values.append(len(info.get("columns", [])))
        values.append({k: v for k, v in info.items() if k not in ("preview", "columns", "warnings")})
        values.append(info.get("columns", []))
    return values


def _distinct(items: Iterable[str]) -> list[str]:
    seen, out = set(), []
    for item in items:
        item = (item or "").strip()
        if item and item.lower() not in seen:
            seen.add(item.lower())
            out.append(item)
    return out


def _backing(
    calls: list[ToolCall], evidence: list[dict[str, Any]], tasks: list[Task], datasets: list[Dataset], run: Run
) -> tuple[list[str], list[Any], list[str]]:
    """What may back a number in the answer: tool outputs, evidence, dataset facts; and the ids to ignore.
    The record_evidence call of evidence that no longer stands (superseded or retracted) backs nothing:
    a number the claim check flagged, in a claim the model then withdrew, would otherwise pass in the answer."""
    standing = {e["id"] for e in evidence}
    calls = [
        c for c in calls if not (c.tool == "record_evidence" and (c.metrics or {}).get("evidence_id") not in standing)
    ]
    texts = [call.result_text or "" for call in calls] + [call.interpretation or "" for call in calls]
    texts += [e["claim"] for e in evidence] + [e["result_summary"] for e in evidence]
    texts += [run.question or ""] + [e["method"] for e in evidence]  # numbers the user or the method gave
    values: list[Any] = [call.metrics or {} for call in calls] + [e["metrics"] for e in evidence]
    values += [call.arguments or {} for call in calls]  # thresholds, splits, run_python's code
    values += [e["sample_size"] for e in evidence] + _dataset_backing(datasets)
    ids = [e["id"] for e in evidence] + [c.id for c in calls] + [t.id for t in tasks] + [d.id for d in datasets]
    ids += [run.id, run.workspace_id]
    return texts, values, ids


def _run_rows(session: Session, run: Run) -> tuple[list[Dataset], list[Evidence], list[Task], list[ToolCall]]:
    """The run's datasets, standing evidence, tasks and tool calls. Evidence the model superseded or
    retracted is no finding of the report (its record_evidence call stays in the trace)."""
    datasets = active_datasets(session, run.workspace_id)  # ready ones only, not a file still loading
    withdrawn = set(((run.state or {}).get("verification") or {}).get("withdrawn") or {})
    evidence_rows = [
        e
        for e in session.scalars(select(Evidence).where(Evidence.run_id == run.id).order_by(Evidence.created_at))
        if e.id not in withdrawn
    ]
    tasks = list(
        session.scalars(select(Task).where(Task.run_id == run.id, Task.status != "deleted").order_by(Task.created_at))
    )
    calls = list(session.scalars(select(ToolCall).where(ToolCall.run_id == run.id).order_by(ToolCall.created_at)))
    return datasets, evidence_rows, tasks, calls


def run_backing(session: Session, run: Run) -> tuple[list[str], list[Any], list[str]]:
    """The backing of the run's answer, as `build_report` computes it (used by the final-answer check)."""
    datasets, evidence_rows, tasks, calls = _run_rows(session, run)
    return _backing(calls, [evidence_entry(e) for e in evidence_rows], tasks, datasets, run)


def build_report(session: Session, run: Run) -> dict[str, Any]:
    """The report.json object of a run (normally a finished one)."""
    language = run.language if run.language in ("zh", "en") else "en"
    datasets, evidence_rows, tasks, calls = _run_rows(session, run)
    evidence = [evidence_entry(e) for e in evidence_rows]
    answer = run.answer or ""

    texts, values, ids = _backing(calls, evidence, tasks, datasets, run)
    unverified = unverified_numbers(answer, texts, values, ignore_strings=ids)

    warnings: list[str] = []
    for dataset in datasets:
        prefix = f"{dataset.file_name}: " if len(datasets) > 1 else ""
        warnings += [prefix + warning_in(str(w), language) for w in (dataset.info or {}).get("warnings", []) or []]
    if not answer.strip():
        warnings.append(_t("no_answer", language))
    if not evidence:
        warnings.append(_t("no_evidence", language))
    failed = [c for c in calls if not c.ok]
    if failed:
        warnings.append(_t("failed_calls", language, n=len(failed)))
    open_tasks = [t for t in tasks if t.status != "completed"]
    if open_tasks:
        sep = "、" if language == "zh" else ", "
        warnings.append(_t("open_tasks", language, n=len(open_tasks), subjects=sep.join(t.subject for t in open_tasks)))
    if unverified:
        warnings.append(_t("unverified", language, n=len(unverified)))
    state = dict(run.state or {})
    checks = {r.get("evidence_id"): r for r in (state.get("verification") or {}).get("results", [])}
    for item in evidence:
        if item["id"] in checks:
            item["verification"] = {
                "status": checks[item["id"]].get("status"),
                "issues": [i.get("detail") for i in checks[item["id"]].get("issues", [])],
            }
    failed_claims = [r for r in checks.values() if r.get("status") == "failed"]
    if failed_claims:
        warnings.append(_t("verification_failed", language, n=len(failed_claims)))

    analysis_calls = [c for c in calls if c.ok and not is_harness_tool(c.tool)]
    report = {
        "run_id": run.id,
        "workspace_id": run.workspace_id,
        "created_at": _iso(run.finished_at or run.created_at) or datetime.now(UTC).isoformat(),
        "status": run.status,
        "question": run.question,
        "language": language,
        "answer": answer,
        "model": {"kind": run.model_kind or "builtin", "name": run.model_name or "builtin"},
        "datasets": [dataset_entry(d) for d in datasets],
        "evidence": evidence,
        "tasks": [task_entry(t) for t in tasks],
        "figures": figure_entries(calls, evidence),
        "tool_calls": [tool_call_entry(c) for c in calls],
        "unverified_numbers": unverified,
        "warnings": _distinct(warnings),
        "method_notes": _distinct([e["method"] for e in evidence]),
        "tools_used": _distinct([c.tool for c in analysis_calls]),
        "limitations": _distinct([lim for e in evidence for lim in e["limitations"]]),
        "analysis_plan": state.get("plan"),
        "reading": reading_entry(state),
        # What the analysis was told besides the data: rules, confirmed definitions, reference notes, memories.
        "guidance": state.get("guidance") or {"rules": [], "definitions": [], "knowledge": [], "memory": []},
        "verification": verification_summary(state),
    }
    return plain(report)


def reading_entry(state: dict[str, Any]) -> dict[str, Any] | None:
    """How the question was read, apart from whether the arithmetic was checked (issue 24):
    {"status": "named" | "assumed", "assumed": [what was assumed]}, and when the plan said them, the
    sentence the answer opens with (`read_as`), the question's key and the roles the user can change
    (`roles`: [{role, value, how, options}]); None when the plan did not say (a model that recorded no
    assumptions)."""
    reading = (state.get("plan") or {}).get("reading")
    if not isinstance(reading, dict) or reading.get("status") not in ("named", "assumed"):
        return None
    entry: dict[str, Any] = {"status": reading["status"], "assumed": [str(x) for x in reading.get("assumed") or []]}
    for key in ("key", "read_as", "roles"):
        if reading.get(key):
            entry[key] = reading[key]
    return entry


def verification_summary(state: dict[str, Any]) -> dict[str, Any]:
    """What claim verification found (app.agent.verification): status, hypotheses, synthesis policy."""
    verification = state.get("verification") or {}
    hypotheses = (state.get("hypotheses") or {}).get("all", [])
    policy = state.get("synthesis_policy") or {}
    return {
        "status": verification.get("status", "not_run"),
        "failed_claims": [r.get("evidence_id") for r in verification.get("results", []) if r.get("status") == "failed"],
        "hypotheses": [{k: h.get(k) for k in ("id", "role", "statement", "status")} for h in hypotheses],
        "policy": {k: policy.get(k) for k in ("recommendations", "wording")} if policy else {},
        "final": verification.get("final") or {},
    }
