"""Data tools (group `data`): cleaning, conversion, filtering, derived columns, aggregation, pivots,
joins with a cardinality check and data-quality checks — against published R results on
`data/reference/rdatasets` and hand-computed oracles, plus their structured errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis_tools import list_tools, run_tool
from tests.checks import assert_error

REF = Path(__file__).resolve().parents[1] / "data" / "reference"
RDATA = REF / "rdatasets"
DATA_TOOLS = [
    "clean_data",
    "convert_types",
    "filter_rows",
    "derive_column",
    "group_aggregate",
    "pivot_table",
    "merge_datasets",
    "detect_data_quality",
    "value_counts",
]


def rdata(name: str) -> pd.DataFrame:
    path = RDATA / f"{name}.csv"
    return pd.read_csv(path)


def assert_step(result, before: int | None = None, after: int | None = None) -> None:
    assert result.ok, result.error
    assert isinstance(result.table, pd.DataFrame) and result.payload["step"].count("\n") == 0
    assert "[conclusion]" in result.text and result.interpretation
    for key, value in result.metrics.items():
        assert type(value) in (int, float, str) and not (isinstance(value, float) and math.isnan(value)), key
    if after is not None:
        assert len(result.table) == after and f"→ {after:,}" in result.payload["step"]
    if before is not None:
        assert f"{before:,}" in result.payload["step"]


@pytest.fixture
def messy() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "Region": [" East", "West ", "East", "N/A", None, "East", " East", "-"],
            "Sales": ["1,200", "350", "¥4,000", "12%", None, "3.5万", "1,200", "n/a"],
            "Empty": [None] * 8,
            "Date": ["2024-01-05", "2024年2月3日", "2024/03/01", "2024-03-15", None, "bad", "2024-01-05", "2024-12-31"],
        }
    )


# ---------------------------------------------------------------- registry


def test_data_tools_are_registered_with_documented_schemas():
    tools = {t.name: t for t in list_tools("data")}
    assert set(DATA_TOOLS) <= set(tools)
    for name in DATA_TOOLS:
        tool = tools[name]
        assert tool.description and len(tool.summary) > 30
        for arg, prop in tool.parameters["properties"].items():
            if arg != "dataset":
                assert prop.get("description"), (name, arg)
    assert tools["merge_datasets"].multi_data
    ops = tools["filter_rows"].parameters["properties"]["conditions"]
    assert ops["type"] == "array" and ops["items"]["type"] == "object"
    assert "between" in ops["items"]["properties"]["op"]["enum"]  # the operators are an enum (issue 23)


# ---------------------------------------------------------------- clean_data


def test_clean_data_logs_every_change(messy):
    before = messy.copy()
    result = run_tool("clean_data", messy)
    assert_step(result, before=8)
    table, m = result.table, result.metrics
    pd.testing.assert_frame_equal(messy, before)  # input untouched
    assert "Empty" not in table.columns and m["n_columns_after"] == 3
    # row 5 (all missing) is dropped; row 7 (" East", "1,200", 2024-01-05) duplicates row 1 after trimming
    assert m["empty_rows_removed"] == 1 and m["duplicate_rows_removed"] == 1 and len(table) == 6
    assert m["cells_trimmed"] == 3 and m["cells_set_missing"] == 3  # "N/A", "-", "n/a"
    assert table["Region"].fillna("∅").tolist() == ["East", "West", "East", "∅", "East", "∅"]
    log = result.payload["log"]
    assert {"action": "read 'N/A' as missing", "column": "Region", "count": 1} in log
    assert any(e["action"] == "dropped exact duplicate rows" and e["count"] == 1 for e in log)


def test_clean_data_drop_missing_matches_r_complete_cases():
    airquality = rdata("airquality")
    result = run_tool("clean_data", airquality, drop_missing_in=["Ozone", "Solar.R"])
    assert_step(result, before=153, after=111)  # R: sum(complete.cases(airquality)) == 111
    assert result.metrics["rows_removed_missing"] == 42 and result.table["Ozone"].notna().all()


def test_clean_data_errors(messy):
    wrong = run_tool("clean_data", messy, drop_missing_in=["Regoin"])
    assert "Region" in assert_error(wrong, "column_not_found")["did_you_mean"]
    assert_error(run_tool("clean_data", pd.DataFrame()), "insufficient_data")
    assert_error(
        run_tool(
            "clean_data",
            messy,
            drop_missing_in=["Region", "Date", "Sales"],
            missing_markers=["East", "West", "2024-03-15", "bad"],
        ),
        "no_rows_left",
    )


# ---------------------------------------------------------------- convert_types


def test_convert_types_parses_text_numbers(messy):
    result = run_tool("convert_types", messy, column="Sales", to="number")
    assert_step(result)
    values = result.table["Sales"].tolist()
    assert values[:4] == [1200.0, 350.0, 4000.0, 0.12] and values[5] == 35000.0
    m = result.metrics
    assert m["n_values"] == 7 and m["n_converted"] == 6 and m["n_failed"] == 1  # "n/a" is not a number
    assert (
        m["parsed.thousands"] == 3 and m["parsed.currency"] == 1 and m["parsed.percent"] == 1 and m["parsed.units"] == 1
    )
    assert "'n/a'" in result.text and messy["Sales"].iloc[0] == "1,200"


def test_convert_types_dates_booleans_integers():
    df = pd.DataFrame(
        {
            "d": ["2024-01-05", "2024年2月3日", "2024/03/01", "oops"],
            "b": ["是", "否", "yes", "FALSE"],
            "i": ["1", "2.5", "3", "4"],
            "c": ["a", "b", "a", None],
        }
    )
    dates = run_tool("convert_types", df, column="d", to="datetime")
    assert_step(dates)
    assert list(dates.table["d"][:3]) == [
        pd.Timestamp("2024-01-05"),
        pd.Timestamp("2024-02-03"),
        pd.Timestamp("2024-03-01"),
    ]
    assert dates.metrics["n_failed"] == 1 and pd.isna(dates.table["d"][3])
    booleans = run_tool("convert_types", df, column="b", to="boolean")
    assert list(booleans.table["b"]) == [True, False, True, False]
    integers = run_tool("convert_types", df, column="i", to="integer")
    assert integers.metrics["parsed.not_whole"] == 1 and integers.table["i"].dtype == "Int64"
    category = run_tool("convert_types", df, column="c", to="category")
    assert isinstance(category.table["c"].dtype, pd.CategoricalDtype) and category.table["c"].isna().sum() == 1


def test_convert_types_errors(messy):
    assert (
        "Sales"
        in assert_error(run_tool("convert_types", messy, column="sale", to="number"), "column_not_found")[
            "did_you_mean"
        ]
    )
    bad = run_tool("convert_types", messy, column="Region", to="number")
    assert assert_error(bad, "wrong_column_type")["failed_examples"]
    assert_error(run_tool("convert_types", messy, column="Sales", to="money"), "invalid_arguments")
    assert_error(run_tool("convert_types", messy, column="Empty", to="number"), "insufficient_data")
    half = pd.DataFrame({"x": ["1", "a", "b", "c"]})
    assert_error(run_tool("convert_types", half, column="x", to="number"), "wrong_column_type")
    forced = run_tool("convert_types", half, column="x", to="number", force=True)
    assert forced.ok and forced.metrics["n_failed"] == 3


# ---------------------------------------------------------------- filter_rows


def test_filter_rows_matches_r_subset():
    chick = rdata("ChickWeight")
    diet = run_tool("filter_rows", chick, conditions=[{"column": "Diet", "op": "==", "value": 1}])
    assert_step(diet, before=578, after=220)  # R: table(ChickWeight$Diet)[1] == 220
    airquality = rdata("airquality")
    months = run_tool("filter_rows", airquality, conditions=[{"column": "Month", "op": "in", "value": [5, 6]}])
    assert_step(months, after=61)
    missing = run_tool("filter_rows", airquality, conditions='[{"column": "Ozone", "op": "is_missing"}]')
    assert_step(missing, after=37)  # R: sum(is.na(airquality$Ozone)) == 37
    both = run_tool(
        "filter_rows",
        airquality,
        conditions=[
            {"column": "Temp", "op": "between", "value": [70, 80]},
            {"column": "Ozone", "op": ">", "value": 30},
        ],
    )
    expected = airquality[airquality.Temp.between(70, 80) & (airquality.Ozone > 30)]
    assert_step(both, after=len(expected))
    either = run_tool(
        "filter_rows",
        airquality,
        match="any",
        conditions=[{"column": "Month", "op": "==", "value": 5}, {"column": "Day", "op": "<=", "value": 1}],
    )
    assert len(either.table) == 31 + 4


def test_filter_rows_compares_dates_as_calendar_periods():
    economics = rdata("ggplot2_economics")  # monthly, 1967-07 … 2015-04
    year = run_tool("filter_rows", economics, conditions=[{"column": "date", "op": "==", "value": "2001"}])
    assert_step(year, after=12)
    between = run_tool(
        "filter_rows", economics, conditions=[{"column": "date", "op": "between", "value": ["2000-01", "2000-06"]}]
    )
    assert_step(between, after=6)  # the end month counts whole
    after = run_tool("filter_rows", economics, conditions=[{"column": "date", "op": ">", "value": "2014-12"}])
    assert_step(after, after=4)
    days = pd.DataFrame({"t": pd.to_datetime(["2024-03-05 09:00", "2024-03-05 23:59", "2024-03-06 00:00"])})
    assert (
        len(run_tool("filter_rows", days, conditions=[{"column": "t", "op": "<=", "value": "2024-03-05"}]).table) == 2
    )
    assert len(run_tool("filter_rows", days, conditions=[{"column": "t", "op": ">", "value": "2024-03-05"}]).table) == 1


def test_filter_rows_text_contains_and_not_equal(messy):
    cleaned = run_tool("clean_data", messy).table
    east = run_tool("filter_rows", cleaned, conditions=[{"column": "Region", "op": "contains", "value": "eas"}])
    assert len(east.table) == 3
    not_east = run_tool("filter_rows", cleaned, conditions=[{"column": "Region", "op": "!=", "value": "East"}])
    assert list(not_east.table["Region"]) == ["West"]  # missing regions never match


def test_filter_rows_errors():
    iris = rdata("iris")
    assert (
        "Species"
        in assert_error(
            run_tool("filter_rows", iris, conditions=[{"column": "species", "op": "==", "value": "setosa"}]),
            "column_not_found",
        )["did_you_mean"]
    )
    assert assert_error(
        run_tool("filter_rows", iris, conditions=[{"column": "Species", "op": "equals", "value": "x"}]),
        "invalid_arguments",
    )
    assert_error(
        run_tool("filter_rows", iris, conditions=[{"column": "Species", "op": ">", "value": "a"}]), "wrong_column_type"
    )
    assert_error(
        run_tool("filter_rows", iris, conditions=[{"column": "Sepal.Length", "op": ">", "value": "big"}]),
        "invalid_arguments",
    )
    assert_error(
        run_tool("filter_rows", iris, conditions=["Species == 'setosa'"]), "invalid_arguments"
    )  # no eval of strings
    typo = run_tool("filter_rows", iris, conditions=[{"column": "Species", "op": "==", "value": "virginca"}])
    assert "virginica" in assert_error(typo, "no_rows_match")["did_you_mean"]
    assert_error(
        run_tool("filter_rows", iris.head(0), conditions=[{"column": "Species", "op": "==", "value": "a"}]),
        "insufficient_data",
    )


# ---------------------------------------------------------------- derive_column


def test_derive_column_expression_and_kinds():
    mtcars = rdata("mtcars")
    before = mtcars.copy()
    power = run_tool("derive_column", mtcars, new_column_name="kW per t", expression="`hp` * 0.7457 / (wt * 0.4536)")
    assert_step(power)
    assert np.allclose(power.table["kW per t"], mtcars.hp * 0.7457 / (mtcars.wt * 0.4536))
    funcs = run_tool(
        "derive_column", mtcars, new_column_name="f", expression="round(log(mpg) + sqrt(abs(-hp)) - exp(0) ** 2, 3)"
    )
    assert np.allclose(funcs.table["f"], np.round(np.log(mtcars.mpg) + np.sqrt(mtcars.hp) - 1, 3))
    ratio = run_tool("derive_column", mtcars, new_column_name="r", kind="ratio", columns=["hp", "am"])
    assert ratio.metrics["n_missing"] == 19 and "division by zero" in ratio.text  # am == 0 in 19 cars
    change = run_tool("derive_column", mtcars, new_column_name="pc", kind="percent_change", columns=["drat", "wt"])
    assert np.allclose(change.table["pc"], (mtcars.wt - mtcars.drat) / mtcars.drat * 100)
    bins = run_tool(
        "derive_column",
        mtcars,
        new_column_name="band",
        kind="bin",
        columns=["mpg"],
        bins=[10, 20, 30, 40],
        labels=["low", "mid", "high"],
    )
    expected = pd.cut(mtcars.mpg, [10, 20, 30, 40], labels=["low", "mid", "high"], include_lowest=True)
    assert bins.table["band"].astype(str).tolist() == expected.astype(str).tolist()
    assert bins.metrics["count.low"] == 18  # R: sum(mtcars$mpg <= 20) == 18
    quartiles = run_tool("derive_column", mtcars, new_column_name="q", kind="bin", columns=["mpg"], n_bins=4)
    assert quartiles.ok and quartiles.table["q"].nunique() == 4
    pd.testing.assert_frame_equal(mtcars, before)


def test_derive_column_dates():
    economics = rdata("ggplot2_economics")
    year = run_tool("derive_column", economics, new_column_name="year", kind="date_part", columns=["date"], part="year")
    assert year.table["year"].iloc[0] == 1967 and year.table["year"].iloc[-1] == 2015
    quarter = run_tool(
        "derive_column", economics, new_column_name="q", kind="date_part", columns=["date"], part="quarter"
    )
    assert quarter.table["q"].iloc[0] == "1967-Q3"
    weekday = run_tool(
        "derive_column",
        economics,
        new_column_name="w",
        kind="date_part",
        columns=["date"],
        part="weekday",
        language="zh",
    )
    assert weekday.table["w"].iloc[0] == "周六"  # 1967-07-01 was a Saturday
    orders = pd.DataFrame({"ordered": ["2024-01-01", "2024-01-10"], "shipped": ["2024-01-03", "2024-01-20"]})
    days = run_tool("derive_column", orders, new_column_name="days", expression="shipped - ordered")
    assert days.table["days"].tolist() == [2.0, 10.0]


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('true')",
        "mpg.__class__",
        "[mpg]",
        "mpg if hp else wt",
        "'a' + mpg",
        "min(mpg, hp)",
        "lambda: 1",
        "mpg +",
        "`mpg",
    ],
)
def test_derive_column_rejects_anything_outside_the_grammar(expression):
    result = run_tool("derive_column", rdata("mtcars"), new_column_name="x", expression=expression)
    assert_error(result, "invalid_expression")


def test_derive_column_errors():
    mtcars = rdata("mtcars")
    assert (
        "mpg"
        in assert_error(
            run_tool("derive_column", mtcars, new_column_name="x", expression="mgp * 2"), "column_not_found"
        )["did_you_mean"]
    )
    assert_error(run_tool("derive_column", mtcars, new_column_name="mpg", expression="mpg * 2"), "column_exists")
    assert run_tool("derive_column", mtcars, new_column_name="mpg", expression="mpg * 2", overwrite=True).ok
    assert_error(run_tool("derive_column", mtcars, new_column_name="x", expression="rownames * 2"), "wrong_column_type")
    assert_error(run_tool("derive_column", mtcars, new_column_name="x"), "invalid_arguments")
    assert_error(
        run_tool("derive_column", mtcars, new_column_name="x", kind="ratio", columns=["mpg"]), "invalid_arguments"
    )
    constant = pd.DataFrame({"v": [5.0] * 10})
    assert_error(
        run_tool("derive_column", constant, new_column_name="b", kind="bin", columns=["v"]), "insufficient_data"
    )
    assert_error(
        run_tool("derive_column", pd.DataFrame({"v": []}), new_column_name="b", expression="v + 1"), "insufficient_data"
    )


# ---------------------------------------------------------------- group_aggregate and pivot_table


def test_group_aggregate_matches_r_aggregate():
    mtcars = rdata("mtcars")
    result = run_tool("group_aggregate", mtcars, group_columns=["cyl"], value_columns=["mpg", "hp"], agg="mean")
    assert_step(result)
    table = result.table.set_index("cyl")
    # R: aggregate(cbind(mpg, hp) ~ cyl, mtcars, mean)
    assert table.loc[4, "mpg_mean"] == pytest.approx(26.66364, abs=5e-6)
    assert table.loc[6, "mpg_mean"] == pytest.approx(19.74286, abs=5e-6)
    assert table.loc[8, "mpg_mean"] == pytest.approx(15.10000, abs=5e-6)
    assert table.loc[8, "hp_mean"] == pytest.approx(209.2143, abs=5e-5)
    assert list(table["n_rows"]) == [11, 7, 14] and result.metrics["mpg_mean.4"] == pytest.approx(26.663636)
    two = run_tool("group_aggregate", mtcars, group_columns=["am", "gear"], value_columns=["hp"], agg="max")
    assert two.metrics["n_groups"] == 4 and two.table["hp_max"].max() == 335
    counts = run_tool(
        "group_aggregate", rdata("warpbreaks"), group_columns=["wool"], value_columns=["tension"], agg="nunique"
    )
    assert counts.table["tension_nunique"].tolist() == [3, 3]
    total = run_tool(
        "group_aggregate", rdata("InsectSprays"), group_columns=["spray"], value_columns=["count"], agg="sum"
    )
    assert total.metrics["count_sum.total"] == rdata("InsectSprays")["count"].sum()


def test_group_aggregate_compares_two_groups_totals():
    """`compare`: the first group's figure less the second's, and relative to the second, as R's
    with(InsectSprays, sum(count[spray == "C"]) - sum(count[spray == "A"])) gives them (25 - 174)."""
    sprays = rdata("InsectSprays")
    result = run_tool(
        "group_aggregate", sprays, group_columns=["spray"], value_columns=["count"], agg="sum", compare=["C", "A"]
    )
    assert_step(result)
    a, c = sprays.loc[sprays["spray"] == "A", "count"].sum(), sprays.loc[sprays["spray"] == "C", "count"].sum()
    assert (a, c) == (174, 25)
    assert result.metrics["difference"] == c - a
    assert result.metrics["relative_difference"] == pytest.approx((c - a) / a)
    assert "C minus A: 25 − 174 = -149 (-85.6%)" in result.text
    assert_error(
        run_tool("group_aggregate", sprays, group_columns=["spray"], value_columns=["count"], compare=["C", "Z"]),
        "value_not_found",
    )
    assert_error(
        run_tool("group_aggregate", sprays, group_columns=["spray"], value_columns=["count"], compare=["C"]),
        "invalid_argument",
    )


def test_totals_by_calendar_period_record_the_change_from_the_first_period_to_the_last():
    """Totals per month (as date_part writes months): the change from the first month to the last is part
    of the result, so a reading of them over time cites a number the analysis computed (issue 28)."""
    rng = np.random.default_rng(7)
    months = [f"2024-{m:02d}" for m in (3, 1, 2, 4)] * 5  # not in time order, and Apr is not the largest
    frame = pd.DataFrame({"month": months, "sales": rng.integers(10, 100, len(months)).astype(float)})
    result = run_tool("group_aggregate", frame, group_columns=["month"], value_columns=["sales"], agg="sum")
    totals = frame.groupby("month")["sales"].sum()
    expected = (totals["2024-04"] - totals["2024-01"]) / totals["2024-01"]
    assert result.metrics["first_to_last_change"] == pytest.approx(expected)
    assert f"{expected:+.1%}" in result.text
    # groups that are no calendar periods, or periods beside another grouping, record no such change
    shops = frame.assign(shop=["East", "West"] * 10)
    assert "first_to_last_change" not in run_tool("group_aggregate", shops, group_columns=["shop"]).metrics
    both = run_tool("group_aggregate", shops, group_columns=["month", "shop"], value_columns=["sales"])
    assert "first_to_last_change" not in both.metrics
    codes = frame.assign(code=["1001", "1002"] * 10)  # four digits are not a year
    assert "first_to_last_change" not in run_tool("group_aggregate", codes, group_columns=["code"]).metrics


def test_group_aggregate_errors():
    iris = rdata("iris")
    assert_error(run_tool("group_aggregate", iris, group_columns=["Specis"]), "column_not_found")
    assert_error(
        run_tool("group_aggregate", iris, group_columns=["Sepal.Width"], value_columns=["Species"], agg="mean"),
        "wrong_column_type",
    )
    missing = pd.DataFrame({"g": ["a", "b"], "v": [np.nan, np.nan]})
    assert_error(run_tool("group_aggregate", missing, group_columns=["g"], value_columns=["v"]), "insufficient_data")
    one = run_tool(
        "group_aggregate", pd.DataFrame({"g": ["a"] * 3, "v": [1, 2, 3]}), group_columns=["g"], value_columns=["v"]
    )
    assert one.ok and one.metrics["n_groups"] == 1 and one.table["v_sum"].iloc[0] == 6


def test_pivot_table_matches_r_tapply():
    warpbreaks = rdata("warpbreaks")
    result = run_tool(
        "pivot_table",
        warpbreaks,
        index_column="wool",
        columns_column="tension",
        value_column="breaks",
        agg="mean",
        margins=True,
    )
    assert_step(result)
    table = result.table.set_index("wool")
    assert list(table.columns) == ["L", "M", "H", "Total"]  # order of appearance, as R's factor levels
    # R: tapply(warpbreaks$breaks, warpbreaks[, c("wool", "tension")], mean)
    expected = {
        ("A", "L"): 44.55556,
        ("A", "M"): 24.00000,
        ("A", "H"): 24.55556,
        ("B", "L"): 28.22222,
        ("B", "M"): 28.77778,
        ("B", "H"): 18.77778,
    }
    for (wool, tension), value in expected.items():
        assert table.loc[wool, tension] == pytest.approx(value, abs=5e-6)
    assert table.loc["Total", "Total"] == pytest.approx(
        28.14815, abs=5e-6
    )  # mean(warpbreaks$breaks), not a mean of means
    assert table.loc["A", "Total"] == pytest.approx(31.03704, abs=5e-6)
    counts = run_tool("pivot_table", rdata("mtcars"), index_column="cyl", columns_column="gear")
    table = counts.table.set_index("cyl")
    # R: table(mtcars$cyl, mtcars$gear): 8 cyl has no 4-gear cars
    assert table.loc["8", "4"] == 0 and table.loc["4", "4"] == 8 and counts.metrics["empty_cells"] == 1


def test_pivot_table_errors():
    mtcars = rdata("mtcars")
    assert_error(run_tool("pivot_table", mtcars, index_column="cyl", columns_column="rownames"), "too_many_categories")
    assert_error(run_tool("pivot_table", mtcars, index_column="cly", columns_column="gear"), "column_not_found")
    assert_error(
        run_tool("pivot_table", mtcars, index_column="cyl", columns_column="gear", value_column="rownames"),
        "wrong_column_type",
    )
    empty = pd.DataFrame({"a": [None, None], "b": ["x", "y"]}, dtype=object)
    assert_error(run_tool("pivot_table", empty, index_column="a", columns_column="b"), "insufficient_data")


# ---------------------------------------------------------------- merge_datasets


@pytest.fixture
def shop() -> dict[str, pd.DataFrame]:
    orders = pd.DataFrame(
        {
            "order_id": range(1, 9),
            "sku": ["A1", "B2", "A1", "C3", "Z9", None, "B2", " A1"],
            "qty": [1, 2, 3, 1, 5, 2, 1, 4],
        }
    )
    products = pd.DataFrame({"sku": ["A1", "B2", "C3", "D4"], "price": [10.0, 20.0, 30.0, 40.0]})
    return {"orders": orders, "products": products}


def test_merge_lookup_join_reports_cardinality_and_unmatched(shop):
    before = {k: v.copy() for k, v in shop.items()}
    result = run_tool("merge_datasets", shop, left="orders", right="products", on=["sku"])
    assert_step(result, before=8, after=8)
    m = result.metrics
    assert m["cardinality"] == "many-to-one" and m["row_growth"] == 1.0
    assert m["left_rows_unmatched"] == 2 and m["right_keys_unmatched"] == 1  # Z9 and a missing sku; D4 unsold
    assert result.payload["unmatched_right_examples"] == ["D4"] and "Z9" in result.payload["unmatched_left_examples"]
    # row order kept; Z9 and the missing sku find no price; " A1" matches A1 after trimming
    assert result.table["price"].fillna(-1).tolist() == [10.0, 20.0, 10.0, 30.0, -1, -1, 20.0, 10.0]
    assert result.payload["dataset_name"] == "orders_products"
    for name, frame in shop.items():
        pd.testing.assert_frame_equal(frame, before[name])
    inner = run_tool("merge_datasets", shop, left="orders", right="products", on=["sku"], how="inner")
    assert len(inner.table) == 6 and inner.metrics["result_rows"] == 6
    outer = run_tool("merge_datasets", shop, left="orders", right="products", on=["sku"], how="outer")
    assert len(outer.table) == 9  # 8 orders + unsold D4


def test_merge_refuses_joins_that_multiply_rows(shop):
    dup = {
        **shop,
        "products": pd.concat([shop["products"], pd.DataFrame({"sku": ["A1", "A1"], "price": [11.0, 12.0]})]),
    }
    refused = run_tool("merge_datasets", dup, left="orders", right="products", on=["sku"])
    error = assert_error(refused, "join_multiplies_rows")
    assert error["cardinality"] == "many-to-many" and error["expected_rows"] == 14 and error["base_rows"] == 8
    assert error["duplicate_keys_right"] == ["A1 (×3)"]
    allowed = run_tool("merge_datasets", dup, left="orders", right="products", on=["sku"], allow_many_to_many=True)
    assert allowed.ok and len(allowed.table) == 14 and "multiplied" in allowed.text
    one_to_many = {
        "customers": pd.DataFrame({"cid": [1, 2]}),
        "visits": pd.DataFrame({"cid": [1, 1, 2], "page": list("abc")}),
    }
    grown = run_tool("merge_datasets", one_to_many, left="customers", right="visits", on=["cid"])
    assert assert_error(grown, "join_multiplies_rows")["cardinality"] == "one-to-many"
    ok = run_tool("merge_datasets", one_to_many, left="customers", right="visits", on=["cid"], max_row_growth=2)
    assert ok.ok and len(ok.table) == 3


def test_merge_keys_with_different_names_and_types():
    left = pd.DataFrame({"cust": [1, 2, 3], "spend": [5.0, 6.0, 7.0]})
    right = pd.DataFrame({"id": ["1", "2", "4"], "city": ["北京", "上海", "广州"]})
    result = run_tool("merge_datasets", {"a": left, "b": right}, left="a", right="b", left_on=["cust"], right_on=["id"])
    assert result.ok, result.error
    assert result.table["city"].tolist()[:2] == ["北京", "上海"] and "id" not in result.table.columns
    assert result.limitations and "text" in result.limitations[0]


def test_merge_errors(shop):
    typo = run_tool("merge_datasets", shop, left="order", right="products", on=["sku"])
    assert "orders" in assert_error(typo, "dataset_not_found")["did_you_mean"]
    assert (
        "sku"
        in assert_error(
            run_tool("merge_datasets", shop, left="orders", right="products", on=["skus"]), "column_not_found"
        )["did_you_mean"]
    )
    assert_error(
        run_tool("merge_datasets", shop, left="orders", right="products", left_on=["sku"]), "invalid_arguments"
    )
    no_shared = {"a": pd.DataFrame({"x": [1]}), "b": pd.DataFrame({"y": [1]})}
    assert_error(run_tool("merge_datasets", no_shared, left="a", right="b"), "invalid_arguments")
    empty = {**shop, "products": shop["products"].head(0)}
    assert_error(run_tool("merge_datasets", empty, left="orders", right="products", on=["sku"]), "insufficient_data")


# ---------------------------------------------------------------- detect_data_quality


def test_detect_data_quality_on_airquality_matches_r_summary():
    result = run_tool("detect_data_quality", rdata("airquality"))
    assert result.ok, result.error
    m = result.metrics
    # R: colSums(is.na(airquality)): Ozone 37, Solar.R 7
    assert m["missing_values.Ozone"] == 37 and m["missing_values.Solar.R"] == 7 and m["missing_cells"] == 44
    assert m["severity"] == "medium" and m["duplicate_rows"] == 0
    assert "[insights]" in result.text and "Ozone" in result.interpretation


def test_detect_data_quality_finds_each_kind_of_problem():
    df = pd.DataFrame(
        {
            "order_id": [1, 2, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12],
            "quantity": [1, 2, -3, 1, 1, 2, 2, 3, 1, 2, 1, 500],
            "price": ["10", "12", "n.a", "9", "11", "10", "x", "13", "10", "12", "11", "10"],
            "country": ["CN", "CN", "CN ", "cn", "CN", "CN", "CN", "CN", "CN", "CN", "CN", "CN"],
            "channel": ["web"] * 12,
            "date": pd.to_datetime(["2024-01-01"] * 11 + ["2031-01-01"]),
        }
    )
    df = pd.concat([df, df.tail(1)], ignore_index=True)
    result = run_tool("detect_data_quality", df, reference_date="2025-01-01", language="zh")
    assert result.ok, result.error
    found = {(i["issue"], i["column"]) for i in result.payload["issues"]}
    assert {
        ("duplicate_ids", "order_id"),
        ("negative_values", "quantity"),
        ("mixed_types", "price"),
        ("inconsistent_text", "country"),
        ("constant_column", "channel"),
        ("future_dates", "date"),
        ("duplicate_rows", None),
        ("extreme_outliers", "quantity"),
    } <= found
    assert result.metrics["severity"] == "high" and result.payload["issues"][0]["severity"] == "high"
    assert "严重" in result.interpretation


def test_detect_data_quality_clean_and_degenerate():
    clean = run_tool("detect_data_quality", pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["x", "y", "z"]}))
    assert clean.ok and clean.metrics["n_issues"] == 0 and clean.metrics["severity"] == "none"
    assert_error(run_tool("detect_data_quality", pd.DataFrame()), "insufficient_data")
    empty_col = run_tool("detect_data_quality", pd.DataFrame({"a": [None, None]}, dtype=float))
    assert empty_col.ok and empty_col.payload["issues"][0]["issue"] == "all_missing"
    assert_error(run_tool("detect_data_quality", pd.DataFrame({"a": [1]}), reference_date="soon"), "invalid_arguments")


# ---------------------------------------------------------------- scale


def test_data_tools_are_vectorised_on_large_tables():
    import time

    rng = np.random.default_rng(0)
    n = 300_000
    df = pd.DataFrame(
        {
            "region": rng.choice(["East", "West", "North", "South"], n),
            "amount": rng.gamma(2, 50, n),
            "text_amount": pd.Series(rng.integers(1000, 99999, n)).map("{:,}".format),
        }
    )
    started = time.perf_counter()
    filtered = run_tool(
        "filter_rows",
        df,
        conditions=[{"column": "region", "op": "==", "value": "East"}, {"column": "amount", "op": ">", "value": 100}],
    )
    grouped = run_tool("group_aggregate", df, group_columns=["region"], value_columns=["amount"], agg="mean")
    converted = run_tool("convert_types", df, column="text_amount", to="number")
    assert filtered.ok and grouped.ok and converted.ok and converted.metrics["n_failed"] == 0
    assert len(filtered.table) == int(((df.region == "East") & (df.amount > 100)).sum())
    assert time.perf_counter() - started < 30


def test_filter_rows_on_yes_no_columns():
    df = pd.DataFrame({"paid": [True, False, None] * 3}, dtype="boolean")
    assert len(run_tool("filter_rows", df, conditions=[{"column": "paid", "op": "==", "value": "是"}]).table) == 3
    assert len(run_tool("filter_rows", df, conditions=[{"column": "paid", "op": "!=", "value": True}]).table) == 3
    assert_error(
        run_tool("filter_rows", df, conditions=[{"column": "paid", "op": "==", "value": "maybe"}]), "invalid_arguments"
    )
