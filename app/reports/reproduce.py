"""Run a report's analysis.py and record whether it reproduced every number (what `verity analyze` does
before it says "reproduced by analysis.py" in the report)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from app.paths import REPO_ROOT


def run_analysis_script(script: Path, timeout_s: float = 600.0) -> dict[str, Any] | None:
    """Run analysis.py in its own folder with this Python; returns its summary ({"status": "passed" |
    "failed", "matched", "differing", "not_recomputed", "failed_calls"}) and writes what it printed to
    analysis_output.txt beside it. None when the script could not run to its end (then the report
    claims nothing)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env["PYTHONIOENCODING"] = "utf-8"
    with tempfile.TemporaryDirectory() as folder:
        summary_file = Path(folder) / "summary.json"
        try:
            done = subprocess.run([sys.executable, script.name, "--summary", str(summary_file)], cwd=script.parent,
                                  env=env, capture_output=True, text=True, encoding="utf-8", errors="replace",
                                  timeout=timeout_s, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        (script.parent / "analysis_output.txt").write_text(done.stdout + done.stderr, encoding="utf-8")
        if not summary_file.is_file():
            return None
        try:
            summary = json.loads(summary_file.read_text(encoding="utf-8"))
        except ValueError:
            return None
    return summary if isinstance(summary, dict) and summary.get("status") in ("passed", "failed") else None
