"""Claim verification after tool rounds, the hypothesis set and the synthesis policy (SPEC §8).

After each round of tool calls, when gated (analysis/deep intent, new evidence since the last
check), every new evidence item is checked against the tool calls it cites:
- numbers: each number in the claim, summary and metrics must be found in the cited outputs, at the
  precision written (the shared matcher of `app.numbers`: rounding, %, separators, 万/亿, k/M);
- wording against the method run: causal words from observational methods, a test that was not run,
  "significant"/"显著" when every p-value is >= alpha (zh and en, with negation and hedges).
The results update the hypothesis set (primary, alternatives, baseline) and the synthesis policy
(recommendations allowed or suppressed, wording direct or hedged); both are kept in `Run.state`,
emitted as a `verification` event and injected into the next round as a harness block.
When the model answers, `check_answer` lists the answer's unbacked numbers and, when verification
failed, adds a limitation paragraph in the user's language and removes recommendations.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from analysis_tools import ToolContext
from analysis_tools.common import effect_label
from app.agent.run_scope import run_scope
from app.agent.store import Evidence, Run, Session, ToolCall, answered_questions, run_by_id, run_evidence, run_tool_call
from app.agent.tools.tasks import stale_task_reminder
from app.numbers import metric_token, unverified_numbers
from app.reports.builder import run_backing

GATED_TIERS = ("analysis", "deep")
ALPHA = 0.05
SMALL_SAMPLE = 30  # below it a null result is thin evidence (SPEC §8's n < 30)
TINY_SAMPLE = 10  # below it any result is

# --- wording ---------------------------------------------------------------------------------------
_CLAUSE = re.compile(r"[.;:!?。；：！？,，\n]+(?:\s|$)|[。；：！？，\n]")
# "drive" the verb, not the noun: "front-wheel drive", "4-wheel-drive", "data-driven", "test drive", "drive train"
CAUSAL = re.compile(
    r"\bcaus(?:e|es|ed|ing|al|ally|ation)\b|\blead(?:s|ing)? to\b|\bled to\b|"
    r"(?<!-)(?<!wheel )(?<!test )(?<!hard )(?<!disk )\bdriv(?:e|es|en|ing)\b(?![- ]?(?:train|way|through|shaft))|"
    r"\bbecause of\b|\bresult(?:s|ed)? in\b|导致|造成|引起|使得|致使",
    re.IGNORECASE,
)
# Hedges and negations that make a causal word not a causal claim ("may drive", "is not causation",
# "could be caused by chance", "不能说明导致", "偶然造成").
CAUSAL_HEDGE = re.compile(
    r"\b(?:not|no|never|cannot|can't|without|may|might|could|possibly|whether|if|unclear|"
    r"neither|nor|chance|randomly)\b|n't\b|不|没|无|未|非|可能|或许|是否|偶然|随机",
    re.IGNORECASE,
)
EXPERIMENT = re.compile(
    r"randomi[sz]ed|\brandom(?:ly)? assign\w*|\bassigned (?:at )?random\w*|\bexperiment|\ba/b\b|"
    r"\bRCT\b|随机对照|随机分组|随机分配|实验",
    re.IGNORECASE,
)
# A clarification answered yes ("Go ahead" to the experiment gate, "Yes" to "were they randomly assigned?")
AFFIRMATIVE = re.compile(
    r"^\s*(?:yes|yep|yeah|go ahead|correct|right|true|confirm\w*|indeed|it was|they were|"
    r"是|对|没错|继续|确认|确定)",
    re.IGNORECASE,
)

SIGNIFICANT = re.compile(r"(?<![A-Za-z-])(?:statistically\s+)?significan(?:t|tly|ce)\b|显著", re.IGNORECASE)
NOT_A_CLAIM = re.compile(r"significance level|level of significance|显著性水平|显著水平", re.IGNORECASE)
NEGATION = re.compile(
    r"\b(?:not|no|never|cannot|without|neither|nor|non|lacks?|fail(?:s|ed)? to)\b|n't\b|"
    r"不|没|无|未|非|否",
    re.IGNORECASE,
)
ZH_NOT_NEGATIONS = re.compile(r"不同|不仅|不少|不断|不管|无论|非常|未来|并且")

# Effect-size words follow the effect-size thresholds (Cohen's, as the tools label them: effect_label),
# not the p-value: with many rows a negligible difference is "significant" too.
EFFECT_KINDS = {
    "cohen_d": "d",
    "cohen_dz": "d",
    "cohen_h": "d",
    "hedges_g": "d",
    "rank_biserial": "r",
    "cramers_v": "r",
    "kendall_tau": "r",
    "eta_squared": "eta2",
    "epsilon_squared_h": "eta2",
}
BIG_EFFECT = re.compile(
    r"\blarge enough to act on\b|\b(?:large|big|strong|substantial|huge|major|sizeable|sizable|"
    r"considerable|dramatic|massive)\b(?:\s+\w+){0,2}?\s+(?:effect|difference|gap|association|"
    r"relationship|impact|increase|decrease|drop|rise)s?\b|很大的(?:差异|影响|效应|差距)|大幅(?:高于|低于|提升|下降)",
    re.IGNORECASE,
)

TESTS: dict[str, str] = {
    "t-test": r"\bt[- ]?tests?\b|\bstudent'?s t\b|\bwelch'?s? t\b|(?<![A-Za-z])t\s*检验",
    "Mann-Whitney U test": r"mann[- –]?whitney|wilcoxon rank[- ]sum|\bu[- ]test\b|曼[-–]?惠特尼|秩和检验",
    "Wilcoxon signed-rank test": r"wilcoxon signed|符号秩",
    "ANOVA": r"\banova\b|analysis of variance|方差分析",
    "Kruskal-Wallis test": r"kruskal|克鲁斯卡尔",
    "chi-square test": r"chi[- ]?squared?|χ2|χ²|卡方",
    "Fisher's exact test": r"fisher'?s? exact|费舍尔精确",
    "Pearson correlation": r"\bpearson|皮尔逊",
    "Spearman correlation": r"\bspearman|斯皮尔曼",
    "Kendall's tau": r"\bkendall|肯德尔",
    "logistic regression": r"logistic regression|逻辑回归",
}
# What a cited call ran, as library calls in run_python code name it (scipy, statsmodels, pandas).
RAN_IN_CODE: dict[str, str] = {
    "t-test": r"ttest_(?:ind|rel|1samp)|\bttest\b|t_test\(",
    "Mann-Whitney U test": r"mannwhitneyu|ranksums",
    "Wilcoxon signed-rank test": r"\bwilcoxon\(",
    "ANOVA": r"f_oneway|anova_lm|AnovaRM|anova_oneway|pairwise_tukeyhsd",
    "chi-square test": r"chi2_contingency|chisquare\(",
    "Fisher's exact test": r"fisher_exact",
    "Pearson correlation": r"pearsonr|\.corr\(\s*\)|\.corr\(\s*method\s*=\s*['\"]pearson|corrcoef|\.corrwith\(",
    "Spearman correlation": r"spearmanr|method\s*=\s*['\"]spearman",
    "Kendall's tau": r"kendalltau|method\s*=\s*['\"]kendall",
    "logistic regression": r"\bLogit\b|\blogit\(|LogisticRegression",
}
# "Pearson" that is not a correlation: Pearson's skewness, his chi-squared test, Pearson residuals.
NOT_PEARSON_CORRELATION = re.compile(
    r"\bpearson(?:'s|’s|s)?\s+(?:\w+\s+){0,3}?(?:skew|mode|median|chi|χ|residual|"
    r"kurtosis|type|distribution|coefficient of (?:skew|variation))",
    re.IGNORECASE,
)
TEST_NEGATION = re.compile(
    r"\b(?:not|no|instead of|rather than|than|without|unlike|alternative to)\b|n't\b|"
    r"不是|而非|并非|不用|而不是|代替|替代",
    re.IGNORECASE,
)
_SECTION = re.compile(r"^\[method\]\n(.*?)(?=^\[\w+\]\n|\Z)", re.S | re.M)


def clauses(text: str) -> list[str]:
    return [c for c in _CLAUSE.split(text or "") if c.strip()]


def _before(clause: str, start: int, width: int = 48) -> str:
    return ZH_NOT_NEGATIONS.sub("", clause[max(0, start - width) : start])


def causal_claims(text: str) -> list[str]:
    """Causal words used as claims (not negated, not hedged)."""
    found = []
    for clause in clauses(text):
        for match in CAUSAL.finditer(clause):
            if not CAUSAL_HEDGE.search(_before(clause, match.start())):
                found.append(match.group(0))
    return found


def significance_claims(text: str) -> list[str]:
    """'significant'/'显著' asserted (not "not significant", "不显著", "没有显著", "significance level")."""
    found = []
    for clause in clauses(text):
        if NOT_A_CLAIM.search(clause):
            clause = NOT_A_CLAIM.sub(" ", clause)
        for match in SIGNIFICANT.finditer(clause):
            width = 10 if match.group(0) == "显著" else 40
            if not NEGATION.search(_before(clause, match.start(), width)):
                found.append(match.group(0))
    return found


def named_tests(text: str) -> list[str]:
    """The statistical tests the text says were used (negated mentions such as "instead of a t-test" left out;
    "Pearson's skewness" or "Pearson's chi-squared test" is not a Pearson correlation)."""
    named = []
    for name, pattern in TESTS.items():
        for clause in clauses(text):
            if name == "Pearson correlation":
                clause = NOT_PEARSON_CORRELATION.sub(" ", clause)
            match = re.search(pattern, clause, re.IGNORECASE)
            if match and not TEST_NEGATION.search(_before(clause, match.start(), 24)):
                named.append(name)
                break
    return named


def effect_sizes(calls: Iterable[ToolCall]) -> list[tuple[str, float, str]]:
    """(name, value, conventional label) of the effect sizes the cited calls computed."""
    found = []
    for call in calls:
        metrics = call.metrics or {}
        name, value = metrics.get("effect_size_name"), metrics.get("effect_size")
        if name in EFFECT_KINDS and isinstance(value, (int, float)) and not isinstance(value, bool):
            found.append((str(name), float(value), effect_label(float(value), EFFECT_KINDS[name], ToolContext())))
    return found


def big_effect_claims(text: str) -> list[str]:
    """Words that call an effect large ("a large difference", "large enough to act on"), not negated."""
    return [
        m.group(0)
        for clause in clauses(text)
        for m in BIG_EFFECT.finditer(clause)
        if not NEGATION.search(_before(clause, m.start(), 24))
    ]


def method_text(call: ToolCall) -> str:
    """What a tool call actually ran: its tool, its method argument, its [method] section; for
    run_python, the code itself (stats.pearsonr is a Pearson correlation)."""
    arguments = call.arguments or {}
    parts = [call.tool.replace("_", " "), str(arguments.get("method") or "")]
    parts += [str(v) for k, v in (call.metrics or {}).items() if k in ("method", "test") and isinstance(v, str)]
    parts += [m.group(1) for m in _SECTION.finditer(call.result_text or "")]
    if call.tool == "run_python":
        parts.append(str(arguments.get("code") or ""))
    return " ".join(parts)


def was_run(test: str, run_methods: str) -> bool:
    """Did the cited calls run this test (by name, or by the library call in run_python code)?"""
    return bool(
        re.search(TESTS[test], NOT_PEARSON_CORRELATION.sub(" ", run_methods), re.IGNORECASE)
        or (test in RAN_IN_CODE and re.search(RAN_IN_CODE[test], run_methods))
    )


def p_values(calls: Iterable[ToolCall]) -> list[float]:
    out = []
    for call in calls:
        for key, value in (call.metrics or {}).items():
            if (
                (key == "p_value" or key.endswith(".p_value") or key.startswith("p_value."))
                and isinstance(value, (int, float))
                and not isinstance(value, bool)
            ):
                out.append(float(value))
    return out


# A p-value the claim states: "p = 0.0014", "p < 0.001", "p-value 0.03", "P值=0.02", "p值 < 0.001"
STATED_P = re.compile(r"\bp(?:[\s-]*values?|值)?\s*(?:=|<|≤|<=|:)?\s*(\d*\.\d+(?:e-?\d+)?|\d+e-\d+)", re.IGNORECASE)
P_KEY = re.compile(r"(?:^|[._\s-])(?:p|pval|pvalue|p_value)(?:$|[._\s-])", re.IGNORECASE)


def stated_p_values(item: Evidence) -> list[float]:
    """The p-values an evidence item states itself, in its metrics (a key like `p`, `welch_p`,
    `p_interaction`) or its claim ("p = 0.0014", "p < 0.001"). They count only once the claim's
    numbers were found in the cited outputs: for run_python, whose results carry no named metrics,
    this is how a test it ran reaches the hypotheses."""
    found = [
        float(v)
        for k, v in (item.metrics or {}).items()
        if P_KEY.search(str(k)) and isinstance(v, (int, float)) and not isinstance(v, bool)
    ]
    found += [float(m.group(1)) for m in STATED_P.finditer(" ".join([item.claim or "", item.result_summary or ""]))]
    return [p for p in found if 0 <= p <= 1]


def _says_experiment(text: str) -> bool:
    """The text calls the data a randomised experiment (not "not randomised", "non-randomised")."""
    return any(not NEGATION.search(text[max(0, m.start() - 20) : m.start()]) for m in EXPERIMENT.finditer(text or ""))


def confirmed_experiment(session: Session, run: Run) -> bool:
    """Did the user confirm, in a clarification of this workspace, that the data come from a
    randomised experiment? The experiment gate answered "Go ahead", a question about random
    assignment answered yes, or an answer that says so itself ("it was an A/B test"). Then a
    causal reading is the user's confirmed premise (user tier), not the model's leap."""
    for row in answered_questions(session, run.workspace_id):
        answer = ", ".join(map(str, row.answer)) if isinstance(row.answer, list) else str(row.answer)
        if _says_experiment(answer):
            return True
        asked = row.topic == "method.experiment" or _says_experiment(row.question or "")
        if asked and AFFIRMATIVE.search(answer) and not NEGATION.search(answer):
            return True
    return False


# --- one claim ----------------------------------------------------------------------------------------
def verify_evidence(
    item: Evidence, calls: list[ToolCall], question: str = "", experiment: bool = False
) -> dict[str, Any]:
    """Check one evidence item against the tool calls it cites; issues are plain-language strings.
    Numbers the user gave (the question) or the method states (a threshold, a split) are backed
    too, as are the cited calls' arguments (run_python's code included)."""
    issues: list[dict[str, str]] = []
    wording = " ".join([item.claim or "", item.result_summary or ""])
    metric_text = " ".join(
        metric_token(v)
        for v in (item.metrics or {}).values()
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    )
    texts = [c.result_text or "" for c in calls] + [c.interpretation or "" for c in calls]
    texts += [question or "", item.method or ""]
    values = [c.metrics or {} for c in calls] + [c.arguments or {} for c in calls]
    ids = [c.id for c in calls] + [item.id]
    for number in unverified_numbers(f"{wording}\n{metric_text}", texts, values, ignore_strings=ids):
        issues.append({"kind": "number", "detail": f"{number} is not in the outputs of {', '.join(ids[:-1])}"})
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
            ran = "; ".join(m.strip() for c in calls for m in _SECTION.findall(c.result_text or "")) or ", ".join(
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
        "status": "failed" if issues else "passed",
        "issues": issues,
        "tool_call_ids": [c.id for c in calls],
        "confidence": item.confidence,
        "sample_size": item.sample_size,
        "p_value": min(ps) if ps else None,
        "alpha": alpha,
    }


def _resolved(results: list[dict[str, Any]], withdrawn: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each result's status from its own check: a claim the model superseded or retracted
    (`withdrawn`) no longer counts; a failed claim counts as corrected when a later claim citing one
    of its tool calls passed."""
    results = [{**r, "check": _check(r)} for r in results]
    out = []
    for i, result in enumerate(results):
        status = result["check"]
        if result["evidence_id"] in withdrawn:
            status = "superseded" if withdrawn[result["evidence_id"]].get("by") else "retracted"
        elif status == "failed" and any(
            later["check"] == "passed"
            and later["evidence_id"] not in withdrawn
            and set(later["tool_call_ids"]) & set(result["tool_call_ids"])
            for later in results[i + 1 :]
        ):
            status = "corrected"
        out.append({**result, "status": status})
    return out


def _check(result: dict[str, Any]) -> str:
    """What the check itself found (passed or failed), whatever happened to the claim later."""
    return result.get("check") or ("passed" if result["status"] == "passed" else "failed")


def withdrawn_evidence(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Evidence the model superseded or retracted in this run: id -> {"by": new id or None, "reason"}."""
    return dict((state.get("verification") or {}).get("withdrawn") or {})


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


def hypothesis_set(
    results: list[dict[str, Any]], plan: dict[str, Any] | None, question: str, language: str, scope: str = "full"
) -> dict[str, Any]:
    """Primary, alternatives and baseline, each supported / inconclusive / unsupported."""
    if not needs_hypotheses(plan, question, scope):
        return {"primary": None, "alternatives": [], "baseline": None, "all": []}
    lang = "zh" if language == "zh" else "en"
    passed = [r for r in results if r["status"] == "passed"]
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
            "statement": _H["confounding"][lang],
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
            "statement": _H["baseline"][lang],
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
    passed = [r for r in results if r["status"] == "passed"]
    sizes = [r["sample_size"] for r in passed if isinstance(r["sample_size"], int)]
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
        bool(failed) or thin or primary not in (None, "supported") or any(r["confidence"] != "high" for r in passed)
    )
    rules = []
    if failed:
        rules.append(
            "Verification failed for some claims: correct them (record evidence that cites the right tool "
            "calls, with numbers copied from the outputs and wording that matches the method run) or leave "
            "them out; state the limitation plainly."
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
        "verification": "failed" if failed else ("passed" if results else "not_run"),
        "recommendations": "suppressed" if failed or thin else "allowed",
        "wording": "hedged" if hedged else "direct",
        "evidence_thin": thin,
        "rules": rules,
    }


# --- the harness hooks ----------------------------------------------------------------------------------
def _gated(turn: Any) -> bool:
    intent = getattr(turn, "intent", None)
    return intent is None or getattr(intent, "tier", "analysis") in GATED_TIERS


def _run(turn: Any) -> tuple[Session, Run] | None:
    """The run the turn works for, with its session; None outside a run (a toolbox on its own)."""
    scope = run_scope(turn.toolbox.context, missing_ok=True)
    session = scope.session
    if session is None or not scope.run_id:
        return None
    run = run_by_id(session, scope.run_id)
    return None if run is None else (session, run)


def verify_run(session: Session, run: Run, emit, final: bool = False) -> dict[str, Any] | None:
    """Check the evidence recorded since the last check; update and persist hypotheses and policy.
    Returns the verification state, or None when there was nothing new to check."""
    state = dict(run.state or {})
    verification = dict(state.get("verification") or {"results": []})
    checked = {r["evidence_id"] for r in verification["results"]}
    items = run_evidence(session, run.id)
    new = [e for e in items if e.id not in checked]
    withdrawn = withdrawn_evidence(state)
    if not new and not final and sorted(withdrawn) == verification.get("applied_withdrawals", []):
        return None
    results = [dict(r) for r in verification["results"]]
    experiment = confirmed_experiment(session, run) if new else bool(verification.get("experiment"))
    for item in new:
        calls = [c for cid in item.tool_call_ids or [] if (c := run_tool_call(session, run.id, cid))]
        results.append(verify_evidence(item, calls, run.question or "", experiment))
    results = _resolved(results, withdrawn)
    hypotheses = hypothesis_set(
        results, state.get("plan"), run.question, run.language, (state.get("intent") or {}).get("scope", "full")
    )
    policy = synthesis_policy(results, hypotheses, experiment)
    verification = {
        **verification,
        "results": results,
        "status": policy["verification"],
        "experiment": experiment,
        "checks": int(verification.get("checks", 0)) + (1 if new else 0),
        "applied_withdrawals": sorted(withdrawn),
    }
    run.state = {**state, "verification": verification, "hypotheses": hypotheses, "synthesis_policy": policy}
    emit(
        "verification",
        {
            "final": final,
            "checked": [e.id for e in new],
            "status": policy["verification"],
            "results": [r for r in results if r["evidence_id"] in {e.id for e in new}],
            "hypotheses": hypotheses["all"],
            "policy": policy,
        },
    )
    return run.state


def verification_block(state: dict[str, Any]) -> str:
    """The harness block for the next round: what failed, the hypotheses, the synthesis policy."""
    results, policy = state["verification"]["results"], state["synthesis_policy"]
    lines = []
    failed = [r for r in results if r["status"] == "failed"]
    for r in failed:
        lines.append(f"- evidence {r['evidence_id']} FAILED: " + "; ".join(i["detail"] for i in r["issues"]))
    passed = sum(r["status"] == "passed" for r in results)
    lines.append(
        f"- {passed} claim(s) passed, {len(failed)} failed, {len(results) - passed - len(failed)} "
        "corrected or withdrawn."
    )
    if failed:
        lines.append(
            "- Fix a failed claim with record_evidence(..., supersedes=[its id]) or withdraw it with "
            "retract_evidence; either way it stops counting against the answer."
        )
    if state["hypotheses"]["all"]:
        lines.append("Hypotheses:")
        lines += [f"- {h['id']} {h['role']} [{h['status']}]: {h['statement']}" for h in state["hypotheses"]["all"]]
    lines.append(f"Synthesis policy: recommendations {policy['recommendations']}, wording {policy['wording']}.")
    lines += [f"- {rule}" for rule in policy["rules"]]
    body = "\n".join(lines)
    return (
        f"[harness] Verification of the recorded claims against the tool outputs they cite.\n"
        f'<context source="harness-verification" tier="system">\n{body}\n</context>'
    )


def between_rounds(turn: Any) -> list[str]:
    """Harness notes due before the next model request: claim verification (gated) and the
    stale-task reminder. State lives in Run.state, so it survives a resume."""
    if (found := _run(turn)) is None:
        return []
    session, run = found
    notes = []
    if _gated(turn) and (state := verify_run(session, run, turn.recorder.emit)) is not None:
        notes.append(verification_block(state))
    watch = dict((run.state or {}).get("task_watch") or {})
    reminder = stale_task_reminder(session, run.id, turn.budget.rounds, watch)
    run.state = {**(run.state or {}), "task_watch": watch}
    if reminder:
        turn.recorder.emit("task_reminder", {"round": turn.budget.rounds})
        notes.append(reminder)
    return notes


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
    if (found := _run(turn)) is None or not (answer or "").strip():
        return answer
    session, run = found
    gated = _gated(turn)
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
