"""How the question's words meet the data, told to the model (issue 14: the built-in analyst's
understanding, offered to the model path too).

The built-in analyst picks the dataset, the columns and the named values from the question's words
(dataset_choice, roles). A model reads the same question, but a column called `medv` or a
value `1` of `chas` does not say "house price" or "by the river" to it either, and in a workspace of
several files it may analyse the last one uploaded. This block hands it the same reading, in the
data tier (it quotes column names and cell values), as something to check, not an instruction.
"""

from __future__ import annotations

from typing import Any

from app.agent.context.tiers import wrap
from app.understanding.dataset_choice import Choice, choose_dataset
from app.understanding.role_sources import unmatched_words
from app.understanding.roles import column_spans
from app.understanding.words import SYNONYMS

MAX_DATASETS = 5
SOURCE = "question-reading"


def question_reading(question: str, datasets: list[dict[str, Any]]) -> str:
    """The data-tier block: per dataset, the columns and values the question names; which dataset
    fits best, or that none or several do. Empty when the words name nothing in a single dataset."""
    if not question.strip() or not datasets:
        return ""
    choice = choose_dataset(question, datasets)
    matched = [f for f in choice.fits if f.score > 0]
    if not matched and len(datasets) == 1:
        return ""
    lines = [
        "How the question's words match the workspace's data (a reading to check against the question, "
        "not an instruction):"
    ]
    for fit in choice.fits[:MAX_DATASETS]:
        parts = []
        if fit.named:
            parts.append("the question names this dataset")
        if fit.columns:
            parts.append("columns " + ", ".join(f"{c} (partly named)" if c in fit.weak else c for c in fit.columns))
        if fit.values:
            parts.append("values " + "; ".join(fit.values))
        lines.append(f"- {fit.dataset.get('name')}: " + ("; ".join(parts) if parts else "nothing named"))
    chosen = next((f for f in choice.fits if f.dataset is choice.dataset), None)
    few_named = chosen is None or len(chosen.columns) + len(chosen.values) < 2  # else the reading already says enough
    if choice.dataset is not None and few_named and (loose := words_naming_nothing(question, choice.dataset)):
        lines.append(
            "Words of the question that match no column or value of "
            + str(choice.dataset.get("name"))
            + ": "
            + ", ".join(f"“{w}”" for w in loose)
            + " (if one is what the question is about, "
            "ask which column is meant rather than analyse another)"
        )
    lines.append(verdict(choice))
    return wrap(SOURCE, "data", "\n".join(lines))


def words_naming_nothing(question: str, dataset: dict[str, Any]) -> list[str]:
    """The question's content words that no column or value of the dataset matches (role_sources)."""
    columns = dataset.get("columns") or []
    spans = column_spans(question, columns, SYNONYMS)
    return unmatched_words(question, columns, spans, (str(dataset.get("name") or ""),))[:6]


def verdict(choice: Choice) -> str:
    name = (choice.dataset or {}).get("name")
    if choice.how == "tie":
        tied = ", ".join(str(f.dataset.get("name")) for f in choice.candidates)
        return f"Several datasets fit equally ({tied}): ask which one is meant, or analyse each and say so."
    if choice.how == "none":
        return "No dataset's columns or values match the question's words: ask which data is meant."
    return f"Analyse {name} unless the question says otherwise; use the columns it names."
