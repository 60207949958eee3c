"""Two measurements that move together: the plan for a question that relates two numbers
(a correlation, and the regression slope when it asks how much one changes per unit of the other)
or two categories (a chi-square test), and which of the two numbers is explained by the other
(`slope_roles`: the one a cause verb or a condition makes act, the one after "for each ...")."""

from __future__ import annotations

import re

from app.analyst.data_tasks import ordered_names
from app.analyst.steps import Column, Plan, Spans, Step, weighted_arguments
from app.understanding.everyday_words import is_condition_word
from app.understanding.kinds import EACH, MORE_MORE, SLOPE, moves_together
from app.understanding.language import local_text as _t
from app.understanding.outcome import measure_names
from app.understanding.profile_reading import GROUPING, NUMERIC, is_scale
from app.understanding.roles import Roles, groups_rows


def relation_steps(
    plan: Plan,
    question: str,
    columns: list[Column],
    spans: Spans,
    implied: str | None,
    roles: Roles,
    zh: bool,
    regression: bool = False,
) -> bool:
    """Two measurements named and no grouping: how they move together (correlation), and, when the
    question asks how much one changes per unit of the other ("for each extra inch", "每快1英里",
    "estimate volume from girth"), the regression slope. Two categories named and no measurement:
    whether they are related (chi-square)."""
    names = ordered_names(spans)
    kinds = {c["name"]: c for c in columns}
    measures = measure_names(columns, names)
    groups = [n for n in names if n not in measures and groups_rows(kinds[n])]
    scales = [n for n in groups if is_scale(kinds[n])]
    if len(measures) + len(scales) >= 2 and scales and len(scales) == len(groups):  # 1-5 ratings are scales here
        measures, groups = [n for n in names if n in measures or n in scales], []
    slope = bool(SLOPE.search(question) or roles.target)
    # "员工数越多的门店，订单数越多吗", "the bigger …, the more …": two numbers moving together, whatever groups
    # it names; a number with few values (Air.Flow) counts as a number here
    if MORE_MORE.search(question) and len(measures) < 2:
        measures = [n for n in names if n in measures or (kinds[n]["type"] in NUMERIC and kinds[n].get("coded"))]
    if len(measures) == 1 and (acting := [n for n in quantities_named(question, spans, kinds) if n not in measures]):
        # "Does exercise (0-7 hours) lower BMI?": how the two numbers go together, not BMI in 8 hour groups
        measures = [n for n in names if n in measures or n in acting]
        groups = [n for n in groups if n not in acting]
    together = bool(MORE_MORE.search(question)) and len(measures) >= 2
    if len(measures) >= 2 and (together or (not groups and not implied)) and (slope or not regression):
        target, predictors = slope_roles(question, spans, measures, roles)
        if slope and len(predictors) < 2 and WHICH.search(question):
            # "which matters more, A or B" with one of them found: one factor cannot be ranked, so the
            # other numbers stand beside it in the regression (the correlation keeps the named ones)
            extra = [str(c["name"]) for c in columns if c["type"] in NUMERIC and not c.get("pii")]
            ranked = [*predictors, *(n for n in extra if n != target and n not in predictors)]
        else:
            ranked = predictors
        plan.kind, plan.metric, plan.dimension = "relationship", target, None
        plan.words = {name: question[start:end] for start, end, name in reversed(spans)}  # the first word wins
        subject = _t(
            zh, f"Relationship of {target} with {', '.join(predictors)}", f"{target}与{'、'.join(predictors)}的关系"
        )
        plan.steps.append(Step("correlation_analysis", {"columns": [target, *predictors]}, subject))
        plan.steps.append(Step("plot_scatter", {"x_column": predictors[0], "y_column": target}, evidence=False))
        if slope:
            subject = _t(
                zh,
                f"How much {target} changes with {', '.join(predictors)}",
                f"{target}随{'、'.join(predictors)}变化多少",
            )
            plan.steps.append(
                Step("linear_regression", {"target_column": target, "feature_columns": ranked[:5]}, subject)
            )
        return True
    categories = [n for n in groups if kinds[n]["type"] in GROUPING]
    if not measures and len(categories) >= 2:
        plan.kind, plan.metric, plan.dimension = "association", None, categories[0]
        subject = _t(zh, f"Is {categories[0]} related to {categories[1]}", f"{categories[0]}与{categories[1]}是否有关")
        arguments = {"x_column": categories[0], "y_column": categories[1]}
        plan.steps.append(Step("chi_square_test", arguments | weighted_arguments(plan), subject))
        return True
    return False


# A question word asking which one (structure words): "which of …", "哪个", "哪一个"
WHICH = re.compile(r"\bwhich\b|哪", re.I)


# What one measure does to another ("Does exercise lower BMI?", "运动能降低BMI吗"): the one before the
# verb acts on the one after it.
CAUSE = re.compile(
    r"\b(?:lower|lowers|lowered|reduce[sd]?|reducing|raise[sd]?|raising|increase[sd]?|increasing|"
    r"decrease[sd]?|improve[sd]?|improving|boost(?:s|ed)?|cut(?:s)?|hurt(?:s)?|worsen(?:s|ed)?)\b|"
    r"降低|减少|减轻|提高|提升|增加|改善|拉低|拉高|导致",
    re.I,
)


# A condition the other measure is read under: "when the weather is hot" (the measure after the cue),
# "天气热的时候"/"气温高时" (the measure before it).
# The verb right before the measure it acts on ("lower BMI", "reduce the BMI", "降低BMI"): "is ozone lower
# on windy days" compares, it names no cause.
ACTS_ON = re.compile(rf"(?:{CAUSE.pattern})\s*(?:(?:the|a|an|your|their|our|one's|people's)\s+)?$", re.I)


# ("When did revenue peak?" asks for a time: no condition)
WHEN_EN = re.compile(r"\b(?:when|whenever|if)\b(?!\s+(?:was|were|did|does|do|is|are|will|has|have|had)\b)", re.I)


WHEN_ZH = re.compile(r"的时候|时候|时[，,]|的话")


def leading_measure(question: str, spans: Spans, measures: list[str]) -> str | None:
    """Of two measures, the one the question makes act on the other (a cause verb between them) or sets
    as the condition ("when …", "…的时候", a condition word: "hot", "热天"); None when it does neither."""
    placed = sorted((start, end, name) for start, end, name in spans if name in measures)
    firsts = {name: (start, end) for start, end, name in reversed(placed)}
    if len(firsts) != 2:
        return None
    (a, (_, a_end)), (b, (b_start, _)) = sorted(firsts.items(), key=lambda item: item[1])
    if a_end <= b_start and ACTS_ON.search(question[a_end:b_start]):
        return a
    if cue := WHEN_ZH.search(question):
        before = [name for start, _, name in placed if start < cue.start()]
        if before:
            return before[-1]
    if cue := WHEN_EN.search(question):
        after = [name for start, _, name in placed if start > cue.start()]
        if after:
            return after[0]
    # "热天气冰淇淋卖得更好吗", "on windy days": the measure named by a condition word is the condition
    conditions = {name for start, end, name in placed if is_condition_word(question[start:end])}
    return conditions.pop() if len(conditions) == 1 else None


# A grouping named as such ("by cylinders", "各档位", "across gears"): a code column that stays groups.
NAMED_AS_GROUPS = re.compile(
    r"\b(?:by|across|per|each|every|between|among|which)\s+(?:the\s+)?$|(?:各|每个|每|不同|按|哪个|哪种|哪些)\s*$", re.I
)


def quantities_named(question: str, spans: Spans, kinds: dict[str, Column]) -> list[str]:
    """Whole-number columns with few values (coded: Exercise Hours 0-7) the question treats as a quantity that
    acts on a measure ("Does exercise lower BMI?"), not named as groups ("by cylinders", "各档位")."""
    if not any(
        ACTS_ON.search(question[:start])
        for start, _, name in spans
        if name in measure_names(list(kinds.values()), [name])
    ):
        return []
    return [
        name
        for start, _, name in spans
        if kinds[name]["type"] in NUMERIC and kinds[name].get("coded") and not NAMED_AS_GROUPS.search(question[:start])
    ]


_CONJUNCTION = re.compile(r"^\s*(?:and|&|和|与|跟|及|以及|同)\s*$", re.I)


def _joined(question: str, spans: Spans, measures: list[str]) -> bool:
    """Two measurements named side by side with "and" between them ("广告费用和营业额", "height and weight")."""
    named = [(start, end) for start, end, name in spans if name in measures]
    return len(named) >= 2 and bool(_CONJUNCTION.match(question[named[0][1] : named[1][0]]))


def slope_roles(question: str, spans: Spans, measures: list[str], roles: Roles) -> tuple[str, list[str]]:
    """Which measurement is explained and which explains it: the regression cue's target when there
    is one; else the one named after "for each …" (en) or before "每…" (zh) is the predictor."""
    if roles.target in measures:
        predictors = [n for n in roles.predictors if n in measures and n != roles.target]
        return roles.target, predictors or [n for n in measures if n != roles.target]
    cue = SLOPE.search(question)
    each = EACH.search(question)
    if cue:
        positions = {name: start for start, _, name in spans if name in measures}
        at = each.start() if each else cue.start()
        if (each.group(0) if each else cue.group(0)).startswith(("每", "估计", "推算")):
            before = [n for n in measures if positions.get(n, 10**9) < at]
            predictor = max(before, key=lambda n: positions[n]) if before else measures[-1]
        else:
            after = [n for n in measures if positions.get(n, -1) > at]
            predictor = min(after, key=lambda n: positions[n]) if after else measures[-1]
        return next(n for n in measures if n != predictor), [predictor]
    if len(measures) == 2 and (led := leading_measure(question, spans, measures)):
        return next(n for n in measures if n != led), [led]
    if (moves_together(question) or _joined(question, spans, measures)) and len(measures) == 2:
        # "the windier, the less ozone", "广告费用和营业额": the second follows the first
        return measures[1], measures[:1]
    return measures[0], measures[1:]
