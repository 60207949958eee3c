"""run_python hands the code numpy-friendly columns (issue 15): a yes/no column with gaps and a
whole-number column with gaps come back from the stored dataset as pandas' nullable BooleanDtype /
Int64, which statsmodels cannot read ("Cannot interpret 'BooleanDtype' as a data type"). Through
the real path: upload, ingest, agent loop, sandbox."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from app.agent.model.interface import ModelReply
from app.db.models import Run, ToolCall
from sandbox import get_pool
from tests.factories import setup, start_run
from tests.fakes import ScriptedModel, call
from tests.test_sandbox_escape import require_mode

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

CODE = """
df = datasets["trial"]
print({c: str(t) for c, t in df.dtypes.items()})
fit = smf.ols("score ~ treated + age", data=df).fit()
result = {"treated": float(fit.params["treated"]), "age": float(fit.params["age"]), "n": int(fit.nobs)}
print(df[df.treated == 1].shape[0], "treated rows")
"""


def trial_csv(path):
    rng = np.random.default_rng(7)
    n = 80
    frame = pd.DataFrame(
        {
            "score": rng.normal(50, 10, n).round(1),
            "treated": rng.choice(["True", "False"], n),
            "age": rng.integers(20, 60, n).astype(object),
        }
    )
    frame.loc[frame.treated == "True", "score"] += 5
    frame.loc[[3, 17], "treated"] = ""
    frame.loc[5, "age"] = ""
    frame.to_csv(path, index=False)
    return path


def test_statsmodels_takes_a_boolean_column_with_gaps(tmp_path):
    require_mode("bwrap")
    data = trial_csv(tmp_path / "trial.csv")
    model = ScriptedModel([ModelReply(None, [call("run_python", "py1", code=CODE)]), ModelReply("Fitted.")])
    _settings, db, service, ws = setup(tmp_path / "home", data, lambda *_: model, sandbox_mode="bwrap")
    try:
        run_id = start_run(service, ws, "Fit score on treated and age with statsmodels in Python.")
        service.execute(run_id)
    finally:
        get_pool().close(ws)
    with db.session() as s:
        done = s.get(ToolCall, (run_id, "py1"))
        assert done.ok, done.error
        assert s.get(Run, run_id).status == "done"
    # an independent fit on the raw CSV: True -> 1, blanks dropped
    raw = pd.read_csv(data, keep_default_na=True)
    raw["treated"] = raw.treated.map({True: 1.0, False: 0.0, "True": 1.0, "False": 0.0})
    raw = raw.dropna()
    expected = sm.OLS(raw.score, sm.add_constant(raw[["treated", "age"]].astype(float))).fit().params
    assert done.metrics["treated"] == pytest.approx(expected["treated"], rel=1e-9)
    assert done.metrics["age"] == pytest.approx(expected["age"], rel=1e-9)
    assert done.metrics["n"] == len(raw)
    assert "BooleanDtype" not in done.result_text and "treated rows" in done.result_text
