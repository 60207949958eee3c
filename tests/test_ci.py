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


def test_the_files_with_slow_tests_are_handed_out_first():
    """Two workers take whole files in the order tests/conftest.py sorts them (xdist's own reordering by
    test count is off): a file of slow tests goes before every file without one, however few tests it
    has, so no long file starts last while the other worker has nothing left; a file's tests keep their order."""
    import tomllib
    from types import SimpleNamespace

    from tests.conftest import pytest_collection_modifyitems

    def item(nodeid: str, slow: bool = False) -> SimpleNamespace:
        return SimpleNamespace(
            nodeid=nodeid, get_closest_marker=lambda name: object() if slow and name == "slow" else None
        )

    many = [item(f"tests/test_many.py::test_{i}") for i in range(5)]
    some = [item("tests/test_some.py::test_a"), item("tests/test_some.py::test_b")]
    slow = [item("tests/test_processes.py::test_fast"), item("tests/test_processes.py::test_kill", slow=True)]
    items = [*many, *slow, *some]
    pytest_collection_modifyitems(None, items)  # type: ignore[arg-type]
    assert items == [*slow, *many, *some]
    addopts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    assert "--dist loadfile" in addopts and "--no-loadscope-reorder" in addopts
