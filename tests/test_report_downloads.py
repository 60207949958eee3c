"""Reports downloaded from the web app carry their charts in every format, also when the server's data
dir is relative to its working directory (the default, `data/runtime`): PDF and Word embed the figures,
the Markdown comes as a zip with figures/ beside report.md."""

from __future__ import annotations

import io
import math
import os
import re
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One builtin run on the retail sample, served with a relative data dir (as `verity serve` does)."""
    from tests.conftest import sample_path
    from tests.test_web import ask, new_workspace, upload

    path = sample_path("retail_sales.xlsx")
    home = tmp_path_factory.mktemp("server-cwd")
    before = Path.cwd()
    os.chdir(home)
    try:
        settings = Settings(
            _env_file=None,
            data_dir=Path("data/runtime"),
            llm_model="builtin",
            sse_poll_interval_s=0.05,
            sse_heartbeat_s=1.0,
        )
        with TestClient(create_app(settings)) as client:
            ws = new_workspace(client)
            assert upload(client, ws, path.name, path.read_bytes()).status_code == 201
            run_id, _ = ask(client, ws, "How does revenue develop over time by month?")
            figures = client.get(f"/api/workspaces/{ws}/report.json").json()["figures"]
            assert figures and not Path(figures[0]["path"]).is_absolute()  # the case that used to break
            yield {"client": client, "ws": ws, "run_id": run_id, "figures": len(figures), "home": home}
    finally:
        os.chdir(before)


def download(finished: dict[str, Any], fmt: str) -> bytes:
    response = finished["client"].get(f"/api/workspaces/{finished['ws']}/report.{fmt}?run={finished['run_id']}")
    assert response.status_code == 200, response.text
    return response.content


def test_pdf_from_the_web_app_embeds_every_figure(finished):
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(download(finished, "pdf")))
    images = sum(len(page.images) for page in reader.pages)
    assert images == finished["figures"]


def test_docx_from_the_web_app_embeds_every_figure(finished):
    import docx

    document = docx.Document(io.BytesIO(download(finished, "docx")))
    assert len(document.inline_shapes) == finished["figures"]


def test_markdown_bundle_carries_the_figures_it_links(finished):
    bundle = zipfile.ZipFile(io.BytesIO(download(finished, "zip")))
    names = set(bundle.namelist())
    markdown = bundle.read("report/report.md").decode("utf-8")
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", markdown)
    assert len(links) == finished["figures"]
    for link in links:
        assert link.startswith("figures/") and f"report/{link}" in names
        assert bundle.read(f"report/{link}").startswith(b"\x89PNG")
    assert "data/runtime" not in markdown
    assert "data/runtime" not in download(finished, "md").decode("utf-8")


def test_html_from_the_web_app_inlines_the_figures(finished):
    page = download(finished, "html").decode("utf-8")
    assert page.count('src="data:image/png;base64,') == finished["figures"]


def test_shared_link_shows_the_figures(finished):
    client = finished["client"]
    url = client.post(f"/api/runs/{finished['run_id']}/shares?confirm=true").json()["url"]
    page = client.get(url.split("testserver", 1)[1]).text
    assert page.count('src="data:image/png;base64,') == finished["figures"]


def test_run_panel_offers_the_bundle(finished):
    page = finished["client"].get(f"/workspaces/{finished['ws']}?run={finished['run_id']}").text
    assert f"/api/workspaces/{finished['ws']}/report.zip?run={finished['run_id']}" in page


def test_downloaded_analysis_py_reproduces_every_number_from_another_folder(finished, tmp_path):
    """Downloaded beside a copy of the data file, the script runs from any folder, re-computes the report's
    numbers and prints ✓ for each one; the report from the web app claims no reproduction it did not see."""
    import json
    import shutil
    import subprocess
    import sys

    from tests.conftest import sample_path

    folder = tmp_path / "downloads"
    folder.mkdir()
    (folder / "analysis.py").write_bytes(
        finished["client"].get(f"/api/workspaces/{finished['ws']}/analysis.py?run={finished['run_id']}").content
    )
    shutil.copyfile(sample_path("retail_sales.xlsx"), folder / "retail_sales.xlsx")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(repo), "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(
        [sys.executable, str(folder / "analysis.py")],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert str(folder / "retail_sales.xlsx") in done.stdout  # found beside the script, not at the server's path
    report = json.loads(download(finished, "json"))
    expected = sum(
        1
        for item in report["evidence"]
        for v in item["metrics"].values()
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    )
    assert done.stdout.count("  ✓  E") == expected > 10 and "  ✗  " not in done.stdout
    assert f"all {expected} numbers match" in done.stdout
    assert "reproduction" not in report and "Reproduced by" not in download(finished, "md").decode("utf-8")


def test_analysis_py_says_how_to_install_what_it_needs(finished, tmp_path):
    import subprocess
    import sys

    script = tmp_path / "analysis.py"
    script.write_bytes(finished["client"].get(f"/api/workspaces/{finished['ws']}/analysis.py").content)
    # -S: no site-packages, as on a machine where Verity is not installed
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "pip install -e ." in done.stderr and "venv" in done.stderr


def test_the_page_checks_the_numbers_with_analysis_py_before_the_report_says_so(finished):
    """Last in this module: it changes the report. The run panel's button runs analysis.py on the stored
    upload; the outcome goes into the report, and the PDF is made again to say it."""
    import json

    from pypdf import PdfReader

    client, run_id = finished["client"], finished["run_id"]
    assert "Reproduced by" not in "".join(
        p.extract_text() for p in PdfReader(io.BytesIO(download(finished, "pdf"))).pages
    )
    done = client.post(f"/runs/{run_id}/check-numbers", follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"].endswith("#reproduction")
    deadline = time.monotonic() + 300  # it runs in the background (tests/test_number_check.py)
    while "reproduction" not in json.loads(download(finished, "json")) and time.monotonic() < deadline:
        time.sleep(0.5)
    check = json.loads(download(finished, "json"))["reproduction"]
    assert check["status"] == "passed" and check["differing"] == 0 and check["matched"] > 10
    assert "Reproduced by analysis.py" in download(finished, "md").decode("utf-8")
    pdf_text = "".join(p.extract_text() for p in PdfReader(io.BytesIO(download(finished, "pdf"))).pages)
    assert "Reproduced by analysis.py" in pdf_text
    page = client.get(done.headers["location"]).text
    assert 'id="reproduction"' in page and f"all {check['matched']} numbers" in page
