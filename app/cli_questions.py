"""Clarification questions on the command line (CONTRACT.md, `verity analyze`).

A question's external id is its topic (`metric`, `window.1a2b3c4d`, ...): the gates derive it from
what they ask (and the question text), so it is the same when the same file and question are run
again in a fresh process, and `--answer metric=revenue_net` settles it there.

- `--answer id=value` answers a question with that id when it comes up (repeat for multi); a model's own
  question, whose id is a hash of its words, may come back in other words on a re-run: the one unused answer
  that fits its options settles it;
- in a terminal (stdin is a TTY, no `--no-input`) other questions are asked at the prompt;
- otherwise the run stops with exit code 3 and `DIR/questions.json` lists the open questions.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.db.models import Question, Run

EXIT_WAITING = 3


def parse_answers(items: list[str]) -> dict[str, list[str]]:
    """`id=value` pairs; an id given several times collects several values (multi)."""
    answers: dict[str, list[str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--answer expects QUESTION_ID=VALUE, got {item!r}")
        answers.setdefault(key.strip(), []).append(value.strip())
    return answers


def external_id(question: Question) -> str:
    return question.topic or question.id


def question_entry(question: Question) -> dict[str, Any]:
    return {
        "id": external_id(question),
        "kind": question.kind,
        "question": question.question,
        "options": [
            {"label": o.get("label", ""), "description": o.get("description", "")} for o in question.options or []
        ],
    }


def prompt_answer(question: Question, read: Callable[[str], str] = input, write=print) -> str | list[str]:
    """Ask at the terminal: numbered options (multi: comma-separated numbers or labels)."""
    write("")
    write(question.question)
    if question.reason:
        write(f"  ({question.reason})")
    for i, option in enumerate(question.options or [], start=1):
        desc = f" — {option.get('description')}" if option.get("description") else ""
        write(f"  {i}. {option.get('label')}{desc}")
    hint = {"single": "number or label", "multi": "numbers or labels, comma-separated", "text": "your answer"}
    while True:
        text = read(f"> ({hint.get(question.kind, 'answer')}) ").strip()
        if text:
            return [p.strip() for p in text.split(",") if p.strip()] if question.kind == "multi" else text


def settle(
    service: Any,
    run_id: str,
    answers: dict[str, list[str]],
    interactive: bool,
    out: Path,
    read: Callable[[str], str] = input,
) -> int | None:
    """Run to the end, answering questions as they come; EXIT_WAITING when one stays open."""
    from app.agent import answer_question, open_questions  # (here: `verity analyze` loads the agent meanwhile)

    service.execute(run_id)
    used: set[str] = set()  # the --answer ids that settled a question
    for _ in range(50):  # each pass answers at least one question; never loop for ever
        with service.db.session() as session:
            run = session.get(Run, run_id)
            if run.status != "waiting":
                (out / "questions.json").unlink(missing_ok=True)  # nothing is open any more
                return None
            pending = open_questions(session, run_id)
            unanswered = []
            asked = {key for q in pending for key in (external_id(q), q.id)}  # ids a question here takes itself
            for question in pending:
                given = answers.get(external_id(question)) or answers.get(question.id)
                given = given or _matching_unused(question, answers, used | asked)
                used.add(next((k for k, v in answers.items() if v is given), ""))
                if given:
                    answer_question(session, question, given if question.kind == "multi" else given[0])
                elif interactive:
                    answer_question(session, question, prompt_answer(question, read))
                else:
                    unanswered.append(question)
            if unanswered:
                write_questions(out, unanswered)
                return EXIT_WAITING
            run.status = "queued"
        service.execute(run_id)
    return None


def _matching_unused(question: Question, answers: dict[str, list[str]], used: set[str]) -> list[str] | None:
    """The one --answer no question took whose values are all among this question's options: a model asks again in
    other words on a re-run (its topic, a hash of its text, differs), and the user's answer to the question it
    printed last time still fits. None when none or several fit."""
    if not external_id(question).startswith("q."):  # a gate's topic (metric, window.…) is the same on every run
        return None
    labels = {str(o.get("label") or "").strip().lower() for o in question.options or []}
    fitting = [
        values
        for key, values in answers.items()
        if key not in used and labels and all(v.strip().lower() in labels for v in values)
    ]
    return fitting[0] if len(fitting) == 1 else None


def write_questions(out: Path, questions: list[Question]) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "questions.json"
    entries = [question_entry(q) for q in questions]
    path.write_text(json.dumps(entries, ensure_ascii=False, indent=2), encoding="utf-8")
    print("Verity needs your answer before it can go on:", file=sys.stderr)
    for entry in entries:
        labels = ", ".join(o["label"] for o in entry["options"])
        print(f"- [{entry['id']}] {entry['question']}" + (f" ({labels})" if labels else ""), file=sys.stderr)
        example = entry["options"][0]["label"] if entry["options"] else "..."
        print(f"  answer with: --answer '{entry['id']}={example}'", file=sys.stderr)
    print(f"Questions written to {path}", file=sys.stderr)
    return path
