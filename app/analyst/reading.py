"""Whether the built-in analyst's reading of the question was named by the question or assumed
(issue 24 point 5: the badge covers the reading).

"Checked" (the evidence card's mark) is about the arithmetic: the numbers of a claim are the ones its
analysis returned. Whether the analysis is about what the question asked is a separate matter, and gets
its own mark. A reading is *assumed* when a column of one of the roles a reader checks first (the
measure, the groups, the filter) came from

- a default (`How` "default"): the question names nothing for the role and a convenient column was
  taken, or
- a weak match (`roles.WEAK_KINDS`, today "partial"): the question names only part of the column's name
  (销售 of the merged-header group 销售情况 taking its first leaf 销量; "pass" of n_passed).

"loose" (a stem or abbreviation of the whole name, every character of a Chinese name in order) reads
every part of the name, so it counts as named, like a synonym, a named value and the user's own answer
("answer"). Dates and a regression's other factors are not in the mark: a trend has one date column,
and "what drives X" takes the other numbers by design.

An assumed reading lowers the evidence to medium confidence (never "high confidence · checked"), and
the answer says what it assumed and which other columns could have filled the role.
"""

from __future__ import annotations

from typing import Any

from app.analyst.role_question import candidates
from app.understanding.role_sources import Provenance, Source
from app.understanding.roles import WEAK_KINDS

READ_ROLES = ("outcome", "group", "filter")  # the measure, the groups, the filter
MAX_OTHERS = 3  # other readings offered per assumed role


def assumed_sources(provenance: Provenance | None) -> list[Source]:
    """The sources of the plan's measure, groups and filter that the question did not name: a default
    or a weak (partial) match."""
    if provenance is None:
        return []
    return [s for s in provenance.sources if s.role in READ_ROLES and (s.default or s.how in WEAK_KINDS)]


def reading_assumed(provenance: Provenance | None) -> bool:
    """Whether the plan's reading rests on an assumption (see the module's docstring)."""
    return bool(assumed_sources(provenance))


_ROLE_NAMES = {  # role -> (English with its verb, its pronoun, Chinese), as the "Assumed:" sentence names it
    "outcome": ("the measure is", "it", "度量"),
    "group": ("the groups are", "them", "分组"),
    "filter": ("the filter is", "it", "筛选条件"),
}


def assumed_lines(provenance: Provenance | None, metric: str | None, zh: bool) -> list[str]:
    """One sentence per assumed role: what was assumed, why, and the other readings the data offers
    ("Assumed: the measure is **销量** — the question names no column for it. Other reading: 销售额.")."""
    lines = []
    for source in assumed_sources(provenance):
        used = ("、" if zh else ", ").join(f"**{c}**" for c in source.columns[:4])
        en_role, pronoun, zh_role = _ROLE_NAMES[source.role]
        if zh:
            why = "问题没有指明这一列" if source.default else "问题只提到了列名的一部分"
            line = f"假定：{zh_role}为 {used}——{why}。"
        else:
            why = (
                f"the question names no column for {pronoun}"
                if source.default
                else "the question names only part of the column's name"
            )
            line = f"Assumed: {en_role} {used} — {why}."
        others = _other_readings(source, provenance, metric)
        if others:
            listed = ("、" if zh else ", ").join(others)
            line += f"另一种解读：{listed}。" if zh else f" Other reading: {listed}."
        lines.append(line)
    return lines


def _other_readings(source: Source, provenance: Provenance | None, metric: str | None) -> list[str]:
    """Columns that could fill the role instead, as role_question would offer them (a filter has none:
    its values were read from the question)."""
    if provenance is None or source.role not in ("outcome", "group"):
        return []
    found, _ = candidates(source.role, provenance.columns, metric if source.role == "group" else None)
    return [c["name"] for c in found if c["name"] not in source.columns][:MAX_OTHERS]


def says_the_defaults(provenance: Provenance | None) -> bool:
    """Whether the "Assumed:" sentences say all that role_question.defaults_sentence would: no words of
    the question went unmatched (that sentence quotes them) and every default is a measure or groups
    (not a date or a regression's factors, which the mark leaves out)."""
    if provenance is None or provenance.unmatched:
        return False
    return all(s.role in READ_ROLES for s in provenance.defaults())


def reading_record(provenance: Provenance | None, metric: str | None, zh: bool) -> dict[str, Any]:
    """The reading as the run records it (report.json's `reading`): {"status": "named" | "assumed",
    "assumed": [the answer's "Assumed:" sentences]}."""
    lines = assumed_lines(provenance, metric, zh)
    return {"status": "assumed" if lines else "named", "assumed": lines}
