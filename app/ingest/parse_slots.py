"""How many files are read at once: a queue with a total memory budget.

Each read runs in a child held to `parse_memory_mb` by an address-space limit (app.ingest.bounded),
so `parse_total_memory_mb // parse_memory_mb` reads at once (at least one) keep all of them
within `parse_total_memory_mb`, however many files are uploaded together. The rest wait for a
slot; whoever waits is told (`on_wait`), e.g. the web page of a big upload.

A slot is a lock file in `<data_dir>/.parse-slots` held with flock: every process that reads
files into the same data folder (the web server, `verity worker`s, the CLI) shares the slots, and
a slot is free again when its holder ends, even by a crash. Waits are bounded because every read
is (by `parse_timeout_s`).
"""

from __future__ import annotations

import fcntl
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from app.config import Settings

WaitCallback = Callable[[dict | None], None]
TELL_EVERY_S = 5.0
_local = threading.local()


def slots(settings: Settings) -> int:
    return max(1, settings.parse_total_memory_mb // max(1, settings.parse_memory_mb))


@contextmanager
def on_wait(callback: WaitCallback) -> Iterator[None]:
    """Reads started in this thread report waiting for a slot to `callback`: a message
    {"en", "zh", "slots", "waited_s"} when the wait starts and every few seconds, None when the
    read starts."""
    previous = getattr(_local, "callback", None)
    _local.callback = callback
    try:
        yield
    finally:
        _local.callback = previous


def waiting_message(count: int, waited_s: float) -> dict:
    return {
        "en": f"Waiting for its turn: {count} other file{'s are' if count != 1 else ' is'} being read "
        f"(at most {count} at a time, to keep memory in bounds); this one starts as soon as one is done.",
        "zh": f"正在排队：另有 {count} 个文件正在读取（为控制内存，最多同时读取 {count} 个）；其中一个读完后就开始读取这个文件。",
        "slots": count,
        "waited_s": round(waited_s, 1),
    }


@contextmanager
def parse_slot(settings: Settings) -> Iterator[int]:
    """Hold one read slot for the duration of the block (waiting for one if all are taken);
    yields the slot number."""
    count = slots(settings)
    folder = settings.data_dir / ".parse-slots"
    folder.mkdir(parents=True, exist_ok=True)
    started, told = time.monotonic(), None
    while (taken := _take(folder, count)) is None:
        now = time.monotonic()
        if told is None or now - told >= TELL_EVERY_S:
            _tell(waiting_message(count, now - started))
            told = now
        time.sleep(0.05 + random.random() * 0.1)  # jitter: waiters of several processes take turns
    number, fd = taken
    if told is not None:
        _tell(None)
    try:
        yield number
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _take(folder, count: int) -> tuple[int, int] | None:
    for number in random.sample(range(count), count):
        fd = os.open(folder / f"slot-{number}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return number, fd
    return None


def _tell(message: dict | None) -> None:
    callback = getattr(_local, "callback", None)
    if callback is not None:
        try:
            callback(message)
        except Exception:  # noqa: BLE001 - telling must never stop the read
            pass
