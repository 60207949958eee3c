"""The pool of warm parents (`SandboxPool`; one `sandbox.warm.WarmParent` per workspace, never
shared between workspaces): it recycles a parent after a crash or a limit breach and bounds what
stays warm: at most `max_warm` sandboxes and `memory_mb` of memory (PSS) in all, the least
recently used closed first, idle ones closed after `idle_s`.

Standard library only; no web or agent imports.
"""

from __future__ import annotations

import atexit
import json
import logging
import re
import threading
import time
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any

from sandbox.host import Isolation, Limits, SandboxUnavailable, detect_isolation
from sandbox.launch import INSIDE_DATA, LaunchSpec
from sandbox.results import RunOutcome, _crashed, prune_kept
from sandbox.warm import WarmParent
from sandbox.worker_child import MAX_RESULT_CHARS

log = logging.getLogger("sandbox.host")  # the logger name the host module always used
KEEP_CALLS = 200  # call folders of kept outputs (saved tables, figures) per workspace


class SandboxPool:
    """Warm parents by workspace id: never shared between workspaces, recycled after trouble,
    bounded in number and memory (least recently used closed first), closed when idle."""

    def __init__(self, idle_s: float = 600.0, max_warm: int = 8, memory_mb: int = 4096, keep_mb: int = 256):
        self.idle_s = idle_s
        self.max_warm = max_warm
        self.memory_mb = memory_mb
        self.keep_mb = keep_mb
        self.parents: dict[str, WarmParent] = {}
        self.lock = threading.Condition()
        self.evicted = 0
        self._reaper: threading.Thread | None = None
        self._stop = threading.Event()

    def configure(
        self,
        idle_s: float | None = None,
        max_warm: int | None = None,
        memory_mb: int | None = None,
        keep_mb: int | None = None,
    ) -> None:
        with self.lock:
            for name, value in (
                ("idle_s", idle_s),
                ("max_warm", max_warm),
                ("memory_mb", memory_mb),
                ("keep_mb", keep_mb),
            ):
                if value is not None:
                    setattr(self, name, value)

    def _parent(self, spec: LaunchSpec, isolation: Isolation, wait_s: float) -> tuple[WarmParent, bool]:
        """The workspace's parent (started if needed), reserved for one call (`in_use`)."""
        closing: list[WarmParent] = []
        deadline = time.monotonic() + wait_s
        try:
            with self.lock:
                while True:
                    parent = self.parents.get(spec.workspace_id)
                    if (
                        parent is not None
                        and (
                            parent.spec.key() != spec.key()
                            or not parent.alive
                            or parent.isolation.kind != isolation.kind
                        )
                        and not parent.in_use
                    ):
                        closing.append(self.parents.pop(spec.workspace_id))
                        parent = None
                    if parent is not None:
                        break
                    closing += self._evict(len(self.parents) + 1 - max(1, self.max_warm))
                    if len(self.parents) < max(1, self.max_warm):
                        parent = WarmParent(spec, isolation)
                        self.parents[spec.workspace_id] = parent
                        break
                    left = deadline - time.monotonic()
                    if left <= 0:  # every warm sandbox is running a call right now
                        raise SandboxUnavailable(
                            f"all {self.max_warm} sandboxes are busy running other code (sandbox_max_warm); "
                            "try again in a moment"
                        )
                    self.lock.wait(min(left, 1.0))
                warm = parent.hello is not None
                parent.in_use += 1
                self._ensure_reaper()
                return parent, warm
        finally:
            for old in closing:
                old.close()

    def _evict(self, count: int, memory_kb: int | None = None) -> list[WarmParent]:
        """Take the least recently used idle parents out of the pool (under the lock): `count` of
        them, or as many as it takes to bring the memory under `memory_kb`."""
        idle = sorted((p for p in self.parents.values() if not p.in_use), key=lambda p: p.last_used)
        chosen: list[WarmParent] = []
        total = sum(p.memory_kb for p in self.parents.values()) if memory_kb is not None else 0
        for parent in idle:
            if memory_kb is not None:
                if total <= memory_kb:
                    break
                total -= parent.memory_kb
            elif len(chosen) >= count:
                break
            chosen.append(parent)
        for parent in chosen:
            self.parents.pop(parent.spec.workspace_id, None)
            self.evicted += 1
        return chosen

    def _release(self, parent: WarmParent) -> None:
        with self.lock:
            parent.in_use -= 1
            self.lock.notify_all()

    def prewarm(self, spec: LaunchSpec, isolation: Isolation | None = None) -> None:
        """Start the workspace's parent now (it imports in the background)."""
        isolation = isolation or detect_isolation(spec.mode)
        if isolation.available:
            try:
                parent, _ = self._parent(spec, isolation, wait_s=0.0)
            except SandboxUnavailable:
                return
            self._release(parent)

    def run(
        self, spec: LaunchSpec, code: str, datasets: dict[str, Path], limits: Limits, call_id: str | None = None
    ) -> RunOutcome:
        isolation = detect_isolation(spec.mode)
        if not isolation.available:
            raise SandboxUnavailable(isolation.reason)
        inside = {}
        data_root = spec.data_root.resolve()
        for name, path in datasets.items():
            resolved = Path(path).resolve()
            if isolation.kind == "unsafe":
                inside[name] = str(resolved)
                continue
            try:
                relative = resolved.relative_to(data_root)
            except ValueError:
                raise SandboxUnavailable(f"dataset {name!r} is not under the workspace's data folder") from None
            inside[name] = f"{INSIDE_DATA}/{relative.as_posix()}"
        call_id = re.sub(r"[^A-Za-z0-9_-]+", "_", call_id or uuid.uuid4().hex[:12])[:80]
        request = {
            "op": "run",
            "call_id": call_id,
            "code": code,
            "datasets": inside,
            "limits": asdict(limits),
        }
        reply, figures, tables, kept, parent, warm = self._call(spec, isolation, request, limits)
        retried = False
        if _unreadable(reply):
            # Reading the data failed inside the sandbox (a library or the working copy out of its
            # view): the code is not at fault. Once more in a fresh sandbox, which reloads the data.
            log.warning("sandbox of %s could not read its data; retrying in a fresh sandbox", spec.workspace_id)
            self._forget(spec, parent)
            parent.close()
            retried = True
            reply, figures, tables, kept, parent, warm = self._call(spec, isolation, request, limits)
            if _unreadable(reply):
                reply = {**reply, "error": {**reply["error"], "fault": "harness", "retried": True}}
        prune_kept(spec.scratch_root / "calls", KEEP_CALLS, self.keep_mb * 1024 * 1024)
        return RunOutcome(
            ok=bool(reply.get("ok")),
            isolation=isolation.kind,
            error=reply.get("error"),
            stdout=_stream(reply.get("stdout"), limits.max_output_chars),
            stderr=_stream(reply.get("stderr"), limits.max_output_chars),
            figures=figures,
            tables=tables,
            result=bounded_result(reply.get("result")),
            call_dir=kept,
            duration_ms=float(reply.get("duration_ms") or 0.0),
            warm=warm,
            datasets=reply.get("datasets") or {},
            seccomp=parent.seccomp,
            stopped_processes=int(reply.get("stopped_processes") or 0),
            retried=retried,
        )

    def _call(
        self, spec: LaunchSpec, isolation: Isolation, request: dict, limits: Limits
    ) -> tuple[dict, list, list, Path, WarmParent, bool]:
        """One call in the workspace's warm parent (a new sandbox once when it does not start); a
        parent that crashed or broke a limit is replaced by a fresh, warm one for the next call."""
        for attempt in range(2):
            parent, warm = self._parent(spec, isolation, wait_s=limits.wall_s)
            try:
                reply, figures, tables, kept = parent.call(request, limits)
            except SandboxUnavailable:  # it did not start: try a new sandbox once
                self._forget(spec, parent)
                if attempt:
                    raise
                continue
            finally:
                self._release(parent)
            break
        # After a crash or a limit breach the parent process is replaced: by the zygote inside the
        # sandbox (fast, reply["recycled"]) or, when the sandbox itself failed, by a new sandbox.
        if reply.get("recycle") or (not reply.get("recycled") and not reply.get("parent_crashed") and _crashed(reply)):
            self._forget(spec, parent)
            parent.close()
            self.prewarm(spec, isolation)  # the next call finds a fresh, warm parent
        return reply, figures, tables, kept, parent, warm

    def _forget(self, spec: LaunchSpec, parent: WarmParent) -> None:
        with self.lock:
            if self.parents.get(spec.workspace_id) is parent:
                self.parents.pop(spec.workspace_id)
            self.lock.notify_all()

    def stats(self) -> dict:
        """How many sandboxes are warm and their memory (PSS, MB), measured now."""
        with self.lock:
            parents = list(self.parents.values())
        memory = sum(p.measure() for p in parents)
        return {
            "warm": len(parents),
            "memory_mb": round(memory / 1024, 1),
            "evicted": self.evicted,
            "max_warm": self.max_warm,
            "memory_budget_mb": self.memory_mb,
        }

    def enforce_memory(self) -> None:
        """Close the least recently used idle sandboxes while the warm ones use more than memory_mb."""
        with self.lock:
            parents = list(self.parents.values())
        for parent in parents:
            parent.measure()
        with self.lock:
            closing = self._evict(0, memory_kb=self.memory_mb * 1024)
        for parent in closing:
            parent.close()

    def close(self, workspace_id: str | None = None) -> None:
        with self.lock:
            ids = [workspace_id] if workspace_id else list(self.parents)
            parents = [self.parents.pop(i) for i in ids if i in self.parents]
            self.lock.notify_all()
        for parent in parents:
            parent.close()

    def _ensure_reaper(self) -> None:
        if self._reaper is None or not self._reaper.is_alive():
            self._reaper = threading.Thread(target=self._reap, name="sandbox-reaper", daemon=True)
            self._reaper.start()

    def _reap(self) -> None:
        while not self._stop.wait(max(0.5, min(2.0, self.idle_s / 4))):
            now = time.monotonic()
            with self.lock:
                idle = [k for k, p in self.parents.items() if now - p.last_used > self.idle_s and not p.in_use]
                parents = [self.parents.pop(k) for k in idle]
            for parent in parents:
                parent.close()
            try:
                self.enforce_memory()
            except Exception:
                log.exception("measuring the sandboxes' memory failed")


def _unreadable(reply: dict) -> bool:
    """The call failed because the sandbox could not read the data (sandbox.worker_child)."""
    return not reply.get("ok") and (reply.get("error") or {}).get("error") == "dataset_unreadable"


def _stream(stream: dict | None, max_chars: int) -> dict:
    """A captured stream as the sandbox reported it: its text (head and tail) and its size. The text
    is cut to `max_chars` again here: the sandbox cuts it, but the call's code can write its own
    reply on the result pipe."""
    kept = {k: v for k, v in (stream or {}).items() if k in ("text", "truncated", "bytes")}
    text = kept.get("text")
    text = text if isinstance(text, str) else ""
    if len(text) > max_chars:
        return {"text": cut_text(text, max_chars), "truncated": True, "bytes": len(text.encode("utf-8", "replace"))}
    return {"truncated": False, **kept, "text": text}


def cut_text(text: str, max_chars: int) -> str:
    """The head and the tail of `text`, `max_chars` characters in all, with a marker between them
    that says how much was left out (as the sandbox cuts printed output)."""
    head, tail = text[: int(max_chars * 0.8)], text[len(text) - int(max_chars * 0.2) :]
    return (
        head + f"\n... [output truncated on the host: {len(text):,} characters in total; the first "
        f"{len(head):,} and the last {len(tail):,} are shown] ...\n" + tail
    )


def bounded_result(result: Any) -> Any:
    """The call's `result` as the sandbox sent it when its JSON fits in what the sandbox itself keeps
    (MAX_RESULT_CHARS); else cut as the sandbox cuts one (a forged reply can hold anything)."""
    if result is None or isinstance(result, (bool, int, float)):
        return result
    text = json.dumps(result, ensure_ascii=False, default=str)
    return result if len(text) <= MAX_RESULT_CHARS else {"truncated": True, "repr": text[:MAX_RESULT_CHARS]}


_POOL: SandboxPool | None = None
_POOL_LOCK = threading.Lock()


def get_pool(
    idle_s: float | None = None, max_warm: int | None = None, memory_mb: int | None = None, keep_mb: int | None = None
) -> SandboxPool:
    """The process-wide pool (one warm parent per workspace); the arguments update its limits."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = SandboxPool()
            atexit.register(_POOL.close)
        _POOL.configure(idle_s, max_warm, memory_mb, keep_mb)
        return _POOL
