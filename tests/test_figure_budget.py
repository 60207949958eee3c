"""A report keeps its own figures from the moment it is made (issue 25): the workspace's figures/ is
pruned to its budget (figures_keep_mb), so a report must not depend on it. Through the run service."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
from sqlalchemy import select

from app.db.models import Report
from app.reports import render
from app.web.report_files import portable_content, report_folder
from tests.factories import setup, start_run


def test_a_report_keeps_its_figures_when_the_workspace_figures_are_pruned(tmp_path):
    rng = np.random.default_rng(3)
    path = tmp_path / "shop.csv"
    pd.DataFrame({"region": rng.choice(["East", "West", "North"], 90), "revenue": rng.normal(100, 10, 90)}).to_csv(
        path, index=False
    )
    settings, db, service, ws = setup(tmp_path, path)
    run_id = start_run(service, ws, "Does revenue differ by region?")
    service.execute(run_id)
    with db.session() as s:
        report = s.scalars(select(Report).where(Report.run_id == run_id)).one()
        figures = [f["path"] for f in (report.content or {}).get("figures", [])]
        assert figures, "the analysis drew no chart"
        # the workspace's figures go (pruned to their budget): the report still has its own
        shutil.rmtree(settings.workspace_dir(ws) / "figures")
        kept = list((report_folder(report, settings) / "figures").glob("*.png"))
        assert len(kept) == len(set(figures)), kept
        page = render.to_html(portable_content(report, settings), base_dir=report_folder(report, settings))
        assert page.count("data:image/png;base64,") >= len(set(figures))
