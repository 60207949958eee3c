"""One language per page (issue 28 point 4): a Chinese page and a Chinese report carry no English
sentence of the catalog — the reader's warnings about a messy file included — and the web describes
header rows as the CLI does.

The check walks the whole catalog (app/translations.py): every English sentence that differs from its
Chinese (a sentence: three words or more) must not appear in the visible text of the zh pages."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.ingest.warnings_text import warning, warning_in
from app.main import create_app
from app.translations import CATALOG
from tests.test_web import ask, new_workspace, upload

CJK = re.compile(r"[\u4e00-\u9fff]")

# A shop's sheet as people keep it: a blank row inside, a totals row, notes under the table, a
# column name that reads like an instruction, in GBK (a Chinese Excel's "CSV").
SHOPS = {"东门": 1200, "西门": 980, "南门": 1105}
MESSY = (
    "门店,月份,营业额\n"
    + "".join(f"{shop},2024-{m:02d},{base + 37 * m}\n" for shop, base in SHOPS.items() for m in range(1, 7))
    + ",,\n"
    + "".join(f"{shop},2024-{m:02d},{base + 41 * m}\n" for shop, base in SHOPS.items() for m in range(7, 10))
    + "合计,,99999\n"
    + "备注：二月有促销,,\n"
).encode("gbk")


class _Text(HTMLParser):
    """The page's visible text (no scripts, styles or attributes)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._skip -= tag in ("script", "style") and self._skip > 0

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def visible(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())


def english_sentences() -> list[str]:
    """The catalog's English sentences, the fixed words of each (a template's values removed)."""
    found = []
    for entry in CATALOG.values():
        en, zh = entry.get("en", ""), entry.get("zh", "")
        if en == zh:
            continue
        for piece in re.split(r"\{\w+\}", en):
            piece = " ".join(piece.split()).strip(" .,:;()'\"")
            if len(piece.split()) >= 3:
                found.append(piece)
    return found


def test_every_reader_warning_has_a_chinese_sentence_with_the_same_values():
    assert warning_in(warning("blank_rows", count=3), "zh") == "跳过了表格中间的 3 个空行"
    made = warning("totals_row", row=7, label="合计")
    assert made == "row 7 looks like a totals row ('合计') and was excluded"
    assert warning_in(made, "zh") == "第 7 行像是合计行（“合计”），已排除" and warning_in(made, "en") == made
    assert warning_in("a sentence no template wrote", "zh") == "a sentence no template wrote"
    for key, entry in CATALOG.items():
        if key.startswith("ingest_warning."):
            assert CJK.search(entry["zh"]) and set(re.findall(r"\{\w+\}", entry["zh"])) == set(
                re.findall(r"\{\w+\}", entry["en"])
            ), key


@pytest.fixture(scope="module")
def chinese_workspace(tmp_path_factory):
    settings = Settings(_env_file=None, data_dir=tmp_path_factory.mktemp("zh"), llm_model="builtin")
    with TestClient(create_app(settings)) as client:
        client.cookies.set("lang", "zh")
        ws = new_workspace(client, "门店营业额")
        assert upload(client, ws, "门店.csv", MESSY).status_code == 201
        run_id, _ = ask(client, ws, "哪个门店的营业额最高？")
        yield client, ws, run_id


def test_a_chinese_workspace_page_says_the_reader_s_warnings_in_chinese(chinese_workspace):
    client, ws, run_id = chinese_workspace
    page = visible(client.get(f"/workspaces/{ws}?lang=zh&run={run_id}").text)
    assert len(english_sentences()) > 250  # the walk covers the catalog, not a handful of strings
    assert "跳过了表格中间的 1 个空行" in page and "像是合计行" in page, page
    leaked = [sentence for sentence in english_sentences() if sentence in page]
    assert leaked == [], leaked
    assert "blank row" not in page and "was excluded" not in page


def test_a_chinese_report_says_the_reader_s_warnings_in_chinese(chinese_workspace):
    client, ws, run_id = chinese_workspace
    report = client.get(f"/api/workspaces/{ws}/report.md?run={run_id}").text
    assert "跳过了表格中间的 1 个空行" in report and "blank row" not in report
    leaked = [sentence for sentence in english_sentences() if sentence in report]
    assert leaked == [], leaked


def test_the_web_names_header_rows_as_the_cli_does(client, tmp_path):
    """A merged header on two rows (under a title row) is "rows 2-3" on both; the web said "row 2"."""
    from openpyxl import Workbook

    from app.cli_inspect import render_summary
    from app.ingest.pipeline import inspect_file

    book = Workbook()
    sheet = book.active
    sheet.append(["季度报表"])
    sheet.append(["门店", "销售", None])
    sheet.append([None, "数量", "金额"])
    sheet.merge_cells("B2:C2")
    sheet.merge_cells("A2:A3")
    for shop, n in (("东门", 3), ("西门", 4), ("南门", 5)):
        sheet.append([shop, n, n * 10])
    path = tmp_path / "两行表头.xlsx"
    book.save(path)
    cli = render_summary(inspect_file(path, settings=client.app.state.settings))
    assert "header on rows 2-3" in cli, cli
    ws = new_workspace(client, "表头")
    assert upload(client, ws, path.name, path.read_bytes()).status_code == 201
    assert "Column names found in rows 2-3" in visible(client.get(f"/workspaces/{ws}?lang=en").text)
    assert "列名位于第 2-3 行" in visible(client.get(f"/workspaces/{ws}?lang=zh").text)
