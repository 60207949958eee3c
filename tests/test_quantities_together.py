"""A question that asks whether two quantities rise together ("施肥越多，收的苹果是不是越多？", "do the trips
that burn more diesel come back with more fish?") relates two measurements: a phrase the rules leave
unmatched there is placed among the measurements only (role_sources._quantities_together), where a
name or a date column no longer crowds the lead of meaning, and the first quantity is the one the
second follows. With the real embedding model (loaded once for the module)."""

from __future__ import annotations

from typing import Any

import pytest

from app.analyst.plan import plan_analysis
from app.understanding import semantic
from app.understanding.kinds import moves_together

ORCHARDS = {
    "name": "orchards",
    "columns": [
        {"name": "Orchard", "type": "category", "levels": 5, "values": ["Hillside", "Riverside"]},
        {"name": "Harvest Date", "type": "datetime"},
        {"name": "Fertiliser Used (kg)", "type": "number", "distinct": 200},
        {"name": "Apples Picked (kg)", "type": "number", "distinct": 200},
        {"name": "Pickers", "type": "number", "distinct": 12},
    ],
}


@pytest.fixture(scope="module", autouse=True)
def model() -> Any:
    return semantic._embedder()


def test_two_quantities_rising_together_are_related_though_one_is_named_in_the_other_language() -> None:
    plan = plan_analysis("施肥越多，收的苹果是不是越多？", ORCHARDS, zh=True)
    assert plan.kind == "relationship"
    assert "correlation_analysis" in [s.tool for s in plan.steps]
    assert plan.provenance is not None
    roles = {s.role: (s.columns, s.how) for s in plan.provenance.sources}
    assert roles["outcome"] == (("Apples Picked (kg)",), "semantic")  # assumed, never checked
    assert roles["predictors"] == (("Fertiliser Used (kg)",), "semantic")


@pytest.mark.parametrize(
    "question",
    [
        "Do the trips that burn more diesel come back with more fish?",
        "Do stores with more staff sell more?",
        "the bigger the house, the higher the price",
        "开的里程越多，收的钱是不是也越多？",
    ],
)
def test_two_comparatives_of_one_sentence_say_two_quantities_move_together(question: str) -> None:
    assert moves_together(question)


@pytest.mark.parametrize(
    "question",
    [
        "Do men earn more than women?",
        "Which store sold more?",
        "Is more rain bad for sales? And are there fewer walkers?",
    ],
)
def test_one_comparative_is_no_relationship(question: str) -> None:
    assert not moves_together(question)


def test_a_measure_no_relationship_names_is_placed_by_meaning_among_the_measurements_only() -> None:
    names = ["Fertiliser Used (kg)", "Apples Picked (kg)"]
    found = semantic.assumed_column("苹果", names)
    assert found is not None and found.name == "Apples Picked (kg)"
    assert semantic.assumed_column("苹果", ["Fertiliser Used (kg)", "Fertiliser Bought (kg)"]) is None  # far from both
