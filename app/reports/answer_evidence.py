"""Which recorded evidence the answer states, and which charts answer it: one choice for the answer card
on the run page (app/web/answer_result.py) and the report's first pages (app/reports/first_pages.py),
so the page and every download lead with the same result and the same chart.

The evidence is chosen from the answer's own words, never from the tools that ran: the claim its headline
(a bold line) quotes; else a claim it states word for word in its opening; else the claim whose numbers
its opening shares most (a model words a claim its own way but keeps its numbers); else a claim it states
anywhere; else the only evidence there is. When none of these holds, nothing is claimed to answer it.
Claims sharing as many numbers (a p < 0.001 that several tests report) are told apart by the words they
share with it: the headline about the stores leads with the comparison of stores, not a correlation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, TypeVar

BODY_FIGURES = 2  # at most this many charts lead: the answer's own, not every plot made
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__", re.S)
_LATIN_WORD = re.compile(r"[^\W\d_]{2,}", re.ASCII)
_HAN_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")

Item = Mapping[str, Any]
# the callers' own item types come back (the report's dicts, the card's mappings)
E = TypeVar("E", bound=Item)
F = TypeVar("F", bound=Item)


def plain(text: str) -> str:
    """Text without its Markdown emphasis and with single spaces, for comparing words."""
    return re.sub(r"\s+", " ", text.replace("**", "").replace("__", "")).strip()


def answer_evidence(answer: str, evidence: Sequence[E]) -> list[E]:
    """The evidence items the answer states (see the module's note), the headline's first; [] when
    the answer states none of several."""
    headlines = [plain(a or b) for a, b in _BOLD.findall(answer)]
    claims = [plain(str(e.get("claim") or "")) for e in evidence]

    def quoted_by(n: int) -> int | None:
        """The first headline that quotes claim n (the first may also be a shortened claim)."""
        claim = claims[n]
        if not claim:
            return None
        if headlines and headlines[0] and headlines[0] in claim:
            return 0
        return next((h for h, line in enumerate(headlines) if claim in line), None)

    quoted = sorted((h, n) for n in range(len(evidence)) if (h := quoted_by(n)) is not None)
    if quoted:  # a compound question's parts in the order its headlines state them
        return [evidence[n] for _, n in quoted]
    opening = _opening(answer)
    stated = _stated_in(plain(opening), claims)
    if stated is not None:
        return [evidence[stated]]
    said = " ".join(headlines) or opening
    wanted, words = set(_NUMBER.findall(said)), _word_pieces(said)
    scored = [
        (len(wanted & set(_NUMBER.findall(claim := str(e.get("claim") or "")))), len(words & _word_pieces(claim)), n)
        for n, e in enumerate(evidence)
    ]
    best = max(scored, default=(0, 0, -1))
    if best[0] > 0:
        return [evidence[best[2]]]
    stated = _stated_in(plain(answer), claims)
    if stated is not None:
        return [evidence[stated]]
    return [evidence[0]] if len(evidence) == 1 else []


def _word_pieces(text: str) -> set[str]:
    """The words of a text to compare two wordings by: Latin words in lower case, and each pair of
    neighbouring Chinese characters (Chinese is written without spaces)."""
    pieces = {w.lower() for w in _LATIN_WORD.findall(text)}
    for run in _HAN_RUN.findall(text):
        pieces.update(run[i : i + 2] for i in range(len(run) - 1))
    return pieces


def last_result(evidence: Sequence[E], has_rows: Callable[[E], bool], drawn: Collection[str]) -> E | None:
    """What is shown when the answer states none of the recorded claims: the last evidence the run
    recorded that has a result to show, a table of rows (`has_rows`: each page's own table builder) or
    a chart drawn by a call it cites (`drawn`: the ids of the calls that drew one). The card and the
    report both ask this, so both show the same result, each labelled as the last one recorded."""
    for item in reversed(evidence):
        if has_rows(item) or set(drawn) & {str(c) for c in item.get("tool_call_ids") or []}:
            return item
    return None


def _stated_in(text: str, claims: Sequence[str]) -> int | None:
    """The claim `text` states first, word for word."""
    placed = sorted((at, n) for n, claim in enumerate(claims) if claim and (at := text.find(claim)) >= 0)
    return placed[0][1] if placed else None


def _opening(answer: str) -> str:
    """The answer's first paragraph that says something (not a heading)."""
    for block in re.split(r"\n\s*\n", answer):
        text = block.strip()
        if text and not text.startswith("#"):
            return text
    return ""


def call_columns(call: Mapping[str, Any] | None) -> frozenset[str]:
    """The data columns a tool call names (value_column, group_columns, columns, x_column, ...)."""
    names: set[str] = set()
    for key, value in ((call or {}).get("arguments") or {}).items():
        if not (key == "columns" or key.endswith(("_column", "_columns"))):
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item:
                names.add(item)
    return frozenset(names)


def cited_by(evidence: Sequence[Item]) -> dict[str, str]:
    """Each cited tool call's evidence id: the first item that cites it (as report.json's figures record
    their `evidence_id`, app/reports/builder.py)."""
    cited: dict[str, str] = {}
    for item in evidence:
        for call_id in item.get("tool_call_ids") or []:
            cited.setdefault(str(call_id), str(item.get("id")))
    return cited


def answer_figures(
    figures: Sequence[F],
    chosen: Sequence[Item],
    evidence: Sequence[Item],
    calls: Mapping[str, Mapping[str, Any]],
) -> list[F]:
    """The charts of the answer: those made by the calls its evidence cites, then a plot of the same
    columns (a bar chart of the groups just compared). A plot over only some of them (a histogram of
    the measure alone) is left for later when a fuller one exists; a chart that backs another piece of
    evidence belongs to that one. A figure names the call that drew it (`tool_call_id`) and, when it
    has one, the evidence that cites it (`evidence_id`; else the citing evidence is looked up)."""
    cited = cited_by(evidence)

    def owner(figure: Item) -> str | None:
        return figure.get("evidence_id") or cited.get(str(figure.get("tool_call_id")))

    chosen_ids = {str(e.get("id")) for e in chosen}
    other_ids = {str(e.get("id")) for e in evidence} - chosen_ids
    own = [f for f in figures if owner(f) in chosen_ids]
    if own:  # the answer's own chart says it; a plot of some of its columns would only repeat them
        return own[:BODY_FIGURES]
    columns = [
        cols
        for e in chosen
        for call_id in e.get("tool_call_ids") or []
        if (cols := call_columns(calls.get(str(call_id))))
    ]
    fits: list[tuple[int, F]] = []
    for figure in figures:
        if owner(figure) in chosen_ids or owner(figure) in other_ids:
            continue
        drawn = call_columns(calls.get(str(figure.get("tool_call_id"))))
        if drawn and any(drawn <= cols for cols in columns):
            fits.append((len(drawn), figure))
    fullest = max((size for size, _ in fits), default=0)
    return [f for size, f in fits if size == fullest][:BODY_FIGURES]
