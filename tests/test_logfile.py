"""verity.log rotates by size (log_max_mb, log_backups), also while several processes write it."""

from __future__ import annotations

import logging
import multiprocessing
import os

from app.cli import configure_logging
from app.config import Settings
from app.logfile import SharedRotatingFileHandler

FORMAT = logging.Formatter("%(process)d %(message)s")


def handler_logger(path, max_bytes, backups, name):
    handler = SharedRotatingFileHandler(path, max_bytes=max_bytes, backups=backups)
    handler.setFormatter(FORMAT)
    logger = logging.getLogger(f"test_logfile.{name}")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.handlers = [handler]
    return logger, handler


def log_files(folder):
    """verity.log and its rotated copies, oldest first (verity.log.N ... verity.log.1, verity.log)."""
    rotated = [p for p in folder.glob("verity.log.*") if p.suffix[1:].isdigit()]
    return [*sorted(rotated, key=lambda p: -int(p.suffix[1:])), folder / "verity.log"]


def logged_lines(folder):
    return [line for f in log_files(folder) for line in f.read_text().splitlines()]


def test_a_full_log_is_rotated_and_the_live_file_stays_under_the_limit(tmp_path):
    log_file = tmp_path / "verity.log"
    logger, handler = handler_logger(log_file, max_bytes=1_000, backups=3, name="single")
    try:
        for i in range(40):  # ~45 bytes a record: about 1,800 bytes, past the limit
            logger.info("record %03d %s", i, "x" * 30)
        assert (tmp_path / "verity.log.1").exists()
        assert 0 < log_file.stat().st_size <= 1_000
        assert (tmp_path / "verity.log.1").stat().st_size <= 1_000
        # nothing lost: log_backups (3) old files hold all that was rotated so far
        assert [line.split()[2] for line in logged_lines(tmp_path)] == [f"{i:03d}" for i in range(40)]
        # the newest record is in the live file, the one before the rotation in verity.log.1
        assert log_file.read_text().splitlines()[-1].split()[2] == "039"
        older = (tmp_path / "verity.log.1").read_text().splitlines()[-1].split()[2]
        assert older == f"{int(log_file.read_text().splitlines()[0].split()[2]) - 1:03d}"
        for i in range(40, 200):  # many more rotations: never more than log_backups old files
            logger.info("record %03d %s", i, "x" * 30)
        assert [p.name for p in log_files(tmp_path)] == ["verity.log.3", "verity.log.2", "verity.log.1", "verity.log"]
        assert all(p.stat().st_size <= 1_000 for p in log_files(tmp_path))
        assert logged_lines(tmp_path)[-1].split()[2] == "199"
    finally:
        handler.close()


def test_the_limit_counts_bytes_not_characters(tmp_path):
    log_file = tmp_path / "verity.log"
    logger, handler = handler_logger(log_file, max_bytes=500, backups=5, name="bytes")
    handler.setFormatter(logging.Formatter("%(message)s"))
    try:
        for i in range(30):  # 15 characters, 39 bytes in UTF-8 (the standard handler writes 507-byte files)
            logger.info("第%02d行：销售额按地区的差异", i)
        assert [f.name for f in log_files(tmp_path)] == ["verity.log.2", "verity.log.1", "verity.log"]
        assert [f.stat().st_size for f in log_files(tmp_path)] == [468, 468, 234]  # 12, 12 and 6 records
    finally:
        handler.close()


def test_zero_means_never_rotated(tmp_path):
    logger, handler = handler_logger(tmp_path / "verity.log", max_bytes=0, backups=5, name="never")
    try:
        for i in range(100):
            logger.info("record %03d %s", i, "x" * 30)
        assert not (tmp_path / "verity.log.1").exists()
        assert (tmp_path / "verity.log").stat().st_size > 4_000
    finally:
        handler.close()


def _write_records(logger_name, who, count):
    logger = logging.getLogger(logger_name)
    for i in range(count):
        logger.info("%s %04d %s", who, i, "y" * 40)
    for h in logger.handlers:
        h.flush()


def test_processes_sharing_the_log_rotate_it_once_each_time_and_lose_nothing(tmp_path):
    """Forked children (app.ingest.bounded forks the CLI) and their parent write one file, with a
    handler they inherited: every record is written once, no file grows past the limit. With the
    standard RotatingFileHandler each process rotates on its own, records land in renamed files
    and files grow past the limit."""
    log_file = tmp_path / "verity.log"
    logger, handler = handler_logger(log_file, max_bytes=4_000, backups=100, name="shared")
    try:
        logger.info("parent start")  # the parent's stream and lock are open before the fork
        fork = multiprocessing.get_context("fork")
        children = [fork.Process(target=_write_records, args=(logger.name, f"child{n}", 300)) for n in range(4)]
        for child in children:
            child.start()
        _write_records(logger.name, "parent", 300)
        for child in children:
            child.join(60)
            assert child.exitcode == 0
        files = log_files(tmp_path)
        records = [line.split()[1:3] for line in logged_lines(tmp_path) if "start" not in line]
        writers = ["parent", *(f"child{n}" for n in range(4))]
        expected = [[who, f"{i:04d}"] for who in writers for i in range(300)]
        assert sorted(records) == sorted(expected)  # each once: none lost, none written twice
        assert len(files) > 15  # ~87 KB in files of at most 4 KB
        assert all(f.stat().st_size <= 4_000 for f in files), [(f.name, f.stat().st_size) for f in files]
        numbered = sorted(int(f.suffix[1:]) for f in files[:-1])
        assert numbered == list(range(1, len(numbered) + 1))  # rotated in turn: no gaps
        for who in writers:  # oldest file first, each process's records are in the order it wrote them
            mine = [n for w, n in records if w == who]
            assert mine == sorted(mine)
    finally:
        handler.close()


def test_configure_logging_rotates_at_the_settings_size(tmp_path, monkeypatch):
    monkeypatch.setattr(logging.root, "handlers", list(logging.root.handlers))  # configure_logging replaces them
    settings = Settings(_env_file=None, data_dir=tmp_path / "runtime", log_max_mb=0.002, log_backups=2)
    log_file = configure_logging(settings)
    try:
        assert log_file == tmp_path / "runtime" / "verity.log"
        (handler,) = [h for h in logging.root.handlers if isinstance(h, SharedRotatingFileHandler)]
        assert (handler.maxBytes, handler.backupCount) == (2_097, 2)
        for i in range(100):
            logging.getLogger("app.test").info("record %03d %s", i, "z" * 40)
        assert (tmp_path / "runtime" / "verity.log.2").exists()
        assert not (tmp_path / "runtime" / "verity.log.3").exists()
        assert 0 < log_file.stat().st_size <= 2_097
        assert "record 099" in log_file.read_text()
    finally:
        for h in logging.root.handlers:
            h.close()


def test_the_default_is_ten_megabytes_and_five_old_logs(monkeypatch):
    monkeypatch.delenv("VERITY_LOG_MAX_MB", raising=False)
    monkeypatch.delenv("VERITY_LOG_BACKUPS", raising=False)
    settings = Settings(_env_file=None)
    assert (settings.log_max_mb, settings.log_backups) == (10.0, 5)
    monkeypatch.setenv("VERITY_LOG_MAX_MB", "50")
    monkeypatch.setenv("VERITY_LOG_BACKUPS", "2")
    assert (Settings(_env_file=None).log_max_mb, Settings(_env_file=None).log_backups) == (50.0, 2)


def test_a_forked_child_takes_its_own_lock(tmp_path):
    """flock belongs to the open file, which a forked child shares with its parent: a child
    using the inherited descriptor would never wait for its parent's lock."""
    _, handler = handler_logger(tmp_path / "verity.log", max_bytes=1_000, backups=1, name="fork")
    try:
        parent_fd = handler._lock_file()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            try:
                child_fd = handler._lock_file()
                same = os.path.samestat(os.fstat(child_fd), os.fstat(parent_fd)) and child_fd != parent_fd
                os.write(write, b"own" if same else b"shared")
            finally:
                os._exit(0)
        os.close(write)
        answer = os.read(read, 16)
        os.waitpid(pid, 0)
        assert answer == b"own"  # the same lock file, through a descriptor of its own
    finally:
        handler.close()
