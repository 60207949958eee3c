"""The fact helpers the later held-out question sets share (holdout12 on; the rounding, counting and
monthly helpers from holdout14 on): reading a generated file back as a person reads it, its rows of
data only, and the facts an everyday question's answer must show.

Imported, like expected.py and eval_files.py, with sys.path set to data/eval. Plain pandas / scipy only:
nothing here may read Verity's code or runs.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

import pandas as pd
from eval_files import dates, read_bytes
from expected import MONEY, either, metric, number, pct, r
from scipy import stats


def records(repo: Path, name: str, key: str, merged: Collection[str]) -> pd.DataFrame:
    """A file from disk, its rows of data only: a row whose `key` cell is blank (a blank row) or a
    total (TOTAL / 合计) is not a record."""
    frame = read_bytes((repo / name).read_bytes(), name, merged)
    label = frame[key].astype("string").str.strip()
    return frame[label.notna() & ~label.str.upper().isin(["TOTAL", "合计"])].reset_index(drop=True)


def as_dates(column: pd.Series, forms: list[str]) -> pd.Series:
    """A date column typed several ways; every filled cell must read as a date."""
    read_ = dates(column, forms)
    assert read_.notna().sum() == column.notna().sum(), column[read_.isna() & column.notna()].head()
    return read_


def yes(column: pd.Series) -> pd.Series:
    return column.astype(str).str.strip().isin(["Y", "Yes", "是"])


# --- fact shorthands ------------------------------------------------------------------------------------
def en() -> dict[str, Any]:
    return {"language": "en"}


def task(id_: str, files: list[str], question: str, facts: list[dict], source: str) -> dict[str, Any]:
    """A task in the set's format. Its language is the question's own: an English question that names a
    Chinese label as it is written in the sheet is English (expected.task would call it Chinese by its characters)."""
    language = "en" if {"language": "en"} in facts else "zh"
    if language == "zh":
        facts = [{"language": "zh"}, *facts]
    return {"id": id_, "files": files, "question": question, "language": language, "facts": facts, "source": source}


# What a question asks for (a task may be of several kinds): the make-up of holdout13 and later sets.
KINDS = (
    "top_n",  # the N largest / smallest rows
    "filter",  # only some rows ("only …", "just for …", "只看…", "其中…")
    "yes_no_rate",  # the rate of a yes/no outcome per group
    "shares",  # every group's share of a total
    "compound",  # two asks in one question
    "derived",  # a quantity made from columns: days between two dates, a per-unit rate, a sum of two
    "per_month",  # a total for each month (or quarter)
    "relationship",  # does one thing go with another
    "two_groups",  # two named groups compared
    "how_many",  # a count of rows
)


def ask(id_: str, files: list[str], question: str, kinds: list[str], facts: list[dict], source: str) -> dict:
    """A task with the kinds of question it is."""
    assert kinds and set(kinds) <= set(KINDS), kinds
    made = task(id_, files, question, facts, source)
    return {**{k: made[k] for k in ("id", "files", "question", "language")}, "kinds": kinds} | {
        "facts": made["facts"],
        "source": made["source"],
    }


def rate(share: float) -> dict[str, Any]:
    """A share shown as a percentage (40.5%, or rounded to 41%) or as a fraction (0.405)."""
    return either(number(pct(share), abs_tol=0.51), number(r(share, 4), abs_tol=0.0051))


def money(value: float) -> dict[str, Any]:
    return number(r(value, 2), rel_tol=MONEY * 2)


def exact(value: float) -> dict[str, Any]:
    return number(r(value, 2), abs_tol=0.5)


def mean(value: float, tol: float = 0.06) -> dict[str, Any]:
    return number(r(value, 2), abs_tol=tol)


def near(value: float, rel_tol: float = 0.01) -> dict[str, Any]:
    """A number shown as people round it (a mean of 87.46 as 87.5 or 87)."""
    return number(r(value, 4), rel_tol=rel_tol)


def count(value: int) -> dict[str, Any]:
    return number(int(value))


def clear_winner(values: pd.Series, margin: float = 1.05) -> str:
    """The group with the largest value, checked to be clear of the next one."""
    ordered = values.sort_values(ascending=False)
    assert ordered.iloc[0] > ordered.iloc[1] * margin, ordered
    return str(ordered.index[0])


def monthly(when: pd.Series, amount: pd.Series, months: list[int], by: str = "month") -> pd.Series:
    """Each month's (quarter's) total, checked to cover the months (quarters) the sheet runs over (all in 2024)."""
    totals = amount.groupby(getattr(when.dt, by)).sum()
    assert list(totals.index) == months, totals
    assert (when.dt.year == 2024).all()
    return totals


def listing(series: pd.Series, fmt: str = "{:.2f}") -> str:
    return ", ".join(f"{k} {fmt.format(v)}" for k, v in series.items())


def percents(series: pd.Series) -> str:
    return ", ".join(f"{k} {pct(v)}%" for k, v in series.items())


def correlation(x: pd.Series, y: pd.Series) -> list[dict[str, Any]]:
    """Pearson's r or Spearman's rho, shown or recorded."""
    pair = pd.concat([x, y], axis=1).dropna().astype(float)
    pearson = stats.pearsonr(pair.iloc[:, 0], pair.iloc[:, 1])[0]
    spearman = stats.spearmanr(pair.iloc[:, 0], pair.iloc[:, 1])[0]
    return [
        number(r(pearson, 3), abs_tol=0.015),
        number(r(spearman, 3), abs_tol=0.015),
        metric("r", r(pearson, 4), "correlation_analysis", rel_tol=0, abs_tol=0.015),
    ]


def per_unit(frame: pd.DataFrame, group: str, amount: str, units: pd.Series) -> dict[str, tuple[float, float]]:
    """Each group's amount per unit: total over total, and the mean of each row's own ratio."""
    ratio = frame[amount] / units
    out = {}
    for name, rows in frame.groupby(group):
        out[str(name)] = (rows[amount].sum() / units[rows.index].sum(), ratio[rows.index].mean())
    return out


def top_rows(frame: pd.DataFrame, by: str, n: int, key: str, largest: bool = True) -> list[str]:
    """The n rows with the largest (smallest) value, checked to be clear of a tie at the cut."""
    ordered = frame.dropna(subset=[by]).sort_values(by, ascending=not largest)
    values = ordered[by].tolist()
    assert values[n - 1] != values[n], f"a tie at the cut of the top {n} by {by}"
    return [str(v) for v in ordered[key].head(n)]
