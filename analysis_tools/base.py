"""The values every tool deals in: its context, its result, and structured user errors.

A tool never raises for a user mistake: it raises `ToolError` internally (or a helper does),
and the runner turns it into `ToolResult(ok=False, error={...})`. Only bugs escape as exceptions,
and the runner turns those into an `internal_error` result too, so the agent can go on.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
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
        suffix = f"_{self.call_id}" if self.call_id else ""
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


def tagged_text(**sections: str | list[str] | None) -> str:
    """Model-facing text with structured tags: tagged_text(method="...", insights=[...])."""
    parts = []
    for tag, body in sections.items():
        if body is None or body == "" or body == []:
            continue
        if isinstance(body, list):
            body = "\n".join(f"- {line}" for line in body)
        parts.append(f"[{tag}]\n{body}")
    return "\n\n".join(parts)
