"""The final answer checked (SPEC §8): its unbacked numbers marked, and when verification failed a
limitation note in the user's language and the recommendations removed."""

from __future__ import annotations

import re
from typing import Any

from app.agent.policy.verification import is_gated, turn_run, verify_run
from app.numbers import unverified_numbers
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


def final_note(unbacked: list[str], failed: list[dict[str, Any]], removed: bool, lang: str) -> str:
    """Say exactly what happened: which numbers are unverified (and marked), how many claims failed
    and why, and that recommendations were left out only when they were."""
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
        parts.append(NOTES["removed"][lang])
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
    removed = False
    if failed or (gated and policy.get("recommendations") == "suppressed" and state.get("verification")):
        answer, removed = strip_recommendations(answer)
    answer = mark_numbers(answer, unbacked)
    if note := final_note(unbacked, failed_claims, removed, lang):
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
    if failed:
        verification["status"] = "failed"
    run.state = {**state, "verification": verification}
    turn.recorder.emit("verification", {"final": True, "status": verification.get("status", "not_run"), **final})
    return answer
