"""Customer behaviour over time: cohort retention (do customers come back?) and funnels (where do
they drop out?)."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from . import charts
from .base import ToolContext, ToolError, ToolResult, tagged_text
from .common import clean_metrics, label
from .ts_common import parse_dates

_FALSE = {"", "0", "0.0", "false", "no", "n", "f", "否", "none", "nan"}
_MONDAY = pd.Timestamp("1970-01-05")


# ---------------------------------------------------------------- cohorts


def _period_number(dates: pd.Series, freq: str) -> pd.Series:
    """Consecutive integers per calendar month or Monday-based week (vectorised)."""
    if freq == "M":
        return dates.dt.year * 12 + dates.dt.month - 1
    return (dates.dt.normalize() - _MONDAY).dt.days // 7


def _period_name(number: int, freq: str) -> str:
    if freq == "M":
        return f"{number // 12:04d}-{number % 12 + 1:02d}"
    return (_MONDAY + pd.Timedelta(weeks=int(number))).strftime("%Y-%m-%d")


def cohort_retention(
    data: pd.DataFrame,
    id_column: str,
    date_column: str,
    freq: Literal["M", "W"] = "M",
    max_periods: int = 12,
    plot: bool = True,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Cohort retention: group customers by the month (or week) of their first activity and show what % of each cohort is active again 1, 2, 3 ... periods later.

    Args:
        id_column: The customer / user id column.
        date_column: The date of each activity (order, visit, login).
        freq: M for monthly cohorts, W for weekly cohorts.
        max_periods: How many periods after the first to show (1-36).
        plot: Also draw the retention heatmap.
    """
    ctx = ctx or ToolContext()
    if freq not in ("M", "W"):
        raise ToolError("invalid_arguments", ctx.t("freq must be M or W.", "freq 必须是 M 或 W。"), hint="M")
    max_periods = int(min(max(max_periods, 1), 36))
    dates = parse_dates(data, date_column, ctx)
    keep = dates.notna() & data[id_column].notna()
    if not keep.any():
        raise ToolError(
            "insufficient_data",
            ctx.t("No rows with both an id and a date.", "没有同时具有编号和日期的行。"),
            hint=ctx.t("Check the id and date columns.", "请检查编号列和日期列。"),
        )
    ids, dates = data.loc[keep, id_column], dates[keep]
    period = _period_number(dates, freq)
    first = period.groupby(ids).transform("min")
    last_period = int(period.max())
    if last_period == int(period.min()):
        raise ToolError(
            "insufficient_data",
            ctx.t(
                "All activity falls in one period; retention needs at least two.",
                "所有活动都在同一个周期内；留存分析至少需要两个周期。",
            ),
            hint=ctx.t("Use weekly cohorts (freq='W') or more history.", "请改用周粒度（freq='W'）或更长的历史。"),
        )
    pairs = pd.DataFrame(
        {"id": ids.to_numpy(), "cohort": first.to_numpy(), "age": (period - first).to_numpy()}
    ).drop_duplicates()
    counts = pairs.groupby(["cohort", "age"]).size().unstack(fill_value=0)
    sizes = counts[0]
    cohorts = counts.index.to_numpy()
    ages = np.arange(0, max_periods + 1)
    counts = counts.reindex(columns=ages, fill_value=0).astype(float)
    # a cohort can only be seen up to the last period; unseen cells are unknown, not zero
    observable = (cohorts[:, None] + ages[None, :]) <= last_period
    notes = []
    end = dates.max()
    last_end = (
        pd.Period(_period_name(last_period, freq), freq="M").end_time
        if freq == "M"
        else _MONDAY + pd.Timedelta(weeks=last_period + 1) - pd.Timedelta(seconds=1)
    )
    if end.normalize() < last_end.normalize():
        observable &= (cohorts[:, None] + ages[None, :]) < last_period
        notes.append(
            ctx.t(
                f"The latest period {_period_name(last_period, freq)} is not complete; it is left out of the retention figures.",
                f"最近的周期 {_period_name(last_period, freq)} 尚不完整，未计入留存率。",
            )
        )
    counts = counts.where(observable)
    retention = counts.div(sizes, axis=0) * 100
    seen = (observable * sizes.to_numpy()[:, None]).sum(axis=0)  # customers in cohorts old enough for each age
    avg = pd.Series(counts.sum(axis=0).to_numpy() / np.where(seen > 0, seen, np.nan) * 100, index=ages)
    return _cohort_result(retention, sizes, avg, freq, notes, int(keep.sum()), int((~keep).sum()), plot, ctx)


def _cohort_result(retention, sizes, avg, freq, notes, n_rows, dropped, plot, ctx) -> ToolResult:
    unit = ctx.t("month", "月") if freq == "M" else ctx.t("week", "周")
    names = [_period_name(int(c), freq) for c in retention.index]
    m: dict = {"n_users": int(sizes.sum()), "n_cohorts": len(sizes), "n_rows": n_rows, "freq": freq}
    for age, v in avg.items():
        if age > 0 and v == v:
            m[f"retention.period_{age}"] = float(v)
    for name, c in list(zip(names, retention.index))[-24:]:
        m[f"cohort_size.{name}"] = int(sizes[c])
        if 1 in retention.columns and retention.loc[c, 1] == retention.loc[c, 1]:
            m[f"retention.{name}.1"] = float(retention.loc[c, 1])
    table = retention.copy()
    table.columns = [str(a) for a in table.columns]
    table.insert(0, "cohort_size", sizes.to_numpy())
    table.insert(0, "cohort", names)
    table = table.reset_index(drop=True)
    insights = []
    if "retention.period_1" not in m:
        interpretation = ctx.t(
            "No cohort has been observed for a full period after its first one yet.", "还没有队列被观察满一个后续周期。"
        )
    else:
        r1 = m["retention.period_1"]
        later = [a for a in (3, 6, 12) if f"retention.period_{a}" in m]
        later_txt = "".join(
            ctx.t(
                f", {m[f'retention.period_{a}']:.0f}% after {a} {unit}s",
                f"，{a} 个{unit}后为 {m[f'retention.period_{a}']:.0f}%",
            )
            for a in later
        )
        interpretation = ctx.t(
            f"Of customers in their first {unit}, on average {r1:.0f}% were active again the next {unit}{later_txt}.",
            f"首次活跃的客户中，平均有 {r1:.0f}% 在下一个{unit}再次活跃{later_txt}。",
        )
        one = retention[1].dropna() if 1 in retention.columns else pd.Series(dtype=float)
        one = one[sizes.loc[one.index] >= max(5, sizes.median() * 0.2)]  # tiny cohorts give noisy extremes
        if len(one) >= 2:
            best, worst = one.idxmax(), one.idxmin()
            line = ctx.t(
                f"Best cohort: {_period_name(int(best), freq)} ({one[best]:.0f}% back after one {unit}); weakest: "
                f"{_period_name(int(worst), freq)} ({one[worst]:.0f}%).",
                f"表现最好的队列：{_period_name(int(best), freq)}（一个{unit}后 {one[best]:.0f}% 回访）；最弱：{_period_name(int(worst), freq)}（{one[worst]:.0f}%）。",
            )
            insights.append(line)
            interpretation += " " + line
            m.update(best_cohort=_period_name(int(best), freq), worst_cohort=_period_name(int(worst), freq))
    insights += [
        ctx.t(f"After {a} {unit}(s): {v:.1f}% on average", f"{a} 个{unit}后：平均 {v:.1f}%")
        for a, v in avg.items()
        if a > 0 and v == v
    ][:12]
    if dropped:
        notes = notes + [
            ctx.t(f"{dropped} rows without an id or a date were left out.", f"有 {dropped} 行缺少编号或日期，已排除。")
        ]
    method = ctx.t(
        f"Each customer's cohort is the {unit} of their first activity; retention in {unit} k = share of the cohort active in "
        f"{unit} k after it. Averages weight cohorts by size and include only cohorts observed long enough.",
        f"每位客户的队列是其首次活跃的{unit}；第 k 个{unit}的留存率 = 该队列在之后第 k 个{unit}仍活跃的比例。平均值按队列人数加权，只包含观察期足够长的队列。",
    )
    result = ToolResult(
        metrics=clean_metrics(m),
        interpretation=interpretation,
        method=method,
        sample_size=m["n_users"],
        table=table,
        limitations=notes
        + [
            ctx.t(
                "Being active again is counted, not how much customers spent.", "只统计是否再次活跃，不统计消费金额。"
            )
        ],
    )
    result.text = tagged_text(
        data_profile=ctx.t(
            f"{m['n_users']} customers in {m['n_cohorts']} cohorts, {n_rows} activity rows.",
            f"{m['n_cohorts']} 个队列共 {m['n_users']} 位客户，{n_rows} 条活动记录。",
        ),
        method=method,
        assumptions=notes,
        insights=insights,
        interpretation=interpretation,
    )
    if plot:
        _heatmap(retention.iloc[-24:], names[-24:], unit, result, ctx)
    return result


def _heatmap(retention: pd.DataFrame, names: list[str], unit: str, result: ToolResult, ctx: ToolContext) -> None:
    fig, ax = charts.new_figure((9.0, max(3.5, 0.35 * len(names) + 1.8)))
    charts.set_grid(ax, "none")
    values = retention.to_numpy(dtype=float)
    ax.imshow(np.ma.masked_invalid(values), cmap="Blues", vmin=0, vmax=100, aspect="auto")
    ax.set_xticks(range(values.shape[1]), [str(c) for c in retention.columns])
    ax.set_yticks(range(len(names)), names)
    if values.size <= 400:
        for (i, j), v in np.ndenumerate(values):
            if v == v:
                ax.text(
                    j, i, f"{v:.0f}", ha="center", va="center", fontsize=7, color="white" if v > 60 else charts.TEXT
                )
    charts.set_labels(
        ax,
        ctx.t("Retention by cohort (%)", "各队列留存率（%）"),
        ctx.t(f"{unit}s since first activity", f"首次活跃后的{unit}数"),
        ctx.t("cohort", "队列"),
    )
    path = charts.save(fig, ctx.figure_path("cohort_retention"))
    result.figures.append(str(path))
    result.captions.append(
        ctx.t(
            "Share of each cohort active again in each later period (darker = more customers returning).",
            "各队列在之后各周期再次活跃的比例（颜色越深，回访客户越多）。",
        )
    )


# ---------------------------------------------------------------- funnel


def _reached(series: pd.Series) -> pd.Series:
    """True where a step column says the user got there (True, a non-zero number, a date, a non-empty 'yes')."""
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.fillna(False).astype(bool)
    if pd.api.types.is_numeric_dtype(series.dtype):
        return series.fillna(0) != 0
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return series.notna()
    text = series.astype("string").str.strip().str.lower()
    return text.notna() & ~text.isin(_FALSE)


def funnel_analysis(
    data: pd.DataFrame,
    columns: list[str] | None = None,
    value_column: str | None = None,
    id_column: str | None = None,
    steps: list[str] | None = None,
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Funnel conversion: how many users reach each step in order (visit → cart → checkout → purchase), the conversion between steps, overall, and where the biggest drop is.

    Args:
        columns: Step columns in funnel order, one row per user (true/1/a timestamp = reached); or use value_column + id_column.
        value_column: A column naming the step reached (one row per user and step event).
        id_column: The user id column (needed with value_column; with columns, rows of the same id are combined).
        steps: The step names in order (with value_column); omit to order steps by how many users reach them.
    """
    ctx = ctx or ToolContext()
    if columns:
        if len(columns) < 2:
            raise ToolError(
                "invalid_arguments",
                ctx.t("A funnel needs at least two steps.", "漏斗至少需要两个步骤。"),
                hint="columns=[...]",
            )
        reached = pd.DataFrame({c: _reached(data[c]) for c in columns})
        if id_column:
            reached = reached.groupby(data[id_column]).any()
        names = list(columns)
    elif value_column and id_column:
        reached, names = _from_events(data, value_column, id_column, steps, ctx)
    else:
        raise ToolError(
            "invalid_arguments",
            ctx.t(
                "Give step columns (columns) or value_column + id_column.",
                "请给出步骤列（columns），或 value_column + id_column。",
            ),
            hint="columns=['visit', 'cart', 'purchase']",
        )
    skipped = int((reached.iloc[:, 1:].to_numpy() & ~reached.cummin(axis=1).iloc[:, 1:].to_numpy()).any(axis=1).sum())
    strict = reached.cummin(axis=1)  # counted at a step only after all earlier steps
    users = strict.sum(axis=0).astype(int)
    if users.iloc[0] == 0:
        raise ToolError(
            "insufficient_data",
            ctx.t(f"Nobody reached the first step {names[0]!r}.", f"没有人到达第一步 {names[0]!r}。"),
            hint=ctx.t("Check the step order and values.", "请检查步骤顺序和取值。"),
        )
    return _funnel_result(names, users, skipped, len(reached), ctx)


def _from_events(data, value_column, id_column, steps, ctx):
    keep = data[value_column].notna() & data[id_column].notna()
    step = data.loc[keep, value_column].map({v: label(v) for v in data.loc[keep, value_column].unique()})
    pairs = pd.DataFrame({"id": data.loc[keep, id_column].to_numpy(), "step": step.to_numpy()})
    counts = pairs.drop_duplicates()["step"].value_counts()
    if steps:
        names = [label(s) for s in steps]
        missing = [s for s in names if s not in counts.index]
        if missing:
            from .registry import suggest

            raise ToolError(
                "value_not_found",
                ctx.t(
                    f"Step(s) {missing} do not occur in {value_column!r}.", f"{value_column!r} 中没有步骤 {missing}。"
                ),
                hint=ctx.t(f"Steps present: {list(counts.index[:20])}", f"现有步骤：{list(counts.index[:20])}"),
                did_you_mean=suggest(missing[0], [str(s) for s in counts.index]),
            )
    else:
        names = list(counts.index)
    if len(names) < 2:
        raise ToolError(
            "invalid_arguments",
            ctx.t("A funnel needs at least two steps.", "漏斗至少需要两个步骤。"),
            hint=ctx.t(
                f"{value_column!r} has {len(counts)} distinct step(s).", f"{value_column!r} 只有 {len(counts)} 个步骤。"
            ),
        )
    pairs = pairs[pairs["step"].isin(names)]
    id_codes, ids = pd.factorize(pairs["id"])
    step_codes = pd.Categorical(pairs["step"], categories=names).codes
    matrix = np.zeros((len(ids), len(names)), dtype=bool)  # users x steps, filled in one vectorised step
    matrix[id_codes, step_codes] = True
    return pd.DataFrame(matrix, index=ids, columns=names), names


def _funnel_result(names, users, skipped, n_units, ctx) -> ToolResult:
    start = int(users.iloc[0])
    prev = users.shift(1)
    conv_prev = (users / prev * 100).where(prev > 0)
    conv_start = users / start * 100
    m: dict = {
        "n_steps": len(names),
        "n_users_start": start,
        "overall_conversion": float(users.iloc[-1] / start * 100),
        "n": n_units,
    }
    for i, s in enumerate(names):
        m[f"users.{s}"] = int(users.iloc[i])
        m[f"conversion_from_start.{s}"] = float(conv_start.iloc[i])
        if i:
            m[f"conversion_from_previous.{s}"] = (
                float(conv_prev.iloc[i]) if conv_prev.iloc[i] == conv_prev.iloc[i] else None
            )
    drops = (100 - conv_prev.iloc[1:]).fillna(0)
    worst = int(np.argmax(drops.to_numpy())) + 1
    m.update(
        biggest_drop_step=names[worst],
        biggest_drop_from=names[worst - 1],
        biggest_drop_pct=float(drops.iloc[worst - 1]),
    )
    table = pd.DataFrame(
        {
            "step": names,
            "users": users.to_numpy(),
            "conversion_from_previous_pct": conv_prev.to_numpy(),
            "conversion_from_start_pct": conv_start.to_numpy(),
        }
    )
    lines = [
        ctx.t(
            f"{s}: {int(users.iloc[i]):,} ({conv_start.iloc[i]:.1f}% of the start"
            + (f", {conv_prev.iloc[i]:.1f}% of the previous step)" if i else ")"),
            f"{s}：{int(users.iloc[i]):,}（占起点 {conv_start.iloc[i]:.1f}%"
            + (f"，占上一步 {conv_prev.iloc[i]:.1f}%）" if i else "）"),
        )
        for i, s in enumerate(names)
    ]
    interpretation = ctx.t(
        f"Of {start:,} who reached {names[0]}, {int(users.iloc[-1]):,} ({m['overall_conversion']:.1f}%) made it to {names[-1]}. "
        f"The biggest loss is from {names[worst - 1]} to {names[worst]}: {m['biggest_drop_pct']:.0f}% drop out there.",
        f"到达 {names[0]} 的 {start:,} 人中，有 {int(users.iloc[-1]):,} 人（{m['overall_conversion']:.1f}%）到达 {names[-1]}。"
        f"流失最多的是从 {names[worst - 1]} 到 {names[worst]}：{m['biggest_drop_pct']:.0f}% 在此流失。",
    )
    notes = []
    if skipped:
        notes.append(
            ctx.t(
                f"{skipped} users reached a later step without an earlier one; they are counted only up to the first step they missed.",
                f"有 {skipped} 位用户跳过了前面的步骤到达后面的步骤；他们只计算到第一个缺失的步骤为止。",
            )
        )
    method = ctx.t(
        "Strict ordered funnel: a user counts at a step only if they reached it and every step before it; conversion = users at "
        "a step / users at the previous step (and / users at the first step).",
        "严格有序漏斗：用户只有到达某一步且之前每一步都到达过，才计入该步；转化率 = 该步人数 / 上一步人数（以及 / 第一步人数）。",
    )
    text = tagged_text(
        data_profile=ctx.t(f"{n_units:,} users, {len(names)} steps.", f"{n_units:,} 位用户，{len(names)} 个步骤。"),
        method=method,
        assumptions=notes,
        insights=lines,
        conclusion=ctx.t(
            f"Overall conversion {m['overall_conversion']:.1f}%; biggest drop {names[worst - 1]} → {names[worst]} ({m['biggest_drop_pct']:.1f}%).",
            f"整体转化率 {m['overall_conversion']:.1f}%；最大流失 {names[worst - 1]} → {names[worst]}（{m['biggest_drop_pct']:.1f}%）。",
        ),
        interpretation=interpretation,
    )
    return ToolResult(
        metrics=clean_metrics(m),
        text=text,
        interpretation=interpretation,
        method=method,
        sample_size=n_units,
        table=table,
        limitations=notes
        + [ctx.t("A funnel shows where users leave, not why.", "漏斗显示用户在哪里流失，不说明原因。")],
    )
