"""Issue 24 (points 2 and 3): "Which stall sold the most boxes?" asked on the zh page of a Chinese
workbook with merged headers. "boxes" is what 销售情况 / 销量（箱） counts (the unit in its bracket),
so it is read as the measure; the clarification is about the one role left, the groups ("stall"),
and it is in the page's language (Chinese), as is the answer after it."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.understanding.units import names_a_unit, quantity_unit
from tests.factories import REPO, wait_for_run

FRUIT = REPO / "data/eval/files/h7_fruit_market_stalls.xlsx"


def test_the_unit_of_a_measure_names_it_and_the_card_asks_about_one_role_in_the_pages_language(
    client: TestClient,
) -> None:
    ws = client.post("/api/workspaces", json={"name": "水果"}).json()["id"]
    client.post(f"/workspaces/{ws}/upload?lang=zh", files={"file": (FRUIT.name, FRUIT.read_bytes())})
    done = client.post(
        f"/workspaces/{ws}/ask?lang=zh", data={"text": "Which seller sold the most boxes?"}, follow_redirects=False
    )
    run_id = done.headers["location"].split("?run=")[1].split("#")[0]
    body = wait_for_run(client, run_id, ("waiting", "done", "failed"))
    assert body["status"] == "waiting" and body["language"] == "zh", body
    card = body["question"]
    assert "“seller”" in card["question"] and "boxes" not in card["question"], card
    assert card["question"].startswith("问题提到了"), card  # the page's language, not the question's
    labels = [o["label"] for o in card["options"]]
    assert "档口" in labels and labels[-1] == "都不是", labels
    assert not any("销量" in label for label in labels), labels  # a measure is no answer to "which groups"
    stockout = next(o for o in card["options"] if o["label"] == "是否缺货")  # its leaf: as people say it
    assert stockout["description"] == "取值：否、是", stockout  # the sheet's words, not False, True

    client.post(f"/api/runs/{run_id}/answers", json={"question_id": card["id"], "answer": "档口"})
    body = wait_for_run(client, run_id, ("waiting", "done", "failed"))
    assert body["status"] == "done", body
    assert body["answer"].startswith("理解为：按 档口 计算 销量（箱） 的总和"), body["answer"]
    assert "老王果业" in body["answer"] and "8,930" in body["answer"], body["answer"]
    # "stall" is 档口 in the bilingual dictionary (CC-CEDICT): read as assumed, answered without asking
    again = client.post(
        f"/workspaces/{ws}/ask?lang=zh", data={"text": "Which stall sold the most boxes?"}, follow_redirects=False
    )
    body = wait_for_run(
        client, again.headers["location"].split("?run=")[1].split("#")[0], ("waiting", "done", "failed")
    )
    assert body["status"] == "done" and body["answer"].startswith("理解为：按 档口 计算 销量（箱） 的总和")


def test_what_a_unit_counts_and_which_words_it_answers() -> None:
    boxes = {"name": "销售情况 / 销量（箱）", "type": "integer"}
    price = {"name": "销售情况 / 单价（元/箱）", "type": "number"}
    stall = {"name": "档口", "type": "category", "levels": 8}
    area = {"name": "片区", "type": "category", "levels": 3}
    assert quantity_unit(boxes) == "箱" and quantity_unit(price) == "元"  # a price counts money per box
    assert quantity_unit(stall) is None
    columns = [stall, area, boxes, price]
    assert names_a_unit("boxes", columns)
    assert names_a_unit("箱数", columns)
    assert not names_a_unit("stall", columns)
