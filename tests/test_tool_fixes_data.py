"""Issue 23 point 5, the data and table half of the tool list: each fix with a test that failed on
the code before it (tables to six significant figures, fit summaries first, several aggregations in
one call, side tables that leave the active dataset alone, weighted counts, ...). Expected numbers
come from pandas, NumPy, SciPy or statsmodels directly."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pandas as pd
import pytest

from analysis_tools import Tool, ToolResult, registry, run_tool


def _tool(name: str) -> Tool:
    tool = registry().get(name)
    assert tool is not None, name
    return tool


def _table(result: ToolResult) -> pd.DataFrame:
    assert result.table is not None
    return result.table


def _section(text: str, tag: str) -> str:
    """The body of one [tag] section of a tool's text."""
    head = f"[{tag}]\n"
    assert head in text, f"no [{tag}] section in:\n{text}"
    return text.split(head, 1)[1].split("\n\n[", 1)[0]


# ---------------------------------------------------------------- 1. six significant figures


def test_describe_columns_prints_six_significant_figures() -> None:
    values = pd.Series([500.0, 510.0, 512.0, 515.0, 524.6460], name="score")
    frame = pd.DataFrame({"score": values})
    result = run_tool("describe_columns", frame, columns=["score"])
    assert result.ok, result.error
    expected_mean = f"{float(np.mean(values.to_numpy())):.6g}"  # 512.329, from NumPy
    assert expected_mean == "512.329"
    table = _section(result.text, "data_profile") if "[data_profile]" in result.text else result.text
    assert expected_mean in table
    assert "512.3 " not in table and not table.rstrip().endswith("512.3")


def test_rank_values_table_keeps_six_significant_figures() -> None:
    frame = pd.DataFrame({"city": ["A", "B", "C"], "price": [1234.56789, 987.654321, 5.5]})
    result = run_tool("rank_values", frame, value_column="price", top=2, label_columns=["city"])
    assert result.ok, result.error
    listed = _section(result.text, "result")
    assert f"{1234.56789:.6g}" in listed  # 1234.57, not 1,235
    assert f"{987.654321:.6g}" in listed  # 987.654, not 987.7


# ---------------------------------------------------------------- 8. several aggregations, printed once


def test_group_aggregate_several_aggregations_in_one_call_printed_once() -> None:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"region": rng.choice(["north", "south", "east"], 60), "sales": rng.gamma(3.0, 41.7, 60)})
    result = run_tool(
        "group_aggregate",
        frame,
        group_columns=["region"],
        value_columns=["sales"],
        aggregations=["mean", "median", "max"],
    )
    assert result.ok, result.error
    expected = frame.groupby("region")["sales"].agg(["mean", "median", "max"])
    table = _table(result).set_index("region")
    for agg in ("mean", "median", "max"):
        assert np.allclose(table[f"sales_{agg}"].loc[expected.index], expected[agg]), agg
    # the table is in the text once (no second [preview] copy of the same rows)
    first_group = str(table.index[0])
    assert result.text.count(f"\n{first_group} ") + result.text.startswith(f"{first_group} ") <= 1
    assert "[preview]" not in result.text


# ---------------------------------------------------------------- 2. overall fit before the coefficients


def _fit_frame() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    x1, x2 = rng.normal(10, 2, 120), rng.normal(0, 1, 120)
    y = 3.0 + 1.7 * x1 - 0.8 * x2 + rng.normal(0, 2.5, 120)
    return pd.DataFrame({"x1": x1, "x2": x2, "y": y, "hit": (y > np.median(y)).astype(int)})


def test_linear_regression_prints_the_overall_fit_first() -> None:
    import statsmodels.api as sm

    frame = _fit_frame()
    result = run_tool("linear_regression", frame, target_column="y", feature_columns=["x1", "x2"])
    assert result.ok, result.error
    reference = sm.OLS(frame["y"], sm.add_constant(frame[["x1", "x2"]])).fit()
    assert result.text.startswith("[overall_fit]")
    head = _section(result.text, "overall_fit")
    assert f"R² = {reference.rsquared:.6g}" in head
    assert f"adjusted R² = {reference.rsquared_adj:.6g}" in head
    assert f"F(2, {int(reference.df_resid)}) = {reference.fvalue:.6g}" in head
    assert "n = 120" in head
    assert result.text.index("[overall_fit]") < result.text.index("[coefficients]")


def test_logistic_regression_and_curve_fit_print_the_overall_fit_first() -> None:
    import statsmodels.api as sm

    frame = _fit_frame()
    result = run_tool("logistic_regression", frame, target_column="hit", feature_columns=["x1"])
    assert result.ok, result.error
    reference = sm.Logit(frame["hit"], sm.add_constant(frame[["x1"]])).fit(disp=False)
    assert result.text.startswith("[overall_fit]")
    head = _section(result.text, "overall_fit")
    assert f"pseudo R² = {reference.prsquared:.6g}" in head and "n = 120" in head
    assert result.text.index("[overall_fit]") < result.text.index(f"{reference.params['x1']:.6g}"[:5])

    curve = run_tool("curve_fit", frame, x_column="x1", y_column="y", model="linear")
    assert curve.ok, curve.error
    slope, intercept = np.polyfit(frame["x1"], frame["y"], 1)
    residual = frame["y"] - (intercept + slope * frame["x1"])
    r2 = 1 - (residual**2).sum() / ((frame["y"] - frame["y"].mean()) ** 2).sum()
    assert curve.text.startswith("[overall_fit]")
    assert f"R² = {r2:.6g}" in _section(curve.text, "overall_fit")


# ---------------------------------------------------------------- 4. schemas: enums, typed objects, whole clauses


def _sent(tool: str, argument: str) -> dict:
    return _tool(tool).schema()["function"]["parameters"]["properties"][argument]


def _is_whole_clause(sent: str, full: str) -> bool:
    """The sent text is the start of the full one and ends where a clause or sentence ends."""
    if not full.startswith(sent) or sent.endswith("…"):
        return False
    rest = full[len(sent) :]
    return rest == "" or rest[0] in ";.:" or (sent.endswith(".") and rest[0] == " ")


def test_filter_rows_conditions_are_typed_objects_with_an_operator_enum() -> None:
    items = _sent("filter_rows", "conditions")["items"]
    assert items["type"] == "object"
    assert set(items["required"]) == {"column", "op"}
    assert {"==", "!=", ">", "<=", "in", "not_in", "between", "contains", "is_missing"} <= set(
        items["properties"]["op"]["enum"]
    )
    # and a condition written to that schema filters as asked
    frame = pd.DataFrame({"region": ["east", "west", "east"], "sales": [5.0, 7.0, 9.0]})
    result = run_tool("filter_rows", frame, conditions=[{"column": "sales", "op": "between", "value": [6, 10]}])
    assert result.ok, result.error
    assert _table(result)["sales"].tolist() == [7.0, 9.0]


@pytest.mark.parametrize(("tool", "argument"), [("derive_column", "kind"), ("outlier_detection", "method")])
def test_argument_descriptions_are_sent_as_whole_clauses(tool: str, argument: str) -> None:
    full = _tool(tool).parameters["properties"][argument]["description"]
    sent = _sent(tool, argument)
    assert sent["enum"], "the choices travel as an enum"
    assert sent.get("description"), "a description is sent"
    assert _is_whole_clause(sent["description"], full), (sent["description"], full)


# ---------------------------------------------------------------- 7. outliers: flagged range and ddof


def test_outlier_detection_reports_flagged_min_max_and_takes_ddof() -> None:
    from scipy import stats as sps

    rng = np.random.default_rng(11)
    values = np.r_[rng.normal(50, 5, 200), [95.0, 104.0, 3.0]]
    frame = pd.DataFrame({"v": values})
    for ddof in (0, 1):
        result = run_tool("outlier_detection", frame, value_column="v", method="zscore", ddof=ddof)
        assert result.ok, result.error
        z = sps.zscore(values, ddof=ddof)
        flagged = values[np.abs(z) > 3]
        assert result.metrics["n_outliers"] == len(flagged)
        assert result.metrics["flagged_min"] == pytest.approx(flagged.min())
        assert result.metrics["flagged_max"] == pytest.approx(flagged.max())
        assert result.metrics["std"] == pytest.approx(np.std(values, ddof=ddof))
        assert f"ddof={ddof}" in result.text
        assert f"{flagged.min():.6g}" in _section(result.text, "conclusion")
    assert _tool("outlier_detection").parameters["properties"]["ddof"]["default"] == 1


# ---------------------------------------------------------------- 9. weighted value counts


def test_value_counts_with_a_weight_column_gives_weighted_shares() -> None:
    # a count table (one row per level, its frequency in Freq): unweighted, every level is 1/4
    frame = pd.DataFrame({"Class": ["1st", "2nd", "3rd", "Crew"], "Freq": [325, 285, 706, 885]})
    result = run_tool("value_counts", frame, column="Class", weight_column="Freq")
    assert result.ok, result.error
    expected = frame.set_index("Class")["Freq"] / frame["Freq"].sum()
    for level, share in expected.items():
        assert result.metrics[f"share.{level}"] == pytest.approx(share)
    assert _table(result)["value"].iloc[0] == "Crew"
    assert f"{expected['Crew'] * 100:.1f}%" in _section(result.text, "data_profile")
    assert result.metrics["weighted_total"] == pytest.approx(2201)


# ---------------------------------------------------------------- 10. a top-N tool for "the N largest …"


@pytest.mark.parametrize("query", ["top 5 largest", "the 10 largest values", "smallest", "最大的几个订单", "排名"])
def test_tool_search_finds_rank_values_for_top_n_words(query: str) -> None:
    from app.agent.tools.exposure import rank_tools

    assert rank_tools(registry(), query, 3)[0].name == "rank_values"


# ---------------------------------------------------------------- 5, 6. side tables; a new version keeps the old


def _toolbox(frame: pd.DataFrame):
    from analysis_tools import ToolContext
    from app.agent.tools.toolbox import FULL_REGISTRY, DatasetCatalog, Toolbox

    catalog = DatasetCatalog({"sales": lambda: frame}, active="sales")
    return Toolbox(catalog, ToolContext(), registry=FULL_REGISTRY), catalog


def _call(name: str, **arguments: object):
    from app.agent.model.interface import ToolCallRequest

    return ToolCallRequest(id=f"c_{name}", name=name, arguments=dict(arguments))


SALES = pd.DataFrame(
    {
        "region": ["east", "west", "east", "north", "west", "east"],
        "month": ["jan", "jan", "feb", "feb", "mar", "mar"],
        "amount": [120.5, 80.25, 99.0, 45.125, 130.0, 60.0],
    }
)


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        (
            "filter_rows",
            {"conditions": [{"column": "region", "op": "==", "value": "east"}]},
            SALES[SALES["region"] == "east"],
        ),
        (
            "group_aggregate",
            {"group_columns": ["region"], "value_columns": ["amount"], "agg": "sum"},
            SALES.groupby("region", as_index=False)["amount"].sum(),
        ),
        (
            "pivot_table",
            {"index_column": "region", "columns_column": "month", "value_column": "amount"},
            SALES.pivot_table(index="region", columns="month", values="amount", aggfunc="sum"),
        ),
    ],
)
def test_subsets_and_summaries_are_side_tables_and_the_active_dataset_stays(tool, arguments, expected) -> None:
    box, catalog = _toolbox(SALES)
    result = box.execute(_call(tool, **arguments))
    assert result.ok, result.error
    name = result.payload["dataset_name"]
    assert name != "sales" and catalog.active == "sales"  # the primary dataset stays active
    assert catalog.get(None).equals(SALES)
    assert len(catalog.get(name)) == len(expected)  # the side table is there under its name
    note = _section(result.text, "dataset")
    assert f"'{name}'" in note and "still 'sales'" in note and f"dataset='{name}'" in note


def test_clean_data_keeps_the_previous_version_reachable() -> None:
    messy = pd.DataFrame({"city": [" Oslo", "Oslo", "Bergen ", "Oslo"], "n": [1, 1, 2, 3]})
    box, catalog = _toolbox(messy)
    result = box.execute(_call("clean_data"))
    assert result.ok, result.error
    assert result.payload["dataset_name"] == "sales" and catalog.active == "sales"
    previous = result.payload["previous_version"]
    assert previous == "sales_v1"
    assert catalog.get(previous).equals(messy)  # the old version is the table as it was
    assert not catalog.get("sales").equals(messy)  # the new one is cleaned
    assert catalog.get("sales")["city"].str.strip().eq(catalog.get("sales")["city"]).all()
    assert "'sales_v1'" in _section(result.text, "dataset")


# ---------------------------------------------------------------- 3. an explicit max_rows is shown whole


class _Recorder:
    """A run recorder that keeps nothing (run_call's bookkeeping)."""

    trace_dir = None
    run_id = "run"
    workspace_id = "ws"

    def emit(self, kind: str, data: object = None, commit: object = None) -> None:
        pass

    def add_message(self, message: object) -> None:
        pass

    def record_tool_call(self, *args: object, **kwargs: object) -> None:
        pass


def _run_call(tmp_path, frame: pd.DataFrame, name: str, **arguments: object) -> str:
    """What the model sees of one tool call, through the loop's own run_call and context window."""
    import threading

    from analysis_tools import ToolContext
    from app.agent.context.compaction import ContextWindow
    from app.agent.context.outputs import OutputStore
    from app.agent.loop import run_call
    from app.agent.policy.budget import TurnBudget
    from app.agent.run_scope import RunScope
    from app.agent.tools.toolbox import FULL_REGISTRY, DatasetCatalog, Toolbox
    from app.agent.turn import Turn
    from tests.fakes import ScriptedModel

    window = ContextWindow(OutputStore(tmp_path / "ws"))
    context = ToolContext(scope=RunScope(context_window=window))
    toolbox = Toolbox(DatasetCatalog({"data": lambda: frame}, active="data"), context, registry=FULL_REGISTRY)
    turn = Turn(
        [],
        ScriptedModel(),
        toolbox,
        cast(Any, _Recorder()),
        TurnBudget(200, 300, 600),
        threading.Event(),
        context=window,
    )
    return run_call(turn, _call(name, **arguments))


def test_an_explicit_max_rows_result_is_shown_whole(tmp_path) -> None:
    rng = np.random.default_rng(5)
    values = np.r_[rng.normal(100, 10, 400), rng.normal(400, 30, 120)]  # 120 far values
    frame = pd.DataFrame({"amount": values})
    shown = _run_call(tmp_path, frame, "outlier_detection", value_column="amount", method="iqr", max_rows=120)
    q1, q3 = np.percentile(values, [25, 75])
    flagged = int(((values < q1 - 1.5 * (q3 - q1)) | (values > q3 + 1.5 * (q3 - q1))).sum())
    assert flagged >= 100
    assert 3_000 < len(shown) <= 15_000
    assert "[truncated]" not in shown
    listed = _section(shown, "flagged_rows").splitlines()[1:]
    assert len([line for line in listed if line.strip()[:1].isdigit()]) == min(flagged, 120)
    # the same text from a call that did not ask for rows is still shortened
    from app.agent.context.compaction import ContextWindow, shelve_output
    from app.agent.context.outputs import OutputStore

    cut = shelve_output(ContextWindow(OutputStore(tmp_path / "other")), "c2", "outlier_detection", shown)
    assert "[truncated]" in cut and len(cut) < len(shown)


@pytest.mark.parametrize("zh", [False, True])
def test_a_top_n_that_hides_a_tie_says_so_in_its_headline(zh: bool) -> None:
    """A new user's trial: "the three members with the most visits" listed three of six members with 29
    visits as if they were the only ones. The tool counts the rows beyond the cut with the last listed value
    (ties_beyond) and the built-in headline says them."""
    from app.analyst.headlines import rank_headline

    frame = pd.DataFrame({"member": [f"M{i}" for i in range(10)], "visits": [29, 29, 12, 29, 29, 8, 29, 29, 3, 5]})
    result = run_tool("rank_values", frame, value_column="visits", top=3, label_columns=["member"])
    assert result.metrics["ties_beyond"] == 3  # six with 29, three listed
    said = rank_headline("visits", result.metrics, False, zh)
    assert said is not None
    assert ("另有 3 个同为 29，未列出" if zh else "3 more also have 29, not listed") in said, said
    untied = run_tool("rank_values", frame, value_column="visits", top=6, label_columns=["member"])
    assert untied.metrics["ties_beyond"] == 0 and "not listed" not in (
        rank_headline("visits", untied.metrics, False, False) or ""
    )
