"""The answer card on the run page (issue 28 point 1), rendered by the in-process app: the reading, the
headline, the chart and the sortable table of the result that answers the question (the numbers its
evidence recorded), "how sure" in one line, the method and raw numbers behind one click, in the page's
language. The expected numbers are computed here with pandas from the same made-up table."""

from __future__ import annotations

import json
import re
import time
from html import unescape
from typing import Any

import pandas as pd
import pytest
from fastapi.testclient import TestClient

from app.web.answer_result import answer_result, answering_evidence, result_table
from app.web.i18n import t
from app.web.run_panel import split_answer
from tests.test_web import ask, new_workspace, read_stream, upload

STORES = ("东城店", "西城店", "南湖店", "北站店")


def shop_frame() -> pd.DataFrame:
    """Two years of monthly takings for four stores, each its own level, with a wobble per month."""
    rows = []
    for month in range(24):
        for n, store in enumerate(STORES):
            wobble = ((month * 7 + n * 3) % 5 - 2) * 40.0
            rows.append(
                {
                    "门店": store,
                    "月份": f"{2023 + month // 12}-{month % 12 + 1:02d}-01",
                    "销售额": 1000.0 * (n + 1) + wobble,
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory):
    from app.config import Settings
    from app.main import create_app

    settings = Settings(
        _env_file=None,
        data_dir=tmp_path_factory.mktemp("answer-card"),
        llm_model="builtin",
        sse_poll_interval_s=0.05,
        sse_heartbeat_s=1.0,
    )
    with TestClient(create_app(settings)) as client:
        ws = new_workspace(client, "门店销售")
        assert upload(client, ws, "shop.csv", shop_frame().to_csv(index=False).encode()).status_code == 201
        yield client, ws


def card_of(html: str) -> str:
    start = html.index('<section class="answer">')
    return html[start : html.index("</section>", html.index('class="answer-method"'))]


def cells(card: str) -> list[list[str]]:
    body = card[card.index("data-result-table") :]
    body = body[body.index("<tbody>") : body.index("</tbody>")]
    return [
        [unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<t[hd][^>]*>.*?</t[hd]>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


def test_a_total_shows_its_chart_then_its_table_then_how_sure(shop) -> None:
    client, ws = shop
    run_id, _ = ask(client, ws, "哪个门店的销售额总和最高？")
    html = client.get(f"/runs/{run_id}?lang=zh").text
    card = card_of(html)
    order = [
        card.index(marker)
        for marker in (
            "data-reading-chips",
            'class="answer-body"',
            "data-answer-chart",
            "data-result-table",
            "data-how-sure",
        )
    ]
    assert order == sorted(order), "chips, headline, chart, table, how sure are not in that order"
    assert card.index("data-how-sure") < card.index('class="answer-method"')
    totals = shop_frame().groupby("门店")["销售额"].sum().sort_values(ascending=False)
    assert cells(card) == [[store, f"{value:,.0f}"] for store, value in totals.items()]
    # the chart is drawn from the very same rows (JSON in data-chart), bars and table its kinds
    chart = json.loads(unescape(re.search(r'data-chart="([^"]+)"', card).group(1)))  # type: ignore[union-attr]
    assert chart["chart"]["kinds"] == ["bar", "table"]
    assert chart["rows"] == [[store, pytest.approx(value)] for store, value in totals.items()]
    # the page's language throughout the card's own words
    assert t("result_how_sure", "zh", what="") in card and t("chart_download_png", "zh") in card
    assert t("result_stat_mean", "en") not in card and "Download" not in card
    assert "<img" not in card, "the card draws its chart from the rows; no other figure joins it"
    english = card_of(client.get(f"/runs/{run_id}?lang=en").text)
    assert t("chart_kind_bar", "en") in english and t("result_aggregated", "en", value="销售额", agg="total") in english


def test_a_comparison_charts_the_group_means_and_leaves_the_histogram_in_steps(shop) -> None:
    client, ws = shop
    run_id, _ = ask(client, ws, "各门店的销售额平均值有差异吗？")
    html = client.get(f"/runs/{run_id}?lang=zh").text
    card = card_of(html)
    means = shop_frame().groupby("门店")["销售额"].mean()
    rows = {row[0]: row[1:] for row in cells(card)}
    assert set(rows) == set(STORES)
    for store, mean in means.items():
        shown = float(rows[store][0].replace(",", ""))
        assert shown == pytest.approx(mean, abs=0.5), (store, rows[store], mean)
    assert "<img" not in card
    steps = html[html.index('class="steps"') :]
    assert "<img" in steps, "the other analyses' charts stay in Steps"


def test_a_top_n_table_keeps_the_n_it_names(shop) -> None:
    client, ws = shop
    run_id, _ = ask(client, ws, "销售额最高的前2个门店")
    card = card_of(client.get(f"/runs/{run_id}?lang=zh").text)
    totals = shop_frame().groupby("门店")["销售额"].sum().nlargest(2)
    assert cells(card) == [[store, f"{value:,.0f}"] for store, value in totals.items()]


# --- the rows from the recorded metrics ----------------------------------------------------------
def test_a_forecast_is_a_table_of_periods_with_its_interval() -> None:
    metrics: dict[str, Any] = {"model": "ets", "horizon": 2, "forecast.2025-01": 10.0, "lower.2025-01": 8.0}
    metrics |= {"upper.2025-01": 12.0, "forecast.2025-02": 11.0, "lower.2025-02": 8.5, "upper.2025-02": 13.5}
    metrics |= {"backtest_mape.ets": 0.1, "backtest_mape.arima": 0.2}  # the models' scores are not rows
    table = result_table(metrics, "月份", "en")
    assert table is not None and table["kind"] == "period"
    assert [c["label"] for c in table["columns"]] == ["月份", "Forecast", "Lower bound", "Upper bound"]
    assert table["rows"] == [["2025-01", 10.0, 8.0, 12.0], ["2025-02", 11.0, 8.5, 13.5]]
    assert table["chart"] == {"kinds": ["line", "bar", "table"], "value": 1, "band": [2, 3]}


def test_a_ranking_keeps_its_order() -> None:
    metrics = {"rank.1.label": "B", "rank.1.value": 9.0, "rank.2.label": "A", "rank.2.value": 4.0, "n": 2}
    table = result_table(metrics, "", "zh")
    assert table is not None and table["rows"] == [["B", 9.0], ["A", 4.0]]
    assert table["columns"][0]["label"] == t("result_row", "zh")


@pytest.mark.parametrize(
    "metrics",
    [
        {"Revenue.mean": 3.0, "Revenue.std": 1.0, "n": 10},  # a description: one column's statistics
        {"r.a~b": 0.5, "p_value.a~b": 0.01, "r.a~c": 0.1},  # correlations: pairs, not rows of a result
        {"mean.A": 3.0, "n.A": 4},  # one group is a number, not a table
        {"p_value": 0.01, "statistic": 2.0},
    ],
)
def test_no_table_where_the_metrics_hold_no_rows(metrics: dict[str, Any]) -> None:
    assert result_table(metrics, "", "en") is None


def test_the_answering_evidence_is_the_headlines_claim() -> None:
    evidence = [
        {"id": "d", "claim": "Revenue averages 308.6.", "metrics": {"Revenue.mean": 308.6}},
        {"id": "g", "claim": "East is highest.", "metrics": {"mean.East": 5.0, "mean.West": 3.0}},
    ]
    answer = (
        "Read as: x.\n\n**East is highest. (averages: East 5, West 3)**\n\n### Supporting\n\n- Revenue averages 308.6."
    )
    assert answering_evidence(evidence, answer)["id"] == "g"  # type: ignore[index]
    result = answer_result(evidence, answer, {}, [], "en")
    assert result is not None and result["table"]["rows"] == [["East", 5.0], ["West", 3.0]]
    assert split_answer(answer) == (
        "Read as: x.\n\n**East is highest. (averages: East 5, West 3)**",
        "### Supporting\n\n- Revenue averages 308.6.",
    )


def test_a_trend_without_rows_shows_its_own_chart_large_in_the_card(shop) -> None:
    client, ws = shop
    run_id, _ = ask(client, ws, "销售额随时间如何变化？")
    html = client.get(f"/runs/{run_id}?lang=zh").text
    card = card_of(html)
    report = client.get(f"/api/workspaces/{ws}/report.json?run={run_id}").json()
    trend = [c["id"] for c in report["tool_calls"] if c["tool"] == "time_series_trend"]
    assert trend, [c["tool"] for c in report["tool_calls"]]
    # the trend's figure (not the histogram's) is the card's chart, with its PNG one click away
    figure = re.search(r'<figure class="answer-figure">.*?<img src="([^"]+)"', card, re.S)
    assert figure is not None and trend[0] in figure.group(1), card[:2000]
    assert card.count("<img") == 1 and "data-answer-chart" not in card
    image = client.get(unescape(figure.group(1)))
    assert image.status_code == 200 and image.content[:8] == b"\x89PNG\r\n\x1a\n"


def test_shares_read_as_percentages_largest_first() -> None:
    metrics = {
        "n": 1200,
        "total": 370374.71,
        "share.Store": 0.3449,
        "share.Online": 0.4676,
        "share.Marketplace": 0.1875,
    }
    table = result_table(metrics, "Channel", "en")
    assert table is not None and [row[0] for row in table["rows"]] == ["Online", "Store", "Marketplace"]
    assert [row[1] for row in table["shown"]] == ["46.8%", "34.5%", "18.8%"]
    assert table["columns"][1] == {"key": "share", "label": "Share", "numeric": True, "percent": True}


def test_a_top_n_keeps_every_row_when_its_claim_does_not_name_n_of_them() -> None:
    evidence = [
        {"id": "e", "claim": "East leads.", "metrics": {"x_sum.East": 5.0, "x_sum.West": 3.0, "x_sum.North": 1.0}}
    ]
    reading = {"roles": [{"role": "n", "value": "2"}]}
    result = answer_result(evidence, "**East leads.**", {}, [], "en", reading=reading)
    assert result is not None and len(result["table"]["rows"]) == 3  # one name is not the top 2: all kept
    evidence[0]["claim"] = "East and West lead."
    result = answer_result(evidence, "**East and West lead.**", {}, [], "en", reading=reading)
    assert result is not None and [row[0] for row in result["table"]["rows"]] == ["East", "West"]


# --- a forecast: its months as the answer words them, its history before it ------------------------
def forecast_run(client: TestClient, ws: str, question: str) -> str:
    """A forecast run, its method confirmed when the analyst asks first (a forecast is a high-risk method)."""
    response = client.post(f"/api/workspaces/{ws}/messages", json={"text": question})
    assert response.status_code == 202, response.text
    run_id = response.json()["run_id"]
    for _ in range(600):  # the run stops to ask, or finishes: its status says which
        run = client.get(f"/api/runs/{run_id}").json()
        if run["status"] not in ("queued", "running"):
            break
        time.sleep(0.2)
    if run["question"]:
        label = run["question"]["options"][0]["label"]
        answered = client.post(
            f"/api/runs/{run_id}/answers", json={"question_id": run["question"]["id"], "answer": label}
        )
        assert answered.status_code == 202, answered.text
        read_stream(client, run_id)
    assert client.get(f"/api/runs/{run_id}").json()["status"] == "done"
    return run_id


def test_a_forecast_names_its_months_as_the_answer_and_charts_the_history_before_it(shop) -> None:
    from app.analyst.sheet_words import month_label

    client, ws = shop
    run_id = forecast_run(client, ws, "预测未来3个月的销售额")
    html = client.get(f"/runs/{run_id}?lang=zh").text
    card = card_of(html)
    answer = card[card.index('class="answer-body"') : card.index("data-answer-chart")]
    months = [month_label(2025, m, True) for m in (1, 2, 3)]
    assert [row[0] for row in cells(card)] == months, cells(card)
    assert months[0] in answer and "2025-01" not in card.split("answer-method")[0]
    chart = json.loads(unescape(re.search(r'data-chart="([^"]+)"', card).group(1)))  # type: ignore[union-attr]
    # the last twelve known months, as pandas sums them, drawn before the forecast
    monthly = shop_frame().assign(月=lambda f: pd.to_datetime(f["月份"]).dt.to_period("M"))
    known = monthly.groupby("月")["销售额"].sum().iloc[-12:]
    assert chart["chart"]["history"] == [
        [month_label(p.year, p.month, True), pytest.approx(v)] for p, v in known.items()
    ]
    assert chart["chart"]["legend"] == {"actual": t("chart_actual", "zh"), "forecast": t("chart_forecast", "zh")}
    assert [row[0] for row in chart["rows"]] == months  # the table stays the forecast per period
    # an English page words the same months in English
    english = card_of(client.get(f"/runs/{run_id}?lang=en").text)
    assert [row[0] for row in cells(english)] == [month_label(2025, m, False) for m in (1, 2, 3)]
    assert "Jan 2024" in english and t("chart_forecast", "en") in english


def test_a_forecast_chart_keeps_history_apart_from_its_table() -> None:
    metrics: dict[str, Any] = {"forecast.2025-01": 10.0, "forecast.2025-02": 11.0}
    metrics |= {"actual.2024-11": 8.0, "actual.2024-12": 9.0, "actual.2025-01": 99.0}  # a forecast period: not history
    table = result_table(metrics, "Month", "en")
    assert table is not None and table["rows"] == [["2025-01", 10.0], ["2025-02", 11.0]]
    assert table["chart"]["history"] == [["2024-11", 8.0], ["2024-12", 9.0]]
    assert table["chart"]["legend"] == {"actual": "Actual", "forecast": "Forecast"}


# --- a model's answer that states none of the recorded claims ---------------------------------------
def test_a_model_answer_that_states_no_recorded_claim_shows_the_last_result_as_what_it_is(tmp_path) -> None:
    """A language model records per-channel and then per-region totals, then answers in its own words with numbers of its own:
    the card does not call the last total "the chart that answers"; it shows it, said to be the last result
    recorded, so the reader sees the numbers the run did compute."""
    from app.db.models import Run
    from app.web.run_panel import run_context
    from tests.factories import SAMPLES, run_answered_in_own_words

    claim = "East has the highest total Revenue."
    settings, db, run_id = run_answered_in_own_words(tmp_path, claim)
    frame = pd.read_excel(SAMPLES / "retail_sales.xlsx", sheet_name="Orders 2024", header=2)
    totals = frame.groupby("Region")["Revenue"].sum().sort_values(ascending=False)
    for lang in ("en", "zh"):
        with db.session() as session:
            run = session.get(Run, run_id)
            assert run is not None and run.status == "done", run and (run.status, run.error)
            result = run_context(session, run, lang, settings)["result"]
        assert result is not None and result["answers"] is False
        assert result["label"] == t("result_last_recorded", lang, claim=claim)
        assert [row[0] for row in result["table"]["rows"]] == list(totals.index)
        assert [row[1] for row in result["table"]["rows"]] == pytest.approx(totals.tolist())
    # an answer that quotes the claim: the same result, now the one that answers, with no label
    assert (
        answer_result(
            [{"id": "e", "claim": claim, "metrics": {"x_sum.East": 2.0, "x_sum.West": 1.0}}],
            f"**{claim}**",
            {},
            [],
            "en",
        )["label"]
        == ""
    )  # type: ignore[index]


# --- a merged header's columns by their leaf -------------------------------------------------------
def test_the_card_and_report_name_a_merged_headers_columns_by_their_leaf(tmp_path) -> None:
    """The analyst's text already says 销售额 for "销售情况 / 销售额": the card's table headers and the
    report's first-page table and chart caption say it too (the appendix keeps the full path)."""
    from app.agent.model.interface import ModelReply
    from app.db.models import Report, Run
    from app.reports.first_pages import first_pages
    from app.reports.report_parts import in_sheet_words
    from app.web.run_panel import run_context
    from tests.factories import merged_sales_workbook, setup, start_run
    from tests.fakes import ScriptedModel, call

    book = tmp_path / "门店销售.xlsx"  # three shops over four months
    book.write_bytes(merged_sales_workbook(range(1, 5), (("东门", 30), ("西门", 20), ("南门", 10)), unit_price=12))
    shop, sales = "基本信息 / 门店", "销售情况 / 销售额"
    claim = "东门的销售额合计最高。"
    model = ScriptedModel(
        [
            ModelReply(None, [call("group_aggregate", "c1", group_columns=[shop], value_columns=[sales])]),
            ModelReply(None, [call("plot_bar", "c2", x_column=shop, y_column=sales, agg="sum")]),
            ModelReply(None, [call("record_evidence", "c3", claim=claim, method="合计", tool_call_ids=["c1", "c2"])]),
            ModelReply(f"**{claim}**"),
        ]
    )
    settings, db, service, ws = setup(tmp_path, book, lambda *_: model)
    run_id = start_run(service, ws, "哪个门店的销售额最高？")
    service.execute(run_id)
    with db.session() as session:
        run = session.get(Run, run_id)
        assert run is not None and run.status == "done", run and (run.status, run.error)
        context = run_context(session, run, "zh", settings)
        card, steps = context["result"], context["steps"]
        stored = session.query(Report).filter(Report.run_id == run_id).one().content
    assert card is not None and card["answers"] is True
    # the Steps say the leaf too: the grouping step's reading and the bar chart's caption (issue 28)
    said = [step["interpretation"] for step in steps] + [f["caption"] for step in steps for f in step["figures"]]
    grouped = next(step["interpretation"] for step in steps if step["tool"] == "group_aggregate")
    assert "门店" in grouped and "销售额" in grouped, grouped
    assert not any(shop in text or sales in text for text in said), said
    headers = [c["label"] for c in card["table"]["columns"]]
    assert headers[0] == "门店" and "销售额" in headers[1], headers
    assert not any(" / " in h for h in headers), headers
    assert [row[0] for row in card["table"]["rows"]] == ["东门", "西门", "南门"]

    layout = first_pages(in_sheet_words(stored))
    [table] = layout.results
    assert table[0][0] == "门店" and "销售额" in table[0][1] and not any(" / " in h for h in table[0]), table[0]
    assert layout.body_figures == 1
    caption = str(layout.figures[0].get("caption"))
    raw = next(f for f in stored["figures"] if f.get("tool_call_id") == layout.figures[0].get("tool_call_id"))
    assert sales in str(raw.get("caption")), raw  # the stored report keeps the path: the first pages say the leaf
    assert "销售额" in caption and sales not in caption and shop not in caption, caption


def test_leaves_two_columns_share_keep_their_paths_on_the_card() -> None:
    """ "2023 / 销售额" and "2024 / 销售额": the leaf alone would not say which, so the headers keep the path."""
    from app.understanding import spoken_names

    columns = [{"name": "门店"}, {"name": "2023 / 销售额"}, {"name": "2024 / 销售额"}, {"name": "销售情况 / 销量"}]
    spoken = spoken_names(columns)
    metrics = {"2023 / 销售额_sum.东门": 5.0, "2023 / 销售额_sum.西门": 3.0}
    evidence = [{"id": "e", "claim": "东门最高。", "metrics": metrics, "tool_call_ids": ["c"]}]
    calls = {"c": {"tool": "group_aggregate", "arguments": {"group_columns": ["门店"]}}}
    result = answer_result(evidence, "**东门最高。**", calls, [], "zh", spoken=spoken)
    assert result is not None
    assert "2023 / 销售额" in result["table"]["columns"][1]["label"]
    metrics = {"销售情况 / 销量_sum.东门": 5.0, "销售情况 / 销量_sum.西门": 3.0}
    result = answer_result([{**evidence[0], "metrics": metrics}], "**东门最高。**", calls, [], "zh", spoken=spoken)
    assert result is not None and result["table"]["columns"][1]["label"].startswith("销量"), result["table"]["columns"]


# --- totals per month: in time order, their change checked, the Steps in the leaves' words ----------
def test_totals_per_month_come_in_time_order_and_their_change_is_found_in_the_analysis(client: TestClient) -> None:
    """Issue 28's follow-ups on a merged-header workbook with a sheet per shop (一店, 二店): "每个月的销售额是
    多少？" is answered with a table of the months in time order (it came sorted by value), drawn as a line
    first; the headline's change from the first month to the last is a number its analysis computed, so the
    number check finds every number ("some numbers not found" before); the Steps name 销售额, not its path."""
    import io

    from app.analyst.sheet_words import month_label
    from app.reports.first_pages import first_pages, reader_number
    from app.reports.report_parts import in_sheet_words
    from tests.factories import merged_sales_workbook

    book = merged_sales_workbook(range(1, 13), (("东门", 130), ("西门", 55)), 14, sheet_per_shop=("一店", "二店"))
    ws = new_workspace(client, "门店销售")
    assert upload(client, ws, "门店销售.xlsx", book).status_code == 201
    run_id, _ = ask(client, ws, "每个月的销售额是多少？")
    html = client.get(f"/runs/{run_id}?lang=zh").text
    card = card_of(html)
    # the first sheet's monthly totals, as pandas reads the sheet (the group row above the header skipped)
    sheet = pd.read_excel(io.BytesIO(book), sheet_name="一店", header=1)
    totals = sheet.groupby("月份")["销售额"].sum().sort_index()
    months = [month_label(int(label[:4]), int(label[5:7]), True) for label in totals.index]
    assert cells(card) == [[month, f"{value:,.0f}"] for month, value in zip(months, totals)]
    assert totals.is_monotonic_increasing  # so the value order (largest first) is not the time order
    chart = json.loads(unescape(re.search(r'data-chart="([^"]+)"', card).group(1)))  # type: ignore[union-attr]
    assert chart["chart"]["kinds"][0] == "line"
    # the change the headline states, computed here, is among the numbers the check found
    change = (totals.iloc[-1] - totals.iloc[0]) / totals.iloc[0]
    answer = client.get(f"/api/runs/{run_id}").json()["answer"]
    assert f"{change:+.1%}" in answer.replace("（", " (").replace("）", ")"), answer
    assert t("check_passed", "zh") in card and t("check_partly_verified", "zh") not in card
    # the report's first pages list the months in time order too
    report = client.get(f"/api/workspaces/{ws}/report.json?run={run_id}").json()
    [table] = first_pages(in_sheet_words(report)).results
    assert [row[1] for row in table[1:]] == [reader_number(v) for v in totals.tolist()][: len(table) - 1]
    steps = html[html.index('class="steps"') :]
    steps = steps[: steps.index("</section>")]
    assert "销售额" in steps and "销售情况 / 销售额" not in steps, steps
