"""How the question's words meet the data, told to the model as a hint (issue 14, trimmed by issue 23).

A model reads the question itself; the rule reading only hands it what a model may miss: that a
column called `medv` or a value `1` of `chas` is what "house price" or "by the river" names, and, in
a workspace of several files, which file's columns the words match. It is one short line in the data
tier (it quotes column names and cell values), inside the datasets block: the columns and values
matched, per dataset. It lists
no words that matched nothing and never suggests asking — ordinary words ("calculate", "assess")
match no column, and whether to ask is the model's call.
"""

from __future__ import annotations

from typing import Any

from app.understanding.dataset_choice import Fit, choose_dataset

MAX_DATASETS = 5
MAX_NAMES = 8  # columns and values per dataset: a hint, not a profile
LEAD = "Columns and values the question's words match (a hint to check, not a reading):"


def question_reading(question: str, datasets: list[dict[str, Any]]) -> str:
    """The hint line: per dataset whose columns or values the question's words match, those columns
    and values (the best fit first). Empty when the words match nothing. It goes inside the datasets
    block (tiers.data_block), which is data tier: one wrapper and one anti-hijack note, not two."""
    if not question.strip() or not datasets:
        return ""
    fits = [f for f in choose_dataset(question, datasets).fits if f.columns or f.values][:MAX_DATASETS]
    if not fits:
        return ""
    several = len(datasets) > 1
    parts = [(f"{f.dataset.get('name')}: " if several else "") + matched(f) for f in fits]
    return f"{LEAD} {'; '.join(parts)}."


def matched(fit: Fit) -> str:
    """One dataset's matches: its columns (those named only partly marked so) and named values. A loose match of a one- or two-letter name is left out: two initials fit too many
    word pairs ("Wilk test" → wt) to tell a model anything."""
    loose = [c for c in fit.columns if fit.kinds.get(c) == "loose"]
    columns = [c for c in fit.columns if not (c in loose and len(c) <= 2)]
    names = [f"{c} (partly)" if c in fit.weak else c for c in columns] + list(fit.values)
    return ", ".join(names[:MAX_NAMES])
