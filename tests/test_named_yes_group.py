"""The rate of a yes/no outcome by a yes/no grouping the question names (issue 24, yes/no rates): "are
shoppers with a loyalty card less likely to return an order?" asks about the card holders, so the answer
leads with them and says which way their rate stands against the others' (lower / higher), not only which
group is highest. A workbook built here; the rates are computed with pandas."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis_tools.common import fmt_num
from tests.test_builtin_understanding import Session, call, headline

pytestmark = pytest.mark.slow


def orders(path: Path) -> pd.DataFrame:
    """500 orders: whether the shopper holds a loyalty card, the basket, and whether it came back."""
    rng = np.random.default_rng(33)
    n = 500
    card = rng.choice(["Yes", "No"], n, p=[0.4, 0.6])
    returned = np.where(rng.uniform(size=n) < np.where(card == "Yes", 0.08, 0.22), "Yes", "No")
    frame = pd.DataFrame(
        {
            "Order": [f"O{i:04d}" for i in range(n)],
            "Loyalty Card?": card,
            "Basket (£)": rng.gamma(3, 15, n).round(2),
            "Returned": returned,
        }
    )
    frame.to_csv(path, index=False)
    return frame


def test_the_named_yes_group_leads_with_the_way_its_rate_stands(tmp_path):
    path = tmp_path / "data" / "orders.csv"
    path.parent.mkdir(parents=True)
    frame = orders(path)
    run, calls = Session(tmp_path, path).ask("Are shoppers with a loyalty card less likely to return an order?")
    test = call(calls, "proportion_test")
    assert (test.arguments["value_column"], test.arguments["group_column"]) == ("Returned", "Loyalty Card?")
    rates = frame.assign(back=frame["Returned"].eq("Yes")).groupby("Loyalty Card?")["back"].mean()
    assert headline(run).startswith(
        f"**The Returned = Yes rate is lower for Yes: {rates['Yes']:.1%} vs {rates['No']:.1%} for No (by Loyalty Card?)"
    )


def test_the_rate_of_one_named_group_of_several_leads_with_that_group(tmp_path):
    """ "赵阿姨的好评率是多少？" on four cleaners: 赵阿姨's rate first, with where it ranks, not the highest group's."""
    rng = np.random.default_rng(8)
    n = 240
    cleaner = rng.choice(["王阿姨", "李阿姨", "张阿姨", "赵阿姨"], n)
    liked = np.where(rng.uniform(size=n) < np.where(cleaner == "赵阿姨", 0.55, 0.8), "是", "否")
    frame = pd.DataFrame({"阿姨": cleaner, "金额": rng.integers(100, 400, n), "好评": liked})
    path = tmp_path / "jobs.csv"
    frame.to_csv(path, index=False)
    run, calls = Session(tmp_path, path).ask("赵阿姨的好评率是多少？")
    test = call(calls, "proportion_test")
    assert test.arguments["group_column"] == "阿姨"
    rates = frame["好评"].eq("是").groupby(frame["阿姨"]).mean().sort_values(ascending=False)
    place = list(rates.index).index("赵阿姨") + 1
    said = headline(run)
    assert said.startswith(f"**{rates.index[0]} 的 好评 = 是 比例"), said  # the ranking, highest first
    assert said.endswith(f"赵阿姨：{rates['赵阿姨']:.1%}，在 4 组中排第 {place}。**"), said


def test_two_averages_said_in_the_headline_are_not_listed_again(tmp_path):
    """ "Do shoppers with a loyalty card spend more?": the two averages, said to five digits, are not repeated
    after the sentence as "(averages: Yes 45.12, No 44.9)"."""
    path = tmp_path / "orders.csv"
    frame = orders(path)
    run, _ = Session(tmp_path, path).ask("Do shoppers with a loyalty card spend more per basket?")
    said = headline(run)
    means = frame.groupby("Loyalty Card?")["Basket (£)"].mean()
    assert all(fmt_num(v, 5) in said for v in means), said
    assert "averages:" not in said, said


def test_rows_marked_yes_compared_by_a_quality_compare_a_measure(tmp_path):
    """ "Are returned orders bigger?": Returned marks the orders compared (a comparative adjective of the rows),
    so the baskets of returned and kept orders are compared — not the return rate."""
    path = tmp_path / "orders.csv"
    frame = orders(path)
    run, calls = Session(tmp_path, path).ask("Are returned orders bigger?")
    assert not any(c.tool == "proportion_test" for c in calls)
    means = frame.groupby("Returned")["Basket (£)"].mean()
    said = headline(run)
    assert "Basket" in said and all(fmt_num(v, 5) in said for v in means), said
