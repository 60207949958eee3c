"""A compound question whose first part opens with a lead-in set off by a comma — an average, a filter, a
period ("On average, …", "Only for …, …", "上个季度，…") — asks its second part within that lead-in too (issue
24, compound questions): each part is planned on its own, so a part without the lead-in would total what
was asked as an average, or count every row where only some were meant. The split itself stays the
sentence's structure (app.understanding.compound). Tables and phrasings are made up here; expected figures
are computed with pandas."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis_tools.common import fmt_num
from app.understanding.compound import lead_in, split_compound, within
from tests.test_builtin_understanding import Session


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "On average, how many apples and how many pears does one crate hold?",
            ["On average, how many apples?", "On average, how many pears does one crate hold?"],
        ),
        (
            "Just for the night shift, what was the mean output and which machine stopped most?",
            [
                "Just for the night shift, what was the mean output?",
                "Just for the night shift, which machine stopped most?",
            ],
        ),
        ("上个季度，哪个仓库发货最多？平均每单多重？", ["上个季度，哪个仓库发货最多？", "上个季度，平均每单多重？"]),
        # no lead-in, or the second part says it again: the parts as they were
        (
            "Which bouquet sells most, and what is the average order value?",
            ["Which bouquet sells most?", "what is the average order value?"],
        ),
    ],
)
def test_the_first_parts_lead_in_frames_the_second(question, parts):
    first, *later = split_compound(question)
    assert [first, *(within(lead_in(first), part) for part in later)] == parts


def orchard(path: Path) -> pd.DataFrame:
    """150 picking days in three orchards: who picked, how many kilos, whether it rained."""
    rng = np.random.default_rng(31)
    n = 150
    frame = pd.DataFrame(
        {
            "Ref": [f"R{i:03d}" for i in range(n)],
            "Orchard": rng.choice(["Hillside", "Brookfield", "Old Mill"], n),
            "Kilos Picked": rng.gamma(6, 40, n).round(1),
            "Pickers": rng.integers(3, 15, n),
        }
    )
    frame.to_csv(path, index=False)
    return frame


@pytest.mark.slow
def test_a_filter_said_before_two_questions_keeps_the_rows_for_both(tmp_path):
    path = tmp_path / "data" / "orchard_days.csv"
    path.parent.mkdir(parents=True)
    frame = orchard(path)
    run, calls = Session(tmp_path, path).ask(
        "Only for Brookfield, what were the average kilos picked and how many entries were there?"
    )
    kept = frame[frame["Orchard"] == "Brookfield"]
    answer = run.answer
    assert fmt_num(kept["Kilos Picked"].mean()) in answer
    assert f"{len(kept)} of {len(kept)}" in answer or f"{len(kept)} rows" in answer, answer
    # both parts read the kept rows: no count of all the rows
    assert f"{len(frame)} rows" not in answer
