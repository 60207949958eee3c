"""Two questions in one message that share their rows (issue 24, point 3): an opening clause that says which
rows ("Only for the Riverside depot: …", "只看东门店，…") is the scope of both parts, and a later part that asks
an amount of no named measure ("…, and how much did they bring in between them?") asks it of the first part's
rows and of the money they took in. Real built-in runs on workbooks made here; the expected figures are
computed with pandas from the same frames, never read from Verity's output.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis_tools.common import fmt_num
from app.understanding.column_forms import money_taken_column
from app.understanding.compound import split_compound
from tests.test_builtin_understanding import Session
from tests.test_compound_derived import bold_lines


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "Only for the Riverside depot: how many customers paid by card, and how much did that come to?",
            [
                "Only for the Riverside depot: how many customers paid by card?",
                "Only for the Riverside depot: how much did that come to?",
            ],
        ),
        (
            # a value in the other script does not make the sentence Chinese
            "For the 东门 shop, how many boxes did we throw away, and what did it sell on an average day?",
            [
                "For the 东门 shop, how many boxes did we throw away?",
                "For the 东门 shop, what did it sell on an average day?",
            ],
        ),
        (
            "只看东门店，用现金付款的有多少单，一共多少钱？",
            ["只看东门店，用现金付款的有多少单？", "只看东门店，一共多少钱？"],
        ),
    ],
)
def test_an_opening_clause_is_the_scope_of_both_parts(question, parts):
    assert split_compound(question) == parts


def test_the_money_taken_is_the_column_named_for_money_in():
    columns = [
        {"name": "Hours", "type": "number"},
        {"name": "Money / Hire Fee (£)", "type": "number"},
        {"name": "Money / Deposit Held (£)", "type": "number"},
    ]
    assert money_taken_column(columns) == "Money / Hire Fee (£)"  # both in £: the fee is what came in
    assert money_taken_column([{"name": "营业额(元)", "type": "number"}, {"name": "损耗(元)", "type": "number"}]) == (
        "营业额(元)"
    )
    assert money_taken_column([{"name": "Price (£)", "type": "number"}, {"name": "Tip (£)", "type": "number"}]) is None


@pytest.fixture(scope="module")
def hires(tmp_path_factory) -> tuple[Path, pd.DataFrame]:
    rng = np.random.default_rng(11)
    n = 90
    frame = pd.DataFrame(
        {
            "Hire No": [f"H{i:03d}" for i in range(n)],
            "Depot": rng.choice(["Riverside", "Station", "Harbour"], n),
            "Payment": rng.choice(["Card", "Cash"], n),
            "Hours": rng.integers(1, 7, n),
            "Hire Fee (£)": rng.integers(8, 60, n).astype(float),
            "Deposit Held (£)": rng.choice([0.0, 20.0, 50.0], n),
        }
    )
    path = tmp_path_factory.mktemp("hires") / "bike_hires.xlsx"
    frame.to_excel(path, index=False)
    return path, frame


pytestmark = pytest.mark.slow


def test_how_much_did_they_bring_in_is_the_first_parts_rows_money(tmp_path, hires):
    path, frame = hires
    kept = frame[frame["Hours"] > 4]
    run, _ = Session(tmp_path, path).ask(
        "How many hires lasted more than 4 hours, and how much did they bring in between them?", language="en"
    )
    first, second = bold_lines(run.answer)[:2]
    assert str(len(kept)) in first
    assert fmt_num(kept["Hire Fee (£)"].sum()) in second  # the fee, not the hours nor the deposits


def test_a_scope_said_once_keeps_both_parts_rows(tmp_path, hires):
    path, frame = hires
    kept = frame[(frame["Depot"] == "Riverside") & (frame["Payment"] == "Card")]
    run, _ = Session(tmp_path, path).ask(
        "Only for the Riverside depot: how many customers paid by card, and how much did that come to?",
        language="en",
    )
    first, second = bold_lines(run.answer)[:2]
    assert str(len(kept)) in first
    assert fmt_num(kept["Hire Fee (£)"].sum()) in second


@pytest.mark.parametrize(
    ("part", "back"),
    [
        ("how many of those were cancelled?", True),
        ("what share of them had a deposit", True),
        ("how many of these?", True),
        ("how many of the hires were cancelled", False),  # an article before its noun: not a pronoun
        ("what share of the most expensive", False),
    ],
)
def test_a_pronoun_after_of_points_back_to_the_earlier_rows(part, back):
    from app.understanding.compound import points_back

    assert points_back(part) is back


def courts_book(tmp_path: Path) -> tuple[Path, pd.DataFrame]:
    rng = np.random.default_rng(5)
    n = 120
    frame = pd.DataFrame(
        {
            "Booking": [f"B{i:03d}" for i in range(n)],
            "Court": rng.choice(["North", "South"], n),
            "Slot": rng.choice(["Morning", "Afternoon", "Evening"], n),
            "Cancelled": rng.choice(["Yes", "No"], n, p=[0.2, 0.8]),
            "Fee (£)": rng.integers(8, 30, n).astype(float),
        }
    )
    path = tmp_path / "courts.xlsx"
    frame.to_excel(path, index=False)
    return path, frame


def test_of_those_keeps_the_first_parts_rows(tmp_path):
    path, frame = courts_book(tmp_path)
    evening = frame[frame["Slot"] == "Evening"]
    run, _ = Session(tmp_path, path).ask(
        "How many Evening bookings were there, and how many of those were cancelled?", language="en"
    )
    first, second = bold_lines(run.answer)[:2]
    assert f"{len(evening)} of {len(frame)}" in first
    assert f"{int((evening['Cancelled'] == 'Yes').sum())} of {len(evening)}" in second  # not of all rows


def test_of_those_after_a_part_of_every_row_is_read_on_its_own_words(tmp_path):
    # the first part cut no rows: "those" are all of them, and the part still counts (it is not folded
    # into the first part's question, where it read as the average fee of each Cancelled)
    path, frame = courts_book(tmp_path)
    run, _ = Session(tmp_path, path).ask(
        "What is the average fee, and how many of those were cancelled?", language="en"
    )
    first, second = bold_lines(run.answer)[:2]
    assert fmt_num(frame["Fee (£)"].mean()) in first
    assert f"{int((frame['Cancelled'] == 'Yes').sum())} of {len(frame)}" in second
