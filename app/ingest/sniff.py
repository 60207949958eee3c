"""What a file really is, from its first bytes and its zip directory, before any reader opens it.

Names the format (magic bytes first, the extension only breaking ties), refuses what is not a
spreadsheet with a message that says what it is, and refuses zip bombs from the central directory.
Standard library only: the CLI's early parse (app.ingest.early_parse) sniffs a file before pandas
is imported.
"""

from __future__ import annotations

import copy
import queue
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from app.ingest.errors import IngestError
from app.ingest.xlsxstream import MERGE_LIMIT, ROW_SLACK, SheetScan, is_worksheet_part, package_key, remember_scans

if TYPE_CHECKING:
    from app.config import Settings

EXCEL_EXTS = {".xlsx", ".xlsm", ".xlsb", ".xls", ".ods"}
TEXT_EXTS = {".csv", ".tsv", ".txt"}
SUPPORTED = "Excel (.xlsx, .xlsm, .xlsb, .xls), OpenDocument (.ods) or text (.csv, .tsv, .txt)"
SUPPORTED_ZH = "Excel（.xlsx、.xlsm、.xlsb、.xls）、OpenDocument（.ods）或文本（.csv、.tsv、.txt）"

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ZIP_MAGIC = b"PK\x03\x04"
# Files people rename to .xlsx by mistake: say what they really are.
FOREIGN_MAGIC = {  # magic -> (English, Chinese)
    b"\x89PNG": ("a PNG image", "一张 PNG 图片"),
    b"\xff\xd8\xff": ("a JPEG image", "一张 JPEG 图片"),
    b"GIF8": ("a GIF image", "一张 GIF 图片"),
    b"%PDF": ("a PDF document", "一份 PDF 文档"),
    b"\x1f\x8b": ("a gzip archive", "一个 gzip 压缩包"),
    b"Rar!": ("a RAR archive", "一个 RAR 压缩包"),
    b"7z\xbc\xaf": ("a 7-Zip archive", "一个 7-Zip 压缩包"),
}

# Parts smaller than this are never refused for their ratio (tiny repetitive XML compresses well).
RATIO_FLOOR_BYTES = 8 * 1024 * 1024
# The parse cost of a suspicious part, in XML tags: a cell with a value is <c><v>..</v></c>.
ELEMENTS_PER_CELL = 4


# --- format sniffing ------------------------------------------------------------------------


def sniff_format(path: Path, settings: Settings | None = None) -> str:
    """Return the real format key from magic bytes, the extension only breaking ties."""
    ext = path.suffix.lower()
    if ext not in EXCEL_EXTS | TEXT_EXTS:
        raise IngestError(
            "unsupported_format",
            f"Verity cannot read '{ext or 'files without an extension'}' files.",
            f"Save the data as {SUPPORTED}.",
            f"Verity 不能读取 {ext} 文件。" if ext else "Verity 不能读取没有扩展名的文件。",
            f"请把数据另存为 {SUPPORTED_ZH}。",
        )
    with path.open("rb") as fh:
        head = fh.read(8)
    if not head:
        raise IngestError(
            "empty_file",
            "The file is empty.",
            "Check that the upload finished.",
            "文件是空的。",
            "请确认文件已经完整上传。",
        )
    for magic, (what, what_zh) in FOREIGN_MAGIC.items():
        if head.startswith(magic):
            raise IngestError(
                "unsupported_format",
                f"This file is {what}, not a spreadsheet, although its name ends in '{ext}'.",
                f"Upload the original spreadsheet as {SUPPORTED}.",
                f"文件名以 {ext} 结尾，但它其实是{what_zh}，不是表格。",
                f"请上传原始表格，格式为 {SUPPORTED_ZH}。",
            )
    if head.startswith(OLE_MAGIC):
        return _sniff_ole(path, ext)
    if head.startswith(ZIP_MAGIC):
        return _sniff_zip(path, ext, settings)
    if ext in EXCEL_EXTS and not _looks_like_text(path):
        raise IngestError(
            "corrupt_file",
            f"The file ends in '{ext}' but its contents are not a spreadsheet Verity recognises.",
            "Open it in Excel or LibreOffice and save it again.",
            f"文件名以 {ext} 结尾，但里面的内容不是 Verity 能识别的表格。",
            "请用 Excel 或 WPS 打开，再重新保存一份。",
        )
    # Text saved with an Excel extension (common with exported reports) is still read as text.
    return ext.lstrip(".") if ext in TEXT_EXTS else "csv"


def _sniff_ole(path: Path, ext: str) -> str:
    # Office encrypts xlsx/xlsb by wrapping them in an OLE container with these streams; the
    # directory can sit anywhere in the file, so search all of it (size is capped by then).
    data = path.read_bytes()
    if any(name.encode("utf-16-le") in data for name in ("EncryptedPackage", "EncryptionInfo")):
        raise encrypted()
    return "xls"  # a legacy workbook, whatever its extension says


def _sniff_zip(path: Path, ext: str, settings: Settings | None = None) -> str:
    try:
        with zipfile.ZipFile(path) as zf:
            names = {n.replace("\\", "/").lstrip("/") for n in zf.namelist()}
            if settings is not None:
                check_zip_limits(zf, settings)
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError) as exc:
        raise IngestError(
            "corrupt_file",
            "The file is damaged: it could not be opened as a workbook.",
            "Open it in Excel or LibreOffice and save it again.",
            "文件已损坏，无法作为工作簿打开。",
            "请用 Excel 或 WPS 打开，再重新保存一份。",
        ) from exc
    if "xl/workbook.bin" in names:
        return "xlsb"
    if "content.xml" in names and "mimetype" in names:
        return "ods"
    # Any Office Open XML package; the workbook part may sit outside xl/ (minimal writers do that).
    if "[Content_Types].xml" in names or any(n.startswith("xl/") for n in names):
        return "xlsm" if ext == ".xlsm" else "xlsx"
    raise IngestError(
        "unsupported_format",
        "This file is a zip archive, not a spreadsheet.",
        f"Unzip it and upload the spreadsheet inside ({SUPPORTED}).",
        "这是一个 zip 压缩包，不是表格。",
        f"请先解压，再上传里面的表格（{SUPPORTED_ZH}）。",
    )


def check_zip_limits(package: zipfile.ZipFile | list[zipfile.ZipInfo], settings: Settings) -> None:
    """Zip bombs: the central directory says how big every part becomes once decompressed, so a
    workbook that unpacks beyond `max_uncompressed_mb` is refused before any reader inflates a byte
    of it. A high compression ratio alone is no proof: text cells of 32k repeated characters pack
    several hundred times and are genuine. A part that packs suspiciously well (over 8 MB, ratio
    above `max_compression_ratio`) is inflated once, in a stream, and its parse cost counted: more
    XML elements than four per allowed cell (`max_cells`) is refused; fewer is read as usual, by a
    reader that has its own time and memory limits (app.ingest.bounded)."""
    infos = package.infolist() if isinstance(package, zipfile.ZipFile) else list(package)
    total = sum(max(0, i.file_size) for i in infos)
    if total > settings.max_uncompressed_mb * 1024 * 1024:
        raise IngestError(
            "too_large",
            f"The workbook unpacks to {total / 1048576:,.0f} MB; the limit is {settings.max_uncompressed_mb} MB.",
            "Delete unused sheets, rows and columns, or split the workbook.",
            f"这个工作簿解压后有 {total / 1048576:,.0f} MB，超过了 {settings.max_uncompressed_mb} MB 的上限。",
            "请删掉用不到的工作表、行和列，或把工作簿拆开。",
        )
    if len(infos) > 10_000:
        raise IngestError(
            "too_large",
            f"The workbook holds {len(infos):,} parts.",
            "Save it again from Excel.",
            f"这个工作簿内部由 {len(infos):,} 个部件组成，数量太多了。",
            "请用 Excel 重新保存一份。",
        )
    if isinstance(package, zipfile.ZipFile):
        _check_inflated_sizes(package, infos, settings.max_rows + ROW_SLACK)
    for info in infos:
        ratio = info.file_size / max(1, info.compress_size)
        if info.file_size <= RATIO_FLOOR_BYTES or ratio <= settings.max_compression_ratio:
            continue
        limit = ELEMENTS_PER_CELL * settings.max_cells
        if not isinstance(package, zipfile.ZipFile):  # only the directory: the ratio is all there is
            elements = limit + 1
        else:
            elements = _xml_elements(package, info, limit)
        if elements > limit:
            raise IngestError(
                "too_large",
                f"Part '{info.filename}' of the workbook expands {ratio:,.0f} times when unpacked, into more "
                f"than {limit:,} XML elements (the limit is {ELEMENTS_PER_CELL} per cell of {settings.max_cells:,} "
                "cells); files like this are used to exhaust memory.",
                "If the file is genuine, open it in Excel, delete unused rows and columns, and save again.",
                f"工作簿中的“{info.filename}”解压后膨胀了 {ratio:,.0f} 倍，超过 {limit:,} 个 XML 元素"
                f"（上限是 {settings.max_cells:,} 个单元格、每格 {ELEMENTS_PER_CELL} 个）。这类文件常被用来耗尽内存。",
                "如果文件来源可靠，请用 Excel 打开，删掉用不到的行和列后重新保存。",
            )


def _check_inflated_sizes(package: zipfile.ZipFile, infos: list[zipfile.ZipInfo], row_limit: int) -> None:
    """Every part unpacks to exactly the size the directory declares. The limits above trust the
    directory, and so does the workbook reader's estimate of a sheet (xlsxstream), but calamine
    inflates what is there: a part that says 1 KB and holds 250 MB would pass them all. Each part
    is inflated once, as a stream, and at most one byte past its declared size (so a lie costs no
    more than the truth would, and the truth is already within `max_uncompressed_mb`). On the way
    each worksheet's bytes go through the workbook reader's searches (xlsxstream.SheetScan: a row
    numbered past `row_limit`, the merged ranges), kept for the readers of this package: a sheet of
    a million rows is then inflated by Python once, not four times (this check, the early parse's
    and the pipeline's row searches, the merged ranges). One thread checks a package at a time;
    another asking for the same one (the early parse and the pipeline) waits for that."""
    key = package_key(package)
    if key is None:  # a package in memory: nothing to share
        for info in infos:
            if not info.is_dir():
                _inflate_part(package, info, row_limit)
        return
    if key in _verified:
        return
    with _checking_lock(key):
        if key in _verified:
            return
        scans = {info.filename: _inflate_part(package, info, row_limit) for info in infos if not info.is_dir()}
        remember_scans(key, {part: scan for part, scan in scans.items() if scan is not None and scan.whole})
        _remember_verified(key)


def _remember_verified(key: tuple[str, int, int]) -> None:
    """Mark a package checked, keeping only the latest few: a server's reading process lives for many
    uploads, and its readers of one package (the early parse, the pipeline) come one after the other."""
    with _locks_guard:
        _verified[key] = None
        while len(_verified) > _VERIFIED_PACKAGES:
            oldest = next(iter(_verified))
            del _verified[oldest]
            _checking.pop(oldest, None)


def _checking_lock(key: tuple[str, int, int]) -> threading.Lock:
    """The lock one package's check holds (other packages are checked meanwhile)."""
    with _locks_guard:
        return _checking.setdefault(key, threading.Lock())


def _inflate_part(package: zipfile.ZipFile, info: zipfile.ZipInfo, row_limit: int) -> SheetScan | None:
    """Inflate one part up to one byte past its declared size, refusing it if it has more; the
    complete scan of a worksheet's bytes, or None (not a worksheet, or not readable to the end).
    Without the checksum (a tenth of the time): it only ever decides a part that has more bytes
    than it says, which is then inflated again with it (`_larger_than_declared`)."""
    scan = SheetScan(row_limit=row_limit, merge_limit=MERGE_LIMIT) if is_worksheet_part(info.filename) else None
    if not _larger_than_declared(package, info, scan) or not _larger_than_declared(package, info, None, crc=True):
        return scan
    declared = max(0, info.file_size)
    raise IngestError(
        "corrupt_file",
        f"Part '{info.filename}' of the file unpacks to more than the {declared:,} bytes its zip directory "
        "declares; files like this are made to slip past size limits.",
        "If the file is genuine, open it in Excel or Word and save it again.",
        f"文件中的“{info.filename}”解压后超过了 zip 目录声明的 {declared:,} 字节；这类文件是为了绕过大小限制而构造的。",
        "如果文件来源可靠，请用 Excel 或 Word 打开后重新保存。",
    )


def _larger_than_declared(
    package: zipfile.ZipFile, info: zipfile.ZipInfo, scan: SheetScan | None, crc: bool = False
) -> bool:
    """Whether the part inflates to more than its declared size, reading at most one byte more;
    `scan` is fed every byte (and told when the part cannot be read to its end). A part that
    cannot be inflated (damaged, encrypted: the readers report it) or whose checksum is wrong
    (`crc`) before it has shown a byte too many counts as not larger. A big worksheet is inflated
    in a second thread (zlib lets go of the GIL) while this one searches the chunks already
    inflated: on two cores the pass takes the longer of the two, not their sum."""
    chunks = _inflated_chunks(package, info, crc)
    if scan is not None and info.file_size >= THREADED_SCAN_BYTES:
        chunks = _read_ahead(chunks)
    for chunk in chunks:
        if chunk is _LARGER:
            return True
        if chunk is _UNREADABLE:
            if scan is not None:
                scan.feed_failed()
            return False
        if scan is not None:
            scan.feed(chunk)
    return False


# What _inflated_chunks yields last when the part has more bytes than declared, or cannot be read.
_LARGER, _UNREADABLE = b"larger", b"unreadable"
THREADED_SCAN_BYTES = 64 * 1024 * 1024  # worksheets this big (inflated) are read ahead in a thread


def _inflated_chunks(package: zipfile.ZipFile, info: zipfile.ZipInfo, crc: bool) -> Iterator[bytes]:
    """The part's bytes in 1 MB chunks, up to its declared size; then _LARGER when there is more,
    or _UNREADABLE when it cannot be inflated to its end (a chunk is never one of these objects)."""
    declared = max(0, info.file_size)
    probe = copy.copy(info)
    # zipfile stops at the declared size (and calls that a bad CRC); let it inflate what is there
    probe.file_size = 1 << 62
    inflated = 0
    try:
        with package.open(probe) as stream:
            if not crc and hasattr(stream, "_expected_crc"):
                stream._expected_crc = None  # sizes are checked here; a wrong checksum only with `crc`
            while chunk := stream.read(min(1 << 20, declared + 1 - inflated)):
                inflated += len(chunk)
                if inflated > declared:
                    yield _LARGER
                    return
                yield chunk
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError, RuntimeError):
        yield _UNREADABLE


def _read_ahead(chunks: Iterator[bytes], depth: int = 4) -> Iterator[bytes]:
    """The same chunks, produced by a thread that keeps at most `depth` of them ahead."""
    ready: queue.Queue[bytes | BaseException | None] = queue.Queue(depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for chunk in chunks:
                if stop.is_set():
                    return
                ready.put(chunk)
            ready.put(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, which raises it
            ready.put(exc)

    worker = threading.Thread(target=produce, name="verity-inflate", daemon=True)
    worker.start()
    try:
        while (item := ready.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while worker.is_alive():  # let a producer blocked on a full queue see the stop
            try:
                ready.get_nowait()
            except queue.Empty:
                worker.join(0.01)


_verified: dict[tuple[str, int, int], None] = {}  # checked packages, oldest first (an ordered set)
_VERIFIED_PACKAGES = 32
_checking: dict[tuple[str, int, int], threading.Lock] = {}
_locks_guard = threading.Lock()


def _xml_elements(package: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> int:
    """The number of XML tags in one part, inflated in 1 MB chunks (memory stays flat); counting
    stops above `limit`. A part that cannot be inflated counts as over the limit."""
    count = 0
    try:
        with package.open(info) as stream:
            while chunk := stream.read(1 << 20):
                count += chunk.count(b"<")
                if count > limit:
                    break
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError):
        return limit + 1
    return count


def _looks_like_text(path: Path) -> bool:
    sample = path.read_bytes()[:4096]
    return b"\x00" not in sample or sample[:2] in (b"\xff\xfe", b"\xfe\xff")


def encrypted() -> IngestError:
    return IngestError(
        "encrypted_file",
        "The workbook is protected with a password, so Verity cannot read it.",
        "Open it in Excel, remove the password (File > Info > Protect Workbook), save, and upload again.",
        "这个工作簿设置了密码保护，Verity 无法读取。",
        "请在 Excel 中打开，取消密码（文件 → 信息 → 保护工作簿），保存后再重新上传。",
    )
