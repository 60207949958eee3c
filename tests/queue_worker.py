"""A `verity worker` (run_executor=dramatiq) for tests/test_queue.py, as its own process: the built-in
analyst, slowed by VERITY_TEST_MODEL_DELAY_S seconds before each reply, or held before its reply once the
run has VERITY_TEST_MODEL_HOLD_AFTER_CALLS finished tool calls until the file VERITY_TEST_MODEL_RELEASE
exists (only a run asked in the words VERITY_TEST_MODEL_HOLD_WORDS, where set), so a test can kill or stop the process in the middle of a run: held, the run is certain to be
still going whatever the machine's load, and nobody waits for a delay longer than it needs. Everything
else is the real worker (app/job_worker.py).

    python -m tests.queue_worker
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

from app.analyst import BuiltinAnalyst
from app.config import get_settings
from app.job_worker import QueueWorker

DELAY_S = float(os.environ.get("VERITY_TEST_MODEL_DELAY_S", "0"))
HOLD_AFTER_CALLS = int(os.environ.get("VERITY_TEST_MODEL_HOLD_AFTER_CALLS", "0"))
RELEASE = os.environ.get("VERITY_TEST_MODEL_RELEASE")
# only a run asked in these words is held (empty: every run)
HOLD_WORDS = os.environ.get("VERITY_TEST_MODEL_HOLD_WORDS", "")


def role_and_text(message: Any) -> tuple[Any, str]:
    if isinstance(message, dict):
        return message.get("role"), str(message.get("content") or "")
    return getattr(message, "role", None), str(getattr(message, "content", "") or "")


def finished_calls(messages: list[Any]) -> int:
    """The tool results the model is shown: the run's calls that have finished (a turn taken over is
    rebuilt from its recorded steps, so the worker that goes on with it sees them too)."""
    return sum(role_and_text(message)[0] == "tool" for message in messages)


def held(messages: list[Any]) -> bool:
    """Whether this reply waits for the release: the run has its calls, and is the one asked of."""
    if not RELEASE or finished_calls(messages) < HOLD_AFTER_CALLS:
        return False
    return not HOLD_WORDS or any(role == "user" and HOLD_WORDS in text for role, text in map(role_and_text, messages))


class SlowAnalyst(BuiltinAnalyst):
    def complete(self, messages: list[Any], tools: list[dict[str, Any]]) -> Any:
        time.sleep(DELAY_S)
        if held(messages):
            while not Path(RELEASE).exists():  # type: ignore[arg-type]
                time.sleep(0.02)
        return super().complete(messages, tools)


def main() -> None:
    worker = QueueWorker(
        get_settings(), model_factory=lambda settings, datasets, language: SlowAnalyst(datasets, language)
    )
    worker.owns_process = True  # as `verity worker` sets it
    signal.signal(signal.SIGTERM, lambda *_: worker.stop.set())
    threading.Thread(
        target=lambda: worker.consuming.wait() and print(f"worker {worker.name} ready", flush=True)
    ).start()
    worker.run_forever()


if __name__ == "__main__":
    main()
