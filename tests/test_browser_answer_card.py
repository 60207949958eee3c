"""The answer card in a real browser (issue 28 point 1): the reading chips, the headline, then the chart
that answers it (inline, large, readable at 1280 and 390 px), the result as a table that sorts on a
click, "how sure" in one line and the method a click away. The chart switches between its kinds and
saves as a real PNG. Uses test_browser's server and Chromium fixtures; screenshots go to
$VERITY_SHOTS (default: the test's tmp dir)."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pandas as pd
import pytest
from openpyxl import Workbook

from app.web.i18n import t
from tests.test_browser import PAGE_TIMEOUT_MS, RUN_TIMEOUT_MS, browser, live_server, playwright_api  # noqa: F401

pytestmark = pytest.mark.slow

STORES = ("东城店", "西城店", "南湖店", "北站店")


def shop_rows() -> list[tuple[str, str, float]]:
    """Two years of monthly takings for four stores: each store its own level, all growing slowly."""
    rows = []
    for month in range(24):
        for n, store in enumerate(STORES):
            rows.append(
                (store, f"{2023 + month // 12}-{month % 12 + 1:02d}-01", 1000.0 * (n + 1) + 25.5 * month + 7 * n)
            )
    return rows


def shop_workbook(path: Path) -> Path:
    book = Workbook()
    sheet = book.active
    sheet.title = "销售"
    sheet.append(["门店", "月份", "销售额"])
    for row in shop_rows():
        sheet.append(list(row))
    book.save(path)
    return path


def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("VERITY_SHOTS", str(tmp_path)))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk; fails on anything that is not a PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:16]
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture
def page_for(browser, live_server: str):  # noqa: F811 (the fixtures imported above)
    contexts = []

    def open_page(lang: str):
        locale = "zh-CN" if lang == "zh" else "en-US"
        context = browser.new_context(
            base_url=live_server, locale=locale, viewport={"width": 1280, "height": 900}, accept_downloads=True
        )
        context.set_default_timeout(PAGE_TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.errors = errors
        return page

    try:
        yield open_page
    finally:
        for context in contexts:
            context.close()


def ask_in(page, lang: str, workbook: Path, question: str):
    expect = playwright_api.expect
    page.goto(f"/?lang={lang}")
    page.fill("#ws-name", "门店销售")
    with page.expect_navigation():
        page.get_by_role("button", name=t("create", lang), exact=True).click()
    page.set_input_files("#upload-file", str(workbook))
    with page.expect_navigation():
        page.get_by_role("button", name=t("upload", lang), exact=True).click()
    expect(page.locator("#datasets article.dataset").first).to_be_visible()
    page.get_by_role("textbox", name=t("ask", lang)).fill(question)
    with page.expect_navigation():
        page.get_by_role("button", name=t("ask_button", lang), exact=True).click()
    panel = page.locator("#run")
    expect(panel.locator(".run-question")).to_have_text(question)
    return panel


# Whether the canvas holds the forecast's own colour (static/answer_chart.js PALETTE.forecast, #6b8ee8).
FORECAST_DRAWN = """() => {
  const c = document.querySelector('[data-chart-canvas]'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  for (let i = 0; i < d.length; i += 4) {
    if (Math.abs(d[i] - 107) < 8 && Math.abs(d[i + 1] - 142) < 8 && Math.abs(d[i + 2] - 232) < 8 && d[i + 3] > 240) return true;
  }
  return false;
}"""


def canvas_png(page) -> str:
    return page.evaluate("document.querySelector('[data-chart-canvas]').toDataURL('image/png')")


def test_a_total_by_store_answers_with_its_chart_and_a_sortable_table(page_for, tmp_path: Path) -> None:
    page, expect, lang = page_for("zh"), playwright_api.expect, "zh"
    panel = ask_in(page, lang, shop_workbook(tmp_path / "门店销售.xlsx"), "哪个门店的销售额总和最高？")
    expect(panel.locator(".status-badge")).to_have_text(t("status_done", lang), timeout=RUN_TIMEOUT_MS)
    card = panel.locator("section.answer")
    chart, table = card.locator("[data-answer-chart]"), card.locator("[data-result-table]")
    expect(chart).to_be_visible()
    expect(chart.locator("[data-chart-canvas]")).to_be_visible()

    # the totals as pandas computes them, largest first, as the table shows them
    frame = pd.DataFrame(shop_rows(), columns=["门店", "月份", "销售额"])
    totals = frame.groupby("门店")["销售额"].sum().sort_values(ascending=False)
    names = table.locator("tbody th").all_inner_texts()
    assert names == list(totals.index), names
    assert table.locator("tbody td").all_inner_texts() == [f"{v:,.0f}" for v in totals], "the table's totals"

    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        expect(chart.locator("[data-chart-canvas]")).to_be_visible()
        page.wait_for_timeout(150)  # the chart redraws for the new width
        order = [
            card.locator(selector).first.bounding_box()
            for selector in (
                "[data-reading-chips]",
                ".answer-body strong",
                "[data-chart-canvas]",
                "[data-result-table]",
                "[data-how-sure]",
            )
        ]
        assert all(box is not None for box in order)
        tops = [box["y"] for box in order]
        assert tops == sorted(tops), f"chips, headline, chart, table, how sure are not in that order at {width}: {tops}"
        canvas = order[2]
        assert canvas["x"] >= 0 and canvas["x"] + canvas["width"] <= width + 1, f"the chart overflows at {width} px"
        chart.scroll_into_view_if_needed()
        page.screenshot(path=str(shots(tmp_path) / f"answer-card-zh-{width}.png"), full_page=False)
        card.screenshot(path=str(shots(tmp_path) / f"answer-card-zh-{width}-card.png"))
        inner = card.bounding_box()
        assert inner is not None and canvas["width"] >= 0.85 * inner["width"], f"not the card's width at {width}"
        assert canvas["height"] >= 150

    # sort: the store column by name, then the totals from low to high
    first_before = table.locator("tbody th").first.inner_text()
    table.get_by_role("button", name="门店").click()
    expect(table.locator("thead th").first).to_have_attribute("aria-sort", "ascending")
    # names in the page's collation: Chinese by pinyin (bei, dong, nan, xi)
    assert table.locator("tbody th").all_inner_texts() == ["北站店", "东城店", "南湖店", "西城店"]
    table.get_by_role("button", name="门店").click()
    expect(table.locator("thead th").first).to_have_attribute("aria-sort", "descending")
    assert table.locator("tbody th").all_inner_texts() == ["西城店", "南湖店", "东城店", "北站店"]
    value_header = table.locator("thead th").nth(1)
    value_header.get_by_role("button").click()
    expect(value_header).to_have_attribute("aria-sort", "descending")
    value_header.get_by_role("button").click()
    expect(value_header).to_have_attribute("aria-sort", "ascending")
    ascending = [float(v) for v in table.locator("tbody td").evaluate_all("cs => cs.map(c => c.dataset.sortValue)")]
    assert ascending == sorted(totals.tolist()), ascending
    assert table.locator("tbody th").first.inner_text() == totals.index[-1] != first_before

    # switch: the table view hides the drawing and the PNG button; back to bars draws it again
    drawn = canvas_png(page)
    chart.get_by_role("button", name=t("chart_kind_table", lang)).click()
    expect(chart.locator("[data-chart-canvas]")).to_be_hidden()
    expect(chart.locator("[data-chart-png]")).to_be_hidden()
    expect(chart).to_have_attribute("data-shown", "table")
    expect(table).to_be_visible()
    card.screenshot(path=str(shots(tmp_path) / "answer-card-zh-390-as-table-sorted.png"))
    chart.get_by_role("button", name=t("chart_kind_bar", lang)).click()
    expect(chart.locator("[data-chart-canvas]")).to_be_visible()

    # the PNG: a real PNG as large as the drawing, named after the question
    with page.expect_download() as info:
        chart.get_by_role("button", name=t("chart_download_png", lang)).click()
    download = info.value
    saved = shots(tmp_path) / "downloaded-chart-zh.png"
    download.save_as(saved)
    width_px, height_px = png_size(saved.read_bytes())
    box = chart.locator("[data-chart-canvas]").bounding_box()
    # drawn again for the file: at least 720 px at twice the pixels, a title above the bars
    assert box is not None and width_px >= 1440 and height_px >= 2 * box["height"], (width_px, height_px, box)
    assert download.suggested_filename.endswith(".png") and "门店" in download.suggested_filename
    assert canvas_png(page) != "data:,", drawn[:40]

    # how sure in one line; the method and raw numbers behind one click
    expect(card.locator("[data-how-sure]")).to_contain_text(t("result_how_sure", lang, what="").strip())
    method = card.locator("details.answer-method")
    expect(method.locator("table")).to_be_hidden()
    method.locator("summary").click()
    expect(method.locator("table")).to_be_visible()
    assert page.errors == [], page.errors


def test_a_forecast_is_a_line_that_switches_to_bars(page_for, tmp_path: Path) -> None:
    page, expect, lang = page_for("en"), playwright_api.expect, "en"
    panel = ask_in(page, lang, shop_workbook(tmp_path / "shop.xlsx"), "Forecast 销售额 for the next 3 months")
    # a forecast is confirmed first (a high-risk method): go ahead
    form = panel.locator("form.question")
    expect(form.or_(panel.locator(".status-badge", has_text=t("status_done", lang)))).to_be_visible(
        timeout=RUN_TIMEOUT_MS
    )
    if form.count():
        form.locator("input[type=radio]").first.check()
        with page.expect_navigation():
            form.get_by_role("button", name=t("send_answer", lang)).click()
        panel = page.locator("#run")
    expect(panel.locator(".status-badge")).to_have_text(t("status_done", lang), timeout=RUN_TIMEOUT_MS)
    card = panel.locator("section.answer")
    chart, table = card.locator("[data-answer-chart]"), card.locator("[data-result-table]")
    expect(chart).to_be_visible()
    expect(chart).to_have_attribute("data-shown", "line")
    assert table.locator("tbody tr").count() == 3, table.inner_text()
    headers = table.locator("thead th").all_inner_texts()
    assert headers[1:] == [t("result_stat_" + s, lang) for s in ("forecast", "lower", "upper")], headers
    # the months as the answer words them, and the known months drawn before the forecast, which is
    # lighter and dashed (its colour is on the canvas) under an Actual / Forecast legend
    assert table.locator("tbody th").all_inner_texts() == ["Jan 2025", "Feb 2025", "Mar 2025"]
    data = json.loads(chart.get_attribute("data-chart") or "{}")
    assert [row[0] for row in data["chart"]["history"]][-2:] == ["Nov 2024", "Dec 2024"]
    assert data["chart"]["legend"] == {"actual": t("chart_actual", lang), "forecast": t("chart_forecast", lang)}
    assert page.evaluate(FORECAST_DRAWN), "no forecast-coloured pixels: the forecast is not drawn apart"
    line = canvas_png(page)
    chart.get_by_role("button", name=t("chart_kind_bar", lang)).click()
    expect(chart).to_have_attribute("data-shown", "bar")
    bars = canvas_png(page)
    assert bars != line, "switching to bars did not change the drawing"
    chart.get_by_role("button", name=t("chart_kind_line", lang)).click()
    expect(chart).to_have_attribute("data-shown", "line")
    assert canvas_png(page) == line, "back to the line is not the same line"
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(150)
        chart.scroll_into_view_if_needed()
        box = chart.locator("[data-chart-canvas]").bounding_box()
        assert box is not None and box["x"] + box["width"] <= width + 1
        page.screenshot(path=str(shots(tmp_path) / f"answer-forecast-en-{width}.png"), full_page=False)
    assert page.errors == [], page.errors
