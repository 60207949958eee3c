"""Zip sizes are checked against what is inflated, not what the zip directory claims
(app/ingest/sniff.py), and a sheet's rows are counted only up to the limit (app/ingest/readers.py).
The hostile workbooks are written here, small on disk."""

from __future__ import annotations

import struct
import time
import zipfile
from pathlib import Path

import pytest

from app.config import Settings
from app.ingest.bounded import load_table_bounded
from app.ingest.errors import IngestError
from tests.test_web import new_workspace, upload

SHEET = "xl/worksheets/sheet1.xml"
NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def workbook(path: Path, rows: int, dimension: str | None = None, last_row: int | None = None) -> Path:
    """A minimal .xlsx with one sheet: a header and `rows` numbered rows (streamed into the zip),
    and a last row at index `last_row` when given."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as package:
        package.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/xl/workbook.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
            '<Override PartName="/xl/worksheets/sheet1.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>',
        )
        package.writestr(
            "_rels/.rels",
            '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="{REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        )
        package.writestr(
            "xl/workbook.xml",
            f'<?xml version="1.0"?><workbook xmlns="{NS}" xmlns:r="{REL}"><sheets>'
            '<sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>',
        )
        package.writestr(
            "xl/_rels/workbook.xml.rels",
            '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="{REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
        )
        with package.open(SHEET, "w") as part:
            dim = f'<dimension ref="{dimension}"/>' if dimension else ""
            part.write(f'<?xml version="1.0"?><worksheet xmlns="{NS}">{dim}<sheetData>'.encode())
            part.write(b'<row r="1"><c r="A1" t="inlineStr"><is><t>Amount</t></is></c></row>')
            for start in range(2, rows + 2, 10_000):
                part.write(
                    "".join(
                        f'<row r="{r}"><c r="A{r}"><v>{r}</v></c></row>'
                        for r in range(start, min(start + 10_000, rows + 2))
                    ).encode()
                )
            if last_row:
                part.write(f'<row r="{last_row}"><c r="A{last_row}"><v>1</v></c></row>'.encode())
            part.write(b"</sheetData></worksheet>")
    return path


def understate(path: Path, member: str, declared: int) -> Path:
    """Rewrite the zip directory (and the local header) so `member` claims to unpack to `declared` bytes."""
    data = bytearray(path.read_bytes())
    name = member.encode()
    position = 0
    while (position := data.find(b"PK\x01\x02", position)) != -1:  # central directory entries
        name_length = struct.unpack_from("<H", data, position + 28)[0]
        if bytes(data[position + 46 : position + 46 + name_length]) == name:
            struct.pack_into("<I", data, position + 24, declared)
            local = struct.unpack_from("<I", data, position + 42)[0]
            if not struct.unpack_from("<H", data, local + 6)[0] & 0x08:  # sizes in the local header too
                struct.pack_into("<I", data, local + 22, declared)
        position += 4
    path.write_bytes(bytes(data))
    return path


@pytest.fixture()
def settings(tmp_path) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path / "data", llm_model="builtin")


def test_a_part_that_unpacks_beyond_its_declared_size_is_refused(tmp_path, settings):
    honest = workbook(tmp_path / "honest.xlsx", 60_000)
    assert load_table_bounded(honest, settings=settings).frame.shape[0] == 60_000
    lying = understate(workbook(tmp_path / "lying.xlsx", 60_000), SHEET, 1024)
    with zipfile.ZipFile(lying) as package:
        assert package.getinfo(SHEET).file_size == 1024
    with pytest.raises(IngestError) as caught:
        load_table_bounded(lying, settings=settings)
    assert caught.value.category == "corrupt_file" and "declares" in caught.value.message


def test_an_upload_with_a_lying_zip_directory_is_refused(client, tmp_path):
    ws = new_workspace(client)
    lying = understate(workbook(tmp_path / "lying.xlsx", 60_000), SHEET, 1024)
    response = upload(client, ws, "lying.xlsx", lying.read_bytes())
    assert response.status_code == 400 and response.json()["error"]["category"] == "corrupt_file"


def test_a_sheet_whose_rows_go_past_the_limit_is_refused_before_it_is_read(tmp_path, settings):
    # Five real rows, the last one numbered 104,800,013: calamine would make a sheet that tall.
    path = workbook(tmp_path / "tall.xlsx", 30, last_row=104_800_013)
    started = time.monotonic()
    with pytest.raises(IngestError) as caught:
        load_table_bounded(path, settings=settings)
    assert caught.value.category == "too_large" and "104,800,013" in caught.value.message
    assert time.monotonic() - started < 20
