"""The built-in analyst's headlines: the answer to the question in plain words with the key number,
in the question's language; the statistics follow, each with a plain explanation (issue 14).

Built from a tool's metrics (the numbers the tool returned), never from new computation. Each returns
None when the metrics lack what it needs; the caller then uses the tool's own reading.
"""

from __future__ import annotations

import math
import re
from typing import Any

from analysis_tools.common import fmt_num, fmt_p
from analysis_tools.ts_common import FREQ_WORDS
from app.analyst.sheet_words import says_no, says_yes
from app.analyst.vocabulary import pair_list, pairs
from app.understanding.period_groups import calendar_order

LISTED = 6  # groups listed after the headline


def _ok(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _num(metrics: dict[str, Any], key: str) -> float | None:
    """A finite number from the metrics, else None."""
    value: Any = metrics.get(key)
    return float(value) if _ok(value) else None


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def _chance(p: Any, zh: bool) -> str:
    """What a p-value means, in words, with the number."""
    if not _ok(p):
        return ""
    if p < 0.05:
        return (
            f"这样大的差异很少会偶然出现（{fmt_p(p)}）"
            if zh
            else f"a gap this large would rarely happen by chance ({fmt_p(p)})"
        )
    return (
        f"这样的差异很可能只是偶然（{fmt_p(p)}），不能作为可靠证据"
        if zh
        else f"a gap like this could easily happen by chance ({fmt_p(p)}), so it is not convincing evidence"
    )


def _by_prefix(metrics: dict[str, Any], prefix: str) -> dict[str, float]:
    return {k[len(prefix) :]: v for k, v in metrics.items() if k.startswith(prefix) and _ok(v)}


def proportion_headline(
    outcome: str,
    group: str,
    metrics: dict[str, Any],
    zh: bool,
    first: str | None = None,
    by_group: bool = False,
    asked: str | None = None,
) -> str | None:
    """'female: 72.7% had survived = yes, against 19.1% for male; a gap this large would rarely
    happen by chance (p < 0.001).' Highest rate first; the group the question asked about first
    when it is one of two (`first`: "Crew: 24.0%, against 37.9% for the others"); `by_group` names the
    grouping after the two rates there too (the yes of a yes/no column: "higher for yes … (by bluecol)"); `asked`,
    one group of several the question asks about ("赵阿姨的好评率是多少"), is told after the ranking with its place."""
    rates = _by_prefix(metrics, "proportion.")
    if len(rates) < 2:
        return None
    if first in rates and len(rates) == 2:
        return _one_rate_against_other(outcome, first, rates, _num(metrics, "p_value"), zh, group if by_group else None)
    ranked = sorted(rates.items(), key=lambda kv: -kv[1])
    if asked in rates:  # the group the question asks about, after the ranking: its rate and its place
        place = [g for g, _ in ranked].index(asked) + 1
        told = _ranked_rates(outcome, group, ranked, metrics, zh)
        if zh:
            return f"{told}{asked}：{_pct(rates[asked])}，在 {len(ranked)} 组中排第 {place}。"
        return f"{told} {asked}: {_pct(rates[asked])}, {_ordinal(place)} of {len(ranked)}."
    return _ranked_rates(outcome, group, ranked, metrics, zh)


def _ranked_rates(outcome: str, group: str, ranked: list[tuple[str, float]], metrics: dict[str, Any], zh: bool) -> str:
    (top, high), (low_name, low) = ranked[0], ranked[-1]
    p = _num(metrics, "p_value")
    much = p is not None and p < 0.05 and high >= 1.5 * max(low, 1e-12)
    others = ranked[1:-1]
    middle = "".join(f"，{g} {_pct(v)}" if zh else f", {g} {_pct(v)}" for g, v in others[:LISTED])
    if zh:
        lead = "明显更高" if much else ("更高" if p is not None and p < 0.05 else "略高")
        return (
            f"{top} 的 {outcome} 比例{lead}：{_pct(high)}{middle}，而 {low_name} 为 {_pct(low)}"
            f"（按{group}分组）；{_chance(p, zh)}。"
        )
    lead = "far higher" if much else ("higher" if p is not None and p < 0.05 else "slightly higher")
    return (
        f"The {outcome} rate is {lead} for {top}: {_pct(high)}{middle} vs {_pct(low)} for {low_name} "
        f"(by {group}); {_chance(p, zh)}."
    )


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _one_rate_against_other(
    outcome: str, first: str, rates: dict[str, float], p: float | None, zh: bool, group: str | None = None
) -> str:
    other, theirs = next((g, v) for g, v in rates.items() if g != first)
    mine = rates[first]
    if zh:
        word = "更高" if mine > theirs else "更低"
        by = f"（按{group}分组）" if group else ""
        return f"{first} 的 {outcome} 比例{word}：{_pct(mine)}，而 {other} 为 {_pct(theirs)}{by}；{_chance(p, zh)}。"
    word = "higher" if mine > theirs else "lower"
    by = f" (by {group})" if group else ""
    return (
        f"The {outcome} rate is {word} for {first}: {_pct(mine)} vs {_pct(theirs)} for {other}{by}; {_chance(p, zh)}."
    )


def _group_totals(metric: str, metrics: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """A group_aggregate sum's totals by group and the grand total (the tool's, else their sum)."""
    totals = {k: v for k, v in _by_prefix(metrics, f"{metric}_sum.").items() if k != "total"}
    grand = metrics.get(f"{metric}_sum.total")
    return totals, (grand if _ok(grand) and grand else sum(totals.values()))


def total_headline(
    metric: str,
    group: str,
    metrics: dict[str, Any],
    zh: bool,
    top: tuple[int, bool] | None = None,
    agg: str = "sum",
    lowest: bool = False,
) -> str | None:
    """'East brings in the most Revenue in total: 200,000 of 560,000 (35.7%). Then West 150,000 (26.8%) …'
    With `top`: the top (or bottom) N groups by their total (or their average, with agg "mean"); `lowest`:
    the question asks which is lowest ("which month had the lowest revenue"), so the lowest leads."""
    if agg == "mean" and top:
        return top_average_headline(metric, group, metrics, zh, top)
    totals, grand = _group_totals(metric, metrics)
    if not totals:
        return None
    ranked = sorted(totals.items(), key=lambda kv: -kv[1])
    shown_all = len(ranked) == metrics.get("n_groups", len(ranked))

    if top:
        n, bottom = top
        if bottom and not shown_all:
            return None
        picked = (ranked[::-1] if bottom else ranked)[:n]
        listed = ("；" if zh else "; ").join(f"{i}. {g} {fmt_num(v)}" for i, (g, v) in enumerate(picked, 1))
        if zh:
            return f"按 {metric} 合计{'最低' if bottom else '最高'}的 {len(picked)} 个 {group}：{listed}（全部合计 {fmt_num(grand)}）。"
        return (
            f"The {'bottom' if bottom else 'top'} {len(picked)} {group} by total {metric}: {listed} "
            f"(all together {fmt_num(grand)})."
        )
    if len(ranked) == 1 and shown_all:  # one group (the rows kept by a filter): its total, nothing to rank
        only, value = ranked[0]
        return f"{only} 的 {metric} 合计：{fmt_num(value)}。" if zh else f"Total {metric} for {only}: {fmt_num(value)}."
    if lowest and shown_all:
        ranked = ranked[::-1]
    (best, value), rest = ranked[0], ranked[1:]
    # periods (1月..12月, Q1..Q4, Jan..Dec) are read in calendar order, every one of them; other groups by size
    in_time = calendar_order([g for g, _ in ranked]) if shown_all else None
    shown = [(g, totals[g]) for g in in_time] if in_time else rest[:LISTED]
    others = ("，" if zh else ", ").join(f"{g} {fmt_num(v)}" for g, v in shown)
    then = ""
    if others and zh:
        then = f"按{group}依次为 {others}。" if in_time else f"其后依次为 {others}。"
    elif others:
        then = f" In order of {group}: {others}." if in_time else f" Then {others}."
    if lowest and shown_all:  # (the tool reports the largest group's share only: no share said of the lowest)
        if zh:
            return f"{best} 的 {metric} 合计最低：{fmt_num(value)}（全部合计 {fmt_num(grand)}）。" + then
        return f"{best} has the lowest total {metric}: {fmt_num(value)} (of {fmt_num(grand)} in all)." + then
    if zh:
        return (
            f"{best} 的 {metric} 合计最高：{fmt_num(value)}，占全部 {fmt_num(grand)} 的 {_pct(value / grand)}。" + then
        )
    return (
        f"{best} has the highest total {metric}: {fmt_num(value)} of {fmt_num(grand)} in all ({_pct(value / grand)})."
        + then
    )


def grand_total_headline(metric: str, group: str, metrics: dict[str, Any], zh: bool) -> str | None:
    """'Total Revenue: 32,098. By Region: East 13,245, West 9,184 …' — a question that asks one total, broken
    down by a grouping it did not name (each group's total, as the tool reported it: the claim's numbers
    are all checked against the call)."""
    totals, grand = _group_totals(metric, metrics)
    if not totals:
        return None
    ranked = sorted(totals.items(), key=lambda kv: -kv[1])[: LISTED + 1]
    parts = ("，" if zh else ", ").join(f"{g} {fmt_num(v)}" for g, v in ranked)
    if zh:
        return f"{metric} 合计：{fmt_num(grand)}。按 {group} 分：{parts}。"
    return f"Total {metric}: {fmt_num(grand)}. By {group}: {parts}."


def named_total_headline(metric: str, named: str, metrics: dict[str, Any], zh: bool) -> str | None:
    """'北京店 的 广告费用 合计：2,493,619（全部合计 7,634,527）；其他：上海店 3,179,060，广州店 1,961,848。' — the
    total of the one group a question asks about, with the others beside it (the numbers the tool reported,
    each checked against it); None when it is not a group."""
    totals, grand = _group_totals(metric, metrics)
    if named not in totals or len(totals) == 1:  # the only group (a filter kept it): total_headline says it
        return None
    value = totals[named]
    others = sorted(((g, v) for g, v in totals.items() if g != named), key=lambda kv: -kv[1])[:LISTED]
    listed = ("，" if zh else ", ").join(f"{g} {fmt_num(v)}" for g, v in others)
    if zh:
        return f"{named} 的 {metric} 合计：{fmt_num(value)}（全部合计 {fmt_num(grand)}）" + (
            f"；其他：{listed}。" if listed else "。"
        )
    return f"Total {metric} for {named}: {fmt_num(value)} (of {fmt_num(grand)} in all)" + (
        f"; the others: {listed}." if listed else "."
    )


def pair_total_headline(metric: str, first: str, second: str, metrics: dict[str, Any], zh: bool) -> str | None:
    """'东门 的 销量 合计 518，西门 498：东门 多 20（+4.0%）。' — the totals of the two groups a question sets
    against each other ("东门和西门的销量差多少？", "6月比1月增长了多少？") and the first's difference from the
    second, as group_aggregate's `compare` computed it; None when it did not."""
    totals, _ = _group_totals(metric, metrics)
    difference, relative = metrics.get("difference"), metrics.get("relative_difference")
    if first not in totals or second not in totals or difference is None:
        return None
    a, b = totals[first], totals[second]
    by = f"{float(relative):+.1%}" if relative is not None else ""
    if zh:
        more, change = ("多" if difference >= 0 else "少"), (f"（{by}）" if by else "")
        return f"{first} 的 {metric} 合计 {fmt_num(a)}，{second} {fmt_num(b)}：{first} {more} {fmt_num(abs(difference))}{change}。"
    more, change = ("more" if difference >= 0 else "less"), (f" ({by})" if by else "")
    return f"Total {metric}: {first} {fmt_num(a)}, {second} {fmt_num(b)} — {first} {fmt_num(abs(difference))} {more}{change}."


def top_average_headline(
    metric: str, group: str, metrics: dict[str, Any], zh: bool, top: tuple[int, bool]
) -> str | None:
    """'The top 3 manufacturer by average hwy: 1. honda 32.56; 2. volkswagen 29.22; 3. hyundai 26.86
    (averages per manufacturer over 234 rows).' The groups ranked by their mean, not single rows."""
    means = _by_prefix(metrics, f"{metric}_mean.")
    n, bottom = top
    if not means or (bottom and len(means) != metrics.get("n_groups", len(means))):
        return None
    picked = sorted(means.items(), key=lambda kv: kv[1] if bottom else -kv[1])[:n]
    listed = ("；" if zh else "; ").join(f"{i}. {g} {fmt_num(v)}" for i, (g, v) in enumerate(picked, 1))
    rows, groups = metrics.get("n"), metrics.get("n_groups", len(means))
    if zh:
        return f"按平均 {metric}{'最低' if bottom else '最高'}的 {len(picked)} 个 {group}：{listed}（{groups} 个{group}，共 {rows} 行的各组平均值）。"
    return (
        f"The {'bottom' if bottom else 'top'} {len(picked)} {group} by average {metric}: {listed} "
        f"(the average of each of {groups} {group} groups, over {rows} rows)."
    )


def _ranked(metrics: dict[str, Any]) -> list[tuple[Any, Any]]:
    """rank_values' rows as (label, value), in rank order, those with a label and a number."""
    pairs = [
        (metrics.get(f"rank.{i}.label"), metrics.get(f"rank.{i}.value"))
        for i in range(1, int(metrics.get("shown") or 0) + 1)
    ]
    return [(label, value) for label, value in pairs if label is not None and _ok(value)]


def rank_headline(metric: str, metrics: dict[str, Any], bottom: bool, zh: bool) -> str | None:
    """'The 3 highest hp: 1. Maserati Bora 335; 2. Ford Pantera L 264; 3. Duster 360 245 (of 32 rows).'"""
    ranked = _ranked(metrics)
    if not ranked:
        return None
    rows = metrics.get("n_used", metrics.get("n"))
    tie = _tie_beyond(metrics, ranked, zh)
    if len(ranked) == 1:
        ((label, value),) = ranked
        if zh:
            return f"{metric} {'最低' if bottom else '最高'}的是 {label}：{fmt_num(value)}（共 {rows} 行{tie}）。"
        return f"{metric} was {'lowest' if bottom else 'highest'} at {label}: {fmt_num(value)} (of {rows} rows{tie})."
    listed = ("；" if zh else "; ").join(f"{i}. {label} {fmt_num(value)}" for i, (label, value) in enumerate(ranked, 1))
    if zh:
        return f"{metric} {'最低' if bottom else '最高'}的 {len(ranked)} 个：{listed}（共 {rows} 行{tie}）。"
    return f"The {len(ranked)} {'lowest' if bottom else 'highest'} {metric}: {listed} (of {rows} rows{tie})."


def _tie_beyond(metrics: dict[str, Any], ranked: list[tuple[Any, Any]], zh: bool) -> str:
    """What a cut hides: more rows or groups with the last listed value (a top 3 of six tied at 29 names
    three of them), said beside the list so the three are not read as the only ones."""
    ties = int(metrics.get("ties_beyond") or 0)
    if not ties:
        return ""
    value = fmt_num(ranked[-1][1])
    return f"；另有 {ties} 个同为 {value}，未列出" if zh else f"; {ties} more also have {value}, not listed"


def ranked_groups_headline(
    metric: str, group: str, agg: str, metrics: dict[str, Any], bottom: bool, zh: bool
) -> str | None:
    """'The 3 Customer with the lowest total Amount: 1. C05 12.3; 2. C17 40.1; 3. C02 55 (of 39 groups).'"""
    ranked = _ranked(metrics)
    if not ranked:
        return None
    listed = ("；" if zh else "; ").join(f"{i}. {label} {fmt_num(value)}" for i, (label, value) in enumerate(ranked, 1))
    tie = _tie_beyond(metrics, ranked, zh).lstrip("；; ")
    if zh:
        word = {"sum": "合计", "mean": "平均", "median": "中位数", "count": "计数"}.get(agg, agg)
        return f"按 {metric} {word}{'最低' if bottom else '最高'}的 {len(ranked)} 个 {group}：{listed}" + (
            f"（{tie}）。" if tie else "。"
        )
    word = {"sum": "total", "mean": "average", "median": "median", "count": "count of"}.get(agg, agg)
    return f"The {len(ranked)} {group} with the {'lowest' if bottom else 'highest'} {word} {metric}: {listed}" + (
        f" ({tie})." if tie else "."
    )


def period_headline(metric: str, agg: str, metrics: dict[str, Any], bottom: bool, zh: bool) -> str | None:
    """'2024-03 had the highest total Amount: 1,234.5 (then 2024-05 1,100; 2024-01 1,020).'"""
    ranked = _ranked(metrics)
    if not ranked:
        return None
    (first, value), rest = ranked[0], ranked[1:]
    then = ("；" if zh else "; ").join(f"{label} {fmt_num(v)}" for label, v in rest)
    if zh:
        word = "平均" if agg == "mean" else "合计"
        return f"{first} 的 {metric}{word}{'最低' if bottom else '最高'}：{fmt_num(value)}" + (
            f"（其次是 {then}）。" if then else "。"
        )
    word = "average" if agg == "mean" else "total"
    return f"{first} had the {'lowest' if bottom else 'highest'} {word} {metric}: {fmt_num(value)}" + (
        f" (then {then})." if then else "."
    )


def paired_headline(metric: str, metrics: dict[str, Any], groups: tuple[str, str] | None, zh: bool) -> str | None:
    """'Measured on the same 10 subjects, extra is on average 1.58 higher with group 2 than with group 1
    (paired t-test, p = 0.003: a difference this large would rarely happen by chance).'"""
    diff, n, p = _num(metrics, "mean_difference"), metrics.get("n"), _num(metrics, "p_value")
    if diff is None or p is None:
        return None
    first, second = groups or (("第一次", "第二次") if zh else ("the first measurement", "the second"))
    higher, lower = (first, second) if diff > 0 else (second, first)
    test = "配对 t 检验" if metrics.get("method") == "t" else "配对检验"
    if zh:
        return (
            f"在同一批 {n} 个对象上比较：{higher} 的 {metric} 平均比 {lower} 高 {fmt_num(abs(diff))}；"
            f"{_chance(p, zh)}（{test}，每个对象和自己比较）。"
        )
    test = "paired t-test" if metrics.get("method") == "t" else "paired test"
    return (
        f"Measured on the same {n} subjects, {metric} is on average {fmt_num(abs(diff))} higher with {higher} than "
        f"with {lower}; {_chance(p, zh)} ({test}: each subject is compared with itself)."
    )


STRENGTH = pair_list("strength")  # (English, Chinese), weakest first


def strength(r: float, zh: bool) -> str:
    """How strong a correlation is, in words: cut at |r| = 0.2, 0.4, 0.6 and 0.8 (as the correlation tool)."""
    return STRENGTH[sum(abs(r) >= c for c in (0.2, 0.4, 0.6, 0.8))][1 if zh else 0]


def relationship_headline(
    x: str, y: str, metrics: dict[str, Any], zh: bool, words: dict[str, str] | None = None
) -> str | None:
    """'Higher wind (Wind) tends to go with lower ozone (Ozone): a strong negative relationship (r = -0.60); a
    link this strong would rarely appear by chance (p < 0.001).' zh: '风（Wind）越大，臭氧（Ozone）往往越低（强负相关，
    r = -0.60）…'. The direction in the question's words for the two columns (`words`), then how strong it is."""
    r = _num(metrics, f"r.{y}~{x}") if f"r.{y}~{x}" in metrics else _num(metrics, f"r.{x}~{y}")
    p = _num(metrics, f"p_value.{y}~{x}") if f"p_value.{y}~{x}" in metrics else _num(metrics, f"p_value.{x}~{y}")
    if r is None or p is None:
        return None
    own = words if not _share_word(x, y) else None  # "花瓣的长度和宽度": the words are pieces of one phrase
    a, b, size = _called(x, own, zh), _called(y, own, zh), strength(r, zh)
    if zh:
        sign = "正" if r > 0 else "负"
        chance = (
            f"这么强的关联很少会偶然出现（{fmt_p(p)}）"
            if p < 0.05
            else f"这样的关联很可能只是偶然（{fmt_p(p)}），不能作为可靠证据"
        )
        a, b = (f"{name} " if name[-1].isascii() else name for name in (a, b))  # "Petal.Width 越大"
        if abs(r) < 0.2:
            return f"{a}和{b}几乎没有一起变化的趋势（{size}相关，r = {fmt_num(r, 3)}）；{chance}。"
        return f"{a}越大，{b}往往越{'高' if r > 0 else '低'}（{size}{sign}相关，r = {fmt_num(r, 3)}）；{chance}。"
    chance = (
        f"a link this strong would rarely appear by chance ({fmt_p(p)})"
        if p < 0.05
        else f"a link like this could easily appear by chance ({fmt_p(p)}), so it is not convincing evidence"
    )
    if abs(r) < 0.2:
        return f"{a[:1].upper()}{a[1:]} and {b} hardly move together ({size}, r = {fmt_num(r, 3)}); {chance}."
    return (
        f"Higher {a} tends to go with {'higher' if r > 0 else 'lower'} {b}: a {size} {'positive' if r > 0 else 'negative'} "
        f"relationship (r = {fmt_num(r, 3)}); {chance}."
    )


def _share_word(x: str, y: str) -> bool:
    """Names with a word in common (Petal.Length, Petal.Width)."""
    return bool(
        {w for w in re.split(r"[^a-z0-9]+", x.lower()) if len(w) >= 3} & set(re.split(r"[^a-z0-9]+", y.lower()))
    )


def _called(column: str, words: dict[str, str] | None, zh: bool) -> str:
    """A column as the question called it, with its name when that differs ("writing hand (Wr.Hnd)",
    "风速（Wind）"). An English word built on the name itself ("windy days" for Wind, "temperature" for
    Temp) adds nothing and may not read as a noun ("higher windy days"): the name is used."""
    word = (words or {}).get(column, "").strip()
    if not word or word.lower() == column.lower():
        return column
    if word.isascii():
        first = word.lower().split()[0]
        if zh or any(len(part) >= 3 and first.startswith(part) for part in re.split(r"[^a-z0-9]+", column.lower())):
            return column
    return f"{word}（{column}）" if zh else f"{word} ({column})"


def change_headline(later: str, earlier: str, metrics: dict[str, Any], zh: bool) -> str | None:
    """'From Systolic Before to Systolic After, the average change is -6.46 for Placebo and -3.35 for Drug (a
    difference of 3.11); a gap like this could easily happen by chance (p = 0.15) …'. The change (later -
    earlier) compared between groups, the largest first."""
    means = _by_prefix(metrics, "mean.")
    if len(means) < 2:
        return None
    ranked = sorted(means.items(), key=lambda kv: -abs(kv[1]))
    p = _num(metrics, "p_value")
    gap = abs(ranked[0][1] - ranked[1][1])
    if zh:
        listed = "，".join(f"{g} 平均变化 {fmt_num(v)}" for g, v in ranked[:LISTED])
        extra = f"（相差 {fmt_num(gap)}）" if len(ranked) == 2 else ""
        return f"从 {earlier} 到 {later}，{listed}{extra}；{_chance(p, zh)}。"
    parts = [f"{fmt_num(v)} for {g}" for g, v in ranked[:LISTED]]
    listed = f"{', '.join(parts[:-1])} and {parts[-1]}"
    extra = f" (a difference of {fmt_num(gap)})" if len(ranked) == 2 else ""
    return f"From {earlier} to {later}, the average change is {listed}{extra}; {_chance(p, zh)}."


def wide_paired_headline(
    first: str, second: str, metrics: dict[str, Any], zh: bool, change: bool = False
) -> str | None:
    """'On the same 30 rows, Systolic After is on average 8.13 lower than Systolic Before (lower in 27 of
    30 rows). A paired t-test, each row compared with itself: a gap this large would rarely happen by
    chance (p < 0.001).' Two columns measured on each row (wide_pairs): the mean of first - second,
    its direction, then the test. `change`: first is the later measurement of a before/after pair, so
    the Chinese says it rose or fell (比 … 提高了 / 降低了), the way a change is asked about."""
    diff, n, p = _num(metrics, "mean_difference"), metrics.get("n"), _num(metrics, "p_value")
    if diff is None or p is None or not _ok(n):
        return None
    count = metrics.get("n_positive" if diff > 0 else "n_negative")
    t_test = metrics.get("method") == "t"
    if zh:
        word = "高" if diff > 0 else "低"
        rows = f"（{n} 行中有 {count} 行更{word}）" if _ok(count) else ""
        if change:
            word = "提高了" if diff > 0 else "降低了"
        test = "配对 t 检验" if t_test else "配对检验"
        return (
            f"在同样的 {n} 行上，{first} 平均比 {second} {word} {fmt_num(abs(diff))}{rows}。"
            f"{test}（每行和自己比较）：{_chance(p, zh)}。"
        )
    word = "higher" if diff > 0 else "lower"
    rows = f" ({word} in {count} of {n} rows)" if _ok(count) else ""
    test = "A paired t-test" if t_test else "A paired test"
    return (
        f"On the same {n} rows, {first} is on average {fmt_num(abs(diff))} {word} than {second}{rows}. "
        f"{test}, each row compared with itself: {_chance(p, zh)}."
    )


def extreme_headline(metric: str, group: str, metrics: dict[str, Any], least: bool, zh: bool) -> str | None:
    """'casein and sunflower give the highest average weight (328.9 and 323.6); …' for "which X gives the most Y"."""
    means = _by_prefix(metrics, "mean.")
    if len(means) < 2:
        return None
    ranked = sorted(means.items(), key=lambda kv: kv[1], reverse=not least)
    (g1, v1), (g2, v2) = ranked[0], ranked[1]
    p = metrics.get("p_value")
    close = abs(v1 - v2) <= 0.05 * max(abs(v1), abs(v2), 1e-12)
    word_en, word_zh = ("lowest", "最低") if least else ("highest", "最高")
    last = ranked[-1]
    if zh:
        lead = (
            f"{g1} 和 {g2} 的平均 {metric} {word_zh}（{fmt_num(v1)} 和 {fmt_num(v2)}，两者很接近）"
            if close
            else f"{g1} 的平均 {metric} {word_zh}：{fmt_num(v1)}（其次 {g2} {fmt_num(v2)}）"
        )
        return f"{lead}；{last[0]} 在另一端（{fmt_num(last[1])}）。各{group}之间的差异：{_chance(p, zh)}。"
    lead = (
        f"{g1} and {g2} give the {word_en} average {metric} ({fmt_num(v1)} and {fmt_num(v2)}, close to each other)"
        if close
        else f"{g1} gives the {word_en} average {metric}: {fmt_num(v1)} (next: {g2}, {fmt_num(v2)})"
    )
    return f"{lead}; {last[0]} is at the other end ({fmt_num(last[1])}). Across {group}, {_chance(p, zh)}."


def group_averages_headline(metric: str, group: str, metrics: dict[str, Any], zh: bool) -> str | None:
    """'Average 费用 by 科室: 外科 378.7, 儿科 268.2, 眼科 242.4, 内科 233.3; …' when the question asks for each
    group's average ("每个科室的平均费用是多少？"): every average first, largest first, then whether they differ."""
    means = _by_prefix(metrics, "mean.")
    if len(means) < 2:
        return None
    listed = ("，" if zh else ", ").join(
        f"{g} {fmt_num(v)}" for g, v in sorted(means.items(), key=lambda kv: kv[1], reverse=True)
    )
    p = metrics.get("p_value")
    if zh:
        return f"各 {group} 的平均 {metric}：{listed}。各{group}之间的差异：{_chance(p, zh)}。"
    return f"Average {metric} by {group}: {listed}. Across {group}, {_chance(p, zh)}."


def named_group_headline(metric: str, group: str, metrics: dict[str, Any], named: str, zh: bool) -> str | None:
    """'Rain has the lowest average Sales: 4,646 (Sunny 5,471, Cloudy 5,394); …' when the question asks
    about one group of several ("下雨天生意会差一些吗"): that group first, where it stands, then the others."""
    means = _by_prefix(metrics, "mean.")
    if named not in means or len(means) < 3:
        return None
    ranked = sorted(means.items(), key=lambda kv: kv[1], reverse=True)
    place = [g for g, _ in ranked].index(named)
    others = [(g, v) for g, v in ranked if g != named]
    listed = ("，" if zh else ", ").join(f"{g} {fmt_num(v)}" for g, v in others)
    p = metrics.get("p_value")
    if zh:
        where = "最高" if place == 0 else "最低" if place == len(ranked) - 1 else "居中"
        return f"{named} 的平均 {metric} {where}：{fmt_num(means[named])}（{listed}）；各{group}之间的差异：{_chance(p, zh)}。"
    lead = (
        f"{named} has the {'highest' if place == 0 else 'lowest'} average {metric}: {fmt_num(means[named])}"
        if place in (0, len(ranked) - 1)
        else f"{named}'s average {metric}, {fmt_num(means[named])}, is in between"
    )
    return f"{lead} ({listed}); across {group}, {_chance(p, zh)}."


def drivers_headline(target: str, metrics: dict[str, Any], zh: bool) -> str | None:
    """'wt matters most for mpg: each 1 more wt goes with 3.67 lower mpg, other factors held fixed
    (p = 0.002). Next: hp (…). Together the factors account for 85% of the ups and downs in mpg.'
    Factors ranked by |t| (the clearest evidence); the F test follows, explained."""
    terms = [k[5:] for k in metrics if k.startswith("coef.") and k != "coef.const"]
    if not terms or not _ok(metrics.get("r_squared")):
        return None
    ranked = sorted(terms, key=lambda t: -abs(metrics.get(f"t.{t}") or 0.0))
    r2 = float(metrics["r_squared"])

    def effect(term: str) -> str:
        coef, p = _num(metrics, f"coef.{term}") or 0.0, _num(metrics, f"p_value.{term}")
        column, _, level = term.partition("=")
        weak = not (p is not None and p < 0.05)
        if zh:
            step = f"{column}为{level}（相对基准）时" if level else f"{column} 每增加 1"
            return (
                f"{step}，{target} 平均{'增加' if coef > 0 else '减少'} {fmt_num(abs(coef))}"
                f"（{fmt_p(p) if p is not None else ''}{'，不显著' if weak else ''}）"
            )
        step = (
            f"rows with {column} = {level} (against its first level) have"
            if level
            else f"each 1 more {column} goes with"
        )
        return (
            f"{step} {fmt_num(abs(coef))} {'higher' if coef > 0 else 'lower'} {target}"
            f" ({fmt_p(p) if p is not None else ''}{', not significant' if weak else ''})"
        )

    best, second = ranked[0], ranked[1] if len(ranked) > 1 else None
    f_stat, p_all = _num(metrics, "f_statistic"), _num(metrics, "p_value")
    df1, df2 = metrics.get("df_model"), metrics.get("df_resid")
    f_text = (
        f"F({fmt_num(df1)}, {fmt_num(df2)}) = {fmt_num(f_stat)}, {fmt_p(p_all)}"
        if f_stat is not None and p_all is not None
        else (fmt_p(p_all) if p_all is not None else "")
    )
    if zh:
        text = f"对 {target} 影响最明显的是 {best}：{effect(best)}，其他因素不变。"
        if second:
            text += f"其次是 {second}：{effect(second)}。"
        text += f"这些因素合起来可以解释 {target} 变化的约 {r2 * 100:.0f}%（R² = {fmt_num(r2, 3)}"
        text += f"；整体检验 {f_text}，表示这种关联不太可能是偶然）。" if f_text else "）。"
        return text
    text = f"The strongest predictor is {best}: {effect(best)}, other factors held fixed."
    if second:
        text += f" Next is {second}: {effect(second)}."
    text += f" Together these factors account for about {r2 * 100:.0f}% of the ups and downs in {target} (R² = {fmt_num(r2, 3)}"
    text += f"; overall test {f_text}: how unlikely such a fit is by chance)." if f_text else ")."
    return text


def dedupe_headline(metrics: dict[str, Any], dataset: str | None, zh: bool) -> str | None:
    removed, before, after = (metrics.get(k) for k in ("duplicate_rows_removed", "n_rows_before", "n_rows_after"))
    if not all(_ok(v) for v in (removed, before, after)):
        return None
    name = f"“{dataset}”" if dataset else ("数据" if zh else "the data")
    if zh:
        if not removed:
            return f"{name} 中没有完全重复的行（共 {fmt_num(before)} 行）。"
        return f"已删除 {fmt_num(removed)} 行完全重复的数据：{fmt_num(before)} 行 → {fmt_num(after)} 行，保存为 {name} 的新版本（原版本仍保留）。"
    if not removed:
        return f"There are no exact duplicate rows in {name} ({fmt_num(before)} rows)."
    return (
        f"Removed {fmt_num(removed)} duplicate rows: {fmt_num(before)} → {fmt_num(after)} rows, saved as a new version "
        f"of {name} (the previous version is kept)."
    )


def missing_headline(columns: list[str], metrics: dict[str, Any], dataset: str | None, zh: bool) -> str | None:
    """'Removed 4 rows with no Ozone value: 30 → 26 rows, saved as a new version of “air” (the previous
    version is kept).' From clean_data's counts when it dropped the rows missing a value."""
    removed, before, after = (metrics.get(k) for k in ("rows_removed_missing", "n_rows_before", "n_rows_after"))
    if not all(_ok(v) for v in (removed, before, after)):
        return None
    name = f"“{dataset}”" if dataset else ("数据" if zh else "the data")
    listed = ("、" if zh else ", ").join(columns[:6]) + ("…" if len(columns) > 6 else "")
    if zh:
        if not removed:
            return f"{name} 中没有 {listed} 为空的行（共 {fmt_num(before)} 行），无需删除。"
        return (
            f"已删除 {fmt_num(removed)} 行 {listed} 为空的数据：{fmt_num(before)} 行 → {fmt_num(after)} 行，"
            f"保存为 {name} 的新版本（原版本仍保留）。"
        )
    if not removed:
        return f"No row of {name} is missing {listed} ({fmt_num(before)} rows), so nothing was removed."
    return (
        f"Removed {fmt_num(removed)} rows with no {listed} value: {fmt_num(before)} → {fmt_num(after)} rows, saved as a "
        f"new version of {name} (the previous version is kept)."
    )


_OPERATIONS = pairs("operations")


def derive_headline(
    arguments: dict[str, Any], metrics: dict[str, Any], table: str | None, source: str | None, zh: bool
) -> str | None:
    """'Added the column “Systolic Before - Systolic After” (Systolic Before minus Systolic After) to all 30
    rows, saved as a new version of “bp” (the previous version is kept); it averages 7.23, from -2 to 19.'
    (`table`: the separate table it went to instead, when it did.)"""
    name, kind, columns, n = (
        arguments.get("new_column_name"),
        arguments.get("kind"),
        arguments.get("columns") or [],
        metrics.get("n"),
    )
    if not (name and kind in _OPERATIONS and len(columns) == 2 and _ok(n)):
        return None
    word = _OPERATIONS[kind][1 if zh else 0]
    missing = int(metrics.get("n_missing") or 0)
    mean, low, high = (_num(metrics, k) for k in ("mean", "min", "max"))
    if zh:
        where = (
            f"，保存为新表“{table}”（“{source}”保持不变）"
            if table and source
            else f"，保存为“{source}”的新版本（原版本仍保留）"
            if source
            else ""
        )
        gaps = f"；其中 {fmt_num(missing)} 行无法计算" if missing else ""
        spread = (
            f"；平均 {fmt_num(mean)}，范围 {fmt_num(low)} 至 {fmt_num(high)}" if None not in (mean, low, high) else ""
        )
        return f"已为全部 {fmt_num(n)} 行新增列“{name}”（{columns[0]} {word} {columns[1]}）{where}{gaps}{spread}。"
    where = (
        f", in the new table “{table}” (“{source}” stays as it was)"
        if table and source
        else f", saved as a new version of “{source}” (the previous version is kept)"
        if source
        else ""
    )
    gaps = f"; {fmt_num(missing)} rows could not be computed" if missing else ""
    spread = (
        f"; it averages {fmt_num(mean)}, from {fmt_num(low)} to {fmt_num(high)}"
        if None not in (mean, low, high)
        else ""
    )
    return (
        f"Added the column “{name}” ({columns[0]} {word} {columns[1]}) to all {fmt_num(n)} rows{where}{gaps}{spread}."
    )


def two_group_headline(metric: str, group: str, metrics: dict[str, Any], lead: str | None, zh: bool) -> str | None:
    """'Average bwt is lower for smoke = 1: 2,772 vs 3,056 for smoke = 0 (a difference of 283.8); a gap
    this large would rarely happen by chance (p = 0.007).' The group the question names first leads
    (for a yes/no column, the yes group)."""
    means = _by_prefix(metrics, "mean.")
    if len(means) != 2:
        return None
    names = list(means)
    first = lead if lead in means else next((g for g in names if says_yes(g)), names[0])
    second = next(g for g in names if g != first)
    a, b, p = means[first], means[second], metrics.get("p_value")
    coded = all(says_yes(g) or says_no(g) for g in names)

    def label(g: str) -> str:
        return f"{group} = {g}" if coded else g

    if zh:
        word = "更低" if a < b else "更高"
        return (
            f"{label(first)} 的平均 {metric} {word}：{fmt_num(a, 5)}，而 {label(second)} 为 {fmt_num(b, 5)}"
            f"（相差 {fmt_num(abs(a - b))}）；{_chance(p, zh)}。"
        )
    word = "lower" if a < b else "higher"
    return (
        f"Average {metric} is {word} for {label(first)}: {fmt_num(a, 5)} vs {fmt_num(b, 5)} for {label(second)} "
        f"(a difference of {fmt_num(abs(a - b))}); {_chance(p, zh)}."
    )


def share_headline(metric: str, group: str, metrics: dict[str, Any], zh: bool) -> str | None:
    """'Online brings 46.8% of all Revenue (370,375); Store 34.5%, Partner 18.7%.' From plot_pie's shares."""
    if not (ranked := _ranked_shares(metrics, zh)):
        return None
    top, first, listed, total = ranked
    grand = f"（合计 {fmt_num(total)}）" if zh and total else (f" (all together {fmt_num(total)})" if total else "")
    if zh:
        return f"{top} 占 {metric} 总量的比例最大：{_pct(first)}{grand}" + (f"；其余：{listed}。" if listed else "。")
    return f"{top} has the largest share of total {metric}: {_pct(first)}{grand}" + (
        f"; then {listed}." if listed else "."
    )


def _ranked_shares(metrics: dict[str, Any], zh: bool) -> tuple[str, float, str, float | None] | None:
    """plot_pie's shares: the largest (its name and share), the rest listed by size, and the total."""
    shares = _by_prefix(metrics, "share.")
    if not shares:
        return None
    ranked = sorted(shares.items(), key=lambda kv: -kv[1])
    (top, first), rest = ranked[0], ranked[1:]
    listed = ("，" if zh else ", ").join(f"{g} {_pct(v)}" for g, v in rest)
    return top, first, listed, _num(metrics, "total")


def rows_share_headline(column: str, metrics: dict[str, Any], zh: bool) -> str | None:
    """'Of the 1,200 rows, Returning (Customer Type) is the largest share: 58.8%; then New 41.2%.' Each
    value's share of the rows, from plot_pie's shares of a column alone: a count of rows said as one
    ("占 行数 总量" is no one's Chinese)."""
    if not (ranked := _ranked_shares(metrics, zh)):
        return None
    top, first, listed, total = ranked
    if zh:
        of = f"（共 {fmt_num(total)} 行）" if total else ""
        return f"{column} 中 {top} 的行数占比最大：{_pct(first)}{of}" + (f"；其余：{listed}。" if listed else "。")
    of = f"Of the {fmt_num(total)} rows, " if total else ""
    return f"{of}{top} ({column}) is the largest share: {_pct(first)}" + (f"; then {listed}." if listed else ".")


FORECAST_LISTED = 6  # periods listed one by one; a longer forecast shows its first three and its last


def forecast_headline(metric: str, metrics: dict[str, Any], zh: bool) -> str | None:
    """'Forecast of Revenue for the next 3 months: 2025-01 about 2,251,578 (95% interval 1,980,447 to
    2,559,829), 2025-02 …; about 7,391,592 in total. When this method forecast the last 3 stretches of
    known history, it was off by 6.2% on average (MAE 166,296).' From the forecast tool's metrics
    (forecast./lower./upper. per period, horizon, freq); None when they are missing."""
    labels = [k.split(".", 1)[1] for k in metrics if k.startswith("forecast.")]
    if not labels or "horizon" not in metrics or metrics.get("freq") not in FREQ_WORDS:
        return None
    h, (unit_en, unit_zh) = int(metrics["horizon"]), FREQ_WORDS[metrics["freq"]]
    level = f"{metrics.get('interval_level', 0.95) * 100:.0f}%"
    shown = labels if len(labels) <= FORECAST_LISTED else [*labels[:3], None, labels[-1]]
    periods = [_forecast_period(label, metrics, level, zh) if label else "…" for label in shown]
    excluded, last = metrics.get("excluded_periods"), metrics.get("last_period")
    if excluded and zh:
        left_out = f"{excluded} 的数据不完整，已排除；预测从最后一个完整的{unit_zh}（{last}）之后开始。"
    elif excluded:
        left_out = (
            f"{excluded} is only partly covered by the data, so it was left out; the forecast starts after the "
            f"last complete {unit_en} ({last}). "
        )
    else:
        left_out = ""
    if zh:
        span = f"未来 {h} {'个' if unit_zh in ('月', '季度') else ''}{unit_zh}"
        total = f"；合计约 {fmt_num(metrics['forecast_total'])}" if h > 1 and "forecast_total" in metrics else ""
        return f"{left_out}{metric} {span}的预测：{'，'.join(periods)}{total}。{_backtest(metrics, zh)}"
    span = f"the next {h} {unit_en}s" if h > 1 else f"the next {unit_en}"
    total = f"; about {fmt_num(metrics['forecast_total'])} in total" if h > 1 and "forecast_total" in metrics else ""
    return f"{left_out}Forecast of {metric} for {span}: {', '.join(periods)}{total}. {_backtest(metrics, zh)}"


def _forecast_period(label: str, metrics: dict[str, Any], level: str, zh: bool) -> str:
    value, low, high = (metrics.get(f"{k}.{label}") for k in ("forecast", "lower", "upper"))
    bounded = all(isinstance(v, (int, float)) and v == v for v in (low, high))  # v == v: not NaN
    if zh:
        interval = f"（{level} 区间 {fmt_num(low)} 至 {fmt_num(high)}）" if bounded else ""
        return f"{label} 约 {fmt_num(value)}{interval}"
    interval = f" ({level} interval {fmt_num(low)} to {fmt_num(high)})" if bounded else ""
    return f"{label} about {fmt_num(value)}{interval}"


def _backtest(metrics: dict[str, Any], zh: bool) -> str:
    """How far off the method was on known history, as the forecast tool says it."""
    mape, mae, folds = metrics.get("backtest_mape"), metrics.get("backtest_mae"), metrics.get("backtest_folds")
    if not (isinstance(mape, (int, float)) and mape == mape and folds):
        return (
            "历史数据太少，无法回测预测准确度；请仅作粗略参考。"
            if zh
            else "There was too little history to backtest the forecast; treat it as rough."
        )
    if zh:
        return f"用该方法预测最近 {folds} 段已知历史时，平均误差为 {mape:.1f}%（MAE {fmt_num(mae)}）。"
    return (
        f"When this method forecast the last {folds} stretches of known history, it was off by {mape:.1f}% "
        f"on average (MAE {fmt_num(mae)})."
    )
