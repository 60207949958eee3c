"""plot_line, plot_box, plot_heatmap, plot_pie: valid PNGs, numbers that agree with R, CJK labels
without missing glyphs, top-N + Other folding, one-sentence captions and structured errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis_tools import REGISTRY, run_tool
from tests.test_tools_plot import CJK, assert_png, glyph_warnings, one_sentence

REF = Path(__file__).resolve().parents[1] / "data" / "reference"
RDATA = REF / "rdatasets"
PLOTS = ("plot_line", "plot_box", "plot_heatmap", "plot_pie")
CITIES = ["北京", "上海", "广州", "深圳", "杭州", "成都", "武汉", "西安", "南京", "重庆", "天津", "苏州"]


def rdata(name: str) -> pd.DataFrame:
    path = RDATA / f"{name}.csv"
    return pd.read_csv(path)


@pytest.fixture
def sales() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 3000
    return pd.DataFrame(
        {
            "日期": pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 366, n), unit="D"),
            "城市": rng.choice(CITIES, n, p=np.linspace(2, 0.2, len(CITIES)) / np.linspace(2, 0.2, len(CITIES)).sum()),
            "销售额（元）": rng.gamma(2.0, 150.0, n),
            "数量": rng.integers(1, 10, n),
            "渠道": rng.choice(["线上商城", "门店", "电话订购"], n),
        }
    )


def check(result, tmp_path) -> None:
    assert result.ok, result.error
    assert len(result.figures) == 1 and len(result.captions) == 1
    assert_png(result.figures[0], tmp_path)
    assert one_sentence(result.captions[0])
    assert "[chart]" in result.text and "[insights]" in result.text
    for key, value in result.metrics.items():
        assert type(value) in (int, float, str), key


def test_schemas_document_every_argument():
    for name in PLOTS:
        tool = REGISTRY.get(name)
        assert tool is not None and tool.group == "plot" and tool.summary.startswith("Draw")
        for arg, prop in tool.parameters["properties"].items():
            if arg != "dataset":
                assert prop.get("description"), (name, arg)


# ----------------------------------------------------------------------------- line


def test_line_over_dates_aggregates_duplicates(tmp_path):
    economics = rdata("ggplot2_economics")
    monthly = run_tool("plot_line", economics, figures_dir=tmp_path, x_column="date", y_column="unemploy")
    check(monthly, tmp_path)
    m = monthly.metrics
    assert m["n_points"] == 574 and m["first_x"] == "1967-07-01" and m["last_x"] == "2015-04-01"
    assert m["first_value"] == 2944 and m["max_value"] == economics.unemploy.max() and m["max_x"] == "2009-10-01"
    yearly = run_tool(
        "plot_line", economics, figures_dir=tmp_path, x_column="date", y_column="unemploy", agg="mean", freq="year"
    )
    check(yearly, tmp_path)
    by_year = economics.groupby(pd.to_datetime(economics.date).dt.year)["unemploy"].mean()
    assert yearly.metrics["n_points"] == len(by_year) == 49
    assert yearly.metrics["first_value"] == pytest.approx(by_year.iloc[0]) and yearly.metrics[
        "last_value"
    ] == pytest.approx(by_year.iloc[-1])
    assert "year" in yearly.captions[0] and "partial" in yearly.text


def test_line_ordered_labels_and_groups(tmp_path, sales):
    months = pd.DataFrame({"month": ["Jan", "Feb", "Mar", "Jan", "Feb", "Mar"], "v": [1, 2, 3, 4, 5, 6]})
    result = run_tool("plot_line", months, figures_dir=tmp_path, x_column="month", y_column="v")
    check(result, tmp_path)
    assert (
        result.metrics["first_x"] == "Jan" and result.metrics["first_value"] == 5 and result.metrics["last_value"] == 9
    )
    grouped = run_tool(
        "plot_line",
        sales,
        figures_dir=tmp_path,
        x_column="日期",
        y_column="销售额（元）",
        group_column="城市",
        freq="month",
        top=4,
        language="zh",
    )
    check(grouped, tmp_path)
    assert grouped.metrics["n_lines"] == 5 and grouped.metrics["n_points"] == 12  # 4 cities + 其他
    assert any("其他" in line or "合并" in line for line in grouped.limitations)
    biggest = sales[sales["城市"] == "北京"].groupby(sales["日期"].dt.to_period("M"))["销售额（元）"].sum()
    assert grouped.metrics["first_value"] == pytest.approx(biggest.iloc[0])


# ----------------------------------------------------------------------------- box


def test_box_medians_match_r(tmp_path):
    iris = rdata("iris")
    result = run_tool("plot_box", iris, figures_dir=tmp_path, value_column="Sepal.Length", group_column="Species")
    check(result, tmp_path)
    m = result.metrics
    # R: tapply(iris$Sepal.Length, iris$Species, median)
    assert (m["median.setosa"], m["median.versicolor"], m["median.virginica"]) == (5.0, 5.9, 6.5)
    assert m["highest_median_group"] == "virginica" and m["lowest_median_group"] == "setosa"
    assert m["n"] == 150 and m["median"] == 5.8  # R: median(iris$Sepal.Length)
    assert m["n_outliers"] == 1  # R: boxplot(...)$out == 4.9 (virginica)
    single = run_tool("plot_box", iris, figures_dir=tmp_path, value_column="Sepal.Width")
    check(single, tmp_path)
    assert single.metrics["q1"] == 2.8 and single.metrics["q3"] == 3.3  # R: quantile(iris$Sepal.Width, c(.25, .75))


def test_box_many_groups_fold_into_other(tmp_path):
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"g": rng.choice([f"group {i:02d}" for i in range(25)], 2000), "v": rng.normal(0, 1, 2000)})
    result = run_tool("plot_box", df, figures_dir=tmp_path, value_column="v", group_column="g", top=6)
    check(result, tmp_path)
    assert result.metrics["n_groups"] == 7 and "Other" in " ".join(result.limitations)


# ----------------------------------------------------------------------------- heatmap


def test_correlation_heatmap_matches_r(tmp_path):
    mtcars = rdata("mtcars")
    result = run_tool("plot_heatmap", mtcars, figures_dir=tmp_path, columns=["mpg", "wt", "hp", "disp"])
    check(result, tmp_path)
    assert result.metrics["r.mpg.wt"] == pytest.approx(-0.8676594, abs=1e-7)  # R: cor(mtcars$mpg, mtcars$wt)
    assert result.metrics["strongest_pair"] == "wt ~ disp" and result.metrics["strongest_r"] == pytest.approx(
        0.8879799, abs=1e-7
    )
    spearman = run_tool("plot_heatmap", mtcars, figures_dir=tmp_path, columns=["mpg", "wt"], method="spearman")
    assert spearman.metrics["r.mpg.wt"] == pytest.approx(-0.886422, abs=1e-6)  # R: cor(..., method = "spearman")
    every = run_tool("plot_heatmap", mtcars, figures_dir=tmp_path)
    assert every.ok and every.metrics["n_columns"] == 11


def test_two_way_heatmap_values(tmp_path):
    warpbreaks = rdata("warpbreaks")
    result = run_tool(
        "plot_heatmap",
        warpbreaks,
        figures_dir=tmp_path,
        x_column="tension",
        y_column="wool",
        value_column="breaks",
        agg="mean",
    )
    check(result, tmp_path)
    table = result.table.set_index("y")
    assert table.loc["A", "L"] == pytest.approx(44.55556, abs=5e-6) and result.metrics["max_cell"] == "A | L"
    counts = run_tool("plot_heatmap", rdata("mtcars"), figures_dir=tmp_path, x_column="gear", y_column="cyl")
    assert counts.ok and counts.metrics["max_value"] == 12  # R: table(cyl, gear)["8", "3"]


# ----------------------------------------------------------------------------- pie


def test_pie_shares_and_other(tmp_path):
    mtcars = rdata("mtcars")
    result = run_tool("plot_pie", mtcars, figures_dir=tmp_path, column="cyl")
    check(result, tmp_path)
    assert (
        result.metrics["share.8"] == 14 / 32 and result.metrics["share.4"] == 11 / 32
    )  # R: prop.table(table(mtcars$cyl))
    total = run_tool(
        "plot_pie", rdata("InsectSprays"), figures_dir=tmp_path, group_column="spray", value_column="count", top=3
    )
    check(total, tmp_path)
    sums = rdata("InsectSprays").groupby("spray")["count"].sum()
    assert total.metrics["total"] == sums.sum() and total.metrics["n_slices"] == 4
    assert total.metrics["share.F"] == pytest.approx(sums["F"] / sums.sum())
    assert "Other" in total.captions[0] and "bar chart" not in total.captions[0]


def test_pie_warns_about_many_slices(tmp_path, sales):
    result = run_tool("plot_pie", sales, figures_dir=tmp_path, column="城市", language="zh")
    check(result, tmp_path)
    assert result.metrics["n_categories"] == 12 and result.metrics["n_slices"] == 7
    assert "条形图" in result.captions[0] and "其他" in result.captions[0]
    en = run_tool("plot_pie", sales, figures_dir=tmp_path, column="城市")
    assert "bar chart" in en.captions[0]


# ----------------------------------------------------------------------------- CJK, errors, input


def test_chinese_labels_render_without_missing_glyphs(tmp_path, sales):
    calls = [
        ("plot_line", {"x_column": "日期", "y_column": "销售额（元）", "group_column": "渠道", "freq": "week"}),
        ("plot_box", {"value_column": "销售额（元）", "group_column": "城市", "title": "各城市销售额分布 −5%"}),
        ("plot_heatmap", {"x_column": "渠道", "y_column": "城市", "value_column": "销售额（元）", "agg": "sum"}),
        ("plot_heatmap", {"columns": ["销售额（元）", "数量"]}),
        ("plot_pie", {"group_column": "渠道", "value_column": "销售额（元）"}),
    ]
    with glyph_warnings() as found:
        results = [run_tool(name, sales, figures_dir=tmp_path, language="zh", **args) for name, args in calls]
    assert all(r.ok for r in results), [r.error for r in results]
    assert found == []
    for result in results:
        check(result, tmp_path)
        assert result.captions[0].endswith("。") and CJK.search(result.captions[0])


@pytest.mark.parametrize(
    "name, args, category",
    [
        ("plot_line", {"x_column": "日期", "y_column": "城市"}, "wrong_column_type"),
        ("plot_line", {"x_column": "日其", "y_column": "数量"}, "column_not_found"),
        ("plot_box", {"value_column": "渠道"}, "wrong_column_type"),
        ("plot_box", {"value_column": "数量", "group_column": "城"}, "column_not_found"),
        ("plot_heatmap", {"x_column": "城市"}, "invalid_arguments"),
        ("plot_heatmap", {"columns": ["数量", "城市"]}, "wrong_column_type"),
        ("plot_pie", {}, "invalid_arguments"),
        ("plot_pie", {"group_column": "城市", "value_column": "渠道"}, "wrong_column_type"),
    ],
)
def test_wrong_arguments_are_structured_errors(tmp_path, sales, name, args, category):
    result = run_tool(name, sales, figures_dir=tmp_path, **args)
    assert not result.ok and result.error["error"] == category and result.error["hint"]
    assert not list(tmp_path.glob("*.png"))


def test_degenerate_data_is_a_structured_error(tmp_path):
    missing = pd.DataFrame(
        {"x": pd.to_datetime(["2024-01-01", "2024-01-02"]), "v": [np.nan, np.nan], "g": [None, None]}
    )
    constant = pd.DataFrame({"a": [1.0] * 5, "b": [2.0] * 5, "c": [1.0, 2, 3, 4, 5]})
    cases = [
        ("plot_line", missing, {"x_column": "x", "y_column": "v"}, "insufficient_data"),
        ("plot_box", missing, {"value_column": "v"}, "insufficient_data"),
        ("plot_box", missing.assign(v=[1.0, 2.0]), {"value_column": "v", "group_column": "g"}, "insufficient_data"),
        ("plot_heatmap", constant, {"columns": ["a", "b", "c"]}, "insufficient_data"),
        ("plot_pie", missing, {"column": "g"}, "insufficient_data"),
        (
            "plot_pie",
            pd.DataFrame({"g": ["a", "b"], "v": [5.0, -1.0]}),
            {"group_column": "g", "value_column": "v"},
            "invalid_values",
        ),
        (
            "plot_line",
            pd.DataFrame({"x": [], "v": []}, dtype=float),
            {"x_column": "x", "y_column": "v"},
            "insufficient_data",
        ),
    ]
    for name, df, args, category in cases:
        result = run_tool(name, df, figures_dir=tmp_path, **args)
        assert not result.ok and result.error["error"] == category, (name, result.error)


def test_input_is_not_mutated(tmp_path, sales):
    before = sales.copy(deep=True)
    run_tool("plot_line", sales, figures_dir=tmp_path, x_column="日期", y_column="数量", group_column="城市")
    run_tool("plot_box", sales, figures_dir=tmp_path, value_column="数量", group_column="城市", top=3)
    run_tool("plot_heatmap", sales, figures_dir=tmp_path, x_column="渠道", y_column="城市")
    run_tool("plot_pie", sales, figures_dir=tmp_path, column="城市")
    pd.testing.assert_frame_equal(sales, before)
