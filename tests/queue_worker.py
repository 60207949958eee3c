"""A `verity worker` (run_executor=dramatiq) for tests/test_queue.py, as its own process: the built-in
analyst, slowed by VERITY_TEST_MODEL_DELAY_S seconds before each reply so a test can kill the process
with SIGKILL in the middle of a run. Everything else is the real worker (app/job_worker.py).

    python -m tests.queue_worker
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

from app.analyst import BuiltinAnalyst
from app.config import get_settings
from app.job_worker import QueueWorker

DELAY_S = float(os.environ.get("VERITY_TEST_MODEL_DELAY_S", "0"))


class SlowAnalyst(BuiltinAnalyst):
    def complete(self, messages: list[Any], tools: list[dict[str, Any]]) -> Any:
        time.sleep(DELAY_S)
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
