"""The first part of `verity analyze`'s check, started in the sandbox while the run is still going.

`verity analyze` starts the sandbox of its analysis.py check (app.reports.reproduce.start_early_check) as soon
as the data is read, with this file as the script: it imports what every analysis.py imports (pandas,
scipy.stats, matplotlib and the tools' registry: about 1.5 s of CPU) and reads the datasets' working
copies while the agent is still running, on the other core; then it waits for the script on the
descriptor given as its first argument. The host sends analysis.py once the report exists, or closes the
descriptor without sending anything when there is nothing to check (the run stopped): then this exits 0.
The script is written beside this file under the name given and run as `python analysis.py ARGS` would
run it (`__main__`, its own folder first on sys.path), in the same sandbox, under the same limits: the
check re-computes every number exactly as before; only the imports and the reads were done earlier.

Copied into the sandbox's /scratch and run there as a script: standard library imports at the top,
Verity's own only inside `preload` and at the end (it finds them on PYTHONPATH, like analysis.py).
"""

from __future__ import annotations

import importlib
import os
import runpy
import sys


def preload(args: list[str]) -> None:
    """Import what analysis.py imports and read the working copies it will read (`--working NAME PATH`).
    Best effort: anything that fails here fails again in the script, which reports it."""
    try:
        import analysis_tools
        from app.ingest.pipeline import prefetch_working_copy

        for name in ("analysis_tools.tables", "app.numbers", "app.reports.rerun_python", "matplotlib.pyplot"):
            importlib.import_module(name)  # analysis.py's own imports, and the charts' first figure's
        analysis_tools.registry()  # every tool's module: scipy.stats, matplotlib, ...
    except Exception:  # noqa: BLE001 - the script itself imports them again and says what is wrong
        return
    for at, arg in enumerate(args):
        if arg == "--working" and at + 2 < len(args):
            try:
                prefetch_working_copy(args[at + 2])
            except Exception:  # noqa: BLE001 - the script reads it again and reports the error
                continue


def receive(fd: int) -> bytes:
    """Everything the host sends on `fd` until it closes it (nothing: there is no script to run)."""
    chunks = []
    with os.fdopen(fd, "rb") as pipe:
        while chunk := pipe.read(1 << 16):
            chunks.append(chunk)
    return b"".join(chunks)


def main(argv: list[str]) -> int:
    script_fd, name, args = int(argv[1]), argv[2], argv[3:]
    preload(args)
    source = receive(script_fd)
    if not source:
        return 0
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.path.basename(name))
    with open(path, "wb") as handle:
        handle.write(source)
    sys.argv = [path, *args]
    runpy.run_path(path, run_name="__main__")  # its sys.exit is this process's exit
    return 0


if __name__ == "__main__":
    try:
        code: str | int | None = main(sys.argv)
    except SystemExit as stop:  # analysis.py's own sys.exit
        code = stop.code
    try:
        from app.process_exit import exit_now
    except ImportError:  # analysis.py could not have run either: its message says why
        sys.exit(code)
    # the host has its verdict once this sandbox has ended: without freeing pandas, scipy and matplotlib
    exit_now(code)
