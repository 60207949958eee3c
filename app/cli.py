"""The `verity` command: serve, inspect, analyze (CONTRACT.md "Command line") and eval (SPEC §13).

Building the parser imports nothing beyond the standard library: each command imports what it
needs when it runs, so `verity --help` answers in a tenth of a second and `verity inspect` does
not load the web app, the database or the analysis tools (bench/startup.py measures both).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from sqlalchemy.orm import Session

    from app.config import Settings
    from app.db.session import Database
    from app.reports.reproduce import EarlyCheck
    from app.runs import RunService

EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT, EXIT_WAITING = 0, 1, 2, 3
EXIT_BAD_SETUP = 4  # the node's database and store do not belong together (or cannot be reached)
DEFAULT_QUESTION = {
    "en": "Give me an overview of this data and its main patterns.",
    "zh": "请概括这份数据的主要情况和规律。",
}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        return EXIT_INTERNAL
    if argv is None and args.func is analyze_command:
        # the process's own command, and nothing runs after it: it ends without freeing the agent,
        # pandas, scipy and matplotlib one object at a time (~1 s of CPU the user waited for)
        from app.process_exit import exit_now

        exit_now(code)
    return code


def build_parser() -> argparse.ArgumentParser:
    from app.cli_inspect import add_inspect_parser
    from app.cli_users import add_users_parser
    from app.evaluation.cli import add_eval_parser

    parser = argparse.ArgumentParser(prog="verity", description="Verity: evidence-backed analysis of spreadsheets.")
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser("serve", help="run the web app")
    serve.add_argument("--host", default=None)
    serve.add_argument("--port", type=int, default=None)
    serve.set_defaults(func=serve_command)
    worker = sub.add_parser(
        "worker", help="execute queued runs in this process (run_executor=worker, or dramatiq: from the job queue)"
    )
    worker.add_argument("--once", action="store_true", help="exit when no queued run is left")
    worker.add_argument(
        "--alive",
        action="store_true",
        help="a healthcheck: exit 0 when this data folder's worker found itself well lately, else 1",
    )
    worker.set_defaults(func=worker_command)
    migrate = sub.add_parser("migrate", help="bring the database schema to the newest migration, then exit")
    migrate.set_defaults(func=migrate_command)
    prune = sub.add_parser("prune", help="delete the store's files of workspaces the database no longer holds")
    prune.add_argument("--dry-run", action="store_true", help="only list what would be deleted")
    prune.add_argument(
        "--grace-hours", type=float, default=24.0, help="keep workspaces with a file written this recently (24)"
    )
    prune.set_defaults(func=prune_command)
    add_inspect_parser(sub)
    analyze = sub.add_parser("analyze", help="run the agent on files and write the report")
    analyze.add_argument("files", nargs="+", type=Path)
    analyze.add_argument("--question", default=None)
    analyze.add_argument("--sheet", default=None)
    analyze.add_argument("--answer", action="append", default=[], metavar="QUESTION_ID=VALUE")
    analyze.add_argument("--lang", choices=("zh", "en"), default=None)
    analyze.add_argument("--out", type=Path, default=Path("verity-report"))
    analyze.add_argument("--no-input", action="store_true", help="never prompt; exit 3 when questions are open")
    analyze.set_defaults(func=analyze_command)
    add_eval_parser(sub)  # app/evaluation/cli.py
    add_users_parser(sub)  # app/cli_users.py
    return parser


def serve_command(args: argparse.Namespace) -> int:
    import uvicorn

    from app.config import get_settings
    from app.users import auth_required

    settings = get_settings()
    host, port = args.host or settings.host, args.port or settings.port
    # The app (built by uvicorn's factory in this process) reads the bind address from the settings:
    # sign-in is required unless it is loopback (SPEC §7).
    os.environ["VERITY_HOST"], os.environ["VERITY_PORT"] = host, str(port)
    get_settings.cache_clear()
    settings = get_settings()
    if (problem := store_problem(settings)) is not None:
        print(f"error: {problem}", file=sys.stderr)
        return EXIT_BAD_SETUP
    access = "sign-in required" if auth_required(settings) else "local use, no sign-in"
    print(f"Verity on http://{host}:{port}  (model: {settings.llm_model}; {access})", flush=True)
    print(sandbox_status(settings), flush=True)
    from app.main import server_options

    uvicorn.run("app.main:create_app", factory=True, host=host, port=port, log_level="info", **server_options(settings))
    return EXIT_OK


def worker_command(args: argparse.Namespace) -> int:
    import signal

    from app.config import get_settings

    settings = get_settings()
    if args.alive:  # the healthcheck: before anything heavy is imported (app/worker_health.py)
        return worker_alive(settings)
    from app.worker import Worker

    configure_logging(settings)
    if (problem := store_problem(settings)) is not None:
        print(f"error: {problem}", file=sys.stderr)
        return EXIT_BAD_SETUP
    if settings.run_executor == "dramatiq":  # the job queue's worker (app/job_worker.py)
        from app.job_worker import QueueWorker

        queue_worker = QueueWorker(settings)
        queue_worker.owns_process = True  # on SIGTERM it may end the process to hand its runs over
        worker: Worker = queue_worker
        shown = f"{settings.run_workers} question(s) and {settings.run_workers} report(s) at a time from the job queue"
    else:
        worker, shown = Worker(settings), f"{settings.run_workers} run(s) at a time"
    signal.signal(signal.SIGTERM, lambda *_: worker.stop.set())  # `docker stop`: finish the current step
    print(f"Verity worker {worker.name}: {shown}", flush=True)
    print(sandbox_status(worker.settings), flush=True)
    try:
        ran = worker.run_forever(once=args.once)
    except KeyboardInterrupt:
        worker.stop.set()
        return EXIT_OK
    print(f"Verity worker {worker.name}: {ran} run(s) executed", flush=True)
    return EXIT_OK


def prune_command(args: argparse.Namespace) -> int:
    """`verity prune`: the store's files of deleted workspaces (a deletion whose store step failed, a node
    that died while deleting). Only after the start-up check: with another database's store, every
    workspace would look deleted."""
    from sqlalchemy import select

    from app.config import get_settings
    from app.db.models import Workspace
    from app.db.session import open_database
    from app.storage import node_files

    settings = get_settings()
    if (problem := store_problem(settings)) is not None:
        print(f"error: {problem}", file=sys.stderr)
        return EXIT_BAD_SETUP
    db = open_database(settings)
    try:
        with db.session() as session:
            live = set(session.scalars(select(Workspace.id)))
    finally:
        db.close()
    pruned = node_files(settings).prune_deleted_workspaces(live, args.grace_hours * 3600, dry_run=args.dry_run)
    verb = "would delete" if args.dry_run else "deleted"
    for workspace_id, count in pruned.items():
        print(f"{verb} {count} file(s) of deleted workspace {workspace_id}")
    print(f"{len(pruned)} deleted workspace(s) found in the store", flush=True)
    return EXIT_OK


def worker_alive(settings: Settings) -> int:
    """`verity worker --alive`: the container's healthcheck. Only reads a file's age (no database, no
    broker): the worker's heartbeat touches it each round in which the database answered and its
    queues were consumed (app/worker.py mark_alive)."""
    from app.worker_health import alive_age_s

    age, limit = alive_age_s(settings), 3 * settings.worker_heartbeat_s + 10
    if age is not None and age <= limit:
        return EXIT_OK
    said = "never" if age is None else f"{age:.0f} s ago (more than {limit:.0f} s)"
    print(f"worker not well: it last found the database answering and its queues consumed {said}", file=sys.stderr)
    return EXIT_INTERNAL


def migrate_command(args: argparse.Namespace) -> int:
    """The deployment's prestart step (docker-compose.yml): migrate once before the app and the
    workers start. They migrate at start too, but then find nothing to do; on PostgreSQL an
    advisory lock keeps processes that start together from migrating at the same time."""
    from app.config import get_settings
    from app.db.session import open_database

    db = open_database(get_settings())
    db.engine.dispose()
    print("database schema is up to date", flush=True)
    return EXIT_OK


def store_problem(settings: Settings) -> str | None:
    """The start-up check of a server or worker (app/storage/marker.py): None when this node's object
    store is the one its database was made with (both are marked at the first start); else why this
    node must not start, in plain words. Only `serve` and `worker` pay for it (a database and a store
    round trip), never `--help` or `inspect`."""
    from sqlalchemy.exc import DBAPIError

    from app.db.session import open_database
    from app.storage import node_files
    from app.storage.marker import StoreMismatch, check_store

    try:
        store = node_files(settings).store
    except ValueError as exc:  # VERITY_STORAGE_URL is not a store's address
        return str(exc)
    try:
        db = open_database(settings)
    except DBAPIError as exc:
        return f"the database cannot be reached ({type(exc.orig).__name__}: {str(exc.orig).strip()[:300]})"
    try:
        check_store(db.sessionmaker, store)
    except StoreMismatch as exc:
        return str(exc)
    finally:
        db.close()
    return None


def sandbox_status(settings: Settings) -> str:
    """One plain line on whether run_python (the analyst's own Python code) can run here, and
    what to do when it cannot: the other analyses work either way."""
    from sandbox import detect_isolation

    isolation = detect_isolation(settings.sandbox_mode)
    if isolation.available:
        return (
            f"run_python: sandboxed ({isolation.kind})"
            if isolation.kind != "unsafe"
            else "run_python: WITHOUT isolation (sandbox_mode=unsafe): only on a trusted single-user machine"
        )
    if settings.sandbox_mode == "off":
        return "run_python: switched off (VERITY_SANDBOX_MODE=off); the other analyses work"
    return (
        "run_python cannot be offered here, so the analyst works without its own Python code "
        f"(the other analyses work). Why: {isolation.reason}. In Docker, the container needs user "
        "namespaces and mounts: see the README, Deployment."
    )


# What `_load_the_agent` imports, in order: steps of a few tenths of a second each, so that it can stop
# soon after the upload's read has ended ("analysis_tools" with every tool's module, its registry).
AGENT_MODULES = ("pandas", "scipy.stats", "matplotlib.pyplot", "analysis_tools", "app.runs", "app.reports.render")


def _load_the_agent(reading: Callable[[], bool] = lambda: True) -> None:
    """Import the agent, the tools (scipy.stats, matplotlib ...) and the report writers: ~2 s of CPU that
    `verity analyze` spends while the upload is read in its forked child (bounded.while_reading), as
    long as `reading()` says the read goes on: once it has ended the command starts its check's sandbox
    (which imports as much on the other core) and then calls this again for the rest. Anything that
    fails here fails again, and is reported, where the command imports it."""
    try:
        for name in AGENT_MODULES:
            if not reading():
                return
            module = importlib.import_module(name)
            if name == "analysis_tools":
                module.registry()  # every tool's module
    except Exception:  # noqa: BLE001 - see above
        return


def analyze_command(args: argparse.Namespace) -> int:
    from app.cli_inspect import print_ingest_error
    from app.cli_questions import parse_answers
    from app.config import get_settings
    from app.db.session import open_database
    from app.ingest.bounded import while_reading
    from app.ingest.errors import IngestError
    from app.reports.reproduce import Limits, start_early_check
    from app.reports.script import dataset_sources
    from app.workspaces import active_datasets, add_dataset, create_workspace, first_working_copies, local_sources

    try:
        answers = parse_answers(args.answer)
    except ValueError as err:
        print(f"error: invalid_answer: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    interactive = sys.stdin.isatty() and not args.no_input
    settings = get_settings()
    log_file = configure_logging(settings)

    def run_language(columns: list[str] | None = None) -> str:
        """The question's own words decide, not the column names in it ("What is the total 销售额 of
        西门?" is English), as for a question asked through the API."""
        from app.understanding import question_language  # (imported while the file was read)

        return args.lang or (
            question_language(args.question, columns or [], settings.lang) if args.question else settings.lang
        )

    db = open_database(settings)
    early: EarlyCheck | None = None
    try:
        with db.session() as session:
            workspace = create_workspace(session, f"CLI: {args.files[0].name}")
            for path in args.files:
                if not path.exists():
                    # words with spaces and no file extension, and no --question: a question given as a file
                    asked = not args.question and not path.suffix and " " in str(path).strip()
                    raise IngestError(
                        "empty_file",
                        f"File not found: {path}",
                        'A question is given with --question "...".' if asked else "Check the path.",
                        f"找不到文件：{path}",
                        '问题请用 --question "..." 给出。' if asked else "请检查文件路径。",
                    )
                # the agent's modules load while the upload is read (in a forked child: two cores work)
                with while_reading(_load_the_agent):
                    add_dataset(session, settings, workspace, path, path.name, args.sheet)
            active = active_datasets(session, workspace.id)
            datasets = local_sources(settings, dataset_sources(active, session))
            # what the run's reader made of each upload: the check reads it instead of reading the upload
            # again (the same table; a million-row CSV's read was most of the check)
            working = first_working_copies(session, settings, active)
            # the check's sandbox starts as soon as its files exist: its imports (~1.5 s of CPU) and its
            # read of the working copies run on the other core while this process imports the rest of
            # the agent and runs it; it waits there for analysis.py (reproduce.start_early_check)
            fonts = settings.data_dir / "cache" / "matplotlib"
            fonts.mkdir(parents=True, exist_ok=True)
            data_files = [Path(d["original_path"]) for d in datasets if d.get("original_path")]
            early = start_early_check(Limits(timeout_s=600.0), fonts, data_files, settings.sandbox_mode, working)
            _load_the_agent()  # what the read's time was too short for
            from app.runs import RunService

            language = run_language([str(c.get("name")) for d in active for c in (d.info or {}).get("columns", [])])
            # a run paused for a question resumes at once here: its tables are read once
            service = RunService(db, settings, keep_frames=True)
            question = args.question or DEFAULT_QUESTION[language]
            run_id = service.create(session, workspace, question, language).id
    except BaseException as err:
        if early is not None:  # no run: nothing will be checked
            early.cancel()
        if not isinstance(err, IngestError):
            raise
        print_ingest_error(err, run_language())
        return EXIT_BAD_INPUT
    try:
        return _analyze_run(args, settings, db, service, run_id, answers, interactive, log_file, early)
    finally:
        if early is not None:
            early.cancel()  # (nothing left to stop once it has finished)


def _analyze_run(
    args: argparse.Namespace,
    settings: Settings,
    db: Database,
    service: RunService,
    run_id: str,
    answers: dict[str, list[str]],
    interactive: bool,
    log_file: Path,
    early: EarlyCheck | None,
) -> int:
    """`verity analyze` once its run exists: the agent, the analysis.py check (in `early`, the sandbox
    started for it, when there is one) and the report's files."""
    from app.cli_questions import settle
    from app.db.models import Run
    from app.reports.files import write_analysis_script
    from app.reports.pdf_fonts import fonts_loading
    from app.reports.render import write_report_files
    from app.reports.reproduce import Limits, check_analysis_script, host_verdict
    from app.reports.script import dataset_sources, report_numbers
    from app.storage import node_files
    from app.workspaces import active_datasets, first_working_copies, local_sources

    waiting = settle(service, run_id, answers, interactive, args.out)  # cli_questions.py: prompt, or exit 3
    if waiting is not None:
        return waiting
    with db.session() as session:
        run = session.get(Run, run_id)
        if run is None or run.status != "done":
            status, error = (run.status, run.error) if run else ("missing", "the run's record is gone")
            print(f"error: run_{status}: {error or status}", file=sys.stderr)
            print(f"details: {log_file}", file=sys.stderr)
            return EXIT_INTERNAL
        report = run_report(session, run_id)
        active = active_datasets(session, run.workspace_id)
        datasets = local_sources(settings, dataset_sources(active, session))
        working = first_working_copies(session, settings, active)
    files = node_files(settings)
    for figure in report.get("figures", []):  # keys in the store -> the files in this node's cache
        found = files.local(str(figure.get("path") or ""))
        if found is not None:
            figure["path"] = str(found.resolve())
    # analysis.py first (the check runs it), every other file once the check's verdict is in: the
    # PDF and the Word file are the slow ones, and they were written twice
    script = write_analysis_script(report, args.out, datasets)
    # in the run_python sandbox (it re-runs the model's code); the report claims it only when this ran
    # matplotlib's font list, built by the first check and kept in the data dir as the page's check keeps
    # it (app/web/number_check.py): without it every check built it again in its sandbox
    fonts = settings.data_dir / "cache" / "matplotlib"
    fonts.mkdir(parents=True, exist_ok=True)
    limits = Limits(timeout_s=600.0)
    data_files = [Path(d["original_path"]) for d in datasets if d.get("original_path")]
    # this process waits for the check (a sandboxed process): meanwhile it loads the PDF's fonts
    with fonts_loading():
        if early is not None:  # the sandbox started before the run (it runs it as below where the inputs changed)
            check = early.finish(script, limits, fonts, data_files, working)
        else:
            check = check_analysis_script(
                script,
                limits,
                cache_dir=fonts,
                sandbox_mode=settings.sandbox_mode,
                data_files=data_files,
                working_copies=working,
            )
    # the verdict is the host's: the counts must describe this report's evidence numbers
    reproduction = None if check.summary is None else host_verdict(check.summary, len(report_numbers(report)))
    if reproduction is not None:
        report["reproduction"] = reproduction
    written = {**write_report_files(report, args.out), "analysis": script}
    print(report["answer"])
    names = sorted(p.name for p in written.values() if isinstance(p, Path))
    print(f"\nReport written to {args.out}/ ({', '.join(names)})")
    if reproduction is not None:
        print(
            f"analysis.py: {reproduction['matched']} numbers re-computed, {reproduction['differing']} differ "
            f"({reproduction['status']}; see analysis_output.txt)"
        )
    elif check.reason == "no_sandbox":
        print(
            "analysis.py was not run: it re-runs the analysis' own code, which runs only in a sandbox, and no "
            "sandbox can run here (see analysis_output.txt). Run it yourself: python analysis.py"
        )
    return EXIT_OK


class _Plain(logging.Formatter):
    """Warnings on the terminal as one plain line each: tracebacks go to the log file only."""

    def formatException(self, ei: Any) -> str:  # noqa: N802 - logging's name
        return ""

    def formatStack(self, stack_info: str) -> str:  # noqa: N802
        return ""

    def format(self, record: logging.LogRecord) -> str:
        return super().format(
            logging.makeLogRecord({**record.__dict__, "exc_info": None, "exc_text": None, "stack_info": None})
        )


def configure_logging(settings: Settings) -> Path:
    """Warnings to stderr in plain words; everything with tracebacks to DATA_DIR/verity.log, which
    rotates at log_max_mb, keeping log_backups old ones; several processes may write it at once
    (app/logfile.py)."""
    from app.logfile import SharedRotatingFileHandler

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    log_file = settings.data_dir / "verity.log"
    terminal = logging.StreamHandler()
    terminal.setLevel(logging.WARNING)
    terminal.setFormatter(_Plain("%(levelname)s: %(message)s"))
    detailed = SharedRotatingFileHandler(
        log_file, max_bytes=int(settings.log_max_mb * 1024 * 1024), backups=settings.log_backups
    )
    detailed.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[terminal, detailed], force=True)
    return log_file


def run_report(session: Session, run_id: str) -> dict[str, Any]:
    from sqlalchemy import select

    from app.db.models import Report

    latest = select(Report).where(Report.run_id == run_id).order_by(Report.created_at.desc())
    report = session.scalars(latest).first()
    if report is None:  # a finished run always writes its report; say so plainly if it did not
        raise RuntimeError(f"run {run_id} finished without a report")
    content: dict[str, Any] = report.content
    return content


if __name__ == "__main__":
    sys.exit(main())
