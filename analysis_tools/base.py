"""The values every tool deals in: its context, its result, and structured user errors.

A tool never raises for a user mistake: it raises `ToolError` internally (or a helper does),
and the runner turns it into `ToolResult(ok=False, error={...})`. Only bugs escape as exceptions,
and the runner turns those into an `internal_error` result too, so the agent can go on.

A result has two faces: the tagged text a model reads, and `ResultRecord`, the same result as
plain data for a reader of results that is a program (the built-in analyst), which must never read
numbers back from text that the context cascade may have shortened.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import pandas as pd

Number = int | float


@dataclass
class ToolContext:
    """What a tool may know besides its arguments. Tools never reach for globals."""

    language: str = "en"
    figures_dir: Path | None = None
    datasets: dict[str, pd.DataFrame] = field(default_factory=dict)
    dataset_name: str | None = None
    call_id: str | None = None
    # Added to figure names when several machines write one workspace's figures (an object store): a
    # name free on this machine's disk may be taken on another's, so the run's id keeps names apart.
    figure_tag: str = ""
    # The harness's run scope (app/agent/run_scope.py: the session, the run, its events ...), opaque
    # here: analysis tools never read it, harness tools read it through `run_scope(ctx)`.
    scope: object | None = None

    @property
    def zh(self) -> bool:
        return self.language == "zh"

    def t(self, en: str, zh: str) -> str:
        """Pick the user's language."""
        return zh if self.zh else en

    def figure_path(self, stem: str) -> Path:
        folder = self.figures_dir or Path(tempfile.mkdtemp(prefix="verity-fig-"))
        folder.mkdir(parents=True, exist_ok=True)
        self.figures_dir = folder
        suffix = (f"_{self.call_id}" if self.call_id else "") + (f"_{self.figure_tag}" if self.figure_tag else "")
        path = folder / f"{stem}{suffix}.png"
        n = 1
        while path.exists():
            n += 1
            path = folder / f"{stem}{suffix}_{n}.png"
        return path


@dataclass
class Figure:
    path: str
    caption: str


@dataclass
class ToolResult:
    """What every tool returns (CONTRACT.md "Python API for tools")."""

    ok: bool = True
    metrics: dict[str, Number | str] = field(default_factory=dict)
    text: str = ""
    figures: list[str] = field(default_factory=list)
    error: dict[str, Any] | None = None
    interpretation: str = ""
    method: str = ""
    sample_size: int | None = None
    limitations: list[str] = field(default_factory=list)
    captions: list[str] = field(default_factory=list)
    table: pd.DataFrame | None = None  # a derived dataset (data tools) or a result table
    payload: dict[str, Any] = field(default_factory=dict)  # structured details (e.g. preview rows)
    # The sections of `text` by tag, as tagged_text wrote them (the text may grow later: a data
    # tool's new version adds a [dataset] note).
    sections: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.sections:
            self.sections = dict(getattr(self.text, "sections", {}))

    @classmethod
    def failure(cls, error: dict[str, Any]) -> "ToolResult":
        lines = [f"[error] {error.get('error')}: {error.get('message', '')}"]
        if error.get("hint"):
            lines.append(f"hint: {error['hint']}")
        if error.get("did_you_mean"):
            lines.append(f"did_you_mean: {error['did_you_mean']}")
        return cls(ok=False, error=error, text="\n".join(lines))

    def figure_records(self) -> list[Figure]:
        captions = self.captions + [""] * (len(self.figures) - len(self.captions))
        return [Figure(p, c) for p, c in zip(self.figures, captions)]

    def record(self, mask: Callable[[str], str] = str) -> ResultRecord:
        """This result as plain data, every string passed through `mask` (the harness's personal-data
        mask: what a model is shown of a value, a program is shown too). Its numbers are the ones
        the text's [metrics] section shows: JSON's (NumPy's become Python's or text), without the
        timing."""
        sections = {**self.sections, **getattr(self.text, "sections", {})}  # a text set later wins
        metrics = {k: v for k, v in self.metrics.items() if k != "duration_ms"}
        interpretation = sections["interpretation"] if "interpretation" in sections else self.interpretation
        return ResultRecord(
            ok=self.ok,
            error=_masked(_as_json(self.error), mask),
            method=mask(sections.get("method", "").strip().split("\n")[0]),
            interpretation=mask(interpretation.strip()),
            conclusion=mask(sections.get("conclusion", "").strip()),
            profile=mask(sections.get("data_profile", "").strip()),
            metrics=_masked(_as_json(metrics), mask),
            details=_masked(_as_json(self.payload), mask),
            limitations=[mask(line) for line in self.limitations],
            figures=[Figure(f.path, mask(f.caption)) for f in self.figure_records()],
        )


@dataclass(frozen=True)
class ResultRecord:
    """One tool call's result as plain data (JSON both ways: `as_json`, `from_json`), for a program
    that reads results: ok or the structured error, the method's name, the tool's plain reading and
    conclusion, the data-profile lines, the metrics in full (a regression's coefficients, t values
    and F test among them), the tool's structured details (its payload: a paired test's pair, a
    profile's columns), the limitations and the figures."""

    ok: bool
    error: dict[str, Any] | None = None
    method: str = ""
    interpretation: str = ""
    conclusion: str = ""
    profile: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    limitations: list[str] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)

    def as_json(self) -> str:
        saved = {**self.__dict__, "figures": [f.__dict__ for f in self.figures]}
        return json.dumps(saved, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> ResultRecord:
        saved = json.loads(text)
        known = {f.name for f in fields(cls)} - {"figures"}
        figures = [Figure(str(f.get("path", "")), str(f.get("caption", ""))) for f in saved.get("figures") or []]
        return cls(**{k: v for k, v in saved.items() if k in known}, figures=figures)


# Where a program finds a call's result: call id -> its record (None: no result is known for it).
ResultLookup = Callable[[str], ResultRecord | None]


def _as_json(value: Any) -> Any:
    """A value as JSON reads it back (the [metrics] section's encoding: non-JSON values as text)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def _masked(value: Any, mask: Callable[[str], str]) -> Any:
    """Every string of a JSON value through `mask`, dictionary keys too (a group's name is a key)."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {mask(str(k)): _masked(v, mask) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v, mask) for v in value]
    return value


class ToolError(Exception):
    """A user or data error with a category, a message and a hint for recovery."""

    def __init__(self, category: str, message: str, hint: str = "", retryable: bool = True, **extra: Any):
        super().__init__(message)
        self.category = category
        self.message = message
        self.hint = hint
        self.retryable = retryable
        self.extra = extra

    def as_dict(self) -> dict[str, Any]:
        return {
            "error": self.category,
            "message": self.message,
            "hint": self.hint,
            "retryable": self.retryable,
            **self.extra,
        }


class TaggedText(str):
    """Tagged text that keeps its sections (tag -> body, as written), so the parts of a result are
    known without reading the text back (ToolResult.sections takes them)."""

    sections: dict[str, str]

    def __new__(cls, text: str, sections: dict[str, str]) -> TaggedText:
        tagged = super().__new__(cls, text)
        tagged.sections = sections
        return tagged


def tagged_text(**sections: str | list[str] | None) -> TaggedText:
    """Model-facing text with structured tags: tagged_text(method="...", insights=[...])."""
    bodies: dict[str, str] = {}
    for tag, body in sections.items():
        if body is None or body == "" or body == []:
            continue
        bodies[tag] = "\n".join(f"- {line}" for line in body) if isinstance(body, list) else body
    return TaggedText("\n\n".join(f"[{tag}]\n{body}" for tag, body in bodies.items()), bodies)
