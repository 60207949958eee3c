"""Reading a file in a child process with a time and a memory limit (app.ingest.bounded)."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from app.config import Settings
from app.ingest.bounded import load_table_bounded, preview_table_bounded
from app.ingest.errors import IngestError
from app.ingest.pipeline import load_table

REPO = Path(__file__).resolve().parents[1]
XLSX = REPO / "data" / "samples" / "messy" / "sales_messy.xlsx"


def in_thread(fn, *args, **kwargs):
    """Run `fn` in a second thread, as the web server does: the process then has several threads,
    so the read goes through the fork server rather than a fork of this process."""
    out: dict = {}

    def target():
        try:
            out["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            out["error"] = exc

    worker = threading.Thread(target=target)
    worker.start()
    worker.join(120)
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.fixture(scope="module")
def slow_csv(tmp_path_factory) -> Path:
    """A CSV big enough that reading it takes well over a tenth of a second."""
    path = tmp_path_factory.mktemp("bounded") / "big.csv"
    rows = "\n".join(f"{i},2024-01-{i % 28 + 1:02d},{i * 1.5:,.2f},name {i}" for i in range(300_000))
    path.write_text("id,date,amount,label\n" + rows + "\n", encoding="utf-8")
    return path


def test_the_child_returns_the_same_table_as_an_in_process_read():
    expected = load_table(XLSX)
    got = in_thread(load_table_bounded, XLSX)
    pd.testing.assert_frame_equal(got.frame, expected.frame)
    assert got.info == expected.info and got.pii == expected.pii


def test_errors_come_back_with_their_category(tmp_path):
    bad = tmp_path / "photo.xlsx"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
    with pytest.raises(IngestError) as err:
        in_thread(load_table_bounded, bad)
    assert err.value.category == "unsupported_format" and "PNG" in err.value.message
    again = pickle.loads(pickle.dumps(err.value))
    assert (again.category, again.message, again.hint) == (err.value.category, err.value.message, err.value.hint)


def test_a_read_over_the_time_limit_is_stopped_as_too_large(slow_csv):
    start = time.perf_counter()
    with pytest.raises(IngestError) as err:
        in_thread(load_table_bounded, slow_csv, settings=Settings(parse_timeout_s=0.05))
    assert err.value.category == "too_large" and "longer than 0.05 seconds" in err.value.message
    assert time.perf_counter() - start < 30
    # the next read works: a stopped child leaves nothing behind
    assert in_thread(load_table_bounded, XLSX).info["rows"] == 6


def test_a_read_over_the_memory_limit_is_refused_as_too_large(slow_csv):
    with pytest.raises(IngestError) as err:
        in_thread(load_table_bounded, slow_csv, settings=Settings(parse_memory_mb=40))
    assert err.value.category == "too_large"
    assert in_thread(load_table_bounded, slow_csv).info["rows"] == 300_000


def test_the_cli_reads_in_a_forked_child_with_the_same_limits(slow_csv, tmp_path):
    """A single-threaded process (the CLI) forks itself; the limits hold there too."""
    cmd = [sys.executable, "-m", "app.cli", "inspect", "--json", str(XLSX)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rows"] == 6
    slow = subprocess.run([sys.executable, "-m", "app.cli", "inspect", str(slow_csv)], capture_output=True,
                          text=True, cwd=REPO, timeout=120, env={**os.environ, "VERITY_PARSE_TIMEOUT_S": "0.05"})
    assert slow.returncode == 2 and slow.stderr.startswith("error: too_large: ")


def test_the_read_server_runs_reads_side_by_side(slow_csv):
    """A slow read does not hold up a quick one started meanwhile: the quick one finishes first."""
    results: dict = {}
    finished: list[str] = []

    def read(name, path, settings):
        try:
            results[name] = load_table_bounded(path, settings=settings).info["rows"]
        except IngestError as exc:
            results[name] = exc.category
        finished.append(name)

    slow = threading.Thread(target=read, args=("slow", slow_csv, Settings(parse_timeout_s=20)))
    quick = threading.Thread(target=read, args=("quick", XLSX, Settings()))
    slow.start()
    time.sleep(0.2)
    quick.start()
    quick.join(60)
    slow.join(60)
    assert results == {"quick": 6, "slow": 300_000} and finished == ["quick", "slow"]


def test_the_streamed_preview_of_a_big_workbook_is_read_in_a_child_too(tmp_path):
    xlsxwriter = pytest.importorskip("xlsxwriter")
    path = tmp_path / "big.xlsx"
    book = xlsxwriter.Workbook(str(path), {"constant_memory": True})
    sheet = book.add_worksheet("Data")
    sheet.write_row(0, 0, ["ID", "Amount"])
    for i in range(50_000):
        sheet.write_row(i + 1, 0, [f"A{i:06d}", i * 2.5])
    book.close()
    out = in_thread(preview_table_bounded, path, rows=3)
    assert out["partial"] is True and out["rows"] == 50_000
    assert [r["Amount"] for r in out["preview"]] == [0.0, 2.5, 5.0]
    renamed = tmp_path / "scan.xlsx"
    renamed.write_bytes(b"%PDF-1.7\n" + b"\0" * 64)
    with pytest.raises(IngestError) as err:
        in_thread(preview_table_bounded, renamed)
    assert err.value.category == "unsupported_format" and "PDF" in err.value.message


def test_a_read_server_that_died_is_started_again():
    from app.ingest.readserver import read_server

    assert in_thread(load_table_bounded, XLSX).info["rows"] == 6
    first = read_server()
    first.process.kill()
    first.process.wait(10)
    assert in_thread(load_table_bounded, XLSX).info["rows"] == 6  # a new server answers
    assert read_server() is not first and read_server().alive()
