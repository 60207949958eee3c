"""One pass over a big worksheet (app.ingest.xlsxstream.SheetScan): the sniffer's size check
inflates every part anyway, and feeds each worksheet's bytes to the searches the readers need (a
row numbered past the limit, the merged ranges); the readers then take those answers instead of
inflating the sheet again. The answers must be what a pass of their own finds."""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from app.config import Settings
from app.ingest import sniff, xlsxstream
from app.ingest.errors import IngestError
from app.ingest.pipeline import inspect_file
from app.ingest.xlsxstream import ROW_SLACK, SheetScan, XlsxBook

NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
SHEET = "xl/worksheets/sheet1.xml"


def package(path: Path, rows: list[str], merges: Sequence[str] = (), prefix: str = "") -> Path:
    """A minimal .xlsx whose one sheet holds `rows` (row elements as written) and `merges`
    (mergeCell refs); `prefix`: a namespace prefix on every tag (x:row)."""
    p = f"{prefix}:" if prefix else ""
    xmlns = f'xmlns:{prefix}="{NS}"' if prefix else f'xmlns="{NS}"'
    merged = "".join(f'<{p}mergeCell ref="{ref}"/>' for ref in merges)
    merged = f'<{p}mergeCells count="{len(merges)}">{merged}</{p}mergeCells>' if merges else ""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(
            "_rels/.rels",
            f'<?xml version="1.0"?><Relationships xmlns="{PKG}">'
            f'<Relationship Id="rId1" Type="{REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        )
        z.writestr(
            "xl/workbook.xml",
            f'<?xml version="1.0"?><workbook xmlns="{NS}" xmlns:r="{REL}"><sheets>'
            '<sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>',
        )
        z.writestr(
            "xl/_rels/workbook.xml.rels",
            f'<?xml version="1.0"?><Relationships xmlns="{PKG}">'
            f'<Relationship Id="rId1" Type="{REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
        )
        z.writestr(
            SHEET,
            f'<?xml version="1.0"?><{p}worksheet {xmlns}><{p}sheetData>'
            + "".join(rows)
            + f"</{p}sheetData>{merged}</{p}worksheet>",
        )
    return path


def numbered_rows(n: int, prefix: str = "", last: int | None = None) -> list[str]:
    p = f"{prefix}:" if prefix else ""
    rows = [f'<{p}row r="1"><{p}c r="A1" t="inlineStr"><{p}is><{p}t>Region</{p}t></{p}is></{p}c></{p}row>']
    rows += [f'<{p}row r="{r}"><{p}c r="A{r}"><{p}v>{r}</{p}v></{p}c></{p}row>' for r in range(2, n + 2)]
    if last is not None:
        rows.append(f'<{p}row spans="1:1" r = "{last}"><{p}c r="A{last}"><{p}v>1</{p}v></{p}c></{p}row>')
    return rows


@pytest.fixture()
def settings(tmp_path) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path / "data", llm_model="builtin")


def own_pass(path: Path, limit: int) -> tuple[int | None, list]:
    """row_beyond and merges as a reader finds them with no scan kept: its own passes."""
    xlsxstream._scans.clear()
    with zipfile.ZipFile(path) as zf:
        book = XlsxBook(zf)
        return book.row_beyond(book.sheets[0], limit), book.merges(book.sheets[0])


def kept_pass(path: Path, settings: Settings) -> tuple[int | None, list]:
    """The same answers after the sniffer has checked the package (the scan it kept)."""
    xlsxstream._scans.clear()
    sniff._verified.clear()
    sniff.sniff_format(path, settings)
    with zipfile.ZipFile(path) as zf:
        assert xlsxstream.scanned(zf, SHEET) is not None, "the sniffer kept no scan of the sheet"
        book = XlsxBook(zf)
        return book.row_beyond(book.sheets[0], settings.max_rows + ROW_SLACK), book.merges(book.sheets[0])


@pytest.mark.parametrize("prefix", ["", "x"])
@pytest.mark.parametrize("last", [None, 104_800_013])
def test_the_sniffers_scan_answers_as_the_readers_own_passes(tmp_path, settings, prefix, last):
    path = package(tmp_path / "book.xlsx", numbered_rows(3000, prefix, last), ["A1:C1", "B5:B9"], prefix)
    limit = settings.max_rows + ROW_SLACK
    kept = kept_pass(path, settings)
    assert kept == own_pass(path, limit)
    assert kept == (last, [(0, 0, 0, 2), (4, 1, 8, 1)])


def test_more_row_tags_than_the_limit_are_counted_in_the_scan(tmp_path):
    small = Settings(_env_file=None, max_rows=1000)
    path = package(tmp_path / "long.xlsx", numbered_rows(2500))
    kept = kept_pass(path, small)
    assert kept == own_pass(path, small.max_rows + ROW_SLACK)
    assert kept[0] is not None and kept[0] > small.max_rows + ROW_SLACK


def test_a_big_sheet_read_ahead_in_a_thread_scans_the_same(tmp_path, settings, monkeypatch):
    path = package(tmp_path / "book.xlsx", numbered_rows(60_000, last=104_800_013), ["A1:B1"])
    serial = kept_pass(path, settings)
    monkeypatch.setattr(sniff, "THREADED_SCAN_BYTES", 0)
    assert kept_pass(path, settings) == serial == (104_800_013, [(0, 0, 0, 1)])


def test_a_scan_fed_only_part_of_a_sheet_is_not_kept():
    scan = SheetScan(row_limit=10, merge_limit=10)
    scan.feed(b'<row r="1"><c r="A1"><v>1</v></c></row>')
    scan.feed_failed()
    assert not scan.whole


def test_the_refusal_and_the_merged_cells_come_from_the_kept_scan(tmp_path, settings, monkeypatch):
    """The pipeline's answers when the readers may not inflate the sheet themselves."""

    def no_second_pass(self, sheet, scan):
        raise AssertionError("the sheet was inflated again")

    monkeypatch.setattr(XlsxBook, "_scan", no_second_pass)
    tall = package(tmp_path / "tall.xlsx", numbered_rows(3000, last=104_800_013))
    with pytest.raises(IngestError) as caught:
        inspect_file(tall, settings=settings)
    assert caught.value.category == "too_large" and "104,800,013" in caught.value.message

    # Region merged down rows 5 to 7 of the sheet: its two empty cells take the merged value.
    rows = [
        '<row r="1"><c r="A1" t="inlineStr"><is><t>Region</t></is></c><c r="B1" t="inlineStr"><is><t>Amount</t></is></c></row>'
    ]
    for r in range(2, 3002):
        region = "" if r in (6, 7) else f'<c r="A{r}" t="inlineStr"><is><t>{"East" if r % 2 else "West"}</t></is></c>'
        rows.append(f'<row r="{r}">{region}<c r="B{r}"><v>{r}</v></c></row>')
    merged = package(tmp_path / "merged.xlsx", rows, ["A5:A7"])
    info = inspect_file(merged, settings=settings)
    filled = [e for e in info["cleaning"] if e["action"] == "filled merged cells"]
    assert filled == [
        {"column": "Region", "action": "filled merged cells", "count": 2, "message": filled[0]["message"]}
    ]
