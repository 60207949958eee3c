"""The warm parent: runs INSIDE the sandbox, one per workspace.

It starts with a clean environment, drops to the sandbox user, imports the heavy libraries once
(with every BLAS/OpenMP/Arrow thread pool pinned to one thread *before* import, so no pool thread
exists when it forks), installs the seccomp filter, says hello, then serves requests from the host
over the socketpair it inherited. Each request forks one child that applies the limits, loads the
datasets, runs the user's code and writes one JSON result to a pipe; the parent forwards it.

Only the standard library is imported at module level; the heavy imports happen in `preload`.
This module is started as `python -I -S -B -c "...; worker.main(spec_json)"`.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

from sandbox import caps, protocol, seccomp
from sandbox.procs import reap_until
from sandbox.worker_child import MODULES, THREADED_OPTIONAL
from sandbox.worker_parent import Parent, stop_leftovers

# The fork loop lives here; the parent's call handling in `worker_parent`, the child's execution
# (limits, capture, artefacts) in `worker_child`, error texts and hints in `worker_errors`. Every
# module is standard library at import: this runs inside the sandbox with `python -I -S`.

THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "BLIS_NUM_THREADS": "1",
    "ARROW_DEFAULT_MEMORY_POOL": "system",
    "JE_ARROW_MALLOC_CONF": "background_thread:false",
    "MPLBACKEND": "Agg",
}


# ----------------------------------------------------------------------------- start-up
def prepare_scratch(spec: dict) -> None:
    """The writable folders, made while the zygote may still be root: the calls' folder belongs to
    the call user, matplotlib's cache to the parent user (a call cannot change either's files)."""
    scratch = spec["scratch"]
    calls, cache = os.path.join(scratch, "calls"), os.path.join(scratch, ".matplotlib")
    for folder in (calls, cache):
        os.makedirs(folder, mode=0o700, exist_ok=True)
    if spec.get("call_uid") is not None and os.geteuid() == 0:
        os.chown(calls, spec["call_uid"], spec["call_gid"])
        os.chown(cache, spec["uid"], spec["gid"])


def drop_privileges(spec: dict) -> None:
    """Become the workspace's parent user (when started as root: bwrap without a user namespace,
    or unshare), keeping only what starting calls as the call user takes (sandbox.caps)."""
    if spec.get("uid") is None or os.geteuid() != 0:
        return
    caps.become_parent_user(spec["uid"], spec["gid"])


def preload() -> float:
    """Import the analysis stack once; returns the seconds it took."""
    started = time.monotonic()
    os.environ.update(THREAD_ENV)
    # Libraries that start threads on import must not load before the fork: statsmodels imports
    # polars when it is installed (verity[bench] installs it), and polars starts its own threads and
    # jemalloc's. A None entry makes `import polars` fail as if it were absent, which statsmodels expects.
    for threaded in THREADED_OPTIONAL:
        sys.modules.setdefault(threaded, None)  # type: ignore[arg-type]
    import matplotlib
    import numpy as np
    import pandas as pd
    import pyarrow.parquet  # noqa: F401
    import scipy
    import scipy.stats
    import sklearn
    import sklearn.cluster
    import sklearn.ensemble
    import sklearn.linear_model
    import sklearn.metrics
    import sklearn.model_selection
    import sklearn.preprocessing
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _register_cjk_font(matplotlib)
    MODULES.update(
        np=np, pd=pd, scipy=scipy, stats=scipy.stats, sm=sm, smf=smf, sklearn=sklearn, matplotlib=matplotlib, plt=plt
    )
    return time.monotonic() - started


def _register_cjk_font(matplotlib) -> None:
    """Chinese labels render: the Noto Sans CJK font shipped by `mplfonts`, as a fallback family."""
    try:
        import mplfonts
        from matplotlib import font_manager

        folder = os.path.join(os.path.dirname(mplfonts.__file__), "fonts")
        for filename in ("NotoSansCJKsc-Regular.otf", "SourceHanSansSC-Regular.otf", "SimHei.ttf"):
            path = os.path.join(folder, filename)
            if os.path.isfile(path):
                font_manager.fontManager.addfont(path)
                name = font_manager.FontProperties(fname=path).get_name()
                matplotlib.rcParams["font.family"] = ["DejaVu Sans", name]
                matplotlib.rcParams["axes.unicode_minus"] = False
                return
    except Exception:  # noqa: BLE001 - fonts are cosmetic
        pass


def thread_names() -> list[str]:
    names = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as handle:
                names.append(handle.read().strip())
        except OSError:
            pass
    return names


RECYCLE_EXIT = 3
MAX_RESPAWNS_PER_MINUTE = 30


def main(spec_json: str) -> None:
    """Start-up, then the zygote loop: fork a parent, wait for it, fork a fresh one when it asks
    to be recycled (after a crash or a limit breach) or dies; stop when the host has gone."""
    spec = json.loads(spec_json)
    sock = socket.socket(fileno=spec["fd"])
    try:
        if spec.get("nsroot"):
            from sandbox import nsroot

            nsroot.enter(spec["nsroot"])
        prepare_scratch(spec)
        drop_privileges(spec)
        os.umask(0o077)
        os.chdir(spec["scratch"])
        import_s = preload()
        if spec.get("seccomp") and spec.get("call_pidns"):
            # the parent makes a pid namespace per call (which the filter forbids): each call
            # installs the filter itself before the code runs, and refuses to run without it
            seccomp_status = "on" if seccomp.supported() else f"unavailable ({os.uname().machine})"
        else:
            seccomp_status = seccomp.install() if spec.get("seccomp") else "off"
        caps.not_dumpable()
    except BaseException as exc:
        protocol.send(sock, {"op": "hello", "error": f"{type(exc).__name__}: {exc}"})
        raise
    info = {
        "op": "hello",
        "uid": os.getuid(),
        "call_uid": spec.get("call_uid"),
        "import_s": round(import_s, 3),
        "seccomp": seccomp_status,
        "python": sys.version.split()[0],
        "zygote_pid": os.getpid(),
        "zygote_threads": len(thread_names()),
    }
    respawns: list[float] = []
    generation, previous = 0, None
    while True:
        generation += 1
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                code = serve(spec, sock, {**info, "generation": generation, "previous": previous})
            finally:
                os._exit(code)
        status = reap_until(pid) or 0
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            break  # the host closed the channel
        # A recycle after a limit breach, or the parent died (a crash): either way nothing of the
        # last call may survive into the next parent's first call.
        recycled = os.WIFEXITED(status) and os.WEXITSTATUS(status) == RECYCLE_EXIT
        stopped = stop_leftovers({1, os.getpid()}) if spec.get("pidns") else 0
        previous = {"recycled": recycled, "status": status, "stopped_processes": stopped}
        now = time.monotonic()
        respawns = [t for t in respawns if now - t < 60] + [now]
        if len(respawns) > MAX_RESPAWNS_PER_MINUTE:
            break
    os._exit(0)


def serve(spec: dict, sock: socket.socket, info: dict) -> int:
    """One parent: say hello, run calls until the host goes away (0) or a recycle is due (3)."""
    threads = thread_names()
    protocol.send(sock, {**info, "pid": os.getpid(), "threads": len(threads), "thread_names": threads})
    parent = Parent(spec, sock)
    while True:
        try:
            request = protocol.recv(sock)
        except (protocol.ChannelClosed, OSError):
            return 0
        op = request.get("op")
        if op == "run":
            try:
                reply = parent.run(request)
            except Exception as exc:  # noqa: BLE001 - a parent failure is reported, then recycled
                reply = {
                    "op": "result",
                    "ok": False,
                    "exit_status": -1,
                    "error": {
                        "error": "sandbox_error",
                        "message": f"The sandbox could not run the code ({type(exc).__name__}: {exc}).",
                        "hint": "Run the code again.",
                        "retryable": True,
                    },
                }
        elif op == "ping":
            reply = {"op": "pong", "threads": len(thread_names())}
        else:
            return 0
        # The host matches every reply to its request: a message that is not this answer (a new
        # parent's hello after a crash) is never taken for the call's output.
        reply.update(call_id=request.get("call_id"), seq=request.get("seq"))
        recycle = (reply.get("error") or {}).get("error") == "limit_exceeded" or reply.get("exit_status") not in (0,)
        reply["recycled"] = bool(recycle)
        try:
            protocol.send(sock, reply)
        except OSError:
            return 0
        if recycle:
            return RECYCLE_EXIT
