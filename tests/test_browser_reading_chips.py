"""The reading's chips in a real browser (issue 24 point 4): the answer opens with how the question was
read, each role is a chip, and changing the measure chip from 销量 to 销售额 re-runs the question: the
new run's headline names the other store. Uses test_browser's server and Chromium fixtures."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from openpyxl import Workbook

from app.web.i18n import t
from tests.test_browser import PAGE_TIMEOUT_MS, RUN_TIMEOUT_MS, browser, live_server, playwright_api  # noqa: F401

pytestmark = pytest.mark.slow


def shop_workbook(path: Path) -> Path:
    """Three stores: A sells the most units (销量), B takes the most money (销售额)."""
    book = Workbook()
    sheet = book.active
    sheet.title = "门店"
    sheet.append(["门店", "销量", "销售额"])
    for day in range(12):
        sheet.append(["A", 90 + day, 1800.5 + 7 * day])
        sheet.append(["B", 30 + day, 5200.25 + 11 * day])
        sheet.append(["C", 55 + day, 3100.75 + 5 * day])
    book.save(path)
    return path


def scroll_to(chips) -> None:
    """Scroll the chips into view. The run panel is drawn again once after its run is done (the final page
    replaces the streamed one), and an element found just before that is detached under the scroll: found
    again, a few times (a locator re-resolves on each try)."""
    from playwright.sync_api import Error

    for attempt in range(5):
        try:
            chips.scroll_into_view_if_needed()
            return
        except Error as exc:
            if "not attached" not in str(exc) or attempt == 4:
                raise
            time.sleep(0.2)


@pytest.fixture
def zh_page(browser, live_server: str):  # noqa: F811 (the fixtures imported above)
    context = browser.new_context(base_url=live_server, locale="zh-CN", viewport={"width": 1280, "height": 900})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    try:
        yield page
    finally:
        context.close()


def test_changing_the_measure_chip_reruns_and_changes_the_headline(zh_page, tmp_path: Path) -> None:
    page, expect = zh_page, playwright_api.expect
    page.goto("/?lang=zh")
    page.fill("#ws-name", "门店")
    with page.expect_navigation():
        page.get_by_role("button", name=t("create", "zh"), exact=True).click()
    page.set_input_files("#upload-file", str(shop_workbook(tmp_path / "shop.xlsx")))
    with page.expect_navigation():
        page.get_by_role("button", name=t("upload", "zh"), exact=True).click()
    expect(page.locator("#datasets article.dataset").first).to_be_visible()

    page.get_by_role("textbox", name=t("ask", "zh")).fill("哪个门店的销量总和最高？")
    with page.expect_navigation():
        page.get_by_role("button", name=t("ask_button", "zh"), exact=True).click()
    panel = page.locator("#run")
    expect(panel.locator(".status-badge")).to_have_text(t("status_done", "zh"), timeout=RUN_TIMEOUT_MS)
    body = panel.locator(".answer-body")
    expect(body).to_contain_text("理解为：按 门店 计算 销量 的总和。")
    headline = body.locator("strong").first.inner_text()
    assert headline.startswith("A "), headline
    first_run = panel.get_attribute("data-run-id")

    # the chips: one per role, the measure a labelled select offering the other number
    chips = panel.locator("[data-reading-chips]")
    expect(chips).to_be_visible()
    measure = chips.get_by_label(t("reading_role_measure", "zh"))
    expect(measure).to_be_visible()
    expect(measure.locator("option:checked")).to_have_text("销量")
    expect(chips.locator("[data-chip-submit]").first).to_be_hidden()  # with scripts, the choice itself re-runs
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        scroll_to(chips)
        page.screenshot(path=str(tmp_path / f"chips-{width}.png"), full_page=False)
        box = chips.bounding_box()
        assert box is not None and box["x"] + box["width"] <= width + 1, f"the chips overflow the page at {width} px"

    # keyboard: an arrow only moves to 销售额 (and shows Re-run); Enter re-runs. The page moves to the
    # new run, which streams and finishes.
    measure.focus()
    page.keyboard.press("ArrowDown")
    expect(measure).to_have_value("销售额")
    expect(chips.locator("form[data-chip='measure'] [data-chip-submit]")).to_be_visible()
    assert panel.get_attribute("data-run-id") == first_run, "an arrow key alone re-ran the question"
    started = time.monotonic()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    panel = page.locator("#run")
    expect(panel).not_to_have_attribute("data-run-id", first_run or "")
    expect(panel.locator(".run-question")).to_have_text("哪个门店的销量总和最高？")
    expect(panel.locator(".status-badge")).to_have_text(t("status_done", "zh"), timeout=RUN_TIMEOUT_MS)
    expect(panel.locator(".answer-body")).to_contain_text("理解为：按 门店 计算 销售额 的总和。")
    rerun_s = time.monotonic() - started
    changed = panel.locator(".answer-body strong").first.inner_text()
    assert changed != headline and changed.startswith("B "), changed
    chip = panel.get_by_label(t("reading_role_measure", "zh"))
    expect(chip.locator("option:checked")).to_contain_text("销售额")
    expect(chip.locator("option:checked")).to_contain_text(t("reading_how_answer", "zh"))
    # the pointer's choice re-runs at once: the kind chip, from total to share
    kind = panel.get_by_label(t("reading_role_kind", "zh"))
    second_run = panel.get_attribute("data-run-id")
    with page.expect_navigation():
        kind.select_option("share")
    panel = page.locator("#run")
    expect(panel).not_to_have_attribute("data-run-id", second_run or "")
    expect(panel.locator(".status-badge")).to_have_text(t("status_done", "zh"), timeout=RUN_TIMEOUT_MS)
    expect(panel.locator(".answer-body")).to_contain_text("理解为：各 门店 占 销售额 的比重。")
    page.set_viewport_size({"width": 390, "height": 900})
    scroll_to(panel.locator("[data-reading-chips]"))
    page.screenshot(path=str(tmp_path / "chips-rerun-390.png"), full_page=False)
    print(f"chip re-run: {rerun_s:.2f} s from the choice to the new answer")
    (Path("/tmp") / "chips-rerun-seconds.txt").write_text(f"{rerun_s:.3f}\n")
    assert page.errors == [], page.errors
