"""Error texts for the user's code, inside the sandbox: which limit a dead child hit, and a
structured description (line, frame, "did you mean") with a hint for an exception.

Standard library only.
"""

from __future__ import annotations

import difflib
import errno
import os
import signal
import traceback

CODE_FILE = "<code>"


def _death(status: int, limits: dict) -> dict:
    """The child died without a result: say which limit (or crash) it was."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig in (signal.SIGXCPU, signal.SIGKILL):
            return {
                "error": "limit_exceeded",
                "limit": "cpu",
                "message": f"The code used more than the CPU-time limit of {limits['cpu_s']} s and was stopped.",
                "hint": "Use vectorised pandas/numpy operations instead of Python loops, or work on a sample.",
                "retryable": False,
            }
        if sig == signal.SIGXFSZ:
            return _output_limit(limits)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        return {
            "error": "python_error",
            "message": f"The Python process crashed ({name}).",
            "hint": "Low-level calls (ctypes, C extensions) are not supported here; use pandas/numpy.",
            "retryable": False,
        }
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
    return {
        "error": "python_error",
        "message": f"The Python process exited without a result (status {code}).",
        "hint": "Do not call os._exit or close standard streams; let the code finish normally.",
        "retryable": False,
    }


def _scratch_limit(limits: dict) -> dict:
    return {
        "error": "limit_exceeded",
        "limit": "scratch",
        "message": f"The code filled the sandbox's writable space ({limits.get('scratch_mb', '?')} MB for the "
        "current folder, as much for /tmp); the write failed.",
        "hint": "Write less: save summaries or samples instead of whole datasets, and fewer files.",
        "retryable": False,
    }


def _output_limit(limits: dict) -> dict:
    return {
        "error": "limit_exceeded",
        "limit": "output",
        "message": f"The code wrote more than the file-size limit of {limits['file_mb']} MB.",
        "hint": "Print summaries (head(), describe(), aggregated tables) instead of whole datasets.",
        "retryable": False,
    }


def describe_error(exc: BaseException, code: str, ns: dict, frames: dict) -> dict:
    """A structured error: message, the user's line, the last frame and a hint."""
    lines = code.splitlines()
    message = f"{type(exc).__name__}: {exc}"
    error: dict = {
        "error": "python_error",
        "message": message[:2000],
        "exception": type(exc).__name__,
        "retryable": True,
    }
    if isinstance(exc, SyntaxError) and exc.filename == CODE_FILE:
        error.update(
            line=exc.lineno,
            code_line=(exc.text or "").rstrip()[:500],
            where="syntax",
            hint="Fix the syntax at this line and run the code again.",
        )
        return error
    tb = traceback.extract_tb(exc.__traceback__)
    user = [f for f in tb if f.filename == CODE_FILE]
    if user:
        line = user[-1].lineno
        error["line"] = line
        if line and 0 < line <= len(lines):
            error["code_line"] = lines[line - 1].strip()[:500]
    if tb:
        last = tb[-1]
        filename = "your code" if last.filename == CODE_FILE else _short_path(last.filename)
        error["where"] = f"{filename}:{last.lineno} in {last.name}"
    columns = {name: [str(c) for c in frame.columns] for name, frame in frames.items()}
    all_columns = [c for cols in columns.values() for c in cols]
    hint = f"Fix the code at line {error.get('line')} and run it again." if user else "Fix the code and run it again."
    if isinstance(exc, KeyError) and exc.args:
        key = str(exc.args[0])
        if key not in all_columns:
            error["did_you_mean"] = _close(key, all_columns)
            error["available"] = {name: cols[:60] for name, cols in columns.items()}
            hint = f"There is no column {key!r}. Available columns: " + "; ".join(
                f"{name}: {cols[:60]}" for name, cols in columns.items()
            )
    elif isinstance(exc, AttributeError) and "DataFrame" in str(exc) and getattr(exc, "name", None):
        close = _close(str(exc.name), all_columns)
        if close:
            error["did_you_mean"] = close
            hint = f"There is no attribute {exc.name!r}; use df[{close[0]!r}] for the column."
    elif isinstance(exc, NameError) and getattr(exc, "name", None):
        dataset_names = [n for n in ns.get("datasets", {}) if str(n).isidentifier()]
        names = [n for n in ns if not n.startswith("__")] + dataset_names
        error["did_you_mean"] = _close(str(exc.name), names)
        hint = f"{exc.name!r} is not defined. Available: datasets[{list(ns.get('datasets', {}))}], " + ", ".join(
            sorted(n for n in names if n != "datasets")[:30]
        )
    elif isinstance(exc, ModuleNotFoundError):
        hint = (
            "This module is not installed and nothing can be installed (no network). Use pandas (pd), numpy "
            "(np), scipy/stats, statsmodels (sm, smf), sklearn and matplotlib (plt)."
        )
    elif isinstance(exc, PermissionError) or (isinstance(exc, OSError) and exc.errno == errno.EROFS):
        hint = (
            "Only the current folder is writable (save_table / save_figure write there); the datasets are "
            "read-only: change a copy (df = df.copy()) instead."
        )
    elif isinstance(exc, FileNotFoundError):
        hint = "Use the loaded DataFrames (datasets['name']) instead of reading files."
    error["hint"] = hint
    return error


def _short_path(path: str) -> str:
    for marker in ("site-packages/", "lib/python3"):
        if marker in path:
            return path.split(marker, 1)[1]
    return os.path.basename(path)


def _close(word: str, choices: list[str]) -> list[str]:
    folded = {c.lower(): c for c in choices}
    return [folded[m] for m in difflib.get_close_matches(word.lower(), list(folded), n=3, cutoff=0.6)]
