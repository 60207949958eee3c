"""Ending a one-shot process without tearing it down (`verity analyze`, the analysis.py check's sandbox).

At its normal end Python frees every module and object one by one: with pandas, scipy, matplotlib and
the agent loaded that is ~0.5-1 s of CPU spent on memory the operating system takes back at once anyway,
and `verity analyze`'s caller (and, for the check, the host waiting for the sandbox to end) waits for it.
`exit_now` does what an ordinary end does that anyone can see (other threads waited for, the exit
handlers run, the output flushed), then leaves with the same status.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading


def exit_status(code: object) -> int:
    """The status `sys.exit(code)` ends a process with (a message is written to stderr: status 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def exit_now(code: object) -> None:
    """End the process as `sys.exit(code)` would, without the teardown of its modules and objects."""
    status = exit_status(code)
    # What the interpreter's own end does first: threading's exit hooks (an executor's idle workers are
    # told to stop: joined without it, they would wait forever), then every other non-daemon thread joined
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    else:  # (an interpreter without it: the threads joined as it would)
        for thread in threading.enumerate():
            if thread is not threading.main_thread() and not thread.daemon:
                thread.join()
    atexit._run_exitfuncs()  # logging's flush, temporary folders' removal, ...
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or its reader gone: nothing more can be written
            pass
    os._exit(status)
