"""Relations, compound questions and derived quantities read by general means (issue 24 point 3): a money
word names the table's one column measured in money (a currency in its bracket), a kind of a thing names
the "<thing> Type" column, an amount asked in a Chinese unit names the column whose bracket gives that
unit, and "how long" in a days-between-dates question asks for the gap. The tables are made up here."""

from __future__ import annotations

from typing import Any

import pytest

from app.analyst.plan import plan_analysis
from app.understanding.column_forms import money_column, money_unit
from app.understanding.roles import column_mentions
from app.understanding.words import SYNONYMS


def col(name: str, kind: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "type": kind, "missing": 0, "pii": None, **more}


def named(question: str, columns: list[dict[str, Any]]) -> dict[str, str]:
    """The words of the question → the column they name."""
    return {question[m.start : m.end]: m.name for m in column_mentions(question, columns, SYNONYMS)}


@pytest.mark.parametrize(
    ("name", "money"),
    [
        ("Fare (£)", True),
        ("运费（元）", True),
        ("Fee (USD)", True),
        ("Cost ($)", True),
        ("Weight (kg)", False),
        ("Price", False),
    ],
)
def test_a_currency_in_a_bracket_makes_a_money_column(name, money):
    assert money_unit(name) is money


def test_money_words_name_the_one_column_in_money_and_not_one_of_two():
    one = [col("Distance (km)", "number"), col("Fare (£)", "number"), col("Depot", "category")]
    assert money_column(one) == "Fare (£)"
    assert named("跑得越远，收的钱越多吗？", one).get("钱") == "Fare (£)"
    assert named("How much money did each depot make?", one).get("money") == "Fare (£)"
    two = [*one, col("Tip (£)", "number")]
    assert money_column(two) is None  # a fare and a tip: "money" does not say which
    assert "money" not in named("How much money did each depot make?", two)


@pytest.mark.parametrize("question", ["Which three kinds of film sell best?", "Which type of film sells best?"])
def test_a_kind_of_a_thing_names_its_type_column(question):
    columns = [col("Venue", "category"), col("Film Type", "category"), col("Takings", "number")]
    assert "Film Type" in named(question, columns).values()


def test_a_kind_of_a_thing_is_not_read_where_another_column_shares_the_thing():
    columns = [col("Film Type", "category"), col("Film Length", "number")]
    assert "Film Type" not in named("Which kinds of film are longest?", columns).values()


def test_an_amount_asked_in_a_unit_names_the_column_of_that_unit():
    columns = [col("船名", "category"), col("耗油量（升）", "integer"), col("渔获量（公斤）", "integer")]
    assert named("每趟要烧掉多少升油？", columns).get("升") == "耗油量（升）"
    assert "升" not in named("油价升了吗？", columns)  # not an amount asked for


def test_how_long_between_two_dates_asks_for_the_gap_not_a_duration_column():
    data = {
        "name": "pupils",
        "rows": 100,
        "columns": [
            col("Enrolled", "datetime"),
            col("Examined", "datetime"),
            col("Lesson Hours", "integer", distinct=40, minimum=5, maximum=60),
        ],
    }
    question = "How long do pupils usually wait from enrolling to their exam? Average days, please."
    plan = plan_analysis(question, data, zh=False)
    assert plan.kind == "date_gap"
    derive = next(s for s in plan.steps if s.tool == "derive_column")
    assert derive.arguments["expression"] == "`Examined` - `Enrolled`"


def test_days_between_two_dates_named_in_the_other_language_take_them_by_the_dictionary():
    # three English date columns, a Chinese question naming two by what they mean (下单 "to place an order",
    # 付款 "to pay"): the gap is from the one to the other, not the third (Delivered)
    data = {
        "name": "orders",
        "rows": 80,
        "columns": [
            col("Ordered", "datetime"),
            col("Delivered", "datetime"),
            col("Paid", "datetime"),
            col("Customer", "category", distinct=12, levels=12),
        ],
    }
    plan = plan_analysis("客户下单以后，平均要过几天才付款？", data, zh=True)
    assert plan.kind == "date_gap"
    derive = next(s for s in plan.steps if s.tool == "derive_column")
    assert derive.arguments["expression"] == "`Paid` - `Ordered`"
