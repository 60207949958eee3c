"""What a first-time user saw on the answer page (issue 24, the trial): a which-month question read as
"a summary" and followed by the month column's tool formula as a finding, a compound question's two
readings stacked above both answers, and the scope caveat said twice. The questions run the built-in
analyst through the API on the repository's own sample workbook."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from openpyxl import Workbook

from app.analyst.answer import _without_repeats
from app.understanding.language import question_language
from tests.test_web import ask, new_workspace, upload

OPERATIONS = Path(__file__).resolve().parents[1] / "data" / "samples" / "monthly_operations.xlsx"


def _answer(client: TestClient, question: str) -> str:
    ws = new_workspace(client)
    assert upload(client, ws, OPERATIONS.name, OPERATIONS.read_bytes()).status_code in (200, 201)
    run_id, _ = ask(client, ws, question)
    report = client.get(f"/api/workspaces/{ws}/report.json?run={run_id}").json()
    assert report["status"] == "done", report.get("warnings")
    return str(report["answer"])


def test_which_month_reads_as_the_month_ranked_without_the_formula(client: TestClient) -> None:
    answer = _answer(client, "which month had the highest 营业额?")
    assert answer.startswith("Read as: the month with the highest total 营业额."), answer
    assert "year_month(" not in answer and "Added column" not in answer  # the prep step is not a finding
    assert "Jul 2024" in answer  # the month, with its figure


def test_a_chinese_which_month_reads_in_chinese(client: TestClient) -> None:
    answer = _answer(client, "哪个月的营业额最高？")
    assert answer.startswith("理解为：按月比较 营业额 的合计，取最高的月份。"), answer  # not "月份 月份"
    assert "year_month(" not in answer and "新增列" not in answer


def test_a_compound_answer_puts_each_reading_above_its_own_answer(client: TestClient) -> None:
    answer = _answer(client, "广告费用和营业额有关系吗？哪个门店的营业额最高？")
    paragraphs = [p for p in answer.split("\n\n") if p.strip()]
    reads = [i for i, p in enumerate(paragraphs) if p.startswith("理解为：")]
    assert len(reads) == 2, answer
    assert paragraphs[reads[0] + 1].startswith("**") and paragraphs[reads[1] + 1].startswith("**"), answer


def test_a_caveat_another_says_in_full_is_said_once() -> None:
    scope = "结论基于上传的数据，不一定适用于其他时期或人群。"
    both = "相关不代表因果；结论基于上传的数据，不一定适用于其他时期或人群。"
    assert _without_repeats([both, scope, scope]) == [both]
    assert _without_repeats(["Rule A.", "Rule B."]) == ["Rule A.", "Rule B."]


# --- the language of a run: the question's own words, not the data's ---------------------------------
@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("Top 2 门店 by 销售额?", "en"),  # 销售额: the last part of the merged header "销售情况 / 销售额"
        ("and only for A店?", "en"),  # a store named in Chinese inside an English sentence
        ("What is the revenue for 上海店?", "en"),
        ("各渠道的 Revenue 占比是多少？", "zh"),
        ("Online 和 Store 的 Revenue 哪个高？", "zh"),  # English values inside a Chinese sentence
        ("销售额?", "en"),  # only a column name: the page's language
    ],
)
def test_a_questions_language_is_its_own_words(question: str, language: str) -> None:
    names = ["门店", "销售情况 / 销售额", "日期", "Revenue", "Channel"]
    assert question_language(question, names, "en") == language


def test_an_english_question_on_a_merged_chinese_header_is_answered_in_english(client: TestClient) -> None:
    ws = new_workspace(client)
    assert upload(client, ws, "merged.xlsx", _merged_header_xlsx()).status_code in (200, 201)
    run_id, _ = ask(client, ws, "Which 门店 has the highest total 销售额?")
    report = client.get(f"/api/workspaces/{ws}/report.json?run={run_id}").json()
    assert report["status"] == "done", report.get("warnings")
    assert report["answer"].startswith("Read as: "), report["answer"]


def _merged_header_xlsx() -> bytes:
    """A shop sheet whose 销量 and 销售额 sit under a merged group header 销售情况."""
    book = Workbook()
    sheet = book.active
    sheet.append(["门店", "销售情况", None])
    sheet.append([None, "销量", "销售额"])
    sheet.merge_cells("B1:C1")
    sheet.merge_cells("A1:A2")
    for day in range(10):
        for store, units in (("A店", 90), ("B店", 40), ("C店", 60)):
            sheet.append([store, units + day, (units + day) * 21.5])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()
