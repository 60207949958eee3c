"""Plot tools: valid PNGs, CJK labels without missing glyphs, top-N + Other folding, long labels,
structured errors and captions in the user's language."""

from __future__ import annotations

import logging
import re
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from analysis_tools import charts, run_tool

CITIES = ["北京", "上海", "广州", "深圳", "杭州", "成都", "武汉", "西安", "南京", "重庆", "天津", "苏州"]
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def zh_df() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 600
    income = rng.lognormal(8, 0.5, n)
    return pd.DataFrame(
        {
            "城市": rng.choice(CITIES, n),
            "性别": rng.choice(["男", "女"], n),
            "收入（元）": income,
            "消费金额": income * 0.3 + rng.normal(0, 300, n),
            "年龄": rng.integers(18, 70, n),
        }
    )


@contextmanager
def glyph_warnings():
    """Collect matplotlib's "Glyph ... missing from font(s)" reports (warnings and logging)."""
    found: list[str] = []

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            found.append(record.getMessage())

    handler = Handler(level=logging.DEBUG)
    mpl_logger = logging.getLogger("matplotlib")
    old_level = mpl_logger.level
    mpl_logger.addHandler(handler)
    mpl_logger.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield found
        found.extend(str(w.message) for w in caught)
    finally:
        mpl_logger.removeHandler(handler)
        mpl_logger.setLevel(old_level)
    found[:] = [m for m in found if "missing from font" in m or "Glyph" in m]


def assert_png(path: str, figures_dir: Path) -> tuple[int, int]:
    p = Path(path)
    assert p.exists() and p.suffix == ".png" and p.parent == figures_dir
    with Image.open(p) as img:
        img.verify()
    with Image.open(p) as img:
        assert img.format == "PNG"
        width, height = img.size
        # a simple check that something was drawn: many distinct colours
        assert len(img.convert("RGB").getcolors(maxcolors=1_000_000) or []) > 20
    assert 600 <= width <= 2400 and 300 <= height <= 2400
    return width, height


def one_sentence(caption: str) -> bool:
    return bool(caption) and caption.rstrip().endswith((".", "。")) and caption.count("。") <= 1


# ----------------------------------------------------------------------------- PNG and results


def test_histogram_writes_valid_png(tmp_path, zh_df):
    result = run_tool("plot_histogram", zh_df, figures_dir=tmp_path, value_column="收入（元）", bins=25)
    assert result.ok, result.error
    assert len(result.figures) == 1 and len(result.captions) == 1
    assert_png(result.figures[0], tmp_path)
    assert result.method == "histogram" and result.sample_size == len(zh_df)
    assert result.metrics["n"] == len(zh_df) and result.metrics["bins"] == 25
    assert result.metrics["mean"] == pytest.approx(zh_df["收入（元）"].mean(), rel=1e-6)
    assert one_sentence(result.captions[0])
    assert "[chart]" in result.text and "[insights]" in result.text


def test_histogram_of_a_rating_has_one_bar_per_answer(tmp_path):
    ratings = pd.DataFrame({"Rating": [1, 2, 2, 3, 3, 3, 4, 4, 5, 5, 5, 5]})
    result = run_tool("plot_histogram", ratings, figures_dir=tmp_path, value_column="Rating")
    assert result.ok, result.error
    assert result.metrics["bins"] == 5 and "5 bins" in result.captions[0]
    prices = pd.DataFrame({"Price": np.linspace(0.5, 99.5, 200)})  # not whole numbers: equal widths
    assert run_tool("plot_histogram", prices, figures_dir=tmp_path, value_column="Price", bins=30).metrics["bins"] == 30
    # none asked: Sturges' rule, ceil(log2(200)) + 1 = 9, finer than Freedman-Diaconis' 99 / (2 * 49.5 / 200^(1/3)) = 6
    assert run_tool("plot_histogram", prices, figures_dir=tmp_path, value_column="Price").metrics["bins"] == 9


def test_histogram_of_a_few_values_has_a_few_bins(tmp_path):
    """Six monthly sales figures drew thirty bins (found in a new user's trial): most of them empty."""
    sales = pd.DataFrame({"销售额": [2030, 1995, 1974, 1993, 2028, 1972]})
    result = run_tool("plot_histogram", sales, figures_dir=tmp_path, value_column="销售额")
    assert result.ok, result.error
    # Sturges: ceil(log2(6)) + 1 = 4; Freedman-Diaconis gives fewer over a range of 58
    assert result.metrics["bins"] == 4 and "4 bins" in result.captions[0]


def test_histogram_by_group_and_missing_values(tmp_path, zh_df):
    df = zh_df.copy()
    df.loc[df.index[:10], "年龄"] = np.nan
    result = run_tool("plot_histogram", df, figures_dir=tmp_path, value_column="年龄", group_column="城市")
    assert result.ok, result.error
    assert_png(result.figures[0], tmp_path)
    assert result.metrics["n"] == len(df) - 10 and result.metrics["n_missing"] == 10
    assert result.metrics["n_groups"] == 7  # 6 largest groups + Other
    assert any("Other" in line for line in result.limitations)


def test_bar_mean_values_sorted_and_correct(tmp_path, zh_df):
    result = run_tool("plot_bar", zh_df, figures_dir=tmp_path, x_column="城市", y_column="收入（元）", agg="mean")
    assert result.ok, result.error
    assert_png(result.figures[0], tmp_path)
    expected = zh_df.groupby("城市")["收入（元）"].mean().sort_values(ascending=False)
    table = result.table
    assert list(table["城市"]) == list(expected.index)  # 12 cities <= top=15: no folding
    assert np.allclose(table.iloc[:, 1].to_numpy(), expected.to_numpy())
    assert result.metrics["max_category"] == expected.index[0]
    assert result.metrics["max_value"] == pytest.approx(expected.iloc[0])
    assert result.metrics["n_categories"] == 12 and "other_value" not in result.metrics


def test_bar_counts_when_no_y(tmp_path, zh_df):
    result = run_tool("plot_bar", zh_df, figures_dir=tmp_path, x_column="性别")
    assert result.ok, result.error
    assert result.metrics["agg"] == "count"
    counts = zh_df["性别"].value_counts()
    assert result.metrics["max_value"] == counts.max() and result.metrics["n"] == len(zh_df)
    assert_png(result.figures[0], tmp_path)


def test_scatter_trendline_and_sampling(tmp_path):
    rng = np.random.default_rng(3)
    n = 12_000
    x = rng.normal(50, 10, n)
    df = pd.DataFrame({"x": x, "y": 2.0 * x + 5 + rng.normal(0, 5, n)})
    result = run_tool("plot_scatter", df, figures_dir=tmp_path, x_column="x", y_column="y")
    assert result.ok, result.error
    assert_png(result.figures[0], tmp_path)
    assert result.metrics["n"] == n and result.metrics["n_plotted"] == 5000
    assert result.metrics["slope"] == pytest.approx(2.0, abs=0.05)
    slope, intercept = np.polyfit(x, df["y"], 1)
    assert result.metrics["slope"] == pytest.approx(slope) and result.metrics["intercept"] == pytest.approx(intercept)
    assert "sample" in result.captions[0] and "5,000" in result.captions[0]
    small = run_tool("plot_scatter", df.head(200), figures_dir=tmp_path, x_column="x", y_column="y", trendline=False)
    assert small.ok and small.metrics["n_plotted"] == 200 and "sample" not in small.captions[0]
    assert small.figures[0] != result.figures[0]


# ----------------------------------------------------------------------------- CJK rendering


def test_cjk_font_is_resolved():
    from matplotlib import font_manager

    name = charts.cjk_font_name()
    assert name, "no CJK font found"
    path = font_manager.findfont(font_manager.FontProperties(family=name), fallback_to_default=False)
    assert Path(path).exists()
    assert charts.font_family()[0] == "DejaVu Sans" and charts.font_family()[-1] == name


def test_glyph_capture_detects_missing_glyphs(tmp_path):
    """A positive control, so the next test would notice tofu: an unassigned code point is missing."""
    fig, ax = charts.new_figure()
    ax.set_title("\U000e0fff\U00010fff")  # unassigned: in no font
    with glyph_warnings() as found:
        charts.save(fig, tmp_path / "control.png")
    assert found


def test_chinese_labels_render_without_missing_glyphs(tmp_path, zh_df):
    calls = [
        ("plot_histogram", {"value_column": "收入（元）"}),
        ("plot_histogram", {"value_column": "年龄", "group_column": "城市", "title": "各城市年龄分布 −5%"}),
        ("plot_bar", {"x_column": "城市", "y_column": "消费金额", "agg": "median"}),
        ("plot_bar", {"x_column": "城市", "top": 5}),
        ("plot_scatter", {"x_column": "收入（元）", "y_column": "消费金额", "group_column": "性别"}),
    ]
    with glyph_warnings() as found:
        results = [run_tool(name, zh_df, figures_dir=tmp_path, language="zh", **args) for name, args in calls]
    assert all(r.ok for r in results), [r.error for r in results]
    assert found == []
    for result in results:
        assert_png(result.figures[0], tmp_path)


# ----------------------------------------------------------------------------- categories and labels


@pytest.mark.parametrize("language, other_word", [("en", "Other"), ("zh", "其他")])
def test_many_categories_fold_into_top_n_and_other(tmp_path, language, other_word):
    rng = np.random.default_rng(1)
    names = [f"品类{i:02d}" for i in range(40)]
    weights = np.linspace(3, 0.1, 40)
    df = pd.DataFrame({"品类": rng.choice(names, 4000, p=weights / weights.sum()), "销量": rng.gamma(2, 10, 4000)})
    result = run_tool(
        "plot_bar", df, figures_dir=tmp_path, language=language, x_column="品类", y_column="销量", agg="sum", top=10
    )
    assert result.ok, result.error
    assert result.metrics["n_categories"] == 40 and result.metrics["n_shown"] == 10
    table = result.table
    assert len(table) == 11 and table.iloc[-1, 0].startswith(other_word) and "30" in table.iloc[-1, 0]
    totals = df.groupby("品类")["销量"].sum().sort_values(ascending=False)
    assert list(table.iloc[:10, 0]) == list(totals.index[:10])
    assert result.metrics["other_value"] == pytest.approx(totals.iloc[10:].sum())
    assert table.iloc[:, 1].sum() == pytest.approx(df["销量"].sum())
    assert any(other_word in c or "其他" in c for c in result.captions)
    assert_png(result.figures[0], tmp_path)
    # counts: Other holds the remaining rows
    counts = run_tool("plot_bar", df, figures_dir=tmp_path, x_column="品类", top=10)
    assert counts.ok and counts.table.iloc[:, 1].sum() == len(df)


def test_one_extra_category_is_not_folded(tmp_path):
    df = pd.DataFrame({"g": list("abcdef") * 3, "v": range(18)})
    result = run_tool("plot_bar", df, figures_dir=tmp_path, x_column="g", y_column="v", top=5)
    assert result.ok and len(result.table) == 6 and "other_value" not in result.metrics


def test_long_and_odd_category_names_do_not_crash(tmp_path):
    long_zh = "华东地区销售部门第一分公司（上海）" * 8
    long_en = "A remarkably long product category name that keeps going " * 5
    names = [long_zh, long_en, "Price $5 to $10", "x" * 300, "", "  spaced  out  ", "中文 mixed English 名称"]
    df = pd.DataFrame(
        {
            "这是一个非常非常长的列名用来测试坐标轴标签的换行和截断是否正常工作": np.repeat(names, 5),
            "value $": np.arange(35, dtype=float),
        }
    )
    col = df.columns[0]
    with glyph_warnings() as found:
        bar = run_tool("plot_bar", df, figures_dir=tmp_path, language="zh", x_column=col, y_column="value $")
        hist = run_tool(
            "plot_histogram", df, figures_dir=tmp_path, value_column="value $", group_column=col, title=long_zh
        )
        scatter = run_tool(
            "plot_scatter",
            df.assign(y=df["value $"] ** 2),
            figures_dir=tmp_path,
            x_column="value $",
            y_column="y",
            group_column=col,
        )
    for result in (bar, hist, scatter):
        assert result.ok, result.error
        width, height = assert_png(result.figures[0], tmp_path)
        assert width < 2000  # long labels were wrapped/truncated, not stretching the figure
    assert found == []


def test_wrap_label_bounds_width_and_lines():
    label = charts.wrap_label("华东地区销售部门第一分公司上海业务统计报表" * 3, width=12, max_lines=2)
    lines = label.split("\n")
    assert len(lines) == 2 and lines[-1].endswith("…")
    assert all(charts.text_width(line) <= 12 for line in lines)
    assert charts.wrap_label("short") == "short"
    assert charts.wrap_label("a $x$ b") == r"a \$x\$ b"


def test_fold_categories_helper():
    ranking = pd.Series([50, 40, 30, 20, 10], index=["a", "b", "c", "d", "e"])
    keep, rest = charts.top_categories(ranking, 2)
    assert keep == ["a", "b"] and rest == ["c", "d", "e"]
    folded = charts.fold_categories(pd.Series(["a", "c", "e", "b"]), keep, charts.other_label(3, zh=True))
    assert list(folded) == ["a", "其他（3 类）", "其他（3 类）", "b"]


# ----------------------------------------------------------------------------- errors and language


@pytest.mark.parametrize(
    "name, args",
    [
        ("plot_histogram", {"value_column": "城市"}),
        ("plot_bar", {"x_column": "城市", "y_column": "性别", "agg": "mean"}),
        ("plot_scatter", {"x_column": "收入（元）", "y_column": "城市"}),
    ],
)
def test_non_numeric_column_is_a_structured_error(tmp_path, zh_df, name, args):
    result = run_tool(name, zh_df, figures_dir=tmp_path, **args)
    assert not result.ok and result.figures == []
    assert result.error["error"] == "wrong_column_type"
    assert result.error["hint"] and result.error["message"]
    assert not list(tmp_path.glob("*.png"))


def test_numbers_stored_as_text_hint_convert_types(tmp_path):
    df = pd.DataFrame({"金额": ["1,200", "350", "4,000", "80"]})
    result = run_tool("plot_histogram", df, figures_dir=tmp_path, value_column="金额")
    assert result.error["error"] == "wrong_column_type" and "convert_types" in result.error["hint"]


def test_unknown_column_and_empty_values(tmp_path, zh_df):
    missing = run_tool("plot_histogram", zh_df, figures_dir=tmp_path, value_column="收入")
    assert missing.error["error"] == "column_not_found" and "收入（元）" in missing.error["did_you_mean"]
    empty = run_tool(
        "plot_histogram",
        pd.DataFrame({"v": [np.nan, np.inf, None]}, dtype=float),
        figures_dir=tmp_path,
        value_column="v",
    )
    assert empty.error["error"] == "insufficient_data"


def test_caption_in_chinese(tmp_path, zh_df):
    for name, args in [
        ("plot_histogram", {"value_column": "年龄"}),
        ("plot_bar", {"x_column": "城市", "y_column": "收入（元）"}),
        ("plot_scatter", {"x_column": "收入（元）", "y_column": "消费金额"}),
    ]:
        zh = run_tool(name, zh_df, figures_dir=tmp_path, language="zh", **args)
        en = run_tool(name, zh_df, figures_dir=tmp_path, language="en", **args)
        assert zh.ok and en.ok
        zh_caption, en_caption = zh.captions[0], en.captions[0]
        assert one_sentence(zh_caption) and zh_caption.endswith("。")
        # apart from column names, the zh caption is Chinese and the en one is not
        assert CJK.search(
            zh_caption.replace("年龄", "").replace("城市", "").replace("收入（元）", "").replace("消费金额", "")
        )
        assert not re.search(r"\b(Histogram|Bar chart|Scatter plot)\b", zh_caption)
        assert not CJK.search(
            en_caption.replace("年龄", "").replace("城市", "").replace("收入（元）", "").replace("消费金额", "")
        )
        assert CJK.search(zh.text.split("[insights]", 1)[1])


def test_input_is_not_mutated(tmp_path, zh_df):
    before = zh_df.copy(deep=True)
    run_tool("plot_histogram", zh_df, figures_dir=tmp_path, value_column="年龄", group_column="城市")
    run_tool("plot_bar", zh_df, figures_dir=tmp_path, x_column="城市", y_column="收入（元）", top=3)
    run_tool(
        "plot_scatter", zh_df, figures_dir=tmp_path, x_column="收入（元）", y_column="消费金额", group_column="性别"
    )
    pd.testing.assert_frame_equal(zh_df, before)


def test_duplicate_index_is_handled(tmp_path, zh_df):
    df = pd.concat([zh_df, zh_df])  # repeated row labels
    result = run_tool(
        "plot_scatter", df, figures_dir=tmp_path, x_column="收入（元）", y_column="消费金额", group_column="城市"
    )
    assert result.ok and result.metrics["n"] == len(df)
    bar = run_tool("plot_bar", df, figures_dir=tmp_path, x_column="城市", y_column="年龄", agg="sum")
    assert bar.ok and bar.table.iloc[:, 1].sum() == pytest.approx(df["年龄"].sum())


def test_schemas_document_every_argument():
    from analysis_tools import REGISTRY

    for name in ("plot_histogram", "plot_bar", "plot_scatter"):
        tool = REGISTRY.get(name)
        assert tool is not None and tool.group == "plot"
        assert tool.summary.startswith("Draw")
        for arg, prop in tool.parameters["properties"].items():
            if arg != "dataset":
                assert prop.get("description"), (name, arg)
    assert REGISTRY.get("plot_bar").parameters["properties"]["agg"]["enum"] == ["mean", "sum", "count", "median"]
