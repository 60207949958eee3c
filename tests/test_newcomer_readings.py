"""What a newcomer asks of the built-in analyst on sheets of their own (issue 24, a trial by a new user):
"每个科室的平均费用是多少？" answered with each group's average, not a test of whether they differ; quarters
as people write them (2024年第2季度 / Q2 2024). Files are built here; expected numbers come from pandas."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis_tools.common import fmt_num
from tests.test_builtin_understanding import Session, headline


def clinic(path: Path) -> Path:
    """A clinic's visits: four departments, surgery dearest; a fee per visit and whether insurance paid."""
    rng = np.random.default_rng(7)
    n = 80
    department = np.array(["内科", "外科", "儿科", "眼科"] * (n // 4))
    fee = np.round(rng.gamma(4, 50, n) + np.where(department == "外科", 200, 0), 1)
    pd.DataFrame(
        {
            "就诊日期": pd.date_range("2024-01-01", periods=n, freq="2D"),
            "科室": department,
            "费用": fee,
            "患者年龄": rng.integers(5, 80, n),
            "是否医保": rng.choice(["是", "否"], n),
        }
    ).to_excel(path, index=False)
    return path


def test_each_groups_average_asked_for_is_the_answer_not_a_test(tmp_path: Path) -> None:
    path = clinic(tmp_path / "clinic.xlsx")
    means = pd.read_excel(path).groupby("科室")["费用"].mean()
    session = Session(tmp_path, path)
    for question, language in (("每个科室的平均费用是多少？", "zh"), ("What is the average 费用 per 科室?", "en")):
        run, _ = session.ask(question, language=language)
        lead = headline(run)
        # every department's average is in the headline, the largest first
        places = [lead.find(f"{group} {fmt_num(value)}") for group, value in means.sort_values(ascending=False).items()]
        assert all(p >= 0 for p in places) and places == sorted(places), lead
        assert lead.startswith("**各 科室 的平均 费用" if language == "zh" else "**Average 费用 by 科室"), lead
        reading = run.answer.split("\n")[0]
        assert ("各 科室 的 费用 平均值" if language == "zh" else "the average 费用 of each 科室") in reading, reading
    # a follow-up narrowing it keeps answering with the averages, of the rows kept
    run, _ = session.ask("那只看是否医保为是的呢？", language="zh")
    frame = pd.read_excel(path)
    kept = frame[frame["是否医保"] == "是"].groupby("科室")["费用"].mean()
    lead = headline(run)
    assert lead.startswith("**各 科室 的平均 费用") and all(f"{g} {fmt_num(v)}" in lead for g, v in kept.items()), lead
    # whether two groups differ is still a comparison of the two
    run, _ = session.ask("内科和外科的平均费用有差别吗？", language="zh")
    assert "各 科室 的平均" not in headline(run) and "比较不同 科室" in run.answer.split("\n")[0]


def test_quarters_read_as_people_write_them(tmp_path: Path) -> None:
    path = clinic(tmp_path / "clinic.xlsx")
    frame = pd.read_excel(path)
    by_quarter = frame.groupby(frame["就诊日期"].dt.to_period("Q"))["费用"].sum()
    best = by_quarter.idxmax()
    session = Session(tmp_path, path)
    run, _ = session.ask("哪个季度的费用最高？", language="zh")
    lead = headline(run)
    assert f"{best.year}年第{best.quarter}季度" in lead and fmt_num(by_quarter.max()) in lead, lead
    assert "-Q" not in lead
    run, _ = session.ask("Which quarter had the highest 费用?", language="en")
    assert f"Q{best.quarter} {best.year}" in headline(run) and "-Q" not in headline(run), headline(run)


def test_the_top_rows_when_the_things_ranked_are_the_rows(tmp_path: Path) -> None:
    """ "费用最高的5次就诊" on 就诊日期, "which 5 orders …" on Order Date: the question ranks the events the rows are
    and names no grouping, so the rows are ranked, each shown by its date and categories (not the departments'
    totals); "which 3 areas …" names no such thing, and a grouping's totals answer it as before."""
    path = clinic(tmp_path / "clinic.xlsx")
    frame = pd.read_excel(path)
    top = frame.nlargest(5, "费用")
    run, calls = Session(tmp_path, path).ask("费用最高的5次就诊是哪些？", language="zh")
    ranked = [c for c in calls if c.tool == "rank_values"]
    assert ranked and not ranked[0].arguments.get("group_column"), [c.tool for c in calls]
    lead = headline(run)
    places = [lead.find(fmt_num(v)) for v in top["费用"]]
    assert all(p >= 0 for p in places) and places == sorted(places), lead
    assert (
        all(d in lead for d in top["科室"])
        and "外科 " + fmt_num(frame[frame["科室"] == "外科"]["费用"].sum()) not in lead
    )

    rng = np.random.default_rng(5)
    orders = pd.DataFrame(
        {
            "Order Date": pd.date_range("2023-01-01", periods=60, freq="3D").strftime("%Y-%m-%d"),
            "Region": rng.choice(["North", "South", "East"], 60),
            "Revenue": np.round(rng.uniform(100, 2000, 60), 2),
        }
    )
    orders.to_csv(sales := tmp_path / "orders.csv", index=False)
    session = Session(tmp_path / "orders", sales)
    run, calls = session.ask("Which 5 orders had the highest Revenue?", language="en")
    assert not call_of(calls).arguments.get("group_column"), [c.tool for c in calls]
    lead = headline(run)
    assert all(fmt_num(v) in lead for v in orders.nlargest(5, "Revenue")["Revenue"]), lead
    # a thing no grouping is close to in meaning, with no date column naming it: the rows too
    loads = pd.DataFrame(
        {
            "Depot": rng.choice(["Leeds", "York"], 40),
            "Driver": rng.choice(["Ann", "Bob", "Cy"], 40),
            "Weight (kg)": np.round(rng.uniform(5, 60, 40), 1),
        }
    )
    loads.to_csv(lorry := tmp_path / "loads.csv", index=False)
    run, calls = Session(tmp_path / "loads", lorry).ask("Which 4 loads were the heaviest?", language="en")
    assert not call_of(calls).arguments.get("group_column"), [c.tool for c in calls]
    assert all(fmt_num(v) in headline(run) for v in loads.nlargest(4, "Weight (kg)")["Weight (kg)"]), headline(run)
    run, calls = session.ask("Which 3 areas had the highest Revenue?", language="en")
    totals = orders.groupby("Region")["Revenue"].sum().sort_values(ascending=False)
    assert f"{totals.index[0]} {fmt_num(totals.iloc[0])}" in headline(run), headline(run)


def test_ranked_rows_are_shown_by_their_number_in_any_language(tmp_path: Path) -> None:
    """ "Which three orders had the highest 金额?" on a sheet whose order number is headed 单号: the rows are ranked,
    and each is shown by its number, which is how a reader finds it again (they were shown by date, city and channel only:
    the English word "orders" is no word of the Chinese header, so the number was not taken for the rows' names)."""
    rng = np.random.default_rng(11)
    n = 50
    orders = pd.DataFrame(
        {
            "单号": [f"D{7000 + i}" for i in range(n)],
            "下单日期": pd.date_range("2024-02-01", periods=n, freq="D").strftime("%Y-%m-%d"),
            "城市": rng.choice(["杭州", "苏州", "宁波"], n),
            "渠道": rng.choice(["门店", "网店"], n),
            "金额": np.round(rng.uniform(50, 900, n), 1),
        }
    )
    orders.to_csv(path := tmp_path / "orders.csv", index=False)
    run, calls = Session(tmp_path, path).ask("Which three orders had the highest 金额?", language="en")
    assert not call_of(calls).arguments.get("group_column"), [c.tool for c in calls]
    lead = headline(run)
    top = orders.nlargest(3, "金额")
    places = [lead.find(number) for number in top["单号"]]
    assert all(p >= 0 for p in places) and places == sorted(places), lead


def test_rows_ranked_by_a_chinese_word_for_what_the_identifier_numbers(tmp_path: Path) -> None:
    """ "Distance (km)最长的3次骑车是哪几次？" on rides numbered by Ride ID: 骑车 (to ride a bike) is what the rows
    are, so it is neither a grouping to ask about (Bike Type? Rider?) nor one to rank; the three longest rides
    are listed by their Ride ID (the analyst asked which column 骑车 was)."""
    rng = np.random.default_rng(21)
    n = 40
    rides = pd.DataFrame(
        {
            "Ride ID": [f"R-{2001 + i}" for i in range(n)],
            "Date": pd.date_range("2024-03-01", periods=n, freq="D").strftime("%Y-%m-%d"),
            "Rider": rng.choice(["Ann", "Bo", "Cy"], n),
            "Bike Type": rng.choice(["Road", "City"], n),
            "Distance (km)": np.round(rng.uniform(2, 40, n), 1),
        }
    )
    rides.to_csv(path := tmp_path / "rides.csv", index=False)
    run, calls = Session(tmp_path, path).ask("Distance (km)最长的3次骑车是哪几次？", language="zh")
    assert not call_of(calls).arguments.get("group_column"), [c.tool for c in calls]
    lead = headline(run)
    top = rides.nlargest(3, "Distance (km)")
    places = [lead.find(f"{ride} {fmt_num(km)}") for ride, km in zip(top["Ride ID"], top["Distance (km)"])]
    assert all(p >= 0 for p in places) and places == sorted(places), lead


def call_of(calls):
    return next(c for c in calls if c.tool == "rank_values")


def test_how_many_of_the_event_a_date_column_dates_counts_the_rows(tmp_path: Path) -> None:
    """ "一共有多少次就诊？" on 就诊日期: the visits are counted (a date named as a time, "how many days", is not), and
    the answer opens with what it counted."""
    path = clinic(tmp_path / "clinic.xlsx")
    rows = len(pd.read_excel(path))
    session = Session(tmp_path, path)
    run, calls = session.ask("一共有多少次就诊？", language="zh")
    assert run.answer.startswith("理解为：行数。"), run.answer
    assert fmt_num(rows) in headline(run) and not any(c.tool == "group_aggregate" for c in calls), headline(run)
    run, _ = session.ask("How many visits were by patients older than 60?", language="en")
    older = int((pd.read_excel(path)["患者年龄"] > 60).sum())
    assert run.answer.startswith("Read as: the number of rows (only rows with 患者年龄 > 60)."), run.answer
    assert f"{older} visits have" in headline(run), headline(run)


def test_a_rate_kept_as_a_fraction_is_said_as_a_percentage(tmp_path: Path) -> None:
    """A column named as a rate whose values lie in [0, 1] (Return Rate 0.05) reads as 5%, in the headline and
    in the description; a number column with larger values beside it is left as it is."""
    rng = np.random.default_rng(3)
    shops = np.repeat(["North", "South", "East"], 12)
    path = tmp_path / "shops.csv"
    pd.DataFrame(
        {
            "Month": np.tile(pd.date_range("2023-01-01", periods=12, freq="MS").strftime("%Y-%m-%d"), 3),
            "Shop": shops,
            "Return Rate": np.round(rng.uniform(0.02, 0.09, 36), 4),
            "Sales": np.round(rng.uniform(5000, 9000, 36), 2),
        }
    ).to_csv(path, index=False)
    frame = pd.read_csv(path)
    means = frame.groupby("Shop")["Return Rate"].mean()
    run, _ = Session(tmp_path, path).ask("What is the average Return Rate of each Shop?", language="en")
    lead = headline(run)
    for shop, value in means.items():
        assert f"{shop} {fmt_num(value * 100, 3)}%" in lead, lead
    assert fmt_num(means.max()) not in lead, lead


pytestmark = pytest.mark.slow
