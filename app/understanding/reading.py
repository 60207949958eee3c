"""The reading of one question against the workspace's data: the typed result of this package.

`read_question` puts together what every reader of the question needs first: the question with
the earlier ones it continues (a follow-up inherits its variables and filters: kinds.question_chain),
the dataset it is about (dataset_choice: its words, or the user's scope answer), and the columns
its words name in that dataset, with how each was named (roles.column_mentions). The built-in
analyst plans from a `Reading`; the harness's question-reading block (app.agent.context) shows a
model the same matches, as something to check."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.understanding.dataset_choice import Choice, choose_dataset
from app.understanding.kinds import Chain, question_chain
from app.understanding.roles import Mention, column_mentions
from app.understanding.words import SYNONYMS, question_key


@dataclass(frozen=True)
class Reading:
    """One question, read: what it continues, which dataset it is about, the columns it names."""

    question: str  # as asked
    chain: Chain  # the question with the earlier ones it continues; chain.root is what to analyse
    choice: Choice  # which dataset and how it was chosen (ambiguous: the scope gate asks)
    dataset: dict[str, Any]  # the chosen dataset's summary (the newest one when the words cannot tell)
    mentions: list[Mention] = field(default_factory=list)  # the columns chain.root names, in question order
    confirmed: dict[str, str] = field(default_factory=dict)  # the user's answers: topic -> answer
    zh: bool = False  # the question's language is Chinese

    @property
    def key(self) -> str:
        """The question's key: its clarification topics are `<kind>.<key>...` (scope, role, goal)."""
        return question_key(self.question)

    @property
    def root(self) -> str:
        """The question the analysis answers (a follow-up's first question)."""
        return self.chain.root

    @property
    def named_columns(self) -> list[str]:
        return list(dict.fromkeys(m.name for m in self.mentions))


def read_question(
    question: str,
    datasets: list[dict[str, Any]],
    earlier: list[str] | None = None,
    confirmed: dict[str, str] | None = None,
    zh: bool = False,
) -> Reading:
    """Read `question` (with the `earlier` questions of the conversation, oldest first) against the
    dataset summaries of the workspace; `confirmed` holds the user's answers to earlier questions."""
    confirmed = dict(confirmed or {})
    chain = question_chain(question, earlier or [])
    choice = choose_dataset(chain.text, datasets, confirmed, question_key(question))
    dataset = choice.dataset or (datasets[-1] if datasets else {"name": None, "columns": []})
    mentions = column_mentions(chain.root, dataset.get("columns") or [], SYNONYMS)
    return Reading(question, chain, choice, dataset, mentions, confirmed, zh)
