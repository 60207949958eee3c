"""A small streaming reader for the parts of an .xlsx/.xlsm package that calamine does not give cheaply.

calamine (through fastexcel) parses a whole sheet on every `load_sheet` call, even with `n_rows`,
so a 500k-row workbook costs seconds before the first row is known. This module reads only what is
needed, straight from the zip:

- the sheet list with each sheet's visibility (`state="hidden"`), the 1904 date flag and which cell
  styles are dates (workbook.xml, styles.xml: small parts);
- the first N rows of a sheet, by streaming the sheet XML with an incremental parser and stopping
  there; the shared strings they use are streamed only up to the highest index needed;
- merged ranges (`<mergeCell ref="A1:C1"/>`, written after the cell data), by streaming the
  decompressed sheet through zlib in 1 MB chunks and searching bytes, without building any XML tree.

Formulas are read as their cached values (`<v>`), the values Excel last computed. Anything this
module cannot understand raises, and the caller falls back to fastexcel.
"""

from __future__ import annotations

import os
import posixpath
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import cast
from xml.etree import ElementTree as ET

_CELL_REF = re.compile(r"^([A-Z]{1,3})(\d+)$")
_MERGE = re.compile(rb'<(?:\w+:)?mergeCell\s+ref="([A-Z]{1,3})(\d+)(?::([A-Z]{1,3})(\d+))?"')
_ROW_TAG = re.compile(rb"<[A-Za-z_][\w.-]*:row(?=[\s/>])")
# What a chunk must hold for the slower searches to be worth it (a regular expression's literal
# search skips through a megabyte in half the time `in` takes).
_MAYBE_PREFIXED_ROW = re.compile(rb":row")
_MAYBE_MERGE = re.compile(rb"mergeCell")
_DIMENSION = re.compile(rb'<(?:\w+:)?dimension\s+ref="([A-Z]{1,3})(\d+)(?::([A-Z]{1,3})(\d+))?"')
# Built-in number formats that are dates or times (ECMA-376 18.8.30, plus the CJK locale ids).
_DATE_FMT_IDS = set(range(14, 23)) | set(range(27, 37)) | set(range(45, 48)) | set(range(50, 59)) | set(range(71, 82))
CHUNK = 1 << 20
MERGE_LIMIT = 100_000  # merged ranges read from one sheet
# Rows a sheet may have beyond settings.max_rows before it is refused (readers._cells_limit).
ROW_SLACK = 1000


def local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _end_parser() -> ET.XMLPullParser[ET.Element]:
    return ET.XMLPullParser(events=("end",))


def _finished(parser: ET.XMLPullParser[ET.Element]) -> Iterator[ET.Element]:
    """The elements an _end_parser() has finished since the last call: it reports only "end"
    events, each ("end", element)."""
    for event in parser.read_events():
        yield cast("tuple[str, ET.Element]", event)[1]


def col_index(letters: str) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + (ord(ch) - 64)
    return n - 1


def _is_date_format(code: str) -> bool:
    code = re.sub(r'"[^"]*"|\\.|_.|\*.', "", code)
    code = re.sub(r"\[(?!h\]|hh\]|m\]|mm\]|s\]|ss\])[^\]]*\]", "", code, flags=re.I)
    return bool(re.search(r"[ydhs]|m", code.lower())) and "general" not in code.lower()


@dataclass
class SheetEntry:
    name: str
    part: str
    hidden: bool
    xml_size: int


@dataclass
class HeadRows:
    rows: dict[int, dict[int, object]]  # 0-based sheet row -> {0-based column: value}
    complete: bool  # True when the sheet has no rows beyond those read
    dimension: tuple[int, int, int, int] | None = None  # (r0, c0, r1, c1), 0-based inclusive
    uses_shared: set[int] = field(default_factory=set)


class XlsxBook:
    def __init__(self, zf: zipfile.ZipFile) -> None:
        self.zf = zf
        self.names = {n.replace("\\", "/").lstrip("/"): n for n in zf.namelist()}
        self.workbook_part = self._workbook_part()
        root = ET.fromstring(self._read(self.workbook_part))
        rels = self._rels(self.workbook_part)
        self.date1904 = False
        self.sheets: list[SheetEntry] = []
        for el in root.iter():
            tag = local(el.tag)
            if tag == "workbookPr":
                self.date1904 = el.get("date1904", "false").lower() in ("1", "true")
            elif tag == "sheet":
                rid = next((v for k, v in el.attrib.items() if local(k) == "id"), None)
                part = rels.get(rid or "")
                if part and part in self.names:
                    state = (el.get("state") or "visible").lower()
                    size = self.zf.getinfo(self.names[part]).file_size
                    self.sheets.append(SheetEntry(el.get("name", ""), part, state != "visible", size))
        self.date_styles = self._date_styles(rels)
        self._shared: list[str] = []
        self._shared_iter: Iterator[str] | None = None
        self._shared_part = next((p for p in rels.values() if p.lower().endswith("sharedstrings.xml")), None)

    # --- package plumbing --------------------------------------------------------------------

    def _read(self, part: str) -> bytes:
        return self.zf.read(self.names[part])

    def _workbook_part(self) -> str:
        if "_rels/.rels" in self.names:
            for el in ET.fromstring(self._read("_rels/.rels")).iter():
                if local(el.tag) == "Relationship" and el.get("Type", "").endswith("/officeDocument"):
                    target = el.get("Target", "").lstrip("/")
                    if target in self.names:
                        return target
        for candidate in ("xl/workbook.xml", "workbook.xml"):
            if candidate in self.names:
                return candidate
        raise ValueError("no workbook part")

    def _rels(self, part: str) -> dict[str, str]:
        base = posixpath.dirname(part)
        rels_part = posixpath.join(base, "_rels", posixpath.basename(part) + ".rels")
        out: dict[str, str] = {}
        if rels_part not in self.names:
            return out
        for el in ET.fromstring(self._read(rels_part)).iter():
            if local(el.tag) != "Relationship":
                continue
            target = el.get("Target", "")
            path = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(base, target))
            out[el.get("Id", "")] = path
        return out

    def _date_styles(self, rels: dict[str, str]) -> set[int]:
        part = next((p for p in rels.values() if p.lower().endswith("styles.xml")), None)
        if not part or part not in self.names:
            return set()
        root = ET.fromstring(self._read(part))
        custom = {}
        xfs: list[int] = []
        for el in root.iter():
            tag = local(el.tag)
            if tag == "numFmt":
                custom[int(el.get("numFmtId", "-1"))] = el.get("formatCode", "")
            elif tag == "cellXfs":
                xfs = [int(x.get("numFmtId", "0")) for x in el if local(x.tag) == "xf"]
        dates = set()
        for i, fmt_id in enumerate(xfs):
            if fmt_id in custom:
                if _is_date_format(custom[fmt_id]):
                    dates.add(i)
            elif fmt_id in _DATE_FMT_IDS:
                dates.add(i)
        return dates

    # --- cells -------------------------------------------------------------------------------

    def serial_to_datetime(self, serial: float) -> datetime:
        if self.date1904:
            base = datetime(1904, 1, 1)
        else:
            base = datetime(1899, 12, 31) if serial < 60 else datetime(1899, 12, 30)
        return base + timedelta(microseconds=round(serial * 86_400_000_000 / 1000) * 1000)

    def head(self, sheet: SheetEntry, n_rows: int) -> HeadRows:
        """The first n_rows sheet rows (cached formula values, shared strings resolved)."""
        parser = _end_parser()
        rows: dict[int, dict[int, object]] = {}
        dimension = None
        next_row, next_col = 0, 0
        complete = True
        cells: dict[int, object] = {}
        stop = False
        with self.zf.open(self.names[sheet.part]) as fh:
            first = True
            while not stop:
                chunk = fh.read(64 * 1024)
                if not chunk:
                    break
                if first:
                    m = _DIMENSION.search(chunk)
                    if m:
                        c0, r0 = col_index(m.group(1).decode()), int(m.group(2)) - 1
                        c1 = col_index(m.group(3).decode()) if m.group(3) else c0
                        r1 = int(m.group(4)) - 1 if m.group(4) else r0
                        dimension = (r0, c0, r1, c1)
                    first = False
                parser.feed(chunk)
                for el in _finished(parser):
                    tag = local(el.tag)
                    if tag == "c":
                        ref = el.get("r")
                        ref_match = _CELL_REF.match(ref) if ref else None
                        col = col_index(ref_match.group(1)) if ref_match else next_col
                        next_col = col + 1
                        value = self._cell_value(el)
                        if value is not None and value != "":
                            cells[col] = value
                        el.clear()
                    elif tag == "row":
                        r_attr = el.get("r")
                        row = int(r_attr) - 1 if r_attr and r_attr.isdigit() else next_row
                        next_row, next_col = row + 1, 0
                        if row >= n_rows:
                            complete = False
                            stop = True
                            break
                        if cells:
                            rows[row] = cells
                        cells = {}
                        el.clear()
                    elif tag == "sheetData":
                        stop = True
                        break
        self._resolve_shared(rows)
        return HeadRows(rows, complete, dimension)

    def _cell_value(self, el):
        t = el.get("t", "n")
        v = None
        inline = None
        for child in el:
            tag = local(child.tag)
            if tag == "v":
                v = child.text
            elif tag == "is":
                inline = _rich_text(child)
        if t == "inlineStr":
            return inline if inline is not None else v
        if v is None:
            return None
        if t == "s":
            return _Shared(int(v))
        if t in ("str", "d"):
            return v
        if t == "b":
            return v.strip() in ("1", "true")
        if t == "e":
            return None
        try:
            number = float(v)
        except ValueError:
            return v
        style = el.get("s")
        if style is not None and style.isdigit() and int(style) in self.date_styles:
            try:
                return self.serial_to_datetime(number)
            except (OverflowError, ValueError):
                return number
        return number

    def _resolve_shared(self, rows: dict[int, dict[int, object]]) -> None:
        needed = [v.index for cells in rows.values() for v in cells.values() if isinstance(v, _Shared)]
        if not needed:
            return
        strings = self.shared_strings(max(needed))
        for cells in rows.values():
            for col, v in list(cells.items()):
                if isinstance(v, _Shared):
                    text = strings[v.index] if v.index < len(strings) else None
                    if text is None or text == "":
                        del cells[col]
                    else:
                        cells[col] = text

    def shared_strings(self, up_to: int) -> list[str]:
        """Shared strings 0..up_to, streamed: a workbook with millions of strings is not read whole."""
        if self._shared_part is None or self._shared_part not in self.names:
            return self._shared
        if self._shared_iter is None:
            self._shared_iter = self._iter_shared(self._shared_part)
        for text in self._shared_iter:
            self._shared.append(text)
            if len(self._shared) > up_to:
                break
        return self._shared

    def _iter_shared(self, part: str) -> Iterator[str]:
        parser = _end_parser()
        with self.zf.open(self.names[part]) as fh:
            while True:
                chunk = fh.read(64 * 1024)
                if not chunk:
                    break
                parser.feed(chunk)
                for el in _finished(parser):
                    if local(el.tag) == "si":
                        yield _rich_text(el)
                        el.clear()

    def row_beyond(self, sheet: SheetEntry, limit: int) -> int | None:
        """A row number (1-based) past `limit` that the sheet uses, or None when there is none: a
        byte search of the decompressed sheet (C speed, constant memory) that stops at the first
        row numbered past the limit (`<row r="104800013">`: a reader makes the sheet that tall) or
        when there are more row tags than the limit. Unnumbered rows after a numbered one can take
        a sheet past the limit by at most their count, which the full read still refuses. The
        answer of the sniffer's pass over the package (`scanned`) when it had this limit."""
        done = scanned(self.zf, self.names[sheet.part])
        if done is not None and done.row_limit == limit:
            return done.beyond
        scan = SheetScan(row_limit=limit)
        self._scan(sheet, scan)
        return scan.beyond

    def merges(self, sheet: SheetEntry, limit: int = MERGE_LIMIT) -> list[tuple[int, int, int, int]]:
        """Merged ranges as 0-based inclusive (r0, c0, r1, c1), found by a byte search of the
        decompressed sheet (zlib speed, constant memory); no XML tree is built. The sniffer's pass
        over the package found them already when it read this sheet (`scanned`)."""
        done = scanned(self.zf, self.names[sheet.part])
        if done is not None and done.merge_limit == limit:
            return done.merges()
        scan = SheetScan(merge_limit=limit)
        self._scan(sheet, scan)
        return scan.merges()

    def _scan(self, sheet: SheetEntry, scan: SheetScan) -> None:
        with self.zf.open(self.names[sheet.part]) as fh:
            if hasattr(fh, "_expected_crc"):
                fh._expected_crc = None  # a search, not an extraction: skip the CRC pass (~25% of the time)
            while not scan.satisfied() and (chunk := fh.read(CHUNK)):
                scan.feed(chunk)


class SheetScan:
    """What a byte search of a worksheet part finds, fed its decompressed bytes chunk by chunk
    (`CHUNK` long, the last one shorter), in one pass: the first row numbered past `row_limit`
    (or the row count, once there are more row tags than that) and the merged ranges (at most
    `merge_limit`). The sniffer (app.ingest.sniff) inflates every part of a package once anyway, to
    check its size; it feeds each worksheet to one of these on the way, so that neither search
    inflates the sheet again (at a million rows each pass costs seconds)."""

    def __init__(self, row_limit: int | None = None, merge_limit: int | None = None) -> None:
        self.row_limit = row_limit
        self.merge_limit = merge_limit
        self.beyond: int | None = None
        self._rows = 0
        self._row_tail = b""
        self._long_row = _long_row_numbers(row_limit) if row_limit is not None else None
        self._found: list[tuple[int, int, int, int]] = []
        self._merge_tail = b""
        self.whole = True  # False once the part could not be read to its end: such a scan is not kept

    def feed_failed(self) -> None:
        """The part could not be read to its end: what was fed is not the whole sheet."""
        self.whole = False

    def satisfied(self) -> bool:
        """Nothing more to look for (a row past the limit found, enough merged ranges)."""
        rows_done = self.row_limit is None or self.beyond is not None
        merges_done = self.merge_limit is None or len(self._found) >= self.merge_limit
        return rows_done and merges_done

    def feed(self, chunk: bytes) -> None:
        if self.row_limit is not None and self.beyond is None:
            self._feed_rows(chunk)
        if self.merge_limit is not None and len(self._found) < self.merge_limit:
            self._feed_merges(chunk)

    def _feed_rows(self, chunk: bytes) -> None:
        assert self.row_limit is not None and self._long_row is not None
        data = self._row_tail + chunk
        cut = data.rfind(b"<")  # a tag cut by the chunk boundary is searched next time, whole
        cut = len(data) if cut < 0 or len(data) - cut > 4096 else cut
        # A row tag whose r is a number above the limit (cell references, r="A5000001", start
        # with letters). One findall over the row tags counts them and gives each one's number
        # past the limit, if it has one (b"" if not); tags with a namespace prefix (rare), where
        # the chunk has one, are searched and counted on their own.
        every, plain, prefixed = self._long_row
        if _MAYBE_PREFIXED_ROW.search(data):
            found = [m for m in (plain.search(data, 0, cut), prefixed.search(data, 0, cut)) if m]
            if found:
                self.beyond = int(min(found, key=lambda m: m.start(1)).group(1))
                return
            self._rows += data.count(b"<row", 0, cut)  # <rowBreaks> too: a few more, on the safe side
            self._rows += sum(1 for _ in _ROW_TAG.finditer(data, 0, cut))
        else:
            tags = every.findall(data, 0, cut)  # each <row, <rowBreaks too: a few more, on the safe side
            number = next((value for value in tags if value), None) if any(tags) else None
            if number is not None:
                self.beyond = int(number)
                return
            self._rows += len(tags)
        if self._rows > self.row_limit:
            self.beyond = self._rows
        self._row_tail = data[cut:]

    def _feed_merges(self, chunk: bytes) -> None:
        data = self._merge_tail + chunk
        if _MAYBE_MERGE.search(data):
            for m in _MERGE.finditer(data):
                c0, r0 = col_index(m.group(1).decode()), int(m.group(2)) - 1
                c1 = col_index(m.group(3).decode()) if m.group(3) else c0
                r1 = int(m.group(4)) - 1 if m.group(4) else r0
                self._found.append((r0, c0, r1, c1))
        self._merge_tail = data[-200:]  # a tag cut by the chunk boundary is matched next time (deduplicated)

    def merges(self) -> list[tuple[int, int, int, int]]:
        return list(dict.fromkeys(self._found))[: self.merge_limit]


def package_key(package: zipfile.ZipFile) -> tuple[str, int, int] | None:
    """(path, size, modification time) of a package read from a file, None for one in memory: what
    identifies it across the readers of one process (the early parse and the pipeline both sniff
    it, each opening it anew)."""
    name = package.filename
    if not name:
        return None
    try:
        stat = os.stat(name)
    except OSError:
        return None
    return (os.path.realpath(name), stat.st_size, stat.st_mtime_ns)


# The scans of the last few packages sniffed: (package key, part's name in the zip) -> its SheetScan.
_scans: dict[tuple[tuple[str, int, int], str], SheetScan] = {}
_SCANNED_PACKAGES = 4


def remember_scans(key: tuple[str, int, int], scans: dict[str, SheetScan]) -> None:
    """Keep the complete scans of a package's worksheets (every byte fed) for its readers."""
    packages = list(dict.fromkeys(k for k, _ in _scans))
    for old in packages[: max(0, len(packages) - _SCANNED_PACKAGES + 1)]:
        for entry in [e for e in _scans if e[0] == old]:
            del _scans[entry]
    for part, scan in scans.items():
        _scans[(key, part)] = scan


def scanned(package: zipfile.ZipFile, part: str) -> SheetScan | None:
    """The sniffer's complete scan of this part of this package, if it made one."""
    key = package_key(package)
    return _scans.get((key, part)) if key is not None else None


def is_worksheet_part(name: str) -> bool:
    """Whether a package part is likely a worksheet (xl/worksheets/sheet1.xml; minimal writers
    put sheet1.xml elsewhere): the parts the sniffer scans. A miss costs only a second pass."""
    base = posixpath.basename(name.replace("\\", "/")).lower()
    return base.endswith(".xml") and "sheet" in base and "shared" not in base


def _long_row_numbers(limit: int) -> tuple[re.Pattern[bytes], re.Pattern[bytes], re.Pattern[bytes]]:
    """Every `<row` with its r attribute's number when that is above `limit` (a findall gives b""
    for the others); row start tags whose r is a number above `limit`, without and with a
    namespace prefix. Anchored on the tag's name, a search skips the cells' many attributes at C
    speed."""
    value = rb"\br\s*=\s*[\"'](" + _numbers_above(limit) + rb")[\"']"
    return (
        re.compile(rb"<row(?:\s[^<>]*?" + value + rb")?"),
        re.compile(rb"<row\s[^<>]*?" + value),
        re.compile(rb"<[A-Za-z_][\w.-]*:row\s[^<>]*?" + value),
    )


def _numbers_above(limit: int) -> bytes:
    """A regular expression for the decimal numbers greater than `limit` (leading zeros aside,
    which only make a number longer): longer ones, and those of its length that are greater at
    their first differing digit."""
    digits = str(limit)
    options = [rb"\d{%d,}" % (len(digits) + 1)]
    for i, digit in enumerate(digits):
        if digit != "9":
            rest = len(digits) - i - 1
            options.append(digits[:i].encode() + b"[%d-9]" % (int(digit) + 1) + (rb"\d{%d}" % rest if rest else b""))
    return b"|".join(options)


def head_cells(rows: dict[int, dict[int, object]], head_rows: int) -> list[list[object]]:
    """The head as a full grid of rows (row i = sheet row i, column j = sheet column j), text
    trimmed and blank text as None; [] for an empty sheet."""
    if not rows:
        return []
    height = min(head_rows, max(rows) + 1)
    width = max(max(cells) for cells in rows.values()) + 1
    data: list[list[object]] = [[None] * width for _ in range(height)]
    for r, cells in rows.items():
        if r < height:
            for c, v in cells.items():
                if isinstance(v, str):
                    v = v.strip() or None
                data[r][c] = v
    return data


class _Shared:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def _rich_text(el) -> str:
    """Text of an <si>/<is> element: plain <t> or rich-text runs <r><t>; phonetic <rPh> skipped."""
    parts = []
    for child in el:
        tag = local(child.tag)
        if tag == "t":
            parts.append(child.text or "")
        elif tag == "r":
            parts.extend(x.text or "" for x in child if local(x.tag) == "t")
    return "".join(parts)
