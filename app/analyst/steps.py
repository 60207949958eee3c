"""The built-in analyst's plan: the tool calls it will make (steps) and what it read from the
question (metric, grouping, kind, filters …), with the shapes the planning modules share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

from app.understanding.dataset_choice import Choice
from app.understanding.role_sources import Provenance
from app.understanding.roles import Span

Column = dict[str, Any]  # a column's summary (app.workspaces.dataset_summary, with what read_profile adds)
Arguments = dict[str, Any]  # a tool call's arguments
Spans = list[Span]  # where the question names columns: (start, end, column), in question order


class Condition(TypedDict):
    """One filter_rows condition: `Channel == Online`, `carat > 1`, `Date between [a, b]`."""

    column: str
    op: str
    value: Any


class YesNoCondition(Condition):
    """A condition on a yes/no column, with whether a negator stood before the column's name."""

    negated: bool


@dataclass
class Step:
    """One planned tool call and the task it serves."""

    tool: str
    arguments: Arguments
    task: str | None = None  # subject of the task it completes (None: supporting step)
    evidence: bool = True
    prep: bool = False  # a data step the analyses read (a filter): run in a round of its own, first


@dataclass
class Plan:
    metric: str | None
    dimension: str | None
    steps: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    kind: str = "standard"  # or proportion, paired, top, total, dedupe (app.understanding.kinds)
    top: tuple[int, bool] | None = None  # (N, bottom) for a top/bottom-N question
    goal: tuple[str, int] | None = None  # the kind (and N) a reading chip chose for the question
    dataset: str | None = None  # the dataset chosen (dataset_choice) and the one analysed (a filtered copy)
    analysed: str | None = None
    choice: Choice | None = None
    filters: list[Condition] = field(default_factory=list)
    filter_pinned: str | None = None  # the column a filter chip chose the kept value of (or no filter on)
    rules: list[tuple[str, bool]] = field(default_factory=list)  # workspace rules: (text, applied)
    values: list[str] = field(default_factory=list)  # the grouping's values the question names, in its order
    weights: str | None = None  # a count table's frequency column: each row stands for that many cases
    success: str | None = None  # the outcome's value that counts as a success (Admit = Admitted)
    counted_no: bool = False  # a count of a yes/no column's rows whose value is its no ("没被批准的申请有多少个")
    counted_as: str = ""  # what a count's words call the rows, named by no column ("rentals", "单": counted_as)
    failures: str | None = None  # with counts of both outcomes per row: the failures' column (ncontrols)
    lead: str = ""  # said before the headline: what of the question the data cannot answer
    derived: str | None = None  # the new version a prep step makes, which the analyses read
    whole: str | None = None  # the grouping column one group of which is compared with the others
    provenance: Provenance | None = None  # where each role's columns came from (role_sources)
    words: dict[str, str] = field(default_factory=dict)  # column → the word the question used for it ("wind")
    sheet_words: dict[str, dict[str, str]] = field(default_factory=dict)  # yes/no column → its own words
    grain: str | None = None  # the chosen table's time grain (monthly: its dates are named by their month)
    percents: frozenset[str] = frozenset()  # rates kept as fractions (退货率 0.056), shown as 5.6% (sheet_words)
    parts: list[Plan] = field(default_factory=list)  # a compound question's plans, one per part (compound_turn)
    # the other aggregate when the plan's own one was a default, not the question's words, where the
    # question said neither total nor average of an additive number per group: "mean" when it was totalled
    # (rows in periods), "total" when the averages were compared (rows in none: reading.kind_assumption)
    kind_default: str | None = None


# Data tasks: a new version of the table, no inference (answer.FACT_KINDS adds the plain facts)
DATA_TASK_KINDS = ("dedupe", "filter", "derive", "drop_missing")


def weighted_arguments(plan: Plan) -> Arguments:
    """A count table's rows weigh as many cases as their frequency says (count_weights)."""
    return {"weight_column": plan.weights} if plan.weights else {}


def profile_step() -> Step:
    """The look at the data every analysis plan starts with (its result is not evidence)."""
    return Step("profile_dataset", {}, evidence=False)


def date_column(columns: list[Column]) -> str | None:
    """The first date column that holds no personal data."""
    return next((str(c["name"]) for c in columns if c["type"] == "datetime" and not c.get("pii")), None)
