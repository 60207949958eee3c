"""Bounded results from the sandbox (issue 25): a call that forges its own reply on its result pipe
(60 MB of it, or a small one whose fields are huge) can neither make the server hold it nor have it
kept whole. Under both isolations, like tests/test_sandbox_escape.py, whose fixtures these share."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from tests.test_sandbox_escape import close_sandboxes_afterwards, env, mode, still_works  # noqa: F401

pytestmark = pytest.mark.timeout(180)

FORGE = """
import json, os, stat
def is_pipe(fd: int) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False
pipe = [fd for fd in range(3, 256) if is_pipe(fd)][-1]  # the call's result pipe (stdio are files)
def forge(body: bytes, announced: int | None = None) -> None:
    os.write(pipe, (len(body) if announced is None else announced).to_bytes(8, "big"))
    view = memoryview(body)
    while view:
        view = view[os.write(pipe, view[: 1 << 20]):]
    os._exit(0)
"""


def traced_peak_mb(action) -> tuple[object, float]:
    """What `action` returns and the peak of Python memory it allocated, in MB."""
    tracemalloc.start()
    try:
        outcome = action()
        return outcome, tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def test_a_forged_60_mb_reply_is_refused_while_read(env):  # noqa: F811
    code = FORGE + 'forge(json.dumps({"ok": True, "stdout": {"text": "A" * 60_000_000}}).encode())'
    started = time.monotonic()
    result, peak = traced_peak_mb(lambda: env.run(code))
    # Reason: the warm parent reads the length first and stops above sandbox_max_reply_mb; the
    # host's channel refuses a message above it too. Before: 60 MB read, parsed and kept whole.
    assert not result.ok and result.error["limit"] == "reply", result.error
    assert "60,000,0" in result.error["message"]
    assert peak < 20, peak
    assert time.monotonic() - started < 60
    assert len(str(result.text)) + len(str(result.payload)) < 20_000
    still_works(env)


def test_a_forged_reply_under_the_limit_is_cut_on_the_host(env):  # noqa: F811
    code = FORGE + (
        'forge(json.dumps({"ok": True, "stdout": {"text": "A" * 1_500_000, "truncated": False}, '
        '"stderr": {"text": "E" * 900_000}, "result": {"x": "B" * 1_000_000}}).encode())'
    )
    result = env.run(code)
    limit = env.settings.sandbox_max_output_chars
    # Reason: the sandbox cuts printed output and `result`, but this reply never went through that:
    # the host cuts its fields again (head and tail, with a marker).
    assert result.ok, result.error
    assert "A" * 100 in result.text and "output truncated on the host" in result.text
    assert result.text.count("A") <= limit and result.text.count("E") <= limit
    assert "B" * 30_000 not in str(result.payload), len(str(result.payload))
    still_works(env)


def test_an_announced_size_beyond_the_limit_is_not_waited_for(env):  # noqa: F811
    result = env.run(FORGE + 'forge(b"{}", announced=1 << 40)')
    assert not result.ok and result.error["limit"] == "reply", result.error
    still_works(env)


def test_hard_linked_figures_are_copied_once(env):  # noqa: F811
    """A forged reply naming a 2 MB figure and 19 hard links to it (and the file again): one copy."""
    code = FORGE + (
        'open("a.png", "wb").write(b"\\x89PNG" + b"x" * 2_000_000)\n'
        'names = ["a.png"] + [f"l{n}.png" for n in range(19)]\n'
        "for name in names[1:]:\n"
        "    os.link('a.png', name)\n"
        'forge(json.dumps({"ok": True, "figures": [{"file": n} for n in names + ["a.png"]]}).encode())'
    )
    result = env.run(code)
    # Reason: the host copies by inode once (1 MB and 19 links were 20 MB in the kept call and in
    # the workspace's figures).
    assert result.ok, result.error
    assert len(result.figures) == 1, result.figures
    kept = env.settings.workspace_dir(env.ws_a) / "scratch" / "calls"  # the kept calls, on the host
    assert sum(p.stat().st_size for p in kept.rglob("*.png")) < 5_000_000
    still_works(env)
