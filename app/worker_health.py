"""The worker's liveness file, read by `verity worker --alive` (docker-compose.yml's worker healthcheck).

Apart from app/worker.py on purpose: the healthcheck runs every 15 s in each worker container within a
10 s timeout, so it must import only the standard library and the settings. Through app/worker.py it
imported the whole analysis stack (app.runs → the agent → pandas, matplotlib, scikit-learn): 3 CPU
seconds a check, 18-21 s of wall time on a busy two-core host, and every worker was reported unhealthy.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.config import Settings


def alive_file(settings: Settings) -> Path:
    """In the worker's data folder, named by the host: scaled workers (containers, each its own host
    name) may share one cache volume, and each container's healthcheck must read its own worker's."""
    return Path(settings.data_dir) / f"worker.{socket.gethostname()}.alive"


def alive_age_s(settings: Settings) -> float | None:
    """Seconds since this data folder's worker last found itself well; None when it never did."""
    try:
        return time.time() - alive_file(settings).stat().st_mtime
    except OSError:
        return None
