"""Reading a file in a child process with a time and a memory limit (app.ingest.bounded)."""

from __future__ import annotations

import json
import logging
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
from tests.test_upload_background import bg_client, models_seen, workbook  # noqa: F401 (fixtures; `gate` is in conftest)

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


def test_a_read_over_the_memory_limit_is_refused_as_too_large(slow_csv, caplog):
    # 8 MB: the table alone takes ~25 MB (300,000 rows of an integer, a date, a number and a text); at 40 MB
    # the leaner read (free text not factorised whole, freed pages returned after 100 ms) fitted in one CI
    # run, and at 20 MB another (stop 45, after the text columns' distinct values were kept for the checks)
    with caplog.at_level(logging.WARNING, logger="app.ingest.bounded"):
        with pytest.raises(IngestError) as err:
            in_thread(load_table_bounded, slow_csv, settings=Settings(parse_memory_mb=8))
        assert err.value.category == "too_large"
        assert in_thread(load_table_bounded, slow_csv).info["rows"] == 300_000
    # both reads ran in a child, under its limit: neither refused nor read in-process for want of one
    assert not [r.getMessage() for r in caplog.records if "child" in r.getMessage() or "server" in r.getMessage()]


def test_a_read_server_started_in_another_folder_finds_the_job(tmp_path, monkeypatch, caplog):
    """The read server stays for the life of the process that started it, in the working folder it was started
    in. A read later made from another folder with a relative data_dir (`data/runtime`, the default) sent its job
    folder relative, and the server's child looked for it in the server's folder: it "could not start" and the
    file was read in-process without the child's limits (CI: the 8 MB read above came back whole after
    test_report_downloads.py had served from a folder of its own in the same worker)."""
    from app.ingest import readserver

    (tmp_path / "server").mkdir()
    (tmp_path / "caller").mkdir()
    monkeypatch.setattr(readserver, "_server", None)  # a server of this test's own, started from "server"
    monkeypatch.chdir(tmp_path / "server")
    server = readserver.read_server()
    monkeypatch.chdir(tmp_path / "caller")
    try:
        settings = Settings(_env_file=None, data_dir=Path("data/runtime"))
        with caplog.at_level(logging.WARNING, logger="app.ingest.bounded"):
            assert in_thread(load_table_bounded, XLSX, settings=settings).info["rows"] == 6
        assert readserver.read_server() is server
        assert not [r.getMessage() for r in caplog.records if "child" in r.getMessage()]
        assert not (tmp_path / "server" / "data").exists()
    finally:
        server.process.kill()
        server.process.wait(10)


def test_a_child_that_fails_after_its_limit_was_set_is_too_large_not_read_again_unbounded(tmp_path):
    """CI saw the 8 MB read above come back as a table: under the limit the child's error handler itself
    failed, the error escaped with SETUP_FAILED, and the parent read the file in-process with no limit.
    A child that got as far as its limit (the mark) and ended without an outcome ran out of memory."""
    from app.ingest.bounded import _outcome
    from app.ingest.child import LIMITED_MARK, SETUP_FAILED, NoChild

    with pytest.raises(NoChild):  # it failed before reading: the machinery, read elsewhere
        _outcome("table", tmp_path, "exit", SETUP_FAILED, 5.0)
    (tmp_path / LIMITED_MARK).touch()
    with pytest.raises(IngestError) as err:
        _outcome("table", tmp_path, "exit", SETUP_FAILED, 5.0)
    assert err.value.category == "too_large"


def test_a_reading_child_marks_that_its_limit_is_set(slow_csv, tmp_path):
    """The mark is made by a real child before its limit: the job folder of a read that ran out of room has it."""
    import pickle as pk

    from app.ingest.bounded import run_job
    from app.ingest.child import LIMITED_MARK

    job = tmp_path / "job"
    job.mkdir()
    settings = Settings(parse_memory_mb=8, data_dir=tmp_path)
    (job / "request.pkl").write_bytes(pk.dumps(("table", str(slow_csv), None, settings, {})))
    status, _, _ = in_thread(run_job, job, 60.0)
    assert status == "exit" and (job / LIMITED_MARK).exists()
    if (job / "result.pkl").exists():  # the child could still say what went wrong: memory ran out
        outcome, error = pk.loads((job / "result.pkl").read_bytes())
        assert outcome == "error" and error.category == "too_large"


def test_the_cli_reads_in_a_forked_child_with_the_same_limits(slow_csv, tmp_path):
    """A single-threaded process (the CLI) forks itself; the limits hold there too."""
    cmd = [sys.executable, "-m", "app.cli", "inspect", "--json", str(XLSX)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rows"] == 6
    slow = subprocess.run(
        [sys.executable, "-m", "app.cli", "inspect", str(slow_csv)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        env={**os.environ, "VERITY_PARSE_TIMEOUT_S": "0.05"},
    )
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


# --- how many reads run at once ------------------------------------------------------------------


def test_reads_wait_for_a_free_slot_and_say_so(tmp_path):
    """A queue with a total memory budget: one slot when the budget holds one read; a read that
    must wait tells whoever started it (zh and en), and runs as soon as the slot is free."""
    from app.ingest.parse_slots import on_wait, parse_slot, slots

    settings = Settings(_env_file=None, data_dir=tmp_path / "runtime", parse_memory_mb=1024, parse_total_memory_mb=1500)
    assert slots(settings) == 1 and slots(settings.model_copy(update={"parse_total_memory_mb": 4096})) == 4
    told: list = []
    finished: list = []

    def read():
        with on_wait(told.append):
            finished.append((load_table_bounded(XLSX, settings=settings).info["rows"], time.monotonic()))

    with parse_slot(settings):  # another upload is being read
        reader = threading.Thread(target=read)
        reader.start()
        time.sleep(1.0)
        released = time.monotonic()
        assert finished == [] and told and told[0]["slots"] == 1
        assert "Waiting for its turn" in told[0]["en"] and "正在排队" in told[0]["zh"]
    reader.join(120)
    assert finished and finished[0][0] == 6 and finished[0][1] >= released
    assert told[-1] is None  # its turn came: the waiting note is withdrawn


def test_a_slot_held_by_another_process_counts_and_is_freed_when_it_dies(tmp_path):
    from app.ingest.parse_slots import parse_slot

    settings = Settings(_env_file=None, data_dir=tmp_path / "runtime", parse_memory_mb=1024, parse_total_memory_mb=1024)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time\nfrom app.config import Settings\nfrom app.ingest.parse_slots import parse_slot\n"
                f"s = Settings(_env_file=None, data_dir={str(tmp_path / 'runtime')!r}, parse_memory_mb=1024, "
                "parse_total_memory_mb=1024)\nwith parse_slot(s):\n    print('held', flush=True)\n    time.sleep(600)"
            ),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        got: list = []

        def take():
            with parse_slot(settings) as number:
                got.append(number)

        waiter = threading.Thread(target=take)
        waiter.start()
        time.sleep(0.5)
        assert got == []  # the other process's read holds the only slot
        holder.kill()  # a crash frees it
        waiter.join(30)
        assert got == [0]
    finally:
        holder.kill()
        holder.wait(10)


# --- zip bombs: decompressed size and parse cost, not the compression ratio alone -----------------


def test_a_genuine_workbook_of_32k_character_cells_is_read(tmp_path):
    import zipfile

    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["id", "note", "amount"])
    for i in range(320):  # Excel's longest cell is 32,767 characters
        sheet.append([i, f"note {i}: " + ("lorem ipsum dolor sit amet " * 1200)[:32_000], i * 1.5])
    path = tmp_path / "long_notes.xlsx"
    book.save(path)
    settings = Settings(_env_file=None)
    with zipfile.ZipFile(path) as package:  # the part packs like a bomb would ...
        part = max(package.infolist(), key=lambda i: i.file_size)
        assert part.file_size > 8 * 1024 * 1024 and part.file_size / part.compress_size > settings.max_compression_ratio
    table = in_thread(load_table_bounded, path, settings=settings)  # ... but it is a few hundred cells
    assert table.info["rows"] == 320 and len(table.frame["note"].iloc[7]) == 32_008
    assert table.frame["amount"].sum() == pytest.approx(sum(i * 1.5 for i in range(320)))


def test_a_bomb_of_empty_cells_is_refused_for_its_parse_cost(tmp_path):
    import zipfile

    path = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("[Content_Types].xml", "<Types/>")
        package.writestr("xl/workbook.xml", "<workbook/>")
        package.writestr("xl/worksheets/sheet1.xml", b"<c/>" * (16 * 1024 * 1024))  # 64 MB, packs ~1000x
    start = time.perf_counter()
    with pytest.raises(IngestError) as err:
        load_table(path, settings=Settings(_env_file=None, max_cells=1_000_000))
    assert err.value.category == "too_large" and "more than 4,000,000 XML elements" in err.value.message
    assert time.perf_counter() - start < 30  # counted while inflating, stopped at the limit


def test_a_big_upload_waiting_for_its_turn_says_so_through_the_api(bg_client, gate, workbook):  # noqa: F811
    """The background read of a big upload waits for a read slot like any read; meanwhile the
    dataset (loading) carries the waiting note, in zh and en; it is gone once the read is done."""
    from app.ingest.parse_slots import parse_slot
    from tests.factories import wait_until_ready
    from tests.test_upload_background import new_workspace, upload

    client = bg_client
    settings = client.app.state.settings
    ws = new_workspace(client)
    response = upload(client, ws, workbook)  # its preview took a slot, and gave it back
    assert response.status_code == 201 and response.json()["dataset"]["status"] == "loading"
    dataset_id = response.json()["dataset"]["id"]
    with parse_slot(settings), parse_slot(settings):  # two other files are being read: every slot is taken
        gate.set()  # the background read may start now: it waits for a slot
        deadline, body = time.monotonic() + 30, {}
        while time.monotonic() < deadline and "waiting" not in body:
            body = client.get(f"/api/workspaces/{ws}/datasets/{dataset_id}").json()["dataset"]
            time.sleep(0.05)
        assert body["status"] == "loading" and body["waiting"]["slots"] == 2
        assert "Waiting for its turn" in body["waiting"]["en"] and "正在排队" in body["waiting"]["zh"]
    done = wait_until_ready(client, ws, dataset_id, limit_s=60)
    assert done["status"] == "ready" and "waiting" not in done and done["rows"] == 1500


# How the reading child fails, run in a fresh one-threaded interpreter (whose read forks it, so the
# child runs the patched reader; pytest's own process may hold threads by now, which would send the
# read to the read server, beyond the patch): the category the read is refused with is printed.
_FAILING_READ = """
import sys, app.ingest.pipeline
from app.config import Settings
from app.ingest.bounded import load_table_bounded
from app.ingest.errors import IngestError

def load_table(path, sheet=None, settings=None):
    import ctypes, faulthandler
    faulthandler.disable()
{body}

app.ingest.pipeline.load_table = load_table
try:
    load_table_bounded(sys.argv[1], settings=Settings(parse_memory_mb=int(sys.argv[2])))
    print("read")
except IngestError as exc:
    print(exc.category)
"""


def _category_when_reading(body: str, path: Path, memory_mb: int) -> str:
    code = _FAILING_READ.replace("{body}", "\n".join("    " + line for line in body.strip().splitlines()))
    done = subprocess.run(
        [sys.executable, "-c", code, str(path), str(memory_mb)], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


# Touched, so resident; then a native read through a null pointer: SIGSEGV, as a reader refused memory does.
_CRASH_AFTER = "held = bytearray({mb} * 1024 * 1024)\nctypes.string_at(0)"


def test_a_crash_with_the_memory_limit_nearly_used_is_too_large_not_damaged(slow_csv):
    """Native code under the address-space limit may crash on a refused allocation instead of
    reporting it (pyarrow's CSV reader segfaults at a 20-30 MB limit): that is the limit, not the file."""
    assert _category_when_reading(_CRASH_AFTER.format(mb=45), slow_csv, 60) == "too_large"


def test_a_crash_with_memory_to_spare_is_a_damaged_file(slow_csv):
    assert _category_when_reading(_CRASH_AFTER.format(mb=0), slow_csv, 60) == "corrupt_file"


@pytest.mark.parametrize(
    "wrapped",
    [
        'ValueError("CSV parse error")',  # a reader's own error raised while handling the MemoryError
        'OSError(12, "Cannot allocate memory")',  # ENOMEM from the system
        'RuntimeError("can\'t start new thread")',  # a thread's stack refused under the limit
    ],
)
def test_memory_running_out_under_another_error_is_too_large(slow_csv, wrapped):
    # Raised from None: not even a __cause__, only the context (or the kind of error) says it.
    body = f"try:\n    raise MemoryError\nexcept MemoryError:\n    raise {wrapped} from None"
    assert _category_when_reading(body, slow_csv, 200) == "too_large"


def test_an_error_that_is_not_memory_is_still_a_damaged_file(slow_csv):
    assert (
        _category_when_reading('raise ValueError("a structure the reader trips over")', slow_csv, 200) == "corrupt_file"
    )


class _NoRoomToCopy:
    """A result whose copy for the parent fails as a machinery step can under the memory limit (a thread
    that cannot start, a buffer that cannot grow): not a MemoryError the child catches itself."""

    def __reduce__(self):
        raise RuntimeError("can't start new thread")


def test_a_child_that_runs_out_of_room_after_its_limit_is_set_is_too_large_not_read_again_unbounded(
    tmp_path, monkeypatch
):
    # CI once saw "reading big.csv in-process: the reading child could not start" at a 20 MB limit: the
    # child failed past its limit, exited as if its setup had failed, and the parent read the file again
    # in-process with no limit at all.
    from app.ingest import bounded, child

    monkeypatch.setitem(child.READERS, "table", lambda *args, **kwargs: _NoRoomToCopy())
    job = tmp_path / "job"
    job.mkdir()
    request = ("table", str(XLSX), None, Settings(data_dir=tmp_path), {})
    (job / "request.pkl").write_bytes(pickle.dumps(request))
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = child.SETUP_FAILED
        try:
            code = child.read_job(job)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code == child.OUT_OF_MEMORY
    with pytest.raises(IngestError) as err:
        bounded._outcome("table", job, "exit", code, 60)
    assert err.value.category == "too_large"


def test_a_child_that_could_not_start_says_why(tmp_path):
    """A job folder the child cannot read ends with SETUP_FAILED and the reason beside it, which the parent
    puts in NoChild (logged when the file is then read in-process, without the child's limits)."""
    from app.ingest.bounded import _outcome
    from app.ingest.child import SETUP_FAILED, NoChild, read_job

    (tmp_path / "request.pkl").write_bytes(b"not a pickle")
    assert read_job(tmp_path) == SETUP_FAILED
    with pytest.raises(NoChild, match=r"could not start \(.+\)"):
        _outcome("table", tmp_path, "exit", SETUP_FAILED, 10.0)


def test_with_no_child_a_file_that_may_not_fit_is_refused_not_read_unbounded(slow_csv, monkeypatch):
    """Where no child can read (no fork, the read server gone) the file is read in this process, which has no
    limit: only when it fits the child's limit at a table's growth (~10x the file). CI saw the 8 MB read above come
    back whole this way ("the reading child could not start")."""
    from app.ingest import bounded
    from app.ingest.child import NoChild

    def no_child(job, timeout):
        raise NoChild("the read server is gone (test)")

    monkeypatch.setattr(bounded, "run_job", no_child)
    with pytest.raises(IngestError) as err:
        bounded.load_table_bounded(slow_csv, settings=Settings(parse_memory_mb=8))
    assert err.value.category == "too_large"
    assert bounded.load_table_bounded(slow_csv).info["rows"] == 300_000  # the default limit: read in-process
