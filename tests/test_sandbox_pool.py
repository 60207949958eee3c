"""The pool's bounds on warm sandboxes (least recently used first, a memory budget, a clear error
when every sandbox is busy), with a stand-in for the sandbox process so that the policy is tested
alone; tests/test_sandbox_escape.py runs the same bounds on real sandboxes."""

from __future__ import annotations

import threading
import time
import typing
from pathlib import Path

import pytest

from sandbox import LaunchSpec, SandboxUnavailable
from sandbox import pool as pool_module
from sandbox.host import Isolation

ISOLATION = Isolation("bwrap", True)


class StandIn:
    """What the pool needs of a WarmParent, without a process."""

    started: typing.ClassVar[list[str]] = []

    def __init__(self, spec, isolation):
        self.spec, self.isolation = spec, isolation
        self.hello = None
        self.in_use = 0
        self.last_used = time.monotonic()
        self.memory_kb = 100 * 1024
        self.closed = False
        self.alive = True
        StandIn.started.append(spec.workspace_id)

    def measure(self) -> int:
        return 0 if self.closed else self.memory_kb

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def pool(monkeypatch):
    monkeypatch.setattr(pool_module, "WarmParent", StandIn)
    StandIn.started = []
    made = pool_module.SandboxPool(max_warm=2, memory_mb=10_000)
    yield made
    made._stop.set()


def spec(name: str) -> LaunchSpec:
    return LaunchSpec(name, Path("/nonexistent/files"), Path("/nonexistent/scratch"))


def use(pool, name: str, wait_s: float = 0.0):
    parent, _ = pool._parent(spec(name), ISOLATION, wait_s)
    parent.last_used = time.monotonic()
    pool._release(parent)
    return parent


def test_the_least_recently_used_sandbox_is_closed_for_a_new_workspace(pool):
    a, b = use(pool, "a"), use(pool, "b")
    use(pool, "a")  # a is now more recent than b
    c = use(pool, "c")
    assert set(pool.parents) == {"a", "c"} and b.closed and not a.closed and not c.closed
    assert pool.evicted == 1 and StandIn.started == ["a", "b", "c"]


def test_a_busy_sandbox_is_never_closed_and_a_call_waits_for_a_free_one(pool):
    a, _ = pool._parent(spec("a"), ISOLATION, 0.0)  # calls are running in a and b
    b, _ = pool._parent(spec("b"), ISOLATION, 0.0)
    got: list = []
    waiter = threading.Thread(target=lambda: got.append(use(pool, "c", wait_s=10.0)))
    waiter.start()
    time.sleep(0.5)
    assert got == [] and not a.closed and not b.closed  # c waits: no busy sandbox is closed
    pool._release(b)  # b's call ends: b is idle, the least recently used idle one
    waiter.join(10)
    assert got and set(pool.parents) == {"a", "c"} and b.closed and not a.closed
    pool._release(a)


def test_when_every_sandbox_is_busy_the_call_gets_a_clear_error(pool):
    a, _ = pool._parent(spec("a"), ISOLATION, 0.0)
    b, _ = pool._parent(spec("b"), ISOLATION, 0.0)
    with pytest.raises(SandboxUnavailable) as err:
        pool._parent(spec("c"), ISOLATION, 0.3)
    assert "all 2 sandboxes are busy" in str(err.value) and "sandbox_max_warm" in str(err.value)
    pool._release(a)
    pool._release(b)


def test_the_memory_budget_closes_idle_sandboxes_oldest_first(pool):
    pool.configure(max_warm=10, memory_mb=250)  # room for two stand-ins of 100 MB
    parents = [use(pool, name) for name in ("a", "b", "c", "d")]
    busy, _ = pool._parent(spec("a"), ISOLATION, 0.0)
    pool.enforce_memory()
    # a is busy (kept although oldest); b and c go; d, the newest, stays
    assert set(pool.parents) == {"a", "d"} and [p.closed for p in parents] == [False, True, True, False]
    pool._release(busy)
    assert pool.stats()["memory_mb"] == 200.0
