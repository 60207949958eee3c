"""What one question costs in prompt characters and tokens: Verity vs a one-request code-generation
baseline (issues 15 and 23).

Realistic single-statistic and multi-step questions over public datasets (R datasets in
data/reference, the bundled retail sample), DABench-like single-statistic questions among them, run
through the real harness: RunService, intent, tool exposure, the real analysis tools, evidence and
verification. A scripted model plays what a capable model does for each question: the tool calls it
can make at once in one reply (independent calls in parallel), then every piece of evidence in one
reply, then the answer; a tool not in the tools array is found with tool_search and called through
call_tool. Every request is measured as the OpenAI client sends it (the JSON body, compact
separators) and in tokens (o200k_base BPE, the harness's own counter).

The prefix-repeat share is the part of the request bytes that repeat the previous request's
bytes from its start (tools, then messages: what a provider's prompt cache serves).

The baseline is what a code-generation peer sends: ONE request per question with a short
instruction, the columns with their types, the first five rows as CSV and the question; the model
answers with a program. Only prompt sizes are compared (replies are not counted on either side).

    python bench/question_cost.py
Targets (issue 23): every first request <= 8,000 characters; a single-statistic question <= 3
requests and <= 20,000 characters in all; a multi-step question <= 60,000 characters in all.
"""

from __future__ import annotations

import json
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
warnings.filterwarnings("ignore")

import pandas as pd  # noqa: E402

from app.agent.model.interface import ModelReply, ToolCallRequest  # noqa: E402
from app.agent.model.tokens import count_messages  # noqa: E402

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference" / "rdatasets"
SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
FIRST_REQUEST_LIMIT = 8_000
SINGLE_QUESTION_LIMIT = 20_000
SINGLE_REQUESTS_LIMIT = 3
MULTI_QUESTION_LIMIT = 60_000


@dataclass
class Question:
    kind: str  # "single" (one statistic) or "multi" (several steps)
    file: Path
    text: str
    steps: list[tuple[str, str, dict]]  # (call id, tool, arguments); "ev:<id>" cites earlier ids
    answer: str
    evidence: list[tuple[str, list[str], str]] = field(default_factory=list)  # (claim, call ids, method)


def questions() -> list[Question]:
    iris, mtcars = REFERENCE / "iris.csv", REFERENCE / "mtcars.csv"
    titanic, air = REFERENCE / "carData_TitanicSurvival.csv", REFERENCE / "airquality.csv"
    boston, birthwt, mpg = REFERENCE / "MASS_Boston.csv", REFERENCE / "MASS_birthwt.csv", REFERENCE / "ggplot2_mpg.csv"
    return [
        Question(
            "single",
            iris,
            "What is the mean sepal length?",
            [("c1", "describe_columns", {"columns": ["Sepal.Length"]})],
            "The mean sepal length is 5.843 cm (150 flowers).",
            [("The mean sepal length is 5.843 cm", ["c1"], "descriptive statistics")],
        ),
        Question(
            "single",
            mtcars,
            "What is the Pearson correlation between mpg and wt?",
            [("c1", "correlation_analysis", {"columns": ["mpg", "wt"]})],
            "mpg and weight are strongly negatively correlated: Pearson r = -0.868 (p < 0.001, n = 32).",
            [("Pearson r between mpg and wt is -0.868 (p < 0.001)", ["c1"], "Pearson correlation")],
        ),
        Question(
            "single",
            mtcars,
            "Report the Shapiro-Wilk p-value for mpg.",
            [("c1", "normality_test", {"value_column": "mpg"})],
            "The Shapiro-Wilk test gives p = 0.123 for mpg: no evidence against normality.",
            [("Shapiro-Wilk p = 0.123 for mpg", ["c1"], "Shapiro-Wilk test")],
        ),
        Question(
            "single",
            titanic,
            "How many passengers are age outliers by the IQR rule?",
            [("c1", "outlier_detection", {"value_column": "age", "method": "iqr"})],
            "9 passengers have an age outside the IQR fences (all above 66 years).",
            [("9 passengers are age outliers by the IQR rule", ["c1"], "IQR fences")],
        ),
        Question(
            "single",
            air,
            "How many Ozone values are missing?",
            [("c1", "describe_columns", {"columns": ["Ozone"]})],
            "37 of the 153 Ozone values are missing.",
            [("37 Ozone values are missing", ["c1"], "descriptive statistics")],
        ),
        # DABench-like: one statistic, asked in the benchmark's imperative form ("... and report ...")
        Question(
            "single",
            mtcars,
            "Perform a Shapiro-Wilk test on mpg and report the p-value.",
            [("c1", "normality_test", {"value_column": "mpg"})],
            "Shapiro-Wilk test on mpg: W = 0.948, p = 0.123 (n = 32).",
            [("Shapiro-Wilk p = 0.123 for mpg", ["c1"], "Shapiro-Wilk test")],
        ),
        Question(
            "single",
            air,
            "What is the Pearson correlation between Ozone and Temp?",
            [("c1", "correlation_analysis", {"columns": ["Ozone", "Temp"]})],
            "Ozone and temperature are positively correlated: Pearson r = 0.698 (n = 116).",
            [("Pearson r between Ozone and Temp is 0.698", ["c1"], "Pearson correlation")],
        ),
        Question(
            "single",
            mtcars,
            "Calculate the mean of column hp.",
            [("c1", "describe_columns", {"columns": ["hp"]})],
            "The mean of hp is 146.7 (32 cars).",
            [("The mean of hp is 146.7", ["c1"], "descriptive statistics")],
        ),
        Question(
            "single",
            titanic,
            "Conduct a chi-square test of independence between sex and survived and report the p-value.",
            [("c1", "chi_square_test", {"x_column": "sex", "y_column": "survived"})],
            "Sex and survival are strongly associated: chi-square test p < 0.001 (n = 1309).",
            [("sex and survived are associated (chi-square p < 0.001)", ["c1"], "chi-square test")],
        ),
        Question(
            "multi",
            iris,
            "Does sepal length differ by species, and which species differ from each other?",
            [
                ("c1", "describe_columns", {"columns": ["Sepal.Length"]}),
                ("c2", "compare_groups", {"value_column": "Sepal.Length", "group_column": "Species"}),
                ("c3", "plot_box", {"value_column": "Sepal.Length", "group_column": "Species"}),
            ],
            "Yes. Sepal length differs by species (F(2, 147) = 119.3, p < 0.001): virginica is longest "
            "(6.588 cm), then versicolor (5.936), then setosa (5.006); every pair differs.",
            [
                (
                    "Sepal length differs by species, F(2, 147) = 119.3, p < 0.001; virginica 6.588, versicolor "
                    "5.936, setosa 5.006",
                    ["c2"],
                    "one-way ANOVA with Tukey post-hoc",
                )
            ],
        ),
        Question(
            "multi",
            mtcars,
            "What drives fuel economy (mpg)? Look at weight, horsepower and cylinders.",
            [
                ("c1", "correlation_analysis", {"columns": ["mpg", "wt", "hp", "cyl"]}),
                ("c2", "linear_regression", {"target_column": "mpg", "feature_columns": ["wt", "hp", "cyl"]}),
                ("c3", "plot_scatter", {"x_column": "wt", "y_column": "mpg"}),
            ],
            "Weight matters most: mpg falls with weight (r = -0.868) and with horsepower (r = -0.776). "
            "Together weight, horsepower and cylinders explain 84% of the variation (R² = 0.843).",
            [
                ("mpg correlates with wt (r = -0.868) and hp (r = -0.776)", ["c1"], "Pearson correlation"),
                ("wt, hp and cyl explain 84% of mpg (R² = 0.843)", ["c2"], "linear regression (OLS)"),
            ],
        ),
        Question(
            "multi",
            SAMPLES / "retail_sales.xlsx",
            "Does revenue differ by region and by channel?",
            [
                ("c1", "compare_groups", {"value_column": "Revenue", "group_column": "Region"}),
                ("c2", "compare_groups", {"value_column": "Revenue", "group_column": "Channel"}),
                ("c3", "plot_bar", {"x_column": "Region", "y_column": "Revenue", "agg": "mean"}),
            ],
            "See the evidence: revenue by region and by channel.",
            [
                ("Revenue by region (see the test)", ["c1"], "group comparison"),
                ("Revenue by channel (see the test)", ["c2"], "group comparison"),
            ],
        ),
        # harder, as real users ask: longer questions over wider tables (the first request grows with both)
        Question(
            "multi",
            boston,
            "Which neighbourhood factors are most strongly associated with the median home "
            "value (medv)? I care about rooms, crime, the pupil-teacher ratio and the lower-status share; how "
            "much does one extra room add once the others are held fixed?",
            [
                ("c1", "correlation_analysis", {"columns": ["medv", "rm", "crim", "ptratio", "lstat"]}),
                (
                    "c2",
                    "linear_regression",
                    {"target_column": "medv", "feature_columns": ["rm", "crim", "ptratio", "lstat"]},
                ),
                ("c3", "plot_scatter", {"x_column": "rm", "y_column": "medv"}),
            ],
            "Rooms and the lower-status share matter most; see the evidence for the coefficients.",
            [
                ("medv correlates with rm and lstat (see the test)", ["c1"], "Pearson correlation"),
                ("Holding the others fixed, rooms add value (see the model)", ["c2"], "linear regression (OLS)"),
            ],
        ),
        Question(
            "multi",
            birthwt,
            "Do babies of mothers who smoked during pregnancy weigh less at birth? Give the "
            "difference in grams with a 95% confidence interval, and say whether it is big enough to matter.",
            [
                ("c1", "compare_two_groups", {"value_column": "bwt", "group_column": "smoke"}),
                ("c2", "plot_box", {"value_column": "bwt", "group_column": "smoke"}),
            ],
            "Yes: babies of smokers weigh less (see the evidence for the difference and its interval).",
            [("Babies of smokers weigh less (see the test)", ["c1"], "Welch t-test")],
        ),
        Question(
            "multi",
            mpg,
            "Is highway mileage (hwy) different for front-wheel, rear-wheel and 4-wheel drive "
            "cars (drv), and does the gap remain once engine size (displ) is taken into account?",
            [
                ("c1", "compare_groups", {"value_column": "hwy", "group_column": "drv"}),
                ("c2", "linear_regression", {"target_column": "hwy", "feature_columns": ["displ", "drv"]}),
                ("c3", "plot_box", {"value_column": "hwy", "group_column": "drv"}),
            ],
            "Highway mileage differs by drive type, and part of it is engine size (see the evidence).",
            [
                ("hwy differs by drv (see the test)", ["c1"], "one-way ANOVA"),
                (
                    "With engine size held fixed, drive type still matters (see the model)",
                    ["c2"],
                    "linear regression (OLS)",
                ),
            ],
        ),
    ]


class Replay:
    """Plays one question as a capable model does: the calls it can make now in one reply, then the
    evidence in one reply, then the answer. A tool outside the tools array is found with tool_search
    first (one search per missing tool, together) and then called through call_tool."""

    kind = "scripted"
    name = "bench-replay"

    def __init__(self, question: Question):
        self.question = question
        self.steps = list(question.steps)
        self.evidence = [
            ToolCallRequest(f"e{i}", "record_evidence", {"claim": claim, "tool_call_ids": ids, "method": method})
            for i, (claim, ids, method) in enumerate(question.evidence, 1)
        ]
        self.requests: list[tuple[list, list]] = []
        self.found: set[str] = set()

    def complete(self, messages, tools):
        self.requests.append((json.loads(json.dumps(messages, default=str)), list(tools)))
        if not tools or not (self.steps or self.evidence):
            return ModelReply(self.question.answer)
        listed = {t["function"]["name"] for t in tools}
        if self.steps:
            missing = sorted({tool for _, tool, _ in self.steps if tool not in listed | self.found})
            if missing:
                self.found |= set(missing)
                searches = [ToolCallRequest(f"s_{n}", "tool_search", {"query": n.replace("_", " ")}) for n in missing]
                return ModelReply(None, searches)
            calls = [
                ToolCallRequest(cid, tool, args)
                if tool in listed
                else ToolCallRequest(cid, "call_tool", {"name": tool, "arguments": args})
                for cid, tool, args in self.steps
            ]
            self.steps = []
            return ModelReply(None, calls)
        calls, self.evidence = self.evidence, []
        return ModelReply(None, calls)


def wire_chars(messages: list, tools: list) -> int:
    """Characters of the request body as the OpenAI client sends it (httpx: compact JSON)."""
    body = {"model": "m", "messages": messages, **({"tools": tools} if tools else {})}
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")))


def run_verity(question: Question, tmp: Path) -> list[tuple[list, list]]:
    from app.db.session import open_database
    from app.runs import RunService
    from app.workspaces import add_dataset, create_workspace
    from tests.factories import make_settings

    settings = make_settings(tmp)
    db = open_database(settings)
    model = Replay(question)
    service = RunService(db, settings, lambda *_: model)
    with db.session() as session:
        workspace = create_workspace(session, "bench")
        add_dataset(session, settings, workspace, question.file, question.file.name)
        run_id = service.create(session, workspace, question.text).id
    service.execute(run_id)
    return model.requests


BASELINE_PROMPT = (
    "You are a data analyst. Write one Python program (pandas, scipy, statsmodels) that answers the "
    "user's question from the CSV file at `path`. Print the answer as one or two plain sentences with "
    "its key numbers. Reply with the program only."
)


def baseline(question: Question) -> tuple[int, int]:
    """The code-generation peer's single request: instruction, schema, five rows, the question."""
    frame = pd.read_excel(question.file) if question.file.suffix == ".xlsx" else pd.read_csv(question.file)
    schema = "\n".join(f"- {c}: {t}" for c, t in frame.dtypes.astype(str).items())
    data = f"path = {question.file.name!r}; {len(frame)} rows.\nColumns:\n{schema}\nFirst rows (CSV):\n" + frame.head(
        5
    ).to_csv(index=False)
    messages = [
        {"role": "system", "content": BASELINE_PROMPT},
        {"role": "user", "content": f"{data}\nQuestion: {question.text}"},
    ]
    return wire_chars(messages, []), count_messages(messages)


def request_bytes(messages: list, tools: list) -> str:
    """One request as a provider's prompt cache reads it: the tools, then the messages."""
    return json.dumps(tools, ensure_ascii=False, separators=(",", ":")) + json.dumps(
        messages, ensure_ascii=False, separators=(",", ":")
    )


def repeated_prefix(requests: list[tuple[list, list]]) -> tuple[int, int]:
    """(bytes that repeat the previous request's bytes from the start, all bytes), over the requests."""
    import os

    texts = [request_bytes(m, t) for m, t in requests]
    repeated = sum(len(os.path.commonprefix([a, b])) for a, b in zip(texts, texts[1:]))
    return repeated, sum(len(t) for t in texts)


def main() -> int:
    rows = []
    for question in questions():
        with tempfile.TemporaryDirectory() as tmp:
            requests = run_verity(question, Path(tmp))
        b_chars, b_tokens = baseline(question)
        chars = [wire_chars(m, t) for m, t in requests]
        tokens = [count_messages(m, t) for m, t in requests]
        repeated, total = repeated_prefix(requests)
        if question.kind == "single":
            ok = sum(chars) <= SINGLE_QUESTION_LIMIT and len(chars) <= SINGLE_REQUESTS_LIMIT
        else:
            ok = sum(chars) <= MULTI_QUESTION_LIMIT
        ok = ok and chars[0] <= FIRST_REQUEST_LIMIT
        rows.append((question, chars, tokens, b_chars, b_tokens, repeated, total, ok))
    print(
        f"{'question':<58} {'kind':<6} {'req':>3} {'first ch':>9} {'total ch':>9} {'total tok':>9} "
        f"{'prefix %':>8} {'base ch':>8} {'ch ×':>6}  result"
    )
    for question, chars, tokens, b_chars, _, repeated, total, ok in rows:
        print(
            f"{question.text[:58]:<58} {question.kind:<6} {len(chars):>3} {chars[0]:>9,} {sum(chars):>9,} "
            f"{sum(tokens):>9,} {repeated / total:>8.0%} {b_chars:>8,} {sum(chars) / b_chars:>6.1f}  "
            + ("PASS" if ok else "FAIL")
        )
    print("\nper request (characters / tokens):")
    for question, chars, tokens, *_ in rows:
        print(f"  {question.text[:50]:<50} " + "  ".join(f"{c:,}/{t:,}" for c, t in zip(chars, tokens)))
    singles = [(len(chars), sum(chars)) for q, chars, *_ in rows if q.kind == "single"]
    multis = [sum(chars) for q, chars, *_ in rows if q.kind == "multi"]
    firsts = [chars[0] for _, chars, *_ in rows]
    repeated = sum(r[5] for r in rows) / sum(r[6] for r in rows)
    checks = [
        (
            f"first request <= {FIRST_REQUEST_LIMIT:,} characters",
            f"max {max(firsts):,}",
            max(firsts) <= FIRST_REQUEST_LIMIT,
        ),
        (
            f"single-statistic question <= {SINGLE_REQUESTS_LIMIT} requests",
            f"max {max(n for n, _ in singles)}",
            max(n for n, _ in singles) <= SINGLE_REQUESTS_LIMIT,
        ),
        (
            f"single-statistic question <= {SINGLE_QUESTION_LIMIT:,} characters in all",
            f"max {max(c for _, c in singles):,}",
            max(c for _, c in singles) <= SINGLE_QUESTION_LIMIT,
        ),
        (
            f"multi-step question <= {MULTI_QUESTION_LIMIT:,} characters in all",
            f"max {max(multis):,}",
            max(multis) <= MULTI_QUESTION_LIMIT,
        ),
    ]
    print(f"\n{'target':<55} {'measured':>14}  result")
    for target, measured, passed in checks:
        print(f"{target:<55} {measured:>14}  {'PASS' if passed else 'FAIL'}")
    print(f"share of request bytes repeating the previous request's prefix: {repeated:.0%}")
    ok = all(passed for *_, passed in checks) and all(r[-1] for r in rows)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
