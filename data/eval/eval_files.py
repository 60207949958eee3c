"""The file helpers the held-out evaluation scripts share: writing a set's generated spreadsheets and
reading them back from disk as a person reads them.

Used by data/eval/holdout7_expected.py to holdout15_expected.py and by holdout10_generate.py to
holdout15_generate.py (imported, like expected.py, with sys.path set to data/eval). Each set keeps
what differs in its own script and passes it in: which files have a merged two-row header
(`merged`), how a file is generated (`fresh`), how its dates are typed (`forms`), the workbook time
(`fixed_time`). Plain pandas / openpyxl / xlsxwriter only: nothing here may read Verity's code or runs.
"""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

# A merged-header sheet: each leaf column's group (the merged cell above it), None for a column
# that stands alone (its name merged down over both header rows).
Groups = dict[str, str | None]


# --- writing (xlsxwriter; holdout7 to holdout9) ----------------------------------------------------
def merged_header_bytes(frame: pd.DataFrame, groups: Groups) -> bytes:
    """One .xlsx sheet with a two-row header as people lay it out: a group's name in a cell merged
    across its leaf columns (row 1) over the leaves (row 2); a column without a group has its name
    merged down over both rows. Byte-stable: xlsxwriter with a fixed creation date (read back with
    openpyxl)."""
    buffer = io.BytesIO()
    with pd.ExcelWriter(
        buffer, engine="xlsxwriter", engine_kwargs={"options": {"strings_to_numbers": False}}
    ) as writer:
        writer.book.set_properties({"created": pd.Timestamp("2024-12-31").to_pydatetime()})
        frame.to_excel(writer, index=False, header=False, startrow=2, sheet_name="Sheet1")
        sheet = writer.sheets["Sheet1"]
        bold = writer.book.add_format({"bold": True, "align": "center", "valign": "vcenter", "border": 1})
        dates = writer.book.add_format({"num_format": "yyyy-mm-dd"})
        columns = list(frame.columns)
        for i, name in enumerate(columns):
            if pd.api.types.is_datetime64_any_dtype(frame[name]):
                sheet.set_column(i, i, 12, dates)
            group = groups[name]
            if group is None:
                sheet.merge_range(0, i, 1, i, name, bold)
            else:
                sheet.write(1, i, name, bold)
                if i == 0 or groups[columns[i - 1]] != group:
                    last = i
                    while last + 1 < len(columns) and groups[columns[last + 1]] == group:
                        last += 1
                    sheet.merge_range(0, i, 0, last, group, bold)
    return buffer.getvalue()


def dated_plain_bytes(frame: pd.DataFrame, name: str, plain: Callable[[pd.DataFrame, str], bytes]) -> bytes:
    """A plain file (written by `plain`); a sheet with real dates gets a date format so it shows
    dates, not serials."""
    if name.endswith(".csv") or not any(pd.api.types.is_datetime64_any_dtype(frame[c]) for c in frame):
        return plain(frame, name)
    buffer = io.BytesIO()
    with pd.ExcelWriter(
        buffer, engine="xlsxwriter", engine_kwargs={"options": {"strings_to_numbers": False}}
    ) as writer:
        writer.book.set_properties({"created": pd.Timestamp("2024-12-31").to_pydatetime()})
        frame.to_excel(writer, index=False, sheet_name="Sheet1")
        dates = writer.book.add_format({"num_format": "yyyy-mm-dd"})
        for i, name_ in enumerate(frame.columns):
            if pd.api.types.is_datetime64_any_dtype(frame[name_]):
                writer.sheets["Sheet1"].set_column(i, i, 12, dates)
    return buffer.getvalue()


# --- writing (openpyxl; the holdout10 to holdout12 generators) ----------------------------------
def _cell(value: Any) -> Any:
    """A frame's value as openpyxl writes it: None for a blank, a Python datetime or number."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    if isinstance(value, np.generic):
        value = value.item()
        return None if isinstance(value, float) and np.isnan(value) else value
    return value


def xlsx_bytes(frame: pd.DataFrame, groups: Groups | None, fixed_time: dt.datetime) -> bytes:
    """One sheet, written with openpyxl. With `groups`, a two-row header as people lay it out: a
    group's name in a cell merged across its leaf columns (row 1) over the leaves (row 2); a column
    without a group has its name merged down over both rows. Dates get a date format. Byte-stable:
    the workbook's times are `fixed_time`."""
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font

    book = Workbook()
    sheet = book.active
    sheet.title = "Sheet1"
    bold, centre = Font(bold=True), Alignment(horizontal="center", vertical="center")
    columns = list(frame.columns)
    if groups is None:
        sheet.append(columns)
        first = 2
    else:
        for i, name in enumerate(columns, start=1):
            group = groups[name]
            if group is None:
                sheet.cell(1, i, name)
                sheet.merge_cells(start_row=1, start_column=i, end_row=2, end_column=i)
            else:
                sheet.cell(2, i, name)
                if i == 1 or groups[columns[i - 2]] != group:
                    last = i
                    while last < len(columns) and groups[columns[last]] == group:
                        last += 1
                    sheet.cell(1, i, group)
                    sheet.merge_cells(start_row=1, start_column=i, end_row=1, end_column=last)
        first = 3
    for row in sheet.iter_rows(min_row=1, max_row=first - 1):
        for cell in row:
            cell.font, cell.alignment = bold, centre
    for r, values in enumerate(frame.itertuples(index=False), start=first):
        for c, value in enumerate(values, start=1):
            value = _cell(value)
            if value is None:
                continue
            cell = sheet.cell(r, c, value)
            if isinstance(value, dt.datetime):
                cell.number_format = "yyyy-mm-dd"
    book.properties.created = book.properties.modified = fixed_time
    buffer = io.BytesIO()
    book.save(buffer)
    return stable_zip(buffer.getvalue(), fixed_time)


def stable_zip(content: bytes, fixed_time: dt.datetime) -> bytes:
    """The workbook re-zipped with fixed entry times and a fixed 'modified' stamp (openpyxl writes
    the time of saving into both), so writing the files twice gives the same bytes."""
    import re
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(content)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for entry in source.infolist():
            data = source.read(entry.filename)
            if entry.filename == "docProps/core.xml":
                stamp = fixed_time.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
                data = re.sub(
                    rb"(<dcterms:modified[^>]*>)[^<]*(</dcterms:modified>)", rb"\g<1>" + stamp + rb"\g<2>", data
                )
            info = zipfile.ZipInfo(entry.filename, date_time=fixed_time.timetuple()[:6])
            info.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(info, data)
    return out.getvalue()


# --- the rows and cells as people leave them (holdout12 on) ---------------------------------------
def typed_dates(days: pd.Series, rng: np.random.Generator, forms: list[str | None], weights: list[float]) -> list:
    """Dates as a person types them: a real date cell (None in `forms`) or text in one of the forms."""
    picks = rng.choice(len(forms), size=len(days), p=weights)
    out: list = []
    for day, pick in zip(days, picks):
        form = forms[pick]
        out.append(day.to_pydatetime() if form is None else chinese_or_strftime(day, form))
    return out


def chinese_or_strftime(day: pd.Timestamp, form: str) -> str:
    """strftime, plus the forms without zero padding that people type (2024年6月3日, 2024/3/5)."""
    if form == "zh":
        return f"{day.year}年{day.month}月{day.day}日"
    if form == "slash-short":
        return f"{day.year}/{day.month}/{day.day}"
    if form == "dash-short":
        return f"{day.year}-{day.month}-{day.day}"
    return day.strftime(form)


def with_messy_rows(frame: pd.DataFrame, blank_at: list[int], total: dict) -> pd.DataFrame:
    """Blank rows at the given places and a total row at the bottom, as people leave a sheet."""
    blank = dict.fromkeys(frame.columns)
    rows = frame.astype(object).to_dict("records")
    for place in sorted(blank_at, reverse=True):
        rows.insert(place, dict(blank))
    rows.append(dict(blank))
    rows.append({**blank, **total})
    return pd.DataFrame(rows, columns=frame.columns)


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """A CSV as a spreadsheet program saves it: UTF-8 with a byte-order mark, blank cells empty."""
    frame = frame.copy()
    for column in frame.columns:
        values = pd.to_numeric(frame[column], errors="coerce")
        # a whole-number column with blanks is still typed as whole numbers (4, not 4.0)
        if values.notna().sum() == frame[column].notna().sum() and (values.dropna() % 1 == 0).all():
            frame[column] = values.astype("Int64")
    text = io.StringIO()
    frame.to_csv(text, index=False, lineterminator="\n")
    return ("\ufeff" + text.getvalue()).encode("utf-8")


# --- writing a set's files ----------------------------------------------------------------------
def file_bytes(
    name: str, frames: dict[str, tuple[Callable[[], pd.DataFrame], Groups | None]], fixed_time: dt.datetime
) -> bytes:
    """The bytes of one generated file of a set: its frame made, saved as a CSV or as a workbook (with its
    merged group header when it has one)."""
    make, groups = frames[name]
    frame = make()
    if name.endswith(".csv"):
        return csv_bytes(frame)
    return xlsx_bytes(frame, groups, fixed_time)


def write_files(repo: Path, names: Iterable[str], fresh: Callable[[str], bytes]) -> None:
    """Writes each generated file (`fresh(name)` gives its bytes) under the repository root."""
    for name in names:
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(fresh(name))
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")


# --- reading back ---------------------------------------------------------------------------------
def read_bytes(content: bytes, name: str, merged: Collection[str]) -> pd.DataFrame:
    """A file as a person reads it: a merged two-row header (the files in `merged`) gives each
    column its leaf's name (the group's name where a column has none), read with openpyxl from the
    cells themselves."""
    if name.endswith(".csv"):
        return pd.read_csv(io.BytesIO(content), encoding="utf-8-sig")
    if name not in merged:
        return pd.read_excel(io.BytesIO(content), engine="openpyxl")
    raw = pd.read_excel(io.BytesIO(content), engine="openpyxl", header=None)
    top, leaf = raw.iloc[0].ffill(), raw.iloc[1]
    frame = raw.iloc[2:].reset_index(drop=True)
    frame.columns = [str(b) if pd.notna(b) else str(a) for a, b in zip(top, leaf)]
    return frame.infer_objects()


def stale_files(repo: Path, names: Iterable[str], fresh: Callable[[str], bytes], merged: Collection[str]) -> list[str]:
    """The files whose data differ from what the generator gives now (`fresh(name)`): bytes first,
    then the data read back, as another openpyxl, xlsxwriter or pandas may zip a file differently."""
    stale = []
    for name in names:
        path = repo / name
        new = fresh(name)
        if not path.is_file() or (
            path.read_bytes() != new
            and not read_bytes(path.read_bytes(), name, merged).equals(read_bytes(new, name, merged))
        ):
            stale.append(name)
    return stale


def merged_ranges(path: Path) -> list[str]:
    """The merged cells of a workbook, as openpyxl reads them (the header really is merged)."""
    from openpyxl import load_workbook

    return sorted(str(m) for m in load_workbook(path).active.merged_cells.ranges)


def dates(column: pd.Series, forms: Iterable[str]) -> pd.Series:
    """Dates as people type them: real date cells as they are, text in the first of `forms` (strptime
    formats, tried in order) that reads it, NaT where none does."""
    forms = tuple(forms)

    def one(value: Any) -> pd.Timestamp:
        if isinstance(value, (pd.Timestamp, np.datetime64)) or hasattr(value, "year"):
            return pd.Timestamp(value)
        text = str(value).strip()
        for form in forms:
            try:
                return pd.to_datetime(text, format=form)
            except ValueError:
                continue
        return pd.NaT

    return column.map(lambda v: pd.NaT if pd.isna(v) else one(v))
