"""Data tools that change columns or rows (group `data`): `convert_types`, `filter_rows`.

Each returns a new table (the input is never changed) and a one-line `payload["step"]`.
Parsing is vectorised: values pandas reads directly are taken as they are and only the rest go
through the slower text rules (thousands separators, currency, percent, 万/亿, Chinese dates).
`derive_column` (with its safe expression grammar) is in `data_derive`.
"""

from __future__ import annotations

import re
from typing import Any, Literal, TypedDict, get_args

import numpy as np
import pandas as pd

from .base import ToolContext, ToolError, ToolResult
from .common import column_kind, label
from .data_quality import require_columns, require_rows, step_result
from .parsing import parse_booleans, parse_dates, parse_numbers
from .registry import suggest

TYPES = ("number", "integer", "datetime", "category", "text", "boolean")

# ---------------------------------------------------------------- convert_types


def convert_types(
    data: pd.DataFrame,
    column: str,
    to: Literal["number", "integer", "datetime", "category", "text", "boolean"],
    force: bool = False,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Convert a column to another type (number, integer, datetime, category, text, boolean) in a new version of the table; text numbers like "1,234", "¥56", "12%", "3.5万" and dates like "2024年1月5日" are parsed, and values that cannot be converted are counted.

    Args:
        column: The column to convert.
        to: The target type: number, integer, datetime, category, text or boolean (yes/no, 是/否, true/false, 1/0).
        force: Convert even when more than half of the values cannot be converted (they become missing).
    """
    ctx = ctx or ToolContext()
    require_rows(data, ctx)
    series = data[column]
    present = series.notna() & (series.astype("string").str.strip() != "")
    n_present = int(present.sum())
    if n_present == 0:
        raise ToolError(
            "insufficient_data",
            ctx.t(f"{column!r} has no values to convert (all missing).", f"{column!r} 全部缺失，没有可转换的值。"),
            hint=ctx.t(
                "Pick another column, or drop this one with clean_data.", "请换一列，或用 clean_data 删除这一列。"
            ),
        )
    notes: dict[str, int] = {}
    if to in ("number", "integer"):
        converted, notes = parse_numbers(series)
        if to == "integer":
            fraction = converted.notna() & (converted % 1 != 0)
            notes["not_whole"] = int(fraction.sum())
            converted = converted.where(~fraction).round().astype("Int64")
    elif to == "datetime":
        converted = parse_dates(series)
    elif to == "boolean":
        converted = parse_booleans(series)
    elif to == "category":
        converted = _as_text(series).astype("category")
    else:
        converted = _as_text(series)
    failed = present & converted.isna()
    n_failed = int(failed.sum())
    examples = [str(v) for v in pd.unique(series[failed].astype(str))[:5]]
    if n_failed == n_present or (n_failed > n_present / 2 and not force):
        raise ToolError(
            "wrong_column_type",
            ctx.t(
                f"{n_failed:,} of {n_present:,} values of {column!r} cannot be read as {to} (e.g. {examples}).",
                f"{column!r} 的 {n_present:,} 个值中有 {n_failed:,} 个无法转换为 {to}（如 {examples}）。",
            ),
            hint=ctx.t(
                "Check the target type; pass force=true to convert anyway (failures become missing).",
                "请检查目标类型；如仍要转换请设 force=true（无法转换的值会变为缺失）。",
            ),
            column=column,
            failed_examples=examples,
            current_kind=column_kind(series),
        )
    table = data.assign(**{column: converted}).reset_index(drop=True)
    return _convert_result(ctx, table, column, to, column_kind(series), n_present, n_failed, examples, notes)


def _as_text(series: pd.Series) -> pd.Series:
    if pd.api.types.is_float_dtype(series.dtype):
        values = series.map(lambda v: label(v) if v == v else None)
        return values.astype("str")
    return series.astype("str").where(series.notna(), None).astype("str")


def _convert_result(ctx, table, column, to, before, n_present, n_failed, examples, notes) -> ToolResult:
    converted = n_present - n_failed
    metrics = {
        "n": len(table),
        "n_values": n_present,
        "n_converted": converted,
        "n_failed": n_failed,
        "n_missing_after": int(table[column].isna().sum()),
        "from_kind": before,
        "to": to,
        **{f"parsed.{k}": v for k, v in notes.items() if v},
    }
    words = {
        "thousands": ("thousands separators", "千分位"),
        "currency": ("currency symbols", "货币符号"),
        "percent": ("percentages read as fractions (12% → 0.12)", "百分数按小数读取（12% → 0.12）"),
        "units": ("万/亿/k units multiplied out", "万/亿/k 等单位已换算"),
        "not_whole": ("values that are not whole numbers (left missing)", "非整数值（设为缺失）"),
    }
    profile = [
        ctx.t(
            f"{column}: {before} → {to}; {converted:,} of {n_present:,} values converted.",
            f"{column}：{before} → {to}；{n_present:,} 个值中 {converted:,} 个已转换。",
        )
    ]
    profile += [ctx.t(f"{words[k][0]}: {v:,}", f"{words[k][1]}：{v:,}") for k, v in notes.items() if v]
    insights = []
    if n_failed:
        insights.append(
            ctx.t(
                f"{n_failed:,} values could not be converted and are now missing, e.g. {examples}.",
                f"有 {n_failed:,} 个值无法转换，现为缺失，例如 {examples}。",
            )
        )
    step = f"convert_types: {column} {before} → {to} ({converted:,} converted, {n_failed:,} failed)"
    interpretation = ctx.t(
        f"{column} is now {to}: {converted:,} values converted"
        + (f", {n_failed:,} could not be read and are now missing." if n_failed else "."),
        f"{column} 已转换为 {to}：{converted:,} 个值转换成功"
        + (f"，{n_failed:,} 个无法识别，现为缺失。" if n_failed else "。"),
    )
    return step_result(
        ctx,
        table,
        step,
        metrics=metrics,
        profile=profile,
        insights=insights,
        interpretation=interpretation,
        method=ctx.t(f"Type conversion to {to}.", f"类型转换为 {to}。"),
        extra={"failed_examples": examples},
    )


# ---------------------------------------------------------------- filter_rows

Operator = Literal["==", "!=", ">", ">=", "<", "<=", "in", "not_in", "contains", "between", "is_missing", "not_missing"]
OPS: tuple[str, ...] = get_args(Operator)


class _ConditionValue(TypedDict, total=False):
    value: Any  # none for is_missing / not_missing


class Condition(_ConditionValue):
    """One filter condition: its schema names the operators (an enum), so a model need not guess them."""

    column: str
    op: Operator


_OP_ALIASES = {
    "=": "==",
    "eq": "==",
    "ne": "!=",
    "<>": "!=",
    "gt": ">",
    "ge": ">=",
    "lt": "<",
    "le": "<=",
    "not in": "not_in",
    "notin": "not_in",
    "isna": "is_missing",
    "notna": "not_missing",
}


def filter_rows(
    data: pd.DataFrame,
    conditions: list[Condition],
    match: Literal["all", "any"] = "all",
    output: str = "",
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Keep the rows that meet conditions, as a new dataset (the original stays as it is) (e.g. Region == East and Date between two days); rows where the column is missing never match except with is_missing.

    Args:
        conditions: Rows kept where these hold; value is a list for in/not_in, [low, high] for between (both included; a date end includes that whole day), none for is_missing/not_missing; contains matches text. Date columns are compared as dates ("2024-03" means the whole month).
        match: all: every condition must hold; any: at least one.
        output: Name of the new dataset (default: the dataset's name + "_filtered").
    """
    ctx = ctx or ToolContext()
    require_rows(data, ctx)
    if isinstance(conditions, dict):
        conditions = [conditions]
    if not conditions:
        raise ToolError(
            "invalid_arguments",
            ctx.t("No conditions given.", "没有给出筛选条件。"),
            hint='conditions=[{"column": "Region", "op": "==", "value": "East"}]',
        )
    masks, described, counts = [], [], []
    for cond in conditions:
        column, op, value = _read_condition(cond, data, ctx)
        mask = _condition_mask(data[column], op, value, column, ctx)
        masks.append(mask)
        counts.append(int(mask.sum()))
        described.append(f"{column} {op}" + ("" if op in ("is_missing", "not_missing") else f" {value!r}"))
    combined = np.logical_and.reduce(masks) if match == "all" else np.logical_or.reduce(masks)
    kept = int(combined.sum())
    joiner = " AND " if match == "all" else " OR "
    if kept == 0:
        raise ToolError(
            "no_rows_match",
            ctx.t(f"No rows meet {joiner.join(described)}.", f"没有满足 {joiner.join(described)} 的行。"),
            hint=ctx.t(
                "Check the values (spelling, case, date format); see did_you_mean.",
                "请检查取值（拼写、大小写、日期格式），参见 did_you_mean。",
            ),
            matches_per_condition=counts,
            did_you_mean=_value_suggestions(data, conditions),
        )
    table = data[combined].reset_index(drop=True)
    n = len(data)
    step = f"filter_rows: {joiner.join(described)} ({n:,} → {kept:,} rows)"
    metrics = {
        "n_rows_before": n,
        "n_rows_after": kept,
        "n_rows_removed": n - kept,
        "share_kept": kept / n,
        **{f"matches.{i + 1}": c for i, c in enumerate(counts)},
    }
    profile = [f"{d}: {c:,} {ctx.t('rows match', '行满足')}" for d, c in zip(described, counts)]
    interpretation = ctx.t(
        f"{kept:,} of {n:,} rows ({kept / n:.1%}) meet the condition(s); the rest were set aside.",
        f"{n:,} 行中有 {kept:,} 行（{kept / n:.1%}）满足条件，其余行已排除。",
    )
    insights = (
        []
        if kept >= 30
        else [
            ctx.t(
                "Few rows remain; results on this subset will be uncertain.",
                "剩余行数很少，基于此子集的结果不确定性较大。",
            )
        ]
    )
    return step_result(
        ctx,
        table,
        step,
        metrics=metrics,
        profile=profile,
        insights=insights,
        interpretation=interpretation,
        method=ctx.t(
            f"Row filter ({match} conditions).", f"按条件筛选行（{'全部满足' if match == 'all' else '满足任一'}）。"
        ),
        limitations=[
            ctx.t("Rows with a missing value in a filtered column are excluded.", "被筛选列缺失的行不会保留。")
        ],
        extra={"output": str(output or "").strip()},
    )


def _read_condition(cond: Any, data: pd.DataFrame, ctx: ToolContext) -> tuple[str, str, Any]:
    if not isinstance(cond, dict) or "column" not in cond:
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                f"Each condition must be an object with column, op and value; got {cond!r}.",
                f"每个条件都应是包含 column、op、value 的对象，收到 {cond!r}。",
            ),
            hint='{"column": "Region", "op": "==", "value": "East"}',
        )
    column = cond["column"]
    require_columns(data, [column], ctx, "conditions")
    op = str(cond.get("op", "==")).strip().lower()
    op = _OP_ALIASES.get(op, op)
    if op not in OPS:
        raise ToolError(
            "invalid_arguments",
            ctx.t(f"Unknown operator {cond.get('op')!r}.", f"未知的运算符 {cond.get('op')!r}。"),
            hint=f"op: {', '.join(OPS)}",
            did_you_mean=suggest(op, list(OPS)),
        )
    value = cond.get("value")
    if op in ("is_missing", "not_missing"):
        return column, op, None
    if value is None:
        raise ToolError(
            "invalid_arguments",
            ctx.t(f"Condition on {column!r} with {op} needs a value.", f"{column!r} 的 {op} 条件需要 value。"),
            hint=ctx.t("Use is_missing to find empty cells.", "查找空值请用 is_missing。"),
        )
    if op in ("in", "not_in") and not isinstance(value, list):
        value = [value]
    if op == "between" and (not isinstance(value, list) or len(value) != 2):
        raise ToolError(
            "invalid_arguments",
            ctx.t("between needs a value [low, high].", "between 需要 [下限, 上限]。"),
            hint='{"op": "between", "value": [10, 20]}',
        )
    return column, op, value


def _condition_mask(series: pd.Series, op: str, value: Any, column: str, ctx: ToolContext) -> np.ndarray:
    if op == "is_missing":
        return _missing(series).to_numpy()
    if op == "not_missing":
        return (~_missing(series)).to_numpy()
    kind = column_kind(series)
    if op == "contains":
        text = series.astype("string").str.contains(str(value), case=False, regex=False)
        return text.fillna(False).to_numpy(dtype=bool)
    if kind == "datetime":
        return _date_mask(parse_dates(series), op, value, column, ctx)
    if pd.api.types.is_bool_dtype(series.dtype):  # True / "yes" / "是" all mean True
        wanted = parse_booleans(pd.Series(_listed(value), dtype=object))
        if wanted.isna().any() or op not in ("==", "!=", "in", "not_in"):
            raise ToolError(
                "invalid_arguments",
                ctx.t(
                    f"{column!r} is yes/no; compare it with ==, !=, in to true or false.",
                    f"{column!r} 是是/否列，请用 ==、!=、in 与 true 或 false 比较。",
                ),
                hint='{"op": "==", "value": true}',
                column=column,
            )
        return _compare(series.astype("boolean"), op, wanted.tolist(), value).fillna(False).to_numpy(dtype=bool)
    if kind in ("number", "integer") or pd.api.types.is_numeric_dtype(series.dtype):
        values, _ = parse_numbers(series)
        return (
            _compare(values, op, [_as_number(v, column, ctx) for v in _listed(value)], value)
            .fillna(False)
            .to_numpy(dtype=bool)
        )
    if op in (">", ">=", "<", "<=", "between"):
        raise ToolError(
            "wrong_column_type",
            ctx.t(
                f"{column!r} holds {kind} values, which have no order for {op}.",
                f"{column!r} 是 {kind} 类型，不能用 {op} 比较大小。",
            ),
            hint=ctx.t(
                "Use ==, !=, in or contains; or convert_types to number/datetime first.",
                "请用 ==、!=、in 或 contains；或先用 convert_types 转为数值/日期。",
            ),
            column=column,
        )
    text = series.map(label, na_action="ignore").astype("string").str.strip()
    wanted = [label(v).strip() for v in _listed(value)]
    return _compare(text, op, wanted, value).fillna(False).to_numpy(dtype=bool)


def _listed(value: Any) -> list:
    return value if isinstance(value, list) else [value]


def _missing(series: pd.Series) -> pd.Series:
    blank = series.astype("string").str.strip() == ""
    return series.isna() | blank.fillna(False)


def _compare(values: pd.Series, op: str, wanted: list, raw: Any) -> pd.Series:
    present = values.notna()
    if op in ("in", "not_in"):
        hit = values.isin(wanted)
        return (hit if op == "in" else ~hit) & present
    if op == "between":
        low, high = sorted(wanted)
        return (values >= low) & (values <= high) & present
    target = wanted[0]
    result = {
        "==": values == target,
        "!=": values != target,
        ">": values > target,
        ">=": values >= target,
        "<": values < target,
        "<=": values <= target,
    }[op]
    return result & present


def _as_number(value: Any, column: str, ctx: ToolContext) -> float:
    parsed, _ = parse_numbers(pd.Series([value], dtype=object))
    if parsed.isna().iloc[0]:
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                f"{column!r} is numeric but {value!r} is not a number.", f"{column!r} 是数值列，但 {value!r} 不是数字。"
            ),
            hint=ctx.t("Pass a number as value.", "请给出数字。"),
            column=column,
        )
    return float(parsed.iloc[0])


def _date_window(value: Any, column: str, ctx: ToolContext) -> tuple[pd.Timestamp, pd.Timestamp]:
    """[start, end) of what a date value means: "2024" a year, "2024-03" a month, a date a whole day."""
    text = str(value).strip()
    parsed = parse_dates(pd.Series([text], dtype=object)).iloc[0]
    if pd.isna(parsed):
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                f"{column!r} holds dates but {value!r} is not a date.", f"{column!r} 是日期列，但 {value!r} 不是日期。"
            ),
            hint=ctx.t("Write dates as YYYY-MM-DD (or YYYY-MM, YYYY).", "日期请写成 YYYY-MM-DD（或 YYYY-MM、YYYY）。"),
            column=column,
        )
    if re.fullmatch(r"\d{4}年?", text):
        return parsed, parsed + pd.DateOffset(years=1)
    if re.fullmatch(r"\d{4}[-/.年]\d{1,2}月?", text):
        return parsed, parsed + pd.DateOffset(months=1)
    if parsed == parsed.normalize() and not re.search(r"\d:\d", text):
        return parsed, parsed + pd.Timedelta(days=1)
    return parsed, parsed


def _date_mask(dates: pd.Series, op: str, value: Any, column: str, ctx: ToolContext) -> np.ndarray:
    windows = [_date_window(v, column, ctx) for v in _listed(value)]
    present = dates.notna()
    if op in ("in", "not_in", "==", "!="):
        hit = np.logical_or.reduce([((dates >= s) & (dates < e)) | (dates == s) for s, e in windows])
        result = hit if op in ("in", "==") else ~hit
    elif op == "between":
        (s1, e1), (s2, e2) = sorted(windows)
        result = (dates >= s1) & ((dates < e2) | (dates == s2))
    else:
        start, end = windows[0]
        # "after March" means from April on; "before 2024-03-05" means up to the end of the 4th.
        result = {
            ">": dates >= end if end > start else dates > start,
            ">=": dates >= start,
            "<": dates < start,
            "<=": dates < end if end > start else dates <= start,
        }[op]
    return (result & present).to_numpy(dtype=bool)


def _value_suggestions(data: pd.DataFrame, conditions: list[Condition]) -> list[str]:
    """Close existing values for text conditions that matched nothing (typos, case)."""
    out: list[str] = []
    for cond in conditions:
        series = data[cond["column"]]
        if column_kind(series) in ("category", "text", "identifier", "boolean") and cond.get("value") is not None:
            values = [str(v) for v in series.dropna().astype(str).unique()[:5000]]
            for v in _listed(cond["value"]):
                out += [s for s in suggest(str(v), values) if s not in out]
    return out[:8]
