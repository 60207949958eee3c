"""Answers in the sheet's own words (issue 24, point 6): a yes/no column is shown as the sheet writes
it (是/否, Yes/No), never "= True/False"; months as people name them ("2024年3月", "Mar 2024") and days
without a midnight time; a row of averages (平均分) under the data is excluded at ingest like a totals
row, with the cleaning log saying so. Every answer is a real built-in analysis through the harness on
a small generated file; expected numbers come from pandas on the generated rows."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from analysis_tools.common import fmt_num
from app.analyst.sheet_words import as_people_write
from app.ingest.pipeline import load_table
from tests.test_builtin_understanding import Session, headline

BOOLEAN_WORDS = re.compile(r"\b(?:True|False)\b|(?<=[= ])(?:True|False)")


def orders(tmp_path, yes: str, no: str, english: bool):
    rng = np.random.default_rng(5)
    n = 60
    names = ("Store", "Sales", "Returned") if english else ("门店", "销售额", "是否退货")
    frame = pd.DataFrame(
        {
            names[0]: ["A", "B", "C"] * 20,
            names[1]: rng.integers(100, 900, n),
            names[2]: rng.choice([yes, no], n, p=[0.3, 0.7]),
        }
    )
    path = tmp_path / "orders.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_a_yes_no_column_keeps_its_own_words_at_ingest(tmp_path):
    path, _ = orders(tmp_path, "是", "否", english=False)
    column = next(c for c in load_table(path).info["columns"] if c["name"] == "是否退货")
    assert column["type"] == "boolean" and column["words"] == {"true": "是", "false": "否"}


def test_a_comparison_by_a_chinese_yes_no_column_says_its_own_words(tmp_path):
    path, frame = orders(tmp_path, "是", "否", english=False)
    run, _ = Session(tmp_path, path).ask("退货的订单销售额是否更高？")
    text = headline(run)
    returned = frame.loc[frame["是否退货"] == "是", "销售额"].mean()
    assert "是否退货 = 是" in text and "是否退货 = 否" in text, text
    assert fmt_num(returned, 5) in text
    assert not BOOLEAN_WORDS.search(text), text


def test_an_english_yes_no_column_says_yes_and_no(tmp_path):
    path, frame = orders(tmp_path, "Yes", "No", english=True)
    session = Session(tmp_path, path)
    run, _ = session.ask("Do returned orders have higher sales?")
    text = headline(run)
    assert "Returned = Yes" in text and "Returned = No" in text, text
    assert not BOOLEAN_WORDS.search(text), text
    run, _ = session.ask("How many orders were returned?")  # a count of the yes rows, in the sheet's words
    returned = int((frame["Returned"] == "Yes").sum())
    assert f"{returned} of {len(frame)} orders have Returned = Yes" in headline(run), headline(run)
    assert not BOOLEAN_WORDS.search(headline(run))


def monthly(tmp_path, month: str = "月份", sales: str = "销售额"):
    months = pd.date_range("2023-01-01", periods=15, freq="MS")
    path = tmp_path / "monthly.csv"
    pd.DataFrame({month: [m.strftime("%Y-%m") for m in months], sales: np.arange(15) * 10 + 100}).to_csv(
        path, index=False
    )
    return path


def test_a_monthly_trend_names_its_months_in_chinese(tmp_path):
    run, _ = Session(tmp_path, monthly(tmp_path)).ask("销售额每个月的趋势如何？")
    text = headline(run)
    assert "2023年1月" in text and "2024年3月" in text, text
    assert not re.search(r"\d{4}-\d{2}", text), text


def test_a_monthly_trend_names_its_months_in_english(tmp_path):
    run, _ = Session(tmp_path, monthly(tmp_path, "Month", "Sales")).ask("How did sales change over the months?")
    text = headline(run)
    assert "Jan 2023" in text and "Mar 2024" in text, text
    assert not re.search(r"\d{4}-\d{2}", text), text


def test_dates_are_written_as_people_write_them():
    assert as_people_write("peak on 2015-04-01 00:00:00 (12)", False, {}) == "peak on 1 Apr 2015 (12)"
    assert as_people_write("最高在 2015-04-01T00:00:00", True, {}) == "最高在 2015年4月1日"
    assert as_people_write("highest at 2015-04-01 00:00:00: 999", False, {}) == "highest at 1 Apr 2015: 999"
    assert as_people_write("at 2015-04-01 13:30:00", False, {}) == "at 2015-04-01 13:30:00"  # a real time stays
    assert as_people_write("from 2009-10 to 2010-02", False, {}) == "from Oct 2009 to Feb 2010"
    assert as_people_write("code 12-2009-10-7 and 2009-13", False, {}) == "code 12-2009-10-7 and 2009-13"


def test_a_column_s_words_are_not_given_to_another_yes_no_column():
    words = {"Late": {"true": "Y", "false": "N"}, "是否退货": {"true": "是", "false": "否"}}
    assert as_people_write("Late = True", False, words, {"Late"}) == "Late = Y"
    assert as_people_write("Late = True", False, words) == "Late = True"  # two spellings: unsure which


def class_table(tmp_path):
    names = ["张三", "李四", "王五", "赵六", "孙七", "周八", "吴九", "郑十"]
    scores = [95, 94, 93, 92, 91, 96, 20, 10]
    frame = pd.DataFrame({"姓名": [*names, "平均分"], "语文": [*scores, float(np.mean(scores))]})
    path = tmp_path / "class.csv"
    frame.to_csv(path, index=False)
    return path, pd.Series(scores, dtype="float64")


def test_a_row_of_averages_is_excluded_at_ingest_and_the_log_says_so(tmp_path):
    from app.web.i18n import cleaning_text

    path, scores = class_table(tmp_path)
    table = load_table(path)
    assert list(table.frame["姓名"]) == ["张三", "李四", "王五", "赵六", "孙七", "周八", "吴九", "郑十"]
    (entry,) = [e for e in table.info["cleaning"] if e["action"] == "excluded a row of averages"]
    assert entry["count"] == 1
    assert "平均" in cleaning_text(entry["action"], "zh")
    assert any("平均分" in w for w in table.info["warnings"])


def test_a_row_of_averages_is_not_counted_as_a_student(tmp_path):
    path, scores = class_table(tmp_path)
    run, _ = Session(tmp_path, path).ask("语文成绩最低的三名学生是谁？", answers=["继续"])
    text = headline(run)
    # the three lowest of the 8 students; with the averages row as a 9th, its 82.62 would be third
    lowest = scores.nsmallest(3)
    assert all(fmt_num(v) in text for v in lowest) and f"共 {len(scores)} 行" in text, text
    assert fmt_num(float(np.mean(scores))) not in text


def test_a_rating_called_average_is_data(tmp_path):
    """A category holding "Average" several times, or once near the end on a row whose numbers are
    not the others' averages, is data."""
    path = tmp_path / "ratings.csv"
    pd.DataFrame({"Rating": ["Good", "Average", "Poor", "Average", "Good"], "Score": [5, 3, 1, 3, 4]}).to_csv(
        path, index=False
    )
    assert len(load_table(path).frame) == 5
    pd.DataFrame({"Rating": ["Good", "Poor", "Good", "Average", "Good"], "Score": [5, 1, 4, 9, 4]}).to_csv(
        path, index=False
    )
    assert len(load_table(path).frame) == 5


def test_a_row_of_averages_rounded_to_one_decimal_is_excluded(tmp_path):
    path = tmp_path / "scores.csv"
    scores = [81, 77, 90, 62, 70]
    pd.DataFrame(
        {"Name": ["Ann", "Bo", "Cy", "Di", "Ed", "Average:"], "Score": [*scores, round(np.mean(scores), 1)]}
    ).to_csv(path, index=False)
    assert list(load_table(path).frame["Name"]) == ["Ann", "Bo", "Cy", "Di", "Ed"]


def test_a_column_whose_last_rows_say_no_average_is_not_searched_whole(tmp_path, monkeypatch):
    """The one row of averages closes the table, so the label columns' last rows are asked first:
    a million-row column is searched only when one of them reads like an average."""
    from app.ingest import extract

    searched: list[int] = []
    real = extract.regex_hits

    def counted(texts, pattern):
        if pattern == "(?i)" + extract.AVERAGE_PATTERN:
            searched.append(len(texts))
        return real(texts, pattern)

    monkeypatch.setattr(extract, "regex_hits", counted)
    names = [f"name {i}" for i in range(3_000)]
    names[10] = "Average"  # once, but among the data: a name, not a row of averages
    path = tmp_path / "long.csv"
    pd.DataFrame({"Name": names, "Score": range(3_000)}).to_csv(path, index=False)
    assert len(load_table(path).frame) == 3_000
    assert searched and max(searched) <= extract.TAIL_ROWS + 1


def test_the_busiest_day_is_named_as_a_day_and_y_n_as_the_sheet_writes_them(tmp_path):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "Date": pd.date_range("2015-03-01", periods=40, freq="D"),
            "Visitors": rng.integers(100, 500, 40),
            "Open": rng.choice(["Y", "N"], 40),
        }
    )
    frame.loc[31, "Visitors"] = 999
    path = tmp_path / "daily.xlsx"
    frame.to_excel(path, index=False)
    session = Session(tmp_path, path)
    run, _ = session.ask("Which day had the most visitors?")
    busiest = frame.loc[frame["Visitors"].idxmax(), "Date"]
    day = f"{busiest.day} {busiest:%b %Y}"  # as people write a day: "1 Apr 2015"
    assert f"{day}: 999" in headline(run) and "00:00" not in headline(run), headline(run)
    run, _ = session.ask("Do days with Open = Y have more visitors than the others?", answers=["Go ahead"])
    assert "Open = Y" in headline(run) and not BOOLEAN_WORDS.search(headline(run)), headline(run)


def test_a_version_made_from_the_table_keeps_the_yes_no_words(tmp_path):
    from app.db.models import Dataset
    from app.workspaces import add_version, readable_frame

    path, _ = orders(tmp_path, "是", "否", english=False)
    session = Session(tmp_path, path)
    (dataset,) = session.datasets()
    with session.db.session() as s:
        source = s.get(Dataset, dataset.id)
        frame = readable_frame(source, session.settings)
        made = add_version(s, session.settings, source, frame[frame["销售额"] > 300], "filter_rows", new_name="big")
        column = next(c for c in made.info["columns"] if c["name"] == "是否退货")
    assert column["words"] == {"true": "是", "false": "否"}


@pytest.mark.parametrize(
    "labels, in_order",
    [
        (["2024-06", "2024-01", "2023-12"], ["2023-12", "2024-01", "2024-06"]),  # as the tools write months
        (["2024-Q2", "2024-Q1"], ["2024-Q1", "2024-Q2"]),
        (["2024-W10", "2024-W02"], ["2024-W02", "2024-W10"]),
        (["2024-03-05", "2024-02-12"], ["2024-02-12", "2024-03-05"]),
        (["2024-03-05 00:00:00", "2024-02-12 00:00:00"], ["2024-02-12 00:00:00", "2024-03-05 00:00:00"]),
        (["2024", "2023"], ["2023", "2024"]),
        (["2024-01", "2024"], None),  # months beside a year: no one kind of period
        (["东门", "2024-01"], None),
        (["1002", "1001"], None),  # four-digit codes are not years
        (["2024-13", "2024-01"], None),  # no 13th month
    ],
)
def test_calendar_periods_are_put_in_time_order_and_nothing_else_is(labels, in_order):
    from app.analyst import in_time_order

    assert in_time_order(labels) == in_order


@pytest.mark.parametrize(
    "behind, in_order",
    [
        (
            {"2024年6月": "2024-06", "2024年1月": "2024-01", "2023年12月": "2023-12"},
            ["2023年12月", "2024年1月", "2024年6月"],
        ),
        ({"Jun 2024": "2024-06", "Jan 2024": "2024-01", "Dec 2023": "2023-12"}, ["Dec 2023", "Jan 2024", "Jun 2024"]),
        ({"2024年第2季度": "2024-04-01", "2024年第1季度": "2024-01-01"}, ["2024年第1季度", "2024年第2季度"]),
        ({"5 Mar 2024": "2024-03-05 00:00:00", "12 Feb 2024": "2024-02-12 00:00:00"}, ["12 Feb 2024", "5 Mar 2024"]),
        ({"东门": "东门", "2024年1月": "2024-01"}, None),
    ],
)
def test_periods_shown_as_people_write_them_are_ordered_by_the_tools_labels_behind_them(behind, in_order):
    """The shown words are never read back: "Jun 2024" comes after "Jan 2024" because its row is the
    tool's "2024-06"; without the tool's labels, the shown words name no period."""
    from app.analyst import in_time_order

    assert in_time_order(list(behind), behind) == in_order
    assert in_time_order(list(behind)) is None
