"""Issue 24 point 6: a yes/no column is shown in the sheet's own words everywhere a person reads it —
the question card's options, the data preview, the steps, the evidence's metrics on the page and in
the reports — never as True/False; the stored data and JSON keep the booleans."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.analyst.role_question import describe_column
from app.cli_inspect import _in_own_words
from tests.factories import REPO, wait_for_run

FRUIT = REPO / "data/eval/files/h7_fruit_market_stalls.xlsx"
TRUE_FALSE = re.compile(r"\b(?:True|False)\b")


def test_an_option_lists_a_yes_no_columns_values_as_the_sheet_writes_them() -> None:
    column = {
        "name": "是否缺货",
        "type": "boolean",
        "values": ["False", "True"],
        "words": {"true": "是", "false": "否"},
    }
    assert describe_column(column, zh=True) == "取值：否、是"
    assert describe_column({**column, "words": {"true": "Y", "false": "N"}}, zh=False) == "values: N, Y"
    assert describe_column({k: v for k, v in column.items() if k != "words"}, zh=False) == "values: False, True"


def test_inspect_shows_the_sheets_words_and_its_json_keeps_the_booleans() -> None:
    result = {
        "columns": [{"name": "Damage Reported?", "type": "boolean", "words": {"true": "Y", "false": "N"}}],
        "preview": [{"Damage Reported?": False}, {"Damage Reported?": True}, {"Damage Reported?": None}],
    }
    assert _in_own_words(result) == [{"Damage Reported?": "N"}, {"Damage Reported?": "Y"}, {"Damage Reported?": None}]
    assert result["preview"][0]["Damage Reported?"] is False


def test_the_page_and_the_reports_show_the_sheets_yes_no_words(client: TestClient) -> None:
    ws = client.post("/api/workspaces", json={"name": "水果"}).json()["id"]
    client.post(f"/workspaces/{ws}/upload?lang=zh", files={"file": (FRUIT.name, FRUIT.read_bytes())})
    assert not TRUE_FALSE.search(client.get(f"/workspaces/{ws}?lang=zh").text)  # the data preview
    done = client.post(f"/workspaces/{ws}/ask?lang=zh", data={"text": "缺货的时候销量更低吗？"}, follow_redirects=False)
    run_id = done.headers["location"].split("?run=")[1].split("#")[0]
    body = wait_for_run(client, run_id, ("waiting", "done", "failed"))
    assert body["status"] == "done", body
    assert "是否缺货 = 是" in body["answer"] and not TRUE_FALSE.search(body["answer"]), body["answer"]

    page = client.get(f"/workspaces/{ws}?run={run_id}&lang=zh").text
    assert not TRUE_FALSE.search(page), TRUE_FALSE.findall(page)
    assert "<th>n.否</th>" in page  # the evidence's metrics, named by the sheet's words
    for fmt in ("md", "html"):
        report = client.get(f"/api/workspaces/{ws}/report.{fmt}", params={"run": run_id}).text
        assert "n.否" in report and "n.是" in report, fmt
        read = report.split("## 工具调用" if fmt == "md" else "<summary>工具调用")[0]  # the tools' raw calls follow
        assert not TRUE_FALSE.search(read), (fmt, TRUE_FALSE.findall(read))
    stored = client.get(f"/api/workspaces/{ws}/report.json", params={"run": run_id}).json()
    assert any("n.False" in item["metrics"] for item in stored["evidence"])  # the data keeps the tools' keys
