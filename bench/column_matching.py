"""How well the question's words reach the columns: the rules, the embedding matcher, and both
(issue 24 point 1). Usage: `PYTHONPATH=$PWD python bench/column_matching.py [--sweep] [--bridge] [--takes] [--show]`.

Sets: the TRAINING sets only (data/eval/tasks.json, holdout.json, holdout2-4.json, holdout7.json);
the sealed held-out sets are never read.

Ground truth: a task's expected columns are the entries of its facts' `mentions` that are a column
of one of its files (the name, case-insensitive, or the leaf of a merged "group / leaf" header):
the expected answer names them because the analysis is about them. A task whose mentions name no
column (a value, a number) adds nothing.

Measured per expected column:
- rules: roles.column_mentions names it (any kind), or roles.named_values names one of its values;
- embedding@k: it is among the k best columns (app.understanding.semantic.ranked) of some content
  phrase of the question, phrases read with no rule at all (role_sources.unmatched_words with no
  column spans: the question's content words, the dataset's name and values left out);
- rules+embedding: the rules name it, or a phrase the rules left unmatched (the plan's columns
  taken as used) has it as its confident match (semantic.best_column: MIN_SCORE, MIN_MARGIN) among
  semantic.candidate_columns, as the analyst takes it.
A confident match to a column not expected is a wrong take (the analyst would assume the wrong
column); --sweep prints, for a grid of thresholds, the expected columns won and the wrong takes,
from which semantic.py's MIN_SCORE and MIN_MARGIN were chosen; --bridge the same for the
dictionary bridge (bilingual.py): semantic.BRIDGE_BONUS from 0 (off) up, with and without
BRIDGE_ALONE (a gloss found whole on one column takes it by itself).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.understanding import semantic  # noqa: E402
from app.understanding.dataset_choice import with_values  # noqa: E402
from app.understanding.role_sources import semantic_mentions, unmatched_words  # noqa: E402
from app.understanding.roles import column_mentions, named_values  # noqa: E402
from app.understanding.words import SYNONYMS  # noqa: E402

SETS = (
    "tasks",
    "holdout",
    "holdout2",
    "holdout3",
    "holdout4",
    "holdout7",
    "holdout8",
)  # never the sealed ones (5, 6, 9-12)


@dataclass
class Case:
    task: str
    question: str
    dataset: str
    columns: list[str]
    expected: list[str]
    ruled: list[str]  # the columns the rules name (by their names or their values)
    candidates: list[str]  # the columns an unmatched phrase may mean (semantic.candidate_columns)
    left: list[str]  # the phrases the rules leave unmatched
    content: list[str]  # the content phrases with no rule applied
    summary: list[dict[str, Any]]  # the column summaries
    mentions: list[Any]  # the rules' mentions (roles.Mention)
    ranks: dict[str, list[semantic.Candidate]] = field(default_factory=dict)  # content phrase: all columns
    left_ranks: dict[str, list[semantic.Candidate]] = field(default_factory=dict)  # left phrase: candidates


def _summary(path: Path) -> dict[str, Any]:
    from app.ingest.pipeline import load_table
    from app.workspaces import LEVELLED

    table = load_table(path)
    columns = []
    for c in table.info["columns"]:
        column = {"name": c["name"], "type": c["type"], "pii": c.get("pii")}
        if c["type"] in LEVELLED and c["name"] in table.frame.columns:
            column["levels"] = int(table.frame[c["name"]].nunique(dropna=True))
        columns.append(column)
    return with_values({"name": path.stem, "columns": columns}, table.frame)


def _leaf(name: str) -> str:
    return name.split(" / ")[-1].strip().lower()


def cases() -> list[Case]:
    found: list[Case] = []
    summaries: dict[str, dict[str, Any]] = {}
    for set_name in SETS:
        for task in json.loads((ROOT / f"data/eval/{set_name}.json").read_text())["tasks"]:
            if task.get("before"):
                continue  # a follow-up reads its root question's columns
            mentions = {str(m).lower() for f in task["facts"] for m in f.get("mentions", [])}
            for file in task["files"]:
                if file not in summaries:
                    try:
                        summaries[file] = _summary(ROOT / file)
                    except Exception as error:  # noqa: BLE001  # a file the reader refuses: not a case
                        print(f"skip {file}: {error}", file=sys.stderr)
                        summaries[file] = {"name": "", "columns": []}
                summary = summaries[file]
                columns = [c for c in summary["columns"] if not c.get("pii")]
                expected = [c["name"] for c in columns if c["name"].lower() in mentions or _leaf(c["name"]) in mentions]
                if not expected:
                    continue
                question = task["question"]
                mentioned = column_mentions(question, columns, SYNONYMS)
                spans = [(m.start, m.end, m.name) for m in mentioned]
                by_value, _ = named_values(question, columns, spans)
                ruled = list(dict.fromkeys([*(m.name for m in mentioned), *([by_value] if by_value else [])]))
                extra = (summary["name"],)
                found.append(
                    Case(
                        f"{set_name}:{task['id']}",
                        question,
                        summary["name"],
                        [c["name"] for c in columns],
                        expected,
                        ruled,
                        semantic.candidate_columns(question, columns, set(ruled)),
                        unmatched_words(question, columns, spans, extra, tuple(ruled)),
                        unmatched_words(question, columns, [], extra),
                        columns,
                        mentioned,
                    )
                )
    return found


def rank_all(all_cases: list[Case]) -> float:
    """Rank the columns for every phrase; the seconds per phrase."""
    started, count = time.perf_counter(), 0
    for case in all_cases:
        for phrase in case.content:
            case.ranks[phrase] = semantic.ranked(phrase, case.columns)
            count += 1
        for phrase in case.left:
            case.left_ranks[phrase] = semantic.ranked(phrase, case.candidates)
            count += 1
    return (time.perf_counter() - started) / max(count, 1)


def _taken(case: Case, score: float, margin: float) -> list[str]:
    """The columns the analyst would take for the phrases the rules left, as it takes them
    (role_sources.semantic_mentions, with these thresholds)."""
    kept = semantic.MIN_SCORE, semantic.MIN_MARGIN
    semantic.MIN_SCORE, semantic.MIN_MARGIN = score, margin
    try:
        found = semantic_mentions(case.question, case.summary, case.mentions, (case.dataset,))
        return [m.name for m in found if m.kind == "semantic"]
    finally:
        semantic.MIN_SCORE, semantic.MIN_MARGIN = kept


def tally(all_cases: list[Case], score: float, margin: float) -> dict[str, int]:
    t = {"expected": 0, "rules": 0, "emb@1": 0, "emb@3": 0, "both": 0, "won": 0, "wrong": 0}
    for case in all_cases:
        taken = _taken(case, score, margin)
        t["wrong"] += sum(name not in case.expected for name in taken)
        for name in case.expected:
            t["expected"] += 1
            t["rules"] += name in case.ruled
            t["emb@1"] += any(r and r[0].name == name for p in case.content if (r := case.ranks[p]))
            t["emb@3"] += any(name in [c.name for c in case.ranks[p][:3]] for p in case.content)
            t["both"] += name in case.ruled or name in taken
            t["won"] += name not in case.ruled and name in taken
    return t


def main() -> None:
    started = time.perf_counter()
    semantic.embed(["warm up"], query=True)
    load = time.perf_counter() - started
    all_cases = cases()
    per_phrase = rank_all(all_cases)
    t = tally(all_cases, semantic.MIN_SCORE, semantic.MIN_MARGIN)
    n = t["expected"]
    print(f"{len(all_cases)} cases, {n} expected columns (sets: {', '.join(SETS)})")
    print(f"model load {load:.2f} s; {per_phrase * 1000:.1f} ms per phrase ranked (headers cached)")
    print(f"{'method':<34}{'top-1':>8}{'top-3':>8}")
    print(f"{'(a) rules':<34}{t['rules'] / n:>8.1%}{'':>8}")
    print(f"{'(b) embedding alone':<34}{t['emb@1'] / n:>8.1%}{t['emb@3'] / n:>8.1%}")
    print(f"{'(c) rules, then embedding':<34}{t['both'] / n:>8.1%}{'':>8}")
    print(
        f"thresholds score >= {semantic.MIN_SCORE}, margin >= {semantic.MIN_MARGIN}: "
        f"{t['won']} columns won beyond the rules, {t['wrong']} wrong takes"
    )
    if "--sweep" in sys.argv:
        print(f"\n{'score':>6}{'margin':>8}{'won':>6}{'wrong':>7}{'won-2*wrong':>13}")
        for score in (0.80, 0.81, 0.82, 0.83, 0.84, 0.85, 0.86, 0.88):
            for margin in (0.02, 0.03, 0.04, 0.05, 0.06, 0.08):
                s = tally(all_cases, score, margin)
                print(f"{score:>6.2f}{margin:>8.2f}{s['won']:>6}{s['wrong']:>7}{s['won'] - 2 * s['wrong']:>13}")
    if "--bridge" in sys.argv:  # the dictionary bridge (bilingual.py): off, as a bonus, alone
        kept = semantic.BRIDGE_BONUS, semantic.BRIDGE_ALONE
        print(f"\n{'bonus':>6}{'alone':>7}{'won':>6}{'wrong':>7}{'won-2*wrong':>13}")
        for bonus in (0.0, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.10):
            for alone in (False, True):
                semantic.BRIDGE_BONUS, semantic.BRIDGE_ALONE = bonus, alone
                s = tally(all_cases, semantic.MIN_SCORE, semantic.MIN_MARGIN)
                print(f"{bonus:>6.2f}{alone!s:>7}{s['won']:>6}{s['wrong']:>7}{s['won'] - 2 * s['wrong']:>13}")
        semantic.BRIDGE_BONUS, semantic.BRIDGE_ALONE = kept
    if "--takes" in sys.argv:
        for case in all_cases:
            for name in _taken(case, semantic.MIN_SCORE, semantic.MIN_MARGIN):
                mark = "expected" if name in case.expected else "NOT EXPECTED"
                print(f"take {case.task}: {case.question} -> {name} {mark}")
    if "--show" in sys.argv:
        for case in all_cases:
            missed = [c for c in case.expected if c not in case.ruled]
            if not case.left and not missed:
                continue
            print(f"\n{case.task}: {case.question}\n  expected {case.expected}; rules {case.ruled}")
            for phrase in case.left:
                top = ", ".join(f"{c.name} {c.score:.3f}" for c in case.left_ranks[phrase][:3])
                print(f"  left {phrase!r}: {top}")


if __name__ == "__main__":
    main()
