"""The built-in analyst (SPEC §10): a deterministic planner behind the ChatModel interface, for
when no language model is configured. It reads the question with app.understanding, plans the
standard analyses that fit, asks when a role would be filled by default (role_question.py), calls
the same tools a model would, and writes the answer in plain words from the tools' results, which
it reads as data (analysis_tools.ResultRecord), never from the text a model is shown.

    analyst.py         BuiltinAnalyst: the ChatModel; one reply per round
    turn_state.py      what it knows of the turn: the calls it made, their results, the user's answers
    rounds.py          the rounds before the answer: look, search, tasks, prep, analyses, evidence
    turn_plan.py       the turn's plan: the reading, the follow-ups' filters, the workspace rules
    plan.py            a question's plan, from its Reading (app.understanding.reading)
    steps.py           Plan and Step, and the shapes the planning modules share
    question_words.py  what kind of analysis the words ask for (compare, relate, drivers, trend, forecast)
    column_choice.py   which number and which grouping when the words do not settle it
    comparisons.py     a number compared between groups
    relationships.py   two numbers that move together; which one explains the other
    rates.py           a yes/no outcome's rate
    paired.py          the same subjects measured twice
    rankings.py        top/bottom N, and when a number peaked
    totals.py          totals and shares per group
    time_steps.py      trend, forecast, season, a named year
    data_tasks.py      data tasks: remove duplicates or gaps, keep rows, add a column; repeated designs
    designs.py         wide pairs, the weekend against the weekdays
    versus_rest.py     one group against all the others
    scope.py           the follow-ups' filters and the workspace rules
    provenance.py      where each column of the plan came from (role_sources)
    role_question.py   asking which column is meant, or saying which stood in
    definitions.py     the user's confirmed definitions, read back from the system prompt
    plan_record.py     record_analysis_plan's arguments
    findings.py        what a result says, in plain words: the headline for each tool
    headlines.py       the headlines themselves, from a result's metrics
    evidence.py        record_evidence's arguments
    answer.py          the answer, conclusions first
    vocabulary.py      the word lists, read from vocabulary.toml (each entry says why it exists)

It imports only app.understanding, the model interface (app.agent.model.interface) and the
analysis tools (analysis_tools), never the rest of the harness.
"""

from app.analyst.analyst import BuiltinAnalyst
from app.analyst.answer import HONESTY
from app.analyst.reading import past_the_reading, pinned_answer
from app.analyst.sheet_words import (
    as_people_write,
    in_time_order,
    own_word,
    rows_in_own_words,
    shared_grain,
    sheet_words_of,
)

__all__ = [
    "HONESTY",
    "BuiltinAnalyst",
    "as_people_write",
    "in_time_order",
    "own_word",
    "past_the_reading",
    "pinned_answer",
    "rows_in_own_words",
    "shared_grain",
    "sheet_words_of",
]
