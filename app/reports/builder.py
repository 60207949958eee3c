"""report.json for a finished run (CONTRACT.md "report.json"): the answer, the evidence behind it,
the plan, the figures, the tool calls, and the numbers in the answer that nothing backs.

The result is plain JSON data (no numpy types, no datetimes): it is stored in `Report.content`,
written as report.json and rendered by `app.reports.render`.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from decimal import Decimal, InvalidOperation
from typing import Any, Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Dataset, Evidence, Run, Task, ToolCall

# Tools of the harness itself: they plan, record and navigate, they do not analyse data.
HARNESS_TOOLS = frozenset({
    "task_create", "task_update", "task_get", "task_list", "record_evidence", "record_analysis_plan",
    "ask_user_question", "tool_search", "compact_context", "read_tool_output", "list_datasets",
})


def is_harness_tool(name: str) -> bool:
    return name in HARNESS_TOOLS or name.startswith("task_")


# --------------------------------------------------------------------------------------------
# JSON hygiene
# --------------------------------------------------------------------------------------------

def plain(value: Any) -> Any:
    """A JSON-serialisable copy: numpy scalars to Python, NaN/inf to None, tuples to lists."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [plain(v) for v in value]
    if isinstance(value, datetime):
        return _iso(value)
    if hasattr(value, "item") and callable(value.item):  # numpy / pandas scalars
        try:
            return plain(value.item())
        except (TypeError, ValueError):
            pass
    if hasattr(value, "tolist"):
        return plain(value.tolist())
    return str(value)


def _iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    if moment.tzinfo is None:  # SQLite hands back naive datetimes: they were stored as UTC
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.isoformat()


# --------------------------------------------------------------------------------------------
# Numbers in text: extraction and matching at the precision written
# --------------------------------------------------------------------------------------------

_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])"  # not inside a word or after a decimal point (CJK text may touch it)
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?|\.\d+)"
    r"(?P<unit>\s?%|\s?‰|\s?万|\s?亿)?"
)
_TRAILING_WORD = re.compile(r"[A-Za-z0-9_.]*")
_LIST_ITEM = re.compile(r"^\s*(?:#{1,6}\s*)?(?:[-*+]\s+)?[(（]?\d{1,3}[.)、）:](?=\s|$|[^\d])", re.MULTILINE)
_DATE_PATTERNS = [
    re.compile(r"(?<!\d)(?:19|20)\d{2}(?:-\d{1,2}(?:-\d{1,2})?|/\d{1,2}(?:/\d{1,2})?|\.\d{1,2}\.\d{1,2})"
               r"(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?"),
    re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b"),
    re.compile(r"\d{4}\s*年(?:\s*\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?)?"),
    re.compile(r"\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?"),
    re.compile(r"\d{1,2}\s*[日号]"),
    re.compile(r"第\s*\d+\s*[步项条点章节个季度周天]"),
]
_URL = re.compile(r"https?://\S+|\]\([^)]*\)")
_CODE_FENCE = re.compile(r"```.*?```", re.DOTALL)
_COMPARATOR = re.compile(r"(?:[<>≤≥=]|α|alpha|significance level|显著性水平)\s*$", re.IGNORECASE)
_CONFIDENCE_LEVEL = re.compile(r"^\s*(?:CI\b|C\.I\.|confidence|credible|prediction interval|置信|可信)", re.IGNORECASE)
_POINTS = re.compile(r"^\s*(?:个百分点|percentage points?\b|pp\b|pts?\b)", re.IGNORECASE)
_SCALE_WORD = re.compile(r"^(?:\s*(thousand|million|billion|trillion)\b|(k|K|M|bn|B)\b)")
_SCALES = {"thousand": 3, "k": 3, "K": 3, "million": 6, "M": 6, "billion": 9, "bn": 9, "B": 9, "trillion": 12}
_CITATION = re.compile(r"[\[【]\d{1,3}[\]】]")
_CONVENTIONAL_THRESHOLDS = {Decimal("0.1"), Decimal("0.05"), Decimal("0.01"), Decimal("0.001"), Decimal("0.0001")}


class Written:
    """A number as written in the answer: its value, the precision written, and its scale."""

    __slots__ = ("text", "value", "decimals", "percent", "scale", "tolerance")

    def __init__(self, text: str, digits: str, unit: str, multiplier: Decimal | None = None):
        self.text = text
        clean = digits.replace(",", "")
        self.value = Decimal(clean)
        unit = unit.strip()
        self.percent = unit in ("%", "‰")
        self.scale = multiplier or {"万": Decimal(10_000), "亿": Decimal(100_000_000)}.get(unit, Decimal(1))
        mantissa = clean.lower().split("e")[0]
        self.decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        if "e" in clean.lower():  # scientific notation: compare at the mantissa's precision
            exponent = int(clean.lower().split("e")[1])
            unit_step = Decimal(1).scaleb(exponent - self.decimals)
        else:
            unit_step = Decimal(1).scaleb(-self.decimals)
            if self.decimals == 0 and not self.percent:
                zeros = len(mantissa) - len(mantissa.rstrip("0"))
                if zeros >= 3 and mantissa.strip("0"):  # "12,000": written to the thousand
                    unit_step = Decimal(10) ** zeros
        self.tolerance = unit_step / 2 * self.scale

    def candidates(self) -> list[Decimal]:
        """The values this number may stand for: 45% is 45 or 0.45; 1.2万 is 12000."""
        base = self.value * self.scale
        if self.percent:
            per = Decimal(1000) if self.text.rstrip().endswith("‰") else Decimal(100)
            return [base, base / per]
        return [base]

    def matches(self, backing: Iterable[float]) -> bool:
        tolerances = [self.tolerance]
        if self.percent:
            per = Decimal(1000) if self.text.rstrip().endswith("‰") else Decimal(100)
            tolerances.append(self.tolerance / per)
        targets = list(zip(self.candidates(), tolerances))
        for value in backing:
            v = Decimal(repr(abs(value)))
            for target, tol in targets:
                if abs(v - target) <= tol * Decimal("1.000001") + Decimal("1e-12"):
                    return True
        return False


def _numbers_in(text: str) -> list[tuple[re.Match, str]]:
    """All number tokens with the rest of their word (to tell '12kg' from an id like '3fa9c2')."""
    found = []
    for match in _NUMBER.finditer(text):
        tail = _TRAILING_WORD.match(text, match.end("num")).group(0) if not match.group("unit") else ""
        found.append((match, tail))
    return found


def backing_values(texts: Iterable[str], values: Iterable[Any]) -> list[float]:
    """Every number in tool outputs and evidence, with percentages also as fractions."""
    out: list[float] = []
    for value in values:
        _collect_value(value, out)
    for text in texts:
        if not text:
            continue
        for match, _tail in _numbers_in(str(text)):
            try:
                number = float(match.group("num").replace(",", ""))
            except ValueError:
                continue
            unit = (match.group("unit") or "").strip()
            if unit == "%":
                out += [number, number / 100]
            elif unit == "‰":
                out += [number, number / 1000]
            elif unit == "万":
                out += [number, number * 1e4]
            elif unit == "亿":
                out += [number, number * 1e8]
            else:
                out.append(number)
                # A negative number written in text is still the same magnitude.
    return [v for v in out if math.isfinite(v)]


def _collect_value(value: Any, out: list[float]) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, (int, float)):
        out.append(float(value))
    elif isinstance(value, str):
        out.extend(backing_values([value], []))
    elif isinstance(value, dict):
        for item in value.values():
            _collect_value(item, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect_value(item, out)
    elif hasattr(value, "item"):
        try:
            _collect_value(value.item(), out)
        except (TypeError, ValueError):
            pass


def _blank(text: str, pattern: re.Pattern) -> str:
    """Replace matches with spaces, keeping offsets (and line starts) intact."""
    return pattern.sub(lambda m: re.sub(r"\S", " ", m.group(0)), text)


def answer_numbers(answer: str, ignore_strings: Iterable[str] = ()) -> list[Written]:
    """The numbers in an answer that a reader would take as findings."""
    text = answer or ""
    for token in sorted({s for s in ignore_strings if s}, key=len, reverse=True):
        text = text.replace(token, " " * len(token))
    text = _blank(text, _CODE_FENCE)
    text = _blank(text, _URL)
    for pattern in _DATE_PATTERNS:
        text = _blank(text, pattern)
    text = _blank(text, _LIST_ITEM)
    text = _blank(text, _CITATION)
    numbers = []
    for match, tail in _numbers_in(text):
        if tail and re.search(r"\d", tail):  # part of an identifier such as 3fa9c2 or 12b_4
            continue
        digits, unit = match.group("num"), match.group("unit") or ""
        before = text[max(0, match.start() - 24):match.start()]
        after = text[match.end():match.end() + 24]
        shown, multiplier = match.group(0), None
        if not unit and (points := _POINTS.match(after)):  # "3.2 percentage points" is a percentage
            unit, shown = "%", shown + points.group(0)
        elif not unit and (word := _SCALE_WORD.match(after)):  # "1.2 million", "3.4k"
            multiplier = Decimal(10) ** _SCALES[word.group(1) or word.group(2)]
            shown = shown + word.group(0)
        try:
            written = Written(shown, digits, unit, multiplier)
        except (InvalidOperation, ValueError):
            continue
        if unit.strip() == "" and multiplier is None and "." not in digits and "e" not in digits.lower():
            whole = written.value
            if whole <= 10:  # small counts: "two groups", "3 regions"
                continue
            if "," not in digits and 1900 <= whole <= 2100:  # years
                continue
        if _COMPARATOR.search(before) and written.value in _CONVENTIONAL_THRESHOLDS:
            continue  # "p < 0.05", "α = 0.05": a convention, not a finding
        if written.percent and written.value in (Decimal(90), Decimal(95), Decimal(99)) and _CONFIDENCE_LEVEL.search(after):
            continue  # "95% confidence interval"
        numbers.append(written)
    return numbers


def unverified_numbers(answer: str, texts: Iterable[str], values: Iterable[Any],
                       ignore_strings: Iterable[str] = ()) -> list[str]:
    """Numbers in the answer found in none of the texts/values, as written, without repeats."""
    backing = backing_values(texts, values)
    seen: set[str] = set()
    missing = []
    for written in answer_numbers(answer, ignore_strings):
        key = written.text.strip()
        if key in seen:
            continue
        seen.add(key)
        if not written.matches(backing):
            missing.append(key)
    return missing


# --------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------

_TEXT = {
    "no_evidence": {"en": "No evidence was recorded: the answer is not backed by recorded analysis results.",
                    "zh": "未记录任何证据：结论没有经过记录的分析结果支持。"},
    "failed_calls": {"en": "{n} tool call(s) failed; their results are not used.",
                     "zh": "{n} 次工具调用失败，其结果未被使用。"},
    "open_tasks": {"en": "{n} planned step(s) were not completed: {subjects}.",
                   "zh": "{n} 个计划步骤未完成：{subjects}。"},
    "unverified": {"en": "{n} number(s) in the answer could not be traced to any analysis result.",
                   "zh": "结论中有 {n} 个数字无法追溯到任何分析结果。"},
    "no_answer": {"en": "The run produced no answer.", "zh": "本次分析没有生成结论。"},
}


def _t(key: str, language: str, **fields: Any) -> str:
    entry = _TEXT[key]
    return (entry.get(language) or entry["en"]).format(**fields)


def dataset_entry(dataset: Dataset) -> dict[str, Any]:
    info = dataset.info or {}
    return {"name": dataset.name, "file": dataset.file_name, "sheet": dataset.sheet, "rows": int(dataset.rows or 0),
            "columns": [{"name": str(c.get("name")), "type": c.get("type")} for c in info.get("columns", [])
                        if isinstance(c, dict)]}


def evidence_entry(item: Evidence) -> dict[str, Any]:
    return plain({"id": item.id, "claim": item.claim, "method": item.method or "",
                  "result_summary": item.result_summary or "", "metrics": dict(item.metrics or {}),
                  "sample_size": item.sample_size, "confidence": item.confidence or "medium",
                  "limitations": [str(x) for x in (item.limitations or [])],
                  "tool_call_ids": [str(x) for x in (item.tool_call_ids or [])]})


def task_entry(task: Task) -> dict[str, Any]:
    return {"id": task.id, "subject": task.subject, "status": task.status, "completed_by": task.completed_by,
            "evidence_id": task.evidence_id, "result_summary": task.result_summary, "confidence": task.confidence,
            "blocked_by": [str(x) for x in (task.blocked_by or [])]}


def tool_call_entry(call: ToolCall) -> dict[str, Any]:
    entry = {"id": call.id, "tool": call.tool, "arguments": plain(dict(call.arguments or {})), "ok": bool(call.ok),
             "duration_ms": float(call.duration_ms or 0.0)}
    if not call.ok and call.error:
        entry["error"] = plain({k: call.error.get(k) for k in ("error", "message") if k in call.error})
    return entry


def figure_entries(calls: list[ToolCall], evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    cited_by: dict[str, str] = {}
    for item in evidence:
        for call_id in item["tool_call_ids"]:
            cited_by.setdefault(call_id, item["id"])
    figures = []
    for call in calls:
        for figure in call.figures or []:
            if isinstance(figure, str):
                figure = {"path": figure, "caption": ""}
            if not isinstance(figure, dict) or not figure.get("path"):
                continue
            entry = {"path": str(figure["path"]), "caption": str(figure.get("caption") or ""), "tool_call_id": call.id}
            if call.id in cited_by:
                entry["evidence_id"] = cited_by[call.id]
            figures.append(entry)
    return figures


def _dataset_backing(datasets: list[Dataset]) -> list[Any]:
    """Facts known from ingestion: row counts, column statistics (not the cell preview)."""
    values: list[Any] = []
    for dataset in datasets:
        info = dataset.info or {}
        values.append(dataset.rows)
        values.append(len(info.get("columns", [])))
        values.append({k: v for k, v in info.items() if k not in ("preview", "columns", "warnings")})
        values.append(info.get("columns", []))
    return values


def _distinct(items: Iterable[str]) -> list[str]:
    seen, out = set(), []
    for item in items:
        item = (item or "").strip()
        if item and item.lower() not in seen:
            seen.add(item.lower())
            out.append(item)
    return out


def build_report(session: Session, run: Run) -> dict[str, Any]:
    """The report.json object of a run (normally a finished one)."""
    language = run.language if run.language in ("zh", "en") else "en"
    datasets = list(session.scalars(select(Dataset).where(Dataset.workspace_id == run.workspace_id, Dataset.active)
                                    .order_by(Dataset.created_at)))
    evidence_rows = list(session.scalars(select(Evidence).where(Evidence.run_id == run.id).order_by(Evidence.created_at)))
    tasks = list(session.scalars(select(Task).where(Task.run_id == run.id, Task.status != "deleted")
                                 .order_by(Task.created_at)))
    calls = list(session.scalars(select(ToolCall).where(ToolCall.run_id == run.id).order_by(ToolCall.created_at)))

    evidence = [evidence_entry(e) for e in evidence_rows]
    answer = run.answer or ""

    texts = [call.result_text or "" for call in calls] + [call.interpretation or "" for call in calls]
    texts += [e["claim"] for e in evidence] + [e["result_summary"] for e in evidence]
    values: list[Any] = [call.metrics or {} for call in calls] + [e["metrics"] for e in evidence]
    values += [e["sample_size"] for e in evidence] + _dataset_backing(datasets)
    ids = [e["id"] for e in evidence] + [c.id for c in calls] + [t.id for t in tasks] + [d.id for d in datasets]
    ids += [run.id, run.workspace_id]
    unverified = unverified_numbers(answer, texts, values, ignore_strings=ids)

    warnings: list[str] = []
    for dataset in datasets:
        prefix = f"{dataset.file_name}: " if len(datasets) > 1 else ""
        warnings += [prefix + str(w) for w in (dataset.info or {}).get("warnings", []) or []]
    if not answer.strip():
        warnings.append(_t("no_answer", language))
    if not evidence:
        warnings.append(_t("no_evidence", language))
    failed = [c for c in calls if not c.ok]
    if failed:
        warnings.append(_t("failed_calls", language, n=len(failed)))
    open_tasks = [t for t in tasks if t.status != "completed"]
    if open_tasks:
        sep = "、" if language == "zh" else ", "
        warnings.append(_t("open_tasks", language, n=len(open_tasks), subjects=sep.join(t.subject for t in open_tasks)))
    if unverified:
        warnings.append(_t("unverified", language, n=len(unverified)))

    analysis_calls = [c for c in calls if c.ok and not is_harness_tool(c.tool)]
    report = {
        "run_id": run.id,
        "workspace_id": run.workspace_id,
        "created_at": _iso(run.finished_at or run.created_at) or datetime.now(timezone.utc).isoformat(),
        "status": run.status,
        "question": run.question,
        "language": language,
        "answer": answer,
        "model": {"kind": run.model_kind or "builtin", "name": run.model_name or "builtin"},
        "datasets": [dataset_entry(d) for d in datasets],
        "evidence": evidence,
        "tasks": [task_entry(t) for t in tasks],
        "figures": figure_entries(calls, evidence),
        "tool_calls": [tool_call_entry(c) for c in calls],
        "unverified_numbers": unverified,
        "warnings": _distinct(warnings),
        "method_notes": _distinct([e["method"] for e in evidence]),
        "tools_used": _distinct([c.tool for c in analysis_calls]),
        "limitations": _distinct([lim for e in evidence for lim in e["limitations"]]),
    }
    return plain(report)
