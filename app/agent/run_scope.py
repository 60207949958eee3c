"""The run's scope: what the harness tools and mechanisms of one run share besides their arguments.

`ToolContext` (analysis_tools, a floor below the app) carries it as an opaque `scope` field, so an
analysis tool never sees it; harness code reads it through `run_scope(ctx)`, typed. It replaces a
string-keyed dict, whose keys were a hidden dependency of a dozen modules on `runs.py`.

A leaf module: its types are imported for type checking only, so any module of the harness can
import it without making a circle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from analysis_tools import ToolContext
    from app.agent.context.compaction import ContextWindow
    from app.agent.store import Session
    from app.agent.tools.exposure import Exposure
    from app.config import Settings

Emit = Callable[[str, dict[str, Any]], None]  # RunRecorder.emit: a progress event (kind, payload)
T = TypeVar("T")


class ScopeMissing(RuntimeError):
    """A harness bug: a tool or mechanism needs part of the run's scope that its context lacks."""


@dataclass
class RunScope:
    """One run's shared state. `RunService.prepare_turn` fills the run's part; outside a run (tests,
    a toolbox on its own) only what is given is known, and `need_*` says what is missing."""

    session: Session | None = None  # the run's database session (tasks, evidence, questions, plan)
    settings: Settings | None = None
    workspace_id: str | None = None
    run_id: str | None = None
    emit: Emit | None = None
    context_window: ContextWindow | None = None  # compaction: where outputs are saved, how long they may be
    summaries: list[dict[str, Any]] | None = None  # the datasets' summaries, computed once per turn
    dataset_paths: dict[str, Path | str] | None = None  # run_python's datasets when there is no session
    # The toolbox's state that its tools act on:
    exposure: Exposure | None = None  # the tools offered (tool_search widens it)
    pause: dict[str, Any] | None = None  # set by ask_user_question: the run waits for the answer (clarify.py)
    gates_checked: bool = False  # the hard gates are checked once, before the first analysis (loop.py)

    def need_session(self) -> Session:
        return _needed(self.session, "session")

    def need_settings(self) -> Settings:
        return _needed(self.settings, "settings")

    def need_workspace_id(self) -> str:
        return _needed(self.workspace_id, "workspace_id")

    def need_run_id(self) -> str:
        return _needed(self.run_id, "run_id")

    def send(self, kind: str, payload: dict[str, Any]) -> None:
        """Emit a progress event of the run."""
        _needed(self.emit, "emit")(kind, payload)


def run_scope(ctx: ToolContext | None, missing_ok: bool = False) -> RunScope:
    """The run's scope a tool context carries. Missing, it raises `ScopeMissing` (a harness bug),
    or with `missing_ok` gives an empty scope, for a reader that does without (what is set on that
    empty scope is lost, so a writer never passes `missing_ok`)."""
    scope = getattr(ctx, "scope", None)
    if isinstance(scope, RunScope):
        return scope
    if missing_ok and scope is None:
        return RunScope()
    raise ScopeMissing(f"the tool context carries no run scope (found {type(scope).__name__})")


def need_context(ctx: ToolContext | None) -> ToolContext:
    """The tool context a harness tool was called with. The registry always passes one (`ctx` comes
    last, after arguments with defaults, hence its `None` default); a call without one is a harness bug."""
    if ctx is None:
        raise ScopeMissing("the tool was called without a tool context")
    return ctx


def _needed(value: T | None, name: str) -> T:
    if value is None:
        raise ScopeMissing(f"the run scope has no {name}: the harness did not give this tool what it needs")
    return value
