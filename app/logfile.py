"""DATA_DIR/verity.log: rotated by size, and shared by the processes that write it.

Who writes it: every `verity worker` (docker-compose.yml scales them, all on one data volume)
and every `verity analyze` (app/cli.py's configure_logging; `verity serve` logs to the terminal).
The file reaches log_max_mb, is renamed verity.log.1 (the older ones move up to .2 ... and the
one past log_backups is deleted), and a fresh verity.log is begun.

The standard library's RotatingFileHandler assumes one writer (the logging cookbook: rotating a
file that several processes write is not supported). Each process measures its own stream and
renames the file on its own, so two processes that find it full rotate it twice, and one whose
file another process renamed away goes on writing into verity.log.1 and rotates that. This is
that handler with three changes, so any number of processes can share the one file:

- an inter-process lock (flock on verity.log.lock, beside it) is held while a record is checked
  against the limit, the file rotated and the record written, so one process rotates at a time;
- before the check, a process whose open file is no longer the one named verity.log (another
  process rotated it) reopens the name;
- the size checked is the file's on disk (fstat, in bytes of the encoded record), not the
  position of this process's own stream, which does not move when other processes append.
The first process to find the file full rotates it; the others then follow it to the new file.
The lock is taken again in a forked child (app.ingest.bounded forks the CLI), whose inherited
descriptor would otherwise share the parent's lock instead of waiting for it.
"""

from __future__ import annotations

import fcntl
import logging
import os
from logging.handlers import RotatingFileHandler


class SharedRotatingFileHandler(RotatingFileHandler):
    """RotatingFileHandler for a file that several processes append to (see the module docstring).
    max_bytes or backups 0: never rotated, as with the standard handler."""

    def __init__(self, filename: str | os.PathLike[str], max_bytes: int, backups: int) -> None:
        super().__init__(filename, maxBytes=max_bytes, backupCount=backups, encoding="utf-8", delay=True)
        self.lock_path = self.baseFilename + ".lock"
        self._lock_fd: int | None = None
        self._lock_pid = 0

    def emit(self, record: logging.LogRecord) -> None:
        try:
            lock = self._lock_file()
            fcntl.flock(lock, fcntl.LOCK_EX)
        except OSError:
            self.handleError(record)
            return
        try:
            self._follow()
            super().emit(record)  # shouldRollover, doRollover when it is due, the write and a flush
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)

    def shouldRollover(self, record: logging.LogRecord) -> bool:  # noqa: N802 - logging's name
        if self.maxBytes <= 0 or self.backupCount <= 0:
            return False
        if os.path.exists(self.baseFilename) and not os.path.isfile(self.baseFilename):
            return False  # never rename a device or a pipe (bpo-45401), as the standard handler
        if self.stream is None:
            self.stream = self._open()
        size = os.fstat(self.stream.fileno()).st_size  # every record is flushed, so this is all of it
        if size == 0:
            return False  # a record larger than the limit goes into an empty file rather than nowhere
        record_bytes = len((self.format(record) + self.terminator).encode(self.encoding or "utf-8", "backslashreplace"))
        return size + record_bytes > self.maxBytes

    def close(self) -> None:
        try:
            if self._lock_fd is not None and self._lock_pid == os.getpid():
                os.close(self._lock_fd)
            self._lock_fd = None
        finally:
            super().close()

    def _lock_file(self) -> int:
        if self._lock_fd is None or self._lock_pid != os.getpid():
            # a forked child opens its own: flock belongs to the open file, which a child shares
            self._lock_fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            self._lock_pid = os.getpid()
        return self._lock_fd

    def _follow(self) -> None:
        """Open verity.log again when it is no longer this process's file (another process
        rotated it away, or it was deleted)."""
        if self.stream is None:
            return  # not opened yet (delay): the write opens the name
        mine = os.fstat(self.stream.fileno())
        try:
            named = os.stat(self.baseFilename)
        except FileNotFoundError:
            named = None
        if named is None or (named.st_dev, named.st_ino) != (mine.st_dev, mine.st_ino):
            self.stream.close()
            self.stream = self._open()
