"""A big column of free text is kept as text without factorising it whole (types._settled_free_text),
and whatever the column holds, the answer is the one the distinct-value path gives."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from app.ingest import types
from app.ingest.textvalues import Distinct

ROWS = 6_000
WORDS = ["late", "broken", "nice", "packaging", "again", "would", "order", "delivery", "ok", "great", "slow", "box"]


def _sentences(n: int, seed: int = 7) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=rng.integers(2, 7))) for _ in range(n)]


def _column(cells: list[str | None]) -> pd.Series:
    return pd.Series(cells, dtype="str")  # what the readers give: pandas' Arrow-backed str


def _mixed(share: float, other, seed: int = 3) -> list[str | None]:
    """Free text with `share` of the rows replaced by other(i), spread through the column."""
    rng = np.random.default_rng(seed)
    cells: list[str | None] = list(_sentences(ROWS))
    for i in np.flatnonzero(rng.random(ROWS) < share):
        cells[i] = other(int(i))
    return cells


COLUMNS = {
    "free_text": lambda: _sentences(ROWS),
    "free_text_with_gaps": lambda: _mixed(0.2, lambda i: None),
    "a_missing_marker": lambda: _mixed(0.001, lambda i: "N/A"),
    "a_marker_late": lambda: _sentences(ROWS - 1) + ["—"],
    "an_empty_text": lambda: _sentences(ROWS - 1) + [""],
    "a_cell_to_trim": lambda: _sentences(ROWS - 1) + ["late again "],
    "an_ideographic_space": lambda: _sentences(ROWS - 1) + ["晚\u3000到"],
    "mostly_phones": lambda: _mixed(0.95, lambda i: f"138{i:08d}"),
    "phones_under_the_share": lambda: _mixed(0.85, lambda i: f"138{i:08d}"),
    "mostly_numbers_written_oddly": lambda: _mixed(0.97, lambda i: f"¥{i},5"),
    "mostly_amounts_with_units": lambda: _mixed(0.97, lambda i: f"{i / 10}万"),
    "mostly_chinese_dates": lambda: _mixed(0.97, lambda i: f"20{i % 30 + 10}年{i % 12 + 1}月{i % 28 + 1}日"),
    "mostly_dates_in_a_layout": lambda: _mixed(0.97, lambda i: f"{i % 28 + 1}-Jan-20{i % 30 + 10}"),
    "numbers_after_text_first": lambda: _sentences(900) + [f"{i}.5 kg" for i in range(ROWS - 900)],
    "long_digit_codes": lambda: [f"{10**12 + i * 7919}" for i in range(ROWS)],
    "short_codes": lambda: [f"x{i:04d}" for i in range(ROWS)],
    "few_distinct_values": lambda: [WORDS[i % 12] + " " + WORDS[i % 7] for i in range(ROWS)],
    "distinct_values_only_late": lambda: ["ok"] * (ROWS - 600) + _sentences(600),
    "yes_no_words_mostly": lambda: _mixed(0.99, lambda i: "是" if i % 2 else "否"),
}


@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_the_settled_path_answers_as_the_distinct_value_path(name, monkeypatch):
    cells = COLUMNS[name]()
    settled = types._settled_free_text(_column(cells))
    fast = types.convert_column("Comment", _column(cells))
    monkeypatch.setattr(types, "_settled_free_text", lambda col: False)
    full = types.convert_column("Comment", _column(cells))
    pd.testing.assert_series_equal(fast[0], full[0], check_exact=True)
    assert fast[1] == full[1]
    assert [vars(s) for s in fast[2]] == [vars(s) for s in full[2]]
    if settled:
        assert (full[1], full[2]) == ("text", [])


def test_which_columns_are_settled_as_free_text():
    settled = {name for name, cells in COLUMNS.items() if types._settled_free_text(_column(cells()))}
    # Free text, also with gaps, or text whose first distinct values are no numbers (the distinct-value
    # path's sample says the same); never a column anything else could be read from.
    assert settled == {"free_text", "free_text_with_gaps", "numbers_after_text_first"}


def test_a_big_free_text_column_is_not_factorised_whole(monkeypatch):
    factorised: list[int] = []
    real = Distinct.of.__func__

    def of(cls, col):
        factorised.append(len(col))
        return real(cls, col)

    monkeypatch.setattr(Distinct, "of", classmethod(of))
    col = _column(_sentences(ROWS))
    series, kind, steps = types.convert_column("Comment", col)
    assert (kind, steps) == ("text", []) and series.equals(col)
    assert factorised and max(factorised) < ROWS  # only the first rows' distinct values


def test_numbers_written_as_text_are_told_from_free_text_by_the_head_alone(monkeypatch):
    """A column of numbers or dates written as text ("85.5%") fails the tests made on the first rows'
    distinct values; the searches over the whole column's cells (white space, markers, phone lengths)
    are not made for it."""
    searched: list[int] = []
    real = types.may_need_trim
    monkeypatch.setattr(types, "may_need_trim", lambda texts: searched.append(len(texts)) or real(texts))
    percents = [f"{i % 1000 / 10}%" for i in range(ROWS)]
    assert not types._settled_free_text(_column(percents))
    assert searched == []
    assert types._settled_free_text(_column(_sentences(ROWS)))  # free text: the whole column is searched
    assert searched == [ROWS]
