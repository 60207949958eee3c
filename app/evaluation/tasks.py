"""The fixed evaluation task set: loaded and checked before anything runs.

A task file is JSON: {"tasks": [{"id", "files", "question", "language"?, "answers"?, "before"?,
"rules"?, "source"?, "facts"}]}. Files are relative to the repository root. `answers` pre-answers
clarification questions by their external id (the gate topic, as `verity analyze --answer
id=value`; a key "scope" answers any "scope.<name>" question), so a task never waits for a person.
`before` are earlier questions asked in the same workspace first (the scored question is their
follow-up); `rules` is the workspace's rules file; `source` says where the expected values come
from (data/eval/expected.py computes them). A file that does not fit raises TaskFileError (exit
code 2), never a traceback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.evaluation.facts import FactError, validate_fact
from app.paths import REPO_ROOT

DEFAULT_TASKS = REPO_ROOT / "data" / "eval" / "tasks.json"


class TaskFileError(ValueError):
    """The task file cannot be read, or asks for tasks it does not hold."""


@dataclass
class EvalTask:
    id: str
    files: list[str]
    question: str
    facts: list[dict[str, Any]]
    language: str | None = None
    answers: dict[str, list[str]] = field(default_factory=dict)  # question id -> value(s)
    before: list[str] = field(default_factory=list)  # earlier questions of the same workspace
    rules: str = ""  # the workspace rules file
    source: str = ""  # where the expected values come from

    def paths(self, root: Path) -> list[Path]:
        return [(root / name) for name in self.files]


def load_tasks(path: Path = DEFAULT_TASKS, only: list[str] | None = None) -> list[EvalTask]:
    """The tasks of `path` in file order; with `only`, just those ids (each must exist)."""
    if Path(path) == DEFAULT_TASKS and not DEFAULT_TASKS.is_file():
        # An installed wheel holds the packages only: the task set stays in the checkout, with the
        # data files its tasks name relative to it (data/samples, data/reference), so shipping the
        # JSON alone would not make it run.
        raise TaskFileError(
            f"the default task set was not found at {DEFAULT_TASKS}: it comes with a source checkout of "
            "Verity (its tasks read the checkout's data files), not with an installed package. Run "
            "`verity eval` in a checkout, or name a task file: --tasks FILE"
        )
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TaskFileError(f"cannot read task file {path}: {exc}") from exc
    entries = raw.get("tasks") if isinstance(raw, dict) else None
    if not isinstance(entries, list) or not entries:
        raise TaskFileError(f'{path}: expected {{"tasks": [...]}} with at least one task')
    tasks = [parse_task(entry, i) for i, entry in enumerate(entries)]
    ids = [t.id for t in tasks]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise TaskFileError(f"{path}: duplicate task ids: {', '.join(duplicates)}")
    if only:
        unknown = [i for i in only if i not in ids]
        if unknown:
            raise TaskFileError(f"unknown task id(s): {', '.join(unknown)} (known: {', '.join(ids)})")
        tasks = [t for t in tasks if t.id in only]
    return tasks


def parse_task(entry: Any, index: int) -> EvalTask:
    if not isinstance(entry, dict):
        raise TaskFileError(f"task #{index + 1} is not an object")
    where = f"task {entry.get('id') or '#' + str(index + 1)}"
    task_id, question = entry.get("id"), entry.get("question")
    files, facts = entry.get("files"), entry.get("facts")
    if not isinstance(task_id, str) or not task_id.strip():
        raise TaskFileError(f"{where}: 'id' must be a non-empty string")
    if not isinstance(question, str) or not question.strip():
        raise TaskFileError(f"{where}: 'question' must be a non-empty string")
    if not isinstance(files, list) or not files or not all(isinstance(f, str) and f for f in files):
        raise TaskFileError(f"{where}: 'files' must be a non-empty list of paths")
    if not isinstance(facts, list) or not facts:
        raise TaskFileError(f"{where}: 'facts' must be a non-empty list")
    language = entry.get("language")
    if language not in (None, "en", "zh"):
        raise TaskFileError(f"{where}: 'language' must be 'en' or 'zh'")
    try:
        for fact in facts:
            validate_fact(fact)
    except FactError as exc:
        raise TaskFileError(f"{where}: {exc}") from exc
    before, rules, source = entry.get("before", []), entry.get("rules", ""), entry.get("source", "")
    if not isinstance(before, list) or not all(isinstance(q, str) and q.strip() for q in before):
        raise TaskFileError(f"{where}: 'before' must be a list of questions")
    if not isinstance(rules, str) or not isinstance(source, str):
        raise TaskFileError(f"{where}: 'rules' and 'source' must be strings")
    return EvalTask(
        task_id.strip(),
        files,
        question,
        facts,
        language,
        parse_answers(entry.get("answers"), where),
        before,
        rules,
        source,
    )


def parse_answers(raw: Any, where: str) -> dict[str, list[str]]:
    """{"metric": "Revenue", "columns": ["a", "b"]}: one value, or several for a multi question."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise TaskFileError(f"{where}: 'answers' must be an object of question id -> value")
    answers = {}
    for key, value in raw.items():
        values = value if isinstance(value, list) else [value]
        if not values or not all(isinstance(v, str) for v in values):
            raise TaskFileError(f"{where}: answer {key!r} must be a string or a list of strings")
        answers[str(key)] = values
    return answers
