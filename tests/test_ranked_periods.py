"""The top N calendar periods, and the rows a ranking of periods is about. Found in a new user's trial on the
samples' monthly_operations.xlsx: "Top 3 months by orders for 北京店" listed the three stores ("the data has no
column for months"), and "北京店哪个月的营业额最高？" ranked the months of all stores together. Expected values
are computed here with pandas from the file itself."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis_tools.common import fmt_num
from app.analyst import past_the_reading
from app.analyst.totals import ranked_period_unit
from tests.factories import SAMPLES
from tests.test_builtin_understanding import Session

pytestmark = pytest.mark.slow

BOOK = SAMPLES / "monthly_operations.xlsx"


def monthly(store: str, column: str) -> pd.Series:
    frame = pd.read_excel(BOOK)
    kept = frame[frame["门店"] == store]
    return kept.groupby(kept["月份"].dt.to_period("M"))[column].sum().sort_values(ascending=False)


def test_the_top_three_months_of_one_store(tmp_path: Path) -> None:
    session = Session(tmp_path, BOOK)
    run, calls = session.ask("Top 3 months by orders for 北京店", language="en")
    answer = str(run.answer)
    assert answer.startswith("Read as: the top 3 months by total 订单数 (only rows with 门店 = 北京店)"), answer
    headline = past_the_reading(answer).split("\n\n")[0]
    for rank, (month, orders) in enumerate(monthly("北京店", "订单数").head(3).items(), 1):
        assert f"{rank}. {month.strftime('%b %Y')} {fmt_num(orders)}" in headline, headline
    assert [c.tool for c in calls].count("filter_rows") == 1
    # the same in Chinese, the months counted with 个
    run, _ = session.ask("北京店订单最多的三个月是哪几个月？")
    first, orders = next(iter(monthly("北京店", "订单数").items()))
    assert f"1. {first.year}年{first.month}月 {fmt_num(orders)}" in str(run.answer), run.answer


def test_the_month_one_store_sold_most_is_that_stores_month(tmp_path: Path) -> None:
    run, _ = Session(tmp_path, BOOK).ask("北京店哪个月的营业额最高？")
    month, revenue = next(iter(monthly("北京店", "营业额").items()))
    assert "只含 门店 = 北京店" in str(run.answer), run.answer
    assert f"{month.year}年{month.month}月 的 营业额合计最高：{fmt_num(revenue)}" in str(run.answer), run.answer


@pytest.mark.parametrize(
    ("question", "unit"),
    [
        ("Which 3 months had the most orders?", "month"),
        ("退货率最低的两个季度", "quarter"),
        ("the top 10 days by visits", "day"),
        ("前三个月的销售额是多少？", ""),  # the first three months: a stretch of time
        ("What was revenue in the last 3 months?", ""),
        ("这三年平均下来，哪三块地的产量最高？", ""),  # these three years: a stretch; the three ranked are plots
        ("Over these 3 years, which 3 plots yielded most?", ""),
        ("2023年销量最高的3个产品", ""),  # 2023年 is a year's number, the 3 counts products
        ("销售额最高的5个门店", ""),
    ],
)
def test_a_number_counts_periods_only_right_before_their_unit(question: str, unit: str) -> None:
    assert ranked_period_unit(question) == unit
