"""The final answer checked (SPEC §8). Before it is final, its unbacked numbers go back to the model
once (`answer_recheck`: which numbers, and why) so it can correct them; then the numbers still unbacked
are marked, the recommendation lines that use them removed, and when a claim failed verification a
limitation note in the user's language is added and the recommendations removed."""

from __future__ import annotations

import re
from typing import Any

from app.agent.policy.verification import is_gated, turn_run, verify_run
from app.numbers import answer_numbers, backing_values, unverified_numbers
from app.reports.builder import run_backing

# --- the final answer ----------------------------------------------------------------------------------
_RECOMMENDATION_HEAD = re.compile(
    r"^\s*(?:#{1,6}\s*|\*\*|__)?\s*(?:\d+[.)]\s*)?(?:recommendations?|recommended actions?|next steps?|suggestions?|"
    r"what (?:to|you should) do|action items?|actions?|建议|行动建议|改进建议|下一步|后续行动)\s*(?:\*\*|__)?\s*[:：]?\s*(?:\*\*|__)?\s*$",
    re.IGNORECASE,
)


_RECOMMENDATION_LINE = re.compile(
    r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*)?(?:we |i )?(?:recommend|suggest|you should|"
    r"consider |建议|推荐|应当|应该)",
    re.IGNORECASE,
)


_HEADING = re.compile(r"^\s*(#{1,6})\s")
_LIST_LINE = re.compile(r"^\s*([-*+]|\d+[.)])\s")


NOTES = {  # the final answer's note: each sentence only when it is true
    "numbers": {
        "en": "**Limitation:** {numbers} could not be found in the analysis results (marked ⚠ in the text); "
        "treat {them} as provisional.",
        "zh": "**局限：** {numbers} 在分析结果中找不到（文中以 ⚠ 标出），仅供参考。",
    },
    "claims": {
        "en": "**Limitation:** {n} recorded finding(s) did not match the analyses they cite ({kinds}); treat "
        "those conclusions as provisional.",
        "zh": "**局限：** 有 {n} 条记录的结论与其引用的分析不一致（{kinds}），相关结论仅供参考。",
    },
    "removed": {"en": "Recommendations were left out for this reason.", "zh": "因此未给出建议。"},
    "removed_lines": {"en": "The recommendations that used {them} were left out.", "zh": "用到这些数字的建议已删去。"},
}


ISSUE_KINDS = {
    "number": {"en": "a number not in the outputs", "zh": "数字与输出不符"},
    "causal": {"en": "cause-and-effect wording", "zh": "因果措辞"},
    "test_name": {"en": "a method that was not run", "zh": "未实际使用的方法"},
    "significance": {"en": "'significant' without significance", "zh": "不显著却称显著"},
    "effect_size": {"en": "effect-size words larger than the effect", "zh": "效应量措辞夸大"},
}


MARK = "⚠"


THIN_NOTE = {
    "en": "_Recommendations were left out: the evidence is too thin to act on._",
    "zh": "_证据不足，因此未给出建议。_",
}


def mark_numbers(answer: str, numbers: list[str]) -> str:
    """Put ⚠ after each occurrence of the unverified numbers (whole numbers only: 400, not 4000)."""
    for number in sorted(set(numbers), key=len, reverse=True):
        pattern = rf"(?<![\w.]){re.escape(number)}(?![\w]|[.,]\d)(?!\s?{MARK})"
        answer = re.sub(pattern, lambda m: f"{m.group(0)} {MARK}", answer)
    return answer


def final_note(
    unbacked: list[str], failed: list[dict[str, Any]], removed: bool, lang: str, only_affected: bool = False
) -> str:
    """Say exactly what happened: which numbers are unverified (and marked), how many claims failed
    and why, and that recommendations were left out only when they were (all of them, or
    `only_affected`: the lines that used an unverified number)."""
    parts = []
    if unbacked:
        sep = "、" if lang == "zh" else ", "
        them = "it" if len(unbacked) == 1 else "them"
        parts.append(NOTES["numbers"][lang].format(numbers=sep.join(unbacked), them=them))
    if failed:
        kinds = list(dict.fromkeys(i["kind"] for r in failed for i in r["issues"]))
        text = ("、" if lang == "zh" else "; ").join(ISSUE_KINDS.get(k, {}).get(lang, k) for k in kinds)
        parts.append(NOTES["claims"][lang].format(n=len(failed), kinds=text))
    if removed and parts:
        them = "it" if len(unbacked) == 1 else "them"
        parts.append(NOTES["removed_lines"][lang].format(them=them) if only_affected else NOTES["removed"][lang])
    return " ".join(parts)


def strip_recommendations(answer: str) -> tuple[str, bool]:
    """Remove recommendation sections (a heading and what follows it) and recommendation lines."""
    out, skipping, level, removed = [], False, 0, False
    for line in answer.split("\n"):
        heading = _HEADING.match(line)
        if skipping:
            if (
                heading
                and len(heading.group(1)) <= level
                or (not heading and level == 0 and line.strip() and not re.match(r"^\s*([-*+]|\d+[.)])\s", line))
            ):
                skipping = False
            else:
                continue
        if _RECOMMENDATION_HEAD.match(line):
            skipping, removed = True, True
            level = len(heading.group(1)) if heading else 0
            continue
        if _RECOMMENDATION_LINE.match(line):
            removed = True
            continue
        out.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip(), removed


# --- the model's turn: its unbacked numbers, once, before the answer is final ---------------------------
RECHECK_LIMIT = 400  # the note's length at most: which numbers and why, nothing else

RECHECK_NOTE = (
    "[harness] Before this answer is final: {numbers} {verb} not in any tool output, recorded evidence "
    "or dataset fact at the precision written. Correct each from the outputs, compute it with a tool, or "
    "drop it; then write the full final answer again."
)


def answer_recheck(turn: Any, answer: str | None) -> str | None:
    """The note that sends the answer's unbacked numbers back to the model, once per run (the trace
    gets an `answer_recheck` event); None when every number is backed, when the run has had its
    recheck, for a chat or methods question (no findings to back), or outside a run."""
    if not (answer or "").strip() or _talk_only(turn) or (found := turn_run(turn)) is None:
        return None
    session, run = found
    state = dict(run.state or {})
    if state.get("answer_recheck"):
        return None
    texts, values, ids = run_backing(session, run)
    unbacked = unverified_numbers(answer or "", texts, values, ignore_strings=ids)
    if not unbacked:
        return None
    note = recheck_note(answer or "", unbacked, backing_values(texts, values))
    run.state = {**state, "answer_recheck": {"numbers": unbacked}}
    turn.recorder.emit("answer_recheck", {"numbers": unbacked, "note": note})
    turn.recorder.emit("answer_delta", {"reset": True})  # a streamed draft is not the answer: the revision is
    return note


NO_FINDINGS = ("chat", "consult")  # a greeting or a methods question: its numbers are examples, not findings


def _talk_only(turn: Any) -> bool:
    intent = getattr(turn, "intent", None)
    return getattr(intent, "kind", None) in NO_FINDINGS


def recheck_note(answer: str, unbacked: list[str], backing: list[float]) -> str:
    """At most RECHECK_LIMIT characters: each unbacked number, with the value the outputs show close to it
    when there is one (a likely mis-rounding: `_nearest`), as many as fit."""
    written = {w.text.strip(): w for w in answer_numbers(answer)}
    shown: list[str] = []
    for number in unbacked:
        near = _nearest(written[number], backing) if number in written else None
        if near is not None:
            near_text = f"{near * 100:.6g}%" if written[number].percent else f"{near:.6g}"
            number = f"{number} (the outputs show {near_text} close to it)"
        shown.append(number)
    for count in range(len(shown), 0, -1):
        rest = len(shown) - count
        listed = ", ".join(shown[:count]) + (f" and {rest} more" if rest else "")
        note = RECHECK_NOTE.format(numbers=listed, verb="is" if len(shown) == 1 else "are")
        if len(note) <= RECHECK_LIMIT:
            return note
    return RECHECK_NOTE.format(numbers=f"{len(shown)} numbers", verb="are")[:RECHECK_LIMIT]


NEAR_SHARE = 0.05  # a value this close (relative) may be what a mis-written number was meant to be


def _nearest(written: Any, backing: list[float]) -> float | None:
    """The backing value closest to the written one when it is within one unit of the written number's last
    figure or NEAR_SHARE of it (4.90 written for an F of 4.846, 48.0 for 47.9), else None. It was any value
    within 20%, named "nearest in the outputs": read as the number's source, it pointed a derived "about
    170" (3,625 − 3,453 = 172) at an unrelated 162 elsewhere in the outputs."""
    target = float(written.candidates()[-1]) if written.percent else float(written.value * written.scale)
    step = 2 * float(written.tolerance) / (100 if written.percent else 1)
    window = max(step, NEAR_SHARE * abs(target)) * 1.000001
    close = [v for v in backing if target and abs(abs(v) - abs(target)) <= window]
    return min(close, key=lambda v: abs(abs(v) - abs(target)), default=None)


def strip_affected_recommendations(answer: str, numbers: list[str]) -> tuple[str, bool]:
    """Remove only the recommendation lines (in a recommendations section, or a line that recommends)
    that use one of the unbacked numbers; the others stay."""
    if not numbers:
        return answer, False
    patterns = [re.compile(rf"(?<![\w.]){re.escape(n)}(?![\w]|[.,]\d)") for n in numbers]
    out, in_section, level, removed = [], False, 0, False
    for line in answer.split("\n"):
        heading = _HEADING.match(line)
        if _RECOMMENDATION_HEAD.match(line):
            in_section, level = True, len(heading.group(1)) if heading else 0
        elif in_section and (
            (heading and len(heading.group(1)) <= max(level, 1))
            or (not heading and level == 0 and line.strip() and not _LIST_LINE.match(line))
        ):
            in_section = False  # as in strip_recommendations: the next heading, or prose after a bold head
        recommends = in_section or bool(_RECOMMENDATION_LINE.match(line))
        if recommends and not _RECOMMENDATION_HEAD.match(line) and any(p.search(line) for p in patterns):
            removed = True
            continue
        out.append(line)
    return "\n".join(out), removed


def check_answer(turn: Any, answer: str) -> str:
    """The final-answer check: the last verification, unbacked numbers (listed and marked ⚠), and —
    when verification failed — a note that says what failed and no recommendations. Returns the
    answer to store."""
    if (found := turn_run(turn)) is None or not (answer or "").strip():
        return answer
    session, run = found
    gated = is_gated(turn)
    if gated:
        verify_run(session, run, turn.recorder.emit, final=False)
    texts, values, ids = run_backing(session, run)
    unbacked = unverified_numbers(answer, texts, values, ignore_strings=ids)
    state = dict(run.state or {})
    policy = state.get("synthesis_policy") or {}
    failed_claims = [r for r in (state.get("verification") or {}).get("results", []) if r["status"] == "failed"]
    failed = bool(failed_claims) or bool(unbacked)
    lang = "zh" if run.language == "zh" else "en"
    removed, only_affected = False, False
    if failed_claims or (gated and policy.get("recommendations") == "suppressed" and state.get("verification")):
        answer, removed = strip_recommendations(answer)
    else:  # a failed number fails that number: only the recommendation lines that use it go
        answer, removed = strip_affected_recommendations(answer, unbacked)
        only_affected = removed
    answer = mark_numbers(answer, unbacked)
    if note := final_note(unbacked, failed_claims, removed, lang, only_affected):
        answer = f"{answer}\n\n{note}"
    elif removed:
        answer = f"{answer}\n\n{THIN_NOTE[lang]}"
    final = {
        "unverified_numbers": unbacked,
        "failed": failed,
        "recommendations_removed": removed,
        "limitation_added": failed,
    }
    verification = {**(state.get("verification") or {"results": []}), "final": final}
    if failed_claims:
        verification["status"] = "failed"
    elif unbacked and verification.get("status") != "failed":
        verification["status"] = "partly_verified"  # the answer's other numbers and claims stand
    run.state = {**state, "verification": verification}
    turn.recorder.emit("verification", {"final": True, "status": verification.get("status", "not_run"), **final})
    return answer
