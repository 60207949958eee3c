"""A turn: the messages, the model, the tools and the records of one run of the agent loop.

A module of its own (with nothing of app.agent imported at run time) so every mechanism beside
the loop can name the type it works on without importing the loop."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.agent.context.compaction import ContextWindow
    from app.agent.model.interface import ChatModel
    from app.agent.policy.budget import TurnBudget
    from app.agent.recorder import RunRecorder
    from app.agent.tools.toolbox import Toolbox


class Interrupted(Exception):
    """The user stopped the run."""


@dataclass
class Turn:
    messages: list[dict[str, Any]]
    model: ChatModel
    toolbox: Toolbox
    recorder: RunRecorder
    budget: TurnBudget
    stop_event: threading.Event = field(default_factory=threading.Event)
    figure_url: Callable[[str], str] = str
    context: ContextWindow | None = None  # the context cascade (compaction.py)
    intent: Any = None  # the turn's Intent (intent.py): budgets, groups, restrictions


def append(turn: Turn, message: dict[str, Any]) -> None:
    """Add a message to the history and to the run's stored record."""
    turn.messages.append(message)
    turn.recorder.add_message(message)
