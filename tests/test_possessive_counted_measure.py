"""A count asked of a possessive ("how many kids' tickets did we sell") names what is counted by the
whole phrase (issue 24): the owner ("kids'") read with the thing it owns ("tickets") finds the column
under a merged header by meaning (Passes Sold / Children), where the owner alone is as near to another
column; and the measure right after the count's cue is the one counted, not a number a verb named
("sell" → Takings). A workbook built here; the expected figure is computed with pandas."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from openpyxl import Workbook

from analysis_tools.common import fmt_num
from app.understanding.role_sources import _counted, counted_measure
from tests.test_builtin_understanding import Session, headline


def test_a_possessive_after_a_count_cue_is_not_the_thing_counted():
    assert _counted("how many ", "")
    assert not _counted("how many ", "' tickets did we sell")
    assert not _counted("how many ", "'s lessons")


def test_the_measure_right_after_a_count_cue_is_the_one_counted():
    question = "how many children's passes did we sell in total?"
    owned, verb = question.find("children's passes"), question.find("sell")
    spans = [
        (owned, owned + len("children's passes"), "Passes Sold / Children"),
        (verb, verb + 4, "Takings / Pass Sales"),
    ]
    measures = ["Passes Sold / Children", "Takings / Pass Sales"]
    assert counted_measure(question, spans, measures) == "Passes Sold / Children"
    assert counted_measure("what did we sell?", [(9, 13, "Takings / Pass Sales")], measures) is None


def pool_visits(path: Path) -> pd.DataFrame:
    """300 pool sessions under a merged two-row header: Passes Sold over Adults and Children, Takings
    over Pass Sales and Café."""
    rng = np.random.default_rng(12)
    rows = []
    for i in range(300):
        session = str(rng.choice(["Early", "Lunch", "Late"]))
        adults, children = int(rng.integers(5, 60)), int(rng.integers(0, 40))
        rows.append(
            (
                f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}",
                session,
                adults,
                children,
                adults * 6.5 + children * 3.0,
                round(float(rng.uniform(20, 120)), 2),
            )
        )
    book = Workbook()
    sheet = book.active
    sheet.append(["Date", "Session", "Passes Sold", None, "Takings", None])
    sheet.merge_cells("C1:D1")
    sheet.merge_cells("E1:F1")
    sheet.append([None, None, "Adults", "Children", "Pass Sales", "Café"])
    for row in rows:
        sheet.append(list(row))
    book.save(path)
    return pd.DataFrame(rows, columns=["Date", "Session", "Adults", "Children", "Pass Sales", "Café"])


@pytest.mark.slow
def test_how_many_kids_passes_in_the_late_sessions(tmp_path):
    path = tmp_path / "data" / "pool.xlsx"
    path.parent.mkdir(parents=True)
    frame = pool_visits(path)
    run, _ = Session(tmp_path, path).ask("Just for the late sessions, how many kids' passes did we sell in total?")
    assert fmt_num(frame[frame["Session"] == "Late"]["Children"].sum()) in headline(run)
