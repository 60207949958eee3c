"""The hypothesis set (primary, alternatives, baseline) and the synthesis policy (SPEC §8): from the
checked evidence, whether recommendations are allowed and whether the wording is direct or hedged."""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

STANDING = ("passed", "partly_verified")  # claims whose checked numbers (all, or some) were found
SMALL_SAMPLE = 30  # below it a null result is thin evidence (SPEC §8's n < 30)
TINY_SAMPLE = 10  # below it any result is


# --- hypotheses and policy ----------------------------------------------------------------------------
# Hypotheses (primary, alternatives, chance) belong to questions about a difference, a relationship
# or a driver; "what is the mean age?" has none.
HYPOTHESIS_TYPES = ("comparison", "relationship", "attribution")


RELATIONAL = re.compile(
    r"\bcompar\w*|\bdiffer\w*|\bversus\b|\bvs\.?\b|\bbetween\b|\bcorrelat\w*|\brelat\w*|\bassociat\w*|"
    r"\baffect\w*|\bimpact\w*|\beffects? of\b|\bdriv\w*|\bfactors?\b|\binfluenc\w*|\bdepend\w*|\bwhy\b|"
    r"\bhigher\b|\blower\b|\bmore than\b|\bless than\b|比较|对比|差异|区别|不同|相关|关系|关联|影响|驱动|因素|原因|为什么|高于|低于",
    re.IGNORECASE,
)


def needs_hypotheses(plan: dict[str, Any] | None, question: str, scope: str = "full") -> bool:
    """Only a question about a difference, a relationship or a driver has hypotheses; one figure
    asked for ("what is the correlation between X and Y?") has none."""
    if scope == "single":
        return False
    kind = (plan or {}).get("question_type")
    if kind and kind not in ("other",):
        return kind in HYPOTHESIS_TYPES
    return bool(RELATIONAL.search(question or ""))


def restatement(text: str, limit: int = 120) -> str:
    """H1 in a few words: the question the text asks (its first sentence ending in "?"; else its
    first sentence), cut at a word boundary. "Each patient took both drugs. Does drug 2 give more
    sleep?" is about drug 2, not about who took what."""
    # Chinese sentences end at 。？！ with no space after them
    sentences = [
        p.strip()
        for p in re.split(r"(?<=[.?!])\s+|(?<=[。？！])|\n", " ".join((text or "").split(" ")).strip())
        if p.strip()
    ] or [""]
    first = next((p for p in sentences if p.endswith(("?", "？"))), sentences[0])
    if len(first) <= limit:
        return first
    cut = first[:limit].rsplit(" ", 1)[0] if " " in first[:limit] else first[:limit]
    return cut.rstrip(",;:，；：") + "…"


_H = {
    "baseline": {
        "en": "No real difference or relationship: what the data shows could be chance.",
        "zh": "没有真实的差异或关系：数据中看到的可能只是偶然。",
    },
    # worded for any data (a sales table or a lab experiment): what else differs between the groups
    "confounding": {
        "en": "Something else that differs between the groups (who or what is in them, when or how "
        "they were measured) explains the pattern.",
        "zh": "各组之间的其他差异（组里是谁或是什么、何时或如何测量）解释了这一现象。",
    },
    "definition": {
        "en": "A different definition of the metric would give a different answer.",
        "zh": "换一种指标口径会得到不同的结论。",
    },
}


WORDS_SOURCE = Path(__file__).with_name("hypothesis_words.toml")


@cache
def test_kinds() -> list[dict[str, Any]]:
    """hypothesis_words.toml's kinds of test, in order (read once per process)."""
    with WORDS_SOURCE.open("rb") as handle:
        return list(tomllib.load(handle)["kinds"])


def test_kind(text: str) -> str | None:
    """The kind of test a method and its tools name ("Shapiro-Wilk" -> distribution); None for the
    general wording (a comparison of groups, or anything else)."""
    for kind in test_kinds():
        if re.search(kind["pattern"], text or "", re.IGNORECASE):
            return str(kind["name"])
    return None


def _worded(results: list[dict[str, Any]], lang: str) -> tuple[str, str]:
    """(alternative, baseline) for the kind of test all the results share; the groups' wording
    otherwise."""
    kinds = {r.get("test_kind") for r in results}
    if len(kinds) == 1 and (name := kinds.pop()) is not None:
        kind = next(k for k in test_kinds() if k["name"] == name)
        return str(kind["alternative"][lang]), str(kind["baseline"][lang])
    return _H["confounding"][lang], _H["baseline"][lang]


def hypothesis_set(
    results: list[dict[str, Any]], plan: dict[str, Any] | None, question: str, language: str, scope: str = "full"
) -> dict[str, Any]:
    """Primary, alternatives and baseline, each supported / inconclusive / unsupported."""
    if not needs_hypotheses(plan, question, scope):
        return {"primary": None, "alternatives": [], "baseline": None, "all": []}
    lang = "zh" if language == "zh" else "en"
    passed = [r for r in results if r["status"] in STANDING]  # a partly verified claim's found numbers stand
    failed = [r for r in results if r["status"] == "failed"]
    tested = [r for r in passed if r["p_value"] is not None]
    significant = [r for r in tested if r["p_value"] < r["alpha"]]
    if significant:
        primary = "supported"
    elif tested:
        primary = "unsupported"
    elif passed and not failed and (plan or {}).get("question_type") in (None, "description", "other", "data_quality"):
        primary = "supported"
    else:
        primary = "inconclusive"
    baseline = {"supported": "unsupported", "unsupported": "supported"}.get(primary, "inconclusive")
    if primary == "supported" and not tested:
        baseline = "inconclusive"  # a description does not test chance
    statement = restatement((plan or {}).get("goal") or question)
    alternative, null = _worded(tested or passed or results, lang)  # a normality test has no groups
    hypotheses = [
        {
            "id": "H1",
            "role": "primary",
            "statement": statement,
            "status": primary,
            "evidence_ids": [r["evidence_id"] for r in (significant or tested or passed)],
        },
        {
            "id": "H2",
            "role": "alternative",
            "statement": alternative,
            "status": "inconclusive",
            "evidence_ids": [],
        },
    ]
    if len((plan or {}).get("metrics") or []) > 1:
        hypotheses.append(
            {
                "id": f"H{len(hypotheses) + 1}",
                "role": "alternative",
                "statement": _H["definition"][lang],
                "status": "inconclusive",
                "evidence_ids": [],
            }
        )
    hypotheses.append(
        {
            "id": f"H{len(hypotheses) + 1}",
            "role": "baseline",
            "statement": null,
            "status": baseline,
            "evidence_ids": [r["evidence_id"] for r in tested],
        }
    )
    return {
        "primary": hypotheses[0],
        "alternatives": [h for h in hypotheses if h["role"] == "alternative"],
        "baseline": hypotheses[-1],
        "all": hypotheses,
    }


def synthesis_policy(
    results: list[dict[str, Any]], hypotheses: dict[str, Any], experiment: bool = False
) -> dict[str, Any]:
    """How the answer may be written, given what verification found (and whether the user confirmed
    a randomised experiment: then a causal reading of the tested difference is allowed)."""
    failed = [r for r in results if r["status"] == "failed"]
    partly = [r for r in results if r["status"] == "partly_verified"]
    passed = [r for r in results if r["status"] in STANDING]
    # the rows behind a result on periods count, not the number of periods (12 months of 4,392 rows)
    sizes = [max(r["sample_size"], r.get("rows_behind") or 0) for r in passed if isinstance(r["sample_size"], int)]
    tested = [r for r in passed if r["p_value"] is not None]
    # Thin is about the evidence, not the bookkeeping: nothing checked out, the model itself rated it
    # low, a handful of rows, or a small sample whose tests all came out null. A significant test on
    # 20 rows, or a mean of 15 values, is backed (the automatic "high" -> "medium" downgrade for
    # n < 30 already hedges the wording).
    small, null = (
        bool(sizes) and max(sizes) < SMALL_SAMPLE,
        bool(tested) and all(r["p_value"] >= r["alpha"] for r in tested),
    )
    # (claims that failed are the failed rule's business: "thin" would tell the model to gather more
    # data when it only has to correct a claim)
    thin = (
        (not passed and not failed)
        or bool(passed)
        and (
            all(r["confidence"] == "low" for r in passed)
            or (bool(sizes) and max(sizes) < TINY_SAMPLE)
            or (small and null)
        )
    )
    primary = (hypotheses.get("primary") or {}).get("status")
    hedged = (
        bool(failed)
        or bool(partly)
        or thin
        or primary not in (None, "supported")
        or any(r["confidence"] != "high" for r in passed)
    )
    rules = []
    if failed:
        rules.append(
            "Verification failed for some claims: correct them (record evidence that cites the right tool "
            "calls, with numbers copied from the outputs and wording that matches the method run) or leave "
            "them out; state the limitation plainly."
        )
    if partly:
        rules.append(
            "Some numbers of recorded claims were not found in the outputs they cite: correct those numbers "
            "(copy them from the outputs) or leave them out; the claims' other numbers stand."
        )
    if thin:
        rules.append("The evidence is thin: do not give recommendations; say what more data or analysis is needed.")
    elif failed:
        rules.append("Do not give recommendations while claims are unverified.")
    if hedged:
        causal = (
            "causal language only for the randomised comparison the user confirmed"
            if experiment
            else "no causal language"
        )
        rules.append(
            f'Use hedged wording ("suggests", "is associated with"); {causal}; call a result '
            "significant only when p < alpha."
        )
    if primary == "unsupported":
        rules.append("The primary hypothesis is not supported: say so plainly (no clear difference/relationship).")
    return {
        "verification": "failed" if failed else "partly_verified" if partly else ("passed" if results else "not_run"),
        "recommendations": "suppressed" if failed or thin else "allowed",
        "wording": "hedged" if hedged else "direct",
        "evidence_thin": thin,
        "rules": rules,
    }
