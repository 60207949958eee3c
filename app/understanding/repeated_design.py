"""Long-format repeated measures (issue 14): the same subjects measured at several times, one row per
subject and time (ChickWeight: weight by Chick and Time; a trial's score by patient_id and visit). A
question about the change between two of the times ("weighed at birth and again on day 21", "从第1次
到第4次访视") is a paired comparison of those two times, subject by subject — not a correlation of
the id with the measure. Read from the profile: column names, distinct counts and value ranges."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from app.understanding import vocabulary
from app.understanding.profile_reading import NUMERIC
from app.understanding.text import lemma

_FILE = "designs"  # vocabulary/designs.toml
_TIME_NAME = re.compile(rf"^(?:{vocabulary.alternation(_FILE, 'time_names')})$", re.I)
_SUBJECT_NAME = vocabulary.regex(
    _FILE, "subject_names", re.I, ends_in_id=r"(?:^|[_ .])id$", starts_with_id=r"^id(?:$|[_ .])"
)
# The change between two occasions: "again", "gain", "at birth", "from day 0 to day 21", "再次", "增加了多少".
CHANGE_CUE = vocabulary.regex(_FILE, "repeated_change_cue", re.I)
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.])")


@dataclass(frozen=True)
class Repeated:
    """value measured on each subject at two of the times: the later one minus the earlier one."""

    value: str
    subject: str
    time: str
    earlier: str
    later: str


def repeated_design(question: str, dataset: dict[str, Any], named: list[str]) -> Repeated | None:
    """The repeated design a change question asks about, when the table has one: a time column (named
    like one, a few whole-number values), a subject column that repeats across times (an id first, then
    one named like a subject, then the thing the question names), and a measurement the question names."""
    if not CHANGE_CUE.search(question):
        return None
    columns = [c for c in dataset.get("columns", []) if not c.get("pii")]
    rows = dataset.get("rows") or 0
    times = [
        c
        for c in columns
        if _TIME_NAME.match(c["name"].strip())
        or _TIME_NAME.match(lemma(c["name"]))
        and c["type"] in NUMERIC
        and 2 <= (c.get("distinct") or 0) <= 50
        and c.get("maximum") is not None
    ]
    for time in times:
        subjects = sorted(
            (c for c in columns if c is not time and _repeats(c, time, rows)),
            key=lambda c: (c["type"] != "identifier", not _SUBJECT_NAME.search(c["name"]), c["name"] not in named),
        )
        kinds = {c["name"]: c["type"] for c in columns}
        values = [
            n for n in named if n not in (time["name"], *(s["name"] for s in subjects)) and kinds.get(n) in NUMERIC
        ]
        if subjects and values:
            earlier, later = _occasions(question, time)
            return Repeated(values[0], subjects[0]["name"], time["name"], earlier, later)
    return None


def _repeats(column: dict[str, Any], time: dict[str, Any], rows: int) -> bool:
    """A subject id: fewer distinct values than rows (each appears at several times), and about as
    many rows as subjects x times: no more (each subject at most once per time), and at least half
    (some missed times). A measurement's many values fit neither."""
    distinct, cells = column.get("distinct") or 0, (column.get("distinct") or 0) * (time.get("distinct") or 0)
    return 3 <= distinct < rows and cells / 2 <= rows <= cells


def _occasions(question: str, time: dict[str, Any]) -> tuple[str, str]:
    """The two times compared: the values the question names within the column's range ("day 21");
    the first time for "at birth"/"baseline"; else the first and the last."""
    low, high = float(time.get("minimum") or 0.0), float(time["maximum"])
    named = sorted({float(n) for n in _NUMBER.findall(question) if low <= float(n) <= high})
    if len(named) >= 2:
        pair = named[0], named[-1]
    elif named and named[0] != low:  # "again on day 21": from the first time on
        pair = low, named[0]
    elif named:
        pair = named[0], high
    else:
        pair = low, high
    return _label(pair[0]), _label(pair[1])


def _label(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
