"""The run panel's "Check every number with analysis.py": the report's script runs in the background (one
thread per app; in the run_python sandbox, under limits and without the server's secrets, and never
without a sandbox unless run_python itself runs without one: app/reports/reproduce.py)
while the page says "checking…". The outcome goes into the report (its renderings then say "Reproduced by
analysis.py"); how the last check went is kept in the run's state, for the page."""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from sqlalchemy.orm import Session

from app.agent import masked, unmasked
from app.config import Settings
from app.db.models import Report, Run
from app.db.nodes import held_elsewhere
from app.db.pseudonyms import workspace_book
from app.db.session import Database
from app.reports.reproduce import Limits, Outcome, check_analysis_script, host_verdict
from app.reports.script import dataset_sources, report_numbers, to_analysis_script
from app.storage import node_files
from app.web.background import background_pool
from app.web.i18n import t
from app.web.report_files import binary_file_path, report_folder
from app.workspaces import active_datasets, first_working_copies, local_sources

log = logging.getLogger(__name__)

STATE_KEY = "number_check"  # in Run.state: {"status": "running" | "done" | "stopped", ...}
BINARY_FORMATS = ("pdf", "docx")  # written once per report: made again with the outcome in them
_running: dict[str, str] = {}  # run -> workspace, of the checks this process runs (or has queued) now
_lock = threading.Lock()


def check_lease(run_id: str) -> str:
    return f"check:{run_id}"


def check_running(session: Session, run: Run) -> bool:
    """A check of this run's numbers is queued or running, here or on another live node."""
    with _lock:
        if run.id in _running:
            return True
    return check_running_elsewhere(session, run)


def check_running_elsewhere(session: Session, run: Run) -> bool:
    """Another node holds the lease of a check of this run (app/db/nodes.py): it runs it, renewing the
    lease, or died less than a lease's lifetime ago. (A check recorded as running whose lease is
    gone ended without a record.)"""
    state = (run.state or {}).get(STATE_KEY) or {}
    return state.get("status") == "running" and held_elsewhere(session, check_lease(run.id))


def check_view(session: Session, run: Run, lang: str) -> dict[str, Any]:
    """What the run panel says about the check: running, or why the last one stopped without an outcome."""
    running = check_running(session, run)
    state = (run.state or {}).get(STATE_KEY) or {}
    stopped = None
    if not running and state.get("status") == "stopped":
        reason = "timeout" if state.get("reason") == "cpu" else state.get("reason")
        known = ("timeout", "memory", "no_sandbox", "busy")
        stopped = t(f"check_stopped_{reason if reason in known else 'error'}", lang)
    return {"running": running, "stopped": stopped}


def start_check(app: FastAPI, session: Session, settings: Settings, run: Run, report: Report) -> bool:
    """Write analysis.py beside the report and queue its run; False when a check of this run is already
    under way (a second click starts nothing)."""
    with _lock:
        if run.id in _running:
            return False
        busy = run.workspace_id in _running.values()
        if not busy:
            _running[run.id] = run.workspace_id
    if busy:  # one check of a workspace at a time: its other runs cannot queue ahead of other workspaces
        run.state = {**(run.state or {}), STATE_KEY: {"status": "stopped", "reason": "busy", "finished": time.time()}}
        session.commit()
        return False
    db: Database = app.state.db
    try:
        if not db.leases.claim(check_lease(run.id)):  # another node checks this run now
            with _lock:
                _running.pop(run.id, None)
            return False
        script, data_files = write_script(session, settings, report)
        # what the reader made of each upload: read instead of the upload (the same table, cheaper)
        working = first_working_copies(session, settings, active_datasets(session, report.workspace_id))
        run.state = {
            **(run.state or {}),
            STATE_KEY: {  # a new dict: the JSON column sees it
                "status": "running",
                "node": db.node.describe(),  # for people: the lease says who runs it
                "started": time.time(),
                "deadline": time.time() + settings.check_numbers_timeout_s,
            },
        }
        session.commit()  # the worker thread reads the run in its own session
        check_executor(app).submit(run_check, db, settings, run.id, report.id, script, data_files, working)
    except BaseException:
        db.leases.release(check_lease(run.id))
        with _lock:
            _running.pop(run.id, None)
        raise
    return True


def write_script(session: Session, settings: Settings, report: Report) -> tuple[Path, list[Path]]:
    """analysis.py for the report, in its check folder, and the data files it reads."""
    folder = report_folder(report, settings) / "check"
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "analysis.py"
    # the uploads in this node's cache (fetched from the store when another node kept them), resolved:
    # it runs in `folder`
    datasets = local_sources(settings, dataset_sources(active_datasets(session, report.workspace_id), session))
    content = unmasked(report.content or {}, workspace_book(session, settings, report.workspace_id))  # real values
    script.write_text(to_analysis_script(content, datasets), encoding="utf-8")
    return script, [Path(source["original_path"]) for source in datasets if source["original_path"]]


def check_executor(app: FastAPI) -> ThreadPoolExecutor:
    """One thread per app: one analysis.py at a time (each may use check_numbers_memory_mb)."""
    return background_pool(app, "check")


def run_check(
    db: Database,
    settings: Settings,
    run_id: str,
    report_id: str,
    script: Path,
    data_files: list[Path] | None = None,
    working_copies: dict[str, Path] | None = None,
) -> None:
    """In the check thread: run the script under the settings' limits and record the outcome."""
    try:
        limits = Limits(
            timeout_s=settings.check_numbers_timeout_s,
            memory_mb=settings.check_numbers_memory_mb,
            cpu_s=settings.check_numbers_cpu_s,
            output_mb=settings.check_numbers_max_output_mb,
            scratch_mb=settings.check_numbers_scratch_mb,
        )
        cache = settings.data_dir / "cache" / "matplotlib"  # the font cache, built once, not per check
        cache.mkdir(parents=True, exist_ok=True)
        outcome = check_analysis_script(
            script,
            limits,
            cache_dir=cache,
            data_files=data_files or [],
            sandbox_mode=settings.sandbox_mode,
            working_copies=working_copies,
        )
    except Exception:  # the page must not stay at "checking…"
        log.exception("checking the numbers of run %s failed", run_id)
        outcome = Outcome(None, "error")
    try:
        if db.leases.confirm(check_lease(run_id)):  # a node that stalled past the expiry lost the check
            record(db, settings, run_id, report_id, outcome)
    except Exception:  # e.g. the database went away: the lease expires and the page stops saying "checking…"
        log.exception("the outcome of checking the numbers of run %s could not be recorded", run_id)
    finally:
        db.leases.release(check_lease(run_id))
        with _lock:
            _running.pop(run_id, None)


def record(db, settings: Settings, run_id: str, report_id: str, outcome: Outcome) -> None:
    with db.session() as session:
        report, run = session.get(Report, report_id), session.get(Run, run_id)
        if report is not None and outcome.summary is not None:
            # the verdict is the host's: the summary's counts must describe this report's evidence numbers
            verdict = host_verdict(outcome.summary, len(report_numbers(report.content or {})))
            # the stored report keeps the pseudonyms
            summary = masked(verdict, workspace_book(session, settings, report.workspace_id))
            stale = [binary_file_path(report, settings, fmt) for fmt in BINARY_FORMATS]
            report.content = {**(report.content or {}), "reproduction": summary}
            files = node_files(settings)
            for path in stale:  # made again, under a new name, with the outcome in them
                files.remove(files.key_of(path))
        if run is not None:
            done = (
                {"status": "done"} if outcome.summary is not None else {"status": "stopped", "reason": outcome.reason}
            )
            run.state = {**(run.state or {}), STATE_KEY: {**done, "finished": time.time()}}
        session.commit()
