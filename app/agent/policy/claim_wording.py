"""What a claim's words say (SPEC §8), read against the methods that were run: causal words, "significant"
/"显著", tests named, effect sizes called big, the p-values stated and computed (zh and en, with negation
and hedges). Pure functions over text and tool-call records."""

from __future__ import annotations

import re
from collections.abc import Iterable

from analysis_tools import ToolContext
from analysis_tools.common import effect_label
from app.agent.store import Evidence, Run, Session, ToolCall, answered_questions

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


METHOD_SECTION = re.compile(r"^\[method\]\n(.*?)(?=^\[\w+\]\n|\Z)", re.S | re.M)


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
    parts += [m.group(1) for m in METHOD_SECTION.finditer(call.result_text or "")]
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
