"""Schema derivation: every registered tool documents every argument; required and enums are right."""

from __future__ import annotations

import inspect
from typing import Literal

import pandas as pd
import pytest

from analysis_tools import REGISTRY, ToolContext, ToolResult, make_tool, run_tool
from analysis_tools.registry import _parse_docstring

TOOLS = list(REGISTRY)


@pytest.mark.parametrize("tool", TOOLS, ids=[t.name for t in TOOLS])
def test_every_parameter_has_a_description(tool):
    assert tool.description and tool.summary
    props = tool.parameters["properties"]
    params = [n for n in inspect.signature(tool.func).parameters if n not in ("data", "ctx")]
    assert set(params) <= set(props)
    for name, prop in props.items():
        assert prop.get("description"), f"{tool.name}.{name} has no description"


@pytest.mark.parametrize("tool", TOOLS, ids=[t.name for t in TOOLS])
def test_required_list_matches_signature(tool):
    sig = inspect.signature(tool.func)
    expected = [
        n for n, p in sig.parameters.items() if n not in ("data", "ctx") and p.default is inspect.Parameter.empty
    ]
    assert tool.parameters["required"] == expected
    assert "data" not in tool.parameters["properties"] and "ctx" not in tool.parameters["properties"]
    if "data" in sig.parameters and not tool.multi_data:
        assert "dataset" in tool.parameters["properties"]
    schema = tool.schema()
    assert schema["type"] == "function" and schema["function"]["name"] == tool.name


def test_stats_tool_schemas():
    two = REGISTRY.get("compare_two_groups").parameters
    assert two["required"] == ["value_column", "group_column"]
    assert two["properties"]["method"]["enum"] == ["auto", "welch", "student", "mannwhitney"]
    assert two["properties"]["method"]["default"] == "auto"
    assert two["properties"]["alpha"]["type"] == "number"
    assert two["properties"]["groups"] == {
        "type": "array",
        "items": {"type": "string"},
        "description": two["properties"]["groups"]["description"],
    }
    anova = REGISTRY.get("compare_groups").parameters
    assert anova["properties"]["method"]["enum"] == ["auto", "anova", "welch_anova", "kruskal"]
    corr = REGISTRY.get("correlation_analysis").parameters
    assert corr["required"] == [] and corr["properties"]["x_column"]["type"] == "string"
    assert corr["properties"]["method"]["enum"] == ["pearson", "spearman", "kendall"]
    reg = REGISTRY.get("linear_regression").parameters
    assert reg["required"] == ["target_column", "feature_columns"]
    assert reg["properties"]["intercept"] == {
        "type": "boolean",
        "default": True,
        "description": reg["properties"]["intercept"]["description"],
    }
    assert REGISTRY.get("preview_data").parameters["properties"]["rows"]["type"] == "integer"
    assert "dataset" not in REGISTRY.get("list_datasets").parameters["properties"]


def test_schema_derivation_on_a_sample_function():
    def sample(
        data: pd.DataFrame,
        value_column: str,
        mode: Literal["a", "b"] = "a",
        level: Literal[1, 2] = 1,
        names: list[str] | None = None,
        ctx: ToolContext | None = None,
    ) -> ToolResult:
        """Do a thing.

        More detail that is not the summary.

        Args:
            value_column: The column.
            mode: Which mode,
                continued on a second line.
            level: A number choice.
            names: Some names.
        """
        return ToolResult()

    tool = make_tool(sample, "stats")
    props = tool.parameters["properties"]
    assert tool.summary == "Do a thing."
    assert props["mode"] == {
        "type": "string",
        "enum": ["a", "b"],
        "default": "a",
        "description": "Which mode, continued on a second line.",
    }
    assert props["level"]["type"] == "integer" and props["level"]["enum"] == [1, 2]
    assert props["names"]["type"] == "array" and "default" not in props["names"]
    assert tool.parameters["required"] == ["value_column"]
    assert tool.needs_data and not tool.multi_data


def test_parse_docstring_without_args():
    head, params = _parse_docstring("Only a summary.")
    assert head == "Only a summary." and params == {}


def test_argument_validation_errors():
    df = pd.DataFrame({"v": [1.0, 2.0, 3.0, 4.0], "g": ["a", "a", "b", "b"]})
    r = run_tool("compare_two_groups", df, value_column="v", group_column="g", method="welsh")
    assert not r.ok and r.error["error"] == "invalid_arguments" and "welch" in r.error["did_you_mean"]
    r = run_tool("compare_two_groups", df, value_column="v")
    assert not r.ok and r.error["error"] == "invalid_arguments"
    r = run_tool("compare_two_groups", df, value_column="v", group_column="g", alhpa=0.1)
    assert r.error["error"] == "invalid_arguments" and "alpha" in r.error["did_you_mean"]
    r = run_tool("preview_data", df, rows="many")
    assert r.error["error"] == "invalid_arguments"
    r = run_tool("no_such_tool", df)
    assert r.error["error"] == "unknown_tool"
    r = run_tool("linear_regression", df, target_column="v", feature_columns="g")  # "g" -> ["g"]
    assert r.error is None or r.error["error"] != "invalid_arguments"
