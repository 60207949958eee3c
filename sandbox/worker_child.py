"""One call's child, inside the sandbox: apply the limits, capture stdout/stderr to files, run the
user's code with the datasets, save figures and tables, and write one JSON result to a pipe.

Standard library at import; the analysis stack is read from `MODULES`, filled by `worker.preload`.
"""

from __future__ import annotations

import builtins
import errno
import json
import keyword
import os
import re
import resource
import signal
import sys
from types import ModuleType
from typing import Any

from sandbox.worker_errors import (
    CODE_FILE,
    _close,
    _output_limit,
    _scratch_limit,
    describe_error,
)

MAX_ARTEFACTS = 20
MAX_RESULT_CHARS = 20_000
_SAFE_NAME = re.compile(r"[^\w.-]+", re.UNICODE)

THREADED_OPTIONAL = ("polars",)  # optional imports of the analysis stack that start threads (worker.preload)
MODULES: dict[str, ModuleType] = {}  # np, pd, plt ...: the analysis stack, imported by worker.preload


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
    for res, value in (
        (resource.RLIMIT_CORE, (0, 0)),
        (resource.RLIMIT_CPU, (cpu, cpu + 1)),
        (resource.RLIMIT_AS, (memory, memory)),
        (resource.RLIMIT_FSIZE, (file_size, file_size)),
        (resource.RLIMIT_NOFILE, (int(limits["max_files"]), int(limits["max_files"]))),
        (resource.RLIMIT_NPROC, (int(limits["max_procs"]), int(limits["max_procs"]))),
    ):
        try:
            resource.setrlimit(res, value)
        except (ValueError, OSError):
            soft, hard = resource.getrlimit(res)
            resource.setrlimit(res, (min(value[0], hard), hard))


def run_child(write_fd: int, call_dir: str, call_id: str, request: dict) -> int:
    os.setpgid(0, 0)
    for name in THREADED_OPTIONAL:  # kept out of the zygote only: one call's own code may import it
        if name in sys.modules and sys.modules[name] is None:
            del sys.modules[name]
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
    sys.stdin = open(0, closefd=False)
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


def numpy_friendly(frame):
    """The frame with pandas' nullable dtypes (boolean, Int64, Float64, string) as numpy dtypes, which
    numpy, scipy, statsmodels and sklearn all take ("Cannot interpret 'BooleanDtype' as a data
    type" otherwise). Yes/no and whole numbers stay bool / int64 when complete; with gaps they are
    float64 (True = 1.0, missing = NaN), text is object. The stored dataset is not changed."""
    pd: Any = MODULES["pd"]
    columns = {}
    for column in frame.columns:
        series = frame[column]
        dtype = series.dtype
        if not isinstance(dtype, pd.api.extensions.ExtensionDtype) or isinstance(
            dtype, (pd.CategoricalDtype, pd.DatetimeTZDtype, pd.PeriodDtype, pd.IntervalDtype)
        ):
            continue
        gaps = bool(series.isna().any())
        if isinstance(dtype, pd.BooleanDtype):
            columns[column] = series.astype("float64") if gaps else series.astype(bool)
        elif pd.api.types.is_integer_dtype(dtype):
            columns[column] = series.astype("float64") if gaps else series.astype("int64")
        elif pd.api.types.is_float_dtype(dtype):
            columns[column] = series.astype("float64")
        elif pd.api.types.is_string_dtype(dtype):
            columns[column] = series.astype(object).where(series.notna(), None)
    if not columns:
        return frame
    frame = frame.copy()
    for column, series in columns.items():
        frame[column] = series
    return frame


class DatasetUnreadable(RuntimeError):
    """Reading a dataset's working copy failed (a missing engine, an unreadable file): the harness's
    fault, not the code's; the host retries the call once in a fresh sandbox."""

    def __init__(self, name: str, cause: BaseException):
        super().__init__(f"dataset {name!r} could not be read: {type(cause).__name__}: {cause}")
        self.dataset = name


def unreadable_dataset(exc: BaseException) -> DatasetUnreadable | None:
    """The failed read behind an exception: itself, or one it was raised from or while handling
    (code that catches the error and raises its own)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, DatasetUnreadable):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _unreadable_error(found: DatasetUnreadable) -> dict:
    return {
        "error": "dataset_unreadable",
        "dataset": found.dataset,
        "message": str(found)[:2000],
        "hint": "The working copy could not be read; this is not a fault of the code.",
        "retryable": False,
    }


class LazyDatasets(dict):
    """`datasets`: a dict of name -> DataFrame whose frames are read on first access."""

    def __init__(self, paths: dict, cache: dict):
        super().__init__(dict.fromkeys(paths))
        self._paths, self._cache = paths, cache

    def __getitem__(self, name):
        if name not in self._paths:
            close = _close(str(name), list(self._paths))
            raise KeyError(
                f"no dataset named {name!r}; datasets: {list(self._paths)}"
                + (f"; did you mean {close[0]!r}?" if close else "")
            )
        if name not in self._cache:
            try:
                frame = numpy_friendly(MODULES["pd"].read_parquet(self._paths[name]))
            except MemoryError:
                raise
            except Exception as exc:  # any failure to read is the harness's, not the code's
                raise DatasetUnreadable(str(name), exc) from exc
            self._cache[name] = frame
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
        ns = {
            "__name__": "__main__",
            "__builtins__": builtins,
            "datasets": datasets,
            "save_figure": self.save_figure,
            "save_table": self.save_table,
            "result": None,
        }
        ns.update(MODULES)
        # A dataset is also a variable when its name is an identifier; it is read only when the
        # code mentions it (reading a Parquet file is most of a trivial call's cost).
        for name in paths:
            if (
                name.isidentifier()
                and not keyword.iskeyword(name)
                and name not in ns
                and re.search(rf"\b{re.escape(name)}\b", self.code)
            ):
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
        self.figures.append(
            {"file": os.path.basename(path), "caption": caption or _figure_title(fig) or stem, "fig": id(fig)}
        )
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
        self.tables.append(
            {
                "name": stem,
                "parquet": os.path.basename(parquet),
                "csv": os.path.basename(csv),
                "rows": len(frame),
                "columns": [str(c) for c in frame.columns][:100],
                "preview": preview[:3000],
            }
        )
        return os.path.basename(parquet)

    # -- running
    def execute(self) -> dict:
        error = None
        exit_code = None
        try:
            ns = self.namespace()
        except MemoryError:
            return self._finish(
                {
                    "error": "limit_exceeded",
                    "limit": "memory",
                    "message": "The datasets do not fit in the memory limit.",
                    "retryable": False,
                },
                {},
            )
        except Exception as exc:  # noqa: BLE001
            found = unreadable_dataset(exc) or DatasetUnreadable("?", exc)
            return self._finish(_unreadable_error(found), {})
        try:
            compiled = compile(self.code, CODE_FILE, "exec")
            exec(compiled, ns)  # running the code is the point of the sandbox
        except SystemExit as exc:
            exit_code = exc.code
        except MemoryError:
            error = self._memory_error()
        except BaseException as exc:  # noqa: BLE001
            error = self._code_error(exc, ns)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except OSError as exc:
                if exc.errno == errno.EFBIG and error is None:
                    error = _output_limit(self.limits)
                elif exc.errno == errno.ENOSPC and error is None:
                    error = _scratch_limit(self.limits)
            except MemoryError:
                pass
        if error is None and exit_code not in (None, 0):
            error = {
                "error": "python_error",
                "message": f"SystemExit: {exit_code}",
                "hint": "The code called exit() with a failure status.",
                "retryable": True,
            }
        return self._finish(error, ns)

    def _code_error(self, exc: BaseException, ns: dict) -> dict:
        """What an exception out of the code means: a limit, a failed read of the data, or the code's own error."""
        if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
            return _output_limit(self.limits)
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            return _scratch_limit(self.limits)
        if (isinstance(exc, OSError) and exc.errno == errno.EAGAIN) or "can't start new thread" in str(exc):
            return self._process_error(exc)
        found = unreadable_dataset(exc)
        if found is not None:
            return _unreadable_error(found)
        return describe_error(exc, self.code, ns, self.frames)

    def _memory_error(self) -> dict:
        return {
            "error": "limit_exceeded",
            "limit": "memory",
            "message": f"The code needed more than the memory limit of {self.limits['memory_mb']} MB.",
            "hint": "Work on fewer columns or a sample, avoid huge intermediate objects (cross joins, dense matrices).",
            "retryable": False,
        }

    def _process_error(self, exc: BaseException) -> dict:
        error = describe_error(exc, self.code, {}, {})
        error.update(
            error="limit_exceeded",
            limit="processes",
            retryable=False,
            message=f"The code tried to start more than {self.limits['max_procs']} processes/threads "
            f"({type(exc).__name__}: {exc}).",
            hint="Do not start processes or thread pools (n_jobs=1); run the work in this process.",
        )
        return error

    def _finish(self, error: dict | None, ns: dict) -> dict:
        try:
            self._collect_figures()
        except Exception:  # noqa: BLE001
            pass
        reply = {
            "ok": error is None,
            "error": error,
            "figures": [{k: v for k, v in f.items() if k != "fig"} for f in self.figures],
            "tables": self.tables,
        }
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
    """The head (and tail) of one captured stream, at most `max_output_chars` characters: what the
    tool result carries (the context cascade keeps long results whole on the host's disk)."""
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
            head, tail = text[: int(limit * 0.8)], text[-int(limit * 0.2) :]
        else:
            head = handle.read(int(limit * 0.8) * 4).decode("utf-8", errors="replace")[: int(limit * 0.8)]
            handle.seek(max(0, size - int(limit * 0.2) * 4))
            tail = handle.read().decode("utf-8", errors="replace")[-int(limit * 0.2) :]
    marker = (
        f"\n... [output truncated: {size:,} bytes in total; the first {len(head):,} and the last "
        f"{len(tail):,} characters are shown] ...\n"
    )
    return {"text": head + marker + tail, "truncated": True, "bytes": size, "file": os.path.basename(path)}


def _array_head(array, limit: int = 1000):
    """At most `limit` elements of an array as (nested) lists, cut *before* converting: tolist() of
    a big array builds one Python object per element (gigabytes for 10^8 numbers) only for most of
    them to be thrown away. A 1-D array keeps its first `limit` values; a wider one its first rows,
    each cut to `limit` along the other axes."""
    if array.ndim == 0:
        return array.item()
    inner = array[(slice(None),) + (slice(0, limit),) * (array.ndim - 1)]
    per_row = max(1, inner[:1].size)
    return inner[: max(1, limit // per_row)].tolist()


def _jsonable(value, depth: int = 0):
    """The `result` variable as JSON: numbers, strings, lists and dicts; frames become records."""
    if value is None:
        return None
    pd, np = MODULES["pd"], MODULES["np"]
    try:
        if isinstance(value, pd.DataFrame):
            value = {
                "columns": [str(c) for c in value.columns],
                "rows": len(value),
                "records": json.loads(value.head(50).to_json(orient="records", date_format="iso")),
            }
        elif isinstance(value, pd.Series):
            value = json.loads(value.head(200).to_json(date_format="iso"))
        elif isinstance(value, np.generic):
            value = value.item()
        elif isinstance(value, np.ndarray):
            value = _array_head(value)
        text = json.dumps(value, ensure_ascii=False, default=str, allow_nan=False)
    except (TypeError, ValueError):
        text = json.dumps(repr(value)[:MAX_RESULT_CHARS], ensure_ascii=False)
    if len(text) > MAX_RESULT_CHARS:
        return {"truncated": True, "repr": text[:MAX_RESULT_CHARS]}
    return json.loads(text)
