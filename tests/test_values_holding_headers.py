"""A category value that holds its column's header in its own letters ("东门店" holds 门店): the question that
writes the value names the value, not the header. Found in a new user's trial: "东门店哪3天的销售额最高？"
ranked the three stores (门店 read as named, 东门店 as no value), not 东门店's three best days."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis_tools.common import fmt_num
from tests.test_builtin_understanding import Session, call, headline


@pytest.mark.parametrize(
    ("question", "language"),
    [("北门店哪3天的营业额最高？", "zh"), ("Which 3 days had the highest 营业额 at 北门店?", "en")],
)
def test_a_value_holding_the_header_keeps_its_rows(tmp_path, question, language):
    rng = np.random.default_rng(17)
    n = 120
    frame = pd.DataFrame(
        {
            "门店": rng.choice(["北门店", "南门店", "中心店"], n),
            "日期": pd.date_range("2024-02-01", periods=n, freq="D"),
            "营业额": rng.integers(800, 3000, n),
        }
    )
    path = tmp_path / "门店营业.csv"
    frame.to_csv(path, index=False)
    run, calls = Session(tmp_path, path).ask(question, language=language)
    assert {"column": "门店", "op": "==", "value": "北门店"} in call(calls, "filter_rows").arguments["conditions"]
    best = frame[frame["门店"] == "北门店"].nlargest(3, "营业额")
    said = headline(run)
    assert all(fmt_num(int(v)) in said for v in best["营业额"]), said
    assert "中心店" not in said, said
