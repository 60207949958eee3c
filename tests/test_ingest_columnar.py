"""A CSV's data rows are read in one columnar pass (app/ingest/textcolumns.py) and its plain-number
and ISO-date columns typed in one Arrow cast each (textvalues): the table, its types, the cleaning
log and the warnings must be exactly what the exact reader (the whole text parsed at once, as
before) gives, on the layouts people export, and a file past the row limit is refused before it
is parsed."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from app.config import Settings
from app.ingest import textcolumns, textvalues
from app.ingest.errors import IngestError
from app.ingest.pipeline import load_table

R = random.Random(27)


def _rows(n: int, make) -> str:
    return "\n".join(make(i) for i in range(n))


FILES: dict[str, tuple[str, str]] = {
    # name: (text, encoding)
    "title_and_blank_rows": (
        "Sales export\n\nid,region,units,share,when\n"
        + _rows(
            300,
            lambda i: f"{i},{R.choice(['East', 'West'])},{R.randint(1, 999)},{R.random():.3f},2024-01-{i % 28 + 1:02d}",
        ).replace("\n150,", "\n\n\n150,")
        + "\nTotal,,123456,,\n注：数据来源 内部系统\n",
        "utf-8",
    ),
    "crlf_percent_trailing_delimiter": (
        "Report\r\n\r\nname,value,pct,\r\n"
        + "\r\n".join(f"n{i},{i * 1.5},{i % 100}%," for i in range(200))
        + "\r\nTotal,999,,\r\n",
        "utf-8",
    ),
    "gb18030_thousands_yes_no": (
        "编号,地区,金额,是否\n"
        + _rows(200, lambda i: f'{i},{R.choice(["华东", "华北"])},"{R.randint(1, 99999):,}",{R.choice(["是", "否"])}')
        + "\n合计,,123,\n",
        "gb18030",
    ),
    "bom_and_spaces": (
        "\ufeffa , b ,c\n"
        + _rows(120, lambda i: f"  {i} ,\u3000{R.choice(['x', 'y'])}\u3000,  {i * 2} ").replace(
            "\n  90 ,", "\n   ,\u3000,  \n  90 ,"
        ),
        "utf-8",
    ),
    "zero_padded_code_late": ("code,val\n" + _rows(200, lambda i: f"{i + 100},{i}") + "\n007,5\n", "utf-8"),
    "nan_inf_markers": (
        "a,b,c\n" + _rows(300, lambda i: f"{i},{R.choice(['n/a', '12', 'nan', '3.5', 'inf'])},{R.choice(['1', '2'])}"),
        "utf-8",
    ),
    "dates_one_impossible": (
        "when,amount\n" + _rows(100, lambda i: f"2024-01-{i % 28 + 1:02d} 07:30,{i}") + "\n2024-02-30 07:30,5\n",
        "utf-8",
    ),
    "mixed_dates_and_money": (
        "when,amount,flag,code\n"
        + _rows(
            400,
            lambda i: (
                f"{R.choice(['2024-01-05', '05.01.2024', '2024年1月5日'])},"
                f"{R.choice(['¥1,234', '12%', '(300)', '3.5万', '5'])},{R.choice(['是', '否'])},{R.randint(0, 99):03d}"
            ),
        )
        + "\n",
        "utf-8",
    ),
    "two_header_rows_semicolons": (
        "2024;;2025;\nRevenue;Cost;Revenue;Cost\n" + _rows(100, lambda i: f"{i};{i + 1};{i + 2};{i + 3}") + "\n",
        "utf-8",
    ),
    "quoted_line_breaks": (
        "id,note,units\n" + _rows(100, lambda i: f'{i},"line one\nline two {i}",{i * 3}') + "\n",
        "utf-8",
    ),
    "ragged_rows": ("a,b,c\n" + _rows(100, lambda i: f"{i},{i * 2},{i * 3}") + "\n1,2\n5,6,7,8\n", "utf-8"),
    "repeated_rows_and_row_numbers": (",a,b\n" + _rows(100, lambda i: f"{i},{i % 10},{i % 5}") + "\n", "utf-8"),
    # for the typed pass: rules that need a typed cell's text, and columns a later block refuses
    "short_number_row_under_a_gap": ("a,b,c\n" + _rows(200, lambda i: f"{i},{i * 2},x{i}") + "\n\n12,,\n", "utf-8"),
    "totals_label_after_a_number": (
        "year,label,amount\n" + _rows(200, lambda i: f"{2000 + i % 20},r{i % 3},{i}.5") + "\n2024,Total,999\n",
        "utf-8",
    ),
    "average_row_with_separators": (
        "name,units,amount\n" + _rows(40, lambda i: f'n{i},{i},"{1000 + i:,}"') + '\nAverage,19.5,"1,019.5"\n',
        "utf-8",
    ),
    "number_column_turns_to_text_late": (
        "a,b,when\n" + _rows(3000, lambda i: f"{i},{i * 0.5},2024-02-{i % 28 + 1:02d}") + "\n3000,n/a,soon\n",
        "utf-8",
    ),
    "row_numbers_with_separators": (",a\n" + _rows(1200, lambda i: f'"{i:,}",{i % 7}') + "\n", "utf-8"),
    # the typed pass's shortcuts (a cast instead of the regular expressions; dates proved on their bytes)
    "separators_in_every_shape": (
        "a,b,c,d,e\n"
        + _rows(
            900,
            lambda i: (
                f'"{1000 + i:,}.5",{i},"{i % 900:,}","{12000 + i:,}",{i}'
                if i < 850
                else f'"{1000 + i:,}",{i}.0,"0,{i:03d}","{i},{i % 10}","0{i},{i % 10:03d}"'
            ),
        )
        + "\n",
        "utf-8",
    ),
    "numbers_at_the_edges": (
        "a,b,c,d,e\n"
        + _rows(
            900,
            lambda i: (
                f"+.{i + 1},-0,{i}.,1e{i % 300},{i}" if i < 850 else f"5.,1e400,{i}E+1, {i} ,{R.choice(['nan', 'inf'])}"
            ),
        )
        + "\n",
        "utf-8",
    ),
    "dates_in_every_shape": (
        "a,b,c,d,e,f\n"
        + _rows(
            900,
            lambda i: (
                (
                    f"2024-01-{i % 28 + 1:02d}T07:30:15.{i:06d},2024-01-{i % 28 + 1:02d} 07:30,2024-01-05,"
                    f"2024-01-05T07:30,2024-1-{i % 9 + 1},2024-01-05 07:30:15"
                )
                if i < 850
                else (
                    f"2024-01-05 07:30:15.5,2024-01-05T07,2024-01-05Z,"
                    f"2024-01-05T07:30:00+01:00,2024-01-5,{R.choice(['1600-01-05 07:30:15', '2024-01-05 07:30:1'])}"
                )
            ),
        )
        + "\n",
        "utf-8",
    ),
    "blank_then_numbers_and_padded_late": (
        "a,b\n" + _rows(2000, lambda i: f",{i}" if i < 1500 else f"{i},{i}") + "\n0042,1\n",
        "utf-8",
    ),
}


def _exact(monkeypatch) -> None:
    """The exact reader only: as if no file could be read column-wise."""
    monkeypatch.setattr(textcolumns, "scan", lambda path: None)
    monkeypatch.setattr(textcolumns, "transcoded", lambda path, text, encoding: None)


@pytest.mark.parametrize("typed", [False, True], ids=["text", "typed"])
@pytest.mark.parametrize("name", sorted(FILES))
def test_the_columnar_pass_gives_what_the_exact_reader_gives(name, typed, tmp_path, monkeypatch):
    """Both ways of the columnar pass: all text (small files), and the typed pass (big files: here
    on every file, in blocks of a few hundred bytes, so that later blocks can refuse a column)."""
    text, encoding = FILES[name]
    path = tmp_path / f"{name}.csv"
    path.write_bytes(text.encode(encoding))
    if typed:
        monkeypatch.setattr(textcolumns, "TYPED_MIN_BYTES", 0)
        monkeypatch.setattr(textcolumns, "BLOCK", 512)
    calls: list[int] = []
    real = textcolumns.read_typed_rows  # what both passes, all text or typed, read with

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(textcolumns, "read_typed_rows", counted)
    columnar = load_table(path)
    if name not in ("quoted_line_breaks",):  # a quoted line break in the head: rows are not lines
        assert calls, "the columnar pass was not used"
    with monkeypatch.context() as m:
        _exact(m)
        exact = load_table(path)
    assert columnar.info == exact.info
    pd.testing.assert_frame_equal(columnar.frame, exact.frame)


def test_the_columnar_pass_reads_the_values_and_log_expected(tmp_path):
    """Against values written down independently: a title row, a blank row, ISO dates, thousands
    separators, a zero-padded code, 是/否, a totals row."""
    body = _rows(
        80, lambda i: f'{i + 1},2024-03-{i % 28 + 1:02d},"{(i + 1) * 1000:,}",{i % 7:03d},{"是" if i % 2 else "否"}'
    )
    path = tmp_path / "plain.csv"
    path.write_text("Title\n\nn,day,amount,code,paid\n" + body + "\n合计,,99,,\n", encoding="utf-8")
    table = load_table(path)
    types = {c["name"]: c["type"] for c in table.info["columns"]}
    assert types == {"n": "integer", "day": "datetime", "amount": "integer", "code": "identifier", "paid": "boolean"}
    assert table.info["header_row"] == 3 and table.info["rows"] == 80
    assert table.frame["amount"].tolist() == [(i + 1) * 1000 for i in range(80)]
    assert table.frame["day"].iloc[5] == pd.Timestamp("2024-03-06")
    assert table.frame["code"].iloc[3] == "003"
    actions = {e["action"]: e["count"] for e in table.info["cleaning"]}
    assert actions["parsed dates written as text"] == 80
    assert actions["parsed thousands separators"] == 80
    assert any("totals row" in w for w in table.info["warnings"])


def test_a_file_past_the_row_limit_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    path = tmp_path / "tall.csv"
    path.write_text("a,b\n" + _rows(3_000, lambda i: f"{i},{i}") + "\n", encoding="utf-8")

    def parsed(*args, **kwargs):
        raise AssertionError("the rows were parsed")

    monkeypatch.setattr(textcolumns, "read_typed_rows", parsed)
    with pytest.raises(IngestError) as caught:
        load_table(path, settings=Settings(_env_file=None, max_rows=1_000, data_dir=tmp_path))
    assert caught.value.category == "too_large"


def test_utf16_and_cr_only_files_are_read_by_the_exact_reader(tmp_path):
    utf16 = tmp_path / "u16.csv"
    utf16.write_bytes(("a,b\n" + _rows(80, lambda i: f"{i},{i * 2}")).encode("utf-16"))
    cr = tmp_path / "cr.csv"
    cr.write_bytes(("a,b\r" + "\r".join(f"{i},{i * 2}" for i in range(80)) + "\r").encode())
    assert textcolumns.scan(utf16) is None and textcolumns.scan(cr) is None
    for path in (utf16, cr):
        frame = load_table(path).frame
        assert frame["b"].tolist() == [i * 2 for i in range(80)]


# Bytes that are not UTF-8, each placed in the data rows (with 64-byte scan chunks: at a chunk's start,
# its end, across two, after chunks of plain ASCII) and at the very end of the file.
NOT_UTF8 = {
    "latin1_e_acute": b"caf\xe9",
    "lone_continuation": b"x\x80y",
    "overlong_slash": b"a\xc0\xafb",
    "surrogate": b"a\xed\xa0\x80b",
    "past_unicode": b"a\xf4\x90\x80\x80b",
    "cut_short": b"a\xe6\x98b",
}


@pytest.mark.parametrize("typed", [False, True], ids=["text", "typed"])
@pytest.mark.parametrize("name", sorted(NOT_UTF8))
def test_bytes_that_are_not_utf8_never_reach_the_parse_unchecked(name, typed, tmp_path, monkeypatch):
    """The parse does not check UTF-8 itself (check_utf8=False): whatever it is handed must be UTF-8
    already, the file's own bytes proved so by `scan`, or a decoded text encoded again (`transcoded`).
    Whatever reaches it is decoded strictly here, at every place the bad bytes can sit."""
    monkeypatch.setattr(textcolumns, "CHUNK", 64)
    if typed:
        monkeypatch.setattr(textcolumns, "TYPED_MIN_BYTES", 0)
        monkeypatch.setattr(textcolumns, "BLOCK", 512)
    parsed: list[bytes] = []
    real = textcolumns._batches

    def checked(source, offset, *args):
        data = source.stream(offset).read()
        data.decode("utf-8")  # raises on a byte that is not UTF-8
        parsed.append(data)
        return real(source, offset, *args)

    monkeypatch.setattr(textcolumns, "_batches", checked)
    bad = NOT_UTF8[name]
    rows = [f"{i},item {i},{i * 3}".encode() for i in range(60)]
    for spot in range(0, 60, 7):  # a bad cell every few rows: chunk boundaries fall all over them
        rows[spot] = f"{spot},".encode() + bad + f",{spot * 3}".encode()
    for at_end in (b"\n", b""):
        path = tmp_path / f"{name}{len(at_end)}.csv"
        path.write_bytes(b"id,label,n\n" + b"\n".join(rows) + b"\n" + b"99,last," + bad + at_end)
        assert textcolumns.scan(path) is None
        try:
            table = load_table(path)
        except IngestError as exc:
            assert exc.category == "encoding_error"
            continue
        assert len(table.frame) == 61
    assert not parsed or all(data.decode("utf-8") for data in parsed)


def test_utf8_cut_by_the_scan_chunks_is_still_utf8(tmp_path, monkeypatch):
    """Characters of two to four bytes cut anywhere by the scan's chunks are read, not refused."""
    monkeypatch.setattr(textcolumns, "CHUNK", 64)
    rows = [f"{i},{'销售额€😀'[i % 3]}{'é' * (i % 5)},{i}" for i in range(200)]
    path = tmp_path / "wide.csv"
    path.write_text("id,label,n\n" + "\n".join(rows) + "\n", encoding="utf-8")
    assert textcolumns.scan(path) is not None
    assert load_table(path).frame["label"].tolist() == [r.split(",")[1] for r in rows]


def test_the_trim_check_sees_every_white_space_character():
    import pyarrow as pa

    spaces = [chr(c) for c in range(0x110000) if chr(c).isspace()]
    for space in spaces:
        for cell in (space + "a", "a" + space, "中" + space):
            assert textvalues._may_need_trim(pa.array(["x", None, cell], pa.large_string()).slice(1)), hex(ord(space))
    assert not textvalues._may_need_trim(pa.array(["abc", None, "中文", "x y"], pa.large_string()))


def test_the_number_cast_reads_what_the_plain_number_pattern_matches():
    """The typed pass takes a cast with finite values for PLAIN_NUMBER's match (textcolumns._plain_numbers):
    whatever else Arrow's cast reads must come out as a value that is not finite."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    cells = ["1", "+1", "-0", "1.", ".5", "+.5", "5.e3", "1E+05", "1e400", "007", " 1", "1 ", "1,5", "0x10", "1_000"]
    cells += ["١", "１", "1d", "1f", "e1", ".", "1e", "--1", "+-1", "1.2.3", "²", "\t1", "nan", "NaN", "-nan"]
    cells += ["nan(1)", "inf", "INF", "+inf", "-Infinity", "infinity", "1e-400", "0.", "00", "٣.5", "1e+", ".e1"]
    for cell in cells:
        try:
            value = pc.cast(pa.array([cell]), pa.float64())[0].as_py()
        except pa.ArrowInvalid:
            continue
        if np.isfinite(value):  # RE2, as the reader asks
            assert pc.match_substring_regex(pa.array([cell]), textvalues.PLAIN_NUMBER)[0].as_py(), cell


def test_iso_dates_proved_on_their_bytes_are_what_the_pattern_matches():
    import pyarrow as pa
    import pyarrow.compute as pc

    good = ["2024-01-05", "2024-01-05 07:30", "2024-01-05T07:30:15", "2024-01-05 07:30:15.123456"]
    bad = ["2024-01-0x", "2024/01/05", "2024-01-05Z", "2024-01-05 07:30Z", "2024-01-05_07:30", "２024-01-05"]
    bad += ["2024-01-05 07:30:15.", "2024-01-05 07:30:15,5", "2024-01-05T07:3", "20240-1-05", "2024-01-05T07:30:15Z"]
    for cell in good + bad:
        matched = pc.match_substring_regex(pa.array([cell]), textvalues.ISO_DATE)[0].as_py()  # RE2, as the reader asks
        assert textcolumns._iso_shaped(pa.array([cell, None, cell])) == matched, cell
    assert not textcolumns._iso_shaped(pa.array(["2024-01-05", "2024-01-05 07:30"]))  # widths differ: not proved


@pytest.mark.parametrize("good", ["12.5", "1,234.5", "-3"])
def test_a_block_reads_as_numbers_exactly_when_its_whole_column_would(good):
    """textcolumns._plain_numbers on a block (the cast, the commas taken out, or the regular
    expressions) against textvalues.plain_numbers on the same cells as one column, with one odd
    cell after a hundred good ones (past the block's first cells, which are asked first)."""
    import numpy as np
    import pyarrow as pa

    odd = ["7", "1,234", "12,34", "1,2345", "0,123", "01,234", "007", "-01", "0.5", "00", "1e400", "nan", "inf"]
    odd += [" 12 ", "1,234e5", "+1,234", "1,234.", ",123", "12,", "+.5", "5.", "1E+05", "¥12", "12%", None]
    for cell in odd:
        cells = [good] * 100 + [cell, good]
        block = pa.array(cells, pa.string())
        typed = textcolumns._plain_numbers(block)
        whole = textvalues.plain_numbers(pd.Series(cells, dtype=textcolumns.STR))
        assert (typed is None) == (whole is None), cell
        if typed is not None and whole is not None:
            np.testing.assert_array_equal(typed[0], whole[0])
            assert int(typed[1].sum() if typed[1] is not None else 0) == whole[1], cell
        for commas in (False, True):  # a decided column's block, cast as its last block was
            again = textcolumns._plain_numbers(block, probe=False, commas=commas)
            assert (again is None) == (typed is None), (cell, commas)
            if again is not None and typed is not None:
                np.testing.assert_array_equal(again[0], typed[0])
                assert (again[1] is None) == (typed[1] is None), (cell, commas)
                if again[1] is not None:
                    np.testing.assert_array_equal(again[1], typed[1])


def test_a_decided_number_column_s_blocks_are_cast_without_proving_their_bytes(tmp_path, monkeypatch):
    """Once a column reads as numbers, its next blocks are cast the way the last one was: the byte
    test that keeps a failing cast from formatting an error per cell runs on its first block only
    (and again where a cast does not read a block as before), with the same numbers."""
    rows = [f'{i}.5,"{i * 1000 + 7:,}"' for i in range(3000)]
    path = tmp_path / "n.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    source = textcolumns.scan(path)
    proved: list[int] = []
    real = textcolumns._number_bytes
    monkeypatch.setattr(textcolumns, "_number_bytes", lambda block: proved.append(len(block)) or real(block))
    monkeypatch.setattr(textcolumns, "BLOCK", 4096)
    series, readings = textcolumns.read_typed_rows(source, 0, 2, ",", typed={0, 1})
    assert len(proved) == 2  # one block of each column
    assert series[0].tolist() == [i + 0.5 for i in range(3000)]
    assert series[1].tolist() == [float(i * 1000 + 7) for i in range(3000)]
    assert readings[0].separated is None and int(readings[1].separated.sum()) == 2999  # "7" has none


@pytest.mark.parametrize("good", ["2024-01-05", "2024-01-05 07:30", "2024-01-05T07:30:15.25"])
def test_a_block_reads_as_dates_exactly_when_its_whole_column_would(good):
    import numpy as np
    import pyarrow as pa

    odd = ["2024-01-06", "2024-1-5", "2024-01-05T07", "2024-01-05Z", "2024-01-05 07:30:15+01:00", "1600-01-05"]
    odd += ["2262-01-05", "2261-12-31 23:59", " 2024-01-05 ", "2024-02-30", "2024-01-05 07:30:15.123456", None]
    for cell in odd:
        cells = [good] * 100 + [cell, good]
        typed = textcolumns._iso_dates(pa.array(cells, pa.string()))
        whole = textvalues.iso_datetimes(pd.Series(cells, dtype=textcolumns.STR))
        if cell == " 2024-01-05 ":  # the whole column is read untrimmed, a block trimmed: pad it alike
            whole = textvalues.iso_datetimes(pd.Series([c.strip() for c in cells], dtype=textcolumns.STR))
        assert (typed is None) == (whole is None), cell
        if typed is not None and whole is not None:
            np.testing.assert_array_equal(typed, whole[0])


def _reader(tmp_path, text: str):
    path = tmp_path / "ahead.csv"
    path.write_text(text, encoding="utf-8")
    source = textcolumns.scan(path)
    assert source is not None
    return textcolumns._batches(source, 0, ",", ["0", "1"], ["0", "1"])


def test_batches_parsed_ahead_in_a_thread_are_the_reader_s_batches_in_order(tmp_path, monkeypatch):
    """textcolumns._ahead: the reader's batches, parsed in a thread of their own while the caller
    types the one before, in order and all of them; a parse error is raised in the caller."""
    import threading

    monkeypatch.setattr(textcolumns, "BLOCK", 256)  # many small blocks
    text = "".join(f"{i},v{i}\n" for i in range(3000))
    plain = [b.column(0).to_pylist() for b in _reader(tmp_path, text)]
    threads = set()
    ahead = []
    for batch in textcolumns._ahead(_reader(tmp_path, text)):
        threads |= {t.name for t in threading.enumerate()}
        ahead.append(batch.column(0).to_pylist())
    assert len(plain) > 10 and ahead == plain
    assert "verity-csv-parse" in threads
    assert "verity-csv-parse" not in {t.name for t in threading.enumerate()}
    with pytest.raises(Exception, match="Expected 2 columns"):  # a ragged row, past the first blocks
        list(textcolumns._ahead(_reader(tmp_path, text + "1,2,3\n")))
    assert "verity-csv-parse" not in {t.name for t in threading.enumerate()}


def test_a_caller_that_stops_early_stops_the_parse_thread(tmp_path, monkeypatch):
    import threading

    monkeypatch.setattr(textcolumns, "BLOCK", 256)
    batches = textcolumns._ahead(_reader(tmp_path, "".join(f"{i},v{i}\n" for i in range(3000))))
    next(batches)
    batches.close()  # as when the caller raises: the generator's finally ends the thread
    assert "verity-csv-parse" not in {t.name for t in threading.enumerate()}


def test_without_a_thread_the_caller_parses_the_batches(tmp_path, monkeypatch):
    import threading

    monkeypatch.setattr(textcolumns, "BLOCK", 256)
    text = "".join(f"{i},v{i}\n" for i in range(3000))
    plain = [b.column(0).to_pylist() for b in _reader(tmp_path, text)]

    def refused(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refused)
    assert [b.column(0).to_pylist() for b in textcolumns._ahead(_reader(tmp_path, text))] == plain


def test_the_reading_child_hands_freed_arrow_pages_back_at_once(monkeypatch):
    """Pages kept after they were freed (any decay above 0) were handed back by jemalloc's
    background thread when the cores let it, so a read's peak depended on the machine's load (the
    1M-row CSV: 435-439 MB at decay 0 in every run, 439-504 MB at 100 ms, 551 MB in a whole
    `verity inspect` on a quiet machine): the reading child of a text file has them handed back as they
    are freed."""
    import pyarrow as pa

    from app.ingest import child

    decay: list[int] = []
    monkeypatch.setattr(pa, "set_memory_pool", lambda pool: None)  # this test process keeps its pool
    monkeypatch.setattr(pa, "jemalloc_set_decay_ms", decay.append)
    child.arrow_memory_returned_soon()
    child.arrow_memory_returned_soon(workbook=True)  # calamine's grid is its peak: kept 100 ms as before
    assert decay == [0, 100] and child.ARROW_DECAY_MS == 0


@pytest.mark.parametrize(("name", "kept"), [("sales.csv", 0), ("notes.TXT", 0), ("sales.xlsx", 100), ("old.XLS", 100)])
def test_a_reading_child_keeps_freed_pages_by_the_file_s_kind(name, kept, tmp_path, monkeypatch):
    """The child of a text file hands freed pages back at once; a workbook's keeps them 100 ms (its
    peak is calamine's grid either way, and handing its blocks back one by one cost system time)."""
    import pyarrow as pa

    from app.ingest import child

    decay: list[int] = []
    monkeypatch.setattr(pa, "set_memory_pool", lambda pool: None)  # this test process keeps its pool
    monkeypatch.setattr(pa, "jemalloc_set_decay_ms", decay.append)
    outcome = child._read_limited(
        "inspect", lambda *a, **k: "read", str(tmp_path / name), None, Settings(), tmp_path, {}
    )
    assert outcome == ("ok", "read") and decay == [kept]
