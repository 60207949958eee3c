"""The CLI's early parse (app.ingest.early_parse): calamine parses the likely table in a thread
while the reading child imports pandas; the pipeline takes that parse only when it is exactly the
rows it asks for, so what `verity inspect` says never depends on the guess.

The early parse runs in fresh interpreters, as in the CLI's reading child (no pandas imported)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest
import xlsxwriter

from app.ingest.pipeline import duplicate_rows, inspect_file
from app.ingest.table import detect_layout, is_missing, layout_of_cells

REPO = Path(__file__).resolve().parents[1]


def run_python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def report_workbook(tmp_path_factory) -> Path:
    """A title merged over the table, a note row, the header on row 4 and 500 data rows; a small
    second sheet."""
    path = tmp_path_factory.mktemp("early") / "report.xlsx"
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet("Orders")
    small = wb.add_worksheet("Notes")
    for r, row in enumerate([["Checked by", "Date"], ["Ann", "2024-02-01"], ["Bo", "2024-02-03"]]):
        small.write_row(r, 0, row)
    date = wb.add_format({"num_format": "yyyy-mm-dd"})
    ws.merge_range(0, 0, 0, 4, "Orders 2024")
    ws.write(1, 0, "Amounts in EUR")
    ws.write_row(3, 0, ["Order", "Date", "Region", "Amount", "Share"])
    for i in range(500):
        ws.write_row(i + 4, 0, [f"A-{i:05d}", None, ["East", "West"][i % 2], i * 1.5, f"{i % 100}%"])
        ws.write_datetime(i + 4, 1, datetime(2024, 1, 1) + timedelta(days=i), date)
    wb.close()
    return path


def test_the_early_parse_is_the_batch_the_pipeline_would_parse(report_workbook):
    out = run_python(f"""
import json, fastexcel
from app.config import Settings
from app.ingest import early_parse
path = {str(report_workbook)!r}
early_parse.start(path, None, Settings())
batch = early_parse.claim(path, "Orders", 4, None)
own = fastexcel.read_excel(path).load_sheet("Orders", **early_parse.typed_options(4, None))
print(json.dumps({{"same": batch is not None and batch.equals(own), "rows": batch.num_rows,
                   "claimed": early_parse._pending is None}}))
""")
    assert json.loads(out) == {"same": True, "rows": 500, "claimed": True}


def test_a_claim_for_other_rows_or_another_sheet_gets_nothing(report_workbook):
    out = run_python(f"""
import json, sys
from app.config import Settings
from app.ingest import early_parse
path = {str(report_workbook)!r}
early_parse.start(path, None, Settings())
thread = early_parse._pending.thread
other_rows = early_parse.claim(path, "Orders", 5, None)
ended = not thread.is_alive()  # waited for: two parses at once would need twice the memory
early_parse.start(path, None, Settings())
other_sheet = early_parse.claim(path, "Notes", 4, None)
early_parse.start(path, "Notes", Settings())  # all of it in its first rows: nothing to parse early
small = early_parse.claim(path, "Notes", 1, None)
early_parse.start(path, None, Settings(max_cells=1000))  # 504 x 5 declared: refused before any parse
pending = early_parse._pending
pending.thread.join()
refused = pending.chosen is None and early_parse.claim(path, "Orders", 4, None) is None
early_parse.start(path, None, Settings())
early_parse.discard()
print(json.dumps({{"other_rows": other_rows is None, "ended": ended, "other_sheet": other_sheet is None,
                   "small": small is None, "refused": refused, "pandas": "pandas" in sys.modules}}))
""")
    assert json.loads(out) == {
        "other_rows": True,
        "ended": True,
        "other_sheet": True,
        "small": True,
        "refused": True,
        "pandas": False,
    }


def test_the_reading_child_imports_the_readers_once_calamine_has_the_rows(report_workbook, tmp_path):
    """The size check and the choice of rows are Python, and so are the imports: run together they
    take turns on the GIL and calamine starts after both. The child waits for calamine to start
    (or for the early parse to end without it) before it imports pandas and the pipeline; the
    answer is the one an in-process read gives."""
    job = tmp_path / "job"
    job.mkdir()
    out = run_python(f"""
import json, pickle, sys
from pathlib import Path
from app.config import Settings
from app.ingest import child, early_parse
job = Path({str(job)!r})
job.joinpath("request.pkl").write_bytes(pickle.dumps(("inspect", {str(report_workbook)!r}, None, Settings(), {{}})))
seen = {{}}
real_import = child.import_readers
def import_readers(**kw):
    pending = early_parse._pending
    seen.update(chosen=pending.chosen, parsing=pending.parsing.is_set(), pandas="pandas" in sys.modules)
    real_import(**kw)
child.import_readers = import_readers
child.limit_memory = lambda extra_mb: 0  # this interpreter is the test's child, not a reading child
code = child.read_job(job, early=True)
kind, info = pickle.loads(job.joinpath("result.pkl").read_bytes())
print(json.dumps({{"code": code, "kind": kind, "rows": info["rows"], **seen}}))
""")
    assert json.loads(out) == {
        "code": 0,
        "kind": "ok",
        "rows": 500,
        "chosen": ["Orders", 4],
        "parsing": True,
        "pandas": False,
    }


def test_the_cli_says_what_an_in_process_read_says(report_workbook, tmp_path, verity_here):
    """`verity inspect` (in this process, conftest.verity_here: its early parse and its reading child
    run as they do for a user) prints what inspect_file says."""
    for args in ([], ["--sheet", "Notes"], ["--sheet", "Orders", "--rows", "3"]):
        done = verity_here("inspect", report_workbook, "--json", *args)
        assert done.returncode == 0, done.stderr
        sheet = args[1] if args else None
        rows = int(args[3]) if len(args) > 2 else 20
        expected = json.loads(json.dumps(inspect_file(report_workbook, sheet=sheet, rows=rows)))
        assert json.loads(done.stdout) == expected
    assert expected["header_row"] == 4 and expected["rows"] == 500


def test_the_layout_of_plain_rows_is_the_layout_of_the_frame():
    head = [
        ["Sales report", None, None],
        [None, None, None],
        ["Region", "Units", "When"],
        ["East", 3.0, datetime(2024, 1, 5)],
        ["West", float("nan"), datetime(2024, 1, 6)],
        ["  ", 4.0, None],
    ]
    frame = pd.DataFrame(head, dtype=object)
    plain = layout_of_cells(head, list(range(6)), [0, 1, 2])
    assert plain == detect_layout(frame) and plain.data_start == 3 and plain.names == ["Region", "Units", "When"]
    for value in (
        None,
        "x",
        "",
        0,
        1.5,
        float("nan"),
        pd.NaT,
        pd.NA,
        pd.Timestamp("2024-01-01"),
        datetime(2024, 1, 1),
        True,
    ):
        assert is_missing(value) == bool(pd.isna(value)), value


def test_repeated_rows_are_counted_exactly_with_or_without_an_id_column():
    rows = pd.DataFrame({"id": pd.Series(["a", "b", "c", "d"], dtype="str"), "x": [1.0, 1.0, 2.0, 1.0]})
    assert duplicate_rows(rows) == 0  # the IDs never repeat
    twice_missing = pd.DataFrame({"id": pd.Series(["a", None, None, "d"], dtype="str"), "x": [1.0, 2.0, 2.0, 1.0]})
    assert duplicate_rows(twice_missing) == 1 == int(twice_missing.duplicated().sum())
    no_id = pd.DataFrame({"region": pd.Series(["E", "W", "E"], dtype="str"), "n": pd.Series([1, 2, 1], dtype="Int64")})
    assert duplicate_rows(no_id) == 1
