"""Which table a question is about when a workspace holds two (issue 24, the new-user trial): a
merged-header workbook (基本信息 / 门店, 销售情况 / 销量, 销售情况 / 销售额) beside a shops CSV (门店, 营业额).
Every question asked which table although one names the question's columns exactly: the other matched
as many columns only through a synonym (销售额 → 营业额, both sales). The table named surely is taken;
two tables naming the question's columns equally surely still ask. Made-up data, built here."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from app.analyst.role_question import role_answers
from app.understanding.dataset_choice import choose_dataset
from app.understanding.roles import in_spoken_names, spoken_names
from tests.factories import merged_sales_workbook
from tests.test_web import ask, new_workspace, read_stream, upload

SHOPS = (("东门", 130), ("西门", 55), ("南门", 48))
UNIT_PRICE = 14


def _merged_workbook() -> bytes:
    """Six months of three shops; 门店/月份 under a merged 基本信息, 销量/销售额 under a merged 销售情况."""
    return merged_sales_workbook(range(1, 7), SHOPS, UNIT_PRICE)


def _shops_csv() -> bytes:
    """Other shops' monthly turnover (营业额: a synonym of 销售额) and margin, in GBK as the trial's file."""
    lines = ["门店,月份,营业额,毛利率"]
    for month in range(1, 13):
        for i, shop in enumerate(("南京店", "苏州店", "杭州店")):
            lines.append(f"{shop},2024-{month:02d},{9000 + 500 * i + 37 * month},{30 + i}%")
    return ("\n".join(lines) + "\n").encode("gbk")


def _totals(units: bool) -> dict[str, int]:
    return {shop: sum((base + m) * (1 if units else UNIT_PRICE) for m in range(1, 7)) for shop, base in SHOPS}


def _answer(client: TestClient, ws: str, question: str) -> dict[str, Any]:
    run_id, _ = ask(client, ws, question)
    report = client.get(f"/api/workspaces/{ws}/report.json?run={run_id}").json()
    assert report["status"] == "done", (question, report.get("status"), report.get("warnings"))
    return dict(report)


def test_the_table_that_names_the_columns_exactly_is_analysed_without_asking(client: TestClient) -> None:
    ws = new_workspace(client)
    assert upload(client, ws, "门店销售.xlsx", _merged_workbook()).status_code in (200, 201)
    assert upload(client, ws, "stores.csv", _shops_csv()).status_code in (200, 201)

    sales, units = _totals(units=False), _totals(units=True)
    best = max(sales, key=sales.__getitem__)
    by_sales = _answer(client, ws, "哪个门店的销售额最高？")["answer"]
    assert f"{best} " in by_sales and f"{sales[best]:,}" in by_sales, by_sales  # 东门 16,366
    assert "营业额" not in by_sales, by_sales

    # "sold" is an everyday word for 销量 and 营业额 alike; the question is nearer the first in meaning
    by_units = _answer(client, ws, "Which shop sold the most units?")["answer"]
    assert f"{units[best]:,}" in by_units, by_units  # 东门's units, not its money

    monthly = _answer(client, ws, "每个月的销售额是多少？")["answer"]
    january = sum((base + 1) * UNIT_PRICE for _, base in SHOPS)
    assert f"{january:,}" in monthly and "营业额" not in monthly, monthly


def test_answers_chips_and_reports_name_a_merged_header_by_its_leaf(client: TestClient) -> None:
    """The answer, the read-as sentence, the chips, the claims and the report say "销售额", the word people
    use, not the path "销售情况 / 销售额"; the analyses still read the column by its full name, and the
    measure chip's other column (offered by its leaf) re-runs the question with that column."""
    ws = new_workspace(client)
    assert upload(client, ws, "门店销售.xlsx", _merged_workbook()).status_code in (200, 201)
    run_id, _ = ask(client, ws, "哪个门店的销售额最高？")
    report = client.get(f"/api/workspaces/{ws}/report.json?run={run_id}").json()
    assert report["answer"].startswith("理解为：按 门店 计算 销售额 的总和。"), report["answer"]
    assert "销售情况 /" not in report["answer"] and "基本信息 /" not in report["answer"], report["answer"]
    assert all("销售情况 /" not in e["claim"] for e in report["evidence"]), report["evidence"]
    measure = next(r for r in report["reading"]["roles"] if r["role"] == "measure")
    assert (measure["value"], measure["options"]) == ("销售额", ["销量"]), measure
    aggregated = [c["arguments"]["value_columns"] for c in report["tool_calls"] if c["tool"] == "group_aggregate"]
    assert aggregated == [["销售情况 / 销售额"]]  # what the tool reads keeps the full name
    markdown = client.get(f"/api/workspaces/{ws}/report.md?run={run_id}").text
    assert "东门 的 销售额 合计最高" in markdown, markdown[:2000]

    moved = client.post(f"/runs/{run_id}/reread", data={"role": "measure", "value": "销量"}, follow_redirects=False)
    assert moved.status_code == 303
    again = moved.headers["location"].split("run=")[1].split("#")[0].split("&")[0]
    read_stream(client, again)
    second = client.get(f"/api/workspaces/{ws}/report.json?run={again}").json()
    aggregated = [c["arguments"]["value_columns"] for c in second["tool_calls"] if c["tool"] == "group_aggregate"]
    assert aggregated == [["销售情况 / 销量"]], second["answer"]
    assert second["answer"].startswith("理解为：按 门店 计算 销量 的总和。"), second["answer"]
    units = _totals(units=True)
    assert f"{units['东门']:,}" in second["answer"], second["answer"]


def test_a_leaf_two_columns_share_keeps_its_path() -> None:
    columns = [
        {"name": "门店"},
        {"name": "2023 / 销售额"},
        {"name": "2024 / 销售额"},
        {"name": "2024 / 客流"},
        {"name": "其他 / 门店"},  # its leaf is another column's whole name
    ]
    spoken = spoken_names(columns)
    assert spoken == {
        "门店": "门店",
        "2023 / 销售额": "2023 / 销售额",
        "2024 / 销售额": "2024 / 销售额",
        "2024 / 客流": "客流",
        "其他 / 门店": "其他 / 门店",
    }
    assert in_spoken_names("2024 / 客流 与 2024 / 销售额", spoken) == "客流 与 2024 / 销售额"
    # an answer given by the spoken name (a chip, an option) is the column
    assert role_answers({"role.k.outcome": "客流"}, "k", columns) == {"outcome": "2024 / 客流"}
    assert role_answers({"role.k.group": "门店"}, "k", columns) == {"group": "门店"}


TABLE_A = {
    "name": "north",
    "rows": 60,
    "columns": [
        {"name": "门店", "type": "category", "values": ["一店", "二店"]},
        {"name": "销售额", "type": "number"},
    ],
}
TABLE_B = {
    "name": "south",
    "rows": 60,
    "columns": [
        {"name": "门店", "type": "category", "values": ["三店", "四店"]},
        {"name": "营业额", "type": "number"},
    ],
}


def test_an_exact_name_outweighs_a_synonym_and_a_true_tie_still_asks() -> None:
    chosen = choose_dataset("哪个门店的销售额最高？", [TABLE_B, TABLE_A])
    assert (chosen.how, chosen.dataset["name"]) == ("words", "north")
    chosen = choose_dataset("哪个门店的营业额最高？", [TABLE_A, TABLE_B])
    assert (chosen.how, chosen.dataset["name"]) == ("words", "south")
    # both tables name 门店 and 销售额 outright: nothing tells them apart, so the user is asked
    twin = {**TABLE_B, "columns": [TABLE_B["columns"][0], {"name": "销售额", "type": "number"}]}
    assert choose_dataset("哪个门店的销售额最高？", [TABLE_A, twin]).how == "tie"
    # more columns named still count before how surely: the table naming two (one by a synonym) wins
    wider = {**TABLE_B, "columns": [*TABLE_B["columns"], {"name": "毛利率", "type": "number"}]}
    assert choose_dataset("门店的营业额和毛利率", [TABLE_A, wider]).dataset["name"] == "south"


def test_a_measure_named_exactly_outweighs_a_value_that_only_looks_like_the_date_asked() -> None:
    """Found in a new user's trial: "2022年3月哪家店的营业额最高？" beside a merged-header book of months 1月..6月
    went to the book (its 3月 matched the date, its 销量 a synonym of 营业额) over the table whose 营业额 it names."""
    months = {
        "name": "stores",
        "rows": 18,
        "columns": [
            {"name": "基本信息 / 门店", "type": "category", "values": ["东门", "西门"]},
            {"name": "基本信息 / 月份", "type": "category", "levels": 6, "values": ["1月", "2月", "3月", "4月", "5月"]},
            {"name": "销售情况 / 销量", "type": "integer"},
            {"name": "销售情况 / 销售额", "type": "number"},
        ],
    }
    operations = {
        "name": "operations",
        "rows": 144,
        "columns": [
            {"name": "月份", "type": "datetime"},
            {"name": "门店", "type": "category", "values": ["上海店", "北京店"]},
            {"name": "营业额", "type": "number"},
            {"name": "订单数", "type": "integer"},
        ],
    }
    chosen = choose_dataset("2022年3月哪家店的营业额最高？", [months, operations])
    assert chosen.dataset["name"] == "operations"


def test_the_answer_says_the_words_that_fit_the_table_it_took(tmp_path) -> None:
    """Found in a new user's trial: the table whose 营业额 the question names was taken, but the answer said
    "because the question names 销量, 月份 = 3月" — the other table's words, which had scored as high."""
    from tests.factories import SAMPLES
    from tests.test_builtin_understanding import Session
    from tests.test_period_groups import merged_sheet

    book, _ = merged_sheet(tmp_path, [f"{m}月" for m in range(1, 7)])  # its 月份 holds 3月, its 销量 ~ 营业额
    run, _ = Session(tmp_path, book, SAMPLES / "monthly_operations.xlsx").ask("2022年3月哪家店的营业额最高？")
    used = next(line for line in run.answer.splitlines() if line.startswith("使用的数据"))
    assert "monthly_operations" in used and "营业额" in used and "销量" not in used, used
