"""Worst agreement with NIST StRD certified values, per data set (significant digits, the LRE
-log10(|got - certified| / |certified|), capped at 15; absolute error where the certified value is 0).

    python bench/nist_accuracy.py

Linear regression (11 sets): coefficients, standard errors, residual SD and R² of `linear_regression`.
ANOVA (11 sets): F statistic and R² of `compare_groups` (method=anova).
Nonlinear: parameters of `curve_fit` with the NIST formula from NIST's Start 1 (and Start 2), plus
their standard errors; the higher-difficulty sets are shown for information.
Data and the loaders are those of the test suite (tests/test_tools_stats.py, tests/test_nist_nonlinear.py).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analysis_tools import run_tool  # noqa: E402
from tests.test_nist_nonlinear import AVERAGE, HIGHER, LOWER, NONLINEAR, digits, fit_nist  # noqa: E402
from tests.test_tools_stats import NIST, NIST_LINREG, _nist_frame, _parse_nist_anova, lre  # noqa: E402

ANOVA_SETS = [
    "AtmWtAg",
    "SiRstv",
    "SmLs01",
    "SmLs02",
    "SmLs03",
    "SmLs04",
    "SmLs05",
    "SmLs06",
    "SmLs07",
    "SmLs08",
    "SmLs09",
]
ROW = "{:<8} {:<10} {:>7} {:>7} {:>7} {:>8}  {}"


def linreg_rows() -> list[tuple]:
    rows = []
    for name, (beta, se, rsd, r2) in NIST_LINREG.items():
        df, features, intercept = _nist_frame(name)
        m = run_tool("linear_regression", df, target_column="y", feature_columns=features, intercept=intercept).metrics
        terms = (["const"] if intercept else []) + features
        coef = min(lre(m[f"coef.{t}"], b) for t, b in zip(terms, beta))
        ses = min(lre(m[f"se.{t}"], s) for t, s in zip(terms, se))
        other = min(lre(m["residual_std_error"], rsd), lre(m["r_squared"], r2))
        need = 7
        rows.append(("linreg", name, coef, ses, other, min(coef, ses, other), need, "coef | se | rsd,R²"))
    return rows


def anova_rows() -> list[tuple]:
    rows = []
    for name in ANOVA_SETS:
        cert, df = _parse_nist_anova(NIST / "anova" / f"{name}.dat")
        r = run_tool("compare_groups", df, value_column="response", group_column="treatment", method="anova")
        m = r.metrics
        f, r2 = lre(m["f_statistic"], cert["f"]), lre(m["r_squared"], cert["r2"])
        ss = min(lre(m["ss_between"], cert["ss_between"]), lre(m["ss_within"], cert["ss_within"]))
        note = "F | R² | SS" + ("  (precision note in output)" if m.get("precision_warning") else "")
        rows.append(("anova", name, f, r2, ss, min(f, r2), 4 if name in ("SmLs07", "SmLs08", "SmLs09") else 8, note))
    return rows


def nonlinear_rows() -> list[tuple]:
    rows = []
    for name in LOWER + AVERAGE + HIGHER:
        level = "lower" if name in LOWER else "average" if name in AVERAGE else "higher (info)"
        spec, r1 = fit_nist(name, "start1")
        d1 = digits(spec, r1) if r1.ok else {"params": 0.0, "se": 0.0}
        spec, r2 = fit_nist(name, "start2") if "start2" in spec else (spec, None)
        p2 = digits(spec, r2)["params"] if r2 is not None and r2.ok else float("nan")
        need = 4 if name not in HIGHER else None
        status = "" if r1.ok else f" fit failed: {r1.error['error']}"
        rows.append(
            ("nonlin", name, d1["params"], d1["se"], p2, d1["params"], need, f"start1 | se | start2   {level}{status}")
        )
    return rows


def main() -> None:
    started = time.perf_counter()
    print(ROW.format("kind", "set", "first", "second", "third", "worst", "columns"))
    print("-" * 86)
    failures = []
    for row in linreg_rows() + anova_rows() + (nonlinear_rows() if NONLINEAR.exists() else []):
        kind, name, a, b, c, worst, need, what = row
        a, b, c, worst = (max(v, 0.0) if v == v else v for v in (a, b, c, worst))  # a wrong answer has 0 digits
        ok = need is None or worst >= need
        if not ok:
            failures.append(name)
        req = f">={need}" if need else "-"
        print(
            ROW.format(
                kind,
                name,
                f"{a:.1f}",
                f"{b:.1f}",
                f"{c:.1f}",
                f"{worst:.1f}",
                f"{what}  need {req}{'' if ok else '  BELOW'}",
            )
        )
    print("-" * 86)
    print(
        f"all required sets pass: {not failures}"
        + (f" (below: {failures})" if failures else "")
        + f"; {time.perf_counter() - started:.1f} s"
    )


if __name__ == "__main__":
    main()
