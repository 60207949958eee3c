"""The reading of one question against the workspace's data: the typed result of this package.

`read_question` puts together what every reader of the question needs first: the question with
the earlier ones it continues (a follow-up inherits its variables and filters: kinds.question_chain),
the dataset it is about (dataset_choice: its words, or the user's scope answer), and the columns
its words name in that dataset, with how each was named (roles.column_mentions), read as the
analysis takes them: the root question with the goal the user confirmed for it, the columns with
the numeric ones the user called labels as identifiers. The
built-in analyst plans from a `Reading` (app.analyst.plan.plan_reading); the harness's
question-reading block (app.agent.context) shows a model the same matches, as something to check."""

from __future__ import annotations

import copy
import hashlib
import json
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from app.understanding.dataset_choice import Choice, choose_dataset
from app.understanding.kinds import Chain, question_chain
from app.understanding.role_sources import semantic_mentions
from app.understanding.roles import Mention, column_mentions
from app.understanding.wide_pairs import said_side
from app.understanding.words import SYNONYMS, question_key


@dataclass(frozen=True)
class Reading:
    """One question, read: what it continues, which dataset it is about, the columns it names."""

    question: str  # as asked
    chain: Chain  # the question with the earlier ones it continues; chain.root is what to analyse
    choice: Choice  # which dataset and how it was chosen (ambiguous: the scope gate asks)
    dataset: dict[str, Any]  # the chosen dataset's summary (the newest one when the words cannot tell)
    mentions: list[Mention] = field(default_factory=list)  # the columns `asked` names, in question order
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
    def root_key(self) -> str:
        """The key of the question the analysis answers: its role and goal answers are filed under it."""
        return question_key(self.root)

    @property
    def asked(self) -> str:
        """The root question as the analysis reads it: with the goal the user confirmed for it
        ("… (compare the regions)"), whose words count as the question's own."""
        return with_goal(self.root, self.confirmed)

    @property
    def columns(self) -> list[dict[str, Any]]:
        """The chosen dataset's columns as the user confirmed them (`with_labels`)."""
        return with_labels(self.dataset.get("columns") or [], self.confirmed)

    @property
    def said(self) -> dict[str, str]:
        """Each named column with the words of `asked` that named it (the first place), by any match."""
        said: dict[str, str] = {}
        for mention in self.mentions:
            said.setdefault(mention.name, self.asked[mention.start : mention.end])
        return said

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
    dataset summaries of the workspace; `confirmed` holds the user's answers to earlier questions.

    Each round of a run asks again with the same inputs (the analyst plans the turn anew for every
    tool call it makes: ~5 times a question, ~11% of a built-in run's CPU), so a reading is kept, by
    everything it depends on (`_reading_key`), and a later call gets a copy of it: its own containers,
    and the caller's own dataset dicts wherever the reading points at one, as a fresh reading would."""
    key = _reading_key(question, datasets, earlier, confirmed, zh)
    if key is None:  # an input that has no exact written form: read it, keep nothing
        return _read(question, datasets, earlier, confirmed, zh)
    with _kept_lock:
        kept = _kept_readings.get(key)
        if kept is not None:
            _kept_readings.move_to_end(key)
    if kept is None:
        reading = _read(question, datasets, earlier, confirmed, zh)
        # kept apart from every object of this call: the caller may change what it was given or got back
        slots = [_DatasetSlot(at) for at in range(len(datasets))]
        detached = copy.deepcopy(reading, {id(d): slot for d, slot in zip(datasets, slots, strict=True)})
        with _kept_lock:
            _kept_readings[key] = (detached, slots)
            while len(_kept_readings) > READINGS_KEPT:
                _kept_readings.popitem(last=False)
        return reading
    detached, slots = kept
    fresh: Reading = copy.deepcopy(detached, {id(slot): datasets[slot.at] for slot in slots})
    return fresh


# How many readings a process keeps (the newest used): a run reads a question or two (a compound one, each
# part; a follow-up, with what it continues), and a reading without its datasets is a few kB.
READINGS_KEPT = 256
_kept_readings: OrderedDict[bytes, tuple[Reading, list[_DatasetSlot]]] = OrderedDict()
_kept_lock = threading.Lock()  # a server's runs read in threads of one process


@dataclass(frozen=True, eq=False)
class _DatasetSlot:
    """Where a kept reading pointed at one of the datasets it was read against (the chosen one, each
    fit's): the `at`-th of them, which a later call's copy points at its own dataset at."""

    at: int


def _reading_key(
    question: str,
    datasets: list[dict[str, Any]],
    earlier: list[str] | None,
    confirmed: dict[str, str] | None,
    zh: bool,
) -> bytes | None:
    """A digest of everything a reading depends on: the question, the whole of each dataset summary as
    the turn saw it (its name, version, columns, their values and profile), the earlier questions, the
    user's answers and the language. Summaries equal in all of that read alike, whichever workspace they
    are in; anything else (the vocabulary, the matcher's model) is fixed for the process. None when an
    input is not plain JSON data (its written form might not tell two values apart)."""
    try:
        text = json.dumps(
            [question, datasets, earlier or [], confirmed or {}, zh],
            sort_keys=True,
            ensure_ascii=False,
            default=_not_plain,
        )
    except (TypeError, ValueError):
        return None
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=32).digest()


def _not_plain(value: Any) -> Any:
    raise TypeError(f"not plain data: {type(value).__name__}")


def _read(
    question: str,
    datasets: list[dict[str, Any]],
    earlier: list[str] | None,
    confirmed: dict[str, str] | None,
    zh: bool,
) -> Reading:
    """The reading itself (read_question without the kept readings)."""
    confirmed = dict(confirmed or {})
    chain = question_chain(question, earlier or [])
    # the table the user picked for this question, or for the question a follow-up refines
    keys = tuple(dict.fromkeys((question_key(question), question_key(chain.root))))
    choice = choose_dataset(chain.text, datasets, confirmed, keys)
    dataset = choice.dataset or (datasets[-1] if datasets else {"name": None, "columns": []})
    columns = with_labels(dataset.get("columns") or [], confirmed)
    asked = with_goal(chain.root, confirmed)
    # what the rules leave unmatched, placed by meaning when the matcher is sure (role_sources)
    mentions = semantic_mentions(
        asked, columns, column_mentions(asked, columns, SYNONYMS), (str(dataset.get("name") or ""),)
    )
    return Reading(question, chain, choice, dataset, marked_sides(asked, columns, mentions), confirmed, zh)


def marked_sides(question: str, columns: list[dict[str, Any]], mentions: list[Mention]) -> list[Mention]:
    """The mentions with one that reached a column of a marked pair by what the pair shares (a word for
    "Mock Scores", not the leaf's own name) moved to the side the question's markers say
    (wide_pairs.said_side): "辅导后的成绩" means the After score, in whichever language the leaves are."""
    moved = []
    for mention in mentions:
        side = said_side(question, mention.name, columns) if mention.kind != "name" else None
        moved.append(mention._replace(name=side) if side else mention)
    return moved


def with_goal(question: str, confirmed: dict[str, str]) -> str:
    """The question with the goal the user picked for it in a clarification (topic `goal.<key>`)."""
    goal = confirmed.get(f"goal.{question_key(question)}")
    return f"{question} ({goal})" if goal else question


# The answer to a field-semantics question (clarify's gates: "is this column a number or a label?")
# that makes the column a label.
LABEL_ANSWER = re.compile(r"an identifier|标识", re.I)


def with_labels(columns: list[dict[str, Any]], confirmed: dict[str, str]) -> list[dict[str, Any]]:
    """The columns with the numeric ones the user called labels (topic `field.<column>`) as identifiers."""
    labels = {
        topic.split(".", 1)[1]
        for topic, answer in confirmed.items()
        if topic.startswith("field.") and LABEL_ANSWER.match(answer)
    }
    return [{**c, "type": "identifier"} if c["name"] in labels else c for c in columns]
