"""A shop's own log asked about in the other language and in everyday words (issue 24, the lead's milk-tea
shop and gym files): an English question on Chinese headers reaches the columns it means by the dictionary
and the embedding, both files in one workspace are told apart by meaning, a share owned by a yes/no column
is that group's part of the total, and 分别 with a money column asks each group's total. The tables are
small and made here; the expected numbers come from pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from openpyxl import Workbook

from analysis_tools.base import ToolContext
from analysis_tools.common import fmt_num
from analysis_tools.plot_comparison import plot_pie
from app.analyst.answer import spaced_latin
from app.analyst.totals import both_sides_named
from app.understanding import bilingual, semantic
from app.understanding.dataset_choice import choose_dataset
from tests.test_builtin_question_reading import seen
from tests.test_builtin_understanding import Session, call, headline

SHOPS = ["西湖店", "东门店", "南站店"]


def tea_log(tmp_path, days: int = 12):
    """A milk-tea shop's log as a shop keeps it: three shops, members and others each day, cups and takings
    under a merged two-row header (销售情况 over 杯数 and 销售额（元）), a 合计 row at the bottom."""
    rng = np.random.default_rng(3)
    rows = []
    for day in pd.date_range("2024-03-01", periods=days):
        for shop, base in zip(SHOPS, (40, 25, 60), strict=True):
            for member in ("是", "否"):
                cups = int(rng.integers(base, base + 30))
                rows.append([shop, day.date(), cups, round(cups * float(rng.uniform(14, 18)), 1), member])
    frame = pd.DataFrame(rows, columns=["门店", "日期", "杯数", "销售额", "会员"])
    book = Workbook()
    sheet = book.active
    sheet.append(["门店", "日期", "销售情况", None, "会员"])
    sheet.append([None, None, "杯数", "销售额（元）", None])
    for cells in ("A1:A2", "B1:B2", "C1:D1", "E1:E2"):
        sheet.merge_cells(cells)
    for row in rows:
        sheet.append(row)
    sheet.append(["合计", None, int(frame["杯数"].sum()), round(float(frame["销售额"].sum()), 1), None])
    path = tmp_path / "奶茶流水.xlsx"
    book.save(path)
    return path, frame


CUPS, TAKINGS = "销售情况 / 杯数", "销售情况 / 销售额（元）"
NAMES = ["门店", "日期", CUPS, TAKINGS, "会员"]


# --- 1. English words on Chinese headers ---------------------------------------------------------------
def test_a_known_word_meets_a_wider_english_word_by_its_head_character() -> None:
    # CC-CEDICT glosses 门店 "(retail) store" only; its head 店 is "inn; shop; store": a shop is what 门店 is
    assert not any("shop" in sense for sense in bilingual.dictionary_senses("门店"))
    assert bilingual.strength("shop", "门店") == bilingual.CHARACTER_SHARE < 1.0
    # the head character nudges the embedding's lead; it never takes a column alone
    assert semantic.bridged_column("shop", ["门店", "日期", "杯数", "会员"]) is None
    assert semantic.best_column("shop", NAMES) == "门店"
    # a word whose own senses meet the English is read by them, not by its head (会员 "member")
    # and a question's own Chinese words are read by their senses only: 行驶 "to travel" is no "speed" (驶)
    assert bilingual.strength("行驶距离", "speed") == 0.0
    assert bilingual.strength("member", "会员") == 1.0


@pytest.mark.slow
def test_which_shop_sold_the_most_cups_ranks_the_shops_by_their_total_cups(tmp_path):
    path, frame = tea_log(tmp_path)
    run, calls = Session(tmp_path, path).ask("Which shop sold the most cups?")
    grouped = call(calls, "group_aggregate").arguments
    assert (grouped["group_columns"], grouped["value_columns"], grouped["agg"]) == (["门店"], [CUPS], "sum")
    totals = frame.groupby("门店")["杯数"].sum()
    top = totals.idxmax()
    assert top in headline(run) and fmt_num(totals[top]) in headline(run), headline(run)


# --- 2. which table, by the meaning of every word --------------------------------------------------------
def gym_members(tmp_path):
    """A gym's members in English: each row one member (Member is an identifier)."""
    rng = np.random.default_rng(5)
    plans = rng.choice(["Basic", "Premium", "Family"], 30)
    frame = pd.DataFrame(
        {
            "Member": [f"M{i:03d}" for i in range(30)],
            "Plan": plans,
            "Visits": rng.integers(1, 30, 30),
            "Monthly Fee": [{"Basic": 29.0, "Premium": 59.0, "Family": 89.0}[p] for p in plans],
            "Personal Trainer": rng.choice(["Yes", "No"], 30),
        }
    )
    path = tmp_path / "gym_members.csv"
    frame.to_csv(path, index=False)
    return path


def test_the_table_is_chosen_by_what_every_word_means_not_by_one_literal_header(tmp_path):
    tea, _ = tea_log(tmp_path)
    tables = [seen(tea), seen(gym_members(tmp_path))]
    # "members" is the gym's Member written out and the tea log's 会员 by the dictionary; "cups" and
    # "revenue" are the tea log's alone, so the tea log is meant (before: the gym, by its header alone)
    for question in ("How many cups did members buy?", "What share of revenue comes from members?"):
        choice = choose_dataset(question, tables)
        assert choice.dataset is not None and choice.dataset["name"] == "奶茶流水", question
        tea_fit = next(f for f in choice.fits if f.dataset["name"] == "奶茶流水")
        assert tea_fit.kinds.get("会员") == "semantic", question
    # the gym's own questions stay the gym's
    for question in ("How many members have a personal trainer?", "What is the average monthly fee by plan?"):
        choice = choose_dataset(question, tables)
        assert choice.dataset is not None and choice.dataset["name"] == "gym_members", question
    # a word no table holds ("profit"): the question is about something neither has, so "shop" (门店 by
    # meaning) does not pick the tea log; the scope gate asks
    choice = choose_dataset("Which shop made the most profit?", tables)
    assert choice.how == "none" and all(f.score == 0 for f in choice.fits)


# --- 3. a share owned by a yes/no column ----------------------------------------------------------------
def test_a_pie_of_a_yes_no_column_draws_both_slices(tmp_path):
    # True and False are the slices' labels, never a mask over the totals
    frame = pd.DataFrame({"member": [True, False, True, True], "takings": [10.0, 30.0, 20.0, 40.0]})
    result = plot_pie(frame, group_column="member", value_column="takings", ctx=ToolContext(figures_dir=tmp_path))
    assert result.metrics["n_slices"] == 2 and result.metrics["total"] == pytest.approx(frame["takings"].sum())


@pytest.mark.slow
def test_the_share_of_a_number_from_a_yes_no_group_is_its_part_of_the_total(tmp_path):
    path, frame = tea_log(tmp_path)
    member = frame.groupby("会员")["销售额"].sum()
    share = member["是"] / member.sum() * 100
    session = Session(tmp_path, path)
    for question in ("What share of revenue comes from members?", "会员的销售额占多少比例"):
        run, calls = session.ask(question)
        grouped = call(calls, "group_aggregate").arguments
        assert (grouped["group_columns"], grouped["value_columns"], grouped["agg"]) == (["会员"], [TAKINGS], "sum")
        assert not any(c.tool in ("compare_two_groups", "value_counts") for c in calls), question
        pie = call(calls, "plot_pie")  # a yes/no column's two slices (True/False to the tool) both drawn
        assert pie.ok, pie.error
        said = headline(run)
        assert f"{share:.1f}%" in said and f"{100 - share:.1f}%" in said, said


# --- 4. 分别 with a money column: each side's total --------------------------------------------------------
def test_a_yes_no_grouping_named_with_its_opposite_names_both_sides() -> None:
    columns = [{"name": "会员", "type": "boolean"}, {"name": "Member", "type": "boolean"}]
    assert both_sides_named("会员和非会员的销售额分别是多少", columns, [(0, 2, "会员"), (4, 6, "会员")], "会员")
    assert both_sides_named("sales of members and non-members", columns, [(9, 16, "Member")], "Member")
    assert not both_sides_named("会员的销售额是多少", columns, [(0, 2, "会员")], "会员")
    assert not both_sides_named("sales in members", columns, [(9, 16, "Member")], "Member")  # "in" is no prefix


@pytest.mark.slow
def test_each_sides_amount_of_money_is_its_total(tmp_path):
    path, frame = tea_log(tmp_path)
    totals = frame.groupby("会员")["销售额"].sum()
    run, calls = Session(tmp_path, path).ask("会员和非会员的销售额分别是多少")
    grouped = call(calls, "group_aggregate").arguments
    assert (grouped["group_columns"], grouped["value_columns"], grouped["agg"]) == (["会员"], [TAKINGS], "sum")
    assert not any(c.tool == "compare_two_groups" for c in calls)  # not the averages compared by a test
    said = headline(run)
    assert fmt_num(totals["是"]) in said and fmt_num(totals["否"]) in said, said


# --- 5. Chinese text around Latin names -------------------------------------------------------------------
def test_a_latin_name_between_chinese_characters_is_set_off_by_spaces() -> None:
    assert spaced_latin("各Plan之间的差异（按Plan分组）") == "各 Plan 之间的差异（按 Plan 分组）"
    assert spaced_latin("按 Plan 分组：Basic 63.2%") == "按 Plan 分组：Basic 63.2%"  # already spaced, punctuation
    assert spaced_latin("2024年3月，增长5.6%") == "2024年3月，增长5.6%"  # numbers stay as written
