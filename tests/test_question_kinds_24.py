"""Kinds of question the built-in analyst answers generally (issue 24 point 3), in English and Chinese
and in English on Chinese headers: the top/bottom N rows against the top/bottom N groups (told apart
by the data: one row per thing, or many rows per value), filters on a value, a yes/no or a number
(also in a follow-up), the rate of a yes/no outcome per group, each group's share of a total (of a
measure, or of the rows when none is named), and the calendar period with the highest figure.

The questions were written for these tests on two small generated tables (orders of a shop, children
of a kindergarten); every expected figure is computed here with pandas, never read from Verity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis_tools.common import fmt_num
from tests.test_builtin_understanding import Session, call, headline

pytestmark = pytest.mark.slow

BRANCHES_ZH = {"High Street": "中山路", "Station": "车站", "Market": "市场", "Harbour": "港口"}
SHOP_ZH = ["订单号", "客户", "门店", "日期", "金额", "会员卡", "等级"]
KIDS_EN = ["Name", "Class", "Age", "Height", "Allergic", "Pocket money"]


def shop(zh: bool = False) -> pd.DataFrame:
    """120 orders over 2024: an order number, a customer (40, most order several times), a branch, a
    date, an amount, a yes/no loyalty card and a class code."""
    rng = np.random.default_rng(5)
    n = 120
    frame = pd.DataFrame(
        {
            "Order ID": [f"A{1000 + i}" for i in range(n)],
            "Customer": rng.choice([f"C{i:02d}" for i in range(40)], n),
            "Branch": rng.choice(list(BRANCHES_ZH), n),
            "Date": pd.date_range("2024-01-03", periods=n, freq="3D"),
            "Amount": rng.gamma(2.0, 60.0, n).round(2),
            "Loyalty card": rng.choice(["Yes", "No"], n, p=[0.4, 0.6]),
            "Class": rng.choice([1, 2, 3], n),
        }
    )
    if zh:
        frame.columns = SHOP_ZH
        frame["门店"] = frame["门店"].map(BRANCHES_ZH)
        frame["会员卡"] = frame["会员卡"].map({"Yes": "是", "No": "否"})
    return frame


def kids(zh: bool = True) -> pd.DataFrame:
    """90 children: a name each, a class, an age, a height, allergic or not (是/否, Y/N), pocket money."""
    rng = np.random.default_rng(11)
    n = 90
    frame = pd.DataFrame(
        {
            "姓名": [f"孩子{i:03d}" for i in range(n)],
            "班级": rng.choice(["一班", "二班", "三班"], n),
            "年龄": rng.integers(3, 8, n),
            "身高": rng.normal(110, 8, n).round(1),
            "是否过敏": rng.choice(["是", "否"], n, p=[0.3, 0.7]),
            "零花钱": rng.gamma(2.0, 10.0, n).round(1),
        }
    )
    if not zh:
        frame.columns = KIDS_EN
        frame["Class"] = frame["Class"].map({"一班": "Class 1", "二班": "Class 2", "三班": "Class 3"})
        frame["Allergic"] = frame["Allergic"].map({"是": "Y", "否": "N"})
    return frame


def session_on(tmp_path: Path, frame: pd.DataFrame, name: str) -> Session:
    path = tmp_path / "data" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return Session(tmp_path, path)


def ask(tmp_path: Path, frame: pd.DataFrame, name: str, question: str, answers: list[str] | None = None):
    return session_on(tmp_path, frame, name).ask(question, answers)


def listed_in_order(text: str, labels: list[str]) -> bool:
    """Whether every label is in the text, in this order."""
    at = [text.find(label) for label in labels]
    return all(a >= 0 for a in at) and at == sorted(at)


# --- a) the top/bottom N rows, and the top/bottom N groups -------------------------------------------
@pytest.mark.parametrize(
    ("zh", "question", "n", "bottom"),
    [
        (False, "What are the five most expensive orders?", 5, False),
        (False, "the 3 cheapest orders", 3, True),
        (True, "金额最高的五个订单是哪些？", 5, False),
        (True, "五个最便宜的订单", 5, True),
    ],
)
def test_the_n_largest_rows_are_listed_by_the_column_that_names_each_row(tmp_path, zh, question, n, bottom):
    frame = shop(zh)
    amount, order = ("金额", "订单号") if zh else ("Amount", "Order ID")
    run, calls = ask(tmp_path, frame, "订单.csv" if zh else "orders.csv", question)
    ranked = call(calls, "rank_values")
    assert ranked.arguments["label_columns"] == [order] and "group_column" not in ranked.arguments
    expected = frame.nsmallest(n, amount) if bottom else frame.nlargest(n, amount)
    assert [ranked.metrics[f"rank.{i}.label"] for i in range(1, n + 1)] == expected[order].tolist()
    assert listed_in_order(headline(run), [f"{o} {fmt_num(a)}" for o, a in zip(expected[order], expected[amount])])
    assert not any(c.tool == "group_aggregate" for c in calls)


def test_the_n_tallest_children_are_rows_named_by_name_or_by_row_number(tmp_path):
    frame = kids(zh=False)
    run, calls = ask(tmp_path, frame, "kids.csv", "Who are the three tallest children?")
    expected = frame.nlargest(3, "Height")
    assert call(calls, "rank_values").arguments["label_columns"] == ["Name"]
    assert listed_in_order(headline(run), [f"{n} {fmt_num(h)}" for n, h in zip(expected["Name"], expected["Height"])])

    # 姓名 is personal data: the rows are still ranked, by their row numbers (1-based data rows)
    frame = kids(zh=True)
    run, calls = ask(tmp_path / "zh", frame, "幼儿园.csv", "身高最高的三个孩子是谁？")
    ranked = call(calls, "rank_values")
    assert "group_column" not in ranked.arguments and ranked.arguments["order"] == "largest"
    rows = [f"第 {i + 1} 行 {fmt_num(h)}" for i, h in frame["身高"].nlargest(3).items()]
    assert listed_in_order(headline(run), rows)


@pytest.mark.parametrize(
    ("zh", "question"),
    [(False, "Which three customers spent least?"), (True, "哪三个客户消费最少？")],
)
def test_the_bottom_n_groups_of_many_are_their_lowest_totals(tmp_path, zh, question):
    frame = shop(zh)
    customer, amount = ("客户", "金额") if zh else ("Customer", "Amount")
    run, calls = ask(tmp_path, frame, "订单.csv" if zh else "orders.csv", question)
    ranked = call(calls, "rank_values")
    assert (ranked.arguments["group_column"], ranked.arguments["agg"]) == (customer, "sum")
    totals = frame.groupby(customer)[amount].sum().nsmallest(3)
    assert [ranked.metrics[f"rank.{i}.label"] for i in (1, 2, 3)] == totals.index.tolist()
    assert ranked.metrics["rank.1.value"] == pytest.approx(totals.iloc[0])
    assert listed_in_order(headline(run), [f"{c} {fmt_num(v)}" for c, v in totals.items()])
    assert ("最低" if zh else "lowest") in headline(run)


@pytest.mark.parametrize(
    ("zh", "question"),
    [
        (False, "Which three branches took the most money?"),
        (True, "哪三个门店的金额合计最多？"),
        (True, "Which three 门店 have the highest total 金额?"),  # English on Chinese headers
    ],
)
def test_the_top_n_groups_are_their_highest_totals(tmp_path, zh, question):
    frame = shop(zh)
    branch, amount = ("门店", "金额") if zh else ("Branch", "Amount")
    run, calls = ask(tmp_path, frame, "订单.csv" if zh else "orders.csv", question)
    grouped = call(calls, "group_aggregate")
    assert grouped.arguments["group_columns"] == [branch] and grouped.arguments["agg"] == "sum"
    totals = frame.groupby(branch)[amount].sum().nlargest(3)
    assert listed_in_order(headline(run), [f"{b} {fmt_num(v)}" for b, v in totals.items()])


# --- b) filters ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("zh", "question", "condition"),
    [
        (False, "Average Amount by Branch, only orders over 100", ("Amount", ">", 100)),
        (False, "Average Amount by Branch, only orders where Loyalty card is No", ("Loyalty card", "==", "No")),
        (True, "只看会员卡为是的，各门店平均金额是多少？", ("会员卡", "==", "是")),
        (True, "Average 金额 by 门店, only 会员卡 = 是", ("会员卡", "==", "是")),  # English on Chinese headers
    ],
)
def test_a_filter_keeps_its_rows_and_the_named_grouping_is_compared(tmp_path, zh, question, condition):
    frame = shop(zh)
    branch, amount = ("门店", "金额") if zh else ("Branch", "Amount")
    run, calls = ask(tmp_path, frame, "订单.csv" if zh else "orders.csv", question)
    column, op, value = condition
    kept = call(calls, "filter_rows")
    assert kept.arguments["conditions"] == [{"column": column, "op": op, "value": value}]
    rows = frame[frame[column] > value] if op == ">" else frame[frame[column] == value]
    compared = call(calls, "compare_groups")
    assert (compared.arguments["group_column"], compared.arguments["dataset"]) == (branch, kept.arguments["output"])
    assert compared.metrics["n"] == len(rows)
    means = rows.groupby(branch)[amount].mean()
    for name, mean in means.items():
        assert compared.metrics[f"mean.{name}"] == pytest.approx(mean, rel=1e-9)
    assert fmt_num(means.max()) in headline(run)


@pytest.mark.parametrize(
    ("zh", "question", "measure", "keep"),
    [
        (False, "What is the average pocket money, just for Class 2?", "Pocket money", ("Class", "Class 2")),
        (True, "只看二班的，平均零花钱是多少？", "零花钱", ("班级", "二班")),
        (True, "年龄大于5岁的孩子，平均身高是多少？", "身高", ("年龄", 5)),
    ],
)
def test_a_filter_on_one_value_or_a_threshold_answers_the_kept_rows_average(tmp_path, zh, question, measure, keep):
    frame = kids(zh)
    run, calls = ask(tmp_path, frame, "幼儿园.csv" if zh else "kids.csv", question)
    column, value = keep
    rows = frame[frame[column] > value] if isinstance(value, int) else frame[frame[column] == value]
    described = call(calls, "describe_columns")
    assert described.arguments["dataset"] == call(calls, "filter_rows").arguments["output"]
    assert described.metrics[f"{measure}.n"] == len(rows)
    assert fmt_num(rows[measure].mean()) in headline(run)


def test_follow_ups_rerun_the_earlier_question_on_the_filtered_rows(tmp_path):
    frame = kids(zh=False)
    session = session_on(tmp_path, frame, "kids.csv")
    session.ask("Does Height differ by Class?")
    run, calls = session.ask("And only for children older than 5?")
    kept = call(calls, "filter_rows")
    assert kept.arguments["conditions"] == [{"column": "Age", "op": ">", "value": 5}]
    compared = call(calls, "compare_groups")
    assert (compared.arguments["value_column"], compared.arguments["group_column"]) == ("Height", "Class")
    older = frame[frame["Age"] > 5]
    assert compared.metrics["n"] == len(older)
    assert compared.metrics["mean.Class 3"] == pytest.approx(older[older["Class"] == "Class 3"]["Height"].mean())

    zh = shop(zh=True)
    session = session_on(tmp_path / "zh", zh, "订单.csv")
    session.ask("各门店的平均金额是多少？")
    run, calls = session.ask("那只看等级2的呢？")
    assert call(calls, "filter_rows").arguments["conditions"] == [{"column": "等级", "op": "==", "value": "2"}]
    compared = call(calls, "compare_groups")
    means = zh[zh["等级"] == 2].groupby("门店")["金额"].mean()
    assert compared.arguments["group_column"] == "门店" and compared.metrics["n"] == int((zh["等级"] == 2).sum())
    assert fmt_num(means.max()) in headline(run)


# --- c) the rate of a yes/no outcome per group -----------------------------------------------------------
@pytest.mark.parametrize(
    ("data", "question", "outcome", "group", "yes"),
    [
        ("shop_en", "What share of customers used a loyalty card, per branch?", "Loyalty card", "Branch", "Yes"),
        ("shop_zh", "每个门店有多少比例的客户有会员卡？", "会员卡", "门店", "是"),
        ("shop_zh", "What share of customers have a 会员卡, per 门店?", "会员卡", "门店", "是"),
        ("kids_zh", "每个班有多少比例的孩子过敏？", "是否过敏", "班级", "是"),
        ("kids_zh", "哪个班过敏的比例最高？", "是否过敏", "班级", "是"),
        ("kids_en", "What share of children are allergic, per class?", "Allergic", "Class", "Y"),
    ],
)
def test_the_rate_of_a_yes_no_outcome_per_group(tmp_path, data, question, outcome, group, yes):
    frame = shop(data.endswith("zh")) if data.startswith("shop") else kids(data.endswith("zh"))
    run, calls = ask(tmp_path, frame, "data.csv", question)
    tested = call(calls, "proportion_test")
    assert (tested.arguments["value_column"], tested.arguments["group_column"]) == (outcome, group)
    assert not any(c.tool in ("group_aggregate", "compare_groups") for c in calls)  # no number summed instead
    rates = (frame[outcome] == yes).groupby(frame[group]).mean().sort_values(ascending=False)
    # the highest and the lowest named with their percentages, highest first
    text = headline(run)
    assert listed_in_order(text, [f"{rates.index[0]}", f"{rates.iloc[0] * 100:.1f}%"])
    assert f"{rates.index[-1]}" in text and f"{rates.iloc[-1] * 100:.1f}%" in text


def test_a_rate_of_something_no_column_is_called_offers_the_yes_no_column_first(tmp_path):
    frame = kids(zh=False)
    session = session_on(tmp_path, frame, "kids.csv")
    run, calls = session.ask("Which class has the highest allergy rate?", answers=["Allergic"])
    # "allergy" names no column: the matcher reads it as Allergic by meaning (an assumed reading, no
    # question), or, if unsure, asks with the yes/no column offered first
    assert not session.asked or session.asked[0]["options"][0] == "Allergic"
    tested = call(calls, "proportion_test")
    assert (tested.arguments["value_column"], tested.arguments["group_column"]) == ("Allergic", "Class")
    rates = (frame["Allergic"] == "Y").groupby(frame["Class"]).mean()
    assert f"{rates.idxmax()}: {rates.max() * 100:.1f}%" in headline(run)


def late_deliveries(zh: bool) -> pd.DataFrame:
    """120 deliveries of four shops, each late or not and paid online or not (two yes/no columns), an amount."""
    rng = np.random.default_rng(23)
    n = 120
    shops = rng.choice(["North", "South", "East", "West"], n)
    late = rng.random(n) < np.select([shops == "North", shops == "South"], [0.6, 0.1], 0.3)
    online = rng.random(n) < 0.5
    frame = pd.DataFrame({"Shop": shops, "Late": late, "Online": online, "Amount": rng.gamma(2.0, 40.0, n).round(2)})
    yes_no = {True: "是", False: "否"} if zh else {True: "Y", False: "N"}
    frame["Late"], frame["Online"] = frame["Late"].map(yes_no), frame["Online"].map(yes_no)
    names = ["门店", "是否超时", "是否会员", "金额"] if zh else ["Shop", "Delivered Late", "Paid Online", "Amount"]
    frame.columns = names
    return frame


@pytest.mark.parametrize(
    ("zh", "question", "outcome"),
    [
        (True, "每个门店有多大比例的外卖送得太晚了？", "是否超时"),
        (False, "每家分店有多少比例的订单是线上付款的？", "Paid Online"),
    ],
)
def test_of_several_yes_no_columns_the_rate_is_of_the_one_the_event_means(tmp_path, zh, question, outcome):
    # two yes/no columns and an event said in words neither is called (a verb, a clause): the rate is of the
    # yes/no column closest in meaning to those words, per group, never the share of the rows by group
    frame = late_deliveries(zh)
    run, calls = ask(tmp_path, frame, "deliveries.csv", question)
    group = "门店" if zh else "Shop"
    tested = call(calls, "proportion_test")
    assert (tested.arguments["value_column"], tested.arguments["group_column"]) == (outcome, group)
    yes = "是" if zh else "Y"
    rates = (frame[outcome] == yes).groupby(frame[group]).mean().sort_values(ascending=False)
    text = headline(run)
    assert listed_in_order(text, [f"{rates.index[0]}", f"{rates.iloc[0] * 100:.1f}%"])


@pytest.mark.parametrize(
    ("frame", "question", "group"),
    [
        (lambda: late_deliveries(zh=True), "各门店占订单的比例", "门店"),
        (lambda: late_deliveries(zh=True), "各门店的外卖各占多大比例？", "门店"),
    ],
)
def test_a_share_of_the_rows_by_group_stays_one_with_several_yes_no_columns(tmp_path, frame, question, group):
    run, calls = ask(tmp_path, frame(), "data.csv", question)
    assert not any(c.tool == "proportion_test" for c in calls)
    pie = call(calls, "plot_pie")
    assert pie.arguments.get("column") == group and "value_column" not in pie.arguments


# --- d) every group's share of a total -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("data", "question", "group", "measure"),
    [
        ("shop_en", "What share of Amount does each branch bring?", "Branch", "Amount"),
        ("shop_zh", "各门店占金额的比例是多少？", "门店", "金额"),
        ("shop_zh", "What share of 金额 does each 门店 bring?", "门店", "金额"),
        ("kids_en", "What share of the pocket money does each class have?", "Class", "Pocket money"),
        ("shop_en", "What share of orders does each branch have?", "Branch", None),
        ("shop_zh", "各门店占订单的比例", "门店", None),
        ("kids_zh", "各班占孩子人数的比例", "班级", None),
    ],
)
def test_each_groups_share_of_the_total_or_of_the_rows(tmp_path, data, question, group, measure):
    frame = shop(data.endswith("zh")) if data.startswith("shop") else kids(data.endswith("zh"))
    run, calls = ask(tmp_path, frame, "data.csv", question)
    pie = call(calls, "plot_pie")
    if measure:
        assert (pie.arguments["group_column"], pie.arguments["value_column"]) == (group, measure)
        parts = frame.groupby(group)[measure].sum()
    else:  # no measure named: each group's share of the rows, never of a default number
        assert pie.arguments.get("column") == group and "value_column" not in pie.arguments
        parts = frame.groupby(group).size()
    shares = (parts / parts.sum()).sort_values(ascending=False)
    for name, share in shares.items():
        assert pie.metrics[f"share.{name}"] == pytest.approx(share)
    assert listed_in_order(headline(run), [str(shares.index[0]), f"{shares.iloc[0] * 100:.1f}%"])
    assert all(f"{name} {share * 100:.1f}%" in headline(run) for name, share in shares.iloc[1:].items())


# --- e) which month (or quarter) had the highest figure -------------------------------------------------
@pytest.mark.parametrize(
    ("zh", "question", "freq", "agg", "lowest"),
    [
        (False, "Which month had the highest Amount?", "M", "sum", False),
        (False, "Which month had the lowest total Amount?", "M", "sum", True),
        (False, "Which quarter had the lowest Amount?", "Q", "sum", True),
        (True, "哪个月的金额最高？", "M", "sum", False),
        (True, "哪个月的金额最少？", "M", "sum", True),
        (True, "哪个季度的平均金额最低？", "Q", "mean", True),
        (True, "Which month had the highest 金额?", "M", "sum", False),
    ],
)
def test_the_calendar_period_with_the_highest_figure(tmp_path, zh, question, freq, agg, lowest):
    frame = shop(zh)
    date, amount = ("日期", "金额") if zh else ("Date", "Amount")
    run, calls = ask(tmp_path, frame, "订单.csv" if zh else "orders.csv", question)
    assert not any(c.tool == "seasonal_decompose" for c in calls)
    made = call(calls, "derive_column")
    assert made.arguments["part"] == ("year_month" if freq == "M" else "quarter")
    ranked = call(calls, "rank_values")
    assert ranked.arguments["agg"] == agg and ranked.arguments["dataset"] == made.arguments["output"]
    per_period = frame.groupby(frame[date].dt.to_period(freq))[amount].agg(agg)
    best = per_period.idxmin() if lowest else per_period.idxmax()
    assert ranked.metrics["rank.1.value"] == pytest.approx(per_period[best])
    said = (
        (f"{best.year}年{best.month}月" if zh else best.strftime("%b %Y"))
        if freq == "M"
        else (f"{best.year}年第{best.quarter}季度" if zh else f"Q{best.quarter} {best.year}")  # as people write it
    )
    assert headline(run).startswith(f"**{said}") and fmt_num(per_period[best]) in headline(run)


def test_the_period_question_keeps_its_filter_also_in_a_follow_up(tmp_path):
    frame = shop(zh=True)
    session = session_on(tmp_path, frame, "订单.csv")
    for asked, kept in (
        (["只看港口的，哪个月的金额最高？"], frame["门店"] == "港口"),
        (["哪个月的金额最高？", "那只看会员卡为是的呢？"], frame["会员卡"] == "是"),
    ):
        for question in asked:
            run, calls = session.ask(question)
        filtered = call(calls, "filter_rows")
        made = call(calls, "derive_column")
        ranked = call(calls, "rank_values")
        assert made.arguments["dataset"] == filtered.arguments["output"]
        assert ranked.arguments["dataset"] == made.arguments["output"]
        months = frame[kept].groupby(frame["日期"].dt.to_period("M"))["金额"].sum()
        best = months.idxmax()
        assert headline(run).startswith(f"**{best.year}年{best.month}月") and fmt_num(months.max()) in headline(run)


def test_a_new_question_after_a_filtered_one_reads_all_the_rows(tmp_path):
    """The filtered copy a question made (订单_港口) is that question's: a new question that is no follow-up
    is read on the whole table (a Chinese table name has no English words to be named by)."""
    frame = shop(zh=True)
    session = session_on(tmp_path, frame, "订单.csv")
    session.ask("只看港口的，平均金额是多少？")
    run, calls = session.ask("各门店的平均金额是多少？")
    compared = call(calls, "compare_groups")
    assert compared.arguments.get("dataset", "订单") == "订单" and compared.metrics["n"] == len(frame)
    assert not any(c.tool == "filter_rows" for c in calls)


@pytest.mark.parametrize(
    ("question", "freq", "label"),
    [
        ("Which year had the highest Sales?", "Y", lambda p: str(p.year)),
        ("哪一年的Sales最高？", "Y", lambda p: str(p.year)),
        ("Which week had the lowest Sales?", "W", None),
    ],
)
def test_a_period_coarser_than_the_rows_adds_its_rows_up(tmp_path, question, freq, label):
    """Two sales a day over three years: "which year" is each year's total, not the year of the largest
    single sale (a table of one row a year would rank its rows)."""
    rng = np.random.default_rng(3)
    days = pd.date_range("2022-01-01", "2024-12-31", freq="D")
    frame = pd.DataFrame({"Date": np.repeat(days, 2), "Sales": rng.gamma(3.0, 40.0, 2 * len(days)).round(2)})
    frame["Sales"] += np.where(frame["Date"].dt.year == 2023, 4.0, 0.0)  # one year clearly ahead
    run, calls = ask(tmp_path, frame, "sales.csv", question)
    ranked = call(calls, "rank_values")
    assert ranked.arguments["agg"] == "sum" and "group_column" in ranked.arguments
    totals = frame.groupby(frame["Date"].dt.to_period(freq))["Sales"].sum()
    lowest = "lowest" in question
    best = totals.idxmin() if lowest else totals.idxmax()
    assert ranked.metrics["rank.1.value"] == pytest.approx(totals[best])
    if label:
        assert headline(run).startswith(f"**{label(best)}")
    assert fmt_num(totals[best]) in headline(run)


def test_a_threshold_with_no_column_named_cuts_the_column_it_splits(tmp_path):
    """ "over 5" after a question on Height (95-130 cm): no height is under 5, so the cut is on the
    whole-number column the value splits (Age 3-7), not a filter that keeps every row."""
    frame = kids(zh=False)
    session = session_on(tmp_path, frame, "kids.csv")
    session.ask("Does Height differ by Class?")
    run, calls = session.ask("And only for children over 5?")
    assert call(calls, "filter_rows").arguments["conditions"] == [{"column": "Age", "op": ">", "value": 5}]
    assert call(calls, "compare_groups").metrics["n"] == int((frame["Age"] > 5).sum())


def test_a_share_of_the_kept_rows_only(tmp_path):
    """The yes/no column the question keeps rows by filters; it is not the rate asked for."""
    frame = shop(zh=True)
    run, calls = ask(tmp_path, frame, "订单.csv", "各门店占金额的比例，只看会员卡为是的")
    assert call(calls, "filter_rows").arguments["conditions"] == [{"column": "会员卡", "op": "==", "value": "是"}]
    assert not any(c.tool == "proportion_test" for c in calls)
    parts = frame[frame["会员卡"] == "是"].groupby("门店")["金额"].sum()
    shares = (parts / parts.sum()).sort_values(ascending=False)
    assert call(calls, "plot_pie").metrics[f"share.{shares.index[0]}"] == pytest.approx(shares.iloc[0])
    assert listed_in_order(headline(run), [str(shares.index[0]), f"{shares.iloc[0] * 100:.1f}%"])


# --- issue 24 point 4: filters that leave rows out ------------------------------------------------------
@pytest.mark.parametrize(
    ("zh", "question", "condition", "grouped"),
    [
        (False, "Average Amount by Branch for customers without a loyalty card", ("Loyalty card", "==", "No"), True),
        (False, "What is the average Amount of orders not from Harbour?", ("Branch", "!=", "Harbour"), False),
        (True, "没有会员卡的顾客平均金额是多少？", ("会员卡", "==", "否"), False),
        (True, "各门店的平均金额，除了车站以外", ("门店", "!=", "车站"), True),
        (True, "不是港口的订单，平均金额是多少？", ("门店", "!=", "港口"), False),
        (True, "Average 金额 by 门店, except 市场", ("门店", "!=", "市场"), True),  # English on Chinese headers
    ],
)
def test_a_negated_value_or_yes_no_column_keeps_the_other_rows(tmp_path, zh, question, condition, grouped):
    """A negator right before a value or a yes/no column's name (without, not, except, 没有, 不是, 除了…以外)
    keeps the rows that do not have it; a grouping whose value is left out still compares the others."""
    frame = shop(zh)
    branch, amount = ("门店", "金额") if zh else ("Branch", "Amount")
    run, calls = ask(tmp_path, frame, "订单.csv" if zh else "orders.csv", question)
    column, op, value = condition
    assert call(calls, "filter_rows").arguments["conditions"] == [{"column": column, "op": op, "value": value}]
    rows = frame[frame[column] == value] if op == "==" else frame[frame[column] != value]
    if grouped:
        compared = call(calls, "compare_groups")
        assert compared.arguments["group_column"] == branch and compared.metrics["n"] == len(rows)
        means = rows.groupby(branch)[amount].mean()
        assert value not in means.index or column != branch
        for name, mean in means.items():
            assert compared.metrics[f"mean.{name}"] == pytest.approx(mean, rel=1e-9)
        assert fmt_num(means.max()) in headline(run)
    else:
        described = call(calls, "describe_columns")
        assert described.metrics[f"{amount}.n"] == len(rows)
        assert described.metrics[f"{amount}.mean"] == pytest.approx(rows[amount].mean(), rel=1e-9)
        assert fmt_num(rows[amount].mean()) in headline(run)


# --- issue 24 point 4: days between two dates, per group ------------------------------------------------
def deliveries(zh: bool) -> pd.DataFrame:
    """60 orders: an order date, a delivery 1-8 days later, a region and an amount."""
    rng = np.random.default_rng(8)
    n = 60
    ordered = pd.Timestamp("2024-03-01") + pd.to_timedelta(rng.integers(0, 90, n), unit="D")
    frame = pd.DataFrame(
        {
            "Order ID": [f"T{i:03d}" for i in range(n)],
            "Region": rng.choice(["North", "South", "East"], n),
            "Order date": ordered,
            "Delivery date": ordered + pd.to_timedelta(rng.integers(1, 9, n), unit="D"),
            "Amount": rng.gamma(2.0, 50.0, n).round(2),
        }
    )
    if zh:
        frame.columns = ["订单号", "地区", "下单日期", "送达日期", "金额"]
        frame["地区"] = frame["地区"].map({"North": "北区", "South": "南区", "East": "东区"})
    return frame


@pytest.mark.parametrize(
    ("zh", "question"),
    [
        (False, "What is the average number of days from Order date to Delivery date by Region?"),
        (False, "How many days does delivery take on average in each Region, from order to delivery?"),
        (True, "各地区从下单到送达平均要多少天？"),
        (True, "Average days from 下单 to 送达 by 地区"),  # English on Chinese headers
    ],
)
def test_the_days_between_two_dates_per_group_are_ranked(tmp_path, zh, question):
    frame = deliveries(zh)
    start, end, region = ("下单日期", "送达日期", "地区") if zh else ("Order date", "Delivery date", "Region")
    run, calls = ask(tmp_path, frame, "配送.csv" if zh else "deliveries.csv", question)
    made = call(calls, "derive_column")
    assert made.arguments["expression"] == f"`{end}` - `{start}`"
    ranked = call(calls, "rank_values")
    assert (ranked.arguments["group_column"], ranked.arguments["agg"]) == (region, "mean")
    means = (frame[end] - frame[start]).dt.days.groupby(frame[region]).mean().sort_values(ascending=False)
    assert [ranked.metrics[f"rank.{i}.label"] for i in range(1, 4)] == means.index.tolist()
    assert ranked.metrics["rank.1.value"] == pytest.approx(means.iloc[0])
    assert listed_in_order(headline(run), [f"{g} {fmt_num(v)}" for g, v in means.items()])


# --- issue 24 point 4: the rate of one value of a column with more than two values ------------------------
@pytest.mark.parametrize(
    ("zh", "question"),
    [
        (False, "What share of orders were Class 2, by Branch?"),
        (True, "各门店等级2的订单占多少比例？"),
        (True, "等级2的订单在各门店中的比例是多少？"),
        (True, "What share of orders are 等级 2 in each 门店?"),  # English on Chinese headers
    ],
)
def test_the_rate_of_one_value_of_many_per_group(tmp_path, zh, question):
    """Class has three values: "Class 2" is the event (the rows with it against the rest), its rate per
    branch, highest named first — not each branch's share of the summed class codes."""
    frame = shop(zh)
    branch, grade = ("门店", "等级") if zh else ("Branch", "Class")
    run, calls = ask(tmp_path, frame, "订单.csv" if zh else "orders.csv", question)
    tested = call(calls, "proportion_test")
    assert (tested.arguments["value_column"], tested.arguments["group_column"]) == (grade, branch)
    assert str(tested.arguments["success_value"]) == "2"
    assert not any(c.tool == "plot_pie" for c in calls)
    rates = (frame[grade] == 2).groupby(frame[branch]).mean().sort_values(ascending=False)
    assert listed_in_order(headline(run), [str(rates.index[0]), f"{rates.iloc[0] * 100:.1f}%"])
    assert f"{rates.iloc[-1] * 100:.1f}%" in headline(run)


def test_a_yes_no_column_named_with_and_without_a_negator_is_compared_not_filtered(tmp_path):
    """没有会员卡的 … 比有会员卡的: both sides are named, so nothing is left out; the two are compared."""
    frame = shop(zh=True)
    run, calls = ask(tmp_path, frame, "订单.csv", "没有会员卡的顾客比有会员卡的顾客消费更多吗？")
    assert not any(c.tool == "filter_rows" for c in calls)
    compared = call(calls, "compare_two_groups")
    assert compared.arguments["group_column"] == "会员卡" and compared.metrics["n"] == len(frame)
