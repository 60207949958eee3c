"""app/process_exit.py: `verity analyze` and the analysis.py check's sandbox end without tearing down
their modules, and still end as `sys.exit` would (issue 27 point 3: ~1 s of CPU at the end of a run)."""

import os
import subprocess
import sys
import textwrap

import pytest

from tests.factories import REPO

ENDING = textwrap.dedent(
    """
    import atexit, sys, threading, time
    from app.process_exit import exit_now

    class Big:
        def __del__(self):  # what a normal end runs for every object still held
            sys.stdout.write("torn down\\n")
            sys.stdout.flush()

    kept = Big()
    atexit.register(lambda: sys.stdout.write("exit handler ran\\n"))
    threading.Thread(target=lambda: (time.sleep(0.2), sys.stdout.write("thread finished\\n"))).start()
    sys.stdout.write("buffered, no newline")  # flushed on the way out
    exit_now(int(sys.argv[1]) if sys.argv[1].isdigit() else sys.argv[1])
    """
)


def ended(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", ENDING, code], capture_output=True, text=True, cwd=REPO, timeout=60, check=False
    )


def test_exit_now_ends_as_sys_exit_does_without_the_teardown():
    done = ended("3")
    assert done.returncode == 3
    assert done.stdout.startswith("buffered, no newline")
    assert "thread finished" in done.stdout and "exit handler ran" in done.stdout  # in that order, as Python does
    assert done.stdout.index("thread finished") < done.stdout.index("exit handler ran")
    assert "torn down" not in done.stdout  # the objects were left to the operating system


def test_exit_now_ends_with_an_executor_left_open_as_python_does():
    """A ThreadPoolExecutor nobody shut down: its idle workers are told to stop (threading's exit hooks,
    as the interpreter's end runs them) instead of being waited for forever."""
    code = (
        "from concurrent.futures import ThreadPoolExecutor\n"
        "from app.process_exit import exit_now\n"
        "pool = ThreadPoolExecutor(2)\n"
        "print(pool.submit(lambda: 'worked').result())\n"
        "exit_now(5)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=30, check=False
    )
    assert (done.returncode, done.stdout) == (5, "worked\n"), done.stderr


def test_exit_now_with_a_message_is_status_1_and_the_message_on_stderr():
    done = ended("no data file")
    assert (done.returncode, done.stderr.strip()) == (1, "no data file")


@pytest.mark.parametrize(("argv", "fast"), [(None, True), (["analyze"], False)])
def test_the_analyze_command_ends_fast_only_as_its_process_own_command(tmp_path, monkeypatch, argv, fast):
    """`verity analyze` (sys.argv: the console script) ends through exit_now; main() called with its
    arguments (a test, a caller in the same process) returns as before."""
    import app.process_exit
    from app.cli import main
    from app.config import get_settings

    monkeypatch.setenv("VERITY_DATA_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("VERITY_LLM_MODEL", "builtin")
    get_settings.cache_clear()
    command = ["analyze", str(tmp_path / "nowhere.csv"), "--no-input", "--out", str(tmp_path / "r")]
    monkeypatch.setattr(sys, "argv", ["verity", *command])
    ends: list[object] = []
    monkeypatch.setattr(app.process_exit, "exit_now", ends.append)
    code = main(None if argv is None else command)
    assert code == 2  # the missing file
    assert ends == ([2] if fast else [])


def test_the_checks_sandbox_process_ends_with_the_scripts_status_without_the_teardown(tmp_path):
    """check_start.py (the first process of `verity analyze`'s check) runs the script sent to it and
    ends with its status, without freeing what it imported: the host has its verdict sooner."""
    from app.reports.reproduce import CHECK_START

    script = textwrap.dedent(
        """
        import sys

        class Big:
            def __del__(self):
                print("torn down")

        kept = Big()
        print("ran")
        sys.exit(4)
        """
    )
    read_fd, write_fd = os.pipe()
    with open(write_fd, "w") as pipe:
        pipe.write(script)
    (tmp_path / CHECK_START.name).write_bytes(CHECK_START.read_bytes())
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, str(tmp_path / CHECK_START.name), str(read_fd), "analysis.py"],
        capture_output=True,
        text=True,
        env=env,
        pass_fds=(read_fd,),
        timeout=300,
        check=False,
    )
    assert (done.returncode, done.stdout) == (4, "ran\n"), done.stderr[-2000:]
