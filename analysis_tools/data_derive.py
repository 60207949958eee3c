"""`derive_column` (group `data`): a new column from existing ones, in a new version of the table.

Expressions are never given to eval(): they are parsed with `ast` and only a small grammar is
accepted (numbers, column names, + - * / **, unary minus, parentheses, the functions
abs/log/exp/sqrt/round, a comparison such as `Age >= 18` or `Sex == 'female'` joined by and/or, and
where(condition, then, else)), then evaluated node by node on whole columns (vectorised). A division
by zero leaves the cell empty (or 0 with zero_division="zero") and is counted, never an infinity.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import pandas as pd

from .base import ToolContext, ToolError, ToolResult
from .common import fmt_num
from .data_quality import require_columns, require_rows, step_result
from .parsing import parse_dates, parse_numbers
from .registry import suggest

_FUNCS: dict[str, Callable[..., Any]] = {
    "abs": np.abs,
    "log": np.log,
    "exp": np.exp,
    "sqrt": np.sqrt,
    "round": np.round,
}
_BINOPS = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide, ast.Pow: np.power}
_COMPARE = {
    ast.Eq: np.equal,
    ast.NotEq: np.not_equal,
    ast.Gt: np.greater,
    ast.GtE: np.greater_equal,
    ast.Lt: np.less,
    ast.LtE: np.less_equal,
}
_MAX_EXPRESSION = 500
_MAX_NODES = 200
_WEEKDAYS = {
    "en": ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"],
    "zh": ["周一", "周二", "周三", "周四", "周五", "周六", "周日"],
}
KINDS = ("ratio", "difference", "percent_change", "bin", "date_part")


def derive_column(
    data: pd.DataFrame,
    new_column_name: str,
    expression: str | None = None,
    kind: Literal["ratio", "difference", "percent_change", "bin", "date_part"] | None = None,
    columns: list[str] | None = None,
    bins: list[float] | None = None,
    n_bins: int = 4,
    labels: list[str] | None = None,
    part: Literal[
        "year", "quarter", "month", "year_month", "week", "weekday", "weekend", "day", "hour", "date"
    ] = "month",
    overwrite: bool = False,
    zero_division: Literal["missing", "zero"] = "missing",
    output: str = "",
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Add a computed column, as a new dataset (the original stays as it is), from an expression over columns (e.g. "(Revenue - Cost) / Revenue", "Age >= 18", "where(Fare > 50, 'high', 'low')") or a ready-made kind: ratio, difference, percent_change, bin or date_part.

    Args:
        new_column_name: Name of the new column.
        expression: Arithmetic over columns: + - * / ** ( ), numbers, abs() log() exp() sqrt() round(x, digits); a condition (== != > >= < <=, text in quotes, joined by and/or) gives true/false; where(condition, then, else) picks a value; column names with spaces or symbols go in backticks, e.g. `Unit Price` * Qty. Dates subtract to days.
        kind: A ready-made formula instead of expression; ratio: columns [a, b] → a / b; difference: a - b; percent_change: columns [old, new] → (new - old) / old × 100; bin: columns [x] cut into ranges; date_part: columns [date] → the part named by part.
        columns: The columns the kind uses, in the order given above.
        bins: For kind=bin: the edges, e.g. [0, 100, 500, 1000]; omit to cut into n_bins groups of equal size (quantiles).
        n_bins: For kind=bin without bins: how many equal-sized groups (2-20).
        labels: For kind=bin: names of the ranges (one fewer than the edges).
        part: For kind=date_part: year, quarter (2024-Q1), month (1-12), year_month (2024-03), week (2024-W05), weekday, weekend (weekend days or weekdays), day, hour or date.
        overwrite: Replace an existing column of the same name.
        zero_division: A division by zero leaves the cell missing (default) or gives 0; either way it is counted.
        output: Name of the new dataset (default: the dataset's name + "_derived").
    """
    ctx = ctx or ToolContext()
    require_rows(data, ctx)
    name = str(new_column_name).strip()
    if not name:
        raise ToolError(
            "invalid_arguments",
            ctx.t("The new column needs a name.", "新列需要名称。"),
            hint="new_column_name='Margin'",
        )
    if name in map(str, data.columns) and not overwrite:
        raise ToolError(
            "column_exists",
            ctx.t(f"Column {name!r} already exists.", f"列 {name!r} 已存在。"),
            hint=ctx.t("Choose another name or pass overwrite=true.", "请换一个名称，或设 overwrite=true。"),
        )
    if (expression is None) == (kind is None):
        raise ToolError(
            "invalid_arguments",
            ctx.t("Give either expression or kind (not both).", "请给出 expression 或 kind 中的一个。"),
            hint='expression="`Revenue` - `Cost`"  or  kind="ratio", columns=["Revenue", "Cost"]',
        )
    counts = {"zero_division": 0}
    if expression is not None:
        values, formula = evaluate_expression(data, expression, ctx, counts), expression.strip()
    elif kind is not None:  # exactly one of the two is given (checked above)
        values, formula = _by_kind(data, kind, list(columns or []), bins, n_bins, labels, part, ctx, counts)
    if zero_division == "zero" and counts["zero_division"]:
        values = values.where(~counts["zero_mask"], 0.0)
    table = data.assign(**{name: values}).reset_index(drop=True)
    result = _derive_result(ctx, table, name, formula, values, counts["zero_division"], zero_division)
    result.payload["output"] = str(output or "").strip()
    return result


# ---------------------------------------------------------------- the expression grammar


def evaluate_expression(
    data: pd.DataFrame, expression: str, ctx: ToolContext, counts: dict[str, Any] | None = None
) -> pd.Series:
    """Parse, check and evaluate a safe expression over the columns of `data`. `counts` receives how
    many rows divided by zero ("zero_division", and their "zero_mask")."""
    if len(expression) > _MAX_EXPRESSION:
        raise _bad(
            ctx,
            f"The expression is longer than {_MAX_EXPRESSION} characters.",
            f"表达式超过 {_MAX_EXPRESSION} 个字符。",
        )
    quoted: dict[str, str] = {}

    def hold(match: re.Match) -> str:
        quoted[f"__col{len(quoted)}__"] = match.group(1)
        return f"__col{len(quoted) - 1}__"

    source = re.sub(r"`([^`]+)`", hold, expression)
    source = re.sub(r"(?<![=!<>])=(?!=)", "==", source)  # "Sex = 'male'" as a condition
    if "`" in source:
        raise _bad(ctx, "A backtick is not closed.", "反引号没有成对。")
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError:
        raise _bad(ctx, f"Cannot read the expression {expression!r}.", f"无法解析表达式 {expression!r}。") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > _MAX_NODES:
        raise _bad(ctx, "The expression is too complex.", "表达式过于复杂。")
    for node in nodes:
        _check_node(node, ctx)
    names = [quoted.get(n.id, n.id) for n in nodes if isinstance(n, ast.Name) and not _is_func_name(n, nodes)]
    require_columns(data, names, ctx, "expression")
    if not names:
        raise _bad(ctx, "The expression uses no column.", "表达式没有引用任何列。")
    zero = pd.Series(False, index=data.index)
    with np.errstate(all="ignore"):
        result = _eval(tree.body, data, quoted, ctx, zero)
    if not isinstance(result, pd.Series):
        raise _bad(ctx, "The expression uses no column.", "表达式没有引用任何列。")
    if counts is not None:
        counts["zero_division"], counts["zero_mask"] = int(zero.sum()), zero
    if pd.api.types.is_timedelta64_dtype(result.dtype):
        result = result.dt.total_seconds() / 86400.0
    if (
        pd.api.types.is_datetime64_any_dtype(result.dtype)
        or pd.api.types.is_bool_dtype(result.dtype)
        or result.dtype == object
        or isinstance(result.dtype, pd.BooleanDtype)
    ):
        return result  # dates, a condition (true/false) or where() labels
    result = pd.to_numeric(result, errors="coerce").astype(float)
    return result.where(np.isfinite(result))


def _check_node(node: ast.AST, ctx: ToolContext) -> None:
    """Reject anything outside the grammar before a single value is computed."""
    if isinstance(node, (ast.Expression, ast.Name, ast.Load, ast.UAdd, ast.USub)) or type(node) in _BINOPS:
        return
    if type(node) in _COMPARE or isinstance(node, (ast.And, ast.Or, ast.BoolOp)):
        return
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        return
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float, str))
        and not isinstance(node.value, bool)
    ):
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        return
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return
    if isinstance(node, ast.Call):
        func = getattr(node.func, "id", None)
        if (func in _FUNCS or func == "where") and not node.keywords:
            return
        raise ToolError(
            "invalid_expression",
            ctx.t(f"Function {func or '?'!r} is not allowed.", f"不允许使用函数 {func or '?'!r}。"),
            hint="abs, log, exp, sqrt, round, where",
            did_you_mean=suggest(str(func), [*_FUNCS, "where"]),
        )
    what = type(node.op if isinstance(node, (ast.BinOp, ast.UnaryOp)) else node).__name__
    raise _bad(ctx, f"{what} is not allowed in an expression.", f"表达式中不允许使用 {what}。")


def _is_func_name(node: ast.Name, nodes: list[ast.AST]) -> bool:
    return any(isinstance(c, ast.Call) and c.func is node for c in nodes)


def _bad(ctx: ToolContext, en: str, zh: str) -> ToolError:
    return ToolError(
        "invalid_expression",
        ctx.t(en, zh),
        hint=ctx.t(
            "Allowed: column names (in `backticks` if they contain spaces), numbers, + - * / **, "
            "parentheses, abs() log() exp() sqrt() round(x, n).",
            "允许：列名（含空格时用`反引号`）、数字、+ - * / **、括号、abs() log() exp() sqrt() round(x, n)。",
        ),
    )


def _eval(node: ast.AST, data: pd.DataFrame, quoted: dict[str, str], ctx: ToolContext, zero: pd.Series) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        raise _bad(
            ctx,
            f"Text ({node.value!r}) can only be compared (==, !=) or picked by where().",
            f"文本（{node.value!r}）只能用于比较（==、!=）或 where() 的取值。",
        )
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.Name):
        return _column_values(data, quoted.get(node.id, node.id), ctx)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _eval(node.operand, data, quoted, ctx, zero)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval(node.left, data, quoted, ctx, zero), _eval(node.right, data, quoted, ctx, zero)
        if any(_is_dates(v) for v in (left, right)):
            if isinstance(node.op, ast.Sub) and _is_dates(left) and _is_dates(right):
                return (left - right).dt.total_seconds() / 86400.0
            raise _bad(
                ctx, "Dates can only be subtracted from dates (giving days).", "日期只能与日期相减（得到天数）。"
            )
        if isinstance(node.op, ast.Div):  # a zero denominator: counted, and the cell left empty (not ±inf)
            divides_by_zero = pd.Series(np.asarray(right == 0) & np.asarray(pd.notna(left)), index=data.index)
            zero |= divides_by_zero
            return _BINOPS[ast.Div](left, right).where(~divides_by_zero) if divides_by_zero.any() else left / right
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.Compare):
        return _compare(node, data, quoted, ctx, zero)
    if isinstance(node, ast.BoolOp):
        parts = [_as_condition(_eval(v, data, quoted, ctx, zero), ctx) for v in node.values]
        out = parts[0]
        for part in parts[1:]:
            out = (out & part) if isinstance(node.op, ast.And) else (out | part)
        return out
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "where":
        return _where(node, data, quoted, ctx, zero)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS and not node.keywords:
        return _call(node, node.func.id, data, quoted, ctx, zero)
    raise _bad(
        ctx, f"{type(node).__name__} is not allowed in an expression.", f"表达式中不允许使用 {type(node).__name__}。"
    )


def _operand(node: ast.AST, data: pd.DataFrame, quoted: dict[str, str], ctx: ToolContext, zero: pd.Series) -> Any:
    """A side of a comparison: text stays text (a quoted value, or a text column), the rest as _eval."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        column = quoted.get(node.id, node.id)
        series = data[column]
        if not (pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_datetime64_any_dtype(series.dtype)):
            numbers, _ = parse_numbers(series)
            if numbers.notna().sum() < 0.9 * max(1, int(series.notna().sum())):
                return series.astype("string").str.strip()
    return _eval(node, data, quoted, ctx, zero)


def _compare(
    node: ast.Compare, data: pd.DataFrame, quoted: dict[str, str], ctx: ToolContext, zero: pd.Series
) -> pd.Series:
    left = _operand(node.left, data, quoted, ctx, zero)
    right = _operand(node.comparators[0], data, quoted, ctx, zero)
    if isinstance(left, str) and isinstance(right, str):
        raise _bad(ctx, "A condition needs a column on one side.", "条件的一侧必须是列。")
    texts = [isinstance(v, str) or (isinstance(v, pd.Series) and v.dtype == "string") for v in (left, right)]
    if any(texts) and not all(texts):
        raise _bad(
            ctx,
            "Text is compared with text only (put the value in quotes, e.g. Sex == 'female').",
            "文本只能与文本比较（取值加引号，如 Sex == 'female'）。",
        )
    if any(texts) and type(node.ops[0]) not in (ast.Eq, ast.NotEq):
        raise _bad(ctx, "Text can only be compared with == or !=.", "文本只能用 == 或 != 比较。")
    result = _COMPARE[type(node.ops[0])](left, right)
    missing = pd.Series(False, index=data.index)
    for side in (left, right):
        if isinstance(side, pd.Series):
            missing |= side.isna().to_numpy()
    result = result if isinstance(result, pd.Series) else pd.Series(result, index=data.index)
    return result.astype("boolean").mask(missing)


def _as_condition(value: Any, ctx: ToolContext) -> pd.Series:
    if isinstance(value, pd.Series) and (
        pd.api.types.is_bool_dtype(value.dtype) or isinstance(value.dtype, pd.BooleanDtype)
    ):
        return value.astype("boolean")
    raise _bad(
        ctx,
        "and/or join conditions (e.g. Age >= 18 and Sex == 'female').",
        "and/or 只能连接条件（如 Age >= 18 and Sex == 'female'）。",
    )


def _where(node: ast.Call, data: pd.DataFrame, quoted: dict[str, str], ctx: ToolContext, zero: pd.Series) -> pd.Series:
    """where(condition, then, else): a value per row; then/else are numbers, 'text' or expressions."""
    if len(node.args) != 3:
        raise _bad(
            ctx,
            "where() takes a condition, a value if true and a value if false.",
            "where() 需要条件、为真时的值、为假时的值。",
        )
    condition = _as_condition(_eval(node.args[0], data, quoted, ctx, zero), ctx)
    then, other = (
        a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else _eval(a, data, quoted, ctx, zero)
        for a in node.args[1:]
    )
    picked = np.where(condition.fillna(False).to_numpy(dtype=bool), _values(then, data), _values(other, data))
    out = pd.Series(picked, index=data.index)
    out = out.astype(object) if any(isinstance(v, str) for v in (then, other)) else pd.to_numeric(out, errors="coerce")
    return out.where(condition.notna().to_numpy(), None if out.dtype == object else np.nan)


def _values(value: Any, data: pd.DataFrame) -> Any:
    return (
        value.to_numpy()
        if isinstance(value, pd.Series)
        else np.full(len(data), value, dtype=object if isinstance(value, str) else float)
    )


def _call(
    node: ast.Call, func: str, data: pd.DataFrame, quoted: dict[str, str], ctx: ToolContext, zero: pd.Series
) -> Any:
    """A call of one of _FUNCS, named `func`."""
    expected = (1, 2) if func == "round" else (1,)
    if len(node.args) not in expected:
        raise _bad(ctx, f"{func}() takes {' or '.join(map(str, expected))} argument(s).", f"{func}() 的参数个数不对。")
    value = _eval(node.args[0], data, quoted, ctx, zero)
    if func != "round":
        return _FUNCS[func](value)
    digits = 0
    if len(node.args) == 2:
        arg = node.args[1]
        if not (isinstance(arg, ast.Constant) and isinstance(arg.value, int) and not isinstance(arg.value, bool)):
            raise _bad(ctx, "round(x, n) needs a whole number n.", "round(x, n) 的 n 必须是整数。")
        digits = arg.value
    return value.round(digits) if isinstance(value, pd.Series) else round(value, digits)


def _is_dates(value: Any) -> bool:
    return isinstance(value, pd.Series) and pd.api.types.is_datetime64_any_dtype(value.dtype)


def _column_values(data: pd.DataFrame, column: str, ctx: ToolContext) -> pd.Series:
    series = data[column]
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return parse_dates(series)
    values, _ = parse_numbers(series)
    present = int(series.notna().sum())
    if present and values.notna().sum() < 0.9 * present:
        dates = parse_dates(series) if not pd.api.types.is_numeric_dtype(series.dtype) else None
        if dates is not None and dates.notna().sum() >= 0.9 * present:
            return dates
        raise ToolError(
            "wrong_column_type",
            ctx.t(
                f"Column {column!r} is not numeric, so it cannot be used in arithmetic.",
                f"列 {column!r} 不是数值，不能参与计算。",
            ),
            hint=ctx.t("Use numeric columns, or convert_types first.", "请使用数值列，或先用 convert_types 转换。"),
            column=column,
        )
    return values


# ---------------------------------------------------------------- ready-made kinds


def _by_kind(
    data: pd.DataFrame,
    kind: str,
    columns: list[str],
    bins: list[float] | None,
    n_bins: int,
    labels: list[str] | None,
    part: str,
    ctx: ToolContext,
    counts: dict[str, Any],
) -> tuple[pd.Series, str]:
    needed = {"ratio": 2, "difference": 2, "percent_change": 2, "bin": 1, "date_part": 1}[kind]
    if len(columns) != needed:
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                f"kind={kind} needs columns with exactly {needed} name(s).",
                f"kind={kind} 需要 columns 中恰好 {needed} 个列名。",
            ),
            hint='columns=["Revenue", "Cost"]' if needed == 2 else 'columns=["Date"]',
        )
    if kind in ("ratio", "difference", "percent_change"):
        a, b = (f"`{c}`" for c in columns)
        formula = {"ratio": f"{a} / {b}", "difference": f"{a} - {b}", "percent_change": f"({b} - {a}) / {a} * 100"}[
            kind
        ]
        return evaluate_expression(data, formula, ctx, counts), formula
    if kind == "bin":
        return _bin(data, columns[0], bins, n_bins, labels, ctx)
    dates = parse_dates(data[columns[0]])
    if dates.notna().sum() == 0:
        raise ToolError(
            "wrong_column_type",
            ctx.t(f"Column {columns[0]!r} holds no dates.", f"列 {columns[0]!r} 不含日期。"),
            hint=ctx.t("Pick a date column.", "请选择日期列。"),
            column=columns[0],
        )
    return _date_part(dates, part, ctx), f"{part}({columns[0]})"


def _bin(
    data: pd.DataFrame, column: str, bins: list[float] | None, n_bins: int, labels: list[str] | None, ctx: ToolContext
) -> tuple[pd.Series, str]:
    values = _column_values(data, column, ctx)
    if values.notna().sum() == 0 or _is_dates(values):
        raise ToolError(
            "wrong_column_type",
            ctx.t(f"Column {column!r} has no numbers to bin.", f"列 {column!r} 没有可分组的数值。"),
            hint=ctx.t("Pick a numeric column.", "请选择数值列。"),
            column=column,
        )
    if bins:
        edges = sorted({float(b) for b in bins})
    else:
        quantiles = np.linspace(0, 1, max(2, min(int(n_bins), 20)) + 1)
        edges = sorted(set(np.nanquantile(values.to_numpy(), quantiles).tolist()))
    if len(edges) < 2:
        raise ToolError(
            "insufficient_data",
            ctx.t(
                f"{column!r} has a single value; it cannot be cut into ranges.", f"{column!r} 只有一个取值，无法分段。"
            ),
            hint=ctx.t("Give bins explicitly.", "请明确给出 bins。"),
        )
    names = labels or [f"{fmt_num(lo)}–{fmt_num(hi)}" for lo, hi in zip(edges[:-1], edges[1:])]
    if len(names) != len(edges) - 1:
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                f"labels needs {len(edges) - 1} names for {len(edges)} edges.",
                f"{len(edges)} 个边界需要 {len(edges) - 1} 个 labels。",
            ),
            hint=str(edges),
        )
    cut = pd.cut(values, edges, labels=names, include_lowest=True, ordered=len(set(names)) == len(names))
    return cut, f"bin({column}, {[fmt_num(e) for e in edges]})"


def _date_part(dates: pd.Series, part: str, ctx: ToolContext) -> pd.Series:
    d = dates.dt
    if part == "year":
        return d.year.astype("Int64")
    if part == "quarter":
        return (d.year.astype("Int64").astype("string") + "-Q" + d.quarter.astype("Int64").astype("string")).astype(
            "str"
        )
    if part == "month":
        return d.month.astype("Int64")
    if part == "year_month":
        return d.strftime("%Y-%m").astype("str")
    if part == "week":
        iso = d.isocalendar()
        return (
            iso["year"].astype("string")
            + "-W"
            + iso["week"].astype("Int64").map("{:02d}".format, na_action="ignore").astype("string")
        ).astype("str")
    if part == "weekday":
        names = _WEEKDAYS["zh" if ctx.zh else "en"]
        return d.weekday.map(lambda i: names[int(i)], na_action="ignore").astype("str")
    if part == "weekend":  # Saturday and Sunday against the other five days
        weekend, weekdays = ctx.t("weekend days", "周末"), ctx.t("weekdays", "工作日")
        return d.weekday.map(lambda i: weekend if int(i) >= 5 else weekdays, na_action="ignore").astype("str")
    if part == "day":
        return d.day.astype("Int64")
    if part == "hour":
        return d.hour.astype("Int64")
    return d.strftime("%Y-%m-%d").astype("str")


def _derive_result(
    ctx: ToolContext,
    table: pd.DataFrame,
    name: str,
    formula: str,
    values: pd.Series,
    zero_division: int = 0,
    on_zero: str = "missing",
) -> ToolResult:
    n = len(table)
    missing = int(values.isna().sum())
    metrics: dict[str, Any] = {"n": n, "n_missing": missing, "n_valid": n - missing, "n_zero_division": zero_division}
    profile = [f"{name} = {formula}"]
    boolean = pd.api.types.is_bool_dtype(values.dtype) or isinstance(values.dtype, pd.BooleanDtype)
    numeric = pd.api.types.is_numeric_dtype(values.dtype) and not boolean
    if numeric and n - missing:
        v = values.astype(float)
        metrics.update(mean=float(v.mean()), median=float(v.median()), min=float(v.min()), max=float(v.max()))
        profile.append(
            ctx.t(
                f"mean {fmt_num(v.mean())}, median {fmt_num(v.median())}, range {fmt_num(v.min())} to {fmt_num(v.max())}",
                f"均值 {fmt_num(v.mean())}，中位数 {fmt_num(v.median())}，范围 {fmt_num(v.min())} 至 {fmt_num(v.max())}",
            )
        )
    elif n - missing:
        counts = values.value_counts().head(8)
        metrics["n_unique"] = int(values.nunique())
        profile.append(", ".join(f"{k}: {int(c):,}" for k, c in counts.items()))
        for k, c in counts.items():
            metrics[f"count.{k}"] = int(c)
    insights = []
    if zero_division:
        insights.append(
            ctx.t(
                f"{zero_division:,} rows divide by zero: "
                + ("set to 0." if on_zero == "zero" else "left empty (not infinity)."),
                f"有 {zero_division:,} 行除数为零：" + ("记为 0。" if on_zero == "zero" else "留空（而非无穷大）。"),
            )
        )
    if missing:
        insights.append(
            ctx.t(
                f"{missing:,} rows have no value (a missing input, division by zero or log of a non-positive number).",
                f"有 {missing:,} 行没有结果（输入缺失、除以零或对非正数取对数）。",
            )
        )
    step = f"derive_column: {name} = {formula} ({n:,} rows, {missing:,} missing)"
    interpretation = ctx.t(
        f"Added column {name} ({formula}) to all {n:,} rows"
        + (f"; {missing:,} could not be computed." if missing else "."),
        f"已为全部 {n:,} 行新增列 {name}（{formula}）" + (f"；其中 {missing:,} 行无法计算。" if missing else "。"),
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
            "Computed column (safe arithmetic, evaluated on whole columns).", "计算列（安全的算术表达式，按整列计算）。"
        ),
    )
