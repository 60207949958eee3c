"""The committed messy-workbook set (data/samples/messy/make_messy.py): exact values, types,
header rows, cleaning log and warnings for every case non-experts' spreadsheets really have."""

from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from app.config import Settings
from app.ingest.errors import IngestError
from app.ingest.pipeline import inspect_file, load_table, preview_table
from app.ingest.table import detect_layout
from app.ingest.types import convert_column

MESSY = Path(__file__).resolve().parents[1] / "data" / "samples" / "messy"
XLSX = MESSY / "sales_messy.xlsx"
GBK = MESSY / "stores_gbk.csv"


def log_of(info) -> dict:
    return {(c["column"], c["action"]): c["count"] for c in info["cleaning"]}


@pytest.fixture(scope="module")
def sales():
    return load_table(XLSX)


def test_layout_two_row_merged_header_title_and_notes(sales):
    info = sales.info
    assert info["selected_sheet"] == "销售明细"
    assert info["header_row"] == 4 and info["header_rows"] == [4, 5]
    # the blank spacer column J is gone; merged cells named both header rows
    assert list(sales.frame.columns) == [
        "门店编码",
        "日期",
        "地区",
        "销售额 / 金额",
        "销售额 / 增长率",
        "利润",
        "数量",
        "会员",
        "已发货",
        "备注",
        "单价",
        "含税价",
    ]
    assert info["rows"] == 6
    assert info["warnings"] == [
        "1 blank row inside the table was skipped",
        "row 10 looks like a totals row ('华东小计') and was excluded",
        "row 14 looks like a totals row ('华南小计') and was excluded",
        "row 15 looks like a totals row ('合计') and was excluded",
        "rows 17–18 look like notes below the table ('注：销售额含税，数据来源于门店收银系统。') and were excluded",
    ]
    assert info["sheets"] == [
        {"name": "销售明细", "rows": 6, "columns": 12, "hidden": False},
        {"name": "回款", "rows": 3, "columns": 2, "hidden": False},
        {"name": "隐藏数据", "rows": 1, "columns": 2, "hidden": True},
    ]


def test_types(sales):
    types = {c["name"]: c["type"] for c in sales.info["columns"]}
    assert types == {
        "门店编码": "identifier",
        "日期": "datetime",
        "地区": "category",
        "销售额 / 金额": "number",
        "销售额 / 增长率": "number",
        "利润": "integer",
        "数量": "integer",
        "会员": "boolean",
        "已发货": "boolean",
        "备注": "text",
        "单价": "number",
        "含税价": "number",
    }
    missing = {c["name"]: c["missing"] for c in sales.info["columns"]}
    assert missing["备注"] == 3 and missing["利润"] == 1 and missing["销售额 / 增长率"] == 1


def test_exact_values(sales):
    f = sales.frame
    assert f["门店编码"].tolist() == ["0012", "0034", "0056", "0078", "0091", "0102"]  # leading zeros kept
    assert f["日期"].tolist() == [pd.Timestamp(2024, 1, d) for d in range(5, 11)]  # four text styles
    assert f["地区"].tolist() == ["华东"] * 4 + ["华南"] * 2
    assert f["销售额 / 金额"].tolist() == [12000.0, 35000.0, 8500.5, 12000.0, 9999.0, 20000.0]  # ¥, 1,234, 万
    growth = f["销售额 / 增长率"].tolist()
    assert growth[:5] == pytest.approx([0.125, -0.03, 0.0, 0.0725, 1.0]) and pd.isna(growth[5])
    assert f["利润"].astype("Float64").tolist()[:2] == [1500, -1200]  # (1,200) is negative
    assert pd.isna(f["利润"].iloc[2]) and f["利润"].tolist()[3:] == [-300, 2000, -50]
    assert f["数量"].tolist() == [120, 80, 65, 95, 100, 200]  # full-width digits
    assert f["会员"].tolist() == [True, False, True, True, False, True]  # 是/否
    assert f["已发货"].tolist() == [True, False, True, False, True, True]  # Y/N
    assert [None if pd.isna(v) else v for v in f["备注"]] == ["新店开业", None, "促销活动", None, "周末客流大", None]
    assert f["含税价"].tolist() == [113.0, 169.5, 147.77, 142.74, 112.99, 113.0]  # cached formula values


def test_cleaning_log(sales):
    assert log_of(sales.info) == {
        ("日期", "parsed dates written as text"): 6,
        ("销售额 / 金额", "parsed thousands separators"): 3,
        ("销售额 / 金额", "removed currency symbols"): 3,
        ("销售额 / 金额", "expanded number units"): 3,
        ("销售额 / 增长率", "read '—' as missing"): 1,
        ("销售额 / 增长率", "converted percentages to fractions"): 5,
        ("利润", "read '—' as missing"): 1,
        ("利润", "parsed thousands separators"): 3,
        ("利润", "read parentheses as negative numbers"): 3,
        ("数量", "converted full-width digits"): 3,
        ("会员", "read yes/no words as booleans"): 6,
        ("已发货", "read yes/no words as booleans"): 6,
        ("备注", "read '无' as missing"): 1,
        ("备注", "read 'N/A' as missing"): 1,
        ("备注", "read '—' as missing"): 1,
    }
    messages = {c["message"] for c in sales.info["cleaning"]}
    assert "销售额 / 金额: 3 values with units (万) multiplied out" in messages
    assert "日期: 6 dates written as text parsed (2024-01-05, 2024/1/5, 2024年1月5日, 05.01.2024)" in messages
    assert "利润: 3 numbers in parentheses read as negative" in messages


def test_excel_serial_dates_in_a_date_column():
    table = load_table(XLSX, sheet="回款")
    assert table.frame["回款日期"].tolist() == [
        pd.Timestamp(2024, 1, 1),
        pd.Timestamp(2024, 2, 1),
        pd.Timestamp(2024, 3, 1),
    ]
    assert log_of(table.info) == {("回款日期", "converted Excel date serial numbers to dates"): 3}


def test_hidden_sheet_can_be_selected_and_is_flagged():
    table = load_table(XLSX, sheet="隐藏数据")
    assert table.info["warnings"][0] == "sheet '隐藏数据' is hidden in the workbook"
    assert table.frame.to_dict("list") == {"键": ["a"], "值": [1]}


def test_gbk_csv():
    table = load_table(GBK)
    info = table.info
    assert info["header_row"] == 2 and info["rows"] == 4
    assert {c["name"]: c["type"] for c in info["columns"]} == {
        "门店": "text",
        "月份": "datetime",
        "营业额": "integer",
        "毛利率": "number",
        "会员": "boolean",
        "店长电话": "identifier",
    }
    f = table.frame
    assert f["月份"].tolist() == [pd.Timestamp(2024, m, 1) for m in (1, 2, 3, 4)]
    assert f["营业额"].astype("Float64").tolist()[:3] == [12000, 8500, 25000] and pd.isna(f["营业额"].iloc[3])
    assert (
        f["毛利率"].tolist()[0] == 0.35 and pd.isna(f["毛利率"].iloc[1]) and f["毛利率"].tolist()[2:] == [0.405, 0.28]
    )
    assert f["会员"].tolist() == [True, False, True, False]
    assert log_of(info) == {
        ("月份", "parsed dates written as text"): 4,
        ("营业额", "read '—' as missing"): 1,
        ("营业额", "parsed thousands separators"): 1,
        ("营业额", "expanded number units"): 2,
        ("毛利率", "read 'N/A' as missing"): 1,
        ("毛利率", "converted percentages to fractions"): 3,
        ("会员", "read yes/no words as booleans"): 4,
        ("店长电话", "read '-' as missing"): 1,
    }
    assert info["warnings"] == [
        "the file was read with the gb18030 text encoding",
        "row 7 looks like a totals row ('总计') and was excluded",
    ]
    assert {c["name"]: c["pii"] for c in info["columns"]}["店长电话"] == "phone"
    assert table.preview(1)[0]["店长电话"] == "138****5678"


def test_inspect_json_is_contract_shaped():
    out = inspect_file(XLSX, rows=2)
    json.dumps(out, allow_nan=False, ensure_ascii=False)
    assert out["preview"][0]["日期"] == "2024-01-05" and out["preview"][1]["利润"] == -1200
    assert all(set(c) == {"column", "action", "count", "message"} for c in out["cleaning"])


# --- type inference on its own ---------------------------------------------------------------


@pytest.mark.parametrize(
    "values, kind, expected",
    [
        (["05.01.2024", "06.01.2024"], "datetime", [pd.Timestamp(2024, 1, 5), pd.Timestamp(2024, 1, 6)]),
        (["2024年1月5日", "2024年12月31日"], "datetime", [pd.Timestamp(2024, 1, 5), pd.Timestamp(2024, 12, 31)]),
        (
            ["2024/1/5 13:30", "2024/1/6 08:00:05"],
            "datetime",
            [pd.Timestamp(2024, 1, 5, 13, 30), pd.Timestamp(2024, 1, 6, 8, 0, 5)],
        ),
        (["1.5亿", "3k", "2M", "0.5万"], "integer", [150_000_000, 3000, 2_000_000, 5000]),
        (["1.5k", "0.00015万"], "number", [1500.0, 1.5]),
        (["－１２．５", "１，２３４"], "number", [-12.5, 1234.0]),
        (["$1,234.50", "€3", "(£2.50)"], "number", [1234.5, 3.0, -2.5]),
        (["TRUE", "FALSE", "true"], "boolean", [True, False, True]),
        (["y", "n", "Y"], "boolean", [True, False, True]),
    ],
)
def test_convert_column_cases(values, kind, expected):
    series, got_kind, _ = convert_column("x", pd.Series(values, dtype="str"))
    assert got_kind == kind
    assert series.tolist() == expected


def test_identifiers_stay_text():
    assert convert_column("code", pd.Series(["007", "012", "123"]))[1] == "identifier"
    assert convert_column("tel", pd.Series(["13812345678", "13987654321"]))[1] == "identifier"
    series, kind, _ = convert_column("phone", pd.Series([13812345678.0, 13987654321.0]))
    assert kind == "identifier" and series.tolist() == ["13812345678", "13987654321"]


def test_many_order_numbers_are_kept_as_they_are_and_markers_still_logged():
    codes = pd.Series([f"ORD-{i:05d}" for i in range(200)], dtype="str")
    series, kind, steps = convert_column("Order ID", codes)
    assert kind == "identifier" and series is not None and series.tolist() == codes.tolist() and steps == []
    messy = pd.Series([f" ORD-{i:05d}" for i in range(200)] + ["N/A"], dtype="str")
    series, kind, steps = convert_column("Order ID", messy)
    assert kind == "identifier" and series.iloc[0] == "ORD-00000" and pd.isna(series.iloc[200])
    assert [s.message for s in steps] == ["1 'N/A' read as missing"]


def test_numbers_with_thousands_separators_read_in_one_cast_and_logged():
    series, kind, steps = convert_column(
        "Revenue", pd.Series(["1,234.5", "2,000", "17", None, " 3,000,000 "], dtype="str")
    )
    assert kind == "number" and series.tolist()[:3] == [1234.5, 2000.0, 17.0] and series.iloc[4] == 3e6
    assert [(s.action, s.count) for s in steps] == [("parsed thousands separators", 3)]
    # zero-padded codes leave the fast path: the general rules keep them as text
    assert convert_column("zip", pd.Series(["01234", "02345", "03456"], dtype="str"))[1] == "identifier"


def test_vectorised_inference_is_fast_on_a_big_column():
    n = 300_000
    col = pd.Series([f"{i % 5000:,}.5" if i % 3 else f"¥{i % 700}" for i in range(n)], dtype="str")
    start = time.perf_counter()
    series, kind, steps = convert_column("Revenue", col)
    assert kind == "number" and series.iloc[1] == 1.5
    assert time.perf_counter() - start < 5  # distinct values only: ~5.7k regex runs, not 300k


# --- layout edge cases -------------------------------------------------------------------------


def test_two_row_header_without_merge_information():
    head = pd.DataFrame(
        [
            ["地区", "2024", None, "2025", None],
            [None, "收入", "成本", "收入", "成本"],
            ["华东", 1.0, 2.0, 3.0, 4.0],
            ["华南", 5.0, 6.0, 7.0, 8.0],
        ],
        dtype=object,
    )
    layout = detect_layout(head)
    assert layout.header_rows == [0, 1]
    assert layout.names == ["地区", "2024 / 收入", "2024 / 成本", "2025 / 收入", "2025 / 成本"]


def test_categorical_first_row_is_not_a_second_header():
    head = pd.DataFrame(
        [["Name", "City", "Team"], ["Ann", "Paris", "Red"], ["Bob", "Paris", "Red"], ["Cid", "Rome", "Blue"]],
        dtype=object,
    )
    assert detect_layout(head).header_rows == [0]


# --- fast preview ------------------------------------------------------------------------------


def test_preview_table_reads_only_the_first_rows(tmp_path, monkeypatch):
    xlsxwriter = pytest.importorskip("xlsxwriter")
    path = tmp_path / "big.xlsx"
    wb = xlsxwriter.Workbook(str(path), {"constant_memory": True})
    ws = wb.add_worksheet("Data")
    ws.write_row(0, 0, ["Report"])
    ws.write_row(2, 0, ["ID", "Amount", "Share"])
    for i in range(60_000):
        ws.write_row(i + 3, 0, [f"A{i:06d}", i * 1.5, f"{i % 100}%"])
    wb.close()
    from app.ingest import pipeline

    def no_full_read(*_args, **_kwargs):
        raise AssertionError("the preview parsed the whole sheet")

    with monkeypatch.context() as patched:
        patched.setattr(pipeline, "_body", no_full_read)
        out = preview_table(path, rows=5)
    assert out["partial"] is True and out["header_row"] == 3 and out["rows"] == 60_000
    assert [r["Amount"] for r in out["preview"]] == [0.0, 1.5, 3.0, 4.5, 6.0]
    assert out["preview"][2]["Share"] == 0.02
    full = inspect_file(path, rows=5)
    assert full["preview"] == out["preview"] and full["rows"] == 60_000


def test_preview_table_on_small_and_text_files():
    out = preview_table(GBK, rows=2)
    assert out["partial"] is False and len(out["preview"]) == 2 and out["header_row"] == 2


# --- hostile files -----------------------------------------------------------------------------


def _zip_bomb(path: Path, mb: int) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        zf.writestr("xl/workbook.xml", "<workbook/>")
        zf.writestr("xl/worksheets/sheet1.xml", b"<c/>" * (mb * 1024 * 1024 // 4))
    return path


def test_zip_bomb_is_refused_before_parsing(tmp_path):
    path = _zip_bomb(tmp_path / "bomb.xlsx", 64)  # 64 MB of empty cells packs ~1000x
    with pytest.raises(IngestError) as err:
        load_table(path, settings=Settings(max_cells=1_000_000))  # parse cost: 16M elements, limit 4M
    assert err.value.category == "too_large" and "expands" in err.value.message
    with pytest.raises(IngestError) as err:
        load_table(path, settings=Settings(max_uncompressed_mb=10))
    assert err.value.category == "too_large" and "unpacks to" in err.value.message


def test_cell_limit(tmp_path):
    with pytest.raises(IngestError) as err:
        load_table(XLSX, settings=Settings(max_cells=100))
    assert err.value.category == "too_large"
    path = tmp_path / "c.csv"
    path.write_text("a,b\n" + "1,2\n" * 100)
    with pytest.raises(IngestError) as err:
        load_table(path, settings=Settings(max_cells=50))
    assert err.value.category == "too_large"


def test_dates_typed_several_ways_in_one_column_are_dates() -> None:
    """A sheet's date column where most cells are real dates and some were typed as text in two layouts
    ("2024-05-08", "May 10, 2024"): every value is read as the date pandas' mixed-format parser gives, and each
    layout is logged. It stayed text (no one layout reads 95% of it), so no month could be made of it."""
    import datetime as dt

    days = pd.date_range("2024-05-01", periods=60, freq="D")
    cells: list[object] = []
    for i, day in enumerate(days):
        cells.append(
            day.strftime("%b %d, %Y") if i % 7 == 3 else day.strftime("%Y-%m-%d") if i % 5 == 1 else day.to_pydatetime()
        )
    series, kind, steps = convert_column("Date", pd.Series(cells, dtype=object))
    assert kind == "datetime"
    expected = pd.to_datetime(pd.Series([str(c) for c in cells]), format="mixed")
    assert list(series) == list(expected)
    assert any("%b %d, %Y" in step.message for step in steps), [s.message for s in steps]
    assert isinstance(cells[0], dt.datetime)


def test_iso_dates_beside_day_first_slash_dates_are_dates() -> None:
    """A date column typed two ways, "2024-01-05" and day-first "13/01/2024" (some day above 12): each slash date is
    read day first, each ISO date as written. It stayed text: the slash dates kept the ISO reader away and no one
    layout reads 95% of the column, so no month or quarter could be made of it."""
    days = pd.date_range("2024-01-01", periods=90, freq="D")
    cells = [day.strftime("%d/%m/%Y") if i % 4 == 1 else day.strftime("%Y-%m-%d") for i, day in enumerate(days)]
    series, kind, _ = convert_column("Date", pd.Series(cells, dtype=object))
    assert kind == "datetime"
    expected = [
        pd.to_datetime(c, format="%d/%m/%Y") if "/" in c else pd.to_datetime(c, format="%Y-%m-%d") for c in cells
    ]
    assert list(series) == expected


def test_a_column_of_mostly_dates_and_notes_stays_text() -> None:
    """Dates typed several ways beside notes that are no date in any layout: not a date column."""
    cells = ["2024-05-01", "2024-05-02", "May 3, 2024", "call back", "see note", "2024-05-06", "ask Tom", "n/a?"]
    _, kind, _ = convert_column("When", pd.Series(cells * 5, dtype=object))
    assert kind != "datetime"
