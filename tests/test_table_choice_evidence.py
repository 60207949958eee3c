"""Which table a question is about, by how strong the evidence is (issue 24 points 4 and 5).

A workspace holds a shop sheet with Chinese headers (门店, 销量, 销售额) and an orders table in English
(Channel with a value "Store", Revenue: a translation of 销售额). "Which store has the highest 销售额?"
names 销售额 exactly in the shop sheet; in the orders table it reaches Revenue only through a listed
word, and "store" — the things the question ranks — only happens to be spelt like a Channel value.
Counting matches made that 2 against 1 and the orders table was analysed, badged "high confidence".
Each match now weighs by its grade, the ranked word is no filter evidence, and a near-tie is a table
the reading says it assumed. Tables made up here."""

from __future__ import annotations

from typing import Any

from app.analyst.reading import table_assumed, table_line
from app.understanding.dataset_choice import EVIDENCE, SURE_LEAD, Choice, choose_dataset, fit
from app.understanding.ranked_entity import ranked_spans


def _shops() -> dict[str, Any]:
    return {
        "name": "shops",
        "rows": 18,
        "columns": [
            {"name": "门店", "type": "category", "levels": 3, "values": ["东门", "西门", "南门"]},
            {"name": "月份", "type": "integer"},
            {"name": "销量", "type": "integer"},
            {"name": "销售额", "type": "integer"},
        ],
    }


def _orders() -> dict[str, Any]:
    return {
        "name": "orders",
        "rows": 300,
        "columns": [
            {"name": "Region", "type": "category", "levels": 2, "values": ["North", "South"]},
            {"name": "Channel", "type": "category", "levels": 3, "values": ["Online", "Store", "Marketplace"]},
            {"name": "Units", "type": "integer"},
            {"name": "Revenue", "type": "number"},
        ],
    }


def _said(question: str) -> list[str]:
    return [question[start:end] for start, end in ranked_spans(question)]


def test_the_ranked_word_is_the_noun_after_the_question_word() -> None:
    assert _said("Which store has the highest 销售额?") == ["store"]
    assert _said("which three stores sold the most units") == ["stores"]
    assert _said("哪个门店的销售额最高？") == ["门店"]
    assert _said("哪三家门店销量最多") == ["门店"]  # a count and a measure word come between
    # no noun after the question word: "what is", "when did", "哪个月的" (月 is a measure word, then 的)
    assert _said("What is the Revenue of Store orders?") == []
    assert _said("When did Store sales peak?") == []
    assert _said("哪个月的销售额最高") == []


def test_an_exact_header_outweighs_a_translation_and_a_coincidental_value() -> None:
    question = "Which store has the highest 销售额?"
    choice = choose_dataset(question, [_orders(), _shops()])
    assert choice.dataset is not None and choice.dataset["name"] == "shops", [
        (f.dataset["name"], f.score) for f in choice.fits
    ]
    by_name = {f.dataset["name"]: f for f in choice.fits}
    # "store" is 门店 by meaning (dataset_choice._by_meaning: every word weighs), in the shop sheet only
    assert by_name["shops"].kinds == {"销售额": "name", "门店": "semantic"}
    assert by_name["shops"].score == EVIDENCE["exact"] + EVIDENCE["weak"]
    assert by_name["orders"].kinds == {"Revenue": "synonym"} and by_name["orders"].score == EVIDENCE["listed"]
    assert by_name["orders"].values == []  # "store" is what the question ranks, not rows to keep
    # an exact header against a translation in the other table, and nothing else: a near-tie, so the table
    # is assumed
    question = "What is the highest 销售额?"
    choice = choose_dataset(question, [_orders(), _shops()])
    assert choice.dataset is not None and choice.dataset["name"] == "shops"
    assert choice.how == "words" and choice.lead == 1 < SURE_LEAD and not choice.sure
    assert table_assumed(choice) and choice.others == ["orders"]
    line = table_line(choice, zh=False)
    assert line.startswith("Assumed: the table is **shops**") and line.endswith("Other reading: orders."), line
    assert table_line(choice, zh=True).startswith("假定：表格为 **shops**")


def test_a_value_the_question_does_not_rank_still_counts() -> None:
    # "Store" written as rows to keep, not after the question word: the orders table's own value
    assert fit("Total Revenue of Store orders", _orders()).values == ["Channel = Store"]
    assert fit("Which store has the highest Revenue?", _orders()).values == []


def test_a_clear_lead_is_sure_and_a_tie_is_not() -> None:
    sure = choose_dataset("Which 门店 has the highest 销售额?", [_orders(), _shops()])
    assert sure.dataset is not None and sure.dataset["name"] == "shops"
    assert sure.lead == 2 * EVIDENCE["exact"] - EVIDENCE["listed"] and sure.sure and not table_assumed(sure)
    assert table_line(sure, zh=False) == ""

    twin = {**_shops(), "name": "shops_2025"}  # the same headers: the words cannot tell
    tied = choose_dataset("哪个门店的销售额最高？", [_shops(), {**twin, "name": "branch"}])
    assert tied.how == "tie" and tied.lead == 0 and not tied.sure and table_assumed(tied)
    assert "as well" in table_line(tied, zh=False)


def test_a_table_an_analysis_made_is_never_offered_nor_a_rival() -> None:
    summary = {
        "name": "shops_summary",
        "derived": True,
        "rows": 3,
        "columns": [{"name": "门店", "type": "category"}, {"name": "销售额", "type": "number"}],
    }
    choice = choose_dataset("Which 门店 has the highest 销售额?", [_shops(), summary, _orders()])
    assert choice.dataset is not None and choice.dataset["name"] == "shops"
    assert choice.others == ["orders"] and choice.sure
    alone = choose_dataset("Which 门店 has the highest 销售额?", [_shops(), summary])
    assert alone.others == [] and not table_assumed(alone)
    # a made table read (an analysis's own next round): no other table is offered in its place
    made = Choice(summary, "words", choice.fits)
    assert made.others == [] and not table_assumed(made) and table_line(made, zh=False) == ""
