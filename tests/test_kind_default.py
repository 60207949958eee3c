"""The kind of answer when the question does not say it (issue 24 points 4 and 5): "哪个门店的销售额最高？"
ranks the stores by their total 销售额 (an additive number: its sum means something), not by their average
month; the reading marks that total as assumed, offers the averages, and the badge is not "high". A by-period
breakdown on labels (1月..12月, Q1..Q4) lists the periods in calendar order, its headline the highest.

The plans are read on a small workbook made here: three stores over months written as text labels (no
date column), the store open all year selling the most in all, the one open four months the most a month."""

from __future__ import annotations

import io
import re
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from fastapi.testclient import TestClient

from app.analyst.evidence import _confidence
from app.analyst.headlines import total_headline
from app.analyst.plan import plan_analysis
from app.analyst.reading import plan_reading
from app.analyst.totals import additive
from app.understanding.period_groups import calendar_order
from app.web.i18n import t as translate
from tests.test_builtin_question_reading import seen, step
from tests.test_web import ask, new_workspace, upload

# (store, months open, price): 东门 sells dearly for four months, 西门 and 南门 all year
STORES = (("东门", 4, 40), ("西门", 12, 25), ("南门", 12, 20))


def shop_rows() -> list[tuple[str, str, int, int]]:
    rows = []
    for store, months, price in STORES:
        for month in range(1, months + 1):
            units = 40 + (month * 7) % 30
            rows.append((store, f"{month}月", units, units * price))
    return rows


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> dict:
    path = tmp_path_factory.mktemp("kinds") / "shop.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["门店", "月份", "销量", "销售额"])
    for row in shop_rows():
        sheet.append(list(row))
    book.save(path)
    return seen(Path(path))


def frame() -> pd.DataFrame:
    return pd.DataFrame(shop_rows(), columns=["门店", "月份", "销量", "销售额"])


def _kind_role(plan) -> dict:
    return next(r for r in plan_reading(plan, zh=True)["roles"] if r["role"] == "kind")


# --- additivity, judged soundly ----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["销售额", "月销量", "Revenue", "Units Sold", "Order Count", "net_sales"])
def test_amounts_and_counts_add_up(name: str) -> None:
    assert additive(name)


@pytest.mark.parametrize(
    "name",
    # a level of an amount (a rate, an average, a share, a price), and words holding a listed one by chance
    ["利润率", "平均销售额", "销售额占比", "Revenue %", "Sales Rate", "Unit Cost Price", "Country", "Discount"],
)
def test_levels_and_lookalikes_do_not_add_up(name: str) -> None:
    assert not additive(name)


# --- the default kind and its mark ------------------------------------------------------------------
def test_the_store_with_the_highest_sales_is_ranked_by_its_total(shop: dict) -> None:
    plan = plan_analysis("哪个门店的销售额最高？", shop, zh=True)
    assert (plan.kind, plan.metric, plan.dimension) == ("total", "销售额", "门店")
    assert step(plan, "group_aggregate").arguments["agg"] == "sum"
    totals, means = frame().groupby("门店")["销售额"].sum(), frame().groupby("门店")["销售额"].mean()
    assert totals.idxmax() == "西门" and means.idxmax() == "东门"  # the two readings crown different stores


@pytest.mark.parametrize(
    "question, zh",
    [("哪个门店的销售额最高？", True), ("Which 门店 has the highest 销售额?", False)],
)
def test_a_default_total_is_an_assumed_reading_offering_the_averages(shop: dict, question: str, zh: bool) -> None:
    plan = plan_analysis(question, shop, zh=zh)
    reading = plan_reading(plan, zh)
    kind = next(r for r in reading["roles"] if r["role"] == "kind")
    assert (kind["value"], kind["how"], kind["options"][0]) == ("total", "assumed", "compare")
    assert reading["status"] == "assumed"
    (said,) = reading["assumed"]
    if zh:
        assert said.startswith("假定：结果为各 门店 的 **销售额 总和**") and "另一种解读：各 门店 的平均 销售额" in said
        assert "而 销售额 是可以相加的量" in said  # a column's name stands apart, as everywhere in the answer
    else:
        assert said.startswith("Assumed: the answer is the **total** 销售额") and "Other reading: the average" in said
    assert _confidence(plan) == "medium"  # never "high confidence · checked" on an assumed reading


@pytest.mark.parametrize("question", ["哪个门店的销售额总和最高？", "哪个门店的销售额合计最高？"])
def test_a_total_the_question_asks_for_is_named(shop: dict, question: str) -> None:
    plan = plan_analysis(question, shop, zh=True)
    assert plan.kind == "total" and _kind_role(plan)["how"] == "named"
    assert plan_reading(plan, zh=True)["status"] == "named" and _confidence(plan) == "high"


def test_an_average_the_question_asks_for_stays_an_average(shop: dict) -> None:
    plan = plan_analysis("哪个门店的平均销售额最高？", shop, zh=True)
    assert plan.kind != "total" and not plan.kind_default
    assert all(s.arguments.get("agg") != "sum" for s in plan.steps if s.tool == "group_aggregate")


@pytest.mark.parametrize(
    "question", ["哪个月份的销售额最高？", "哪个月的销售额最高？", "Which month had the highest 销售额?"]
)
def test_the_month_with_the_most_sales_is_its_total_and_not_assumed(shop: dict, question: str) -> None:
    # a period's figure is what happened in it: its total, the only reading; "哪个月" names the column of
    # months as the groups (月 alone names no column), not the stores
    plan = plan_analysis(question, shop, zh=True)
    assert (plan.kind, plan.dimension, plan.kind_default) == ("total", "月份", None)
    assert _kind_role(plan)["how"] == "named"


# --- a period breakdown in calendar order -------------------------------------------------------------
@pytest.mark.parametrize(
    "labels, ordered",
    [
        (["2月", "10月", "1月", "12月"], ["1月", "2月", "10月", "12月"]),
        (["Mar", "Jan", "Dec", "Feb"], ["Jan", "Feb", "Mar", "Dec"]),
        (["Q3", "Q1", "Q4", "Q2"], ["Q1", "Q2", "Q3", "Q4"]),
        (["第三季度", "第一季度", "第二季度"], ["第一季度", "第二季度", "第三季度"]),
        (["2024年3月", "2023年12月", "2024年1月"], ["2023年12月", "2024年1月", "2024年3月"]),
    ],
)
def test_period_labels_have_a_calendar_order(labels: list[str], ordered: list[str]) -> None:
    assert calendar_order(labels) == ordered


@pytest.mark.parametrize("labels", [["东门", "西门"], ["Q1", "1月"], ["1", "2"]])
def test_other_groups_have_none(labels: list[str]) -> None:
    assert calendar_order(labels) is None


@pytest.mark.parametrize("zh", [True, False])
def test_a_period_breakdown_lists_the_periods_in_calendar_order(zh: bool) -> None:
    totals = frame().groupby("月份")["销售额"].sum()
    metrics = {"n_groups": len(totals), **{f"销售额_sum.{m}": float(v) for m, v in totals.items()}}
    headline = total_headline("销售额", "月份", metrics, zh) or ""
    best = str(totals.idxmax())
    assert headline.startswith(f"{best} 的 销售额 合计最高" if zh else f"{best} has the highest total 销售额")
    listed = headline.split("按月份依次为" if zh else "In order of 月份:")[1]
    places = [listed.index(f"{m}月 ") for m in range(1, 13)]
    assert places == sorted(places)  # 1月 … 12月, not by size


# --- as the user sees it ------------------------------------------------------------------------------
def test_the_page_marks_a_default_total_assumed_and_not_high_confidence(client: TestClient) -> None:
    buffer = io.BytesIO()
    frame().to_excel(buffer, index=False)
    ws = new_workspace(client)
    assert upload(client, ws, "shop.xlsx", buffer.getvalue()).status_code in (200, 201)
    run_id, _ = ask(client, ws, "哪个门店的销售额最高？")
    report = client.get(f"/api/workspaces/{ws}/report.json?run={run_id}").json()
    assert report["status"] == "done", report.get("warnings")
    totals = frame().groupby("门店")["销售额"].sum()
    assert report["answer"].split("**")[1].startswith(f"{totals.idxmax()} 的 销售额 合计最高：{totals.max():,}")
    assert report["reading"]["status"] == "assumed" and report["reading"]["assumed"][0] in report["answer"]
    assert {e["confidence"] for e in report["evidence"]} == {"medium"}
    page = client.get(f"/runs/{run_id}?lang=zh").text
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert 'data-reading="assumed"' in page and translate("reading_assumed", "zh") in text
    assert translate("reading_named", "zh") not in text and translate("confidence_high", "zh") not in text


def test_the_top_groups_by_a_level_are_ranked_by_its_average(tmp_path: Path) -> None:
    # a price's sum over a category's rows grows with its number of rows, not its price
    rows = [("茶", 30.0 + m, 5) for m in range(1, 13)] + [("咖啡", 20.0 + m, 9) for m in range(1, 31)]
    rows += [("果汁", 12.0, 20)] * 6
    path = tmp_path / "drinks.csv"
    pd.DataFrame(rows, columns=["品类", "单价", "销量"]).to_csv(path, index=False)
    plan = plan_analysis("单价最高的两个品类是哪些？", seen(path), zh=True)
    ranked = next(s for s in plan.steps if s.tool in ("group_aggregate", "rank_values"))
    assert (plan.kind, ranked.arguments["agg"]) == ("top", "mean")
    # the averages put 茶 first; the sums would put 咖啡 first, it has more rows
    means = pd.DataFrame(rows, columns=["品类", "单价", "销量"]).groupby("品类")["单价"].mean()
    assert means.idxmax() == "茶"


# --- the other direction: rows in no periods compare the averages, marked assumed ---------------------
# (store, visits, takings per visit, score): 北门 has few big takings, 中心 and 站前 many smaller ones, so the
# averages and the totals crown different stores; no date and no column of periods
VISITS = (("北门", 4, 300, 71), ("中心", 12, 150, 88), ("站前", 10, 120, 64))
NAMES = {True: ("门店", "销售额", "评分"), False: ("Store", "Sales", "Score")}


def visit_rows() -> list[tuple[str, int, int]]:
    return [(s, take + 7 * i, score + i % 3) for s, n, take, score in VISITS for i in range(n)]


@pytest.fixture(scope="module")
def undated(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, dict]:
    folder = tmp_path_factory.mktemp("undated")
    tables = {}
    for zh, names in NAMES.items():
        path = folder / f"visits_{'zh' if zh else 'en'}.csv"
        pd.DataFrame(visit_rows(), columns=list(names)).to_csv(path, index=False)
        tables[zh] = seen(path)
    return tables


@pytest.mark.parametrize(
    "question, zh", [("哪个门店的销售额最高？", True), ("Which store has the highest sales?", False)]
)
def test_a_default_average_is_an_assumed_reading_offering_the_totals(undated: dict, question: str, zh: bool) -> None:
    plan = plan_analysis(question, undated[zh], zh=zh)
    store, sales, _ = NAMES[zh]
    assert (plan.metric, plan.dimension, plan.kind_default) == (sales, store, "total")
    assert step(plan, "compare_groups").arguments == {"value_column": sales, "group_column": store}
    frame = pd.DataFrame(visit_rows(), columns=list(NAMES[zh])).groupby(store)[sales]
    assert frame.mean().idxmax() == "北门" and frame.sum().idxmax() == "中心"  # the readings crown different stores
    reading = plan_reading(plan, zh)
    kind = next(r for r in reading["roles"] if r["role"] == "kind")
    assert (kind["value"], kind["how"], kind["options"][0]) == ("compare", "assumed", "total")
    assert reading["status"] == "assumed"
    (said,) = reading["assumed"]
    if zh:
        assert (
            said.startswith("假定：结果比较各 门店 的 **平均 销售额**") and "另一种解读：各 门店 的 销售额 总和" in said
        )
    else:
        assert said.startswith("Assumed: the answer compares the **average** Sales per Store")
        assert "rows without dates may be repeated measurements. Other reading: the total Sales per Store." in said
    assert _confidence(plan) == "medium"


@pytest.mark.parametrize(
    "question, zh",
    [
        ("哪个门店的评分最高？", True),  # a score: its average is the only sensible reading
        ("Which store has the highest score?", False),
        ("哪个门店的平均销售额最高？", True),  # the question names the kind
        ("Which store has the highest average sales?", False),
    ],
)
def test_an_average_of_a_level_or_one_asked_for_is_named(undated: dict, question: str, zh: bool) -> None:
    plan = plan_analysis(question, undated[zh], zh=zh)
    assert plan.kind_default is None and step(plan, "compare_groups")
    reading = plan_reading(plan, zh)
    assert reading["status"] == "named" and not reading["assumed"]
    assert next(r for r in reading["roles"] if r["role"] == "kind")["how"] == "named"
    assert _confidence(plan) == "high"


@pytest.mark.parametrize(
    "question, zh", [("哪个门店的销售额总和最高？", True), ("Which store has the highest total sales?", False)]
)
def test_a_total_asked_for_on_undated_rows_is_named(undated: dict, question: str, zh: bool) -> None:
    plan = plan_analysis(question, undated[zh], zh=zh)
    assert (plan.kind, plan.kind_default) == ("total", None)
    assert _kind_role(plan)["how"] == "named" and _confidence(plan) == "high"
