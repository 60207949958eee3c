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

import builtins
import difflib
import errno
import json
import keyword
import os
import re
import resource
import select
import shutil
import signal
import socket
import sys
import time
import traceback

from sandbox import protocol, seccomp

THREAD_ENV = {
    "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1", "BLIS_NUM_THREADS": "1", "ARROW_DEFAULT_MEMORY_POOL": "system",
    "JE_ARROW_MALLOC_CONF": "background_thread:false", "MPLBACKEND": "Agg",
}
CODE_FILE = "<code>"
MAX_ARTEFACTS = 20
MAX_RESULT_CHARS = 20_000
_SAFE_NAME = re.compile(r"[^\w.-]+", re.UNICODE)

MODULES: dict[str, object] = {}


# ----------------------------------------------------------------------------- start-up
def drop_privileges(uid: int | None, gid: int | None) -> None:
    """Become the workspace's unprivileged user (when started as root: bwrap without a user
    namespace or unshare). Afterwards the process has no capabilities at all."""
    if uid is None or os.geteuid() != 0:
        return
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.geteuid() == 0 or os.getuid() == 0:
        raise SystemExit("could not drop privileges")


def preload() -> float:
    """Import the analysis stack once; returns the seconds it took."""
    started = time.monotonic()
    os.environ.update(THREAD_ENV)
    import numpy as np
    import pandas as pd
    import pyarrow.parquet  # noqa: F401
    import scipy
    import scipy.stats
    import statsmodels.api as sm
    import statsmodels.formula.api as smf
    import sklearn
    import sklearn.cluster  # noqa: F401
    import sklearn.ensemble  # noqa: F401
    import sklearn.linear_model  # noqa: F401
    import sklearn.metrics  # noqa: F401
    import sklearn.model_selection  # noqa: F401
    import sklearn.preprocessing  # noqa: F401
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _register_cjk_font(matplotlib)
    MODULES.update(np=np, pd=pd, scipy=scipy, stats=scipy.stats, sm=sm, smf=smf, sklearn=sklearn,
                   matplotlib=matplotlib, plt=plt)
    return time.monotonic() - started


def _register_cjk_font(matplotlib) -> None:
    """Chinese labels render: the Noto Sans CJK font shipped by `mplfonts`, as a fallback family."""
    try:
        from matplotlib import font_manager

        import mplfonts  # type: ignore[import-not-found]

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


def _not_dumpable() -> None:
    """No process of the same user (a call's child) may ptrace or write /proc/<parent>/mem."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except Exception:  # noqa: BLE001
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
    if spec.get("nsroot"):
        from sandbox import nsroot

        nsroot.enter(spec["nsroot"])
    drop_privileges(spec.get("uid"), spec.get("gid"))
    os.umask(0o077)
    os.chdir(spec["scratch"])
    sock = socket.socket(fileno=spec["fd"])
    try:
        import_s = preload()
        seccomp_status = seccomp.install() if spec.get("seccomp") else "off"
        _not_dumpable()
    except Exception as exc:  # noqa: BLE001 - tell the host why start-up failed
        protocol.send(sock, {"op": "hello", "error": f"{type(exc).__name__}: {exc}"})
        raise
    info = {"op": "hello", "uid": os.getuid(), "import_s": round(import_s, 3), "seccomp": seccomp_status,
            "python": sys.version.split()[0], "zygote_pid": os.getpid(), "zygote_threads": len(thread_names())}
    respawns: list[float] = []
    generation = 0
    while True:
        generation += 1
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                code = serve(spec, sock, {**info, "generation": generation})
            finally:
                os._exit(code)
        status = _wait_for(pid)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            break  # the host closed the channel
        now = time.monotonic()
        respawns = [t for t in respawns if now - t < 60] + [now]
        if len(respawns) > MAX_RESPAWNS_PER_MINUTE:
            break
    os._exit(0)


def _wait_for(pid: int) -> int:
    """Wait for one child, reaping any orphan on the way (the zygote may be pid 1)."""
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 0
        except InterruptedError:
            continue
        if done == pid:
            return status


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
                reply = {"op": "result", "ok": False, "exit_status": -1, "error": {
                    "error": "sandbox_error", "message": f"The sandbox could not run the code ({type(exc).__name__}: "
                    f"{exc}).", "hint": "Run the code again.", "retryable": True}}
        elif op == "ping":
            reply = {"op": "pong", "threads": len(thread_names())}
        else:
            return 0
        recycle = (reply.get("error") or {}).get("error") == "limit_exceeded" or reply.get("exit_status") not in (0,)
        reply["recycled"] = bool(recycle)
        try:
            protocol.send(sock, reply)
        except OSError:
            return 0
        if recycle:
            return RECYCLE_EXIT


# ----------------------------------------------------------------------------- the parent
class Parent:
    def __init__(self, spec: dict, sock: socket.socket):
        self.spec = spec
        self.sock = sock
        self.scratch = spec["scratch"]
        self.pidns = bool(spec.get("pidns"))
        self.tmp_keep = set(os.listdir("/tmp")) if self.pidns else None

    def run(self, request: dict) -> dict:
        call_id = _SAFE_NAME.sub("_", str(request.get("call_id") or "call"))[:80]
        call_dir = os.path.join(self.scratch, "calls", call_id)
        os.makedirs(call_dir, exist_ok=True)
        limits = request["limits"]
        wall_s = float(limits["wall_s"])
        read_fd, write_fd = os.pipe()
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:  # ---- child
            code = 70
            try:
                os.close(read_fd)
                self.sock.close()
                code = run_child(write_fd, call_dir, call_id, request)
            except BaseException:  # noqa: BLE001 - never return into the parent's loop
                code = 71
                try:
                    os.write(2, traceback.format_exc().encode("utf-8", "replace"))
                except BaseException:  # noqa: BLE001
                    pass
            finally:
                os._exit(code)
        os.close(write_fd)
        # The child sends one length-prefixed message; processes the code forked may keep the
        # pipe open, so the parent stops reading at the end of the message, not at EOF.
        buffer, timed_out, expected = bytearray(), False, None
        deadline = started + wall_s
        while expected is None or len(buffer) < expected:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            buffer += chunk
            if expected is None and len(buffer) >= 8:
                expected = 8 + int.from_bytes(buffer[:8], "big")
        os.close(read_fd)
        if timed_out:
            _kill(pid)
        status = _wait(pid, 5.0)
        try:  # whatever the call forked and left behind in its process group
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        elapsed = time.monotonic() - started
        self.cleanup()
        reply = _decode(bytes(buffer[8:expected])) if expected and len(buffer) >= expected else None
        if timed_out:
            reply = {"ok": False, "error": {"error": "limit_exceeded", "limit": "wall",
                                            "message": f"The code ran longer than the wall-time limit of {wall_s:g} s "
                                                       "and was stopped.",
                                            "hint": "Make the computation smaller (sample the rows, fewer iterations) "
                                                    "or avoid waiting (sleep, input).", "retryable": False}}
        elif reply is None:
            reply = {"ok": False, "error": _death(status, limits)}
        reply.update(op="result", call_id=call_id, call_dir=os.path.relpath(call_dir, self.scratch),
                     duration_ms=round(elapsed * 1000, 1), exit_status=status)
        return reply

    def cleanup(self) -> None:
        """Nothing the call started outlives it, and /tmp starts empty for the next call."""
        if self.pidns:
            # In our own pid namespace every process but init, the zygote and this parent is a
            # leftover of the call (a fork bomb refills: repeat until none is left).
            keep = {1, os.getpid(), os.getppid()}
            for _ in range(100):
                others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in keep]
                if not others:
                    break
                for pid in others:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                _reap()
                time.sleep(0.005)
            _reap()
            for name in os.listdir("/tmp"):
                if name in (self.tmp_keep or ()):
                    continue
                path = os.path.join("/tmp", name)
                try:
                    if os.path.isdir(path) and not os.path.islink(path):
                        shutil.rmtree(path, ignore_errors=True)
                    else:
                        os.unlink(path)
                except OSError:
                    pass
        else:
            _reap()


def _kill(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except OSError:
            pass


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _wait(pid: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return -1
        if done:
            return status
        if time.monotonic() > deadline:
            _kill(pid)
            timeout, deadline = 0, time.monotonic() + 5
        time.sleep(0.005)


def _decode(raw: bytes) -> dict | None:
    if not raw:
        return None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


def _death(status: int, limits: dict) -> dict:
    """The child died without a result: say which limit (or crash) it was."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig in (signal.SIGXCPU, signal.SIGKILL):
            return {"error": "limit_exceeded", "limit": "cpu",
                    "message": f"The code used more than the CPU-time limit of {limits['cpu_s']} s and was stopped.",
                    "hint": "Use vectorised pandas/numpy operations instead of Python loops, or work on a sample.",
                    "retryable": False}
        if sig == signal.SIGXFSZ:
            return _output_limit(limits)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        return {"error": "python_error", "message": f"The Python process crashed ({name}).",
                "hint": "Low-level calls (ctypes, C extensions) are not supported here; use pandas/numpy.",
                "retryable": False}
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
    return {"error": "python_error", "message": f"The Python process exited without a result (status {code}).",
            "hint": "Do not call os._exit or close standard streams; let the code finish normally.",
            "retryable": False}


def _output_limit(limits: dict) -> dict:
    return {"error": "limit_exceeded", "limit": "output",
            "message": f"The code wrote more than the file-size limit of {limits['file_mb']} MB.",
            "hint": "Print summaries (head(), describe(), aggregated tables) instead of whole datasets.",
            "retryable": False}


# ----------------------------------------------------------------------------- the child
def _vm_size() -> int:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def apply_limits(limits: dict) -> None:
    cpu = int(limits["cpu_s"])
    memory = _vm_size() + int(limits["memory_mb"]) * 1024 * 1024
    file_size = int(limits["file_mb"]) * 1024 * 1024
    for res, value in ((resource.RLIMIT_CORE, (0, 0)), (resource.RLIMIT_CPU, (cpu, cpu + 1)),
                       (resource.RLIMIT_AS, (memory, memory)), (resource.RLIMIT_FSIZE, (file_size, file_size)),
                       (resource.RLIMIT_NOFILE, (int(limits["max_files"]), int(limits["max_files"]))),
                       (resource.RLIMIT_NPROC, (int(limits["max_procs"]), int(limits["max_procs"])))):
        try:
            resource.setrlimit(res, value)
        except (ValueError, OSError):
            soft, hard = resource.getrlimit(res)
            resource.setrlimit(res, (min(value[0], hard), hard))


def run_child(write_fd: int, call_dir: str, call_id: str, request: dict) -> int:
    os.setpgid(0, 0)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the size limit fail with EFBIG
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.closerange(3, write_fd)
    os.closerange(write_fd + 1, 4096)
    os.chdir(call_dir)
    for fd, name in ((1, "stdout.txt"), (2, "stderr.txt")):
        target = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1)
    sys.stdin = open(0, "r", closefd=False)
    os.environ["HOME"] = call_dir
    limits = request["limits"]
    apply_limits(limits)
    runner = ChildRun(call_dir, call_id, request)
    me = os.getpid()
    reply = runner.execute()
    if os.getpid() != me:  # a process the code forked: only the call's own child reports
        os._exit(0)
    data = json.dumps(reply, ensure_ascii=False, default=str).encode("utf-8")
    view = memoryview(len(data).to_bytes(8, "big") + data)
    while view:
        written = os.write(write_fd, view)
        view = view[written:]
    return 0


class LazyDatasets(dict):
    """`datasets`: a dict of name -> DataFrame whose frames are read on first access."""

    def __init__(self, paths: dict, cache: dict):
        super().__init__({name: None for name in paths})
        self._paths, self._cache = paths, cache

    def __getitem__(self, name):
        if name not in self._paths:
            close = _close(str(name), list(self._paths))
            raise KeyError(f"no dataset named {name!r}; datasets: {list(self._paths)}"
                           + (f"; did you mean {close[0]!r}?" if close else ""))
        if name not in self._cache:
            self._cache[name] = MODULES["pd"].read_parquet(self._paths[name])
            dict.__setitem__(self, name, self._cache[name])
        return self._cache[name]

    def get(self, name, default=None):
        return self[name] if name in self._paths else default

    def values(self):
        return [self[name] for name in self._paths]

    def items(self):
        return [(name, self[name]) for name in self._paths]

    def __iter__(self):
        return iter(list(self._paths))

    def __repr__(self) -> str:
        return f"datasets({list(self._paths)})"


class ChildRun:
    def __init__(self, call_dir: str, call_id: str, request: dict):
        self.call_dir = call_dir
        self.call_id = call_id
        self.request = request
        self.limits = request["limits"]
        self.code = request["code"]
        self.figures: list[dict] = []
        self.tables: list[dict] = []
        self.frames: dict = {}

    # -- what the code sees
    def namespace(self) -> dict:
        paths = self.request.get("datasets", {})
        datasets = LazyDatasets(paths, self.frames)
        ns = {"__name__": "__main__", "__builtins__": builtins, "datasets": datasets,
              "save_figure": self.save_figure, "save_table": self.save_table, "result": None}
        ns.update({k: v for k, v in MODULES.items()})
        # A dataset is also a variable when its name is an identifier; it is read only when the
        # code mentions it (reading a Parquet file is most of a trivial call's cost).
        for name in paths:
            if (name.isidentifier() and not keyword.iskeyword(name) and name not in ns
                    and re.search(rf"\b{re.escape(name)}\b", self.code)):
                ns[name] = datasets[name]
        return ns

    def save_figure(self, fig=None, name: str | None = None, caption: str | None = None) -> str:
        """Save a matplotlib figure (default: the current one) as a PNG artefact."""
        plt = MODULES["plt"]
        if isinstance(fig, str) and name is None:
            fig, name = None, fig
        fig = fig if fig is not None else plt.gcf()
        if len(self.figures) >= MAX_ARTEFACTS:
            raise RuntimeError(f"at most {MAX_ARTEFACTS} figures per call")
        stem = _SAFE_NAME.sub("_", name or f"figure_{len(self.figures) + 1}").strip("_") or "figure"
        path = os.path.join(self.call_dir, stem if stem.endswith(".png") else stem + ".png")
        fig.savefig(path, dpi=110, bbox_inches="tight")
        self.figures.append({"file": os.path.basename(path), "caption": caption or _figure_title(fig) or stem,
                             "fig": id(fig)})
        return os.path.basename(path)

    def save_table(self, df, name: str | None = None) -> str:
        """Save a DataFrame (or Series) as a result table artefact (Parquet and CSV)."""
        pd = MODULES["pd"]
        if isinstance(df, pd.Series):
            df = df.to_frame()
        if not isinstance(df, pd.DataFrame):
            df = pd.DataFrame(df)
        if len(self.tables) >= MAX_ARTEFACTS:
            raise RuntimeError(f"at most {MAX_ARTEFACTS} tables per call")
        stem = _SAFE_NAME.sub("_", name or f"table_{len(self.tables) + 1}").strip("_") or "table"
        frame = df.copy()
        if not isinstance(frame.index, pd.RangeIndex):
            frame = frame.reset_index()
        frame.columns = [str(c) for c in frame.columns]
        parquet = os.path.join(self.call_dir, stem + ".parquet")
        try:
            frame.to_parquet(parquet, index=False)
        except Exception:  # noqa: BLE001 - mixed object columns: store them as text
            frame = frame.astype({c: str for c in frame.columns if frame[c].dtype == object})
            frame.to_parquet(parquet, index=False)
        csv = os.path.join(self.call_dir, stem + ".csv")
        frame.to_csv(csv, index=False, encoding="utf-8-sig")
        with pd.option_context("display.max_columns", 20, "display.width", 160):
            preview = frame.head(10).to_string(max_colwidth=40)
        self.tables.append({"name": stem, "parquet": os.path.basename(parquet), "csv": os.path.basename(csv),
                            "rows": int(len(frame)), "columns": [str(c) for c in frame.columns][:100],
                            "preview": preview[:3000]})
        return os.path.basename(parquet)

    # -- running
    def execute(self) -> dict:
        error = None
        exit_code = None
        try:
            ns = self.namespace()
        except MemoryError:
            return self._finish({"error": "limit_exceeded", "limit": "memory",
                                 "message": "The datasets do not fit in the memory limit.", "retryable": False}, {})
        except Exception as exc:  # noqa: BLE001
            return self._finish({"error": "dataset_unreadable", "message": f"{type(exc).__name__}: {exc}",
                                 "hint": "The working copy could not be read.", "retryable": False}, {})
        try:
            compiled = compile(self.code, CODE_FILE, "exec")
            exec(compiled, ns)  # noqa: S102 - this is the point of the sandbox
        except SystemExit as exc:
            exit_code = exc.code
        except MemoryError:
            error = self._memory_error()
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
                error = _output_limit(self.limits)
            elif (isinstance(exc, OSError) and exc.errno == errno.EAGAIN) or "can't start new thread" in str(exc):
                error = self._process_error(exc)
            else:
                error = describe_error(exc, self.code, ns, self.frames)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except OSError as exc:
                if exc.errno == errno.EFBIG and error is None:
                    error = _output_limit(self.limits)
            except MemoryError:
                pass
        if error is None and exit_code not in (None, 0):
            error = {"error": "python_error", "message": f"SystemExit: {exit_code}",
                     "hint": "The code called exit() with a failure status.", "retryable": True}
        return self._finish(error, ns)

    def _memory_error(self) -> dict:
        return {"error": "limit_exceeded", "limit": "memory",
                "message": f"The code needed more than the memory limit of {self.limits['memory_mb']} MB.",
                "hint": "Work on fewer columns or a sample, avoid huge intermediate objects (cross joins, "
                        "dense matrices).", "retryable": False}

    def _process_error(self, exc: BaseException) -> dict:
        error = describe_error(exc, self.code, {}, {})
        error.update(error="limit_exceeded", limit="processes", retryable=False,
                     message=f"The code tried to start more than {self.limits['max_procs']} processes/threads "
                             f"({type(exc).__name__}: {exc}).",
                     hint="Do not start processes or thread pools (n_jobs=1); run the work in this process.")
        return error

    def _finish(self, error: dict | None, ns: dict) -> dict:
        try:
            self._collect_figures()
        except Exception:  # noqa: BLE001
            pass
        reply = {"ok": error is None, "error": error, "figures": [{k: v for k, v in f.items() if k != "fig"}
                                                                  for f in self.figures],
                 "tables": self.tables}
        reply["stdout"] = _read_output(os.path.join(self.call_dir, "stdout.txt"), self.limits)
        reply["stderr"] = _read_output(os.path.join(self.call_dir, "stderr.txt"), self.limits)
        if error is None:
            reply["result"] = _jsonable(ns.get("result"))
        reply["datasets"] = {name: [int(f.shape[0]), int(f.shape[1])] for name, f in self.frames.items()}
        return reply

    def _collect_figures(self) -> None:
        plt = MODULES["plt"]
        known = {f["file"] for f in self.figures}
        for name in sorted(os.listdir(self.call_dir)):
            if name.lower().endswith(".png") and name not in known and len(self.figures) < MAX_ARTEFACTS:
                self.figures.append({"file": name, "caption": os.path.splitext(name)[0]})
        if not self.figures:  # plt.show() in Agg does nothing: keep the open figures
            for number in plt.get_fignums()[:MAX_ARTEFACTS]:
                self.save_figure(plt.figure(number), f"figure_{number}")
        plt.close("all")


def _figure_title(fig) -> str:
    try:
        if fig._suptitle is not None and fig._suptitle.get_text():
            return fig._suptitle.get_text()
        for ax in fig.axes:
            if ax.get_title():
                return ax.get_title()
    except Exception:  # noqa: BLE001
        pass
    return ""


def _read_output(path: str, limits: dict) -> dict:
    """The head (and tail) of one captured stream; the full copy stays in the call folder."""
    limit = int(limits["max_output_chars"])
    try:
        size = os.path.getsize(path)
    except OSError:
        return {"text": "", "truncated": False, "bytes": 0, "file": None}
    with open(path, "rb") as handle:
        if size <= limit * 4:
            text = handle.read().decode("utf-8", errors="replace")
            if len(text) <= limit:
                return {"text": text, "truncated": False, "bytes": size, "file": os.path.basename(path)}
            head, tail = text[: int(limit * 0.8)], text[-int(limit * 0.2):]
        else:
            head = handle.read(int(limit * 0.8) * 4).decode("utf-8", errors="replace")[: int(limit * 0.8)]
            handle.seek(max(0, size - int(limit * 0.2) * 4))
            tail = handle.read().decode("utf-8", errors="replace")[-int(limit * 0.2):]
    marker = f"\n... [output truncated: {size} bytes in total; the full copy is kept] ...\n"
    return {"text": head + marker + tail, "truncated": True, "bytes": size, "file": os.path.basename(path)}


def _jsonable(value, depth: int = 0):
    """The `result` variable as JSON: numbers, strings, lists and dicts; frames become records."""
    if value is None:
        return None
    pd, np = MODULES["pd"], MODULES["np"]
    try:
        if isinstance(value, pd.DataFrame):
            value = {"columns": [str(c) for c in value.columns], "rows": len(value),
                     "records": json.loads(value.head(50).to_json(orient="records", date_format="iso"))}
        elif isinstance(value, pd.Series):
            value = json.loads(value.head(200).to_json(date_format="iso"))
        elif isinstance(value, np.generic):
            value = value.item()
        elif isinstance(value, np.ndarray):
            value = value.tolist()[:1000]
        text = json.dumps(value, ensure_ascii=False, default=str, allow_nan=False)
    except (TypeError, ValueError):
        text = json.dumps(repr(value)[:MAX_RESULT_CHARS], ensure_ascii=False)
    if len(text) > MAX_RESULT_CHARS:
        return {"truncated": True, "repr": text[:MAX_RESULT_CHARS]}
    return json.loads(text)


# ----------------------------------------------------------------------------- errors
def describe_error(exc: BaseException, code: str, ns: dict, frames: dict) -> dict:
    """A structured error: message, the user's line, the last frame and a hint."""
    lines = code.splitlines()
    message = f"{type(exc).__name__}: {exc}"
    error: dict = {"error": "python_error", "message": message[:2000], "exception": type(exc).__name__,
                   "retryable": True}
    if isinstance(exc, SyntaxError) and exc.filename == CODE_FILE:
        error.update(line=exc.lineno, code_line=(exc.text or "").rstrip()[:500], where="syntax",
                     hint="Fix the syntax at this line and run the code again.")
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
            hint = (f"There is no column {key!r}. Available columns: "
                    + "; ".join(f"{name}: {cols[:60]}" for name, cols in columns.items()))
    elif isinstance(exc, AttributeError) and "DataFrame" in str(exc) and getattr(exc, "name", None):
        close = _close(str(exc.name), all_columns)
        if close:
            error["did_you_mean"] = close
            hint = f"There is no attribute {exc.name!r}; use df[{close[0]!r}] for the column."
    elif isinstance(exc, NameError) and getattr(exc, "name", None):
        dataset_names = [n for n in ns.get("datasets", {}) if str(n).isidentifier()]
        names = [n for n in ns if not n.startswith("__")] + dataset_names
        error["did_you_mean"] = _close(str(exc.name), names)
        hint = (f"{exc.name!r} is not defined. Available: datasets[{list(ns.get('datasets', {}))}], "
                + ", ".join(sorted(n for n in names if n != "datasets")[:30]))
    elif isinstance(exc, ModuleNotFoundError):
        hint = ("This module is not installed and nothing can be installed (no network). Use pandas (pd), numpy "
                "(np), scipy/stats, statsmodels (sm, smf), sklearn and matplotlib (plt).")
    elif isinstance(exc, PermissionError) or (isinstance(exc, OSError) and exc.errno == errno.EROFS):
        hint = ("Only the current folder is writable (save_table / save_figure write there); the datasets are "
                "read-only: change a copy (df = df.copy()) instead.")
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
