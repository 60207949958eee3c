"""The run panel's "Check every number with analysis.py": the script runs in a child without the server's
secrets and under limits (app/reports/reproduce.py), in the background, once at a time per run
(app/web/number_check.py); the page says "checking…" and then the outcome, which the report records."""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from pathlib import Path

import pytest

from app.reports.reproduce import Limits, Outcome, check_analysis_script

DUMP_ENV = """\
import json, os, sys
summary = int(sys.argv[sys.argv.index("--summary-fd") + 1])  # the host's pipe
os.write(summary, json.dumps({"status": "passed", "matched": 1, "differing": 0, "env": dict(os.environ)}).encode())
"""


def script(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "analysis.py"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_script_cannot_see_the_servers_secrets(tmp_path, monkeypatch):
    secrets = {
        "VERITY_LLM_API_KEY": "sk-fake-123",
        "OPENAI_API_KEY": "sk-fake-456",
        "GITHUB_TOKEN": "ghp-fake",
        "DB_PASSWORD": "hunter2",
        "AWS_SECRET_ACCESS_KEY": "aws-fake",
        "VERITY_DATABASE_URL": "postgresql://x",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    outcome = check_analysis_script(script(tmp_path, DUMP_ENV))
    assert outcome.summary is not None, (tmp_path / "analysis_output.txt").read_text()
    seen = outcome.summary["env"]
    assert not set(secrets) & set(seen)
    assert not any(value in " ".join(seen.values()) for value in secrets.values())
    assert not any(name.startswith("VERITY_") or "KEY" in name or "TOKEN" in name for name in seen)
    assert seen["HOME"] != os.environ.get("HOME") and not Path(seen["HOME"]).exists()  # its own, removed after
    assert seen["PYTHONIOENCODING"] == "utf-8" and "PATH" in seen


def test_a_script_that_needs_too_much_memory_is_stopped(tmp_path):
    started = time.monotonic()
    outcome = check_analysis_script(script(tmp_path, "block = bytearray(900 * 1024 * 1024)\n"), Limits(memory_mb=400))
    assert outcome == Outcome(None, "memory") and time.monotonic() - started < 10


def test_a_script_that_spins_is_stopped_by_the_cpu_limit(tmp_path):
    started = time.monotonic()
    outcome = check_analysis_script(script(tmp_path, "while True:\n    pass\n"), Limits(cpu_s=1, timeout_s=60))
    assert outcome == Outcome(None, "cpu") and time.monotonic() - started < 10


@pytest.mark.parametrize("mode", ["unsafe", "bwrap", "unshare"])
def test_the_time_limit_stops_the_script_and_what_it_started(tmp_path, mode):
    """On the host (unsafe mode) and in either sandbox: nothing the script started outlives the limit."""
    if mode != "unsafe":
        from tests.test_sandbox_escape import require_mode

        require_mode(mode)
    marker = f"verity-check-sleeper-{uuid.uuid4().hex}"
    text = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', {marker!r}])\n"
        "time.sleep(60)\n"
    )
    started, outcomes = time.monotonic(), []
    check = threading.Thread(
        target=lambda: outcomes.append(
            check_analysis_script(script(tmp_path, text), Limits(timeout_s=4), sandbox_mode=mode)
        )
    )
    check.start()
    wait_for(lambda: processes_with(marker), limit_s=4)  # the script started its child
    check.join(20)
    assert outcomes == [Outcome(None, "timeout")] and time.monotonic() - started < 15
    wait_for(lambda: not processes_with(marker), limit_s=5)  # the grandchild went with the script


def processes_with(marker: str) -> list[int]:
    """Live processes (not zombies) whose command line holds the marker."""
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes() and running(int(pid)):
                found.append(int(pid))
        except OSError:
            continue
    return found


def running(pid: int) -> bool:
    """The process exists and is not a zombie (one whose new parent has not reaped it yet)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status


# --- the page -------------------------------------------------------------------------------------------
CSV = "region,revenue\n" + "".join(
    f"{r},{v}\n" for r, v in zip(["North", "South", "East", "West"] * 10, range(100, 140), strict=True)
)
PASSED = {"status": "passed", "matched": 7, "differing": 0, "not_recomputed": 0, "failed_calls": 0}


@pytest.fixture
def finished_run(client):
    from tests.test_web import ask, new_workspace, upload

    ws = new_workspace(client)
    assert upload(client, ws, "sales.csv", CSV.encode()).status_code == 201
    run_id, _ = ask(client, ws, "Does revenue differ by region?")
    assert client.get(f"/api/runs/{run_id}").json()["status"] == "done"
    return client, ws, run_id


def wait_for(condition, limit_s: float = 30.0) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.slow
def test_the_check_runs_in_the_background_once_and_the_outcome_is_recorded(finished_run, monkeypatch):
    import app.web.number_check as number_check
    from app.reports.script import report_numbers

    client, ws, run_id = finished_run
    release, calls = threading.Event(), []
    report = f"/api/workspaces/{ws}/report.json?run={run_id}"
    # the host takes counts that describe the report's evidence numbers (host_verdict)
    passed = {**PASSED, "matched": len(report_numbers(client.get(report).json()))}

    def slow_check(script, limits, cache_dir=None, **kwargs):
        calls.append((script, limits))
        assert script.is_file() and "def main" in script.read_text(encoding="utf-8")
        release.wait(30)
        return Outcome(dict(passed))

    monkeypatch.setattr(number_check, "check_analysis_script", slow_check)
    started = time.monotonic()
    response = client.post(f"/runs/{run_id}/check-numbers", follow_redirects=False)
    assert response.status_code == 303 and time.monotonic() - started < 5  # not waiting for the script
    wait_for(lambda: calls)
    page = client.get(response.headers["location"]).text
    assert "data-number-check" in page and "Checking every number with analysis.py" in page
    assert 'aria-live="polite"' in page and f'/runs/{run_id}/check-numbers"' not in page  # no second button
    again = client.post(f"/runs/{run_id}/check-numbers", follow_redirects=False)
    assert again.status_code == 303
    time.sleep(0.3)
    assert len(calls) == 1  # a second click while it runs starts nothing
    assert calls[0][1] == Limits(timeout_s=600.0, memory_mb=4096, cpu_s=600, output_mb=8)

    release.set()
    wait_for(lambda: "reproduction" in client.get(report).json())
    assert client.get(report).json()["reproduction"] == passed
    wait_for(lambda: "data-number-check" not in client.get(response.headers["location"]).text)
    page = client.get(response.headers["location"]).text
    assert "Reproduced by analysis.py" in page and f"all {passed['matched']} numbers" in page
    assert "Reproduced by analysis.py" in client.get(f"/api/workspaces/{ws}/report.md?run={run_id}").text


@pytest.mark.slow
def test_a_check_that_was_stopped_says_so_and_can_be_started_again(finished_run, monkeypatch):
    import app.web.number_check as number_check

    client, ws, run_id = finished_run
    monkeypatch.setattr(number_check, "check_analysis_script", lambda *a, **k: Outcome(None, "memory"))
    target = client.post(f"/runs/{run_id}/check-numbers", follow_redirects=False).headers["location"]
    wait_for(lambda: "data-number-check" not in client.get(target).text)
    page = client.get(target.split("#")[0] + "&lang=zh").text
    assert "核对数字所需内存超出上限" in page and f'/runs/{run_id}/check-numbers"' in page
    assert "reproduction" not in client.get(f"/api/workspaces/{ws}/report.json?run={run_id}").json()


@pytest.mark.slow
def test_the_real_script_runs_under_the_limits_and_reproduces_the_numbers(finished_run):
    client, ws, run_id = finished_run
    target = client.post(f"/runs/{run_id}/check-numbers", follow_redirects=False).headers["location"]
    report = f"/api/workspaces/{ws}/report.json?run={run_id}"
    wait_for(lambda: "data-number-check" not in client.get(target).text, limit_s=300)
    check = json.loads(client.get(report).text).get("reproduction")
    assert check is not None and check["status"] == "passed" and check["matched"] > 0, client.get(target).text


@pytest.mark.slow
def test_one_check_per_workspace_at_a_time(finished_run, monkeypatch):
    """A workspace cannot queue check after check ahead of the other workspaces' (issue 25): while one
    of its checks runs, a check of its other answer is refused with a plain note, and can be started
    once the first is done."""
    import app.web.number_check as number_check
    from tests.test_web import ask

    client, ws, run_id = finished_run
    second, _ = ask(client, ws, "Does revenue differ by region in total?")
    release, calls = threading.Event(), []

    def slow_check(script, limits, cache_dir=None, **kwargs):
        calls.append(script)
        release.wait(30)
        return Outcome(None, "error")

    monkeypatch.setattr(number_check, "check_analysis_script", slow_check)
    client.post(f"/runs/{run_id}/check-numbers", follow_redirects=False)
    wait_for(lambda: calls)
    target = client.post(f"/runs/{second}/check-numbers", follow_redirects=False).headers["location"]
    time.sleep(0.3)
    assert len(calls) == 1  # the second answer's check did not queue
    page = client.get(target.split("#")[0] + "&lang=zh").text
    assert "每个工作区一次只核对一个" in page and f'/runs/{second}/check-numbers"' in page
    release.set()
    wait_for(lambda: "data-number-check" not in client.get(f"/workspaces/{ws}?run={run_id}").text)
    client.post(f"/runs/{second}/check-numbers", follow_redirects=False)
    wait_for(lambda: len(calls) == 2)
