"""One evidence item checked against the tool calls it cites (SPEC §8): its numbers must be found in
the cited outputs at the precision written (app.numbers), and its wording must fit the methods run
(claim_wording). A withdrawn item stays withdrawn."""

from __future__ import annotations

from typing import Any

from app.agent.policy.claim_wording import (
    EXPERIMENT,
    METHOD_SECTION,
    big_effect_claims,
    causal_claims,
    effect_sizes,
    method_text,
    named_tests,
    p_values,
    significance_claims,
    stated_p_values,
    was_run,
)
from app.agent.policy.hypotheses import test_kind
from app.agent.store import Evidence, ToolCall
from app.agent.tools.evidence import rows_behind
from app.numbers import answer_numbers, metric_token, unverified_numbers

ALPHA = 0.05  # a p-value at or above it is no evidence of a difference or relationship


# --- one claim ----------------------------------------------------------------------------------------
def verify_evidence(
    item: Evidence,
    calls: list[ToolCall],
    question: str = "",
    experiment: bool = False,
    dataset_rows: list[int] | None = None,
) -> dict[str, Any]:
    """Check one evidence item against the tool calls it cites; issues are plain-language strings.
    Numbers the user gave (the question) or the method states (a threshold, a split) are backed
    too, as are the cited calls' arguments (run_python's code included) and the row counts of the
    datasets the model was shown (`dataset_rows`: "100 years" of a 100-row table).
    Each number gets its own status: a claim whose only issues are numbers, some of them
    found, is "partly_verified" (the failed numbers fail, not the claim)."""
    issues: list[dict[str, str]] = []
    wording = " ".join([item.claim or "", item.result_summary or ""])
    metric_text = " ".join(
        metric_token(v)
        for v in (item.metrics or {}).values()
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    )
    texts = [c.result_text or "" for c in calls] + [c.interpretation or "" for c in calls]
    texts += [question or "", item.method or ""]
    values = [c.metrics or {} for c in calls] + [c.arguments or {} for c in calls] + list(dataset_rows or [])
    ids = [c.id for c in calls] + [item.id]
    checked_text = f"{wording}\n{metric_text}"
    unbacked = unverified_numbers(checked_text, texts, values, ignore_strings=ids, cited_in=wording)
    for number in unbacked:
        issues.append({"kind": "number", "detail": f"{number} is not in the outputs of {', '.join(ids[:-1])}"})
    # each number of the claim's own words gets its status (metrics may be the tool's own, copied in)
    numbers = [
        {"number": key, "status": "failed" if key in unbacked else "verified"}
        for key in dict.fromkeys(w.text.strip() for w in answer_numbers(wording, ids))
    ]
    run_methods = " ".join(method_text(c) for c in calls)
    # observational unless the method says experiment or the user confirmed one (`confirmed_experiment`)
    observational = not experiment and not EXPERIMENT.search(run_methods + " " + (item.method or ""))
    if observational and (words := causal_claims(wording)):
        issues.append(
            {
                "kind": "causal",
                "detail": f"causal wording ({', '.join(sorted(set(words)))}) from "
                f"{', '.join(sorted({c.tool for c in calls}))} on observational data: it shows association only",
            }
        )
    for test in named_tests(" ".join([wording, item.method or ""])):
        if not was_run(test, run_methods):
            ran = "; ".join(m.strip() for c in calls for m in METHOD_SECTION.findall(c.result_text or "")) or ", ".join(
                c.tool for c in calls
            )
            issues.append({"kind": "test_name", "detail": f"names a {test}, but the cited calls ran: {ran.strip()}"})
    sizes = effect_sizes(calls)
    if sizes and all(size in ("negligible", "small") for *_, size in sizes) and (words := big_effect_claims(wording)):
        name, value, size = sizes[0]
        issues.append(
            {
                "kind": "effect_size",
                "detail": f"calls the effect large ({words[0]}), but {name} = "
                f"{value:.3g} is {size} by the usual thresholds",
            }
        )
    ps = p_values(calls)
    if not ps and not any(issue["kind"] == "number" for issue in issues):
        ps = stated_p_values(item)  # run_python's tests: their p-values were found in its output
    alpha = min(
        (float(a) for c in calls if isinstance(a := (c.arguments or {}).get("alpha"), (int, float))), default=ALPHA
    )
    if ps and min(ps) >= alpha and significance_claims(wording):
        issues.append({"kind": "significance", "detail": f"says significant, but p = {min(ps):.3g} (>= {alpha:g})"})
    return {
        "evidence_id": item.id,
        "claim": item.claim,
        "status": claim_status(issues, numbers),
        "issues": issues,
        "numbers": numbers,
        "tool_call_ids": [c.id for c in calls],
        "test_kind": test_kind(" ".join([item.method or "", *(c.tool for c in calls)])),
        "confidence": item.confidence,
        "sample_size": item.sample_size,
        "rows_behind": rows_behind(calls),  # the rows under a result on periods (12 months of 4,392 rows)
        "p_value": min(ps) if ps else None,
        "alpha": alpha,
    }


def claim_status(issues: list[dict[str, str]], numbers: list[dict[str, str]]) -> str:
    """passed; partly_verified when the only issues are numbers and some of its numbers were found;
    else failed (wording that does not fit the method fails the claim as a whole)."""
    if not issues:
        return "passed"
    only_numbers = all(issue["kind"] == "number" for issue in issues)
    if only_numbers and any(n["status"] == "verified" for n in numbers):
        return PARTLY
    return "failed"


PARTLY = "partly_verified"
CHECKED = ("passed", PARTLY)  # what a check itself may find besides "failed"


def resolved_results(results: list[dict[str, Any]], withdrawn: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each result's status from its own check: a claim the model superseded or retracted
    (`withdrawn`) no longer counts; a failed claim counts as corrected when a later claim citing one
    of its tool calls passed."""
    results = [{**r, "check": _check(r)} for r in results]
    out = []
    for i, result in enumerate(results):
        status = result["check"]
        if result["evidence_id"] in withdrawn:
            status = "superseded" if withdrawn[result["evidence_id"]].get("by") else "retracted"
        elif status in ("failed", PARTLY) and any(
            later["check"] == "passed"
            and later["evidence_id"] not in withdrawn
            and set(later["tool_call_ids"]) & set(result["tool_call_ids"])
            for later in results[i + 1 :]
        ):
            status = "corrected"
        out.append({**result, "status": status})
    return out


def _check(result: dict[str, Any]) -> str:
    """What the check itself found (passed, partly_verified or failed), whatever happened to the claim
    later."""
    return str(result.get("check") or (result["status"] if result["status"] in CHECKED else "failed"))


def withdrawn_evidence(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Evidence the model superseded or retracted in this run: id -> {"by": new id or None, "reason"}."""
    return dict((state.get("verification") or {}).get("withdrawn") or {})
