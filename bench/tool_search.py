"""How well tool_search finds the tool a model looks for (app/agent/tools/exposure.py `rank_tools`).
Usage: `PYTHONPATH=$PWD python bench/tool_search.py [--repo PATH] [--sweep] [--show] [--cold]`.

The queries are what a model sends to tool_search while analysing (a few words, English or Chinese,
sometimes a method's name, sometimes a plain wish). They were written from the catalog's purposes
(analysis_tools: each tool's description), one to four per tool and language, not from any word list of
the ranking; each names the tools that would serve it (any of them counts as found). Not a timed
test: a table of top-1 / top-3 hits per method and the time taken.

Methods (each over the full catalog, FULL_REGISTRY):
- rank_tools: what tool_search uses, as the repository at --repo has it (default: this checkout);
- lexical: the words alone (tool_ranking.lexical_scores) — only where this checkout has tool_ranking;
- embedding: the e5 cosine of the query and each tool's name+description+keywords alone;
--sweep prints top-1/top-3 of lexical weight × embedding for a grid of weights (tool_ranking.LEXICAL_WEIGHT
was chosen from it); --show lists the queries rank_tools misses at top 3; --cold times the first search
of a new process without and with the catalog's vectors on disk.
A last row checks that every tool's own name finds it first (the built-in analyst searches by name).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (query, tools that serve it). English first, then Chinese; grouped by the catalog's order.
QUERIES: list[tuple[str, tuple[str, ...]]] = [
    # --- core: what is loaded, what it looks like
    ("list loaded datasets", ("list_datasets",)),
    ("which tables are available", ("list_datasets",)),
    ("show the first rows", ("preview_data",)),
    ("look at a sample of the data", ("preview_data",)),
    ("overview of every column: type, missing, distinct values", ("profile_dataset",)),
    ("profile the dataset", ("profile_dataset",)),
    # --- data preparation
    ("count how often each category occurs", ("value_counts",)),
    ("frequency table of a column", ("value_counts",)),
    ("share of each value", ("value_counts", "plot_pie")),
    ("remove duplicate rows and trim whitespace", ("clean_data",)),
    ("clean the dataset", ("clean_data",)),
    ("convert a text column to numbers", ("convert_types",)),
    ("parse dates stored as text", ("convert_types",)),
    ("change column type to category", ("convert_types",)),
    ("keep only rows where region is East", ("filter_rows",)),
    ("subset rows by a condition", ("filter_rows",)),
    ("exclude rows before 2020", ("filter_rows",)),
    ("add a computed column for profit margin", ("derive_column",)),
    ("create a new column from an expression", ("derive_column",)),
    ("ratio of two columns as a new variable", ("derive_column",)),
    ("sum of sales by region", ("group_aggregate", "pivot_table")),
    ("group by category and take the mean", ("group_aggregate",)),
    ("subtotals per customer", ("group_aggregate",)),
    ("top 10 customers by revenue", ("rank_values",)),
    ("bottom 5 products by profit", ("rank_values",)),
    ("which store has the highest sales", ("rank_values", "group_aggregate")),
    ("sort rows by value descending", ("rank_values",)),
    ("pivot table of region by month", ("pivot_table",)),
    ("cross tabulation with sums in each cell", ("pivot_table",)),
    ("join two tables on customer id", ("merge_datasets",)),
    ("vlookup from another dataset", ("merge_datasets",)),
    ("combine two datasets by a key column", ("merge_datasets",)),
    ("check data quality problems", ("detect_data_quality",)),
    ("find missing values and duplicate ids", ("detect_data_quality", "profile_dataset")),
    ("impossible values and mixed types", ("detect_data_quality",)),
    ("read another sheet of the excel workbook", ("select_sheet",)),
    # --- statistics
    ("summary statistics", ("describe_columns",)),
    ("mean, median and standard deviation of a column", ("describe_columns",)),
    ("descriptive statistics of numeric columns", ("describe_columns",)),
    ("skewness", ("describe_columns", "normality_test")),
    ("t-test between two groups", ("compare_two_groups",)),
    ("mann-whitney u test", ("compare_two_groups",)),
    ("is the difference between men and women significant", ("compare_two_groups",)),
    ("effect size cohen's d", ("compare_two_groups",)),
    ("one-way anova", ("compare_groups",)),
    ("compare means across several groups", ("compare_groups",)),
    ("kruskal-wallis test", ("compare_groups",)),
    ("does income differ by region", ("compare_groups",)),
    ("post-hoc tukey comparisons", ("compare_groups",)),
    ("correlation between two variables", ("correlation_analysis",)),
    ("pearson spearman correlation", ("correlation_analysis",)),
    ("how strongly do price and demand move together", ("correlation_analysis",)),
    ("correlation matrix", ("correlation_analysis", "plot_heatmap")),
    ("linear regression", ("linear_regression",)),
    ("ols coefficients with standard errors", ("linear_regression",)),
    ("effect of price on sales controlling for season", ("linear_regression",)),
    ("multiple regression", ("linear_regression",)),
    ("normality test", ("normality_test",)),
    ("shapiro-wilk", ("normality_test",)),
    ("is the column normally distributed", ("normality_test",)),
    ("paired t-test before and after", ("paired_test",)),
    ("wilcoxon signed-rank test", ("paired_test",)),
    ("same subjects measured twice", ("paired_test",)),
    ("two-way anova", ("two_way_anova",)),
    ("interaction between two factors", ("two_way_anova",)),
    ("chi-square test of independence", ("chi_square_test",)),
    ("are two categorical variables related", ("chi_square_test",)),
    ("fisher exact test", ("chi_square_test",)),
    ("logistic regression", ("logistic_regression",)),
    ("odds ratios for a yes/no outcome", ("logistic_regression",)),
    ("what predicts whether a customer churned", ("logistic_regression", "train_classifier", "feature_importance")),
    ("test whether conversion rates differ", ("proportion_test",)),
    ("one proportion z test against 50%", ("proportion_test",)),
    ("defect rate compared with a target", ("proportion_test",)),
    ("find outliers", ("outlier_detection", "anomaly_detection")),
    ("iqr fences", ("outlier_detection",)),
    ("unusually large values in a column", ("outlier_detection",)),
    ("robust z-score", ("outlier_detection",)),
    ("confidence interval for the mean", ("confidence_interval",)),
    ("95% ci of a proportion", ("confidence_interval",)),
    ("margin of error", ("confidence_interval",)),
    ("fit an exponential curve", ("curve_fit",)),
    ("nonlinear least squares", ("curve_fit",)),
    ("power law fit of y on x", ("curve_fit",)),
    # --- machine learning
    ("train a model to predict sales", ("train_regression_model",)),
    ("random forest regression", ("train_regression_model",)),
    ("gradient boosting predict price", ("train_regression_model",)),
    ("classification model", ("train_classifier",)),
    ("random forest classifier", ("train_classifier",)),
    ("predict which customers will buy", ("train_classifier", "logistic_regression")),
    ("feature importance", ("feature_importance",)),
    ("which columns matter most for the target", ("feature_importance",)),
    ("key drivers of revenue", ("feature_importance", "linear_regression", "contribution_decomposition")),
    ("k-means clustering", ("cluster_segments",)),
    ("customer segmentation", ("cluster_segments",)),
    ("group similar rows together", ("cluster_segments",)),
    ("principal component analysis", ("pca_analysis",)),
    ("dimensionality reduction", ("pca_analysis",)),
    ("isolation forest", ("anomaly_detection",)),
    ("unusual rows across many columns", ("anomaly_detection",)),
    ("multivariate anomaly detection", ("anomaly_detection",)),
    # --- time series
    ("trend over time", ("time_series_trend", "plot_line")),
    ("is revenue going up", ("time_series_trend",)),
    ("mann-kendall trend test", ("time_series_trend",)),
    ("seasonality", ("seasonal_decompose",)),
    ("seasonal decomposition stl", ("seasonal_decompose",)),
    ("peak season", ("seasonal_decompose",)),
    ("forecast the next 3 months", ("forecast",)),
    ("predict future sales", ("forecast",)),
    ("arima exponential smoothing", ("forecast",)),
    ("this month versus last month", ("compare_periods",)),
    ("before and after the campaign", ("compare_periods", "paired_test")),
    ("year over year comparison", ("compare_periods",)),
    ("cohort retention", ("cohort_retention",)),
    ("how many customers come back after their first purchase", ("cohort_retention",)),
    ("funnel conversion", ("funnel_analysis",)),
    ("drop-off between checkout steps", ("funnel_analysis",)),
    ("which segments drove the change", ("contribution_decomposition",)),
    ("why did sales drop compared with last quarter", ("contribution_decomposition", "compare_periods")),
    ("contribution of each region to growth", ("contribution_decomposition",)),
    # --- charts
    ("histogram", ("plot_histogram",)),
    ("plot the distribution of a column", ("plot_histogram", "plot_box")),
    ("bar chart by category", ("plot_bar",)),
    ("bar plot", ("plot_bar",)),
    ("scatter plot", ("plot_scatter",)),
    ("plot x against y", ("plot_scatter",)),
    ("line chart over time", ("plot_line",)),
    ("plot sales by date", ("plot_line",)),
    ("box plot by group", ("plot_box",)),
    ("boxplot", ("plot_box",)),
    ("heatmap", ("plot_heatmap",)),
    ("correlation heatmap", ("plot_heatmap",)),
    ("pie chart", ("plot_pie",)),
    ("chart of shares per category", ("plot_pie",)),
    # --- harness
    ("add a step to the plan", ("task_create",)),
    ("mark a task as done", ("task_update",)),
    ("list tasks", ("task_list",)),
    ("show one task", ("task_get",)),
    ("record a conclusion with its evidence", ("record_evidence",)),
    ("withdraw a wrong finding", ("retract_evidence",)),
    ("write down the analysis goal and metrics", ("record_analysis_plan",)),
    ("ask the user which column they mean", ("ask_user_question",)),
    ("read the full truncated output", ("read_tool_output",)),
    ("summarise the conversation to save context", ("compact_context",)),
    ("metric definitions in the reference notes", ("search_knowledge",)),
    ("run custom pandas code", ("run_python",)),
    # === Chinese
    ("列出数据集", ("list_datasets",)),
    ("有哪些数据表", ("list_datasets",)),
    ("查看前几行数据", ("preview_data",)),
    ("预览数据", ("preview_data",)),
    ("数据概览", ("profile_dataset", "describe_columns")),
    ("每列的类型和缺失值", ("profile_dataset", "detect_data_quality")),
    ("统计每个类别出现的次数", ("value_counts",)),
    ("频数统计", ("value_counts",)),
    ("各取值的占比", ("value_counts", "plot_pie")),
    ("清洗数据", ("clean_data",)),
    ("去除重复行", ("clean_data",)),
    ("把文本转换成数字", ("convert_types",)),
    ("转换列的数据类型", ("convert_types",)),
    ("筛选出华东地区的行", ("filter_rows",)),
    ("按条件过滤数据", ("filter_rows",)),
    ("新增一列计算利润率", ("derive_column",)),
    ("根据公式计算新列", ("derive_column",)),
    ("按地区汇总销售额", ("group_aggregate", "pivot_table")),
    ("分组求平均值", ("group_aggregate",)),
    ("销售额前十的客户", ("rank_values",)),
    ("最高的五个产品", ("rank_values",)),
    ("数据透视表", ("pivot_table",)),
    ("交叉表", ("pivot_table", "chi_square_test")),
    ("合并两个表", ("merge_datasets",)),
    ("按客户ID关联两张表", ("merge_datasets",)),
    ("检查数据质量", ("detect_data_quality",)),
    ("数据有没有问题", ("detect_data_quality",)),
    ("读取另一个工作表", ("select_sheet",)),
    ("描述性统计", ("describe_columns",)),
    ("平均值和标准差", ("describe_columns",)),
    ("计算中位数", ("describe_columns",)),
    ("两组均值差异检验", ("compare_two_groups",)),
    ("t检验", ("compare_two_groups", "paired_test")),
    ("男女之间有没有显著差异", ("compare_two_groups",)),
    ("方差分析", ("compare_groups", "two_way_anova")),
    ("多组比较", ("compare_groups",)),
    ("不同地区之间收入是否有差异", ("compare_groups",)),
    ("相关性分析", ("correlation_analysis",)),
    ("两个变量的相关系数", ("correlation_analysis",)),
    ("价格和销量有没有关系", ("correlation_analysis", "linear_regression")),
    ("线性回归", ("linear_regression",)),
    ("多元回归分析", ("linear_regression",)),
    ("控制其他变量后价格的影响", ("linear_regression",)),
    ("正态性检验", ("normality_test",)),
    ("是否服从正态分布", ("normality_test",)),
    ("配对t检验", ("paired_test",)),
    ("同一批人前后对比", ("paired_test",)),
    ("双因素方差分析", ("two_way_anova",)),
    ("两个因素的交互作用", ("two_way_anova",)),
    ("卡方检验", ("chi_square_test",)),
    ("两个分类变量是否独立", ("chi_square_test",)),
    ("逻辑回归", ("logistic_regression",)),
    ("二分类结果的影响因素", ("logistic_regression", "train_classifier", "feature_importance")),
    ("比例检验", ("proportion_test",)),
    ("转化率是否有显著差异", ("proportion_test",)),
    ("异常值检测", ("outlier_detection", "anomaly_detection")),
    ("找出离群值", ("outlier_detection",)),
    ("均值的置信区间", ("confidence_interval",)),
    ("95%置信区间", ("confidence_interval",)),
    ("曲线拟合", ("curve_fit",)),
    ("指数函数拟合", ("curve_fit",)),
    ("训练模型预测房价", ("train_regression_model",)),
    ("机器学习回归模型", ("train_regression_model",)),
    ("分类模型", ("train_classifier",)),
    ("预测客户是否流失", ("train_classifier", "logistic_regression")),
    ("特征重要性", ("feature_importance",)),
    ("哪些因素影响最大", ("feature_importance", "linear_regression")),
    ("聚类分析", ("cluster_segments",)),
    ("客户分群", ("cluster_segments",)),
    ("主成分分析", ("pca_analysis",)),
    ("降维", ("pca_analysis",)),
    ("多维异常检测", ("anomaly_detection",)),
    ("找出异常的记录", ("anomaly_detection", "outlier_detection")),
    ("趋势分析", ("time_series_trend",)),
    ("销售额随时间的变化趋势", ("time_series_trend", "plot_line")),
    ("季节性分解", ("seasonal_decompose",)),
    ("季节性规律", ("seasonal_decompose",)),
    ("预测未来三个月的销售额", ("forecast",)),
    ("时间序列预测", ("forecast",)),
    ("本月与上月对比", ("compare_periods",)),
    ("环比", ("compare_periods",)),
    ("同比增长", ("compare_periods", "contribution_decomposition")),
    ("留存分析", ("cohort_retention",)),
    ("用户留存率", ("cohort_retention",)),
    ("漏斗分析", ("funnel_analysis",)),
    ("各步骤的转化率", ("funnel_analysis",)),
    ("贡献度分解", ("contribution_decomposition",)),
    ("哪个地区导致了销售额下降", ("contribution_decomposition",)),
    ("直方图", ("plot_histogram",)),
    ("画分布图", ("plot_histogram", "plot_box")),
    ("柱状图", ("plot_bar",)),
    ("条形图", ("plot_bar",)),
    ("散点图", ("plot_scatter",)),
    ("画两个变量的关系图", ("plot_scatter",)),
    ("折线图", ("plot_line",)),
    ("画时间走势图", ("plot_line",)),
    ("箱线图", ("plot_box",)),
    ("热力图", ("plot_heatmap",)),
    ("相关矩阵热图", ("plot_heatmap",)),
    ("饼图", ("plot_pie",)),
    ("占比图", ("plot_pie",)),
    ("创建任务", ("task_create",)),
    ("更新任务状态", ("task_update",)),
    ("任务列表", ("task_list",)),
    ("记录结论", ("record_evidence",)),
    ("撤回错误的证据", ("retract_evidence",)),
    ("记录分析计划", ("record_analysis_plan",)),
    ("向用户确认", ("ask_user_question",)),
    ("读取完整输出", ("read_tool_output",)),
    ("压缩上下文", ("compact_context",)),
    ("查找指标口径定义", ("search_knowledge",)),
    ("执行python代码", ("run_python",)),
]

Ranker = Callable[[str], list[str]]


def score(ranker: Ranker) -> tuple[int, int, float, list[tuple[str, tuple[str, ...], list[str]]]]:
    """(top-1 hits, top-3 hits, seconds, misses at top 3) of one method over QUERIES."""
    top1 = top3 = 0
    misses = []
    started = time.perf_counter()
    for query, expected in QUERIES:
        found = ranker(query)[:3]
        top1 += bool(found) and found[0] in expected
        hit = any(name in expected for name in found)
        top3 += hit
        if not hit:
            misses.append((query, expected, found))
    return top1, top3, time.perf_counter() - started, misses


COLD_PROBE = """
import sys, time
sys.path.insert(0, sys.argv[1])
from app.agent.tools.exposure import rank_tools
from app.agent.tools.toolbox import FULL_REGISTRY
started = time.perf_counter()
rank_tools(FULL_REGISTRY, "correlation", 3)
print(time.perf_counter() - started)
"""


def cold_starts(repo: Path) -> list[tuple[str, float]]:
    """The first search of a new process, in a fresh data dir: without the vectors on disk (it embeds
    the catalog and saves them), then with them (it reads them)."""
    import os
    import subprocess
    import tempfile

    timings = []
    with tempfile.TemporaryDirectory() as data_dir:
        env = dict(os.environ, VERITY_DATA_DIR=data_dir)
        for label in ("no cache file (embeds the catalog)", "cache file present"):
            run = subprocess.run(
                [sys.executable, "-c", COLD_PROBE, str(repo)], env=env, capture_output=True, text=True, check=True
            )
            timings.append((label, float(run.stdout.strip().splitlines()[-1])))
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", type=Path, default=ROOT, help="checkout whose rank_tools is measured")
    parser.add_argument("--sweep", action="store_true", help="top-1/top-3 for a grid of lexical weights")
    parser.add_argument("--show", action="store_true", help="list rank_tools' misses at top 3")
    parser.add_argument("--cold", action="store_true", help="time the first search of new processes")
    parser.add_argument(
        "--build-vectors", action="store_true", help="rewrite the catalog's packaged vectors file, then stop"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(args.repo.resolve()))

    from app.agent.tools.exposure import rank_tools
    from app.agent.tools.toolbox import FULL_REGISTRY

    tools = list(FULL_REGISTRY)
    if args.build_vectors:
        from app.agent.tools.tool_ranking import build_packaged_file

        print(build_packaged_file(tools))
        return
    zh = sum(any("\u4e00" <= c <= "\u9fff" for c in q) for q, _ in QUERIES)
    print(f"{len(QUERIES)} queries ({len(QUERIES) - zh} en, {zh} zh), {len(tools)} tools, repo {args.repo}\n")

    rows: list[tuple[str, Ranker]] = []
    started = time.perf_counter()
    rank_tools(FULL_REGISTRY, "correlation", 3)  # the first call loads what it loads (models, cached vectors)
    first_call = time.perf_counter() - started
    rows.append(("rank_tools", lambda q: [t.name for t in rank_tools(FULL_REGISTRY, q, 3)]))
    try:
        from app.agent.tools import tool_ranking
    except ImportError:
        tool_ranking = None  # type: ignore[assignment]
    if tool_ranking is not None:
        ranking = tool_ranking.catalog_ranking(tools)
        rows.append(("lexical", lambda q: ranking.order(q, lexical_weight=1.0, semantic=False)))
        rows.append(("embedding", lambda q: ranking.order(q, lexical_weight=0.0)))

    print(f"{'method':<12} {'top-1':>12} {'top-3':>12} {'ms/query':>9}")
    for label, ranker in rows:
        top1, top3, seconds, misses = score(ranker)
        n = len(QUERIES)
        print(f"{label:<12} {top1:>4}/{n} {top1 / n:4.0%} {top3:>4}/{n} {top3 / n:4.0%} {seconds / n * 1000:9.1f}")
        if args.show and label == "rank_tools":
            for query, expected, found in misses:
                print(f"    miss  {query!r}: want {'/'.join(expected)}, got {', '.join(found) or '-'}")
    print(
        f"\nrank_tools first call in this process (loads the model, reads the cached vectors): {first_call * 1000:.0f} ms"
    )
    if args.cold:
        for label, seconds in cold_starts(args.repo.resolve()):
            print(f"rank_tools first call, new process, {label}: {seconds * 1000:.0f} ms")

    names_first = sum(
        (found := rank_tools(FULL_REGISTRY, t.name, 1)) != [] and found[0].name == t.name
        for t in tools
        if t.name != "tool_search"
    )
    print(f"a tool's own name finds it first: {names_first}/{len(tools) - 1}")

    if args.sweep and tool_ranking is not None:
        print("\nlexical weight sweep (combined = cosine + weight × lexical):")
        for weight in (0.0, 0.02, 0.05, 0.08, 0.1, 0.12, 0.15, 0.2, 0.3):
            top1, top3, _, _ = score(lambda q, w=weight: ranking.order(q, lexical_weight=w))
            print(f"  {weight:5.2f}  top-1 {top1:>3}  top-3 {top3:>3}")


if __name__ == "__main__":
    main()
