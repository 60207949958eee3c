"""How far a background read has got: rows read and a percentage, for the upload's page.

The read runs in a forked child (app.ingest.bounded), so the reader cannot call back into the web
server: it writes `progress.json` in its job folder (a small file replaced whole, never half
written), and the thread that waits for the child reads it from time to time (`watch`) and hands
it on (app.workspaces.finish_loading records it in the dataset's info). A read with no job folder
(the CLI, a preview) reports nowhere: `report` then costs a global lookup.

The stages of `pipeline.load_table` are not equally long; the percentages below are roughly their
share of a big CSV's read (issue 27's profile: parsing the rows about half, converting the types
most of the rest). Within the types stage the percentage moves column by column.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
FILE = "progress.json"
MIN_INTERVAL_S = 0.2  # at most this often to disk: a column's conversion can take milliseconds
POLL_S = 0.5  # how often the waiting thread looks

# Percent done when each stage of `load_table` starts (`types` goes up column by column to `checks`).
STAGES = {"opening": 0, "rows": 5, "columns": 50, "types": 55, "checks": 90, "saving": 97}

_target: Path | None = None
_last_write = 0.0
_last_percent = 0
_write_lock = threading.Lock()


def report_to(job: Path | None) -> None:
    """In the reading child: where `report` writes (None: nowhere)."""
    global _target, _last_write, _last_percent
    _target, _last_write, _last_percent = (job / FILE if job is not None else None), 0.0, 0


def report(stage: str, rows: int, fraction: float = 0.0, force: bool = False) -> None:
    """The read is at `stage` (a key of STAGES) with `rows` rows read so far; `fraction` of the stage
    done. Written at most every MIN_INTERVAL_S unless `force` (a stage's start)."""
    global _last_write, _last_percent
    target = _target
    if target is None:
        return
    order = list(STAGES)
    start = STAGES[stage]
    end = STAGES[order[order.index(stage) + 1]] if stage != order[-1] else 100
    percent = int(start + (end - start) * min(max(fraction, 0.0), 1.0))
    with _write_lock:  # the type conversion reports from two threads
        now = time.monotonic()
        if percent < _last_percent or (not force and now - _last_write < MIN_INTERVAL_S):
            return  # never backwards: two threads may tell their columns out of order
        _last_write, _last_percent = now, percent
        partial = target.with_suffix(".part")
        try:
            partial.write_text(json.dumps({"stage": stage, "rows": int(rows), "percent": percent}))
            os.replace(partial, target)
        except OSError:  # the job folder is gone (the parent gave up): nothing to tell
            pass


def read(job: Path) -> dict[str, Any] | None:
    """The last progress a child wrote in `job`, or None."""
    try:
        found = json.loads((job / FILE).read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


@contextmanager
def watch(job: Path, on_progress: Callable[[dict[str, Any]], None] | None) -> Iterator[None]:
    """While the block runs (the child reads), hand each new progress in `job` to `on_progress`."""
    if on_progress is None:
        yield
        return
    done = threading.Event()

    def look() -> None:
        seen = None
        while True:
            stop = done.wait(POLL_S)
            now = read(job)  # once more after the child ended: a short read tells its last stage too
            if now is not None and now != seen:
                seen = now
                try:
                    on_progress(now)
                except Exception:  # progress is a nicety; the read goes on without it
                    log.warning("recording a read's progress failed", exc_info=True)
            if stop:
                return

    watcher = threading.Thread(target=look, name="verity-read-progress", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
