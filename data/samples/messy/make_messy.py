"""Write the messy-workbook test set (committed next to this script; re-run to regenerate).

    python data/samples/messy/make_messy.py        # needs xlsxwriter (pip install xlsxwriter)

Files, each a case non-experts' spreadsheets really have (tests/test_ingest_messy.py asserts the
exact values, types, header row and cleaning log Verity reads from them):

- sales_messy.xlsx
  - sheet "销售明细": a merged title row and a date row above the table; a two-row header whose
    upper cells are merged ("销售额" over "金额 | 增长率", "门店编码" merged down over two rows);
    Chinese headers; codes with leading zeros; dates typed as text in four styles (2024-01-05,
    2024/1/6, 2024年1月7日, 08.01.2024); amounts with ¥, thousands separators and 万; percentages;
    negative numbers in parentheses; full-width digits; 是/否 and Y/N; missing markers (—, N/A, 无);
    a blank column and a blank row inside the table; formulas with cached values; two subtotal
    rows (华东小计, 华南小计), a totals row (合计) and notes under the table.
  - sheet "回款": dates stored as Excel serial numbers in a date-named column.
  - sheet "隐藏数据": a hidden sheet.
- stores_gbk.csv: a GBK-encoded CSV (as Chinese Excel exports it) with a title line, 万 units,
  percentages, 是/否, missing markers and a 总计 row.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent

HEADER_TOP = [
    "门店编码",
    "日期",
    "地区",
    "销售额",
    None,
    "利润",
    "数量",
    "会员",
    "已发货",
    None,
    "备注",
    "单价",
    "含税价",
]
HEADER_LOW = [None, None, None, "金额", "增长率", None, None, None, None, None, None, None, None]
# code, date text, region, amount text, growth text, profit text, quantity text, member, shipped, note, price
ROWS_EAST = [
    ("0012", "2024-01-05", "华东", "¥12,000", "12.5%", "1,500", "１２０", "是", "Y", "新店开业", 100.0),
    ("0034", "2024/1/6", "华东", "3.5万", "-3%", "(1,200)", "80", "否", "N", "无", 150.0),
    ("0056", "2024年1月7日", "华东", "¥8,500.50", "0%", "—", "６５", "是", "Y", "促销活动", 130.77),
    ("0078", "08.01.2024", "华东", "1.2万", "7.25%", "(300)", "95", "是", "N", "N/A", 126.32),
]
ROWS_SOUTH = [
    ("0091", "2024-01-09", "华南", "¥9,999", "100%", "2,000", "１００", "否", "Y", "周末客流大", 99.99),
    ("0102", "2024/1/10", "华南", "2万", "—", "(50)", "200", "是", "Y", "—", 100.0),
]


def write_workbook(path: Path) -> None:
    import xlsxwriter

    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet("销售明细")
    title = wb.add_format({"bold": True, "align": "center"})
    ws.merge_range(0, 0, 0, 12, "2024年1月门店销售明细", title)
    ws.write(1, 0, "制表日期：2024年2月1日")
    # rows 4-5 (0-based 3-4): the two-row header with merged cells
    for col in range(13):
        top, low = HEADER_TOP[col], HEADER_LOW[col]
        if col in (3, 4):
            continue
        if top is not None and low is None:
            ws.merge_range(3, col, 4, col, top)
    ws.merge_range(3, 3, 3, 4, "销售额")
    ws.write(4, 3, "金额")
    ws.write(4, 4, "增长率")
    row = 5

    def data_row(r, values):
        code, date, region, amount, growth, profit, qty, member, shipped, note, price = values
        ws.write_string(r, 0, code)
        ws.write_string(r, 1, date)
        ws.write_string(r, 2, region)
        ws.write_string(r, 3, amount)
        ws.write_string(r, 4, growth)
        ws.write_string(r, 5, profit)
        ws.write_string(r, 6, qty)
        ws.write_string(r, 7, member)
        ws.write_string(r, 8, shipped)
        # column J (9) stays blank: a spacer column inside the table
        ws.write_string(r, 10, note)
        ws.write_number(r, 11, price)
        # a formula; the workbook stores its cached result, which is what Verity reads
        ws.write_formula(r, 12, f"=ROUND(L{r + 1}*1.13,2)", None, round(price * 1.13, 2))

    for values in ROWS_EAST:
        data_row(row, values)
        row += 1
    ws.write_string(row, 0, "华东小计")
    ws.write_formula(row, 6, "=SUM(G6:G9)", None, 360)
    row += 1
    row += 1  # a blank row inside the table
    for values in ROWS_SOUTH:
        data_row(row, values)
        row += 1
    ws.write_string(row, 0, "华南小计")
    ws.write_formula(row, 6, "=SUM(G12:G13)", None, 300)
    row += 1
    ws.write_string(row, 0, "合计")
    ws.write_formula(row, 6, "=G10+G14", None, 660)
    row += 2
    ws.write_string(row, 0, "注：销售额含税，数据来源于门店收银系统。")
    ws.write_string(row + 1, 0, "制表人：张三")

    pay = wb.add_worksheet("回款")
    pay.write_row(0, 0, ["回款日期", "金额"])
    for i, (serial, amount) in enumerate([(45292, 1000), (45323, 2500.5), (45352, 800)]):
        pay.write_number(i + 1, 0, serial)  # no date format: a bare Excel serial number
        pay.write_number(i + 1, 1, amount)

    hidden = wb.add_worksheet("隐藏数据")
    hidden.write_row(0, 0, ["键", "值"])
    hidden.write_row(1, 0, ["a", 1])
    hidden.hide()
    wb.close()


CSV_TEXT = """门店月报（单位：元）
门店,月份,营业额,毛利率,会员,店长电话
南京店,2024年1月,1.2万,35%,是,13812345678
苏州店,2024年2月,"8,500",N/A,否,13987654321
杭州店,2024年3月,2.5万,40.5%,是,-
宁波店,2024年4月,—,28%,否,13700001111
总计,,4.55万,,,
"""


def write_csv(path: Path) -> None:
    path.write_bytes(CSV_TEXT.encode("gbk"))


def main() -> None:
    write_workbook(HERE / "sales_messy.xlsx")
    write_csv(HERE / "stores_gbk.csv")


if __name__ == "__main__":
    main()
