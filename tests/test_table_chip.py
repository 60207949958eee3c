"""The table is part of the reading the user can change (issue 24 points 4 and 5): in a workspace of two
tables, the answer names the table it read, the table is a chip like the measure's, and choosing the
other table re-runs the question there; a table picked on near-tied evidence is said to be assumed and
never badged "high confidence". Made-up data: a merged-header shop sheet (门店 / 销售额) and an orders
table in English (Channel with a value "Store", Revenue)."""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest
from fastapi.testclient import TestClient

from tests.factories import merged_sales_workbook
from tests.test_web import ask, finished_report, new_workspace, rerun, upload

pytestmark = pytest.mark.slow  # a server, a run or a child per test: handed out early (tests/conftest.py)

SHOPS = (("东门", 130), ("西门", 55), ("南门", 48))
UNIT_PRICE = 14
CHANNELS = {"Online": 50.0, "Store": 35.0, "Marketplace": 20.0}  # an order's revenue by channel


def _orders_xlsx() -> bytes:
    rows = [
        {"Region": region, "Channel": channel, "Units": 2 + day % 3, "Revenue": price + day}
        for day in range(30)
        for region in ("North", "South")
        for channel, price in CHANNELS.items()
    ]
    buffer = io.BytesIO()
    pd.DataFrame(rows).to_excel(buffer, index=False, sheet_name="Orders")
    return buffer.getvalue()


def _headline(answer: str) -> str:
    return re.search(r"\*\*(.+?)\*\*", answer).group(1)  # type: ignore[union-attr]


def _read(report: dict) -> set[str]:
    """The tables the analyses read (a profile of each table aside)."""
    calls = report["tool_calls"]
    return {
        str(c["arguments"]["dataset"]) for c in calls if c["tool"] != "profile_dataset" and "dataset" in c["arguments"]
    }


def _table(report: dict) -> dict:
    return next(r for r in report["reading"]["roles"] if r["role"] == "table")


def test_the_table_chip_reruns_the_question_on_the_other_table(client: TestClient) -> None:
    ws = new_workspace(client)
    assert upload(client, ws, "shops.xlsx", merged_sales_workbook(range(1, 7), SHOPS, UNIT_PRICE)).status_code in (
        200,
        201,
    )
    assert upload(client, ws, "orders.xlsx", _orders_xlsx()).status_code in (200, 201)
    orders = pd.read_excel(io.BytesIO(_orders_xlsx()))
    sales = {shop: sum((base + m) * UNIT_PRICE for m in range(1, 7)) for shop, base in SHOPS}

    question = "Which store has the highest 销售额?"
    run_id, _ = ask(client, ws, question)
    first = finished_report(client, ws, run_id)
    # the sheet whose header is 销售额 itself, not the table where a translation and a value spelt "Store" fit
    assert _read(first) == {"shops"}, first["tool_calls"]
    assert "东门" in _headline(first["answer"]) and f"{sales['东门']:,}" in first["answer"], first["answer"]
    # exact 销售额, and "store" reaches 门店 by meaning too (门店 is a kind of 店 "shop; store": bilingual's head
    # character), against a translation elsewhere: shops is named, the other table still offered on the chip
    assert _table(first) == {"role": "table", "value": "shops", "how": "named", "options": ["orders"]}
    assert "Assumed: the table is" not in first["answer"]

    # the page shows the table as a chip with the other table the user gave (never a table an analysis made)
    page = client.get(f"/workspaces/{ws}?run={run_id}").text
    chip = re.search(r'<form class="chip[^"]*"[^>]*data-chip="table">.*?</form>', page, re.S)
    assert chip is not None and 'value="orders"' in chip.group(0), page[-3000:]
    assert "_summary" not in chip.group(0)

    again = rerun(client, run_id, "table", "orders")
    second = finished_report(client, ws, again)
    assert second["question"] == question
    assert _read(second) == {"orders"}, second["tool_calls"]
    assert _table(second)["value"] == "orders" and _table(second)["how"] == "answer"
    assert "Assumed: the table is" not in second["answer"]
    best = orders.groupby("Channel")["Revenue"].sum().idxmax()
    assert best in _headline(second["answer"]), second["answer"]
    assert _headline(second["answer"]) != _headline(first["answer"])

    # the choice holds for that question only: another question is read by its own words
    other, _ = ask(client, ws, "哪个门店的销量最高？")
    third = finished_report(client, ws, other)
    assert _table(third)["value"] == "shops", third["reading"]
