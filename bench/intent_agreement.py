"""How the intent classifier reads the questions of the training sets and of the tests (issue 24 point 2).

    PYTHONPATH=$PWD python bench/intent_agreement.py --record bench/intent_baseline.json   # the reading now
    PYTHONPATH=$PWD python bench/intent_agreement.py --compare bench/intent_baseline.json  # agreement with it

Every question of the training sets (data/eval/tasks.json, holdout.json, holdout2-4.json, holdout7.json;
never the sealed sets), each earlier question of a follow-up task, the questions the tests assert a
kind for, and every question a test hands to the harness (harness_questions: a run, a session, a
toolbox; its kind shapes the turn the test checks). A question with an earlier one in its conversation is read with history. `--compare` prints
the questions read differently and the agreement on kind and on scope (one figure or full), and the
tests' questions whose kind differs from the kind the test asserts. `--time` measures the reading, warm.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# run as a script, bench/ comes first on the path, and its sandbox.py would shadow the sandbox package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]

from app.agent.policy.intent import classify  # noqa: E402
from tests.intent_cases import RULE_KINDS  # noqa: E402

TRAINING = ("tasks", "holdout", "holdout2", "holdout3", "holdout4", "holdout7")

# The questions the tests assert a kind (or one figure) for: (question, has_history, kind, scope or None):
# test_intent's rule cases (one list, tests/intent_cases.py) and the kinds other tests assert.
TESTS: list[tuple[str, bool, str, str | None]] = [
    *[(q, h, k, None) for q, h, k in RULE_KINDS],
    *[
        (q, h, k, None)
        for q, h, k in [
            ("why is that?", False, "analysis"),
            ("不要做因果，只做描述：收入和广告的关系", False, "analysis"),
            ("descriptive only please: revenue by region", False, "analysis"),
            ("don't make causal claims about ads and revenue", False, "analysis"),
            ("不要建模，看看销售额分布", False, "analysis"),
            ("no forecasts, just compare the months", False, "analysis"),
            ("no charts, compare revenue by region", False, "analysis"),
            ("hello", False, "chat"),
            ("compare revenue by region", False, "analysis"),
            ("full report", False, "deep"),
            ("full report please", False, "deep"),
            ("a full report please", False, "deep"),
            ("Write a full report on this data", False, "deep"),
            ("build a churn model", False, "deep"),
            ("Does revenue differ by region?", False, "analysis"),
            ("sales trend over time", False, "analysis"),
            ("Analyse revenue across our regions", False, "analysis"),
            ("How has revenue trended over time?", False, "analysis"),
            ("Did systolic pressure drop after the treatment?", False, "analysis"),
            ("Drop the rows where Ozone is missing", False, "data_prep"),
            ("drop duplicates", False, "data_prep"),
        ]
    ],
    *[
        (q, False, "analysis", "single")
        for q in [
            "Report the mean sepal length.",
            "What is the average horsepower of the car models?",
            "Report the Shapiro-Wilk p-value for mpg.",
            "计算平均年龄并报告结果",
            "Perform a Shapiro-Wilk test on mpg and report the p-value.",
            "Conduct a chi-square test between sex and survived, and report the p-value.",
            "Fit a line of price on area. Report the slope.",
            "What is the mean revenue?",
        ]
    ],
]


def training_questions() -> list[tuple[str, str, bool]]:
    """(where, question, has_history) for every question of the training sets, earlier turns included."""
    found: list[tuple[str, str, bool]] = []
    for name in TRAINING:
        for task in json.loads((ROOT / "data" / "eval" / f"{name}.json").read_text(encoding="utf-8"))["tasks"]:
            earlier = list(task.get("before") or [])
            for i, question in enumerate(earlier):
                found.append((f"{name}:{task['id']}:before{i}", question, i > 0))
            found.append((f"{name}:{task['id']}", task["question"], bool(earlier)))
    return found


# Where the tests hand a question to the harness (a run, a session, a toolbox, the classifier): every
# such question's kind shapes the turn the test checks (its tools, its gates, its budgets), asserted or not.
FILE_NAME = re.compile(r"/|\.(?:csv|xlsx?|json|parquet)$")  # a file handed to a session, not a question
HARNESS_CALLS = {"start_run", "ask", "toolbox_for", "classify", "decide", "run_against", "run_turn", "first"}


def _literal(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def harness_questions() -> list[tuple[str, str, bool]]:
    """(where, question, has_history) for every question a test passes to the harness: the string
    argument of a call in HARNESS_CALLS, a `question=` argument, a {"question": ...} value. The second and
    later question of a test function are read with history (a test's turns share a workspace)."""
    found: dict[tuple[str, bool], str] = {}
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(function, ast.FunctionDef):
                continue
            asked: list[str] = []
            for node in ast.walk(function):
                texts: list[str | None] = []
                if isinstance(node, ast.Call):
                    name = getattr(node.func, "attr", getattr(node.func, "id", ""))
                    if name in HARNESS_CALLS:
                        texts += [_literal(a) for a in node.args]
                    texts += [_literal(k.value) for k in node.keywords if k.arg == "question"]
                elif isinstance(node, ast.Dict):
                    texts += [_literal(v) for k, v in zip(node.keys, node.values) if _literal(k) == "question"]
                asked += [t for t in texts if t and t.strip() and not FILE_NAME.search(t) and len(t) < 400]
            for i, question in enumerate(dict.fromkeys(asked)):
                found.setdefault((question, i > 0), f"harness:{path.stem}:{function.name}")
    return [(f"{where}:{i}", q, h) for i, ((q, h), where) in enumerate(found.items())]


def reading(question: str, has_history: bool) -> dict[str, str]:
    intent = classify(question, has_history=has_history)
    return {"kind": intent.kind, "scope": intent.scope, "groups": ",".join(intent.groups), "reason": intent.reason}


def record() -> dict[str, dict[str, object]]:
    from app.understanding import semantic

    # one batch first (then cached): a question at a time would cost a model call each
    semantic.embed(
        list(
            dict.fromkeys(
                [q.strip() for _, q, _ in training_questions() + harness_questions()] + [t[0].strip() for t in TESTS]
            )
        ),
        True,
    )
    rows: dict[str, dict[str, object]] = {}
    for where, question, history in training_questions() + harness_questions():
        rows[where] = {"question": question, "history": history, **reading(question, history)}
    for i, (question, history, kind, scope) in enumerate(TESTS):
        rows[f"test:{i}"] = {"question": question, "history": history, **reading(question, history), "asserted": kind}
        if scope:
            rows[f"test:{i}"]["asserted_scope"] = scope
    return rows


def compare(baseline: dict[str, dict[str, object]]) -> None:
    now = record()
    same_kind = same_scope = 0
    for where, old in baseline.items():
        new = now.get(where)
        if new is None or new["question"] != old["question"]:
            print(f"{where:45} not asked now (the bench's questions changed: record the baseline again)")
            continue
        same_kind += old["kind"] == new["kind"]
        same_scope += old["scope"] == new["scope"]
        if (old["kind"], old["scope"]) != (new["kind"], new["scope"]):
            print(f"{where:45} {old['kind']}/{old['scope']} -> {new['kind']}/{new['scope']}  {old['question']}")
    n = len(baseline)
    print(f"agreement: kind {same_kind}/{n} ({same_kind / n:.1%}), scope {same_scope}/{n} ({same_scope / n:.1%})")
    wrong = [
        (w, r)
        for w, r in now.items()
        if "asserted" in r and (r["kind"] != r["asserted"] or r.get("asserted_scope", r["scope"]) != r["scope"])
    ]
    for where, row in wrong:
        print(f"test disagrees {where}: {row['question']!r} -> {row['kind']}/{row['scope']} (test: {row['asserted']})")
    print(f"tests' kinds met: {sum('asserted' in r for r in now.values()) - len(wrong)}/{len(TESTS)}")


def sweep() -> None:
    """Each question's lead per kind (intent.leads), sorted, with the kind the tests or the old reading
    gave it: where a margin falls between the questions of the kind and the others."""
    from app.agent.policy import intent as rules
    from app.understanding import semantic

    baseline = json.loads((ROOT / "bench" / "intent_baseline.json").read_text(encoding="utf-8"))
    semantic.embed([r["question"].strip() for r in baseline.values()], query=True)  # one batch, then cached
    rows = []
    for where, row in baseline.items():
        if row["kind"] == "chat":
            continue
        scores = rules.prototype_scores(str(row["question"]))
        label = str(row.get("asserted", row["kind"]))
        if label == "analysis" and row.get("asserted_scope", row["scope"] if "asserted" not in row else "") == "single":
            label = "single"
        rows.append((where, label, row, scores, rules.leads(scores)))
    for kind in ("consult", "data_prep", "deep", "followup", "single"):
        print(f"--- {kind}: lead, the question's kind, the question")
        ranked = sorted(rows, key=lambda r: -(r[3]["single"] - r[3]["analysis"] if kind == "single" else r[4][kind]))
        for where, label, row, scores, lead in ranked[:60]:
            value = scores["single"] - scores["analysis"] if kind == "single" else lead[kind]
            print(f"{value:+.3f} {label:10} {'H' if row['history'] else ' '} {where:40} {str(row['question'])[:70]}")
    print(f"lowest best score: {min(max(r[3].values()) for r in rows):.3f}")


def timing() -> None:
    questions = [q for _, q, _ in training_questions()]
    for q in questions:  # warm: the model loaded and every question embedded once
        classify(q)
    start = time.perf_counter()
    for q in questions:
        classify(q)
    cached = (time.perf_counter() - start) / len(questions)
    from app.understanding import semantic

    semantic._cache.clear()  # each question embedded afresh (the prototypes too: the worst case)
    start = time.perf_counter()
    for q in questions:
        classify(q)
    fresh = (time.perf_counter() - start) / len(questions)
    print(f"{len(questions)} questions: {fresh * 1000:.1f} ms per question fresh, {cached * 1000:.2f} ms cached")


if __name__ == "__main__":
    if "--record" in sys.argv:
        out = Path(sys.argv[sys.argv.index("--record") + 1])
        out.write_text(json.dumps(record(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    elif "--compare" in sys.argv:
        compare(json.loads(Path(sys.argv[sys.argv.index("--compare") + 1]).read_text(encoding="utf-8")))
    elif "--sweep" in sys.argv:
        sweep()
    elif "--time" in sys.argv:
        timing()
    else:
        print(__doc__)
