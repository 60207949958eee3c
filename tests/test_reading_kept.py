"""A question is read once for the same inputs (understanding.reading.read_question keeps its readings):
the analyst plans the turn anew for every tool call it makes, ~5 times a question with equal inputs.
A later call gets a copy that is its own (what a caller changes in a reading it got back, no other caller
sees) and that points at the caller's own datasets; any input that differs (the question, anything in a
dataset summary, the earlier questions, the user's answers, the language) is read anew; the kept
readings are bounded."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from app.understanding import reading as reading_module
from app.understanding.reading import read_question

SALES: dict[str, Any] = {
    "name": "sales",
    "version": 1,
    "columns": [
        {"name": "Date", "type": "datetime"},
        {"name": "Region", "type": "category", "levels": 4, "values": ["East", "North", "South", "West"]},
        {"name": "Channel", "type": "category", "levels": 3, "values": ["Online", "Retail", "Wholesale"]},
        {"name": "Units", "type": "integer"},
        {"name": "Revenue", "type": "number"},
    ],
}
STAFF: dict[str, Any] = {
    "name": "staff",
    "version": 1,
    "columns": [
        {"name": "Employee", "type": "identifier"},
        {"name": "Department", "type": "category", "levels": 5},
        {"name": "Salary", "type": "number"},
    ],
}
QUESTION = "Does revenue differ by region?"


@pytest.fixture
def readings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The questions actually read (not taken from the kept readings), from an empty store."""
    monkeypatch.setattr(reading_module, "_kept_readings", type(reading_module._kept_readings)())
    read: list[str] = []
    choose = reading_module.choose_dataset

    def counted(question: str, *args: Any, **kwargs: Any) -> Any:
        read.append(question)
        return choose(question, *args, **kwargs)

    monkeypatch.setattr(reading_module, "choose_dataset", counted)
    return read


def test_the_same_inputs_are_read_once_and_each_caller_gets_its_own_datasets(readings):
    first_tables = [copy.deepcopy(SALES), copy.deepcopy(STAFF)]
    first = read_question(QUESTION, first_tables, ["How much revenue in total?"], {"metric": "Revenue"})
    again_tables = [copy.deepcopy(SALES), copy.deepcopy(STAFF)]  # equal summaries, other objects
    again = read_question(QUESTION, again_tables, ["How much revenue in total?"], {"metric": "Revenue"})
    assert len(readings) == 1  # read once
    assert again == first and again.named_columns == ["Revenue", "Region"]
    # a fresh reading points at the datasets it was given: so does the kept one's copy
    assert again.dataset is again_tables[0] and again.choice.dataset is again_tables[0]
    assert {id(f.dataset) for f in again.choice.fits} == {id(t) for t in again_tables}
    assert first.dataset is first_tables[0]


def test_a_reading_changed_by_its_caller_is_not_what_the_next_caller_gets(readings):
    tables = [copy.deepcopy(SALES), copy.deepcopy(STAFF)]
    fresh = reading_module._read(QUESTION, copy.deepcopy(tables), None, None, False)  # never kept
    readings.clear()
    for _ in range(2):  # the first reading (computed) and a kept one's copy, each changed by its caller
        got = read_question(QUESTION, copy.deepcopy(tables))
        got.mentions.clear()
        got.confirmed["metric"] = "Units"
        got.chain.narrowing.append("only East")
        got.choice.fits[0].columns.append("Units")
        got.choice.fits[0].kinds["Units"] = "name"
        got.choice.fits.reverse()
        got.dataset["columns"].pop()  # the caller's own dataset: its next question is about other data
    again = read_question(QUESTION, copy.deepcopy(tables))
    assert len(readings) == 1
    assert again == fresh
    assert again.named_columns == ["Revenue", "Region"] and again.chain.narrowing == [] and again.confirmed == {}
    assert again.choice.fits[0].dataset["name"] == "sales" and "Units" not in again.choice.fits[0].columns


@pytest.mark.parametrize(
    "change",
    [
        lambda a: a.update(question="Does revenue differ by channel?"),
        lambda a: a["tables"][0]["columns"][1].update(name="Territory"),  # a column renamed
        lambda a: a["tables"][0]["columns"][1]["values"].append("Central"),  # a value more
        lambda a: a["tables"][0].update(version=2),  # the dataset's next version
        lambda a: a["tables"].reverse(),  # the same tables in another order: another newest one
        lambda a: a.update(earlier=["How much revenue in total?"]),
        lambda a: a.update(confirmed={"field.Units": "an identifier"}),
        lambda a: a.update(zh=True),
    ],
)
def test_any_input_that_differs_is_read_anew(readings, change):
    inputs: dict[str, Any] = {
        "question": QUESTION,
        "tables": [copy.deepcopy(SALES), copy.deepcopy(STAFF)],
        "earlier": None,
        "confirmed": None,
        "zh": False,
    }
    read_question(inputs["question"], inputs["tables"], inputs["earlier"], inputs["confirmed"], inputs["zh"])
    change(inputs)  # in place, on the caller's own objects, or another input
    got = read_question(inputs["question"], inputs["tables"], inputs["earlier"], inputs["confirmed"], inputs["zh"])
    assert len(readings) == 2
    fresh = reading_module._read(
        inputs["question"], copy.deepcopy(inputs["tables"]), inputs["earlier"], inputs["confirmed"], inputs["zh"]
    )
    assert got == fresh


def test_a_renamed_column_is_read_by_its_new_name(readings):
    tables = [copy.deepcopy(SALES)]
    assert read_question(QUESTION, tables).named_columns == ["Revenue", "Region"]
    tables[0]["columns"][1]["name"] = "Territory"
    assert read_question(QUESTION, tables).named_columns == ["Revenue"]


def test_the_kept_readings_are_bounded_and_the_oldest_goes_first(readings, monkeypatch):
    monkeypatch.setattr(reading_module, "READINGS_KEPT", 3)
    questions = [f"Does revenue differ by {word}?" for word in ("region", "channel", "date", "units")]
    for question in questions:
        read_question(question, [copy.deepcopy(SALES)])
    assert len(reading_module._kept_readings) == 3
    read_question(questions[-1], [copy.deepcopy(SALES)])  # kept
    assert len(readings) == 4
    read_question(questions[0], [copy.deepcopy(SALES)])  # the oldest, gone: read again
    assert len(readings) == 5 and len(reading_module._kept_readings) == 3


def test_a_summary_that_is_not_plain_data_is_read_each_time_and_not_kept(readings):
    """A value json cannot write exactly (a set, an object) might not tell two summaries apart."""
    odd = {**copy.deepcopy(SALES), "tags": {"monthly"}}
    first = read_question(QUESTION, [odd])
    again = read_question(QUESTION, [odd])
    assert len(readings) == 2 and not reading_module._kept_readings
    assert again == first and again.dataset is odd
