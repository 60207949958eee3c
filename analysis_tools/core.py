"""Core tools (always visible): list datasets, preview rows, profile columns."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from app.ingest.duplicates import duplicate_rows

from .base import ToolContext, ToolResult, tagged_text
from .common import clean_metrics, coerce_numeric, column_kind, column_role, fmt_num, py

_TOP = 5


def list_datasets(ctx: ToolContext) -> ToolResult:
    """List the datasets loaded in this session with their size, columns and column types."""
    if not ctx.datasets:
        msg = ctx.t("No dataset is loaded yet.", "还没有加载任何数据集。")
        return ToolResult(
            text=tagged_text(data_profile=msg),
            interpretation=msg,
            method="list datasets",
            metrics={"n_datasets": 0},
            payload={"datasets": []},
        )
    entries, lines = [], []
    for name, df in ctx.datasets.items():
        cols = [{"name": str(c), "dtype": str(df[c].dtype)} for c in df.columns]
        entries.append(
            {
                "name": name,
                "rows": int(len(df)),
                "columns": int(df.shape[1]),
                "column_types": cols,
                "active": name == ctx.dataset_name,
            }
        )
        shown = ", ".join(f"{c['name']} ({c['dtype']})" for c in cols[:40])
        more = f", … +{len(cols) - 40}" if len(cols) > 40 else ""
        active = ctx.t(" [active]", "【当前】") if name == ctx.dataset_name else ""
        lines.append(f"{name}{active}: {len(df)} × {df.shape[1]} — {shown}{more}")
    interpretation = ctx.t(f"{len(entries)} dataset(s) loaded.", f"已加载 {len(entries)} 个数据集。")
    return ToolResult(
        text=tagged_text(data_profile=lines, interpretation=interpretation),
        interpretation=interpretation,
        method="list datasets",
        metrics={"n_datasets": len(entries)},
        payload={"datasets": entries},
    )


def preview_data(data: pd.DataFrame, rows: int = 10, ctx: ToolContext | None = None) -> ToolResult:
    """Show the first rows of the dataset as a table, to see what the data looks like.

    Args:
        rows: How many rows to show (1-100).
    """
    ctx = ctx or ToolContext()
    rows = max(1, min(int(rows), 100))
    head = data.head(rows)
    with pd.option_context("display.max_columns", 60, "display.width", 200, "display.max_colwidth", 40):
        table_text = head.to_string()
    records = [{str(k): _jsonable(v) for k, v in rec.items()} for rec in head.to_dict(orient="records")]
    profile = ctx.t(
        f"{len(data)} rows × {data.shape[1]} columns; showing the first {len(head)}.",
        f"共 {len(data)} 行 × {data.shape[1]} 列；显示前 {len(head)} 行。",
    )
    return ToolResult(
        text=tagged_text(data_profile=profile, preview=table_text),
        interpretation=profile,
        method="preview",
        sample_size=int(len(data)),
        table=head.copy(),
        metrics={"n_rows": int(len(data)), "n_columns": int(data.shape[1]), "rows_shown": int(len(head))},
        payload={"rows": records, "columns": [str(c) for c in data.columns]},
    )


def _jsonable(v):
    if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NaT:
        return None
    try:
        if pd.isna(v):
            return None
    except (TypeError, ValueError):
        pass
    if isinstance(v, (pd.Timestamp, np.datetime64)):
        return str(pd.Timestamp(v))
    v = py(v)
    return v if isinstance(v, (int, float, str, bool)) else str(v)


def profile_dataset(data: pd.DataFrame, ctx: ToolContext | None = None) -> ToolResult:
    """Profile every column: its kind (number, integer, datetime, category, text, boolean, identifier), missing values, distinct values, summary numbers, top categories and date range, plus hints on what to analyse."""
    ctx = ctx or ToolContext()
    n = len(data)
    profiles = [_profile_column(data[c], n) for c in data.columns]
    lines, insights = [], []
    for p in profiles:
        lines.append(_profile_line(p, ctx))
        if n and p["missing"] / n >= 0.2:
            insights.append(
                ctx.t(
                    f"{p['name']} is {p['missing_share'] * 100:.0f}% missing; results using it rest on fewer rows.",
                    f"{p['name']} 缺失 {p['missing_share'] * 100:.0f}%，用它的分析样本会变少。",
                )
            )
        if p.get("skew") is not None and abs(p["skew"]) > 1:
            insights.append(
                ctx.t(
                    f"{p['name']} is skewed (skew {fmt_num(p['skew'], 3)}); medians or rank tests suit it better.",
                    f"{p['name']} 分布偏斜（偏度 {fmt_num(p['skew'], 3)}），中位数或秩检验更合适。",
                )
            )
        if p["unique"] == 1:
            insights.append(
                ctx.t(
                    f"{p['name']} has a single value and carries no information.",
                    f"{p['name']} 只有一个取值，没有信息量。",
                )
            )
    metrics_cols = [p["name"] for p in profiles if p["role"] == "metric"]
    dims = [p["name"] for p in profiles if p["role"] == "dimension"]
    times = [p["name"] for p in profiles if p["role"] == "time"]
    if metrics_cols:
        insights.append(
            ctx.t(
                f"Candidate metrics (numbers to analyse): {metrics_cols[:10]}",
                f"候选指标（可分析的数值）：{metrics_cols[:10]}",
            )
        )
    if dims:
        insights.append(
            ctx.t(
                f"Candidate dimensions (to group or compare by): {dims[:10]}",
                f"候选维度（可用于分组比较）：{dims[:10]}",
            )
        )
    if times:
        insights.append(ctx.t(f"Time columns (for trends): {times}", f"时间列（可看趋势）：{times}"))
    duplicates = duplicate_rows(data) if n else 0  # = data.duplicated().sum(), without hashing every row
    if duplicates:
        insights.append(ctx.t(f"{duplicates} rows are exact duplicates.", f"有 {duplicates} 行完全重复。"))
    missing_cells = int(data.isna().sum().sum())
    metrics = {
        "n_rows": n,
        "n_columns": int(data.shape[1]),
        "missing_cells": missing_cells,
        "missing_share": missing_cells / (n * data.shape[1]) if n and data.shape[1] else 0.0,
        "duplicate_rows": duplicates,
        "n_metrics": len(metrics_cols),
        "n_dimensions": len(dims),
    }
    interpretation = ctx.t(
        f"The table has {n} rows and {data.shape[1]} columns: {len(metrics_cols)} numeric measure(s), {len(dims)} grouping column(s)"
        f"{', a date column' if times else ''}; {missing_cells} cell(s) are empty.",
        f"数据共 {n} 行、{data.shape[1]} 列：{len(metrics_cols)} 个数值指标、{len(dims)} 个分组列"
        f"{'、含日期列' if times else ''}；有 {missing_cells} 个空单元格。",
    )
    text = tagged_text(data_profile="\n".join(lines), insights=insights, interpretation=interpretation)
    return ToolResult(
        metrics=clean_metrics(metrics),
        text=text,
        interpretation=interpretation,
        method="data profile",
        sample_size=n,
        payload={"columns": profiles},
        limitations=[
            ctx.t(
                "Column kinds are inferred from values and may need checking.", "列类型是根据取值推断的，可能需要核实。"
            )
        ],
    )


_COUNTED_KINDS = ("category", "boolean", "text", "identifier")  # kinds whose top values the profile shows


def _profile_column(series: pd.Series, n: int) -> dict:
    kind = column_kind(series)
    missing = int(series.isna().sum())
    # a text column's counts of each value, counted once: its number of distinct values and its top values
    # (astype(str) leaves a string column's values as they are, so these are the counts shown below)
    counts = None
    if kind in _COUNTED_KINDS and pd.api.types.is_string_dtype(series.dtype) and series.dtype != object:
        counts = series.dropna().value_counts()
    unique = len(counts) if counts is not None else int(series.nunique(dropna=True))
    p: dict = {
        "name": str(series.name),
        "kind": kind,
        "role": column_role(kind, series, unique),
        "dtype": str(series.dtype),
        "missing": missing,
        "missing_share": missing / n if n else 0.0,
        "unique": unique,
    }
    if kind in ("number", "integer"):
        values = coerce_numeric(series)[0].dropna().to_numpy(dtype=float)
        if len(values):
            p.update(
                mean=float(values.mean()),
                std=float(values.std(ddof=1)) if len(values) > 1 else None,
                min=float(values.min()),
                median=float(np.median(values)),
                max=float(values.max()),
                zeros=int((values == 0).sum()),
                negatives=int((values < 0).sum()),
            )
            if len(values) > 2 and values.std() > 0:
                p["skew"] = float(pd.Series(values).skew())
    if kind in _COUNTED_KINDS or (kind == "integer" and unique <= 10):
        if counts is None:
            counts = series.dropna().astype(str).value_counts()
        p["top"] = [{"value": str(k), "count": int(v)} for k, v in counts.head(_TOP).items()]
    if kind == "datetime":
        if pd.api.types.is_datetime64_any_dtype(series.dtype):
            dates = series.dropna()
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                dates = pd.to_datetime(series.astype("string"), errors="coerce", format="mixed").dropna()
        if len(dates):
            p.update(start=str(dates.min()), end=str(dates.max()), span_days=int((dates.max() - dates.min()).days))
    if kind == "text":
        p["mean_length"] = float(series.dropna().astype(str).str.len().mean())
    return p


def _profile_line(p: dict, ctx: ToolContext) -> str:
    head = f"{p['name']} [{p['kind']}, {p['role']}] missing {p['missing']}, unique {p['unique']}"
    if "mean" in p:
        head += (
            f"; mean {fmt_num(p['mean'])}, sd {fmt_num(p.get('std'))}, min {fmt_num(p['min'])}, "
            f"median {fmt_num(p['median'])}, max {fmt_num(p['max'])}"
        )
    if "top" in p:
        head += "; top " + ", ".join(f"{t['value']} ({t['count']})" for t in p["top"])
    if "start" in p:
        head += f"; {p['start']} → {p['end']}"
    return head
