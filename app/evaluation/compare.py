"""Totals, the plain table, and the saved baseline.

A baseline is the per-task scores of an earlier evaluation (data/eval/baseline.json holds the
built-in analyst's). Wall times are left out of it: they vary from machine to machine, and a
slower CI box is not a regression. Against a baseline, a task regresses when it
- finds fewer expected facts, or is no longer fully right (every fact found),
- has a lower tool success rate (by more than RATE_TOLERANCE: one extra failed call in a long run
  of a language model is noise, a pattern of failures is not),
- is no longer done (it was done in the baseline), or
- has more ungrounded numbers in its answer.
Tasks the baseline does not know are listed as new, not as regressions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.paths import REPO_ROOT

DEFAULT_BASELINE = REPO_ROOT / "data" / "eval" / "baseline.json"
RATE_TOLERANCE = 0.05
BASELINE_FIELDS = (
    "status",
    "fully_right",
    "facts_found",
    "facts_total",
    "tool_calls",
    "tool_success_rate",
    "budget_overruns",
    "steps",
    "retries",
    "evidence",
    "unverified_numbers",
)


class BaselineError(ValueError):
    """The baseline file exists but cannot be read."""


# --- totals and the table --------------------------------------------------------------------
def totals(results: list[dict[str, Any]]) -> dict[str, Any]:
    calls, ok = sum(r["tool_calls"] for r in results), sum(r["tool_ok"] for r in results)
    summed = {
        k: sum(r[k] for r in results)
        for k in (
            "facts_found",
            "facts_total",
            "budget_overruns",
            "budget_warnings",
            "steps",
            "model_calls",
            "retries",
            "evidence",
            "unverified_numbers",
        )
    }
    right = sum(bool(r.get("fully_right")) for r in results)
    by_language = {
        lang: {
            "tasks": sum(r.get("language") == lang for r in results),
            "fully_right": sum(r.get("language") == lang and bool(r.get("fully_right")) for r in results),
        }
        for lang in sorted({r.get("language") or "en" for r in results})
    }
    return {
        "by_language": by_language,
        "tasks": len(results),
        "done": sum(r["status"] == "done" for r in results),
        **summed,
        "fully_right": right,
        "fully_right_share": round(right / len(results), 4) if results else None,
        "tool_calls": calls,
        "tool_ok": ok,
        "tool_success_rate": round(ok / calls, 4) if calls else None,
        "wall_s": round(sum(r["wall_s"] for r in results), 2),
    }


COLUMNS = [
    ("task", "id"),
    ("status", "status"),
    ("right", None),
    ("facts", None),
    ("tools ok", None),
    ("overruns", "budget_overruns"),
    ("steps", "steps"),
    ("retries", "retries"),
    ("time s", None),
    ("unverified", "unverified_numbers"),
]


def table(results: list[dict[str, Any]], total: dict[str, Any]) -> str:
    """One row per task and a totals row, then what each unfinished or incomplete task missed."""
    rows = [_row(r) for r in results] + [
        _row(
            {
                **total,
                "id": "TOTAL",
                "status": f"{total['done']}/{total['tasks']} done",
                "right_cell": f"{total['fully_right']}/{total['tasks']}",
            }
        )
    ]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, (h, _) in enumerate(COLUMNS)]

    def line(cells: list[str]) -> str:  # names left-aligned, numbers right-aligned
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [line([h for h, _ in COLUMNS]), line(["-" * w for w in widths])]
    out += [line(row) for row in rows[:-1]] + [line(["-" * w for w in widths]), line(rows[-1])]
    for r in results:
        if r.get("reason"):
            out.append(f"{r['id']}: {r['status']}: {r['reason']}")
        for missed in r.get("missed") or []:
            out.append(f"{r['id']}: missed: {missed}")
    return "\n".join(out)


def _row(r: dict[str, Any]) -> list[str]:
    rate = r["tool_success_rate"]
    cells = []
    for _, key in COLUMNS:
        cells.append(str(r[key]) if key else "")
    cells[2] = r.get("right_cell") or ("yes" if r.get("fully_right") else "no")
    cells[3] = f"{r['facts_found']}/{r['facts_total']}"
    cells[4] = f"{r['tool_ok']}/{r['tool_calls']}" + (f" ({rate:.0%})" if rate is not None else "")
    cells[8] = f"{r['wall_s']:.1f}"
    return cells


def score_line(total: dict[str, Any]) -> str:
    """The headline of an evaluation: how many questions were answered fully right."""
    share = total.get("fully_right_share")
    languages = total.get("by_language") or {}
    split = (
        ", ".join(f"{lang} {v['fully_right']}/{v['tasks']}" for lang, v in languages.items())
        if len(languages) > 1
        else ""
    )
    return (
        f"Score: {total['fully_right']}/{total['tasks']} questions fully right"
        + (f" ({share:.1%})" if share is not None else "")
        + (f" [{split}]" if split else "")
        + f"; facts {total['facts_found']}/{total['facts_total']}"
    )


# --- the baseline ----------------------------------------------------------------------------
def baseline_entry(result: dict[str, Any]) -> dict[str, Any]:
    return {k: result[k] for k in BASELINE_FIELDS}


def load_baseline(path: Path) -> dict[str, Any] | None:
    """The saved baseline, or None when there is none at `path`."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), dict):
        raise BaselineError(f'{path}: expected {{"model": ..., "tasks": {{task id: scores}}}}')
    return data


def save_baseline(path: Path, results: list[dict[str, Any]], model: str) -> dict[str, Any]:
    """Write the results as the baseline. Tasks not run this time (--only) keep their entries when
    the old baseline was made with the same model, so a subset run never drops the others."""
    try:
        old = load_baseline(path)
    except BaselineError:
        old = None  # an unreadable file is being replaced on purpose
    kept = old["tasks"] if old and old.get("model") == model else {}
    data = {"model": model, "tasks": {**kept, **{r["id"]: baseline_entry(r) for r in results}}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return data


def compare(results: list[dict[str, Any]], baseline: dict[str, Any]) -> dict[str, list[str]]:
    """Regressions of these results against the baseline (see the module docstring), and notes."""
    regressions, notes = [], []
    saved = baseline.get("tasks") or {}
    for r in results:
        before = saved.get(r["id"])
        if not isinstance(before, dict):
            notes.append(f"{r['id']}: new task, not in the baseline")
            continue
        regressions += [f"{r['id']}: {what}" for what in task_regressions(r, before)]
    return {"regressions": regressions, "notes": notes}


def task_regressions(now: dict[str, Any], before: dict[str, Any]) -> list[str]:
    found = []
    if now["facts_found"] < (before.get("facts_found") or 0):
        found.append(f"facts found {now['facts_found']}/{now['facts_total']}, baseline {before['facts_found']}")
    elif before.get("fully_right") and not now.get("fully_right"):
        found.append("no longer fully right")
    rate, old_rate = now["tool_success_rate"], before.get("tool_success_rate")
    if old_rate is not None and (rate is None or rate < old_rate - RATE_TOLERANCE):
        shown = "no tool calls" if rate is None else f"{rate:.0%}"
        found.append(f"tool success rate {shown}, baseline {old_rate:.0%}")
    if before.get("status") == "done" and now["status"] != "done":
        found.append(f"status {now['status']}, baseline done")
    if now["unverified_numbers"] > (before.get("unverified_numbers") or 0):
        found.append(
            f"ungrounded numbers {now['unverified_numbers']}, baseline {before.get('unverified_numbers') or 0}"
        )
    return found
