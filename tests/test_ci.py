"""The test harness in CI (`CI=true`): a test that needs what CI has may not skip quietly."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.factories import REPO

SKIPS = """
import pytest

def test_needs_reference_data():
    pytest.skip("reference data not available")

def test_needs_postgres():
    pytest.skip("PostgreSQL not reachable: OperationalError")

def test_skips_for_its_own_reason():
    pytest.skip("no generic arguments for this tool")

def test_runs():
    assert True
"""


def run_pytest(tmp_path, ci: str | None) -> subprocess.CompletedProcess:
    (tmp_path / "test_skips.py").write_text(SKIPS)
    env = {k: v for k, v in os.environ.items() if k != "CI"} | ({"CI": ci} if ci else {})
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "tests.conftest",
            "--rootdir",
            str(tmp_path),
            str(tmp_path / "test_skips.py"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )


@pytest.mark.slow  # two pytest processes, each importing the app
def test_outside_ci_missing_resources_skip(tmp_path):
    done = run_pytest(tmp_path, None)
    assert done.returncode == 0, done.stdout
    assert "1 passed, 3 skipped" in done.stdout


@pytest.mark.slow
def test_in_ci_a_skip_for_missing_resources_fails(tmp_path):
    done = run_pytest(tmp_path, "true")
    assert done.returncode == 1, done.stdout
    assert "2 failed, 1 passed, 1 skipped" in done.stdout
    assert "CI=true: this test must run here, but it skipped: reference data not available" in done.stdout
