"""Runs execute in background threads, never in the request; their progress is in the database.

`RunService.start` records the run and returns at once; a worker thread runs the agent turn and
commits messages, tool calls and events as they happen. The page follows along through the
events table (server-sent events), so a run survives the page being closed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from analysis_tools import ToolContext
from analysis_tools.tables import table_name
from app.agent import (
    ALL_SECTIONS,
    ChatModel,
    ContextWindow,
    DatasetCatalog,
    Interrupted,
    ModelError,
    OpenAICompatibleModel,
    Paused,
    PiiMasker,
    RunRecorder,
    RunScope,
    Toolbox,
    Turn,
    apply_intent,
    budget_for,
    classify_run,
    detect_language,
    guidance_record,
    mark_waiting,
    masked,
    question_reading,
    run_turn,
    situations,
    spent_in,
    system_prompt,
    trace_dir,
    turn_opening,
    with_workspace_summary,
    workspace_sources,
)
from app.analyst import BuiltinAnalyst
from app.config import Settings
from app.db.models import Dataset, Message, Report, Run, User, Workspace, utcnow
from app.db.nodes import held_elsewhere, lease_holder, received_elsewhere
from app.db.pseudonyms import workspace_book
from app.db.session import Database, rows_changed
from app.faults import DISK_FULL, Fault, fault_of
from app.jobs import send_run
from app.reports.builder import build_report
from app.storage import node_files
from app.understanding import keep_english_dictionary_in, with_values
from app.workspaces import (
    LOADING,
    active_datasets,
    add_version,
    dataset_status,
    dataset_summary,
    files_being_received,
    is_derived,
    listed_datasets,
    prune_figures,
    readable_frame,
)

log = logging.getLogger(__name__)
FINAL_STATUSES = ("done", "failed", "interrupted")
# A question asked while a file of the workspace is still being read (a big upload's background read)
# waits for it this long: answered without it, the question is read against the other tables only and
# asks which of their columns it meant (issue 24: a Chinese question about the workbook still loading
# was asked back about the van-hire CSV's columns). After this the user is told plainly to ask again.
LOADING_WAIT_S = 300.0
LOADING_POLL_S = 0.5
ACTIVE_STATUSES = ("queued", "running", "waiting")  # not final yet (waiting: for an answer)
BUSY_STATUSES = ("queued", "running")  # reading the workspace's data right now

ModelFactory = Callable[[Settings, list[dict[str, Any]], str], ChatModel]


def default_model(settings: Settings, datasets: list[dict[str, Any]], language: str) -> ChatModel:
    if settings.use_builtin:
        return BuiltinAnalyst(datasets, language)
    return OpenAICompatibleModel(settings)


class TooManyRuns(Exception):
    """A user already has `max_active_runs_per_user` runs queued or running."""

    def __init__(self, limit: int):
        super().__init__(f"{limit} analyses of yours are already running or waiting to start.")
        self.limit = limit


class RunService:
    def __init__(
        self,
        db: Database,
        settings: Settings,
        model_factory: ModelFactory = default_model,
        keep_frames: bool = False,
    ):
        self.db = db
        self.settings = settings
        self.model_factory = model_factory
        self.executor = ThreadPoolExecutor(max_workers=settings.run_workers, thread_name_prefix="verity-run")
        self._stops: dict[str, threading.Event] = {}
        self.loading_wait_s = LOADING_WAIT_S
        # lemminflect's tables, read by every English question, from a copy kept beside the data (parsed once)
        keep_english_dictionary_in(settings.data_dir / "cache")
        self.retry_faults = False  # a job-queue worker (app/job_worker.py) hands a lost database back to its queue
        self.handed_over: set[str] = set()  # runs another worker took over while this one still ran them
        # (dataset id, working copy) -> its table, kept between the turns of this service's runs with
        # `keep_frames` (`verity analyze`: a run paused for a question is resumed at once in the same
        # process, and read every table again, a second or more for a million rows). None (the server,
        # whose runs outlive any one table): every turn reads them.
        self.kept_frames: dict[tuple[str, str], Any] | None = {} if keep_frames else None

    # --- commands ------------------------------------------------------------------------
    def create(self, session: Session, workspace: Workspace, text: str, language: str | None = None) -> Run:
        self.check_quota(session, workspace)
        language = language or detect_language(text, self.settings.lang)
        kind = "builtin" if self.settings.use_builtin else "openai-compatible"
        run = Run(
            workspace_id=workspace.id,
            question=text,
            language=language,
            model_kind=kind,
            model_name=self.settings.llm_model or "builtin",
        )
        session.add(run)
        session.flush()
        return run

    def check_quota(self, session: Session, workspace: Workspace) -> None:
        """In multi-user mode one user's queue must not starve the others: a signed-in user has at
        most `max_active_runs_per_user` runs queued or running (waiting for an answer does not count)."""
        limit = self.settings.max_active_runs_per_user
        if workspace.owner is None or limit <= 0:
            return
        # Counted with the owner's row locked until this transaction ends (PostgreSQL: a row lock;
        # SQLite: the write lock): questions of one user reaching two servers at once are counted
        # one after the other, so N servers allow no more runs than one (issue 26 point 4).
        session.execute(update(User).where(User.id == workspace.owner).values(name=User.name))
        active = (
            session.scalar(
                select(func.count())
                .select_from(Run)
                .join(Workspace, Run.workspace_id == Workspace.id)
                .where(Workspace.owner == workspace.owner, Run.status.in_(BUSY_STATUSES))
            )
            or 0
        )
        if active >= limit:
            raise TooManyRuns(limit)

    def submit(self, run_id: str) -> Future | None:
        """Start a queued run: in a thread here, or (run_executor=worker) leave it in the database
        for a `verity worker` process to take (app/worker.py), or (dramatiq) send it to the job
        queue (app/jobs.py)."""
        if self.settings.run_executor == "worker":
            return None
        if self.settings.run_executor == "dramatiq":  # sent from a thread: the request never waits on the broker
            return self.executor.submit(self.send_to_queue, run_id)
        # This node's claim on the run (app/db/nodes.py): another server starting up leaves it alone
        # (`recover`) while this node lives and renews it.
        if not self.db.leases.claim(run_lease(run_id)):
            return None  # another live node executes it
        self._stops[run_id] = threading.Event()
        return self.executor.submit(self.execute, run_id)

    def send_to_queue(self, run_id: str) -> None:
        """Hand a queued run to the job queue (run_executor=dramatiq); when the broker cannot be
        reached the run fails with a plain message rather than stay queued for ever."""
        with self.db.session() as session:
            run = session.get(Run, run_id)
            if run is None:
                return
            try:
                send_run(self.settings, run_id, run.question or "")
            except Exception:  # the broker is down or refuses: say so on the run's page
                log.exception("run %s could not be sent to the job queue", run_id)
                recorder = RunRecorder(session, run.workspace_id, run.id)
                run.status, run.error = "failed", queue_unavailable(run.language)
                self.finish(session, run, recorder)

    def interrupt(self, run_id: str) -> str:
        """Stop a run. A queued or running one stops at its next step and ends "interrupted" with
        the evidence recorded so far; a run waiting for an answer ends so at once (its open
        questions stay open, and an answer given later is still kept as a confirmed definition).
        Returns the status the run is in or heading to."""
        stop = self._stops.get(run_id)
        if stop is not None:
            stop.set()
            return "interrupting"
        with self.db.session() as session:
            run = session.get(Run, run_id)
            if run is None:
                return "not_found"
            if self.settings.run_executor != "threads" and run.status in BUSY_STATUSES:
                return stop_in_worker(session, run)
            if run.status in BUSY_STATUSES:
                # Executed in another server's threads (this one holds no stop for it): a stop request in the
                # database, which that server passes on to the run within worker_heartbeat_s
                # (pass_on_stop_requests); a run no live server holds is ended by their sweep.
                session.execute(update(Run).where(Run.id == run.id).values(stop_requested=True))
                return "interrupting"
            if run.status == "waiting":
                recorder = RunRecorder(
                    session, run.workspace_id, run.id, trace_dir(self.settings, run.workspace_id, run.id)
                )
                run.status, run.answer = "interrupted", _partial_answer(run.language)
                run.state = {k: v for k, v in (run.state or {}).items() if k != "waiting"}
                self.finish(session, run, recorder)
            return run.status

    def pass_on_stop_requests(self) -> list[str]:
        """Threads mode: stop requests recorded in the database (a Stop pressed on another server) for
        runs in this server's threads are set on their stops here; each run stops at its next step.
        The request is taken off the row as it is passed on. Returns the runs told to stop."""
        mine = list(self._stops)
        if not mine:
            return []  # no run here: no query
        with self.db.session() as session:
            asked = list(session.scalars(select(Run.id).where(Run.id.in_(mine), Run.stop_requested.is_(True))))
            if asked:
                session.execute(update(Run).where(Run.id.in_(asked)).values(stop_requested=False))
        for run_id in asked:
            if (stop := self._stops.get(run_id)) is not None:
                stop.set()
        return asked

    def shutdown(self) -> None:
        for stop in self._stops.values():
            stop.set()
        self.executor.shutdown(wait=True, cancel_futures=True)

    def recover(self) -> int:
        """After a restart, runs that were in flight are marked interrupted (their history is
        healed when they are continued); runs another live server executes (it holds and renews
        their leases) are left to it. With worker processes, runs are theirs to recover."""
        if self.settings.run_executor != "threads":
            return 0
        with self.db.session() as session:
            in_flight = session.scalars(select(Run).where(Run.status.in_(("queued", "running"))))
            stale = [run for run in in_flight if not held_elsewhere(session, run_lease(run.id))]
            for run in stale:
                run.status, run.finished_at = "interrupted", utcnow()
            return len(stale)

    def sweep(self, suspects: set[str]) -> tuple[int, set[str]]:
        """The periodic `recover` of a server running runs in threads (every lease_ttl_s): runs in
        flight whose node died (no live lease) are marked interrupted once they were found so by
        two sweeps in a row, so a run between its commit and its node's claim is never taken for
        dead. Returns how many were interrupted and the suspects for the next sweep."""
        with self.db.session() as session:
            in_flight = session.scalars(select(Run).where(Run.status.in_(("queued", "running"))))
            orphans = {run.id: run for run in in_flight if lease_holder(session, run_lease(run.id)) is None}
            ended = [run for run_id, run in orphans.items() if run_id in suspects and run_id not in self._stops]
            for run in ended:
                run.status, run.finished_at = "interrupted", utcnow()
            return len(ended), set(orphans) - {run.id for run in ended}

    # --- the worker ------------------------------------------------------------------------
    def execute(self, run_id: str) -> None:
        try:
            self._execute(run_id)
        except Exception as exc:  # the database itself failed (it is how the run's outcome is recorded)
            if fault_of(exc) is None or (self.retry_faults and fault_of(exc) is not DISK_FULL):
                raise  # a bug; or a lost database, which the job queue retries after a backoff
            log.warning("run %s: the machine failed (%s); recording the run as interrupted", run_id, exc)
            self.end_after_fault(run_id, fault_of(exc))
        finally:
            self._stops.pop(run_id, None)
            if self.db.leases.holds(run_lease(run_id)):
                self.db.leases.release(run_lease(run_id))

    def _execute(self, run_id: str) -> None:
        with self.db.session() as session:
            run = session.get(Run, run_id)
            if run is None:  # deleted (with its workspace) before a thread took it: nothing to run or record
                log.warning("run %s no longer exists; not started", run_id)
                return
            language = run.language
            recorder = RunRecorder(
                session, run.workspace_id, run.id, trace_dir(self.settings, run.workspace_id, run.id)
            )
            run.status = "running"
            try:
                if still_loading := self.wait_for_loading(session, run, recorder):
                    run.status, run.error = "failed", files_still_loading(still_loading, language)
                    self.finish(session, run, recorder)
                    return
                turn = self.prepare_turn(session, run, recorder)  # emits run_started (the question masked)
                run.answer = turn.toolbox.unmask(run_turn(turn))  # the user reads the real names (privacy.py)
                run.status = "done"
                self.finish(session, run, recorder)
            except Paused as pause:  # waits for the user's answer; resumed by resume_after_answer (clarify.py)
                mark_waiting(run, recorder, turn, pause.args[0] if pause.args else None)
            except Interrupted:
                if run_id in self.handed_over:  # another worker took the run over (app/job_worker.py): it ends it
                    session.rollback()
                    return
                run.status, run.answer = "interrupted", _partial_answer(run.language)
                self.finish(session, run, recorder)
            except ModelError as exc:
                run.status, run.error = "failed", str(exc)
                self.finish(session, run, recorder)
            except Exception as exc:
                session.rollback()
                if fault_of(exc) is not None:  # the machine, not Verity: a full disk, a lost database
                    raise
                log.exception("run %s failed", run_id)  # a harness bug: log it, tell the user plainly
                run.status = "failed"
                run.error = (
                    "分析意外中断，请重试。"
                    if language == "zh"
                    else "The analysis stopped unexpectedly. Please try again."
                ) + f" ({type(exc).__name__})"
                self.finish(session, run, recorder)

    def end_after_fault(self, run_id: str, fault: Fault | None) -> None:
        """Record how a run ended when the machine failed under it, on a fresh connection (retried
        while the database comes back). A lost database connection leaves the run interrupted: what
        it recorded is kept, and asking again in the workspace carries on from there. A full disk
        fails it with a plain message."""
        deadline = time.monotonic() + self.settings.db_retry_s
        while True:
            try:
                with self.db.session() as session:
                    run = session.get(Run, run_id)
                    if run is None or run.status in FINAL_STATUSES:
                        return
                    recorder = RunRecorder(
                        session, run.workspace_id, run.id, trace_dir(self.settings, run.workspace_id, run.id)
                    )
                    run.state = {k: v for k, v in (run.state or {}).items() if k != "waiting"}
                    run.status = "failed" if fault is DISK_FULL else "interrupted"
                    run.answer = None if fault is DISK_FULL else _partial_answer(run.language)
                    run.error = fault_message(fault, run.language)
                    self.finish(session, run, recorder)
                    return
            except Exception as exc:  # still down: try again until db_retry_s, then leave it
                if fault_of(exc) is None or time.monotonic() > deadline:
                    log.exception("run %s: could not record its end; a restart marks it interrupted", run_id)
                    return
                time.sleep(1.0)

    def wait_for_loading(self, session: Session, run: Run, recorder: RunRecorder) -> list[str]:
        """Wait until no file of the workspace is still being uploaded or read (the question may be about it),
        shown as a step of the run. Returns the names still loading after `loading_wait_s` (the run
        then tells the user so), or [] when every file is read or failed (a failed one is listed on
        the page with its error; the question is answered from the others)."""
        deadline, step = time.monotonic() + self.loading_wait_s, None
        stop = self._stops.get(run.id)
        while True:
            session.commit()  # ends the transaction: the next query sees the background read's commit
            loading = [d.name for d in listed_datasets(session, run.workspace_id) if dataset_status(d) == LOADING]
            loading += files_being_received(run.workspace_id)  # an upload not stored yet (this process's)
            loading += received_elsewhere(session, run.workspace_id)  # or another server's
            if not loading or time.monotonic() > deadline or (stop is not None and stop.is_set()):
                break
            if step is None:
                step = {"id": f"wait-{run.id}", "tool": "wait_for_files"}
                recorder.emit("tool_started", {**step, "files": loading})
            time.sleep(LOADING_POLL_S)
        if stop is not None and stop.is_set():
            raise Interrupted()
        if step is not None:
            recorder.emit("tool_finished", {**step, "ok": not loading, "interpretation": ""})
        return loading

    def turn_frame(self, dataset: Dataset) -> Any:
        """A dataset's table for a turn (readable_frame): read once when `kept_frames` is set. Each turn
        gets its own shallow copy: with pandas' copy-on-write nothing a turn does to its table (a column
        added, a cell set) reaches the kept one, and the data itself is not copied."""
        if self.kept_frames is None or not dataset.working_path:
            return readable_frame(dataset, self.settings)
        key = (dataset.id, dataset.working_path)  # a working copy is written once, for one version
        if key not in self.kept_frames:
            frame = readable_frame(dataset, self.settings)
            if frame is None:
                return None
            self.kept_frames[key] = frame
        return self.kept_frames[key].copy(deep=False)

    def prepare_turn(self, session: Session, run: Run, recorder: RunRecorder) -> Turn:
        workspace = session.get(Workspace, run.workspace_id)
        if workspace is None:  # cannot happen while the run row exists (runs go first); say so if it does
            raise LookupError(f"workspace {run.workspace_id} of run {run.id} no longer exists")
        recorder.keep_file = node_files(self.settings).saved  # figures and trace payloads go to the store
        datasets = active_datasets(session, workspace.id)
        # fetched from the store when this node lacks them; only an unreadable copy is marked and left out
        frames = {d.id: self.turn_frame(d) for d in datasets}
        damaged = [d.name for d in datasets if frames[d.id] is None]
        datasets = [d for d in datasets if frames[d.id] is not None]
        # the table a tool reads when none is named: the newest the user gave, never one an analysis made
        given = [d for d in datasets if not is_derived(session, d)] or datasets
        catalog = DatasetCatalog(
            {d.name: partial(frames.get, d.id) for d in datasets}, active=given[-1].name if given else None
        )
        masker = PiiMasker.from_frames(  # pseudonyms, stable in the workspace (privacy.py)
            {d.name: {c["name"]: c["pii"] for c in d.info.get("columns", []) if c.get("pii")} for d in datasets},
            {d.name: catalog.get(d.name) for d in datasets},
            workspace_book(self.db.engine, self.settings, workspace.id),  # in the database: every node's
        )
        question = masker.mask(run.question or "")  # what the model, and the trace, read of the question
        recorder.emit("run_started", {"question": question, "language": run.language})
        if damaged:
            recorder.emit("datasets_damaged", {"names": damaged})
        summaries = [dataset_summary(d, catalog.get(d.name)) for d in datasets]
        figures_dir = self.settings.workspace_dir(workspace.id) / "figures"
        prune_figures(figures_dir, self.settings)  # the charts of earlier runs, held to their budget
        window = ContextWindow.from_settings(self.settings, workspace.id)
        context = ToolContext(
            language=run.language,
            figures_dir=figures_dir,
            figure_tag=run.id[:8] if node_files(self.settings).store.remote else "",  # names unique across nodes
            scope=RunScope(
                session=session,
                settings=self.settings,
                workspace_id=workspace.id,
                run_id=run.id,
                emit=recorder.emit,
                context_window=window,
                summaries=summaries,
            ),
        )
        model = self.model_factory(self.settings, summaries, run.language)
        earlier = [
            {**m, "content": masker.mask(m["content"])} for m in earlier_exchanges(session, workspace.id, run.id)
        ]
        intent = classify_run(run, model, self.settings, recorder, has_history=bool(earlier), question=question)
        toolbox = Toolbox(
            catalog,
            context,
            mask=masker.mask,
            unmask=masker.unmask,
            groups=set(intent.groups),
            pruned=set(intent.pruned),
            store_table=partial(self.store_table, session, recorder, workspace.id),
            scope=intent.scope,  # exposure.py: a one-statistic question starts narrow
            focus=getattr(model, "kind", "") != "builtin",
            has_dates=any(c["type"] == "datetime" for s in summaries for c in s["columns"]),  # time-series tools
            listing=core_listing(intent, model),
        )  # the built-in analyst plans them all
        if isinstance(model, BuiltinAnalyst):  # it reads the tools' results as data, never the text a model sees
            model.results = toolbox.records
        sources = workspace_sources(
            session,
            workspace.id,
            datasets,
            run.question,
            self.settings.knowledge_budget_chars,
            run.id,
            self.settings.memory_budget_chars,
        )  # definitions, knowledge, memory
        # the user's answers to earlier questions may name people: the model reads pseudonyms
        sources["definitions"] = tuple(masker.mask(d) for d in sources.get("definitions") or ())
        if "datasets" in (intent.prompt_sections or ALL_SECTIONS):  # a greeting's prompt carries no data
            sources["reading"] = question_reading(
                question, [with_values(summary, catalog.get(summary["name"])) for summary in summaries]
            )  # what it names
        for situation in situations(session, run.id, sources.get("knowledge")):  # e.g. search_knowledge
            toolbox.exposure.enable(situation)
        toolbox.exposure.added |= toolbox.exposure.pending_tools  # from the first request on
        toolbox.exposure.pending_tools.clear()
        messages = [
            {
                "role": "system",
                "content": system_prompt(
                    summaries, run.language, workspace.rules, sections=intent.prompt_sections, **sources
                ),
            }
        ]
        run.state = {**(run.state or {}), "guidance": guidance_record(workspace.rules, sources)}  # for the report
        apply_intent(messages, intent)  # the intent's guidance + the user's restrictions (user tier)
        messages += with_workspace_summary(session, workspace.id, earlier)
        paused_budget = (run.state or {}).get("waiting", {}).get("budget")  # read before turn_opening clears it
        opening = turn_opening(session, run, recorder, masker.mask)  # clarify.py: the question, or the turn so far
        messages += opening
        toolbox.records.restore(messages, window.store)  # a resumed turn's earlier results, from disk
        # and what its searches found, and the tools it already ran
        toolbox.exposure.request_tools(
            [*toolbox.records.found_by_search(opening), *toolbox.records.called_before(opening)]
        )
        return Turn(
            messages,
            model,
            toolbox,
            recorder,
            budget_for(intent, self.settings).restore(paused_budget or spent_in(opening)),  # a taken-over turn's too
            self._stops.setdefault(run.id, threading.Event()),
            figure_url=partial(figure_url, workspace.id),
            context=window,
            intent=intent,
        )

    def store_table(
        self,
        session: Session,
        recorder: RunRecorder,
        workspace_id: str,
        source: str | None,
        tool: str,
        frame,
        step: str,
        info: dict | None = None,
        new_name: str | None = "",
    ) -> str:
        """Keep a data tool's output as a new version of its dataset, or as a new derived dataset
        (`new_name`; toolbox.table_name decides: None for a version, "" to decide here)."""
        parent = next((d for d in active_datasets(session, workspace_id) if d.name == source), None)
        if parent is None:
            raise ValueError(f"no active dataset {source!r} to derive from")
        if new_name == "":
            new_name = table_name(parent.name, tool)
        stored = add_version(session, self.settings, parent, frame, step, new_name, info)
        recorder.emit(
            "dataset_version", {"name": stored.name, "version": stored.version, "step": step, "rows": stored.rows}
        )
        return stored.name

    def finish(self, session: Session, run: Run, recorder: RunRecorder) -> None:
        run.finished_at = utcnow()
        # A stop request that came as it ended must not stop the run once it is continued. (An UPDATE: the
        # row's flag may have been set by another server since this session read it.)
        session.execute(update(Run).where(Run.id == run.id, Run.stop_requested.is_(True)).values(stop_requested=False))
        if run.status == "done":
            # the stored report (what a share link serves) and the trace keep the pseudonyms; the
            # owner's downloads show the real values (web/reports.py)
            # one read of the workspace's book for both
            stored = masked(
                {"report": build_report(session, run), "answer": run.answer or ""},
                workspace_book(session, self.settings, run.workspace_id),
            )
            report = stored["report"]
            row = Report(workspace_id=run.workspace_id, run_id=run.id, content=report)
            session.add(row)
            keep_report_figures(session, row, self.settings)
            recorder.emit(
                "answer", {"answer": stored["answer"], "unverified_numbers": report.get("unverified_numbers", [])}
            )
        recorder.emit("run_finished", {"status": run.status, "error": run.error})


def keep_report_figures(session: Session, report: Report, settings: Settings) -> None:
    """The report's figures copied into its own folder now (they were copied on its first download):
    the workspace's figures/ is pruned to its budget, and a report must keep what it shows."""
    from app.web.report_files import portable_content

    session.flush()  # the report's id names its folder
    try:
        portable_content(report, settings)
    except (OSError, ValueError):  # e.g. a full disk: the report is kept; its downloads copy what is left later
        log.warning("the figures of report %s could not be copied", report.id, exc_info=True)


def run_lease(run_id: str) -> str:
    return f"run:{run_id}"


def stop_in_worker(session: Session, run: Run) -> str:
    """Interrupt a run of the worker processes: a queued run no worker has taken ends at once (a
    conditional update, the same race a worker's claim runs); a taken one gets a stop request that
    its worker sees at its next heartbeat."""
    ended = rows_changed(
        session,
        update(Run).where(Run.id == run.id, Run.status == "queued").values(status="interrupted", finished_at=utcnow()),
    )
    if ended:
        return "interrupted"
    session.execute(update(Run).where(Run.id == run.id).values(stop_requested=True))
    return "interrupting"


def earlier_exchanges(session: Session, workspace_id: str, run_id: str) -> list[dict[str, Any]]:
    """Earlier questions and final answers of the workspace (tool traffic stays on disk)."""
    rows = session.scalars(
        select(Message)
        .where(
            Message.workspace_id == workspace_id,
            Message.run_id != run_id,
            Message.role.in_(("user", "assistant")),
            Message.tool_calls.is_(None),
        )
        .order_by(Message.id)
    )
    return [
        {"role": m.role, "content": m.content or ""}
        for m in rows
        if m.content and not m.content.startswith("[harness]")
    ]


def figure_url(workspace_id: str, path: str) -> str:
    return f"/workspaces/{workspace_id}/figures/{Path(path).name}"


def fault_message(fault: Fault | None, language: str) -> str:
    """Why the run stopped, in the run's language (app/faults.py names the faults)."""
    from app.web.i18n import t

    return t(fault.message_key if fault else "error_database_unavailable", language)


def queue_unavailable(language: str) -> str:
    """Why a question was not started: the job queue could not be reached (run_executor=dramatiq)."""
    from app.web.i18n import t

    return t("run_queue_unavailable", language)


def files_still_loading(names: list[str], language: str) -> str:
    """Why a question was not answered: a file it may be about is still being read."""
    from app.web.i18n import t

    return t("files_still_loading", language, files="、".join(names) if language == "zh" else ", ".join(names))


def _partial_answer(language: str) -> str:
    return (
        "分析已被中断。以下是中断前记录的证据。"
        if language == "zh"
        else "The analysis was interrupted. The evidence recorded before the stop is listed below."
    )


def core_listing(intent: Any, model: Any) -> str:
    """Which core tools the run's tools array lists (exposure.LISTED_CORE): every one for the
    built-in analyst (it plans them all; prompt size costs it nothing) and a full report, the few a
    one-statistic question needs, else the lean set (the rest is called through call_tool)."""
    if getattr(model, "kind", "") == "builtin" or intent.kind == "deep":
        return "all"
    return "single" if intent.scope == "single" else "lean"
