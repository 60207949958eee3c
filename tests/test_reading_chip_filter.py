"""The filter chip (issue 24 point 4): a question that keeps the rows of one value ("Only for 东门: …")
shows its filter as a chip like the measure's: the other values of the same column and "no filter"
are offered, and a choice re-runs the question with that filter, through the same path as the other
chips (an answered clarification on the question's filter role, `role.<key>.filter`).

The expected numbers are pandas' own, on the small table made up here."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from fastapi.testclient import TestClient

from app.reports.report_parts import reading_roles
from app.understanding import NO_FILTER
from tests.test_web import ask, finished_report, new_workspace, rerun, upload

STORES = ["东门", "西门", "南门"]


def store_frame() -> pd.DataFrame:
    """Three stores over three months, each store's takings a different size."""
    rows = []
    for day in range(90):
        for at, store in enumerate(STORES):
            rows.append(
                {
                    "日期": pd.Timestamp("2026-01-01") + pd.Timedelta(days=day),
                    "门店": store,
                    "销售额": round(100.0 * (at + 1) + 3.5 * day + (day % 7) * 11.25, 2),
                }
            )
    return pd.DataFrame(rows)


def store_xlsx() -> bytes:
    buffer = io.BytesIO()
    store_frame().to_excel(buffer, index=False, sheet_name="销售")
    return buffer.getvalue()


def _monthly_totals(report: dict) -> dict[str, float]:
    """month ("2026-01") -> the total the run's group_aggregate returned, from its recorded evidence."""
    for call in report["tool_calls"]:
        metrics = call["arguments"].get("metrics") or {} if call["tool"] == "record_evidence" else {}
        totals = {
            k.split(".", 1)[1]: v for k, v in metrics.items() if k.startswith("销售额_sum.") and k[-5:] != "total"
        }
        if totals:
            return totals
    raise AssertionError("no monthly totals were recorded")


def _expected(store: str | None) -> dict[str, float]:
    """pandas' own monthly totals of 销售额, of one store's rows (None: of every row)."""
    frame = store_frame()
    if store is not None:
        frame = frame[frame["门店"] == store]
    totals = frame.groupby(frame["日期"].dt.strftime("%Y-%m"))["销售额"].sum()
    return {str(month): float(total) for month, total in totals.items()}


def _filter_role(report: dict) -> dict:
    return next(r for r in report["reading"]["roles"] if r["role"] == "filter")


def test_the_filter_chip_reruns_the_question_with_another_value_and_with_none(client: TestClient) -> None:
    ws = new_workspace(client)
    assert upload(client, ws, "stores.xlsx", store_xlsx()).status_code in (200, 201)
    question = "Only for 东门: what was the total 销售额 each month?"
    run_id, _ = ask(client, ws, question)
    first = finished_report(client, ws, run_id)
    assert _monthly_totals(first) == pytest.approx(_expected("东门"))
    role = _filter_role(first)
    assert (role["value"], role["column"]) == ("门店 = 东门", "门店")
    assert role["options"] == ["西门", "南门", NO_FILTER]  # the column's other values, then no filter
    page = client.get(f"/runs/{run_id}").text
    chip = page[page.index('data-chip="filter"') : page.index("</form>", page.index('data-chip="filter"'))]
    assert "<select" in chip and "data-chip-submit" in chip  # a control, like the measure's chip
    assert '<option value="西门">西门</option>' in chip and f'<option value="{NO_FILTER}">no filter</option>' in chip

    # a value the chip did not offer changes nothing
    refused = client.post(f"/runs/{run_id}/reread", data={"role": "filter", "value": "北门"}, follow_redirects=False)
    assert refused.status_code == 303 and f"run={run_id}" in refused.headers["location"]

    west_id = rerun(client, run_id, "filter", "西门")
    west = finished_report(client, ws, west_id)
    assert west["question"] == question
    assert _monthly_totals(west) == pytest.approx(_expected("西门"))
    filtered = [c["arguments"]["conditions"] for c in west["tool_calls"] if c["tool"] == "filter_rows"]
    assert filtered == [[{"column": "门店", "op": "==", "value": "西门"}]]
    assert (_filter_role(west)["value"], _filter_role(west)["how"]) == ("门店 = 西门", "answer")
    assert "门店 = 西门" in west["answer"] and "东门" not in west["answer"]
    assert any("门店 = 西门" in d for d in west["guidance"]["definitions"])  # the pin is the user's answer

    every = finished_report(client, ws, rerun(client, west_id, "filter", NO_FILTER))
    assert _monthly_totals(every) == pytest.approx(_expected(None))
    assert not any(c["tool"] == "filter_rows" for c in every["tool_calls"])
    role = _filter_role(every)
    assert (role["value"], role["how"], role["options"]) == (NO_FILTER, "answer", STORES)  # back to any store
    assert reading_roles(every["reading"], "en").startswith(
        "Measure: 销售额 · Groups: Month · Filter: no filter (your choice)"
    )


def test_the_filter_chip_speaks_the_pages_language(client: TestClient) -> None:
    ws = new_workspace(client)
    assert upload(client, ws, "stores.xlsx", store_xlsx()).status_code in (200, 201)
    client.cookies.set("lang", "zh")
    run_id, _ = ask(client, ws, "只看东门，每个月的销售额总和是多少？")
    report = finished_report(client, ws, run_id)
    assert _monthly_totals(report) == pytest.approx(_expected("东门"))
    page = client.get(f"/workspaces/{ws}?lang=zh&run={run_id}").text
    chip = page[page.index('data-chip="filter"') : page.index("</form>", page.index('data-chip="filter"'))]
    assert f'<option value="{NO_FILTER}">不筛选</option>' in chip and "no filter" not in chip
    assert "筛选" in chip and "重新分析" in chip


def test_the_reports_say_no_filter_as_the_analyst_records_it() -> None:
    """The marker the analyst records (one constant, app.understanding.NO_FILTER) is worded, never shown."""
    reading = {"roles": [{"role": "filter", "value": NO_FILTER, "how": "answer"}]}
    english, chinese = reading_roles(reading, "en"), reading_roles(reading, "zh")
    assert "no filter" in english and "不筛选" in chinese
    assert NO_FILTER not in english + chinese
