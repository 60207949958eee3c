"""The answer card's evidence (issue 28 point 1): the result that answers the question as a small table
(the group means, the totals, the top N, the forecast per period), the chart drawn from it, and "how
sure" in one line.

Nothing is computed here: the rows are the numbers the answering analysis recorded with its evidence
(its metrics, `stat.row` keys such as `mean.East` or `forecast.2025-01`, and `rank.1.label`), so the
table and the chart show exactly what the headline and the report cite. The evidence that answers is
the one whose claim the answer's headline states; the other evidence (a histogram's, a correlation's)
stays in Steps and Evidence, so only a chart that serves the question is drawn by default.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from app.analyst import in_time_order
from app.reports.answer_evidence import answer_evidence, answer_figures, last_result
from app.reports.report_parts import TOOLS_ROW_LABELS
from app.understanding import in_spoken_names
from app.web.i18n import t

# The per-row numbers an analysis records as `stat.row` and that a reader compares across rows, in the
# order they are shown: the measure first (it is the one charted), then what qualifies it.
GROUP_STATS = ("share", "mean", "median", "n")
PERIOD_STATS = ("forecast", "lower", "upper")
HISTORY_STAT = "actual"  # a forecast's known periods: charted before it, not rows of its table
# group_aggregate names its columns `<value>_<agg>` ("Revenue_sum.East").
AGGREGATED = re.compile(r"^(?P<value>.+)_(?P<agg>sum|mean|median|count|min|max|nunique|std)$")
RANKED = re.compile(r"^rank\.(?P<k>\d+)\.(?P<part>label|value|share)$")
# The arguments that name the column whose values are the rows (compare_groups, group_aggregate,
# plot_bar, plot_pie, rank tools, forecast).
ROW_ARGUMENTS = ("group_column", "group_columns", "x_column", "date_column", "label_column", "by")
MAX_ROWS = 60  # a result longer than this is not "a small table": the report keeps it whole


def answer_result(
    evidence: Sequence[Mapping[str, Any]],
    answer: str | None,
    calls: Mapping[str, Mapping[str, Any]],
    steps: Sequence[Mapping[str, Any]],
    lang: str,
    checks: Mapping[str, str] | None = None,
    reading: Mapping[str, Any] | None = None,
    spoken: Mapping[str, str] | None = None,
) -> dict[str, Any] | None:
    """What the answer card shows under the headline, or None when no evidence answers it.

    `calls` maps a tool-call id to {"tool", "arguments"}; `steps` are the run panel's steps (their
    figures by call id); `spoken` each column's full name → what people call it (understanding.
    tables_spoken_names): the table's headers and the chart's caption name a merged header's column by
    its leaf, as the answer above them does."""
    stated = answer_evidence(answer or "", evidence)
    # an answer that states none of the recorded claims (a model's own words and numbers): the last
    # result the run recorded is shown as what it is, never as "the chart that answers"
    item = stated[0] if stated else last_recorded(evidence, steps)
    if item is None:
        return None
    call_ids = [str(c) for c in item.get("tool_call_ids") or []]
    arguments = next((calls[c].get("arguments") or {} for c in call_ids if c in calls), {})
    table = result_table(item.get("metrics") or {}, row_header(arguments, lang), lang, item.get(TOOLS_ROW_LABELS))
    if table is not None:
        table = top_rows(table, asked_n(reading), str(item.get("claim") or ""))
    # the Steps' figures, each with the call that drew it: the chart that answers is chosen as the report's
    drawn = [{**f, "tool_call_id": str(s.get("id"))} for s in steps for f in s.get("figures") or []]
    figures = answer_figures(drawn, [item], evidence, calls)
    said = dict(spoken or {})
    if table is not None:
        table = {**table, "columns": [{**c, "label": in_spoken_names(str(c["label"]), said)} for c in table["columns"]]}
    figure = figures[0] if figures and table is None else None
    if figure is not None:
        figure = {**figure, "caption": in_spoken_names(str(figure.get("caption") or ""), said)}
    return {
        "evidence_id": item.get("id"),
        "answers": bool(stated),
        "label": "" if stated else t("result_last_recorded", lang, claim=str(item.get("claim") or "").strip()),
        "table": table,
        # no table to draw from: the answering analysis's own chart (a trend line) is shown instead
        "figure": figure,
        "how_sure": how_sure(item, lang, (checks or {}).get(str(item.get("id")))),
        "method": item.get("method") or "",
        "metrics": [(str(key), raw_text(value)) for key, value in (item.get("metrics") or {}).items()],
        "limitations": list(item.get("limitations") or []),
    }


def answering_evidence(evidence: Sequence[Mapping[str, Any]], answer: str) -> Mapping[str, Any] | None:
    """The evidence the answer leads with (app/reports/answer_evidence.py: the report's first pages make
    the same choice); when the answer states none, the last evidence with a result table."""
    stated = answer_evidence(answer, evidence)
    return stated[0] if stated else last_recorded(evidence, [])


def last_recorded(
    evidence: Sequence[Mapping[str, Any]], steps: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The last evidence the run recorded that has a result to show (answer_evidence.last_result, the
    report's choice too): a table of rows, or a chart drawn by a call it cites."""
    return last_result(
        evidence,
        lambda item: result_table(item.get("metrics") or {}, "", "en") is not None,
        {str(s.get("id")) for s in steps if s.get("figures")},
    )


def row_header(arguments: Mapping[str, Any], lang: str) -> str:
    """The name of the column whose values are the rows (門店, Region, Date), else a plain word."""
    for name in ROW_ARGUMENTS:
        value = arguments.get(name)
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        if isinstance(value, str) and value:
            return value
    return t("result_row", lang)


def result_table(
    metrics: Mapping[str, Any], header: str, lang: str, tools_labels: Mapping[str, str] | None = None
) -> dict[str, Any] | None:
    """The rows the metrics record, as {"columns", "rows", "kind", "chart"}; None when they hold fewer
    than two rows (a single number is the headline, not a table). `tools_labels`: each row as shown →
    the tool's own label (report_parts.tools_row_labels), what calendar periods are put in time order by."""
    ranked = _ranked(metrics)
    if ranked is not None:
        stats, rows, kind = ranked
    else:
        stats, rows, kind = _families(metrics, tools_labels)
    if len(rows) < 2:
        return None
    rows = rows[:MAX_ROWS]
    columns = [{"key": "row", "label": header or t("result_row", lang), "numeric": False}] + [
        {"key": key, "label": _stat_label(key, lang), "numeric": True, "percent": key.endswith("share")}
        for key in stats
    ]
    body = [[label, *(values.get(key) for key in stats)] for label, values in rows]
    chart: dict[str, Any] = {
        # the sensible kinds: periods read as a line first; groups as bars (a line between unordered
        # groups would suggest an order they do not have)
        "kinds": ["line", "bar", "table"] if kind == "period" else ["bar", "table"],
        "value": 1,
    }
    if {"lower", "upper"} <= set(stats):
        chart["band"] = [stats.index("lower") + 1, stats.index("upper") + 1]
    if kind == "period" and (history := known_periods(metrics, {label for label, _ in rows})):
        # a forecast is drawn after the history it continues (the table stays the forecast per period)
        chart["history"] = history
        chart["legend"] = {"actual": t("chart_actual", lang), "forecast": t("chart_forecast", lang)}
    return {
        "columns": columns,
        "rows": body,
        "shown": [[_shown(value, bool(column.get("percent"))) for value, column in zip(row, columns)] for row in body],
        "kind": kind,
        "chart": chart,
    }


def known_periods(metrics: Mapping[str, Any], forecast: set[str]) -> list[list[Any]]:
    """The known values a forecast continues (`actual.<period>`, recorded by the forecast tool), in their
    recorded order, as [period, value] rows: none of the forecast's own periods."""
    rows: list[list[Any]] = []
    for key, value in metrics.items():
        stat, dot, label = str(key).partition(".")
        if stat == HISTORY_STAT and dot and label not in forecast and (number := _number(value)) is not None:
            rows.append([label, number])
    return rows[-MAX_ROWS:]


def asked_n(reading: Mapping[str, Any] | None) -> int | None:
    """The N of a "top N" reading (its `n` role), else None."""
    for role in (reading or {}).get("roles") or []:
        if role.get("role") == "n" and str(role.get("value", "")).isdigit():
            return int(role["value"])
    return None


def top_rows(table: dict[str, Any], n: int | None, claim: str) -> dict[str, Any]:
    """A top-N answer's table keeps the N rows its claim names (the analysis recorded every group; the
    question asked for N of them); any other table, or a claim that does not name exactly N, is kept whole."""
    if n is None or n < 2 or n >= len(table["rows"]):
        return table
    keep = [i for i, row in enumerate(table["rows"]) if str(row[0]) in claim]
    if len(keep) != n:
        return table
    return {**table, "rows": [table["rows"][i] for i in keep], "shown": [table["shown"][i] for i in keep]}


def _ranked(metrics: Mapping[str, Any]) -> tuple[list[str], list[tuple[str, dict[str, float]]], str] | None:
    found: dict[int, dict[str, Any]] = {}
    for key, value in metrics.items():
        if match := RANKED.match(str(key)):
            found.setdefault(int(match["k"]), {})[match["part"]] = value
    if not found:
        return None
    rows: list[tuple[str, dict[str, float]]] = []
    for _, parts in sorted(found.items()):
        numbers = {s: _number(parts.get(s)) for s in ("value", "share")}
        if "label" in parts:
            rows.append((str(parts["label"]), {s: v for s, v in numbers.items() if v is not None}))
    stats = [s for s in ("value", "share") if any(s in values for _, values in rows)]
    return stats, rows, "group"


def _families(
    metrics: Mapping[str, Any], tools_labels: Mapping[str, str] | None
) -> tuple[list[str], list[tuple[str, dict[str, float]]], str]:
    """The `stat.row` metrics of the known per-row stats: one row per label, in the order recorded."""
    columns: dict[str, dict[str, float]] = {}
    for key, value in metrics.items():
        stat, dot, label = str(key).partition(".")
        number = _number(value)
        if not dot or not label or number is None or label == "total":
            continue
        if stat in GROUP_STATS or stat in PERIOD_STATS or AGGREGATED.match(stat):
            columns.setdefault(stat, {})[label] = number
    if not columns:
        return [], [], "group"
    period = "forecast" in columns
    order = PERIOD_STATS if period else GROUP_STATS
    aggregated = [s for s in columns if AGGREGATED.match(s)]
    stats = [s for s in order if s in columns and (not period or s in PERIOD_STATS)]
    stats = (aggregated + stats) if not period else stats
    if not period and "share" in stats and aggregated:
        stats.remove("share")
    main = columns[stats[0]] if stats else {}
    rows = [(label, {s: columns[s][label] for s in stats if label in columns[s]}) for label in main]
    # calendar periods (a total per month) in time order, whatever order the tool recorded them in
    # (group_aggregate's: the largest first); a forecast's periods keep theirs
    timed = None if period else in_time_order((label for label, _ in rows), tools_labels)
    if timed is not None:
        place = {label: n for n, label in enumerate(timed)}
        rows.sort(key=lambda row: place[row[0]])
    elif not period:  # groups from the largest down, as the headline lists them
        rows.sort(key=lambda row: -row[1].get(stats[0], -math.inf))
    return stats, rows, "period" if period or timed is not None else "group"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _shown(value: Any, percent: bool) -> str:
    """A cell as the headline writes its numbers: whole units with thousands separators from 100 up,
    shares as percentages, never in scientific notation."""
    if isinstance(value, str):
        return value
    if value is None:
        return "—"
    if percent:
        return f"{value * 100:.1f}%"
    if float(value).is_integer() or abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:,.2f}"
    return f"{value:.3g}"


def raw_text(value: Any) -> str:
    """A recorded number in full (the raw numbers are for checking: no rounding to 4 digits)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "" if value is None else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    if value == 0 or 1e-4 <= abs(value) < 1e15:
        return f"{value:,.6f}".rstrip("0").rstrip(".")
    return f"{value:.4e}"


def _stat_label(stat: str, lang: str) -> str:
    if match := AGGREGATED.match(stat):
        return t("result_aggregated", lang, value=match["value"], agg=t("result_agg_" + match["agg"], lang))
    return t("result_stat_" + stat, lang)


def how_sure(item: Mapping[str, Any], lang: str, check: str | None) -> str:
    """One line: the confidence the evidence was recorded with, on how many rows, and whether its numbers
    were checked against the analysis."""
    parts = [t("confidence_" + str(item.get("confidence") or "medium"), lang)]
    n = item.get("sample_size")
    if isinstance(n, int) and not isinstance(n, bool):
        parts.append(t("result_rows", lang, n=f"{n:,}"))
    if check in ("passed", "failed", "partly_verified"):
        parts.append(t("check_" + check, lang))
    return t("result_how_sure", lang, what=" · ".join(parts))
