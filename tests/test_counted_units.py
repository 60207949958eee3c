"""A number of things named by what it counts (杯数, 箱数, 销量（箱）): asked for by its unit ("卖了多少箱"), and
added up per group. Found in a new user's trial: "每个月卖了多少杯？" on 杯数 and 销售额 gave each month's
销售额 (卖 read as sales), "哪个门店卖的杯数最多？" compared each shop's average cups a day; in English, "How many
copies of Dune did we sell?" on a Copies column compared each title's average copies per order."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from openpyxl import Workbook

from app.understanding.column_forms import counted_by_word, counts_things, names_things_en
from tests.test_builtin_understanding import Session
from tests.test_counts_answered import headline


@pytest.mark.parametrize(
    ("name", "adds_up"),
    [
        ("箱数", True),  # not in CC-CEDICT: boxes, counted
        ("出货情况 / 箱数", True),  # a merged header's leaf
        ("人数", True),  # "number of people"
        ("件数", True),  # "item count"
        ("销量（箱）", True),  # a bracket of one measure word
        ("分数", False),  # "score": a word of its own
        ("岁数", False),  # "age"
        ("体重（公斤）", False),  # a unit of weight: a level
        ("金额（元）", False),
    ],
)
def test_a_number_of_things_is_told_by_its_name(name, adds_up):
    assert counts_things(name) is adds_up


def bakery(path: Path) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    n = 90
    frame = pd.DataFrame(
        {
            "门店": rng.choice(["一店", "二店", "三店"], n),
            "日期": pd.date_range("2024-03-01", periods=n, freq="2D"),
            "箱数": rng.integers(5, 40, n),
        }
    )
    frame["金额（元）"] = frame["箱数"] * rng.choice([30, 45], n)
    book = Workbook()
    sheet = book.active
    sheet.append(["门店", "日期", "出货情况", None])
    sheet.append([None, None, "箱数", "金额（元）"])
    sheet.merge_cells("C1:D1")
    sheet.merge_cells("A1:A2")
    sheet.merge_cells("B1:B2")
    for row in frame.itertuples(index=False):
        sheet.append([row[0], row[1].to_pydatetime(), int(row[2]), int(row[3])])
    book.save(path)
    return frame


def test_an_amount_asked_in_a_columns_unit_is_that_column_not_the_verbs(tmp_path):
    path = tmp_path / "出货.xlsx"
    frame = bakery(path)
    run, calls = Session(tmp_path, path).ask("每个月卖了多少箱？")
    monthly = frame.groupby(frame["日期"].dt.to_period("M"))["箱数"].sum()
    said = headline(run)
    assert "箱数" in said and "金额" not in said, said
    assert all(f"{p.year}年{p.month}月 {n:,}" in said for p, n in monthly.items()), said
    assert not any(c.tool == "correlation" for c in calls)


def test_the_most_of_a_number_of_things_is_each_groups_total(tmp_path):
    path = tmp_path / "出货.xlsx"
    frame = bakery(path)
    run, _ = Session(tmp_path, path).ask("哪个门店卖的箱数最多？")
    totals = frame.groupby("门店")["箱数"].sum().sort_values(ascending=False)
    said = headline(run)
    assert said.startswith(f"**{totals.index[0]} 的 出货情况 / 箱数 合计最高：{totals.iloc[0]:,}") or (
        f"{totals.index[0]} 的 箱数 合计最高：{totals.iloc[0]:,}" in said
    ), said


@pytest.mark.parametrize(
    ("name", "plural"),
    [
        ("Copies", True),  # copies → copy
        ("Tickets Sold", True),  # the head word
        ("Seats Booked", True),
        ("Status", False),  # a word ending in s that is no plural
        ("Weight (lbs)", False),  # a bracketed unit is not the name
        ("Price ($)", False),
        ("Class", False),
    ],
)
def test_an_english_number_of_things_is_told_by_its_plural(name, plural):
    assert names_things_en(name) is plural


def bookshop(path: Path) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 240
    frame = pd.DataFrame(
        {
            "Date": pd.date_range("2025-02-01", periods=n, freq="D"),
            "Title": rng.choice(["Dune", "Emma", "Hamlet", "Ulysses"], n),
            "Copies": rng.integers(1, 6, n),
            "Price ($)": rng.choice([9.99, 14.5, 19.0], n),
        }
    )
    frame.to_csv(path, index=False)
    return frame


def test_how_many_things_of_one_named_group_is_that_groups_total(tmp_path):
    """ "How many copies of Dune": Dune's total copies (a plural whole-number column adds up), not Dune's
    average order set against the other titles'."""
    path = tmp_path / "bookshop.csv"
    frame = bookshop(path)
    run, calls = Session(tmp_path, path).ask("How many copies of Dune did we sell?")
    totals = frame.groupby("Title")["Copies"].sum()
    said = headline(run)
    assert f"Dune: {totals['Dune']:,}" in said and f"{totals.sum():,} in all" in said, said
    assert "average" not in said


def tea_shop(path: Path) -> pd.DataFrame:
    """A Chinese tea shop's days under a merged header: 销售情况 over 杯数 and 销售额（元）, and 会员 是/否."""
    rng = np.random.default_rng(9)
    n = 150
    frame = pd.DataFrame(
        {
            "门店": rng.choice(["西湖店", "东门店", "南站店"], n),
            "日期": pd.date_range("2025-01-01", periods=n, freq="D"),
            "杯数": rng.integers(20, 80, n),
            "会员": rng.choice(["是", "否"], n),
        }
    )
    frame["销售额（元）"] = frame["杯数"] * rng.choice([12, 15, 18], n)
    book = Workbook()
    sheet = book.active
    sheet.append(["门店", "日期", "销售情况", None, "会员"])
    sheet.append([None, None, "杯数", "销售额（元）", None])
    for cells in ("A1:A2", "B1:B2", "C1:D1", "E1:E2"):
        sheet.merge_cells(cells)
    for row in frame.itertuples(index=False):
        sheet.append([row.门店, row.日期.to_pydatetime(), int(row.杯数), int(row._4), row.会员])
    book.save(path)
    return frame


def test_cups_counted_in_english_are_the_chinese_count_of_cups(tmp_path):
    """ "How many cups did we sell in total?" on 杯数: cups is what 杯数 counts (杯: "cup" in CC-CEDICT), so its
    total, not a count of rows nor a relationship of cups with 销售额 (which "sell" names)."""
    path = tmp_path / "tea.xlsx"
    frame = tea_shop(path)
    columns = [{"name": "销售情况 / 杯数", "type": "integer"}, {"name": "销售情况 / 销售额（元）", "type": "integer"}]
    assert counted_by_word("cups", columns) == "销售情况 / 杯数" and counted_by_word("yuan", columns) is None
    session = Session(tmp_path, path)
    run, calls = session.ask("How many cups did we sell in total?")
    assert f"{frame['杯数'].sum():,}" in headline(run) and not any(c.tool == "correlation" for c in calls)
    for who, kept in (("members", "是"), ("non-members", "否")):
        run, _ = session.ask(f"How many cups did {who} buy?")
        said = headline(run)
        assert f"Total 杯数: {frame.loc[frame['会员'] == kept, '杯数'].sum():,}" in said, (who, said)
