"""The host's only ways into a sandbox's files (sandbox.results), without a sandbox: copying out,
emptying and pruning never follow a symlink, whatever was planted where."""

from __future__ import annotations

import os
import time

from sandbox.results import collect, copy_out, empty_scratch, open_dir, prune_kept


def _victim(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    for i in range(50):
        (victim / f"f{i}.txt").write_text("precious")
    return victim


def test_copy_out_takes_only_small_regular_files(tmp_path):
    victim = _victim(tmp_path)
    inside = tmp_path / "inside"
    inside.mkdir()
    (inside / "ok.png").write_bytes(b"\x89PNG fine")
    (inside / "big.png").write_bytes(b"x" * 2000)
    os.symlink(victim / "f1.txt", inside / "link.png")
    os.mkfifo(inside / "pipe.png")
    out = tmp_path / "out"
    out.mkdir()
    fd = open_dir(inside)
    try:
        assert copy_out(fd, "ok.png", out / "ok.png", 1000) == out / "ok.png"
        assert (out / "ok.png").read_bytes() == b"\x89PNG fine"
        for name in ("big.png", "link.png", "pipe.png", "../victim/f1.txt", "", "missing.png"):
            assert copy_out(fd, name, out / "x.png", 1000) is None, name  # a FIFO does not block either
    finally:
        os.close(fd)
    assert sorted(p.name for p in out.iterdir()) == ["ok.png"]


def test_a_call_folder_swapped_for_a_symlink_is_not_read_and_emptying_follows_no_link(tmp_path):
    victim = _victim(tmp_path)
    scratch = tmp_path / "scratch"
    (scratch / "calls").mkdir(parents=True)
    os.symlink(victim, scratch / "calls" / "c1")  # what renameat2(RENAME_EXCHANGE) leaves behind
    (scratch / "calls" / "old").mkdir()
    os.symlink(victim, scratch / "calls" / "old" / "inner")
    (scratch / "calls" / "old" / "file").write_text("x")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    os.symlink(victim, tmp / "link")
    (tmp / "dir").mkdir()
    os.symlink(victim / "f0.txt", tmp / "dir" / "f0")
    reply = {"figures": [{"file": "f1.txt"}], "tables": [{"parquet": "f2.txt", "csv": "f3.txt"}]}
    scratch_fd, tmp_fd = open_dir(scratch), open_dir(tmp)
    try:
        assert collect(scratch_fd, "c1", reply, tmp_path / "kept", 10_000) == ([], [])
        empty_scratch(scratch_fd, tmp_fd)
    finally:
        os.close(scratch_fd)
        os.close(tmp_fd)
    assert os.listdir(scratch / "calls") == [] and os.listdir(tmp) == []
    assert len(os.listdir(victim)) == 50 and (victim / "f0.txt").read_text() == "precious"


def test_kept_outputs_are_pruned_oldest_first_by_count_and_size(tmp_path):
    kept = tmp_path / "calls"
    for i in range(6):
        folder = kept / f"c{i}"
        folder.mkdir(parents=True)
        (folder / "t.parquet").write_bytes(b"x" * 1000)
        stamp = time.time() - 100 + i
        os.utime(folder, (stamp, stamp))
    prune_kept(kept, keep=4, max_bytes=10_000)
    assert sorted(os.listdir(kept)) == ["c2", "c3", "c4", "c5"]
    prune_kept(kept, keep=4, max_bytes=2_500)
    assert sorted(os.listdir(kept)) == ["c4", "c5"]
    prune_kept(kept, keep=4, max_bytes=10)  # the newest call's outputs always stay
    assert os.listdir(kept) == ["c5"]
