"""Values shown as the sheet's own people write them (issue 24): a yes/no column read as booleans at
ingest is shown in its own words (是/否, Yes/No, Y/N: the dataset's column info keeps them), a day as
people write it ("1 Apr 2015", "2015年4月1日"; never "2015-04-01 00:00:00") and a month as people name it
("Oct 2009", "2024年3月") rather than "2009-10". A table with one row a month (its grain: monthly) names
its dates by their month ("May 2024", never "2024-05-01"); a quarterly or yearly one its quarter or year."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

from analysis_tools.common import fmt_num, periods_in_time_order
from app.analyst.vocabulary import words
from app.understanding.kinds import RATE, SHARE

_TRUE = re.compile(r"(?<![A-Za-z_])True(?![A-Za-z_])")
_FALSE = re.compile(r"(?<![A-Za-z_])False(?![A-Za-z_])")
# A day as the tools write it ("2024-03-05", or a timestamp at midnight): not part of a longer code or
# number, and not a real time of day ("2024-03-05 13:30" stays as it is).
_DAY = re.compile(
    r"(?<![\d\-./])((?:19|20)\d{2})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
    r"(?:[ T]00:00(?::00(?:\.0+)?)?)?(?!\d|[-:.]\d|[ T]\d)"
)
# A month label as the time tools write it ("2024-03"): not part of a longer date or number.
_MONTH = re.compile(r"(?<![\d\-./])((?:19|20)\d{2})-(0[1-9]|1[0-2])(?![\d\-]|\.\d)")
# a quarter as the period tools label it ("2024-Q2"): people write "Q2 2024" / "2024年第2季度"
_QUARTER = re.compile(r"(?<![\w\-./])((?:19|20)\d{2})-Q([1-4])(?![\w\-])")


def sheet_words_of(columns: Iterable[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Each yes/no column's own words ("true": "是", "false": "否") from a dataset's column info."""
    return {str(c["name"]): dict(c["words"]) for c in columns if c.get("type") == "boolean" and c.get("words")}


def own_word(value: Any, words: dict[str, str] | None) -> Any:
    """A yes/no cell as the sheet writes it (True or "True" → 是 with the column's words); other values
    as they are."""
    if words and isinstance(value, bool):
        return words.get("true" if value else "false", value)
    if words and isinstance(value, str):  # a column's listed values are strings ("True", "False")
        return words.get(value.lower(), value)
    return value


def rows_in_own_words(rows: list[dict[str, Any]], columns: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Preview rows with each yes/no cell as the sheet writes it (是/否), not True/False."""
    own = sheet_words_of(columns)
    if not own:
        return rows
    return [{name: own_word(value, own.get(name)) for name, value in row.items()} for row in rows]


def used_columns(arguments: dict[str, Any]) -> set[str]:
    """The column names a step's arguments mention (single names and lists of names)."""
    names: set[str] = set()
    for value in arguments.values():
        if isinstance(value, str):
            names.add(value)
        elif isinstance(value, (list, tuple)):
            names.update(v for v in value if isinstance(v, str))
    return names


def as_people_write(
    text: str,
    zh: bool,
    words: dict[str, dict[str, str]],
    columns: set[str] | None = None,
    grain: str | None = None,
) -> str:
    """`text` with True/False in the sheet's own words and dates as people write them: a day "5 Mar 2024"
    / "2024年3月5日"; in a table whose `grain` (app.workspaces.time_grain) is monthly, quarterly or
    yearly, a date names its month, quarter or year. Booleans are replaced only when the yes/no columns
    concerned (`columns`, else all of them) write yes and no the same way, so that a word is never given
    to the wrong column."""
    concerned = [w for name, w in words.items() if columns is None or name in columns]
    kinds = {tuple(sorted(w.items())) for w in concerned}
    if len(kinds) == 1:
        own = dict(next(iter(kinds)))
        if "true" in own:
            text = _TRUE.sub(own["true"], text)
        if "false" in own:
            text = _FALSE.sub(own["false"], text)
    period = (grain or "").split(" ")[0]
    text = _DAY.sub(lambda m: _day_shown(m, zh, period), text)
    text = _QUARTER.sub(lambda m: quarter_label(int(m.group(1)), int(m.group(2)), zh), text)
    return _MONTH.sub(lambda m: month_label(int(m.group(1)), int(m.group(2)), zh), text)


def month_label(year: int, month: int, zh: bool) -> str:
    """'2024年3月' / 'Mar 2024'."""
    return f"{year}年{month}月" if zh else date(year, month, 1).strftime("%b %Y")


def quarter_label(year: int, quarter: int, zh: bool) -> str:
    """'2024年第2季度' / 'Q2 2024'."""
    return f"{year}年第{quarter}季度" if zh else f"Q{quarter} {year}"


def _day_shown(match: re.Match[str], zh: bool, period: str) -> str:
    try:
        day = date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:  # no such day ("2024-02-31"): not a date, left as written
        return match.group(0)
    return date_label(day, zh, period)


def date_label(day: date, zh: bool, period: str = "") -> str:
    """A date as people write it for its table's period: a day '5 Mar 2024' / '2024年3月5日'; in a
    monthly table its month, a quarterly one 'Q1 2024' / '2024年第1季度', a yearly one '2024' / '2024年'."""
    if period == "monthly":
        return month_label(day.year, day.month, zh)
    if period == "quarterly":
        return quarter_label(day.year, (day.month - 1) // 3 + 1, zh)
    if period == "yearly":
        return f"{day.year}年" if zh else str(day.year)
    return f"{day.year}年{day.month}月{day.day}日" if zh else f"{day.day} {day.strftime('%b')} {day.year}"


def in_time_order(labels: Iterable[str], tools_labels: Mapping[str, str] | None = None) -> list[str] | None:
    """`labels` in time order when every one names a calendar period of one kind (months, quarters …);
    None otherwise (groups have no time order: a table of them keeps its own). A label shown as people
    write it ("2024年3月") is ordered by the tool's own label behind it (`tools_labels`: "2024-03"), the
    period value the grouping had: the shown words are never read back."""
    labels = list(labels)
    behind = {label: str((tools_labels or {}).get(label, label)) for label in labels}
    timed = periods_in_time_order(behind.values())
    if timed is None or len(set(behind.values())) != len(labels):
        return None
    place = {period: n for n, period in enumerate(timed)}
    return sorted(labels, key=lambda label: place[behind[label]])


def shared_grain(datasets: Iterable[dict[str, Any]]) -> str | None:
    """The grain (monthly, daily …) the tables that have one agree on; None when they differ or none has one."""
    grains = {str(g).split(" ")[0] for d in datasets if (g := d.get("grain"))}
    return grains.pop() if len(grains) == 1 else None


def _is_number(value: str, number: float) -> bool:
    try:
        return float(value) == number
    except ValueError:
        return False


def says_yes(value: Any) -> bool:
    """Whether a value of a yes/no column is the yes: a word of yes_values (yes, true, y) or the number
    1 (1, 1.0), read as a number."""
    text = str(value).strip().lower()
    return text in words("yes_values") or _is_number(text, 1.0)


def says_no(value: Any) -> bool:
    """Whether a value of a yes/no column is the no: a word of no_values (no, false, n) or the number 0."""
    text = str(value).strip().lower()
    return text in words("no_values") or _is_number(text, 0.0)


# --- a rate kept as a fraction (退货率 0.056) is shown as people say it: 5.6% ---------------------------
# the statistics of one column's values a result reports (describe_columns: 退货率.mean …); a count, a skew or
# a test's statistic is no value of the column
_VALUE_STATISTICS = frozenset({"mean", "median", "min", "max", "q1", "q3", "std"})


def percent_columns(columns: Iterable[dict[str, Any]]) -> frozenset[str]:
    """The number columns whose name says a rate or a share (退货率, "Churn Rate", 占比) and whose values all
    lie between 0 and 1: a fraction people read as a percentage. Not a yes/no or coded column (0/1)."""
    return frozenset(
        str(c["name"])
        for c in columns
        if c.get("type") in ("number", "integer", "float")
        and not (c.get("binary") or c.get("coded"))
        and isinstance(c.get("minimum"), (int, float))
        and isinstance(c.get("maximum"), (int, float))
        and 0 <= c["minimum"] <= c["maximum"] <= 1
        and (RATE.search(str(c["name"])) or SHARE.search(str(c["name"])))
    )


def column_values(metrics: Mapping[str, Any], column: str) -> list[float]:
    """The values of `column` a result reports: its statistics (退货率.mean), its groups' averages and medians
    (mean.北京店, 退货率_mean.北京店)."""
    out = []
    for key, value in metrics.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        head, _, tail = key.partition(".")
        if (
            (head == column and tail in _VALUE_STATISTICS)
            or (tail and head in ("mean", "median"))
            or (tail and head in (f"{column}_mean", f"{column}_median"))
        ):
            out.append(float(value))
    return out


def as_percents(text: str, values: Iterable[float]) -> str:
    """`text` with each of `values`, as fmt_num writes it, as a percentage (0.056 → 5.6%); a number after
    "p =" or "r =" (a test's, a correlation's) is left as it is."""
    for value in sorted(set(values), key=lambda v: -len(fmt_num(v, 5))):
        shown = f"{fmt_num(value * 100, 3)}%"
        for written in dict.fromkeys((fmt_num(value, 5), fmt_num(value))):
            text = re.sub(rf"(?<![\d.,])(?<![=<>] ){re.escape(written)}(?![\d%])", shown, text)
    return text
