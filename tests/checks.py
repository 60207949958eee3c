"""Assertions shared by the test modules."""

from __future__ import annotations

from typing import Any


def assert_error(result: Any, category: str) -> dict:
    """A tool's structured error (SPEC §5): the call failed with `category`, a message and a
    non-empty hint for the model to recover with. Returns the error for further checks."""
    assert not result.ok, result.metrics
    error = result.error
    assert error and error.get("error") == category, error
    assert error.get("message"), error
    assert error.get("hint"), error
    return error
