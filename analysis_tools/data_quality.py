"""Data-quality tools (group `data`): `clean_data` makes a tidied copy of a table and logs every
change with its count; `detect_data_quality` lists what is wrong with a table, each problem with a
severity and a plain-language sentence.

Also the helpers the other data tools share: column checks for arguments the registry cannot check
(column names inside lists and objects) and the result of a step that makes a new dataset version.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from app.ingest.duplicates import duplicate_rows

from .base import ToolContext, ToolError, ToolResult, tagged_text
from .common import clean_metrics, column_kind, frame_text, is_identifier_name
from .parsing import parse_numbers
from .registry import suggest

# Spreadsheet ways of writing "no value". Words such as 无 or 未知 are left alone: they are often a
# real answer ("discount: none"), so only the user can declare them missing (missing_markers).
MISSING_MARKERS = (
    "",
    "na",
    "n/a",
    "n.a.",
    "nan",
    "null",
    "none",
    "nil",
    "-",
    "--",
    "---",
    "—",
    "–",
    "#n/a",
    "#null!",
    "#value!",
    "#div/0!",
    "缺失",
    "空值",
)
_NONNEGATIVE_NAME = re.compile(
    r"(quantity|qty|amount|price|cost|revenue|sales|count|age|units|weight|数量|金额|价格|单价|成本|收入|"
    r"销售额|销量|年龄|件数|重量|人数)",
    re.I,
)
_PREVIEW_ROWS = 5


# ---------------------------------------------------------------- shared helpers


def require_columns(data: pd.DataFrame, columns: list[str], ctx: ToolContext, argument: str) -> None:
    """column_not_found with did_you_mean for names the registry does not check (lists, objects)."""
    available = [str(c) for c in data.columns]
    for column in columns:
        if str(column) not in available:
            raise ToolError(
                "column_not_found",
                ctx.t(f"Column {column!r} (in {argument}) does not exist.", f"列 {column!r}（{argument} 中）不存在。"),
                hint=ctx.t("Retry with one of the available columns.", "请改用现有的列。"),
                column=column,
                did_you_mean=suggest(str(column), available),
                available=available[:60],
            )


def require_rows(data: pd.DataFrame, ctx: ToolContext) -> None:
    if data.shape[0] == 0 or data.shape[1] == 0:
        raise ToolError(
            "insufficient_data",
            ctx.t("The dataset is empty (no rows or no columns).", "数据集为空（没有行或列）。"),
            hint=ctx.t("Load a file with data, or undo the last filter.", "请加载有数据的文件，或撤销上一步筛选。"),
        )


def step_result(
    ctx: ToolContext,
    table: pd.DataFrame,
    step: str,
    *,
    metrics: dict,
    profile: str | list[str],
    method: str,
    insights: list[str],
    interpretation: str,
    limitations: list[str] | None = None,
    extra: dict[str, Any] | None = None,
    dataset_name: str | None = None,
    preview: bool = True,
) -> ToolResult:
    """A data step: the new table, the one-line step the harness logs, and what the model reads
    (`preview`: its first rows, unless the profile already prints the table)."""
    shown = frame_text(table, _PREVIEW_ROWS, index=True) if preview else ""
    payload = {"step": step, **(extra or {})}
    name = dataset_name or ctx.dataset_name
    if name:
        payload["dataset_name"] = name
    text = tagged_text(
        data_profile=profile,
        method=method,
        insights=insights,
        conclusion=step,
        preview=shown,
        interpretation=interpretation,
    )
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=int(len(table)),
        table=table,
        limitations=limitations or [],
        payload=payload,
    )


def text_mask(series: pd.Series) -> pd.Series | None:
    """Which cells hold text (None when the column cannot hold text: numbers, dates, booleans)."""
    if pd.api.types.is_string_dtype(series.dtype) and not isinstance(series.dtype, pd.CategoricalDtype):
        return series.notna() if series.dtype != object else series.map(lambda v: isinstance(v, str))
    if series.dtype == object:
        return series.map(lambda v: isinstance(v, str))
    return None


# ---------------------------------------------------------------- clean_data


def clean_data(
    data: pd.DataFrame,
    trim_whitespace: bool = True,
    drop_duplicates: bool = True,
    drop_missing_in: list[str] | None = None,
    missing_markers: list[str] | None = None,
    ignore_columns: list[str] | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Tidy a table into a new version: trim spaces, read missing markers (NA, -, null …) as missing, drop empty rows/columns and exact duplicate rows; every change is logged with its count.

    Args:
        trim_whitespace: Remove leading/trailing spaces in text cells (" East " becomes "East").
        drop_duplicates: Drop rows that are exact copies of an earlier row (the count is reported).
        drop_missing_in: Column names; rows missing a value in any of them are dropped.
        missing_markers: Extra cell values to read as missing (e.g. ["未知", "999"]), on top of NA, N/A, null, -, #N/A.
        ignore_columns: Columns left out when rows are compared for duplicates (e.g. a row number like ["rownames"]).
    """
    ctx = ctx or ToolContext()
    require_rows(data, ctx)
    drop_missing_in = list(dict.fromkeys(drop_missing_in or []))
    require_columns(data, drop_missing_in, ctx, "drop_missing_in")
    markers = {m.strip().lower() for m in MISSING_MARKERS + tuple(str(m) for m in (missing_markers or []))}
    n_before, cols_before = len(data), data.shape[1]
    log: list[dict] = []
    columns = {}
    for name in data.columns:
        columns[name] = _clean_column(data[name], str(name), trim_whitespace, markers, log)
    out = pd.DataFrame(columns, index=data.index)
    empty_cols = [c for c in out.columns if out[c].isna().all() and c not in drop_missing_in]
    if empty_cols and len(empty_cols) < out.shape[1]:
        out = out.drop(columns=empty_cols)
        log.append(
            {"action": "dropped empty columns", "column": ", ".join(map(str, empty_cols)), "count": len(empty_cols)}
        )
    empty_rows = out.isna().all(axis=1)
    if empty_rows.any():
        out = out[~empty_rows]
        log.append({"action": "dropped empty rows", "column": None, "count": int(empty_rows.sum())})
    duplicate_examples: list[int] = []
    ignored = [c for c in dict.fromkeys(ignore_columns or []) if c in out.columns]
    require_columns(data, list(dict.fromkeys(ignore_columns or [])), ctx, "ignore_columns")
    if drop_duplicates:
        compared = [c for c in out.columns if c not in ignored]
        dup = out.duplicated(subset=compared or None)
        if dup.any():
            duplicate_examples = [int(i) + 1 for i in np.flatnonzero(dup.to_numpy())[:5]]
            out = out[~dup]
            log.append({"action": "dropped exact duplicate rows", "column": None, "count": int(dup.sum())})
    if drop_missing_in:
        miss = out[drop_missing_in].isna().any(axis=1)
        if miss.any():
            out = out[~miss]
            log.append(
                {
                    "action": "dropped rows with missing values",
                    "column": ", ".join(drop_missing_in),
                    "count": int(miss.sum()),
                }
            )
    if len(out) == 0:
        raise ToolError(
            "no_rows_left",
            ctx.t("Cleaning would remove every row.", "清洗会删除所有行。"),
            hint=ctx.t("Drop missing values in fewer columns.", "请减少 drop_missing_in 中的列。"),
            log=log,
        )
    out = out.reset_index(drop=True)
    return _clean_result(ctx, out, log, n_before, cols_before, duplicate_examples)


def _clean_column(series: pd.Series, name: str, trim: bool, markers: set[str], log: list[dict]) -> pd.Series:
    mask = text_mask(series)
    if mask is None or not mask.any():
        return series
    texts = series[mask].astype(str)
    if trim:
        stripped = texts.str.strip()
        changed = int((stripped != texts).sum())
        if changed:
            log.append({"action": "trimmed whitespace", "column": name, "count": changed})
        texts = stripped
    is_marker = texts.str.lower().isin(markers)
    if is_marker.any():
        for marker, count in texts[is_marker].value_counts().items():
            action = "read blank cells as missing" if marker == "" else f"read '{marker}' as missing"
            log.append({"action": action, "column": name, "count": int(count)})
    if not trim and not is_marker.any():
        return series
    out = series.copy()
    out[mask] = texts.where(~is_marker, None)
    return out


def _clean_result(
    ctx: ToolContext, out: pd.DataFrame, log: list[dict], n_before: int, cols_before: int, duplicate_examples: list[int]
) -> ToolResult:
    def total(prefix: str) -> int:
        return sum(e["count"] for e in log if e["action"].startswith(prefix))

    metrics = {
        "n_rows_before": n_before,
        "n_rows_after": len(out),
        "n_rows_removed": n_before - len(out),
        "n_columns_before": cols_before,
        "n_columns_after": out.shape[1],
        "n_changes": len(log),
        "duplicate_rows_removed": total("dropped exact duplicate"),
        "cells_trimmed": total("trimmed"),
        "cells_set_missing": total("read "),
        "empty_rows_removed": total("dropped empty rows"),
        "rows_removed_missing": total("dropped rows with missing"),
    }
    lines = [f"{e['action']}" + (f" [{e['column']}]" if e["column"] else "") + f": {e['count']:,}" for e in log]
    if not lines:
        lines = [ctx.t("Nothing needed cleaning.", "没有需要清洗的内容。")]
    insights = []
    if metrics["duplicate_rows_removed"]:
        insights.append(
            ctx.t(
                f"{metrics['duplicate_rows_removed']:,} exact duplicate rows were removed (first at row(s) {duplicate_examples}); "
                "if they are real repeat orders, re-run with drop_duplicates=false.",
                f"删除了 {metrics['duplicate_rows_removed']:,} 行完全重复的数据（如第 {duplicate_examples} 行）；"
                "如果它们是真实的重复订单，请用 drop_duplicates=false 重新运行。",
            )
        )
    if metrics["cells_set_missing"]:
        insights.append(
            ctx.t(
                f"{metrics['cells_set_missing']:,} cells such as 'N/A' or '-' now count as missing.",
                f"{metrics['cells_set_missing']:,} 个类似“N/A”“-”的单元格现在按缺失处理。",
            )
        )
    step = (
        f"clean_data: {len(log)} change(s) ({n_before:,} → {len(out):,} rows, {cols_before} → {out.shape[1]} columns)"
    )
    interpretation = ctx.t(
        f"The cleaned table has {len(out):,} rows ({n_before - len(out):,} removed) and {out.shape[1]} columns; "
        f"{len(log)} kind(s) of change were made, each listed with its count.",
        f"清洗后的表有 {len(out):,} 行（删除 {n_before - len(out):,} 行）、{out.shape[1]} 列；共做了 {len(log)} 类修改，均列出了数量。",
    )
    method = ctx.t(
        "Trim spaces, read missing markers as missing, drop empty rows/columns, drop exact duplicates.",
        "去除首尾空格、把缺失标记识别为缺失、删除空行/空列和完全重复的行。",
    )
    return step_result(
        ctx,
        out,
        step,
        metrics=metrics,
        profile=lines,
        method=method,
        insights=insights,
        interpretation=interpretation,
        extra={"log": log},
        limitations=[
            ctx.t(
                "Exact duplicates only; near-duplicates (typos) are kept.",
                "只删除完全相同的行；近似重复（如拼写差异）保留。",
            )
        ],
    )


# ---------------------------------------------------------------- detect_data_quality


def detect_data_quality(
    data: pd.DataFrame,
    id_columns: list[str] | None = None,
    reference_date: str | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Check a table for problems before analysis: missing values, duplicate rows, duplicate IDs, constant columns, mixed types, extreme outliers and impossible values (negative quantities, future dates), each with a severity.

    Args:
        id_columns: Columns that should identify rows uniquely (order number, customer ID); columns named like IDs are checked anyway.
        reference_date: Dates after this day count as future dates (YYYY-MM-DD); defaults to today.
    """
    ctx = ctx or ToolContext()
    require_rows(data, ctx)
    try:
        today = pd.Timestamp(reference_date) if reference_date else pd.Timestamp.now().normalize()
    except (ValueError, TypeError):
        raise ToolError(
            "invalid_arguments",
            ctx.t(f"reference_date {reference_date!r} is not a date.", f"reference_date {reference_date!r} 不是日期。"),
            hint="YYYY-MM-DD",
        ) from None
    n = len(data)
    issues: list[dict] = []
    rows = []
    ids = set(id_columns or [])
    for name in data.columns:
        series = data[name]
        kind = column_kind(series)
        missing = int(series.isna().sum())
        before = len(issues)
        _column_issues(series, str(name), kind, missing, n, str(name) in ids, today, issues, ctx)
        rows.append(
            {
                "column": str(name),
                "kind": kind,
                "missing": missing,
                "missing_share": missing / n,
                "unique": int(series.nunique(dropna=True)),
                "issues": len(issues) - before,
            }
        )
    duplicates = duplicate_rows(data)  # the profile's and the reader's count, hashed rather than compared
    if duplicates:
        issues.append(
            _issue(
                "medium",
                None,
                "duplicate_rows",
                duplicates,
                ctx.t(
                    f"{duplicates:,} rows are exact copies of another row; totals may be double-counted.",
                    f"有 {duplicates:,} 行与其他行完全相同，合计可能被重复计算。",
                ),
            )
        )
    return _quality_result(ctx, data, issues, pd.DataFrame(rows), duplicates)


def _issue(severity: str, column: str | None, code: str, count: int, message: str) -> dict:
    return {"severity": severity, "column": column, "issue": code, "count": int(count), "message": message}


def _column_issues(
    series: pd.Series,
    name: str,
    kind: str,
    missing: int,
    n: int,
    is_id: bool,
    today: pd.Timestamp,
    issues: list[dict],
    ctx: ToolContext,
) -> None:
    present = n - missing
    if present == 0:
        issues.append(_issue("high", name, "all_missing", n, ctx.t(f"{name} is entirely empty.", f"{name} 整列为空。")))
        return
    if missing:
        share = missing / n
        severity = "high" if share >= 0.5 else "medium" if share >= 0.2 else "low"
        issues.append(
            _issue(
                severity,
                name,
                "missing_values",
                missing,
                ctx.t(
                    f"{name} is missing in {missing:,} rows ({share:.1%}).",
                    f"{name} 有 {missing:,} 行缺失（{share:.1%}）。",
                ),
            )
        )
    unique = series.nunique(dropna=True)
    if unique == 1 and n > 1:
        issues.append(
            _issue(
                "low",
                name,
                "constant_column",
                present,
                ctx.t(
                    f"{name} has the same value in every row, so it cannot explain differences.",
                    f"{name} 每一行的值都相同，无法用来解释差异。",
                ),
            )
        )
    if is_id or (kind == "identifier" or is_identifier_name(name)) and kind not in ("datetime", "number"):
        dup_ids = int(series.dropna().duplicated().sum())
        if dup_ids:
            issues.append(
                _issue(
                    "high",
                    name,
                    "duplicate_ids",
                    dup_ids,
                    ctx.t(
                        f"{name} should identify rows, but {dup_ids:,} values repeat.",
                        f"{name} 应唯一标识每一行，但有 {dup_ids:,} 个值重复。",
                    ),
                )
            )
    mask = text_mask(series)
    if mask is not None and mask.any():
        _text_issues(series, name, mask, issues, ctx)
    if kind in ("number", "integer"):
        _number_issues(_numbers(series).dropna(), name, issues, ctx)
    if kind == "datetime":
        dates = (
            series
            if pd.api.types.is_datetime64_any_dtype(series.dtype)
            else pd.to_datetime(series, errors="coerce", format="mixed")
        )
        if getattr(dates.dt, "tz", None) is not None:
            dates = dates.dt.tz_localize(None)
        future = int((dates > today + pd.Timedelta(days=1)).sum())
        if future:
            issues.append(
                _issue(
                    "medium",
                    name,
                    "future_dates",
                    future,
                    ctx.t(
                        f"{name} has {future:,} dates after {today.date()}.",
                        f"{name} 有 {future:,} 个晚于 {today.date()} 的日期。",
                    ),
                )
            )


def _numbers(series: pd.Series) -> pd.Series:
    return parse_numbers(series)[0]


def _text_issues(series: pd.Series, name: str, mask: pd.Series, issues: list[dict], ctx: ToolContext) -> None:
    texts = series[mask].astype(str)
    n_other = int((series.notna() & ~mask).sum())  # numbers/dates stored next to text in one column
    numbers = _numbers(texts)
    as_number = int(numbers.notna().sum())
    if 0.5 <= (as_number + n_other) / len(series.dropna()) < 1 and (as_number or n_other):
        bad = texts[numbers.isna()]
        example = ", ".join(repr(v) for v in bad.unique()[:3])
        issues.append(
            _issue(
                "medium",
                name,
                "mixed_types",
                len(bad),
                ctx.t(
                    f"{name} is mostly numbers but {len(bad):,} values are text (e.g. {example}); convert_types can fix it.",
                    f"{name} 大多是数字，但有 {len(bad):,} 个文本值（如 {example}），可用 convert_types 处理。",
                ),
            )
        )
    elif n_other and as_number == 0:
        issues.append(
            _issue(
                "medium",
                name,
                "mixed_types",
                n_other,
                ctx.t(f"{name} mixes text with {n_other:,} non-text values.", f"{name} 混有 {n_other:,} 个非文本值。"),
            )
        )
    stripped = texts.str.strip()
    spaced = int((stripped != texts).sum())
    variants = texts.nunique() - stripped.str.lower().nunique()
    if spaced or variants > 0:
        issues.append(
            _issue(
                "low",
                name,
                "inconsistent_text",
                max(spaced, variants),
                ctx.t(
                    f"{name} has values that differ only by spaces or capitals (e.g. 'East' and 'east '); clean_data trims spaces.",
                    f"{name} 中有只差空格或大小写的取值（如“East”和“east ”）；clean_data 可去除空格。",
                ),
            )
        )


def _number_issues(values: pd.Series, name: str, issues: list[dict], ctx: ToolContext) -> None:
    if _NONNEGATIVE_NAME.search(name):
        negative = int((values < 0).sum())
        if negative:
            issues.append(
                _issue(
                    "high",
                    name,
                    "negative_values",
                    negative,
                    ctx.t(
                        f"{name} has {negative:,} negative values, which look impossible (returns or typos?).",
                        f"{name} 有 {negative:,} 个负数，看起来不合理（退货还是录入错误？）。",
                    ),
                )
            )
    if len(values) >= 10:
        q1, q3 = np.percentile(values.to_numpy(), [25, 75])
        iqr = q3 - q1
        if iqr > 0:
            extreme = int(((values < q1 - 3 * iqr) | (values > q3 + 3 * iqr)).sum())
            if extreme:
                issues.append(
                    _issue(
                        "low",
                        name,
                        "extreme_outliers",
                        extreme,
                        ctx.t(
                            f"{name} has {extreme:,} extreme values (beyond 3×IQR, max {values.max():,.4g}); check they are real.",
                            f"{name} 有 {extreme:,} 个极端值（超出 3 倍四分位距，最大 {values.max():,.4g}），请确认是否真实。",
                        ),
                    )
                )


def _quality_result(
    ctx: ToolContext, data: pd.DataFrame, issues: list[dict], table: pd.DataFrame, duplicates: int
) -> ToolResult:
    order = {"high": 0, "medium": 1, "low": 2}
    issues.sort(key=lambda i: order[i["severity"]])
    counts = {s: sum(i["severity"] == s for i in issues) for s in order}
    overall = next((s for s in order if counts[s]), "none")
    n, missing_cells = len(data), int(data.isna().sum().sum())
    metrics = {
        "n_rows": n,
        "n_columns": data.shape[1],
        "n_issues": len(issues),
        "n_high": counts["high"],
        "n_medium": counts["medium"],
        "n_low": counts["low"],
        "severity": overall,
        "duplicate_rows": duplicates,
        "missing_cells": missing_cells,
        "missing_share": missing_cells / data.size,
    }
    for issue in issues:
        key = f"{issue['issue']}" + (f".{issue['column']}" if issue["column"] else "")
        metrics[key] = issue["count"]
    lines = [f"[{i['severity']}] {i['message']}" for i in issues[:40]]
    if len(issues) > 40:
        lines.append(
            ctx.t(f"… and {len(issues) - 40} more (see the table).", f"……另有 {len(issues) - 40} 项（见表）。")
        )
    if not issues:
        interpretation = ctx.t(
            "No data-quality problems were found; the table looks ready for analysis.",
            "没有发现数据质量问题，可以直接分析。",
        )
    else:
        interpretation = ctx.t(
            f"Found {len(issues)} data problem(s) ({counts['high']} serious); the most serious: {issues[0]['message']}",
            f"发现 {len(issues)} 个数据问题（其中 {counts['high']} 个严重）；最严重的是：{issues[0]['message']}",
        )
    profile = ctx.t(
        f"{n:,} rows × {data.shape[1]} columns; {missing_cells:,} missing cells; {duplicates:,} duplicate rows.",
        f"{n:,} 行 × {data.shape[1]} 列；缺失单元格 {missing_cells:,} 个；重复行 {duplicates:,} 行。",
    )
    method = ctx.t(
        "Per-column checks: missing share, constant values, ID uniqueness, mixed types, spacing/case variants, "
        "extreme outliers (beyond 3×IQR), negative values in quantity/price/age columns, future dates.",
        "逐列检查：缺失比例、常量列、ID 唯一性、类型混杂、空格/大小写差异、极端值（超出 3 倍四分位距）、数量/价格/年龄列中的负数、未来日期。",
    )
    text = tagged_text(
        data_profile=profile,
        method=method,
        insights=lines or None,
        conclusion=ctx.t(f"Overall severity: {overall}.", f"总体严重程度：{overall}。"),
        interpretation=interpretation,
    )
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=interpretation,
        method="data quality checks",
        sample_size=n,
        table=table,
        payload={"issues": issues},
        limitations=[
            ctx.t(
                "Impossible values are judged from column names; a negative balance may be fine.",
                "“不合理值”依据列名判断；例如余额为负可能是正常的。",
            )
        ],
    )
