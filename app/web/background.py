"""The web app's background threads: one pool per purpose (reading uploads, checking a report's
numbers with analysis.py), made on first use and stopped with the app.

Plain threads, never a fork of the multi-threaded server; one job of a kind at a time, because each
may hold a big table or a child process with a large memory limit, except where the job bounds its
own memory (the reads of uploads take a parse slot each: as many threads as slots)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from fastapi import FastAPI

_lock = threading.Lock()


def background_pool(app: FastAPI, purpose: str, workers: int = 1) -> ThreadPoolExecutor:
    """The app's worker threads for `purpose` (named verity-<purpose>): one unless `workers` says
    more (made on first use with that many)."""
    with _lock:
        pools: dict[str, ThreadPoolExecutor] | None = getattr(app.state, "background_pools", None)
        if pools is None:
            pools = app.state.background_pools = {}
        if purpose not in pools:
            pools[purpose] = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix=f"verity-{purpose}")
        return pools[purpose]


def stop_background_pools(app: FastAPI) -> None:
    """At shutdown: queued jobs are dropped; a running one finishes on its own (it is bounded by its
    own limits), without holding up the server's exit."""
    with _lock:
        pools = getattr(app.state, "background_pools", None) or {}
        for pool in pools.values():
            pool.shutdown(wait=False, cancel_futures=True)
        pools.clear()
