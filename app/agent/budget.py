"""The turn budget: every turn ends, within its caps on rounds, tool calls and wall time."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

STOP_NOW = ("[harness] The turn budget is spent. Stop calling tools now and write the final answer "
            "from the evidence you already have; say plainly what was not completed.")
CONVERGE = ("[harness] 75% of this turn's tool budget is used. Stop exploring: finish the essential "
            "analyses, record evidence and answer.")


@dataclass
class TurnBudget:
    max_tool_calls: int
    max_rounds: int
    wall_time_s: float
    tool_calls: int = 0
    rounds: int = 0
    started: float = field(default_factory=time.monotonic)
    warned: bool = False

    def start_round(self) -> str | None:
        """Count a round; return a harness message the model must see, if any."""
        self.rounds += 1
        if self.spent:
            return STOP_NOW
        if not self.warned and self.tool_calls >= 0.75 * self.max_tool_calls:
            self.warned = True
            return CONVERGE
        return None

    @property
    def spent(self) -> bool:
        return (self.rounds > self.max_rounds or self.tool_calls >= self.max_tool_calls
                or time.monotonic() - self.started > self.wall_time_s)

    def allow_tool_call(self) -> bool:
        if self.tool_calls >= self.max_tool_calls:
            return False
        self.tool_calls += 1
        return True
